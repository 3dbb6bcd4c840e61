//! `reel stats`: per-session, per-tool and per-model aggregates of one or more traces,
//! as the `mcp-tape.stats/1` document (research/mcp-tape.md §1.11) that users of
//! mcp-tape already read.
//!
//! Why it is shaped this way: traces are large and message-heavy, so the scan streams
//! ([`TraceReader`](reel_trace::reader::TraceReader), memory bounded by the longest line) and reads each message line
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

mod collect;
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

use std::path::PathBuf;

pub use collect::Collector;
pub use errors::{ErrorRow, ErrorSource, MAX_ERRORS, MAX_MESSAGE_BYTES};
pub use models::NO_MODEL;
pub use prices::{Price, PriceTable};
pub use report::{
    Cost, FileRef, LineCounts, ModelRow, ModelSummary, Models, SCHEMA, Session, Stats, ToolRow,
    Warning,
};
pub use tools::Origin;

use reel_trace::reader::OpenError;
use reel_trace::{Progress, Throttle};

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
