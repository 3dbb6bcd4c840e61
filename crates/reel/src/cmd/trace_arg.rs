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

/// Temporary directories of conversions, removed by [`cleanup`].
static CONVERTED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// The name every conversion directory starts with: `reel-read-<pid>-<random>`.
const CONVERSION_PREFIX: &str = "reel-read-";

/// `path`, or the trace converted from it when it is another tool's recording. The
/// conversion is redacted with the built-in rules, as `reel import` and `reel rec` are
/// by default: what is exported or shown from it holds no secret the source held raw.
fn converted(path: &std::path::Path) -> anyhow::Result<PathBuf> {
    use reel_trace::foreign::import::{Output, import};
    use reel_trace::foreign::{Format, Found, discover};
    // A file of a format reel reads, or an mcptape run directory.
    let found = match discover(path, None) {
        Ok(d) if path.is_file() || d.found.iter().any(|f| f.format == Format::Mcptape) => d.found,
        _ => Vec::new(),
    };
    let [found]: [Found; 1] = match found.try_into() {
        Ok(one) => one,
        Err(_) => return Ok(path.to_owned()),
    };
    let format = found.format;
    sweep_stale_conversions();
    let mut list = CONVERTED.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = std::env::temp_dir();
    let dir = reel_trace::names::private_temp_dir(CONVERSION_PREFIX).map_err(|e| {
        coded(
            crate::exit::CANT_CREATE,
            format!(
                "cannot create a private directory under {}: {e}",
                tmp.display()
            ),
        )
    })?;
    list.push(dir.clone());
    let label = found.label.clone();
    let out = dir.join(format!(
        "{}.jsonl",
        reel_trace::names::file_name_part(&label)
    ));
    let redactor = reel_trace::redact::Redactor::builtin();
    let done = import(&found, &label, Output::File(&out), &redactor)
        .map_err(|e| coded(NO_INPUT, e.to_string()))?;
    say!(
        "reel: note: {} is another tool's recording ({}), read through a redacted conversion (line numbers below are the conversion's): {}",
        path.display(),
        format.name(),
        format.limits()
    );
    for w in &done.warnings {
        say!("reel: warning: {}: {w}", path.display());
    }
    Ok(out)
}

/// Removes conversion directories of this user that a killed reel left behind (their
/// process is gone), so none outlives the next reading command.
fn sweep_stale_conversions() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name
            .to_str()
            .and_then(|n| n.strip_prefix(CONVERSION_PREFIX))
        else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid == std::process::id() || process_alive(pid) {
            continue;
        }
        // Another user's is not ours to remove (in a sticky /tmp the removal fails).
        let _ = std::fs::remove_dir_all(e.path());
    }
}

/// Whether process `pid` exists (on Linux, its /proc entry).
fn process_alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
    } else {
        true
    }
}

/// Removes the conversions [`RunDir::resolve_readable`] made.
pub fn cleanup() {
    let list = std::mem::take(&mut *CONVERTED.lock().unwrap_or_else(|e| e.into_inner()));
    for dir in list {
        let _ = std::fs::remove_dir_all(dir);
    }
}
