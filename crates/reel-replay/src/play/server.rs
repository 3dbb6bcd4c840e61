//! The tape server's state: one [`Server`] answers one client from one recorded
//! session. This file holds its parts and the event loop; the other files of `play`
//! each add the methods of one concern (`incoming`, `jobs`, `misses`, `handshake`,
//! `long_lived`). Those files are part of the server, so its parts are open to them
//! (`pub(super)`) and to nothing outside `play`.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::io::{self, Write};
use std::sync::Arc;
use std::time::Instant;

use reel_mcp::jsonrpc::RpcId;
use reel_mcp::normalize::{Normalizer, canonical};
use reel_trace::line::{Line, parse_line};
use serde_json::Value;

use super::feed::Feed;
use super::input::{Event, Incoming, InputLine};
use super::job::{Job, JobState, ServerRequest};
use super::options::{PlayError, PlayOptions, WARNINGS_SHOWN};
use super::out::{ClientOut, Dest, Route};
use super::record::RecordTo;
use super::report::{self, Summary, Unused};
use crate::live::{Live, LiveOutput};
use crate::splice;
use crate::tape::matcher::Tape;
use crate::tape::{LineLoc, TapeFiles, Update};

/// One tape server: the state machine that answers one client from one recorded
/// session. Its parts, each owned by the concern named on it.
pub(super) struct Server<C: ClientOut, D: Write> {
    pub(super) opts: PlayOptions,
    pub(super) norm: Normalizer,
    pub(super) src: Source,
    pub(super) client: Client<C>,
    pub(super) calls: Calls,
    pub(super) asks: Asks,
    pub(super) live: LiveSide,
    pub(super) recorder: Option<RecordTo>,
    pub(super) diag: D,
    pub(super) summary: Summary,
    /// The protocol versions the recorded server answered with, once looked up.
    pub(super) supported_versions: Option<Vec<String>>,
}

/// The recorded session: its index, the files it points into, and the scratch buffer
/// re-reads of them go through.
pub(super) struct Source {
    pub(super) tape: Tape,
    /// Shared by every tape server of one replay: over HTTP one open of the trace
    /// serves all sessions, however many come and go.
    pub(super) files: Arc<TapeFiles>,
    pub(super) scratch: Vec<u8>,
    pub(super) warnings_seen: usize,
    /// Over HTTP: which tape this server answers from (0: the session-less traffic).
    pub(super) session: Option<u32>,
}

/// The client: where answers go, whether it still reads them, whether its input
/// ended, and the input that waits for the tape's meta line.
pub(super) struct Client<C> {
    pub(super) out: C,
    pub(super) gone: bool,
    pub(super) input_closed: bool,
    pub(super) backlog: VecDeque<InputLine>,
}

/// The client's calls in flight: a job per recorded exchange being replayed
/// (`jobs.rs`), the requests the index has not reached yet, and the `--pace` timers.
#[derive(Default)]
pub(super) struct Calls {
    pub(super) jobs: HashMap<u64, Job>,
    pub(super) next: u64,
    pub(super) by_live_id: HashMap<RpcId, u64>,
    pub(super) parked: VecDeque<Incoming>,
    pub(super) timers: BinaryHeap<Reverse<(Instant, u64)>>,
    /// The highest recorded position a job has started from: where unsolicited
    /// messages may go out.
    pub(super) hw: Option<u64>,
    /// Long-lived requests taken: the recorded id (JSON text) → the live one, which
    /// restamps what the tape sends on their streams (`play/long_lived.rs`).
    pub(super) subscriptions: HashMap<String, String>,
}

/// Requests the tape sends the client (sampling, roots, elicitation) and the client
/// has not answered yet.
#[derive(Default)]
pub(super) struct Asks {
    pub(super) open: HashMap<RpcId, ServerRequest>,
    /// The recorded id (JSON text) of each server→client request sent, and the fresh
    /// id it went out with: a recorded server-side `notifications/cancelled` names the
    /// recorded one.
    pub(super) ids: HashMap<String, String>,
    pub(super) next_id: u64,
}

