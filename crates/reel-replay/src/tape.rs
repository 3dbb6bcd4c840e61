//! The tape: where each recorded message is in the trace file, and what it is.
//!
//! The index is built once, while the server already runs: [`index`] streams the trace
//! (and its rotated companions) line by line and hands batches of [`Update`]s to a sink as
//! exchanges form, so the handshake at the top of a 100 MB trace is answered before the
//! rest is read. It keeps *positions* ([`LineLoc`]: file, byte offset, length) and small
//! keys (128-bit [`MatchKey`]s), never the messages: [`TapeFiles::read`] re-reads a line
//! with a positioned read when an answer needs it. Memory is therefore proportional to
//! the number of exchanges, not to the size of the tape.
//!
//! Sessions make tapes ([`Selection`]): a session is a `session` member within a
//! `meta`-delimited segment, numbered in order of first appearance; the lines of a
//! client connection without an MCP session (`reel:conn-N`, written by `reel rec --url`
//! for 2026-07-28 traffic or a refused probe) are session-less traffic, pooled into one
//! tape, never numbered. Over stdio one tape is served (`--session N`); over HTTP every
//! session is its own tape ([`index_tapes`]).
//!
//! Invariants:
//! - Updates come in trace order; per tape, an exchange's `Opened` precedes its
//!   `Attached`, `Closed` and `Cancelled` updates, and exchange numbers count up from 0
//!   without gaps.
//! - A line that does not parse is skipped with a warning; a torn last line (no line
//!   break, not JSON: the recorder was killed mid-write) is expected and reported as such.

mod indexer;
pub(crate) mod matcher;
mod scan;

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use reel_mcp::normalize::{MatchKey, Pointer};
use reel_net::sse::Eol;
use reel_trace::line::Meta;
use reel_trace::{Dir, OpenError, TraceReader};
use serde_json::value::RawValue;

use self::indexer::Indexer;

/// Where a line is in the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineLoc {
    /// Index of the file in [`TapeFiles`] (rotated companions first).
    pub file: u32,
    /// Length in bytes, without the line break.
    pub len: u32,
    /// Byte offset of the line's first byte.
    pub offset: u64,
    /// 1-based line number in its file.
    pub line: u64,
}

/// Where the `raw` of a response line and the `id` inside it are, so that an answer is
/// the recorded bytes around a new id: read the span, copy, no parsing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdSplice {
    /// Byte offset of `raw` in its line.
    pub raw_start: u32,
    /// Length of `raw`.
    pub raw_len: u32,
    /// Byte offset of the `id` value in `raw`.
    pub id_start: u32,
    /// Length of the `id` value.
    pub id_len: u32,
    /// The response is an `error`.
    pub error: bool,
}

/// The trace's files, open for positioned reads.
pub struct TapeFiles {
    paths: Vec<PathBuf>,
    files: Vec<File>,
}

impl TapeFiles {
    /// Opens the trace at `path` with its rotated companions (the same files, in the same
    /// order, as the reader [`index`] uses).
    pub fn open(path: &Path) -> Result<TapeFiles, OpenError> {
        let paths = reel_trace::reader::trace_files(path);
        let mut files = Vec::with_capacity(paths.len());
        for p in &paths {
            // Before opening: opening a FIFO waits for a writer. A pipe would be read
            // by each of the several readers of the tape, each getting a part of it.
            match std::fs::metadata(p) {
                Ok(m) if m.is_dir() => return Err(OpenError::IsDirectory { path: p.clone() }),
                Ok(m) if !m.is_file() => return Err(OpenError::NotAFile { path: p.clone() }),
                _ => {}
            }
            let f = File::open(p).map_err(|e| match e.kind() {
                io::ErrorKind::NotFound => OpenError::NotFound { path: p.clone() },
                _ => OpenError::Io {
                    path: p.clone(),
                    source: e,
                },
            })?;
            if f.metadata().is_ok_and(|m| m.is_dir()) {
                return Err(OpenError::IsDirectory { path: p.clone() });
            }
            files.push(f);
        }
        if let (Some(f), Some(p)) = (files.first(), paths.first()) {
            looks_like_a_trace(f, p)?;
        }
        Ok(TapeFiles { paths, files })
    }

