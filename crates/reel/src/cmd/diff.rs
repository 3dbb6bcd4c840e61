//! `reel diff A B`: where two runs drifted apart.
//!
//! Wiring only: arguments → [`reel_diff::DiffOptions`], the two traces (paths or run
//! names, found by [`reel_inspect::runs::resolve`] as for every command) →
//! [`reel_diff::diff`], the report → text, JSON or GitHub annotations on
//! stdout, and the verdict → the exit code. A progress bar goes to stderr while the
//! traces are read, only when stderr is a terminal.

use std::io::Write;
use std::path::Path;

use reel_diff::render::{self, TextOptions};
use reel_diff::{DiffError, DiffOptions};
use reel_mcp::normalize::rules_help;

use crate::cmd::ignore::IgnoreArgs;
use crate::cmd::notifications::NotificationsFlag;
use crate::cmd::trace_arg::RunDir;
use crate::exit::{self, NO_INPUT, USAGE, coded};
use crate::output::{Bar, Output};

/// `--format` of the commands that report drift (`diff`, `verify`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For people: the first drift in full, then one line per drift.
    Text,
    /// One JSON document (the command's schema: see --help).
    Json,
    /// GitHub Actions annotation lines (::error for structural drift, ::warning for
    /// output drift) on the trace line of each drift, then the summary.
    Github,
    /// JUnit XML: one test case per exchange compared (per turn too, in diff), a drift
    /// as its failure.
    Junit,
}

/// Arguments of `reel diff`.
#[derive(clap::Args)]
#[command(
    after_help = "`reel diff --help` lists what counts as drift, the rules for honest differences, the JSON shape and the exit codes.",
    after_long_help = long_help()
)]
pub struct Args {
    /// The reference run: a trace file, or a run name (the newest run recorded with
    /// that --name in --dir; NAME~1 is the one before it).
    #[arg(value_name = "A")]
    a: String,

    /// The run compared with it (a trace file or a run name).
    #[arg(value_name = "B")]
    b: String,

    #[command(flatten)]
    runs: RunDir,

    /// Show every drift in full, not only the first.
    #[arg(long)]
    all: bool,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,

    /// Same as --format json.
    #[arg(long, conflicts_with = "format")]
    json: bool,

    #[command(flatten)]
    ignore: IgnoreArgs,

    /// Compare notifications outside a call's progress in place, by content, instead of
    /// as counts per method (those --notifications does not compare still only count).
    #[arg(long)]
    strict_notifications: bool,

    #[command(flatten)]
    notifications: NotificationsFlag,

    /// Count a turn's usage and timing differences as output drift (another model or
    /// stop reason is structural drift either way).
    #[arg(long)]
    strict_usage: bool,
}

