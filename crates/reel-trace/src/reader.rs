//! Streaming reader: any size of trace in bounded memory.
//!
//! [`LineReader`] splits bytes into lines with memchr over one growable buffer, so memory
//! is about the read size plus twice the longest line, whatever the file size. It strips
//! a UTF-8 BOM on the first line and a CR before each LF, and reports whether the last
//! line was terminated (a line without LF at EOF is a *torn* line when it does not parse).
//!
//! [`TraceReader`] reads a trace as one logical stream: the named file plus, when the path
//! is the base of a rotated set (`x.jsonl.2`, `x.jsonl.1`, `x.jsonl`), its older companions
//! first. It counts the sessions appended to one file (each `meta` line starts one).

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::line::{Line, LineError, parse_line};

/// Default read size.
const READ_CHUNK: usize = 1 << 20;
/// Past this size the line buffer grows by this much at a time instead of doubling: the
/// memory a reader needs is its longest line plus at most this.
pub const GROW_STEP: usize = 64 << 20;
/// The longest line a reader holds (1 GiB): a longer one is read past, not loaded, and
/// reported ([`RawLine::skipped`]), so a reader never needs more than this plus
/// [`GROW_STEP`].
pub const MAX_LINE: usize = 1 << 30;

/// One line as found in the file.
#[derive(Debug, Clone, Copy)]
pub struct RawLine<'a> {
    /// 1-based line number in its file.
    pub number: u64,
    /// The bytes, without BOM, CR and LF.
    pub bytes: &'a [u8],
    /// False for a last line that ended at EOF without LF.
    pub terminated: bool,
    /// True when the line ended in CRLF.
    pub crlf: bool,
    /// A line longer than [`MAX_LINE`] is not held: its length, and `bytes` is empty.
    pub skipped: Option<u64>,
}

/// Splits a byte stream into lines.
pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    number: u64,
    longest: usize,
    /// Bytes read from `inner` so far.
    read: u64,
    max_line: usize,
    /// The length of the line being read past (longer than `max_line`), if any.
    skipping: Option<u64>,
    /// Where the line [`LineReader::next_line`] returned last lies in `buf`.
    last: Option<(usize, usize)>,
}

impl<R: Read> LineReader<R> {
    /// Wraps a reader.
    pub fn new(inner: R) -> Self {
        LineReader {
            inner,
            buf: vec![0; READ_CHUNK],
            start: 0,
            end: 0,
            eof: false,
            number: 0,
            longest: 0,
            read: 0,
            max_line: MAX_LINE,
            skipping: None,
            last: None,
        }
    }

    /// The same, holding lines of at most `max` bytes (tests; see [`MAX_LINE`]).
    pub fn with_max_line(mut self, max: usize) -> Self {
        self.max_line = max;
        self
    }

    /// Bytes read from the underlying reader so far (at most one read ahead of the
    /// lines returned): what a progress bar shows.
    pub fn bytes_read(&self) -> u64 {
        self.read
    }

    /// The length of the longest line seen so far.
    pub fn longest_line(&self) -> usize {
        self.longest
    }

