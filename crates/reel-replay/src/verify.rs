//! `reel verify TRACE -- CMD…`: the recorded client played against a live server.
//!
//! One recording of an agent's session becomes a regression test of the server: reel
//! starts CMD (stdio), or talks to the server at `--url` over HTTP (`http`), sends the recorded client's requests and notifications in
//! recorded order (`script`), answers the server's own requests (sampling, elicitation,
//! roots) with the recorded answers, and compares every answer with the recorded one
//! under the shared normalisation (`compare`). The run is written as a trace
//! (`record`) and summed up in a `Report` (`report`).
//!
//! What is sent, and when (`run`):
//! - Ids are fresh (1, 2, 3… in sending order); a progress token is fresh too (the live
//!   id, or `"reel-<id>"` when the recorded token was a string) and progress is mapped
//!   back through it; `notifications/cancelled` names the live id; a 2026-07-28 retry
//!   carries the `requestState` the live server handed out, not the recorded one.
//! - The handshake is the recorded one, negotiated with the live server: a recorded
//!   `server/discover` probe is sent first; refused live as it was recorded, the
//!   recorded `initialize` follows. A failed `initialize` (or a refused probe where the
//!   recording spoke 2026-07-28) stops the run: nothing after it is comparable.
//! - A message waits for the answers and server requests that preceded it on the tape
//!   (see `script`); every wait is bounded by the timeout.
//! - Server notifications are compared as counts per method, not by position, under
//!   the rule `reel diff` uses too ([`NotificationCheck`]).
//!
//! Invariants: the child is always stopped (stdin closed, killed after
//! `crate::live::STOP_GRACE`); the report's exit code is 2 when any drift is
//! structural, else 1 when any drift exists, else 0.

pub(crate) mod compare;
#[cfg(feature = "http")]
pub(crate) mod http;
pub(crate) mod peer;
pub(crate) mod record;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod script;

use std::path::PathBuf;
use std::time::Duration;

use reel_mcp::normalize::Pointer;

pub use compare::{Class, Kind};
pub use reel_mcp::notifications::NotificationCheck;
pub use report::{Drift, Report};
pub use script::{Script, ScriptError};

/// The default answer timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The default time a server has to start and answer its first request (`npx` may
/// download the server first).
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(60);

/// What to verify.
#[derive(Clone, Debug)]
pub struct VerifyOptions {
    /// The recording.
    pub trace: PathBuf,
    /// The session to play (1-based).
    pub session: usize,
    /// The live server's command and arguments.
    pub command: Vec<String>,
    /// The live server's URL (`--url`, Streamable HTTP or legacy HTTP+SSE); when set,
    /// `command` is not used.
    pub url: Option<String>,
    /// `--header NAME=VALUE`: sent with every HTTP request to the live server (values
    /// already expanded from the environment); never written to the live run's trace.
    pub headers: Vec<(String, String)>,
    /// `--upstream-ca`: extra certificate authorities for an `https://` URL.
    pub ca: Vec<PathBuf>,
    /// How long to wait for each answer (and for each server request the recording
    /// saw before the next client message).
    pub timeout: Duration,
    /// How long the server has to start and answer the first request (the handshake);
    /// the longer of this and `timeout` applies to it.
    pub start_timeout: Duration,
    /// The user's volatile fields (JSON pointers into the JSON-RPC message).
    pub ignore: Vec<Pointer>,
    /// How notifications are compared.
    pub notifications: NotificationCheck,
    /// Write the live run as a trace into this directory; `None`: do not record it.
    pub record_dir: Option<PathBuf>,
    /// The live run's label (default: the recording's label, or its file stem, plus
    /// `-verify`).
    pub label: Option<String>,
}

impl VerifyOptions {
    /// Defaults: session 1, [`DEFAULT_TIMEOUT`], [`DEFAULT_START_TIMEOUT`], counts of notifications, no record.
    pub fn new(trace: impl Into<PathBuf>, command: Vec<String>) -> VerifyOptions {
        VerifyOptions {
            trace: trace.into(),
            session: 1,
            command,
            url: None,
            headers: Vec::new(),
            ca: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            start_timeout: DEFAULT_START_TIMEOUT,
            ignore: Vec::new(),
            notifications: NotificationCheck::Count,
            record_dir: None,
            label: None,
        }
    }
}

/// Why verify could not compare anything.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The recording cannot be read or holds nothing to play (exit 66).
    #[error(transparent)]
    Script(#[from] ScriptError),
    /// The server cannot be started (exit 69).
    #[error("cannot start the server `{command}`: {source}")]
    Spawn {
        /// The command, as one would type it.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// `--url` is not a URL verify can use (exit 64).
    #[error("{why}")]
    Url {
        /// The URL.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// The server started but never answered the handshake (exit 69).
    #[error("the server `{command}` {why}{}", stderr_hint(.stderr))]
    NoHandshake {
        /// The command.
        command: String,
        /// What happened: exited (with its status) or stayed silent past the timeout.
        why: String,
        /// The end of its stderr.
        stderr: String,
    },
    /// The live run's trace cannot be created (exit 73).
    #[error("{dir}: cannot create the live run's trace: {source} (--no-record skips it)")]
    Record {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

fn stderr_hint(stderr: &str) -> String {
    let tail = stderr.trim_end();
    if tail.is_empty() {
        String::new()
    } else {
        format!("; its stderr ends with:\n{tail}")
    }
}

/// Plays the recording against the live server and reports drift.
pub fn verify(opts: &VerifyOptions) -> Result<Report, VerifyError> {
    verify_reporting(opts, &mut |_| {})
}

/// [`verify`], telling `progress` how much of the recording is read before the play
/// starts (the long part on a multi-gigabyte trace).
pub fn verify_reporting(
    opts: &VerifyOptions,
    progress: &mut dyn FnMut(reel_trace::Progress),
) -> Result<Report, VerifyError> {
    let script = Script::load_reporting(&opts.trace, opts.session, progress)?;
    run::Run::start(&script, opts)?.play()
}

/// The rules verify adds to the shared normalisation, as text for `--help`.
pub fn rules_help() -> String {
    let mut s = String::new();
    for (pointer, why) in compare::VERIFY_IGNORED {
        s.push_str(&format!("  {pointer:<22} {why}\n"));
    }
    s.push_str(&format!(
        "  {:<22} two refusals of the probe are equal whatever their error (a client falls back either way)\n",
        "server/discover"
    ));
    s
}
