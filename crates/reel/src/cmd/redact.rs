//! `reel redact TRACE… [-o OUT | --in-place]`: the recording's redaction rules applied
//! after the fact, by `reel_redact::redact_trace` (which says what is edited and what is
//! kept byte for byte).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use reel_redact::redact::Redactor;
use reel_redact::redact_trace::{RewriteError, Rewritten, redact_trace};

use crate::cmd::redaction::RuleArgs;
use crate::cmd::trace_arg::RunDir;
use crate::exit::{self, coded};
use crate::output::Output;

const AFTER_HELP: &str = "\
For a trace recorded with --no-redact, or a file from a tool that never redacts: the
rules `reel rec` applies (`reel rec --help` lists them; --redact, --redact-file and
--no-redact-defaults as there) rewrite each line in place. Only what the rules match
changes; member order, spacing, unknown members and lines that are not JSON stay byte for
byte. The meta line gets the rules as `redaction`, so `reel play`, `verify` and `diff`
redact live messages alike and the redacted trace replays as the original did. A trace
already redacted with other rules is refused: its meta can name one rule set.

Output: one TRACE and no flag: the redacted trace on stdout. -o OUT: into the file OUT
(one TRACE), or into the directory OUT under each trace's file name (several). --in-place:
each trace is replaced (a new file, mode 0600, renamed over it; rotated companions are
read with their trace and written as one file). A summary of the lines changed goes to
stderr.

Exit status: 0 redacted; 64 usage (a trace already redacted with other rules, a bad
pattern); 66 a trace or the --redact-file cannot be read; 73 the output cannot be written.";

/// Arguments of `reel redact`.
#[derive(clap::Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// Traces to redact: trace files or run names (the newest run with that --name in
    /// --dir; NAME~1 is the one before it).
    #[arg(value_name = "TRACE", required = true)]
    traces: Vec<String>,

    #[command(flatten)]
    runs: RunDir,

    #[command(flatten)]
    rules: RuleArgs,

    /// Write the redacted trace to OUT (a directory when several traces are given).
    #[arg(short, long, value_name = "OUT", conflicts_with = "in_place")]
    output: Option<PathBuf>,

    /// Replace each trace with its redacted version.
    #[arg(long)]
    in_place: bool,
}

/// Runs `reel redact`.
pub fn run(args: Args, _out: &Output) -> anyhow::Result<u8> {
    let redactor = args.rules.redactor()?;
    let traces: Vec<PathBuf> = args
        .traces
        .iter()
        .map(|t| args.runs.resolve(t))
        .collect::<anyhow::Result<_>>()?;
    let several = traces.len() > 1;
    if several && args.output.is_none() && !args.in_place {
        return Err(coded(
            exit::USAGE,
            "several traces need somewhere to go: -o DIR (a file each, under its name) or --in-place",
        ));
    }
    for trace in &traces {
        let done = match (&args.output, args.in_place) {
            (_, true) => into_file(trace, trace, &redactor)?,
            (Some(out), false) if several || out.is_dir() => {
                let name = trace.file_name().unwrap_or_default();
                into_file(trace, &out.join(name), &redactor)?
            }
            (Some(out), false) => into_file(trace, out, &redactor)?,
            (None, false) => {
                let mut stdout = std::io::stdout().lock();
                redact_trace(trace, &redactor, &mut stdout).map_err(failed)?
            }
        };
        say!(
            "reel redact: {}: {} of {} lines changed",
            trace.display(),
            done.changed,
            done.lines
        );
    }
    Ok(exit::OK)
}

/// Redacts `trace` into a new file beside `dest` (mode 0600: a trace holds what the
/// tools saw), then renames it over `dest`: a failure midway leaves `dest` as it was.
fn into_file(trace: &Path, dest: &Path, redactor: &Redactor) -> anyhow::Result<Rewritten> {
    let cant = |e: std::io::Error| coded(exit::CANT_CREATE, format!("{}: {e}", dest.display()));
    let mut name = dest.file_name().unwrap_or_default().to_owned();
    name.push(format!(".reel-redact-{}", std::process::id()));
    let tmp = dest.with_file_name(name);
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let file = opts.open(&tmp).map_err(cant)?;
    let written = (|| {
        let mut w = std::io::BufWriter::new(file);
        let done = redact_trace(trace, redactor, &mut w).map_err(failed)?;
        w.flush().map_err(cant)?;
        std::fs::rename(&tmp, dest).map_err(cant)?;
        Ok(done)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

fn failed(e: RewriteError) -> anyhow::Error {
    let code = match &e {
        RewriteError::Open(_) => exit::NO_INPUT,
        RewriteError::OtherRules { .. } => exit::USAGE,
        RewriteError::Write(_) => exit::CANT_CREATE,
        _ => exit::INTERNAL,
    };
    coded(code, e.to_string())
}
