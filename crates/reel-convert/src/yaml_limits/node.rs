//! An anchored node as the walk tracks it (where it started, what ends it, its size
//! once ended) and what a token is to a node awaiting its content.

/// What ends an anchored node, as far as the walk has seen it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ends {
    /// Its first token is still to come.
    Awaiting,
    /// At the end of the token being read (a scalar, or nothing).
    ThisToken,
    /// When the flow level drops below this.
    FlowBelow(usize),
    /// At a later line of block context starting left of this column.
    LeftOf(u64),
}

/// An anchored node: where it started and, once it ended, its expanded size.
#[derive(Debug)]
pub(super) struct Node {
    /// Expanded bytes before it.
    pub(super) start: u64,
    /// The line of its anchor.
    pub(super) line: u64,
    /// The flow level at its anchor.
    pub(super) flow: usize,
    pub(super) ends: Ends,
    pub(super) size: Option<u64>,
}

/// What a token is to an anchored node awaiting its content.
#[derive(Debug, Clone, Copy)]
pub(super) enum Content {
    /// A scalar or an alias: the whole node.
    Scalar,
    /// `[` or `{`: the node ends with its collection.
    FlowStart,
    /// An indicator: the node is empty.
    Other,
}
