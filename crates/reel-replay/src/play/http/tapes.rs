//! The tapes of an HTTP replay: one index pass over the trace feeds every recorded
//! session's tape ([`crate::tape::index_tapes`], [`crate::tape::Selection::All`]), and
//! each tape a live session (or the session-less traffic) needs gets its own tape
//! server — the stdio server's state machine behind a lock
//! ([`crate::play::SharedTape`]), driven by the threads that bring it events.
//!
//! A tape's server starts when live traffic first needs it; the updates the index
//! produced before that wait in the tape's backlog, so the server sees its tape from the
//! start. What the HTTP layer must know before it can answer (is the next recorded
//! session there yet, is it legacy HTTP+SSE, how were its GET and DELETE answered) is
//! kept here as [`Facts`], and waiters are woken as the index goes on.
//!
//! Invariants: live sessions claim recorded sessions in order (tape 1, 2, …), each at
//! most once; every started tape server gets exactly one [`Update::Done`], its updates
//! in index order; at the end every started server is told its input ended and
//! finished.

use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use reel_mcp::jsonrpc::methods;
use reel_mcp::normalize::Normalizer;
use reel_trace::Dir;
use tokio::sync::Notify;

use super::diag::{Diag, LineDiag};
use super::out::{HttpOut, LiveSession, Routes, TapeLink, lock};
use crate::play::report::Summary;
use crate::play::{Event, PlayError, PlayOptions, RecordTo, ReplayRecording, SharedTape};
use crate::tape::TapeFiles;
use crate::tape::{HttpFact, IndexEnd, IndexSpec, Selection, Update, WHOLE};

/// What the recording shows of a session beyond its messages.
#[derive(Clone, Debug, Default)]
pub(super) struct Facts {
    /// The status its GET on the MCP endpoint got (200: a server stream, 405: none).
    pub(super) get: Option<u16>,
    /// The status its DELETE got.
    pub(super) delete: Option<u16>,
    /// Legacy HTTP+SSE: the endpoint path its stream announced.
    pub(super) endpoint: Option<String>,
    /// It holds an `initialize` from the client.
    pub(super) initialize: bool,
    /// It holds a `server/discover` from the client.
    pub(super) discover: bool,
    /// Client requests in it.
    pub(super) requests: u64,
}

/// A tape served over HTTP.
pub(super) type Tape = SharedTape<HttpOut, LineDiag>;

#[derive(Default)]
struct Slot {
    /// The index reached its first message.
    ready: bool,
    facts: Facts,
    backlog: Vec<Update>,
    /// Its `Done` went to the server or the backlog.
    done: bool,
    server: Option<Arc<Tape>>,
    /// A server was started for it.
    served: bool,
    /// A live session is answered from it.
    bound: bool,
    link: Arc<TapeLink>,
}

#[derive(Default)]
struct Inner {
    slots: Vec<Slot>,
    complete: bool,
    /// The next recorded session a new live session is answered from.
    next_claim: u32,
    /// `--pace` timer threads, joined at the end.
    tickers: Vec<std::thread::JoinHandle<()>>,
}

impl Inner {
    fn slot(&mut self, n: u32) -> &mut Slot {
        let i = n as usize;
        if self.slots.len() <= i {
            self.slots.resize_with(i + 1, Slot::default);
        }
        &mut self.slots[i]
    }
}

/// The tapes, their facts and their servers.
pub(super) struct Tapes {
    inner: Mutex<Inner>,
    changed: Notify,
    opts: PlayOptions,
    /// The trace, opened once for every session's tape server.
    files: Arc<TapeFiles>,
    norm: Normalizer,
    diag: Diag,
    record: Mutex<Option<Arc<Mutex<ReplayRecording>>>>,
    routes: Arc<Routes>,
}

impl Tapes {
    pub(super) fn new(
        opts: PlayOptions,
        files: Arc<TapeFiles>,
        norm: Normalizer,
        diag: Diag,
        record: Option<Arc<Mutex<ReplayRecording>>>,
        routes: Arc<Routes>,
    ) -> Arc<Tapes> {
        Arc::new(Tapes {
            inner: Mutex::new(Inner {
                next_claim: 1,
                ..Inner::default()
            }),
            changed: Notify::new(),
            opts,
            files,
            norm,
            diag,
            record: Mutex::new(record),
            routes,
        })
    }

    /// Starts the index thread.
    pub(super) fn start_index(self: &Arc<Tapes>) -> std::io::Result<()> {
        let me = Arc::clone(self);
        let path = self.opts.trace.clone();
        let spec = IndexSpec {
            selection: Selection::All,
            ignore: self.opts.ignore.clone(),
        };
        std::thread::Builder::new()
            .name("reel-play-index".into())
            .spawn(move || {
                crate::tape::index_tapes(&path, &spec, |batch| {
                    me.dispatch(batch);
                    true
                });
            })
            .map(|_| ())
    }