    /// The next line, or `None` at EOF.
    pub fn next_line(&mut self) -> io::Result<Option<RawLine<'_>>> {
        let span = self.next_span()?;
        self.last = span
            .filter(|s| s.skipped.is_none())
            .map(|s| (s.start, s.end));
        Ok(span.map(|span| self.line(span)))
    }

    /// The line [`LineReader::next_line`] returned last, taken out of the reader without
    /// a copy (its bytes as returned): the reader goes on in a new buffer holding only
    /// what was read past the line. For a line too large to copy; `None` when the last
    /// call returned no line to take (end of input, a line read past, or taken already).
    pub fn take_line(&mut self) -> Option<Vec<u8>> {
        let (s, e) = self.last.take()?;
        let ahead = self.end - self.start;
        let mut next = vec![0; READ_CHUNK.max(ahead)];
        next[..ahead].copy_from_slice(&self.buf[self.start..self.end]);
        let mut line = std::mem::replace(&mut self.buf, next);
        self.start = 0;
        self.end = ahead;
        line.truncate(e);
        line.drain(..s);
        // Shrinking a large allocation gives its pages back without copying them.
        line.shrink_to_fit();
        Some(line)
    }

    /// Finds the next line and returns where it is in the buffer (valid until the next call).
    fn next_span(&mut self) -> io::Result<Option<Span>> {
        let mut scanned = self.start;
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[scanned..self.end]) {
                let nl = scanned + i;
                let s = self.start;
                self.start = nl + 1;
                if let Some(n) = self.skipping.take() {
                    return Ok(Some(self.skipped_span(n + (nl - s) as u64, true)));
                }
                if nl - s > self.max_line {
                    // Whole in the buffer, but past the limit all the same: every line
                    // over it is treated alike, wherever the reads happened to end.
                    return Ok(Some(self.skipped_span((nl - s) as u64, true)));
                }
                return Ok(Some(self.span(s, nl, true)));
            }
            if self.end - self.start > self.max_line || self.skipping.is_some() {
                // Too long to hold: count it and let the bytes go, and the memory that
                // held them (the rest of the line is read a chunk at a time).
                *self.skipping.get_or_insert(0) += (self.end - self.start) as u64;
                self.start = self.end;
                if self.buf.len() > READ_CHUNK {
                    self.buf = vec![0; READ_CHUNK];
                    self.start = 0;
                    self.end = 0;
                }
                if self.eof {
                    let n = self.skipping.take().unwrap_or_default();
                    return Ok(Some(self.skipped_span(n, false)));
                }
            }
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                let (s, e) = (self.start, self.end);
                self.start = self.end;
                return Ok(Some(self.span(s, e, false)));
            }
            scanned = self.end;
            // `fill` may move the unread bytes to the front of the buffer.
            scanned -= self.fill()?;
        }
    }

    fn skipped_span(&mut self, len: u64, terminated: bool) -> Span {
        self.number += 1;
        Span {
            start: self.start,
            end: self.start,
            terminated,
            crlf: false,
            skipped: Some(len),
        }
    }

    fn span(&mut self, mut s: usize, mut e: usize, terminated: bool) -> Span {
        self.number += 1;
        if self.number == 1 && self.buf[s..e].starts_with(b"\xEF\xBB\xBF") {
            s += 3;
        }
        let crlf = e > s && self.buf[e - 1] == b'\r';
        if crlf {
            e -= 1;
        }
        self.longest = self.longest.max(e - s);
        Span {
            start: s,
            end: e,
            terminated,
            crlf,
            skipped: None,
        }
    }

    fn line(&self, span: Span) -> RawLine<'_> {
        RawLine {
            number: self.number,
            bytes: &self.buf[span.start..span.end],
            terminated: span.terminated,
            crlf: span.crlf,
            skipped: span.skipped,
        }
    }
}

#[derive(Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    terminated: bool,
    crlf: bool,
    skipped: Option<u64>,
}

