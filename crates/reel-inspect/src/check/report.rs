//! The result of a check: the [`CheckReport`] of one trace, its [`Problem`]s and what its seal
//! says ([`SealOutcome`]), as they serialise to the entries of `reel check --json`
//! (schema `reel.check/1`).

use serde::Serialize;

use super::rules::{Rule, Severity};
use reel_trace::seal::Verification;

/// One problem found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Problem {
    /// The file it is in (a rotated companion, or the trace itself).
    pub file: String,
    /// 1-based line number in that file; absent for file-level problems and summaries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// The rule broken.
    pub rule: Rule,
    /// The rule's severity.
    pub severity: Severity,
    /// What is wrong and, where useful, what to do.
    pub message: String,
    /// For aggregated problems (unknown names, summaries of unlisted problems): how many
    /// occurrences this line stands for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
}

/// The result of checking one trace.
#[derive(Clone, Debug, Serialize)]
pub struct CheckReport {
    /// The trace as named by the caller.
    pub file: String,
    /// The files read, in order (rotated companions first).
    pub files: Vec<String>,
    /// Lines read.
    pub lines: u64,
    /// Bytes in the files.
    pub bytes: u64,
    /// Sessions (meta lines).
    pub sessions: u64,
    /// Errors found (listed or not).
    pub errors: u64,
    /// Warnings found (listed or not).
    pub warnings: u64,
    /// Infos found (listed or not).
    pub infos: u64,
    /// The problems listed, in file and line order; summaries last, then the seal's.
    pub problems: Vec<Problem>,
    /// With `--verify`: what the trace's seal says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seal: Option<SealOutcome>,
}

impl CheckReport {
    /// True when the trace violates the format.
    pub fn has_errors(&self) -> bool {
        self.errors > 0
    }

    /// The listed problems of one rule.
    pub fn of_rule(&self, rule: Rule) -> impl Iterator<Item = &Problem> {
        self.problems.iter().filter(move |p| p.rule == rule)
    }
}

/// The `seal` member of a checked file: what its seal says, or why it could not be read.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum SealOutcome {
    /// The seal was read and the trace verified against it.
    Verified(Box<Verification>),
    /// The seal is missing, unreadable or not a seal: the trace is not verified.
    Unreadable {
        /// The sidecar looked for.
        seal: String,
        /// Why it could not be used.
        unreadable: String,
    },
}
