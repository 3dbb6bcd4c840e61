//! `reel export`'s work for the recording formats: a trace written in another tool's
//! format, with the defaults the command gives (the run's label names the mcptape run,
//! the mcporter server and the MMSP trace id) and what the format holds, for the note
//! on what it left out.
//!
//! mcptape and MMSP write files of their own ([`export_files`]); mcporter, mcp-cassette
//! and mcp-vcr write one stream the caller opens ([`export_stream`]), so a file named
//! for the output is created only for a format that writes one.

use std::io::Write;
use std::path::{Path, PathBuf};

use reel_trace::TraceReader;
use reel_trace::line::Line;

use crate::{ExportError, Format, Left, cassette, mcp_vcr, mcporter, mcptape, mmsp};

/// The label of a trace with none.
const NO_LABEL: &str = "run";

/// The MMSP cache directory when none is given.
const MMSP_CACHE: &str = "cache";

/// What to export, and how.
#[derive(Debug, Clone, Copy)]
pub struct ExportOptions<'a> {
    /// The format to write (one of [`Format::WRITTEN`]).
    pub format: Format,
    /// The trace.
    pub trace: &'a Path,
    /// mcptape: the run directory to create (default: `.mcptape/runs/<label>`).
    pub run_dir: Option<&'a Path>,
    /// mcporter: the server the recording is for (default: the trace's label).
    pub server: Option<&'a str>,
    /// MMSP: the cache directory (default: `cache`).
    pub cache: Option<&'a Path>,
    /// MMSP: the trace id (default: the trace's label).
    pub id: Option<&'a str>,
}

/// What an export wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Written {
    /// An mcptape run directory.
    Run(PathBuf),
    /// MMSP `.json` files (each with its `.txt`).
    Files(Vec<PathBuf>),
    /// The stream given.
    Stream,
}

/// What an export did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportOutcome {
    /// What was written.
    pub written: Written,
    /// What the format had no place for.
    pub left: Left,
    /// What the format holds, for the note on what it left out ("mcptape runs hold MCP
    /// messages").
    pub holds: &'static str,
}

/// Exports `options.trace` in a format that writes files of its own (mcptape, MMSP).
pub fn export_files(options: &ExportOptions<'_>) -> Result<ExportOutcome, ExportError> {
    let label = trace_label(options.trace);
    match options.format {
        Format::Mcptape => {
            // The label is the trace's own word: one safe file-name part, never a path.
            let dir = options.run_dir.map_or_else(
                || PathBuf::from(".mcptape/runs").join(reel_trace::names::file_name_part(&label)),
                Path::to_path_buf,
            );
            let left = mcptape::export(options.trace, &dir)?;
            Ok(ExportOutcome {
                written: Written::Run(dir),
                left,
                holds: "mcptape runs hold MCP messages",
            })
        }
        Format::Mmsp => {
            let cache = options.cache.unwrap_or(Path::new(MMSP_CACHE));
            let id = options.id.unwrap_or(&label);
            let (files, left) = mmsp::export(options.trace, cache, id)?;
            Ok(ExportOutcome {
                written: Written::Files(files),
                left,
                holds: "MMSP traces hold conversations",
            })
        }
        other => Err(not_written(other, "as files")),
    }
}

/// Exports `options.trace` to `out` in a format that writes one stream (mcporter,
/// mcp-cassette, mcp-vcr).
pub fn export_stream(
    options: &ExportOptions<'_>,
    out: &mut dyn Write,
) -> Result<ExportOutcome, ExportError> {
    let (left, holds) = match options.format {
        Format::Mcporter => {
            let server = options
                .server
                .map_or_else(|| trace_label(options.trace), str::to_owned);
            (
                mcporter::export(options.trace, &server, out)?,
                "mcporter recordings hold one JSON-RPC message per line",
            )
        }
        Format::Cassette => (
            cassette::export(options.trace, out)?,
            "cassettes hold JSON-RPC messages",
        ),
        Format::McpVcr => (
            mcp_vcr::export(options.trace, out)?,
            "mcp-vcr transcripts hold JSON-RPC messages",
        ),
        other => return Err(not_written(other, "as one stream")),
    };
    Ok(ExportOutcome {
        written: Written::Stream,
        left,
        holds,
    })
}

fn not_written(format: Format, how: &str) -> ExportError {
    ExportError::Unfit(format!("reel does not write {} {how}", format.name()))
}

/// The trace's `meta.label`, `run` when it has none (or its first line cannot be read).
pub fn trace_label(trace: &Path) -> String {
    label_of(trace).unwrap_or_else(|| NO_LABEL.to_owned())
}

fn label_of(trace: &Path) -> Option<String> {
    let mut r = TraceReader::open(trace).ok()?;
    let line = r.next_line()?.ok()?;
    match line.parse().ok()? {
        Line::Meta(m) => m.label.clone(),
        _ => None,
    }
}
