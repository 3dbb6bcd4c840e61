//! `reel stats`: per-session, per-tool and per-model aggregates of one or more traces,
//! as the `mcp-tape.stats/1` document (research/mcp-tape.md §1.11) that users of
//! mcp-tape already read.
//!
//! Why it is shaped this way: traces are large and message-heavy, so the scan streams
//! ([`TraceReader`], memory bounded by the longest line) and reads each message line
//! once, borrowing from the line (module `wire`). What it keeps grows only with what it
//! must report: open requests, tools, models, distinct latency values, the tool blocks
//! of the current session's turns (to pair them in `t` order) and at most
//! [`MAX_ERRORS`] errors.
//!
//! Invariants:
//! - Several traces merge into one document but never pair ids across traces, nor
//!   across the sessions (`meta` lines) appended in one trace, nor across reel's
//!   `session` channels.
//! - A line that is not a JSON object is counted in `skippedLines`, never fatal; only a
//!   trace whose first line is not a JSON object (or that has no line) is refused.
//! - Echoed turns count in `records.turn` and `echoedTurns` and nowhere else.

mod errors;
mod lenient;
mod models;
mod prices;
mod records;
pub mod render;
mod report;
mod samples;
mod scan;
mod tools;
mod wire;

use std::path::{Path, PathBuf};

pub use errors::{ErrorRow, ErrorSource, MAX_ERRORS, MAX_MESSAGE_BYTES};
pub use models::NO_MODEL;
pub use prices::{Price, PriceTable};
pub use report::{
    Cost, FileRef, ModelRow, ModelSummary, Models, Records, SCHEMA, Session, Stats, ToolRow,
    Warning,
};
pub use tools::Origin;

use errors::ErrorList;
use models::ModelAgg;
use reel_trace::reader::{OpenError, TraceReader};
use reel_trace::{Progress, Throttle};
use scan::Scan;
use tools::ToolTable;

/// Why a trace cannot be summarised.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StatsError {
    /// The file cannot be opened or read.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// The first line is not a JSON object: this is not a trace.
    #[error("{path}:{line}: not a trace: the first line is {problem}")]
    NotATrace {
        /// The file.
        path: PathBuf,
        /// The line number.
        line: u64,
        /// What the line is instead.
        problem: String,
    },
    /// The file has no line at all.
    #[error("{path}: empty, not a trace (a trace starts with a meta line)")]
    Empty {
        /// The file.
        path: PathBuf,
    },
}

/// Summarises the traces at `paths` (each with its rotated companions) into one report.
pub fn stats_for_paths(paths: &[PathBuf]) -> Result<Stats, StatsError> {
    stats_for_paths_reporting(paths, &mut |_| {})
}

/// [`stats_for_paths`], telling `progress` how many bytes of all the traces are read
/// (every MiB, and at the end).
pub fn stats_for_paths_reporting(
    paths: &[PathBuf],
    progress: &mut dyn FnMut(Progress),
) -> Result<Stats, StatsError> {
    let sizes: Vec<u64> = paths
        .iter()
        .map(|p| {
            reel_trace::reader::trace_files(p)
                .iter()
                .filter_map(|f| std::fs::metadata(f).ok())
                .map(|m| m.len())
                .sum()
        })
        .collect();
    let total = sizes.iter().sum();
    let mut c = Collector::new(PriceTable::bundled());
    let mut before = 0;
    let mut throttle = Throttle::default();
    for (p, size) in paths.iter().zip(&sizes) {
        c.add_trace_reporting(p, &mut |read| {
            let done = (before + read).min(total);
            throttle.tick(Progress { done, total }, progress);
        })?;
        before += size;
    }
    progress(Progress { done: total, total });
    Ok(c.finish())
}

/// Collects aggregates over one or more traces, then builds the report.
pub struct Collector<'p> {
    prices: &'p PriceTable,
    files: Vec<String>,
    sessions: Vec<Session>,
    tools: ToolTable,
    models: ModelAgg,
    errors: ErrorList,
    warnings: Vec<Warning>,
    /// Session numbers handed out so far (pairing keys never collide across traces).
    next_session: u32,
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

    /// Reads the trace at `path` (after its rotated companions `path.N`…`path.1`).
    pub fn add_trace(&mut self, path: &Path) -> Result<(), StatsError> {
        self.add_trace_reporting(path, &mut |_| {})
    }

    /// [`Collector::add_trace`], telling `read` the bytes of this trace read so far
    /// after each line.
    fn add_trace_reporting(
        &mut self,
        path: &Path,
        read: &mut dyn FnMut(u64),
    ) -> Result<(), StatsError> {
        let mut reader = TraceReader::open(path)?;
        let mut scan = Scan::new(self);
        let mut first = true;
        while let Some(line) = reader.next_line() {
            let line = line?;
            if line.raw.skipped.is_some() {
                // Read past, not held (over the reader's limit): a line not counted.
                scan.lost_lines(1);
                read(reader.bytes_read());
                continue;
            }
            let bytes = line.raw.bytes;
            let Some(start) = bytes.iter().position(|b| !b.is_ascii_whitespace()) else {
                continue; // blank lines are not records
            };
            let counted = scan.line(&bytes[start..]);
            if first {
                if let Err(problem) = counted {
                    return Err(StatsError::NotATrace {
                        path: line.path.to_owned(),
                        line: line.raw.number,
                        problem,
                    });
                }
                first = false;
            }
            read(reader.bytes_read());
        }
        if first {
            return Err(StatsError::Empty {
                path: reader
                    .files()
                    .first()
                    .cloned()
                    .unwrap_or_else(|| path.to_owned()),
            });
        }
        let session = scan.finish();
        let file = path.display().to_string();
        if session.metas > 1 {
            self.warnings.push(Warning {
                code: "multiple-sessions-in-file",
                message: format!(
                    "{file}: {} sessions were appended to one file (one per meta line); \
                     JSON-RPC ids and tool_use ids are paired within each session",
                    session.metas
                ),
                sessions: Some(session.metas),
            });
        }
        if session.probes_fell_back > 0 {
            self.warnings.push(Warning {
                code: "discover-probe-fallback",
                message: format!(
                    "{file}: the server refused the client's server/discover probe and the \
                     client fell back to initialize ({} time(s)): a note, not an error",
                    session.probes_fell_back
                ),
                sessions: None,
            });
        }
        if let Some(note) = reel_trace::llm::turnless_note(&session.turnless) {
            self.warnings.push(Warning {
                code: "llm-turns-missing",
                message: format!("{file}: {note}"),
                sessions: None,
            });
        }
        self.sessions.push(session.facts);
        self.files.push(file);
        Ok(())
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
        records: Records::default(),
        skipped_lines: 0,
        end_reason: None,
        exit_code: None,
    }
}