    /// Reads `len` bytes at `start` of the line at `loc` into `buf`.
    pub fn read_span(
        &self,
        loc: LineLoc,
        start: u32,
        len: u32,
        buf: &mut Vec<u8>,
    ) -> io::Result<()> {
        if u64::from(start) + u64::from(len) > u64::from(loc.len) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "span outside the line",
            ));
        }
        let f = self
            .files
            .get(loc.file as usize)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no such tape file"))?;
        buf.clear();
        buf.resize(len as usize, 0);
        read_exact_at(f, buf, loc.offset + u64::from(start))
    }

    /// Reads the line at `loc` into `buf` (replacing its content).
    pub fn read(&self, loc: LineLoc, buf: &mut Vec<u8>) -> io::Result<()> {
        let f = self
            .files
            .get(loc.file as usize)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no such tape file"))?;
        buf.clear();
        buf.resize(loc.len as usize, 0);
        read_exact_at(f, buf, loc.offset)
    }

    /// `path:line` of a location, for messages.
    pub fn location(&self, loc: LineLoc) -> String {
        match self.paths.get(loc.file as usize) {
            Some(p) => format!("{}:{}", p.display(), loc.line),
            None => format!("?:{}", loc.line),
        }
    }
}

#[cfg(unix)]
fn read_exact_at(f: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(f, buf, offset)
}

/// Refuses a file that cannot be a trace before anything is served from it: an empty
/// one, or one whose first line does not start a JSON object (a README, a binary, the
/// wrong argument), which would otherwise be served as an empty tape.
fn looks_like_a_trace(f: &File, path: &Path) -> Result<(), OpenError> {
    let mut head = [0u8; 4096];
    let mut len = 0;
    while len < head.len() {
        match read_at(f, &mut head[len..], len as u64) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(source) => {
                return Err(OpenError::Io {
                    path: path.to_owned(),
                    source,
                });
            }
        }
    }
    let head = &head[..len];
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let problem = match head.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => return Ok(()),
        // Whitespace only, so far: a meta line comes after a long run of blank lines?
        // Leave that to the reader's warnings.
        None if len == 4096 => return Ok(()),
        None => "the file is empty",
        Some(_) => "the first line is not a JSON object",
    };
    Err(OpenError::NotATrace {
        path: path.to_owned(),
        problem,
    })
}

#[cfg(unix)]
fn read_at(f: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(f, buf, offset)
}

#[cfg(windows)]
fn read_at(f: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(f, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(f: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match f.seek_read(buf, offset)? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

/// The HTTP facts of a recorded message that serving it over HTTP needs: how the
/// exchange that carried it was answered. All zero for a line recorded over stdio.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Via {
    /// `http.req`: the recording's number of the HTTP exchange (0: none recorded).
    pub req: u32,
    /// The HTTP status of the response that carried it (0: not recorded).
    pub status: u16,
    /// It came as an event of an event stream (`text/event-stream`).
    pub sse: bool,
    /// The line ending of that stream's events.
    pub eol: Eol,
    /// That response issued an `Mcp-Session-Id`.
    pub session_id: bool,
    /// Not a JSON-RPC message: a `reel.http` record of an error status whose body was
    /// something else; its `raw` or `text` is the body to send.
    pub status_only: bool,
    /// A response that came on another stream than its request's (the server closed
    /// the request's event stream mid-call and the client resumed on GET).
    pub other_stream: bool,
}

/// What the recording shows of a session's HTTP exchanges that carried no message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HttpFact {
    /// A GET on the MCP endpoint was answered with this status (200: a server stream,
    /// 405: none).
    Get {
        /// The status.
        status: u16,
    },
    /// A DELETE (the client ended its session) was answered with this status.
    Delete {
        /// The status.
        status: u16,
    },
    /// The session is legacy HTTP+SSE: the server's first event named this endpoint
    /// path (without its query) for the client's POSTs.
    Endpoint {
        /// The path, e.g. `/message`.
        path: String,
    },
}

/// A recorded message that is not a response: a notification or a request of the other
/// side, re-sent at its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Item {
    /// Where it is.
    pub at: LineLoc,
    /// Its position among the session's messages.
    pub seq: u64,
    /// Recorded time, milliseconds since the epoch (0 when the line has none).
    pub t: i64,
    /// What it is.
    pub kind: ItemKind,
    /// How it travelled (HTTP recordings).
    pub via: Via,
}

