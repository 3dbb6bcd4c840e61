//! One side of a diff: a trace read once, front to back, into compact records.
//!
//! Each side runs on its own thread and sends the aligner batches of [`Event`]s: an
//! exchange's match key when its request is read (so pairing follows request order), the
//! finished [`ExRec`] when its response is read, LLM turns as [`TurnRec`]s. A record
//! holds keys, fingerprints and file positions ([`Loc`]), never payloads: the aligner
//! re-reads the few payloads whose fingerprints differ ([`crate::payload::Payloads`]).
//! Memory is therefore the exchanges still open plus the records the aligner has not
//! paired yet, not the size of the trace.
//!
//! Each message is scanned once by the shared normaliser ([`Scanned`]: class, match key,
//! the answer and the progress token verbatim), and those facts form the exchanges in the
//! shared [`ExchangeBuilder`] (a request, its response, the progress and cancellation
//! that belong to it), as replay forms them; over HTTP an error without an id answers
//! the request its HTTP request carried (`HttpCarried`, the rule every reader pairs
//! by), so a recorded refusal of a discover probe and the one verify writes with the
//! probe's id are the same answer. The builder keeps every exchange it
//! formed, so this reader starts a fresh builder whenever no exchange is open and
//! [`RESET_AFTER`] exchanges have accumulated, and at each new session (`meta` line).
//! Limit: a trace that never has a moment without an open exchange keeps its builder
//! (about 250 bytes per exchange) for the whole read.
//!
//! Invariants: a [`Loc`] names the exact bytes of its line (the re-read line is the line
//! read here); an `Open` event always precedes the `Done` of the same exchange, and every
//! opened exchange is eventually `Done` (unanswered ones when the trace or its session
//! ends).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender};

use reel_mcp::exchange::{ExchangeBuilder, Outcome};
use reel_mcp::jsonrpc::{Envelope, HttpCarried, RpcKind, methods};
use reel_mcp::normalize::{MatchKey, Scanned, canonical};
use reel_mcp::notifications::NotificationCheck;
use reel_trace::line::kinds;
use reel_trace::line::parse_line;
use reel_trace::{Dir, Line, MessageView, TraceReader, Turn};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::DiffError;
use crate::bodies::{self, LlmBodies, ValueRec};
use crate::payload::{Prep, turn_shape, turn_value, usage_value};
pub use crate::place::CONTEXT;
pub(crate) use crate::place::{Loc, Ring};
use reel_mcp::normalize::KeyHasher as Fingerprint;

/// A fresh exchange builder is started when none is open and this many have formed
/// (small, so its storage is reused from the heap rather than mapped afresh).
pub const RESET_AFTER: usize = reel_mcp::exchange::SETTLE_AFTER;
/// Lines per batch sent to the aligner (both sides advance by the same line count).
pub const BATCH_LINES: usize = 4096;
/// Distinct method/tool labels interned per side; past this each label is its own copy.
pub const INTERNED_LABELS: usize = 65_536;
/// Longest name kept in a label (tool names, URIs), in characters.
pub const LABEL_NAME_CHARS: usize = 80;
/// How an exchange ended, as far as drift is concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    /// No response in the trace.
    Pending,
    /// A `result`; `is_error` is `result.isError == true` (tool errors), known only
    /// after the comparison re-read the answer (false until then).
    Result { is_error: bool },
    /// A JSON-RPC `error`.
    Error {
        code: Option<i64>,
        message: Option<Box<str>>,
    },
}

/// One exchange, compactly.
#[derive(Debug)]
pub(crate) struct ExRec {
    pub seq: u64,
    pub dir: Dir,
    pub method: Arc<str>,
    pub label: Arc<str>,
    pub request: Loc,
    pub response: Option<Loc>,
    pub answer: Answer,
    /// Fingerprint of the `result` / `error` bytes.
    pub answer_fp: u128,
    /// Progress notifications of this exchange, in order.
    pub progress: Vec<Loc>,
    pub progress_fp: Fingerprint,
    /// With --strict-notifications: the other notifications that came while it was open.
    pub others: Vec<Loc>,
    pub others_fp: Fingerprint,
    pub cancelled: bool,
    /// The exchanges opened just before it on this side (label, line).
    pub context: Ring,
}

