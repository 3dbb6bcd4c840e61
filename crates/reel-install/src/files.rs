//! The files themselves: read, edited ([`crate::edit`]), shown as a diff (`--dry-run`),
//! backed up and written.
//!
//! A file is written only when its text changes. Before its first change it is copied
//! to `FILE.reel-backup` (kept once made: it is the file as it was before reel ever
//! touched it); the new text goes to a temporary file beside it, with the original's
//! permissions, synced, and renamed over it, so a client reading the file sees the old
//! text or the new one, never half. A symbolic link (dotfiles kept in a repository) is
//! followed: its target is rewritten and the link stays. If the file changed while it
//! was being edited (a client saving its own settings), nothing is written and the
//! error says so.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::edit::{Counts, EditError, Edited, Skipped, Wrapper};
use crate::targets::ConfigFile;

/// The suffix of a file's backup.
pub const BACKUP_SUFFIX: &str = ".reel-backup";

/// Why a file could not be edited.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// It cannot be read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Its text cannot be edited.
    #[error("{}: {source}", path.display())]
    Edit {
        /// The file.
        path: PathBuf,
        /// Why.
        source: EditError,
    },
    /// It cannot be written (or backed up).
    #[error("{}: cannot write: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Another program changed it while reel was editing it.
    #[error("{}: changed while reel was editing it (a client saving its settings?); nothing was written, run the command again", path.display())]
    Changed {
        /// The file.
        path: PathBuf,
    },
}

/// A file's edit, not yet written.
#[derive(Debug)]
pub struct Change {
    /// The file (as found; [`Change::real`] is what is written).
    pub file: ConfigFile,
    /// The file behind any symbolic link.
    pub real: PathBuf,
    /// Its text now.
    pub before: String,
    /// Its text after the edit.
    pub after: String,
    /// What the edit did.
    pub counts: Counts,
    /// Entries left alone.
    pub skipped: Vec<Skipped>,
    /// The names of the entries considered.
    pub named: Vec<String>,
}

impl Change {
    /// True when the edit changes the file.
    pub fn changes(&self) -> bool {
        self.before != self.after
    }

    /// The edit as a unified diff (`--dry-run`).
    pub fn diff(&self) -> String {
        let path = self.file.path.display().to_string();
        similar::TextDiff::from_lines(&self.before, &self.after)
            .unified_diff()
            .context_radius(3)
            .header(&path, &format!("{path} (after)"))
            .to_string()
    }

    /// `FILE.reel-backup` of the file behind the link.
    pub fn backup_path(&self) -> PathBuf {
        let mut name = self.real.as_os_str().to_owned();
        name.push(BACKUP_SUFFIX);
        PathBuf::from(name)
    }
}

/// The files of `candidates` that exist.
pub fn existing(candidates: Vec<ConfigFile>) -> Vec<ConfigFile> {
    candidates
        .into_iter()
        .filter(|f| f.path.is_file())
        .collect()
}

fn read(file: &ConfigFile) -> Result<(PathBuf, String), FileError> {
    let real = std::fs::canonicalize(&file.path).map_err(|source| FileError::Read {
        path: file.path.clone(),
        source,
    })?;
    let text = std::fs::read_to_string(&real).map_err(|source| FileError::Read {
        path: file.path.clone(),
        source,
    })?;
    Ok((real, text))
}

fn change(
    file: &ConfigFile,
    edit: impl FnOnce(&str) -> Result<Edited, EditError>,
) -> Result<Change, FileError> {
    let (real, before) = read(file)?;
    let edited = edit(&before).map_err(|source| FileError::Edit {
        path: file.path.clone(),
        source,
    })?;
    Ok(Change {
        file: file.clone(),
        real,
        before,
        after: edited.text,
        counts: edited.counts,
        skipped: edited.skipped,
        named: edited.named,
    })
}

/// What `reel install` would do to `file`.
pub fn plan_install(file: &ConfigFile, w: &Wrapper, only: &[String]) -> Result<Change, FileError> {
    change(file, |text| crate::edit::install(text, file, w, only))
}

