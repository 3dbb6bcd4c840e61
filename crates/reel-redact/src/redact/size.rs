//! Size rules from mcp-tape 0.7's rule files: `truncate` (cut long strings at a path)
//! and `drop-media` (replace encoded media by a placeholder). They change what replay
//! answers with, so they are never defaults; a user opts in through `--redact-file`.
//!
//! Invariant: both produce text the value rules cannot grow back (a notice, a
//! placeholder) and that they recognise on a second pass, so redaction stays
//! idempotent; `Compiled::string` composes them with the value rules.

use memchr::memmem;

use super::splice::MARKER;

/// Rule type `drop-media`: a string of at least `min_bytes` that looks like encoded
/// media (a `data:…;base64,` URL, or base64/base64url characters over its first 512
/// and last 64 bytes) becomes `[media dropped: N bytes]`. Opt-in only: replay then
/// answers with the placeholder.
pub(crate) fn drop_media(text: &str, min_bytes: usize) -> Option<String> {
    if text.len() < min_bytes {
        return None;
    }
    let b = text.as_bytes();
    let media_char = |c: &u8| {
        c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=' | b'\r' | b'\n' | b'_' | b'-')
    };
    let data_url =
        text.starts_with("data:") && memmem::find(&b[..b.len().min(256)], b";base64,").is_some();
    let looks_encoded = b[..b.len().min(512)].iter().all(media_char)
        && b[b.len().saturating_sub(64)..].iter().all(media_char);
    (data_url || looks_encoded).then(|| format!("[media dropped: {} bytes]", text.len()))
}

/// Rule type `truncate`: a string longer than `max_bytes` keeps its first `max_bytes`
/// (cut at a character boundary, never inside a marker) and gains
/// ` [truncated from N bytes]`. The caller composes this with the value rules so the
/// result is a fixed point (see `Compiled::string`).
pub(crate) fn truncate(text: &str, max_bytes: usize) -> Option<(&str, String)> {
    if text.len() <= max_bytes {
        return None;
    }
    let mut cut = max_bytes;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    // Never leave half a marker behind.
    if let Some(at) = memmem::rfind(&text.as_bytes()[..cut], b"[") {
        if text[at..].starts_with(MARKER) && at + MARKER.len() > cut {
            cut = at;
        }
    }
    Some((
        &text[..cut],
        format!(" [truncated from {} bytes]", text.len()),
    ))
}

/// Splits a string that already ends with a truncation notice into head and notice.
pub(crate) fn split_truncated(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_suffix(" bytes]")?;
    let digits = rest.len() - rest.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let head = rest[..rest.len() - digits].strip_suffix(" [truncated from ")?;
    (digits > 0).then(|| text.split_at(head.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_cuts_at_characters_and_markers() {
        let long = "é".repeat(10);
        assert_eq!(
            truncate(&long, 5),
            Some(("éé", " [truncated from 20 bytes]".to_owned()))
        );
        assert_eq!(truncate("short", 5), None);
        assert_eq!(truncate("ab[REDACTED]cd", 6).map(|t| t.0), Some("ab"));
        assert_eq!(
            truncate("ab[REDACTED]cd", 12).map(|t| t.0),
            Some("ab[REDACTED]")
        );
        assert_eq!(
            split_truncated("x [truncated from 20 bytes]"),
            Some(("x", " [truncated from 20 bytes]"))
        );
        assert_eq!(split_truncated("x [truncated from  bytes]"), None);
        assert_eq!(split_truncated("x bytes]"), None);
    }

    #[test]
    fn media_is_recognised() {
        let png = format!("data:image/png;base64,{}", "iVBORw0KGgo".repeat(20));
        assert!(drop_media(&png, 100).is_some_and(|p| p.starts_with("[media dropped: ")));
        assert_eq!(drop_media(&png, 10_000), None);
        assert_eq!(drop_media(&"word ".repeat(100), 100), None);
        let placeholder = drop_media(&png, 100).unwrap_or_default();
        assert_eq!(drop_media(&placeholder, 10), None);
    }
}
