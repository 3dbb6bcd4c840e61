//! The stdio recording proxy: `reel rec -- CMD…`.
//!
//! reel starts the server, sits between its standard streams and the client's, and
//! writes the session as a trace. Plain OS threads, no async runtime: one per pipe
//! (`forward`: client stdin → server stdin as `dir: "in"`, server stdout → client stdout
//! as `dir: "out"`, server stderr → reel's stderr as `reel.stderr` events unless stderr
//! is not recorded), one that writes what the forwarding threads leave to it and watches
//! the trace keep up (`trace`), and one that forwards
//! SIGINT, SIGTERM and SIGHUP to the server (`process`).
//!
//! Each forwarding thread reads a chunk ([`CHUNK`] at most), splits it into lines and,
//! unless lines may be dropped, writes the lines it completes to the trace file itself
//! before it forwards the chunk byte for byte: a peer never has a line the trace lacks,
//! even after a `kill -9` of reel, and no other thread is woken for it. Lines go through
//! one bounded queue (`queue`) in the order reel observed them — an answer is never
//! recorded before the request it answers — and the traffic is never held up by
//! anything but the trace write itself or a full queue (backpressure), or with
//! [`WhenBehind::Drop`] not at all (the writer thread then writes them after the
//! forward).
//!
//! Lifecycle: the client closing reel's stdin closes the server's stdin; the server
//! exiting ends the session even if reel's stdin is still open: reel drains the server's
//! stdout and stderr (giving up after [`DRAIN_LIMIT`] without a byte, in case a
//! grandchild holds them open), writes `end` with the exit code, and reports the
//! server's status (128+N for signal N). A server that cannot start gives a complete
//! trace ending with exit code 127.
//!
//! Limits: lines of any length are assembled (memory grows with the longest line: about
//! the queue budget plus four times the largest message); stderr lines are cut into
//! events of [`STDERR_MAX_LINE`] bytes; the queue holds [`DEFAULT_QUEUE_BYTES`] by
//! default; a line is in the file before it is forwarded, or with
//! [`WhenBehind::Drop`] about [`TRACE_LINGER`] after.

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use reel_redact::record::reel_meta;
use reel_redact::redact::Redactor;
use reel_trace::line::Meta;
use reel_trace::{Counts, Ending, Timestamp, names};

pub use crate::forward::{CHUNK, DRAIN_LIMIT, STDERR_MAX_LINE};
use crate::forward::{Drained, Pumps, Sink};
pub use crate::queue::DEFAULT_QUEUE_BYTES;
use crate::queue::{Stream, WhenBehind};
pub use crate::trace::TRACE_LINGER;
pub use crate::trace::{Notice, RecordError, TraceTarget};
use crate::trace::{NoticeFn, SinkRecorder, TargetWriter, TraceSink, start_writer};

/// What to record and how.
#[derive(Debug, Clone)]
pub struct StdioConfig {
    /// The server command and its arguments.
    pub command: Vec<OsString>,
    /// The run's name (`meta.label`, file-name suffix); derived from the command if `None`.
    pub name: Option<String>,
    /// Redaction applied to the trace (never to forwarded bytes).
    pub redactor: Redactor,
    /// Pipe the server's stderr through reel and record it; `false` lets the server
    /// write to reel's stderr directly.
    pub record_stderr: bool,
    /// Wait (default) or drop lines when the trace writer falls behind.
    pub when_behind: WhenBehind,
    /// Queue budget in bytes.
    pub queue_bytes: usize,
    /// Forward SIGINT, SIGTERM and SIGHUP to the server (the CLI does; a library caller
    /// that handles signals itself may not want process-wide handlers). The server then
    /// runs in a process group of its own, so that a terminal's Ctrl-C reaches it once,
    /// through reel, rather than twice.
    pub forward_signals: bool,
    /// How long to wait for the server's output to close after it exited.
    pub drain_limit: Duration,
    /// Directories put before the inherited `PATH` of the server (`--path-first`).
    pub path_first: Vec<std::path::PathBuf>,
}

