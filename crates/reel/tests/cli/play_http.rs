//! `reel play TRACE --listen`: traces written here (with the `session` and `http` facts
//! `reel rec --url` writes), served over HTTP and driven by a raw HTTP/1.1 client, so
//! every answer's status, headers and framing can be checked: JSON or event stream as
//! recorded, notifications and server requests before the result, the GET stream, the
//! recorded status of a refusal, sessions (issued, served in order, 404, DELETE),
//! session-less 2026-07-28 requests, legacy HTTP+SSE, a stdio trace over HTTP and an
//! HTTP trace over stdio, the Host/Origin guard, cancellation by closing the stream, and
//! the summary and exit code after SIGTERM.

use crate::harness::play_http_support as support;

use std::io::Write;
use std::process::Stdio;

use serde_json::{Value, json};
use support::*;

const INIT_2: &str = r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"recorded","version":"1"}}}"#;
const LIVE_INIT: &str = r#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{},"roots":{}},"clientInfo":{"name":"another","version":"9"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn init_result(id: u64, who: &str) -> String {
    format!(
        r#"{{"result":{{"protocolVersion":"2025-11-25","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"{who}","version":"1"}}}},"jsonrpc":"2.0","id":{id}}}"#
    )
}

fn text_result(id: u64, text: &str) -> String {
    format!(
        r#"{{"result":{{"content":[{{"type":"text","text":"{text}"}}]}},"jsonrpc":"2.0","id":{id}}}"#
    )
}

/// The issued session's answer headers on an initialize response.
fn issued(session: &str, req: u64) -> Option<Value> {
    Some(json!({"req": req, "status": 200,
        "headers": {"content-type": "text/event-stream", "mcp-session-id": session},
        "sse": {"event": "message"}}))
}

/// A legacy-era Streamable HTTP recording like server-everything's: a refused discover
/// probe (400, no id) on a client connection, then session S1 with a call answered as an
/// event stream (progress with CRLF lines, a sampling request answered by the client,
/// then the result), a JSON-answered call, a notification on the GET stream, DELETE;
/// then session S2.
fn legacy_tape(sb: &Sandbox) -> std::path::PathBuf {
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
    .c_http(Some("S1"), INIT_2, post_req(2))
    .s_http(Some("S1"), &init_result(2, "first"), issued("S1", 2))
    .c_http(Some("S1"), INITIALIZED, post_req(3))
    .event(Some("S1"), "reel.http", json!({"http": {"req": 4, "method": "GET", "path": "/mcp", "status": 200, "headers": {}}}))
    .c_http(
        Some("S1"),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":3}}}"#,
        post_req(5),
    )
    .s_http(
        Some("S1"),
        r#"{"method":"notifications/progress","params":{"progress":1,"total":2,"progressToken":3},"jsonrpc":"2.0"}"#,
        sse(5, "crlf"),
    )
    .s_http(
        Some("S1"),
        r#"{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5},"jsonrpc":"2.0","id":0}"#,
        sse(5, "crlf"),
    )
    .c_http(
        Some("S1"),
        r#"{"jsonrpc":"2.0","id":0,"result":{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}}"#,
        post_req(6),
    )
    .s_http(Some("S1"), &text_result(3, "slow done"), sse(5, "crlf"))
    .c_http(
        Some("S1"),
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"fast","arguments":{}}}"#,
        post_req(7),
    )
    .s_http(Some("S1"), &text_result(4, "fast done"), json_answer(7, 200))
    .s_http(
        Some("S1"),
        r#"{"method":"notifications/message","params":{"level":"info","data":"on the GET stream"},"jsonrpc":"2.0"}"#,
        sse(4, "lf"),
    )
    .c_http(
        Some("S1"),
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"who","arguments":{}}}"#,
        post_req(8),
    )
    .s_http(Some("S1"), &text_result(5, "session one"), json_answer(8, 200))
    .event(Some("S1"), "reel.http", json!({"http": {"req": 9, "method": "DELETE", "path": "/mcp", "status": 200, "headers": {}}}))
    .c_http(Some("S2"), INIT_2, post_req(10))
    .s_http(Some("S2"), &init_result(2, "second"), issued("S2", 10))
    .c_http(
        Some("S2"),
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"who","arguments":{}}}"#,
        post_req(11),
    )
    .s_http(Some("S2"), &text_result(5, "session two"), json_answer(11, 200));
    t.write(&sb.path("legacy.jsonl"))
}

