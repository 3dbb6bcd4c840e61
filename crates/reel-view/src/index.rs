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
//! command: by session, direction and id, correct under concurrency), kept as a
//! fixed-size [`Call`] each. Like `reel diff`, the index starts a fresh builder whenever
//! the builder is settled ([`ExchangeBuilder::settled`]) and at each `meta` line (ids
//! never pair across sessions appended to one file), so the builder's own records do
//! not pile up. Limit: a trace that never has a moment without an open exchange keeps
//! its builder (about 250 bytes per exchange) for the whole read.
//!
//! Lines and calls are stored in chunks ([`Chunked`]), so a growing index never copies
//! itself into a buffer twice its size.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use reel_mcp::exchange::{ExchangeBuilder, Facts, Outcome, Pushed};
use reel_mcp::jsonrpc::{Envelope, RpcKind};
use reel_trace::follow::{Follower, LineAt};
use reel_trace::{Dir, Line, LineClass, Timestamp};

/// Items per chunk of a [`Chunked`] store.
const CHUNK_ITEMS: usize = 1 << 16;

/// A vector that grows by whole chunks: no reallocation copies what it holds, so its
/// peak size is its size.
#[derive(Debug)]
pub struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Chunked<T> {
    /// Appends `v`.
    pub fn push(&mut self, v: T) {
        if self.len % CHUNK_ITEMS == 0 {
            self.chunks.push(Vec::with_capacity(CHUNK_ITEMS));
        }
        if let Some(last) = self.chunks.last_mut() {
            last.push(v);
        }
        self.len += 1;
    }

    /// Item `i`.
    pub fn get(&self, i: usize) -> Option<&T> {
        self.chunks.get(i / CHUNK_ITEMS)?.get(i % CHUNK_ITEMS)
    }

    fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.chunks
            .get_mut(i / CHUNK_ITEMS)?
            .get_mut(i % CHUNK_ITEMS)
    }

    /// How many it holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The items from `start` on, in order.
    pub fn iter_from(&self, start: usize) -> impl Iterator<Item = &T> {
        self.chunks
            .iter()
            .skip(start / CHUNK_ITEMS)
            .flatten()
            .skip(start % CHUNK_ITEMS)
    }

    /// Bytes its items take (a chunk's room not yet written is not counted: the
    /// system maps its pages when they are first written).
    pub fn bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }
}

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

/// One request and how it ended, 40 bytes; what came in between is found through the
/// lines ([`LineRec::call`]) and the calls ([`Call::parent`]) that point at it.
#[derive(Clone, Copy, Debug)]
pub struct Call {
    /// The request's line.
    pub request: u64,
    /// The response's line; 0: none (yet).
    pub response: u64,
    /// `error.code` of an error response.
    pub error_code: Option<i32>,
    /// The method, interned.
    pub method: u32,
    /// The tool, resource or prompt it names, interned; 0: none.
    pub subject: u32,
    /// The session, interned; 0: none.
    pub session: u32,
    /// 1 + the call this one was sent in (a server→client request during a client's
    /// call); 0: none.
    pub parent: u32,
    /// Direction of the request.
    pub dir: Dir,
    /// It ended in a JSON-RPC error.
    pub error: bool,
    /// A `notifications/cancelled` named it.
    pub cancelled: bool,
}

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
pub struct TraceIndex {
    /// The lines, in order.
    pub lines: Chunked<LineRec>,
    /// The interned labels, tool names and sessions.
    pub strings: Interner,
    /// The calls, in the order of their requests.
    pub calls: Chunked<Call>,
    /// The exchanges forming now; its exchange `i` is call `base + i`.
    builder: ExchangeBuilder,
    base: usize,
    /// Lines per (class, label): the counts the events and tools filters show.
    pub counts: HashMap<(Class, u32), u64>,
    /// The first `meta` line, parsed.
    pub meta: Option<serde_json::Value>,
    /// True once an `end` line was read.
    pub ended: bool,
    /// The reader of the run's files, as they grow.
    follow: Follower,
}

impl std::fmt::Debug for TraceIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceIndex")
            .field("files", &self.follow.files())
            .field("lines", &self.lines.len())
            .field("calls", &self.calls.len())
            .field("ended", &self.ended)
            .finish()
    }
}

impl TraceIndex {
    /// An empty index of the run whose files are `files` (rotated companions first).
    pub fn new(files: Vec<PathBuf>) -> TraceIndex {
        TraceIndex {
            follow: Follower::new(files),
            lines: Chunked::default(),
            strings: Interner::default(),
            calls: Chunked::default(),
            builder: ExchangeBuilder::new(),
            base: 0,
            counts: HashMap::new(),
            meta: None,
            ended: false,
        }
    }

