//! The aggregates of one or more traces while they are read, and the report built from
//! them ([`Collector::finish`]); reading a trace into them is `scan`'s.

use super::errors::ErrorList;
use super::models::ModelAgg;
use super::report::{self, LineCounts, Session};
use super::tools::ToolTable;
use super::{FileRef, MAX_ERRORS, Origin, PriceTable, SCHEMA, Stats, ToolRow, Warning};

/// Collects aggregates over one or more traces, then builds the report.
pub struct Collector<'p> {
    pub(super) prices: &'p PriceTable,
    pub(super) files: Vec<String>,
    pub(super) sessions: Vec<Session>,
    pub(super) tools: ToolTable,
    pub(super) models: ModelAgg,
    pub(super) errors: ErrorList,
    pub(super) warnings: Vec<Warning>,
    /// Session numbers handed out so far (pairing keys never collide across traces).
    pub(super) next_session: u32,
}

impl<'p> Collector<'p> {
    /// A collector pricing with `prices`.
    pub fn new(prices: &'p PriceTable) -> Self {
        Collector {
            prices,
            files: Vec::new(),
            sessions: Vec::new(),
            tools: ToolTable::default(),
            models: ModelAgg::default(),
            errors: ErrorList::default(),
            warnings: Vec::new(),
            next_session: 0,
        }
    }

    /// The report.
    pub fn finish(self) -> Stats {
        let mut warnings = self.warnings;
        let mut tools: Vec<ToolRow> = self
            .tools
            .slots
            .iter()
            .filter(|s| s.calls > 0)
            .map(|s| ToolRow {
                name: s.name.clone(),
                calls: s.calls,
                errors: s.errors,
                p50_ms: s.latencies.percentile(50),
                p95_ms: s.latencies.percentile(95),
                origin: s.origin(),
                pending: s.pending,
            })
            .collect();
        tools.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.name.cmp(&b.name)));
        if tools.iter().any(|t| t.origin != Origin::Turn)
            && tools.iter().any(|t| t.origin != Origin::Mcp)
        {
            warnings.push(Warning {
                code: "mixed-tool-planes",
                message: "tool calls were counted both from JSON-RPC tools/call messages and from \
                          turn tool_use blocks; if they describe the same calls (the MCP plane and \
                          the agent plane of one run), each call is counted twice"
                    .to_owned(),
                sessions: None,
            });
        }
        let (errors, dropped) = self.errors.finish();
        if dropped > 0 {
            warnings.push(Warning {
                code: "errors-truncated",
                message: format!(
                    "{dropped} more errors were left out: the list keeps the {MAX_ERRORS} earliest"
                ),
                sessions: None,
            });
        }
        let file = match self.files.len() {
            1 => FileRef::One(self.files.into_iter().next().unwrap_or_default()),
            _ => FileRef::Many(self.files),
        };
        Stats {
            schema: SCHEMA,
            file,
            session: report::merge_sessions(&self.sessions).unwrap_or_else(empty_session),
            models: self.models.finish(self.prices),
            tools,
            errors,
            warnings,
        }
    }
}

fn empty_session() -> Session {
    Session {
        label: None,
        kind: None,
        started_at: None,
        ended_at: None,
        duration_ms: None,
        command: None,
        producer: None,
        records: LineCounts::default(),
        skipped_lines: 0,
        end_reason: None,
        exit_code: None,
    }
}
