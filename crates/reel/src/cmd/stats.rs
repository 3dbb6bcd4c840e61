//! `reel stats TRACE… [--json]`: per-session, per-tool and per-model aggregates.
//!
//! The work is `reel_trace::stats`; this module parses arguments, maps failures to exit
//! codes and renders the report as a table for people or as the `mcp-tape.stats/1`
//! JSON document for programs.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use reel_trace::stats::{self, ErrorSource, Origin, Stats, StatsError};

use crate::exit;
use crate::output::Output;

/// Arguments of `reel stats`.
#[derive(clap::Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// Trace files (each read with its rotated companions FILE.N … FILE.1 first).
    #[arg(required = true, value_name = "TRACE")]
    traces: Vec<PathBuf>,

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
    let report = match stats::stats_for_paths(&args.traces) {
        Ok(r) => r,
        Err(e) => return Err(exit::coded(exit::NO_INPUT, describe(&e))),
    };
    if args.json {
        out.json(&report)?;
    } else {
        let text = render(&report, out);
        let mut stdout = out.human_stdout();
        stdout.write_all(text.as_bytes())?;
        stdout.flush()?;
    }
    Ok(exit::OK)
}

fn describe(e: &StatsError) -> String {
    match e {
        StatsError::Open(_) => format!("{e} (give the path of a .jsonl trace)"),
        _ => e.to_string(),
    }
}

/// The report as tables.
fn render(r: &Stats, out: &Output) -> String {
    let mut s = String::new();
    render_session(&mut s, r, out);
    render_tools(&mut s, r, out);
    render_models(&mut s, r, out);
    render_errors(&mut s, r, out);
    render_warnings(&mut s, r, out);
    s
}

fn render_session(s: &mut String, r: &Stats, out: &Output) {
    let ss = &r.session;
    let label = crate::output::one_line(ss.label.as_deref().unwrap_or("(no label)"));
    let mut about = vec![ss.kind.clone().unwrap_or_else(|| "no meta line".to_owned())];
    about.extend(ss.producer.clone());
    let _ = writeln!(s, "{}  ({})", out.paint("1", &label), about.join(", "));
    match &r.file {
        stats::FileRef::One(f) => {
            let _ = writeln!(s, "  file      {f}");
        }
        stats::FileRef::Many(fs) => {
            for (i, f) in fs.iter().enumerate() {
                let _ = writeln!(
                    s,
                    "  {}{f}",
                    if i == 0 { "files     " } else { "          " }
                );
            }
        }
    }
    let _ = writeln!(
        s,
        "  time      {} → {}  ({})",
        ss.started_at.as_deref().unwrap_or("?"),
        ss.ended_at.as_deref().unwrap_or("?"),
        ss.duration_ms
            .map_or_else(|| "duration unknown".to_owned(), duration)
    );
    let ended = match (ss.exit_code, &ss.end_reason) {
        (Some(code), Some(reason)) => format!("exit {code}, {reason}"),
        (Some(code), None) => format!("exit {code}"),
        (None, Some(reason)) => reason.clone(),
        (None, None) => "no end line".to_owned(),
    };
    let _ = writeln!(s, "  ended     {ended}");
    let c = &ss.records;
    let skipped = if ss.skipped_lines > 0 {
        out.paint("33", &format!("{} skipped", ss.skipped_lines))
    } else {
        "0 skipped".to_owned()
    };
    let _ = writeln!(
        s,
        "  records   {} ({} meta, {} message, {} event, {} turn, {} end, {} other), {skipped}",
        c.total, c.meta, c.message, c.event, c.turn, c.end, c.other
    );
}

fn render_tools(s: &mut String, r: &Stats, out: &Output) {
    let _ = writeln!(s);
    if r.tools.is_empty() {
        let _ = writeln!(s, "{}  none", out.paint("1", "tools"));
        return;
    }
    let mut t = Table::new(&[
        ("tools", false),
        ("calls", true),
        ("errors", true),
        ("pending", true),
        ("p50", true),
        ("p95", true),
        ("origin", false),
    ]);
    for tool in &r.tools {
        let origin = match tool.origin {
            Origin::Mcp => "mcp",
            Origin::Turn => "turn",
            Origin::Mixed => "mixed",
        };
        t.row(vec![
            Cell::left(&tool.name),
            Cell::right(tool.calls.to_string()),
            Cell::right(tool.errors.to_string()).paint_if(tool.errors > 0, "31"),
            Cell::right(tool.pending.to_string()).paint_if(tool.pending > 0, "33"),
            Cell::right(opt(tool.p50_ms, millis)),
            Cell::right(opt(tool.p95_ms, millis)),
            Cell::left(origin),
        ]);
    }
    t.write(s, out);
}