/// One LLM turn, compactly.
#[derive(Debug)]
pub(crate) struct TurnRec {
    /// What pairs it: its role, within its conversation when it has one.
    pub role: Arc<str>,
    pub label: Arc<str>,
    pub loc: Loc,
    pub blocks_fp: u128,
    pub shape_fp: u128,
    pub usage_fp: u128,
    pub context: Ring,
}

/// With --strict-notifications: a notification outside any exchange's progress.
#[derive(Debug)]
pub(crate) struct LooseRec {
    pub dir: Dir,
    pub method: Arc<str>,
    pub fp: u128,
    pub loc: Loc,
}

/// What a side tells the aligner.
#[derive(Debug)]
pub(crate) enum Event {
    Open {
        seq: u64,
        dir: Dir,
        key: MatchKey,
    },
    Done(Box<ExRec>),
    Turn(Box<TurnRec>),
    Loose(Box<LooseRec>),
    /// An answer outside JSON-RPC and turns (see [`crate::bodies`]).
    Value(Box<ValueRec>),
}

/// Events of up to [`BATCH_LINES`] lines, and the bytes read so far.
pub(crate) struct Batch {
    pub events: Vec<Event>,
    pub bytes: u64,
}

/// A count of messages compared by number, not position, with the first of them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Count {
    pub n: u64,
    pub first: Loc,
}

/// What one side found besides its records.
#[derive(Debug, Default)]
pub(crate) struct SideTotals {
    pub files: Vec<PathBuf>,
    pub bytes: u64,
    pub lines: u64,
    pub messages: u64,
    pub exchanges: u64,
    pub turns: u64,
    pub echoed_turns: u64,
    pub sessions: u64,
    pub skipped: u64,
    pub first_skipped: Option<(Loc, String)>,
    /// Unsolicited messages per direction (client→server, server→client), then per
    /// method or kind.
    pub counts: [BTreeMap<String, Count>; 2],
}

/// A direction as a sortable key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum DirKey {
    In,
    Out,
}

impl DirKey {
    pub(crate) fn of(dir: Dir) -> DirKey {
        if dir == Dir::In {
            DirKey::In
        } else {
            DirKey::Out
        }
    }

    /// "client→server" / "server→client".
    pub(crate) fn text(self) -> &'static str {
        match self {
            DirKey::In => "client→server",
            DirKey::Out => "server→client",
        }
    }
}

/// How a side sorts the notifications that are not a call's progress.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NotificationRules {
    /// `--strict-notifications`: kept for an in-place comparison by content.
    pub in_place: bool,
    /// `--notifications`: a method whose count it does not compare is only counted,
    /// never compared in place either.
    pub counts: NotificationCheck,
}

impl NotificationRules {
    fn in_place(self, method: &str) -> bool {
        self.in_place && self.counts.compares(method)
    }
}