impl StdioConfig {
    /// The defaults for `command`: built-in redaction, stderr recorded, never drop.
    pub fn new(command: Vec<OsString>) -> Self {
        StdioConfig {
            command,
            name: None,
            redactor: Redactor::builtin(),
            record_stderr: true,
            when_behind: WhenBehind::Wait,
            queue_bytes: DEFAULT_QUEUE_BYTES,
            forward_signals: false,
            drain_limit: DRAIN_LIMIT,
            path_first: Vec::new(),
        }
    }
}

/// How the server ended.
#[derive(Debug)]
pub enum ChildEnd {
    /// It exited with this code.
    Exited(i32),
    /// It was killed by this signal.
    Signaled(i32),
    /// It could not be started.
    NotStarted(io::Error),
}

/// The result of a session.
#[derive(Debug)]
pub struct Outcome {
    /// How the server ended (the CLI exits with its status).
    pub child: ChildEnd,
    /// The trace file, when it is one.
    pub path: Option<PathBuf>,
    /// Lines written, as in `end.counts`.
    pub counts: Counts,
    /// Lines and bytes dropped with [`WhenBehind::Drop`].
    pub dropped: (u64, u64),
    /// The error that stopped the trace early, if any (the traffic was unaffected).
    pub trace_error: Option<io::Error>,
}

/// The client's side of the proxy: where client messages come from and where the
/// server's stdout and stderr go.
pub struct ClientIo {
    /// The client's messages (reel's stdin).
    pub input: Box<dyn Read + Send>,
    /// The server's messages go here (reel's stdout).
    pub output: Box<dyn Write + Send>,
    /// The server's stderr goes here (reel's stderr).
    pub errors: Box<dyn Write + Send>,
}

impl ClientIo {
    /// reel's own stdin, stdout and stderr (unbuffered).
    #[cfg(unix)]
    pub fn inherit() -> ClientIo {
        use reel_net::process::StdFd;
        fn boxed_in(fd: Option<StdFd>) -> Box<dyn Read + Send> {
            match fd {
                Some(f) => Box::new(f),
                None => Box::new(io::empty()),
            }
        }
        fn boxed_out(fd: Option<StdFd>) -> Box<dyn Write + Send> {
            match fd {
                Some(f) => Box::new(f),
                None => Box::new(io::sink()),
            }
        }
        ClientIo {
            input: boxed_in(StdFd::dup(0)),
            output: boxed_out(StdFd::dup(1)),
            errors: boxed_out(StdFd::dup(2)),
        }
    }
}

/// A configured recording, before it starts.
pub struct StdioRecorder {
    config: StdioConfig,
    command: Vec<String>,
    label: String,
}

impl StdioRecorder {
    /// Redacts the command and settles the label.
    pub fn new(config: StdioConfig) -> StdioRecorder {
        let argv: Vec<String> = config
            .command
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let command = config.redactor.redact_command(&argv);
        let label = config
            .name
            .clone()
            .unwrap_or_else(|| names::derive_label(&command));
        StdioRecorder {
            config,
            command,
            label,
        }
    }

    /// The run's label.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The command as written to the trace (redacted).
    pub fn command(&self) -> &[String] {
        &self.command
    }

    /// Creates the trace file in `dir`.
    pub fn create_trace(&self, dir: &Path) -> Result<TraceTarget, RecordError> {
        Ok(TraceTarget::create(dir, &self.label)?)
    }

    /// The `meta` line.
    pub fn meta(&self) -> Meta {
        reel_meta(
            &self.label,
            &self.command,
            "mcp",
            "stdio",
            &self.config.redactor,
        )
    }

