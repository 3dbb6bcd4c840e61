//! `reel check TRACE…`: validates traces with `reel_inspect::check` and reports per file.
//!
//! Wiring only: each name → a trace ([`RunDir`]), the trace → a [`check::CheckReport`], the
//! reports → the text or the `reel.check/1` document of [`reel_inspect::check::render`]
//! (which documents its shape), the [`Verdict`] → the exit code: 66 when any input
//! cannot be read (the others are still checked), else 1 when any trace has errors,
//! else 0 (warnings and info allowed). With `--verify`, each trace is also read against
//! its seal (`reel_trace::seal::verify`), whose findings join the report.

use std::io::Write as _;

use reel_inspect::check::render::{self, Document, Verdict};
use reel_inspect::check::{self, CheckOptions, CheckReport, Severity};
use reel_report::display::Tone;
use reel_trace::seal::{self, SealKey};

use crate::cmd::seal::KeyFile;
use crate::cmd::trace_arg::RunDir;
use crate::exit;
use crate::output::{Bar, Output};

const AFTER_HELP: &str = "\
Severities follow the format's tolerance rules: what a conforming reader must tolerate
(unknown type, dir, kind or block type, a missing exitCode, a torn last line) is never
an error. `reel check --list-rules` lists every rule id with its severity.

Limits: at most --max-per-rule problems are listed per rule (the rest are counted in one
summary line); unknown names are tallied once per name (up to 256 names per rule).

--verify reads each trace against its seal, TRACE.seal (written by `reel seal` or
`reel rec --seal`), and reports the first line that was changed, removed, inserted or
reordered (seal-changed, seal-removed, seal-inserted, seal-reordered), a trace cut
short (seal-truncated) or added to after its seal was closed (seal-appended), and a
seal that was itself edited (seal-edited): all errors. A seal that was never closed
(the recording was killed, or is still going) vouches for its lines, and the lines
after them are unsealed: a warning (seal-open), not tampering. With --key-file, the
seal must have been made with that key (seal-wrong-key, seal-not-keyed); without it, a
keyed seal's lines are checked but not who sealed them (seal-unauthenticated, info).
An unkeyed seal does not stop someone who rewrites the trace and seals it again: see
`reel seal --help`.

--json writes one document: {\"schema\":\"reel.check/1\",\"files\":[{\"file\",\"files\",
\"lines\",\"bytes\",\"sessions\",\"errors\",\"warnings\",\"infos\",\"problems\":[{\"file\",
\"line\",\"rule\",\"severity\",\"message\",\"count\"}],\"seal\"} or {\"file\",\"unreadable\"}],
\"errors\",\"warnings\",\"infos\",\"unreadable\"}; \"seal\" (with --verify) is {\"seal\",
\"status\":\"intact\"|\"open\"|\"tampered\",\"chain\",\"authenticated\",\"sealed\",
\"verified\",\"closed\",\"unsealed\",\"first\":{\"kind\",\"file\",\"line\",\"sealLine\",
\"message\"}} or {\"seal\",\"unreadable\"}.

Exit status: 0 no errors (warnings and info allowed), 1 a trace has errors (with
--verify: or its seal shows tampering), 66 an input cannot be read (missing, a
directory, no permission; with --verify: its seal is missing or not a seal); every
input is still checked. 64 --key-file without --verify; 66 also an unreadable
--key-file.";

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

    /// Also verify each trace against its seal (TRACE.seal): report the first line
    /// changed, removed, inserted or reordered since it was sealed.
    #[arg(long, conflicts_with = "list_rules")]
    verify: bool,

    #[command(flatten)]
    key: KeyFile,
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
    args.key.requires(args.verify, "--verify")?;
    let key = args.key.load()?;
    let options = CheckOptions {
        max_per_rule: args.max_per_rule,
    };
    let mut doc = Document::default();
    for arg in &args.traces {
        let checked = args.runs.resolve_readable(arg).and_then(|path| {
            let mut bar = Bar::new("reel check");
            let mut report = check::check_trace_reporting(&path, &options, &mut |p| bar.show(p))?;
            if args.verify {
                verify_seal(&path, key.as_ref(), &mut report);
            }
            Ok(report)
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

/// Adds what the trace's seal says to its report; a seal that cannot be read is said
/// on stderr as it is reached, like an unreadable input.
fn verify_seal(path: &std::path::Path, key: Option<&SealKey>, report: &mut CheckReport) {
    match seal::verify(path, key) {
        Ok(v) => report.add_seal(v),
        Err(e) => {
            say!("reel: cannot verify {e}");
            let sidecar = seal::sidecar_path(path).display().to_string();
            report.seal_unreadable(sidecar, e.to_string());
        }
    }
}

/// Human text quotes trace content, so it goes through the terminal-safe writer.
fn write_human(out: &Output, text: &str) -> anyhow::Result<()> {
    let mut w = out.human_stdout();
    w.write_all(text.as_bytes())?;
    w.flush()?;
    Ok(())
}
