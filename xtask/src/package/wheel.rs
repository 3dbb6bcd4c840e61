//! The build: maturin compiles reel (cargo, with the profile and target directory asked
//! for) and wraps the binary in a wheel; the npm platform package then takes the very
//! same binary from the target directory. One cargo invocation serves both packages,
//! so `--target` and `--zig` (cross linking) have one code path, and the two packages
//! cannot carry different builds.
//!
//! maturin runs `cargo rustc` with nothing that changes cargo's fingerprints, so a binary
//! that `cargo build -p reel` (or `cargo install`, or an earlier package run) already
//! built with the same profile is reused, not rebuilt. The wheel is `py3-none-<platform>`:
//! one per platform, for every Python, with no Python code in it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use super::options::{Options, Profile};
use super::tools::Tools;
use crate::process::{self, run};

/// The wheel's distribution name (`packaging/pypi/pyproject.toml` says it too; the check
/// installs it by this name, so the two cannot drift apart unnoticed).
pub const DISTRIBUTION: &str = "reel-cli";

/// The pyproject maturin builds from.
const PYPROJECT_DIR: &str = "packaging/pypi";

/// What the wheel installs under the environment's prefix (the manual pages and the
/// completion scripts, [`super::docs`]): the `data` of pyproject's `[tool.maturin] data`
/// directory, written before each build (and not kept in git).
pub const PREFIX_DATA: &str = "packaging/pypi/reel_cli.data/data";

/// Builds the wheel into `out` (replacing one of the same name); returns it.
pub fn build(
    root: &Path,
    tools: &Tools,
    opts: &Options,
    target_dir: &Path,
    out: &Path,
) -> anyhow::Result<PathBuf> {
    // maturin writes into a directory of its own, so the wheel it made is the one there.
    let staging = out.join(".wheel");
    if staging.exists() {
        fs::remove_dir_all(&staging)
            .with_context(|| format!("cannot empty {}", staging.display()))?;
    }
    let mut maturin = Command::new(tools.maturin());
    process::without_cargo_run_env(&mut maturin)
        .current_dir(root.join(PYPROJECT_DIR))
        .args(["build", "--locked", "--profile", opts.profile.name()])
        .args(["--compatibility", compatibility(opts)])
        .arg("--target-dir")
        .arg(target_dir)
        .arg("--out")
        .arg(&staging)
        .env("PATH", path_with(&tools.bin));
    if let Some(triple) = &opts.target {
        maturin.args(["--target", triple]);
    }
    if opts.zig {
        maturin.arg("--zig");
    }
    if opts.profile == Profile::Dev {
        // A dev binary is ~200 MiB of debug info, and its wheel only ever checked:
        // the fastest deflate level packs it in a sixth of the default's time.
        maturin.args(["--compression-level", "1"]);
    }
    run(&mut maturin).context(
        "maturin could not build reel's wheel (a compile error is shown above; a target \
         that is not installed needs `rustup target add TRIPLE`, a Linux cross build `--zig`)",
    )?;
    let wheel = only_wheel(&staging)?;
    let name = wheel.file_name().context("a wheel without a name")?;
    let kept = out.join(name);
    fs::rename(&wheel, &kept)
        .with_context(|| format!("cannot move {} to {}", wheel.display(), kept.display()))?;
    let _ = fs::remove_dir(&staging);
    Ok(kept)
}

/// The binary cargo left for `opts`: `<target>/[<triple>/]<profile dir>/reel`.
pub fn binary(target_dir: &Path, opts: &Options) -> PathBuf {
    let mut dir = target_dir.to_path_buf();
    if let Some(triple) = &opts.target {
        dir.push(triple);
    }
    dir.push(opts.profile.dir());
    dir.join("reel")
}

/// The wheel's platform tag policy. Built natively, the lowest manylinux tag the binary
/// meets, and only tags PyPI takes. Linked by zig, glibc 2.17 (what manylinux2014 means;
/// every glibc distribution of the last decade), or musl 1.2.
fn compatibility(opts: &Options) -> &'static str {
    match (&opts.target, opts.zig) {
        (Some(t), true) if t.ends_with("-musl") => "musllinux_1_2",
        (_, true) => "manylinux_2_17",
        (_, false) => "pypi",
    }
}

/// `PATH` with `first` before the inherited one (maturin finds `python -m ziglang` there).
fn path_with(first: &Path) -> std::ffi::OsString {
    let inherited = std::env::var_os("PATH").unwrap_or_default();
    let all = std::iter::once(first.to_path_buf()).chain(std::env::split_paths(&inherited));
    std::env::join_paths(all).unwrap_or(inherited)
}

fn only_wheel(dir: &Path) -> anyhow::Result<PathBuf> {
    let wheels: Vec<PathBuf> = fs::read_dir(dir)
        .with_context(|| format!("maturin wrote nothing into {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    match wheels.as_slice() {
        [one] => Ok(one.clone()),
        _ => bail!(
            "expected one wheel in {}, found {}",
            dir.display(),
            wheels.len()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binary_is_where_cargo_leaves_it() {
        let mut o = Options {
            profile: Profile::Dev,
            ..Options::default()
        };
        assert_eq!(binary(Path::new("/t"), &o), Path::new("/t/debug/reel"));
        o.profile = Profile::Dist;
        o.target = Some("aarch64-unknown-linux-musl".into());
        assert_eq!(
            binary(Path::new("/t"), &o),
            Path::new("/t/aarch64-unknown-linux-musl/dist/reel")
        );
    }
}
