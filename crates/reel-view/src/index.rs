//! The index of one trace: where each line is, what it is, and which calls pair up.
//!
//! A trace is indexed once, as it is read, and the index grows while the file does (a
//! run in progress, or a large file still being read): pages are served from the lines
//! indexed so far, so the first screen of a gigabyte trace does not wait for the last
//! line. Per line the index keeps a fixed-size [`LineRec`] (its place in the file, its
//! class, direction, time and one interned label); payloads stay on disk and are read
//! again for the page that shows them.
//!
//! Calls are the exchanges of [`reel_mcp::exchange`] (one pairing for every reel
//! command: by session, direction and id, correct under concurrency), one builder per
//! `meta` segment so ids never pair across sessions appended to one file.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use reel_mcp::exchange::{Exchange, ExchangeBuilder, Facts, Pushed};
use reel_mcp::jsonrpc::{
    Envelope, RpcKind, cancelled_request_id, notification_progress_token, request_progress_token,
};
use reel_trace::{Dir, Line, LineClass, Timestamp};

/// How much of a file one read takes.
const CHUNK: usize = 4 << 20;

/// What kind of line a record is: one of the format's classes, or not a JSON object
/// (shown as the text it is).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// A line of the format (an unknown `type` or `dir` is [`LineClass::Other`]).
    Line(LineClass),
    /// Not a JSON object.
    Bad,
}

impl Class {
    /// The name the API uses: the format's class names, and `bad`.
    pub fn name(self) -> &'static str {
        match self {
            Class::Line(c) => c.name(),
            Class::Bad => "bad",
        }
    }

    /// The class named `name`.
    pub fn parse(name: &str) -> Option<Class> {
        LineClass::ALL
            .into_iter()
            .map(Class::Line)
            .chain([Class::Bad])
            .find(|c| c.name() == name)
    }
}

/// One line of the trace, 32 bytes.
#[derive(Clone, Copy, Debug)]
pub struct LineRec {
    /// Byte offset of the line in its file.
    pub offset: u64,
    /// `t` in Unix milliseconds, [`NO_TIME`] when the line has none.
    pub t: i64,
    /// Its length in bytes, without the line break.
    pub len: u32,
    /// The method (messages), kind (events), role (turns) or type, interned; 0: none.
    pub label: u32,
    /// 1 + the index of the call it belongs to; 0: none.
    pub call: u32,
    /// Which of the run's files holds it.
    pub file: u16,
    /// Its class.
    pub class: Class,
    /// Its direction, when it has a known one.
    pub dir: Option<Dir>,
}

/// [`LineRec::t`] of a line without a time.
pub const NO_TIME: i64 = i64::MIN;

/// Strings many lines share (methods, kinds, tools, sessions), stored once.
#[derive(Default, Debug)]
pub struct Interner {
    names: Vec<String>,
    ids: HashMap<String, u32>,
}

impl Interner {
    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        self.names.push(s.to_owned());
        let id = self.names.len() as u32;
        self.ids.insert(s.to_owned(), id);
        id
    }

    /// The string of `id`; `None` for 0.
    pub fn get(&self, id: u32) -> Option<&str> {
        let i = (id as usize).checked_sub(1)?;
        self.names.get(i).map(String::as_str)
    }

    /// The id of `s`, when some line has it.
    pub fn find(&self, s: &str) -> Option<u32> {
        self.ids.get(s).copied()
    }
}

/// The index of one trace, as far as it has been read.
#[derive(Debug)]
pub struct TraceIndex {
    files: Vec<PathBuf>,
    /// The lines, in order.
    pub lines: Vec<LineRec>,
    /// The interned labels and tool names.
    pub strings: Interner,
    /// Exchanges of finished segments.
    done: Vec<Exchange>,
    /// The tool (`tools/call`), resource or prompt each call names, interned, by call.
    subjects: Vec<u32>,
    segment: Segment,
    /// Lines per (class, label): the counts the events and tools filters show.
    pub counts: HashMap<(Class, u32), u64>,
    /// The first `meta` line, parsed.
    pub meta: Option<serde_json::Value>,
    /// True once an `end` line was read.
    pub ended: bool,
    /// Bytes read so far, over all files.
    pub bytes_read: u64,
    /// Where reading goes on: the file and the offset in it.
    file_at: usize,
    offset: u64,
    /// The start of a line whose end has not arrived yet, and its offset.
    pending: Vec<u8>,
    pending_start: u64,
    /// The last line was indexed without its line break (a torn tail that parsed).
    unterminated: bool,
}

