//! `reel check TRACE…`: validates traces with `reel_trace::check` and reports per file.
//!
//! Human output (stdout): one line per problem, `file:line: severity[rule]: message`,
//! then a summary line per file. Colour only when [`Output::color`] says so.
//!
//! `--json` writes one document (schema `reel.check/1`):
//!
//! ```text
//! { "schema": "reel.check/1",
//!   "files": [ { "file", "files": [read order], "lines", "bytes", "sessions",
//!                "errors", "warnings", "infos",
//!                "problems": [ { "file", "line"?, "rule", "severity", "message", "count"? } ] }
//!            | { "file", "unreadable": "why" } ],
//!   "errors", "warnings", "infos", "unreadable" }
//! ```
//!
//! `line` is absent for file-level problems and for summaries of unlisted problems;
//! `count` is present on aggregated problems. Counts include problems not listed.
//!
//! Exit status: 66 when any input cannot be read (the others are still checked), else 1
//! when any trace has errors, else 0 (warnings and info allowed).

use std::io::Write as _;

use reel_trace::check::{self, CheckOptions, Problem, Report, Rule, Severity};
use serde::Serialize;

use crate::cmd::trace_arg::RunDir;
use crate::exit;
use crate::output::{Bar, Output};

const AFTER_HELP: &str = "\
Severities follow the format's tolerance rules: what a conforming reader must tolerate
(unknown type, dir, kind or block type, a missing exitCode, a torn last line) is never
an error. `reel check --list-rules` lists every rule id with its severity.

Limits: at most --max-per-rule problems are listed per rule (the rest are counted in one
summary line); unknown names are tallied once per name (up to 256 names per rule).

--json writes one document: {\"schema\":\"reel.check/1\",\"files\":[{\"file\",\"files\",
\"lines\",\"bytes\",\"sessions\",\"errors\",\"warnings\",\"infos\",\"problems\":[{\"file\",
\"line\",\"rule\",\"severity\",\"message\",\"count\"}]} or {\"file\",\"unreadable\"}],
\"errors\",\"warnings\",\"infos\",\"unreadable\"}.

Exit status: 0 no errors (warnings and info allowed), 1 a trace has errors, 66 an input
cannot be read (missing, a directory, no permission); every input is still checked.";

/// Arguments of `reel check`.
#[derive(clap::Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// Traces to check: trace files or run names (the newest run recorded with that
    /// --name in --dir; NAME~1 is the one before it). Rotated companions (TRACE.1,
    /// TRACE.2, …) are read first.
    #[arg(value_name = "TRACE", required_unless_present = "list_rules")]
    traces: Vec<String>,

    #[command(flatten)]
    runs: RunDir,

    /// Write one JSON document (schema reel.check/1) instead of text.
    #[arg(long)]
    json: bool,

    /// List only problems of this severity or worse (counts still include all).
    #[arg(long, value_enum, default_value_t = MinSeverity::Info)]
    min_severity: MinSeverity,

    /// Print only the summary line of each file.
    #[arg(short, long, conflicts_with = "json")]
    quiet: bool,

    /// List at most N problems per rule; the rest are counted in one summary line.
    #[arg(long, value_name = "N", default_value_t = check::DEFAULT_MAX_PER_RULE)]
    max_per_rule: usize,

    /// List every rule id with its severity and meaning, then exit.
    #[arg(long, conflicts_with_all = ["json", "quiet"])]
    list_rules: bool,
}

/// `--min-severity`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum MinSeverity {
    Info,
    Warning,
    Error,
}

impl MinSeverity {
    fn admits(self, s: Severity) -> bool {
        let floor = match self {
            MinSeverity::Info => Severity::Info,
            MinSeverity::Warning => Severity::Warning,
            MinSeverity::Error => Severity::Error,
        };
        s >= floor
    }
}

/// One input's outcome in the JSON document.
#[derive(Serialize)]
#[serde(untagged)]
enum FileResult {
    Checked(Report),
    Unreadable { file: String, unreadable: String },
}

#[derive(Serialize)]
struct Document {
    schema: &'static str,
    files: Vec<FileResult>,
    errors: u64,
    warnings: u64,
    infos: u64,
    unreadable: u64,
}

