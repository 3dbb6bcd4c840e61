//! Splitting a forwarded byte stream into the lines the trace records.
//!
//! A forwarding thread hands each chunk on to its destination first and only then feeds
//! it here, so line splitting never delays a byte. A line that spans chunks is assembled
//! in one growing buffer, whatever its length (a 64 MB `tools/call` result is one line).
//!
//! Invariants: the bytes of every emitted line are exactly the input between two LFs,
//! minus the LF and one CR right before it (reported as `crlf`); a last line without LF
//! is emitted by [`LineSplitter::finish`]; nothing is dropped or merged.

/// One line, without its line break.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Line {
    /// The bytes between the line breaks.
    pub bytes: Vec<u8>,
    /// The line ended in CRLF (the CR is not in `bytes`).
    pub crlf: bool,
}

/// Splits chunks into lines, keeping a partial line across chunks.
pub(crate) struct LineSplitter {
    partial: Vec<u8>,
    /// A partial line this long is emitted as it stands (stderr only: a server that
    /// writes progress bars without LF must not grow reel's memory without bound).
    max_line: Option<usize>,
    /// The last emitted line was cut at `max_line` and nothing came since: an LF now ends
    /// that line rather than starting an empty one.
    just_cut: bool,
}

impl LineSplitter {
    /// A splitter that assembles lines of any length.
    pub fn new() -> Self {
        LineSplitter {
            partial: Vec::new(),
            max_line: None,
            just_cut: false,
        }
    }

    /// A splitter that cuts lines longer than `max` bytes into pieces of `max`.
    pub fn with_max_line(max: usize) -> Self {
        LineSplitter {
            partial: Vec::new(),
            max_line: Some(max.max(1)),
            just_cut: false,
        }
    }

    /// Feeds a chunk; `emit` gets every line the chunk completes, in order.
    pub fn feed(&mut self, chunk: &[u8], mut emit: impl FnMut(Line)) {
        let mut rest = chunk;
        while let Some(i) = memchr::memchr(b'\n', rest) {
            let piece = &rest[..i];
            if std::mem::take(&mut self.just_cut) && piece.is_empty() {
                rest = &rest[i + 1..];
                continue;
            }
            let mut bytes = if self.partial.is_empty() {
                piece.to_vec()
            } else {
                // The buffer moves into the line; the next partial line starts empty, so a
                // 64 MB line does not leave a 64 MB buffer behind.
                let mut p = std::mem::take(&mut self.partial);
                p.extend_from_slice(piece);
                p
            };
            let crlf = bytes.last() == Some(&b'\r');
            if crlf {
                bytes.pop();
            }
            emit(Line { bytes, crlf });
            rest = &rest[i + 1..];
        }
        self.partial.extend_from_slice(rest);
        if !rest.is_empty() {
            self.just_cut = false;
        }
        if let Some(max) = self.max_line {
            while self.partial.len() >= max {
                let tail = self.partial.split_off(max);
                let bytes = std::mem::replace(&mut self.partial, tail);
                emit(Line { bytes, crlf: false });
                self.just_cut = self.partial.is_empty();
            }
        }
    }

    /// Ends the stream: emits a last line that had no LF, if any.
    pub fn finish(&mut self, mut emit: impl FnMut(Line)) {
        if !self.partial.is_empty() {
            emit(Line {
                bytes: std::mem::take(&mut self.partial),
                crlf: false,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(chunks: &[&[u8]], splitter: &mut LineSplitter) -> Vec<(Vec<u8>, bool)> {
        let mut out = Vec::new();
        for c in chunks {
            splitter.feed(c, |l| out.push((l.bytes, l.crlf)));
        }
        splitter.finish(|l| out.push((l.bytes, l.crlf)));
        out
    }

    #[test]
    fn every_split_position_gives_the_same_lines() {
        let input: &[u8] = b"{\"a\":1}\r\n\n\xff\xfe\nplain text\r\n[1,2]\nlast";
        let whole = split(&[input], &mut LineSplitter::new());
        assert_eq!(
            whole,
            vec![
                (b"{\"a\":1}".to_vec(), true),
                (b"".to_vec(), false),
                (b"\xff\xfe".to_vec(), false),
                (b"plain text".to_vec(), true),
                (b"[1,2]".to_vec(), false),
                (b"last".to_vec(), false),
            ]
        );
        for i in 0..input.len() {
            for j in i..input.len() {
                let got = split(
                    &[&input[..i], &input[i..j], &input[j..]],
                    &mut LineSplitter::new(),
                );
                assert_eq!(got, whole, "split at {i}, {j}");
            }
        }
    }

    #[test]
    fn long_lines_are_assembled_and_capped_lines_are_cut() {
        let long = vec![b'x'; 300_000];
        let chunks: Vec<&[u8]> = long.chunks(65_536).chain([&b"\n"[..]]).collect();
        let got = split(&chunks, &mut LineSplitter::new());
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0.len(), 300_000);

        let got = split(&chunks, &mut LineSplitter::with_max_line(100_000));
        let lens: Vec<usize> = got.iter().map(|l| l.0.len()).collect();
        assert_eq!(lens, vec![100_000, 100_000, 100_000]);
    }
}
