//! Real MCP peers through `reel rec`, in both protocol eras:
//! - the Python `mcp` 2.3 client against `@modelcontextprotocol/server-everything`
//!   (it probes `server/discover`, is refused, falls back to `initialize`; tools with
//!   progress, resources, prompts, and sampling/elicitation/roots requests from the
//!   server);
//! - the same client against a Python SDK `MCPServer` speaking 2026-07-28.
//!
//! Each session runs twice, directly and through reel (with a byte tap on each side of
//! reel): the client must print the same results, the client and the server must have
//! seen identical bytes, and the trace must hold every line as sent with every request
//! answered.

use std::path::Path;
use std::process::Command;

use reel_trace::Dir;
use reel_trace::jsonrpc::{Envelope, Paired, Pairer};

use crate::harness::rec_support::{Entry, Peers, Session, Trace, run};

/// Runs the client script directly against `server`, then with
/// `tee A -- reel rec -- tee B -- server` in between, and checks everything.
fn interop(suite: &str, mode: &str, server: &[&str]) {
    let peers = Peers::get();
    let client = Peers::script("client.py");
    let tee = Peers::script("tee.py");
    let s = Session::new();

    let client_cmd = |server: &[&str]| {
        let mut c = Command::new(&peers.python);
        c.arg(&client)
            .args([suite, "--mode", mode, "--"])
            .args(server);
        c.current_dir(s.sb.dir());
        c
    };
    let direct = run(client_cmd(server), Vec::new());
    assert_eq!(
        direct.code(),
        Some(0),
        "direct run failed: {}",
        direct.stderr_text()
    );

    let py = peers.python.to_str().unwrap();
    let tee = tee.to_str().unwrap();
    let a = s.sb.dir().join("client-side");
    let b = s.sb.dir().join("server-side");
    let dir = s.dir();
    let mut through: Vec<&str> = vec![py, tee, a.to_str().unwrap(), "--"];
    through.extend([
        env!("CARGO_BIN_EXE_reel"),
        "rec",
        "--dir",
        dir.to_str().unwrap(),
        "--",
    ]);
    through.extend([py, tee, b.to_str().unwrap(), "--"]);
    through.extend(server);
    let recorded = run(client_cmd(&through), Vec::new());
    assert_eq!(
        recorded.code(),
        Some(0),
        "run through reel failed: {}",
        recorded.stderr_text()
    );

    let results = |out: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(out)
            .lines()
            .map(str::to_owned)
            .collect()
    };
    let want = results(&direct.stdout);
    assert_eq!(want.last().map(String::as_str), Some("ALL OK"), "{want:?}");
    assert_eq!(
        results(&recorded.stdout),
        want,
        "results differ through reel"
    );

    let read = |p: &Path, ext: &str| std::fs::read(p.with_extension(ext)).unwrap();
    let (client_sent, server_got) = (read(&a, "c2s"), read(&b, "c2s"));
    let (server_sent, client_got) = (read(&b, "s2c"), read(&a, "s2c"));
    assert!(!client_sent.is_empty() && !server_sent.is_empty());
    assert!(
        client_sent == server_got,
        "the server got other bytes than the client sent"
    );
    assert!(
        server_sent == client_got,
        "the client got other bytes than the server sent"
    );

    let trace = s.trace();
    assert_lines_recorded(&trace, "in", &client_sent);
    assert_lines_recorded(&trace, "out", &server_sent);
    assert_every_request_answered(&trace);
    assert_eq!(trace.end().exit_code, Some(0));
    check_passes(&s.trace_path());
}

