//! `reel ls [DIR] [--json]`: the recorded runs, newest first, each read from its first and
//! last line only (see `reel_trace::runs`), so a directory of multi-gigabyte traces lists
//! at once.

use std::io::Write;
use std::path::PathBuf;

use reel_trace::display;
use reel_trace::runs::{self, ListError, Listing, Run, SCAN_LIMIT};

use crate::exit::{self, coded};
use crate::output::{self, Output};

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
    pub dir: Option<PathBuf>,

    /// Print one JSON document (shape `reel.ls/1`, see --help) instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `reel ls`.
pub fn run(args: Args, out: &Output) -> anyhow::Result<u8> {
    let (dir, given) = match args.dir {
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
        say!("reel ls: skipped {}: {}", s.path.display(), s.reason);
    }
    if args.json {
        out.json(&listing)?;
    } else if listing.runs.is_empty() {
        if given || dir.exists() {
            say!("reel ls: no runs in {}", dir.display());
        }
    } else {
        print_table(&listing.runs, out)?;
    }
    Ok(exit::OK)
}

const HEADERS: [&str; 10] = [
    "STARTED (UTC)",
    "LABEL",
    "KIND",
    "DURATION",
    "IN/OUT",
    "TURNS",
    "ERRORS",
    "END",
    "SIZE",
    "FILE",
];

/// Right-aligned columns (numbers).
const RIGHT: [bool; 10] = [
    false, false, false, true, true, true, true, false, true, false,
];

fn print_table(runs: &[Run], out: &Output) -> anyhow::Result<()> {
    // Escaped before measuring, so a label's escaped controls keep the columns aligned
    // (and a line break in one cannot start a row of its own).
    let rows: Vec<[String; 10]> = runs
        .iter()
        .map(|r| row(r).map(|c| output::one_line(&c).into_owned()))
        .collect();
    let mut widths = HEADERS.map(|h| h.chars().count());
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    // Labels are trace content: the terminal-safe writer escapes their controls.
    let mut stdout = out.human_stdout();
    let header = layout(&HEADERS.map(str::to_owned), &widths);
    writeln!(stdout, "{}", out.paint("1", &header))?;
    for (run, r) in runs.iter().zip(&rows) {
        let mut cells = r.clone();
        // Colour after padding, so escape codes never count towards a width.
        let end_w = widths[7];
        let end = format!("{:<end_w$}", cells[7]);
        cells[7] = match (run.interrupted, run.exit_code) {
            (true, _) => out.paint("33", &end),
            (false, Some(0)) => out.paint("32", &end),
            (false, Some(_)) => out.paint("31", &end),
            (false, None) => end,
        };
        let mut w = widths;
        w[7] = 0;
        writeln!(stdout, "{}", layout(&cells, &w))?;
    }
    stdout.flush()?;
    Ok(())
}

fn layout(cells: &[String; 10], widths: &[usize; 10]) -> String {
    let mut line = String::new();
    for (i, cell) in cells.iter().enumerate() {
        let pad = widths[i].saturating_sub(cell.chars().count());
        if i > 0 {
            line.push_str("  ");
        }
        if RIGHT[i] {
            line.push_str(&" ".repeat(pad));
            line.push_str(cell);
        } else {
            line.push_str(cell);
            if i + 1 < cells.len() {
                line.push_str(&" ".repeat(pad));
            }
        }
    }
    line
}

fn row(run: &Run) -> [String; 10] {
    let started = match run.started() {
        Some(t) => {
            let iso = t.to_iso();
            // 2026-11-30T08:57:12.345Z → 2026-11-30 08:57:12
            format!("{} {}", &iso.as_str()[..10], &iso.as_str()[11..19])
        }
        None => run.started_at.clone().unwrap_or_else(|| "?".into()),
    };
    let label = run.label.clone().unwrap_or_else(|| "-".into());
    let duration = match run.duration_ms {
        Some(ms) if run.interrupted => format!("≥{}", display::duration(ms)),
        Some(ms) => display::duration(ms),
        None => "?".into(),
    };
    let (io, turns, errors) = match &run.counts {
        Some(c) => (
            format!("{}/{}", c.inbound, c.outbound),
            c.turns.to_string(),
            c.errors.to_string(),
        ),
        None => ("?".into(), "?".into(), "?".into()),
    };
    let end = match (&run.exit_code, &run.reason, run.interrupted) {
        (_, _, true) => "interrupted".to_owned(),
        (Some(c), _, _) => format!("exit {c}"),
        (None, Some(r), _) => r.clone(),
        (None, None, false) => "ended".into(),
    };
    let mut file = run
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if run.files.len() > 1 {
        file.push_str(&format!(" (+{} rotated)", run.files.len() - 1));
    }
    [
        started,
        label,
        run.kind.clone(),
        duration,
        io,
        turns,
        errors,
        end,
        display::size(run.bytes),
        file,
    ]
}

// The limit named in the help text is the library's.
const _: () = assert!(SCAN_LIMIT == 8 << 20);
