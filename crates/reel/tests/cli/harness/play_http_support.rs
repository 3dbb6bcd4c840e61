//! Harness for the `reel play --listen` and `reel verify --url` tests (`play_http`,
//! `play_http_peers`, `verify_http`; built on `net`): the `http` facts of the messages
//! their tapes hold, `reel play --listen` run as a user runs it (its address
//! read from the one `reel: listening on URL` line, stopped with SIGTERM), a raw
//! HTTP/1.1 client that can read an event stream event by event, the peers, and
//! processes killed on drop.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufReader, Read};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long a process may take to come up, and a read to get what it waits for.
pub const LIMIT: Duration = Duration::from_secs(30);

pub use super::reel;

pub use super::player::{Player, RUN_LIMIT};
pub use super::sandbox::Sandbox;
pub use super::trace::TraceBuilder;

// Each including test crate uses some of these.
#[allow(unused_imports)]
pub use crate::harness::net::{Server, free_port, wait_port};

// ---- http facts -----------------------------------------------------------------------------

/// `http` facts of a client POST.
pub fn post_req(req: u64) -> Option<Value> {
    Some(json!({"req": req, "method": "POST", "path": "/mcp", "headers": {}}))
}

/// `http` facts of a JSON answer.
pub fn json_answer(req: u64, status: u16) -> Option<Value> {
    Some(json!({"req": req, "status": status, "headers": {"content-type": "application/json"}}))
}

/// `http` facts of an SSE event on the response of request `req`.
pub fn sse(req: u64, eol: &str) -> Option<Value> {
    let mut sse = json!({"event": "message"});
    if eol != "lf" {
        sse["eol"] = json!(eol);
    }
    Some(
        json!({"req": req, "status": 200, "headers": {"content-type": "text/event-stream"}, "sse": sse}),
    )
}

// ---- a raw HTTP/1.1 client ---------------------------------------------------------------

/// A response read by the raw client (the body whole, or what was read of a stream).
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
}

/// One open connection, its response head read.
pub struct Conn {
    r: BufReader<TcpStream>,
    pub status: u16,
    pub headers: HashMap<String, String>,
    chunked: bool,
    /// Body bytes read so far (de-chunked).
    pub body: Vec<u8>,
}

/// Sends a request (`Host` added when not given, `Content-Length` for a body or a POST)
/// and reads the response head.
pub fn open(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Conn {
    let mut all: Vec<(&str, &str)> = Vec::new();
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        all.push(("host", addr));
    }
    all.extend_from_slice(headers);
    let mut r = crate::harness::net::write_request(addr, method, path, &all, body.as_bytes());
    r.get_ref().set_read_timeout(Some(LIMIT)).unwrap();
    let (status, lines) = crate::harness::net::read_status_and_headers(&mut r);
    let headers: HashMap<String, String> = lines.into_iter().collect();
    let chunked = headers
        .get("transfer-encoding")
        .is_some_and(|v| v.contains("chunked"));
    Conn {
        r,
        status,
        headers,
        chunked,
        body: Vec::new(),
    }
}

impl Conn {
    /// Reads one more piece of the body; false at its end.
    fn read_more(&mut self) -> bool {
        if self.chunked {
            match crate::harness::net::read_chunk(&mut self.r) {
                Some(chunk) => {
                    self.body.extend_from_slice(&chunk);
                    true
                }
                None => false,
            }
        } else {
            let mut buf = [0u8; 8192];
            match self.r.read(&mut buf) {
                Ok(0) | Err(_) => false,
                Ok(n) => {
                    self.body.extend_from_slice(&buf[..n]);
                    true
                }
            }
        }
    }

    /// The connection with `limit` as its read timeout: for a body the server may be
    /// slow to send on a loaded machine (a recorder decoding a bomb before its cap).
    pub fn patient(self, limit: Duration) -> Conn {
        self.r
            .get_ref()
            .set_read_timeout(Some(limit))
            .expect("a read timeout");
        self
    }

    /// Reads the whole body (Content-Length, chunked, or to the end).
    pub fn finish(mut self) -> Resp {
        if let Some(len) = self
            .headers
            .get("content-length")
            .and_then(|v| v.parse::<usize>().ok())
        {
            let mut b = vec![0; len];
            self.r.read_exact(&mut b).expect("the body");
            self.body = b;
        } else {
            while self.read_more() {}
        }
        Resp {
            status: self.status,
            headers: self.headers,
            body: self.body,
        }
    }

    /// Reads until the body holds `n` complete SSE events (blank-line separated, LF or
    /// CRLF); returns them, parsed into (field, value) lines.
    pub fn events(&mut self, n: usize) -> Vec<Vec<(String, String)>> {
        let deadline = Instant::now() + LIMIT;
        loop {
            let text = String::from_utf8_lossy(&self.body).replace("\r\n", "\n");
            let complete: Vec<&str> = text.split("\n\n").collect();
            let done = complete.len().saturating_sub(1);
            if done >= n {
                return complete[..n]
                    .iter()
                    .map(|ev| {
                        ev.lines()
                            .filter_map(|l| {
                                l.split_once(':')
                                    .map(|(k, v)| (k.to_owned(), v.trim_start().to_owned()))
                            })
                            .collect()
                    })
                    .collect();
            }
            assert!(
                Instant::now() < deadline,
                "{n} events did not arrive; got {text:?}"
            );
            assert!(self.read_more(), "the stream ended; got {text:?}");
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// The JSON data of an event.
pub fn data(ev: &[(String, String)]) -> Value {
    let d = ev
        .iter()
        .find(|(k, _)| k == "data")
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no data in {ev:?}"));
    serde_json::from_str(d).unwrap_or_else(|e| panic!("data is not JSON ({e}): {d}"))
}

/// One request, its whole response.
pub fn request(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Resp {
    open(addr, method, path, headers, body).finish()
}

/// POSTs a JSON-RPC message the way MCP clients do, with the session when given.
pub fn post(addr: &str, path: &str, session: Option<&str>, body: &str) -> Resp {
    post_open(addr, path, session, body).finish()
}

/// [`post`], the response's head only (to read an event stream as it comes).
pub fn post_open(addr: &str, path: &str, session: Option<&str>, body: &str) -> Conn {
    let mut h = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    if let Some(s) = session {
        h.push(("mcp-session-id", s));
    }
    open(addr, "POST", path, &h, body)
}

// ---- peers -------------------------------------------------------------------------------

pub use super::play_support::Peers;

/// Runs `cmd` to its end (at most [`RUN_LIMIT`], killed after); (code, stdout, stderr).
pub fn run(mut cmd: Command) -> (Option<i32>, String, String) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start");
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let o = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let e = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + RUN_LIMIT;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} ran longer than {RUN_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (
        status.code(),
        o.join().unwrap_or_default(),
        e.join().unwrap_or_default(),
    )
}

/// The one trace file in `dir`.
pub fn only_trace(dir: &Path) -> PathBuf {
    let traces: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("no trace directory {}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    assert_eq!(traces.len(), 1, "expected one trace in {}", dir.display());
    traces.into_iter().next().expect("one trace")
}

/// The lines of a trace, parsed.
pub fn trace_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("read trace")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}
