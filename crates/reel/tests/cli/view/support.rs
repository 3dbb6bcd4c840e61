//! What the viewer's tests share: `reel view` started as a child (killed on drop) with
//! its URL read from its `reel: viewing at URL` line, a raw HTTP GET that shows status,
//! headers and body exactly as the server sent them, and the real recordings the views
//! are judged against (server-everything over stdio and Streamable HTTP, an llm trace
//! through the Anthropic and OpenAI SDKs, an MMSP cache written by the real `mmsp`),
//! each made once per test binary and shared.
#![allow(dead_code)]

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;

use crate::foreign::venv_bin;
use crate::harness::net::{
    Listening, read_chunked, read_status_and_headers, spawn_announcing, write_request,
};
use crate::harness::peer_runs::{Everything, Timing, record_python};
use crate::harness::play_http_support::run;
use crate::harness::rec_support::Peers;
use crate::harness::reel;
use crate::llm::support::{Case, Llm, Upstream, assert_ok, python_batch};

/// How long a view may take to show what it is waited for.
pub const SHOWN: Duration = Duration::from_secs(20);

/// A running `reel view` (or `reel rec --view`), killed on drop.
pub struct Viewer {
    child: Child,
    /// `http://127.0.0.1:PORT/`, as reel printed it.
    pub url: String,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    stderr: Arc<Mutex<String>>,
}

impl Viewer {
    /// `reel view ARGS… --listen 127.0.0.1:0`.
    pub fn start<S: AsRef<OsStr>>(args: &[S]) -> Viewer {
        let mut c = reel();
        c.arg("view").args(args).args(["--listen", "127.0.0.1:0"]);
        Viewer::spawn(c)
    }

    /// Starts `cmd` (stdout discarded, stdin closed) and waits for its viewing line.
    pub fn spawn(mut cmd: Command) -> Viewer {
        cmd.stdin(Stdio::null());
        Viewer::spawn_child(cmd)
    }

    /// Starts `cmd` with its stdin piped (`reel rec --view -- SERVER`: what the test
    /// writes goes to the server) and waits for its viewing line.
    pub fn spawn_feeding(mut cmd: Command) -> (Viewer, ChildStdin) {
        cmd.stdin(Stdio::piped());
        let mut v = Viewer::spawn_child(cmd);
        let stdin = v.child.stdin.take().expect("piped stdin");
        (v, stdin)
    }

    fn spawn_child(cmd: Command) -> Viewer {
        let Listening {
            child, url, stderr, ..
        } = spawn_announcing(cmd, "reel: viewing at ");
        let addr = url
            .strip_prefix("http://")
            .and_then(|a| a.strip_suffix('/'))
            .unwrap_or_else(|| panic!("not an http://IP:PORT/ URL: {url}"))
            .to_owned();
        Viewer {
            child,
            url,
            addr,
            stderr,
        }
    }

    /// What it wrote on stderr so far.
    pub fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The app's page showing `fragment` (`trace=KEY&view=…`).
    pub fn page(&self, fragment: &str) -> String {
        format!("{}_reel/#{fragment}", self.url)
    }

    /// `GET target` with the usual loopback `Host`.
    pub fn get(&self, target: &str) -> Reply {
        let host = self.addr.clone();
        self.get_with(target, &[("Host", &host)])
    }

    /// `GET target` with exactly `headers` (plus `Connection: close`).
    pub fn get_with(&self, target: &str, headers: &[(&str, &str)]) -> Reply {
        get(&self.addr, target, headers)
    }

    /// `GET /_reel/api/NAME?QUERY`, which must answer 200 with JSON.
    pub fn api(&self, name_and_query: &str) -> Value {
        let r = self.get(&format!("/_reel/api/{name_and_query}"));
        assert_eq!(r.status, 200, "/_reel/api/{name_and_query}: {}", r.body);
        serde_json::from_str(&r.body)
            .unwrap_or_else(|e| panic!("/_reel/api/{name_and_query} is not JSON ({e}): {}", r.body))
    }
}

impl Viewer {
    /// The process started (`reel view`, or the recorder of `rec --view`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the process to end on its own.
    pub fn wait(&mut self) -> std::process::ExitStatus {
        self.child.wait().expect("waiting for reel")
    }
}

