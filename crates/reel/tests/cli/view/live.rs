//! A trace still being written: the timeline shows each new line within seconds,
//! without a reload, and the header's line count follows — for a file a test appends
//! to under `reel view FILE`, and for `reel rec --view` recording reel's example server
//! while the test talks to it.

use std::io::Write;
use std::time::Duration;

use serde_json::{Value, json};

use super::browser::{load, settle};
use super::support::{Viewer, lines_of};
use super::webdriver::Browser;
use crate::harness::reel;
use crate::harness::trace::{at, meta, msg_at, rpc};

/// How soon a line appended to a followed trace must show.
const FOLLOWED: Duration = Duration::from_secs(5);

fn append(path: &std::path::Path, lines: &[Value]) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open the trace");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    f.write_all(text.as_bytes()).expect("append");
    f.flush().expect("flush");
}

/// Waits until the page shows line `n` and counts `n` lines in its header.
/// `reel rec --dir DIR --name NAME --view -- reel example server`.
fn rec_view(dir: &std::path::Path, name: &str) -> std::process::Command {
    let mut c = reel();
    c.arg("rec")
        .arg("--dir")
        .arg(dir)
        .args(["--name", name, "--view", "--"])
        .arg(env!("CARGO_BIN_EXE_reel"))
        .args(["example", "server"]);
    c
}

/// Writes `m` as one line to the server through reel.
fn send(stdin: &mut std::process::ChildStdin, m: Value) {
    stdin
        .write_all(format!("{m}\n").as_bytes())
        .and_then(|()| stdin.flush())
        .expect("write to the server");
}

fn shows(b: &Browser, n: usize) {
    b.wait(&format!("tr.line[data-n=\"{n}\"]"), FOLLOWED);
    b.wait(&format!(".count-lines[data-n=\"{n}\"]"), FOLLOWED);
}

#[test]
fn lines_appended_to_a_followed_trace_show_without_a_reload() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("growing.jsonl");
    crate::harness::trace::write_lines(
        &path,
        &[
            meta("growing", "mcp"),
            msg_at(1, "in", rpc::call(json!(1), "echo", json!({"text": "one"}))),
            msg_at(2, "out", rpc::result(json!(1), rpc::text("one"))),
        ],
    );
    let v = Viewer::start(&[&path]);
    let b = Browser::start();
    load(
        &b,
        &v.page("trace=growing.jsonl&view=timeline"),
        "tr.line[data-n=\"3\"]",
    );
    b.exec("window.__samePage = 'yes'", &[]);
    assert!(b.find_all("tr.line[data-n=\"4\"]").is_empty());
    b.wait(".badge.live", Duration::from_secs(5));

    append(
        &path,
        &[msg_at(
            3,
            "in",
            rpc::call(json!(2), "echo", json!({"text": "two"})),
        )],
    );
    shows(&b, 4);
    append(
        &path,
        &[
            msg_at(4, "out", rpc::result(json!(2), rpc::text("two"))),
            json!({"t": at(5), "dir": "event", "kind": "reel.stderr", "text": "late"}),
        ],
    );
    shows(&b, 6);
    // The answer pairs with its request as it arrives.
    let latency = b.wait("tr.line[data-n=\"5\"] td.latency", FOLLOWED).text();
    assert_eq!(latency, "1 ms");
    append(
        &path,
        &[json!({"t": at(6), "type": "end", "exitCode": 0, "durationMs": 6})],
    );
    shows(&b, 7);
    b.wait_until(
        "return !document.querySelector('.badge.live') && document.querySelector('.facts').textContent.includes('ended')",
        FOLLOWED,
    );
    assert_eq!(
        b.exec("return window.__samePage", &[]),
        "yes",
        "the page was reloaded"
    );
    assert_eq!(b.find_all("tr.line[data-n]").len(), 7);
    settle(&b, "live-file");
}

#[test]
fn rec_view_follows_the_recording_as_the_session_goes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("traces");
    let c = rec_view(&dir, "live");
    let (v, mut stdin) = Viewer::spawn_feeding(c);
    let b = Browser::start();
    send(
        &mut stdin,
        rpc::request(
            json!(1),
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "view-test", "version": "1"}}),
        ),
    );
    // The meta line, the request and its answer.
    load(&b, &v.page(""), "tr.line[data-n=\"3\"]");
    b.exec("window.__samePage = 'yes'", &[]);
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    send(&mut stdin, rpc::request(json!(2), "tools/list", json!({})));
    shows(&b, 6);
    let label = b.wait("tr.line[data-n=\"5\"] td.label", FOLLOWED).text();
    assert!(label.starts_with("tools/list"), "{label}");
    assert_eq!(b.exec("return window.__samePage", &[]), "yes");
    settle(&b, "live-rec");
    drop(stdin);
    // What the page showed is what reel wrote.
    let trace = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("the trace");
    let lines = lines_of(&trace);
    assert_eq!(lines[4]["raw"]["method"], "tools/list", "{lines:?}");
}