impl<R: Read> LineReader<R> {
    /// Reads more bytes; returns how far the unread bytes were moved towards the front.
    fn fill(&mut self) -> io::Result<usize> {
        let shift = self.start;
        if shift > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= shift;
            self.start = 0;
        }
        if self.buf.len() - self.end < READ_CHUNK / 2 {
            // A line longer than the buffer: grow, doubling up to GROW_STEP, then by
            // GROW_STEP at a time, so a line of any length costs at most its own size
            // plus GROW_STEP (a 2 GB line is not held in 4 GB).
            let len = self.buf.len();
            let new_len = if len < GROW_STEP {
                (len * 2).max(self.end + READ_CHUNK)
            } else {
                len + GROW_STEP
            };
            // `resize` alone would double the capacity (amortised growth): address
            // space for a 2 GB buffer to hold a 1 GB line.
            self.buf.reserve_exact(new_len - len);
            self.buf.resize(new_len, 0);
        }
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(shift);
                }
                Ok(n) => {
                    self.end += n;
                    self.read += n as u64;
                    return Ok(shift);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

/// Why a trace cannot be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// Nothing at that path.
    #[error("{path}: no such file (give a trace file or a run name; `reel ls` lists the runs)")]
    NotFound {
        /// The path.
        path: PathBuf,
    },
    /// A directory where a trace file was expected.
    #[error(
        "{path}: is a directory, not a trace file (give a .jsonl file; `reel ls` lists the traces in a directory)"
    )]
    IsDirectory {
        /// The path.
        path: PathBuf,
    },
    /// A pipe, FIFO or device where a trace file was expected: a trace is read more
    /// than once (replay reads answers back by position), which only a file allows.
    #[error(
        "{path}: not a regular file (a pipe or FIFO?): a trace is read by position; save it to a file first"
    )]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// The file is empty, or does not start with a JSON object: not a trace.
    #[error("{path}: not a trace: {problem} (a trace starts with a meta line)")]
    NotATrace {
        /// The path.
        path: PathBuf,
        /// What the file holds instead.
        problem: &'static str,
    },
    /// Any other I/O failure.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
}

impl OpenError {
    fn from_io(path: &Path, e: io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::NotFound => OpenError::NotFound {
                path: path.to_owned(),
            },
            io::ErrorKind::IsADirectory => OpenError::IsDirectory {
                path: path.to_owned(),
            },
            _ => OpenError::Io {
                path: path.to_owned(),
                source: e,
            },
        }
    }
}

/// The files of a trace in reading order: rotated companions, oldest (highest number)
/// first, then the named file.
///
/// Companions are looked for only when `path` itself is not a numbered companion.
pub fn trace_files(path: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let is_companion = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit()));
    if !is_companion {
        let mut n = 1;
        loop {
            let mut p = path.as_os_str().to_owned();
            p.push(format!(".{n}"));
            let p = PathBuf::from(p);
            if !p.is_file() {
                break;
            }
            files.push(p);
            n += 1;
        }
        files.reverse();
    }
    files.push(path.to_owned());
    files
}

/// A line of a trace with its place.
#[derive(Debug, Clone, Copy)]
pub struct TraceLine<'a> {
    /// The file the line is in.
    pub path: &'a Path,
    /// Its index among the reader's files (rotated companions first, 0 the oldest).
    pub file: usize,
    /// The line.
    pub raw: RawLine<'a>,
}

impl<'a> TraceLine<'a> {
    /// Parses the line.
    pub fn parse(&self) -> Result<Line<'a>, LineError> {
        parse_line(self.raw.bytes)
    }

    /// `path:line`, for messages.
    pub fn location(&self) -> String {
        format!("{}:{}", self.path.display(), self.raw.number)
    }
}

/// Reads a trace (and its rotated companions) line by line in bounded memory.
pub struct TraceReader {
    files: Vec<PathBuf>,
    current: usize,
    lines: LineReader<File>,
    bytes_total: u64,
    /// Bytes of the files before the current one.
    bytes_before: u64,
}

impl TraceReader {
    /// Opens the trace at `path` with its rotated companions.
    pub fn open(path: &Path) -> Result<TraceReader, OpenError> {
        Self::open_files(trace_files(path))
    }

    /// Opens exactly one file, without looking for companions.
    pub fn open_single(path: &Path) -> Result<TraceReader, OpenError> {
        Self::open_files(vec![path.to_owned()])
    }

