//! `reel play --listen` and `reel verify --url` with real MCP peers over HTTP. Each
//! client is recorded through `reel rec --url` in front of a live server, then run
//! unchanged against `reel play --listen` of that recording: it must print the same
//! results (checksums of every result, progress values and the server requests it was
//! asked). Covered: the Python `mcp` 2.3 client against `server-everything` in
//! `streamableHttp` mode (legacy era behind a refused discover probe; progress,
//! sampling, elicitation, roots) and against a Python SDK `MCPServer` (2026-07-28);
//! the MCP Inspector CLI and mcporter (two sessions of one recording, served in order);
//! server-everything's legacy HTTP+SSE mode; a stdio recording served over HTTP and an
//! HTTP recording served over stdio; `reel verify --url` against the live server (same)
//! and against a changed one (the drift, exactly); the TypeScript SDK client's progress
//! callbacks, every one of them, replay after replay; the Python client's concurrent
//! calls, after which it lists tools more often than it did live.
//!
//! Peers come from `$REEL_PEERS`, else `<workspace>/.peers` (`cargo xtask peers`); when
//! they are missing the tests fail and say so. Every process is killed on drop.

use crate::harness::play_http_support as support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use support::*;

const EVERYTHING: &str = "@modelcontextprotocol/server-everything/dist/index.js";
const INSPECTOR: &str = "@modelcontextprotocol/inspector-cli/build/index.js";
const MCPORTER: &str = "mcporter/dist/cli.js";

fn everything(peers: &Peers, mode: &str) -> (Server, String) {
    let port = free_port();
    let mut c = Command::new("node");
    c.arg(peers.node_module(EVERYTHING))
        .arg(mode)
        .env("PORT", port.to_string());
    let path = if mode == "sse" { "/sse" } else { "/mcp" };
    (
        Server::start(c, port),
        format!("http://127.0.0.1:{port}{path}"),
    )
}

fn demo_server(peers: &Peers, flags: &[&str]) -> (Server, String) {
    let port = free_port();
    let mut c = Command::new(&peers.python);
    c.arg(Peers::script("play_http_server.py"))
        .arg(port.to_string())
        .args(flags);
    (
        Server::start(c, port),
        format!("http://127.0.0.1:{port}/mcp"),
    )
}

/// `reel rec --url UPSTREAM` into `dir`, listening on a free port.
fn recorder(upstream: &str, dir: &Path) -> Player {
    let mut c = reel();
    c.args(["rec", "--url", upstream, "--listen", "127.0.0.1:0", "--dir"])
        .arg(dir);
    Player::listening(c)
}

/// The Python SDK client script over HTTP: its result lines, which must end with ALL OK.
fn python_http(peers: &Peers, suite: &str, url: &str) -> Vec<String> {
    let mut c = Command::new(&peers.python);
    c.arg(Peers::script("http_client.py"))
        .args([suite, "--mode", "auto", url]);
    lines_ok(c, url)
}

/// The same script over stdio, its server command `server`.
fn python_stdio(peers: &Peers, suite: &str, server: &[&str]) -> Vec<String> {
    let mut c = Command::new(&peers.python);
    c.arg(Peers::script("client.py"))
        .args([suite, "--mode", "auto", "--"])
        .args(server);
    lines_ok(c, &server.join(" "))
}

fn lines_ok(c: Command, against: &str) -> Vec<String> {
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "the client failed against {against}: {err}");
    let lines: Vec<String> = out.lines().map(str::to_owned).collect();
    assert_eq!(
        lines.last().map(String::as_str),
        Some("ALL OK"),
        "{lines:?}"
    );
    assert!(lines.len() > 5, "{lines:?}");
    lines
}

/// A Node CLI peer, run from `node_modules` (the Inspector CLI resolves its own
/// package.json against the working directory); its stdout.
fn node_cli(peers: &Peers, script: &str, args: &[&str], home: &Path) -> String {
    let mut c = Command::new("node");
    c.arg(peers.node_module(script))
        .args(args)
        .current_dir(&peers.node_modules)
        .env("HOME", home);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "{script} {args:?} failed: {err}");
    out
}

/// Stops a tape server that answered everything: exit 0, no miss, no drift.
fn assert_clean(p: Player) -> String {
    let s = p.stop();
    assert_eq!(s.code(), Some(0), "{}", s.stderr);
    assert!(
        s.stderr.contains(" 0 missed, 0 client drift"),
        "{}",
        s.stderr
    );
    s.stderr
}

fn verify_url(trace: &Path, url: &str) -> (Option<i32>, String, String) {
    let mut c = reel();
    c.arg("verify")
        .arg(trace)
        .args(["--url", url, "--no-record", "--json"]);
    run(c)
}