    /// Hands a batch of the index to the tapes: facts noted, updates to running
    /// servers, the rest kept.
    fn dispatch(&self, batch: Vec<(u32, Update)>) {
        let mut said = Vec::new();
        let mut deliveries: Vec<(Arc<Tape>, Vec<Update>)> = Vec::new();
        {
            let mut inner = lock(&self.inner);
            let mut per_tape: Vec<(u32, Vec<Update>)> = Vec::new();
            for (tag, u) in batch {
                if tag == WHOLE {
                    match u {
                        Update::Warning(w) => said.push(format!("reel play: tape: {w}")),
                        Update::Done(end) => {
                            if let Some(e) = &end.error {
                                said.push(format!("reel play: tape: reading stopped early: {e}"));
                            }
                            inner.complete = true;
                        }
                        _ => {}
                    }
                    continue;
                }
                let slot = inner.slot(tag);
                note(slot, &u);
                match per_tape.last_mut() {
                    Some((t, v)) if *t == tag => v.push(u),
                    _ => per_tape.push((tag, vec![u])),
                }
            }
            for (tag, updates) in per_tape {
                let slot = inner.slot(tag);
                match &slot.server {
                    Some(t) => deliveries.push((Arc::clone(t), updates)),
                    None => slot.backlog.extend(updates),
                }
            }
            if inner.complete {
                // Servers of tapes the recording does not have still need their end.
                for slot in &mut inner.slots {
                    if !slot.done {
                        slot.done = true;
                        let done = Update::Done(missing_tape());
                        match &slot.server {
                            Some(t) => deliveries.push((Arc::clone(t), vec![done])),
                            None => slot.backlog.push(done),
                        }
                    }
                }
            }
        }
        // Outside the lock: a tape server may take a while over a batch.
        for (tape, updates) in deliveries {
            tape.send(Event::Index(updates));
        }
        for s in said {
            let _ = writeln!(LineDiag::new(self.diag.clone()), "{s}");
        }
        self.changed.notify_waiters();
    }

