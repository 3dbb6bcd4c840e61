//! One tape of an HTTP replay (`reel play --listen`), served by whichever thread brings
//! it something: a request's handler, the index, a timer, the stop. The stdio server's
//! state machine sits behind a lock, so a request is matched and answered on the thread
//! that received it — no hand-off to a serving thread and back, which would cost two
//! wake-ups per request.
//!
//! Invariants: index updates are applied in the order the index produced them (the ones
//! produced before the tape was first needed are applied before anything else); every
//! event is followed by the same settling as in the stdio loop (timers, unsolicited
//! messages, flush); `finish` returns once the input has ended and the tape is indexed.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use std::cmp::Reverse;
use std::io::Write;
use std::time::Instant;

use reel_mcp::normalize::Normalizer;

use super::input::Event;
use super::options::PlayOptions;
use super::out::ClientOut;
use super::record::RecordTo;
use super::report::Summary;
use super::server::Server;
use crate::tape::{TapeFiles, Update};

/// What the lock guards.
struct State<C: ClientOut, D: Write> {
    /// `None` once finished.
    server: Option<Server<C, D>>,
    /// Index updates not applied yet.
    pending: Vec<Update>,
}

/// A tape served under a lock.
pub(crate) struct SharedTape<C: ClientOut, D: Write> {
    state: Mutex<State<C, D>>,
    changed: Condvar,
}

impl<C: ClientOut, D: Write> SharedTape<C, D> {
    /// A tape server of `opts.trace` (`opts.session` is the tape's number, 0 for the
    /// session-less traffic); `backlog`: the index updates produced so far.
    pub(crate) fn new(
        opts: PlayOptions,
        norm: Normalizer,
        client: C,
        diag: D,
        files: Arc<TapeFiles>,
        record: Option<RecordTo>,
        backlog: Vec<Update>,
    ) -> SharedTape<C, D> {
        let tape = u32::try_from(opts.session).unwrap_or(u32::MAX);
        let mut server = Server::new(opts, files, norm, client, diag, record, None);
        server.src.session = Some(tape);
        SharedTape {
            state: Mutex::new(State {
                server: Some(server),
                pending: backlog,
            }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<C, D>> {
        // A panic while serving leaves the state as it was between two events.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Handles one event (the client's input, index updates, a route given up, the end
    /// of input) and settles.
    pub(crate) fn send(&self, ev: Event) {
        let mut st = self.lock();
        let pending = std::mem::take(&mut st.pending);
        if let Some(server) = st.server.as_mut() {
            if !pending.is_empty() {
                server.handle(Event::Index(pending));
            }
            server.handle(ev);
            // Writing to an HTTP client cannot fail; nothing to report.
            let _ = server.settle();
        }
        drop(st);
        self.changed.notify_all();
    }

    /// Fires the timers of `--pace` as they fall due, until the tape is finished (run on
    /// a thread of its own).
    pub(crate) fn tick(&self) {
        let mut st = self.lock();
        loop {
            let Some(server) = st.server.as_mut() else {
                return;
            };
            let due = server.calls.timers.peek().map(|Reverse((due, _))| *due);
            match due {
                Some(d) if d <= Instant::now() => {
                    let _ = server.settle();
                }
                Some(d) => {
                    let wait = d.saturating_duration_since(Instant::now());
                    st = self
                        .changed
                        .wait_timeout(st, wait)
                        .map_or_else(|p| p.into_inner().0, |(g, _)| g);
                }
                None => {
                    st = self.changed.wait(st).unwrap_or_else(|p| p.into_inner());
                }
            }
        }
    }

    /// Ends the input, waits until the tape is indexed, and gives this tape's summary
    /// (not printed).
    pub(crate) fn finish(&self) -> Summary {
        self.send(Event::InputEnd);
        let mut st = self.lock();
        while st.server.as_ref().is_some_and(|s| !s.done()) {
            st = self.changed.wait(st).unwrap_or_else(|p| p.into_inner());
        }
        let summary = match st.server.take() {
            Some(server) => server.finish().0,
            None => Summary::default(),
        };
        drop(st);
        self.changed.notify_all();
        summary
    }
}
