//! mcp-cassette 0.4.0 (`mcp-cassette-venv`) records the Python SDK client's sessions here,
//! over stdio in both protocol eras and over Streamable HTTP: `reel import` of each
//! passes `reel check`, counts right in `reel stats`, and `reel play` of the import — and
//! of the cassette itself — answers the same client with the same results. What the tool
//! loses (its default redaction rewrites `progressToken` and, in server-everything's tool
//! schemas, `maxTokens`) is asserted as lost. And the other way: a `reel rec` session
//! exported as a cassette is served by `mcp-cassette serve` and imports back unchanged.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::foreign::venv_bin;
use crate::harness::net::{Server, free_port, spawn_listening};
use crate::harness::play_http_support::run;
use crate::harness::play_support::Peers;
use crate::harness::rec_support::wait_limited;
use crate::harness::reel;

/// mcp-cassette's CLI.
fn mcp_cassette() -> PathBuf {
    venv_bin("mcp-cassette-venv", "mcp-cassette")
}

/// `python client.py SUITE --mode MODE -- SERVER…` (the Python SDK client over stdio):
/// its exit code, stdout and stderr.
pub(super) fn client(suite: &str, mode: &str, server: &[&Path]) -> (Option<i32>, String, String) {
    let mut c = Command::new(Peers::get().python);
    c.arg("-W")
        .arg("ignore")
        .arg(Peers::script("client.py"))
        .args([suite, "--mode", mode, "--"])
        .args(server);
    run(c)
}

/// [`client`], which must succeed; its stdout.
pub(super) fn client_ok(suite: &str, mode: &str, server: &[&Path]) -> String {
    let (code, out, err) = client(suite, mode, server);
    assert_eq!(code, Some(0), "the client failed: {out}{err}");
    assert!(out.ends_with("ALL OK\n"), "{out}");
    out
}

/// `python http_client.py SUITE --mode MODE URL`: exit code, stdout, stderr.
pub(super) fn http_client(suite: &str, mode: &str, url: &str) -> (Option<i32>, String, String) {
    let mut c = Command::new(Peers::get().python);
    c.arg("-W")
        .arg("ignore")
        .arg(Peers::script("http_client.py"))
        .args([suite, "--mode", mode, url]);
    run(c)
}

/// The RESULT lines of a client's stdout.
pub(super) fn results(out: &str) -> Vec<&str> {
    out.lines().filter(|l| l.starts_with("RESULT ")).collect()
}

/// `reel import -o OUT SRC`, which must succeed; its stderr.
pub(super) fn import(src: &Path, out: &Path) -> String {
    let mut c = reel();
    c.args(["import", "-o"]).arg(out).arg(src);
    let (code, _, err) = run(c);
    assert_eq!(code, Some(0), "reel import {}: {err}", src.display());
    err
}

/// `reel check TRACE` passes; its stdout.
pub(super) fn check(trace: &Path) -> String {
    let mut c = reel();
    c.arg("check").arg(trace);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "reel check {}: {out}{err}", trace.display());
    out
}

/// `reel stats --json TRACE`'s tools: (name, calls, errors, pending), sorted by name.
pub(super) fn tools(trace: &Path) -> Vec<(String, u64, u64, u64)> {
    let mut c = reel();
    c.args(["stats", "--json"]).arg(trace);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "reel stats {}: {err}", trace.display());
    let stats: Value = serde_json::from_str(&out).expect("stats JSON");
    let mut tools: Vec<(String, u64, u64, u64)> = stats["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| {
            let n = |k: &str| t[k].as_u64().unwrap_or_default();
            (
                t["name"].as_str().unwrap_or_default().to_owned(),
                n("calls"),
                n("errors"),
                n("pending"),
            )
        })
        .collect();
    tools.sort();
    tools
}

/// The (name, calls, errors, pending) rows a test expects.
pub(super) fn rows(rows: &[(&str, u64, u64, u64)]) -> Vec<(String, u64, u64, u64)> {
    rows.iter()
        .map(|(n, c, e, p)| (n.to_string(), *c, *e, *p))
        .collect()
}

