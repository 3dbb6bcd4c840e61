//! Where a recording goes and what it tells the user: the trace target (a new file, or
//! any writer, and its seal when asked for), the errors that stop a recording before it
//! starts, the notices a running session gives, and the start of the trace-writing
//! thread. Shared by the stdio and HTTP proxies, so both write their traces the same
//! way: one bounded queue, one writer thread, one redactor, one seal.

use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use reel_trace::redact::Redactor;
use reel_trace::seal::{LiveSeal, SealKey, Sealer, create_sidecar};
use reel_trace::writer::{WholeLinesFile, create_trace_file};
use reel_trace::{Meta, Timestamp, TraceWriter, names};

use crate::forward::DRAIN_LIMIT;
use crate::queue::Queue;
use crate::recorder::{BatchSink, Recorder};

/// How long the trace writer, once it has lines, waits for more before writing: under
/// load one wake-up and one `write` serve many lines. A line reaches the file this long
/// (plus the time to write what came before it) after it was forwarded.
pub const TRACE_LINGER: Duration = Duration::from_millis(1);

/// Why a recording could not be made at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The trace directory cannot be created.
    #[error("cannot create the trace directory {}: {source} (choose another with --dir or REEL_DIR)", dir.display())]
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The trace file cannot be created.
    #[error("cannot create a trace file in {}: {source} (choose another directory with --dir or REEL_DIR)", dir.display())]
    CreateTrace {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The seal beside the trace cannot be created.
    #[error("cannot create the seal {}: {source}", path.display())]
    CreateSeal {
        /// The sidecar.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The trace's first line cannot be written.
    #[error("cannot write the trace {trace}: {source}")]
    WriteTrace {
        /// The trace (its path, or `trace` for a caller's writer).
        trace: String,
        /// Why.
        source: io::Error,
    },
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
        matches!(
            self,
            RecordError::CreateDir { .. }
                | RecordError::CreateTrace { .. }
                | RecordError::CreateSeal { .. }
                | RecordError::WriteTrace { .. }
        )
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

/// Where the trace goes: a new file, or any writer.
pub struct TraceTarget {
    sink: Box<dyn Write + Send>,
    path: Option<PathBuf>,
    started: Timestamp,
    seal: Option<SealTarget>,
}

/// Where the trace's seal goes (`reel rec --seal`).
struct SealTarget {
    sink: Box<dyn Write + Send>,
    path: Option<PathBuf>,
    key: Option<SealKey>,
    /// The head's `files`: the trace's file name.
    files: Vec<String>,
}

impl TraceTarget {
    /// Creates `<dir>/<stamp>-<label>.jsonl` (mode 0600), creating `dir` and its parents
    /// (mode 0700) when missing.
    pub fn create(dir: &Path, label: &str) -> Result<TraceTarget, RecordError> {
        names::ensure_dir(dir).map_err(|source| RecordError::CreateDir {
            dir: dir.to_owned(),
            source,
        })?;
        let started = Timestamp::now();
        let (file, path) =
            create_trace_file(dir, started, label).map_err(|source| RecordError::CreateTrace {
                dir: dir.to_owned(),
                source,
            })?;
        let file = WholeLinesFile::new(file).map_err(|source| RecordError::CreateTrace {
            dir: dir.to_owned(),
            source,
        })?;
        Ok(TraceTarget {
            sink: Box::new(file),
            path: Some(path),
            started,
            seal: None,
        })
    }

    /// Seals the trace as it is written into `<trace>.seal` (mode 0600), keyed when
    /// `key` is given (see `reel_trace::seal`). Only for a trace file; a trace given as a
    /// writer is sealed with [`TraceTarget::seal_to`]. When the seal cannot be created,
    /// the trace file, still empty, is removed again.
    pub fn seal(self, key: Option<SealKey>) -> Result<TraceTarget, RecordError> {
        let Some(trace) = self.path.clone() else {
            return Err(RecordError::CreateSeal {
                path: PathBuf::from("trace.seal"),
                source: io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "a trace written to a writer has no place for a seal; use seal_to",
                ),
            });
        };
        match create_sidecar(&trace).and_then(|(file, path)| Ok((WholeLinesFile::new(file)?, path)))
        {
            Ok((file, path)) => Ok(TraceTarget {
                seal: Some(SealTarget {
                    sink: Box::new(file),
                    path: Some(path),
                    key,
                    files: vec![trace.file_name().map_or_else(
                        || trace.display().to_string(),
                        |n| n.to_string_lossy().into_owned(),
                    )],
                }),
                ..self
            }),
            Err(source) => {
                let _ = std::fs::remove_file(&trace);
                Err(RecordError::CreateSeal {
                    path: reel_trace::seal::sidecar_path(&trace),
                    source,
                })
            }
        }
    }

    /// Seals the trace as it is written into `sink` (tests, other front ends).
    pub fn seal_to(self, sink: impl Write + Send + 'static, key: Option<SealKey>) -> TraceTarget {
        TraceTarget {
            seal: Some(SealTarget {
                sink: Box::new(sink),
                path: None,
                key,
                files: vec!["trace".to_owned()],
            }),
            ..self
        }
    }

    /// The seal file, when the trace is sealed into one.
    pub fn seal_path(&self) -> Option<&Path> {
        self.seal.as_ref().and_then(|s| s.path.as_deref())
    }

    /// A trace written to `sink` (tests, other front ends). Give it an unbuffered sink:
    /// the recorder batches whole lines itself.
    pub fn from_writer(sink: impl Write + Send + 'static, started: Timestamp) -> TraceTarget {
        TraceTarget {
            sink: Box::new(sink),
            path: None,
            started,
            seal: None,
        }
    }

    /// The trace file, when it is one.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub(crate) fn name(&self) -> String {
        self.path
            .as_ref()
            .map_or_else(|| "trace".to_owned(), |p| p.display().to_string())
    }
}

