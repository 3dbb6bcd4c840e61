//! Finding the trace to play: a path, or a run name.
//!
//! A run name is the `--name` it was recorded with (its `meta.label`); the newest run in
//! the trace directory whose label matches is played. The listing comes from
//! `reel_trace::runs`, which reads only the head and tail of each file.

use std::path::{Path, PathBuf};

use reel_trace::names;

/// Why no trace was found.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// Not a file, and no run of that name in the directory.
    #[error(
        "{name}: no such file, and no run named `{name}` in {dir} (`reel ls {dir}` lists the runs; --dir picks another directory)"
    )]
    NoSuchRun {
        /// What was asked for.
        name: String,
        /// Where runs were looked for.
        dir: PathBuf,
    },
    /// Not a file, and no trace directory to look in.
    #[error(
        "{name}: no such file, and no trace directory to look for a run of that name in (set --dir or REEL_DIR)"
    )]
    NoDirectory {
        /// What was asked for.
        name: String,
    },
}

/// The trace `arg` names: the path itself when something is there, else the newest run
/// in `dir` (default: the per-user trace directory) whose label is `arg` (or whose label
/// gives the same file-name part).
pub fn resolve(arg: &str, dir: Option<&Path>) -> Result<PathBuf, ResolveError> {
    let path = Path::new(arg);
    if path.exists() || arg.contains(std::path::MAIN_SEPARATOR) || arg.ends_with(".jsonl") {
        return Ok(path.to_owned());
    }
    let dir = match dir {
        Some(d) => d.to_owned(),
        None => names::default_trace_dir().ok_or_else(|| ResolveError::NoDirectory {
            name: arg.to_owned(),
        })?,
    };
    let wanted = names::file_name_part(arg);
    let listing = reel_trace::runs::list_runs(&dir).map_err(|_| ResolveError::NoSuchRun {
        name: arg.to_owned(),
        dir: dir.clone(),
    })?;
    listing
        .runs
        .iter()
        .find(|r| {
            r.label
                .as_deref()
                .is_some_and(|l| l == arg || names::file_name_part(l) == wanted)
        })
        .map(|r| r.path.clone())
        .ok_or(ResolveError::NoSuchRun {
            name: arg.to_owned(),
            dir,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(dir: &Path, file: &str, label: &str, started: &str) {
        std::fs::write(
            dir.join(file),
            format!(
                "{{\"v\":1,\"type\":\"meta\",\"startedAt\":\"{started}\",\"label\":\"{label}\"}}\n{{\"type\":\"end\",\"t\":\"{started}\",\"exitCode\":0}}\n"
            ),
        )
        .unwrap();
    }

    #[test]
    fn names_find_the_newest_run_with_that_label() {
        let d = tempfile::tempdir().unwrap();
        trace(
            d.path(),
            "2026-01-01T00-00-00-000Z-fs.jsonl",
            "fs",
            "2026-01-01T00:00:00.000Z",
        );
        trace(
            d.path(),
            "2026-02-01T00-00-00-000Z-fs.jsonl",
            "fs",
            "2026-02-01T00:00:00.000Z",
        );
        trace(
            d.path(),
            "2026-03-01T00-00-00-000Z-git.jsonl",
            "git",
            "2026-03-01T00:00:00.000Z",
        );
        let got = resolve("fs", Some(d.path())).unwrap();
        assert!(
            got.ends_with("2026-02-01T00-00-00-000Z-fs.jsonl"),
            "{got:?}"
        );
        assert!(matches!(
            resolve("nope", Some(d.path())),
            Err(ResolveError::NoSuchRun { .. })
        ));
        let direct = d.path().join("2026-03-01T00-00-00-000Z-git.jsonl");
        assert_eq!(resolve(direct.to_str().unwrap(), None).unwrap(), direct);
    }
}