/// The trace holds every wire line of one direction as a message line, in order, with
/// the same bytes (or the same line with secrets redacted).
fn assert_lines_recorded(trace: &crate::harness::rec_support::Trace, dir: &str, wire: &[u8]) {
    let lines: Vec<&[u8]> = wire
        .strip_suffix(b"\n")
        .unwrap_or(wire)
        .split(|&b| b == b'\n')
        .collect();
    let recorded = trace.side(dir);
    assert_eq!(
        recorded.len(),
        lines.len(),
        "{dir}: lines on the wire vs in the trace"
    );
    for (i, (entry, line)) in recorded.iter().zip(&lines).enumerate() {
        let Entry::Message { raw, .. } = entry else {
            panic!("{dir} line {i} is not a message: {entry:?}");
        };
        let line = std::str::from_utf8(line).unwrap();
        assert!(
            raw == line || raw.contains("[REDACTED]"),
            "{dir} line {i} differs:\n wire: {line}\ntrace: {raw}"
        );
    }
}

fn assert_every_request_answered(trace: &crate::harness::rec_support::Trace) {
    let mut pairer = Pairer::new();
    let mut requests = 0;
    for l in &trace.lines {
        let Entry::Message { dir, raw, .. } = l else {
            continue;
        };
        let dir = if dir == "in" { Dir::In } else { Dir::Out };
        let env = Envelope::parse(raw).expect("a JSON-RPC object");
        match pairer.offer(None, dir, &env, || raw.clone()) {
            Paired::Opened => requests += 1,
            Paired::DuplicatePending(r) => panic!("id reused while pending: {r}"),
            Paired::Orphan => panic!("a response without its request: {raw}"),
            Paired::Closed(_) | Paired::Ignored => {}
        }
    }
    assert!(requests > 5, "only {requests} requests");
    let pending: Vec<_> = pairer.pending().map(|(_, r)| r.clone()).collect();
    assert!(pending.is_empty(), "unanswered: {pending:?}");
}

/// `reel check` finds nothing at all: no error, no unanswered request, no orphan.
fn check_passes(path: &Path) {
    let (code, rules) = crate::harness::rec_support::check(path);
    assert_eq!((code, rules), (Some(0), Vec::<String>::new()), "reel check");
}

#[test]
fn python_client_and_server_everything_probe_then_fall_back_to_initialize() {
    let peers = Peers::get();
    let everything = peers.everything.to_str().unwrap().to_owned();
    interop("everything", "auto", &["node", &everything, "stdio"]);
}

#[test]
fn python_client_and_python_server_speak_2026_07_28() {
    let peers = Peers::get();
    let python = peers.python.to_str().unwrap().to_owned();
    let server = Peers::script("demo_server.py");
    interop("demo", "auto", &[&python, server.to_str().unwrap()]);
}

/// Without --name, a run is named after its server, not after what the server is told:
/// server-everything started as `node …/dist/index.js stdio`, a Python `server.py stdio`
/// and server-filesystem serving `/tmp` each get their own name.
#[test]
fn default_labels_name_the_server_not_its_transport_or_path() {
    let peers = Peers::get();
    let everything = peers.everything.to_str().unwrap().to_owned();
    let filesystem = peers
        .everything
        .join("../../../server-filesystem/dist/index.js")
        .to_str()
        .unwrap()
        .to_owned();
    let s = Session::new();
    let script = s.sb.dir().join("server.py");
    std::fs::write(&script, "import sys\nsys.stdin.read()\n").unwrap();
    let py = peers.python.to_str().unwrap().to_owned();
    let tmp = std::env::temp_dir().to_str().unwrap().to_owned();
    for (server, label) in [
        (
            vec!["node", everything.as_str(), "stdio"],
            "server-everything",
        ),
        (vec![py.as_str(), "server.py", "stdio"], "server"),
        (
            vec!["node", filesystem.as_str(), tmp.as_str()],
            "server-filesystem",
        ),
    ] {
        let out = run(s.command(&[], &server), Vec::new());
        assert!(out.code().is_some(), "{server:?}: {}", out.stderr_text());
        let trace = s.trace_path();
        let meta = Trace::read(&trace);
        assert_eq!(meta.meta().label.as_deref(), Some(label), "{server:?}");
        assert!(
            trace
                .to_string_lossy()
                .ends_with(&format!("-{label}.jsonl")),
            "{}",
            trace.display()
        );
        std::fs::remove_file(&trace).unwrap();
    }
}
