//! `reel verify TRACE --url URL`: the recorded client played over HTTP. The live server
//! is reel's own `reel play --listen` of a trace written here (the same trace: no drift;
//! one with a result changed: exactly that drift), sometimes with `reel rec --url` in
//! between so the headers verify sends are on record; plus the exit codes for a URL
//! that cannot be reached (69) or used (64).

use crate::harness::play_http_support as support;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use support::*;

const INIT: &str = r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"recorded","version":"1"}}}"#;

/// A legacy-era session behind a refused probe: a call whose answer streams progress and
/// a sampling request before its result, and a JSON-answered call whose text is `fast`.
fn session_tape(path: &Path, fast: &str) -> PathBuf {
    let mut t = TraceBuilder::http("http://127.0.0.1:1/mcp");
    t.c_http(
        Some("reel:conn-1"),
        r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        post_req(1),
    )
    .s_http(
        Some("reel:conn-1"),
        r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}"#,
        json_answer(1, 400),
    )
    .c_http(Some("S"), INIT, post_req(2))
    .s_http(
        Some("S"),
        r#"{"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"taped","version":"1"}},"jsonrpc":"2.0","id":2}"#,
        Some(json!({"req": 2, "status": 200, "headers": {"mcp-session-id": "S"}, "sse": {"event": "message"}})),
    )
    .c_http(Some("S"), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, post_req(3))
    .c_http(
        Some("S"),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":3}}}"#,
        post_req(4),
    )
    .s_http(
        Some("S"),
        r#"{"method":"notifications/progress","params":{"progress":1,"total":1,"progressToken":3},"jsonrpc":"2.0"}"#,
        sse(4, "lf"),
    )
    .s_http(
        Some("S"),
        r#"{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5},"jsonrpc":"2.0","id":0}"#,
        sse(4, "lf"),
    )
    .c_http(
        Some("S"),
        r#"{"jsonrpc":"2.0","id":0,"result":{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}}"#,
        post_req(5),
    )
    .s_http(
        Some("S"),
        r#"{"result":{"content":[{"type":"text","text":"slow done"}]},"jsonrpc":"2.0","id":3}"#,
        sse(4, "lf"),
    )
    .c_http(
        Some("S"),
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"fast","arguments":{}}}"#,
        post_req(6),
    )
    .s_http(
        Some("S"),
        &format!(r#"{{"result":{{"content":[{{"type":"text","text":"{fast}"}}]}},"jsonrpc":"2.0","id":4}}"#),
        json_answer(6, 200),
    );
    t.write(path)
}

/// A 2026-07-28 recording: session-less requests with `_meta`.
fn modern_tape(path: &Path) -> PathBuf {
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let mut t = TraceBuilder::http("http://127.0.0.1:1/mcp");
    t.c_http(
        Some("reel:conn-1"),
        &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{meta}}}}}"#),
        post_req(1),
    )
    .s_http(
        Some("reel:conn-1"),
        r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"resultType":"complete"}}"#,
        json_answer(1, 200),
    )
    .c_http(
        Some("reel:conn-1"),
        &format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"add","arguments":{{"a":1,"b":2}},{meta}}}}}"#),
        post_req(2),
    )
    .s_http(
        Some("reel:conn-1"),
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"3"}],"resultType":"complete"}}"#,
        json_answer(2, 200),
    );
    t.write(path)
}

fn verify(trace: &Path, url: &str, extra: &[&str]) -> (Option<i32>, String, String) {
    let mut c = reel();
    c.arg("verify")
        .arg(trace)
        .args(["--url", url, "--timeout", "10"])
        .args(extra);
    run(c)
}

