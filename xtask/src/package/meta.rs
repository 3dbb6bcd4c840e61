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
    let all = workspace(root)?;
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

/// `cargo metadata --no-deps` of the workspace.
fn workspace(root: &Path) -> anyhow::Result<Value> {
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
    serde_json::from_slice(&out.stdout).context("`cargo metadata` output")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What crates.io shows and needs, on every crate that is published; and a path
    /// dependency on another crate of the project asks for this very version, the one
    /// crates.io will resolve once both are published.
    #[test]
    fn every_published_crate_carries_its_metadata() {
        let all = workspace(&crate::process::workspace_root()).unwrap();
        let mut problems = Vec::new();
        for package in all["packages"].as_array().unwrap() {
            let name = package["name"].as_str().unwrap();
            if package["publish"] == serde_json::json!([]) {
                continue;
            }
            for field in ["description", "license", "repository", "readme"] {
                if package[field].as_str().is_none_or(str::is_empty) {
                    problems.push(format!("{name}: no {field}"));
                }
            }
            for field in ["keywords", "categories"] {
                if package[field].as_array().is_none_or(Vec::is_empty) {
                    problems.push(format!("{name}: no {field}"));
                }
            }
            let want = format!("^{}", package["version"].as_str().unwrap());
            for dep in package["dependencies"].as_array().unwrap() {
                if dep["path"].is_string() && dep["req"] != want.as_str() {
                    problems.push(format!(
                        "{name}: its dependency {} asks for {}, not {want}",
                        dep["name"], dep["req"]
                    ));
                }
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }
}