    fn open_files(files: Vec<PathBuf>) -> Result<TraceReader, OpenError> {
        let mut total = 0;
        for f in &files {
            let md = std::fs::metadata(f).map_err(|e| OpenError::from_io(f, e))?;
            if md.is_dir() {
                return Err(OpenError::IsDirectory { path: f.clone() });
            }
            total += md.len();
        }
        let first = open_file(&files[0])?;
        Ok(TraceReader {
            files,
            current: 0,
            lines: LineReader::new(first),
            bytes_total: total,
            bytes_before: 0,
        })
    }

    /// The files this reader reads, in order.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Total size of the files, in bytes.
    pub fn total_bytes(&self) -> u64 {
        self.bytes_total
    }

    /// Bytes read so far, all files together (see [`LineReader::bytes_read`]).
    pub fn bytes_read(&self) -> u64 {
        self.bytes_before + self.lines.bytes_read()
    }

    /// The longest line of the current file read so far.
    pub fn longest_line(&self) -> usize {
        self.lines.longest_line()
    }

    /// The next line, `None` after the last line of the last file.
    pub fn next_line(&mut self) -> Option<Result<TraceLine<'_>, OpenError>> {
        let span = loop {
            match self.lines.next_span() {
                Ok(Some(span)) => break span,
                Ok(None) if self.current + 1 < self.files.len() => {
                    self.bytes_before += self.lines.bytes_read();
                    self.current += 1;
                    match open_file(&self.files[self.current]) {
                        Ok(f) => self.lines = LineReader::new(f),
                        Err(e) => return Some(Err(e)),
                    }
                }
                Ok(None) => return None,
                Err(e) => {
                    return Some(Err(OpenError::Io {
                        path: self.files[self.current].clone(),
                        source: e,
                    }));
                }
            }
        };
        Some(Ok(TraceLine {
            path: &self.files[self.current],
            file: self.current,
            raw: self.lines.line(span),
        }))
    }
}

