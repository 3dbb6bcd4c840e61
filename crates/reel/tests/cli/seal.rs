//! Tamper evidence end to end: `reel seal` on a finished trace, `reel rec --seal` on a
//! real recording (the example server over stdio, a scripted upstream over HTTP, a
//! recorder killed with `kill -9`), and `reel check --verify` naming each kind of
//! tampering: a changed, removed, inserted or reordered line, a truncated trace, lines
//! appended after the seal, and a seal that was itself edited; keys, and the exit codes.

use std::io::{BufRead, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::net::{read_chunked, read_status_and_headers, spawn_listening, write_request};
use crate::harness::rec_support::{eventually, wait_limited};
use crate::harness::reel;
use crate::harness::sandbox::Sandbox;
use crate::harness::trace::{TraceBuilder, msg, rpc};

/// What `reel check --verify --json` said about one trace.
struct Verified {
    code: Option<i32>,
    /// The file entry's `seal` member.
    seal: Value,
    /// The rule ids of the entry's problems.
    rules: Vec<String>,
}

impl Verified {
    /// The first failure's kind and trace line.
    fn first(&self) -> (&str, Option<u64>) {
        let f = &self.seal["first"];
        (f["kind"].as_str().unwrap_or("none"), f["line"].as_u64())
    }
}

/// A finished trace of a few calls that `reel check` finds clean, `name` in the
/// sandbox.
fn sealed_trace(sb: &Sandbox, name: &str) -> PathBuf {
    TraceBuilder::new("sealed")
        .meta(json!({"redaction": {"rules": "reel/1", "defaults": true}}))
        .lines([
            msg("in", rpc::request(json!(1), "tools/list", json!({}))),
            msg("out", rpc::result(json!(1), json!({"tools": []}))),
            msg("in", rpc::call(json!(2), "echo", json!({"text": "a"}))),
            msg("out", rpc::result(json!(2), rpc::text("a"))),
            msg("in", rpc::call(json!(3), "echo", json!({"text": "b"}))),
            msg("out", rpc::result(json!(3), rpc::text("b"))),
        ])
        .write(&sb.path(name))
}

/// `reel check --verify --json TRACE` with `extra` flags.
fn verify(sb: &Sandbox, trace: &Path, extra: &[&str]) -> Verified {
    let mut args = vec!["check", "--verify", "--json"];
    args.extend_from_slice(extra);
    let trace = trace.display().to_string();
    args.push(&trace);
    let out = sb.reel(&args);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON from check --verify ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let entry = &doc["files"][0];
    Verified {
        code: out.status.code(),
        seal: entry["seal"].clone(),
        rules: entry["problems"]
            .as_array()
            .map(|ps| {
                ps.iter()
                    .filter_map(|p| p["rule"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// The file's lines, without their LFs.
fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .expect("read")
        .lines()
        .map(str::to_owned)
        .collect()
}

fn write_lines(path: &Path, lines: &[String]) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, text).expect("write");
}

/// The sidecar of `trace`.
fn seal_of(trace: &Path) -> PathBuf {
    let mut p = trace.as_os_str().to_owned();
    p.push(".seal");
    PathBuf::from(p)
}

/// The one `*.jsonl` in `dir`.
fn the_trace(dir: &Path) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("trace dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found[0].clone()
}

/// A real recording: the example client driving the example server through
/// `reel rec --seal`.
fn record_example(sb: &Sandbox, flags: &[&str]) -> PathBuf {
    let me = env!("CARGO_BIN_EXE_reel");
    let dir = sb.path("traces");
    let out = reel()
        .args([
            "example", "client", "--", me, "rec", "--seal", "--name", "ex", "--dir",
        ])
        .arg(&dir)
        .args(flags)
        .args(["--", me, "example", "server"])
        .output()
        .expect("run the example");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("reel: sealing to "), "{err}");
    the_trace(&dir)
}

#[test]
fn a_sealed_recording_verifies_and_every_kind_of_tampering_is_named() {
    let sb = Sandbox::new();
    let trace = record_example(&sb, &[]);
    let original = lines_of(&trace);
    let n = original.len() as u64;
    assert!(n > 10, "{n} lines recorded");

    let v = verify(&sb, &trace, &[]);
    assert_eq!(v.code, Some(0), "{:?}", v.rules);
    assert_eq!(v.seal["status"], "intact");
    assert_eq!(v.seal["sealed"], n);
    assert_eq!(v.seal["verified"], n);
    assert_eq!(v.seal["closed"], true);
    assert!(v.rules.is_empty(), "{:?}", v.rules);

    type Tamper = fn(&mut Vec<String>);
    let cases: [(&str, Tamper, &str, u64); 7] = [
        (
            "changed",
            |l| l[4] = l[4].replacen(':', ": ", 1),
            "changed",
            5,
        ),
        ("removed", |l| drop(l.remove(4)), "removed", 5),
        (
            "inserted",
            |l| {
                l.insert(
                    4,
                    r#"{"t":"2026-01-01T00:00:00.000Z","dir":"event","kind":"x"}"#.into(),
                )
            },
            "inserted",
            5,
        ),
        ("reordered", |l| l.swap(4, 6), "reordered", 5),
        ("truncated", |l| l.truncate(l.len() - 3), "truncated", n - 3),
        (
            "appended",
            |l| l.push(r#"{"t":"2026-01-01T00:00:00.000Z","dir":"event","kind":"x"}"#.into()),
            "appended",
            n + 1,
        ),
        // Cut inside the last line, as a disk that filled up would leave it.
        (
            "truncated inside a line",
            |l| {
                let last = l.len() - 1;
                l[last].truncate(10);
            },
            "truncated",
            n,
        ),
    ];
    for (what, tamper, kind, line) in cases {
        let mut lines = original.clone();
        tamper(&mut lines);
        if what == "truncated inside a line" {
            // No LF after the cut.
            let mut text: String = lines.iter().map(|l| format!("{l}\n")).collect();
            text.pop();
            std::fs::write(&trace, text).unwrap();
        } else {
            write_lines(&trace, &lines);
        }
        let v = verify(&sb, &trace, &[]);
        assert_eq!(v.code, Some(1), "{what}: {:?}", v.rules);
        assert_eq!(v.seal["status"], "tampered", "{what}");
        assert_eq!(v.first(), (kind, Some(line)), "{what}: {}", v.seal);
        assert!(
            v.rules.contains(&format!("seal-{kind}")),
            "{what}: {:?}",
            v.rules
        );
    }
    write_lines(&trace, &original);
    assert_eq!(verify(&sb, &trace, &[]).code, Some(0));

    // The seal itself edited: a digest rewritten to match an edited line.
    let seal = seal_of(&trace);
    let records = lines_of(&seal);
    let mut edited = records.clone();
    let r: Value = serde_json::from_str(&edited[3]).unwrap();
    let d = r["sha256"].as_str().unwrap();
    let flipped = format!("{}{}", if d.starts_with('0') { "1" } else { "0" }, &d[1..]);
    edited[3] = edited[3].replace(d, &flipped);
    write_lines(&seal, &edited);
    let v = verify(&sb, &trace, &[]);
    assert_eq!(v.code, Some(1));
    assert_eq!(v.seal["first"]["kind"], "seal-edited");
    assert_eq!(v.seal["first"]["line"], 4, "the sidecar's line: {}", v.seal);
    assert!(v.rules.contains(&"seal-edited".to_owned()), "{:?}", v.rules);
}

#[test]
fn the_verify_failure_reads_as_a_report() {
    let sb = Sandbox::new();
    let trace = sealed_trace(&sb, "t.jsonl");
    let out = sb.reel(&["seal", "t.jsonl"]);
    assert_eq!(out.status.code(), Some(0));
    let said = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        said,
        "t.jsonl: sealed 8 lines into t.jsonl.seal (sha256 chain)\n"
    );
    let mut lines = lines_of(&trace);
    lines[3] = lines[3].replace("\"a\"", "\"A\"");
    write_lines(&trace, &lines);
    let out = sb.reel(&["check", "--verify", "t.jsonl"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "t.jsonl:4: error[seal-changed]: this line was changed: it is not sealed line 4\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "t.jsonl: seal FAILED: 3 of 8 sealed lines verify, closed (t.jsonl.seal, sha256 chain)\n"
        ),
        "{text}"
    );
    assert!(
        text.ends_with("t.jsonl: FAIL: 1 error, 0 warnings, 0 info in 8 lines (1 session)\n"),
        "{text}"
    );
}

#[test]
fn seal_never_overwrites_a_seal_unless_forced_and_names_what_it_cannot_read() {
    let sb = Sandbox::new();
    sealed_trace(&sb, "t.jsonl");
    assert_eq!(sb.reel(&["seal", "t.jsonl"]).status.code(), Some(0));
    let again = sb.reel(&["seal", "t.jsonl"]);
    assert_eq!(again.status.code(), Some(73));
    let err = String::from_utf8(again.stderr).unwrap();
    assert!(
        err.contains("a seal exists already") && err.contains("--force"),
        "{err}"
    );
    let forced = sb.reel(&["seal", "--force", "--json", "t.jsonl"]);
    assert_eq!(forced.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&forced.stdout).unwrap();
    assert_eq!(doc["schema"], "reel.sealed/1");
    assert_eq!(doc["sealed"][0]["lines"], 8);
    assert_eq!(doc["sealed"][0]["seal"], "t.jsonl.seal");

    // Nothing to seal: 66.
    let gone = sb.reel(&["seal", "gone.jsonl"]);
    assert_eq!(gone.status.code(), Some(66));
    std::fs::write(sb.path("text.jsonl"), "not a trace\n").unwrap();
    let text = sb.reel(&["seal", "text.jsonl"]);
    assert_eq!(text.status.code(), Some(66));
    assert!(!sb.path("text.jsonl.seal").exists());

    // No seal to verify against: 66, and the format check is still reported.
    sealed_trace(&sb, "u.jsonl");
    let out = sb.reel(&["check", "--verify", "u.jsonl"]);
    assert_eq!(out.status.code(), Some(66));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("u.jsonl.seal: no seal"), "{err}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("u.jsonl: seal unreadable: "), "{stdout}");
}

#[test]
fn a_keyed_seal_is_checked_with_its_key() {
    let sb = Sandbox::new();
    let trace = sealed_trace(&sb, "t.jsonl");
    std::fs::write(sb.path("key"), "a secret of more than 16 bytes\n").unwrap();
    std::fs::write(sb.path("other"), "another secret, 16+ bytes\n").unwrap();
    let out = sb.reel(&["seal", "--key-file", "key", "t.jsonl"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains("hmac-sha256 chain")
    );

    let v = verify(&sb, &trace, &["--key-file", "key"]);
    assert_eq!(v.code, Some(0), "{:?}", v.rules);
    assert_eq!(v.seal["authenticated"], true);
    // Without the key: the lines are checked, who sealed them is not (an info).
    let v = verify(&sb, &trace, &[]);
    assert_eq!(v.code, Some(0));
    assert_eq!(v.seal["authenticated"], false);
    assert_eq!(v.rules, ["seal-unauthenticated"]);
    // Another key.
    let v = verify(&sb, &trace, &["--key-file", "other"]);
    assert_eq!((v.code, v.first().0), (Some(1), "wrong-key"));

    // A forger edits a line and re-seals without the key: caught with it.
    let mut lines = lines_of(&trace);
    lines[3] = lines[3].replace("\"a\"", "\"forged\"");
    write_lines(&trace, &lines);
    assert_eq!(
        sb.reel(&["seal", "--force", "t.jsonl"]).status.code(),
        Some(0)
    );
    let v = verify(&sb, &trace, &["--key-file", "key"]);
    assert_eq!((v.code, v.first().0), (Some(1), "not-keyed"));
    // ...though without a key, a fresh unkeyed seal is all a verifier sees.
    assert_eq!(verify(&sb, &trace, &[]).code, Some(0));

    // Key files: too short is a usage error, unreadable an unreadable input.
    std::fs::write(sb.path("short"), "short\n").unwrap();
    let short = sb.reel(&["seal", "--force", "--key-file", "short", "t.jsonl"]);
    assert_eq!(short.status.code(), Some(64));
    assert!(
        String::from_utf8(short.stderr)
            .unwrap()
            .contains("at least 16")
    );
    let missing = sb.reel(&["check", "--verify", "--key-file", "nope", "t.jsonl"]);
    assert_eq!(missing.status.code(), Some(66));
    // --key-file goes with --verify and --seal.
    assert_eq!(
        sb.reel(&["check", "--key-file", "key", "t.jsonl"])
            .status
            .code(),
        Some(64)
    );
    let rec = sb.reel(&["rec", "--key-file", "key", "--dir", "d", "--", "true"]);
    assert_eq!(rec.status.code(), Some(64));
    assert!(!sb.path("d").exists(), "no trace for a usage error");
}

/// A seal made by `reel seal` is closed when made and commits to its line count: cut at
/// the tail together with the trace's last lines and its close record, it is an edited
/// seal (an error), not an open one (a warning) — keyed or not.
#[test]
fn a_finished_seal_cut_at_the_tail_with_its_close_is_caught() {
    let sb = Sandbox::new();
    let trace = sealed_trace(&sb, "t.jsonl");
    std::fs::write(sb.path("key"), "a secret of more than 16 bytes\n").unwrap();
    for keyed in [true, false] {
        write_lines(&trace, &lines_of(&sealed_trace(&sb, "fresh.jsonl")));
        let mut args = vec!["seal", "--force"];
        if keyed {
            args.extend(["--key-file", "key"]);
        }
        args.push("t.jsonl");
        assert_eq!(sb.reel(&args).status.code(), Some(0));
        let seal = seal_of(&trace);
        let head = lines_of(&seal)[0].clone();
        assert!(
            head.contains("\"lines\":"),
            "the head commits to the count: {head}"
        );
        // The attacker drops the trace's last two lines, the seal's records of them
        // and its close record.
        let mut lines = lines_of(&trace);
        lines.truncate(lines.len() - 2);
        write_lines(&trace, &lines);
        let mut records = lines_of(&seal);
        records.truncate(records.len() - 3);
        write_lines(&seal, &records);
        let key: &[&str] = if keyed { &["--key-file", "key"] } else { &[] };
        let v = verify(&sb, &trace, key);
        assert_eq!(v.code, Some(1), "keyed {keyed}: {:?}", v.rules);
        assert_eq!(v.first().0, "seal-edited", "{:?}", v.rules);
    }
}

#[test]
fn a_keyed_recording_verifies_with_its_key() {
    let sb = Sandbox::new();
    std::fs::write(sb.path("key"), "a secret of more than 16 bytes").unwrap();
    let key = sb.path("key").display().to_string();
    let trace = record_example(&sb, &["--key-file", &key]);
    let v = verify(&sb, &trace, &["--key-file", &key]);
    assert_eq!(v.code, Some(0), "{:?}", v.rules);
    assert_eq!(v.seal["chain"], "hmac-sha256");
    assert_eq!(v.seal["authenticated"], true);
}

#[test]
fn a_recorder_killed_mid_stream_leaves_a_seal_whose_lines_verify() {
    let sb = Sandbox::new();
    let dir = sb.path("traces");
    let mut child = reel()
        .args(["rec", "--seal", "--dir"])
        .arg(&dir)
        .args(["--", "cat"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start reel rec");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let writer = std::thread::spawn(move || {
        let pad = "x".repeat(500);
        for i in 0.. {
            let line = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/call\",\"params\":{{\"pad\":\"{pad}\"}}}}\n"
            );
            if stdin.write_all(line.as_bytes()).is_err() {
                break;
            }
        }
    });
    let reader = std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = stdout.read_to_end(&mut sink);
    });
    let seal_grew = eventually(Duration::from_secs(60), || {
        std::fs::read_dir(&dir)
            .ok()
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .filter(|e| e.path().extension().is_some_and(|x| x == "seal"))
            .any(|e| e.metadata().is_ok_and(|m| m.len() > 256 * 1024))
    });
    assert!(seal_grew, "the seal never grew");
    child.kill().unwrap(); // SIGKILL, mid-stream
    wait_limited(&mut child, Duration::from_secs(30)).expect("reel died");
    let _ = writer.join();
    let _ = reader.join();

    let trace = the_trace(&dir);
    let v = verify(&Sandbox::new(), &trace, &[]);
    // An open seal is a warning, not tampering.
    assert_eq!(v.code, Some(0), "{:?} {}", v.rules, v.seal);
    assert_eq!(v.seal["status"], "open", "{}", v.seal);
    assert_eq!(v.seal["closed"], false);
    assert!(v.seal.get("first").is_none(), "{}", v.seal);
    let sealed = v.seal["sealed"].as_u64().unwrap();
    assert!(sealed > 100, "{sealed} lines sealed");
    assert_eq!(v.seal["verified"], sealed);
    assert!(v.rules.contains(&"seal-open".to_owned()), "{:?}", v.rules);
    // Whatever followed the last sealed line is unsealed, not tampered.
    let lines = std::fs::read(&trace).unwrap();
    let total = lines
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count() as u64;
    assert_eq!(v.seal["unsealed"].as_u64().unwrap(), total - sealed);

    // A line changed inside the sealed part is still caught.
    let mut text = lines_of(&trace);
    text[10] = text[10].replacen(':', ": ", 1);
    write_lines(&trace, &text);
    let v = verify(&Sandbox::new(), &trace, &[]);
    assert_eq!((v.code, v.first()), (Some(1), ("changed", Some(11))));
}

/// A scripted Streamable HTTP upstream: answers every POSTed JSON-RPC request with an
/// empty result for its id, on a connection of its own.
fn upstream() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            std::thread::spawn(move || answer(conn));
        }
    });
    addr
}

