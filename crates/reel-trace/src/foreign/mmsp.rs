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

/// Writes the conversations of `trace` into the MMSP cache directory `cache` under the
/// trace id `id` (RFC-0010 §4–§6); returns the `.json` files written and what the
/// format could not hold.
pub fn export(
    _trace: &Path,
    _cache: &Path,
    _id: &str,
) -> Result<(Vec<std::path::PathBuf>, super::Left), super::ExportError> {
    Err(super::ExportError::Unfit("not yet written by reel".into()))
}
