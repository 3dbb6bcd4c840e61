//! What the packages take from Cargo: the `reel` crate's version, license and repository, read
//! with `cargo metadata`, so no package file states them a second time.

use std::path::Path;

use anyhow::{Context, bail};
use serde_json::Value;

use crate::process::cargo;

/// The `reel` crate's metadata the packages carry.
pub struct Meta {
    pub version: String,
    pub license: String,
    pub repository: String,
}

/// Reads [`Meta`] from `cargo metadata`.
pub fn read(root: &Path) -> anyhow::Result<Meta> {
    let out = cargo()
        .current_dir(root)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .output()
        .context("cannot run `cargo metadata`")?;
    if !out.status.success() {
        bail!(
            "`cargo metadata` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let all: Value = serde_json::from_slice(&out.stdout).context("`cargo metadata` output")?;
    let reel = all["packages"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["name"] == "reel"))
        .context("`cargo metadata` lists no `reel` package")?;
    let field = |name: &str| {
        reel[name].as_str().map(str::to_owned).with_context(|| {
            format!("crates/reel/Cargo.toml has no `{name}` (set it in [workspace.package])")
        })
    };
    Ok(Meta {
        version: field("version")?,
        license: field("license")?,
        repository: field("repository")?,
    })
}
