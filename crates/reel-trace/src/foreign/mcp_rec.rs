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
