//! `cargo xtask package --check` (and the `packages` step of `cargo xtask test`): the
//! packages just built, installed the way a user installs them, in a fresh scratch
//! directory, and run with nothing of the build in reach. Every command here runs with
//! `PATH` set to the installed command's directory, `/usr/bin`, `/bin` and node's
//! directory: no cargo, no `target/`, so a `reel` that runs is the installed one.
//!
//! - pip: a fresh `python3 -m venv`, the wheel installed offline; `reel --version` names
//!   this version and `reel demo` (record, replay, diff, stats) succeeds.
//! - uv (pinned, [`super::tools`]): `uvx --from WHEEL reel demo`, and `uv tool install
//!   WHEEL` into the scratch directory, then its `reel --version`.
//! - npm: a fresh project (`npm init -y`) installs the platform tarball and the main
//!   tarball, whose optional dependencies on the other platforms' packages npm must skip
//!   (they are not installable here, and before a release not even published); then
//!   `npx reel --version`, `npx reel demo` and `node_modules/.bin/reel demo`, and the
//!   launcher must be invisible: the same exit code as the binary run directly (`reel
//!   check /nonexistent`), stdin to stdout byte for byte (`reel rec -- cat` with lines
//!   that are neither JSON nor UTF-8), SIGTERM and SIGINT passed on (the same end as the
//!   binary's), and a binary killed by a signal ends the launcher by that signal.
//!
//! [`Hooks`] run after each install, in the same place: the suites of the packages that
//! depend on `reel-cli` (the pytest plugin, the vitest helper) belong there.

use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::made::Made;
use super::tools;
use crate::process::{self, display};

/// A check run where a package was installed; returns a line for the summary.
pub type Hook = fn(&Installed<'_>) -> anyhow::Result<String>;

/// What runs after the installs, each with its name.
pub struct Hooks {
    /// After `pip install` of the wheel, in that venv.
    pub python: &'static [(&'static str, Hook)],
    /// After `npm install` of the tarballs, in that project.
    pub npm: &'static [(&'static str, Hook)],
}

/// One install of the packages: where, and how to run commands there.
pub struct Installed<'a> {
    /// The venv (pip), uv's tool directory, or the npm project.
    pub dir: PathBuf,
    /// Everything on `PATH` for commands run here.
    pub path: Vec<PathBuf>,
    /// A scratch directory of this check: `TMPDIR` of the commands, and free for a hook.
    pub scratch: &'a Path,
    /// The packages installed here.
    pub made: &'a Made,
}

impl Installed<'_> {
    /// Says where the commands below run, and with which `PATH`.
    fn announce(&self, what: &str) {
        let path = std::env::join_paths(&self.path).unwrap_or_default();
        println!(
            "\npackage check: {what} in {} (PATH={})",
            self.dir.display(),
            path.to_string_lossy()
        );
    }

    /// `program` to run in [`Installed::dir`], with this install's `PATH` (a bare name
    /// is looked up there), `TMPDIR` in the scratch directory and no `REEL_BIN`.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(&self.dir)
            .env("PATH", std::env::join_paths(&self.path).unwrap_or_default())
            .env("TMPDIR", self.scratch.join("tmp"))
            .env("REEL_DIR", self.scratch.join("traces"))
            .env_remove("REEL_BIN")
            .stdin(Stdio::null());
        cmd
    }
}

/// Installs `made`'s packages with pip, uv and npm and tries them; returns a summary.
/// The scratch directory is removed, unless the check fails: it is kept for a look.
pub fn run(root: &Path, made: &Made, hooks: &Hooks) -> anyhow::Result<String> {
    let scratch = tempfile::Builder::new()
        .prefix("reel-package-check-")
        .tempdir()
        .context("cannot create a scratch directory")?;
    match run_in(root, made, hooks, scratch.path()) {
        Ok(summary) => Ok(summary),
        Err(e) => {
            let kept = scratch.keep();
            Err(e.context(format!(
                "package check failed; its files are in {}",
                kept.display()
            )))
        }
    }
}