fn render_models(s: &mut String, r: &Stats, out: &Output) {
    let _ = writeln!(s);
    let Some(m) = &r.models else {
        let _ = writeln!(s, "{}  none (no assistant turns)", out.paint("1", "models"));
        return;
    };
    let mut t = Table::new(&[
        ("models", false),
        ("turns", true),
        ("input", true),
        ("output", true),
        ("cache read", true),
        ("cache write", true),
        ("hit rate", true),
        ("thinking", true),
        ("ttft p50", true),
        ("ttft p95", true),
        ("cost", true),
    ]);
    for row in &m.per_model {
        let thinking = match row.thinking_tokens {
            Some(n) if row.thinking_estimated => format!("~{}", tokens(n)),
            other => opt(other, tokens),
        };
        let cost = match (row.priced, row.est_cost_usd) {
            (false, _) => "unpriced".to_owned(),
            (true, c) => opt(c, usd),
        };
        t.row(vec![
            Cell::left(&row.model),
            Cell::right(row.calls.to_string()),
            Cell::right(opt(row.input_tokens, tokens)),
            Cell::right(opt(row.output_tokens, tokens)),
            Cell::right(opt(row.cache_read_tokens, tokens)),
            Cell::right(opt(row.cache_creation_tokens, tokens)),
            Cell::right(opt(row.cache_hit_rate, percent)),
            Cell::right(thinking),
            Cell::right(opt(row.ttft_p50_ms, millis)),
            Cell::right(opt(row.ttft_p95_ms, millis)),
            Cell::right(cost).paint_if(!row.priced, "33"),
        ]);
    }
    t.write(s, out);
    let sum = &m.summary;
    let mut line = format!(
        "  {} assistant turns of {} turns",
        sum.assistant_turns, sum.turns
    );
    if sum.echoed_turns > 0 {
        let _ = write!(line, " ({} echoed, not counted)", sum.echoed_turns);
    }
    if let Some(ms) = sum.total_model_time_ms {
        let _ = write!(line, "; model time {}", duration(ms));
    }
    let _ = writeln!(s, "{line}");
    let c = &m.cost;
    let total = match c.total_usd {
        Some(usd_total) if c.partial => format!("at least {}", usd(usd_total)),
        Some(usd_total) => usd(usd_total),
        None => "unknown".to_owned(),
    };
    let mut line = format!(
        "  cost {total} (estimated at list prices as of {})",
        c.as_of.as_deref().unwrap_or("?")
    );
    if !c.unpriced_models.is_empty() {
        let unpriced: Vec<_> = c
            .unpriced_models
            .iter()
            .map(|m| crate::output::one_line(m))
            .collect();
        let _ = write!(line, "; unpriced: {}", unpriced.join(", "));
    }
    let _ = writeln!(s, "{line}");
}

fn render_errors(s: &mut String, r: &Stats, out: &Output) {
    if r.errors.is_empty() {
        return;
    }
    let _ = writeln!(s);
    let title = format!("errors ({})", r.errors.len());
    let mut t = Table::new(&[
        (&title, false),
        ("source", false),
        ("name", false),
        ("message", false),
    ]);
    t.header_sgr = "1;31";
    for e in &r.errors {
        let source = match e.source {
            ErrorSource::Tool => "tool",
            ErrorSource::Jsonrpc => "jsonrpc",
            ErrorSource::Llm => "llm",
        };
        t.row(vec![
            Cell::left(e.t.as_deref().unwrap_or("?")),
            Cell::left(source),
            Cell::left(&e.name),
            Cell::left(first_line(&e.message, 120)),
        ]);
    }
    t.write(s, out);
}

fn render_warnings(s: &mut String, r: &Stats, out: &Output) {
    if r.warnings.is_empty() {
        return;
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "{}", out.paint("1;33", "warnings"));
    for w in &r.warnings {
        let _ = writeln!(s, "  {}: {}", out.paint("33", w.code), w.message);
    }
}

/// A cell of a table: its text and an optional SGR colour applied after padding.
struct Cell {
    text: String,
    right: bool,
    sgr: Option<&'static str>,
}

