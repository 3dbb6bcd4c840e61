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
//! Invariants:
//! - Updates come in trace order; an exchange's `Opened` precedes its `Attached`,
//!   `Closed` and `Cancelled` updates; exchange numbers count up from 0 without gaps.
//! - Only the selected session is indexed (`--session N`, 1-based, in order of first
//!   appearance; a session is a `session` member within a `meta`-delimited segment).
//! - A line that does not parse is skipped with a warning; a torn last line (no line
//!   break, not JSON: the recorder was killed mid-write) is expected and reported as such.

use std::borrow::Cow;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use reel_mcp::exchange::{ExchangeBuilder, Facts, Pushed};
use reel_mcp::jsonrpc::{RpcId, RpcKind, methods};
use reel_mcp::normalize::{MatchKey, NormalizeError, Normalizer, Pointer, Scanned};
use reel_trace::line::{Line, Meta, parse_line};
use reel_trace::{Dir, OpenError, Timestamp, TraceReader};
use serde::Deserializer as _;
use serde_json::value::RawValue;

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
        Ok(TapeFiles { paths, files })
    }

    /// The files, oldest first.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
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
    /// A line that could not be used.
    Warning(String),
    /// The whole tape is indexed.
    Done(IndexEnd),
}

/// What to index.
#[derive(Clone, Debug)]
pub struct IndexSpec {
    /// 1-based session number.
    pub session: usize,
    /// The user's `--ignore` pointers (the recorded side is normalised like the live one).
    pub ignore: Vec<Pointer>,
}

/// Updates are handed over in batches of at most this many…
const BATCH_UPDATES: usize = 256;
/// …or as soon as this many bytes were read since the last batch, so the first
/// exchanges reach the server within a fraction of a millisecond.
const BATCH_BYTES: u64 = 64 * 1024;

/// Indexes the trace at `path`, calling `sink` with batches of updates; stops early when
/// `sink` returns false (the server is gone). The last batch ends with [`Update::Done`].
pub fn index(path: &Path, spec: &IndexSpec, mut sink: impl FnMut(Vec<Update>) -> bool) {
    let mut ix = Indexer::new(spec);
    let mut reader = match TraceReader::open(path) {
        Ok(r) => r,
        Err(e) => {
            ix.end.error = Some(e.to_string());
            sink(vec![Update::Done(ix.end)]);
            return;
        }
    };
    let boms: Vec<bool> = reader.files().iter().map(|p| starts_with_bom(p)).collect();
    let mut file_no: u32 = 0;
    let mut current: Option<PathBuf> = None;
    let mut offset: u64 = 0;
    let mut since_flush: u64 = 0;
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
        if ix.updates.len() >= BATCH_UPDATES
            || (since_flush >= BATCH_BYTES && !ix.updates.is_empty())
        {
            since_flush = 0;
            if !sink(std::mem::take(&mut ix.updates)) {
                return;
            }
        }
    }
    let mut last = std::mem::take(&mut ix.updates);
    last.push(Update::Done(ix.end));
    sink(last);
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

/// A message line read in one pass: its `raw` scanned (class, facts, keys) while the
/// line is parsed. Members are typed strictly; a line that does not fit goes through
/// the tolerant reader.
struct ScannedLine<'a> {
    ty: Option<Cow<'a, str>>,
    dir: Option<Cow<'a, str>>,
    t: Option<Cow<'a, str>>,
    session: Option<Cow<'a, str>>,
    raw: Option<Result<Scanned<'a>, NormalizeError>>,
    splice: Option<IdSplice>,
}

impl<'a> ScannedLine<'a> {
    fn parse(bytes: &'a [u8], norm: &Normalizer) -> Option<ScannedLine<'a>> {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let line = (&mut de)
            .deserialize_map(LineVisitor { norm, line: bytes })
            .ok()?;
        de.end().ok()?;
        Some(line)
    }
}

/// Where `inner` (a slice of `outer`) starts in `outer`.
fn offset_in(outer: &[u8], inner: &str) -> Option<u32> {
    let start = (inner.as_ptr() as usize).checked_sub(outer.as_ptr() as usize)?;
    (start + inner.len() <= outer.len()).then_some(start as u32)
}

struct LineVisitor<'n, 'a> {
    norm: &'n Normalizer,
    line: &'a [u8],
}

impl<'de> serde::de::Visitor<'de> for LineVisitor<'_, 'de> {
    type Value = ScannedLine<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a trace line")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut line = ScannedLine {
            ty: None,
            dir: None,
            t: None,
            session: None,
            raw: None,
            splice: None,
        };
        while let Some(k) = map.next_key::<Cow<'de, str>>()? {
            match k.as_ref() {
                "type" => line.ty = map.next_value()?,
                "dir" => line.dir = map.next_value()?,
                "t" => line.t = map.next_value()?,
                "session" => line.session = map.next_value()?,
                // A server line (dir written first, as reel and mcp-tape write it) is
                // kept as a span too, so its answer can be spliced without a parse.
                "raw" if line.dir.as_deref() == Some("out") => {
                    let raw: &'de RawValue = map.next_value()?;
                    let scanned = self.norm.scan(raw.get());
                    line.splice = scanned.as_ref().ok().and_then(|s| {
                        let id = s.id?.get();
                        let raw_start = offset_in(self.line, raw.get())?;
                        let id_start = offset_in(raw.get().as_bytes(), id)?;
                        Some(IdSplice {
                            raw_start,
                            raw_len: raw.get().len() as u32,
                            id_start,
                            id_len: id.len() as u32,
                            error: s.kind == RpcKind::Error,
                        })
                    });
                    line.raw = Some(scanned);
                }
                "raw" => line.raw = Some(map.next_value_seed(self.norm.scan_seed())?),
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(line)
    }
}

