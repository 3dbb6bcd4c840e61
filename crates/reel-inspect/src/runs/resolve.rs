//! Naming a trace: a path, or a run name, for every command that reads one.
//!
//! A run name is the `--name` a run was recorded with (its `meta.label`); it names the
//! newest run in the trace directory with that label, and `NAME~K` the K-th one before
//! it (`demo~1`: the run before the newest `demo`), as git names a commit's ancestors.
//!
//! Which one an argument means:
//! - an argument that looks like a path (it holds a path separator or ends in `.jsonl`)
//!   is that path, whether or not something is there (the reader says what is wrong);
//! - a bare word that is a file here is that file, unless a run has that name too: then
//!   neither is guessed, and the error names both and how to pick each;
//! - any other bare word (nothing there, or a directory: a directory is not a trace) is
//!   a run name.

use std::path::{Path, PathBuf};

use reel_trace::names;

/// Why no trace was found for a name.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// Not a trace file, and no run of that name in the directory.
    #[error("{}", no_such_run(name, dir, *is_directory))]
    NoSuchRun {
        /// What was asked for.
        name: String,
        /// Where runs were looked for.
        dir: PathBuf,
        /// True when `name` is a directory here (a directory is not a trace).
        is_directory: bool,
    },
    /// `NAME~K` reaches back further than the runs of that name go.
    #[error(
        "{name}~{back}: only {found} run(s) named `{name}` in {dir} (`{name}` is the newest, `{name}~1` the one before; `reel ls {dir}` lists them)",
        dir = dir.display()
    )]
    TooFewRuns {
        /// The run name.
        name: String,
        /// How many runs back was asked for.
        back: usize,
        /// How many runs of that name there are.
        found: usize,
        /// Where runs were looked for.
        dir: PathBuf,
    },
    /// Not a trace file, and no trace directory to look for a run in.
    #[error(
        "{name}: no such file, and no trace directory to look for a run of that name in (set --dir or REEL_DIR)"
    )]
    NoDirectory {
        /// What was asked for.
        name: String,
    },
    /// A file here and a run in the trace directory answer to the same name.
    #[error(
        "{name}: both a file here and a run in {dir}; write ./{name} for the file, or {run} for the run",
        dir = dir.display(),
        run = run.display()
    )]
    Ambiguous {
        /// The name.
        name: String,
        /// Where runs were looked for.
        dir: PathBuf,
        /// The run's trace.
        run: PathBuf,
    },
}

impl ResolveError {
    /// True when the name is ambiguous (a usage error), false when nothing was found
    /// (an input that cannot be read).
    pub fn is_ambiguous(&self) -> bool {
        matches!(self, ResolveError::Ambiguous { .. })
    }
}

fn no_such_run(name: &str, dir: &Path, is_directory: bool) -> String {
    let dir = dir.display();
    if is_directory {
        format!(
            "{name}: a directory, not a trace, and no run is named `{name}` in {dir} (`reel ls {name}` lists the traces in it; `reel ls {dir}` lists the runs; --dir picks another directory)"
        )
    } else {
        format!(
            "{name}: no such file, and no run named `{name}` in {dir} (`reel ls {dir}` lists the runs; --dir picks another directory)"
        )
    }
}

/// The trace `arg` names (see the module docs): a path, or a run in `dir` (default: the
/// per-user trace directory).
pub fn resolve(arg: &str, dir: Option<&Path>) -> Result<PathBuf, ResolveError> {
    resolve_in(Path::new(""), arg, dir)
}

/// [`resolve`], with bare words looked for in `here` rather than the working directory.
fn resolve_in(here: &Path, arg: &str, dir: Option<&Path>) -> Result<PathBuf, ResolveError> {
    if looks_like_path(arg) {
        return Ok(PathBuf::from(arg));
    }
    let path = here.join(arg);
    let here = std::fs::metadata(&path).ok();
    let is_directory = here.as_ref().is_some_and(std::fs::Metadata::is_dir);
    let is_file = here.is_some() && !is_directory;
    let dir = match dir {
        Some(d) => d.to_owned(),
        None => match names::default_trace_dir() {
            Some(d) => d,
            None if is_file => return Ok(path),
            None => {
                return Err(ResolveError::NoDirectory {
                    name: arg.to_owned(),
                });
            }
        },
    };
    if is_file {
        // The whole word is the name here: `x~1` as a file is not run `x`, one back.
        return match nth_run(&dir, arg, 0) {
            Ok(run) => Err(ResolveError::Ambiguous {
                name: arg.to_owned(),
                dir,
                run,
            }),
            Err(_) => Ok(path),
        };
    }
    let (name, back) = split_back(arg);
    nth_run(&dir, name, back).map_err(|found| {
        if back > 0 && found > 0 {
            ResolveError::TooFewRuns {
                name: name.to_owned(),
                back,
                found,
                dir: dir.clone(),
            }
        } else {
            ResolveError::NoSuchRun {
                name: arg.to_owned(),
                dir: dir.clone(),
                is_directory,
            }
        }
    })
}

/// True for an argument that can only be meant as a path.
fn looks_like_path(arg: &str) -> bool {
    arg.contains(std::path::MAIN_SEPARATOR) || arg.contains('/') || arg.ends_with(".jsonl")
}

