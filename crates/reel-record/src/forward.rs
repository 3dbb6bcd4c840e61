//! The forwarding threads, one per pipe: client stdin → server stdin, server stdout →
//! client stdout, server stderr → reel's stderr.
//!
//! Each reads a chunk, splits it into lines, gets the lines it completes into the trace
//! file (writing them itself when no one else is writing, see `queue`; with
//! `--drop-when-behind` it only queues them) and then writes the chunk onward byte for
//! byte. A destination that stops accepting bytes (its reader went away)
//! does not stop the thread: it goes on reading and recording, so the trace still shows
//! what was sent.
//!
//! A ticket holds up every line queued after it, so none is held while a thread waits
//! for a slow reader: the server's stdin is written without blocking ([`Sink::Pipe`]),
//! piece by piece, each delivered piece under its own ticket, and the wait for room in
//! the pipe holds none. Otherwise a server that stops reading its stdin while it writes
//! more than the queue holds would wait for reel, and reel for it. (reel's own stdout
//! cannot be made non-blocking without changing it for the client too; a client that
//! stops reading while it writes more than the queue holds can still stall itself.)
//!
//! When the server has exited, [`Pumps::drain`] waits for its stdout and stderr threads
//! to reach EOF and record their last lines, giving up only when nothing at all happens
//! for the idle limit (a process the server started may hold the pipes open). A chunk
//! the server wrote that is still on its way — its lines being written to a slow trace,
//! its bytes to a slow client — is not silence: it is forwarded whole. The thread
//! reading the client is never waited for: the client may keep its end open; a line it
//! had begun (no LF yet) is recorded from its shared splitter when the server is gone.

use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use reel_trace::Timestamp;

use crate::queue::{LineRecord, Stream};
use crate::trace::{Notice, NoticeFn, TraceSink};
use reel_net::framing::{Limit, Line, LineFramer};

/// Bytes a forwarding thread reads at once (as much as a widened pipe holds).
pub const CHUNK: usize = 1024 * 1024;
/// A stderr line longer than this is recorded as several `reel.stderr` events.
pub const STDERR_MAX_LINE: usize = 1024 * 1024;
/// How long reel waits, after the server exited, for its stdout and stderr to close
/// while nothing arrives on them.
pub const DRAIN_LIMIT: Duration = Duration::from_secs(5);

/// The forwarding threads of a session.
pub(crate) struct Pumps {
    sink: Arc<TraceSink>,
    notices: NoticeFn,
    /// Bumped on every read and every queued chunk, by every thread: "something happens".
    progress: Arc<AtomicU64>,
    /// How many of the threads reading the server hold a chunk they read and have not
    /// finished with (waiting for the trace to take its lines, or for the client to take
    /// its bytes): while one does, the server's output is not idle, however long that
    /// takes.
    busy: Arc<AtomicUsize>,
    eof_tx: mpsc::Sender<()>,
    eof_rx: mpsc::Receiver<()>,
    /// The threads reading the server, which the end of the session waits for.
    from_server: Vec<JoinHandle<()>>,
    /// The line the client has begun and not ended, shared with its thread: that thread
    /// is never waited for (the client may keep its end open), so the end of the session
    /// records what it holds, bytes the server already got.
    client_line: Option<Arc<Mutex<LineFramer>>>,
}

/// How [`Pumps::drain`] ended.
pub(crate) enum Drained {
    /// The server's output reached EOF and every line read from it was queued.
    All,
    /// Nothing happened for the idle limit before EOF.
    TimedOut,
    /// A forwarding thread panicked (a bug).
    Panicked,
}

impl Pumps {
    pub fn new(sink: Arc<TraceSink>, notices: NoticeFn) -> Self {
        let (eof_tx, eof_rx) = mpsc::channel();
        Pumps {
            sink,
            notices,
            progress: Arc::new(AtomicU64::new(0)),
            busy: Arc::new(AtomicUsize::new(0)),
            eof_tx,
            eof_rx,
            from_server: Vec::new(),
            client_line: None,
        }
    }

