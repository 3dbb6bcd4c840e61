//! `reel ls [DIR | --dir DIR] [--json]`: the recorded runs, newest first, each read from its first and
//! last line only (see `reel_inspect::runs`), so a directory of multi-gigabyte traces lists
//! at once.

use std::io::Write;
use std::path::PathBuf;

use reel_inspect::runs::{self, ListError, Listing, SCAN_LIMIT, render};

use crate::cmd::trace_arg::RunDir;
use crate::exit::{self, coded};
use crate::output::Output;

const LONG_HELP: &str = "\
Each run is read from its first line (meta: label, kind, start) and its last line (end:
exit code or reason, duration, counts), never whole. A run with no end line was stopped
before it could write one (or is still recording): it shows as `interrupted`, with its
duration up to its last line. Runs without end.counts are counted by reading them only
when they total at most 8 MiB; larger ones show `?`. Rotated companions (x.jsonl.1, .2)
are listed with x.jsonl. *.jsonl files that are not traces are skipped with a note on
stderr; other files are ignored.

--json prints one document: {\"schema\": \"reel.ls/1\", \"dir\", \"runs\": [{\"path\",
\"files\", \"label\", \"kind\", \"source\", \"startedAt\", \"durationMs\", \"interrupted\",
\"exitCode\", \"reason\", \"counts\": {\"in\", \"out\", \"events\", \"turns\", \"errors\"},
\"countsFrom\": \"end\"|\"scan\", \"bytes\"}], \"skipped\": [{\"path\", \"reason\"}], \"ignored\"}.
Unknown facts are null.

Exit codes: 0 listed (an empty or not yet created default directory included);
66 DIR cannot be read.";

/// Arguments of `reel ls`.
#[derive(clap::Args)]
#[command(after_long_help = LONG_HELP)]
pub struct Args {
    /// Directory to list [default: $REEL_DIR, else the per-user trace directory,
    /// ~/.local/share/reel/traces on Linux]
    #[arg(value_name = "DIR", conflicts_with = "dir")]
    pub path: Option<PathBuf>,

    /// The same as DIR, spelled as every other command takes it.
    #[command(flatten)]
    pub runs: RunDir,

    /// Print one JSON document (shape `reel.ls/1`, see --help) instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `reel ls`.
pub fn run(args: Args, out: &Output) -> anyhow::Result<u8> {
    let (dir, given) = match args.path.or(args.runs.dir) {
        Some(d) => (d, true),
        None => (
            reel_trace::names::default_trace_dir().ok_or_else(|| {
                coded(
                    exit::NO_INPUT,
                    "cannot tell where traces are: HOME is not set; give DIR or set REEL_DIR",
                )
            })?,
            false,
        ),
    };
    let listing = match runs::list_runs(&dir) {
        Ok(l) => l,
        // Nothing recorded yet is not an error; a directory someone named that is missing is.
        Err(ListError::NotFound { .. }) if !given => {
            say!(
                "reel ls: no runs yet ({} does not exist; `reel rec` creates it)",
                dir.display()
            );
            Listing::empty(&dir)
        }
        Err(e) => return Err(coded(exit::NO_INPUT, e.to_string())),
    };
    for s in &listing.skipped {
        say!(
            "reel ls: skipped {}: {}",
            crate::output::path_shown(&s.path),
            s.reason
        );
    }
    if args.json {
        out.json(&listing)?;
    } else if listing.runs.is_empty() {
        if given || dir.exists() {
            say!("reel ls: no runs in {}", dir.display());
        }
    } else {
        // Labels are trace content: the terminal-safe writer escapes their controls.
        let mut stdout = out.human_stdout();
        stdout.write_all(render::table(&listing.runs, &|t, s| out.tone(t, s)).as_bytes())?;
        stdout.flush()?;
    }
    Ok(exit::OK)
}

// The limit named in the help text is the library's.
const _: () = assert!(SCAN_LIMIT == 8 << 20);