/// What an [`Item`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemKind {
    /// A server notification; `progress` when it is `notifications/progress`.
    Notification {
        /// True for `notifications/progress` (its token is rewritten).
        progress: bool,
    },
    /// A server→client request, itself exchange `exchange`.
    Request {
        /// Its exchange number.
        exchange: u32,
    },
    /// An event of the request's event stream that carried no message (a priming
    /// event: an `id` and no data, a lone `retry`), a `reel.sse` record.
    Event,
}

/// The event a `reel.sse` record line describes (`None` when the line is not one): its
/// `text` is the event's data (`""` for a `data:` with nothing after it, as the priming
/// event MCP servers send is written); a record without `text` is an event without data.
pub fn recorded_sse_event(line: &[u8]) -> Option<reel_net::sse::Event> {
    match reel_trace::line::parse_line(line).ok()? {
        reel_trace::line::Line::Event(v) => scan::HttpMember::from_raw(v.http)
            .and_then(|h| h.sse)
            .map(|s| reel_net::sse::Event {
                data: v.text.map(|t| t.into_owned()),
                event: s.event.map(|e| e.into_owned()),
                id: s.id.map(|i| i.into_owned()),
                retry: s.retry,
                ..reel_net::sse::Event::default()
            }),
        _ => None,
    }
}

/// A request as indexed.
#[derive(Clone, Debug, PartialEq)]
pub struct Opened {
    /// Exchange number (0, 1, 2… in trace order).
    pub exchange: u32,
    /// Direction of the request: `In` for the client's, `Out` for the server's.
    pub dir: Dir,
    /// The method.
    pub method: String,
    /// Match key of the normalised request (client requests only).
    pub key: Option<MatchKey>,
    /// Match key without `params.inputResponses` (2026-07-28 retries only), so that a
    /// retry whose answers differ is found as client drift instead of a miss.
    pub alt_key: Option<MatchKey>,
    /// Where the request is.
    pub at: LineLoc,
    /// Its position among the session's messages.
    pub seq: u64,
    /// Recorded time (ms).
    pub t: i64,
    /// The client exchange this server request came within.
    pub parent: Option<u32>,
}

/// How the index ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexEnd {
    /// Lines read in all files.
    pub lines: u64,
    /// Message lines of the selected session.
    pub messages: u64,
    /// Sessions found.
    pub sessions: usize,
    /// True when the selected session was found.
    pub found: bool,
    /// True when an `end` line closed the selected session's segment.
    pub ended: bool,
    /// True when the last line was torn (cut mid-write).
    pub torn: bool,
    /// A read error that stopped the index early.
    pub error: Option<String>,
}

/// What the index learnt, in trace order.
#[derive(Clone, Debug, PartialEq)]
pub enum Update {
    /// The meta line of the selected session's segment (sent before its first message;
    /// a default one when the segment has none).
    Meta(Box<Meta>),
    /// A request.
    Opened(Opened),
    /// The response of an exchange.
    Closed {
        /// Exchange number.
        exchange: u32,
        /// Where the response is.
        at: LineLoc,
        /// Its position among the session's messages.
        seq: u64,
        /// Recorded time (ms).
        t: i64,
        /// Where its raw and id are, when the line was read the common way.
        splice: Option<IdSplice>,
        /// How it travelled (HTTP recordings).
        via: Via,
    },
    /// A server message that came while a client exchange was open.
    Attached {
        /// The client exchange.
        exchange: u32,
        /// The message.
        item: Item,
    },
    /// A `notifications/cancelled` from the client named this exchange.
    Cancelled {
        /// Exchange number.
        exchange: u32,
    },
    /// A client notification (e.g. `notifications/initialized`), for its position.
    ClientNotification {
        /// Its position among the session's messages.
        seq: u64,
        /// Match key of the normalised notification.
        key: MatchKey,
    },
    /// A server message outside any client exchange (list_changed, logging, a server
    /// request on a timer), re-sent once the client has come as far as `anchor`.
    Unsolicited {
        /// Position of the last client message before it (`None`: before any).
        anchor: Option<u64>,
        /// The message.
        item: Item,
    },
    /// A fact of the session's HTTP exchanges.
    Http(HttpFact),
    /// A line that could not be used.
    Warning(String),
    /// The whole tape is indexed.
    Done(IndexEnd),
}