/// Opens a live session; its id.
fn initialize(p: &Player) -> String {
    let r = post(&p.addr, &p.path, None, LIVE_INIT);
    assert_eq!(r.status, 200, "{}", r.text());
    let id = r
        .header("mcp-session-id")
        .expect("a session id is issued")
        .to_owned();
    let ack = post(&p.addr, &p.path, Some(&id), INITIALIZED);
    assert_eq!(ack.status, 202);
    id
}

fn call(name: &str, id: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":"{id}","method":"tools/call","params":{{"name":"{name}","arguments":{{}}}}}}"#
    )
}

#[test]
fn the_listening_line_names_the_recorded_path_and_the_probe_gets_the_recorded_400() {
    let sb = Sandbox::new();
    let trace = legacy_tape(&sb);
    let p = Player::start(&trace, &[]);
    assert_eq!(p.path, "/mcp");
    assert!(p.addr.starts_with("127.0.0.1:"), "{}", p.addr);
    let r = post(
        &p.addr,
        "/mcp",
        None,
        r#"{"jsonrpc":"2.0","id":"probe","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"x","version":"2"}}}}"#,
    );
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("application/json"));
    let body = r.json();
    assert_eq!(body["error"]["code"], -32000);
    assert_eq!(
        body["error"]["message"],
        "Bad Request: Server not initialized"
    );
    // The recorded body, id-less as the server sent it: the HTTP exchange pairs it.
    assert!(body["id"].is_null(), "{body}");
    assert!(r.header("mcp-session-id").is_none());
    let s = p.stop();
    assert_eq!(s.code(), Some(0), "{}", s.stderr);
}

#[test]
fn an_event_stream_answer_carries_notifications_and_server_requests_before_the_result() {
    let sb = Sandbox::new();
    let trace = legacy_tape(&sb);
    let p = Player::start(&trace, &[]);
    let session = initialize(&p);
    let mut c = post_open(
        &p.addr,
        &p.path,
        Some(&session),
        r#"{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"live-token"}}}"#,
    );
    assert_eq!(c.status, 200);
    assert_eq!(c.header("content-type"), Some("text/event-stream"));
    assert_eq!(c.header("mcp-session-id"), Some(session.as_str()));
    let first = c.events(2);
    // The recorded stream's line endings (CRLF) are kept.
    assert!(String::from_utf8_lossy(&c.body).contains("\r\n\r\n"));
    let progress = data(&first[0]);
    assert_eq!(progress["method"], "notifications/progress");
    assert_eq!(progress["params"]["progressToken"], "live-token");
    let ask = data(&first[1]);
    assert_eq!(ask["method"], "sampling/createMessage");
    let fresh = ask["id"].clone();
    // The result waits for the client's answer, which goes in its own POST.
    let answer = json!({"jsonrpc":"2.0","id":fresh,"result":{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}});
    let r = post(&p.addr, &p.path, Some(&session), &answer.to_string());
    assert_eq!(r.status, 202);
    let all = c.events(3);
    let result = data(&all[2]);
    assert_eq!(result["id"], "c1");
    assert_eq!(result["result"]["content"][0]["text"], "slow done");
    // The stream ends with the result.
    let rest = c.finish();
    assert_eq!(rest.text().matches("data:").count(), 3, "{}", rest.text());

    // A call answered with JSON is JSON, and the GET stream gets the notification that
    // belonged to no request.
    let mut get = open(
        &p.addr,
        "GET",
        &p.path,
        &[
            ("accept", "text/event-stream"),
            ("mcp-session-id", &session),
        ],
        "",
    );
    assert_eq!(get.status, 200);
    let r = post(&p.addr, &p.path, Some(&session), &call("fast", "c2"));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.json()["result"]["content"][0]["text"], "fast done");
    let on_get = get.events(1);
    assert_eq!(data(&on_get[0])["params"]["data"], "on the GET stream");
    let s = p.stop();
    assert_eq!(s.code(), Some(0), "{}", s.stderr);
}

