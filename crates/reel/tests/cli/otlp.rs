//! OpenTelemetry: `reel export otlp` and `--otlp URL` on `rec` and `llm`, judged by a
//! receiver that decodes with the official `opentelemetry-proto` Python package
//! (`otlp_receiver.py`), every span checked against the trace it came from, read here
//! independently of reel's pairing.
//!
//! No OpenTelemetry Collector is installed by the peers: the registries reachable here
//! carry none (it ships as release binaries and container images).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::harness::net::{Listening, free_port, spawn_announcing};
use crate::harness::peer_runs::{Everything, Timing, record_python_with};
use crate::harness::play_http_support::{only_trace, run, trace_lines};
use crate::harness::play_support::Peers;
use crate::harness::reel;
use crate::llm::support::{Case, Llm, Upstream, python_batch};

/// The test receiver, killed on drop.
struct Receiver {
    l: Listening,
    log: PathBuf,
}

impl Receiver {
    fn start(dir: &Path, flags: &[&str]) -> Receiver {
        let log = dir.join(format!("otlp-{}.log", free_port()));
        let mut c = Command::new(Peers::get().python);
        c.arg(Peers::script("otlp_receiver.py"))
            .args(["serve", "--out"])
            .arg(&log)
            .args(flags)
            .stdin(Stdio::null());
        let l = spawn_announcing(c, "listening on ");
        Receiver { l, log }
    }

    fn traces_url(&self) -> String {
        format!("{}/v1/traces", self.l.url)
    }

    /// Every logged entry, in order.
    fn entries(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a log line"))
            .collect()
    }

    /// The spans of every request taken, in order.
    fn spans(&self) -> Vec<Value> {
        spans_of(&self.entries())
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.l.child.kill();
        let _ = self.l.child.wait();
    }
}

fn spans_of(entries: &[Value]) -> Vec<Value> {
    entries
        .iter()
        .filter_map(|e| e["spans"].as_array())
        .flatten()
        .cloned()
        .collect()
}

fn attr<'a>(span: &'a Value, key: &str) -> &'a Value {
    &span["attributes"][key]
}

/// `reel export otlp ARGS…`: exit code, stdout, stderr.
fn export(args: &[&str]) -> (Option<i32>, String, String) {
    let mut c = reel();
    c.args(["export", "otlp"])
        .args(args)
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_HEADERS");
    run(c)
}

