//! `reel diff` on real runs: two recordings of `@modelcontextprotocol/server-everything`
//! made with `reel rec` (driven by a small JSON-RPC client below) diff as identical apart
//! from the content that really differs — its dynamic resource embeds the time of day —
//! and `--ignore` on that pointer makes them identical; a recording and its
//! `reel verify` run diff as identical; honest runs of the Python SDK client over HTTP
//! diff as identical whatever the race of its GET stream gave.
//!
//! The peers are installed by `cargo xtask peers` (`$REEL_PEERS`, else
//! `<workspace>/.peers`); when they are missing the test fails and says so.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::peer_runs::{self, trace_named};

const ANSWER_LIMIT: Duration = Duration::from_secs(60);

fn everything() -> PathBuf {
    let root = std::env::var_os("REEL_PEERS")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.peers"));
    let p = root.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        p.exists(),
        "peers missing: run `cargo xtask peers` (looked for {})",
        p.display()
    );
    p
}

/// A line-based JSON-RPC client for a child's stdio; the child is killed on drop.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<String>,
    next: u64,
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Client {
    fn start(mut cmd: Command) -> Client {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start reel rec");
        let out = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Client {
            stdin: child.stdin.take(),
            child,
            rx,
            next: 1,
        }
    }

    fn send(&mut self, v: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{v}").expect("write to the server");
        stdin.flush().expect("flush");
    }

    /// Sends a request and returns its result, answering the server's own requests
    /// (roots, sampling, elicitation, ping) meanwhile.
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}));
        loop {
            let line = self
                .rx
                .recv_timeout(ANSWER_LIMIT)
                .unwrap_or_else(|e| panic!("{method}: no answer ({e})"));
            let msg: Value = serde_json::from_str(&line).expect("JSON from the server");
            match (msg.get("method").and_then(Value::as_str), msg.get("id")) {
                (Some(m), Some(sid)) => {
                    let result = match m {
                        "roots/list" => {
                            json!({"roots":[{"uri":"file:///srv/reel-diff-test","name":"t"}]})
                        }
                        "sampling/createMessage" => {
                            json!({"role":"assistant","content":{"type":"text","text":"canned"},"model":"test","stopReason":"endTurn"})
                        }
                        "elicitation/create" => json!({"action":"decline"}),
                        _ => json!({}),
                    };
                    let reply = json!({"jsonrpc":"2.0","id":sid,"result":result});
                    self.send(&reply);
                }
                (None, Some(rid)) if *rid == json!(id) => {
                    assert!(msg.get("error").is_none(), "{method}: {msg}");
                    return msg["result"].clone();
                }
                _ => {}
            }
        }
    }

    fn finish(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().expect("wait for reel rec");
        assert!(status.success(), "reel rec ended with {status}");
    }
}

/// One recorded session against server-everything.
fn record_everything(dir: &Path, name: &str) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_reel"));
    cmd.args([
        "rec",
        "--dir",
        dir.to_str().unwrap(),
        "--name",
        name,
        "--",
        "node",
    ])
    .arg(everything())
    .arg("stdio");
    let mut c = Client::start(cmd);
    c.call(
        "initialize",
        json!({"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true},"sampling":{}},
               "clientInfo":{"name":"reel-diff-test","version":"1"}}),
    );
    c.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    c.call("tools/list", json!({}));
    c.call(
        "tools/call",
        json!({"name":"echo","arguments":{"message":"diff me"}}),
    );
    c.call(
        "tools/call",
        json!({"name":"get-sum","arguments":{"a":40,"b":2}}),
    );
    // Takes a second, so the two runs read the dynamic resource in different seconds.
    c.call(
        "tools/call",
        json!({"name":"trigger-long-running-operation","arguments":{"duration":1,"steps":2},
               "_meta":{"progressToken":"long"}}),
    );
    c.call(
        "resources/read",
        json!({"uri":"demo://resource/dynamic/text/1"}),
    );
    c.call("prompts/list", json!({}));
    c.call(
        "tools/call",
        json!({"name":"trigger-sampling-request","arguments":{"prompt":"hi","maxTokens":8}}),
    );
    c.finish();
}

fn diff(a: &Path, b: &Path, extra: &[&str]) -> (i32, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(["diff", "--json"])
        .args(extra)
        .arg(a)
        .arg(b)
        .output()
        .expect("run reel diff");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    (out.status.code().unwrap_or(-1), v)
}

