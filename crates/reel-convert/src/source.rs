//! Reading a source: its first line, a byte order mark, a one-document file whole, and
//! the times recorders write (RFC 3339 with or without an offset, epoch seconds,
//! milliseconds after a start).

use std::path::Path;

use reel_trace::Timestamp;

use crate::model::{ConvertError, MAX_DOCUMENT};

/// How much of a file [`crate::Format::sniff`] looks at.
pub const SNIFF_BYTES: usize = 64 << 10;

/// The first line of `head` that is not blank (all of `head` when it has no line end).
pub fn first_line(head: &[u8]) -> &[u8] {
    head.split(|&b| b == b'\n')
        .find(|l| !l.iter().all(u8::is_ascii_whitespace))
        .unwrap_or_default()
}

/// The UTF-8 byte order mark some editors put first.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `bytes` without a leading byte order mark.
pub fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(BOM).unwrap_or(bytes)
}

/// Reads a one-document file whole (refusing one over [`MAX_DOCUMENT`]), without a
/// leading byte order mark.
pub fn read_document(path: &Path) -> Result<Vec<u8>, ConvertError> {
    let len = std::fs::metadata(path)?.len();
    if len > MAX_DOCUMENT {
        return Err(ConvertError::TooLarge(len));
    }
    let mut bytes = std::fs::read(path)?;
    if bytes.starts_with(BOM) {
        bytes.drain(..BOM.len());
    }
    Ok(bytes)
}

/// A date-time as the recorders write them: RFC 3339, or without an offset (Python's
/// naive `isoformat()`, read as UTC; the `bool` says it had none).
pub fn parse_time(s: &str) -> Option<(Timestamp, bool)> {
    if let Some(t) = Timestamp::parse(s) {
        return Some((t, false));
    }
    Timestamp::parse(&format!("{s}Z")).map(|t| (t, true))
}

/// Milliseconds (fractional allowed) after `start`.
pub fn after_ms(start: Timestamp, ms: f64) -> Timestamp {
    if ms.is_finite() {
        Timestamp(start.0.saturating_add(ms.round() as i64))
    } else {
        start
    }
}

/// The last second a trace can write (9999-12-31T23:59:59Z).
const LAST_SECOND: f64 = 253_402_300_799.0;

/// A time given as seconds since the Unix epoch (fractional allowed); `None` outside
/// the years a trace can write (0 to 9999).
pub fn from_epoch_secs(secs: f64) -> Option<Timestamp> {
    (secs.is_finite() && (0.0..=LAST_SECOND).contains(&secs))
        .then(|| Timestamp((secs * 1000.0).round() as i64))
}

/// A member's value as a message shows it: a JSON string, or `missing`.
pub(crate) fn shown(value: Option<&str>) -> String {
    value.map_or_else(
        || "missing".to_owned(),
        |v| serde_json::Value::from(v).to_string(),
    )
}
