//! The processes the llm bench drives: the bare TCP relay, `reel llm` recording and
//! playing (with the check of the trace it wrote), and mitmdump, installed on demand.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::super::{Ctx, Running, build_examples, sigterm, start_reel};
use crate::process::{self, display};

/// `--quick` leaves out the mitmdump figures when mitmdump is not installed.
pub(super) fn ctx_quick_skip(mitm: &Result<PathBuf, String>) -> bool {
    mitm.as_ref().is_err_and(|e| e.starts_with(QUICK_SKIP))
}

pub(super) const QUICK_SKIP: &str = "not installed, and --quick does not install it";

pub(super) fn build_relay(ctx: &Ctx) -> anyhow::Result<PathBuf> {
    let mut exes = build_examples(ctx, "reel-record", &["tcp_relay"])?;
    Ok(exes.remove(0))
}

/// A running `reel llm`, its stderr collected on a thread.
pub(super) struct Reel {
    pub(super) child: Running,
    pub(super) addr: String,
    stderr: Option<std::thread::JoinHandle<String>>,
    dir: Option<PathBuf>,
}

impl Reel {
    /// `reel llm --upstream http://UP --dir DIR`.
    pub(super) fn record(ctx: &Ctx, up: &str, dir: &Path) -> anyhow::Result<Reel> {
        let mut c = Command::new(&ctx.reel);
        c.args(["llm", "--name", "bench-llm", "--listen", "127.0.0.1:0"])
            .arg("--upstream")
            .arg(format!("http://{up}"))
            .arg("--dir")
            .arg(dir);
        let mut r = Reel::start(c)?;
        r.dir = Some(dir.to_owned());
        Ok(r)
    }

    /// `reel llm --play TRACE`.
    pub(super) fn play(ctx: &Ctx, trace: &Path) -> anyhow::Result<Reel> {
        let mut c = Command::new(&ctx.reel);
        c.args(["llm", "--listen", "127.0.0.1:0", "--play"])
            .arg(trace);
        Reel::start(c)
    }

    pub(super) fn start(c: Command) -> anyhow::Result<Reel> {
        let l = start_reel(c)?;
        let addr = l
            .url
            .strip_prefix("http://")
            .with_context(|| format!("reel llm listens on {}, not http://", l.url))?
            .to_owned();
        Ok(Reel {
            child: l.child,
            addr,
            stderr: Some(l.stderr),
            dir: None,
        })
    }

    /// SIGTERM; what it said after listening. It must exit 0.
    pub(super) fn stop_text(&mut self) -> anyhow::Result<String> {
        let status = sigterm(&mut self.child)?;
        let text = self
            .stderr
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        if !status.success() {
            bail!("reel llm exited with {status} after SIGTERM: {text}");
        }
        Ok(text)
    }