/// How the session's threads tell the user about trouble.
pub(crate) type NoticeFn = Arc<dyn Fn(Notice) + Send + Sync>;

/// The writer thread's recorder, over the target's sink.
pub(crate) type SinkRecorder = Recorder<Box<dyn Write + Send>>;
/// The trace writer over the target's sink.
pub(crate) type SinkWriter = TraceWriter<BatchSink<Box<dyn Write + Send>>>;

impl TraceTarget {
    /// The trace writer (its `end.durationMs` counting from the target's start, sealing
    /// when asked to) and the path, with `meta` written and flushed first, so a
    /// recording that goes no further still names its session.
    pub(crate) fn open(self, meta: &Meta) -> Result<(SinkWriter, Option<PathBuf>), RecordError> {
        let name = self.name();
        let mut writer = TraceWriter::new(BatchSink::new(self.sink), self.started);
        let mut seal_path = None;
        if let Some(seal) = self.seal {
            seal_path = seal.path;
            let sealer = Sealer::new(seal.sink, &seal.files, self.started, seal.key.as_ref());
            writer.seal_with(LiveSeal::new(sealer));
        }
        match writer.write_meta(meta).and_then(|()| writer.flush()) {
            Ok(()) => Ok((writer, self.path)),
            Err(source) => {
                // Not even the meta line went in (a full disk, `ulimit -f`): leave no
                // empty or torn file for `reel ls` to show as a run, and no seal of
                // nothing beside it.
                drop(writer);
                for p in self.path.iter().chain(seal_path.iter()) {
                    let _ = std::fs::remove_file(p);
                }
                Err(RecordError::WriteTrace {
                    trace: name,
                    source,
                })
            }
        }
    }
}

/// Starts the thread that writes everything `queue` delivers until it is closed, and
/// hands the recorder back (to write `end`) when it joins. A seal that cannot be
/// written is told once, as [`Notice::SealFailed`].
pub(crate) fn start_writer(
    mut writer: SinkWriter,
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