/// Which sessions make which tapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    /// One tape (tape 0): the N-th session (1-based) together with every session-less
    /// line (`reel:conn-N`), so that a client which probes `server/discover` before it
    /// opens its session finds both answers, as it did live. A trace without sessions
    /// (stdio) has one session.
    One(usize),
    /// Every session its own tape: tape 0 pools the session-less lines, tapes 1, 2, …
    /// are the sessions in order of first appearance (`reel play --listen`).
    All,
}

/// What to index.
#[derive(Clone, Debug)]
pub struct IndexSpec {
    /// Which sessions.
    pub selection: Selection,
    /// The user's `--ignore` pointers (the recorded side is normalised like the live one).
    pub ignore: Vec<Pointer>,
}

impl IndexSpec {
    /// The N-th session (1-based) for one tape, see [`Selection::One`].
    pub fn session(n: usize, ignore: Vec<Pointer>) -> IndexSpec {
        IndexSpec {
            selection: Selection::One(n),
            ignore,
        }
    }
}

/// The tag of updates about the whole trace rather than one tape ([`index_tapes`]: the
/// warnings and the last [`Update::Done`]).
pub const WHOLE: u32 = u32::MAX;

/// Updates are handed over in batches of at most this many…
const BATCH_UPDATES: usize = 256;
/// …or as soon as this many bytes were read since the last batch, so the first
/// exchanges reach the server within a fraction of a millisecond…
const BATCH_BYTES: u64 = 64 * 1024;
/// …and each batch may be twice the previous one, up to these, so that a long tape is
/// handed over in a few hundred batches rather than one per 64 KiB (every hand-over
/// wakes the server).
const BATCH_UPDATES_MAX: usize = 4096;
const BATCH_BYTES_MAX: u64 = 1024 * 1024;

/// Indexes one tape of the trace at `path` ([`Selection::One`]), calling `sink` with
/// batches of updates; stops early when `sink` returns false (the server is gone). The
/// last batch ends with [`Update::Done`].
pub fn index(path: &Path, spec: &IndexSpec, mut sink: impl FnMut(Vec<Update>) -> bool) {
    let spec = IndexSpec {
        selection: match spec.selection {
            Selection::All => Selection::One(1),
            one => one,
        },
        ignore: spec.ignore.clone(),
    };
    index_tapes(path, &spec, |batch| {
        sink(batch.into_iter().map(|(_, u)| u).collect())
    });
}