/// What the official JSON parser reads from an OTLP/JSON file reel wrote.
fn decode_json(file: &Path) -> Vec<Value> {
    let out = Command::new(Peers::get().python)
        .arg(Peers::script("otlp_receiver.py"))
        .arg("decode-json")
        .arg(file)
        .output()
        .expect("run the decoder");
    assert!(
        out.status.success(),
        "protobuf's JSON parser refused reel's OTLP/JSON: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A recorded request and the answer it got.
struct Request {
    line: u64,
    session: Option<String>,
    method: String,
    id: String,
    params: Value,
    answer: Option<Value>,
}

/// The trace's MCP messages, paired here by (session, direction, id): each request with
/// its response line, and the notifications.
struct Expected {
    requests: Vec<Request>,
    notifications: Vec<(u64, Option<String>, String)>,
}

fn expected(trace: &Path) -> Expected {
    let lines = trace_lines(trace);
    let mut requests = Vec::new();
    let mut open: HashMap<(Option<String>, String, String), usize> = HashMap::new();
    let mut notifications = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let n = i as u64 + 1;
        let dir = l["dir"].as_str().unwrap_or_default();
        if dir != "in" && dir != "out" {
            continue;
        }
        let raw = &l["raw"];
        let session = l["session"].as_str().map(str::to_owned);
        let id_text = match &raw["id"] {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            _ => String::new(),
        };
        match (raw["method"].as_str(), raw.get("id")) {
            (Some(m), Some(id)) if !id.is_null() => {
                open.insert(
                    (session.clone(), dir.into(), id_text.clone()),
                    requests.len(),
                );
                requests.push(Request {
                    line: n,
                    session,
                    method: m.to_owned(),
                    id: id_text,
                    params: raw["params"].clone(),
                    answer: None,
                });
            }
            (Some(m), None) => notifications.push((n, session, m.to_owned())),
            (None, Some(id)) if id.is_null() => {
                // An id-less refusal (HTTP 400 to a probe): the request of its HTTP
                // request.
                let req = &l["http"]["req"];
                let k = requests.iter().position(|r| {
                    r.answer.is_none() && lines[r.line as usize - 1]["http"]["req"] == *req
                });
                if let Some(k) = k {
                    open.retain(|_, v| *v != k);
                    requests[k].answer = Some(raw.clone());
                }
            }
            (None, Some(_)) => {
                let request_dir = if dir == "in" { "out" } else { "in" };
                if let Some(k) = open.remove(&(session, request_dir.into(), id_text)) {
                    requests[k].answer = Some(raw.clone());
                }
            }
            _ => {}
        }
    }
    Expected {
        requests,
        notifications,
    }
}

/// Checks every MCP span of `spans` against the trace, and the session span.
fn assert_mcp_spans_match(trace: &Path, spans: &[Value]) {
    let want = expected(trace);
    let sessions: Vec<&Value> = spans.iter().filter(|s| s["kind"] == 1).collect();
    assert_eq!(sessions.len(), 1, "one session span: {sessions:?}");
    let root = sessions[0];
    assert_eq!(root["parent_span_id"], "", "the session span is a root");
    let by_line: HashMap<u64, &Value> = spans
        .iter()
        .filter(|s| s["kind"] == 3)
        .map(|s| (attr(s, "reel.trace.line").as_i64().unwrap() as u64, s))
        .collect();
    assert_eq!(
        by_line.len(),
        want.requests.len() + want.notifications.len(),
        "a span per request and per notification"
    );
    let mut session_ids = HashSet::new();
    for Request {
        line,
        session,
        method,
        id,
        params,
        answer,
    } in &want.requests
    {
        let s = by_line
            .get(line)
            .unwrap_or_else(|| panic!("no span for the request on line {line}"));
        assert_eq!(attr(s, "mcp.method.name"), method.as_str(), "{s}");
        assert_eq!(attr(s, "jsonrpc.request.id"), id.as_str(), "{s}");
        assert_eq!(s["trace_id"], root["trace_id"], "{s}");
        assert_eq!(s["parent_span_id"], root["span_id"], "{s}");
        match session {
            Some(id) => {
                assert_eq!(attr(s, "mcp.session.id"), id.as_str(), "{s}");
                session_ids.insert(id.clone());
            }
            None => assert!(attr(s, "mcp.session.id").is_null(), "{s}"),
        }
        if method == "tools/call" {
            let tool = params["name"].as_str().unwrap();
            assert_eq!(attr(s, "gen_ai.tool.name"), tool, "{s}");
            assert_eq!(attr(s, "gen_ai.operation.name"), "execute_tool", "{s}");
            assert_eq!(s["name"], format!("tools/call {tool}"), "{s}");
        } else if method == "prompts/get" {
            assert_eq!(attr(s, "gen_ai.prompt.name"), &params["name"], "{s}");
        } else if method == "resources/read" {
            assert_eq!(attr(s, "mcp.resource.uri"), &params["uri"], "{s}");
            assert_eq!(s["name"], "resources/read", "the URI stays out of the name");
        } else {
            assert_eq!(s["name"], method.as_str(), "{s}");
        }
        match answer {
            // A legacy server's refusal of the discover probe: not an error (the one
            // rule of reel_trace::errors), its code kept.
            Some(a) if a.get("error").is_some() && method == "server/discover" => {
                let code = a["error"]["code"].to_string();
                assert_eq!(attr(s, "rpc.response.status_code"), code.as_str(), "{s}");
                assert_eq!(attr(s, "reel.outcome"), "probe_refused", "{s}");
                assert!(attr(s, "error.type").is_null(), "{s}");
                assert_eq!(s["status"]["code"], 0, "{s}");
            }
            Some(a) if a.get("error").is_some() => {
                let code = a["error"]["code"].to_string();
                assert_eq!(attr(s, "error.type"), code.as_str(), "{s}");
                assert_eq!(attr(s, "rpc.response.status_code"), code.as_str(), "{s}");
                assert_eq!(s["status"]["code"], 2, "{s}");
                assert_eq!(s["status"]["message"], a["error"]["message"], "{s}");
            }
            Some(a) if a["result"]["isError"] == true => {
                assert_eq!(attr(s, "error.type"), "tool_error", "{s}");
                assert_eq!(s["status"]["code"], 2, "{s}");
            }
            Some(_) => {
                assert!(attr(s, "error.type").is_null(), "{s}");
                assert_eq!(s["status"]["code"], 0, "{s}");
                assert!(s["end"].as_u64() >= s["start"].as_u64(), "{s}");
            }
            None => assert_eq!(attr(s, "reel.outcome"), "pending", "{s}"),
        }
    }
    for (line, session, method) in &want.notifications {
        let s = by_line
            .get(line)
            .unwrap_or_else(|| panic!("no span for the notification on line {line}"));
        assert_eq!(attr(s, "mcp.method.name"), method.as_str(), "{s}");
        assert!(attr(s, "jsonrpc.request.id").is_null(), "{s}");
        assert_eq!(s["start"], s["end"], "{s}");
        if let Some(id) = session {
            assert_eq!(attr(s, "mcp.session.id"), id.as_str(), "{s}");
        }
    }
    let initialize = want
        .requests
        .iter()
        .find(|r| r.method == "initialize")
        .and_then(|r| r.answer.as_ref())
        .expect("an answered initialize");
    let version = initialize["result"]["protocolVersion"].as_str().unwrap();
    assert_eq!(attr(root, "mcp.protocol.version"), version, "{root}");
    let calls = want
        .requests
        .iter()
        .filter(|r| r.method == "tools/call")
        .count();
    assert!(calls > 0, "the run calls tools");
}

#[test]
fn an_exported_http_session_is_a_span_per_exchange_as_the_official_protos_read_it() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Everything::start();
    let live = Receiver::start(tmp.path(), &[]);
    let live_url = live.traces_url();
    let trace = record_python_with(
        &server,
        tmp.path(),
        "otlp",
        Timing::Sdk,
        &["--otlp", &live_url],
    );
    drop(server);
    let rx = Receiver::start(tmp.path(), &[]);
    let (code, _, err) = export(&[
        trace.to_str().unwrap(),
        "--endpoint",
        &rx.traces_url(),
        "--header",
        "x-api-key=secret-for-the-collector",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let entries = rx.entries();
    assert!(!entries.is_empty());
    for e in &entries {
        assert_eq!(e["content_type"], "application/x-protobuf", "{e}");
        assert_eq!(e["headers"]["x-api-key"], "secret-for-the-collector");
        assert_eq!(e["resource"]["service.name"], "reel");
        assert_eq!(e["scope"]["name"], "reel");
    }
    let spans = rx.spans();
    assert!(
        err.contains(&format!("sent {} spans of 1 trace to", spans.len())),
        "{err}"
    );
    assert_mcp_spans_match(&trace, &spans);
    // `rec --url --otlp` sent the same spans while it recorded.
    let mut sent_live = live.spans();
    let mut exported = spans.clone();
    let key = |s: &Value| s["span_id"].as_str().unwrap().to_owned();
    sent_live.sort_by_key(key);
    exported.sort_by_key(key);
    assert_eq!(sent_live, exported, "live spans are the exported ones");
    let root = spans.iter().find(|s| s["kind"] == 1).unwrap();
    assert_eq!(attr(root, "network.transport"), "tcp");
    assert_eq!(attr(root, "network.protocol.name"), "http");
    assert_eq!(attr(root, "server.address"), "127.0.0.1");
    assert_eq!(attr(root, "reel.session.label"), "otlp");

    // The same spans as OTLP/JSON, read by protobuf's own JSON parser; ids derive from
    // the trace, so they are the very spans the collector got.
    let file = tmp.path().join("spans.otlp.jsonl");
    let (code, _, err) = export(&[trace.to_str().unwrap(), "-o", file.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains(&format!("wrote {} spans", spans.len())),
        "{err}"
    );
    assert_eq!(spans_of(&decode_json(&file)), spans);
}

#[test]
fn model_calls_carry_the_genai_conventions_and_usage_counts_cached_input() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let up = Upstream::scripted(tmp, "up");
    let rx = Receiver::start(tmp, &[]);
    let live = rx.traces_url();
    let llm = Llm::record(&tmp.join("traces"), &up.url, &["--otlp", &live]);
    let cases = [
        Case::new("anthropic", "plain", "text"),
        Case::new("chat", "stream", "text"),
    ];
    let outcomes = python_batch(tmp, "sdk", &llm.bases(), &[], &cases);
    for o in &outcomes {
        assert!(o.out["error"].is_null(), "{}", o.out);
    }
    let failing = [Case::new("anthropic", "plain", "text").model("reel-text-500")];
    python_batch(tmp, "sdk-fail", &llm.bases(), &[], &failing);
    let stopped = llm.stop();
    assert_eq!(stopped.code(), Some(0), "{}", stopped.stderr);
    let trace = only_trace(&tmp.join("traces"));

    let spans = rx.spans();
    assert!(
        stopped
            .stderr
            .contains(&format!("reel: otlp: {} spans sent to {live}", spans.len())),
        "{}",
        stopped.stderr
    );
    let calls: Vec<&Value> = spans
        .iter()
        .filter(|s| !attr(s, "gen_ai.operation.name").is_null())
        .collect();
    // The SDKs retry a 500 (twice by default): every try is a call of its own.
    let tries = trace_lines(&trace)
        .iter()
        .filter(|l| l["kind"] == "llm.request")
        .count();
    assert_eq!(calls.len(), tries, "{calls:?}");
    assert!(tries >= 3);

    // Anthropic: input 11 + cache read 5 + cache creation 3.
    let anthropic = calls
        .iter()
        .find(|s| attr(s, "gen_ai.provider.name") == "anthropic" && s["status"]["code"] == 0)
        .expect("the Anthropic call");
    assert_eq!(anthropic["name"], "chat reel-text");
    assert_eq!(attr(anthropic, "gen_ai.operation.name"), "chat");
    assert_eq!(attr(anthropic, "gen_ai.request.model"), "reel-text");
    assert_eq!(attr(anthropic, "gen_ai.response.model"), "reel-text");
    assert_eq!(attr(anthropic, "gen_ai.usage.input_tokens"), 19);
    assert_eq!(attr(anthropic, "gen_ai.usage.output_tokens"), 7);
    assert_eq!(attr(anthropic, "gen_ai.usage.cache_read.input_tokens"), 5);
    assert_eq!(
        attr(anthropic, "gen_ai.usage.cache_creation.input_tokens"),
        3
    );
    assert_eq!(
        attr(anthropic, "gen_ai.response.finish_reasons"),
        &json!(["end_turn"])
    );
    assert_eq!(attr(anthropic, "server.address"), "127.0.0.1");
    assert_eq!(attr(anthropic, "http.response.status_code"), 200);
    assert!(!attr(anthropic, "gen_ai.request.max_tokens").is_null());
    assert_eq!(anthropic["kind"], 3);

    // The trace's own usage for that call, as normalised there.
    let turn = trace_lines(&trace)
        .into_iter()
        .find(|l| {
            l["type"] == "turn" && l["role"] == "assistant" && l["endpoint"] == "/v1/messages"
        })
        .unwrap();
    let u = &turn["usage"];
    assert_eq!(
        attr(anthropic, "gen_ai.usage.input_tokens")
            .as_i64()
            .unwrap(),
        u["input_tokens"].as_i64().unwrap()
            + u["cache_read_input_tokens"].as_i64().unwrap()
            + u["cache_creation_input_tokens"].as_i64().unwrap()
    );

    // OpenAI chat: prompt 20 of which 4 cached, completion 9.
    let chat = calls
        .iter()
        .find(|s| attr(s, "gen_ai.provider.name") == "openai")
        .expect("the chat call");
    assert_eq!(attr(chat, "gen_ai.usage.input_tokens"), 20);
    assert_eq!(attr(chat, "gen_ai.usage.cache_read.input_tokens"), 4);
    assert_eq!(attr(chat, "gen_ai.usage.output_tokens"), 9);
    assert_eq!(
        attr(chat, "gen_ai.response.finish_reasons"),
        &json!(["stop"])
    );
    assert!(
        !attr(chat, "reel.llm.ttft_ms").is_null(),
        "a stream: {chat}"
    );

    // The 500s: errors with the status as their class.
    let failed: Vec<&&Value> = calls.iter().filter(|s| s["status"]["code"] == 2).collect();
    assert_eq!(failed.len(), tries - 2, "{failed:?}");
    for f in failed {
        assert_eq!(attr(f, "error.type"), "500", "{f}");
        assert_eq!(attr(f, "http.response.status_code"), 500, "{f}");
        assert_eq!(attr(f, "gen_ai.request.model"), "reel-text-500", "{f}");
        assert!(!f["status"]["message"].as_str().unwrap().is_empty(), "{f}");
    }

    // What was sent live is what an export of the finished file gives.
    let file = tmp.join("again.jsonl");
    let (code, _, err) = export(&[trace.to_str().unwrap(), "-o", file.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let mut again = spans_of(&decode_json(&file));
    let mut live = spans;
    let key = |s: &Value| s["span_id"].as_str().unwrap().to_owned();
    again.sort_by_key(key);
    live.sort_by_key(key);
    assert_eq!(live, again);
}

/// Runs reel's example client against `reel rec FLAGS -- reel example server` in `dir`.
fn record_example(dir: &Path, flags: &[&str]) -> (Option<i32>, String) {
    let bin = env!("CARGO_BIN_EXE_reel");
    let mut c = reel();
    c.args(["example", "client", "--", bin, "rec", "--dir"])
        .arg(dir.join("traces"))
        .args(["--name", "live"])
        .args(flags)
        .args(["--", bin, "example", "server"]);
    let (code, _, err) = run(c);
    (code, err)
}

#[test]
fn rec_otlp_sends_while_recording_and_retries_a_busy_collector() {
    let tmp = tempfile::tempdir().unwrap();
    let rx = Receiver::start(tmp.path(), &["--fail", "2"]);
    let url = rx.traces_url();
    let (code, err) = record_example(tmp.path(), &["--otlp", &url]);
    assert_eq!(code, Some(0), "{err}");
    let trace = only_trace(&tmp.path().join("traces"));
    let entries = rx.entries();
    assert_eq!(
        entries.iter().filter(|e| !e["failed"].is_null()).count(),
        2,
        "the busy answers were retried: {entries:?}"
    );
    let spans = spans_of(&entries);
    assert!(
        err.contains(&format!("reel: otlp: {} spans sent to {url}", spans.len())),
        "{err}"
    );
    assert!(!err.contains("dropped"), "{err}");
    assert!(err.contains("(2 retries)"), "{err}");
    assert_mcp_spans_match(&trace, &spans);
    let root = spans.iter().find(|s| s["kind"] == 1).unwrap();
    assert_eq!(attr(root, "network.transport"), "pipe");
    assert_eq!(attr(root, "reel.exit_code"), 0);
}

#[test]
fn a_collector_that_is_down_costs_the_recording_nothing_and_the_loss_is_counted() {
    let tmp = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{}/v1/traces", free_port());
    let (code, err) = record_example(tmp.path(), &["--otlp", &url]);
    assert_eq!(code, Some(0), "{err}");
    let trace = only_trace(&tmp.path().join("traces"));
    let lines = trace_lines(&trace);
    assert_eq!(lines.last().unwrap()["type"], "end", "the trace is whole");
    let spans = expected(&trace);
    let all = spans.requests.len() + spans.notifications.len() + 1;
    assert!(
        err.contains(&format!("reel: otlp: 0 spans sent to {url}, {all} dropped")),
        "{err}"
    );
    assert!(err.contains("cannot connect"), "{err}");

    // And `reel export` says the collector did not take them, with its own code.
    let (code, _, err) = export(&[trace.to_str().unwrap(), "--endpoint", &url]);
    assert_eq!(code, Some(69), "{err}");
    assert!(err.contains("did not take the spans"), "{err}");
}

#[test]
fn a_traceparent_the_client_sent_puts_its_call_in_the_callers_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("t.jsonl");
    let lines = [
        json!({"v":1,"type":"meta","startedAt":"2026-05-01T10:00:00.000Z","label":"tp","command":["srv"]}),
        json!({"t":"2026-05-01T10:00:00.010Z","dir":"in","raw":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}}),
        json!({"t":"2026-05-01T10:00:00.020Z","dir":"out","raw":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}}),
        json!({"t":"2026-05-01T10:00:01.000Z","dir":"in","raw":{"jsonrpc":"2.0","id":"call-7","method":"tools/call","params":{"name":"search","arguments":{},"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}}),
        json!({"t":"2026-05-01T10:00:01.250Z","dir":"out","raw":{"jsonrpc":"2.0","id":"call-7","error":{"code":-32602,"message":"Unknown tool: search"}}}),
        json!({"t":"2026-05-01T10:00:02.000Z","dir":"in","raw":{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///etc/motd","_meta":{"traceparent":"00-00000000000000000000000000000000-00f067aa0ba902b7-01"}}}}),
        json!({"t":"2026-05-01T10:00:02.100Z","dir":"in","raw":{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"lookup","arguments":{"card":"4111-1111-1111-1111"}}}}),
        json!({"t":"2026-05-01T10:00:02.200Z","dir":"out","raw":{"jsonrpc":"2.0","id":3,"result":{"isError":true,"content":[{"type":"text","text":"no account for card 4111-1111-1111-1111"}]}}}),
        json!({"t":"2026-05-01T10:00:02.300Z","dir":"in","raw":{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x".repeat(5000),"arguments":{}}}}),
        json!({"t":"2026-05-01T10:00:03.000Z","type":"end","exitCode":0}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&trace, text).unwrap();
    let file = tmp.path().join("spans.jsonl");
    let (code, _, err) = export(&[trace.to_str().unwrap(), "-o", file.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let spans = spans_of(&decode_json(&file));
    let root = spans.iter().find(|s| s["kind"] == 1).unwrap();
    let call = spans
        .iter()
        .find(|s| s["name"] == "tools/call search")
        .unwrap();
    assert_eq!(call["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(call["parent_span_id"], "00f067aa0ba902b7");
    assert_eq!(
        call["links"],
        json!([{"trace_id": root["trace_id"], "span_id": root["span_id"]}]),
        "linked to its session"
    );
    assert_eq!(attr(call, "jsonrpc.request.id"), "call-7");
    assert_eq!(attr(call, "error.type"), "-32602");
    assert_eq!(call["status"]["message"], "Unknown tool: search");
    assert_eq!(
        call["end"].as_u64().unwrap() - call["start"].as_u64().unwrap(),
        250_000_000
    );
    // An all-zero trace id is no trace context: the call stays in the session's trace.
    let read = spans
        .iter()
        .find(|s| s["name"] == "resources/read")
        .unwrap();
    assert_eq!(read["trace_id"], root["trace_id"]);
    assert_eq!(attr(read, "mcp.resource.uri"), "file:///etc/motd");
    assert_eq!(attr(read, "reel.outcome"), "pending", "never answered");
    assert_eq!(read["end"], root["end"]);
    assert_eq!(attr(root, "mcp.protocol.version"), "2025-11-25");
    assert_eq!(attr(root, "reel.session.command"), "srv");
    // A tool's error text is its output: not in the span. Nor are arguments.
    let lookup = spans
        .iter()
        .find(|s| s["name"] == "tools/call lookup")
        .unwrap();
    assert_eq!(attr(lookup, "error.type"), "tool_error");
    assert_eq!(lookup["status"]["code"], 2);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains("4111"), "no payload in the spans: {text}");
    // A long name is cut.
    let long = spans
        .iter()
        .find(|s| {
            attr(s, "gen_ai.tool.name")
                .as_str()
                .is_some_and(|n| n.starts_with("xxx"))
        })
        .unwrap();
    assert!(long["name"].as_str().unwrap().len() <= 256, "{long}");
    assert!(attr(long, "gen_ai.tool.name").as_str().unwrap().len() <= 1024);
}

#[test]
fn rotated_companions_give_spans_of_their_own() {
    let tmp = tempfile::tempdir().unwrap();
    let example = crate::harness::workspace().join("examples/everything-demo.jsonl");
    let text = std::fs::read_to_string(example).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let trace = tmp.path().join("x.jsonl");
    let older = tmp.path().join("x.jsonl.1");
    std::fs::write(&older, format!("{}\n", lines[..9].join("\n"))).unwrap();
    std::fs::write(&trace, format!("{}\n", lines[9..].join("\n"))).unwrap();
    let file = tmp.path().join("spans.jsonl");
    let (code, _, err) = export(&[trace.to_str().unwrap(), "-o", file.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let spans = spans_of(&decode_json(&file));
    let ids: HashSet<(String, String)> = spans
        .iter()
        .map(|s| (s["trace_id"].to_string(), s["span_id"].to_string()))
        .collect();
    assert_eq!(ids.len(), spans.len(), "every span its own id: {spans:#?}");
    assert!(spans.len() > 9);
}

#[test]
fn bad_flags_and_inputs_are_refused_with_their_codes() {
    let tmp = tempfile::tempdir().unwrap();
    let example = crate::harness::workspace().join("examples/everything-demo.jsonl");
    let example = example.to_str().unwrap();
    let (code, _, err) = export(&[example, "--endpoint", "ftp://collector/v1/traces"]);
    assert_eq!(code, Some(64), "{err}");
    assert!(err.contains("OTLP/HTTP traces URL"), "{err}");
    let (code, _, err) = export(&[
        example,
        "--endpoint",
        "http://127.0.0.1:1/v1/traces",
        "--header",
        "novalue",
    ]);
    assert_eq!(code, Some(64), "{err}");
    assert!(err.contains("NAME=VALUE"), "{err}");
    let missing = tmp.path().join("gone.jsonl");
    let (code, _, err) = export(&[missing.to_str().unwrap()]);
    assert_eq!(code, Some(66), "{err}");
    let mut c = reel();
    c.args(["export", "mcporter", example, example]);
    let (code, _, err) = run(c);
    assert_eq!(code, Some(64), "{err}");
    assert!(err.contains("otlp takes several"), "{err}");
    let (code, _, err) = export(&[example, "--endpoint", "http://127.0.0.1:99999/v1/traces"]);
    assert_eq!(code, Some(64), "{err}");
    assert!(
        err.contains("port 99999 is not one from 1 to 65535"),
        "{err}"
    );
    let (code, _, err) = export(&[
        example,
        "--endpoint",
        "http://u:hunter2@127.0.0.1:1/v1/traces",
    ]);
    assert_eq!(code, Some(64), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    let mut c = reel();
    c.args(["rec", "--otlp", "not a url", "--", "true"]);
    let (code, _, err) = run(c);
    assert_eq!(code, Some(64), "{err}");

    // Two traces in one export: a session span each, in traces of their own.
    let other = tmp.path().join("other.jsonl");
    let text = std::fs::read_to_string(example).unwrap();
    std::fs::write(&other, text.replacen("2026-11-30T09", "2026-11-30T10", 1)).unwrap();
    let (code, out, err) = export(&[example, other.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let sessions: Vec<Value> = out
        .lines()
        .flat_map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["resourceSpans"][0]["scopeSpans"][0]["spans"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|s| s["kind"] == 1)
        .collect();
    assert_eq!(sessions.len(), 2);
    assert_ne!(sessions[0]["traceId"], sessions[1]["traceId"]);
}
