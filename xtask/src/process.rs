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

/// The cargo that runs xtask (`CARGO`), so nested builds use the same toolchain.
pub fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
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