struct Indexer {
    selected: usize,
    normalizer: Normalizer,
    builder: ExchangeBuilder,
    updates: Vec<Update>,
    end: IndexEnd,
    segment: u64,
    segment_meta: Option<Meta>,
    sessions: Vec<(u64, Option<String>)>,
    meta_sent: bool,
    in_selected_segment: bool,
    seq: u64,
    last_in: Option<u64>,
}

impl Indexer {
    fn new(spec: &IndexSpec) -> Indexer {
        Indexer {
            selected: spec.session.max(1),
            normalizer: Normalizer::new().with_ignore(spec.ignore.clone()),
            builder: ExchangeBuilder::new(),
            updates: Vec::new(),
            end: IndexEnd::default(),
            segment: 0,
            segment_meta: None,
            sessions: Vec::new(),
            meta_sent: false,
            in_selected_segment: false,
            seq: 0,
            last_in: None,
        }
    }

    fn warn(&mut self, msg: String) {
        self.updates.push(Update::Warning(msg));
    }

    fn line(&mut self, bytes: &[u8], terminated: bool, loc: LineLoc, place: &dyn Fn() -> String) {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        // The common line (a message written the usual way) in one cheap pass; anything
        // else through the tolerant reader.
        if let Some(fast) = ScannedLine::parse(bytes, &self.normalizer) {
            if fast.ty.is_none() {
                let dir = fast.dir.as_deref().and_then(Dir::parse);
                if let (Some(dir), Some(scanned)) = (dir.filter(|d| d.is_message()), fast.raw) {
                    let session = fast.session.as_deref();
                    let t = fast.t.as_deref();
                    return self.message_line(dir, session, t, scanned, fast.splice, loc);
                }
            }
        }
        let line = match parse_line(bytes) {
            Ok(l) => l,
            Err(e) if !terminated => {
                self.end.torn = true;
                self.warn(format!(
                    "{}: torn last line ignored ({e}); the recording was cut mid-write",
                    place()
                ));
                return;
            }
            Err(e) => {
                self.warn(format!("{}: line skipped: {e}", place()));
                return;
            }
        };
        match line {
            Line::Meta(m) => {
                self.segment += 1;
                self.segment_meta = Some(*m);
                self.in_selected_segment = false;
            }
            Line::End(_) if self.in_selected_segment => self.end.ended = true,
            Line::Message(v) => {
                let Some(raw) = v.raw_str() else {
                    if self.session_number(v.session.as_deref()) == self.selected {
                        self.warn(format!("{}: message line without `raw` skipped", place()));
                    }
                    return;
                };
                let dir = v.dir().unwrap_or(Dir::In);
                let scanned = self.normalizer.scan(raw);
                let (session, t) = (v.session.as_deref(), v.t.as_deref());
                self.message_line(dir, session, t, scanned, None, loc);
            }
            _ => {}
        }
    }

    /// The 1-based number of a session, assigned in order of first appearance.
    fn session_number(&mut self, session: Option<&str>) -> usize {
        let found = self
            .sessions
            .iter()
            .position(|(seg, s)| *seg == self.segment && s.as_deref() == session);
        match found {
            Some(i) => i + 1,
            None => {
                self.sessions
                    .push((self.segment, session.map(str::to_owned)));
                self.end.sessions = self.sessions.len();
                self.sessions.len()
            }
        }
    }

    fn message_line(
        &mut self,
        dir: Dir,
        session: Option<&str>,
        t: Option<&str>,
        scanned: Result<Scanned<'_>, NormalizeError>,
        splice: Option<IdSplice>,
        loc: LineLoc,
    ) {
        if self.session_number(session) != self.selected {
            return;
        }
        self.in_selected_segment = true;
        self.end.found = true;
        if !self.meta_sent {
            self.meta_sent = true;
            let meta = self.segment_meta.clone().unwrap_or_default();
            self.updates.push(Update::Meta(Box::new(meta)));
        }
        let t = t.and_then(Timestamp::parse).map_or(0, Timestamp::millis);
        self.message(dir, scanned, splice, loc, t);
    }

