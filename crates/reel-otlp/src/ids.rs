//! Trace and span ids, and the W3C `traceparent` a client may have sent.
//!
//! Ids are derived, not random: a trace id from the session's `meta` line, a span id
//! from the line that opened the span. Exporting the same trace twice (a retried CI
//! job, a file exported again after a live export) gives the same ids, so a backend
//! sees the same spans again rather than a second copy of the run.

use sha2::{Digest, Sha256};

/// The seed of one recorded session: a digest of its `meta` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seed([u8; 32]);

impl Seed {
    /// The seed of the session whose `meta` line is `meta_line` (its bytes as
    /// recorded), line `at` of the file (the same session appended twice is two).
    pub fn of_meta(meta_line: &[u8], at: u64) -> Seed {
        let mut h = Sha256::new();
        h.update(meta_line);
        h.update(at.to_be_bytes());
        Seed(h.finalize().into())
    }

    /// The session's trace id (16 bytes, never all zero).
    pub fn trace_id(&self) -> Vec<u8> {
        self.derive(b"trace", 0, 16)
    }

    /// The id of the session's own span.
    pub fn session_span_id(&self) -> Vec<u8> {
        self.derive(b"session", 0, 8)
    }

    /// The id of the span opened by line `line` of file `file` (0 for the first of a
    /// trace's files: rotated companions restart their line numbers).
    pub fn span_id(&self, file: u64, line: u64) -> Vec<u8> {
        self.derive(b"line", (file << 40) | line, 8)
    }

    fn derive(&self, what: &[u8], n: u64, len: usize) -> Vec<u8> {
        let mut h = Sha256::new();
        h.update(self.0);
        h.update(what);
        h.update(n.to_be_bytes());
        let mut id = h.finalize()[..len].to_vec();
        // An all-zero id is invalid in OTLP; a digest that starts so is vanishingly
        // rare, and made valid rather than trusted.
        if id.iter().all(|b| *b == 0) {
            id[len - 1] = 1;
        }
        id
    }
}

/// A W3C Trace Context `traceparent` (version 00): the caller's trace and span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceParent {
    /// 16 bytes.
    pub trace_id: Vec<u8>,
    /// 8 bytes: the span the caller was in.
    pub span_id: Vec<u8>,
    /// The sampled flag.
    pub sampled: bool,
}

impl TraceParent {
    /// Parses `00-<32 hex>-<16 hex>-<2 hex>`; `None` for anything else, an all-zero
    /// trace or span id included (the recommendation says to ignore such a header).
    pub fn parse(s: &str) -> Option<TraceParent> {
        let mut parts = s.trim().split('-');
        let (version, trace, span, flags) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        if version != "00" || parts.next().is_some() {
            return None;
        }
        let hex = |s: &str, len: usize| -> Option<Vec<u8>> {
            if s.len() != len * 2 || !s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
                return None;
            }
            (0..len)
                .map(|i| u8::from_str_radix(&s[i * 2..i * 2 + 2], 16).ok())
                .collect()
        };
        let trace_id = hex(trace, 16)?;
        let span_id = hex(span, 8)?;
        let flags = hex(flags, 1)?;
        if trace_id.iter().all(|b| *b == 0) || span_id.iter().all(|b| *b == 0) {
            return None;
        }
        Some(TraceParent {
            trace_id,
            span_id,
            sampled: flags[0] & 1 == 1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_distinct_and_sized() {
        let a = Seed::of_meta(
            br#"{"type":"meta","startedAt":"2026-01-01T00:00:00.000Z"}"#,
            1,
        );
        let b = Seed::of_meta(
            br#"{"type":"meta","startedAt":"2026-01-01T00:00:00.001Z"}"#,
            1,
        );
        let again = Seed::of_meta(
            br#"{"type":"meta","startedAt":"2026-01-01T00:00:00.000Z"}"#,
            9,
        );
        assert_ne!(a.trace_id(), again.trace_id());
        assert_eq!(a.trace_id(), a.trace_id());
        assert_ne!(a.trace_id(), b.trace_id());
        assert_eq!(a.trace_id().len(), 16);
        assert_eq!(a.span_id(0, 3).len(), 8);
        assert_ne!(a.span_id(0, 3), a.span_id(0, 4));
        assert_ne!(a.span_id(0, 3), a.span_id(1, 3));
        assert_ne!(a.span_id(0, 0), a.session_span_id());
    }

    #[test]
    fn traceparent_is_parsed_strictly() {
        let tp =
            TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
        assert_eq!(tp.trace_id[0], 0x4b);
        assert_eq!(tp.span_id[7], 0xb7);
        assert!(tp.sampled);
        for bad in [
            "",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",
            "00-4bf92f3577b34da6a3ce929d0e0e47-00f067aa0ba902b7-01",
        ] {
            assert_eq!(TraceParent::parse(bad), None, "{bad}");
        }
    }
}