    /// Starts the thread that forwards `src` to `dst` and records it as `stream`.
    pub fn start(
        &mut self,
        src: Box<dyn Read + Send>,
        dst: Sink,
        stream: Stream,
    ) -> io::Result<()> {
        let (name, eof) = match stream {
            Stream::ClientToServer => ("reel-in", None),
            Stream::ServerToClient => ("reel-out", Some(self.eof_tx.clone())),
            Stream::ServerStderr => ("reel-err", Some(self.eof_tx.clone())),
        };
        let waited_for = eof.is_some();
        let splitter = Arc::new(Mutex::new(match stream {
            Stream::ServerStderr => LineFramer::new(Limit::Cut(STDERR_MAX_LINE)),
            _ => LineFramer::default(),
        }));
        if stream == Stream::ClientToServer {
            self.client_line = Some(Arc::clone(&splitter));
        }
        let sink = Arc::clone(&self.sink);
        let notices = Arc::clone(&self.notices);
        let progress = Arc::clone(&self.progress);
        // The client's thread is never waited for: its chunks do not hold the end back.
        let busy = waited_for.then(|| Arc::clone(&self.busy));
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let pipe = Pipe {
                    stream,
                    sink: &sink,
                    notices: &*notices,
                    progress: &progress,
                    busy: busy.as_deref(),
                    splitter: &splitter,
                };
                pipe.pump(src, dst, eof);
            })?;
        if waited_for {
            self.from_server.push(thread);
        }
        Ok(())
    }

    /// Waits for the server's output to end (see the module doc).
    pub fn drain(self, idle_limit: Duration) -> Drained {
        drop(self.eof_tx);
        // The server is gone: the client's unfinished line is all it will have got, and
        // whatever the server still says is read after it, so it goes first.
        if let Some(splitter) = &self.client_line {
            let mut lines = Vec::new();
            lock(splitter).finish(|l| lines.push(line_record(Stream::ClientToServer, l)));
            if !lines.is_empty() {
                self.sink.push(self.sink.ticket(), lines);
            }
        }
        let mut closed = 0;
        let mut seen = self.progress.load(Ordering::Relaxed);
        let mut idle_since = Instant::now();
        while closed < self.from_server.len() {
            match self.eof_rx.recv_timeout(Duration::from_millis(100)) {
                Ok(()) => closed += 1,
                Err(mpsc::RecvTimeoutError::Disconnected) => return Drained::Panicked,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let now = self.progress.load(Ordering::Relaxed);
                    // A chunk still on its way (a slow disk, a slow client) is not
                    // silence: the limit is for a server that says nothing.
                    if now != seen || self.busy.load(Ordering::Relaxed) > 0 {
                        seen = now;
                        idle_since = Instant::now();
                    } else if idle_since.elapsed() >= idle_limit {
                        return Drained::TimedOut;
                    }
                }
            }
        }
        // At EOF each thread has at most its last, unterminated line left to queue.
        for t in self.from_server {
            if t.join().is_err() {
                return Drained::Panicked;
            }
        }
        Drained::All
    }
}

/// What one forwarding thread works with.
struct Pipe<'a> {
    stream: Stream,
    sink: &'a TraceSink,
    notices: &'a dyn Fn(Notice),
    progress: &'a AtomicU64,
    /// [`Pumps::busy`], for a thread reading the server.
    busy: Option<&'a AtomicUsize>,
    /// This pipe's partial line (see [`Pumps::drain`] for why it is shared).
    splitter: &'a Mutex<LineFramer>,
}

/// A poisoned splitter is still whole: `feed` and `finish` leave it consistent.
fn lock(s: &Mutex<LineFramer>) -> MutexGuard<'_, LineFramer> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

fn line_record(stream: Stream, line: Line) -> LineRecord {
    LineRecord {
        stream,
        t: Timestamp::now(),
        bytes: line.bytes,
        eol: reel_trace::Eol::of(line.crlf, line.terminated),
        #[cfg(feature = "http")]
        http: None,
    }
}