impl Drop for Viewer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP answer as it came off the socket.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    /// Names lowercased, in order.
    pub headers: Vec<(String, String)>,
    /// The body, as text (lossy).
    pub body: String,
}

impl Reply {
    /// The value of header `name` (lowercase), the first when repeated.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One `GET target` to `addr` over a fresh connection, the request line and headers
/// written exactly as given.
pub fn get(addr: &str, target: &str, headers: &[(&str, &str)]) -> Reply {
    let mut all: Vec<(&str, &str)> = headers.to_vec();
    all.push(("Connection", "close"));
    let mut r = write_request(addr, "GET", target, &all, b"");
    let (status, headers) = read_status_and_headers(&mut r);
    let header = |n: &str| headers.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    let body = if let Some(n) = header("content-length").and_then(|v| v.parse::<usize>().ok()) {
        let mut b = vec![0; n];
        r.read_exact(&mut b).expect("the body");
        b
    } else if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        read_chunked(&mut r).unwrap_or_else(|| panic!("GET {target}: the chunked body broke off"))
    } else {
        let mut b = Vec::new();
        let _ = r.read_to_end(&mut b);
        b
    };
    Reply {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// The lines of a trace file, parsed (blank lines skipped).
pub fn lines_of(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The file name of `path`, the key `reel view FILE…` gives it.
pub fn key(path: &Path) -> String {
    path.file_name()
        .expect("a file name")
        .to_string_lossy()
        .into_owned()
}

/// `reel OP --json ARGS…`, parsed; `codes` are the exit codes it may end with.
pub fn reel_json(op: &str, args: &[&Path], codes: &[i32]) -> Value {
    let mut c = reel();
    c.arg(op).arg("--json").args(args);
    let (code, out, err) = run(c);
    assert!(
        code.is_some_and(|c| codes.contains(&c)),
        "reel {op} --json exited {code:?}: {out}{err}"
    );
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("reel {op} --json ({e}): {out}{err}"))
}

// ---- recordings -------------------------------------------------------------------------

/// Where the shared recordings live for the whole test binary.
fn store() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("a temp dir"))
        .path()
}

/// The Python SDK client's `everything` script against server-everything over stdio,
/// through `reel rec --name NAME`: the trace.
fn record_stdio(name: &str) -> PathBuf {
    let peers = Peers::get();
    let dir = store().join(name);
    let mut c = Command::new(&peers.python);
    c.arg("-W")
        .arg("ignore")
        .arg(Peers::script("client.py"))
        .args(["everything", "--mode", "auto", "--"])
        .arg(env!("CARGO_BIN_EXE_reel"))
        .arg("rec")
        .arg("--dir")
        .arg(&dir)
        .args(["--name", name, "--", "node"])
        .arg(&peers.everything)
        .arg("stdio");
    let (code, out, err) = run(c);
    assert!(
        code == Some(0) && out.ends_with("ALL OK\n"),
        "the client failed through reel rec: {out}{err}"
    );
    crate::harness::play_http_support::only_trace(&dir)
}

/// A server-everything session over stdio.
pub fn stdio_trace() -> &'static Path {
    static T: OnceLock<PathBuf> = OnceLock::new();
    T.get_or_init(|| record_stdio("stdio"))
}

/// A second recording of the same stdio session.
pub fn stdio_trace_again() -> &'static Path {
    static T: OnceLock<PathBuf> = OnceLock::new();
    T.get_or_init(|| record_stdio("again"))
}

/// A server-everything session over Streamable HTTP.
pub fn http_trace() -> &'static Path {
    static T: OnceLock<PathBuf> = OnceLock::new();
    T.get_or_init(|| {
        let server = Everything::start();
        let dir = store().join("http");
        std::fs::create_dir_all(&dir).expect("the trace dir");
        record_python(&server, &dir, "http", Timing::Sdk)
    })
}