/// A script (in `dir`) that runs `reel ARGS…`, for clients that start their server
/// from a command.
pub(super) fn reel_script(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let words: Vec<String> = std::iter::once(env!("CARGO_BIN_EXE_reel"))
        .chain(args.iter().copied())
        .map(|w| format!("'{}'", w.replace('\'', r"'\''")))
        .collect();
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!("#!/bin/sh\nexec {} 2>/dev/null\n", words.join(" ")),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

/// Stops a recording proxy as a user does, with Ctrl-C (it saves on SIGINT).
pub(super) fn interrupt(server: &mut Server) {
    let sent = Command::new("kill")
        .arg("-INT")
        .arg(server.0.id().to_string())
        .status();
    assert!(
        sent.is_ok_and(|s| s.success()),
        "cannot interrupt the recorder"
    );
    assert!(
        wait_limited(&mut server.0, Duration::from_secs(30)).is_some(),
        "the recorder did not stop on SIGINT"
    );
}

/// `reel play --listen 127.0.0.1:0 TRACE` answering `http_client.py`; the client's run.
pub(super) fn play_http(trace: &Path, suite: &str, mode: &str) -> (Option<i32>, String, String) {
    let mut c = reel();
    c.arg("play").arg(trace).args(["--listen", "127.0.0.1:0"]);
    let mut play = spawn_listening(c);
    let ran = http_client(suite, mode, &play.url);
    let _ = play.child.kill();
    let _ = play.child.wait();
    ran
}

/// The trace's message lines: (dir, raw).
fn messages(trace: &Path) -> Vec<(String, Value)> {
    std::fs::read_to_string(trace)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| matches!(l["dir"].as_str(), Some("in" | "out")))
        .map(|l| (l["dir"].as_str().unwrap().to_owned(), l["raw"].clone()))
        .collect()
}

