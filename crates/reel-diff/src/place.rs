//! Where a line of a side is ([`Loc`]) and the exchanges named before a drift
//! ([`Ring`]): what the side reader, the payload re-reader and the LLM bodies share.

use std::sync::Arc;

/// Exchanges named as context before a drift.
pub const CONTEXT: usize = 3;

/// Where a line is: its file (index into the side's files), 1-based line number, and
/// byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Loc {
    pub file: u16,
    pub line: u64,
    pub offset: u64,
    pub len: u64,
}

/// The last [`CONTEXT`] exchanges or turns read on a side, oldest first.
pub(crate) type Ring = [Option<(Arc<str>, Loc)>; CONTEXT];
