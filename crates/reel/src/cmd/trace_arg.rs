//! Naming a trace on the command line, one way for every command that reads one.
//!
//! A trace argument is a path or a run name (`demo`, `demo~1` for the run before the
//! newest `demo`), resolved by [`reel_inspect::runs::resolve`]; `--dir` says where run
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
        reel_inspect::runs::resolve(arg, self.dir.as_deref()).map_err(|e| {
            let code = if e.is_ambiguous() { USAGE } else { NO_INPUT };
            coded(code, e.to_string())
        })
    }
}

impl RunDir {
    /// [`resolve`](Self::resolve) for a command that reads the trace (`check`, `stats`,
    /// `diff`, `play`, `verify`): another tool's recording (see `reel import`) is read
    /// through a conversion, made once into a private temporary file (removed when reel
    /// exits) and said on stderr with what its format cannot hold. Line numbers are then
    /// the converted trace's.
    pub fn resolve_readable(&self, arg: &str) -> anyhow::Result<PathBuf> {
        let path = self.resolve(arg)?;
        converted(&path)
    }
}

/// `path`, or the trace converted from it when it is another tool's recording (see
/// [`reel_convert::readable`]), said on stderr with what its format cannot hold.
fn converted(path: &std::path::Path) -> anyhow::Result<PathBuf> {
    use reel_convert::readable::convert_if_foreign;
    let conversion = convert_if_foreign(path).map_err(|e| {
        let code = if e.is_output() {
            crate::exit::CANT_CREATE
        } else {
            NO_INPUT
        };
        coded(code, e.to_string())
    })?;
    let Some(c) = conversion else {
        return Ok(path.to_owned());
    };
    say!(
        "reel: note: {} is another tool's recording ({}), read through a redacted conversion (line numbers below are the conversion's): {}",
        path.display(),
        c.format.name(),
        c.format.limits()
    );
    for w in &c.warnings {
        say!("reel: warning: {}: {w}", path.display());
    }
    Ok(c.trace)
}

/// Removes the conversions [`RunDir::resolve_readable`] made.
pub fn cleanup() {
    reel_convert::readable::cleanup();
}