#[test]
fn stdio_cassettes_of_the_demo_server_import_and_replay_in_both_eras() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let peers = Peers::get();
    let demo = Peers::script("demo_server.py");
    let cassette_bin = mcp_cassette();
    for mode in ["legacy", "auto"] {
        let want = client_ok("demo", mode, &[&peers.python, &demo]);
        let cassette = tmp.join(format!("{mode}.mcp.json"));
        let recorded = client_ok(
            "demo",
            mode,
            &[
                &cassette_bin,
                Path::new("record"),
                Path::new("--cassette"),
                &cassette,
                Path::new("--"),
                &peers.python,
                &demo,
            ],
        );
        assert_eq!(recorded, want, "{mode}: mcp-cassette is transparent");
        let doc: Value = serde_json::from_slice(&std::fs::read(&cassette).unwrap()).unwrap();
        assert_eq!(doc["format_version"], 3);
        let raw = std::fs::read_to_string(&cassette).unwrap();
        assert!(
            raw.contains(r#""progressToken": "REDACTED""#),
            "{mode}: mcp-cassette's default redaction rewrites the progress token"
        );

        let trace = tmp.join(format!("{mode}.jsonl"));
        let err = import(&cassette, &trace);
        assert_eq!(
            err.matches("mcp-cassette cassettes hold").count(),
            1,
            "{err}"
        );
        assert_eq!(
            err.matches("progressToken read \"REDACTED\"").count(),
            1,
            "{err}"
        );
        check(&trace);
        let meta: Value = serde_json::from_str(
            std::fs::read_to_string(&trace)
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(meta["source"], "mcp-cassette");
        assert_eq!(meta["transport"], "stdio");
        assert_eq!(meta["imported"]["format_version"], 3);
        if mode == "legacy" {
            assert_eq!(meta["imported"]["server_info"]["name"], "reel-demo");
            assert_eq!(meta["imported"]["protocol_version"], "2025-11-25");
        } else {
            // mcp-cassette takes both from an initialize, which 2026-07-28 has none of.
            assert!(meta["imported"].get("server_info").is_none(), "{meta}");
            assert!(meta["imported"].get("protocol_version").is_none(), "{meta}");
        }
        let counts = rows(&[
            ("add", 1, 0, 0),
            ("count_down", 1, 0, 0),
            ("shout", 1, 0, 0),
        ]);
        assert_eq!(tools(&trace), counts, "{mode}");
        assert_eq!(tools(&cassette), counts, "{mode}: read directly");

        // reel play serves the import, and the cassette itself, to the same client; the
        // progress token matches whatever it reads.
        let play = reel_script(tmp, "play.sh", &["play", trace.to_str().unwrap()]);
        assert_eq!(
            client_ok("demo", mode, &[&play]),
            want,
            "{mode}: the import"
        );
        let direct = reel_script(tmp, "direct.sh", &["play", cassette.to_str().unwrap()]);
        assert_eq!(
            client_ok("demo", mode, &[&direct]),
            want,
            "{mode}: the cassette"
        );

        if mode == "auto" {
            // mcp-cassette's own replay matches the rewritten token against the live
            // one and misses the call with progress.
            let (code, out, err) = client(
                "demo",
                mode,
                &[&cassette_bin, Path::new("serve"), &cassette],
            );
            assert_ne!(code, Some(0));
            assert!(!out.contains("RESULT count_down"), "{out}");
            assert!(
                err.contains("mcp-cassette: no recorded interaction matches tools/call"),
                "{err}"
            );
        }
    }
}

#[test]
fn server_everything_through_mcp_cassette_with_and_without_its_redaction() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let peers = Peers::get();
    let everything = peers.node_module("@modelcontextprotocol/server-everything/dist/index.js");
    let node = Path::new("node");
    let stdio = Path::new("stdio");
    let cassette_bin = mcp_cassette();
    let want = client_ok("everything", "auto", &[node, &everything, stdio]);

    // Default redaction: `maxTokens` in a tool's input schema matches `*token*` and is
    // rewritten, so the recorded tools/list is no longer a valid result.
    let redacted = tmp.join("redacted.mcp.json");
    let recorded = client_ok(
        "everything",
        "auto",
        &[
            &cassette_bin,
            Path::new("record"),
            Path::new("--cassette"),
            &redacted,
            Path::new("--"),
            node,
            &everything,
            stdio,
        ],
    );
    assert_eq!(recorded, want);
    let trace = tmp.join("redacted.jsonl");
    let err = import(&redacted, &trace);
    assert!(
        err.contains("maxTokens, progressToken read \"REDACTED\""),
        "{err}"
    );
    check(&trace);
    let play = reel_script(tmp, "redacted.sh", &["play", trace.to_str().unwrap()]);
    let (code, out, _) = client("everything", "auto", &[&play]);
    assert_ne!(
        code,
        Some(0),
        "the rewritten schema fails the client's validation"
    );
    assert_eq!(
        results(&out),
        results(&want)[..1],
        "only `connect` is as it was"
    );

    // Without it the cassette holds the session whole.
    let whole = tmp.join("whole.mcp.json");
    client_ok(
        "everything",
        "auto",
        &[
            &cassette_bin,
            Path::new("record"),
            Path::new("--no-default-redactions"),
            Path::new("--cassette"),
            &whole,
            Path::new("--"),
            node,
            &everything,
            stdio,
        ],
    );
    let trace = tmp.join("whole.jsonl");
    let err = import(&whole, &trace);
    assert!(!err.contains("were rewritten"), "{err}");
    check(&trace);
    assert_eq!(
        tools(&trace),
        rows(&[
            ("echo", 1, 0, 0),
            ("get-roots-list", 1, 0, 0),
            ("get-sum", 1, 0, 0),
            ("trigger-elicitation-request", 1, 0, 0),
            ("trigger-long-running-operation", 1, 0, 0),
            ("trigger-sampling-request", 1, 0, 0),
        ])
    );
    let msgs = messages(&trace);
    for method in ["sampling/createMessage", "elicitation/create", "roots/list"] {
        let asked = msgs
            .iter()
            .find(|(d, raw)| d == "out" && raw["method"] == method)
            .unwrap_or_else(|| panic!("the server's {method} is in the import"));
        let id = &asked.1["id"];
        assert!(
            msgs.iter()
                .any(|(d, raw)| d == "in" && raw["id"] == *id && raw.get("result").is_some()),
            "the client's answer to {method}"
        );
    }
    let progress = msgs
        .iter()
        .filter(|(d, raw)| d == "out" && raw["method"] == "notifications/progress")
        .count();
    assert_eq!(progress, 3);
    let play = reel_script(tmp, "whole.sh", &["play", trace.to_str().unwrap()]);
    assert_eq!(
        client_ok("everything", "auto", &[&play]),
        want,
        "the import"
    );
    let direct = reel_script(tmp, "direct.sh", &["play", whole.to_str().unwrap()]);
    assert_eq!(
        client_ok("everything", "auto", &[&direct]),
        want,
        "the cassette"
    );
}

