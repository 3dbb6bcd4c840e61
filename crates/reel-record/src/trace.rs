//! Where a recording goes and what it tells the user: the trace target (a new file, or
//! any writer, and its seal when asked for), the errors that stop a recording before it
//! starts, the notices a running session gives, and the trace sink with its writer
//! thread. Shared by the stdio and HTTP proxies, so both write their traces the same
//! way: one bounded queue, one recorder, one redactor, one seal.

use std::fmt;
use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use reel_redact::redact::Redactor;
pub use reel_trace::target::{TargetError, TargetWriter, TraceTarget};

use crate::queue::{FirstBehind, Item, LineRecord, Pushed, Queue, Ticket, WhenBehind};
use crate::recorder::Recorder;

/// How long the writer thread, once it has lines, waits for more before writing: under
/// load one wake-up and one `write` serve many lines. A line the writer thread writes
/// (one nobody waits for: `--drop-when-behind`, an HTTP request line) reaches the file
/// this long (plus the time to write what came before it) after it was queued.
pub const TRACE_LINGER: Duration = Duration::from_millis(1);

/// Why a recording could not be made at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The trace (or its seal) cannot be created, or its first line written.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// A thread or signal handler could not be set up.
    #[error("cannot set up the proxy ({what}): {source}")]
    Setup {
        /// What failed.
        what: &'static str,
        /// Why.
        source: io::Error,
    },
    /// The server's exit could not be observed.
    #[error("cannot wait for the server: {0}")]
    Wait(io::Error),
    /// A bug: a thread of the proxy panicked.
    #[error("internal error: the {0} thread panicked")]
    Panicked(&'static str),
}

impl RecordError {
    /// True when the error is about creating or writing the trace (exit code 73).
    pub fn is_output(&self) -> bool {
        matches!(self, RecordError::Target(_))
    }
}

/// Something the user should hear about while the session runs. The CLI prints each
/// one as a `reel:` line on stderr; each is reported at most once per session.
#[derive(Debug)]
#[non_exhaustive]
pub enum Notice {
    /// The trace writer fell behind: traffic is being slowed (or, when `dropping`,
    /// lines are being dropped and counted in `reel.gap` events).
    Behind {
        /// Lines are dropped rather than waited for.
        dropping: bool,
    },
    /// The trace cannot be written any more; traffic goes on unrecorded.
    TraceFailed {
        /// The I/O error.
        error: String,
    },
    /// The seal cannot be written any more; the trace goes on unsealed.
    SealFailed {
        /// The I/O error.
        error: String,
    },
    /// The client stopped reading reel's stdout; the server's output is still recorded.
    ClientGone,
    /// The server stopped reading its stdin; what the client sends is still recorded.
    ServerStdinClosed,
    /// The server exited but its stdout or stderr stayed open (a process it started
    /// still holds them) and silent for `limit`; the session ends without waiting for
    /// them.
    DrainTimedOut {
        /// How long nothing came.
        limit: std::time::Duration,
    },
    /// HTTP: the upstream could not be reached or broke off; the client got a 502 (told
    /// once per run of failures: again only after a request went through).
    UpstreamFailed {
        /// What went wrong.
        error: String,
    },
    /// HTTP: a request was refused with 403 because its `Host` or `Origin` is not a
    /// loopback name (told once per run).
    Refused {
        /// The header and its value.
        what: String,
    },
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::Behind { dropping: false } => {
                f.write_str("the trace disk is behind; slowing traffic")
            }
            Notice::Behind { dropping: true } => f.write_str(
                "the trace disk is behind; dropping lines (--drop-when-behind), counted in reel.gap events",
            ),
            Notice::TraceFailed { error } => write!(
                f,
                "cannot write the trace any more ({error}); traffic goes on unrecorded"
            ),
            Notice::SealFailed { error } => write!(
                f,
                "cannot write the seal any more ({error}); the trace goes on unsealed (`reel check --verify` will call the rest of it unsealed)"
            ),
            Notice::ClientGone => f.write_str(
                "the client stopped reading; the server's output is still recorded",
            ),
            Notice::ServerStdinClosed => f.write_str(
                "the server stopped reading its stdin; the client's messages are still recorded",
            ),
            Notice::DrainTimedOut { limit } => write!(
                f,
                "the server exited but its output stayed open, silent, for {} s (a process it started holds it?); ending the trace",
                limit.as_secs_f64()
            ),
            Notice::UpstreamFailed { error } => {
                write!(f, "{error}; the client got 502 Bad Gateway")
            }
            Notice::Refused { what } => write!(
                f,
                "refused a request with 403: {what} is not a loopback name (DNS rebinding protection; allow it with --allow-host)"
            ),
        }
    }
}