/// Runs `reel check`.
pub fn run(args: Args, out: &Output) -> anyhow::Result<u8> {
    if args.list_rules {
        exit::keep_verdict(list_rules(out))?;
        return Ok(exit::OK);
    }
    let options = CheckOptions {
        max_per_rule: args.max_per_rule,
    };
    let mut doc = Document {
        schema: "reel.check/1",
        files: Vec::new(),
        errors: 0,
        warnings: 0,
        infos: 0,
        unreadable: 0,
    };
    for arg in &args.traces {
        let path = match args.runs.resolve(arg) {
            Ok(path) => path,
            Err(e) => {
                doc.unreadable += 1;
                say!("reel: cannot check {e:#}");
                doc.files.push(FileResult::Unreadable {
                    file: arg.clone(),
                    unreadable: format!("{e:#}"),
                });
                continue;
            }
        };
        let mut bar = Bar::new("reel check");
        let checked = check::check_trace_reporting(&path, &options, &mut |p| bar.show(p));
        drop(bar);
        match checked {
            Ok(mut report) => {
                doc.errors += report.errors;
                doc.warnings += report.warnings;
                doc.infos += report.infos;
                report
                    .problems
                    .retain(|p| args.min_severity.admits(p.severity));
                if !args.json {
                    exit::keep_verdict(print_report(&report, args.quiet, out).map_err(Into::into))?;
                }
                doc.files.push(FileResult::Checked(report));
            }
            Err(e) => {
                doc.unreadable += 1;
                // Printed as the input is reached, so it sits between the reports it
                // interrupts; the exit status says it happened.
                say!("reel: cannot check {e}");
                doc.files.push(FileResult::Unreadable {
                    file: path.display().to_string(),
                    unreadable: e.to_string(),
                });
            }
        }
    }
    if args.json {
        exit::keep_verdict(out.json(&doc))?;
    } else if args.traces.len() > 1 {
        let summary = writeln!(
            out.human_stdout(),
            "{} files: {}, {}, {}{}",
            args.traces.len(),
            plural(doc.errors, "error"),
            plural(doc.warnings, "warning"),
            plural(doc.infos, "info"),
            if doc.unreadable > 0 {
                format!(", {} unreadable", doc.unreadable)
            } else {
                String::new()
            }
        );
        exit::keep_verdict(summary.map_err(Into::into))?;
    }
    Ok(if doc.unreadable > 0 {
        exit::NO_INPUT
    } else if doc.errors > 0 {
        exit::DIFFERENT
    } else {
        exit::OK
    })
}

/// Problems quote trace content (unknown `type`, `kind`, methods), so they go through
/// the terminal-safe writer.
fn print_report(report: &Report, quiet: bool, out: &Output) -> std::io::Result<()> {
    let mut w = out.human_stdout();
    if !quiet {
        for p in &report.problems {
            writeln!(w, "{}", problem_line(p, out))?;
        }
    }
    let status = if report.errors > 0 {
        out.paint("31;1", "FAIL")
    } else {
        out.paint("32", "ok")
    };
    writeln!(
        w,
        "{}: {status}: {}, {}, {} in {} ({})",
        report.file,
        plural(report.errors, "error"),
        plural(report.warnings, "warning"),
        plural(report.infos, "info"),
        plural(report.lines, "line"),
        plural(report.sessions, "session"),
    )?;
    w.flush()
}

fn problem_line(p: &Problem, out: &Output) -> String {
    let place = match p.line {
        Some(n) => format!("{}:{n}", p.file),
        None => p.file.clone(),
    };
    let label = format!("{}[{}]", p.severity.as_str(), p.rule);
    format!(
        "{place}: {}: {}",
        out.paint(sgr(p.severity), &label),
        p.message
    )
}

fn sgr(s: Severity) -> &'static str {
    match s {
        Severity::Error => "31;1",
        Severity::Warning => "33",
        Severity::Info => "36",
    }
}

fn list_rules(out: &Output) -> anyhow::Result<()> {
    let mut w = out.human_stdout();
    for rule in Rule::ALL {
        let sev = rule.severity();
        writeln!(
            w,
            "{} {:<32} {}",
            out.paint(sgr(sev), &format!("{:<8}", sev.as_str())),
            rule.id(),
            rule.description()
        )?;
    }
    w.flush()?;
    Ok(())
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else if word == "info" {
        format!("{n} info")
    } else {
        format!("{n} {word}s")
    }
}
