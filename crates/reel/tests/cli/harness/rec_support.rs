//! Harness for the `reel rec` tests: the built binary in the one sandbox, processes
//! that are killed when a test fails (never left behind), and the trace read back with
//! `reel_trace` into plain values a test can compare.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use reel_trace::{End, Line, Meta, TraceReader};

/// The longest any single reel run in these tests may take before it counts as hung.
pub const RUN_LIMIT: Duration = Duration::from_secs(120);

pub use super::reel;
use super::sandbox::Sandbox;

pub use super::workspace;

/// A `reel rec` session: the one sandbox, with the trace directory `traces` in it.
pub struct Session {
    pub sb: Sandbox,
}

impl Session {
    pub fn new() -> Session {
        Session { sb: Sandbox::new() }
    }

    /// Where reel records.
    pub fn dir(&self) -> PathBuf {
        self.sb.path("traces")
    }

    /// `reel rec --dir <dir> <flags> -- <command>`.
    pub fn command(&self, flags: &[&str], command: &[&str]) -> Command {
        let mut c = reel();
        c.arg("rec")
            .arg("--dir")
            .arg(self.dir())
            .args(flags)
            .arg("--")
            .args(command);
        c.current_dir(self.sb.dir());
        c
    }

    /// What the run has written to its trace so far (empty until the file exists).
    pub fn written_so_far(&self) -> String {
        std::fs::read_dir(self.dir())
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .and_then(|e| std::fs::read_to_string(e.path()).ok())
            .unwrap_or_default()
    }

    /// Waits until the trace being written holds `needle` (a running server's line
    /// reached reel), failing after 30 s.
    pub fn wait_until_written(&self, needle: &str) {
        assert!(
            eventually(Duration::from_secs(30), || self
                .written_so_far()
                .contains(needle)),
            "{needle:?} never reached the trace"
        );
    }

    /// The one trace the run wrote.
    pub fn trace_path(&self) -> PathBuf {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.dir())
            .expect("trace dir exists")
            .map(|e| e.expect("dir entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        assert_eq!(
            files.len(),
            1,
            "expected one trace in {}: {files:?}",
            self.dir().display()
        );
        files.remove(0)
    }

    pub fn trace(&self) -> Trace {
        Trace::read(&self.trace_path())
    }
}

/// What a finished process did.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Finished {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// A running process whose stdout and stderr are collected in the background; killed
/// on drop.
pub struct Running {
    pub child: Child,
    pub stdin: Option<std::process::ChildStdin>,
    stdout: Option<JoinHandle<Vec<u8>>>,
    stderr: Option<JoinHandle<Vec<u8>>>,
}

pub fn start(mut cmd: Command) -> Running {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the command");
    let collect = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let stdout = child.stdout.take().map(|o| collect(Box::new(o)));
    let stderr = child.stderr.take().map(|e| collect(Box::new(e)));
    Running {
        stdin: child.stdin.take(),
        child,
        stdout,
        stderr,
    }
}