/// An llm trace: the Anthropic SDK's streamed tool loop and an OpenAI chat call through
/// `reel llm` against the scripted upstream.
pub fn llm_trace() -> &'static Path {
    static T: OnceLock<PathBuf> = OnceLock::new();
    T.get_or_init(|| {
        let work = store().join("llm-work");
        std::fs::create_dir_all(&work).expect("a work dir");
        let up = Upstream::scripted(&work, "up");
        let llm = Llm::record(&store().join("llm"), &up.url, &["--name", "llm"]);
        let cases = [
            Case::new("anthropic", "stream", "tool"),
            Case::new("chat", "plain", "text"),
        ];
        for (case, o) in cases
            .iter()
            .zip(python_batch(&work, "b", &llm.bases(), &[], &cases))
        {
            assert_ok(case, &o);
        }
        llm.finish()
    })
}

/// An MMSP cache directory written by the real `mmsp` package (`mmsp_trace.py write`).
pub fn mmsp_cache() -> &'static Path {
    static T: OnceLock<PathBuf> = OnceLock::new();
    T.get_or_init(|| {
        let cache = store().join("mmsp-cache");
        write_mmsp_cache(&cache);
        cache
    })
}

/// Writes MMSP's own traces into `cache` with the real package.
pub fn write_mmsp_cache(cache: &Path) {
    let mut c = Command::new(venv_bin("mmsp-venv", "python"));
    c.arg(Peers::script("mmsp_trace.py"))
        .arg("write")
        .arg(cache);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "mmsp_trace.py write: {out}{err}");
}

/// Requests and responses of a trace paired by hand: (request line, response line),
/// by (session, id) and opposite directions, 1-based line numbers.
pub fn pair_by_hand(lines: &[Value]) -> (usize, HashMap<u64, Option<u64>>) {
    let mut open: HashMap<(String, String, String), u64> = HashMap::new();
    let mut pairs: HashMap<u64, Option<u64>> = HashMap::new();
    // The client request each HTTP request carried, for an answer without an id: an
    // HTTP refusal (a 400 to a discover probe) answers the request its HTTP request
    // carried.
    let mut carried: HashMap<u64, u64> = HashMap::new();
    let mut requests = 0;
    for (i, l) in lines.iter().enumerate() {
        let n = i as u64 + 1;
        let (Some(dir), Some(raw)) = (l["dir"].as_str(), l.get("raw")) else {
            continue;
        };
        let session = l["session"].as_str().unwrap_or("").to_owned();
        let http_req = l.pointer("/http/req").and_then(Value::as_u64).unwrap_or(0);
        let messages: Vec<&Value> = match raw {
            Value::Array(batch) => batch.iter().collect(),
            one => vec![one],
        };
        for m in messages {
            let answer = m.get("result").is_some() || m.get("error").is_some();
            let Some(id) = m.get("id").filter(|id| !id.is_null()) else {
                if answer && dir == "out" && http_req != 0 {
                    if let Some(req) = carried.remove(&http_req) {
                        if pairs.get(&req) == Some(&None) {
                            pairs.insert(req, Some(n));
                        }
                    }
                }
                continue;
            };
            if m.get("method").is_some() {
                requests += 1;
                open.insert((session.clone(), id.to_string(), dir.to_owned()), n);
                pairs.insert(n, None);
                if dir == "in" && http_req != 0 {
                    carried.insert(http_req, n);
                }
            } else {
                let from = if dir == "in" { "out" } else { "in" };
                if let Some(req) = open.remove(&(session.clone(), id.to_string(), from.to_owned()))
                {
                    pairs.insert(req, Some(n));
                }
            }
        }
    }
    (requests, pairs)
}

/// The latency text the pages show for `ms` milliseconds (`ms()` of the app's dom.js).
pub fn ms_text(v: f64) -> String {
    if v < 1000.0 {
        format!("{} ms", v.round())
    } else if v < 60000.0 {
        let p = if v < 10000.0 { 2 } else { 1 };
        format!("{:.*} s", p, v / 1000.0)
    } else {
        format!(
            "{} min {} s",
            (v / 60000.0).floor(),
            ((v % 60000.0) / 1000.0).round()
        )
    }
}

/// A count as the pages show it (`num()` of dom.js: thousands grouped with commas).
pub fn num_text(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