#[test]
fn an_http_cassette_imports_and_replays_over_http() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let peers = Peers::get();
    let port = free_port();
    let mut upstream = Command::new(&peers.python);
    upstream
        .arg(Peers::script("http_server.py"))
        .arg(port.to_string());
    let _upstream = Server::start(upstream, port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    // Both eras: a legacy session (initialize, mcp-session-id) and a 2026-07-28 one (no
    // session at all: the import keeps it as connection traffic, as reel rec writes it).
    for mode in ["legacy", "auto"] {
        let (code, want, err) = http_client("demo", mode, &url);
        assert_eq!(code, Some(0), "{want}{err}");

        let cassette = tmp.join(format!("http-{mode}.mcp.json"));
        let proxy_port = free_port();
        let mut record = Command::new(mcp_cassette());
        record.args(["record", "--cassette"]).arg(&cassette).args([
            "--url",
            &url,
            "--port",
            &proxy_port.to_string(),
        ]);
        let mut proxy = Server::start(record, proxy_port);
        let (code, out, err) =
            http_client("demo", mode, &format!("http://127.0.0.1:{proxy_port}/mcp"));
        assert_eq!(code, Some(0), "{out}{err}");
        assert_eq!(out, want, "{mode}: mcp-cassette is transparent");
        interrupt(&mut proxy);
        let doc: Value = serde_json::from_slice(&std::fs::read(&cassette).unwrap()).unwrap();
        assert_eq!(doc["transport"], "http");
        assert!(
            doc["messages"][1]["exchange"].is_u64(),
            "HTTP exchanges are numbered"
        );

        let trace = tmp.join(format!("http-{mode}.jsonl"));
        import(&cassette, &trace);
        check(&trace);
        let text = std::fs::read_to_string(&trace).unwrap();
        let meta: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(meta["transport"], "http");
        assert_eq!(meta["imported"]["server_url"], url.as_str());
        if mode == "legacy" {
            assert!(meta["imported"]["session_id"].is_string(), "{meta}");
        }
        assert_eq!(
            tools(&trace),
            rows(&[
                ("add", 1, 0, 0),
                ("count_down", 1, 0, 0),
                ("shout", 1, 0, 0)
            ]),
            "{mode}"
        );
        for (what, file) in [("the import", &trace), ("the cassette", &cassette)] {
            let (code, out, err) = play_http(file, "demo", mode);
            assert_eq!(code, Some(0), "{mode}: {what}: {out}{err}");
            assert_eq!(out, want, "{mode}: {what}");
        }
    }
}

