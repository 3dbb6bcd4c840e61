//! The one player: a running `reel play` (or any reel that serves, such as `reel rec
//! --url`), killed on drop so no test leaves a process behind, its stderr collected as
//! it comes. A test drives it the way its client would: over stdio, a line at a time
//! ([`Player::stdio`]: send, receive, close stdin and finish), or over HTTP
//! ([`Player::start`], [`Player::listening`]: the address of its one
//! `reel: listening on URL` line, stopped with SIGTERM).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;

use super::net::spawn_listening;
use super::rec_support::wait_limited;
use super::reel;

/// How long a test waits for one answer before it counts as missing.
pub const ANSWER_LIMIT: Duration = Duration::from_secs(30);
/// How long a whole `reel play` run may take.
pub const RUN_LIMIT: Duration = Duration::from_secs(120);

/// A running reel, driven like a client.
pub struct Player {
    child: Option<Child>,
    /// Its stderr so far.
    stderr: Arc<Mutex<String>>,
    /// Collects stderr until reel closes it.
    reader: Option<JoinHandle<()>>,
    /// Over stdio: its stdin, open until [`Player::finish`].
    stdin: Option<ChildStdin>,
    /// Over stdio: the lines it writes to stdout.
    lines: Option<mpsc::Receiver<String>>,
    /// Over stdio: every line received so far.
    pub received: Vec<Value>,
    /// Over HTTP: `http://127.0.0.1:PORT/PATH`, as reel printed it.
    pub url: String,
    /// Over HTTP: `127.0.0.1:PORT`.
    pub addr: String,
    /// Over HTTP: `/PATH`.
    pub path: String,
}

/// How a player driven over stdio ended.
#[derive(Debug)]
pub struct Outcome {
    pub code: Option<i32>,
    /// Lines received after stdin was closed.
    pub rest: Vec<Value>,
    pub stderr: String,
}

/// How a player stopped with SIGTERM ended.
pub struct Stopped {
    pub status: ExitStatus,
    pub stderr: String,
}

impl Stopped {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    pub fn stderr_text(&self) -> String {
        self.stderr.clone()
    }
}

/// Collects `from` into `into` on a thread, a line at a time, to its end (bytes that
/// are not UTF-8 replaced, never left unread).
fn collect(from: impl std::io::Read + Send + 'static, into: &Arc<Mutex<String>>) -> JoinHandle<()> {
    let into = Arc::clone(into);
    std::thread::spawn(move || {
        let mut from = BufReader::new(from);
        let mut line = Vec::new();
        while from.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
            into.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&line));
            line.clear();
        }
    })
}

impl Player {
    /// Starts `cmd` (a `reel play` over stdio) with its stdin, stdout and stderr piped.
    pub fn stdio(mut cmd: Command) -> Player {
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
        let stderr = Arc::new(Mutex::new(String::new()));
        let reader = collect(child.stderr.take().expect("stderr"), &stderr);
        Player {
            stdin: child.stdin.take(),
            child: Some(child),
            stderr,
            reader: Some(reader),
            lines: Some(rx),
            received: Vec::new(),
            url: String::new(),
            addr: String::new(),
            path: String::new(),
        }
    }

    /// `reel play TRACE --listen 127.0.0.1:0 FLAGS…`, once it listens.
    pub fn start(trace: &Path, flags: &[&str]) -> Player {
        let mut cmd = reel();
        cmd.arg("play")
            .arg(trace)
            .args(["--listen", "127.0.0.1:0"])
            .args(flags);
        Player::listening(cmd)
    }

    /// Starts `cmd` (a `reel play --listen` or `reel rec --url`) and waits for its
    /// listening line.
    pub fn listening(cmd: Command) -> Player {
        let l = spawn_listening(cmd);
        let rest = l.url.strip_prefix("http://").expect("an http:// URL");
        let (addr, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        Player {
            addr: addr.to_owned(),
            path: if path.is_empty() {
                "/".into()
            } else {
                path.into()
            },
            url: l.url.clone(),
            child: Some(l.child),
            stderr: l.stderr,
            reader: Some(l.reader),
            stdin: None,
            lines: None,
            received: Vec::new(),
        }
    }

    /// The process id of the running reel.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// The most memory the running reel has held (Linux: `VmHWM`), in bytes.
    pub fn peak_memory(&self) -> u64 {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid())).expect("status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .expect("VmHWM")
            * 1024
    }

    /// How many file descriptors the running reel holds (Linux: `/proc/PID/fd`).
    pub fn open_fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .expect("/proc/PID/fd")
            .count()
    }

    /// What reel wrote to stderr so far.
    pub fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits for stderr to close; everything reel wrote to it.
    fn stderr_at_exit(&mut self) -> String {
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        self.stderr_text()
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
        let lines = self.lines.as_ref().expect("a player driven over stdio");
        match lines.recv_timeout(ANSWER_LIMIT) {
            Ok(l) => l,
            Err(_) => {
                if let Some(c) = self.child.as_mut() {
                    let _ = c.kill();
                }
                let err = self.stderr_at_exit();
                panic!(
                    "no line from reel play within {ANSWER_LIMIT:?}; got so far: {:?}\nstderr: {err}",
                    self.received,
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
            .arg(self.pid().to_string())
            .status();
        let stdin = self.stdin.take();
        let out = self.finish();
        drop(stdin);
        out
    }

    /// Closes stdin and waits: the exit code, the lines not received yet, stderr.
    pub fn finish(mut self) -> Outcome {
        self.stdin = None;
        let mut child = self.child.take().expect("running");
        let status = wait_limited(&mut child, RUN_LIMIT);
        let mut rest = Vec::new();
        if let Some(lines) = &self.lines {
            while let Ok(l) = lines.recv_timeout(Duration::from_secs(5)) {
                rest.push(serde_json::from_str(&l).unwrap_or(Value::String(l)));
            }
        }
        let stderr = self.stderr_at_exit();
        let status = status.unwrap_or_else(|| panic!("reel play still running; stderr: {stderr}"));
        Outcome {
            code: status.code(),
            rest,
            stderr,
        }
    }

    /// Kills reel with SIGKILL (nothing of it runs after) and reaps it.
    pub fn kill(mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Sends SIGTERM and waits for reel to exit.
    pub fn stop(self) -> Stopped {
        self.signal_and_stop("-TERM")
    }

    /// Sends `signal` (`-TERM`, `-INT`) and waits for reel to exit.
    pub fn signal_and_stop(mut self, signal: &str) -> Stopped {
        let mut child = self.child.take().expect("running");
        let _ = Command::new("kill")
            .arg(signal)
            .arg(child.id().to_string())
            .status();
        let status = wait_limited(&mut child, RUN_LIMIT)
            .unwrap_or_else(|| panic!("reel did not stop; stderr: {}", self.stderr_text()));
        Stopped {
            status,
            stderr: self.stderr_at_exit(),
        }
    }
}

impl Drop for Player {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
