//! Harness for the `reel play` tests (`play`, `play_peers`): the recorded handshake tapes
//! start with, and `reel play` driven line by line as a client drives it,
//! killed on drop so no test leaves a process behind.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;

/// How long a test waits for one answer before it counts as missing.
pub const ANSWER_LIMIT: Duration = Duration::from_secs(30);
/// How long a whole `reel play` run may take.
pub const RUN_LIMIT: Duration = Duration::from_secs(120);

pub use super::reel;
pub use super::sandbox::Sandbox;
pub use super::trace::TraceBuilder;
pub use super::workspace;

/// The usual legacy handshake, recorded: initialize (2025-11-25), its result, and
/// notifications/initialized.
pub fn handshake(t: &mut TraceBuilder) {
    t.c(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"recorded-client","version":"1.0"}}}"#)
        .s(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"taped","version":"1"}}}"#)
        .c(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
}

/// The live client's handshake, as another client (name, version, capabilities)
/// sends it.
pub const LIVE_INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"another-client","version":"9.9"}}}"#;
/// `notifications/initialized`.
pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A running `reel play`, driven like a client.
pub struct Player {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    stderr: Option<JoinHandle<String>>,
    /// Every line received so far.
    pub received: Vec<Value>,
}

impl Player {
    pub fn start(mut cmd: Command) -> Player {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start reel play");
        let out = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut err = child.stderr.take().expect("stderr");
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        Player {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            stderr: Some(stderr),
            received: Vec::new(),
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends one line (LF added).
    pub fn send(&mut self, line: &str) -> &mut Self {
        self.send_raw(format!("{line}\n").as_bytes())
    }

    /// Sends bytes as they are.
    pub fn send_raw(&mut self, bytes: &[u8]) -> &mut Self {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to reel play");
        stdin.flush().expect("flush");
        self
    }

    /// The next line reel play writes, as JSON (a test failure after [`ANSWER_LIMIT`]).
    pub fn recv(&mut self) -> Value {
        let line = self.recv_line();
        let v: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"));
        self.received.push(v.clone());
        v
    }

    /// The next line, as text.
    pub fn recv_line(&mut self) -> String {
        match self.lines.recv_timeout(ANSWER_LIMIT) {
            Ok(l) => l,
            Err(_) => {
                let _ = self.child.kill();
                let err = self.stderr.take().map(|h| h.join().unwrap_or_default());
                panic!(
                    "no line from reel play within {ANSWER_LIMIT:?}; got so far: {:?}\nstderr: {}",
                    self.received,
                    err.unwrap_or_default()
                );
            }
        }
    }

    /// Receives until the response with this id arrives; returns it and what came
    /// before it.
    pub fn until_response(&mut self, id: &Value) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let v = self.recv();
            if v.get("id") == Some(id) && v.get("method").is_none() {
                return (v, before);
            }
            before.push(v);
        }
    }

    /// Sends `signal` (`-TERM`, `-INT`, `-HUP`) with stdin still open, as a client
    /// that ends its servers by signal does, then waits as [`Player::finish`] does.
    pub fn signal_and_finish(mut self, signal: &str) -> Outcome {
        let _ = Command::new("kill")
            .arg(signal)
            .arg(self.child.id().to_string())
            .status();
        let stdin = self.stdin.take();
        let out = self.finish();
        drop(stdin);
        out
    }

    /// Closes stdin and waits: the exit code, the lines not received yet, stderr.
    pub fn finish(mut self) -> Outcome {
        self.stdin = None;
        let status = wait_limited(&mut self.child, RUN_LIMIT);
        let mut rest = Vec::new();
        while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(5)) {
            rest.push(serde_json::from_str(&l).unwrap_or(Value::String(l)));
        }
        let stderr = self
            .stderr
            .take()
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default();
        let status = status.unwrap_or_else(|| panic!("reel play still running; stderr: {stderr}"));
        Outcome {
            code: status.code(),
            rest,
            stderr,
        }
    }
}

impl Drop for Player {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How a run ended.
#[derive(Debug)]
pub struct Outcome {
    pub code: Option<i32>,
    /// Lines received after stdin was closed.
    pub rest: Vec<Value>,
    pub stderr: String,
}

pub use super::rec_support::wait_limited;

/// Runs `reel play` with all of `input` at once (stdin closed after it) and collects
/// every line it wrote.
pub fn play_all(sandbox: &Sandbox, args: &[&str], input: &[&str]) -> Outcome {
    let mut p = sandbox.play(args);
    for l in input {
        p.send(l);
    }
    p.finish()
}

/// The peers the interop tests drive, or a failure saying how to install them.
pub struct Peers {
    pub root: PathBuf,
    pub python: PathBuf,
    pub node_modules: PathBuf,
}

impl Peers {
    pub fn get() -> Peers {
        let root = std::env::var_os("REEL_PEERS")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace().join(".peers"));
        let p = Peers {
            python: root.join("venv/bin/python"),
            node_modules: root.join("node_modules"),
            root,
        };
        assert!(
            p.python.exists(),
            "peers missing: run `cargo xtask peers` (looked for {})",
            p.python.display()
        );
        p
    }

    /// A file under `node_modules`, which must exist.
    pub fn node_module(&self, rel: &str) -> PathBuf {
        let f = self.node_modules.join(rel);
        assert!(
            f.exists(),
            "peer missing: run `cargo xtask peers` (looked for {})",
            f.display()
        );
        f
    }

    /// A script in `crates/reel/tests/peers/`.
    pub fn script(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/peers")
            .join(name)
    }
}
