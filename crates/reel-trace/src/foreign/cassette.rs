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

/// Writes `trace` in this format to `out`; returns what it could not hold.
pub fn export(
    _trace: &Path,
    _out: &mut dyn std::io::Write,
) -> Result<super::Left, super::ExportError> {
    Err(super::ExportError::Unfit("not yet written by reel".into()))
}