#[test]
fn two_runs_of_server_everything_differ_only_in_the_time_its_resource_embeds() {
    let tmp = tempfile::tempdir().unwrap();
    record_everything(tmp.path(), "one");
    record_everything(tmp.path(), "two");
    let (a, b) = (
        trace_named(tmp.path(), "one"),
        trace_named(tmp.path(), "two"),
    );

    let (code, v) = diff(&a, &b, &[]);
    assert_eq!(code, 1, "{v:#}");
    let drifts = v["drifts"].as_array().unwrap();
    assert_eq!(drifts.len(), 1, "{v:#}");
    assert_eq!(
        drifts[0]["subject"],
        "resources/read demo://resource/dynamic/text/1"
    );
    assert_eq!(drifts[0]["kind"], "result-changed");
    assert_eq!(drifts[0]["pointers"], json!(["/result/contents/0/text"]));
    let left = drifts[0]["differences"][0]["a"].as_str().unwrap();
    assert!(left.contains("created at"), "{left}");
    assert!(v["counts"]["paired"].as_u64().unwrap() >= 9, "{v:#}");

    let (code, v) = diff(&a, &b, &["--ignore", "/result/contents/0/text"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["verdict"], "identical");
}

#[test]
fn a_recording_and_its_verify_run_diff_as_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap();
    let reel = env!("CARGO_BIN_EXE_reel");
    let rec = Command::new(reel)
        .args([
            "example", "client", "--", reel, "rec", "--dir", dir, "--name", "rec", "--",
        ])
        .args([reel, "example", "server"])
        .output()
        .unwrap();
    assert!(
        rec.status.success(),
        "{}",
        String::from_utf8_lossy(&rec.stderr)
    );
    let verify = |server_flags: &[&str], name: &str| {
        let out = Command::new(reel)
            .args([
                "verify", "--dir", dir, "--name", name, "rec", "--", reel, "example", "server",
            ])
            .args(server_flags)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, text) = verify(&[], "live");
    assert_eq!(code, Some(0), "{text}");
    let (a, b) = (
        trace_named(tmp.path(), "rec"),
        trace_named(tmp.path(), "live"),
    );
    let (code, v) = diff(&a, &b, &[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["counts"]["paired"], 7);

    // The same against the changed server: verify and diff agree on the drift.
    let (code, text) = verify(&["--changed"], "live-changed");
    assert_eq!(code, Some(1), "{text}");
    let c = trace_named(tmp.path(), "live-changed");
    let (code, v) = diff(&a, &c, &[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["drifts"][0]["subject"], "tools/call weather");
}

/// How many `notifications/tools/list_changed` a trace holds.
fn list_changed(trace: &Path) -> usize {
    std::fs::read_to_string(trace)
        .expect("read the trace")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["raw"]["method"] == "notifications/tools/list_changed")
        .count()
}

#[test]
fn honest_http_runs_of_server_everything_diff_as_identical_whatever_its_list_changed_count() {
    use peer_runs::{Everything, Timing, record_python};
    let tmp = tempfile::tempdir().unwrap();
    let server = Everything::start();
    // The SDK opens its GET stream beside `notifications/initialized`; the server's five
    // `tools/list_changed` reach the client only when the stream wins. Every other run
    // makes it win, so the pairs cover both outcomes of the race.
    let runs: Vec<PathBuf> = (0..11)
        .map(|i| {
            let timing = if i % 2 == 1 {
                Timing::StreamFirst
            } else {
                Timing::Sdk
            };
            record_python(&server, tmp.path(), &format!("run{i}"), timing)
        })
        .collect();
    let counts: Vec<usize> = runs.iter().map(|r| list_changed(r)).collect();
    assert!(
        counts.contains(&5) && counts.contains(&0),
        "the race gave {counts:?}"
    );

    let mut identical = 0;
    let mut failures = Vec::new();
    for pair in runs.windows(2) {
        let (code, v) = diff(&pair[0], &pair[1], &[]);
        if code == 0 && v["verdict"] == "identical" {
            identical += 1;
        } else {
            failures.push(format!("{v:#}"));
        }
    }
    assert_eq!(identical, 10, "{counts:?}\n{}", failures.join("\n"));

    // The count difference is reported as a note; --notifications strict makes it drift.
    let (a, b) = (0..11)
        .flat_map(|i| (0..11).map(move |j| (i, j)))
        .find(|&(i, j)| counts[i] == 0 && counts[j] == 5)
        .expect("a run of each outcome");
    let (code, v) = diff(&runs[a], &runs[b], &[]);
    assert_eq!(code, 0, "{v:#}");
    let notes = v["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 1, "{v:#}");
    assert_eq!(notes[0]["kind"], "notification-count");
    assert_eq!(
        notes[0]["subject"],
        "notifications/tools/list_changed (server→client)"
    );
    let (code, v) = diff(&runs[a], &runs[b], &["--notifications", "strict"]);
    assert_eq!(code, 1, "{v:#}");
    let drifts = v["drifts"].as_array().unwrap();
    assert_eq!(drifts.len(), 1, "{v:#}");
    assert_eq!(drifts[0]["kind"], "notification-count");
    assert_eq!(drifts[0]["summary"], "0 in A, 5 in B (compared as counts)");
    let (code, v) = diff(&runs[a], &runs[b], &["--notifications", "ignore"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["notes"], json!([]), "{v:#}");
}

#[test]
fn a_python_sdk_http_recording_and_its_verify_run_diff_as_identical() {
    use peer_runs::{Everything, Timing, record_python};
    let tmp = tempfile::tempdir().unwrap();
    let server = Everything::start();
    // The probe is refused with HTTP 400 and `"id": null` as recorded; verify's live
    // run gives the refusal the probe's id.
    let recorded = record_python(&server, tmp.path(), "rec", Timing::Sdk);
    let out = Command::new(env!("CARGO_BIN_EXE_reel"))
        .arg("verify")
        .arg(&recorded)
        .args(["--url", &server.url, "--name", "live", "--dir"])
        .arg(tmp.path())
        .output()
        .expect("run reel verify");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let live = trace_named(tmp.path(), "live");
    let (code, v) = diff(&recorded, &live, &[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["counts"]["paired"], v["counts"]["identical"], "{v:#}");
}