#[test]
fn a_reel_recording_exported_as_a_cassette_is_served_by_mcp_cassette() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let peers = Peers::get();
    let demo = Peers::script("demo_server.py");
    let traces = tmp.join("traces");
    let rec = reel_script(
        tmp,
        "rec.sh",
        &[
            "rec",
            "--dir",
            traces.to_str().unwrap(),
            "--name",
            "demo",
            "--",
            peers.python.to_str().unwrap(),
            demo.to_str().unwrap(),
        ],
    );
    let want = client_ok("demo", "legacy", &[&rec]);
    let trace = crate::harness::play_http_support::only_trace(&traces);

    let cassette = tmp.join("export.mcp.json");
    let mut c = reel();
    c.args(["export", "cassette"])
        .arg(&trace)
        .arg("-o")
        .arg(&cassette);
    let (code, _, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("left out:") && err.contains("stderr"),
        "the server's stderr has no place in a cassette: {err}"
    );

    // mcp-cassette serves it to the same client: every result as recorded, except that
    // it replays a call's progress after its result (its documented ordering), so the
    // client's progress callback has seen nothing when count_down returns.
    let (code, out, err) = client(
        "demo",
        "legacy",
        &[&mcp_cassette(), Path::new("serve"), &cassette],
    );
    assert_eq!(code, Some(0), "{out}{err}");
    let (got, wanted) = (results(&out), results(&want));
    assert_eq!(got.len(), wanted.len(), "{out}");
    for (g, w) in got.iter().zip(&wanted) {
        if w.starts_with("RESULT count_down ") {
            assert_ne!(g, w, "progress after the result");
        } else {
            assert_eq!(g, w);
        }
    }
    // Another call is a miss, as in its own cassettes.
    let doc = std::fs::read_to_string(&cassette).unwrap();
    let drift = tmp.join("drift.mcp.json");
    std::fs::write(&drift, doc.replace(r#""b":40"#, r#""b":41"#)).unwrap();
    let (code, _, err) = client(
        "demo",
        "legacy",
        &[&mcp_cassette(), Path::new("serve"), &drift],
    );
    assert_ne!(code, Some(0));
    assert!(
        err.contains("no recorded interaction matches tools/call"),
        "{err}"
    );

    // And reel reads the export back to the same messages.
    let back = tmp.join("back.jsonl");
    import(&cassette, &back);
    assert_eq!(messages(&back), messages(&trace));
    let mut c = reel();
    c.arg("diff").arg(&trace).arg(&back);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "{out}{err}");
}

#[test]
fn an_http_reel_recording_exported_as_a_cassette_is_served_over_http_by_mcp_cassette() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let peers = Peers::get();
    let port = free_port();
    let mut upstream = Command::new(&peers.python);
    upstream
        .arg(Peers::script("http_server.py"))
        .arg(port.to_string());
    let _upstream = Server::start(upstream, port);
    let traces = tmp.join("traces");
    let mut c = reel();
    c.arg("rec").arg("--dir").arg(&traces).args([
        "--name",
        "http",
        "--url",
        &format!("http://127.0.0.1:{port}/mcp"),
    ]);
    let mut rec = spawn_listening(c);
    let (code, want, err) = http_client("demo", "legacy", &rec.url);
    assert_eq!(code, Some(0), "{want}{err}");
    let stop = Command::new("kill")
        .arg("-TERM")
        .arg(rec.child.id().to_string())
        .status();
    assert!(stop.is_ok_and(|s| s.success()));
    assert!(wait_limited(&mut rec.child, Duration::from_secs(30)).is_some());
    let trace = crate::harness::play_http_support::only_trace(&traces);

    let cassette = tmp.join("export.mcp.json");
    let mut c = reel();
    c.args(["export", "cassette"])
        .arg(&trace)
        .arg("-o")
        .arg(&cassette);
    let (code, _, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&cassette).unwrap()).unwrap();
    assert_eq!(doc["transport"], "http");
    // A call's progress travelled in its POST's stream: the same exchange.
    let msgs = doc["messages"].as_array().unwrap();
    let progress = msgs
        .iter()
        .find(|m| m["method"] == "notifications/progress")
        .expect("progress");
    let call = msgs
        .iter()
        .find(|m| m["sender"] == "client" && m["exchange"] == progress["exchange"])
        .expect("its request");
    assert_eq!(call["payload"]["params"]["name"], "count_down");
    assert_eq!(progress["channel"], "post");

    // Over HTTP mcp-cassette streams an exchange's messages in their order: every
    // result, count_down's progress included, as the server gave it.
    let serve_port = free_port();
    let mut serve = Command::new(mcp_cassette());
    serve
        .arg("serve")
        .arg(&cassette)
        .args(["--port", &serve_port.to_string()]);
    let _serve = Server::start(serve, serve_port);
    let (code, out, err) = http_client(
        "demo",
        "legacy",
        &format!("http://127.0.0.1:{serve_port}/mcp"),
    );
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(out, want);

    let back = tmp.join("back.jsonl");
    import(&cassette, &back);
    assert_eq!(messages(&back), messages(&trace));
}