/// Reads one side and sends its events; returns what it counted.
pub(crate) fn read_side(
    path: &Path,
    prep: Prep,
    notifications: NotificationRules,
    tx: SyncSender<Batch>,
    recycle: Receiver<Vec<Event>>,
) -> Result<SideTotals, DiffError> {
    let mut reader = TraceReader::open(path).map_err(|source| DiffError::Open { source })?;
    let files = reader.files().to_vec();
    let mut side = SideReader {
        prep,
        notifications,
        builder: ExchangeBuilder::new(),
        carried: HttpCarried::new(),
        slots: Vec::new(),
        open: 0,
        seq: 0,
        roles: HashMap::new(),
        requests: HashMap::new(),
        labels: HashMap::new(),
        buf: String::new(),
        ring: Default::default(),
        bodies: LlmBodies::default(),
        events: Vec::with_capacity(BATCH_LINES),
        recycle,
        totals: SideTotals {
            files: files.clone(),
            bytes: reader.total_bytes(),
            ..SideTotals::default()
        },
    };
    let mut file: i64 = -1;
    let mut offset = 0u64;
    let mut read = 0u64;
    let mut in_batch = 0;
    while let Some(l) = reader.next_line() {
        let l = l.map_err(|source| DiffError::Open { source })?;
        if l.raw.number == 1 {
            file += 1;
            offset = files.get(file as usize).map_or(0, |f| bom_len(f));
        }
        let len = l.raw.bytes.len() as u64;
        let loc = Loc {
            file: u16::try_from(file).unwrap_or(u16::MAX),
            line: l.raw.number,
            offset,
            len,
        };
        let step = len + u64::from(l.raw.crlf) + u64::from(l.raw.terminated);
        offset += step;
        read += step;
        side.line(l.raw.bytes, loc);
        in_batch += 1;
        if in_batch >= BATCH_LINES {
            in_batch = 0;
            side.send(&tx, read)?;
        }
    }
    side.end_session();
    side.send(&tx, read)?;
    Ok(side.totals)
}

/// The length of a UTF-8 BOM at the start of `path` (the reader strips it).
fn bom_len(path: &Path) -> u64 {
    let mut head = [0u8; 3];
    match File::open(path).and_then(|mut f| f.read_exact(&mut head)) {
        Ok(()) if head == *b"\xEF\xBB\xBF" => 3,
        _ => 0,
    }
}

struct SideReader {
    prep: Prep,
    notifications: NotificationRules,
    builder: ExchangeBuilder,
    /// Open client exchanges (builder indices) by the HTTP request that carried them.
    carried: HttpCarried<usize>,
    /// The records of the current builder's exchanges, by its index; `None` once done.
    slots: Vec<Option<Box<ExRec>>>,
    open: usize,
    seq: u64,
    roles: HashMap<Arc<str>, u64>,
    /// Per conversation, each HTTP request's place among its requests, in the order
    /// the requests came (their first turn is written when they are sent).
    requests: HashMap<Option<u64>, HashMap<u64, u64>>,
    labels: HashMap<String, Arc<str>>,
    buf: String,
    ring: Ring,
    /// The llm exchanges of the session, until it is known which gave turns.
    bodies: LlmBodies,
    events: Vec<Event>,
    /// Emptied event vectors coming back from the aligner: a batch's storage is reused
    /// instead of allocated (and paged in) anew.
    recycle: Receiver<Vec<Event>>,
    totals: SideTotals,
}