/// `--subset`'s live server, if any.
pub(super) struct LiveSide {
    pub(super) server: Option<Live>,
    pub(super) done: bool,
    /// Requests forwarded to the live server and not answered yet (id → id text,
    /// route): answered with an error if the live server ends first.
    pub(super) forwarded: HashMap<RpcId, (String, u64)>,
}

impl<C: ClientOut, D: Write> Server<C, D> {
    pub(super) fn new(
        opts: PlayOptions,
        files: Arc<TapeFiles>,
        norm: Normalizer,
        client: C,
        diag: D,
        recorder: Option<RecordTo>,
        live: Option<Live>,
    ) -> Server<C, D> {
        Server {
            opts,
            norm,
            src: Source {
                tape: Tape::new(),
                files,
                scratch: Vec::new(),
                warnings_seen: 0,
                session: None,
            },
            client: Client {
                out: client,
                gone: false,
                input_closed: false,
                backlog: VecDeque::new(),
            },
            calls: Calls::default(),
            asks: Asks::default(),
            live: LiveSide {
                server: live,
                done: false,
                forwarded: HashMap::new(),
            },
            recorder,
            diag,
            summary: Summary::default(),
            supported_versions: None,
        }
    }
}

impl<C: ClientOut, D: Write> Server<C, D> {
    pub(super) fn run(&mut self, feed: &mut Feed) -> Result<(), PlayError> {
        let mut events = Vec::new();
        loop {
            let live_stop = self.live_stop_deadline();
            let timeout = self
                .calls
                .timers
                .peek()
                .map(|Reverse((due, _))| *due)
                .into_iter()
                .chain(live_stop)
                .min()
                .map(|due| due.saturating_duration_since(Instant::now()));
            let input_only =
                self.src.tape.complete() && self.live.server.is_none() && timeout.is_none();
            if !feed.wait(timeout, input_only, &mut events) {
                break;
            }
            // Everything that is ready is handled before one flush, so a pipelined
            // client gets its answers in few writes.
            for ev in events.drain(..) {
                self.handle(ev);
            }
            self.settle()?;
            if self.done() {
                break;
            }
        }
        Ok(())
    }

    /// After events were handled: timers that are due fire, unsolicited messages whose
    /// place was reached go out, and what was written is flushed.
    pub(super) fn settle(&mut self) -> Result<(), PlayError> {
        self.fire_timers();
        self.advance_long_lived();
        self.pump_unsolicited();
        if !self.client.gone {
            if let Err(e) = self.client.out.flush() {
                self.client_error(e)?;
            }
        }
        Ok(())
    }

    pub(super) fn ready(&self) -> bool {
        self.src.tape.meta().is_some() || self.src.tape.complete()
    }

    pub(super) fn drain_backlog(&mut self) {
        while self.ready() {
            let Some(l) = self.client.backlog.pop_front() else {
                break;
            };
            self.input_line(l);
        }
    }

    /// While the live server is stopping (its input closed, its output still open):
    /// when to stop waiting for it.
    pub(super) fn live_stop_deadline(&self) -> Option<Instant> {
        match &self.live.server {
            Some(l) if !self.live.done => l.stop_deadline(),
            _ => None,
        }
    }

    pub(super) fn done(&self) -> bool {
        let live_done = self.live.server.is_none()
            || self.live.done
            || self
                .live_stop_deadline()
                .is_some_and(|d| d <= Instant::now());
        (self.client.input_closed || self.client.gone) && self.src.tape.complete() && live_done
    }

    pub(super) fn client_error(&mut self, e: io::Error) -> Result<(), PlayError> {
        if e.kind() == io::ErrorKind::BrokenPipe {
            self.client.gone = true;
            self.client.input_closed = true;
            if let Some(l) = self.live.server.as_mut() {
                l.close_input();
            }
            Ok(())
        } else {
            Err(PlayError::Output(e))
        }
    }

