//! The indexer: one pass over the trace's lines, turning the selected sessions into
//! tapes of [`Update`]s (see [`super::Selection`]).
//!
//! Per tape it keeps an exchange builder (pairing per recorded `session`, so two client
//! connections pooled in one tape never cross-pair), the position counter and the last
//! client message. Over HTTP the recording says which HTTP exchange carried each
//! message (`http.req`), and that is the better guide to what belongs together:
//! - a server message that came on the response stream of a client request belongs to
//!   that request's exchange, and one that came on another stream (the GET stream) is
//!   unsolicited, whatever was open at the time (except on a legacy HTTP+SSE session,
//!   where every server message shares the one stream);
//! - an error without an id (a 400 refusal of a `server/discover` probe) answers the
//!   request its HTTP exchange carried (the rule of [`HttpCarried`], which check,
//!   stats and verify pair by too), and so does a `reel.http` record of an error
//!   status (4xx/5xx) whose body was no JSON-RPC message;
//! - `reel.http` records of GET and DELETE exchanges, and a legacy `endpoint` event,
//!   become [`HttpFact`]s of their session;
//! - a request whose stream the client left before the answer (`end: "client"`) was
//!   never answered: it is cancelled, as with `notifications/cancelled`;
//! - an event without a message on a request's stream (a priming event) is part of its
//!   exchange, and a response that came on another stream (after the server closed the
//!   request's stream and the client resumed on GET) says so
//!   ([`super::Via::other_stream`]).

use std::collections::HashMap;

use reel_mcp::exchange::{ExchangeBuilder, Pushed};
use reel_mcp::http::is_connection_key;
use reel_mcp::jsonrpc::{HttpCarried, RpcKind, methods};
use reel_mcp::normalize::{MatchKey, NormalizeError, Normalizer, Scanned};
use reel_trace::line::{Line, Meta, kinds, parse_line};
use reel_trace::{Dir, Timestamp};

use super::scan::{HttpMember, ScannedLine};
use super::types::{
    HttpFact, IdSplice, IndexEnd, IndexSpec, Item, ItemKind, LineLoc, Opened, Selection, Update,
    Via, WHOLE,
};

/// The index of one tape.
#[derive(Default)]
struct TapeIndex {
    builder: ExchangeBuilder,
    seq: u64,
    last_in: Option<u64>,
    meta_sent: bool,
    messages: u64,
    ended: bool,
    /// The meta segment of its last message.
    segment: u64,
    /// Open client exchanges by the HTTP request that carried them.
    carried: HttpCarried<u32>,
    /// The HTTP request of each exchange's request (0: none recorded).
    req_of: Vec<u32>,
    /// The session is legacy HTTP+SSE: every server message came on one stream.
    legacy: bool,
    /// Client exchanges opened and not closed yet, oldest first.
    open_client: Vec<u32>,
    /// Server notifications waiting for the result they precede (see [`Deferred`]).
    deferred: Vec<Deferred>,
    /// The client exchange each server→client request was sent within, so a server
    /// message about that request (the server cancelling it) goes with that call.
    parent_of: HashMap<u32, u32>,
}

/// A server notification that came over stdio while several client calls were open.
/// Nothing in it says which call it belongs to, and it is replayed before the result it
/// preceded in the recording: the first of those calls to be answered. It waits for that
/// answer; a notification none of them answers goes with the most recently opened one.
struct Deferred {
    /// The calls open when it came.
    candidates: Vec<u32>,
    /// The exchange it goes with when none of them is answered.
    fallback: u32,
    item: Item,
}

/// A recorded session and the tape it feeds (`None`: not selected).
struct SessionSlot {
    segment: u64,
    name: Option<String>,
    tape: Option<u32>,
}

pub(super) struct Indexer {
    selection: Selection,
    pub(super) normalizer: Normalizer,
    pub(super) updates: Vec<(u32, Update)>,
    /// The whole trace's facts (lines, torn, error).
    pub(super) end: IndexEnd,
    segment: u64,
    segment_meta: Option<Meta>,
    sessions: Vec<SessionSlot>,
    /// The slot of the last line's session (most lines follow one of their session).
    last_slot: Option<usize>,
    /// Sessions with an MCP session id (or none at all), numbered in order.
    numbered: usize,
    tapes: Vec<TapeIndex>,
}