    /// Waits until `check` gives an answer (it sees the state under the lock; `None`:
    /// not yet). Woken as the index goes on.
    async fn wait_for<T>(&self, mut check: impl FnMut(&mut Inner) -> Option<T>) -> T {
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(t) = check(&mut lock(&self.inner)) {
                return t;
            }
            notified.await;
        }
    }

    /// Claims the next recorded session for a new live session: its tape, once the
    /// index reached it; `None` when the recording holds no more.
    pub(super) async fn claim(&self) -> Option<u32> {
        self.wait_for(|inner| {
            let k = inner.next_claim;
            let complete = inner.complete;
            let slot = inner.slot(k);
            if slot.ready {
                slot.bound = true;
                inner.next_claim += 1;
                Some(Some(k))
            } else if complete {
                Some(None)
            } else {
                None
            }
        })
        .await
    }

    /// Claims a tape beyond the recording's sessions (a live session the recording has
    /// no counterpart for: everything it asks is a miss).
    pub(super) fn claim_missing(&self) -> u32 {
        let mut inner = lock(&self.inner);
        let k = inner.next_claim;
        inner.next_claim += 1;
        inner.slot(k).bound = true;
        k
    }

    /// The next recorded session if it is legacy HTTP+SSE, claimed, with its endpoint
    /// path; `None` (nothing claimed) when it is not, or there is none.
    pub(super) async fn claim_legacy(&self) -> Option<(u32, String)> {
        self.wait_for(|inner| {
            let k = inner.next_claim;
            let complete = inner.complete;
            let slot = inner.slot(k);
            if slot.ready {
                let found = slot.facts.endpoint.clone().map(|p| (k, p));
                if found.is_some() {
                    slot.bound = true;
                    inner.next_claim += 1;
                }
                Some(found)
            } else if complete {
                Some(None)
            } else {
                None
            }
        })
        .await
    }

    /// The tape the next live session would be answered from (not claimed): where a
    /// stdio recording answers what a client sends before it opens a session.
    pub(super) fn next_unclaimed(&self) -> u32 {
        lock(&self.inner).next_claim
    }

    /// Waits until the index has read tape `k` far enough to know its facts (or the
    /// whole trace), then gives them.
    pub(super) async fn facts(&self, k: u32) -> Facts {
        self.wait_for(|inner| {
            let complete = inner.complete;
            let slot = inner.slot(k);
            (slot.ready || complete).then(|| slot.facts.clone())
        })
        .await
    }

    /// The facts known so far of tape `k`.
    pub(super) fn facts_now(&self, k: u32) -> Facts {
        lock(&self.inner).slot(k).facts.clone()
    }

    /// Links tape `k` to its live session (its server stream).
    pub(super) fn bind(&self, k: u32, s: &Arc<LiveSession>) {
        let link = Arc::clone(&lock(&self.inner).slot(k).link);
        link.bind(s);
    }

    /// Tape `k`'s server, started if it is not running.
    pub(super) fn server(&self, k: u32, session: Option<&str>) -> Result<Arc<Tape>, PlayError> {
        let mut inner = lock(&self.inner);
        let complete = inner.complete;
        let slot = inner.slot(k);
        if let Some(t) = &slot.server {
            return Ok(Arc::clone(t));
        }
        let mut backlog = std::mem::take(&mut slot.backlog);
        if complete && !slot.done {
            slot.done = true;
            backlog.push(Update::Done(missing_tape()));
        }
        let client = HttpOut::new(Arc::clone(&self.routes), Arc::clone(&slot.link));
        let mut opts = self.opts.clone();
        opts.session = k as usize;
        let record = lock(&self.record).clone().map(|r| {
            let label = session.map_or_else(|| format!("reel:tape-{k}"), str::to_owned);
            RecordTo::new(r, Some(label))
        });
        let diag = LineDiag::new(self.diag.clone());
        let tape = Arc::new(SharedTape::new(
            opts,
            self.norm.clone(),
            client,
            diag,
            Arc::clone(&self.files),
            record,
            backlog,
        ));
        slot.server = Some(Arc::clone(&tape));
        slot.served = true;
        if self.opts.pace.is_some() {
            let t = Arc::clone(&tape);
            let ticker = std::thread::Builder::new()
                .name(format!("reel-play-pace-{k}"))
                .spawn(move || t.tick())
                .map_err(PlayError::Output)?;
            inner.tickers.push(ticker);
        }
        Ok(tape)
    }

    /// Ends tape `k`'s input (its session was deleted): what it can still answer
    /// without the client, it does; its summary is made at the end.
    pub(super) fn end(&self, k: u32) {
        let tape = lock(&self.inner).slot(k).server.clone();
        if let Some(t) = tape {
            t.send(Event::InputEnd);
        }
    }

    /// Ends every tape server and adds up what they did; recorded sessions no live one
    /// was answered from count as unreplayed, their requests as unused.
    pub(super) fn finish(&self) -> Result<Summary, PlayError> {
        // The replay's trace is ended by its owner once every server let go of it.
        lock(&self.record).take();
        let tapes: Vec<Arc<Tape>> = lock(&self.inner)
            .slots
            .iter()
            .filter_map(|s| s.server.clone())
            .collect();
        let results: Vec<Summary> = tapes.iter().map(|t| t.finish()).collect();
        drop(tapes);
        let tickers = std::mem::take(&mut lock(&self.inner).tickers);
        for t in tickers {
            let _ = t.join();
        }
        let inner = lock(&self.inner);
        let mut total = Summary::default();
        for r in results {
            total.absorb(r);
        }
        for (k, slot) in inner.slots.iter().enumerate() {
            if slot.ready && !slot.served {
                // Never asked for: all of it is unused.
                total.unused_total += slot.facts.requests;
                if k > 0 {
                    total.unused_unreplayed += slot.facts.requests;
                    total.sessions_unreplayed += 1;
                }
            }
            if k > 0 && slot.bound {
                total.sessions += 1;
            }
            total.unsent_unsolicited += slot.link.dropped.load(Ordering::Relaxed);
        }
        Ok(total)
    }
}

/// Notes what the HTTP layer needs to know from an update.
fn note(slot: &mut Slot, u: &Update) {
    match u {
        Update::Meta(_) => slot.ready = true,
        Update::Opened(o) if o.dir == Dir::In => {
            slot.facts.requests += 1;
            if o.method == methods::INITIALIZE {
                slot.facts.initialize = true;
            }
            if o.method == methods::SERVER_DISCOVER {
                slot.facts.discover = true;
            }
        }
        Update::Http(HttpFact::Get { status }) => {
            slot.facts.get.get_or_insert(*status);
        }
        Update::Http(HttpFact::Delete { status }) => {
            slot.facts.delete.get_or_insert(*status);
        }
        Update::Http(HttpFact::Endpoint { path }) => slot.facts.endpoint = Some(path.clone()),
        Update::Done(_) => slot.done = true,
        _ => {}
    }
}

/// The end of a tape the recording does not have.
fn missing_tape() -> IndexEnd {
    IndexEnd {
        found: false,
        ..IndexEnd::default()
    }
}