impl Pipe<'_> {
    /// Forwards `src` to `dst` chunk by chunk. The lines a chunk completes are queued
    /// first and, unless lines may be dropped (`--drop-when-behind`), written to the
    /// trace file before the chunk's bytes go on: a peer never has a line the trace
    /// lacks, even after a `kill -9` of reel (the page cache keeps what was written; a
    /// slow disk slows the traffic, as the queue's backpressure already does). Says on
    /// `eof` when `src` ended. `dst` is dropped at EOF of `src`, before the last line is
    /// queued, so that closing the client's stdin reaches the server at once.
    fn pump(&self, mut src: Box<dyn Read + Send>, dst: Sink, eof: Option<mpsc::Sender<()>>) {
        let mut dst = Some(dst);
        let mut buf = vec![0u8; CHUNK];
        let mut lines = Vec::new();
        loop {
            let n = match src.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            self.progress.fetch_add(1, Ordering::Relaxed);
            let _busy = Busy::hold(self.busy);
            let chunk = &buf[..n];
            // The lines this chunk completes go to the trace file before it goes on.
            lock(self.splitter).feed(chunk, |l| lines.push(self.record(l)));
            self.push_durable(std::mem::take(&mut lines));
            let mut off = 0;
            while off < n {
                let Some(d) = dst.as_mut() else { break };
                match d.write_some(&chunk[off..]) {
                    Ok(k) if k > 0 => off += k,
                    Err(e)
                        if matches!(
                            e.kind(),
                            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                        ) =>
                    {
                        d.wait();
                    }
                    _ => {
                        // The reader went away: what was read is recorded as received.
                        dst = None;
                        self.destination_gone();
                    }
                }
            }
        }
        drop(dst);
        if let Some(eof) = eof {
            let _ = eof.send(());
        }
        lock(self.splitter).finish(|l| lines.push(self.record(l)));
        if !lines.is_empty() {
            self.sink.push(self.sink.ticket(), lines);
            self.progress.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn record(&self, line: Line) -> LineRecord {
        line_record(self.stream, line)
    }

    /// [`TraceSink::push_durable`]: the lines are in the trace file when it returns.
    fn push_durable(&self, lines: Vec<LineRecord>) {
        self.sink.push_durable(lines);
        self.progress.fetch_add(1, Ordering::Relaxed);
    }

    fn destination_gone(&self) {
        match self.stream {
            Stream::ClientToServer => (self.notices)(Notice::ServerStdinClosed),
            Stream::ServerToClient => (self.notices)(Notice::ClientGone),
            // reel's own stderr is gone: there is no one left to tell.
            Stream::ServerStderr => {}
        }
    }
}

/// A chunk in hand: counted in [`Pumps::busy`] until dropped.
struct Busy<'a>(Option<&'a AtomicUsize>);

impl<'a> Busy<'a> {
    fn hold(count: Option<&'a AtomicUsize>) -> Busy<'a> {
        if let Some(c) = count {
            c.fetch_add(1, Ordering::Relaxed);
        }
        Busy(count)
    }
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        if let Some(c) = self.0 {
            c.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// Where a forwarding thread writes.
pub(crate) enum Sink {
    /// An ordinary writer: a write returns when it is done.
    Blocking(Box<dyn Write + Send>),
    /// A pipe only reel writes to, set non-blocking: a write that finds it full returns.
    #[cfg(unix)]
    Pipe(reel_net::process::NonBlockingPipe),
}

impl Sink {
    /// Writes some of `buf`: how much, or `WouldBlock` when nothing fits now.
    fn write_some(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Blocking(w) => {
                let n = w.write(buf)?;
                w.flush()?;
                Ok(n)
            }
            #[cfg(unix)]
            Sink::Pipe(p) => p.write(buf),
        }
    }

    /// Waits until a write can make progress.
    fn wait(&mut self) {
        match self {
            Sink::Blocking(_) => {}
            #[cfg(unix)]
            Sink::Pipe(p) => p.wait_writable(),
        }
    }
}
