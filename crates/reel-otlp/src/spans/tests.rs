//! The span builder as a function: trace lines in, OTLP spans out, every attribute and
//! id checked against the lines (no file, no network).

use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use serde_json::{Value, json};

use super::*;

/// `2026-05-12T23:00:00.<ms>Z`.
fn t(ms: u32) -> String {
    format!("2026-05-12T23:00:00.{ms:03}Z")
}

/// Nanoseconds of [`t`]`(ms)`.
fn ns(ms: u32) -> u64 {
    let base = Timestamp::parse(&t(0)).unwrap();
    nanos(base) + u64::from(ms) * 1_000_000
}

/// The lines as one trace file, numbered from 1.
struct Trace {
    lines: Vec<String>,
}

impl Trace {
    fn new(lines: &[Value]) -> Trace {
        Trace {
            lines: lines.iter().map(Value::to_string).collect(),
        }
    }

    /// Its spans, in the order the builder completed them.
    fn spans(&self) -> Vec<Span> {
        let mut b = SpanBuilder::new(Some("run.jsonl".into()));
        for (i, l) in self.lines.iter().enumerate() {
            b.push(i as u64 + 1, l.as_bytes());
        }
        b.finish()
    }

    /// The seed of the session whose `meta` line is line `n`.
    fn seed(&self, n: usize) -> Seed {
        Seed::of_meta(self.lines[n - 1].as_bytes(), n as u64)
    }
}

fn attr<'a>(s: &'a Span, key: &str) -> Option<&'a Any> {
    s.attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref()?.value.as_ref())
}

fn text<'a>(s: &'a Span, key: &str) -> Option<&'a str> {
    match attr(s, key)? {
        Any::StringValue(v) => Some(v),
        other => panic!("{key} is not a string: {other:?}"),
    }
}

fn int(s: &Span, key: &str) -> Option<i64> {
    match attr(s, key)? {
        Any::IntValue(v) => Some(*v),
        other => panic!("{key} is not an integer: {other:?}"),
    }
}

fn double(s: &Span, key: &str) -> Option<f64> {
    match attr(s, key)? {
        Any::DoubleValue(v) => Some(*v),
        other => panic!("{key} is not a double: {other:?}"),
    }
}

fn named<'a>(spans: &'a [Span], name: &str) -> &'a Span {
    spans
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no span {name:?} in {:?}", names_of(spans)))
}

fn names_of(spans: &[Span]) -> Vec<&str> {
    spans.iter().map(|s| s.name.as_str()).collect()
}

/// Whether any attribute or the status holds `needle`.
fn mentions(s: &Span, needle: &str) -> bool {
    s.attributes
        .iter()
        .any(|kv| format!("{kv:?}").contains(needle))
        || s.status
            .as_ref()
            .is_some_and(|st| st.message.contains(needle))
}

fn mcp_meta() -> Value {
    json!({"v": 1, "type": "meta", "startedAt": t(0), "label": "demo",
           "command": ["node", "server.js"], "kind": "mcp"})
}

fn msg(ms: u32, dir: &str, raw: Value) -> Value {
    json!({"t": t(ms), "dir": dir, "raw": raw})
}

fn request(ms: u32, id: u64, method: &str, params: Value) -> Value {
    msg(
        ms,
        "in",
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
    )
}

fn result(ms: u32, id: u64, result: Value) -> Value {
    msg(
        ms,
        "out",
        json!({"jsonrpc": "2.0", "id": id, "result": result}),
    )
}