#[derive(Default)]
struct Segment {
    builder: ExchangeBuilder,
    /// Messages offered to this segment so far.
    messages: u64,
}

impl std::fmt::Debug for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Segment")
            .field("exchanges", &self.builder.exchanges().len())
            .finish()
    }
}

impl TraceIndex {
    /// An empty index of the run whose files are `files` (rotated companions first).
    pub fn new(files: Vec<PathBuf>) -> TraceIndex {
        TraceIndex {
            files,
            lines: Vec::new(),
            strings: Interner::default(),
            done: Vec::new(),
            subjects: Vec::new(),
            segment: Segment::default(),
            counts: HashMap::new(),
            meta: None,
            ended: false,
            bytes_read: 0,
            file_at: 0,
            offset: 0,
            pending: Vec::new(),
            pending_start: 0,
            unterminated: false,
        }
    }

    /// The run's files.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// The file `rec` is in.
    pub fn file_of(&self, rec: &LineRec) -> &Path {
        &self.files[usize::from(rec.file)]
    }

    /// Every call so far, in the order of their requests.
    pub fn call_count(&self) -> usize {
        self.done.len() + self.segment.builder.exchanges().len()
    }

    /// Call `i`.
    pub fn call(&self, i: usize) -> Option<&Exchange> {
        match i.checked_sub(self.done.len()) {
            None => self.done.get(i),
            Some(j) => self.segment.builder.exchanges().get(j),
        }
    }

    /// The tool, resource or prompt call `i` names.
    pub fn subject(&self, i: usize) -> Option<&str> {
        self.subjects.get(i).and_then(|&s| self.strings.get(s))
    }

    /// The interned id of [`TraceIndex::subject`] (0: none).
    pub fn subject_id(&self, i: usize) -> u32 {
        self.subjects.get(i).copied().unwrap_or(0)
    }

    /// The record of 1-based line `n`.
    pub fn line(&self, n: u64) -> Option<&LineRec> {
        let i = usize::try_from(n.checked_sub(1)?).ok()?;
        self.lines.get(i)
    }

    /// Reads what was appended since the last call (everything, the first time), up to
    /// `budget` bytes; returns the bytes read (0: nothing new).
    pub fn read_more(&mut self, budget: usize) -> io::Result<u64> {
        let mut total = 0u64;
        while self.file_at < self.files.len() {
            let path = self.files[self.file_at].clone();
            let mut f = File::open(&path)?;
            let len = f.metadata()?.len();
            if len < self.offset {
                return Err(io::Error::other(format!(
                    "{} shrank while it was shown (from {} to {len} bytes)",
                    path.display(),
                    self.offset
                )));
            }
            f.seek(SeekFrom::Start(self.offset))?;
            let mut buf = vec![0u8; CHUNK.min(budget.max(1))];
            loop {
                if total as usize >= budget {
                    return Ok(total);
                }
                let n = f.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                self.take(&buf[..n], self.offset);
                self.offset += n as u64;
                self.bytes_read += n as u64;
                total += n as u64;
            }
            let last = self.file_at + 1 == self.files.len();
            if !last {
                // A rotated companion is complete: a line without its break ends there.
                self.finish_tail(true);
                self.file_at += 1;
                self.offset = 0;
            } else {
                self.finish_tail(false);
                break;
            }
        }
        Ok(total)
    }

    /// Indexes the complete lines of `bytes`, which start at offset `base` of the file
    /// being read (and follow what came before).
    fn take(&mut self, bytes: &[u8], base: u64) {
        let mut at = 0usize;
        if std::mem::take(&mut self.unterminated) && bytes.first() == Some(&b'\n') {
            // The break of the tail indexed without one.
            at = 1;
        }
        for nl in memchr::memchr_iter(b'\n', &bytes[at..])
            .map(|i| i + at)
            .collect::<Vec<_>>()
        {
            let piece = &bytes[at..nl];
            if self.pending.is_empty() {
                self.index_line(piece, base + at as u64);
            } else {
                let mut whole = std::mem::take(&mut self.pending);
                whole.extend_from_slice(piece);
                self.index_line(&whole, self.pending_start);
            }
            at = nl + 1;
        }
        if at < bytes.len() {
            if self.pending.is_empty() {
                self.pending_start = base + at as u64;
            }
            self.pending.extend_from_slice(&bytes[at..]);
        }
    }

