//! Where the workspace is, and running commands so that a reader of the log sees exactly
//! what ran: every command is echoed as `$ …` before it starts, and a failure names the
//! command and its status.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// The workspace root: xtask lives in `<root>/xtask`.
pub fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// Cargo's target directory (`CARGO_TARGET_DIR`, else `<root>/target`), absolute.
pub fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
        Some(d) => root.join(d),
        None => root.join("target"),
    }
}

/// The cargo that runs xtask (`CARGO`), so nested builds use the same toolchain, in the
/// environment of a shell ([`without_cargo_run_env`]).
pub fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    without_cargo_run_env(&mut cmd);
    cmd
}

/// Removes the variables `cargo run` set for xtask itself (its manifest directory, its
/// package's name and version…) from what `cmd` inherits. A build started from xtask
/// must see the environment a build started from a shell sees: cargo reruns a build
/// script when a variable it watches changes (ring's watches `CARGO_MANIFEST_DIR`), and
/// then rebuilds that crate and every crate above it, here and again in the shell.
pub fn without_cargo_run_env(cmd: &mut Command) -> &mut Command {
    for (key, _) in std::env::vars_os() {
        let Some(name) = key.to_str() else { continue };
        let set_by_cargo_run = name.starts_with("CARGO_PKG_")
            || matches!(
                name,
                "CARGO_MANIFEST_DIR"
                    | "CARGO_MANIFEST_PATH"
                    | "CARGO_MANIFEST_LINKS"
                    | "CARGO_CRATE_NAME"
                    | "CARGO_BIN_NAME"
                    | "CARGO_PRIMARY_PACKAGE"
            );
        if set_by_cargo_run {
            cmd.env_remove(&key);
        }
    }
    cmd
}

/// The command line as a person would type it.
pub fn display(cmd: &Command) -> String {
    let quote = |s: &OsStr| {
        let s = s.to_string_lossy();
        if !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_./=:@,+".contains(&b))
        {
            s.into_owned()
        } else {
            format!("'{}'", s.replace('\'', r"'\''"))
        }
    };
    let mut parts = vec![quote(cmd.get_program())];
    parts.extend(cmd.get_args().map(quote));
    // `cargo` from $CARGO is an absolute path into the toolchain; show its name.
    if std::env::var_os("CARGO").is_some_and(|c| c == cmd.get_program()) {
        parts[0] = "cargo".to_owned();
    }
    parts.join(" ")
}

/// Echoes and runs `cmd`, failing when it cannot start or exits non-zero.
pub fn run(cmd: &mut Command) -> anyhow::Result<()> {
    let shown = display(cmd);
    println!("$ {shown}");
    let status = cmd
        .status()
        .with_context(|| format!("cannot start `{shown}`"))?;
    if !status.success() {
        bail!("`{shown}` failed ({status})");
    }
    Ok(())
}

/// Runs `cmd` quietly and returns its trimmed stdout, `None` when it cannot start or fails.
pub fn output_of(cmd: &mut Command) -> Option<String> {
    let out = cmd.output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// `path` relative to `base` when it is inside it (for shorter messages).
pub fn short(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .display()
        .to_string()
}
