//! The line framer (`reel_net::framing::LineFramer`) on a peer's stdio stream, split
//! into chunks anywhere, under each kind of [`Limit`].
//!
//! Asserts: without a limit, the lines with their line breaks are the input byte for
//! byte and do not depend on the split; with `Skip`, the lines that fit are exact and
//! the lines (and which were oversized, and how they ended) do not depend on the split;
//! with `Cut`, no piece is longer than the limit and no byte other than a line break is
//! lost or added.

use reel_net::framing::{Limit, Line, LineFramer};

use crate::input::{choice, chunks};

fn frame(limit: Limit, pieces: &[&[u8]]) -> Vec<Line> {
    let mut framer = LineFramer::new(limit);
    let mut lines = Vec::new();
    for p in pieces {
        framer.feed(p, |l| lines.push(l));
    }
    framer.finish(|l| lines.push(l));
    lines
}

fn rebuild(lines: &[Line]) -> Vec<u8> {
    let mut out = Vec::new();
    for l in lines {
        out.extend_from_slice(&l.bytes);
        if l.crlf {
            out.push(b'\r');
        }
        if l.terminated {
            out.push(b'\n');
        }
    }
    out
}

fn content(bytes: &[u8]) -> Vec<u8> {
    bytes
        .iter()
        .copied()
        .filter(|b| !matches!(b, b'\r' | b'\n'))
        .collect()
}

/// The target.
pub fn run(data: &[u8]) {
    let (c, data) = choice(data);
    // The low bits choose the split, the high ones the limit.
    let seed = c & 0x1f;
    let max = usize::from(c >> 5) * 3;
    let limit = match c >> 5 {
        0 | 1 => Limit::None,
        2..=4 => Limit::Cut(max),
        _ => Limit::Skip(max),
    };
    let split = chunks(data, seed);
    let lines = frame(limit, &split);
    for l in &lines {
        assert!(!l.bytes.contains(&b'\n'), "a line holds a LF");
    }
    match limit {
        Limit::None => {
            assert_eq!(rebuild(&lines), data, "the lines are not the input");
            assert_eq!(frame(limit, &[data]), lines, "the split changed the lines");
        }
        Limit::Skip(max) => {
            let whole = frame(limit, &[data]);
            assert_eq!(whole, lines, "the split changed the lines");
            for l in &lines {
                assert!(l.oversized || l.bytes.len() <= max, "a long line was kept");
            }
            let exact = frame(Limit::None, &[data]);
            assert_eq!(exact.len(), lines.len(), "lines were merged or dropped");
            for (e, l) in exact.iter().zip(&lines) {
                if !l.oversized {
                    assert_eq!(e, l);
                }
            }
        }
        Limit::Cut(max) => {
            for l in &lines {
                assert!(
                    l.bytes.len() <= max.max(1) || l.terminated,
                    "a piece too long"
                );
            }
            let got: Vec<u8> = lines.iter().flat_map(|l| content(&l.bytes)).collect();
            assert_eq!(got, content(data), "bytes lost or added");
        }
    }
}
