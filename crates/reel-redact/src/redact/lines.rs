//! A PEM block that arrives one line at a time. The recorder writes a server's stderr
//! and the non-JSON lines of a stdio stream as one event per line, so a private key a
//! server prints is split over thirty events: the `BEGIN` line alone matches
//! `pem-private-key`, the body lines are plain base64. [`LineBlock`] remembers, per
//! stream, that a block was opened and not closed; the lines that follow are redacted
//! whole while they look like PEM body (base64 and RFC 1421 headers), up to and
//! including the `END` line. A line that does not look like PEM body ends the block:
//! a stray `BEGIN` line cannot swallow a log.

use std::borrow::Cow;

use memchr::memmem;

use super::builtin::Revision;
use super::compiled::Compiled;
use super::names::Strength;
use super::splice::MARKER;

/// What a stream of lines has shown so far: whether a PEM private-key block is open.
/// One per stream (stderr, each side's non-JSON lines); starts closed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineBlock {
    open: bool,
    /// `reel/3`: the last line was a YAML `env` entry's `name:` naming a secret; its
    /// `value:` comes on this one.
    named: Option<Strength>,
}

/// The longest line taken as PEM body (RFC 7468 lines are 64 characters; PGP armor
/// and OpenSSH stay well below this).
const BODY_LINE_MAX: usize = 256;

/// See [`Redactor::redact_line`](super::Redactor::redact_line).
pub(super) fn redact_line<'a>(
    rules: &Compiled,
    text: &'a str,
    block: &mut LineBlock,
) -> Cow<'a, str> {
    let named = std::mem::take(&mut block.named);
    if rules.secret_keys && rules.revision >= Revision::Reel3 {
        let mut spans = Vec::new();
        block.named = super::prose::env_line(text, named, 0, &mut spans);
        if let Some(&(start, end)) = spans.first() {
            let out = format!(
                "{}{MARKER}{}",
                rules.redact_text(&text[..start]),
                rules.redact_text(&text[end..])
            );
            return Cow::Owned(out);
        }
    }
    if !rules.values.has_pem() {
        return rules.redact_text(text);
    }
    if block.open {
        if let Some(end) = end_of_end_line(text) {
            block.open = false;
            let rest = rules.redact_text(&text[end..]);
            return Cow::Owned(format!("{MARKER}{rest}"));
        }
        if text.trim().is_empty() {
            return Cow::Borrowed(text);
        }
        if is_body_line(text) {
            // Owned: callers read `Borrowed` as "unchanged".
            return Cow::Owned(MARKER.to_owned());
        }
        block.open = false;
    }
    let out = rules.redact_text(text);
    block.open = opens_block(text);
    out
}

/// Whether `text` has a `-----BEGIN … PRIVATE KEY…-----` line not followed by its
/// `-----END` in the same text.
fn opens_block(text: &str) -> bool {
    let b = text.as_bytes();
    let Some(begin) = memmem::rfind(b, b"-----BEGIN ") else {
        return false;
    };
    let rest = &b[begin..];
    let Some(head_end) = memmem::find(&rest[5..], b"-----").map(|i| i + 5) else {
        return false;
    };
    let label = &rest[11..head_end];
    memmem::find(label, b"PRIVATE KEY").is_some()
        && memmem::find(&rest[head_end..], b"-----END ").is_none()
}

/// Where the `-----END …-----` boundary of an open block ends in `text`, if it holds one.
fn end_of_end_line(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let at = memmem::find(b, b"-----END ")?;
    let close = memmem::find(&b[at + 9..], b"-----")?;
    Some(at + 9 + close + 5)
}

/// PEM body: base64 and RFC 1421 header lines (`Proc-Type: 4,ENCRYPTED`,
/// `DEK-Info: AES-128-CBC,…`, PGP's `Version: …`), nothing else.
fn is_body_line(text: &str) -> bool {
    text.len() <= BODY_LINE_MAX
        && text.bytes().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(
                    c,
                    b'+' | b'/' | b'=' | b':' | b',' | b'.' | b'-' | b' ' | b'\t' | b'\r'
                )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::Redactor;

    #[test]
    fn a_block_over_many_lines_is_redacted_line_by_line() {
        let r = Redactor::builtin();
        let mut block = LineBlock::default();
        let lines = [
            "loading key",
            "-----BEGIN RSA PRIVATE KEY-----",
            "Proc-Type: 4,ENCRYPTED",
            "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
            "",
            "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK",
            "-----END RSA PRIVATE KEY----- loaded",
            "VTLw7onLRnrq0IzW7yWR7QkrmBL7jTKEn5u",
        ];
        let out: Vec<String> = lines
            .iter()
            .map(|l| r.redact_line(l, &mut block).into_owned())
            .collect();
        assert_eq!(
            out,
            [
                "loading key",
                "[REDACTED]",
                "[REDACTED]",
                "[REDACTED]",
                "",
                "[REDACTED]",
                "[REDACTED] loaded",
                "VTLw7onLRnrq0IzW7yWR7QkrmBL7jTKEn5u",
            ]
        );
        assert!(!block.open);
    }

    #[test]
    fn a_line_that_is_not_body_ends_the_block() {
        let r = Redactor::builtin();
        let mut block = LineBlock::default();
        assert_eq!(
            r.redact_line("-----BEGIN PRIVATE KEY-----", &mut block),
            MARKER
        );
        assert!(block.open);
        assert_eq!(
            r.redact_line("error: bad key \"x\"", &mut block),
            "error: bad key \"x\""
        );
        assert!(!block.open);
        assert_eq!(r.redact_line("QUJD", &mut block), "QUJD");
        // A whole block on one line opens nothing.
        let one = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----";
        assert_eq!(r.redact_line(one, &mut block), MARKER);
        assert!(!block.open);
        // A public key is not a secret.
        let public = "-----BEGIN PUBLIC KEY-----";
        assert_eq!(r.redact_line(public, &mut block), public);
        assert!(!block.open);
    }
}
