//! The processes a bench starts (HTTP helpers, a listening reel) and how it stops them;
//! each is killed on drop, so a failed bench leaves no server behind.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::process::display;

/// A child process killed on drop, so a failed bench leaves no server behind.
pub struct Running(pub std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts one of the HTTP bench helpers (an echo server, the TCP relay); its address
/// from its `listening on ADDR` line.
pub fn start_listener(exe: &Path, args: &[&str]) -> anyhow::Result<(Running, String)> {
    let mut child = Command::new(exe)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start {}", exe.display()))?;
    let out = child.stdout.take().context("no stdout")?;
    let running = Running(child);
    let mut line = String::new();
    BufReader::new(out).read_line(&mut line)?;
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .with_context(|| format!("{} said {line:?}", exe.display()))?
        .to_owned();
    Ok((running, addr))
}

/// A `reel` that serves HTTP, started by a bench: the process, the URL of its
/// `reel: listening on URL` line, and the rest of its stderr, collected on a thread
/// (so reel never blocks on a full pipe).
pub struct ReelListening {
    /// The process.
    pub child: Running,
    /// What it listens on, as printed.
    pub url: String,
    /// Its stderr after the listening line.
    pub stderr: std::thread::JoinHandle<String>,
}

/// Starts `c` (a `reel` that listens) and waits, at most 30 s, for its listening line.
pub fn start_reel(mut c: Command) -> anyhow::Result<ReelListening> {
    c.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let shown = display(&c);
    println!("$ {shown}");
    let mut child = c
        .spawn()
        .with_context(|| format!("cannot start `{shown}`"))?;
    let err = child.stderr.take().context("no stderr")?;
    let running = Running(child);
    let mut lines = BufReader::new(err).lines();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut said = String::new();
    let url = loop {
        let Some(line) = lines.next() else {
            bail!("`{shown}` exited before it listened: {said}");
        };
        let line = line?;
        if let Some(url) = line.strip_prefix("reel: listening on ") {
            break url.to_owned();
        }
        said.push_str(&line);
        said.push('\n');
        if Instant::now() > deadline {
            bail!("`{shown}` did not listen within 30 s: {said}");
        }
    };
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        for l in lines.map_while(Result::ok) {
            text.push_str(&l);
            text.push('\n');
        }
        text
    });
    Ok(ReelListening {
        child: running,
        url,
        stderr,
    })
}

/// Stops a reel with SIGTERM and reaps it; its exit status.
pub fn sigterm(reel: &mut Running) -> anyhow::Result<std::process::ExitStatus> {
    let pid = libc::pid_t::try_from(reel.0.id()).context("pid out of range")?;
    // SAFETY: a signal to our own child, which has not been reaped yet.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    Ok(reel.0.wait()?)
}
