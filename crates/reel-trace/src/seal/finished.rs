//! Sealing a finished trace (`reel seal`): its lines as every reader reads them,
//! rotated companions first, into a sidecar written whole or not at all.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{ChainFn, SealKey, Sealer, file_name, private_options, sidecar_path};
use crate::reader::{OpenError, TraceReader};
use crate::time::Timestamp;

/// Why a finished trace cannot be sealed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SealError {
    /// The trace cannot be read.
    #[error(transparent)]
    Trace(#[from] OpenError),
    /// A seal is there already.
    #[error(
        "{}: a seal exists already (check it with `reel check --verify`; replace it with --force)",
        path.display()
    )]
    Exists {
        /// The sidecar.
        path: PathBuf,
    },
    /// The sidecar cannot be written.
    #[error("cannot write the seal {}: {source}", path.display())]
    Write {
        /// The sidecar (or the temporary file beside it).
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

/// What [`seal_trace`] sealed.
#[derive(Debug, Clone, Serialize)]
pub struct Sealed {
    /// The trace as named.
    pub trace: String,
    /// The sidecar written.
    pub seal: String,
    /// The files sealed, in reading order (rotated companions first).
    pub files: Vec<String>,
    /// Lines sealed.
    pub lines: u64,
    /// `sha256` or `hmac-sha256`.
    pub chain: &'static str,
}

/// Seals the finished trace at `path` (with its rotated companions) into
/// `<path>.seal`; an existing seal is replaced only when `replace`.
///
/// The seal is written beside the sidecar under a temporary name and renamed into
/// place when complete, so a failure leaves no half seal, and a replaced seal is never
/// missing.
pub fn seal_trace(path: &Path, key: Option<&SealKey>, replace: bool) -> Result<Sealed, SealError> {
    let target = sidecar_path(path);
    if !replace && target.exists() {
        return Err(SealError::Exists { path: target });
    }
    // The count first: the seal commits to it up front (see the module's format).
    let total = count_lines(path)?;
    let mut reader = TraceReader::open(path)?;
    let files: Vec<String> = reader.files().iter().map(|f| file_name(f)).collect();
    let mut tmp = target.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let file = private_options()
        .create(true)
        .truncate(true)
        .open(&tmp)
        .map_err(|source| SealError::Write {
            path: tmp.clone(),
            source,
        })?;
    let sealer = Sealer::committed(
        io::BufWriter::new(file),
        &files,
        Timestamp::now(),
        key,
        total,
    );
    let lines = match seal_lines(sealer, &mut reader, path, total, &tmp) {
        Ok(n) => n,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    if let Err(source) = std::fs::rename(&tmp, &target) {
        let _ = std::fs::remove_file(&tmp);
        return Err(SealError::Write {
            path: target,
            source,
        });
    }
    Ok(Sealed {
        trace: path.display().to_string(),
        seal: target.display().to_string(),
        files,
        lines,
        chain: ChainFn::new(key).name(),
    })
}

/// How many lines the trace at `path` has, as every reader reads them.
fn count_lines(path: &Path) -> Result<u64, SealError> {
    let mut counting = TraceReader::open(path)?;
    let mut total = 0u64;
    while let Some(line) = counting.next_line() {
        line?;
        total += 1;
    }
    Ok(total)
}

/// Seals every line `reader` reads of the trace at `path` (a JSON object first, and
/// `total` of them, as counted before), closes the seal and syncs the temporary
/// sidecar `tmp` to disk: the number of lines sealed.
fn seal_lines(
    mut sealer: Sealer<io::BufWriter<File>>,
    reader: &mut TraceReader,
    path: &Path,
    total: u64,
    tmp: &Path,
) -> Result<u64, SealError> {
    let not_a_trace = |problem| {
        SealError::Trace(OpenError::NotATrace {
            path: path.to_owned(),
            problem,
        })
    };
    let write_err = |source| SealError::Write {
        path: tmp.to_owned(),
        source,
    };
    let mut first = true;
    while let Some(line) = reader.next_line() {
        let line = line?;
        if first {
            first = false;
            if !line.raw.bytes.starts_with(b"{") {
                return Err(not_a_trace("the first line is not a JSON object"));
            }
        }
        sealer.seal_raw(&line.raw);
    }
    if first {
        return Err(not_a_trace("the file is empty"));
    }
    let lines = sealer.lines();
    if lines != total {
        return Err(write_err(io::Error::other(format!(
            "the trace changed while it was sealed ({total} lines, then {lines})"
        ))));
    }
    let sink = sealer.close(Timestamp::now()).map_err(write_err)?;
    sink.into_inner()
        .map_err(|e| write_err(e.into_error()))?
        .sync_all()
        .map_err(write_err)?;
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seal::{CHAIN_HMAC, CHAIN_SHA256};

    fn key() -> SealKey {
        SealKey::new(b"0123456789abcdef-key".to_vec()).unwrap()
    }

    #[test]
    fn sealing_a_finished_trace_writes_a_complete_sidecar_and_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("t.jsonl");
        std::fs::write(&trace, "{\"type\":\"meta\"}\n{\"a\":1}\n").unwrap();
        let sealed = seal_trace(&trace, None, false).unwrap();
        assert_eq!((sealed.lines, sealed.chain), (2, CHAIN_SHA256));
        let text = std::fs::read_to_string(sidecar_path(&trace)).unwrap();
        assert_eq!(text.lines().count(), 4, "{text}");
        assert!(matches!(
            seal_trace(&trace, None, false),
            Err(SealError::Exists { .. })
        ));
        seal_trace(&trace, Some(&key()), true).unwrap();
        let text = std::fs::read_to_string(sidecar_path(&trace)).unwrap();
        assert!(text.contains(CHAIN_HMAC), "{text}");
        // Nothing is left beside it.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(sidecar_path(&trace))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn what_is_not_a_trace_is_not_sealed() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("e.jsonl");
        std::fs::write(&empty, "").unwrap();
        let text = dir.path().join("t.txt");
        std::fs::write(&text, "hello\n").unwrap();
        for p in [&empty, &text] {
            assert!(matches!(
                seal_trace(p, None, false),
                Err(SealError::Trace(OpenError::NotATrace { .. }))
            ));
            assert!(!sidecar_path(p).exists());
        }
        assert!(matches!(
            seal_trace(&dir.path().join("gone.jsonl"), None, false),
            Err(SealError::Trace(OpenError::NotFound { .. }))
        ));
    }
}