fn run_in(root: &Path, made: &Made, hooks: &Hooks, scratch: &Path) -> anyhow::Result<String> {
    fs::create_dir_all(scratch.join("tmp"))?;
    let node_dir = node_dir()?;
    let mut done = Vec::new();

    let venv = scratch.join("venv");
    let python = Installed {
        path: base_path(&venv.join("bin"), &node_dir),
        dir: venv,
        scratch,
        made,
    };
    python.announce("pip install of the wheel");
    pip(&python)?;
    done.push("pip".to_owned());
    for (name, hook) in hooks.python {
        done.push(format!("{name}: {}", hook(&python)?));
    }

    let uv_tools = Installed {
        path: base_path(&scratch.join("uv-bin"), &node_dir),
        dir: scratch.join("uv-tools"),
        scratch,
        made,
    };
    uv_tools.announce("uvx and uv tool install of the wheel");
    uv(root, &uv_tools)?;
    done.push("uvx, uv tool install".to_owned());

    let npm = Installed {
        path: base_path(&node_dir, &node_dir),
        dir: scratch.join("npm-project"),
        scratch,
        made,
    };
    npm.announce("npm install of the tarballs");
    npm_install(&npm)?;
    done.push("npm".to_owned());
    launcher(&npm)?;
    done.push("launcher".to_owned());
    for (name, hook) in hooks.npm {
        done.push(format!("{name}: {}", hook(&npm)?));
    }
    Ok(format!("installed and ran: {}", done.join(", ")))
}

/// `first`, `/usr/bin`, `/bin`, then node's directory when it is elsewhere.
fn base_path(first: &Path, node_dir: &Path) -> Vec<PathBuf> {
    let mut path = vec![first.to_path_buf()];
    for dir in [Path::new("/usr/bin"), Path::new("/bin"), node_dir] {
        if !path.iter().any(|p| p == dir) {
            path.push(dir.to_path_buf());
        }
    }
    path
}

/// The directory of the `node` on the inherited PATH.
fn node_dir() -> anyhow::Result<PathBuf> {
    let inherited = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&inherited)
        .find(|d| d.join("node").is_file())
        .context("no `node` on PATH: the npm packages are checked with Node.js 18+ and npm")
}

fn pip(env: &Installed) -> anyhow::Result<()> {
    process::run(Command::new("python3").args(["-m", "venv"]).arg(&env.dir))
        .context("cannot create a venv (Debian's python3 needs the python3-venv package)")?;
    process::run(
        env.command(env.dir.join("bin/python"))
            .args(crate::peers::PIP_INSTALL)
            // By name, as `pip install reel-cli` installs it, from the directory of the
            // wheel just built instead of PyPI.
            .args(["--no-index", "--find-links"])
            .arg(wheels(env)?)
            .arg(super::wheel::DISTRIBUTION),
    )
    .context("pip could not install the wheel")?;
    let installed = env.dir.join("bin/reel");
    if !installed.is_file() {
        bail!(
            "pip installed the wheel but left no {}",
            installed.display()
        );
    }
    version_is(env, env.command("reel").arg("--version"))?;
    succeeds(env.command("reel").arg("demo"))?;
    // The manual pages and completions, under the venv as under any prefix.
    shipped(&env.dir, "share/man/man1")?;
    Ok(())
}

/// The pages (`reel.1` and one per command) and the completion scripts are in `dir`
/// under `man` (the pages' directory), and under `dir` as [`super::docs::COMPLETIONS`]
/// places them, or in `completions/` beside `man/` (npm).
fn shipped(dir: &Path, man: &str) -> anyhow::Result<()> {
    for page in [
        "reel.1",
        "reel-rec.1",
        "reel-play.1",
        "reel-example-server.1",
    ] {
        let file = dir.join(man).join(page);
        let text = fs::read_to_string(&file)
            .with_context(|| format!("the package shipped no {}", file.display()))?;
        if !text.contains(".TH ") {
            bail!("{} is not a manual page", file.display());
        }
    }
    for (shell, path) in super::docs::COMPLETIONS {
        let beside = Path::new(man).parent().map(|p| p.join("completions"));
        let candidates = [
            Some(dir.join(path)),
            beside
                .zip(Path::new(path).file_name())
                .map(|(d, n)| dir.join(d).join(n)),
        ];
        if !candidates.iter().flatten().any(|c| c.is_file()) {
            bail!(
                "the package shipped no {shell} completions under {}",
                dir.display()
            );
        }
    }
    Ok(())
}

/// The directory holding the wheel just built: the index the installs here read.
pub(super) fn wheels<'a>(env: &'a Installed) -> anyhow::Result<&'a Path> {
    env.made
        .wheel
        .parent()
        .context("the wheel has no directory")
}