    pub(super) fn handle(&mut self, ev: Event) {
        match ev {
            Event::Input(lines) => {
                // Until the tape's meta line (its redaction rules) is read, input waits
                // in arrival order, so nothing overtakes the handshake.
                if self.client.backlog.is_empty() && self.ready() {
                    for l in lines {
                        self.input_line(l);
                    }
                } else {
                    self.client.backlog.extend(lines);
                }
            }
            Event::InputEnd => self.input_end(),
            Event::Stop(sig, taken) => {
                taken.store(true, std::sync::atomic::Ordering::Release);
                let _ = writeln!(
                    self.diag,
                    "reel play: {} received: ending as at the end of the client's input",
                    reel_net::process::signal_name(sig)
                );
                self.input_end();
            }
            Event::Index(batch) => self.index_batch(batch),
            Event::Live(LiveOutput::Line(l)) => self.live_line(&l),
            Event::Live(LiveOutput::Stderr(b)) => {
                let _ = self.diag.write_all(&b);
                if let Some(r) = self.recorder.as_mut() {
                    r.stderr(&b);
                }
            }
            Event::Live(LiveOutput::End) => {
                self.live.done = true;
                self.fail_forwarded();
            }
            Event::Gone(route) => self.route_gone(route),
        }
    }

    // ---- output ------------------------------------------------------------------

    pub(super) fn send(&mut self, dest: Dest, line: &str, origin: &str) {
        if let Some(r) = self.recorder.as_mut() {
            r.out_line(line, origin);
        }
        self.send_parts(dest, &[line.as_bytes()]);
    }

    /// Writes one message from parts (bytes the index validated as UTF-8 JSON), with
    /// no copy in between; only when nothing is being recorded.
    pub(super) fn send_parts(&mut self, dest: Dest, parts: &[&[u8]]) {
        if self.client.gone {
            return;
        }
        if let Err(e) = self.client.out.message(dest, parts) {
            if self.client_error(e).is_err() {
                self.client.gone = true;
            }
        }
    }

    pub(super) fn send_error(&mut self, dest: Dest, id_raw: &str, error: &Value) {
        let text = splice::response(id_raw, "error", &error.to_string());
        self.send(dest, &text, "tape");
    }

    pub(super) fn say(&mut self, text: &str) {
        let _ = self.diag.write_all(text.as_bytes());
        if !text.ends_with('\n') {
            let _ = self.diag.write_all(b"\n");
        }
    }

    /// Reads a recorded line and hands its `raw` to `f`.
    pub(super) fn with_raw<T>(&mut self, at: LineLoc, f: impl FnOnce(&str) -> T) -> Option<T> {
        let mut buf = std::mem::take(&mut self.src.scratch);
        let out = match self.src.files.read(at, &mut buf) {
            Ok(()) => match crate::tape::LineRaw::parse(&buf).and_then(|l| l.raw) {
                Some(raw) => Some(f(raw.get())),
                // A line the index took through the tolerant reader.
                None => match parse_line(&buf) {
                    Ok(Line::Message(v)) => v.raw_str().map(f),
                    _ => None,
                },
            },
            Err(_) => None,
        };
        self.src.scratch = buf;
        if out.is_none() {
            let place = self.src.files.location(at);
            self.say(&format!(
                "reel play: warning: cannot re-read {place} (was the trace changed while playing?)"
            ));
        }
        out
    }

    /// The body a `reel.http` record kept of a response that was no JSON-RPC message:
    /// its `raw` (JSON) or `text`.
    pub(super) fn with_raw_event(&mut self, at: LineLoc) -> Option<String> {
        let mut buf = std::mem::take(&mut self.src.scratch);
        let out = match self.src.files.read(at, &mut buf) {
            Ok(()) => match parse_line(&buf) {
                Ok(Line::Event(v)) => v
                    .raw
                    .map(|r| r.get().to_owned())
                    .or_else(|| v.text.map(|t| t.into_owned())),
                _ => None,
            },
            Err(_) => None,
        };
        self.src.scratch = buf;
        out
    }

    // ---- the index ---------------------------------------------------------------

    pub(super) fn index_batch(&mut self, batch: Vec<Update>) {
        for u in batch {
            if let Update::Done(end) = &u {
                self.index_done(end);
            }
            self.src.tape.apply(u);
        }
        for w in self.src.tape.take_warnings() {
            self.src.warnings_seen += 1;
            if self.src.warnings_seen <= WARNINGS_SHOWN {
                self.say(&format!("reel play: tape: {w}"));
            }
        }
        self.drain_backlog();
        self.retry_parked();
        let waiting: Vec<u64> = self
            .calls
            .jobs
            .iter()
            .filter(|(_, j)| j.state == JobState::WaitIndex)
            .map(|(&id, _)| id)
            .collect();
        for id in waiting {
            self.advance(id);
        }
        if self.client.input_closed {
            self.drain_after_input();
        }
    }