#[test]
fn client_drift_on_a_server_request_is_reported_and_sets_exit_4() {
    let sb = Sandbox::new();
    let trace = legacy_tape(&sb);
    let p = Player::start(&trace, &[]);
    let session = initialize(&p);
    let mut c = post_open(&p.addr, &p.path, Some(&session), &call("slow", "c1"));
    let evs = c.events(1);
    // No progress token was asked for, so none is sent: the first event is the request.
    let ask = data(&evs[0]);
    assert_eq!(ask["method"], "sampling/createMessage");
    let answer = json!({"jsonrpc":"2.0","id":ask["id"],"result":{"role":"assistant","content":{"type":"text","text":"another answer"},"model":"m"}});
    assert_eq!(
        post(&p.addr, &p.path, Some(&session), &answer.to_string()).status,
        202
    );
    let evs = c.events(2);
    assert_eq!(data(&evs[1])["result"]["content"][0]["text"], "slow done");
    let s = p.stop();
    assert_eq!(s.code(), Some(4), "{}", s.stderr);
    assert!(s.stderr.contains("client drift"), "{}", s.stderr);
    assert!(s.stderr.contains("/result/content/text"), "{}", s.stderr);
}

#[test]
fn sessions_are_served_in_order_unknown_ones_get_404_and_delete_ends_one() {
    let sb = Sandbox::new();
    let trace = legacy_tape(&sb);
    let p = Player::start(&trace, &[]);
    let first = initialize(&p);
    let second = initialize(&p);
    assert_ne!(first, second);
    // Each live session is answered from its own recorded session, whatever the order
    // of the calls.
    let two = post(&p.addr, &p.path, Some(&second), &call("who", "w2"));
    assert_eq!(two.json()["result"]["content"][0]["text"], "session two");
    let one = post(&p.addr, &p.path, Some(&first), &call("who", "w1"));
    assert_eq!(one.json()["result"]["content"][0]["text"], "session one");
    assert_eq!(one.json()["id"], "w1");

    let unknown = post(&p.addr, &p.path, Some("no-such-session"), &call("who", "x"));
    assert_eq!(unknown.status, 404);
    // A body over the 64 MiB line limit is refused, and the client, still sending
    // when the limit is passed, gets to read the refusal.
    let huge = "x".repeat((64 << 20) + (16 << 20));
    let refused = post(&p.addr, &p.path, Some(&first), &huge);
    assert_eq!(refused.status, 413, "{}", refused.text());
    // Only the MCP endpoint takes messages.
    let elsewhere = post(&p.addr, "/elsewhere", Some(&first), &call("who", "w0"));
    assert_eq!(elsewhere.status, 404, "{}", elsewhere.text());
    let get = request(
        &p.addr,
        "GET",
        &p.path,
        &[("accept", "text/event-stream"), ("mcp-session-id", "nope")],
        "",
    );
    assert_eq!(get.status, 404);

    let del = request(
        &p.addr,
        "DELETE",
        &p.path,
        &[("mcp-session-id", &second)],
        "",
    );
    assert_eq!(del.status, 200);
    let after = post(&p.addr, &p.path, Some(&second), &call("who", "w3"));
    assert_eq!(after.status, 404);

    // A third live session has no recorded counterpart: its requests are misses.
    let third = post(&p.addr, &p.path, None, LIVE_INIT);
    assert_eq!(third.json()["error"]["code"], -32601, "{}", third.text());
    let s = p.stop();
    assert_eq!(s.code(), Some(3), "{}", s.stderr);
    assert!(
        s.stderr
            .contains("live session 3 has no recorded counterpart"),
        "{}",
        s.stderr
    );
    assert!(s.stderr.contains("3 live sessions served"), "{}", s.stderr);
}

#[test]
fn a_foreign_host_or_origin_is_refused_with_403() {
    let sb = Sandbox::new();
    let trace = legacy_tape(&sb);
    let p = Player::start(&trace, &[]);
    for headers in [
        vec![
            ("host", "evil.example:80"),
            ("content-type", "application/json"),
        ],
        vec![
            ("origin", "http://evil.example"),
            ("content-type", "application/json"),
        ],
        vec![("origin", "null"), ("content-type", "application/json")],
        // A foreign name in a second Host or Origin line, not only in the first.
        vec![
            ("host", "localhost"),
            ("host", "evil.example"),
            ("content-type", "application/json"),
        ],
        vec![
            ("origin", "http://localhost"),
            ("origin", "http://evil.example"),
            ("content-type", "application/json"),
        ],
    ] {
        let r = request(&p.addr, "POST", &p.path, &headers, LIVE_INIT);
        assert_eq!(r.status, 403, "{headers:?}: {}", r.text());
    }
    let ok = request(
        &p.addr,
        "POST",
        &p.path,
        &[
            ("host", "localhost"),
            ("origin", &format!("http://{}", p.addr)),
            ("content-type", "application/json"),
        ],
        LIVE_INIT,
    );
    assert_eq!(ok.status, 200, "{}", ok.text());
    let s = p.stop();
    assert!(s.stderr.contains("refused a request"), "{}", s.stderr);
}