#[test]
fn an_mcp_request_and_its_response_are_one_client_span_under_the_session() {
    let trace = Trace::new(&[
        mcp_meta(),
        request(
            10,
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18"}),
        ),
        result(20, 1, json!({"protocolVersion": "2025-06-18"})),
        msg(
            30,
            "in",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ),
        request(
            40,
            2,
            "tools/call",
            json!({"name": "get_weather", "arguments": {"city": "Paris"}}),
        ),
        result(
            95,
            2,
            json!({"content": [{"type": "text", "text": "sunny"}]}),
        ),
        json!({"t": t(100), "type": "end", "exitCode": 0}),
    ]);
    let spans = trace.spans();
    assert_eq!(
        names_of(&spans),
        [
            "initialize",
            "notifications/initialized",
            "tools/call get_weather",
            "reel mcp session demo"
        ]
    );
    let seed = trace.seed(1);
    let call = named(&spans, "tools/call get_weather");
    assert_eq!(call.kind, SpanKind::Client as i32);
    assert_eq!(call.trace_id, seed.trace_id());
    assert_eq!(call.parent_span_id, seed.session_span_id());
    // The span is named by the request's line.
    assert_eq!(call.span_id, seed.span_id(0, 5));
    assert!(call.links.is_empty());
    assert_eq!(
        (call.start_time_unix_nano, call.end_time_unix_nano),
        (ns(40), ns(95))
    );
    assert_eq!(call.status, None);
    assert_eq!(text(call, "mcp.method.name"), Some("tools/call"));
    assert_eq!(text(call, "gen_ai.tool.name"), Some("get_weather"));
    assert_eq!(text(call, "gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(text(call, "jsonrpc.request.id"), Some("2"));
    // 2.0 is not recorded; the version the session negotiated is.
    assert_eq!(text(call, "jsonrpc.protocol.version"), None);
    assert_eq!(text(call, "mcp.protocol.version"), Some("2025-06-18"));
    assert_eq!(text(call, "network.transport"), Some("pipe"));
    assert_eq!(text(call, "reel.initiator"), Some("client"));
    assert_eq!(int(call, "reel.trace.line"), Some(5));
    // Arguments and results are payloads: never in a span.
    for s in &spans {
        assert!(!mentions(s, "Paris") && !mentions(s, "sunny"), "{s:?}");
    }

    let note = named(&spans, "notifications/initialized");
    assert_eq!(
        (note.start_time_unix_nano, note.end_time_unix_nano),
        (ns(30), ns(30))
    );
    assert_eq!(note.span_id, seed.span_id(0, 4));
    assert_eq!(text(note, "jsonrpc.request.id"), None);

    let session = named(&spans, "reel mcp session demo");
    assert_eq!(session.kind, SpanKind::Internal as i32);
    assert_eq!(session.trace_id, seed.trace_id());
    assert_eq!(session.span_id, seed.session_span_id());
    assert!(session.parent_span_id.is_empty());
    assert_eq!(
        (session.start_time_unix_nano, session.end_time_unix_nano),
        (ns(0), ns(100))
    );
    assert_eq!(text(session, "reel.session.label"), Some("demo"));
    assert_eq!(text(session, "reel.session.kind"), Some("mcp"));
    assert_eq!(
        text(session, "reel.session.command"),
        Some("node server.js")
    );
    assert_eq!(text(session, "reel.trace.file"), Some("run.jsonl"));
    assert_eq!(text(session, "mcp.protocol.version"), Some("2025-06-18"));
    assert_eq!(int(session, "reel.exit_code"), Some(0));
}

#[test]
fn an_error_answer_sets_the_status_and_the_error_type() {
    let spans = Trace::new(&[
        mcp_meta(),
        request(10, 7, "tools/call", json!({"name": "nope"})),
        msg(
            20,
            "out",
            json!({"jsonrpc": "2.0", "id": 7,
                   "error": {"code": -32602, "message": "unknown tool: nope"}}),
        ),
        request(30, 8, "tools/call", json!({"name": "read_file"})),
        result(
            40,
            8,
            json!({"isError": true, "content": [{"type": "text", "text": "ENOENT /etc/x"}]}),
        ),
    ])
    .spans();
    let refused = &spans[0];
    assert_eq!(refused.name, "tools/call nope");
    let status = refused.status.as_ref().expect("an error status");
    assert_eq!(status.code, StatusCode::Error as i32);
    assert_eq!(status.message, "unknown tool: nope");
    assert_eq!(text(refused, "error.type"), Some("-32602"));
    assert_eq!(text(refused, "rpc.response.status_code"), Some("-32602"));

    let failed = &spans[1];
    assert_eq!(failed.name, "tools/call read_file");
    assert_eq!(text(failed, "error.type"), Some("tool_error"));
    let status = failed.status.as_ref().expect("an error status");
    assert_eq!(status.code, StatusCode::Error as i32);
    assert_eq!(status.message, "the tool reported an error (isError)");
    // The tool's own words are its output: not in the span.
    assert!(!mentions(failed, "ENOENT"));
}

#[test]
fn a_refused_discovery_probe_is_no_error() {
    let spans = Trace::new(&[
        mcp_meta(),
        request(10, 1, "server/discover", json!({})),
        msg(
            20,
            "out",
            json!({"jsonrpc": "2.0", "id": 1,
                   "error": {"code": -32601, "message": "Method not found"}}),
        ),
    ])
    .spans();
    let probe = named(&spans, "server/discover");
    assert_eq!(probe.status, None);
    assert_eq!(text(probe, "reel.outcome"), Some("probe_refused"));
    assert_eq!(text(probe, "rpc.response.status_code"), Some("-32601"));
    assert_eq!(text(probe, "error.type"), None);
}

#[test]
fn requests_without_an_answer_end_when_the_trace_does_or_when_their_id_is_reused() {
    let spans = Trace::new(&[
        mcp_meta(),
        request(10, 1, "tools/list", json!({})),
        request(20, 1, "prompts/get", json!({"name": "greet"})),
        msg(
            30,
            "in",
            json!({"jsonrpc": "2.0", "method": "notifications/progress"}),
        ),
    ])
    .spans();
    let replaced = named(&spans, "tools/list");
    assert_eq!(text(replaced, "reel.outcome"), Some("replaced"));
    assert_eq!(
        (replaced.start_time_unix_nano, replaced.end_time_unix_nano),
        (ns(10), ns(20))
    );
    // No `end` line: what is open closes at the last time seen.
    let pending = named(&spans, "prompts/get greet");
    assert_eq!(text(pending, "reel.outcome"), Some("pending"));
    assert_eq!(text(pending, "gen_ai.prompt.name"), Some("greet"));
    assert_eq!(pending.end_time_unix_nano, ns(30));
    let session = spans.last().unwrap();
    assert_eq!(session.end_time_unix_nano, ns(30));
    assert_eq!(int(session, "reel.exit_code"), None);
}

#[test]
fn a_request_with_a_traceparent_joins_the_callers_trace_linked_to_the_session() {
    let caller_trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let caller_span = "00f067aa0ba902b7";
    let trace = Trace::new(&[
        json!({"v": 1, "type": "meta", "startedAt": t(0), "label": "web", "kind": "mcp",
               "transport": "http", "upstream": "http://tools.example:8931/mcp"}),
        json!({"t": t(10), "dir": "in", "session": "s-1", "raw": {
            "jsonrpc": "2.0", "id": "a", "method": "resources/read", "params": {
                "uri": "file:///notes.md",
                "_meta": {"traceparent": format!("00-{caller_trace}-{caller_span}-01")}}}}),
        json!({"t": t(20), "dir": "out", "session": "s-1",
               "raw": {"jsonrpc": "2.0", "id": "a", "result": {"contents": []}}}),
    ]);
    let spans = trace.spans();
    let seed = trace.seed(1);
    let read = named(&spans, "resources/read");
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    assert_eq!(hex(&read.trace_id), caller_trace);
    assert_eq!(hex(&read.parent_span_id), caller_span);
    assert_eq!(read.span_id, seed.span_id(0, 2));
    assert_eq!(read.links.len(), 1);
    assert_eq!(read.links[0].trace_id, seed.trace_id());
    assert_eq!(read.links[0].span_id, seed.session_span_id());
    // The URI is an attribute, never the name.
    assert_eq!(text(read, "mcp.resource.uri"), Some("file:///notes.md"));
    assert_eq!(text(read, "jsonrpc.request.id"), Some("a"));
    assert_eq!(text(read, "mcp.session.id"), Some("s-1"));
    assert_eq!(text(read, "network.transport"), Some("tcp"));
    assert_eq!(text(read, "network.protocol.name"), Some("http"));
    assert_eq!(text(read, "server.address"), Some("tools.example"));
    assert_eq!(int(read, "server.port"), Some(8931));
}

#[test]
fn a_rotated_companions_lines_get_span_ids_of_their_own() {
    let lines = [
        mcp_meta(),
        request(10, 1, "tools/list", json!({})),
        result(20, 1, json!({"tools": []})),
    ];
    let trace = Trace::new(&lines);
    let mut b = SpanBuilder::new(None);
    for (i, l) in trace.lines.iter().enumerate() {
        b.push(i as u64 + 1, l.as_bytes());
    }
    b.next_file();
    b.push(
        1,
        request(30, 2, "tools/list", json!({}))
            .to_string()
            .as_bytes(),
    );
    b.push(
        2,
        result(40, 2, json!({"tools": []})).to_string().as_bytes(),
    );
    let spans = b.finish();
    let seed = trace.seed(1);
    assert_eq!(spans[0].span_id, seed.span_id(0, 2));
    assert_eq!(spans[1].span_id, seed.span_id(1, 1));
    assert_eq!(spans[1].trace_id, seed.trace_id());
    assert_eq!(text(spans.last().unwrap(), "reel.trace.file"), None);
}

fn llm_meta() -> Value {
    json!({"v": 1, "type": "meta", "startedAt": t(0), "label": "chat", "kind": "llm"})
}

fn llm_event(ms: u32, kind: &str, req: u64, raw: Value) -> Value {
    json!({"t": t(ms), "dir": "event", "kind": kind, "raw": raw, "http": {"req": req}})
}

#[test]
fn an_llm_turn_is_a_chat_span_with_the_genai_attributes_and_usage() {
    let trace = Trace::new(&[
        llm_meta(),
        json!({"t": t(10), "type": "turn", "role": "user", "conversation": 3,
               "blocks": [{"type": "text", "text": "what is the weather?"}],
               "http": {"req": 1}}),
        {
            let mut l = llm_event(
                20,
                "llm.request",
                1,
                json!({"endpoint": "/v1/messages", "method": "POST", "status": 200,
                       "url": "https://api.anthropic.com/v1/messages",
                       "headers": {"anthropic-version": "2023-06-01"}}),
            );
            l["request"] = json!({"body": {"model": "claude-example-1", "max_tokens": 64,
                                           "temperature": 0.5, "top_p": 0.9}});
            l
        },
        json!({"t": t(900), "type": "turn", "role": "assistant", "conversation": 3,
               "model": "claude-example-1-20260501", "stop_reason": "end_turn",
               "blocks": [{"type": "text", "text": "sunny"}],
               "usage": {"input_tokens": 10, "output_tokens": 20,
                         "cache_read_input_tokens": 100, "cache_creation_input_tokens": 5},
               "timing": {"ttft_ms": 120, "duration_ms": 800},
               "http": {"req": 1}}),
    ]);
    let spans = trace.spans();
    assert_eq!(
        names_of(&spans),
        ["chat claude-example-1", "reel llm session chat"]
    );
    let seed = trace.seed(1);
    let call = &spans[0];
    assert_eq!(call.kind, SpanKind::Client as i32);
    // Named by its first line (the user turn), under the session.
    assert_eq!(call.span_id, seed.span_id(0, 2));
    assert_eq!(call.parent_span_id, seed.session_span_id());
    // The recorder's clock: it began `duration_ms` before its assistant turn.
    assert_eq!(
        (call.start_time_unix_nano, call.end_time_unix_nano),
        (ns(100), ns(900))
    );
    assert_eq!(call.status, None);
    assert_eq!(text(call, "gen_ai.operation.name"), Some("chat"));
    assert_eq!(text(call, "gen_ai.provider.name"), Some("anthropic"));
    assert_eq!(text(call, "gen_ai.request.model"), Some("claude-example-1"));
    assert_eq!(
        text(call, "gen_ai.response.model"),
        Some("claude-example-1-20260501")
    );
    assert_eq!(int(call, "gen_ai.request.max_tokens"), Some(64));
    assert_eq!(double(call, "gen_ai.request.temperature"), Some(0.5));
    assert_eq!(double(call, "gen_ai.request.top_p"), Some(0.9));
    match attr(call, "gen_ai.response.finish_reasons") {
        Some(Any::ArrayValue(a)) => assert_eq!(
            a.values,
            [opentelemetry_proto::tonic::common::v1::AnyValue {
                value: Some(Any::StringValue("end_turn".into()))
            }]
        ),
        other => panic!("finish reasons: {other:?}"),
    }
    // The conventions' input: cache reads and writes included.
    assert_eq!(int(call, "gen_ai.usage.input_tokens"), Some(115));
    assert_eq!(int(call, "gen_ai.usage.output_tokens"), Some(20));
    assert_eq!(int(call, "gen_ai.usage.cache_read.input_tokens"), Some(100));
    assert_eq!(
        int(call, "gen_ai.usage.cache_creation.input_tokens"),
        Some(5)
    );
    assert_eq!(text(call, "gen_ai.conversation.id"), Some("3"));
    assert_eq!(text(call, "server.address"), Some("api.anthropic.com"));
    assert_eq!(int(call, "server.port"), Some(443));
    assert_eq!(int(call, "http.response.status_code"), Some(200));
    assert_eq!(double(call, "reel.llm.ttft_ms"), Some(120.0));
    assert_eq!(int(call, "reel.trace.line"), Some(2));
    assert_eq!(text(call, "reel.outcome"), None);
    for s in &spans {
        assert!(!mentions(s, "weather") && !mentions(s, "sunny"), "{s:?}");
    }
}

#[test]
fn a_model_call_with_a_traceparent_header_is_a_child_of_the_callers_span() {
    let spans = Trace::new(&[
        llm_meta(),
        llm_event(
            10,
            "llm.request",
            1,
            json!({"endpoint": "/v1/chat/completions", "status": 200, "headers": {
                "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}),
        ),
        json!({"t": t(50), "type": "turn", "role": "assistant", "http": {"req": 1}}),
    ])
    .spans();
    let call = &spans[0];
    // No request body kept: the operation alone names it.
    assert_eq!(call.name, "chat");
    assert_eq!(text(call, "gen_ai.provider.name"), Some("openai"));
    assert_eq!(call.trace_id[..2], [0x4b, 0xf9]);
    assert_eq!(call.parent_span_id[7], 0xb7);
    assert_eq!(call.links.len(), 1);
    assert_eq!(
        (call.start_time_unix_nano, call.end_time_unix_nano),
        (ns(10), ns(50))
    );
}

#[test]
fn a_failed_model_call_says_why_in_its_status() {
    let spans = Trace::new(&[
        llm_meta(),
        llm_event(
            10,
            "llm.request",
            1,
            json!({"endpoint": "/v1/messages", "status": 529,
                   "headers": {"anthropic-version": "2023-06-01"}}),
        ),
        llm_event(
            20,
            "llm.error",
            1,
            json!({"status": 529, "body": {"error": {"message": "Overloaded"}}}),
        ),
        llm_event(
            30,
            "llm.error",
            2,
            json!({"endpoint": "/v1/messages", "error": "connection refused"}),
        ),
        llm_event(
            40,
            "llm.request",
            3,
            json!({"endpoint": "/v1/chat/completions", "status": 200}),
        ),
        json!({"t": t(50), "type": "turn", "role": "assistant", "truncated": true,
               "http": {"req": 3}}),
        llm_event(
            60,
            "llm.truncated",
            3,
            json!({"reason": "upstream_error: stream reset"}),
        ),
    ])
    .spans();
    assert_eq!(spans.len(), 4, "{:?}", names_of(&spans));
    let overloaded = &spans[0];
    assert_eq!(text(overloaded, "error.type"), Some("529"));
    assert_eq!(int(overloaded, "http.response.status_code"), Some(529));
    let status = overloaded.status.as_ref().unwrap();
    assert_eq!(
        (status.code, status.message.as_str()),
        (StatusCode::Error as i32, "Overloaded")
    );
    assert_eq!(overloaded.end_time_unix_nano, ns(20));

    let unreachable = &spans[1];
    assert_eq!(
        text(unreachable, "error.type"),
        Some("upstream_unreachable")
    );
    assert_eq!(
        unreachable.status.as_ref().unwrap().message,
        "connection refused"
    );

    // A cut stream: its partial turn does not end the call, its `llm.truncated` does.
    let cut = &spans[2];
    assert_eq!(text(cut, "error.type"), Some("upstream_error"));
    assert_eq!(
        cut.status.as_ref().unwrap().message,
        "the response was cut short: upstream_error: stream reset"
    );
    assert_eq!(cut.end_time_unix_nano, ns(60));
    assert_eq!(text(cut, "reel.outcome"), None);
}

#[test]
fn a_model_call_still_open_at_the_end_is_pending() {
    let spans = Trace::new(&[
        llm_meta(),
        llm_event(
            10,
            "llm.request",
            1,
            json!({"endpoint": "/v1/embeddings", "status": 200}),
        ),
        json!({"t": t(70), "type": "end"}),
    ])
    .spans();
    let call = &spans[0];
    assert_eq!(call.name, "embeddings");
    assert_eq!(text(call, "reel.outcome"), Some("pending"));
    assert_eq!(
        (call.start_time_unix_nano, call.end_time_unix_nano),
        (ns(10), ns(70))
    );
}

#[test]
fn lines_that_are_not_trace_lines_are_skipped_and_a_file_without_meta_still_has_a_session() {
    let mut b = SpanBuilder::new(Some("torn.jsonl".into()));
    b.push(1, b"not json");
    b.push(2, request(10, 1, "ping", json!({})).to_string().as_bytes());
    b.push(3, result(20, 1, json!({})).to_string().as_bytes());
    let done = b.take();
    assert_eq!(names_of(&done), ["ping"]);
    let rest = b.finish();
    assert_eq!(names_of(&rest), ["reel mcp session run"]);
    let seed = Seed::of_meta(b"torn.jsonl", 0);
    assert_eq!(done[0].trace_id, seed.trace_id());
    assert_eq!(rest[0].start_time_unix_nano, ns(10));
}
