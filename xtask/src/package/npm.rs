//! The npm packages, written from the templates in `packaging/npm/` and packed with
//! `npm pack`: the main package `reel-cli` (the launcher, and one optional dependency per
//! platform at this version) and the platform package of the binary just built.
//!
//! A template is a valid `package.json` whose fields that depend on the build say "set by
//! cargo xtask package"; they are filled here from Cargo's metadata and the platform table,
//! and a template field left with that text is an error, so a field added to a template
//! cannot ship unfilled. `{{name}}` and `{{platform}}` in texts (descriptions, READMEs)
//! are the package's name and the platform as a person names it. Fields keep the
//! template's order.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Value, json};

use super::meta::Meta;
use super::platform::{NPM_MAIN, PLATFORMS, Platform};
use crate::process::run;

/// The templates' directory.
const TEMPLATES: &str = "packaging/npm";
/// The launcher the main package's `bin` names.
pub const LAUNCHER: &str = "packaging/npm/reel-cli/bin/reel.js";
/// What a template field to be filled here says.
const TO_FILL: &str = "set by cargo xtask package";

/// Writes the main package into `staging/reel-cli/` and packs it into `out`; returns the
/// tarball.
pub fn main_package(
    root: &Path,
    meta: &Meta,
    (docs, pages): (&Path, &[String]),
    staging: &Path,
    out: &Path,
) -> anyhow::Result<PathBuf> {
    let template = root.join(TEMPLATES).join(NPM_MAIN);
    let dir = fresh_dir(&staging.join(NPM_MAIN))?;
    let mut manifest = read_template(&template.join("package.json"), NPM_MAIN, "")?;
    manifest.set("version", json!(meta.version));
    manifest.set("license", json!(meta.license));
    manifest.set("repository", repository(meta));
    let optional: serde_json::Map<String, Value> = PLATFORMS
        .iter()
        .map(|p| (p.npm_name(), json!(meta.version)))
        .collect();
    manifest.set("optionalDependencies", Value::Object(optional));
    let man: Vec<String> = pages.iter().map(|p| format!("./man/{p}")).collect();
    manifest.set("man", json!(man));
    manifest.write(&dir.join("package.json"))?;
    copy_docs(docs, pages, &dir)?;
    copy_text(
        &template.join("README.md"),
        &dir.join("README.md"),
        NPM_MAIN,
        "",
    )?;
    fs::create_dir_all(dir.join("bin"))?;
    let launcher = dir.join("bin/reel.js");
    fs::copy(root.join(LAUNCHER), &launcher)
        .with_context(|| format!("cannot copy {LAUNCHER} into {}", dir.display()))?;
    set_mode(&launcher, 0o755)?;
    pack(&dir, out, &format!("{NPM_MAIN}-{}.tgz", meta.version))
}

/// The manual pages into `dir/man/` and the completion scripts into `dir/completions/`.
fn copy_docs(docs: &Path, pages: &[String], dir: &Path) -> anyhow::Result<()> {
    fs::create_dir_all(dir.join("man"))?;
    for page in pages {
        fs::copy(
            docs.join(super::docs::MAN_DIR).join(page),
            dir.join("man").join(page),
        )
        .with_context(|| format!("cannot copy the page {page}"))?;
    }
    fs::create_dir_all(dir.join("completions"))?;
    for (shell, path) in super::docs::COMPLETIONS {
        let from = docs.join(path);
        let name = from.file_name().context("a completion with no file name")?;
        fs::copy(&from, dir.join("completions").join(name))
            .with_context(|| format!("cannot copy the {shell} completions"))?;
    }
    Ok(())
}

/// Writes `platform`'s package, with `binary` as its `bin/reel`, into
/// `staging/<name>/` and packs it into `out`; returns the tarball.
pub fn platform_package(
    root: &Path,
    meta: &Meta,
    platform: &Platform,
    binary: &Path,
    staging: &Path,
    out: &Path,
) -> anyhow::Result<PathBuf> {
    let name = platform.npm_name();
    let human = platform.human();
    let template = root.join(TEMPLATES).join("platform");
    let dir = fresh_dir(&staging.join(&name))?;
    let mut manifest = read_template(&template.join("package.json"), &name, &human)?;
    manifest.set("name", json!(name));
    manifest.set("version", json!(meta.version));
    manifest.set("license", json!(meta.license));
    manifest.set("repository", repository(meta));
    manifest.set("os", json!([platform.os]));
    manifest.set("cpu", json!([platform.cpu]));
    match platform.libc {
        Some(libc) => manifest.set("libc", json!([libc])),
        None => manifest.remove("libc"),
    }
    manifest.write(&dir.join("package.json"))?;
    copy_text(
        &template.join("README.md"),
        &dir.join("README.md"),
        &name,
        &human,
    )?;
    fs::create_dir_all(dir.join("bin"))?;
    let target = dir.join("bin/reel");
    fs::copy(binary, &target).with_context(|| {
        format!(
            "cannot copy the built binary {} into {}",
            binary.display(),
            dir.display()
        )
    })?;
    set_mode(&target, 0o755)?;
    pack(&dir, out, &format!("{name}-{}.tgz", meta.version))
}