#[test]
fn the_same_server_over_http_is_the_same_and_server_requests_are_answered_from_the_tape() {
    let sb = Sandbox::new();
    let trace = session_tape(&sb.path("a.jsonl"), "fast done");
    let live = Player::start(&trace, &[]);
    let (code, out, err) = verify(&trace, &live.url, &["--no-record", "--json"]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    let report: Value = serde_json::from_str(&out).expect("JSON report");
    assert_eq!(report["result"], "same");
    // discover (the 400 refusal, compared as its answer), initialize, two calls.
    assert_eq!(report["summary"]["same"], 4, "{out}");
    assert_eq!(report["serverRequests"]["asked"], 1);
    assert_eq!(report["serverRequests"]["answeredFromTape"], 1);
    let stopped = live.stop();
    // The tape server saw the recorded client's answer to its sampling request: no drift.
    assert_eq!(stopped.code(), Some(0), "{}", stopped.stderr);
    assert!(
        stopped.stderr.contains("4 answered from the tape"),
        "{}",
        stopped.stderr
    );
}

#[test]
fn a_changed_server_is_reported_at_exactly_that_call() {
    let sb = Sandbox::new();
    let recorded = session_tape(&sb.path("a.jsonl"), "fast done");
    let changed = session_tape(&sb.path("b.jsonl"), "fast changed");
    let live = Player::start(&changed, &[]);
    let (code, out, err) = verify(&recorded, &live.url, &["--no-record", "--json"]);
    assert_eq!(code, Some(1), "{out}\n{err}");
    let report: Value = serde_json::from_str(&out).expect("JSON report");
    let drift = report["drift"].as_array().expect("drift");
    assert_eq!(drift.len(), 1, "{out}");
    assert_eq!(drift[0]["class"], "output");
    assert_eq!(drift[0]["tool"], "fast");
    assert_eq!(
        drift[0]["differences"][0]["pointer"],
        "/result/content/0/text"
    );
}

#[test]
fn the_headers_verify_sends_are_those_of_mcp_over_http() {
    let sb = Sandbox::new();
    for (name, trace) in [
        ("legacy", session_tape(&sb.path("a.jsonl"), "fast done")),
        ("modern", modern_tape(&sb.path("m.jsonl"))),
    ] {
        let live = Player::start(&trace, &[]);
        let dir = sb.path(&format!("rec-{name}"));
        let mut rec = reel();
        rec.args([
            "rec",
            "--url",
            &live.url,
            "--listen",
            "127.0.0.1:0",
            "--dir",
        ])
        .arg(&dir);
        let proxy = Player::listening(rec);
        let (code, out, err) = verify(&trace, &proxy.url, &["--no-record"]);
        assert_eq!(code, Some(0), "{name}: {out}\n{err}");
        assert_eq!(proxy.stop().code(), Some(0));
        let lines = trace_lines(&only_trace(&dir));
        let sent: Vec<&Value> = lines.iter().filter(|l| l["dir"] == "in").collect();
        assert!(sent.len() >= 2, "{name}: {sent:?}");
        for l in &sent {
            let h = &l["http"]["headers"];
            let method = l["raw"]["method"].as_str();
            if name == "modern" {
                assert_eq!(h["mcp-protocol-version"], "2026-07-28", "{l}");
                assert_eq!(h["mcp-method"].as_str(), method, "{l}");
                assert!(h.get("mcp-session-id").is_none(), "{l}");
                if method == Some("tools/call") {
                    assert_eq!(h["mcp-name"], "add", "{l}");
                }
            } else if method == Some("initialize") || method == Some("server/discover") {
                assert!(h.get("mcp-session-id").is_none(), "{l}");
            } else {
                // After initialize: the issued session and the negotiated version.
                assert!(h["mcp-session-id"].is_string(), "{l}");
                assert_eq!(h["mcp-protocol-version"], "2025-11-25", "{l}");
            }
        }
        if name == "legacy" {
            // The server stream was opened after initialization, and the session ended.
            let http: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "reel.http").collect();
            assert!(
                http.iter().any(|l| l["http"]["method"] == "GET"),
                "{http:?}"
            );
            assert!(
                http.iter().any(|l| l["http"]["method"] == "DELETE"),
                "{http:?}"
            );
        }
        live.stop();
    }
}