/// The processes `pid` started.
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

#[test]
fn a_viewer_that_dies_leaves_the_recording_running_and_its_trace_whole() {
    // Regression: the viewer of `rec --view` ran in the recorder's process, so a line
    // whose detail took the memory (issue 28) aborted the recording with it. It runs
    // in a process of its own now: killed here with SIGKILL, as the kernel's OOM
    // killer would, it takes nothing of the recording with it.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("traces");
    let c = rec_view(&dir, "isolated");
    let (mut v, mut stdin) = Viewer::spawn_feeding(c);
    let viewer = children(v.pid())
        .into_iter()
        .find(|&p| cmdline(p).contains("--beside-recording"))
        .unwrap_or_else(|| panic!("no viewer process beside reel rec {}", v.pid()));
    let killed = std::process::Command::new("kill")
        .args(["-9", &viewer.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut send = |m: Value| send(&mut stdin, m);
    send(rpc::request(
        json!(1),
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "view-test", "version": "1"}}),
    ));
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(rpc::request(json!(2), "tools/list", json!({})));
    drop(stdin);
    let status = v.wait();
    assert!(status.success(), "{status:?}: {}", v.stderr_text());
    let trace = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("the trace");
    let lines = lines_of(&trace);
    assert!(
        lines.iter().any(|l| l["raw"]["result"]["tools"].is_array()),
        "the tools/list answer: {lines:?}"
    );
    assert_eq!(lines.last().unwrap()["type"], "end", "{lines:?}");
    // And the viewer is gone with its port: nothing answers there.
    assert!(std::net::TcpStream::connect(&v.addr).is_err());
}

#[test]
fn a_viewer_that_cannot_listen_fails_the_recording_before_it_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let out = reel()
        .arg("rec")
        .arg("--dir")
        .arg(tmp.path())
        .arg(format!("--view={addr}"))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_reel"))
        .args(["example", "server"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(73), "{stderr}");
    assert!(stderr.contains(&addr.to_string()), "{stderr}");
}

/// `reel llm --view` shows the model calls as the agent makes them: a turn recorded
/// through the real Anthropic SDK appears in the viewer's turns without a restart.
#[test]
fn llm_view_follows_the_model_calls_as_they_are_recorded() {
    use crate::llm::support::{Case, Llm, Upstream, assert_ok, python_batch};
    let tmp = tempfile::tempdir().unwrap();
    let up = Upstream::scripted(tmp.path(), "up");
    let llm = Llm::record(
        &tmp.path().join("traces"),
        &up.url,
        &["--name", "live", "--view"],
    );
    let said = llm.stderr_text();
    let url = said
        .lines()
        .find_map(|l| l.strip_prefix("reel: viewing at "))
        .unwrap_or_else(|| panic!("no viewing line: {said}"))
        .to_owned();
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let api = |what: &str| -> Value {
        let r = super::support::get(&addr, &format!("/_reel/api/{what}"), &[("Host", &addr)]);
        assert_eq!(r.status, 200, "{what}: {}", r.body);
        serde_json::from_str(&r.body).unwrap()
    };
    let home = api("home");
    assert_eq!(home["mode"], "trace", "{home}");
    let key = home["key"].as_str().unwrap().to_owned();
    let turns = |v: &Value| -> u64 {
        v["labels"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["class"] == "turn")
            .map(|l| l["lines"].as_u64().unwrap())
            .sum()
    };
    assert_eq!(
        turns(&api(&format!("trace?t={key}"))),
        0,
        "no call made yet"
    );
    let case = Case::new("anthropic", "plain", "text");
    let out = python_batch(
        tmp.path(),
        "v",
        &llm.bases(),
        &[],
        std::slice::from_ref(&case),
    );
    assert_ok(&case, &out[0]);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let t = api(&format!("trace?t={key}"));
        if turns(&t) >= 2 {
            assert_eq!(t["kind"], "llm");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the turns never showed: {t}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let trace = llm.finish();
    let recorded = lines_of(&trace)
        .iter()
        .filter(|l| l["type"] == "turn")
        .count();
    assert!(recorded >= 2, "the trace holds the turns the viewer showed");
}
