//! What a bench gets ([`Ctx`]) and how the binaries it measures are built: cargo is asked
//! for the targets and reports where it put them.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::{Context, bail};

use crate::process::{self, cargo, display};

/// What a bench gets: the reel to measure and where to put its files.
pub struct Ctx {
    /// The built `reel` binary.
    pub reel: PathBuf,
    /// A directory the bench may write to and reuse between runs (`target/bench`).
    pub work: PathBuf,
    /// Smoke run: small inputs, figures not meaningful.
    pub quick: bool,
    /// The cargo profile `reel` was built with (`release`; `dev` with `--quick`).
    pub profile: String,
}

/// Builds one binary with a cargo profile and returns its path as cargo reports it.
pub(super) fn build_bin(
    root: &Path,
    package: &str,
    bin: &str,
    profile: &str,
) -> anyhow::Result<PathBuf> {
    let mut exes = build_targets(root, package, "--bin", &[bin], profile)?;
    Ok(exes.remove(0))
}

/// Builds examples of `package` (optimised unless `--quick`) and returns their paths in
/// the order named.
pub fn build_examples(ctx: &Ctx, package: &str, names: &[&str]) -> anyhow::Result<Vec<PathBuf>> {
    build_targets(
        &process::workspace_root(),
        package,
        "--example",
        names,
        if ctx.quick { "dev" } else { "release" },
    )
}

/// Builds the named targets of one kind (`--bin`, `--example`) and returns the
/// executables cargo reports, in the order named.
fn build_targets(
    root: &Path,
    package: &str,
    kind: &str,
    names: &[&str],
    profile: &str,
) -> anyhow::Result<Vec<PathBuf>> {
    let mut c = cargo();
    c.current_dir(root).args(["build", "-p", package]);
    for name in names {
        c.args([kind, name]);
    }
    c.arg("--message-format=json-render-diagnostics");
    c.args(["--profile", profile]);
    let shown = display(&c);
    println!("$ {shown}");
    let mut child = c
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start `{shown}`"))?;
    let mut exes: Vec<Option<PathBuf>> = vec![None; names.len()];
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines() {
            let line = line?;
            let Ok(msg) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            let (Some(name), Some(exe)) =
                (msg["target"]["name"].as_str(), msg["executable"].as_str())
            else {
                continue;
            };
            if let Some(k) = names.iter().position(|n| *n == name) {
                exes[k] = Some(PathBuf::from(exe));
            }
        }
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("`{shown}` failed ({status})");
    }
    names
        .iter()
        .zip(exes)
        .map(|(name, exe)| exe.with_context(|| format!("`{shown}` reported no {name} executable")))
        .collect()
}
