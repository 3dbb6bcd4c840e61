//! Where the workspace is, and running commands so that a reader of the log sees exactly
//! what ran: every command is echoed as `$ …` before it starts, and a failure names the
//! command and its status.

use std::ffi::OsStr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::thread;
use std::time::{Duration, Instant};

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

/// How long one install that downloads from a registry may run before it is stopped and
/// tried again: each takes well under a minute, but a registry download can stall, and
/// an install that never returns would end a CI log without a word.
pub const FETCH_LIMIT: Duration = Duration::from_secs(5 * 60);

/// How many times an install that outlived [`FETCH_LIMIT`] is tried in all.
const FETCH_TRIES: u32 = 3;

/// Echoes and runs an install that downloads (npm, pip, apt-get) like [`run`], but one
/// still running after [`FETCH_LIMIT`] is stopped, with what it started, and tried
/// again, [`FETCH_TRIES`] times in all. A failure that ends by itself is not retried:
/// npm and pip retry their own network errors.
pub fn fetch(cmd: &mut Command) -> anyhow::Result<()> {
    fetch_within(cmd, FETCH_LIMIT, FETCH_TRIES)
}

fn fetch_within(cmd: &mut Command, limit: Duration, tries: u32) -> anyhow::Result<()> {
    let shown = display(cmd);
    // A group of its own, so that stopping it stops npm's and pip's children too.
    cmd.process_group(0);
    for attempt in 1..=tries {
        println!("$ {shown}");
        let mut child = cmd
            .spawn()
            .with_context(|| format!("cannot start `{shown}`"))?;
        match wait_until(&mut child, limit)? {
            Some(status) if status.success() => return Ok(()),
            Some(status) => bail!("`{shown}` failed ({status})"),
            None => {
                stop_group(&mut child);
                println!(
                    "xtask: `{shown}` was still running after {}s (try {attempt} of \
                     {tries}); stopped it",
                    limit.as_secs()
                );
            }
        }
    }
    bail!(
        "`{shown}` did not finish within {}s, {tries} times (is the registry reachable?)",
        limit.as_secs()
    )
}

/// `child`'s status once it exits, or `None` if it is still running after `limit`.
pub fn wait_until(child: &mut Child, limit: Duration) -> std::io::Result<Option<ExitStatus>> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if started.elapsed() >= limit {
            return Ok(None);
        }
        thread::sleep(Duration::from_millis(250));
    }
}

/// Stops `child` and every process in its group (it leads one: `process_group(0)`).
fn stop_group(child: &mut Child) {
    if let Ok(pgid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill has no memory preconditions; a group already gone fails with ESRCH.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
    }
    let _ = child.kill();
    let _ = child.wait();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// An install that hangs is stopped, its children with it, and tried again; after
    /// the last try the step fails and says so.
    #[test]
    fn a_hanging_fetch_is_stopped_and_tried_again() {
        let marker = tempfile::tempdir().unwrap();
        let count = marker.path().join("tries");
        let script = format!("echo x >> {}; sleep 61 & wait", count.display());
        let err = fetch_within(
            Command::new("sh").args(["-c", &script]),
            Duration::from_millis(500),
            2,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("did not finish within 0s, 2 times"), "{err}");
        let tries = std::fs::read_to_string(&count).unwrap();
        assert_eq!(tries.lines().count(), 2);
        assert!(
            crate::watch::leaves_the_table("sleep 61"),
            "the install's child was stopped with it"
        );
    }

    /// A failure that ends by itself is reported at once, not retried.
    #[test]
    fn a_failed_fetch_is_not_retried() {
        let marker = tempfile::tempdir().unwrap();
        let count = marker.path().join("tries");
        let script = format!("echo x >> {}; exit 3", count.display());
        let err = fetch_within(
            Command::new("sh").args(["-c", &script]),
            Duration::from_secs(60),
            3,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("failed (exit status: 3)"), "{err}");
        assert_eq!(std::fs::read_to_string(&count).unwrap().lines().count(), 1);
    }
}
