//! `reel check TRACE…`: validates traces with `reel_trace::check` and reports per file.
//!
//! Wiring only: each name → a trace ([`RunDir`]), the trace → a [`check::Report`], the
//! reports → the text or the `reel.check/1` document of [`reel_trace::check::render`]
//! (which documents its shape), the [`Verdict`] → the exit code: 66 when any input
//! cannot be read (the others are still checked), else 1 when any trace has errors,
//! else 0 (warnings and info allowed).

use std::io::Write as _;

use reel_trace::check::render::{self, Document, Verdict};
use reel_trace::check::{self, CheckOptions, Severity};
use reel_trace::display::Tone;

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

/// Runs `reel check`.
pub fn run(args: Args, out: &Output) -> anyhow::Result<u8> {
    let paint = |t: Tone, s: &str| out.tone(t, s);
    if args.list_rules {
        exit::keep_verdict(write_human(out, &render::rules_text(&paint)))?;
        return Ok(exit::OK);
    }
    let options = CheckOptions {
        max_per_rule: args.max_per_rule,
    };
    let mut doc = Document::default();
    for arg in &args.traces {
        let checked = args.runs.resolve(arg).and_then(|path| {
            let mut bar = Bar::new("reel check");
            Ok(check::check_trace_reporting(&path, &options, &mut |p| {
                bar.show(p)
            })?)
        });
        match checked {
            Ok(mut report) => {
                report
                    .problems
                    .retain(|p| args.min_severity.admits(p.severity));
                if !args.json {
                    let text = render::report_text(&report, args.quiet, &paint);
                    exit::keep_verdict(write_human(out, &text))?;
                }
                doc.add(report);
            }
            Err(e) => {
                // Printed as the input is reached, so it sits between the reports it
                // interrupts; the exit status says it happened.
                say!("reel: cannot check {e:#}");
                doc.add_unreadable(arg.clone(), format!("{e:#}"));
            }
        }
    }
    if args.json {
        exit::keep_verdict(out.json(&doc))?;
    } else if args.traces.len() > 1 {
        exit::keep_verdict(write_human(out, &format!("{}\n", doc.summary_line())))?;
    }
    Ok(match doc.verdict() {
        Verdict::Unreadable => exit::NO_INPUT,
        Verdict::Violations => exit::DIFFERENT,
        Verdict::Clean => exit::OK,
    })
}

/// Human text quotes trace content, so it goes through the terminal-safe writer.
fn write_human(out: &Output, text: &str) -> anyhow::Result<()> {
    let mut w = out.human_stdout();
    w.write_all(text.as_bytes())?;
    w.flush()?;
    Ok(())
}
