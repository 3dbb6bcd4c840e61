//! agent-vcr 0.1.0 against reel. agent-vcr cannot stand in front of a live client: it
//! prints a banner on the stdout it shares with the protocol, and reads its client with
//! a 4096-byte buffered read, so nothing reaches the server until 4 KiB or the end of
//! input arrive (the first test pins both). What it can record is a client's messages
//! each padded to 4 KiB: the Python SDK client's own messages, taken from a `reel rec`
//! of its session, are played to `agent-vcr record` in its order, and the `.vcr` it
//! writes imports, checks, counts, and replays to that client. It drops the client's notifications and
//! a 2026-07-28 session (no `initialize`) entirely; the tests say so.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use super::mcp_vcr::{client, command, imports_checks_counts_and_replays, methods, server};
use super::venv_bin;
use crate::harness::play_http_support::{only_trace, run, trace_lines};
use crate::harness::reel;

/// agent-vcr's CLI, run so that Ctrl-C reaches it: it stops on Python's
/// KeyboardInterrupt, which Python does not raise when SIGINT was ignored when it
/// started (as it is for a job a non-interactive shell puts in the background, which a
/// CI runner may be).
const AGENT_VCR_MAIN: &str = "import signal, sys; \
    signal.signal(signal.SIGINT, signal.default_int_handler); \
    from agent_vcr.cli import main; sys.argv[0] = 'agent-vcr'; sys.exit(main())";

