//! Line framing: the one way reel splits a byte stream (stdio, a pipe, a child's
//! output) into lines — the recorder, the tape server and the live servers of `verify`
//! and `play --subset` all use [`LineFramer`].
//!
//! A caller hands each chunk on to its destination first (a recorder forwards before it
//! frames, so framing never delays a byte) and then feeds it here. A line that spans
//! chunks is assembled in one growing buffer, whatever its length (a 64 MB `tools/call`
//! result is one line), unless a [`Limit`] says otherwise.
//!
//! Invariants: the bytes of every emitted line are exactly the input between two LFs,
//! minus the LF and one CR right before it (reported as `crlf`); a last line without LF
//! is emitted by [`LineFramer::finish`] (with `terminated: false`), and so is each piece
//! [`Limit::Cut`] cuts off a longer line; nothing is dropped or merged, except what
//! [`Limit::Skip`] asks to discard. So, without `Skip`, the input is the emitted lines
//! each followed by CRLF, LF or nothing as `crlf` and `terminated` say.

/// How far back from a [`Limit::Cut`] a piece may end early to end at a word.
pub const SOFT_CUT_WINDOW: usize = 64 * 1024;

/// Where to end a piece of at most `piece.len()` bytes cut off a longer text: just
/// after the last white space of its last [`SOFT_CUT_WINDOW`] bytes, so the cut falls
/// between words and a secret is not split over two pieces (each is redacted as a
/// line of its own) — unless the word before announces what follows (`password:`,
/// `Bearer`, `--token`), which would part a label from its value; else at the limit.
pub fn soft_cut(piece: &[u8]) -> usize {
    let max = piece.len();
    let floor = max.saturating_sub(SOFT_CUT_WINDOW.min(max / 2));
    let mut i = max;
    while i > floor {
        i -= 1;
        if !piece[i].is_ascii_whitespace() {
            continue;
        }
        let mut w = i;
        while w > floor && piece[w - 1].is_ascii_whitespace() {
            w -= 1;
        }
        let start = piece[..w]
            .iter()
            .rposition(u8::is_ascii_whitespace)
            .map_or(0, |p| p + 1);
        if !announces(&piece[start..w]) {
            return i + 1;
        }
        i = w;
    }
    max
}

/// Whether a word announces a value after it: it ends in `:` or `=`, or is one of
/// the words a credential follows.
fn announces(word: &[u8]) -> bool {
    const WORDS: [&str; 14] = [
        "bearer",
        "basic",
        "token",
        "password",
        "passwd",
        "pass",
        "pwd",
        "secret",
        "key",
        "ssws",
        "authorization",
        "-p",
        "-u",
        "--password",
    ];
    let trimmed: &[u8] = {
        let mut w = word;
        while let [rest @ .., b'"' | b'\'' | b','] = w {
            w = rest;
        }
        w
    };
    matches!(trimmed.last(), Some(b':' | b'='))
        || word.len() > 64
        || WORDS
            .iter()
            .any(|k| trimmed.eq_ignore_ascii_case(k.as_bytes()))
        || trimmed.starts_with(b"--")
}

/// What happens to a line longer than a limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Lines of any length are assembled.
    None,
    /// A partial line this long is emitted as it stands, in pieces of at most this many
    /// bytes (a server's stderr: progress bars without LF must not grow memory).
    Cut(usize),
    /// A line longer than this is not kept: it is emitted, at its end, as an empty line
    /// marked `oversized` (a peer's line too large to serve must not be held).
    Skip(usize),
}

/// One line, without its line break.
#[derive(Debug, PartialEq, Eq)]
pub struct Line {
    /// The bytes between the line breaks (empty when `oversized`).
    pub bytes: Vec<u8>,
    /// The line ended in CRLF (the CR is not in `bytes`).
    pub crlf: bool,
    /// The line ended in LF (false: the stream ended, or a [`Limit::Cut`] piece, which the
    /// next line continues).
    pub terminated: bool,
    /// The line was longer than [`Limit::Skip`] allows; its bytes were discarded.
    pub oversized: bool,
}

/// Splits chunks into lines, keeping a partial line across chunks.
#[derive(Debug)]
pub struct LineFramer {
    partial: Vec<u8>,
    limit: Limit,
    /// The current line passed the [`Limit::Skip`] length: its bytes are discarded.
    skipping: bool,
    /// The last byte discarded while `skipping` was a CR: if the LF comes first in the
    /// next chunk, the line ended in CRLF.
    skipped_cr: bool,
}

impl Default for LineFramer {
    fn default() -> Self {
        LineFramer::new(Limit::None)
    }
}

