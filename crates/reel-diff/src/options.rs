//! What a diff is asked for ([`DiffOptions`]) and why it cannot be made
//! ([`DiffError`]): the vocabulary every part of the comparison speaks.

use std::path::PathBuf;

use reel_mcp::normalize::Pointer;
use reel_mcp::notifications::NotificationCheck;

/// What changes the comparison.
#[derive(Clone, Debug, Default)]
pub struct DiffOptions {
    /// JSON pointers removed from every message before comparing (`--ignore`); for
    /// turns they address `{"role", "blocks"}`.
    pub ignore: Vec<Pointer>,
    /// Compare notifications outside a call's progress in place, by content, instead of
    /// as counts per method (those whose counts [`DiffOptions::notifications`] does not
    /// compare still count).
    pub strict_notifications: bool,
    /// Which notification counts are compared (`--notifications`): the rule `reel verify`
    /// applies too.
    pub notifications: NotificationCheck,
    /// Count a turn's usage and timing differences as output drift.
    pub strict_usage: bool,
    /// Keep every exchange and turn that paired without drift in
    /// [`crate::DiffReport::passed`] (a report of every exchange: `--format junit`). Off, only
    /// drifts are kept, so memory does not grow with the traces.
    pub keep_passed: bool,
}

/// Why two traces could not be diffed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DiffError {
    /// A trace cannot be opened or read.
    #[error("{source}")]
    Open {
        /// The reader's error (it names the file).
        source: reel_trace::OpenError,
    },
    /// A trace has no lines.
    #[error("{path}: empty, not a trace")]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// A trace's first line is not a JSON object.
    #[error("{path}:1: not a trace: {problem}")]
    NotATrace {
        /// The file.
        path: PathBuf,
        /// What is wrong with line 1.
        problem: String,
    },
    /// A line could not be read again to show or compare it.
    #[error("{path}:{line}: cannot read the line again: {problem}")]
    Reread {
        /// The file.
        path: PathBuf,
        /// Its line.
        line: u64,
        /// Why.
        problem: String,
    },
    /// A reader stopped because the comparison failed (the other error is reported).
    #[error("stopped")]
    Aborted,
}
