//! `reel seal TRACE…`: writes a tamper-evident seal beside each finished trace, with
//! `reel_trace::seal` (which documents the sidecar). Also the `--key-file` flag that
//! `seal`, `rec --seal` and `check --verify` share.
//!
//! Wiring only: names → traces, each trace → `TRACE.seal`, the results → text or the
//! `reel.sealed/1` document, failures → exit codes: 66 a trace or the key file cannot
//! be read, 64 a key too short, 73 a seal cannot be written (or exists, without
//! --force).

use std::io::Write as _;
use std::path::PathBuf;

use reel_trace::seal::{self, KeyError, SealError, SealKey, Sealed};
use reel_trace::target::TraceTarget;

use crate::cmd::trace_arg::RunDir;
use crate::exit::{self, coded};
use crate::output::Output;

/// Identifies the JSON document `reel seal --json` prints.
const SCHEMA: &str = "reel.sealed/1";

const AFTER_HELP: &str = "\
What a seal is:
  TRACE.seal, beside the trace, which stays exactly as it was (every reader reads it
  as before). JSON lines, schema reel.seal/1: a head {\"schema\":\"reel.seal/1\",
  \"type\":\"head\",\"files\",\"t\",\"producer\",\"chain\"}, one record per trace line
  {\"n\",\"sha256\",\"chain\"} (the line's SHA-256, its line ending included, and the
  running chain value), and a close record {\"type\":\"close\",\"lines\",\"chain\",\"t\"}.
  Rotated companions (TRACE.1, …) are sealed with the trace, oldest first, as readers
  read them. `reel check --verify TRACE` names the first line that was changed,
  removed, inserted or reordered, a trace cut short or added to, and a seal that was
  itself edited. `reel rec --seal` seals a recording as it is written.

What it proves (the threat model):
  Without a key, a seal catches accidents, careless edits and tools that rewrite
  traces, but not someone who rewrites a trace and then seals it again: anyone can
  write a valid unkeyed seal. With --key-file, the chain is an HMAC-SHA-256 under your
  key: checked with the same --key-file, it shows the seal was written by a holder of
  the key. Keep the key away from the traces (a CI secret, not the trace directory).
  The line digests stay plain SHA-256, so a check without the key still checks every
  line, though not who sealed them. A key file holds at least 16 bytes (one final line
  break is not part of the key); make one with `head -c 32 /dev/urandom > KEYFILE`.

--json writes one document: {\"schema\":\"reel.sealed/1\",\"sealed\":[{\"trace\",\"seal\",
\"files\",\"lines\",\"chain\"}]}.

Exit status:
  0   every trace was sealed
  64  usage error, or a key file holding fewer than 16 bytes
  66  a trace cannot be read (missing, a directory, empty, or its first line is not a
      JSON object), or the key file cannot be read
  73  a seal cannot be written, or one exists already (replace it with --force)";

/// `--key-file`, shared by `seal`, `rec --seal` and `check --verify`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct KeyFile {
    /// The seal's key, a file of at least 16 bytes: seals made with it are keyed
    /// (HMAC-SHA-256), and --verify checks that a seal was made with it.
    #[arg(long, value_name = "PATH")]
    pub key_file: Option<PathBuf>,
}

/// `--seal` and `--key-file`: a trace sealed as it is recorded (`rec`, `llm`).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct SealFlags {
    /// Seal the trace as it is recorded: a hash chain over its lines in TRACE.seal, for
    /// `reel check --verify`.
    #[arg(long)]
    pub seal: bool,

    #[command(flatten)]
    pub key: KeyFile,
}

impl SealFlags {
    /// What the flags ask for, the key read (see [`KeyFile::load`]); `--key-file`
    /// without `--seal` is a usage error.
    pub fn load(&self) -> anyhow::Result<Seal> {
        self.key.requires(self.seal, "--seal")?;
        Ok(Seal {
            on: self.seal,
            key: self.key.load()?,
        })
    }
}

/// `--seal` and its key.
pub struct Seal {
    pub on: bool,
    pub key: Option<SealKey>,
}

impl Seal {
    /// The target, sealed when asked for (73 when the seal cannot be created).
    pub fn apply(&self, trace: TraceTarget) -> anyhow::Result<TraceTarget> {
        if !self.on {
            return Ok(trace);
        }
        trace
            .seal(self.key.clone())
            .map_err(|e| coded(exit::CANT_CREATE, e.to_string()))
    }

    /// Says where the seal goes.
    pub fn say(&self, trace: &TraceTarget) {
        if let Some(p) = trace.seal_path() {
            let keyed = if self.key.is_some() { ", keyed" } else { "" };
            say!("reel: sealing to {}{keyed}", p.display());
        }
    }
}

impl KeyFile {
    /// The key, if one was given: 66 when the file cannot be read, 64 when it is too
    /// short.
    pub fn load(&self) -> anyhow::Result<Option<SealKey>> {
        let Some(path) = &self.key_file else {
            return Ok(None);
        };
        SealKey::read(path).map(Some).map_err(|e| {
            let code = match e {
                KeyError::Read { .. } => exit::NO_INPUT,
                _ => exit::USAGE,
            };
            coded(code, e.to_string())
        })
    }

    /// A usage error unless `flag` (which `--key-file` goes with) was given.
    pub fn requires(&self, given: bool, flag: &str) -> anyhow::Result<()> {
        if self.key_file.is_some() && !given {
            return Err(coded(
                exit::USAGE,
                format!("--key-file keys a seal: give it with {flag}"),
            ));
        }
        Ok(())
    }
}

/// Arguments of `reel seal`.
#[derive(clap::Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// Finished traces to seal: trace files or run names (the newest run recorded with
    /// that --name in --dir; NAME~1 is the one before it).
    #[arg(required = true, value_name = "TRACE")]
    traces: Vec<String>,

    #[command(flatten)]
    runs: RunDir,

    #[command(flatten)]
    key: KeyFile,

    /// Replace a seal that exists (by default an existing seal is never overwritten).
    #[arg(long)]
    force: bool,

    /// Write one JSON document (schema reel.sealed/1) instead of text.
    #[arg(long)]
    json: bool,
}

/// The `reel.sealed/1` document.
#[derive(serde::Serialize)]
struct Document {
    schema: &'static str,
    sealed: Vec<Sealed>,
}

/// Runs `reel seal`.
pub fn run(args: Args, out: &Output) -> anyhow::Result<u8> {
    let key = args.key.load()?;
    let mut doc = Document {
        schema: SCHEMA,
        sealed: Vec::new(),
    };
    for arg in &args.traces {
        let path = args.runs.resolve(arg)?;
        let sealed = seal::seal_trace(&path, key.as_ref(), args.force).map_err(|e| {
            let code = match e {
                SealError::Trace(_) => exit::NO_INPUT,
                _ => exit::CANT_CREATE,
            };
            coded(code, format!("cannot seal {e}"))
        })?;
        if !args.json {
            let text = format!(
                "{}: sealed {} into {} ({} chain)\n",
                sealed.trace,
                reel_report::display::plural(sealed.lines, "line"),
                sealed.seal,
                sealed.chain
            );
            let mut w = out.human_stdout();
            exit::keep_verdict(w.write_all(text.as_bytes()).map_err(Into::into))?;
        }
        doc.sealed.push(sealed);
    }
    if args.json {
        exit::keep_verdict(out.json(&doc))?;
    }
    Ok(exit::OK)
}