/// Indexes the trace at `path` into tapes, calling `sink` with batches of updates, each
/// tagged with its tape number (or [`WHOLE`]); stops early when `sink` returns false.
/// With [`Selection::All`] every tape ends with its own [`Update::Done`] and the last
/// update is a `Done` tagged [`WHOLE`].
pub fn index_tapes(
    path: &Path,
    spec: &IndexSpec,
    mut sink: impl FnMut(Vec<(u32, Update)>) -> bool,
) {
    let mut ix = Indexer::new(spec);
    let mut reader = match TraceReader::open(path) {
        Ok(r) => r,
        Err(e) => {
            ix.end.error = Some(e.to_string());
            sink(ix.finish());
            return;
        }
    };
    let boms: Vec<bool> = reader.files().iter().map(|p| starts_with_bom(p)).collect();
    let mut file_no: u32 = 0;
    let mut current: Option<PathBuf> = None;
    let mut offset: u64 = 0;
    let mut since_flush: u64 = 0;
    let (mut batch_updates, mut batch_bytes) = (BATCH_UPDATES, BATCH_BYTES);
    while let Some(next) = reader.next_line() {
        let tl = match next {
            Ok(tl) => tl,
            Err(e) => {
                ix.end.error = Some(e.to_string());
                break;
            }
        };
        if current.as_deref() != Some(tl.path) {
            if current.is_some() {
                file_no += 1;
            }
            current = Some(tl.path.to_owned());
            offset = if boms.get(file_no as usize).copied().unwrap_or(false) {
                3
            } else {
                0
            };
        }
        let raw = tl.raw;
        let on_disk = raw.bytes.len() as u64 + u64::from(raw.crlf) + u64::from(raw.terminated);
        let loc = LineLoc {
            file: file_no,
            len: raw.bytes.len() as u32,
            offset,
            line: raw.number,
        };
        offset += on_disk;
        since_flush += on_disk;
        ix.end.lines += 1;
        ix.line(raw.bytes, raw.terminated, loc, &|| tl.location());
        if ix.updates.len() >= batch_updates
            || (since_flush >= batch_bytes && !ix.updates.is_empty())
        {
            since_flush = 0;
            batch_updates = (batch_updates * 2).min(BATCH_UPDATES_MAX);
            batch_bytes = (batch_bytes * 2).min(BATCH_BYTES_MAX);
            if !sink(std::mem::take(&mut ix.updates)) {
                return;
            }
        }
    }
    sink(ix.finish());
}

fn starts_with_bom(p: &Path) -> bool {
    use std::io::Read;
    let mut b = [0u8; 3];
    File::open(p)
        .and_then(|mut f| f.read_exact(&mut b))
        .is_ok_and(|_| b == *b"\xEF\xBB\xBF")
}

/// The `raw` member of a message line, for re-reading an answer: one cheap pass.
#[derive(serde::Deserialize)]
pub(crate) struct LineRaw<'a> {
    /// `raw`, verbatim.
    #[serde(default, borrow)]
    pub(crate) raw: Option<&'a RawValue>,
}

impl<'a> LineRaw<'a> {
    /// Parses a line; `None` when it is not a JSON object with a well-formed `raw`.
    pub(crate) fn parse(bytes: &'a [u8]) -> Option<LineRaw<'a>> {
        // from_slice checks UTF-8 inside strings as it goes: no separate pass.
        serde_json::from_slice(bytes).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reel_trace::Timestamp;

    fn run(text: &str, session: usize) -> Vec<Update> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, text).unwrap();
        let mut all = Vec::new();
        index(&p, &IndexSpec::session(session, vec![]), |b| {
            all.extend(b);
            true
        });
        all
    }

    const META: &str = r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z","redaction":{"enabled":true}}"#;

    #[test]
    fn a_recorded_sse_event_has_data_exactly_when_its_record_has_text() {
        let ev = |text: &str| {
            let line = format!(
                r#"{{"t":"2026-01-01T00:00:00.000Z","dir":"event","kind":"reel.sse",{text}"http":{{"req":1,"sse":{{"id":"p","retry":500}}}}}}"#
            );
            recorded_sse_event(line.as_bytes()).expect("a reel.sse record")
        };
        let priming = ev(r#""text":"","#);
        assert_eq!(
            (
                priming.data.as_deref(),
                priming.id.as_deref(),
                priming.retry
            ),
            (Some(""), Some("p"), Some(500))
        );
        assert_eq!(ev("").data, None);
    }

    #[test]
    fn offsets_point_at_the_lines() {
        let lines = [
            META,
            r#"{"t":"2026-01-01T00:00:00.001Z","dir":"in","raw":{"jsonrpc":"2.0","id":1,"method":"ping"}}"#,
            r#"{"t":"2026-01-01T00:00:00.002Z","dir":"out","raw":{"jsonrpc":"2.0","id":1,"result":{}}}"#,
        ];
        let text = format!("\u{feff}{}\r\n{}\n{}", lines[0], lines[1], lines[2]);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, &text).unwrap();
        let files = TapeFiles::open(&p).unwrap();
        let mut ups = Vec::new();
        index(&p, &IndexSpec::session(1, vec![]), |b| {
            ups.extend(b);
            true
        });
        let mut buf = Vec::new();
        let Update::Opened(o) = &ups[1] else {
            panic!("{ups:?}")
        };
        files.read(o.at, &mut buf).unwrap();
        assert_eq!(buf, lines[1].as_bytes());
        assert_eq!(
            o.t,
            Timestamp::parse("2026-01-01T00:00:00.001Z")
                .unwrap()
                .millis()
        );
        let Update::Closed { at, .. } = &ups[2] else {
            panic!()
        };
        files.read(*at, &mut buf).unwrap();
        assert_eq!(buf, lines[2].as_bytes());
        let Update::Done(end) = ups.last().unwrap() else {
            panic!()
        };
        assert!(end.found && !end.torn && !end.ended);
    }