/// How the session's threads tell the user about trouble.
pub(crate) type NoticeFn = Arc<dyn Fn(Notice) + Send + Sync>;

/// The writer thread's recorder, over the target's sink.
pub(crate) type SinkRecorder = Recorder<Box<dyn Write + Send>>;

/// A session's trace on its way to the file: the one queue, and the recorder that the
/// writer thread and the forwarding threads (those that wait for their lines to be in
/// the file before they forward them, see [`Queue::push_durable`]) write batches with.
pub(crate) struct TraceSink {
    queue: Queue,
    /// `None` once the session took it back to write `end`.
    recorder: Mutex<Option<SinkRecorder>>,
    notices: NoticeFn,
}

impl TraceSink {
    /// Takes the next place in the trace's order.
    pub fn ticket(&self) -> Ticket {
        self.queue.ticket()
    }

    /// Queues the lines observed under `ticket` ([`Queue::push`]).
    pub fn push(&self, ticket: Ticket, lines: Vec<LineRecord>) -> Pushed {
        self.queue.push(ticket, lines, &|first| self.behind(first))
    }

    /// Queues `lines` and, unless lines may be dropped, returns once they are in the
    /// trace file ([`Queue::push_durable`]): called before the bytes that completed them
    /// are delivered.
    pub fn push_durable(&self, lines: Vec<LineRecord>) {
        self.queue
            .push_durable(lines, &|first| self.behind(first), &mut |batch| {
                self.write(batch)
            });
    }

    /// Lines and bytes dropped so far.
    pub fn dropped(&self) -> (u64, u64) {
        self.queue.dropped()
    }

    fn behind(&self, first: FirstBehind) {
        (self.notices)(Notice::Behind {
            dropping: first == FirstBehind::Dropping,
        });
    }

    /// Writes a batch taken from the queue; after the session took the recorder back,
    /// the batch is dropped.
    fn write(&self, batch: &mut Vec<Item>) {
        let mut recorder = self.recorder.lock().unwrap_or_else(|p| p.into_inner());
        match recorder.as_mut() {
            Some(r) => r.write_batch(batch, &|e| {
                (self.notices)(Notice::TraceFailed {
                    error: e.to_string(),
                })
            }),
            None => batch.clear(),
        }
    }
}

/// The writer thread of a session.
pub(crate) struct Writer {
    sink: Arc<TraceSink>,
    thread: JoinHandle<()>,
}

impl Writer {
    /// Closes the queue, waits for everything in it to be written and hands back the
    /// recorder, to write `end`.
    pub fn finish(self) -> Result<SinkRecorder, RecordError> {
        self.sink.queue.close();
        self.thread
            .join()
            .map_err(|_| RecordError::Panicked("trace"))?;
        let mut recorder = self.sink.recorder.lock().unwrap_or_else(|p| p.into_inner());
        recorder.take().ok_or(RecordError::Panicked("trace"))
    }
}

/// Starts the session's queue (`budget` bytes, `when_behind`) and the thread that writes
/// what it delivers and nobody else writes until it is closed; returns the sink the
/// forwarding threads push to, and the thread. A seal that cannot be written is told
/// once, as [`Notice::SealFailed`].
pub(crate) fn start_writer(
    mut writer: TargetWriter,
    redactor: Redactor,
    budget: usize,
    when_behind: WhenBehind,
    notices: &NoticeFn,
) -> io::Result<(Arc<TraceSink>, Writer)> {
    let seal_notices = Arc::clone(notices);
    writer.on_seal_failure(Box::new(move |e| {
        seal_notices(Notice::SealFailed {
            error: e.to_string(),
        })
    }));
    let sink = Arc::new(TraceSink {
        queue: Queue::new(budget, when_behind, TRACE_LINGER),
        recorder: Mutex::new(Some(Recorder::new(writer, redactor))),
        notices: Arc::clone(notices),
    });
    let ours = Arc::clone(&sink);
    let thread = std::thread::Builder::new()
        .name("reel-trace".into())
        .spawn(move || {
            let mut batch = Vec::new();
            let behind = |first| ours.behind(first);
            while let Some(claim) = ours.queue.take_all(&mut batch, &behind) {
                ours.write(&mut batch);
                ours.queue.written(claim);
            }
        })?;
    Ok((Arc::clone(&sink), Writer { sink, thread }))
}