/// npm's form of the repository: a git URL.
fn repository(meta: &Meta) -> Value {
    json!({"type": "git", "url": format!("git+{}.git", meta.repository)})
}

/// `npm pack` of `dir` into `out`, where it leaves `expected`.
fn pack(dir: &Path, out: &Path, expected: &str) -> anyhow::Result<PathBuf> {
    let tarball = out.join(expected);
    let _ = fs::remove_file(&tarball);
    run(Command::new("npm")
        .current_dir(dir)
        .args(["pack", "--silent", "--pack-destination"])
        .arg(out))
    .context("npm pack failed (npm 9+ on PATH is needed to write the npm packages)")?;
    if !tarball.is_file() {
        bail!("npm pack did not write {}", tarball.display());
    }
    Ok(tarball)
}

/// `dir`, emptied: a package never carries a file of an earlier run.
fn fresh_dir(dir: &Path) -> anyhow::Result<PathBuf> {
    if dir.exists() {
        fs::remove_dir_all(dir).with_context(|| format!("cannot empty {}", dir.display()))?;
    }
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir.to_path_buf())
}

fn set_mode(path: &Path, mode: u32) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .with_context(|| format!("cannot chmod {mode:o} {}", path.display()))
}

/// A template's text with `{{name}}` and `{{platform}}` filled in.
fn fill(text: &str, name: &str, platform: &str) -> String {
    text.replace("{{name}}", name)
        .replace("{{platform}}", platform)
}

fn copy_text(from: &Path, to: &Path, name: &str, platform: &str) -> anyhow::Result<()> {
    let text =
        fs::read_to_string(from).with_context(|| format!("cannot read {}", from.display()))?;
    fs::write(to, fill(&text, name, platform))
        .with_context(|| format!("cannot write {}", to.display()))
}

fn read_template(path: &Path, name: &str, platform: &str) -> anyhow::Result<Manifest> {
    let text =
        fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&fill(&text, name, platform))
        .with_context(|| format!("{} is not a JSON object", path.display()))
}

/// A `package.json`: its members in the order they were read (serde_json's own map sorts
/// them, and the workspace does not turn on its `preserve_order`, which would change how
/// every crate of the project writes JSON).
#[derive(Debug, Default)]
struct Manifest(Vec<(String, Value)>);

impl Manifest {
    /// Sets `key`, in its place when the template has it, else at the end.
    fn set(&mut self, key: &str, value: Value) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key.to_owned(), value)),
        }
    }

    fn remove(&mut self, key: &str) {
        self.0.retain(|(k, _)| k != key);
    }

    /// Writes the manifest, refusing one with a field still to be filled.
    fn write(&self, path: &Path) -> anyhow::Result<()> {
        if let Some((key, _)) = self.0.iter().find(|(_, v)| v.to_string().contains(TO_FILL)) {
            bail!(
                "the template's `{key}` says \"{TO_FILL}\" but nothing fills it: teach \
                 xtask/src/package/npm.rs to set it, or give it a value in the template"
            );
        }
        let text = serde_json::to_string_pretty(self)?;
        fs::write(path, text + "\n").with_context(|| format!("cannot write {}", path.display()))
    }
}

impl Serialize for Manifest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Manifest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct InOrder;
        impl<'de> Visitor<'de> for InOrder {
            type Value = Manifest;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Manifest, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, Value>()? {
                    members.push(member);
                }
                Ok(Manifest(members))
            }
        }
        deserializer.deserialize_map(InOrder)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The launcher finds a platform's package by rebuilding its name: every platform
    /// here must be one it knows, and the other way round.
    #[test]
    fn the_launcher_knows_every_platform() {
        let root = crate::process::workspace_root();
        let shim = std::fs::read_to_string(root.join(LAUNCHER)).unwrap();
        let list = shim
            .lines()
            .find_map(|l| l.trim().strip_prefix("const SUPPORTED = "))
            .expect("the launcher's SUPPORTED list");
        let mut in_shim: Vec<&str> = list
            .trim_end_matches(';')
            .trim_matches(['[', ']'])
            .split(',')
            .map(|s| s.trim().trim_matches('"'))
            .collect();
        let mut here: Vec<String> = PLATFORMS
            .iter()
            .map(|p| format!("{}-{}", p.os, p.cpu))
            .collect();
        in_shim.sort_unstable();
        here.sort_unstable();
        here.dedup();
        assert_eq!(in_shim, here);
    }

    #[test]
    fn a_manifest_keeps_its_order_and_fills_in_place() {
        let mut m: Manifest = serde_json::from_str(
            r#"{"name": "x", "version": "set by cargo xtask package", "a": 1}"#,
        )
        .unwrap();
        m.set("version", json!("1.2.3"));
        m.set("z", json!(true));
        m.remove("a");
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"name":"x","version":"1.2.3","z":true}"#
        );
    }

    #[test]
    fn a_field_left_unfilled_is_refused() {
        let m: Manifest = serde_json::from_str(r#"{"os": "set by cargo xtask package"}"#).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let e = m.write(&dir.path().join("package.json")).unwrap_err();
        assert!(e.to_string().contains("`os`"), "{e}");
    }
}