fn open_file(path: &Path) -> Result<File, OpenError> {
    File::open(path).map_err(|e| OpenError::from_io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line past the limit is read past, counted and reported, not loaded; the lines
    /// around it are read as usual.
    #[test]
    fn a_line_past_the_limit_is_skipped_not_held() {
        let mut input = b"{\"a\":1}\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 3 << 20));
        input.extend_from_slice(b"\n{\"b\":2}\n");
        input.extend(std::iter::repeat_n(b'y', 2 << 20));
        let mut r = LineReader::new(&input[..]).with_max_line(1 << 20);
        let mut got = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            got.push((l.number, l.bytes.to_vec(), l.skipped, l.terminated));
        }
        assert_eq!(
            got,
            vec![
                (1, b"{\"a\":1}".to_vec(), None, true),
                (2, Vec::new(), Some(3 << 20), true),
                (3, b"{\"b\":2}".to_vec(), None, true),
                (4, Vec::new(), Some(2 << 20), false),
            ]
        );
        assert!(r.buf.len() <= 4 << 20, "{}", r.buf.len());
    }

    /// A 130 MB line is held in its own size plus at most one growth step, not in about
    /// twice its size (doubling would give a 256 MB buffer, zero-filled, so resident).
    #[test]
    fn a_long_line_costs_its_size_plus_one_step() {
        let len = 130 << 20;
        let input = std::io::Read::chain(std::io::repeat(b'x').take(len as u64), &b"\n"[..]);
        let mut r = LineReader::new(input);
        let line = r.next_line().unwrap().unwrap();
        assert_eq!(line.bytes.len(), len);
        assert!(
            r.buf.len() <= len + GROW_STEP + READ_CHUNK,
            "{}",
            r.buf.len()
        );
    }

    /// A taken line is the line's bytes (no BOM, no CR), and the lines after it read on
    /// from what was already read past it, wherever the reads ended.
    #[test]
    fn a_taken_line_leaves_the_rest_to_read() {
        let mut input = b"\xEF\xBB\xBFfirst\r\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 3 << 20));
        input.extend_from_slice(b"\r\nthird\nfourth");
        for chunk in [7, 4096, 5 << 20] {
            let reader = std::io::BufReader::with_capacity(chunk, &input[..]);
            let mut r = LineReader::new(reader);
            let mut got = Vec::new();
            while let Some(l) = r.next_line().unwrap() {
                let n = l.number;
                let taken = if n % 2 == 1 { r.take_line() } else { None };
                got.push((
                    n,
                    taken.unwrap_or_else(|| r.buf[r.last.unwrap().0..r.last.unwrap().1].to_vec()),
                ));
                assert!(r.take_line().is_none() || n % 2 == 0);
            }
            let want: Vec<(u64, Vec<u8>)> = vec![
                (1, b"first".to_vec()),
                (2, vec![b'x'; 3 << 20]),
                (3, b"third".to_vec()),
                (4, b"fourth".to_vec()),
            ];
            assert_eq!(got.len(), want.len(), "reads of {chunk}");
            for (g, w) in got.iter().zip(&want) {
                assert!(g == w, "reads of {chunk}: line {} differs", w.0);
            }
        }
    }

    fn lines(input: &[u8]) -> Vec<(Vec<u8>, bool, bool)> {
        let mut r = LineReader::new(input);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            out.push((l.bytes.to_vec(), l.terminated, l.crlf));
        }
        out
    }

    #[test]
    fn splits_strips_and_reports_torn_tails() {
        let got = lines(b"\xEF\xBB\xBFa\r\nb\n\nc");
        assert_eq!(
            got,
            vec![
                (b"a".to_vec(), true, true),
                (b"b".to_vec(), true, false),
                (b"".to_vec(), true, false),
                (b"c".to_vec(), false, false),
            ]
        );
        assert!(lines(b"").is_empty());
    }

    #[test]
    fn lines_longer_than_the_buffer() {
        let long = vec![b'x'; READ_CHUNK * 3 + 17];
        let mut input = long.clone();
        input.extend_from_slice(b"\nshort\n");
        input.extend_from_slice(&long);
        let got = lines(&input);
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].0.len(), long.len());
        assert_eq!(got[1].0, b"short");
        assert_eq!(got[2].0.len(), long.len());
        assert!(!got[2].1);
    }

    /// A reader that hands out one byte at a time, to exercise every split position.
    struct Trickle<'a>(&'a [u8]);
    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() || buf.is_empty() {
                return Ok(0);
            }
            buf[0] = self.0[0];
            self.0 = &self.0[1..];
            Ok(1)
        }
    }

    #[test]
    fn short_reads_give_the_same_lines() {
        let input = b"{\"a\":1}\r\n{\"b\":2}\n\n{\"c\"";
        let mut r = LineReader::new(Trickle(input));
        let mut n = 0;
        while let Some(l) = r.next_line().unwrap() {
            n += 1;
            assert_eq!(l.number, n);
        }
        assert_eq!(n, 4);
    }

    #[test]
    fn rotated_companions_are_read_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("t.jsonl");
        std::fs::write(dir.path().join("t.jsonl.2"), "a\n").unwrap();
        std::fs::write(dir.path().join("t.jsonl.1"), "b\n").unwrap();
        std::fs::write(&base, "c\n").unwrap();
        let mut r = TraceReader::open(&base).unwrap();
        let mut got = Vec::new();
        while let Some(l) = r.next_line() {
            got.push(String::from_utf8(l.unwrap().raw.bytes.to_vec()).unwrap());
        }
        assert_eq!(got, ["a", "b", "c"]);
        let single = TraceReader::open(&dir.path().join("t.jsonl.1")).unwrap();
        assert_eq!(single.files().len(), 1);
    }

    #[test]
    fn directories_and_missing_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            TraceReader::open(dir.path()),
            Err(OpenError::IsDirectory { .. })
        ));
        assert!(matches!(
            TraceReader::open(&dir.path().join("nope.jsonl")),
            Err(OpenError::NotFound { .. })
        ));
    }
}