    /// At the end of what a file holds now: a last line without its break is indexed
    /// when the file is complete (`complete`), or when it parses as a whole JSON line
    /// (a writer writes a line and its break together, so such a tail is whole).
    fn finish_tail(&mut self, complete: bool) {
        if self.pending.is_empty() {
            return;
        }
        let whole = serde_json::from_slice::<serde::de::IgnoredAny>(&self.pending).is_ok();
        if complete || whole {
            let tail = std::mem::take(&mut self.pending);
            self.index_line(&tail, self.pending_start);
            self.unterminated = !complete;
        }
    }

    fn index_line(&mut self, bytes: &[u8], offset: u64) {
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        let n = self.lines.len() as u64 + 1;
        let mut rec = LineRec {
            offset,
            t: NO_TIME,
            len: u32::try_from(bytes.len()).unwrap_or(u32::MAX),
            label: 0,
            call: 0,
            file: u16::try_from(self.file_at).unwrap_or(u16::MAX),
            class: Class::Bad,
            dir: None,
        };
        if let Ok(line) = reel_trace::line::parse_line(bytes) {
            rec.class = Class::Line(line.class());
            rec.t = line.t().and_then(Timestamp::parse).map_or(NO_TIME, |t| t.0);
            match &line {
                Line::Meta(_) => {
                    if self.segment.messages > 0 {
                        let old = std::mem::take(&mut self.segment);
                        self.done.extend(old.builder.finish().0);
                    }
                    if self.meta.is_none() {
                        self.meta = serde_json::from_slice(bytes).ok();
                    }
                    rec.label = self.strings.intern("meta");
                }
                Line::Message(v) => {
                    rec.dir = v.dir();
                    if let (Some(raw), Some(dir)) = (v.raw_str(), v.dir()) {
                        self.message(&mut rec, v.session.as_deref(), dir, raw, n);
                    }
                }
                Line::Event(v) | Line::Other(v) => {
                    rec.dir = v.dir();
                    let label = v.kind.as_deref().or(v.ty.as_deref()).unwrap_or("");
                    if !label.is_empty() {
                        rec.label = self.strings.intern(label);
                    }
                }
                Line::Turn(turn) => {
                    rec.label = self.strings.intern(turn.role.as_deref().unwrap_or("turn"));
                }
                Line::End(_) => {
                    self.ended = true;
                    rec.label = self.strings.intern("end");
                }
            }
        }
        *self.counts.entry((rec.class, rec.label)).or_default() += 1;
        self.lines.push(rec);
    }

    fn message(&mut self, rec: &mut LineRec, session: Option<&str>, dir: Dir, raw: &str, n: u64) {
        let calls_before = self.call_count();
        self.segment.messages += 1;
        let pushed: Pushed = match Envelope::parse(raw) {
            None => self
                .segment
                .builder
                .push_facts(session, dir, Err(Envelope::kind_of(raw)), n),
            Some(env) => {
                if let Some(m) = env.method.as_deref() {
                    rec.label = self.strings.intern(m);
                } else if env.kind() == RpcKind::Error {
                    rec.label = self.strings.intern("error");
                } else if env.kind() == RpcKind::Response {
                    rec.label = self.strings.intern("result");
                }
                let subject = match (env.kind(), env.method.as_deref(), env.params) {
                    (RpcKind::Request, Some(m), Some(p)) => serde_json::from_str(p.get())
                        .ok()
                        .and_then(|p: serde_json::Value| {
                            reel_mcp::http::mcp_name(m, &p).map(|s| self.strings.intern(s))
                        })
                        .unwrap_or(0),
                    _ => 0,
                };
                let facts = Facts {
                    request_progress_token: request_progress_token(&env),
                    notification_progress_token: notification_progress_token(&env),
                    cancelled_request: cancelled_request_id(&env),
                    env,
                };
                let pushed = self.segment.builder.push_facts(session, dir, Ok(&facts), n);
                if pushed.opened.is_some() {
                    self.subjects.push(subject);
                }
                pushed
            }
        };
        let base = self.done.len();
        let call = pushed
            .opened
            .or(pushed.closed)
            .or(pushed.attached_to)
            .map(|i| base + i);
        if let Some(c) = call {
            rec.call = u32::try_from(c + 1).unwrap_or(0);
        }
        debug_assert!(self.call_count() >= calls_before);
    }
}