    /// Stops a recording reel; its trace.
    pub(super) fn stop(&mut self) -> anyhow::Result<PathBuf> {
        self.stop_text()?;
        let dir = self.dir.as_ref().context("not a recording")?;
        let entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .with_context(|| format!("cannot read {}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        match entries.as_slice() {
            [trace] => Ok(trace.clone()),
            _ => bail!("expected one trace in {}: {entries:?}", dir.display()),
        }
    }
}

/// The trace holds one `llm.request` per proxied request, no `llm.truncated`, and ends
/// with its end line.
pub(super) fn check_trace(trace: &Path, requests: usize) -> anyhow::Result<()> {
    let mut f =
        std::fs::File::open(trace).with_context(|| format!("cannot open {}", trace.display()))?;
    let (req, trunc) = (
        memchr::memmem::Finder::new(br#""kind":"llm.request""#),
        memchr::memmem::Finder::new(br#""kind":"llm.truncated""#),
    );
    let (mut n_req, mut n_trunc) = (0usize, 0usize);
    let mut buf = vec![0u8; 1 << 20];
    let mut carry: Vec<u8> = Vec::new();
    let mut last_line = Vec::new();
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        carry.extend_from_slice(&buf[..n]);
        let cut = memchr::memrchr(b'\n', &carry).map_or(0, |i| i + 1);
        n_req += req.find_iter(&carry[..cut]).count();
        n_trunc += trunc.find_iter(&carry[..cut]).count();
        if cut > 0 {
            let body = &carry[..cut - 1];
            let start = memchr::memrchr(b'\n', body).map_or(0, |i| i + 1);
            last_line = body[start..].to_vec();
        }
        carry.drain(..cut);
    }
    let end: serde_json::Value = serde_json::from_slice(&last_line).unwrap_or_default();
    if end["type"] != "end" {
        bail!("{}: no end line", trace.display());
    }
    if n_req != requests || n_trunc != 0 {
        bail!(
            "{}: {n_req} llm.request lines for {requests} requests, {n_trunc} llm.truncated",
            trace.display()
        );
    }
    Ok(())
}

/// A running `mitmdump` in reverse-proxy mode.
pub(super) struct Mitm {
    pub(super) child: Running,
    pub(super) addr: String,
}

impl Mitm {
    pub(super) fn start(exe: &Path, up: &str, work: &Path) -> anyhow::Result<Mitm> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let conf = work.join("mitmproxy-conf");
        std::fs::create_dir_all(&conf)?;
        let mut c = Command::new(exe);
        c.arg("--mode")
            .arg(format!("reverse:http://{up}"))
            .args([
                "--listen-host",
                "127.0.0.1",
                "--listen-port",
                &port.to_string(),
            ])
            .args(["--set", "stream_large_bodies=1", "--set", "flow_detail=0"])
            .arg("--set")
            .arg(format!("confdir={}", conf.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        println!("$ {}", display(&c));
        let mut child = Running(c.spawn().context("cannot start mitmdump")?);
        let addr = format!("127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(&addr).is_err() {
            if let Some(status) = child.0.try_wait()? {
                bail!("mitmdump exited with {status} before it listened");
            }
            if Instant::now() > deadline {
                bail!("mitmdump did not listen within 30 s");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(Mitm { child, addr })
    }
}

/// The venv's `mitmdump`, installed from PyPI into `target/bench/mitmproxy-venv` with a
/// Python ≥ 3.12 when missing (not by `--quick`); or why there is none.
pub(super) fn mitmdump(ctx: &Ctx) -> Result<PathBuf, String> {
    let venv = process::target_dir(&process::workspace_root()).join("bench/mitmproxy-venv");
    let exe = venv.join("bin/mitmdump");
    if exe.exists() {
        return Ok(exe);
    }
    if ctx.quick {
        return Err(format!("{QUICK_SKIP} (the full run does)"));
    }
    let python = find_python().ok_or_else(|| {
        "no Python ≥ 3.12 found (python3.12/3.13 on PATH or under ~/.pyenv/versions); mitmproxy 11+ needs one".to_owned()
    })?;
    let log = venv.with_extension("install.log");
    let run = |c: &mut Command| -> Result<(), String> {
        let shown = display(c);
        println!("$ {shown}");
        let out = c
            .output()
            .map_err(|e| format!("cannot run `{shown}`: {e}"))?;
        let mut text = out.stdout.clone();
        text.extend_from_slice(&out.stderr);
        let _ = std::fs::write(&log, &text);
        if out.status.success() {
            return Ok(());
        }
        let text = String::from_utf8_lossy(&text);
        let tail: Vec<&str> = text.lines().rev().take(3).collect();
        Err(format!(
            "`{shown}` failed ({}): {}",
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        ))
    };
    run(Command::new(&python).args(["-m", "venv"]).arg(&venv))?;
    run(Command::new(venv.join("bin/pip"))
        .args(["install", "--disable-pip-version-check", "-q"])
        .arg("mitmproxy>=11,<13"))?;
    if exe.exists() {
        Ok(exe)
    } else {
        Err(format!(
            "pip installed mitmproxy but {} is missing",
            exe.display()
        ))
    }
}

/// A Python ≥ 3.12: on PATH, else the newest under pyenv's versions.
fn find_python() -> Option<PathBuf> {
    for name in ["python3.13", "python3.12"] {
        if Command::new(name)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
        {
            return Some(PathBuf::from(name));
        }
    }
    let root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".pyenv")))?;
    let mut found: Vec<((u32, u32), PathBuf)> = std::fs::read_dir(root.join("versions"))
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().to_string_lossy().into_owned();
            let mut it = name.split('.');
            let major: u32 = it.next()?.parse().ok()?;
            let minor: u32 = it.next()?.parse().ok()?;
            let exe = e.path().join("bin/python3");
            (major == 3 && minor >= 12 && exe.exists()).then_some(((major, minor), exe))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, p)| p)
}