    /// Runs the session to its end: starts the server, forwards and records until the
    /// server exits, writes `end`. `notices` hears about trouble worth telling the user.
    ///
    /// The thread reading `client.input` may still be blocked in a read when this
    /// returns (the server exited while the client kept its end open); it ends when that
    /// read does, or with the process.
    #[cfg(unix)]
    pub fn run(
        self,
        trace: TraceTarget,
        client: ClientIo,
        notices: impl Fn(Notice) + Send + Sync + 'static,
    ) -> Result<Outcome, RecordError> {
        use reel_net::process::{self, ChildHandle, SignalForwarder};

        let notices: NoticeFn = Arc::new(notices);
        let (writer, path) = trace.open(&self.meta())?;

        let forwarder = if self.config.forward_signals {
            Some(
                SignalForwarder::install().map_err(|source| RecordError::Setup {
                    what: "signal handlers",
                    source,
                })?,
            )
        } else {
            None
        };
        let spawned = process::spawn(
            &self.config.command,
            self.config.record_stderr,
            self.config.forward_signals,
            &self.config.path_first,
        );
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                drop(forwarder);
                return Ok(not_started(writer, path, e));
            }
        };
        // In a group of its own, the server (and what it starts) is killed when reel
        // goes; best effort: without the guardian, the direct child still dies with reel
        // on Linux.
        let _guard = self
            .config
            .forward_signals
            .then(|| process::guard_group(child.id()).ok())
            .flatten();
        let handle = Arc::new(ChildHandle::new(&child, self.config.forward_signals));
        let setup = |what: &'static str| move |source| RecordError::Setup { what, source };
        let forwarding = match forwarder {
            Some(f) => Some(
                f.start(Arc::clone(&handle))
                    .map_err(setup("signal thread"))?,
            ),
            None => None,
        };

        let (sink, writer_thread) = start_writer(
            writer,
            self.config.redactor.clone(),
            self.config.queue_bytes,
            self.config.when_behind,
            &notices,
        )
        .map_err(setup("trace thread"))?;

        let pumps = start_pumps(&mut child, client, &sink, &notices)?;
        let status = handle.wait(&mut child).map_err(RecordError::Wait)?;
        match pumps.drain(self.config.drain_limit) {
            Drained::All => {}
            Drained::TimedOut => notices(Notice::DrainTimedOut {
                limit: self.config.drain_limit,
            }),
            Drained::Panicked => return Err(RecordError::Panicked("forwarding")),
        }
        if let Some(f) = forwarding {
            f.stop();
        }
        let recorder = writer_thread.finish()?;
        Ok(ended(recorder, status, path, sink.dropped()))
    }
}

/// A server that ran: how it ended, and the trace ended with its exit code.
#[cfg(unix)]
fn ended(
    recorder: SinkRecorder,
    status: std::process::ExitStatus,
    path: Option<PathBuf>,
    dropped: (u64, u64),
) -> Outcome {
    let (code, signal) = reel_net::process::exit_code(status);
    let counts = recorder.counts();
    let trace_error = recorder.finish(Ending::ExitCode(i64::from(code)), Timestamp::now());
    Outcome {
        child: match signal {
            Some(s) => ChildEnd::Signaled(s),
            None => ChildEnd::Exited(code),
        },
        path,
        counts,
        dropped,
        trace_error,
    }
}

/// A server that could not be started: the trace ends with exit code 127, as a shell's
/// would.
#[cfg(unix)]
fn not_started(writer: TargetWriter, path: Option<PathBuf>, e: io::Error) -> Outcome {
    let counts = writer.counts();
    let trace_error = writer.finish(Ending::ExitCode(127), Timestamp::now()).err();
    Outcome {
        child: ChildEnd::NotStarted(e),
        path,
        counts,
        dropped: (0, 0),
        trace_error,
    }
}

/// Starts a forwarding thread per pipe: the client's input to the server's stdin, the
/// server's stdout to the client's output, and its stderr (when piped) to the client's
/// errors.
#[cfg(unix)]
fn start_pumps(
    child: &mut std::process::Child,
    client: ClientIo,
    sink: &Arc<TraceSink>,
    notices: &NoticeFn,
) -> Result<Pumps, RecordError> {
    let mut pumps = Pumps::new(Arc::clone(sink), Arc::clone(notices));
    let start = |r: io::Result<()>| {
        r.map_err(|source| RecordError::Setup {
            what: "forwarding thread",
            source,
        })
    };
    if let (Some(to_server), Some(from_server)) = (child.stdin.take(), child.stdout.take()) {
        let to_server = reel_net::process::NonBlockingPipe::new(to_server);
        start(pumps.start(client.input, Sink::Pipe(to_server), Stream::ClientToServer))?;
        start(pumps.start(
            Box::new(from_server),
            Sink::Blocking(client.output),
            Stream::ServerToClient,
        ))?;
    }
    if let Some(err) = child.stderr.take() {
        start(pumps.start(
            Box::new(err),
            Sink::Blocking(client.errors),
            Stream::ServerStderr,
        ))?;
    }
    Ok(pumps)
}