/// A 2026-07-28 recording: every request session-less on a client connection, JSON and
/// event-stream answers, the GET refused with 405.
fn modern_tape(sb: &Sandbox) -> std::path::PathBuf {
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"recorded","version":"1"}}"#;
    let mut t = TraceBuilder::http("http://127.0.0.1:1/api/mcp");
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
    .event(Some("reel:conn-2"), "reel.http", json!({"http": {"req": 2, "method": "GET", "path": "/api/mcp", "status": 405, "headers": {}}}))
    .c_http(
        Some("reel:conn-3"),
        &format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"count","arguments":{{}},{meta}}}}}"#),
        post_req(3),
    )
    .s_http(
        Some("reel:conn-3"),
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"counting"}}"#,
        sse(3, "crlf"),
    )
    .s_http(
        Some("reel:conn-3"),
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"counted"}],"resultType":"complete"}}"#,
        sse(3, "crlf"),
    );
    t.write(&sb.path("modern.jsonl"))
}

#[test]
fn session_less_2026_07_28_requests_get_answers_without_a_session() {
    let sb = Sandbox::new();
    let trace = modern_tape(&sb);
    let p = Player::start(&trace, &[]);
    assert_eq!(p.path, "/api/mcp");
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"live","version":"3"}}"#;
    let h = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "server/discover"),
    ];
    let d = request(
        &p.addr,
        "POST",
        &p.path,
        &h,
        &format!(r#"{{"jsonrpc":"2.0","id":10,"method":"server/discover","params":{{{meta}}}}}"#),
    );
    assert_eq!(d.status, 200);
    assert_eq!(d.json()["result"]["supportedVersions"][0], "2026-07-28");
    assert!(d.header("mcp-session-id").is_none());
    let mut c = open(
        &p.addr,
        "POST",
        &p.path,
        &[
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "count"),
        ],
        &format!(
            r#"{{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{{"name":"count","arguments":{{}},{meta}}}}}"#
        ),
    );
    assert_eq!(c.header("content-type"), Some("text/event-stream"));
    assert!(c.header("mcp-session-id").is_none());
    let evs = c.events(2);
    assert_eq!(data(&evs[0])["method"], "notifications/message");
    assert_eq!(data(&evs[1])["id"], 11);
    let get = request(
        &p.addr,
        "GET",
        &p.path,
        &[("accept", "text/event-stream")],
        "",
    );
    assert_eq!(get.status, 405);
    let s = p.stop();
    assert_eq!(s.code(), Some(0), "{}", s.stderr);
    assert!(
        s.stderr.contains("2 answered from the tape"),
        "{}",
        s.stderr
    );
}

#[test]
fn closing_the_stream_before_the_answer_cancels_the_request() {
    let sb = Sandbox::new();
    let trace = legacy_tape(&sb);
    let p = Player::start(&trace, &[]);
    let session = initialize(&p);
    {
        let mut c = post_open(&p.addr, &p.path, Some(&session), &call("slow", "c1"));
        let evs = c.events(1);
        assert_eq!(data(&evs[0])["method"], "sampling/createMessage");
        // The client goes away without answering.
    }
    // Later calls still work.
    let r = post(&p.addr, &p.path, Some(&session), &call("fast", "c2"));
    assert_eq!(r.json()["result"]["content"][0]["text"], "fast done");
    let s = p.stop();
    assert!(s.stderr.contains("1 cancelled"), "{}", s.stderr);
    assert_eq!(s.code(), Some(0), "{}", s.stderr);
}