impl SideReader {
    fn send(&mut self, tx: &SyncSender<Batch>, bytes: u64) -> Result<(), DiffError> {
        let fresh = self
            .recycle
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BATCH_LINES));
        let events = std::mem::replace(&mut self.events, fresh);
        // The aligner hung up only when it failed; its error is the one reported.
        tx.send(Batch { events, bytes })
            .map_err(|_| DiffError::Aborted)
    }

    fn intern(&mut self, s: &str) -> Arc<str> {
        if let Some(a) = self.labels.get(s) {
            return a.clone();
        }
        let a: Arc<str> = Arc::from(s);
        if self.labels.len() < INTERNED_LABELS {
            self.labels.insert(s.to_owned(), a.clone());
        }
        a
    }

    /// The context before this exchange, and this one remembered for the next.
    fn remember(&mut self, label: Arc<str>, loc: Loc) -> Ring {
        let before = self.ring.clone();
        self.ring.rotate_left(1);
        self.ring[CONTEXT - 1] = Some((label, loc));
        before
    }

    fn count(&mut self, dir: Dir, what: &str, loc: Loc) {
        let counts = &mut self.totals.counts[DirKey::of(dir) as usize];
        match counts.get_mut(what) {
            Some(c) => c.n += 1,
            None => {
                counts.insert(what.to_owned(), Count { n: 1, first: loc });
            }
        }
    }

    fn line(&mut self, bytes: &[u8], loc: Loc) {
        self.totals.lines += 1;
        match parse_line(bytes) {
            Err(e) => {
                self.totals.skipped += 1;
                if self.totals.first_skipped.is_none() {
                    self.totals.first_skipped = Some((loc, e.to_string()));
                }
            }
            Ok(Line::Meta(_)) => {
                if self.totals.sessions > 0 {
                    self.end_session();
                }
                self.totals.sessions += 1;
            }
            Ok(Line::Message(v)) => self.message(&v, loc),
            Ok(Line::Event(v)) => match v.kind.as_deref() {
                Some(kinds::NONJSON) => self.nonjson(&v, loc),
                Some(kinds::LLM_REQUEST | kinds::LLM_EXCHANGE) => self.bodies.exchange(&v, loc),
                Some(kinds::LLM_BODY) => self.bodies.piece(&v),
                _ => {}
            },
            Ok(Line::Turn(t)) => self.turn(&t, loc),
            Ok(Line::End(_) | Line::Other(_)) => {}
        }
    }

    fn message(&mut self, v: &MessageView<'_>, loc: Loc) {
        let (Some(dir), Some(raw)) = (v.dir(), v.raw_str()) else {
            return;
        };
        self.totals.messages += 1;
        let raw = self.prep.redact(raw);
        // One scan per message gives the builder its facts, the match key, and the
        // answer and token spans fingerprinted below.
        let scanned = self.prep.normalizer.scan(&raw).ok();
        let pushed = match &scanned {
            Some(sc) => {
                let facts = sc.facts();
                self.builder
                    .push_facts(v.session.as_deref(), dir, Ok(&facts), loc.line)
            }
            None => self.builder.push_facts(
                v.session.as_deref(),
                dir,
                Err(Envelope::kind_of(&raw)),
                loc.line,
            ),
        };
        // An HTTP refusal without an id (a 400 to a discover probe) answers the request
        // its HTTP request carried, as play, verify, check and stats pair it.
        let kind = scanned
            .as_ref()
            .map_or_else(|| Envelope::kind_of(&raw), |s| s.kind);
        let id = scanned.as_ref().and_then(|s| s.id);
        let req = v.http_req();
        if let Some(idx) = self.carried.id_less_answer(dir, kind, id, req) {
            if self.slots.get(idx).is_some_and(Option::is_some) {
                let outcome = match kind {
                    RpcKind::Error => Outcome::Error(
                        scanned
                            .as_ref()
                            .and_then(|s| s.envelope().error_parts())
                            .and_then(|(code, _)| code),
                    ),
                    _ => Outcome::Result,
                };
                self.close_exchange(idx, scanned.as_ref(), loc, Some(outcome));
                return;
            }
        }
        if let Some(idx) = pushed.opened {
            if dir == Dir::In {
                self.carried.carried(req, idx);
            }
            self.open_exchange(idx, dir, &raw, scanned.as_ref(), loc);
        } else if let Some(idx) = pushed.attached_to {
            self.attach(idx, dir, &raw, scanned.as_ref(), loc);
        }
        if let Some(idx) = pushed.closed {
            self.carried.forget(&idx);
            self.close_exchange(idx, scanned.as_ref(), loc, None);
        }
        if pushed.unsolicited {
            self.unsolicited(&raw, loc);
        }
    }

    fn open_exchange(
        &mut self,
        idx: usize,
        dir: Dir,
        raw: &str,
        scanned: Option<&Scanned<'_>>,
        loc: Loc,
    ) {
        // The scan applied the shared normaliser's rules and --ignore pointers: its key
        // is the one MatchKey::of gives the normalised value.
        let (key, method, label) = match scanned {
            Some(sc) => {
                let m = sc.method.as_deref().unwrap_or_default();
                let name: Option<Cow<'_, str>> = match m {
                    "tools/call" | "prompts/get" => sc.name.and_then(|n| json_str(n.get())),
                    "resources/read"
                    | "resources/subscribe"
                    | "resources/unsubscribe"
                    | "completion/complete" => serde_json::from_str::<Value>(raw)
                        .ok()
                        .and_then(|v| label_name(m, &v).map(|n| Cow::Owned(n.to_owned()))),
                    _ => None,
                };
                // The label is built in a reused buffer: no allocation once interned.
                let mut buf = std::mem::take(&mut self.buf);
                buf.clear();
                buf.push_str(m);
                if let Some(n) = name {
                    buf.push(' ');
                    if n.chars().count() > LABEL_NAME_CHARS {
                        buf.push_str(&reel_mcp::normalize::shorten(&n, LABEL_NAME_CHARS));
                    } else {
                        buf.push_str(&n);
                    }
                }
                let method = self.intern(m);
                let label = self.intern(&buf);
                self.buf = buf;
                (sc.key, method, label)
            }
            // The builder opened it, so it scanned; keep going on the bytes if not.
            None => {
                let empty = self.intern("");
                (
                    MatchKey(Fingerprint::of(raw.as_bytes())),
                    empty.clone(),
                    empty,
                )
            }
        };
        let context = self.remember(label.clone(), loc);
        let seq = self.seq;
        self.seq += 1;
        self.totals.exchanges += 1;
        let rec = ExRec {
            seq,
            dir,
            method,
            label,
            request: loc,
            response: None,
            answer: Answer::Pending,
            answer_fp: 0,
            progress: Vec::new(),
            progress_fp: Fingerprint::new(),
            others: Vec::new(),
            others_fp: Fingerprint::new(),
            cancelled: false,
            context,
        };
        self.events.push(Event::Open { seq, dir, key });
        if self.slots.len() <= idx {
            self.slots.resize_with(idx + 1, || None);
        }
        self.slots[idx] = Some(Box::new(rec));
        self.open += 1;
    }

    fn attach(&mut self, idx: usize, dir: Dir, raw: &str, scanned: Option<&Scanned<'_>>, loc: Loc) {
        enum What {
            Request,
            Progress,
            Cancelled,
            Other(String),
        }
        let what = match self
            .builder
            .exchanges()
            .get(idx)
            .and_then(|e| e.attached.last())
        {
            None => return,
            Some(att) if att.is_request => What::Request,
            Some(att) => match att.method.as_deref().unwrap_or_default() {
                methods::PROGRESS => What::Progress,
                methods::CANCELLED => What::Cancelled,
                other => What::Other(other.to_owned()),
            },
        };
        let rules = self.notifications;
        let rec = self.slots.get_mut(idx).and_then(Option::as_mut);
        match (what, rec) {
            // A request the pairer refused (its id is in use): compared by count.
            (What::Request, _) => self.count(dir, "(request reusing a pending id)", loc),
            (What::Progress, Some(rec)) => {
                rec.progress.push(loc);
                let token = scanned.and_then(|sc| sc.params_progress_token);
                progress_fingerprint(raw, token, &mut rec.progress_fp);
            }
            (What::Cancelled, Some(rec)) => rec.cancelled = true,
            (What::Other(m), Some(rec)) if rules.in_place(&m) => {
                rec.others.push(loc);
                rec.others_fp.write(raw.as_bytes());
            }
            (What::Other(m), _) => self.count(dir, &m, loc),
            (What::Progress, None) => self.count(dir, methods::PROGRESS, loc),
            (What::Cancelled, None) => self.count(dir, methods::CANCELLED, loc),
        }
    }

    /// Ends exchange `idx` with the response at `loc`; `outcome` when the builder did
    /// not pair it (an id-less HTTP refusal), else the builder's.
    fn close_exchange(
        &mut self,
        idx: usize,
        scanned: Option<&Scanned<'_>>,
        loc: Loc,
        outcome: Option<Outcome>,
    ) {
        let Some(mut rec) = self.slots.get_mut(idx).and_then(Option::take) else {
            return;
        };
        self.open = self.open.saturating_sub(1);
        let ex = &self.builder.exchanges()[idx];
        rec.cancelled |= ex.cancelled;
        rec.response = Some(loc);
        let (result, error) = scanned.map_or((None, None), |sc| (sc.result, sc.error));
        let mut f = Fingerprint::new();
        match outcome.as_ref().unwrap_or(&ex.outcome) {
            Outcome::Error(code) => {
                let env = Envelope {
                    error,
                    ..Envelope::default()
                };
                let message = env
                    .error_parts()
                    .and_then(|(_, m)| m)
                    .map(|m| reel_mcp::normalize::shorten(&m, 200).into_boxed_str());
                rec.answer = Answer::Error {
                    code: *code,
                    message,
                };
                f.write(b"error");
                f.write(error.map_or("", RawValue::get).as_bytes());
            }
            _ => {
                // isError is read only when two answers' bytes differ (compare.rs).
                rec.answer = Answer::Result { is_error: false };
                f.write(b"result");
                f.write(result.map_or("", RawValue::get).as_bytes());
            }
        }
        rec.answer_fp = f.finish128();
        self.events.push(Event::Done(rec));
        if self.open == 0 && self.slots.len() >= RESET_AFTER {
            self.builder = ExchangeBuilder::new();
            self.slots.clear();
            self.carried.clear();
        }
    }

    fn unsolicited(&mut self, raw: &str, loc: Loc) {
        let Some(u) = self.builder.unsolicited_messages().last() else {
            return;
        };
        let dir = u.dir;
        let what = match (&u.method, u.kind) {
            (Some(m), _) => m.clone(),
            (None, RpcKind::Response | RpcKind::Error) => "(a response to no request)".to_owned(),
            (None, RpcKind::Batch) => "(a batch)".to_owned(),
            (None, _) => "(not a JSON-RPC message)".to_owned(),
        };
        if u.kind == RpcKind::Notification && self.notifications.in_place(&what) {
            let method = self.intern(&what);
            self.events.push(Event::Loose(Box::new(LooseRec {
                dir,
                method,
                fp: Fingerprint::of(raw.as_bytes()),
                loc,
            })));
            return;
        }
        self.count(dir, &what, loc);
    }

    /// Everything still open becomes `Done` (unanswered); a new session starts afresh.
    fn end_session(&mut self) {
        for (key, loc, fp, value) in self.bodies.finish(&self.prep.normalizer) {
            let context = self.remember(key.clone(), loc);
            self.events.push(Event::Value(Box::new(ValueRec {
                label: key.clone(),
                key,
                loc,
                fp,
                value: value.map(Arc::new),
                context,
            })));
        }
        for (idx, slot) in self.slots.iter_mut().enumerate() {
            if let Some(mut rec) = slot.take() {
                rec.cancelled |= self
                    .builder
                    .exchanges()
                    .get(idx)
                    .is_some_and(|e| e.cancelled);
                self.events.push(Event::Done(rec));
            }
        }
        self.slots.clear();
        self.carried.clear();
        self.open = 0;
        self.builder = ExchangeBuilder::new();
    }

    /// A line that is not JSON, compared by content in its direction's order.
    fn nonjson(&mut self, v: &MessageView<'_>, loc: Loc) {
        let dir = if v.side.as_deref() == Some("in") {
            DirKey::In
        } else {
            DirKey::Out
        };
        let label = self.intern(&format!("a line that is not JSON ({})", dir.text()));
        let value = bodies::nonjson_value(v);
        let context = self.remember(label.clone(), loc);
        self.events.push(Event::Value(Box::new(ValueRec {
            key: label.clone(),
            label,
            loc,
            fp: Fingerprint::of(canonical(&value).as_bytes()),
            value: Some(Arc::new(value)),
            context,
        })));
    }

    fn turn(&mut self, t: &Turn, loc: Loc) {
        let conversation = t
            .extra
            .get("conversation")
            .and_then(serde_json::Value::as_u64);
        // The request's place among its conversation's requests, fixed by its first
        // turn (written as it is sent).
        let request = t.http_req().map(|n| {
            self.bodies.turn(n);
            let places = self.requests.entry(conversation).or_default();
            let next = places.len() as u64 + 1;
            *places.entry(n).or_insert(next)
        });
        if t.is_echoed() {
            self.totals.echoed_turns += 1;
            return;
        }
        self.totals.turns += 1;
        let role = self.intern(t.role.as_deref().unwrap_or("(no role)"));
        // Turns pair within their conversation (reel llm numbers them), by role and
        // position; an answer by the request it answers, since answers to requests
        // that overlapped are written as they end, in whichever order that is.
        let answer = role.as_ref() == "assistant";
        let key = match (conversation, request.filter(|_| answer)) {
            (c, Some(r)) => self.intern(&format!("{}:{role}#{r}", c.unwrap_or(0))),
            (Some(c), None) => self.intern(&format!("{c}:{role}")),
            (None, None) => role.clone(),
        };
        let n = self.roles.entry(role.clone()).or_insert(0);
        *n += 1;
        let tools: Vec<String> = t
            .blocks()
            .iter()
            .filter_map(|b| match b {
                reel_trace::Block::ToolUse { name, .. } => Some(name.clone()),
                _ => None,
            })
            .collect();
        let label = if tools.is_empty() {
            format!("{role} turn {n}")
        } else {
            format!("{role} turn {n} (tool_use {})", tools.join(", "))
        };
        let label = self.intern(&label);
        let blocks = turn_value(t, &self.prep.normalizer);
        let context = self.remember(label.clone(), loc);
        self.events.push(Event::Turn(Box::new(TurnRec {
            role: key,
            label,
            loc,
            blocks_fp: Fingerprint::of(canonical(&blocks).as_bytes()),
            shape_fp: Fingerprint::of(turn_shape(t).as_bytes()),
            usage_fp: Fingerprint::of(canonical(&usage_value(t)).as_bytes()),
            context,
        })));
    }
}

