//! The one bounded queue between the forwarding threads and the trace writer.
//!
//! Order in the trace is the order in which reel observed the lines, and that order must
//! respect cause and effect: when the server's request reaches the client and the client
//! answers at once, the answer must not be recorded before the request, although the
//! thread that forwarded the request records it only *after* forwarding it. So a
//! forwarding thread takes a [`Ticket`] right after a read, before it forwards anything,
//! and pushes the lines that read completed under that ticket; the writer gets lines in
//! ticket order. Anything the other side sends in reaction to those bytes is read later,
//! so it gets a later ticket.
//!
//! The queue is bounded in *bytes*, not lines, so memory stays bounded whatever the line
//! sizes: lines are admitted while the bytes queued or still being written stay within
//! the budget, or when nothing at all is in flight (so one line larger than the budget
//! still goes through), or when everything in flight waits for their ticket (so a ticket
//! holder is never kept out by lines that wait for it). When the writer falls behind, a
//! push either waits ([`WhenBehind::Wait`], the default: backpressure slows the traffic,
//! nothing is lost) or drops the lines and counts them ([`WhenBehind::Drop`]); the count
//! reaches the trace as a [`Gap`] placed where lines went missing.
//!
//! Wake-ups cost a system call each, and on a machine of two cores as much as the message
//! itself, so the queue only signals a thread that is actually waiting, and a forwarding
//! thread that must see its lines in the file before it forwards them (the default) writes
//! them itself rather than handing them to the writer thread and sleeping until it is done
//! ([`Queue::push_durable`]). One batch is written at a time, by whoever claimed it: the
//! writer thread, or a forwarding thread that found no one writing. The writer thread
//! then only writes what nobody waits for, and watches: a forwarding thread stuck in a
//! write for [`BEHIND_AFTER`] is the trace falling behind, told as a wait for room is.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use reel_trace::Timestamp;

/// Default budget of the trace queue, in bytes of lines not yet written.
pub const DEFAULT_QUEUE_BYTES: usize = 8 * 1024 * 1024;

/// Fixed cost counted per queued line, on top of its bytes (the record itself).
const LINE_OVERHEAD: usize = 64;

/// What a forwarding thread does when the trace writer cannot keep up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WhenBehind {
    /// Wait for the writer: the traffic slows down, no line is ever lost (the default).
    #[default]
    Wait,
    /// Drop the lines and record a `reel.gap` event saying how many lines and bytes were
    /// lost (`--drop-when-behind`).
    Drop,
}

/// Which pipe a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    /// The client's stdin, forwarded to the server (`dir: "in"`).
    ClientToServer,
    /// The server's stdout, forwarded to the client (`dir: "out"`).
    ServerToClient,
    /// The server's stderr.
    ServerStderr,
}

/// A line observed on a pipe.
#[derive(Debug)]
pub(crate) struct LineRecord {
    pub stream: Stream,
    /// When the line was complete (after it was forwarded).
    pub t: Timestamp,
    pub bytes: Vec<u8>,
    /// How the line ended on its pipe.
    pub eol: reel_trace::Eol,
    /// HTTP only: the session and the HTTP facts of the line, and what kind of line it
    /// is (`None` for stdio lines, which `stream` describes fully).
    #[cfg(feature = "http")]
    pub http: Option<Box<crate::http::note::HttpNote>>,
}

#[cfg(feature = "http")]
impl LineRecord {
    /// A line the server sent (a message, an SSE event or an exchange record), seen now.
    pub fn server_line(
        session: std::sync::Arc<str>,
        note: crate::http::note::Note,
        bytes: Vec<u8>,
    ) -> LineRecord {
        LineRecord {
            stream: Stream::ServerToClient,
            t: Timestamp::now(),
            bytes,
            eol: reel_trace::Eol::Lf,
            http: Some(Box::new(crate::http::note::HttpNote { session, note })),
        }
    }
}

/// Lines dropped while the writer was behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Gap {
    /// When the first of them was dropped.
    pub since: Timestamp,
    pub lines: u64,
    pub bytes: u64,
}

/// What the writer takes out of the queue.
#[derive(Debug)]
pub(crate) enum Item {
    Line(LineRecord),
    Gap(Gap),
}

/// A place in the trace's order, taken before the bytes it covers are forwarded. Every
/// ticket taken must be pushed (with no lines, if need be), or later lines wait for it
/// until the queue is closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Ticket(u64);