/// `agent-vcr record` of the demo server to `out`, its stdin and stdout piped, and a
/// channel of its stdout lines.
fn start_record(out: &Path) -> (Child, mpsc::Receiver<String>) {
    let demo = server("demo");
    let mut child = Command::new(venv_bin("agent-vcr-venv", "python"))
        .args(["-c", AGENT_VCR_MAIN])
        .args(["record", "--transport", "stdio", "--server-command"])
        .arg(&demo[0])
        .arg("--server-args")
        .arg(&demo[1])
        .arg("-o")
        .arg(out)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start agent-vcr");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// The JSON-RPC answers (lines with an `id` and no `method`) among the next lines,
/// until `n` came or `wait` passed without a line.
fn answers(rx: &mpsc::Receiver<String>, n: usize, wait: Duration) -> Vec<Value> {
    let mut got = Vec::new();
    while got.len() < n {
        let Ok(line) = rx.recv_timeout(wait) else {
            break;
        };
        if let Ok(v) = serde_json::from_str::<Value>(&line)
            && v.get("id").is_some()
            && v.get("method").is_none()
        {
            got.push(v);
        }
    }
    got
}

/// Stops the recorder as its user does (Ctrl-C), which makes it write its file.
fn interrupt(mut child: Child) {
    let (code, _, err) = run({
        let mut c = Command::new("kill");
        c.args(["-INT", &child.id().to_string()]);
        c
    });
    assert_eq!(code, Some(0), "{err}");
    for _ in 0..300 {
        if child.try_wait().expect("wait").is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("agent-vcr did not stop on SIGINT");
}

/// The client's messages of a `reel rec` session of the demo client in `mode`, and the
/// trace.
fn client_messages(tmp: &Path, mode: &str) -> (Vec<String>, PathBuf) {
    let traces = tmp.join(format!("rec-{mode}"));
    let rec = command(
        &[
            env!("CARGO_BIN_EXE_reel").as_ref(),
            "rec".as_ref(),
            "--dir".as_ref(),
            traces.as_os_str(),
            "--".as_ref(),
        ],
        &server("demo"),
    );
    client(tmp, "demo", mode, &rec, &[]);
    let trace = only_trace(&traces);
    let lines = trace_lines(&trace)
        .into_iter()
        .filter(|l| l["dir"] == "in")
        .map(|l| l["raw"].to_string())
        .collect();
    (lines, trace)
}

/// agent-vcr's read of its client: a message passes once this many bytes arrived.
const READ_SIZE: usize = 4096;

/// `line` padded with spaces (which agent-vcr strips) to a multiple of [`READ_SIZE`]
/// bytes with its line end, so agent-vcr forwards it at once.
fn padded(line: &str) -> String {
    let size = (line.len() + 1).div_ceil(READ_SIZE) * READ_SIZE;
    format!("{line}{}\n", " ".repeat(size - line.len() - 1))
}

/// Plays the client's `lines` to `agent-vcr record` one by one as the client sent
/// them, each request's answer awaited before the next line, then stops it: the file
/// it wrote.
fn record_fed(tmp: &Path, name: &str, lines: &[String]) -> PathBuf {
    let out = tmp.join(name);
    let (mut child, rx) = start_record(&out);
    let mut stdin = child.stdin.take().expect("stdin");
    for l in lines {
        stdin
            .write_all(padded(l).as_bytes())
            .expect("feed agent-vcr");
        stdin.flush().expect("feed agent-vcr");
        let v: Value = serde_json::from_str(l).expect("a message");
        if v.get("method").is_none() || v.get("id").is_none() {
            continue;
        }
        let got = answers(&rx, 1, Duration::from_secs(30));
        assert_eq!(
            got.first().map(|a| &a["id"]),
            Some(&v["id"]),
            "the server answered {l} through agent-vcr"
        );
    }
    interrupt(child);
    assert!(out.exists(), "agent-vcr wrote {}", out.display());
    out
}

#[test]
fn agent_vcr_corrupts_stdout_and_holds_a_live_clients_messages_back() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("live.vcr");
    let (mut child, rx) = start_record(&out);
    let first = rx.recv_timeout(Duration::from_secs(30)).expect("a line");
    assert_eq!(
        first, "Starting recording",
        "a banner on the protocol's stdout"
    );
    let mut stdin = child.stdin.take().expect("stdin");
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    writeln!(stdin, "{init}").unwrap();
    stdin.flush().unwrap();
    assert!(
        answers(&rx, 1, Duration::from_secs(4)).is_empty(),
        "no answer while the client waits"
    );
    // The rest of a 4 KiB read lets it through.
    let rest = padded(init).len() - init.len() - 1;
    write!(stdin, "{}", " ".repeat(rest)).unwrap();
    stdin.flush().unwrap();
    let got = answers(&rx, 1, Duration::from_secs(30));
    assert_eq!(got.len(), 1, "the answer comes once 4 KiB arrived");
    assert_eq!(got[0]["id"], 1);
    drop(stdin);
    interrupt(child);
}

#[test]
fn a_session_agent_vcr_recorded_imports_checks_counts_and_replays() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let want = client(tmp, "demo", "legacy", &server("demo"), &[]);
    let (sent, trace) = client_messages(tmp, "legacy");
    let src = record_fed(tmp, "demo.vcr", &sent);
    let lines = imports_checks_counts_and_replays(
        &src,
        ("demo", "legacy"),
        &want,
        &["add", "count_down", "shout"],
        &[],
    );
    assert_eq!(lines[0]["source"], "agent-vcr");
    assert_eq!(lines[0]["transport"], "stdio");
    let imported = &lines[0]["imported"];
    assert!(
        imported["warnings"].to_string().contains("no UTC offset"),
        "{imported}"
    );
    assert_eq!(
        imported["server_command"][1],
        server("demo")[1].to_string_lossy().as_ref()
    );
    // What agent-vcr loses: the client's notifications.
    let recorded = methods(&trace_lines(&trace), "in");
    assert!(recorded.iter().any(|m| m == "notifications/initialized"));
    let kept = methods(&lines, "in");
    assert!(
        !kept.iter().any(|m| m.starts_with("notifications/")),
        "{kept:?}"
    );
    assert_eq!(kept.len(), recorded.len() - 1, "every request: {kept:?}");
    // The server's notifications come before the answer they were buffered for.
    let out = methods(&lines, "out");
    let progress = out
        .iter()
        .filter(|m| *m == "notifications/progress")
        .count();
    assert_eq!(progress, 3, "{out:?}");
}

#[test]
fn a_2026_07_28_session_leaves_agent_vcr_nothing_to_import() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let (sent, _) = client_messages(tmp, "auto");
    assert!(sent[0].contains("server/discover"), "{}", sent[0]);
    let src = record_fed(tmp, "modern.vcr", &sent);
    // agent-vcr starts its session at an initialize answer: without one it writes a
    // made-up handshake and no interactions.
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&src).unwrap()).unwrap();
    assert_eq!(doc["session"]["interactions"], serde_json::json!([]));
    let mut c = reel();
    c.arg("import")
        .arg("-o")
        .arg(tmp.join("modern.jsonl"))
        .arg(&src);
    let (code, _, err) = run(c);
    assert_ne!(code, Some(0), "{err}");
    assert!(err.contains("empty: no message in it"), "{err}");
}