/// `uvx --from WHEEL reel demo`, and `uv tool install WHEEL`, all inside the scratch
/// directory (uv's cache, its tools in `env.dir`, their commands in the first directory
/// of `env.path`) and offline: the wheel has no dependencies, and a Python is the
/// system's, never one uv downloads.
fn uv(root: &Path, env: &Installed) -> anyhow::Result<()> {
    let tools = tools::ensure(root, false)?;
    fs::create_dir_all(&env.dir)?;
    let bin = env
        .path
        .first()
        .context("an install with nothing on PATH")?;
    let uv_command = |program: PathBuf| {
        let mut cmd = env.command(program);
        cmd.env("UV_CACHE_DIR", env.scratch.join("uv-cache"))
            .env("UV_TOOL_DIR", &env.dir)
            .env("UV_TOOL_BIN_DIR", bin)
            .env("UV_PYTHON_DOWNLOADS", "never")
            .env("UV_NO_CONFIG", "1")
            .env("UV_OFFLINE", "1");
        cmd
    };
    let mut uvx = uv_command(tools.bin.join("uvx"));
    uvx.args(["--from", super::wheel::DISTRIBUTION, "--find-links"])
        .arg(wheels(env)?)
        .args(["reel", "demo"]);
    succeeds(&mut uvx).context("uvx could not run reel from the wheel")?;

    let mut install = uv_command(tools.uv());
    install
        .args([
            "tool",
            "install",
            super::wheel::DISTRIBUTION,
            "--find-links",
        ])
        .arg(wheels(env)?);
    succeeds(&mut install).context("uv tool install of the wheel failed")?;
    let installed = bin.join("reel");
    if !installed.is_file() {
        bail!("uv tool install left no {}", installed.display());
    }
    version_is(env, env.command("reel").arg("--version"))
}

fn npm_install(env: &Installed) -> anyhow::Result<()> {
    fs::create_dir_all(&env.dir)?;
    succeeds(env.command("npm").args(["init", "-y"]))?;
    // As a user adds them: the platform package first (it is not published yet), then the
    // main package, whose optional dependencies name every platform.
    process::fetch(
        env.command("npm")
            .args(["install", "--no-audit", "--no-fund"])
            .arg(&env.made.npm_platform)
            .arg(&env.made.npm_main),
    )
    .context(
        "npm install of the tarballs failed; an E404 for another platform's package means \
         npm no longer skips an optional dependency it cannot fetch",
    )?;
    for file in ["node_modules/.bin/reel", &platform_binary(env)] {
        if !env.dir.join(file).is_file() {
            bail!("npm installed the tarballs but left no {file}");
        }
    }
    version_is(
        env,
        env.command("npx").args(["--no", "--", "reel", "--version"]),
    )?;
    succeeds(env.command("npx").args(["--no", "--", "reel", "demo"]))?;
    succeeds(env.command("node_modules/.bin/reel").arg("demo"))?;
    shipped(&env.dir, "node_modules/reel-cli/man")?;
    Ok(())
}

/// `node_modules/<platform package>/bin/reel`, relative to the project.
fn platform_binary(env: &Installed) -> String {
    format!("node_modules/{}/bin/reel", env.made.platform.npm_name())
}

/// The launcher passes exit codes, bytes and signals through unchanged.
fn launcher(env: &Installed) -> anyhow::Result<()> {
    let shim = env.dir.join("node_modules/.bin/reel");
    let direct = env.dir.join(platform_binary(env));

    let code = |program: &Path| -> anyhow::Result<ExitStatus> {
        let mut cmd = env.command(program);
        cmd.args(["check", "/nonexistent"]);
        Ok(output(&mut cmd)?.status)
    };
    let (through, own) = (code(&shim)?, code(&direct)?);
    if through != own || own.success() {
        bail!(
            "`reel check /nonexistent` ended {own} run directly but {through} through the launcher"
        );
    }

    let bytes: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n\
        not JSON, not UTF-8: \xff\xfe\x00\x01\nno newline at the end";
    let mut cat = env.command(&shim);
    cat.args(["rec", "--dir"])
        .arg(env.scratch.join("rec-bytes"))
        .args(["--", "cat"]);
    let echoed = with_stdin(&mut cat, bytes)?;
    if echoed != bytes {
        bail!(
            "`reel rec -- cat` through the launcher wrote {} bytes for the {} it read: {:?}",
            echoed.len(),
            bytes.len(),
            String::from_utf8_lossy(&echoed)
        );
    }

    for signal in [libc::SIGTERM, libc::SIGINT] {
        let through = end_by(env, &shim, signal, "shim")?;
        let own = end_by(env, &direct, signal, "direct")?;
        if through != own {
            bail!(
                "`reel rec -- sleep` sent signal {signal}: it ended {own} run directly but \
                 {through} through the launcher"
            );
        }
    }

    // A binary killed by a signal: the launcher ends by the same one.
    let suicide = env.scratch.join("killed-by-sigterm");
    fs::write(&suicide, "#!/bin/sh\nkill -TERM $$\n")?;
    fs::set_permissions(
        &suicide,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )?;
    let mut killed = env.command(&shim);
    killed.env("REEL_BIN", &suicide);
    let status = output(&mut killed)?.status;
    if status.signal() != Some(libc::SIGTERM) {
        bail!("REEL_BIN killed by SIGTERM: the launcher ended {status}, not by SIGTERM");
    }
    Ok(())
}

