//! Following a trace while it is written: the one reader of a growing file and its
//! rotated companions, for what shows or exports a recording live (the viewer's index,
//! `rec --otlp`).
//!
//! Each call to [`Follower::read_more`] reads what was appended since the last one and
//! hands over every complete line with its place. A rotated companion is complete: a
//! last line without its break ends there. At the end of the live file a line without
//! its break waits for the rest, unless it parses as JSON whole (a writer writes a line
//! and its break together, so such a tail is the whole line, written by a recorder that
//! was killed); the break that may still follow it is then skipped. [`Follower::finish`]
//! hands over what is left when the trace will not grow any more.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::reader::trace_files;

/// How much one read takes from a file at most.
const CHUNK: usize = 4 << 20;
/// The least a read buffer holds, however little was appended.
const MIN_CHUNK: usize = 64 << 10;

/// Where a line starts: the file (its index in [`Follower::files`]) and the byte offset
/// in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineAt {
    /// The file, 0 the oldest companion.
    pub file: usize,
    /// The offset of the line's first byte.
    pub offset: u64,
}

/// A reader that follows a trace as it grows.
#[derive(Debug, Default)]
pub struct Follower {
    files: Vec<PathBuf>,
    /// Where reading goes on: the file and the offset in it.
    file_at: usize,
    offset: u64,
    /// The start of a line whose end has not arrived yet, and where it starts.
    pending: Vec<u8>,
    pending_at: u64,
    /// The last line was handed over without its break (a tail that parsed whole).
    unterminated: bool,
    bytes_read: u64,
}

impl Follower {
    /// Follows the trace at `path` and its rotated companions (oldest first).
    pub fn open(path: &Path) -> Follower {
        Follower::new(trace_files(path))
    }

    /// Follows `files`, in reading order (the last one is the one that grows).
    pub fn new(files: Vec<PathBuf>) -> Follower {
        Follower {
            files,
            ..Follower::default()
        }
    }

    /// The files followed, in reading order.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Bytes read so far, over all files.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// Bytes held for a line whose end has not arrived.
    pub fn held(&self) -> usize {
        self.pending.capacity()
    }

    /// Reads what was appended since the last call (everything, the first time), up to
    /// about `budget` bytes, handing each complete line (without its `\n` or `\r\n`) to
    /// `line`; returns the bytes read (0: nothing new). A file that shrank is an error.
    pub fn read_more(
        &mut self,
        budget: usize,
        line: &mut impl FnMut(&[u8], LineAt),
    ) -> io::Result<u64> {
        let mut total = 0u64;
        while self.file_at < self.files.len() {
            let path = &self.files[self.file_at];
            let mut f = File::open(path)?;
            let len = f.metadata()?.len();
            if len < self.offset {
                return Err(io::Error::other(format!(
                    "{} shrank while it was followed (from {} to {len} bytes)",
                    path.display(),
                    self.offset
                )));
            }
            f.seek(SeekFrom::Start(self.offset))?;
            // Sized to what was appended (at least [`MIN_CHUNK`], for what arrives while
            // reading): a poll that finds little new does not zero [`CHUNK`] bytes.
            let appended = usize::try_from(len - self.offset).unwrap_or(usize::MAX);
            let mut buf = vec![0u8; CHUNK.min(budget.max(1)).min(appended.max(MIN_CHUNK))];
            loop {
                if total >= budget as u64 {
                    return Ok(total);
                }
                let n = f.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                self.take(&buf[..n], line);
                self.offset += n as u64;
                self.bytes_read += n as u64;
                total += n as u64;
            }
            if self.file_at + 1 == self.files.len() {
                self.end_of_data(false, line);
                break;
            }
            // A rotated companion is complete: a line without its break ends there.
            self.end_of_data(true, line);
            self.file_at += 1;
            self.offset = 0;
        }
        Ok(total)
    }

    /// Hands over the line the trace ends in without a break (a recorder that was
    /// killed), for when it will not grow any more.
    pub fn finish(&mut self, line: &mut impl FnMut(&[u8], LineAt)) {
        self.end_of_data(true, line);
    }

    /// The complete lines of `bytes`, which start at the read offset (and follow what
    /// came before).
    fn take(&mut self, bytes: &[u8], line: &mut impl FnMut(&[u8], LineAt)) {
        let base = self.offset;
        let mut at = 0usize;
        if std::mem::take(&mut self.unterminated) {
            // The break of the tail handed over without one: `\n` or `\r\n`, whose `\r`
            // may come alone (then the `\n` is still to be skipped).
            match bytes {
                [b'\n', ..] => at = 1,
                [b'\r', b'\n', ..] => at = 2,
                [b'\r'] => {
                    self.unterminated = true;
                    return;
                }
                _ => {}
            }
        }
        let first = at;
        for nl in memchr::memchr_iter(b'\n', &bytes[first..]).map(|i| i + first) {
            let piece = &bytes[at..nl];
            if self.pending.is_empty() {
                line(trim_cr(piece), self.at(base + at as u64));
            } else {
                let mut whole = std::mem::take(&mut self.pending);
                whole.extend_from_slice(piece);
                line(trim_cr(&whole), self.at(self.pending_at));
            }
            at = nl + 1;
        }
        if at < bytes.len() {
            if self.pending.is_empty() {
                self.pending_at = base + at as u64;
            }
            self.pending.extend_from_slice(&bytes[at..]);
        }
    }