    fn message(
        &mut self,
        dir: Dir,
        scanned: Result<Scanned<'_>, NormalizeError>,
        splice: Option<IdSplice>,
        at: LineLoc,
        t: i64,
    ) {
        let seq = self.seq;
        self.seq += 1;
        self.end.messages += 1;
        // One scan gives the builder its facts and the matcher its keys.
        let pushed = match &scanned {
            Ok(s) => {
                let id = |r: Option<&RawValue>| r.and_then(RpcId::from_raw);
                let facts = Facts {
                    env: s.envelope(),
                    request_progress_token: id(s.progress_token),
                    notification_progress_token: id(s.params_progress_token),
                    cancelled_request: id(s.request_id),
                };
                self.builder.push_facts(None, dir, Ok(&facts), at.line)
            }
            Err(NormalizeError::NotObject { batch: true }) => {
                self.builder
                    .push_facts(None, dir, Err(RpcKind::Batch), at.line)
            }
            Err(_) => self
                .builder
                .push_facts(None, dir, Err(RpcKind::Invalid), at.line),
        };
        let keys = scanned.ok().map(|s| (s.key, s.alt_key));
        if let Some(ex) = pushed.opened {
            self.opened(ex, dir, keys, at, seq, t, pushed.attached_to);
        } else if let Some(ex) = pushed.closed {
            self.updates.push(Update::Closed {
                exchange: ex as u32,
                at,
                seq,
                t,
                splice,
            });
        } else if let Some(method) = self.notification_method(&pushed) {
            let key = keys.map(|k| k.0);
            self.notification(dir, key, &method, at, seq, t, pushed.attached_to);
        }
        if dir == Dir::In {
            self.last_in = Some(seq);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn opened(
        &mut self,
        ex: usize,
        dir: Dir,
        keys: Option<(MatchKey, Option<MatchKey>)>,
        at: LineLoc,
        seq: u64,
        t: i64,
        attached_to: Option<usize>,
    ) {
        let method = self.builder.exchanges()[ex].method.clone();
        let (mut key, mut alt_key) = (None, None);
        if dir == Dir::In {
            match keys {
                Some((k, alt)) => {
                    key = Some(k);
                    alt_key = alt;
                }
                None => self.warn(format!("line {}: request not indexed (not JSON)", at.line)),
            }
        }
        let parent = match (dir, attached_to) {
            (Dir::Out, Some(p)) if self.builder.exchanges()[p].request_dir == Dir::In => {
                Some(p as u32)
            }
            _ => None,
        };
        self.updates.push(Update::Opened(Opened {
            exchange: ex as u32,
            dir,
            method,
            key,
            alt_key,
            at,
            seq,
            t,
            parent,
        }));
        if dir == Dir::Out {
            let item = Item {
                at,
                seq,
                t,
                kind: ItemKind::Request {
                    exchange: ex as u32,
                },
            };
            self.updates.push(match parent {
                Some(p) => Update::Attached { exchange: p, item },
                None => Update::Unsolicited {
                    anchor: self.last_in,
                    item,
                },
            });
        }
    }

    /// The method of a message the builder took as a notification (it read the
    /// envelope already; no second parse).
    fn notification_method(&self, pushed: &Pushed) -> Option<String> {
        if pushed.unsolicited {
            let u = self.builder.unsolicited_messages().last()?;
            return (u.kind == RpcKind::Notification).then(|| u.method.clone().unwrap_or_default());
        }
        let a = self.builder.exchanges()[pushed.attached_to?]
            .attached
            .last()?;
        (!a.is_request).then(|| a.method.clone().unwrap_or_default())
    }

    #[allow(clippy::too_many_arguments)]
    fn notification(
        &mut self,
        dir: Dir,
        key: Option<MatchKey>,
        method: &str,
        at: LineLoc,
        seq: u64,
        t: i64,
        attached_to: Option<usize>,
    ) {
        if dir == Dir::In {
            if let Some(key) = key {
                self.updates.push(Update::ClientNotification { seq, key });
            }
            let cancelled = attached_to.filter(|&ex| {
                let e = &self.builder.exchanges()[ex];
                method == methods::CANCELLED && e.cancelled && e.request_dir == Dir::In
            });
            if let Some(ex) = cancelled {
                self.updates.push(Update::Cancelled {
                    exchange: ex as u32,
                });
            }
            return;
        }
        let item = Item {
            at,
            seq,
            t,
            kind: ItemKind::Notification {
                progress: method == methods::PROGRESS,
            },
        };
        match attached_to {
            Some(ex) if self.builder.exchanges()[ex].request_dir == Dir::In => {
                self.updates.push(Update::Attached {
                    exchange: ex as u32,
                    item,
                });
            }
            _ => self.updates.push(Update::Unsolicited {
                anchor: self.last_in,
                item,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, session: usize) -> Vec<Update> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, text).unwrap();
        let mut all = Vec::new();
        index(
            &p,
            &IndexSpec {
                session,
                ignore: vec![],
            },
            |b| {
                all.extend(b);
                true
            },
        );
        all
    }

    const META: &str = r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z","redaction":{"enabled":true}}"#;

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
        index(
            &p,
            &IndexSpec {
                session: 1,
                ignore: vec![],
            },
            |b| {
                ups.extend(b);
                true
            },
        );
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