    /// The run's files.
    pub fn files(&self) -> &[PathBuf] {
        self.follow.files()
    }

    /// Bytes read so far, over all files.
    pub fn bytes_read(&self) -> u64 {
        self.follow.bytes_read()
    }

    /// The file `rec` is in.
    pub fn file_of(&self, rec: &LineRec) -> &Path {
        &self.files()[usize::from(rec.file)]
    }

    /// Calls so far.
    pub fn call_count(&self) -> usize {
        self.calls.len()
    }

    /// Call `i`.
    pub fn call(&self, i: usize) -> Option<&Call> {
        self.calls.get(i)
    }

    /// The string `id` names (0: `None`).
    pub fn name(&self, id: u32) -> Option<&str> {
        self.strings.get(id)
    }

    /// Bytes the index takes in memory, about: lines, calls, the strings, and the
    /// exchanges still forming.
    pub fn bytes(&self) -> usize {
        let strings: usize = self.strings.names.iter().map(|n| 2 * n.len() + 64).sum();
        self.lines.bytes()
            + self.calls.bytes()
            + strings
            + self.builder.exchanges().len() * 250
            + self.counts.len() * 32
            + self.follow.held()
    }

    /// The record of 1-based line `n`.
    pub fn line(&self, n: u64) -> Option<&LineRec> {
        let i = usize::try_from(n.checked_sub(1)?).ok()?;
        self.lines.get(i)
    }

    /// Reads what was appended since the last call (everything, the first time), up to
    /// `budget` bytes; returns the bytes read (0: nothing new).
    pub fn read_more(&mut self, budget: usize) -> io::Result<u64> {
        let mut follow = std::mem::take(&mut self.follow);
        let read = follow.read_more(budget, &mut |bytes, at| self.index_line(bytes, at));
        self.follow = follow;
        read
    }

