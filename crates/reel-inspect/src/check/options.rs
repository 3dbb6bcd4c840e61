//! The knobs of a check, the caps that keep its memory bounded, and the event kinds it
//! knows.

use reel_trace::line::kinds;

/// Problems listed per rule by default; the rest are counted in one summary line.
pub const DEFAULT_MAX_PER_RULE: usize = 50;
/// Distinct unknown names (types, kinds, …) tallied per rule; further names are counted
/// together as "(other names)".
pub const MAX_DISTINCT_NAMES: usize = 256;
/// Request bodies (from `llm.*` events) whose prefix digests are kept for markers that
/// come later; the oldest is forgotten first.
pub const MAX_REQUEST_BODIES: usize = 128;
/// `history_elided` markers kept waiting for a request body that comes later.
pub const MAX_PENDING_MARKERS: usize = 4096;
/// Cancelled requests remembered so that a late answer is not called an orphan.
pub const MAX_CANCELLED: usize = 4096;

/// `kind` values this checker knows: reel's own and the spec's conventional ones; the
/// kinds an import writes are [`reel_convert::EVENT_KINDS`] (see [`is_known_kind`]).
pub const KNOWN_KINDS: &[&str] = &[
    kinds::NONJSON,
    kinds::STDERR,
    kinds::GAP,
    kinds::HTTP,
    kinds::SSE,
    kinds::LLM_BODY,
    kinds::LLM_REQUEST,
    kinds::LLM_EXCHANGE,
    kinds::LLM_ERROR,
    kinds::LLM_TRUNCATED,
    "mcp.request",
    "mcp.response",
    "mcp.notification",
];

/// Whether `kind` is one this checker knows: [`KNOWN_KINDS`] or a kind an import writes.
pub fn is_known_kind(kind: &str) -> bool {
    KNOWN_KINDS.contains(&kind) || reel_convert::EVENT_KINDS.contains(&kind)
}

/// Knobs of a check.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Problems listed per rule; further ones are counted in one summary problem.
    pub max_per_rule: usize,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            max_per_rule: DEFAULT_MAX_PER_RULE,
        }
    }
}