/// The text of line `rec` of `index` (at most `max` bytes of it; the flag says whether
/// it was cut).
pub fn read_line(path: &Path, rec: &LineRec, max: usize) -> io::Result<(Vec<u8>, bool)> {
    use std::os::unix::fs::FileExt;
    let f = File::open(path)?;
    let len = (rec.len as usize).min(max);
    let mut buf = vec![0u8; len];
    f.read_exact_at(&mut buf, rec.offset)?;
    Ok((buf, len < rec.len as usize))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const META: &str =
        r#"{"type":"meta","v":1,"startedAt":"2026-01-01T00:00:00.000Z","source":"t"}"#;

    fn line(t: &str, dir: &str, raw: &str) -> String {
        format!(r#"{{"t":"2026-01-01T00:00:{t}Z","dir":"{dir}","raw":{raw}}}"#)
    }

    fn index_of(text: &str) -> TraceIndex {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, text).unwrap();
        let mut ix = TraceIndex::new(vec![p]);
        ix.read_more(usize::MAX).unwrap();
        ix
    }

    #[test]
    fn concurrent_calls_pair_by_id_not_by_order() {
        let text = [
            META.to_owned(),
            line(
                "01.000",
                "in",
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}"#,
            ),
            line(
                "01.100",
                "in",
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fast"}}"#,
            ),
            line("01.200", "out", r#"{"jsonrpc":"2.0","id":2,"result":{}}"#),
            line(
                "03.000",
                "out",
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}"#,
            ),
        ]
        .join("\n")
            + "\n";
        let ix = index_of(&text);
        assert_eq!(ix.lines.len(), 5);
        assert_eq!(ix.call_count(), 2);
        let slow = ix.call(0).unwrap();
        assert_eq!(slow.request.line, 2);
        assert_eq!(slow.response.map(|r| r.line), Some(5));
        assert_eq!(ix.subject(0), Some("slow"));
        let fast = ix.call(1).unwrap();
        assert_eq!(fast.response.map(|r| r.line), Some(4));
        assert_eq!(ix.line(4).unwrap().call, 2);
        assert_eq!(
            ix.line(2).unwrap().t,
            ix.line(1).map_or(0, |_| 1_767_225_601_000)
        );
    }

    #[test]
    fn lines_written_later_are_indexed_by_the_next_read_and_a_torn_tail_waits() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let mut f = File::create(&p).unwrap();
        writeln!(f, "{META}").unwrap();
        write!(
            f,
            "{}",
            &line(
                "01.000",
                "in",
                r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#
            )[..20]
        )
        .unwrap();
        f.flush().unwrap();
        let mut ix = TraceIndex::new(vec![p.clone()]);
        ix.read_more(usize::MAX).unwrap();
        assert_eq!(ix.lines.len(), 1, "the torn line is not a line yet");
        let full = line(
            "01.000",
            "in",
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        );
        writeln!(f, "{}", &full[20..]).unwrap();
        writeln!(f, "not json").unwrap();
        ix.read_more(usize::MAX).unwrap();
        assert_eq!(ix.lines.len(), 3);
        let rec = *ix.line(2).unwrap();
        assert_eq!(ix.strings.get(rec.label), Some("ping"));
        let (text, cut) = read_line(&p, &rec, usize::MAX).unwrap();
        assert_eq!(String::from_utf8(text).unwrap(), full);
        assert!(!cut);
        assert_eq!(ix.line(3).unwrap().class, Class::Bad);
    }

    #[test]
    fn a_whole_last_line_without_its_break_is_shown_and_its_break_later_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let mut f = File::create(&p).unwrap();
        write!(f, "{META}").unwrap();
        f.flush().unwrap();
        let mut ix = TraceIndex::new(vec![p.clone()]);
        ix.read_more(usize::MAX).unwrap();
        assert_eq!(ix.lines.len(), 1);
        writeln!(f).unwrap();
        writeln!(
            f,
            r#"{{"type":"end","t":"2026-01-01T00:00:02Z","reason":"done"}}"#
        )
        .unwrap();
        ix.read_more(usize::MAX).unwrap();
        assert_eq!(ix.lines.len(), 2);
        assert!(ix.ended);
        let rec = *ix.line(2).unwrap();
        let (text, _) = read_line(&p, &rec, usize::MAX).unwrap();
        assert!(
            text.starts_with(b"{\"type\":\"end\""),
            "{}",
            String::from_utf8_lossy(&text)
        );
    }

    #[test]
    fn ids_do_not_pair_across_appended_sessions() {
        let text = [
            META.to_owned(),
            line(
                "01.000",
                "in",
                r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            ),
            META.to_owned(),
            line("02.000", "out", r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
        ]
        .join("\n");
        let ix = index_of(&text);
        assert_eq!(ix.call_count(), 1);
        assert_eq!(ix.call(0).unwrap().response, None);
    }
}
