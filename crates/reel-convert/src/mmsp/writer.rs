//! The tracer's writer (MMSP-RFC-0010 §4–§6): one conversation saved under a trace id
//! into a cache directory, as `<id>.json` and `<id>.txt`.
//!
//! - The id is checked before anything is written, or even a directory created: an
//!   absolute path, `..` segments that leave the cache directory, an id that names the
//!   directory itself, and an id that a symbolic link takes outside it are refused with
//!   the RFC's message. Any other id is normalised as `path.resolve` normalises a path
//!   (`a//b/` → `a/b`, `agent/../kept` → `kept`), and the suffixes are appended to it
//!   (`run.v2` → `run.v2.json`, not 0.5.6's `with_suffix` replacing `.v2`). An empty
//!   id saves nothing (§4).
//! - Each save rewrites both files whole, each through a temporary file in the same
//!   directory renamed over it, so a reader never meets half a file.
//!
//! What is saved, and the `.json` text itself, is [`Conversation`]'s (`conversation.rs`).

use std::ffi::OsString;
use std::fs;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

use reel_trace::Timestamp;

use super::conversation::Conversation;
use super::transcript::transcript;

/// The client name MMSP's refusal message starts with.
pub const CLIENT: &str = "reel";

/// Why a trace cannot be saved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MmspError {
    /// The trace id would leave the cache directory (RFC-0010 §4); nothing was written.
    #[error(
        "{CLIENT} does not support trace_id '{0}': it must be a relative path that stays \
         inside the cache directory."
    )]
    TraceId(String),
    /// A file or directory cannot be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

/// The two files of a trace id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceFiles {
    /// `<id>.json`, the trace.
    pub json: PathBuf,
    /// `<id>.txt`, the transcript for a reader.
    pub txt: PathBuf,
}

/// The files trace id `id` names under `cache`, checked and normalised as RFC-0010 §4
/// says; `None` for the empty id (no trace). Writes nothing.
pub fn trace_files(cache: &Path, id: &str) -> Result<Option<TraceFiles>, MmspError> {
    if id.is_empty() {
        return Ok(None);
    }
    let refused = || MmspError::TraceId(id.to_owned());
    if id.starts_with('/') || id.contains('\0') || Path::new(id).is_absolute() {
        return Err(refused());
    }
    if Path::new(id)
        .components()
        .any(|c| matches!(c, Component::Prefix(_) | Component::RootDir))
    {
        return Err(refused());
    }
    let mut segments: Vec<&str> = Vec::new();
    for s in id.split('/') {
        match s {
            "" | "." => {}
            ".." => {
                segments.pop().ok_or_else(refused)?;
            }
            s => segments.push(s),
        }
    }
    if segments.is_empty() {
        return Err(refused());
    }
    let target: PathBuf = segments.iter().fold(cache.to_path_buf(), |p, s| p.join(s));
    // Symbolic links count: the check the viewer makes (RFC-0010 §7), on what exists.
    let root = resolve_existing(cache);
    let real = resolve_existing(&target);
    if real == root || !real.starts_with(&root) {
        return Err(refused());
    }
    let with = |suffix: &str| {
        let mut name = OsString::from(target.as_os_str());
        name.push(suffix);
        PathBuf::from(name)
    };
    Ok(Some(TraceFiles {
        json: with(".json"),
        txt: with(".txt"),
    }))
}

/// `p` with its deepest existing ancestor's symbolic links resolved and the rest
/// appended as it is.
fn resolve_existing(p: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut cur = p.to_path_buf();
    loop {
        if let Ok(mut real) = cur.canonicalize() {
            real.extend(rest.iter().rev());
            return real;
        }
        match (cur.file_name().map(ToOwned::to_owned), cur.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                cur = if parent.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    parent.to_path_buf()
                };
            }
            _ => return p.to_path_buf(),
        }
    }
}

/// Saves `conversation` under trace id `id` in the cache directory `cache` (created
/// when missing), both files rewritten whole; returns the `.json` written, `None` for
/// the empty id. The id is refused before anything is written.
pub fn save(
    cache: &Path,
    id: &str,
    conversation: &Conversation,
) -> Result<Option<PathBuf>, MmspError> {
    let Some(files) = trace_files(cache, id)? else {
        return Ok(None);
    };
    save_at(&files, conversation, Timestamp::now())?;
    Ok(Some(files.json))
}

/// Writes both files of a save at `now`.
pub(super) fn save_at(
    files: &TraceFiles,
    conversation: &Conversation,
    now: Timestamp,
) -> Result<(), MmspError> {
    let write_err = |path: &Path| {
        let path = path.to_owned();
        move |source| MmspError::Write { path, source }
    };
    // The cache holds conversations: private, as traces are.
    if let Some(dir) = files.json.parent() {
        reel_trace::names::ensure_dir(dir).map_err(write_err(dir))?;
    }
    let json = conversation.to_json(now);
    write_atomic(&files.json, json.as_bytes()).map_err(write_err(&files.json))?;
    let txt = transcript(conversation, now);
    write_atomic(&files.txt, txt.as_bytes()).map_err(write_err(&files.txt))?;
    Ok(())
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`.
fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
    let written = (|| {
        let mut f = reel_trace::names::private_file_options()
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}