#[test]
fn sigterm_ends_with_the_summary_and_exit_3_for_misses() {
    let sb = Sandbox::new();
    let trace = legacy_tape(&sb);
    let p = Player::start(&trace, &[]);
    let session = initialize(&p);
    let miss = post(&p.addr, &p.path, Some(&session), &call("unknown-tool", "m"));
    assert_eq!(miss.status, 200);
    assert_eq!(miss.json()["error"]["code"], -32010, "{}", miss.text());
    let s = p.stop();
    assert_eq!(s.code(), Some(3), "{}", s.stderr);
    assert!(s.stderr.contains("miss: tools/call"), "{}", s.stderr);
    assert!(s.stderr.contains("1 missed"), "{}", s.stderr);
    assert!(
        s.stderr.contains("1 recorded session never replayed"),
        "{}",
        s.stderr
    );
}

#[test]
fn a_stdio_trace_is_served_over_http() {
    let sb = Sandbox::new();
    let mut t = TraceBuilder::stdio();
    t.c_http(
        None,
        r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}"#,
        None,
    )
    .s_http(
        None,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#,
        None,
    )
    .c(INIT_2)
    .s(&init_result(2, "stdio"))
    .c(INITIALIZED)
    .s_http(
        None,
        r#"{"jsonrpc":"2.0","id":0,"method":"roots/list"}"#,
        None,
    )
    .c_http(
        None,
        r#"{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}"#,
        None,
    )
    .c_http(
        None,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"who","arguments":{}}}"#,
        None,
    )
    .s(&text_result(3, "over stdio"));
    let trace = t.write(&sb.path("stdio.jsonl"));
    let p = Player::start(&trace, &[]);
    assert_eq!(p.path, "/mcp");
    // The probe comes before any session, and is answered from the one recorded.
    let probe = post(
        &p.addr,
        &p.path,
        None,
        r#"{"jsonrpc":"2.0","id":"p","method":"server/discover","params":{}}"#,
    );
    assert_eq!(probe.json()["error"]["code"], -32601);
    let session = initialize(&p);
    let mut get = open(
        &p.addr,
        "GET",
        &p.path,
        &[
            ("accept", "text/event-stream"),
            ("mcp-session-id", &session),
        ],
        "",
    );
    assert_eq!(get.status, 200);
    let roots = get.events(1);
    let ask = data(&roots[0]);
    assert_eq!(ask["method"], "roots/list");
    let answer = json!({"jsonrpc":"2.0","id":ask["id"],"result":{"roots":[]}});
    assert_eq!(
        post(&p.addr, &p.path, Some(&session), &answer.to_string()).status,
        202
    );
    let r = post(
        &p.addr,
        &p.path,
        Some(&session),
        &call("who", 7.to_string().as_str()),
    );
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.json()["result"]["content"][0]["text"], "over stdio");
    let s = p.stop();
    assert_eq!(s.code(), Some(0), "{}", s.stderr);
}