impl Indexer {
    pub(super) fn new(spec: &IndexSpec) -> Indexer {
        Indexer {
            selection: spec.selection,
            normalizer: Normalizer::new().with_ignore(spec.ignore.clone()),
            updates: Vec::new(),
            end: IndexEnd::default(),
            segment: 0,
            segment_meta: None,
            sessions: Vec::new(),
            last_slot: None,
            numbered: 0,
            tapes: Vec::new(),
        }
    }

    fn warn(&mut self, msg: String) {
        let tag = match self.selection {
            Selection::One(_) => 0,
            Selection::All => WHOLE,
        };
        self.updates.push((tag, Update::Warning(msg)));
    }

    /// The last updates: each tape's [`Update::Done`] (one, tag 0, for
    /// [`Selection::One`]; per tape and then tagged [`WHOLE`] for [`Selection::All`]).
    pub(super) fn finish(&mut self) -> Vec<(u32, Update)> {
        for tape in 0..self.tapes.len() {
            for d in std::mem::take(&mut self.tapes[tape].deferred) {
                self.push(
                    tape as u32,
                    Update::Attached {
                        exchange: d.fallback,
                        item: d.item,
                    },
                );
            }
        }
        let mut last = std::mem::take(&mut self.updates);
        self.end.sessions = self.numbered;
        match self.selection {
            Selection::One(_) => {
                let mut end = self.end.clone();
                if let Some(t) = self.tapes.first() {
                    end.found = t.messages > 0;
                    end.messages = t.messages;
                    end.ended = t.ended;
                }
                last.push((0, Update::Done(end)));
            }
            Selection::All => {
                for (n, t) in self.tapes.iter().enumerate() {
                    let end = IndexEnd {
                        found: t.messages > 0,
                        messages: t.messages,
                        ended: t.ended,
                        ..self.end.clone()
                    };
                    last.push((n as u32, Update::Done(end)));
                }
                let mut whole = self.end.clone();
                whole.found = self.tapes.iter().any(|t| t.messages > 0);
                whole.messages = self.tapes.iter().map(|t| t.messages).sum();
                last.push((WHOLE, Update::Done(whole)));
            }
        }
        last
    }

