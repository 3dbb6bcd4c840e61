//! What verifying a trace against its seal finds: the kinds of difference, a finding
//! (where and what), the seal's status, the whole verification, and why a trace cannot
//! be verified at all. The sidecar reader reports in these terms too.

use std::io;
use std::path::PathBuf;

use serde::Serialize;

use crate::reader::OpenError;

/// What a finding says happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// A sealed line's bytes are not what was sealed.
    Changed,
    /// Sealed lines are missing from the trace.
    Removed,
    /// Lines not in the seal come before a sealed line.
    Inserted,
    /// Sealed lines are in another order.
    Reordered,
    /// The trace ends before its seal does (or is cut off inside its last line).
    Truncated,
    /// Lines follow the last line of a closed seal.
    Appended,
    /// The seal itself was edited: its records or its chain do not hold together.
    SealEdited,
    /// The seal was made with another key than the one given.
    WrongKey,
    /// A key was given, but the seal is not keyed: anyone could have written it.
    NotKeyed,
    /// The seal has no close record: lines after it are unsealed.
    Open,
    /// The seal is keyed and no key was given: who wrote it is not checked.
    Unauthenticated,
}

impl FindingKind {
    /// The kind's kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::Changed => "changed",
            FindingKind::Removed => "removed",
            FindingKind::Inserted => "inserted",
            FindingKind::Reordered => "reordered",
            FindingKind::Truncated => "truncated",
            FindingKind::Appended => "appended",
            FindingKind::SealEdited => "seal-edited",
            FindingKind::WrongKey => "wrong-key",
            FindingKind::NotKeyed => "not-keyed",
            FindingKind::Open => "open",
            FindingKind::Unauthenticated => "unauthenticated",
        }
    }

    /// True for what makes the seal fail: everything but an open seal and an unchecked
    /// key.
    pub fn fails(self) -> bool {
        !matches!(self, FindingKind::Open | FindingKind::Unauthenticated)
    }
}

/// One thing a verification found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// What happened.
    pub kind: FindingKind,
    /// Where: the trace file (a rotated companion or the trace), or the sidecar for
    /// findings about the seal itself.
    pub file: String,
    /// 1-based line in `file`; absent for findings about a whole file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// The number of the sealed line concerned (`n` of its record); `sealLine` in JSON.
    #[serde(rename = "sealLine", skip_serializing_if = "Option::is_none")]
    pub seal_line: Option<u64>,
    /// What happened, in a sentence (it quotes nothing from the trace).
    pub message: String,
}

/// A verification's outcome in a word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SealStatus {
    /// Every line is sealed and matches; the seal is closed and holds together.
    Intact,
    /// Every sealed line matches, but the seal was never closed.
    Open,
    /// Something failed (see the findings).
    Tampered,
}

/// What [`verify`](super::verify()) found. Serialises as the `seal` member of a `reel.check/1` file
/// entry (findings apart: they are the entry's problems).
#[derive(Clone, Debug, Serialize)]
pub struct Verification {
    /// The sidecar read.
    pub seal: String,
    /// The outcome in a word.
    pub status: SealStatus,
    /// The seal's chain function: `sha256` or `hmac-sha256`.
    pub chain: String,
    /// The chain was checked with the seal's key: the seal was written by a holder of it.
    pub authenticated: bool,
    /// Line records in the seal (up to the first edited one).
    pub sealed: u64,
    /// Trace lines that match their records, counted from the first line on.
    pub verified: u64,
    /// The seal has its close record.
    pub closed: bool,
    /// Trace lines after the last record of a seal that is not closed.
    pub unsealed: u64,
    /// The first failing finding, for scripts: its kind and place.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first: Option<Finding>,
    /// Everything found, in the order found.
    #[serde(skip)]
    pub findings: Vec<Finding>,
}

/// Why a trace cannot be verified at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The trace cannot be read.
    #[error(transparent)]
    Trace(#[from] OpenError),
    /// The trace has no seal beside it.
    #[error(
        "{}: no seal (seal a finished trace with `reel seal`, or record with `reel rec --seal`)",
        path.display()
    )]
    NoSeal {
        /// The sidecar looked for.
        path: PathBuf,
    },
    /// The seal cannot be read.
    #[error("{}: cannot read the seal: {source}", path.display())]
    SealUnreadable {
        /// The sidecar.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The sidecar is not a seal this reel reads.
    #[error("{}: not a seal: {problem}", path.display())]
    NotASeal {
        /// The sidecar.
        path: PathBuf,
        /// What it holds instead.
        problem: String,
    },
}