#[test]
fn an_http_trace_is_served_over_stdio_probe_and_session_together() {
    let sb = Sandbox::new();
    let trace = legacy_tape(&sb);
    let mut child = reel()
        .arg("play")
        .arg(&trace)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("reel play");
    {
        let mut stdin = child.stdin.take().expect("stdin");
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            LIVE_INIT,
            INITIALIZED,
            &call("who", "w"),
        ] {
            writeln!(stdin, "{line}").unwrap();
        }
    }
    let out = child.wait_with_output().expect("reel play ends");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let answers: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect();
    // Over stdio the refusal carries the live id (no HTTP status to pair it by).
    assert_eq!(answers[0]["id"], 1);
    assert_eq!(answers[0]["error"]["code"], -32000);
    assert_eq!(answers[1]["id"], "i");
    assert_eq!(answers[1]["result"]["serverInfo"]["name"], "first");
    let who = answers
        .iter()
        .find(|a| a["id"] == "w")
        .expect("who is answered");
    assert_eq!(who["result"]["content"][0]["text"], "session one");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn legacy_http_sse_is_served_as_recorded() {
    let sb = Sandbox::new();
    let mut t = TraceBuilder::http("http://127.0.0.1:1/sse");
    let s = Some("L1");
    let on_stream = |_| sse(1, "lf");
    t.event(s, "reel.http", json!({"http": {"req": 1, "method": "GET", "path": "/sse", "status": 200, "headers": {"content-type": "text/event-stream"}}}))
        .event(s, "reel.sse", json!({"text": "/message?sessionId=L1", "http": {"req": 1, "status": 200, "headers": {}, "sse": {"event": "endpoint"}}}))
        .c_http(s, INIT_2, Some(json!({"req": 2, "method": "POST", "path": "/message?sessionId=L1", "headers": {}})))
        .s_http(s, &init_result(2, "legacy"), on_stream(()))
        .c_http(s, INITIALIZED, Some(json!({"req": 3, "method": "POST", "path": "/message?sessionId=L1", "headers": {}})))
        .c_http(s, r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"who","arguments":{}}}"#, Some(json!({"req": 4, "method": "POST", "path": "/message?sessionId=L1", "headers": {}})))
        .s_http(s, &text_result(3, "legacy sse"), on_stream(()));
    let trace = t.write(&sb.path("sse.jsonl"));
    let p = Player::start(&trace, &[]);
    assert_eq!(p.path, "/sse");
    let mut stream = open(
        &p.addr,
        "GET",
        "/sse",
        &[("accept", "text/event-stream")],
        "",
    );
    assert_eq!(stream.status, 200);
    let ev = stream.events(1);
    assert!(
        ev[0].contains(&("event".to_owned(), "endpoint".to_owned())),
        "{ev:?}"
    );
    let endpoint = ev[0]
        .iter()
        .find(|(k, _)| k == "data")
        .map(|(_, v)| v.clone())
        .expect("endpoint data");
    assert!(endpoint.starts_with("/message?sessionId="), "{endpoint}");
    assert!(!endpoint.ends_with("=L1"), "a fresh session id: {endpoint}");
    let h = [("content-type", "application/json")];
    let r = request(&p.addr, "POST", &endpoint, &h, LIVE_INIT);
    assert_eq!((r.status, r.text().as_str()), (202, "Accepted"));
    assert_eq!(
        request(&p.addr, "POST", &endpoint, &h, INITIALIZED).status,
        202
    );
    assert_eq!(
        request(&p.addr, "POST", &endpoint, &h, &call("who", "w")).status,
        202
    );
    let evs = stream.events(3);
    assert_eq!(data(&evs[1])["result"]["serverInfo"]["name"], "legacy");
    assert_eq!(data(&evs[2])["result"]["content"][0]["text"], "legacy sse");
    let unknown = request(&p.addr, "POST", "/message?sessionId=nope", &h, INITIALIZED);
    assert_eq!(unknown.status, 404);
    let s = p.stop();
    assert_eq!(s.code(), Some(0), "{}", s.stderr);
}

#[test]
fn record_writes_the_replay_with_its_sessions() {
    let sb = Sandbox::new();
    let trace = legacy_tape(&sb);
    let dir = sb.path("replays");
    let p = Player::start(&trace, &["--record", dir.to_str().unwrap()]);
    let session = initialize(&p);
    let r = post(&p.addr, &p.path, Some(&session), &call("fast", "f"));
    assert_eq!(r.status, 200);
    let s = p.stop();
    assert_eq!(s.code(), Some(0), "{}", s.stderr);
    let lines = trace_lines(&only_trace(&dir));
    assert_eq!(lines[0]["transport"], "http");
    let msgs: Vec<&Value> = lines
        .iter()
        .filter(|l| l["dir"] == "in" || l["dir"] == "out")
        .collect();
    assert!(msgs.len() >= 4, "{msgs:?}");
    assert!(
        msgs.iter().all(|m| m["session"] == session.as_str()),
        "{msgs:?}"
    );
    let out = msgs
        .iter()
        .find(|m| m["raw"]["id"] == "f" && m["dir"] == "out")
        .expect("the answer");
    assert_eq!(out["origin"], "tape");
    let (code, _, err) = support::run({
        let mut c = reel();
        c.arg("check").arg(only_trace(&dir));
        c
    });
    assert_eq!(code, Some(0), "{err}");
}

