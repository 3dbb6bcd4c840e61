//! Naming a trace on the command line, one way for every command that reads one.
//!
//! A trace argument is a path or a run name (`demo`, `demo~1` for the run before the
//! newest `demo`), resolved by [`reel_trace::runs::resolve`]; `--dir` says where run
//! names are looked up. Commands flatten [`RunDir`] into their arguments and resolve
//! each positional through it, so the flag, its help and its errors are the same
//! everywhere.

use std::path::PathBuf;

use crate::exit::{NO_INPUT, USAGE, coded};

/// `--dir`, where run names are looked up.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct RunDir {
    /// Where run names are looked up (default: $REEL_DIR, else the per-user trace
    /// directory, e.g. ~/.local/share/reel/traces).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

impl RunDir {
    /// The trace `arg` names; a name that is both a file here and a run is a usage
    /// error (64), a name that finds nothing an unreadable input (66).
    pub fn resolve(&self, arg: &str) -> anyhow::Result<PathBuf> {
        reel_trace::runs::resolve(arg, self.dir.as_deref()).map_err(|e| {
            let code = if e.is_ambiguous() { USAGE } else { NO_INPUT };
            coded(code, e.to_string())
        })
    }
}
