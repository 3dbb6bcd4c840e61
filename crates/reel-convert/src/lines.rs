//! The lines of a line-format file, streamed in bounded memory through the trace
//! reader's [`LineReader`], and the items a converter makes of them. A line longer than
//! [`reel_trace::reader::MAX_LINE`] is read past without being held and handed on as what it
//! is ([`Entry::TooLong`], [`Fault::TooLong`]), so an import can say it lost a line
//! rather than take it for a blank one.

use std::fs::File;
use std::io;
use std::path::Path;

use super::{Fault, Item, without_bom};
use reel_trace::reader::LineReader;

/// The lines of a line-format file, streamed: `(number, bytes)` for each, blank lines
/// included, read errors as [`Fault::Io`].
pub fn read_lines(path: &Path) -> io::Result<Lines> {
    let f = File::open(path)?;
    Ok(Lines {
        reader: LineReader::new(io::BufReader::new(f)),
        too_long: None,
    })
}

/// A line of [`Lines::next_entry`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry<'a> {
    /// Its number and bytes.
    Line(u64, &'a [u8]),
    /// A line over [`reel_trace::reader::MAX_LINE`], read past: its number and length.
    TooLong {
        /// The line's number.
        line: u64,
        /// Its length in bytes.
        bytes: u64,
    },
}

/// See [`read_lines`].
pub struct Lines {
    reader: LineReader<io::BufReader<File>>,
    /// The length of the line last returned when it was too long to hold.
    too_long: Option<u64>,
}

impl Lines {
    /// The same, holding lines of at most `max` bytes (tests; see
    /// [`reel_trace::reader::MAX_LINE`]).
    pub fn with_max_line(mut self, max: usize) -> Lines {
        self.reader = self.reader.with_max_line(max);
        self
    }

    /// The next line, or one too long to hold ([`Entry::TooLong`]).
    pub fn next_entry(&mut self) -> io::Result<Option<Entry<'_>>> {
        let Some(l) = self.reader.next_line()? else {
            return Ok(None);
        };
        self.too_long = l.skipped;
        let bytes = if l.number == 1 {
            without_bom(l.bytes)
        } else {
            l.bytes
        };
        Ok(Some(match l.skipped {
            Some(len) => Entry::TooLong {
                line: l.number,
                bytes: len,
            },
            None => Entry::Line(l.number, bytes),
        }))
    }

    /// The line [`Lines::next_entry`] returned last, taken out of the reader without a
    /// copy (see [`LineReader::take_line`]).
    pub fn take_line(&mut self) -> Option<Vec<u8>> {
        self.reader.take_line()
    }

    /// The next line: its number and bytes (the buffer is reused by the next call); a
    /// byte order mark before the first line is not part of it. A line too long to hold
    /// comes back empty (what gives items reads [`Lines::next_entry`] instead, and says
    /// so).
    pub fn next_line(&mut self) -> io::Result<Option<(u64, &[u8])>> {
        let line = self.reader.next_line()?;
        self.too_long = line.and_then(|l| l.skipped);
        Ok(line.map(|l| {
            let bytes = if l.number == 1 {
                without_bom(l.bytes)
            } else {
                l.bytes
            };
            (l.number, bytes)
        }))
    }
}

/// The items of a line format: each line of `lines` through `convert`, which gives
/// nothing for a line without an item (blank, a header), the item, or the fault (for a
/// line it cannot convert, with the bytes to keep); a line too long to hold is
/// [`Fault::TooLong`], never seen by `convert`; a read error ends the stream. A line of
/// [`crate::LARGE_LINE`] bytes or more is converted through a skeleton
/// ([`crate::large`]): `convert` must pass strings through as JSON text.
pub fn line_items<F>(lines: Lines, convert: F) -> LineItems<F>
where
    F: FnMut(u64, &[u8]) -> Result<Option<Item>, Fault>,
{
    LineItems { lines, convert }
}

/// See [`line_items`].
pub struct LineItems<F> {
    lines: Lines,
    convert: F,
}

impl<F> Iterator for LineItems<F>
where
    F: FnMut(u64, &[u8]) -> Result<Option<Item>, Fault>,
{
    type Item = Result<Item, Fault>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (number, bytes) = match self.lines.next_entry() {
                Ok(Some(Entry::Line(number, bytes))) => (number, bytes),
                Ok(Some(Entry::TooLong { line, bytes })) => {
                    return Some(Err(Fault::TooLong { line, bytes }));
                }
                Ok(None) => return None,
                Err(e) => return Some(Err(Fault::Io(e))),
            };
            let converted = if bytes.len() >= crate::LARGE_LINE {
                // Taken out of the reader rather than copied (see `large`).
                match self.lines.take_line() {
                    Some(line) => crate::large::convert(number, line, &mut self.convert),
                    None => continue,
                }
            } else {
                (self.convert)(number, bytes)
            };
            match converted {
                Ok(None) => continue,
                Ok(Some(item)) => return Some(Ok(item)),
                Err(fault) => return Some(Err(fault)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_too_long_to_hold_is_a_fault_never_a_blank_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("src.jsonl");
        let long = "x".repeat(100);
        std::fs::write(&path, format!("{{\"a\":1}}\n{long}\n{{\"b\":2}}\n{long}")).unwrap();
        let lines = read_lines(&path).unwrap().with_max_line(16);
        let seen: Vec<String> = line_items(lines, |n, bytes| {
            Ok(Some(Item::Event {
                t: reel_trace::Timestamp(0),
                kind: format!("line {n}"),
                raw: String::from_utf8_lossy(bytes).into_owned(),
                session: None,
            }))
        })
        .map(|item| match item {
            Ok(Item::Event { kind, raw, .. }) => format!("{kind}: {raw}"),
            Err(Fault::TooLong { line, bytes }) => format!("line {line}: {bytes} bytes lost"),
            other => panic!("{other:?}"),
        })
        .collect();
        assert_eq!(
            seen,
            [
                "line 1: {\"a\":1}",
                "line 2: 100 bytes lost",
                "line 3: {\"b\":2}",
                "line 4: 100 bytes lost",
            ]
        );
    }
}