impl Running {
    /// Writes `input` in the background and closes stdin afterwards.
    pub fn feed(&mut self, input: Vec<u8>) -> JoinHandle<()> {
        let mut stdin = self.stdin.take().expect("stdin still open");
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        })
    }

    /// Waits for the process (at most [`RUN_LIMIT`]) and collects its output.
    pub fn wait(mut self) -> Finished {
        let status = wait_limited(&mut self.child, RUN_LIMIT);
        let stdout = self
            .stdout
            .take()
            .map(|h| h.join().expect("stdout reader"))
            .unwrap_or_default();
        let stderr = self
            .stderr
            .take()
            .map(|h| h.join().expect("stderr reader"))
            .unwrap_or_default();
        let status = status.unwrap_or_else(|| {
            panic!(
                "still running after {RUN_LIMIT:?}; stderr so far: {}",
                String::from_utf8_lossy(&stderr)
            )
        });
        Finished {
            status,
            stdout,
            stderr,
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for `child` at most `limit`; kills it and returns `None` when it is still
/// running then.
pub fn wait_limited(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(s) = child.try_wait().expect("try_wait") {
            return Some(s);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Runs `cmd` with `input` on stdin (closed afterwards) to completion.
pub fn run(cmd: Command, input: Vec<u8>) -> Finished {
    let mut r = start(cmd);
    let feeder = r.feed(input);
    let f = r.wait();
    let _ = feeder.join();
    f
}

/// Polls `cond` until it holds or `limit` passes; returns whether it held.
pub fn eventually(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    cond()
}

/// One trace line, as the tests look at it.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    Meta(Box<Meta>),
    Message {
        dir: String,
        raw: String,
        crlf: bool,
        reformatted: bool,
        raw_b64: Option<String>,
    },
    Event {
        kind: String,
        side: Option<String>,
        text: Option<String>,
        bytes: Option<Vec<u8>>,
        crlf: bool,
        fields: serde_json::Map<String, serde_json::Value>,
    },
    End(Box<End>),
    Other(String),
}

/// A trace read back.
#[derive(Debug)]
pub struct Trace {
    pub lines: Vec<Entry>,
    /// The last line had no LF.
    pub torn_tail: bool,
    /// Lines that did not parse, with their 1-based number.
    pub unparsed: Vec<u64>,
}

impl Trace {
    pub fn read(path: &Path) -> Trace {
        let mut r = TraceReader::open(path).expect("open trace");
        let mut lines = Vec::new();
        let mut unparsed = Vec::new();
        let mut torn_tail = false;
        while let Some(l) = r.next_line() {
            let l = l.expect("read trace line");
            torn_tail = !l.raw.terminated;
            let value: serde_json::Value = match serde_json::from_slice(l.raw.bytes) {
                Ok(v) => v,
                Err(_) => {
                    unparsed.push(l.raw.number);
                    continue;
                }
            };
            let parsed = l.parse().expect("a JSON line parses as a trace line");
            lines.push(match parsed {
                Line::Meta(m) => Entry::Meta(m),
                Line::End(e) => Entry::End(e),
                Line::Message(v) => Entry::Message {
                    dir: v.dir.as_deref().unwrap_or_default().to_owned(),
                    raw: v.raw_str().unwrap_or_default().to_owned(),
                    crlf: v.eol.as_deref() == Some("crlf"),
                    reformatted: v.reformatted == Some(true),
                    raw_b64: value
                        .get("raw_b64")
                        .and_then(|b| b.as_str())
                        .map(str::to_owned),
                },
                Line::Event(v) => {
                    let mut fields = value.as_object().cloned().unwrap_or_default();
                    for k in ["t", "dir", "kind", "side", "text", "bytes", "eol"] {
                        fields.remove(k);
                    }
                    Entry::Event {
                        kind: v.kind.as_deref().unwrap_or_default().to_owned(),
                        side: v.side.as_deref().map(str::to_owned),
                        text: v.text.as_deref().map(str::to_owned),
                        bytes: v
                            .bytes
                            .as_deref()
                            .map(|b| base64_decode(b).expect("base64 bytes")),
                        crlf: v.eol.as_deref() == Some("crlf"),
                        fields,
                    }
                }
                _ => Entry::Other(String::from_utf8_lossy(l.raw.bytes).into_owned()),
            });
        }
        Trace {
            lines,
            torn_tail,
            unparsed,
        }
    }

    pub fn meta(&self) -> &Meta {
        match self.lines.first() {
            Some(Entry::Meta(m)) => m,
            other => panic!("first line is not meta: {other:?}"),
        }
    }

    pub fn end(&self) -> &End {
        match self.lines.last() {
            Some(Entry::End(e)) => e,
            other => panic!("last line is not end: {other:?}"),
        }
    }

    /// Message and `reel.nonjson` lines of one direction, in order.
    pub fn side(&self, dir: &str) -> Vec<&Entry> {
        self.lines
            .iter()
            .filter(|l| match l {
                Entry::Message { dir: d, .. } => d == dir,
                Entry::Event { kind, side, .. } => {
                    kind == "reel.nonjson" && side.as_deref() == Some(dir)
                }
                _ => false,
            })
            .collect()
    }

    /// The raw payloads of the message lines of one direction.
    pub fn raws(&self, dir: &str) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                Entry::Message { dir: d, raw, .. } if d == dir => Some(raw.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Events of one kind.
    pub fn events(&self, kind: &str) -> Vec<&Entry> {
        self.lines
            .iter()
            .filter(|l| matches!(l, Entry::Event { kind: k, .. } if k == kind))
            .collect()
    }
}

/// Standard base64 (with padding), enough to read `bytes` back.
pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let s = s.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for chunk in s.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= val(c)? << (18 - 6 * i);
        }
        let n = chunk.len().saturating_sub(1);
        for i in 0..n {
            out.push((acc >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

/// Where the interop peers are installed: `$REEL_PEERS`, else `<workspace>/.peers`.
pub struct Peers {
    pub python: PathBuf,
    pub everything: PathBuf,
}

impl Peers {
    /// The peers, or a failure that says how to install them (never a skip).
    pub fn get() -> Peers {
        let root = std::env::var_os("REEL_PEERS")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace().join(".peers"));
        let p = Peers {
            python: root.join("venv/bin/python"),
            everything: root
                .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
        };
        for f in [&p.python, &p.everything] {
            assert!(
                f.exists(),
                "peers missing: run `cargo xtask peers` (looked for {})",
                f.display()
            );
        }
        p
    }

    /// A script of ours in `crates/reel/tests/peers/`.
    pub fn script(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/peers")
            .join(name)
    }
}

/// `reel check --json` on one trace: the rule ids it reported, and its exit code.
pub fn check(path: &Path) -> (Option<i32>, Vec<String>) {
    let out = reel()
        .args(["check", "--json"])
        .arg(path)
        .output()
        .expect("run reel check");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "reel check --json printed no JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let rules = doc["files"][0]["problems"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .filter_map(|p| p["rule"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    (out.status.code(), rules)
}