/// A session like the conformance suite's SSE polling test: every stream starts with a
/// priming event (an id, `retry`, empty data); the server closes the call's stream after
/// its priming event and the answer comes on the GET the client opens to resume.
fn polling_tape(sb: &Sandbox) -> std::path::PathBuf {
    let mut t = TraceBuilder::http("http://127.0.0.1:1/mcp");
    let s = Some("P");
    let priming = |req: u64, id: &str| {
        json!({"text": "", "http": {"req": req, "status": 200, "headers": {"content-type": "text/event-stream"},
            "sse": {"id": id, "retry": 500, "eol": "crlf"}}})
    };
    t.c_http(s, INIT_2, post_req(1))
        .event(s, "reel.sse", priming(1, "p1"))
        .s_http(s, &init_result(2, "polling"), issued("P", 1))
        .c_http(s, INITIALIZED, post_req(2))
        .event(s, "reel.http", json!({"http": {"req": 3, "method": "GET", "path": "/mcp", "status": 200, "headers": {}}}))
        .c_http(s, &call("reconnect", "x").replace("\"x\"", "2"), post_req(4))
        .event(s, "reel.sse", priming(4, "p2"))
        .event(s, "reel.http", json!({"http": {"req": 5, "method": "GET", "path": "/mcp", "status": 200, "headers": {}}}))
        .event(s, "reel.sse", priming(5, "p3"))
        .s_http(s, &text_result(2, "after resuming"), sse(5, "crlf"))
        .c_http(s, &call("abandoned", "x").replace("\"x\"", "3"), post_req(6))
        .event(s, "reel.sse", priming(6, "p4"))
        .event(s, "reel.http", json!({"http": {"req": 6, "method": "POST", "path": "/mcp", "status": 200, "end": "client", "headers": {"content-type": "text/event-stream"}}}));
    t.write(&sb.path("polling.jsonl"))
}

#[test]
fn priming_events_a_closed_stream_and_its_resumption_are_served_as_recorded() {
    let sb = Sandbox::new();
    let trace = polling_tape(&sb);
    let p = Player::start(&trace, &[]);
    let mut init = post_open(&p.addr, &p.path, None, LIVE_INIT);
    let session = init.header("mcp-session-id").expect("a session").to_owned();
    let evs = init.events(2);
    assert!(
        evs[0].contains(&("id".to_owned(), "p1".to_owned())),
        "{evs:?}"
    );
    assert!(
        evs[0].contains(&("retry".to_owned(), "500".to_owned())),
        "{evs:?}"
    );
    assert!(
        evs[0].contains(&("data".to_owned(), String::new())),
        "{evs:?}"
    );
    assert_eq!(data(&evs[1])["id"], "i");
    assert_eq!(
        post(&p.addr, &p.path, Some(&session), INITIALIZED).status,
        202
    );
    // The client's own server stream, opened as its SDK does: the answer is not for it.
    let mut plain = open(
        &p.addr,
        "GET",
        &p.path,
        &[
            ("accept", "text/event-stream"),
            ("mcp-session-id", &session),
        ],
        "",
    );
    let call_stream = post(&p.addr, &p.path, Some(&session), &call("reconnect", "r"));
    assert_eq!(call_stream.status, 200);
    let text = call_stream.text();
    assert!(text.contains("id: p2"), "{text}");
    assert!(
        !text.contains("after resuming"),
        "the stream closes before the answer: {text}"
    );
    let mut resumed = open(
        &p.addr,
        "GET",
        &p.path,
        &[
            ("accept", "text/event-stream"),
            ("mcp-session-id", &session),
            ("last-event-id", "p2"),
        ],
        "",
    );
    let evs = resumed.events(1);
    assert_eq!(data(&evs[0])["id"], "r");
    assert_eq!(
        data(&evs[0])["result"]["content"][0]["text"],
        "after resuming"
    );

    // A call whose stream the recorded client left: the stream opens, nothing comes.
    let mut held = post_open(&p.addr, &p.path, Some(&session), &call("abandoned", "a"));
    assert_eq!(held.status, 200);
    assert_eq!(held.header("content-type"), Some("text/event-stream"));
    let evs = held.events(1);
    assert!(
        evs[0].contains(&("id".to_owned(), "p4".to_owned())),
        "{evs:?}"
    );
    drop(held);
    let s = p.stop();
    assert_eq!(s.code(), Some(0), "{}", s.stderr);
    assert!(s.stderr.contains(" 0 missed"), "{}", s.stderr);
    // The plain stream got nothing of it.
    let rest = {
        plain.body.clear();
        String::from_utf8_lossy(&plain.finish().body).into_owned()
    };
    assert!(!rest.contains("after resuming"), "{rest}");
}