impl LineFramer {
    /// A framer with `limit` on line length.
    pub fn new(limit: Limit) -> Self {
        let limit = match limit {
            Limit::Cut(n) => Limit::Cut(n.max(1)),
            other => other,
        };
        LineFramer {
            partial: Vec::new(),
            limit,
            skipping: false,
            skipped_cr: false,
        }
    }

    /// Feeds a chunk; `emit` gets every line the chunk completes, in order.
    pub fn feed(&mut self, chunk: &[u8], mut emit: impl FnMut(Line)) {
        let mut rest = chunk;
        while let Some(i) = memchr::memchr(b'\n', rest) {
            let piece = &rest[..i];
            rest = &rest[i + 1..];
            if std::mem::take(&mut self.skipping) {
                self.partial.clear();
                let crlf = match piece.last() {
                    Some(&b) => b == b'\r',
                    None => self.skipped_cr,
                };
                emit(Line {
                    bytes: Vec::new(),
                    crlf,
                    terminated: true,
                    oversized: true,
                });
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
            if matches!(self.limit, Limit::Skip(max) if bytes.len() > max) {
                emit(Line {
                    bytes: Vec::new(),
                    crlf,
                    terminated: true,
                    oversized: true,
                });
                continue;
            }
            emit(Line {
                bytes,
                crlf,
                terminated: true,
                oversized: false,
            });
        }
        if self.skipping {
            if let Some(&b) = rest.last() {
                self.skipped_cr = b == b'\r';
            }
            return;
        }
        self.partial.extend_from_slice(rest);
        match self.limit {
            Limit::None => {}
            // Cut only past the limit, so a piece is always followed by more of its line:
            // a line of exactly `max` bytes ends with its own line break, and the break
            // is never lost between a piece and the next line.
            Limit::Cut(max) => {
                while self.partial.len() > max {
                    let at = soft_cut(&self.partial[..max]);
                    let tail = self.partial.split_off(at);
                    let bytes = std::mem::replace(&mut self.partial, tail);
                    emit(Line {
                        bytes,
                        crlf: false,
                        terminated: false,
                        oversized: false,
                    });
                }
            }
            // One byte past the limit (plus a CR) cannot be a line that fits.
            Limit::Skip(max) if self.partial.len() > max.saturating_add(1) => {
                self.skipping = true;
                self.skipped_cr = self.partial.last() == Some(&b'\r');
                self.partial = Vec::new();
            }
            Limit::Skip(_) => {}
        }
    }

    /// Ends the stream: emits a last line that had no LF, if any.
    pub fn finish(&mut self, mut emit: impl FnMut(Line)) {
        if std::mem::take(&mut self.skipping) {
            emit(Line {
                bytes: Vec::new(),
                crlf: false,
                terminated: false,
                oversized: true,
            });
        } else if !self.partial.is_empty() {
            let bytes = std::mem::take(&mut self.partial);
            let oversized = matches!(self.limit, Limit::Skip(max) if bytes.len() > max);
            emit(Line {
                bytes: if oversized { Vec::new() } else { bytes },
                crlf: false,
                terminated: false,
                oversized,
            });
        }
    }
}

#[cfg(test)]
mod soft_cut_tests {
    use super::*;

    #[test]
    fn a_long_line_is_cut_between_words_so_a_token_stays_whole() {
        // Regression (issue 28): a 1 MiB stderr piece ended in the middle of a key, so
        // each half was redacted alone and both survived.
        let key = "sk-ant-api03-Zq8rT2mX0pVb7KdT4wNsXq7LmN2pR9sT4vW6yZ1bC3dF5gH8jK0a";
        let max = 1000;
        let mut line = "word ".repeat(190).into_bytes();
        line.extend_from_slice(key.as_bytes());
        line.extend_from_slice(b" and the rest of the line");
        let mut f = LineFramer::new(Limit::Cut(max));
        let mut pieces = Vec::new();
        // As a pipe reads it: the line comes before its line break.
        f.feed(&line, |l| pieces.push(l));
        f.feed(b"\n", |l| pieces.push(l));
        line.push(b'\n');
        assert!(pieces.len() >= 2);
        assert!(pieces.iter().all(|p| p.bytes.len() <= max));
        let texts: Vec<String> = pieces
            .iter()
            .map(|p| String::from_utf8_lossy(&p.bytes).into_owned())
            .collect();
        assert!(texts.iter().any(|t| t.contains(key)), "{texts:?}");
        let joined: Vec<u8> = pieces.iter().flat_map(|p| p.bytes.clone()).collect();
        assert_eq!(joined, line[..line.len() - 1]);
    }