fn answer(conn: std::net::TcpStream) {
    let mut r = std::io::BufReader::new(conn);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; length];
    if r.read_exact(&mut body).is_err() {
        return;
    }
    let id = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v.get("id").cloned())
        .unwrap_or(Value::Null);
    let reply = json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string();
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
        reply.len()
    );
    let _ = r.get_mut().write_all(response.as_bytes());
}

#[test]
fn an_http_recording_is_sealed_on_the_same_path() {
    let sb = Sandbox::new();
    let up = upstream();
    let dir = sb.path("traces");
    let mut cmd = reel();
    cmd.args(["rec", "--seal", "--dir"])
        .arg(&dir)
        .args(["--url", &format!("http://{up}/mcp")]);
    let mut rec = spawn_listening(cmd);
    let addr = rec
        .url
        .strip_prefix("http://")
        .and_then(|r| r.split('/').next())
        .expect("an http:// URL")
        .to_owned();
    for id in 1..=3 {
        let body = rpc::request(json!(id), "tools/list", json!({})).to_string();
        let mut r = write_request(
            &addr,
            "POST",
            "/mcp",
            &[
                ("host", &addr),
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
            ],
            body.as_bytes(),
        );
        let (status, headers) = read_status_and_headers(&mut r);
        assert_eq!(status, 200);
        let chunked = headers
            .iter()
            .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
        let got = if chunked {
            read_chunked(&mut r).expect("a body")
        } else {
            let n: usize = headers
                .iter()
                .find(|(k, _)| k == "content-length")
                .and_then(|(_, v)| v.parse().ok())
                .expect("a length");
            let mut b = vec![0; n];
            r.read_exact(&mut b).unwrap();
            b
        };
        assert!(String::from_utf8_lossy(&got).contains(&format!("\"id\":{id}")));
    }
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(rec.child.id().to_string())
        .status();
    let status = wait_limited(&mut rec.child, Duration::from_secs(60)).expect("reel stopped");
    assert_eq!(status.code(), Some(0), "{}", rec.stderr.lock().unwrap());
    assert!(
        rec.stderr.lock().unwrap().contains("reel: sealing to "),
        "{}",
        rec.stderr.lock().unwrap()
    );

    let trace = the_trace(&dir);
    let v = verify(&sb, &trace, &[]);
    assert_eq!(v.code, Some(0), "{:?}", v.rules);
    assert_eq!(v.seal["status"], "intact");
    // meta, three requests, three answers, end.
    assert_eq!(v.seal["verified"], 8, "{}", v.seal);
    let mut lines = lines_of(&trace);
    lines.swap(1, 2);
    write_lines(&trace, &lines);
    assert_eq!(verify(&sb, &trace, &[]).first(), ("reordered", Some(2)));
}

#[test]
fn help_documents_the_seal_and_its_exit_codes() {
    let out = reel().args(["seal", "--help"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "reel.seal/1",
        "threat model",
        "--key-file",
        "64",
        "66",
        "73",
    ] {
        assert!(text.contains(needle), "{needle} missing from:\n{text}");
    }
    let out = reel().args(["check", "--help"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in ["--verify", "seal-changed", "seal-open", "unsealed"] {
        assert!(text.contains(needle), "{needle} missing from check --help");
    }
    let out = reel().args(["rec", "--help"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("--seal") && text.contains("TRACE.seal"));
    let out = reel().arg("--help").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("seal ")),
        "{text}"
    );
}
