//! Where a recording goes and what it tells the user: the trace target (a new file, or
//! any writer, and its seal when asked for), the errors that stop a recording before it
//! starts, the notices a running session gives, and the start of the trace-writing
//! thread. Shared by the stdio and HTTP proxies, so both write their traces the same
//! way: one bounded queue, one writer thread, one redactor, one seal.

use std::fmt;
use std::io::{self, Write};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use reel_trace::redact::Redactor;
pub use reel_trace::target::{TargetError, TargetWriter, TraceTarget};

use crate::forward::DRAIN_LIMIT;
use crate::queue::Queue;
use crate::recorder::Recorder;

/// How long the trace writer, once it has lines, waits for more before writing: under
/// load one wake-up and one `write` serve many lines. A line reaches the file this long
/// (plus the time to write what came before it) after it was forwarded.
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
    /// still holds them); the session ends without waiting for them.
    DrainTimedOut,
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
            Notice::DrainTimedOut => write!(
                f,
                "the server exited but its output stayed open, silent, for {} s (a process it started holds it?); ending the trace",
                DRAIN_LIMIT.as_secs()
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

/// Starts the thread that writes everything `queue` delivers until it is closed, and
/// hands the recorder back (to write `end`) when it joins. A seal that cannot be
/// written is told once, as [`Notice::SealFailed`].
pub(crate) fn start_writer(
    mut writer: TargetWriter,
    redactor: Redactor,
    queue: &Arc<Queue>,
    notices: &NoticeFn,
) -> io::Result<JoinHandle<SinkRecorder>> {
    let queue = Arc::clone(queue);
    let notices = Arc::clone(notices);
    let seal_notices = Arc::clone(&notices);
    writer.on_seal_failure(Box::new(move |e| {
        seal_notices(Notice::SealFailed {
            error: e.to_string(),
        })
    }));
    let mut recorder = Recorder::new(writer, redactor);
    std::thread::Builder::new()
        .name("reel-trace".into())
        .spawn(move || {
            recorder.run(&queue, &|e| {
                notices(Notice::TraceFailed {
                    error: e.to_string(),
                })
            });
            recorder
        })
}
