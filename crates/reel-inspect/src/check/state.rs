//! What the checker keeps between lines: where a problem is, the problems and tallies
//! filed so far, the `history_elided` markers and request bodies waiting for each
//! other, and the requests waiting for their responses.

use reel_trace::hash::{HashError, RequestDigests};

use super::report::Problem;

/// Where a problem is: an index into the files read, and a line number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Loc {
    pub(super) file: usize,
    pub(super) line: u64,
}

/// An aggregated occurrence count of one name under one rule.
pub(super) struct Tally {
    pub(super) first: Loc,
    pub(super) count: u64,
}

/// A problem before it is placed: located by index, so that sorting is cheap.
pub(super) struct Found {
    pub(super) loc: Option<Loc>,
    pub(super) problem: Problem,
}

/// A `history_elided` marker waiting for its request body.
pub(super) struct Marker {
    pub(super) loc: Loc,
    pub(super) count: u64,
    pub(super) sha256: String,
    pub(super) request_sha256: String,
}

/// A request body seen in an `llm.*` event.
pub(super) struct StoredBody {
    pub(super) loc: Loc,
    /// True when the body is the exact bytes (a JSON string), so `request_sha256` can be
    /// checked too; false for a body object (a re-encoding).
    pub(super) exact: bool,
    pub(super) digests: Result<RequestDigests, HashError>,
}

/// A request waiting for its response.
pub(super) struct PendingRequest {
    pub(super) loc: Loc,
    pub(super) method: String,
}