    fn index_line(&mut self, bytes: &[u8], at: LineAt) {
        let n = self.lines.len() as u64 + 1;
        let mut rec = LineRec {
            offset: at.offset,
            t: NO_TIME,
            len: u32::try_from(bytes.len()).unwrap_or(u32::MAX),
            label: 0,
            call: 0,
            file: u16::try_from(at.file).unwrap_or(u16::MAX),
            class: Class::Bad,
            dir: None,
        };
        if let Ok(line) = reel_trace::line::parse_line(bytes) {
            rec.class = Class::Line(line.class());
            rec.t = line.t().and_then(Timestamp::parse).map_or(NO_TIME, |t| t.0);
            match &line {
                Line::Meta(_) => {
                    // A new session: nothing of the one before pairs with it.
                    self.fresh_builder();
                    if self.meta.is_none() {
                        self.meta = serde_json::from_slice(bytes).ok();
                    }
                    rec.label = self.strings.intern("meta");
                }
                Line::Message(v) => {
                    rec.dir = v.dir();
                    if let (Some(raw), Some(dir)) = (v.raw_str(), v.dir()) {
                        let req = v.http_req();
                        self.message(&mut rec, v.session.as_deref(), dir, raw, n, req);
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

    fn fresh_builder(&mut self) {
        self.builder = ExchangeBuilder::new();
        self.base = self.calls.len();
    }

    /// Offers message line `n` (`req`: the HTTP request it came on, 0 when none).
    fn message(
        &mut self,
        rec: &mut LineRec,
        session: Option<&str>,
        dir: Dir,
        raw: &str,
        n: u64,
        req: u64,
    ) {
        let Some(env) = Envelope::parse(raw) else {
            self.builder
                .push_facts(session, dir, Err(Envelope::kind_of(raw)), n);
            return;
        };
        let kind = env.kind();
        if let Some(m) = env.method.as_deref() {
            rec.label = self.strings.intern(m);
        } else if kind == RpcKind::Error {
            rec.label = self.strings.intern("error");
        } else if kind == RpcKind::Response {
            rec.label = self.strings.intern("result");
        }
        let subject = match (kind, env.method.as_deref(), env.params) {
            // Only a method that names a tool, resource or prompt has its params read.
            (RpcKind::Request, Some(m), Some(p)) if reel_mcp::http::names_subject(m) => {
                serde_json::from_str(p.get())
                    .ok()
                    .and_then(|p: serde_json::Value| {
                        reel_mcp::http::mcp_name(m, &p).map(|s| self.strings.intern(s))
                    })
                    .unwrap_or(0)
            }
            _ => 0,
        };
        let facts = Facts::of(env);
        let pushed: Pushed = self
            .builder
            .push_facts_via(session, dir, Ok(&facts), n, req);
        let base = self.base;
        let call_of = |i: usize| u32::try_from(base + i + 1).unwrap_or(0);
        if let Some(i) = pushed.opened {
            let session = session.map_or(0, |s| self.strings.intern(s));
            self.calls.push(Call {
                request: n,
                response: 0,
                error_code: None,
                method: rec.label,
                subject,
                session,
                parent: pushed.attached_to.map_or(0, call_of),
                dir,
                error: false,
                cancelled: false,
            });
            rec.call = call_of(i);
        } else if let Some(i) = pushed.closed {
            let outcome = self.builder.exchanges().get(i).map(|x| x.outcome.clone());
            if let Some(c) = self.calls.get_mut(base + i) {
                c.response = n;
                if let Some(Outcome::Error(code)) = outcome {
                    c.error = true;
                    c.error_code = code.and_then(|c| i32::try_from(c).ok());
                }
            }
            rec.call = call_of(i);
        } else if let Some(i) = pushed.attached_to {
            let cancelled = self.builder.exchanges().get(i).is_some_and(|x| x.cancelled);
            if let Some(c) = self.calls.get_mut(base + i) {
                c.cancelled |= cancelled;
            }
            rec.call = call_of(i);
        }
        if self.builder.settled() {
            self.fresh_builder();
        }
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
    use reel_mcp::exchange::SETTLE_AFTER;
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
        assert_eq!((slow.request, slow.response), (2, 5));
        assert!(slow.error);
        assert_eq!(slow.error_code, Some(-1));
        assert_eq!(ix.name(slow.subject), Some("slow"));
        let fast = ix.call(1).unwrap();
        assert_eq!((fast.request, fast.response), (3, 4));
        assert!(!fast.error);
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
    fn calls_keep_pairing_across_fresh_builders_and_know_their_nested_requests() {
        let mut lines = vec![META.to_owned()];
        // More sequential calls than one builder keeps, then a call during which the
        // server asks the client something.
        for id in 1..=(SETTLE_AFTER as u64 + 10) {
            lines.push(line(
                "01.000",
                "in",
                &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#),
            ));
            lines.push(line(
                "01.001",
                "out",
                &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
            ));
        }
        let first = lines.len() as u64 + 1;
        lines.push(line(
            "02.000",
            "in",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roots"}}"#,
        ));
        lines.push(line(
            "02.001",
            "out",
            r#"{"jsonrpc":"2.0","id":1,"method":"roots/list"}"#,
        ));
        lines.push(line(
            "02.002",
            "in",
            r#"{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}"#,
        ));
        lines.push(line(
            "02.003",
            "out",
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        ));
        let ix = index_of(&(lines.join("\n") + "\n"));
        let n = SETTLE_AFTER + 10;
        assert_eq!(ix.call_count(), n + 2);
        for i in 0..n {
            let c = ix.call(i).unwrap();
            assert_eq!(
                (c.request, c.response),
                (2 + 2 * i as u64, 3 + 2 * i as u64),
                "call {i}"
            );
        }
        let outer = *ix.call(n).unwrap();
        let inner = *ix.call(n + 1).unwrap();
        assert_eq!((outer.request, outer.response), (first, first + 3));
        assert_eq!((inner.request, inner.response), (first + 1, first + 2));
        assert_eq!(inner.dir, Dir::Out);
        assert_eq!(inner.parent as usize, n + 1, "sent during the tools/call");
    }

    #[test]
    fn an_http_refusal_without_an_id_answers_the_probe_its_http_request_carried() {
        let text = [
            META.to_owned(),
            r#"{"t":"2026-01-01T00:00:01.000Z","dir":"in","session":"reel:conn-1","http":{"req":1},"raw":{"jsonrpc":"2.0","id":1,"method":"server/discover"}}"#.to_owned(),
            r#"{"t":"2026-01-01T00:00:01.004Z","dir":"out","session":"reel:conn-1","http":{"req":1,"status":400},"raw":{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request"}}}"#.to_owned(),
        ]
        .join("\n")
            + "\n";
        let ix = index_of(&text);
        let c = ix.call(0).unwrap();
        assert_eq!((c.request, c.response), (2, 3));
        assert!(c.error);
        assert_eq!(c.error_code, Some(-32000));
        assert_eq!(ix.line(3).unwrap().call, 1);
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
        assert_eq!(ix.call(0).unwrap().response, 0);
    }
}