#[test]
fn python_client_and_server_everything_over_http_replay_identically() {
    let peers = Peers::get();
    let sb = Sandbox::new();
    let (_server, url) = everything(&peers, "streamableHttp");
    let dir = sb.path("traces");
    let rec = recorder(&url, &dir);
    let recorded = python_http(&peers, "everything", &rec.url);
    assert_eq!(rec.stop().code(), Some(0));
    let trace = only_trace(&dir);

    let play = Player::start(&trace, &[]);
    assert_eq!(play.path, "/mcp");
    let replayed = python_http(&peers, "everything", &play.url);
    assert_eq!(replayed, recorded);
    let summary = assert_clean(play);
    assert!(summary.contains("1 live session served"), "{summary}");

    // The recording as a regression test of the live server: the same.
    let (code, out, err) = verify_url(&trace, &url);
    assert_eq!(code, Some(0), "{out}\n{err}");
    let report: Value = serde_json::from_str(&out).expect("JSON report");
    assert_eq!(report["serverRequests"]["asked"], 3, "{out}");
    assert_eq!(report["serverRequests"]["answeredFromTape"], 3, "{out}");

    // And the HTTP recording served over stdio: the client gets the same results.
    let reel = env!("CARGO_BIN_EXE_reel");
    let trace = trace.to_str().expect("UTF-8 path");
    let over_stdio = python_stdio(&peers, "everything", &[reel, "play", trace]);
    assert_eq!(over_stdio, recorded);
}

#[test]
fn python_client_and_a_2026_07_28_server_over_http_replay_identically_and_verify_finds_a_regression()
 {
    let peers = Peers::get();
    let sb = Sandbox::new();
    let (_server, url) = demo_server(&peers, &[]);
    let dir = sb.path("traces");
    let rec = recorder(&url, &dir);
    let recorded = python_http(&peers, "demo", &rec.url);
    assert_eq!(rec.stop().code(), Some(0));
    let trace = only_trace(&dir);
    let lines = trace_lines(&trace);
    assert!(
        lines
            .iter()
            .any(|l| l["http"]["headers"]["mcp-protocol-version"] == "2026-07-28"),
        "a 2026-07-28 session"
    );

    let play = Player::start(&trace, &[]);
    let replayed = python_http(&peers, "demo", &play.url);
    assert_eq!(replayed, recorded);
    assert_clean(play);

    let (code, out, err) = verify_url(&trace, &url);
    assert_eq!(code, Some(0), "{out}\n{err}");
    let (_changed, changed_url) = demo_server(&peers, &["--alter"]);
    let (code, out, err) = verify_url(&trace, &changed_url);
    assert_eq!(code, Some(1), "{out}\n{err}");
    let report: Value = serde_json::from_str(&out).expect("JSON report");
    let drift = report["drift"].as_array().expect("drift");
    assert_eq!(drift.len(), 1, "{out}");
    assert_eq!(drift[0]["tool"], "add");
    assert_eq!(drift[0]["class"], "output");
}

#[test]
fn inspector_cli_and_mcporter_sessions_are_served_in_order() {
    let peers = Peers::get();
    let sb = Sandbox::new();
    let (_server, url) = everything(&peers, "streamableHttp");
    let home = sb.path("home");
    std::fs::create_dir_all(&home).unwrap();
    let inspect = |u: &str| {
        node_cli(
            &peers,
            INSPECTOR,
            &[
                u,
                "--method",
                "tools/call",
                "--tool-name",
                "echo",
                "--tool-arg",
                "message=through reel",
            ],
            &home,
        )
    };
    let porter = |u: &str| {
        node_cli(
            &peers,
            MCPORTER,
            &[
                "call",
                "--http-url",
                u,
                "--allow-http",
                "get-sum",
                "a=2",
                "b=3",
                "--output",
                "json",
            ],
            &home,
        )
    };
    let dir = sb.path("traces");
    let rec = recorder(&url, &dir);
    let (inspected, ported) = (inspect(&rec.url), porter(&rec.url));
    assert!(inspected.contains("Echo: through reel"), "{inspected}");
    assert!(ported.contains("The sum of 2 and 3 is 5."), "{ported}");
    assert_eq!(rec.stop().code(), Some(0));
    let trace = only_trace(&dir);

    let play = Player::start(&trace, &[]);
    assert_eq!(inspect(&play.url), inspected);
    assert_eq!(porter(&play.url), ported);
    let summary = assert_clean(play);
    assert!(summary.contains("2 live sessions served"), "{summary}");
}