    #[test]
    fn a_label_is_not_parted_from_its_value() {
        let mut piece = "x".repeat(50).into_bytes();
        piece.extend_from_slice(b" ok password: hunter2-and-more");
        let at = soft_cut(&piece);
        assert_eq!(
            &piece[..at],
            b"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx ok ".as_slice()
        );
        // No white space in the window: the limit.
        assert_eq!(soft_cut(&[b'a'; 100]), 100);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(chunks: &[&[u8]], splitter: &mut LineFramer) -> Vec<(Vec<u8>, bool)> {
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
        let whole = split(&[input], &mut LineFramer::default());
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
                    &mut LineFramer::default(),
                );
                assert_eq!(got, whole, "split at {i}, {j}");
            }
        }
    }

    #[test]
    fn long_lines_are_assembled_and_capped_lines_are_cut() {
        let long = vec![b'x'; 300_000];
        let chunks: Vec<&[u8]> = long.chunks(65_536).chain([&b"\n"[..]]).collect();
        let got = split(&chunks, &mut LineFramer::default());
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0.len(), 300_000);

        let got = split(&chunks, &mut LineFramer::new(Limit::Cut(100_000)));
        let lens: Vec<usize> = got.iter().map(|l| l.0.len()).collect();
        assert_eq!(lens, vec![100_000, 100_000, 100_000]);
    }

    #[test]
    fn oversized_lines_are_skipped_at_every_split_position() {
        let input: &[u8] = b"ok\r\n0123456789abc\nfits\n0123456789\r\ntail-too-long";
        let frame = |chunks: &[&[u8]]| {
            let mut f = LineFramer::new(Limit::Skip(10));
            let mut out = Vec::new();
            for c in chunks {
                f.feed(c, |l| out.push(l));
            }
            f.finish(|l| out.push(l));
            out.into_iter()
                .map(|l| (l.bytes, l.crlf, l.terminated, l.oversized))
                .collect::<Vec<_>>()
        };
        let whole = frame(&[input]);
        assert_eq!(
            whole,
            vec![
                (b"ok".to_vec(), true, true, false),
                (Vec::new(), false, true, true),
                (b"fits".to_vec(), false, true, false),
                (b"0123456789".to_vec(), true, true, false),
                (Vec::new(), false, false, true),
            ]
        );
        for i in 0..input.len() {
            for j in i..input.len() {
                assert_eq!(
                    frame(&[&input[..i], &input[i..j], &input[j..]]),
                    whole,
                    "{i} {j}"
                );
            }
        }
    }

    /// Cut pieces and line ends rebuild the input exactly, wherever the chunks split it
    /// (a stderr line of exactly the limit, a CR LF across the cut, a last line without
    /// LF).
    #[test]
    fn cut_pieces_and_line_ends_rebuild_the_input() {
        let input: &[u8] = b"abcd\nabcde\r\nabcd\r\n\nabcdefghij\nab\rcd\ntail";
        for max in 1..7 {
            for at in 0..input.len() {
                let mut f = LineFramer::new(Limit::Cut(max));
                let mut back = Vec::new();
                let mut put = |l: Line| {
                    back.extend_from_slice(&l.bytes);
                    match (l.terminated, l.crlf) {
                        (true, true) => back.extend_from_slice(b"\r\n"),
                        (true, false) => back.push(b'\n'),
                        (false, _) => {}
                    }
                };
                f.feed(&input[..at], &mut put);
                f.feed(&input[at..], &mut put);
                f.finish(&mut put);
                assert_eq!(back, input, "max {max}, split at {at}");
            }
        }
    }

    #[test]
    fn an_oversized_crlf_line_keeps_its_crlf_when_the_lf_comes_in_the_next_chunk() {
        // Found by fuzzing (fuzz/regressions/line_framer): the CR was discarded with the
        // line's bytes at the end of one chunk, and the LF alone in the next one made the
        // line read as LF-ended.
        let input: &[u8] = b"0123456789abc\r\nok\n";
        let frame = |chunks: &[&[u8]]| {
            let mut f = LineFramer::new(Limit::Skip(3));
            let mut out = Vec::new();
            for c in chunks {
                f.feed(c, |l| out.push((l.bytes, l.crlf, l.oversized)));
            }
            f.finish(|l| out.push((l.bytes, l.crlf, l.oversized)));
            out
        };
        let whole = frame(&[input]);
        assert_eq!(
            whole,
            vec![(Vec::new(), true, true), (b"ok".to_vec(), false, false)]
        );
        for i in 0..input.len() {
            for j in i..input.len() {
                assert_eq!(
                    frame(&[&input[..i], &input[i..j], &input[j..]]),
                    whole,
                    "{i} {j}"
                );
            }
        }
    }
}
