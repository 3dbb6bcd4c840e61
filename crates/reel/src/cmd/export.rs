//! `reel export FMT TRACE [-o OUT]`: a trace written in another tool's format, for the
//! tools people keep using (`reel_trace::foreign`). What the format cannot hold is said
//! on stderr.

use std::io::Write;
use std::path::PathBuf;

use reel_trace::foreign::mcporter;

use crate::cmd::trace_arg::RunDir;
use crate::exit::{self, coded};
use crate::output::Output;

const AFTER_HELP: &str = "\
Formats: mcporter (the NDJSON `mcporter replay` serves: put it at
~/.mcporter/recordings/<session>.ndjson; each message line becomes its raw JSON-RPC message
with mcporter's _meta {dir, server, ts} added; batches, stderr, non-JSON output, HTTP facts
and turns have no place in it and are counted on stderr).

Exit status: 0 written; 64 bad flags; 66 the trace cannot be read; 73 the output cannot be
written.";

/// Arguments of `reel export`.
#[derive(clap::Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// The format to write: mcporter.
    #[arg(value_name = "FORMAT", value_parser = ["mcporter"])]
    format: String,

    /// The trace (a path or a run name).
    #[arg(value_name = "TRACE")]
    trace: String,

    /// Write here instead of stdout (an existing file is not overwritten).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,

    /// mcporter: the server name the recording is for (mcporter's config name) [default:
    /// the run's label].
    #[arg(long, value_name = "NAME")]
    server: Option<String>,

    #[command(flatten)]
    runs: RunDir,
}

/// Runs `reel export`.
pub fn run(args: Args, _out: &Output) -> anyhow::Result<u8> {
    let path = args.runs.resolve_readable(&args.trace)?;
    let server = match args.server.clone() {
        Some(s) => s,
        None => label_of(&path).unwrap_or_else(|| "server".into()),
    };
    let mut sink: Box<dyn Write> = match &args.output {
        Some(p) => {
            let mut opts = std::fs::OpenOptions::new();
            opts.write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                opts.mode(0o600);
            }
            let f = opts
                .open(p)
                .map_err(|e| coded(exit::CANT_CREATE, format!("{}: {e}", p.display())))?;
            Box::new(std::io::BufWriter::new(f))
        }
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let left = mcporter::export(&path, &server, &mut sink).map_err(|e| match e {
        mcporter::ExportError::Write(_) => coded(exit::CANT_CREATE, e.to_string()),
        _ => coded(exit::NO_INPUT, e.to_string()),
    })?;
    if left.batches > 0 || left.other > 0 {
        say!(
            "reel: note: mcporter recordings hold one JSON-RPC message per line: {} batches and {} other lines (stderr, non-JSON output, HTTP facts, turns) were left out",
            left.batches,
            left.other
        );
    }
    Ok(exit::OK)
}

/// The trace's `meta.label`.
fn label_of(path: &std::path::Path) -> Option<String> {
    let mut r = reel_trace::TraceReader::open(path).ok()?;
    let line = r.next_line()?.ok()?;
    match line.parse().ok()? {
        reel_trace::line::Line::Meta(m) => m.label.clone(),
        _ => None,
    }
}