/// A JSON string literal's text, borrowed when it has no escapes.
fn json_str(literal: &str) -> Option<Cow<'_, str>> {
    match serde_json::from_str::<&str>(literal) {
        Ok(s) => Some(Cow::Borrowed(s)),
        Err(_) => serde_json::from_str::<String>(literal).ok().map(Cow::Owned),
    }
}

/// The name that makes a request's label useful: the tool, prompt or resource.
fn label_name<'v>(method: &str, v: &'v Value) -> Option<&'v str> {
    reel_mcp::jsonrpc::call_subject(method, v.get("params")?)
}

/// Adds a progress notification to `f`: its bytes without the token's value (the token
/// is the request's, different on every run), cut out where the scan found it.
/// (Removing a span is safe for a fingerprint: equal fingerprints still mean equal
/// remaining bytes, and unequal ones are compared exactly.)
fn progress_fingerprint(raw: &str, token: Option<&RawValue>, f: &mut Fingerprint) {
    f.write(b"progress");
    let span = token.and_then(|t| {
        let start = (t.get().as_ptr() as usize).checked_sub(raw.as_ptr() as usize)?;
        let end = start + t.get().len();
        (end <= raw.len()).then_some((start, end))
    });
    match span {
        Some((start, end)) => {
            f.write(&raw.as_bytes()[..start]);
            f.write(&raw.as_bytes()[end..]);
        }
        None => f.write(raw.as_bytes()),
    }
}