/// What became of pushed lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pushed {
    /// Queued.
    Queued,
    /// Dropped (drop mode, writer behind).
    Dropped,
    /// The queue is closed: the session is over and the lines are not recorded.
    Closed,
}

/// What a push tells the caller to report, at most once per session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FirstBehind {
    /// First time a push had to wait.
    Waiting,
    /// First time lines were dropped.
    Dropping,
}

struct State {
    /// Lines whose turn has come, in order.
    ready: Vec<Item>,
    /// Admitted lines waiting for an earlier ticket.
    waiting: BTreeMap<Ticket, Vec<LineRecord>>,
    /// The ticket whose lines go next.
    next: Ticket,
    /// Bytes (plus per-line overhead) admitted and not yet written.
    in_flight: usize,
    /// The part of `in_flight` that sits in `waiting`.
    waiting_bytes: usize,
    closed: bool,
    /// A batch taken out of `ready` is being written (by the writer thread or a
    /// forwarding thread); the next one waits for it.
    writing: bool,
    /// Batches taken so far (the writer thread's watch tells a stuck write by it).
    batches: u64,
    /// What the writer thread is doing, for whoever might have to wake it.
    writer: WriterIs,
    /// An empty vector with room, for the next forwarding thread that writes a batch.
    spare: Vec<Item>,
    /// The part of `in_flight` that sits in `ready`.
    ready_bytes: usize,
    producers_waiting: usize,
    /// Every ticket before this one is written to the trace file (handed to the OS).
    durable: Ticket,
    /// Forwarding threads waiting for their lines to be durable.
    syncers_waiting: usize,
    gap: Option<Gap>,
    dropped_lines: u64,
    dropped_bytes: u64,
    reported_behind: bool,
}

/// What the writer thread is doing (see [`Queue::take_all`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WriterIs {
    /// Writing, or about to look at the queue again: no one needs to wake it.
    Busy,
    /// Waiting for lines, with the watch's timer or (`timed: false`) without one: then
    /// whoever starts writing a batch wakes it, so that it watches that write.
    Waiting { timed: bool },
    /// It has lines and waits a moment for more.
    Lingering,
}

impl State {
    /// Moves the lines of `ticket` (and of every ticket after it that is complete) to
    /// `ready`. Returns whether anything became ready.
    fn complete(&mut self, ticket: Ticket, lines: Vec<LineRecord>) -> bool {
        if ticket != self.next {
            self.waiting_bytes += cost(&lines);
            self.waiting.insert(ticket, lines);
            return false;
        }
        let mut any = self.make_ready(lines);
        self.next = Ticket(self.next.0 + 1);
        while let Some(lines) = self.waiting.remove(&self.next) {
            self.waiting_bytes -= cost(&lines);
            any |= self.make_ready(lines);
            self.next = Ticket(self.next.0 + 1);
        }
        any
    }

    fn make_ready(&mut self, lines: Vec<LineRecord>) -> bool {
        if lines.is_empty() {
            return false;
        }
        if let Some(gap) = self.gap.take() {
            self.ready.push(Item::Gap(gap));
        }
        self.ready_bytes += cost(&lines);
        self.ready.extend(lines.into_iter().map(Item::Line));
        true
    }
}

/// What lines count against the budget.
fn cost(lines: &[LineRecord]) -> usize {
    lines.iter().map(|l| l.bytes.len() + LINE_OVERHEAD).sum()
}

/// How long a forwarding thread waits for its lines to reach the trace file, or a write
/// of the trace takes, before the trace counts as behind (said once a session).
pub const BEHIND_AFTER: Duration = Duration::from_millis(250);

/// A batch taken out of the queue to be written: hand it back to [`Queue::written`].
#[derive(Debug)]
#[must_use = "a batch taken must be handed back to `written`, or nothing else is written"]
pub(crate) struct Claim {
    /// Every line before this ticket is in the batch or written before it.
    upto: Ticket,
    /// What the batch counts against the budget.
    cost: usize,
}

/// Writes a batch of items to the trace, leaving the vector empty.
pub(crate) type WriteBatch<'a> = &'a mut dyn FnMut(&mut Vec<Item>);