#[test]
fn the_live_run_is_written_as_an_http_trace() {
    let sb = Sandbox::new();
    let trace = modern_tape(&sb.path("m.jsonl"));
    let live = Player::start(&trace, &[]);
    let dir = sb.path("runs");
    let (code, out, err) = verify(&trace, &live.url, &["--dir", dir.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    let lines = trace_lines(&only_trace(&dir));
    assert_eq!(lines[0]["transport"], "http");
    assert_eq!(lines[0]["command"], json!([live.url]));
    assert!(
        lines
            .iter()
            .any(|l| l["dir"] == "out" && l["origin"] == "live")
    );
}

#[test]
fn a_url_that_cannot_be_reached_is_69_and_one_that_cannot_be_used_is_64() {
    let sb = Sandbox::new();
    let trace = modern_tape(&sb.path("m.jsonl"));
    let port = free_port();
    let (code, out, err) = verify(
        &trace,
        &format!("http://127.0.0.1:{port}/mcp"),
        &["--no-record"],
    );
    assert_eq!(code, Some(69), "{out}\n{err}");
    assert!(err.contains("could not be reached"), "{err}");
    assert!(err.contains("cannot connect"), "{err}");
    let (code, _, err) = verify(&trace, "ftp://127.0.0.1/mcp", &["--no-record"]);
    assert_eq!(code, Some(64), "{err}");
    // --url and a command are one or the other.
    let mut c = reel();
    c.arg("verify")
        .arg(&trace)
        .args(["--url", "http://127.0.0.1:1/mcp", "--", "true"]);
    assert_eq!(run(c).0, Some(64));
}

/// A server that breaks off its answer mid-body (fewer bytes than its
/// `Content-Length`): the request is answered with an error naming the break at once,
/// reported as drift, rather than waited for until the timeout and blamed on a server
/// that "did not answer".
#[test]
fn an_answer_the_server_breaks_off_is_drift_named_as_such() {
    use std::io::{BufRead, BufReader, Write};
    let sb = Sandbox::new();
    let trace = modern_tape(&sb.path("m.jsonl"));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            // The request head (its body is not needed), then half an answer.
            let mut r = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while r.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"jsonrpc\":\"2.0\",",
            );
        }
    });
    let (code, out, err) = verify(
        &trace,
        &format!("http://127.0.0.1:{port}/mcp"),
        &["--no-record", "--start-timeout", "5"],
    );
    assert_eq!(code, Some(2), "{out}\n{err}");
    assert!(out.contains("the answer broke off"), "{out}\n{err}");
}

/// A remote server over https with a private CA, that wants credentials: the one
/// upstream connector with `--upstream-ca`, and `--header` with its value read from the
/// environment, sent on every request and written nowhere.
#[test]
fn https_with_a_private_ca_and_a_header_from_the_environment() {
    use crate::harness::net::Server;
    use crate::harness::play_support::Peers;
    let sb = Sandbox::new();
    let trace = modern_tape(&sb.path("m.jsonl"));
    let live = Player::start(&trace, &[]);
    let port = free_port();
    let ca = sb.path("ca.pem");
    let log = sb.path("front.log");
    let mut front = std::process::Command::new(Peers::get().python);
    front
        .arg(Peers::script("tls_front.py"))
        .arg(port.to_string())
        .arg(&ca)
        .arg(&live.url)
        .arg("s3cr3t-token-value")
        .env("TLS_FRONT_LOG", &log);
    let _front = Server::start(front, port);
    let path = live.url.splitn(4, '/').nth(3).unwrap_or("mcp").to_owned();
    let url = format!("https://localhost:{port}/{path}");
    let ca_arg = ca.to_str().unwrap();
    let header = "Authorization=Bearer $MCP_TOKEN";

    // The private CA is not trusted by default.
    let mut c = reel();
    c.arg("verify")
        .arg(&trace)
        .args(["--url", &url, "--no-record", "--header", header])
        .env("MCP_TOKEN", "s3cr3t-token-value");
    let (code, _, err) = run(c);
    assert_eq!(code, Some(69), "{err}");
    assert!(err.contains("TLS"), "{err}");
    // A variable that is not set is a usage error, said before anything is sent.
    let mut c = reel();
    c.arg("verify")
        .arg(&trace)
        .args(["--url", &url, "--no-record", "--header", header])
        .env_remove("MCP_TOKEN");
    let (code, _, err) = run(c);
    assert_eq!(code, Some(64), "{err}");
    assert!(err.contains("$MCP_TOKEN"), "{err}");

    // Trusted, with the credentials: the same answers, and the token in no trace.
    let dir = sb.path("live");
    let mut c = reel();
    c.arg("verify")
        .arg(&trace)
        .args(["--url", &url, "--timeout", "10", "--upstream-ca", ca_arg])
        .args(["--header", header, "--header", "X-Team=reel"])
        .arg("--dir")
        .arg(&dir)
        .env("MCP_TOKEN", "s3cr3t-token-value");
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "{out}\n{err}");
    let seen: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let authorised: Vec<&Value> = seen
        .iter()
        .filter(|l| l["headers"]["authorization"] == "Bearer s3cr3t-token-value")
        .collect();
    assert!(authorised.len() >= 2, "{seen:?}");
    assert!(authorised.iter().all(|l| l["headers"]["x-team"] == "reel"));
    for f in std::fs::read_dir(&dir).unwrap().flatten() {
        let text = std::fs::read_to_string(f.path()).unwrap();
        assert!(
            !text.contains("s3cr3t-token-value"),
            "{}",
            f.path().display()
        );
    }
    assert!(!out.contains("s3cr3t") && !err.contains("s3cr3t"));
}
