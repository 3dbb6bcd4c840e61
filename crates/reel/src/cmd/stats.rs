//! `reel stats TRACE… [--json]`: per-session, per-tool and per-model aggregates.
//!
//! Wiring only: names → traces, the traces → a `reel_inspect::stats` report, the report
//! → the tables of `reel_inspect::stats::render` for people or the `mcp-tape.stats/1`
//! JSON document for programs, failures → exit codes.

use std::io::Write as _;
use std::path::PathBuf;

use reel_inspect::stats::{self, render};

use crate::cmd::trace_arg::RunDir;
use crate::exit;
use crate::output::{Bar, Output};

/// Arguments of `reel stats`.
#[derive(clap::Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// Traces: trace files or run names (the newest run recorded with that --name in
    /// --dir; NAME~1 is the one before it), each read with its rotated companions
    /// FILE.N … FILE.1 first.
    #[arg(required = true, value_name = "TRACE")]
    traces: Vec<String>,

    #[command(flatten)]
    runs: RunDir,

    /// Print the mcp-tape.stats/1 JSON document instead of tables.
    #[arg(long)]
    json: bool,
}

const AFTER_HELP: &str = "\
Output:
  Without --json: the session, a tools table (calls, errors, pending, p50/p95 latency,
  origin), a models table (turns, tokens, cache hit rate, TTFT p50/p95, estimated cost),
  then errors and warnings.
  With --json: one document in mcp-tape's mcp-tape.stats/1 schema, field by field
  (schema, file, session, models, tools, errors, warnings). Unknown values are null,
  never 0.

Several traces:
  They merge into ONE document: `file` becomes the list of paths in the order given;
  session counts are summed, startedAt/endedAt span all traces, distinct kinds join
  with '+' (\"mcp+llm\"), label/command/producer/endReason/exitCode come from the first
  trace that has them; tools and models aggregate over all traces. JSON-RPC ids and
  tool_use ids are never paired across traces, nor across sessions appended to one
  file (warning multiple-sessions-in-file). Given the MCP plane and the agent plane of
  one run, the same calls are counted twice (warning mixed-tool-planes).

Semantics:
  A tools/call is an error when answered with a JSON-RPC error or result.isError: true;
  an MRTR \"input required\" round is not counted as a call; unanswered calls are
  `pending` (no latency). Over HTTP, an error without an id on a request's own HTTP
  response (a 400 refusing a server/discover probe) is that request's answer, as check,
  play and verify pair it. Echoed turns are excluded from every model number and from
  tool pairing. Percentiles are nearest-rank. Cost uses the bundled per-million-token
  list-price table; a model is priced only by its exact id or a dated variant
  (<id>-YYYYMMDD, <id>-YYYY-MM-DD); unknown models stay unpriced, never guessed.

Limits:
  The errors list keeps the 10000 earliest errors, each message cut to 500 bytes.
  Memory stays about 1 MiB + 2 x the longest line, plus what must be reported: open
  requests, tools, models, distinct latency values, and the tool blocks of the current
  session's turns (paired in time order when the session ends).

Exit codes:
  0   the report was written
  66  a trace cannot be read (missing, a directory, empty, or its first line is not
      a JSON object)";

/// Runs `reel stats`.
pub fn run(args: Args, out: &Output) -> anyhow::Result<u8> {
    let traces = args
        .traces
        .iter()
        .map(|t| args.runs.resolve_readable(t))
        .collect::<anyhow::Result<Vec<PathBuf>>>()?;
    let mut bar = Bar::new("reel stats");
    let report = stats::stats_for_paths_reporting(&traces, &mut |p| bar.show(p));
    drop(bar);
    let report = report.map_err(|e| exit::coded(exit::NO_INPUT, e.to_string()))?;
    if args.json {
        out.json(&report)?;
    } else {
        let text = render::text(&report, &|t, s| out.tone(t, s));
        let mut stdout = out.human_stdout();
        stdout.write_all(text.as_bytes())?;
        stdout.flush()?;
    }
    Ok(exit::OK)
}
