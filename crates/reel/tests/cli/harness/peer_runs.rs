//! Real recordings for tests that judge reel's reading of real traffic (`diff`,
//! `check`, `stats`): the Python SDK client (`tests/peers/http_client.py`, the
//! `everything` script) against `@modelcontextprotocol/server-everything` over
//! Streamable HTTP, through `reel rec --url`.
//!
//! The peers are installed by `cargo xtask peers` (`$REEL_PEERS`, else
//! `<workspace>/.peers`); when they are missing the test fails and says so.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::harness::net::{Server, free_port, spawn_listening};

/// How long a client run or reel's shutdown may take.
const RUN_LIMIT: Duration = Duration::from_secs(120);

fn peers() -> PathBuf {
    std::env::var_os("REEL_PEERS")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.peers"))
}

fn peer(path: &str) -> PathBuf {
    let p = peers().join(path);
    assert!(
        p.exists(),
        "peers missing: run `cargo xtask peers` (looked for {})",
        p.display()
    );
    p
}

/// A server-everything listening for Streamable HTTP, killed on drop.
pub struct Everything {
    _server: Server,
    /// Its MCP endpoint.
    pub url: String,
}

impl Everything {
    pub fn start() -> Everything {
        let port = free_port();
        let mut c = Command::new("node");
        c.arg(peer(
            "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        ))
        .arg("streamableHttp")
        .env("PORT", port.to_string());
        Everything {
            _server: Server::start(c, port),
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

/// How the client times its GET stream against `notifications/initialized`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// As the SDK does it: the two race.
    Sdk,
    /// The GET stream is answered first (`--stream-first`): what the race gives now and
    /// then by chance.
    StreamFirst,
}

/// Records one run of the Python client against `server` as a trace named `name` in
/// `dir`; returns the trace's path.
pub fn record_python(server: &Everything, dir: &Path, name: &str, timing: Timing) -> PathBuf {
    record_python_with(server, dir, name, timing, &[])
}

/// [`record_python`] with more flags for `reel rec`.
pub fn record_python_with(
    server: &Everything,
    dir: &Path,
    name: &str,
    timing: Timing,
    flags: &[&str],
) -> PathBuf {
    let mut rec = Command::new(env!("CARGO_BIN_EXE_reel"));
    rec.arg("rec")
        .arg("--dir")
        .arg(dir)
        .args(["--name", name, "--url", &server.url])
        .args(flags);
    let mut proxy = spawn_listening(rec);
    let mut client = Command::new(peer("venv/bin/python"));
    client
        .arg("-W")
        .arg("ignore")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/http_client.py"))
        .arg("everything");
    if timing == Timing::StreamFirst {
        client.arg("--stream-first");
    }
    let out = client
        .arg(&proxy.url)
        .stdin(Stdio::null())
        .output()
        .expect("run the Python client");
    let stop = Command::new("kill")
        .arg("-TERM")
        .arg(proxy.child.id().to_string())
        .status();
    assert!(stop.is_ok_and(|s| s.success()), "cannot stop reel rec");
    let status = wait(&mut proxy.child);
    let _ = proxy.reader.join();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).ends_with("ALL OK\n"),
        "the client failed through reel rec: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        status.code(),
        Some(0),
        "reel rec: {}",
        proxy.stderr.lock().unwrap()
    );
    trace_named(dir, name)
}

fn wait(child: &mut std::process::Child) -> std::process::ExitStatus {
    let deadline = std::time::Instant::now() + RUN_LIMIT;
    loop {
        if let Some(s) = child.try_wait().expect("wait for reel rec") {
            return s;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("reel rec did not stop on SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The trace in `dir` whose file name ends with `-<name>.jsonl`.
pub fn trace_named(dir: &Path, name: &str) -> PathBuf {
    let suffix = format!("-{name}.jsonl");
    std::fs::read_dir(dir)
        .expect("trace dir")
        .map(|e| e.expect("entry").path())
        .find(|p| p.to_string_lossy().ends_with(&suffix))
        .unwrap_or_else(|| panic!("no trace named {name} in {}", dir.display()))
}