    pub(super) fn line(
        &mut self,
        bytes: &[u8],
        terminated: bool,
        loc: LineLoc,
        place: &dyn Fn() -> String,
    ) {
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
                    let via = fast.http.as_ref().map(HttpMember::via).unwrap_or_default();
                    return self.message_line(dir, session, t, scanned, fast.splice, loc, via);
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
                self.last_slot = None;
            }
            Line::End(_) => {
                let seg = self.segment;
                for t in self.tapes.iter_mut().filter(|t| t.messages > 0) {
                    if t.segment == seg {
                        t.ended = true;
                    }
                }
            }
            Line::Message(v) => {
                let session = v.session.as_deref();
                let Some(raw) = v.raw_str() else {
                    if self.tape_of(session).is_some() {
                        self.warn(format!("{}: message line without `raw` skipped", place()));
                    }
                    return;
                };
                let dir = v.dir().unwrap_or(Dir::In);
                let scanned = self.normalizer.scan(raw);
                let via = HttpMember::from_raw(v.http)
                    .map(|h| h.via())
                    .unwrap_or_default();
                let t = v.t.as_deref();
                self.message_line(dir, session, t, scanned, None, loc, via);
            }
            Line::Event(v) => self.event(&v, loc),
            _ => {}
        }
    }

    /// The tape a session's lines feed, numbering the session on first sight.
    fn tape_of(&mut self, session: Option<&str>) -> Option<u32> {
        if let Some(i) = self.last_slot {
            let s = &self.sessions[i];
            if s.segment == self.segment && s.name.as_deref() == session {
                return s.tape;
            }
        }
        let seg = self.segment;
        let found = self
            .sessions
            .iter()
            .position(|s| s.segment == seg && s.name.as_deref() == session);
        let i = match found {
            Some(i) => i,
            None => {
                let pooled = session.is_some_and(is_connection_key);
                let tape = if pooled {
                    Some(0)
                } else {
                    self.numbered += 1;
                    match self.selection {
                        Selection::One(n) => (self.numbered == n.max(1)).then_some(0),
                        Selection::All => Some(self.numbered as u32),
                    }
                };
                self.sessions.push(SessionSlot {
                    segment: seg,
                    name: session.map(str::to_owned),
                    tape,
                });
                self.sessions.len() - 1
            }
        };
        self.last_slot = Some(i);
        self.sessions[i].tape
    }

    /// The tape's state, created on first use.
    fn tape(&mut self, n: u32) -> &mut TapeIndex {
        let i = n as usize;
        if self.tapes.len() <= i {
            self.tapes.resize_with(i + 1, TapeIndex::default);
        }
        &mut self.tapes[i]
    }

    fn push(&mut self, tape: u32, u: Update) {
        self.updates.push((tape, u));
    }

    /// A `reel.http` or `reel.sse` record: facts of its session's HTTP exchanges.
    fn event(&mut self, v: &reel_trace::line::MessageView<'_>, loc: LineLoc) {
        let kind = v.kind.as_deref().unwrap_or_default();
        if kind != kinds::HTTP && kind != kinds::SSE {
            return;
        }
        let Some(http) = HttpMember::from_raw(v.http) else {
            return;
        };
        let Some(tape) = self.tape_of(v.session.as_deref()) else {
            return;
        };
        let t = millis(v.t.as_deref());
        if kind == kinds::SSE {
            self.sse_record(tape, v, &http, loc, t);
        } else {
            self.http_record(tape, &http, loc, t);
        }
    }

    /// A `reel.sse` record: the endpoint a legacy session's stream announced, or an
    /// event that carried no message on a request's stream.
    fn sse_record(
        &mut self,
        tape: u32,
        v: &reel_trace::line::MessageView<'_>,
        http: &HttpMember<'_>,
        loc: LineLoc,
        t: i64,
    ) {
        let via = http.via();
        if http.sse_event() == Some("endpoint") {
            let path = v.text.as_deref().unwrap_or_default();
            let path = path.split('?').next().unwrap_or_default().to_owned();
            self.tape(tape).legacy = true;
            self.push(tape, Update::Http(HttpFact::Endpoint { path }));
            return;
        }
        // A priming event or a lone `retry` on a request's stream: part of its
        // exchange, sent at its place.
        let Some(&ex) = self.tape(tape).carried.get(u64::from(via.req)) else {
            return;
        };
        let seq = self.next_seq(tape);
        let item = Item {
            at: loc,
            seq,
            t,
            kind: ItemKind::Event,
            via,
        };
        self.push(tape, Update::Attached { exchange: ex, item });
    }

    /// A `reel.http` record: a request's stream the client left, the status of a GET
    /// or DELETE, or an error status that answered a POST without a message.
    fn http_record(&mut self, tape: u32, http: &HttpMember<'_>, loc: LineLoc, t: i64) {
        let via = http.via();
        if http.method.as_deref() == Some("POST") && http.end.as_deref() == Some("client") {
            // The client left a request's stream before the answer: as a cancellation,
            // the recorded server never answered it.
            if let Some(ex) = self.tape(tape).carried.take(u64::from(via.req)) {
                self.push(tape, Update::Cancelled { exchange: ex });
            }
            return;
        }
        match http.method.as_deref() {
            Some("GET") => self.push(tape, Update::Http(HttpFact::Get { status: via.status })),
            Some("DELETE") => {
                self.push(tape, Update::Http(HttpFact::Delete { status: via.status }))
            }
            Some("POST") if via.status >= 400 => {
                // An error status whose body was no JSON-RPC message: the answer to the
                // request that exchange carried, if it carried one.
                let Some(ex) = self.tape(tape).carried.take(u64::from(via.req)) else {
                    return;
                };
                self.ensure_meta(tape);
                let seq = self.next_seq(tape);
                let via = Via {
                    status_only: true,
                    ..via
                };
                self.push(
                    tape,
                    Update::Closed {
                        exchange: ex,
                        at: loc,
                        seq,
                        t,
                        splice: None,
                        via,
                    },
                );
            }
            _ => {}
        }
    }

    /// The position of a tape's next message.
    fn next_seq(&mut self, tape: u32) -> u64 {
        let tp = self.tape(tape);
        let seq = tp.seq;
        tp.seq += 1;
        seq
    }

    fn ensure_meta(&mut self, tape: u32) {
        if !self.tape(tape).meta_sent {
            self.tape(tape).meta_sent = true;
            let meta = self.segment_meta.clone().unwrap_or_default();
            self.push(tape, Update::Meta(Box::new(meta)));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn message_line(
        &mut self,
        dir: Dir,
        session: Option<&str>,
        t: Option<&str>,
        scanned: Result<Scanned<'_>, NormalizeError>,
        splice: Option<IdSplice>,
        loc: LineLoc,
        via: Via,
    ) {
        let Some(tape) = self.tape_of(session) else {
            return;
        };
        self.ensure_meta(tape);
        let segment = self.segment;
        let tp = self.tape(tape);
        tp.segment = segment;
        let t = millis(t);
        self.message(tape, dir, session, scanned, splice, loc, t, via);
    }

    #[allow(clippy::too_many_arguments)]
    fn message(
        &mut self,
        tape: u32,
        dir: Dir,
        session: Option<&str>,
        scanned: Result<Scanned<'_>, NormalizeError>,
        splice: Option<IdSplice>,
        at: LineLoc,
        t: i64,
        via: Via,
    ) {
        let tp = self.tape(tape);
        let seq = tp.seq;
        tp.seq += 1;
        tp.messages += 1;
        let (kind, id) = scanned
            .as_ref()
            .map_or((RpcKind::Invalid, None), |s| (s.kind, s.id));
        if dir == Dir::Out {
            if let Some(ex) = tp.carried.id_less_answer(dir, kind, id, u64::from(via.req)) {
                self.push(
                    tape,
                    Update::Closed {
                        exchange: ex,
                        at,
                        seq,
                        t,
                        splice,
                        via,
                    },
                );
                return;
            }
        }
        // One scan gives the builder its facts and the matcher its keys.
        let pushed = push_facts(&mut tp.builder, session, dir, &scanned, at.line);
        let keys = scanned.ok().map(|s| (s.key, s.alt_key));
        let attached_to = self.attachment(tape, dir, &pushed, via);
        if let Some(ex) = pushed.opened {
            let tp = self.tape(tape);
            tp.req_of.push(via.req);
            if dir == Dir::In && via.req != 0 {
                tp.carried.carried(u64::from(via.req), ex as u32);
            }
            self.opened(tape, ex, dir, keys, at, seq, t, attached_to, via);
        } else if let Some(ex) = pushed.closed {
            self.closed(tape, ex, dir, splice, at, seq, t, via);
        } else if let Some(method) = self.notification_method(tape, &pushed) {
            let key = keys.map(|k| k.0);
            self.notification(tape, dir, key, &method, at, seq, t, attached_to, via);
        }
        if dir == Dir::In {
            self.tape(tape).last_in = Some(seq);
        }
    }

    /// The response of exchange `ex`: on the HTTP exchange that carried its request, or,
    /// for a server message, on another stream (the client resumed on GET).
    #[allow(clippy::too_many_arguments)]
    fn closed(
        &mut self,
        tape: u32,
        ex: usize,
        dir: Dir,
        splice: Option<IdSplice>,
        at: LineLoc,
        seq: u64,
        t: i64,
        mut via: Via,
    ) {
        self.answered(tape, ex as u32);
        let tp = self.tape(tape);
        if let Some(&req) = tp.req_of.get(ex) {
            tp.carried.answered(u64::from(req), &(ex as u32));
            via.other_stream =
                dir == Dir::Out && !tp.legacy && req != 0 && via.req != 0 && via.req != req;
        }
        self.push(
            tape,
            Update::Closed {
                exchange: ex as u32,
                at,
                seq,
                t,
                splice,
                via,
            },
        );
    }

    /// The client exchange a message belongs to: the builder's choice (the most recent
    /// open one, or the one its progress token names), corrected by the HTTP exchange
    /// that carried a server message when the recording says.
    fn attachment(&mut self, tape: u32, dir: Dir, pushed: &Pushed, via: Via) -> Option<usize> {
        let tp = self.tape(tape);
        let chosen = pushed.attached_to.and_then(|p| {
            if tp.builder.exchanges()[p].request_dir == Dir::In {
                Some(p)
            } else if dir == Dir::Out {
                tp.parent_of.get(&(p as u32)).map(|&c| c as usize)
            } else {
                None
            }
        });
        if dir != Dir::Out || via.req == 0 {
            return chosen;
        }
        if let Some(&ex) = tp.carried.get(u64::from(via.req)) {
            return Some(ex as usize);
        }
        if tp.legacy { chosen } else { None }
    }

    #[allow(clippy::too_many_arguments)]
    fn opened(
        &mut self,
        tape: u32,
        ex: usize,
        dir: Dir,
        keys: Option<(MatchKey, Option<MatchKey>)>,
        at: LineLoc,
        seq: u64,
        t: i64,
        parent: Option<usize>,
        via: Via,
    ) {
        let tp = self.tape(tape);
        let method = tp.builder.exchanges()[ex].method.clone();
        let last_in = tp.last_in;
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
        if dir == Dir::In {
            self.tape(tape).open_client.push(ex as u32);
        }
        let parent = match dir {
            Dir::Out => parent.map(|p| p as u32),
            _ => None,
        };
        if let Some(p) = parent {
            self.tape(tape).parent_of.insert(ex as u32, p);
        }
        self.push(
            tape,
            Update::Opened(Opened {
                exchange: ex as u32,
                dir,
                method,
                key,
                alt_key,
                at,
                seq,
                t,
                parent,
            }),
        );
        if dir == Dir::Out {
            let item = Item {
                at,
                seq,
                t,
                kind: ItemKind::Request {
                    exchange: ex as u32,
                },
                via,
            };
            let u = match parent {
                Some(p) => Update::Attached { exchange: p, item },
                None => Update::Unsolicited {
                    anchor: last_in,
                    item,
                },
            };
            self.push(tape, u);
        }
    }

    /// The method of a message the builder took as a notification (it read the
    /// envelope already; no second parse).
    fn notification_method(&mut self, tape: u32, pushed: &Pushed) -> Option<String> {
        let b = &self.tape(tape).builder;
        if pushed.unsolicited {
            let u = b.unsolicited_messages().last()?;
            return (u.kind == RpcKind::Notification).then(|| u.method.clone().unwrap_or_default());
        }
        let a = b.exchanges()[pushed.attached_to?].attached.last()?;
        (!a.is_request).then(|| a.method.clone().unwrap_or_default())
    }

    #[allow(clippy::too_many_arguments)]
    fn notification(
        &mut self,
        tape: u32,
        dir: Dir,
        key: Option<MatchKey>,
        method: &str,
        at: LineLoc,
        seq: u64,
        t: i64,
        attached_to: Option<usize>,
        via: Via,
    ) {
        if dir == Dir::In {
            if let Some(key) = key {
                self.push(tape, Update::ClientNotification { seq, key });
            }
            let b = &self.tape(tape).builder;
            let cancelled = attached_to.filter(|&ex| {
                let e = &b.exchanges()[ex];
                method == methods::CANCELLED && e.cancelled && e.request_dir == Dir::In
            });
            if let Some(ex) = cancelled {
                self.push(
                    tape,
                    Update::Cancelled {
                        exchange: ex as u32,
                    },
                );
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
            via,
        };
        let tp = self.tape(tape);
        let last_in = tp.last_in;
        // Progress names its call by token, and a server's cancel names its own request
        // (which belongs to the call it was sent within): neither waits.
        let names_its_call = matches!(item.kind, ItemKind::Notification { progress: true })
            || method == methods::CANCELLED;
        if let Some(ex) = attached_to {
            if via.req == 0 && !names_its_call && tp.open_client.len() > 1 {
                tp.deferred.push(Deferred {
                    candidates: tp.open_client.clone(),
                    fallback: ex as u32,
                    item,
                });
                return;
            }
        }
        let u = match attached_to {
            Some(ex) => Update::Attached {
                exchange: ex as u32,
                item,
            },
            None => Update::Unsolicited {
                anchor: last_in,
                item,
            },
        };
        self.push(tape, u);
    }

    /// Client exchange `ex` got its answer: the notifications waiting for the first
    /// answer among calls including it go with it, ahead of its `Closed`.
    fn answered(&mut self, tape: u32, ex: u32) {
        let tp = self.tape(tape);
        tp.open_client.retain(|&e| e != ex);
        if tp.deferred.is_empty() {
            return;
        }
        let (now, wait): (Vec<Deferred>, Vec<Deferred>) = std::mem::take(&mut tp.deferred)
            .into_iter()
            .partition(|d| d.candidates.contains(&ex));
        tp.deferred = wait;
        for d in now {
            self.push(
                tape,
                Update::Attached {
                    exchange: ex,
                    item: d.item,
                },
            );
        }
    }
}

/// Hands the builder the facts of a message from its one scan: its envelope and the
/// ids it names, or what kind of thing it is when it is no message.
fn push_facts(
    builder: &mut ExchangeBuilder,
    session: Option<&str>,
    dir: Dir,
    scanned: &Result<Scanned<'_>, NormalizeError>,
    line: u64,
) -> Pushed {
    match scanned {
        Ok(s) => {
            let facts = s.facts();
            builder.push_facts(session, dir, Ok(&facts), line)
        }
        Err(NormalizeError::NotObject { batch: true }) => {
            builder.push_facts(session, dir, Err(RpcKind::Batch), line)
        }
        Err(_) => builder.push_facts(session, dir, Err(RpcKind::Invalid), line),
    }
}

/// A recorded time in milliseconds since the epoch (0 when the line has none).
fn millis(t: Option<&str>) -> i64 {
    t.and_then(Timestamp::parse).map_or(0, Timestamp::millis)
}