#[test]
fn pace_replays_the_recorded_timing_over_http() {
    let sb = Sandbox::new();
    let mut t = TraceBuilder::http("http://127.0.0.1:1/mcp");
    let s = Some("T");
    t.c_http(s, INIT_2, post_req(1))
        .s_http(s, &init_result(2, "paced"), issued("T", 1))
        .c_http(
            s,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":3}}}"#,
            post_req(2),
        )
        .wait(200)
        .s_http(
            s,
            r#"{"method":"notifications/progress","params":{"progress":1,"total":2,"progressToken":3},"jsonrpc":"2.0"}"#,
            sse(2, "lf"),
        )
        .wait(200)
        .s_http(s, &text_result(3, "paced done"), sse(2, "lf"));
    let trace = t.write(&sb.path("paced.jsonl"));
    let p = Player::start(&trace, &["--pace", "2x"]);
    let session = initialize(&p);
    let mut c = post_open(
        &p.addr,
        &p.path,
        Some(&session),
        r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"t"}}}"#,
    );
    let evs = c.events(2);
    assert_eq!(data(&evs[0])["params"]["progressToken"], "t");
    assert_eq!(data(&evs[1])["result"]["content"][0]["text"], "paced done");
    let s = p.stop();
    assert_eq!(s.code(), Some(0), "{}", s.stderr);
}

#[test]
fn a_probe_the_recording_never_saw_is_refused_as_a_legacy_server_does() {
    let sb = Sandbox::new();
    let mut t = TraceBuilder::http("http://127.0.0.1:1/mcp");
    t.c_http(Some("S"), INIT_2, post_req(1))
        .s_http(Some("S"), &init_result(2, "legacy only"), issued("S", 1))
        .c_http(Some("S"), INITIALIZED, post_req(2));
    let trace = t.write(&sb.path("no-probe.jsonl"));
    let p = Player::start(&trace, &[]);
    let probe = post(
        &p.addr,
        &p.path,
        None,
        r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
    );
    assert_eq!(probe.json()["error"]["code"], -32601, "{}", probe.text());
    let session = initialize(&p);
    assert!(!session.is_empty());
    let s = p.stop();
    assert_eq!(s.code(), Some(0), "{}", s.stderr);
    assert!(s.stderr.contains("1 generic, 0 missed"), "{}", s.stderr);
}

/// The loopback guard stops browsers, not other machines: a listener on a non-loopback
/// address says that anyone who can reach it gets the recording's answers, as `rec
/// --url` does.
#[test]
fn a_non_loopback_listen_address_is_warned_about() {
    let sb = Sandbox::new();
    let trace = legacy_tape(&sb);
    let mut cmd = reel();
    cmd.arg("play").arg(&trace).args(["--listen", "0.0.0.0:0"]);
    let p = Player::listening(cmd);
    let s = p.stop();
    assert!(
        s.stderr.contains("WARNING: listening on 0.0.0.0:")
            && s.stderr.contains("not a loopback address"),
        "{}",
        s.stderr
    );
}

/// Each live session gets a tape server of its own; none of them opens the trace again
/// (one open serves all), so ten thousand sessions, never closed, hold no more file
/// descriptors than the first hundred did.
#[test]
fn ten_thousand_sessions_keep_the_file_descriptors_flat() {
    let sb = Sandbox::new();
    let mut t = TraceBuilder::stdio();
    t.c(INIT_2).s(&init_result(2, "soak"));
    let trace = t.write(&sb.path("soak.jsonl"));
    let p = Player::start(&trace, &[]);
    let open_session = |i: usize| {
        let r = post(&p.addr, &p.path, None, LIVE_INIT);
        assert_eq!(r.status, 200, "session {i}: {}", r.text());
        assert!(r.header("mcp-session-id").is_some(), "session {i}");
    };
    for i in 0..100 {
        open_session(i);
    }
    let after_100 = p.open_fds();
    for i in 100..10_000 {
        open_session(i);
    }
    let after_10k = p.open_fds();
    assert!(
        after_10k <= after_100 + 2,
        "{after_100} fds after 100 sessions, {after_10k} after 10,000"
    );
    let s = p.stop();
    assert_eq!(s.code(), Some(3), "the later sessions missed: {}", s.stderr);
}