fn long_help() -> String {
    format!(
        "\
Alignment: exchanges (a request with its response and its progress) pair by direction,
method and params after normalisation, the earliest unpaired of A with the earliest
unpaired of B: repeated identical calls pair in order, reordered and concurrent calls
pair freely. Unpaired exchanges were added (only in B) or removed (only in A). Turns of
LLM traces pair by role and order; tool_use blocks compare by name and input,
tool_result blocks by content.

Drift classes:
  structural  a call added or removed, a method or tool unknown (-32601, -32602 naming
              the tool), a result became an error (or isError: true), answered in A but
              not in B, tools or prompts added/removed or an inputSchema, outputSchema or
              prompt arguments changed, a turn added/removed or using other tools
  output      same call, different result or error; different progress notifications;
              cancelled in one run only; unsolicited notifications differing in number
              (a notifications/*/list_changed count only with --notifications strict);
              tool descriptions, resources; a turn's text, tool input or tool result
A list answer (tools/list, prompts/list, resources/list, resources/templates/list) is
shown as a changelog: items added, removed, changed, with the JSON pointers that changed.

Honest differences (not drift):
{honest}
Normalisation (the one normaliser shared with play and verify), in order:
{rules}
The traces' meta.redaction rules: when A and B were redacted differently, each side's
messages also get the other's rules before comparing.

Output: text shows the first drift in full (the exchanges before it, every differing
JSON pointer, a unified diff of the two payloads pretty-printed after normalisation),
then one line per drift, the notes and the verdict; --all shows every drift in full.
--format json (or --json) writes one document, schema \"reel.diff/1\": verdict,
exitCode, a and b (path, files, bytes, lines, messages, exchanges, turns, echoedTurns,
sessions, skippedLines), counts (paired, identical, added, removed, turnsPaired, output,
structural), ignored, drifts [{{class, kind, subject, a, b (each {{file, line,
responseLine}} or null), summary, pointers, changelog, context, differences [{{pointer,
a, b}}]}}], omittedDrifts, notes, warnings. --format github writes one ::error
(structural) or ::warning (output) annotation per drift on B's file and line.

Limits: a drift lists its first 8 pointers in one-line form; text shows 20 differences and
200 diff lines per drift; JSON lists differences for the first 1000 drifts; 100000 drifts
are kept, the rest counted. Memory is the exchanges still open plus those waiting for a
partner (each about 200 bytes), not the size of the traces; payloads are re-read from the
files only where the two sides differ.

Exit codes:
  0    identical
  1    output drift only
  2    structural drift
  64   usage error (a bad pointer, in --ignore or an --ignore-file)
  66   a trace cannot be read (missing, a directory, empty, its first line is not a
       JSON object), or no run has that name
  70   internal error (a bug: please report it)",
        honest = reel_diff::honest_rules_help().trim_end(),
        rules = rules_help().trim_end()
    )
}

/// Runs `reel diff`.
pub fn run(args: Args, out: &Output) -> anyhow::Result<u8> {
    let ignore = args.ignore.pointers()?;
    let a = args.runs.resolve_readable(&args.a)?;
    let b = args.runs.resolve_readable(&args.b)?;
    refuse_same_file(&args.a, &a, &args.b, &b)?;
    let opts = DiffOptions {
        ignore,
        strict_notifications: args.strict_notifications,
        notifications: args.notifications.check(),
        strict_usage: args.strict_usage,
        keep_passed: args.format == Format::Junit && !args.json,
    };
    let mut bar = Bar::new("reel diff");
    let report = reel_diff::diff(&a, &b, &opts, &mut |p| bar.show(p));
    drop(bar);
    let report = report.map_err(|e| match e {
        DiffError::Open { .. }
        | DiffError::Empty { .. }
        | DiffError::NotATrace { .. }
        | DiffError::Reread { .. } => coded(NO_INPUT, e.to_string()),
        _ => coded(exit::INTERNAL, e.to_string()),
    })?;
    let format = if args.json { Format::Json } else { args.format };
    exit::keep_verdict(write_report(&report, format, args.all, out))?;
    Ok(exit::of_drift(report.verdict()))
}

/// The report on stdout. Text and GitHub lines quote trace content (tool names, error
/// messages): they go through the terminal-safe writer; JSON escapes controls itself.
fn write_report(
    report: &reel_diff::DiffReport,
    format: Format,
    all: bool,
    out: &Output,
) -> anyhow::Result<()> {
    let mut human = out.human_stdout();
    let exit_code = exit::of_drift(report.verdict());
    match format {
        Format::Text => render::text(
            report,
            TextOptions {
                all,
                color: out.color(),
                exit_code,
            },
            &mut human,
        )?,
        Format::Json => out.json_compared(&render::json(report, exit_code))?,
        Format::Github => render::github(report, exit_code, &mut human)?,
        Format::Junit => human.write_all(render::junit(report).as_bytes())?,
    }
    human.flush()?;
    Ok(())
}

/// A trace diffed with itself is identical by construction: that is never what was
/// meant (`reel diff demo demo` with two runs named demo compares the newest twice).
fn refuse_same_file(a_arg: &str, a: &Path, b_arg: &str, b: &Path) -> anyhow::Result<()> {
    let same = match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    };
    if !same {
        return Ok(());
    }
    let hint = if a_arg == b_arg && !a_arg.contains(std::path::MAIN_SEPARATOR) {
        format!(
            "; to compare the newest run named `{a_arg}` with the one before it: reel diff {a_arg}~1 {a_arg}"
        )
    } else {
        String::new()
    };
    Err(coded(
        USAGE,
        format!(
            "{a_arg} and {b_arg} are the same file ({}): a trace is identical to itself{hint}",
            a.display()
        ),
    ))
}
