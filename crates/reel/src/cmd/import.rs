//! `reel import [--from FMT] SRC… [-o FILE | --dir D]`: other tools' recordings converted
//! into traces (`reel_convert`), redacted with the recording rules, each said on
//! stderr with what its format cannot hold.

use std::path::PathBuf;

use reel_convert::Format;
use reel_convert::import::{
    ImportEvent, ImportOptions, ImportStop, Output, format_names, import_all,
};

use crate::cmd::rec::{redactor_of, trace_dir_of};
use crate::cmd::redaction::RuleArgs;
use crate::exit::{self, coded};
use crate::output::{Output as Out, path_shown};

const AFTER_HELP: &str = "\
Formats (--from names): mcporter (its `record` NDJSON; one file may hold several servers:
each becomes a session), mcptape (a run directory, trace.jsonl + meta.json), mcp-vcr (YAML
or NDJSON transcripts), mcp-cassette (format_version 2 and 3), mcp-recorder, mcp-rec,
agent-vcr (.vcr), mmsp (tracer files, 0.5.x and pre-0.5.0), claude-code (session JSONL,
with its sub-agent files). The format is sniffed from the start of the file; --from names
it when sniffing cannot tell. A directory imports every recording in it (searched 6 levels
deep, symbolic links not followed): one trace per file, per mcptape run, per MMSP trace
id, per Claude Code session; one that cannot be read is said and the rest imported.

The trace is mcp-replay v1 (it passes `reel check`): meta.source names the format and
meta.imported the file; times are the source's (meta.startedAt, each line's t, the end's
durationMs), and the end says reason \"imported\". A line that cannot be converted is kept
as a reel.nonjson event and counted. Redaction is on, as when recording: these tools store
what they saw raw.

Limits: a line of a line format may be 1 GiB long; a longer one is read past without being
held. A line of 16 MiB or more is converted with its strings of 1 MiB or more left where
they are, so it costs one copy of itself plus the reader's 64 MiB growth step; a long
string that holds a secret is copied once to be redacted, and an event's payload or a
Claude Code session's line is read whole. A one-document file (JSON, YAML) is read whole, up to 512 MiB. A YAML document is
refused before parsing when its collections nest more than 128 deep, when its aliases
would expand it past 4 times its size (at least 1 MiB, at most 512 MiB), or when an alias
stands inside the node it names.

Exit status: 0 imported; 64 bad flags (-o with several sources); 66 a source that cannot
be read or is not a format reel reads (after importing the rest of a directory), or one
imported without a line longer than 1 GiB (read past, said, and marked in the trace by a
reel.gap event); 73 the trace cannot be created.";

/// Arguments of `reel import`.
#[derive(clap::Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// The files to import.
    #[arg(required = true, value_name = "SRC")]
    sources: Vec<PathBuf>,

    /// The format of the sources, when sniffing cannot tell.
    #[arg(long = "from", value_name = "FORMAT", value_parser = parse_format)]
    from: Option<Format>,

    /// Write the trace to this file (one source only; an existing file is not
    /// overwritten).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        conflicts_with = "dir"
    )]
    output: Option<PathBuf>,

    /// Directory for the traces [default: $REEL_DIR, else the per-user data directory].
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,

    /// Name of the run (one source only) [default: the source's file name, without its
    /// extension].
    #[arg(long, visible_alias = "label", value_name = "NAME")]
    name: Option<String>,

    #[command(flatten)]
    rules: RuleArgs,

    /// Import everything unredacted.
    #[arg(long, conflicts_with_all = ["redact", "redact_file", "no_redact_defaults"])]
    no_redact: bool,
}

fn parse_format(s: &str) -> Result<Format, String> {
    Format::from_name(s)
        .ok_or_else(|| format!("`{s}` is not a format reel imports ({})", format_names()))
}

/// Runs `reel import`.
pub fn run(args: Args, _out: &Out) -> anyhow::Result<u8> {
    if args.sources.len() > 1 && (args.output.is_some() || args.name.is_some()) {
        return Err(coded(
            exit::USAGE,
            "-o and --name name one trace: give one source, or --dir for several",
        ));
    }
    let redactor = redactor_of(args.no_redact, &args.rules)?;
    let dir;
    let output = match &args.output {
        Some(file) => Output::File(file),
        None => {
            dir = trace_dir_of(args.dir.clone())?;
            Output::Dir(&dir)
        }
    };
    let options = ImportOptions {
        sources: &args.sources,
        from: args.from,
        output,
        name: args.name.as_deref(),
    };
    let outcome = import_all(&options, &redactor, &mut say_event).map_err(stopped)?;
    if outcome.imported > 1 || outcome.failed > 0 {
        say!("reel: {} traces imported", outcome.imported);
    }
    if outcome.failed > 0 {
        return Err(coded(
            exit::NO_INPUT,
            format!(
                "{} recordings could not be imported (said above)",
                outcome.failed
            ),
        ));
    }
    if outcome.lossy > 0 {
        // Part of an input could not be read: the trace holds the rest, and the status
        // says it is not whole.
        return Err(coded(
            exit::NO_INPUT,
            format!(
                "{} recordings were imported without lines too long to read (said above)",
                outcome.lossy
            ),
        ));
    }
    Ok(exit::OK)
}

/// Says on stderr what the import did.
fn say_event(event: ImportEvent<'_>) {
    match event {
        ImportEvent::SourceFailed(e) => say!("reel: error: {e}"),
        ImportEvent::Unreadable { path, error } => {
            say!("reel: error: {}: {error}", path_shown(path));
        }
        ImportEvent::RecordingFailed(e) => say!("reel: error: {e}"),
        ImportEvent::Imported {
            found,
            imported: done,
            first_of_format,
        } => {
            if first_of_format {
                say!("reel: note: {}", done.format.limits());
            }
            for w in &done.warnings {
                say!("reel: warning: {}: {w}", path_shown(&found.path));
            }
            let to = done
                .path
                .as_ref()
                .map_or_else(|| "the trace".to_owned(), |p| path_shown(p));
            say!(
                "reel: imported {} ({}) to {to}: {} items",
                path_shown(&found.path),
                done.format.name(),
                done.items
            );
            for lost in &done.too_long {
                say!("reel: error: {}: {lost}", path_shown(&found.path));
            }
            if let Some(p) = done.problems.first() {
                say!(
                    "reel: {} parts could not be converted and are kept as reel.nonjson events; the first, {p}",
                    done.problems.len()
                );
            }
        }
        _ => {}
    }
}

/// An import that stopped, with its exit status.
fn stopped(stop: ImportStop) -> anyhow::Error {
    let code = match stop {
        ImportStop::OneTrace { .. } => exit::USAGE,
        ImportStop::Create(_) => exit::CANT_CREATE,
        _ => exit::NO_INPUT,
    };
    coded(code, stop.to_string())
}
