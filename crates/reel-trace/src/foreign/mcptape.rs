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

/// True when `dir` is an mcptape run directory.
pub fn is_run_dir(dir: &Path) -> bool {
    dir.join("trace.jsonl").is_file() && dir.join("meta.json").is_file()
}

/// Writes `trace` as an mcptape run directory `dir` (created; an existing one is
/// refused); returns what it could not hold.
pub fn export(_trace: &Path, _dir: &Path) -> Result<super::Left, super::ExportError> {
    Err(super::ExportError::Unfit("not yet written by reel".into()))
}