/// `NAME~K` → (NAME, K); anything else → (arg, 0).
fn split_back(arg: &str) -> (&str, usize) {
    match arg.rsplit_once('~') {
        Some((name, k)) if !name.is_empty() && !k.is_empty() => match k.parse() {
            Ok(back) if k.bytes().all(|b| b.is_ascii_digit()) => (name, back),
            _ => (arg, 0),
        },
        _ => (arg, 0),
    }
}

/// The `back`-th newest run in `dir` whose label is `name` (or gives the same file-name
/// part); on failure, how many runs of that name there are.
fn nth_run(dir: &Path, name: &str, back: usize) -> Result<PathBuf, usize> {
    let wanted = names::file_name_part(name);
    let listing = super::list_runs(dir).map_err(|_| 0usize)?;
    let matching: Vec<&PathBuf> = listing
        .runs
        .iter()
        .filter(|r| {
            r.label
                .as_deref()
                .is_some_and(|l| l == name || names::file_name_part(l) == wanted)
        })
        .map(|r| &r.path)
        .collect();
    matching
        .get(back)
        .map(|p| (*p).clone())
        .ok_or(matching.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(dir: &Path, file: &str, label: &str, started: &str) -> PathBuf {
        let path = dir.join(file);
        std::fs::write(
            &path,
            format!(
                "{{\"v\":1,\"type\":\"meta\",\"startedAt\":\"{started}\",\"label\":\"{label}\"}}\n{{\"type\":\"end\",\"t\":\"{started}\",\"exitCode\":0}}\n"
            ),
        )
        .unwrap();
        path
    }

    /// Two `fs` runs and one `git` run, oldest first.
    fn three_runs(dir: &Path) -> [PathBuf; 3] {
        [
            trace(
                dir,
                "2026-01-01T00-00-00-000Z-fs.jsonl",
                "fs",
                "2026-01-01T00:00:00.000Z",
            ),
            trace(
                dir,
                "2026-02-01T00-00-00-000Z-fs.jsonl",
                "fs",
                "2026-02-01T00:00:00.000Z",
            ),
            trace(
                dir,
                "2026-03-01T00-00-00-000Z-git.jsonl",
                "git",
                "2026-03-01T00:00:00.000Z",
            ),
        ]
    }

    #[test]
    fn names_find_the_newest_run_with_that_label() {
        let d = tempfile::tempdir().unwrap();
        let [_, newest_fs, git] = three_runs(d.path());
        assert_eq!(resolve("fs", Some(d.path())).unwrap(), newest_fs);
        assert!(matches!(
            resolve("nope", Some(d.path())),
            Err(ResolveError::NoSuchRun {
                is_directory: false,
                ..
            })
        ));
        assert_eq!(resolve(git.to_str().unwrap(), None).unwrap(), git);
    }

    #[test]
    fn a_tilde_names_the_runs_before_the_newest() {
        let d = tempfile::tempdir().unwrap();
        let [oldest_fs, newest_fs, _] = three_runs(d.path());
        assert_eq!(resolve("fs~0", Some(d.path())).unwrap(), newest_fs);
        assert_eq!(resolve("fs~1", Some(d.path())).unwrap(), oldest_fs);
        let e = resolve("fs~2", Some(d.path())).unwrap_err();
        assert!(
            matches!(
                e,
                ResolveError::TooFewRuns {
                    found: 2,
                    back: 2,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("only 2 run(s) named `fs`"), "{e}");
        // Not a number after the tilde: the whole word is the name.
        assert!(matches!(
            resolve("fs~x", Some(d.path())),
            Err(ResolveError::NoSuchRun { .. })
        ));
    }

    #[test]
    fn a_directory_is_not_a_trace_so_its_name_is_a_run_name() {
        let d = tempfile::tempdir().unwrap();
        let [_, newest_fs, _] = three_runs(d.path());
        let cwd = tempfile::tempdir().unwrap();
        let here = cwd.path();
        std::fs::create_dir(here.join("fs")).unwrap();
        std::fs::create_dir(here.join("other")).unwrap();
        assert_eq!(resolve_in(here, "fs", Some(d.path())).unwrap(), newest_fs);
        let e = resolve_in(here, "other", Some(d.path())).unwrap_err();
        assert!(
            matches!(
                e,
                ResolveError::NoSuchRun {
                    is_directory: true,
                    ..
                }
            ),
            "{e:?}"
        );
        let text = e.to_string();
        assert!(text.contains("other: a directory, not a trace"), "{text}");
        assert_eq!(text.matches("lists the runs").count(), 1, "{text}");
    }

    #[test]
    fn a_file_and_a_run_of_one_name_are_not_guessed_between() {
        let d = tempfile::tempdir().unwrap();
        let [_, newest_fs, _] = three_runs(d.path());
        let cwd = tempfile::tempdir().unwrap();
        let here = cwd.path();
        std::fs::write(here.join("fs"), "x").unwrap();
        std::fs::write(here.join("mine"), "x").unwrap();
        let e = resolve_in(here, "fs", Some(d.path())).unwrap_err();
        assert!(e.is_ambiguous(), "{e:?}");
        let text = e.to_string();
        assert!(text.contains("write ./fs for the file"), "{text}");
        assert!(text.contains(&newest_fs.display().to_string()), "{text}");
        assert_eq!(
            resolve_in(here, "./fs", Some(d.path())).unwrap(),
            Path::new("./fs")
        );
        assert_eq!(
            resolve_in(here, "mine", Some(d.path())).unwrap(),
            here.join("mine")
        );
    }
}