impl Cell {
    /// A cell; its text may come from the trace, so it is made one line (see
    /// [`output::one_line`]) before it is measured.
    fn left(text: impl Into<String>) -> Cell {
        let text = text.into();
        Cell {
            text: crate::output::one_line(&text).into_owned(),
            right: false,
            sgr: None,
        }
    }
    fn right(text: impl Into<String>) -> Cell {
        Cell {
            right: true,
            ..Cell::left(text)
        }
    }
    fn paint_if(mut self, cond: bool, sgr: &'static str) -> Cell {
        if cond {
            self.sgr = Some(sgr);
        }
        self
    }
}

/// A table whose columns are as wide as their widest cell.
struct Table {
    header: Vec<Cell>,
    header_sgr: &'static str,
    rows: Vec<Vec<Cell>>,
}

impl Table {
    /// A table with these column titles; `true` right-aligns a column.
    fn new(header: &[(&str, bool)]) -> Table {
        let header = header
            .iter()
            .map(|(h, right)| {
                if *right {
                    Cell::right(*h)
                } else {
                    Cell::left(*h)
                }
            })
            .collect();
        Table {
            header,
            header_sgr: "1",
            rows: Vec::new(),
        }
    }

    fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push(cells);
    }

    fn write(&self, s: &mut String, out: &Output) {
        let columns = self.header.len();
        let mut widths = vec![0; columns];
        for row in std::iter::once(&self.header).chain(&self.rows) {
            for (w, c) in widths.iter_mut().zip(row) {
                *w = (*w).max(c.text.chars().count());
            }
        }
        let line = |row: &[Cell], header: bool| {
            let mut l = String::new();
            for (i, (c, w)) in row.iter().zip(&widths).enumerate() {
                let pad = w - c.text.chars().count();
                let last = i + 1 == columns;
                let padded = match (c.right, last) {
                    (true, _) => format!("{}{}", " ".repeat(pad), c.text),
                    (false, true) => c.text.clone(),
                    (false, false) => format!("{}{}", c.text, " ".repeat(pad)),
                };
                let sgr = if header { Some(self.header_sgr) } else { c.sgr };
                l.push_str(&match sgr {
                    Some(code) => out.paint(code, &padded),
                    None => padded,
                });
                if !last {
                    l.push_str("  ");
                }
            }
            l
        };
        let _ = writeln!(s, "{}", line(&self.header, true));
        for row in &self.rows {
            let _ = writeln!(s, "{}", line(row, false));
        }
    }
}

fn opt(v: Option<f64>, f: fn(f64) -> String) -> String {
    v.map_or_else(|| "-".to_owned(), f)
}

/// A whole count with thousands separators.
fn tokens(n: f64) -> String {
    if n.fract() != 0.0 || n.abs() >= 1e15 {
        return format!("{n}");
    }
    let digits = (n.abs() as u64).to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if n < 0.0 { format!("-{out}") } else { out }
}

fn percent(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}

fn usd(v: f64) -> String {
    if v.abs() < 1.0 {
        format!("${v:.4}")
    } else {
        format!("${v:.2}")
    }
}

/// A latency: `850ms`, `1.2s`, `2m03s`.
fn millis(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{}ms", ms.round())
    } else {
        duration(ms)
    }
}

/// A duration: `850ms`, `12.3s`, `4m55s`, `2h05m`.
fn duration(ms: f64) -> String {
    let secs = ms / 1000.0;
    if ms < 1000.0 {
        format!("{}ms", ms.round())
    } else if secs < 60.0 {
        format!("{secs:.1}s")
    } else if secs < 3600.0 {
        let s = secs.round() as u64;
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        let m = (secs / 60.0).round() as u64;
        format!("{}h{:02}m", m / 60, m % 60)
    }
}

/// The first line of `text`, cut to `max` characters.
fn first_line(text: &str, max: usize) -> String {
    let first = text.lines().next().unwrap_or("");
    let mut out: String = first.chars().take(max).collect();
    if first.chars().count() > max || text.lines().nth(1).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(tokens(206450.0), "206,450");
        assert_eq!(tokens(999.0), "999");
        assert_eq!(tokens(1000.0), "1,000");
        assert_eq!(millis(850.0), "850ms");
        assert_eq!(millis(1234.0), "1.2s");
        assert_eq!(duration(295_226.0), "4m55s");
        assert_eq!(usd(0.48766), "$0.4877");
        assert_eq!(usd(12.5), "$12.50");
        assert_eq!(percent(0.3), "30.0%");
        assert_eq!(first_line("a\nb", 10), "a…");
    }
}