#[test]
fn the_legacy_http_sse_mode_of_server_everything_is_recorded_and_replayed() {
    let peers = Peers::get();
    let sb = Sandbox::new();
    let (_server, url) = everything(&peers, "sse");
    let home = sb.path("home");
    std::fs::create_dir_all(&home).unwrap();
    let call = |u: &str| {
        node_cli(
            &peers,
            INSPECTOR,
            &[
                u,
                "--method",
                "tools/call",
                "--tool-name",
                "get-sum",
                "--tool-arg",
                "a=2",
                "b=3",
            ],
            &home,
        )
    };
    let dir = sb.path("traces");
    let rec = recorder(&url, &dir);
    let recorded = call(&rec.url);
    assert!(recorded.contains("The sum of 2 and 3 is 5."), "{recorded}");
    assert_eq!(rec.stop().code(), Some(0));
    let trace = only_trace(&dir);

    let play = Player::start(&trace, &[]);
    assert_eq!(play.path, "/sse");
    assert_eq!(call(&play.url), recorded);
    assert_clean(play);

    let (code, out, err) = verify_url(&trace, &url);
    assert_eq!(code, Some(0), "{out}\n{err}");
}

#[test]
fn a_stdio_recording_is_served_over_http() {
    let peers = Peers::get();
    let sb = Sandbox::new();
    let dir = sb.path("traces");
    let reel = env!("CARGO_BIN_EXE_reel");
    let everything = peers.node_module(EVERYTHING);
    let everything = everything.to_str().expect("UTF-8 path");
    let dir_s = dir.to_str().expect("UTF-8 path");
    let recorded = python_stdio(
        &peers,
        "everything",
        &[
            reel, "rec", "--dir", dir_s, "--", "node", everything, "stdio",
        ],
    );
    let trace: PathBuf = only_trace(&dir);
    let play = Player::start(&trace, &[]);
    assert_eq!(python_http(&peers, "everything", &play.url), recorded);
    assert_clean(play);
}

/// The TypeScript SDK client script: `calls` long-running calls with progress over
/// Streamable HTTP to `url`; the progress callbacks each call saw.
fn ts_progress_http(peers: &Peers, calls: usize, url: &str) -> Vec<usize> {
    let mut c = Command::new("node");
    c.arg(Peers::script("ts_progress_client.mjs"))
        .arg(&peers.node_modules)
        .args([&calls.to_string(), "http", url]);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "the TypeScript client failed: {out}\n{err}");
    let counts: Vec<usize> = out
        .lines()
        .filter_map(|l| l.strip_prefix("CALL "))
        .filter_map(|l| l.split(' ').nth(2)?.parse().ok())
        .collect();
    assert_eq!(counts.len(), calls, "{out}");
    counts
}

/// The TypeScript SDK drops a call's progress handler with its result: over HTTP the
/// recorded progress events go out before the result, which leaves in a write of its
/// own, and every callback fires.
#[test]
fn the_typescript_sdk_client_gets_every_progress_callback_over_http() {
    let peers = Peers::get();
    let sb = Sandbox::new();
    let (_server, url) = everything(&peers, "streamableHttp");
    let dir = sb.path("traces");
    let rec = recorder(&url, &dir);
    let calls = 4;
    ts_progress_http(&peers, calls, &rec.url);
    assert_eq!(rec.stop().code(), Some(0));
    let trace = only_trace(&dir);
    let progress = trace_lines(&trace)
        .iter()
        .filter(|l| l["raw"]["method"] == "notifications/progress")
        .count();
    assert_eq!(progress, 3 * calls);
    for run in 0..5 {
        let play = Player::start(&trace, &[]);
        let counts = ts_progress_http(&peers, calls, &play.url);
        assert_eq!(counts, vec![3; calls], "replay {run}");
        assert_clean(play);
    }
}

/// The Python SDK re-lists tools after every call that finishes before its tool cache is
/// filled: live, 8 concurrent calls finishing apart made fewer `tools/list` than a replay
/// answering at once provokes. Those are answered again, never missed: 20 replays.
#[test]
fn python_concurrent_calls_over_http_replay_without_misses() {
    let peers = Peers::get();
    let sb = Sandbox::new();
    let (_server, url) = everything(&peers, "streamableHttp");
    let dir = sb.path("traces");
    let rec = recorder(&url, &dir);
    let concurrent = |url: &str| {
        let mut c = Command::new(&peers.python);
        c.arg(Peers::script("concurrent_client.py"))
            .args(["8", "http", url]);
        let (code, out, err) = run(c);
        assert_eq!(code, Some(0), "the client failed against {url}: {err}");
        assert!(out.ends_with("ALL OK\n"), "{out}");
        out
    };
    let want = concurrent(&rec.url);
    assert_eq!(rec.stop().code(), Some(0));
    let trace = only_trace(&dir);
    let lists = trace_lines(&trace)
        .iter()
        .filter(|l| l["dir"] == "in" && l["raw"]["method"] == "tools/list")
        .count();
    assert!(lists < 8, "the recording re-listed once per call ({lists})");
    let mut again = 0;
    for run in 0..20 {
        let play = Player::start(&trace, &[]);
        assert_eq!(concurrent(&play.url), want, "replay {run}");
        again += assert_clean(play).contains("answered again)") as usize;
    }
    assert!(again > 0, "no replay listed more often than the recording");
}
