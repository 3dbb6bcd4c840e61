//! Tool calls: pairing `tools/call` requests with their responses, pairing turn
//! `tool_use` blocks with their `tool_result` blocks, and the per-tool table.
//!
//! Invariants:
//! - JSON-RPC pairing keys on (session, reel `session`, id) where a session is one
//!   `meta` line of one trace given on the command line: ids restart with each session
//!   and never pair across files. Ids keep their JSON type ([`RpcId`]: `"1"` is not `1`).
//! - A response closes the latest earlier unanswered request with its id. A request that
//!   reuses a still-pending id leaves the earlier one pending (it is a call that got no
//!   answer we can tell apart), never dropped.
//! - Why not `reel_trace::jsonrpc::Pairer`: stats reads its borrowed wire records, not an
//!   `Envelope`, pairs client requests only and keys on sessions interned to numbers (it
//!   is the hot path of `reel stats` over gigabytes); the id-less rule it shares is
//!   `HttpCarried`, the one Pairer applies.
//! - A multi-round-trip "input required" round is not an execution: it is neither a
//!   call nor a latency. Unanswered requests count as calls and as `pending`, with no
//!   latency (unknown is not zero).
//! - Turn pairing runs over the non-echoed turns of one session sorted by `t` (stable),
//!   closing `tool_result`s before opening the same turn's `tool_use`s.

use std::collections::HashMap;

use serde::Serialize;

use super::errors::{ErrorList, ErrorRow, ErrorSource};
use super::samples::Samples;
use reel_trace::Timestamp;
use reel_trace::jsonrpc::RpcId;

/// Where a tool's calls were seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// JSON-RPC `tools/call` messages.
    Mcp,
    /// Turn `tool_use` blocks.
    Turn,
    /// Both.
    Mixed,
}

/// Per-tool aggregates, kept until the report is built.
#[derive(Debug, Default)]
pub(crate) struct ToolSlot {
    pub name: String,
    pub calls: u64,
    pub errors: u64,
    pub pending: u64,
    pub latencies: Samples,
    pub from_mcp: bool,
    pub from_turns: bool,
}

impl ToolSlot {
    pub fn origin(&self) -> Origin {
        match (self.from_mcp, self.from_turns) {
            (true, true) => Origin::Mixed,
            (false, true) => Origin::Turn,
            _ => Origin::Mcp,
        }
    }
}

/// Every tool seen, by name.
#[derive(Debug, Default)]
pub(crate) struct ToolTable {
    index: HashMap<String, u32>,
    pub slots: Vec<ToolSlot>,
}

impl ToolTable {
    /// The slot number of `name`, created on first sight (no allocation on a hit).
    pub fn intern(&mut self, name: &str) -> u32 {
        if let Some(i) = self.index.get(name) {
            return *i;
        }
        let i = self.slots.len() as u32;
        self.slots.push(ToolSlot {
            name: name.to_owned(),
            ..ToolSlot::default()
        });
        self.index.insert(name.to_owned(), i);
        i
    }

    pub fn slot(&mut self, i: u32) -> &mut ToolSlot {
        &mut self.slots[i as usize]
    }
}

/// The name used when a call carries none.
pub(crate) const UNKNOWN_TOOL: &str = "(unknown)";

/// What pairs a JSON-RPC response with its request.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct PendingKey {
    /// Session number (one per `meta` line per trace; unique across the whole run).
    pub session: u32,
    /// reel's `session` member, interned (0 when absent).
    pub channel: u32,
    pub id: RpcId,
}

/// A request waiting for its response.
#[derive(Debug)]
pub(crate) enum Pending {
    /// A `tools/call`.
    Tool {
        tool: u32,
        at: Option<Timestamp>,
        t: Stamp,
    },
    /// Any other request: its method names a JSON-RPC error answering it.
    Other { method: Box<str> },
}

/// A request's `t`, kept for the error row its call may produce. The canonical form
/// (24 bytes) is held inline: requests are a third of a busy trace's lines, and a heap
/// copy each would show in the scan's profile.
#[derive(Debug)]
pub(crate) enum Stamp {
    None,
    Canonical([u8; 24]),
    Other(Box<str>),
}

impl Stamp {
    pub fn new(t: Option<&str>) -> Stamp {
        match t {
            None | Some("") => Stamp::None,
            Some(t) => match <[u8; 24]>::try_from(t.as_bytes()) {
                Ok(b) => Stamp::Canonical(b),
                Err(_) => Stamp::Other(t.into()),
            },
        }
    }

    pub fn text(&self) -> Option<String> {
        match self {
            Stamp::None => None,
            Stamp::Canonical(b) => std::str::from_utf8(b).ok().map(str::to_owned),
            Stamp::Other(s) => Some(s.to_string()),
        }
    }
}

