//! Why verify could not compare anything, each case with the exit code the CLI gives it.

use std::path::PathBuf;

use super::script::ScriptError;

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
