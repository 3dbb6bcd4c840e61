//! (to be written)

use std::path::Path;

use super::{ConvertError, Converted};

/// What the format cannot hold.
pub const LIMITS: &str = "";

/// True when the file starting with `head` is of this format.
pub fn looks_like(_head: &[u8]) -> bool {
    false
}

/// Converts the file at `path`.
pub fn convert(_path: &Path) -> Result<Converted, ConvertError> {
    Err(ConvertError::Invalid("not yet read by reel".into()))
}

/// True when `dir` holds a session's sub-agent files (imported with their session).
pub fn is_subagent_dir(dir: &Path) -> bool {
    dir.file_name().is_some_and(|n| n == "subagents")
}