    /// At the end of what a file holds now: a last line without its break is handed
    /// over when the file is complete (`complete`), or when it parses as JSON whole.
    fn end_of_data(&mut self, complete: bool, line: &mut impl FnMut(&[u8], LineAt)) {
        if self.pending.is_empty() {
            return;
        }
        let whole = serde_json::from_slice::<serde::de::IgnoredAny>(&self.pending).is_ok();
        if complete || whole {
            let tail = std::mem::take(&mut self.pending);
            line(trim_cr(&tail), self.at(self.pending_at));
            self.unterminated = !complete;
        }
    }

    fn at(&self, offset: u64) -> LineAt {
        LineAt {
            file: self.file_at,
            offset,
        }
    }
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn lines(f: &mut Follower, budget: usize) -> Vec<(String, LineAt)> {
        let mut out = Vec::new();
        f.read_more(budget, &mut |l, at| {
            out.push((String::from_utf8_lossy(l).into_owned(), at));
        })
        .unwrap();
        out
    }

    fn append(path: &Path, bytes: &[u8]) {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        f.write_all(bytes).unwrap();
    }

    #[test]
    fn a_growing_file_gives_each_line_once_whole_at_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        append(&path, b"{\"a\":1}\r\n{\"b\":");
        let mut f = Follower::open(&path);
        let first = lines(&mut f, usize::MAX);
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].0, "{\"a\":1}");
        assert_eq!(first[0].1, LineAt { file: 0, offset: 0 });
        assert!(lines(&mut f, usize::MAX).is_empty(), "nothing new");
        append(&path, b"2}\nnot json yet");
        let second = lines(&mut f, usize::MAX);
        assert_eq!(second[0].0, "{\"b\":2}");
        assert_eq!(second[0].1.offset, 9);
        assert_eq!(second.len(), 1, "a tail that is not JSON waits");
        let mut last = Vec::new();
        f.finish(&mut |l, _| last.push(l.to_vec()));
        assert_eq!(last, [b"not json yet".to_vec()]);
        assert_eq!(f.bytes_read(), 29);
    }

    #[test]
    fn a_tail_that_parses_is_given_at_once_and_its_late_break_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        append(&path, b"{\"a\":1}");
        let mut f = Follower::open(&path);
        assert_eq!(lines(&mut f, usize::MAX).len(), 1);
        append(&path, b"\n{\"b\":2}\n");
        let next = lines(&mut f, usize::MAX);
        assert_eq!(next.len(), 1, "{next:?}");
        assert_eq!(next[0].0, "{\"b\":2}");
        assert_eq!(next[0].1.offset, 8);
    }

    #[test]
    fn rotated_companions_come_first_and_end_their_own_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        append(&dir.path().join("t.jsonl.2"), b"{\"n\":1}\n{\"n\":2");
        append(&dir.path().join("t.jsonl.1"), b"{\"n\":3}\n");
        append(&path, b"{\"n\":4}\n");
        let mut f = Follower::open(&path);
        assert_eq!(f.files().len(), 3);
        let got: Vec<_> = lines(&mut f, usize::MAX)
            .into_iter()
            .map(|(l, at)| (l, at.file))
            .collect();
        let want = [
            ("{\"n\":1}", 0),
            ("{\"n\":2", 0),
            ("{\"n\":3}", 1),
            ("{\"n\":4}", 2),
        ];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for ((l, file), (wl, wf)) in got.iter().zip(want) {
            assert_eq!((l.as_str(), *file), (wl, wf));
        }
    }

    #[test]
    fn a_budget_splits_the_reading_without_losing_a_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let text: String = (0..200).map(|i| format!("{{\"i\":{i}}}\n")).collect();
        append(&path, text.as_bytes());
        let mut f = Follower::open(&path);
        let mut all = Vec::new();
        loop {
            let got = lines(&mut f, 7);
            if got.is_empty() && f.bytes_read() == text.len() as u64 {
                break;
            }
            all.extend(got.into_iter().map(|(l, _)| l));
        }
        let want: Vec<String> = (0..200).map(|i| format!("{{\"i\":{i}}}")).collect();
        assert_eq!(all, want);
    }

    proptest::proptest! {
        /// However the writer's appends fall (mid-line, mid-break, several lines at
        /// once) and whatever the budget, each line comes out once, whole, in order.
        #[test]
        fn appends_cut_anywhere_give_the_same_lines(
            values in proptest::collection::vec(0u32..100_000, 1..40),
            cuts in proptest::collection::vec(0usize..2_000, 0..12),
            crlf in proptest::bool::ANY,
            budget in 1usize..64,
        ) {
            let end = if crlf { "\r\n" } else { "\n" };
            let text: String = values.iter().map(|v| format!("{{\"v\":{v}}}{end}")).collect();
            let mut at: Vec<usize> = cuts.iter().map(|c| c % (text.len() + 1)).collect();
            at.push(text.len());
            at.sort_unstable();
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.jsonl");
            std::fs::write(&path, b"").unwrap();
            let mut f = Follower::open(&path);
            let mut got = Vec::new();
            let mut from = 0;
            for to in at {
                append(&path, &text.as_bytes()[from..to]);
                from = to;
                while f.read_more(budget, &mut |l, _| got.push(l.to_vec())).unwrap() > 0 {}
            }
            f.finish(&mut |l, _| got.push(l.to_vec()));
            let want: Vec<Vec<u8>> =
                values.iter().map(|v| format!("{{\"v\":{v}}}").into_bytes()).collect();
            proptest::prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn a_file_that_shrinks_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        append(&path, b"{\"a\":1}\n{\"b\":2}\n");
        let mut f = Follower::open(&path);
        lines(&mut f, usize::MAX);
        std::fs::write(&path, b"{}\n").unwrap();
        let e = f.read_more(usize::MAX, &mut |_, _| {}).unwrap_err();
        assert!(e.to_string().contains("shrank"), "{e}");
    }
}