/// Runs `reel rec --dir D -- sleep 30` through `program`, signals it once the recording
/// has started, and returns how it ended.
fn end_by(env: &Installed, program: &Path, signal: i32, label: &str) -> anyhow::Result<ExitStatus> {
    let traces = env.scratch.join(format!("rec-signal-{signal}-{label}"));
    let mut cmd = env.command(program);
    cmd.args(["rec", "--dir"])
        .arg(&traces)
        .args(["--", "sleep", "30"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    println!("$ {}  (then signal {signal})", display(&cmd));
    let mut child = Running(cmd.spawn().context("cannot start reel rec")?);
    // The trace exists once reel has started the server and handles signals.
    let started = Instant::now();
    while fs::read_dir(&traces).map_or(true, |mut d| d.next().is_none()) {
        if started.elapsed() > Duration::from_secs(20) {
            bail!(
                "`reel rec -- sleep 30` wrote no trace in {} within 20 s",
                traces.display()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    let pid = i32::try_from(child.0.id()).context("a pid out of range")?;
    // SAFETY: kill has no memory effects; the pid is our own child's, not yet reaped.
    unsafe {
        libc::kill(pid, signal);
    }
    let status = child.wait_at_most(Duration::from_secs(20))?;
    println!("  ended {status}");
    Ok(status)
}

/// A child killed when dropped, so a failed check leaves nothing running.
struct Running(Child);

impl Running {
    fn wait_at_most(&mut self, limit: Duration) -> anyhow::Result<ExitStatus> {
        match process::wait_until(&mut self.0, limit)? {
            Some(status) => Ok(status),
            None => bail!("still running after {} s; killed", limit.as_secs()),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Runs `cmd` with `input` on stdin; returns its stdout (it must succeed).
fn with_stdin(cmd: &mut Command, input: &[u8]) -> anyhow::Result<Vec<u8>> {
    let shown = display(cmd);
    println!("$ {shown}  (stdin: {} bytes)", input.len());
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start `{shown}`"))?;
    // The input is smaller than a pipe's buffer: written whole before the output is read.
    let written = child.stdin.take().map(|mut stdin| stdin.write_all(input));
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!("`{shown}` failed ({}): {}", out.status, tail(&out));
    }
    written
        .transpose()
        .with_context(|| format!("cannot write to `{shown}`"))?;
    Ok(out.stdout)
}

/// Runs `cmd`, capturing its output, and returns it whatever its status.
fn output(cmd: &mut Command) -> anyhow::Result<Output> {
    let shown = display(cmd);
    println!("$ {shown}");
    cmd.output()
        .with_context(|| format!("cannot start `{shown}`"))
}

/// Runs `cmd`, which must succeed; its output is shown only when it does not.
fn succeeds(cmd: &mut Command) -> anyhow::Result<Output> {
    let out = output(cmd)?;
    if !out.status.success() {
        bail!("`{}` failed ({}): {}", display(cmd), out.status, tail(&out));
    }
    Ok(out)
}

/// `reel --version` must name this build's version.
fn version_is(env: &Installed, cmd: &mut Command) -> anyhow::Result<()> {
    let out = succeeds(cmd)?;
    let printed = String::from_utf8_lossy(&out.stdout);
    let want = format!("reel {}", env.made.version);
    if !printed.starts_with(&format!("{want} ")) && printed.trim() != want {
        bail!("`{}` printed {printed:?}, not {want}", display(cmd));
    }
    Ok(())
}

/// The last lines of a failed command's output, for the error.
fn tail(out: &Output) -> String {
    last_lines(&format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ))
}

/// The last 40 lines of a command's output, on lines of their own, for an error.
pub(super) fn last_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(40);
    format!("\n{}", lines[start..].join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_holds_only_what_is_named() {
        let p = base_path(Path::new("/v/bin"), Path::new("/usr/bin"));
        assert_eq!(
            p,
            [
                Path::new("/v/bin"),
                Path::new("/usr/bin"),
                Path::new("/bin")
            ]
        );
        let p = base_path(Path::new("/v/bin"), Path::new("/opt/node/bin"));
        assert_eq!(p.last().unwrap(), Path::new("/opt/node/bin"));
    }
}