/// What `reel uninstall` would do to `file`.
pub fn plan_uninstall(file: &ConfigFile, only: &[String]) -> Result<Change, FileError> {
    change(file, |text| crate::edit::uninstall(text, file, only))
}

/// What writing a change did with the backup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backup {
    /// Made now, before this first change.
    Made(PathBuf),
    /// Made by an earlier install; kept.
    Kept(PathBuf),
    /// The file is its backup again (uninstalled, nothing else changed): removed.
    Removed(PathBuf),
}

/// Writes `c` (when it changes the file): the backup first if none exists and
/// `make_backup` (an install), then the new text in place. A change that gives back the
/// backup's exact bytes (an uninstall, nothing else changed) removes the backup.
pub fn write(c: &Change, make_backup: bool) -> Result<Option<Backup>, FileError> {
    if !c.changes() {
        return Ok(None);
    }
    let failed = |source| FileError::Write {
        path: c.file.path.clone(),
        source,
    };
    let meta = std::fs::metadata(&c.real).map_err(failed)?;
    if meta.permissions().readonly() {
        return Err(failed(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "the file is read-only (make it writable to let reel edit it)",
        )));
    }
    let backup = c.backup_path();
    let made = if backup.exists() || !make_backup {
        false
    } else {
        write_whole(&backup, c.before.as_bytes(), &c.real).map_err(failed)?;
        true
    };
    // A client may have saved the file since it was read: never write over that.
    let now = std::fs::read_to_string(&c.real).map_err(failed)?;
    if now != c.before {
        // Nothing was written: the backup just made would be a stale copy that a later
        // uninstall takes for the original.
        if made {
            let _ = std::fs::remove_file(&backup);
        }
        return Err(FileError::Changed {
            path: c.file.path.clone(),
        });
    }
    write_whole(&c.real, c.after.as_bytes(), &c.real).map_err(failed)?;
    if made {
        return Ok(Some(Backup::Made(backup)));
    }
    if !backup.exists() {
        return Ok(None);
    }
    let restored = std::fs::read(&backup).is_ok_and(|b| b == c.after.as_bytes());
    if restored {
        std::fs::remove_file(&backup).map_err(failed)?;
        return Ok(Some(Backup::Removed(backup)));
    }
    Ok(Some(Backup::Kept(backup)))
}

/// Writes `bytes` to `path` whole: a temporary file beside it with `like`'s
/// permissions, synced, renamed over it.
fn write_whole(path: &Path, bytes: &[u8], like: &Path) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.reel-{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        if let Ok(meta) = std::fs::metadata(like) {
            f.set_permissions(meta.permissions())?;
            // Run as root (`sudo`), the file stays its owner's.
            use std::os::unix::fs::MetadataExt;
            let _ = std::os::unix::fs::fchown(&f, Some(meta.uid()), Some(meta.gid()));
        }
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::{ConfigFile, Scope, Target};

    /// The file changed between reading and writing (a client saved its settings): the
    /// install is refused, nothing is written, and no backup is left behind for a later
    /// uninstall to take for the original.
    #[test]
    fn a_refused_write_leaves_no_backup() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(".mcp.json");
        std::fs::write(&path, "{\"mcpServers\":{\"saved\":{}}}").unwrap();
        let c = Change {
            file: ConfigFile {
                target: Target::ClaudeCode,
                path: path.clone(),
                scope: Scope::Project,
            },
            real: path.clone(),
            before: "{\"mcpServers\":{}}".to_owned(),
            after: "{\"mcpServers\":{\"wrapped\":{}}}".to_owned(),
            counts: Default::default(),
            skipped: Vec::new(),
            named: Vec::new(),
        };
        assert!(matches!(write(&c, true), Err(FileError::Changed { .. })));
        assert!(!c.backup_path().exists(), "a stale backup was left");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"mcpServers\":{\"saved\":{}}}"
        );
    }
}
