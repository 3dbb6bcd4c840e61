//! Reading another tool's recording as a trace, one way for every reader (the reading
//! commands, the viewer): a file of a format reel reads, or an mcptape run directory,
//! is converted once into a private temporary directory, redacted with the built-in
//! rules as `reel import` and `reel rec` are by default, so what is shown or exported
//! from it holds no secret the source held raw.
//!
//! The directories are this process's (`reel-read-<pid>-…`): [`cleanup`] removes them,
//! and each new conversion first sweeps those a killed process left behind.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::import::{Output, import};
use crate::{Format, Found, discover};
use reel_redact::redact::Redactor;
use reel_trace::names::{file_name_part, private_temp_dir};

/// The name every conversion directory starts with: `reel-read-<pid>-<random>`.
const PREFIX: &str = "reel-read-";

/// Directories of conversions made by this process, removed by [`cleanup`].
static MADE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A conversion made.
#[derive(Debug, Clone)]
pub struct Conversion {
    /// The converted trace (line numbers are its own, not the source's).
    pub trace: PathBuf,
    /// The source's format.
    pub format: Format,
    /// What the conversion could not carry over.
    pub warnings: Vec<String>,
}

/// Why a recording could not be read through a conversion.
#[derive(Debug, thiserror::Error)]
pub enum ReadableError {
    /// The private directory could not be made.
    #[error("cannot create a private directory under {}: {source}", std::env::temp_dir().display())]
    TempDir {
        /// Why.
        source: io::Error,
    },
    /// The conversion failed (the message names the file).
    #[error("{0}")]
    Import(String),
}

impl ReadableError {
    /// True when the failure was the output's, not the input's.
    pub fn is_output(&self) -> bool {
        matches!(self, ReadableError::TempDir { .. })
    }
}

/// `None` when `path` is a trace of reel's format (or nothing reel reads: the caller's
/// reader says why); else `path` converted into a private temporary directory.
pub fn convert_if_foreign(path: &Path) -> Result<Option<Conversion>, ReadableError> {
    let found = match discover(path, None) {
        Ok(d) if path.is_file() || d.found.iter().any(|f| f.format == Format::Mcptape) => d.found,
        _ => Vec::new(),
    };
    let [found]: [Found; 1] = match found.try_into() {
        Ok(one) => one,
        Err(_) => return Ok(None),
    };
    sweep_stale();
    let dir = private_temp_dir(PREFIX).map_err(|source| ReadableError::TempDir { source })?;
    MADE.lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(dir.clone());
    let label = found.label.clone();
    let trace = dir.join(format!("{}.jsonl", file_name_part(&label)));
    let done = import(&found, &label, Output::File(&trace), &Redactor::builtin())
        .map_err(|e| ReadableError::Import(e.to_string()))?;
    let mut warnings = done.warnings;
    warnings.extend(done.too_long.iter().map(ToString::to_string));
    Ok(Some(Conversion {
        trace,
        format: found.format,
        warnings,
    }))
}

/// Removes the conversions this process made.
pub fn cleanup() {
    let made = std::mem::take(&mut *MADE.lock().unwrap_or_else(|e| e.into_inner()));
    for dir in made {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Removes conversion directories of this user that a killed process left behind
/// (their process is gone).
fn sweep_stale() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
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

/// Whether process `pid` exists (on Linux, its /proc entry; elsewhere assumed).
fn process_alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new(&format!("/proc/{pid}")).exists()
    } else {
        true
    }
}
