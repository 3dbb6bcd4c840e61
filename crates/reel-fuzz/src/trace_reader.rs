//! The trace reader's line splitting (`reel_trace::reader::LineReader`), over a reader
//! that returns short reads of any length.
//!
//! Asserts: the lines, with the line breaks they report (and the BOM the first line
//! lost), are the input byte for byte — nothing dropped, merged or reordered; line
//! numbers count from 1; only the last line may be unterminated; the longest-line figure
//! is right; and the split does not depend on how the bytes arrived.

use reel_trace::reader::LineReader;

use crate::input::{ChunkedReader, choice};

/// One line as the reader reported it.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    bytes: Vec<u8>,
    terminated: bool,
    crlf: bool,
}

fn read(data: &[u8], seed: u8) -> (Vec<Seen>, usize) {
    let mut reader = LineReader::new(ChunkedReader::new(data, seed));
    let mut lines = Vec::new();
    while let Some(line) = reader.next_line().expect("reading memory") {
        assert_eq!(line.number, lines.len() as u64 + 1, "line numbers");
        lines.push(Seen {
            bytes: line.bytes.to_vec(),
            terminated: line.terminated,
            crlf: line.crlf,
        });
    }
    assert_eq!(reader.bytes_read(), data.len() as u64);
    (lines, reader.longest_line())
}

/// The target.
pub fn run(data: &[u8]) {
    let (seed, data) = choice(data);
    let (lines, longest) = read(data, seed);
    let mut rebuilt = Vec::with_capacity(data.len());
    if data.starts_with(b"\xEF\xBB\xBF") {
        rebuilt.extend_from_slice(b"\xEF\xBB\xBF");
    }
    for (i, l) in lines.iter().enumerate() {
        assert!(
            l.terminated || i + 1 == lines.len(),
            "an unterminated line before the last"
        );
        assert!(!l.bytes.contains(&b'\n'));
        rebuilt.extend_from_slice(&l.bytes);
        if l.crlf {
            rebuilt.push(b'\r');
        }
        if l.terminated {
            rebuilt.push(b'\n');
        }
    }
    assert_eq!(rebuilt, data, "the lines are not the input");
    assert_eq!(
        longest,
        lines.iter().map(|l| l.bytes.len()).max().unwrap_or(0)
    );
    if seed != 0 {
        assert_eq!(read(data, 0).0, lines, "the split depends on the reads");
    }
}
