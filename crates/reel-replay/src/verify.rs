//! `reel verify TRACE -- CMD…`: the recorded client played against a live server.
//!
//! One recording of an agent's session becomes a regression test of the server: reel
//! starts CMD (stdio), or talks to the server at `--url` over HTTP (`http`), sends the recorded client's requests and notifications in
//! recorded order (`script`), answers the server's own requests (sampling, elicitation,
//! roots) with the recorded answers, and compares every answer with the recorded one
//! under the shared normalisation (`compare`). The run is written as a trace
//! (`record`) and summed up in a `VerifyReport` (`report`).
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
mod error;
#[cfg(feature = "http")]
pub(crate) mod http;
mod options;
pub(crate) mod peer;
pub(crate) mod record;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod script;

pub use compare::{Class, Kind};
pub use error::VerifyError;
pub use options::{DEFAULT_START_TIMEOUT, DEFAULT_TIMEOUT, VerifyOptions};
pub use reel_mcp::notifications::NotificationCheck;
pub use report::{Drift, VerifyReport};
pub use script::{Script, ScriptError};

/// Plays the recording against the live server and reports drift.
pub fn verify(opts: &VerifyOptions) -> Result<VerifyReport, VerifyError> {
    verify_reporting(opts, &mut |_| {})
}

/// [`verify`], telling `progress` how much of the recording is read before the play
/// starts (the long part on a multi-gigabyte trace).
pub fn verify_reporting(
    opts: &VerifyOptions,
    progress: &mut dyn FnMut(reel_trace::Progress),
) -> Result<VerifyReport, VerifyError> {
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