    #[test]
    fn exchanges_attach_and_unsolicited_anchor() {
        let text = [
            META,
            r#"{"t":"x","dir":"in","raw":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}}"#,
            r#"{"t":"x","dir":"out","raw":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}}"#,
            r#"{"t":"x","dir":"in","raw":{"jsonrpc":"2.0","method":"notifications/initialized"}}"#,
            r#"{"t":"x","dir":"out","raw":{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}}"#,
            r#"{"t":"x","dir":"in","raw":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":2}}}}"#,
            r#"{"t":"x","dir":"out","raw":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":1}}}"#,
            r#"{"t":"x","dir":"out","raw":{"jsonrpc":"2.0","id":0,"method":"roots/list"}}"#,
            r#"{"t":"x","dir":"in","raw":{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}}"#,
            r#"{"t":"x","dir":"out","raw":{"jsonrpc":"2.0","id":2,"result":{}}}"#,
            r#"{"type":"end","exitCode":0}"#,
            r#"{"t":"x","dir":"in","raw":{"jsonrpc":"2.0","id":3,"meth"#,
        ]
        .join("\n");
        let ups = run(&text, 1);
        let kinds: Vec<String> = ups
            .iter()
            .map(|u| match u {
                Update::Meta(_) => "meta".into(),
                Update::Opened(o) => format!("open{}:{}", o.exchange, o.method),
                Update::Closed { exchange, .. } => format!("close{exchange}"),
                Update::Attached { exchange, item } => format!("attach{exchange}:{:?}", item.kind),
                Update::Cancelled { exchange } => format!("cancel{exchange}"),
                Update::ClientNotification { seq, .. } => format!("cn{seq}"),
                Update::Unsolicited { anchor, .. } => format!("un@{anchor:?}"),
                Update::Warning(_) => "warn".into(),
                Update::Http(f) => format!("http:{f:?}"),
                Update::Done(_) => "done".into(),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "meta",
                "open0:initialize",
                "close0",
                "cn2",
                "un@Some(2)",
                "open1:tools/call",
                "attach1:Notification { progress: true }",
                "open2:roots/list",
                "attach1:Request { exchange: 2 }",
                "close2",
                "close1",
                "warn",
                "done"
            ]
        );
        let Update::Done(end) = ups.last().unwrap() else {
            panic!()
        };
        assert!(end.torn && end.ended);
    }

    #[test]
    fn sessions_are_selected_by_number() {
        let text = [
            META,
            r#"{"t":"x","dir":"in","session":"A","raw":{"jsonrpc":"2.0","id":1,"method":"a"}}"#,
            r#"{"t":"x","dir":"in","session":"B","raw":{"jsonrpc":"2.0","id":1,"method":"b"}}"#,
            META,
            r#"{"t":"x","dir":"in","raw":{"jsonrpc":"2.0","id":1,"method":"c"}}"#,
        ]
        .join("\n");
        for (n, m) in [(1, "a"), (2, "b"), (3, "c")] {
            let ups = run(&text, n);
            let methods: Vec<_> = ups
                .iter()
                .filter_map(|u| match u {
                    Update::Opened(o) => Some(o.method.clone()),
                    _ => None,
                })
                .collect();
            assert_eq!(methods, [m]);
        }
        let Update::Done(end) = run(&text, 4).pop().unwrap() else {
            panic!()
        };
        assert!(!end.found);
        assert_eq!(end.sessions, 3);
    }
}