/// The bounded queue.
pub(crate) struct Queue {
    tickets: AtomicU64,
    state: Mutex<State>,
    /// The writer thread waits here for lines.
    readable: Condvar,
    /// Producers wait here for room.
    writable: Condvar,
    /// Forwarding threads wait here for their lines to reach the trace file.
    durable: Condvar,
    budget: usize,
    when_behind: WhenBehind,
    /// How long the writer waits for more lines once it has some.
    linger: Duration,
}

impl Queue {
    /// A queue holding at most `budget` bytes in flight (see the module doc for the
    /// exceptions that keep lines moving).
    pub fn new(budget: usize, when_behind: WhenBehind, linger: Duration) -> Self {
        Queue {
            tickets: AtomicU64::new(0),
            state: Mutex::new(State {
                ready: Vec::new(),
                waiting: BTreeMap::new(),
                next: Ticket(0),
                in_flight: 0,
                waiting_bytes: 0,
                closed: false,
                writing: false,
                batches: 0,
                writer: WriterIs::Busy,
                spare: Vec::new(),
                ready_bytes: 0,
                producers_waiting: 0,
                durable: Ticket(0),
                syncers_waiting: 0,
                gap: None,
                dropped_lines: 0,
                dropped_bytes: 0,
                reported_behind: false,
            }),
            readable: Condvar::new(),
            writable: Condvar::new(),
            durable: Condvar::new(),
            budget,
            when_behind,
            linger,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking holder leaves consistent state behind (every update is a few plain
        // assignments), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `lines` (if any) at the next place in the trace's order and, unless lines
    /// may be dropped, returns only once they are in the trace file (written to the OS,
    /// so a `kill -9` of reel cannot lose them), or the session is over: what a
    /// forwarder calls before it delivers the bytes that completed them, so that what a
    /// peer has received is always in the trace.
    ///
    /// When no one is writing, the caller writes every line whose turn has come itself,
    /// with `write`: the writer thread is not woken, and the caller does not sleep. A
    /// wait longer than [`BEHIND_AFTER`] for someone else's write is the trace falling
    /// behind: the first of the session calls `behind`, as a push that waits for room
    /// does.
    pub fn push_durable(
        &self,
        lines: Vec<LineRecord>,
        behind: &dyn Fn(FirstBehind),
        write: WriteBatch<'_>,
    ) {
        if lines.is_empty() {
            return;
        }
        let ticket = self.ticket();
        if self.when_behind == WhenBehind::Drop {
            self.push(ticket, lines, behind);
            return;
        }
        let (pushed, mut st) = self.admit(ticket, lines, behind, false);
        if pushed != Pushed::Queued {
            return;
        }
        let mut since = None;
        while st.durable <= ticket && !st.closed {
            if !st.writing && !st.ready.is_empty() {
                let mut batch = std::mem::take(&mut st.spare);
                let claim = self.claim(&mut st, &mut batch);
                if st.writer == (WriterIs::Waiting { timed: false }) {
                    st.writer = WriterIs::Busy;
                    self.readable.notify_one();
                }
                drop(st);
                write(&mut batch);
                batch.clear();
                st = self.lock();
                st.spare = batch;
                self.release(&mut st, claim);
                continue;
            }
            // Someone else is writing, or a ticket before ours has not been pushed yet.
            let since = *since.get_or_insert_with(Instant::now);
            st.syncers_waiting += 1;
            if st.writer == WriterIs::Lingering {
                self.readable.notify_one();
            }
            let (next, timed_out) = self
                .durable
                .wait_timeout(st, BEHIND_AFTER)
                .unwrap_or_else(|p| p.into_inner());
            st = next;
            st.syncers_waiting -= 1;
            if timed_out.timed_out() && since.elapsed() >= BEHIND_AFTER && !st.reported_behind {
                st.reported_behind = true;
                drop(st);
                behind(FirstBehind::Waiting);
                st = self.lock();
            }
        }
    }

    /// Takes the next place in the trace's order.
    pub fn ticket(&self) -> Ticket {
        Ticket(self.tickets.fetch_add(1, Ordering::Relaxed))
    }

    /// Pushes the lines observed under `ticket` (possibly none) and returns what became
    /// of them. The first push of the session that finds the writer behind calls
    /// `behind` first, before it waits or drops, so the user hears it while it happens.
    pub fn push(
        &self,
        ticket: Ticket,
        lines: Vec<LineRecord>,
        behind: &dyn Fn(FirstBehind),
    ) -> Pushed {
        self.admit(ticket, lines, behind, true).0
    }

    /// [`Queue::push`], keeping the lock for a caller that goes on to write; `wake` the
    /// writer thread when lines became ready (not when the caller writes them itself).
    fn admit(
        &self,
        ticket: Ticket,
        mut lines: Vec<LineRecord>,
        behind: &dyn Fn(FirstBehind),
        wake: bool,
    ) -> (Pushed, MutexGuard<'_, State>) {
        let cost = cost(&lines);
        let mut outcome = Pushed::Queued;
        let mut st = self.lock();
        loop {
            if st.closed {
                return (Pushed::Closed, st);
            }
            // The next ticket due is let in when everything in flight waits for it:
            // keeping it out could never end.
            let only_waiting_for_us = ticket == st.next && st.in_flight == st.waiting_bytes;
            if cost == 0
                || st.in_flight == 0
                || st.in_flight + cost <= self.budget
                || only_waiting_for_us
            {
                break;
            }
            if !st.reported_behind {
                st.reported_behind = true;
                drop(st);
                behind(match self.when_behind {
                    WhenBehind::Wait => FirstBehind::Waiting,
                    WhenBehind::Drop => FirstBehind::Dropping,
                });
                st = self.lock();
                continue;
            }
            if self.when_behind == WhenBehind::Drop {
                let bytes: u64 = lines.iter().map(|l| l.bytes.len() as u64).sum();
                let since = lines.first().map_or(Timestamp(0), |l| l.t);
                let gap = st.gap.get_or_insert(Gap {
                    since,
                    lines: 0,
                    bytes: 0,
                });
                gap.lines += lines.len() as u64;
                gap.bytes += bytes;
                st.dropped_lines += lines.len() as u64;
                st.dropped_bytes += bytes;
                lines = Vec::new();
                outcome = Pushed::Dropped;
                break;
            }
            st.producers_waiting += 1;
            if st.writer == WriterIs::Lingering {
                // Someone waits for room: the writer must not linger any longer.
                self.readable.notify_one();
            }
            st = self.writable.wait(st).unwrap_or_else(|p| p.into_inner());
            st.producers_waiting -= 1;
        }
        if outcome == Pushed::Queued {
            st.in_flight += cost;
        }
        let became_ready = st.complete(ticket, lines);
        if wake && became_ready {
            match st.writer {
                WriterIs::Waiting { .. } => {
                    st.writer = WriterIs::Busy;
                    self.readable.notify_one();
                }
                WriterIs::Lingering if st.ready_bytes >= self.budget / 2 => {
                    self.readable.notify_one();
                }
                _ => {}
            }
        }
        (outcome, st)
    }

    /// Moves every line whose turn has come into `out` and marks them as being written.
    fn claim(&self, st: &mut State, out: &mut Vec<Item>) -> Claim {
        st.writing = true;
        st.batches += 1;
        let cost = std::mem::take(&mut st.ready_bytes);
        out.append(&mut st.ready);
        Claim {
            upto: st.next,
            cost,
        }
    }

    /// The writer thread's turn: moves every line whose turn has come into `out`,
    /// waiting while there is none or someone else is writing, and returns the
    /// [`Claim`] to hand to [`Queue::written`] once they are written; `None` once the
    /// queue is closed, empty and no one writes: the writer's work is done.
    ///
    /// Once lines are there, the writer lingers up to the queue's `linger` for more, so
    /// that under load one wake-up and one `write` serve many lines instead of one each;
    /// it stops lingering as soon as half the budget is ready, a producer waits for room
    /// or for its lines, or the queue closes.
    ///
    /// While forwarding threads write their own lines, the writer thread wakes every
    /// [`BEHIND_AFTER`] to see whether one write has lasted that long: the first time,
    /// `behind` is called (the trace disk is behind). A writer with nothing to write that
    /// saw no write for a whole period sleeps without a timer.
    pub fn take_all(&self, out: &mut Vec<Item>, behind: &dyn Fn(FirstBehind)) -> Option<Claim> {
        let mut st = self.lock();
        let mut seen = st.batches;
        loop {
            while st.writing || st.ready.is_empty() {
                if st.closed && !st.writing {
                    return None;
                }
                st = self.watch(st, &mut seen, behind);
            }
            let deadline = Instant::now() + self.linger;
            loop {
                if st.closed
                    || st.producers_waiting > 0
                    || st.syncers_waiting > 0
                    || st.ready_bytes >= self.budget / 2
                {
                    break;
                }
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                st.writer = WriterIs::Lingering;
                st = self
                    .readable
                    .wait_timeout(st, left)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
                st.writer = WriterIs::Busy;
            }
            // A forwarding thread may have written the lines meanwhile.
            if !st.writing && !st.ready.is_empty() {
                return Some(self.claim(&mut st, out));
            }
        }
    }

    /// The writer thread's wait for something to write (see [`Queue::take_all`]).
    fn watch<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        seen: &mut u64,
        behind: &dyn Fn(FirstBehind),
    ) -> MutexGuard<'a, State> {
        if st.writing || st.batches != *seen {
            let (batches, writing) = (st.batches, st.writing);
            *seen = batches;
            st.writer = WriterIs::Waiting { timed: true };
            let (next, timed_out) = self
                .readable
                .wait_timeout(st, BEHIND_AFTER)
                .unwrap_or_else(|p| p.into_inner());
            st = next;
            st.writer = WriterIs::Busy;
            let stuck = writing && st.writing && st.batches == batches;
            if timed_out.timed_out() && stuck && !st.reported_behind {
                st.reported_behind = true;
                drop(st);
                behind(FirstBehind::Waiting);
                st = self.lock();
            }
        } else {
            st.writer = WriterIs::Waiting { timed: false };
            st = self.readable.wait(st).unwrap_or_else(|p| p.into_inner());
            st.writer = WriterIs::Busy;
        }
        st
    }

    /// The batch of `claim` is written to the OS: its lines and every line before them
    /// are in the trace file, and the next batch may be taken.
    pub fn written(&self, claim: Claim) {
        let mut st = self.lock();
        self.release(&mut st, claim);
    }

    fn release(&self, st: &mut State, claim: Claim) {
        st.writing = false;
        st.in_flight = st.in_flight.saturating_sub(claim.cost);
        if claim.upto > st.durable {
            st.durable = claim.upto;
        }
        if st.producers_waiting > 0 {
            self.writable.notify_all();
        }
        if st.syncers_waiting > 0 {
            self.durable.notify_all();
        }
        if matches!(st.writer, WriterIs::Waiting { .. }) && (st.closed || !st.ready.is_empty()) {
            st.writer = WriterIs::Busy;
            self.readable.notify_one();
        }
    }

    /// Ends the session: later pushes are refused, waiting producers are released, lines
    /// still waiting for a ticket that will never come are released in order, a gap not
    /// yet recorded is queued, and the writer stops once the queue is empty.
    pub fn close(&self) {
        let mut st = self.lock();
        st.closed = true;
        let waiting = std::mem::take(&mut st.waiting);
        st.waiting_bytes = 0;
        for (_, lines) in waiting {
            st.make_ready(lines);
        }
        if let Some(gap) = st.gap.take() {
            st.ready.push(Item::Gap(gap));
        }
        self.readable.notify_all();
        self.writable.notify_all();
        self.durable.notify_all();
    }

    /// Lines and bytes dropped so far.
    pub fn dropped(&self) -> (u64, u64) {
        let st = self.lock();
        (st.dropped_lines, st.dropped_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::Mutex as StdMutex;

    /// Pushes, returning what became of the lines and whether `behind` was called.
    fn push(q: &Queue, t: Ticket, lines: Vec<LineRecord>) -> (Pushed, Option<FirstBehind>) {
        let said = StdMutex::new(None);
        let p = q.push(t, lines, &|f| *said.lock().unwrap() = Some(f));
        (p, said.into_inner().unwrap())
    }

    fn line(n: usize) -> LineRecord {
        LineRecord {
            stream: Stream::ClientToServer,
            t: Timestamp(n as i64),
            bytes: vec![b'x'; n],
            eol: reel_trace::Eol::Lf,
            #[cfg(feature = "http")]
            http: None,
        }
    }

    fn lens(items: &[Item]) -> Vec<usize> {
        items
            .iter()
            .map(|i| match i {
                Item::Line(l) => l.bytes.len(),
                Item::Gap(_) => usize::MAX,
            })
            .collect()
    }

    #[test]
    fn lines_come_out_in_ticket_order_whatever_the_push_order() {
        let q = Queue::new(1 << 20, WhenBehind::Wait, Duration::ZERO);
        let (a, b, c) = (q.ticket(), q.ticket(), q.ticket());
        // The answer (b) and a later line (c) are pushed before the request (a).
        push(&q, c, vec![line(3)]);
        push(&q, b, vec![line(2)]);
        let mut items = Vec::new();
        push(&q, a, vec![line(1), line(11)]);
        let _ = q.take_all(&mut items, &|_| {}).unwrap();
        assert_eq!(lens(&items), [1, 11, 2, 3]);
    }

    #[test]
    fn drop_mode_counts_what_it_drops_and_places_the_gap_before_the_next_lines() {
        let q = Queue::new(100, WhenBehind::Drop, Duration::ZERO);
        assert_eq!(push(&q, q.ticket(), vec![line(10)]), (Pushed::Queued, None));
        // 74 + 74 > 100 and the writer has not written the first line yet. A ticket
        // that is the next one due is always admitted, so take one ahead.
        let _held = q.ticket();
        assert_eq!(
            push(&q, q.ticket(), vec![line(10)]),
            (Pushed::Dropped, Some(FirstBehind::Dropping))
        );
        assert_eq!(
            push(&q, q.ticket(), vec![line(20)]),
            (Pushed::Dropped, None)
        );
        assert_eq!(q.dropped(), (2, 30));
        push(&q, _held, Vec::new());
        let mut items = Vec::new();
        let claim = q.take_all(&mut items, &|_| {}).unwrap();
        assert_eq!(lens(&items), [10]);
        q.written(claim);
        items.clear();
        assert_eq!(push(&q, q.ticket(), vec![line(5)]).0, Pushed::Queued);
        let _ = q.take_all(&mut items, &|_| {}).unwrap();
        match &items[..] {
            [Item::Gap(g), Item::Line(l)] => {
                assert_eq!((g.lines, g.bytes, g.since), (2, 30, Timestamp(10)));
                assert_eq!(l.bytes.len(), 5);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn lines_in_ticket_order_are_held_back_while_the_writer_is_behind() {
        let q = Queue::new(100, WhenBehind::Drop, Duration::ZERO);
        assert_eq!(push(&q, q.ticket(), vec![line(10)]).0, Pushed::Queued);
        let mut items = Vec::new();
        let _ = q.take_all(&mut items, &|_| {}).unwrap();
        // The writer holds the first line; the next ticket due is still kept out.
        assert_eq!(push(&q, q.ticket(), vec![line(50)]).0, Pushed::Dropped);
    }

    #[test]
    fn a_line_larger_than_the_budget_goes_through_alone() {
        let q = Queue::new(10, WhenBehind::Drop, Duration::ZERO);
        let _held = q.ticket();
        assert_eq!(push(&q, q.ticket(), vec![line(1000)]).0, Pushed::Queued);
        assert_eq!(push(&q, q.ticket(), vec![line(1)]).0, Pushed::Dropped);
    }

    #[test]
    fn wait_mode_blocks_until_the_writer_catches_up_and_loses_nothing() {
        let q = Arc::new(Queue::new(1, WhenBehind::Wait, Duration::ZERO));
        let producers: Vec<_> = (0..2)
            .map(|p| {
                let q = Arc::clone(&q);
                std::thread::spawn(move || {
                    let mut firsts = Vec::new();
                    for n in 0..500 {
                        let (pushed, first) = push(&q, q.ticket(), vec![line(n * 2 + p)]);
                        assert_eq!(pushed, Pushed::Queued);
                        firsts.extend(first);
                    }
                    firsts
                })
            })
            .collect();
        let closer = {
            let q = Arc::clone(&q);
            std::thread::spawn(move || {
                let firsts: Vec<_> = producers
                    .into_iter()
                    .flat_map(|p| p.join().unwrap())
                    .collect();
                q.close();
                firsts
            })
        };
        let mut seen = Vec::new();
        let mut items = Vec::new();
        while let Some(claim) = q.take_all(&mut items, &|_| {}) {
            seen.extend(lens(&items));
            items.clear();
            q.written(claim);
        }
        let mut want: Vec<usize> = (0..1000).collect();
        seen.sort();
        want.sort();
        assert_eq!(seen, want);
        assert!(closer.join().unwrap().len() <= 1);
    }

    /// With no writer thread at all, a durable push returns: the pusher wrote every line
    /// whose turn had come itself, those queued before its own first.
    #[test]
    fn a_durable_push_writes_the_ready_lines_itself() {
        let q = Queue::new(1 << 20, WhenBehind::Wait, FOREVER);
        push(&q, q.ticket(), vec![line(1)]);
        let mut written = Vec::new();
        q.push_durable(
            vec![line(2), line(3)],
            &|_| panic!("nobody else writes: nothing to wait for"),
            &mut |batch| written.extend(lens(&std::mem::take(batch))),
        );
        assert_eq!(written, [1, 2, 3]);
        // The batch was handed back: the writer thread may take the next one.
        push(&q, q.ticket(), vec![line(4)]);
        q.close();
        let mut items = Vec::new();
        let claim = q.take_all(&mut items, &|_| {}).unwrap();
        assert_eq!(lens(&items), [4]);
        q.written(claim);
        assert!(q.take_all(&mut items, &|_| {}).is_none());
    }

    /// A forwarder stuck in its own write is the trace falling behind: nobody waits on
    /// the queue, so the writer thread's watch is what tells it.
    #[test]
    fn the_writer_thread_tells_a_forwarders_write_that_lasts_too_long() {
        let q = Arc::new(Queue::new(1 << 20, WhenBehind::Wait, Duration::ZERO));
        let told = Arc::new(StdMutex::new(None));
        let writer = {
            let (q, told) = (Arc::clone(&q), Arc::clone(&told));
            std::thread::spawn(move || {
                let mut items = Vec::new();
                while let Some(claim) = q.take_all(&mut items, &|f| *told.lock().unwrap() = Some(f))
                {
                    items.clear();
                    q.written(claim);
                }
            })
        };
        let started = Instant::now();
        q.push_durable(
            vec![line(1)],
            &|_| panic!("the pusher waits for no one"),
            &mut |batch| {
                batch.clear();
                // The write lasts until the writer thread has said the trace is behind.
                while told.lock().unwrap().is_none() {
                    assert!(started.elapsed() < Duration::from_secs(30), "never told");
                    std::thread::sleep(Duration::from_millis(5));
                }
            },
        );
        assert!(started.elapsed() >= BEHIND_AFTER);
        assert_eq!(*told.lock().unwrap(), Some(FirstBehind::Waiting));
        q.close();
        writer.join().unwrap();
    }

    /// Long enough that a writer that failed to stop lingering would hang the test.
    const FOREVER: Duration = Duration::from_secs(3600);

    #[test]
    fn the_writer_lingers_for_more_lines_until_half_the_budget_is_ready() {
        let q = Arc::new(Queue::new(1000, WhenBehind::Wait, FOREVER));
        let writer = {
            let q = Arc::clone(&q);
            std::thread::spawn(move || {
                let mut items = Vec::new();
                let _ = q.take_all(&mut items, &|_| {}).unwrap();
                lens(&items)
            })
        };
        push(&q, q.ticket(), vec![line(100)]);
        push(&q, q.ticket(), vec![line(400)]);
        assert_eq!(writer.join().unwrap(), [100, 400]);
    }

    #[test]
    fn closing_ends_the_lingering() {
        let q = Queue::new(1000, WhenBehind::Wait, FOREVER);
        push(&q, q.ticket(), vec![line(10)]);
        q.close();
        let mut items = Vec::new();
        let _ = q.take_all(&mut items, &|_| {}).unwrap();
        assert_eq!(lens(&items), [10]);
    }

    #[test]
    fn close_releases_waiting_producers_and_lines_waiting_for_a_lost_ticket() {
        let q = Arc::new(Queue::new(1, WhenBehind::Wait, Duration::ZERO));
        let lost = q.ticket();
        assert_eq!(push(&q, q.ticket(), vec![line(10)]).0, Pushed::Queued);
        let blocked = {
            let q = Arc::clone(&q);
            std::thread::spawn(move || push(&q, q.ticket(), vec![line(20)]).0)
        };
        q.close();
        assert_eq!(blocked.join().unwrap(), Pushed::Closed);
        let _ = lost;
        let mut items = Vec::new();
        let claim = q.take_all(&mut items, &|_| {}).unwrap();
        assert_eq!(lens(&items), [10]);
        items.clear();
        q.written(claim);
        assert!(q.take_all(&mut items, &|_| {}).is_none());
    }
}