/// How a `tools/call` ended.
pub(crate) enum Outcome {
    /// The tool ran (`error` holds the failure, if any).
    Executed { error: Option<String> },
    /// An MRTR round: the server asked for input; not an execution.
    InputRequired,
}

/// Open JSON-RPC requests of the trace being read.
#[derive(Debug, Default)]
pub(crate) struct McpPairing {
    pub pending: HashMap<PendingKey, Pending>,
}

impl McpPairing {
    /// Registers a request; a still-pending request with the same key becomes an
    /// unanswered call.
    pub fn open(&mut self, key: PendingKey, p: Pending, tools: &mut ToolTable) {
        if let Some(old) = self.pending.insert(key, p) {
            count_unanswered(old, tools);
        }
    }

    /// Records a tool call's outcome.
    pub fn close_tool(
        tools: &mut ToolTable,
        errors: &mut ErrorList,
        (tool, at, t): (u32, Option<Timestamp>, Stamp),
        answered_at: Option<Timestamp>,
        outcome: Outcome,
    ) {
        let Outcome::Executed { error } = outcome else {
            return;
        };
        let slot = tools.slot(tool);
        slot.calls += 1;
        slot.from_mcp = true;
        if let (Some(a), Some(b)) = (at, answered_at) {
            slot.latencies.add((b.0 - a.0).max(0) as f64);
        }
        if let Some(message) = error {
            slot.errors += 1;
            errors.push(ErrorRow {
                t: t.text(),
                source: ErrorSource::Tool,
                name: slot.name.clone(),
                message,
            });
        }
    }

    /// Counts every request still open as an unanswered call (end of a session).
    pub fn finish(&mut self, tools: &mut ToolTable) {
        for (_, p) in self.pending.drain() {
            count_unanswered(p, tools);
        }
    }
}

fn count_unanswered(p: Pending, tools: &mut ToolTable) {
    if let Pending::Tool { tool, .. } = p {
        let slot = tools.slot(tool);
        slot.calls += 1;
        slot.pending += 1;
        slot.from_mcp = true;
    }
}

/// The tool blocks of one non-echoed turn, kept until its session ends so that turns can
/// be paired in `t` order.
#[derive(Debug)]
pub(crate) struct TurnTools {
    pub t: Option<String>,
    /// `tool_result` blocks: (tool_use_id, error message when `is_error`).
    pub results: Vec<(String, Option<String>)>,
    /// `tool_use` blocks: (id, tool slot).
    pub uses: Vec<(String, u32)>,
}

/// Turn pairing for one session.
#[derive(Debug, Default)]
pub(crate) struct TurnPairing {
    turns: Vec<TurnTools>,
}

impl TurnPairing {
    pub fn push(&mut self, turn: TurnTools) {
        if !turn.results.is_empty() || !turn.uses.is_empty() {
            self.turns.push(turn);
        }
    }

    /// Pairs the session's turns and adds the calls to the tool table.
    pub fn finish(&mut self, tools: &mut ToolTable, errors: &mut ErrorList) {
        struct Open<'a> {
            tool: u32,
            t: Option<&'a str>,
        }
        let mut turns = std::mem::take(&mut self.turns);
        // Stable: turns with equal (or missing) `t` keep file order.
        turns.sort_by(|a, b| {
            a.t.as_deref()
                .unwrap_or("")
                .cmp(b.t.as_deref().unwrap_or(""))
        });
        let mut open: HashMap<&str, Open<'_>> = HashMap::new();
        for turn in &turns {
            let at = turn.t.as_deref();
            for (id, error) in &turn.results {
                let Some(o) = open.remove(id.as_str()) else {
                    continue; // an orphan result: tolerated
                };
                let slot = tools.slot(o.tool);
                slot.calls += 1;
                slot.from_turns = true;
                if let Some(ms) = ms_between(o.t, at) {
                    slot.latencies.add(ms as f64);
                }
                if let Some(message) = error {
                    slot.errors += 1;
                    errors.push(ErrorRow {
                        t: o.t.map(str::to_owned),
                        source: ErrorSource::Tool,
                        name: slot.name.clone(),
                        message: message.clone(),
                    });
                }
            }
            for (id, tool) in &turn.uses {
                let reused = open.insert(id.as_str(), Open { tool: *tool, t: at });
                if let Some(o) = reused {
                    count_turn_pending(tools, o.tool);
                }
            }
        }
        for (_, o) in open {
            count_turn_pending(tools, o.tool);
        }
    }
}

fn count_turn_pending(tools: &mut ToolTable, tool: u32) {
    let slot = tools.slot(tool);
    slot.calls += 1;
    slot.pending += 1;
    slot.from_turns = true;
}

/// Milliseconds from `a` to `b`, at least 0; `None` unless both parse.
pub(crate) fn ms_between(a: Option<&str>, b: Option<&str>) -> Option<i64> {
    let a = Timestamp::parse(a?)?;
    let b = Timestamp::parse(b?)?;
    Some((b.0 - a.0).max(0))
}
