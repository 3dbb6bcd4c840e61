//! The manual pages and shell completions the packages ship, written by reel itself
//! (`reel man --dir`, `reel completions SHELL`) so they cannot disagree with `--help`.
//!
//! They are laid out as under an install prefix (`share/man/man1/reel.1`,
//! `share/bash-completion/completions/reel`, …): the wheel carries that tree as its
//! `data` (pip installs it under the venv, where `man` finds the pages from `PATH`), and
//! the npm main package carries the pages in `man/` (npm links them on a global install)
//! and the scripts in `completions/`.
//!
//! The reel that writes them must run here: the one being packaged when it is built for
//! this machine (built first with cargo, so maturin then reuses it), else a dev build
//! for this machine (the pages do not depend on the platform).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use super::options::Options;
use crate::process::{self, cargo};

/// Where each shell's completion script goes under the prefix, and its shell name.
pub const COMPLETIONS: &[(&str, &str)] = &[
    ("bash", "share/bash-completion/completions/reel"),
    ("zsh", "share/zsh/site-functions/_reel"),
    ("fish", "share/fish/vendor_completions.d/reel.fish"),
];

/// Where the manual pages go under the prefix.
pub const MAN_DIR: &str = "share/man/man1";

/// Writes the pages and the scripts into `prefix` (emptied first); returns the pages'
/// file names.
pub fn write(
    root: &Path,
    opts: &Options,
    target_dir: &Path,
    prefix: &Path,
) -> anyhow::Result<Vec<String>> {
    let reel = runnable_reel(root, opts, target_dir)?;
    if prefix.exists() {
        fs::remove_dir_all(prefix).with_context(|| format!("cannot empty {}", prefix.display()))?;
    }
    let man = prefix.join(MAN_DIR);
    process::run(Command::new(&reel).arg("man").arg("--dir").arg(&man))?;
    for (shell, path) in COMPLETIONS {
        let out = Command::new(&reel)
            .args(["completions", shell])
            .output()
            .with_context(|| format!("cannot run {}", reel.display()))?;
        if !out.status.success() || out.stdout.is_empty() {
            bail!("`reel completions {shell}` failed ({})", out.status);
        }
        let file = prefix.join(path);
        fs::create_dir_all(
            file.parent()
                .context("a completion path with no directory")?,
        )?;
        fs::write(&file, &out.stdout)
            .with_context(|| format!("cannot write {}", file.display()))?;
    }
    let mut pages: Vec<String> = fs::read_dir(&man)?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".1"))
        .collect();
    pages.sort();
    if !pages.iter().any(|p| p == "reel.1") {
        bail!("`reel man --dir` wrote no reel.1 in {}", man.display());
    }
    Ok(pages)
}

/// A reel binary that runs on this machine, built from this checkout.
fn runnable_reel(root: &Path, opts: &Options, target_dir: &Path) -> anyhow::Result<PathBuf> {
    let native = opts.target.is_none() && !opts.zig;
    let mut build = cargo();
    build
        .current_dir(root)
        .args(["build", "--locked", "-p", "reel"])
        .env("CARGO_TARGET_DIR", target_dir);
    let binary = if native {
        build.args(["--profile", opts.profile.name()]);
        super::wheel::binary(target_dir, opts)
    } else {
        target_dir.join("debug/reel")
    };
    process::run(&mut build).context("cannot build reel to write the manual pages")?;
    Ok(binary)
}