    pub(super) fn index_done(&mut self, end: &crate::tape::IndexEnd) {
        if let Some(e) = &end.error {
            self.say(&format!("reel play: tape: reading stopped early: {e}"));
        }
        if self.src.warnings_seen > WARNINGS_SHOWN {
            let more = self.src.warnings_seen - WARNINGS_SHOWN;
            self.say(&format!("reel play: tape: {more} more lines skipped"));
        }
        match (end.found, self.src.session) {
            (true, _) | (false, Some(0)) => {}
            (false, Some(k)) => self.say(&format!(
                "reel play: live session {k} has no recorded counterpart: the trace holds {} session{}; everything it asks is a miss",
                end.sessions,
                if end.sessions == 1 { "" } else { "s" },
            )),
            (false, None) => {
                // Session 1 of a trace without traffic is an empty tape, not a mistake.
                self.summary.no_such_session = self.opts.session > 1;
                self.say(&format!(
                    "reel play: the trace holds {} session{}; session {} does not exist (--session)",
                    end.sessions,
                    if end.sessions == 1 { "" } else { "s" },
                    self.opts.session
                ))
            }
        }
    }

    pub(super) fn retry_parked(&mut self) {
        let ready = self.src.tape.meta().is_some() || self.src.tape.complete();
        if self.calls.parked.is_empty() || !ready {
            return;
        }
        let mut still = VecDeque::new();
        while let Some(inc) = self.calls.parked.pop_front() {
            if self.opts.strict && !still.is_empty() {
                // Recorded order: nothing overtakes a request that waits.
                still.push_back(inc);
                continue;
            }
            if let Some(inc) = self.try_answer(inc) {
                still.push_back(inc);
            }
        }
        self.calls.parked = still;
    }

    // ---- the end -----------------------------------------------------------------

    /// Ends the replay of this tape: what is still parked is missed, and the summary
    /// says what was left unused. Gives the diagnostics writer back for the caller's
    /// last words.
    pub(super) fn finish(mut self) -> (Summary, D) {
        let _ = self.client.out.flush();
        for (_, job) in std::mem::take(&mut self.calls.jobs) {
            if job.state == JobState::Held {
                self.summary.held += 1;
            }
            if job.state == JobState::WaitPosition {
                self.summary.kept_open += 1;
            }
            self.client.out.close(Route::Reply(job.route));
        }
        for inc in std::mem::take(&mut self.calls.parked) {
            let reason = self.miss_reason(&inc);
            self.miss(inc, reason);
        }
        self.unanswered_server_requests();
        let _ = self.client.out.flush();
        let unused: Vec<u32> = self.src.tape.unused().collect();
        self.summary.unused_total = unused.len() as u64;
        for i in unused.into_iter().take(report::UNUSED_SHOWN) {
            let e = self.src.tape.exchange(i);
            let (at, method) = (e.request.at, self.src.tape.method_name(e.method).to_owned());
            let norm = self.norm.clone();
            let params = self
                .with_raw(at, |raw| norm.normalize_recorded(raw).ok())
                .flatten()
                .and_then(|v| v.get("params").map(canonical))
                .unwrap_or_default();
            self.summary.unused.push(Unused {
                method,
                location: self.src.files.location(at),
                params: report::short(&params),
            });
        }
        self.summary.unsent_unsolicited = self.src.tape.unsent_unsolicited() as u64;
        if self.live.server.is_some() && !self.live.done {
            self.say(&format!(
                "reel play: the live server did not exit within {} s of its input closing; stopping it",
                crate::live::STOP_GRACE.as_secs()
            ));
        }
        self.summary.live_exit = self.live.server.take().and_then(Live::finish);
        self.recorder = None;
        (self.summary, self.diag)
    }
}

#[cfg(test)]
mod tests;
