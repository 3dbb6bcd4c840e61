//! `reel play` end to end: the built binary serving traces written here, driven line by
//! line as a client drives it. One test per behaviour of DESIGN "Replay semantics":
//! normalisation (rule by rule), misses, strict order, generic answers, cancellation,
//! concurrency, repeated calls, notifications at their place, server→client requests
//! and client drift, 2026-07-28 input_required rounds, damaged traces, the lazy index,
//! byte-level input handling, sessions, run names, `--record`, `--subset` and `--help`.

use crate::harness::play_support as support;

use serde_json::{Value, json};
use support::*;

fn call(id: Value, tool: &str, args: Value) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":args}})
        .to_string()
}

fn text_result(id: Value, text: &str) -> String {
    json!({"jsonrpc":"2.0","id":id,"result":{"content":[{"type":"text","text":text}]}}).to_string()
}

fn answer_text(v: &Value) -> &str {
    v.pointer("/result/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("not a text result: {v}"))
}

/// Starts a session: sends the live handshake and checks its answer.
fn start(p: &mut Player) {
    p.send(LIVE_INITIALIZE);
    let (init, _) = p.until_response(&json!("init"));
    assert_eq!(
        init.pointer("/result/serverInfo/name"),
        Some(&json!("taped")),
        "{init}"
    );
    p.send(INITIALIZED);
}

// ---- matching and normalisation -------------------------------------------------------

#[test]
fn another_client_identity_gets_the_recorded_bytes_with_its_own_id() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    let recorded_result =
        r#"{"content":[{"type":"text","text":"Echo: hi"}],"x":1.50,"isError":false}"#;
    t.c(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"_meta":{"progressToken":5,"io.modelcontextprotocol/clientInfo":{"name":"recorded-client","version":"1.0"},"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"info"}}}"#)
        .s(&format!(r#"{{"jsonrpc":"2.0","id":5,"result":{recorded_result}}}"#));
    let tape = t.end();
    let mut p = sb.play(&[tape.to_str().unwrap()]);
    start(&mut p);
    p.send(r#"{"jsonrpc":"2.0","id":"live-7","method":"tools/call","params":{"arguments":{"message":"hi"},"name":"echo","_meta":{"io.modelcontextprotocol/clientInfo":{"name":"other","version":"2"},"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"k=v"}}}"#);
    let line = p.recv_line();
    assert_eq!(
        line,
        format!(r#"{{"jsonrpc":"2.0","id":"live-7","result":{recorded_result}}}"#),
        "the answer is the recorded result, byte for byte, with the live id"
    );
    let out = p.finish();
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stderr.contains("2 answered from the tape"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("0 missed"), "{}", out.stderr);
}

/// Each built-in rule on its own: a recorded request and a live one that differ only
/// where the rule looks are the same request; the same difference elsewhere is a miss.
#[test]
fn every_normalisation_rule_lets_a_request_match_on_its_own() {
    struct Case {
        rule: &'static str,
        recorded: Value,
        live: Value,
    }
    let params = |extra: Value| {
        let mut p = json!({"name":"t","arguments":{"a":1}});
        if let (Some(p), Some(e)) = (p.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                p.insert(k.clone(), v.clone());
            }
        }
        p
    };
    let cases = [
        Case {
            rule: "jsonrpc-id",
            recorded: json!({"id":1,"params":params(json!({}))}),
            live: json!({"id":"another","params":params(json!({}))}),
        },
        Case {
            rule: "progress-token",
            recorded: json!({"id":1,"params":params(json!({"_meta":{"progressToken":1}}))}),
            live: json!({"id":1,"params":params(json!({"_meta":{"progressToken":"tok-9"}}))}),
        },
        Case {
            rule: "client-meta",
            recorded: json!({"id":1,"params":params(json!({"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"a","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/logLevel":"debug"}}))}),
            live: json!({"id":1,"params":params(json!({"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"b","version":"2"},"io.modelcontextprotocol/clientCapabilities":{"roots":{}},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}))}),
        },
        Case {
            rule: "trace-context",
            recorded: json!({"id":1,"params":params(json!({"_meta":{"traceparent":"00-aa-bb-01"}}))}),
            live: json!({"id":1,"params":params(json!({"_meta":{"traceparent":"00-cc-dd-01","tracestate":"x=1","baggage":"k=v"}}))}),
        },
        Case {
            rule: "empty-meta",
            recorded: json!({"id":1,"params":params(json!({}))}),
            live: json!({"id":1,"params":params(json!({"_meta":{}}))}),
        },
    ];
    for case in cases {
        let sb = Sandbox::new();
        let mut t = sb.tape("t.jsonl");
        let mut rec = case.recorded.clone();
        rec["jsonrpc"] = json!("2.0");
        rec["method"] = json!("tools/call");
        t.c(&rec.to_string()).s(&text_result(json!(1), case.rule));
        let tape = t.end();
        let mut live = case.live.clone();
        live["jsonrpc"] = json!("2.0");
        live["method"] = json!("tools/call");
        let out = play_all(&sb, &[tape.to_str().unwrap()], &[&live.to_string()]);
        assert_eq!(out.code, Some(0), "rule {}: {}", case.rule, out.stderr);
        assert_eq!(answer_text(&out.rest[0]), case.rule);
        // The same difference in the arguments is a real difference.
        let mut moved = case.live.clone();
        moved["jsonrpc"] = json!("2.0");
        moved["method"] = json!("tools/call");
        moved["params"]["arguments"]["b"] = json!(2);
        let out = play_all(&sb, &[tape.to_str().unwrap()], &[&moved.to_string()]);
        assert_eq!(out.code, Some(3), "rule {}: {}", case.rule, out.stderr);
    }
}

#[test]
fn rule_initialize_client_and_empty_params() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    t.c(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#)
        .s(r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}"#);
    let tape = t.end();
    // Another name, version, capabilities; tools/list without params at all.
    let out = play_all(
        &sb,
        &[tape.to_str().unwrap()],
        &[
            LIVE_INITIALIZE,
            INITIALIZED,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.rest[0]["id"], json!("init"));
    assert_eq!(
        out.rest[1].pointer("/result/tools/0/name"),
        Some(&json!("echo"))
    );
}

#[test]
fn ignore_pointers_make_volatile_arguments_match() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    t.c(&call(
        json!(1),
        "clock",
        json!({"tz":"UTC","now":"10:00:00"}),
    ))
    .s(&text_result(json!(1), "recorded time"));
    let tape = t.end();
    let live = call(json!(9), "clock", json!({"tz":"UTC","now":"11:59:59"}));
    let out = play_all(&sb, &[tape.to_str().unwrap()], &[&live]);
    assert_eq!(out.code, Some(3), "{}", out.stderr);
    assert!(
        out.stderr.contains("/params/arguments/now"),
        "{}",
        out.stderr
    );
    let out = play_all(
        &sb,
        &[tape.to_str().unwrap(), "--ignore", "/params/arguments/now"],
        &[&live],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(answer_text(&out.rest[0]), "recorded time");
    // Only the ignored member may differ.
    let other = call(json!(9), "clock", json!({"tz":"CET","now":"11:59:59"}));
    let out = play_all(
        &sb,
        &[tape.to_str().unwrap(), "--ignore", "/params/arguments/now"],
        &[&other],
    );
    assert_eq!(out.code, Some(3), "{}", out.stderr);
    let bad = sb
        .play(&[tape.to_str().unwrap(), "--ignore", "params/now"])
        .finish();
    assert_eq!(bad.code, Some(64), "{}", bad.stderr);
    assert!(bad.stderr.contains("must start with `/`"), "{}", bad.stderr);
}

#[test]
fn the_traces_redaction_rules_apply_to_the_live_request() {
    let sb = Sandbox::new();
    let redactor = reel_redact::redact::Redactor::builtin();
    let path = sb.path("t.jsonl");
    let mut t = TraceBuilder::tape(&path, "taped", Some(redactor.describe()));
    // What the recorder wrote: the secret already replaced.
    let recorded = call(
        json!(1),
        "deploy",
        json!({"api_key":"sk-live-0123456789abcdefghijklmn","env":"prod"}),
    );
    let redacted = redactor.redact_json(&recorded).into_owned();
    assert_ne!(redacted, recorded, "the built-in rules redact an api_key");
    t.c(&redacted).s(&text_result(json!(1), "deployed"));
    let tape = t.end();
    let rec_dir = sb.path("replays");
    let out = play_all(
        &sb,
        &[
            tape.to_str().unwrap(),
            "--record",
            rec_dir.to_str().unwrap(),
        ],
        &[&call(
            json!(4),
            "deploy",
            json!({"api_key":"sk-live-0123456789abcdefghijklmn","env":"prod"}),
        )],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(answer_text(&out.rest[0]), "deployed");
    let written = std::fs::read_dir(&rec_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(written).unwrap();
    assert!(
        !text.contains("0123456789abcdefghijklmn"),
        "the secret leaked into the replay's trace"
    );
}

// ---- misses, strict, generic ------------------------------------------------------------

#[test]
fn a_miss_names_the_request_and_the_nearest_candidate_and_exits_3() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    t.c(&call(json!(1), "echo", json!({"message":"hello"})))
        .s(&text_result(json!(1), "Echo: hello"))
        .c(&call(
            json!(2),
            "echo",
            json!({"message":"a very different text","loud":true}),
        ))
        .s(&text_result(json!(2), "Echo: other"));
    let tape = t.end();
    let mut p = sb.play(&[tape.to_str().unwrap()]);
    start(&mut p);
    p.send(&call(json!(10), "echo", json!({"message":"goodbye"})));
    let (err, _) = p.until_response(&json!(10));
    assert_eq!(err.pointer("/error/code"), Some(&json!(-32010)), "{err}");
    let msg = err
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap();
    assert!(
        msg.contains("tools/call") && msg.contains("/params/arguments/message"),
        "{msg}"
    );
    assert_eq!(
        err.pointer("/error/data/nearest/line"),
        Some(&json!(5)),
        "{err}"
    );
    // Its params are all normalised away (an empty `_meta`): the report says so.
    p.send(r#"{"jsonrpc":"2.0","id":11,"method":"resources/list","params":{"_meta":{}}}"#);
    let (unknown, _) = p.until_response(&json!(11));
    assert_eq!(
        unknown.pointer("/error/code"),
        Some(&json!(-32601)),
        "{unknown}"
    );
    let out = p.finish();
    assert_eq!(out.code, Some(3), "{}", out.stderr);
    let e = &out.stderr;
    assert!(e.contains("miss: tools/call (id 10)"), "{e}");
    assert!(
        e.contains(r#""message":"goodbye""#),
        "the request is shown: {e}"
    );
    assert!(e.contains("nearest: ") && e.contains("t.jsonl:5"), "{e}");
    assert!(
        e.contains(r#"/params/arguments/message: "hello" -> "goodbye""#),
        "{e}"
    );
    assert!(e.contains("also: ") && e.contains("t.jsonl:7"), "{e}");
    assert!(
        e.contains("miss: resources/list") && e.contains("no request with this method"),
        "{e}"
    );
    assert!(e.contains("(none left after normalisation)"), "{e}");
    assert!(e.contains("2 missed"), "{e}");
    assert!(e.contains("2 recorded exchanges unused"), "{e}");
    assert!(
        e.contains("unused: ") && e.contains(r#""message":"hello""#),
        "{e}"
    );
}

#[test]
fn report_holds_the_exit_the_verdict_the_counts_and_the_miss_report() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    t.c(&call(json!(1), "echo", json!({"message":"hello"})))
        .s(&text_result(json!(1), "Echo: hello"));
    let tape = t.end();
    let report = sb.path("report.json");
    let mut p = sb.play(&[tape.to_str().unwrap(), "--report", report.to_str().unwrap()]);
    start(&mut p);
    p.send(&call(json!(7), "echo", json!({"message":"goodbye"})));
    p.until_response(&json!(7));
    let out = p.finish();
    assert_eq!(out.code, Some(3), "{}", out.stderr);
    let doc: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(doc["format"], "reel-play-report/1");
    assert_eq!(doc["exit"], 3);
    assert_eq!(doc["verdict"], "misses");
    assert_eq!(doc["summary"]["missed"], 1, "{doc}");
    assert_eq!(doc["summary"]["answered"], 1, "initialize: {doc}");
    assert_eq!(doc["error"], Value::Null);
    // The report holds what play printed, and play still printed it.
    let text = doc["stderr"].as_str().unwrap();
    assert!(text.contains("miss: tools/call (id 7)"), "{text}");
    assert!(
        text.contains(r#"/params/arguments/message: "hello" -> "goodbye""#),
        "{text}"
    );
    assert_eq!(text, out.stderr);
    assert!(!sb.path("report.json.tmp").exists());

    // A play that cannot start still writes its report: the code and why.
    let missing = sb.path("gone.jsonl");
    let out = play_all(
        &sb,
        &[
            missing.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.code, Some(66), "{}", out.stderr);
    let doc: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(
        (doc["exit"].as_u64(), doc["verdict"].as_str()),
        (Some(66), Some("error"))
    );
    assert!(
        doc["error"].as_str().unwrap().contains("no such file"),
        "{doc}"
    );
    assert_eq!(doc["summary"], Value::Null);
}

/// Claude Code ends its MCP servers with SIGTERM while their stdin is still open: play
/// ends as at the end of input, with its summary, its report and the verdict's exit.
#[test]
fn a_signal_ends_play_with_its_summary_report_and_verdict() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    t.c(&call(json!(1), "echo", json!({"message":"hello"})))
        .s(&text_result(json!(1), "Echo: hello"));
    let tape = t.end();
    for (signal, name) in [("-TERM", "SIGTERM"), ("-INT", "SIGINT"), ("-HUP", "SIGHUP")] {
        for miss in [false, true] {
            let report = sb.path(&format!("report{signal}{miss}.json"));
            let mut p = sb.play(&[tape.to_str().unwrap(), "--report", report.to_str().unwrap()]);
            start(&mut p);
            let message = if miss { "goodbye" } else { "hello" };
            p.send(&call(json!(7), "echo", json!({ "message": message })));
            p.until_response(&json!(7));
            let out = p.signal_and_finish(signal);
            let want = if miss { 3 } else { 0 };
            assert_eq!(out.code, Some(want), "{name}: {}", out.stderr);
            assert!(
                out.stderr.contains(&format!("reel play: {name} received")),
                "{}",
                out.stderr
            );
            assert!(
                out.stderr.contains("answered"),
                "the summary: {}",
                out.stderr
            );
            let doc: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
            assert_eq!(doc["exit"], want, "{doc}");
            assert_eq!(doc["verdict"], if miss { "misses" } else { "clean" });
            assert_eq!(
                doc["summary"]["answered"],
                if miss { 1 } else { 2 },
                "{doc}"
            );
        }
    }
}

/// A tape whose only handshake is a refused `server/discover` cannot answer a legacy
/// `initialize`: the miss names both handshakes.
#[test]
fn a_handshake_that_cannot_be_bridged_says_which_eras_met() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    t.c(r#"{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{}}"#)
        .s(r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"Method not found"}}"#);
    let tape = t.end();
    let out = play_all(
        &sb,
        &[tape.to_str().unwrap()],
        &[
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
        ],
    );
    assert_eq!(out.code, Some(3), "{}", out.stderr);
    assert!(
        out.stderr.contains("the tape holds the 2026-07-28 handshake (server/discover), the client opened with the legacy initialize (protocol 2025-06-18)")
            && out.stderr.contains("not answered with a result"),
        "{}",
        out.stderr
    );
}

/// Two calls that differ only in a redacted argument are equal on the tape: replayed in
/// the other order, each gets the other's answer, and play says the match was ambiguous
/// and which recorded call it took, rather than claim a clean replay in silence.
#[test]
fn calls_equal_only_once_redacted_are_said_to_be_ambiguous() {
    let sb = Sandbox::new();
    let server = sb.path("srv.py");
    std::fs::write(
        &server,
        r#"import sys, json
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m: continue
    if m["method"] == "initialize":
        r = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}
    else:
        r = {"content": [{"type": "text", "text": "hello " + m["params"]["arguments"]["session"].split("-")[0]}]}
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
"#,
    )
    .unwrap();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    let login = |id: u64, who: &str, secret: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"login","arguments":{{"session":"{who}-{secret}"}}}}}}"#
        )
    };
    let (alice, bob) = (
        "sess-9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        "sess-0a1b2c3d4e5f60718293a4b5c6d7e8f9",
    );
    let dir = sb.path("traces");
    let input = format!(
        "{init}\n{}\n{}\n",
        login(2, "alice", alice),
        login(3, "bob", bob)
    );
    let mut rec = crate::harness::reel();
    rec.arg("rec")
        .arg("--dir")
        .arg(&dir)
        .arg("--")
        .arg(crate::harness::play_support::Peers::get().python)
        .arg(&server);
    let out = crate::harness::rec_support::run(rec, input.into_bytes());
    let live = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(live.contains("hello bob"), "{live}{}", out.stderr_text());
    let tape = crate::harness::play_http_support::only_trace(&dir);
    assert!(
        std::fs::read_to_string(&tape)
            .unwrap()
            .contains("[REDACTED]")
    );
    let out = play_all(
        &sb,
        &[tape.to_str().unwrap()],
        &[init, &login(2, "bob", bob), &login(3, "alice", alice)],
    );
    assert!(
        out.stderr
            .contains("reel play: ambiguous: tools/call login (id 2)")
            && out.stderr.contains("answered from the earliest"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("1 answered from calls equal only once redacted"),
        "{}",
        out.stderr
    );
}

#[test]
fn strict_requires_the_recorded_order() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    t.c(&call(json!(1), "a", json!({})))
        .s(&text_result(json!(1), "A"))
        .c(&call(json!(2), "b", json!({})))
        .s(&text_result(json!(2), "B"));
    let tape = t.end();
    let args = [tape.to_str().unwrap(), "--strict"];
    let b_first = play_all(
        &sb,
        &args,
        &[
            LIVE_INITIALIZE,
            INITIALIZED,
            &call(json!(7), "b", json!({})),
        ],
    );
    assert_eq!(b_first.code, Some(3), "{}", b_first.stderr);
    assert!(
        b_first
            .stderr
            .contains("--strict expects the next recorded request, tools/call"),
        "{}",
        b_first.stderr
    );
    let in_order = play_all(
        &sb,
        &args,
        &[
            LIVE_INITIALIZE,
            INITIALIZED,
            &call(json!(7), "a", json!({})),
            &call(json!(8), "b", json!({})),
        ],
    );
    assert_eq!(in_order.code, Some(0), "{}", in_order.stderr);
    let texts: Vec<&str> = in_order.rest[1..].iter().map(answer_text).collect();
    assert_eq!(texts, ["A", "B"]);
    // Without --strict, the same out-of-order client is fine.
    let free = play_all(
        &sb,
        &[tape.to_str().unwrap()],
        &[
            LIVE_INITIALIZE,
            INITIALIZED,
            &call(json!(7), "b", json!({})),
            &call(json!(8), "a", json!({})),
        ],
    );
    assert_eq!(free.code, Some(0), "{}", free.stderr);
}

#[test]
fn ping_and_set_level_get_a_generic_success_unless_strict() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    let tape = t.end();
    let ping = r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
    let level =
        r#"{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"debug"}}"#;
    let out = play_all(
        &sb,
        &[tape.to_str().unwrap()],
        &[LIVE_INITIALIZE, INITIALIZED, ping, level],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.rest[1], json!({"jsonrpc":"2.0","id":3,"result":{}}));
    assert_eq!(out.rest[2], json!({"jsonrpc":"2.0","id":4,"result":{}}));
    assert!(out.stderr.contains("2 generic"), "{}", out.stderr);
    let strict = play_all(
        &sb,
        &[tape.to_str().unwrap(), "--strict"],
        &[LIVE_INITIALIZE, INITIALIZED, ping],
    );
    assert_eq!(strict.code, Some(3), "{}", strict.stderr);
}

/// Matching rule `answer-again`: a client that lists more often than the recorded one
/// (the Python SDK re-lists after calls that finish before its tool cache is filled) is
/// answered from the last equal recorded list read; another cursor is another request,
/// and `--strict` keeps each answer to one use.
#[test]
fn a_list_read_past_its_recorded_answers_is_answered_again_unless_strict() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    t.c(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .s(r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"old"}],"nextCursor":"p2"}}"#)
        .c(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"p2"}}"#)
        .s(r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"paged"}]}}"#)
        .c(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}"#)
        .s(r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"new"}]}}"#);
    let tape = t.end();
    let list = |id: u32| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#);
    let page = r#"{"jsonrpc":"2.0","id":20,"method":"tools/list","params":{"cursor":"p2"}}"#;
    let other = r#"{"jsonrpc":"2.0","id":21,"method":"tools/list","params":{"cursor":"p3"}}"#;
    let (a, b, c) = (list(10), list(11), list(12));
    let input = [LIVE_INITIALIZE, INITIALIZED, &a, &b, &c, page, page, other];
    let out = play_all(&sb, &[tape.to_str().unwrap()], &input);
    let tools = |v: &Value| v.pointer("/result/tools/0/name").cloned();
    assert_eq!(tools(&out.rest[1]), Some(json!("old")));
    assert_eq!(tools(&out.rest[2]), Some(json!("new")));
    assert_eq!(out.rest[3]["id"], json!(12));
    assert_eq!(
        tools(&out.rest[3]),
        Some(json!("new")),
        "the last answer again"
    );
    assert_eq!(tools(&out.rest[4]), Some(json!("paged")));
    assert_eq!(out.rest[5]["id"], json!(20));
    assert_eq!(tools(&out.rest[5]), Some(json!("paged")), "its page again");
    assert_eq!(out.rest[6]["id"], json!(21));
    assert_eq!(out.rest[6].pointer("/error/code"), Some(&json!(-32010)));
    assert_eq!(
        out.code,
        Some(3),
        "the unknown cursor is a miss: {}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("6 answered from the tape (2 answered again), 0 generic, 1 missed"),
        "{}",
        out.stderr
    );

    let strict = play_all(
        &sb,
        &[tape.to_str().unwrap(), "--strict"],
        &[LIVE_INITIALIZE, INITIALIZED, &a, page, &b, &c],
    );
    assert_eq!(strict.code, Some(3), "{}", strict.stderr);
    assert_eq!(strict.rest[4].pointer("/error/code"), Some(&json!(-32010)));
    assert!(
        !strict.stderr.contains("answered again"),
        "{}",
        strict.stderr
    );
}

// ---- the handshake ----------------------------------------------------------------------

#[test]
fn initialize_negotiates_the_version_the_recorded_server_supports() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    t.c(r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#)
        .s(r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-06-18","2025-11-25","2026-07-28"],"capabilities":{},"resultType":"complete"}}"#);
    handshake(&mut t);
    let tape = t.end();
    let init = |v: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":"i","method":"initialize","params":{{"protocolVersion":"{v}","capabilities":{{}},"clientInfo":{{"name":"x","version":"0"}}}}}}"#
        )
    };
    let out = play_all(&sb, &[tape.to_str().unwrap()], &[&init("2025-06-18")]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(
        out.rest[0],
        json!({"jsonrpc":"2.0","id":"i","result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"taped","version":"1"}}})
    );
    // A version the recorded server never claimed: the recorded one, as a server would.
    let out = play_all(&sb, &[tape.to_str().unwrap()], &[&init("2024-11-05")]);
    assert_eq!(
        out.rest[0].pointer("/result/protocolVersion"),
        Some(&json!("2025-11-25"))
    );
}

#[test]
fn a_recorded_discover_refusal_is_replayed_and_a_legacy_tape_refuses_the_probe() {
    let sb = Sandbox::new();
    let probe = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcp","version":"0.1.0"}}}}"#;
    let mut t = sb.tape("refused.jsonl");
    t.c(probe)
        .s(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#);
    handshake(&mut t);
    let refused = t.end();
    let live_probe = probe
        .replace(r#""id":1"#, r#""id":"p""#)
        .replace("0.1.0", "7.0");
    let out = play_all(
        &sb,
        &[refused.to_str().unwrap()],
        &[&live_probe, LIVE_INITIALIZE],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(
        out.rest[0],
        json!({"jsonrpc":"2.0","id":"p","error":{"code":-32601,"message":"Method not found"}})
    );
    assert_eq!(out.rest[1]["id"], json!("init"));
    assert!(
        out.stderr.contains("2 answered from the tape"),
        "{}",
        out.stderr
    );
    // A tape recorded with a legacy-only client has no probe at all.
    let mut t = sb.tape("legacy.jsonl");
    handshake(&mut t);
    let legacy = t.end();
    let out = play_all(
        &sb,
        &[legacy.to_str().unwrap()],
        &[&live_probe, LIVE_INITIALIZE],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.rest[0].pointer("/error/code"), Some(&json!(-32601)));
    assert_eq!(out.rest[1]["id"], json!("init"));
}

// ---- order, concurrency, repetition ---------------------------------------------------

#[test]
fn concurrent_calls_out_of_order_each_get_their_own_answer() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    t.c(&call(json!(1), "fetch", json!({"url":"a"})))
        .c(&call(json!(2), "fetch", json!({"url":"b"})))
        .c(&call(json!(3), "fetch", json!({"url":"c"})))
        .s(&text_result(json!(2), "B"))
        .s(&text_result(json!(3), "C"))
        .s(&text_result(json!(1), "A"));
    let tape = t.end();
    let mut p = sb.play(&[tape.to_str().unwrap()]);
    start(&mut p);
    // All three in one write, in another order, with other ids.
    let batch = [
        call(json!("z"), "fetch", json!({"url":"c"})),
        call(json!("x"), "fetch", json!({"url":"a"})),
        call(json!("y"), "fetch", json!({"url":"b"})),
    ]
    .join("\n")
        + "\n";
    p.send_raw(batch.as_bytes());
    let mut got = std::collections::BTreeMap::new();
    for _ in 0..3 {
        let v = p.recv();
        got.insert(
            v["id"].as_str().unwrap().to_owned(),
            answer_text(&v).to_owned(),
        );
    }
    assert_eq!(got["x"], "A");
    assert_eq!(got["y"], "B");
    assert_eq!(got["z"], "C");
    assert_eq!(p.finish().code, Some(0));
}

#[test]
fn repeated_identical_calls_consume_the_recorded_answers_in_order() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    for (i, n) in ["one", "two", "three"].iter().enumerate() {
        t.c(&call(json!(i), "next", json!({})))
            .s(&text_result(json!(i), n));
    }
    let tape = t.end();
    let input: Vec<String> = (0..4)
        .map(|i| call(json!(100 + i), "next", json!({})))
        .collect();
    let refs: Vec<&str> = input.iter().map(String::as_str).collect();
    let out = play_all(&sb, &[tape.to_str().unwrap()], &refs);
    assert_eq!(out.code, Some(3), "{}", out.stderr);
    let texts: Vec<&str> = out.rest[..3].iter().map(answer_text).collect();
    assert_eq!(texts, ["one", "two", "three"]);
    assert_eq!(out.rest[3]["id"], json!(103));
    assert_eq!(out.rest[3].pointer("/error/code"), Some(&json!(-32010)));
    assert!(out.stderr.contains("already answered"), "{}", out.stderr);
}

// ---- notifications -------------------------------------------------------------------

#[test]
fn progress_comes_before_the_result_with_the_live_token() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    t.c(r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"slow","arguments":{"steps":2},"_meta":{"progressToken":6}}}"#)
        .s(r#"{"method":"notifications/progress","params":{"progress":1,"total":2,"progressToken":6},"jsonrpc":"2.0"}"#)
        .s(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"half way"}}"#)
        .s(r#"{"method":"notifications/progress","params":{"progress":2,"total":2,"progressToken":6},"jsonrpc":"2.0"}"#)
        .s(&text_result(json!(6), "done"));
    let tape = t.end();
    let mut p = sb.play(&[tape.to_str().unwrap()]);
    start(&mut p);
    p.send(r#"{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"slow","arguments":{"steps":2},"_meta":{"progressToken":"mine-40"}}}"#);
    let (res, before) = p.until_response(&json!(40));
    assert_eq!(answer_text(&res), "done");
    let methods: Vec<&str> = before
        .iter()
        .map(|v| v["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/message",
            "notifications/progress"
        ]
    );
    assert_eq!(
        before[0].pointer("/params/progressToken"),
        Some(&json!("mine-40"))
    );
    assert_eq!(
        before[2].pointer("/params/progressToken"),
        Some(&json!("mine-40"))
    );
    assert_eq!(before[2].pointer("/params/progress"), Some(&json!(2)));
    let out = p.finish();
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    // A client that hands out no token gets no progress (it could not place it).
    let out = play_all(
        &sb,
        &[tape.to_str().unwrap()],
        &[
            r#"{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"slow","arguments":{"steps":2}}}"#,
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let methods: Vec<&str> = out
        .rest
        .iter()
        .filter_map(|v| v["method"].as_str())
        .collect();
    assert_eq!(methods, ["notifications/message"], "{:?}", out.rest);
}

#[test]
fn a_notification_among_concurrent_calls_comes_before_the_result_it_preceded() {
    // Three calls in flight; the server logs, then answers the second first. The log
    // line preceded the second result: it is replayed before that result, not before
    // the last call's (the most recently opened exchange when it was recorded).
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    let call = |id: u64, name: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}"}}}}"#
        )
    };
    t.c(&call(1, "a"))
        .c(&call(2, "b"))
        .c(&call(3, "c"))
        .s(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"b is done"}}"#)
        .s(&text_result(json!(2), "b"))
        .s(&text_result(json!(1), "a"))
        .s(&text_result(json!(3), "c"));
    let tape = t.end();
    let mut p = sb.play(&[tape.to_str().unwrap()]);
    start(&mut p);
    p.send(&call(11, "a"));
    p.send(&call(12, "b"));
    p.send(&call(13, "c"));
    let mut seen = Vec::new();
    while seen
        .iter()
        .filter(|v: &&Value| v.get("id").is_some())
        .count()
        < 3
    {
        seen.push(p.recv());
    }
    let place = |pred: &dyn Fn(&Value) -> bool| seen.iter().position(pred);
    let log = place(&|v| v["method"] == "notifications/message").expect("the log line");
    let b = place(&|v| v["id"] == json!(12)).expect("b's result");
    assert!(log < b, "{seen:#?}");
    let out = p.finish();
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.rest
            .iter()
            .all(|v| v["method"] != "notifications/message"),
        "the log line came twice: {:?}",
        out.rest
    );
}

#[test]
fn unsolicited_notifications_come_at_their_recorded_place() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    t.s(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#)
        .c(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .s(r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#)
        .s(r#"{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}"#);
    let tape = t.end();
    let mut p = sb.play(&[tape.to_str().unwrap()]);
    p.send(LIVE_INITIALIZE);
    let first = p.recv();
    assert_eq!(
        first["id"],
        json!("init"),
        "nothing comes before the handshake's answer"
    );
    p.send(INITIALIZED);
    let second = p.recv();
    assert_eq!(second["method"], json!("notifications/tools/list_changed"));
    p.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    assert_eq!(p.recv()["id"], json!(2));
    assert_eq!(
        p.recv()["method"],
        json!("notifications/resources/list_changed")
    );
    assert_eq!(p.finish().code, Some(0));
}

// ---- server→client requests, client drift ---------------------------------------------

fn sampling_tape(sb: &Sandbox) -> std::path::PathBuf {
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    t.c(&call(json!(4), "ask-llm", json!({"prompt":"hi"})))
        .s(r#"{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":20},"jsonrpc":"2.0","id":0}"#)
        .c(r#"{"jsonrpc":"2.0","id":0,"result":{"role":"assistant","content":{"type":"text","text":"recorded reply"},"model":"m-1","stopReason":"endTurn"}}"#)
        .s(&text_result(json!(4), "LLM said: recorded reply"));
    t.end()
}

fn sampling_run(
    sb: &Sandbox,
    tape: &std::path::Path,
    reply: &str,
    extra: &[&str],
) -> (Outcome, std::path::PathBuf) {
    let rec = sb.path(&format!("rec-{}", reply.len() + extra.len()));
    let mut args = vec![tape.to_str().unwrap(), "--record", rec.to_str().unwrap()];
    args.extend(extra);
    let mut p = sb.play(&args);
    start(&mut p);
    p.send(&call(json!(70), "ask-llm", json!({"prompt":"hi"})));
    let req = p.recv();
    assert_eq!(req["method"], json!("sampling/createMessage"), "{req}");
    assert_eq!(req.pointer("/params/maxTokens"), Some(&json!(20)));
    let id = req["id"].clone();
    p.send(&json!({"jsonrpc":"2.0","id":id,"result":{"role":"assistant","content":{"type":"text","text":reply},"model":"m-1","stopReason":"endTurn"}}).to_string());
    let (res, _) = p.until_response(&json!(70));
    assert_eq!(answer_text(&res), "LLM said: recorded reply");
    let out = p.finish();
    let file = std::fs::read_dir(&rec)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    (out, file)
}

#[test]
fn a_sampling_request_is_asked_and_a_different_answer_is_client_drift() {
    let sb = Sandbox::new();
    let tape = sampling_tape(&sb);
    let (same, file) = sampling_run(&sb, &tape, "recorded reply", &[]);
    assert_eq!(same.code, Some(0), "{}", same.stderr);
    assert!(!same.stderr.contains("client drift:"), "{}", same.stderr);
    // The replay's own trace shows the result was sent only after the client answered.
    let trace = std::fs::read_to_string(file).unwrap();
    let order: Vec<String> = trace
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l.get("raw").is_some())
        .map(|l| {
            let raw = &l["raw"];
            let what = raw["method"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| format!("response {}", raw["id"]));
            format!(
                "{} {} {}",
                l["dir"].as_str().unwrap(),
                l["origin"].as_str().unwrap_or("-"),
                what
            )
        })
        .collect();
    let tail: Vec<&str> = order
        .iter()
        .rev()
        .take(4)
        .rev()
        .map(String::as_str)
        .collect();
    assert_eq!(
        tail,
        [
            "in live tools/call",
            "out tape sampling/createMessage",
            "in live response 0",
            "out tape response 70"
        ],
        "{order:?}"
    );

    let (drifted, _) = sampling_run(&sb, &tape, "another reply", &[]);
    assert_eq!(drifted.code, Some(4), "{}", drifted.stderr);
    assert!(
        drifted
            .stderr
            .contains("client drift: the client's answer to sampling/createMessage"),
        "{}",
        drifted.stderr
    );
    assert!(
        drifted
            .stderr
            .contains(r#"/result/content/text: "recorded reply" -> "another reply""#),
        "{}",
        drifted.stderr
    );
    assert!(
        drifted.stderr.contains("1 client drift"),
        "{}",
        drifted.stderr
    );
    let (lenient, _) = sampling_run(&sb, &tape, "another reply", &["--lenient"]);
    assert_eq!(lenient.code, Some(0), "{}", lenient.stderr);
    assert!(
        lenient.stderr.contains("client drift:"),
        "still reported: {}",
        lenient.stderr
    );
}

/// A server that gave up on its own sampling request: the recorded cancel names the id
/// the client saw (not the recorded one) and comes before the result, as recorded.
#[test]
fn a_servers_cancel_of_its_request_names_the_fresh_id_and_keeps_its_place() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    t.c(&call(json!(4), "ask-llm", json!({})))
        .s(r#"{"jsonrpc":"2.0","id":57,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":20}}"#)
        .s(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":57,"reason":"timeout"}}"#)
        .s(&text_result(json!(4), "gave up"));
    let tape = t.end();
    let mut p = sb.play(&[tape.to_str().unwrap()]);
    start(&mut p);
    p.send(&call(json!(70), "ask-llm", json!({})));
    let req = p.recv();
    assert_eq!(req["method"], json!("sampling/createMessage"), "{req}");
    let (res, before) = p.until_response(&json!(70));
    assert_eq!(answer_text(&res), "gave up");
    assert_eq!(
        before.len(),
        1,
        "the cancel comes before the result: {before:?}"
    );
    assert_eq!(before[0]["method"], json!("notifications/cancelled"));
    assert_eq!(before[0].pointer("/params/requestId"), Some(&req["id"]));
    let out = p.finish();
    assert_eq!(out.code, Some(0), "{}", out.stderr);
}

/// A client that never answers a sampling request the recorded client answered drifts
/// as much as one that answers otherwise: reported, exit 4 (the result still comes
/// when its input closes).
#[test]
fn a_sampling_request_never_answered_is_client_drift() {
    let sb = Sandbox::new();
    let tape = sampling_tape(&sb);
    let mut p = sb.play(&[tape.to_str().unwrap()]);
    start(&mut p);
    p.send(&call(json!(70), "ask-llm", json!({"prompt":"hi"})));
    let req = p.recv();
    assert_eq!(req["method"], json!("sampling/createMessage"), "{req}");
    let out = p.finish();
    assert!(
        out.rest.iter().any(|v| v["id"] == json!(70)),
        "{:?}",
        out.rest
    );
    assert_eq!(out.code, Some(4), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("the client never answered sampling/createMessage"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("1 client drift"), "{}", out.stderr);
}

#[test]
fn an_unsolicited_roots_request_is_sent_after_its_place_with_a_fresh_id() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    t.s(r#"{"method":"roots/list","jsonrpc":"2.0","id":0}"#)
        .c(r#"{"jsonrpc":"2.0","id":0,"result":{"roots":[{"uri":"file:///srv","name":"srv"}]}}"#)
        .c(&call(json!(1), "get-roots", json!({})))
        .s(&text_result(json!(1), "roots: file:///srv"));
    let tape = t.end();
    let mut p = sb.play(&[tape.to_str().unwrap()]);
    start(&mut p);
    let req = p.recv();
    assert_eq!(req["method"], json!("roots/list"));
    p.send(&json!({"jsonrpc":"2.0","id":req["id"],"result":{"roots":[{"uri":"file:///elsewhere","name":"srv"}]}}).to_string());
    p.send(&call(json!(2), "get-roots", json!({})));
    let (res, _) = p.until_response(&json!(2));
    assert_eq!(answer_text(&res), "roots: file:///srv");
    let out = p.finish();
    assert_eq!(out.code, Some(4), "{}", out.stderr);
    assert!(out.stderr.contains("/result/roots/0/uri"), "{}", out.stderr);
}

// ---- 2026-07-28 input_required rounds --------------------------------------------------

fn mrtr_tape(sb: &Sandbox) -> std::path::PathBuf {
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#;
    let mut t = sb.tape("mrtr.jsonl");
    t.c(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{meta}}}}}"#))
        .s(r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"resultType":"complete"}}"#)
        .c(&format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"book","arguments":{{"city":"Lyon"}},{meta}}}}}"#))
        .s(r#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required","inputRequests":{"when":{"method":"elicitation/create","params":{"mode":"form","message":"Which day?","requestedSchema":{"type":"object","properties":{"day":{"type":"string"}}}}}},"requestState":"eyJzdGF0ZSI6MX0.sig"}}"#)
        .c(&format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"book","arguments":{{"city":"Lyon"}},"inputResponses":{{"when":{{"action":"accept","content":{{"day":"monday"}}}}}},"requestState":"eyJzdGF0ZSI6MX0.sig",{meta}}}}}"#))
        .s(r#"{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[{"type":"text","text":"booked Lyon on monday"}]}}"#);
    t.end()
}

fn mrtr_run(sb: &Sandbox, tape: &std::path::Path, day: &str) -> (Value, Outcome) {
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"live","version":"3"}});
    let mut p = sb.play(&[tape.to_str().unwrap()]);
    p.send(
        &json!({"jsonrpc":"2.0","id":10,"method":"server/discover","params":{"_meta":meta}})
            .to_string(),
    );
    assert_eq!(
        p.recv().pointer("/result/supportedVersions/0"),
        Some(&json!("2026-07-28"))
    );
    p.send(&json!({"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"book","arguments":{"city":"Lyon"},"_meta":meta}}).to_string());
    let round = p.recv();
    assert_eq!(
        round.pointer("/result/resultType"),
        Some(&json!("input_required")),
        "{round}"
    );
    let state = round.pointer("/result/requestState").cloned().unwrap();
    assert_eq!(
        state,
        json!("eyJzdGF0ZSI6MX0.sig"),
        "the client gets the recorded requestState"
    );
    p.send(&json!({"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"book","arguments":{"city":"Lyon"},"inputResponses":{"when":{"action":"accept","content":{"day":day}}},"requestState":state,"_meta":meta}}).to_string());
    let done = p.recv();
    (done, p.finish())
}

#[test]
fn an_input_required_round_replays_and_other_answers_are_client_drift() {
    let sb = Sandbox::new();
    let tape = mrtr_tape(&sb);
    let (done, out) = mrtr_run(&sb, &tape, "monday");
    assert_eq!(done["id"], json!(12));
    assert_eq!(answer_text(&done), "booked Lyon on monday");
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let (done, out) = mrtr_run(&sb, &tape, "friday");
    assert_eq!(
        answer_text(&done),
        "booked Lyon on monday",
        "the recorded retry still answers"
    );
    assert_eq!(out.code, Some(4), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("client drift: the client's inputResponses"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains(r#"/params/inputResponses/when/content/day: "monday" -> "friday""#),
        "{}",
        out.stderr
    );
}

// ---- cancellation ------------------------------------------------------------------------

#[test]
fn a_cancelled_exchange_sends_nothing_more() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    t.c(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":3}}}"#)
        .s(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1}}"#)
        .c(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"user"}}"#)
        .c(&call(json!(4), "fast", json!({})))
        .s(&text_result(json!(4), "fast done"));
    let tape = t.end();
    let mut p = sb.play(&[tape.to_str().unwrap()]);
    start(&mut p);
    p.send(r#"{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p30"}}}"#);
    let progress = p.recv();
    assert_eq!(
        progress.pointer("/params/progressToken"),
        Some(&json!("p30"))
    );
    p.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":30,"reason":"user"}}"#);
    p.send(&call(json!(31), "fast", json!({})));
    let (fast, before) = p.until_response(&json!(31));
    assert_eq!(answer_text(&fast), "fast done");
    assert!(before.is_empty(), "{before:?}");
    let out = p.finish();
    assert!(
        out.rest.iter().all(|v| v["id"] != json!(30)),
        "a late result: {:?}",
        out.rest
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stderr.contains("1 cancelled"), "{}", out.stderr);
}

#[test]
fn cancelling_a_paced_call_prevents_its_late_result() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    t.c(&call(json!(1), "slow", json!({})))
        .wait(600_000)
        .s(&text_result(json!(1), "ten minutes later"))
        .c(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        .s(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
    let tape = t.end();
    let mut p = sb.play(&[tape.to_str().unwrap(), "--pace", "recorded"]);
    p.send(&call(json!(9), "slow", json!({})));
    p.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}"#);
    p.send(r#"{"jsonrpc":"2.0","id":10,"method":"ping"}"#);
    let (pong, before) = p.until_response(&json!(10));
    assert_eq!(pong["result"], json!({}));
    assert!(before.is_empty(), "{before:?}");
    let out = p.finish();
    assert!(
        out.rest.iter().all(|v| v["id"] != json!(9)),
        "a late result: {:?}",
        out.rest
    );
    assert!(out.stderr.contains("1 cancelled"), "{}", out.stderr);
}

// ---- damaged traces and the lazy index ---------------------------------------------------

#[test]
fn a_trace_with_a_torn_last_line_still_plays() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    t.c(&call(json!(1), "a", json!({})))
        .s(&text_result(json!(1), "A"));
    let path = t.unfinished();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(
        &mut f,
        br#"{"t":"2026-05-01T10:00:01.000Z","dir":"out","raw":{"jsonrpc":"2.0","id":2,"res"#,
    )
    .unwrap();
    drop(f);
    let out = play_all(
        &sb,
        &[path.to_str().unwrap()],
        &[
            LIVE_INITIALIZE,
            INITIALIZED,
            &call(json!(5), "a", json!({})),
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(answer_text(&out.rest[1]), "A");
    assert!(out.stderr.contains("torn last line"), "{}", out.stderr);
}

/// A file that is no trace (empty, a README, a binary) was served as an empty tape: a
/// client got misses, or exit 0 when it sent only generic requests. A FIFO made reel
/// wait forever for a second writer, and `<(cat trace)` was split between reel's
/// readers, each getting a part. All are now refused before anything is served.
#[test]
fn a_file_that_is_not_a_trace_or_not_a_regular_file_is_refused_with_66() {
    let sb = Sandbox::new();
    let cases: [(&str, &[u8]); 3] = [
        ("empty.jsonl", b""),
        (
            "README.md",
            b"# reel\n\nA tape recorder for agent traffic.\n",
        ),
        ("a.out", b"\x7fELF\x02\x01\x01\x00\x00\x00\n"),
    ];
    let mut refused = Vec::new();
    for (name, bytes) in cases {
        let path = sb.path(name);
        std::fs::write(&path, bytes).unwrap();
        refused.push((path, "not a trace"));
    }
    #[cfg(unix)]
    {
        let fifo = sb.path("fifo.jsonl");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        refused.push((fifo, "not a regular file"));
    }
    for (path, why) in refused {
        let out = play_all(&sb, &[path.to_str().unwrap()], &[]);
        assert_eq!(out.code, Some(66), "{}: {}", path.display(), out.stderr);
        assert!(
            out.stderr.contains(why),
            "{}: {}",
            path.display(),
            out.stderr
        );
        assert!(out.rest.is_empty(), "{}: {:?}", path.display(), out.rest);
    }
}

#[test]
fn a_trace_without_an_end_line_plays_and_an_unanswered_request_is_a_miss() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    t.c(&call(json!(1), "a", json!({})))
        .s(&text_result(json!(1), "A"))
        .c(&call(json!(2), "b", json!({})));
    let path = t.unfinished();
    let out = play_all(
        &sb,
        &[path.to_str().unwrap()],
        &[
            LIVE_INITIALIZE,
            INITIALIZED,
            &call(json!(5), "a", json!({})),
            &call(json!(6), "b", json!({})),
        ],
    );
    assert_eq!(answer_text(&out.rest[1]), "A");
    assert_eq!(out.rest[2]["id"], json!(6));
    assert_eq!(out.rest[2].pointer("/error/code"), Some(&json!(-32010)));
    assert_eq!(out.code, Some(3), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("the recording ends before the server answered"),
        "{}",
        out.stderr
    );
}

/// The handshake is answered while the index is still reading the tape: reel play has
/// read less of the file than its size when the answer arrives (the kernel's count of
/// bytes the process read, `/proc/PID/io` `rchar`: behaviour, not time).
#[cfg(target_os = "linux")]
#[test]
fn the_handshake_is_answered_before_the_tape_is_fully_indexed() {
    let sb = Sandbox::new();
    let mut t = sb.tape("big.jsonl");
    handshake(&mut t);
    let payload = "x".repeat(1000);
    for i in 0..30_000 {
        t.c(&call(
            json!(i),
            "echo",
            json!({"message": format!("{i} {payload}")}),
        ))
        .s(&text_result(json!(i), &format!("{i} {payload}")));
    }
    let path = t.end();
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size > 50_000_000, "{size}");
    let mut p = sb.play(&[path.to_str().unwrap()]);
    p.send(LIVE_INITIALIZE);
    let init = p.recv();
    let read = read_chars(p.pid());
    assert_eq!(init["id"], json!("init"));
    assert!(
        read < size / 2,
        "answered after reading {read} of {size} bytes"
    );
    // The last recorded call is still found once the index gets there.
    p.send(INITIALIZED);
    p.send(&call(
        json!("last"),
        "echo",
        json!({"message": format!("29999 {payload}")}),
    ));
    let (last, _) = p.until_response(&json!("last"));
    assert!(answer_text(&last).starts_with("29999 "));
    let out = p.finish();
    assert_eq!(out.code, Some(0), "{}", out.stderr);
}

#[cfg(target_os = "linux")]
fn read_chars(pid: u32) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).expect("/proc/PID/io");
    io.lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .and_then(|n| n.trim().parse().ok())
        .expect("rchar")
}

// ---- bytes ----------------------------------------------------------------------------------

#[test]
fn crlf_input_is_accepted_answers_end_in_lf_and_garbage_gets_a_parse_error() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    let tape = t.end();
    let mut p = sb.play(&[tape.to_str().unwrap()]);
    p.send_raw(format!("{LIVE_INITIALIZE}\r\n").as_bytes());
    let line = p.recv_line();
    assert!(!line.ends_with('\r'), "{line:?}");
    assert_eq!(
        serde_json::from_str::<Value>(&line).unwrap()["id"],
        json!("init")
    );
    p.send("this is not json");
    let err = p.recv();
    assert_eq!(
        err,
        json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})
    );
    p.send(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
    assert_eq!(p.recv().pointer("/error/code"), Some(&json!(-32600)));
    let out = p.finish();
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stderr.contains("not JSON") && out.stderr.contains("this is not json"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("2 invalid input lines"),
        "{}",
        out.stderr
    );
}

// ---- sessions, names, recording, subset ----------------------------------------------------

#[test]
fn session_n_answers_from_the_nth_recorded_session() {
    let sb = Sandbox::new();
    let path = sb.path("multi.jsonl");
    let meta = r#"{"v":1,"type":"meta","startedAt":"2026-05-01T10:00:00.000Z","label":"multi"}"#;
    let line = |session: &str, dir: &str, raw: &str| {
        format!(
            r#"{{"t":"2026-05-01T10:00:00.001Z","dir":"{dir}","session":"{session}","raw":{raw}}}"#
        )
    };
    let text = [
        meta.to_owned(),
        line("A", "in", &call(json!(1), "who", json!({}))),
        line("B", "in", &call(json!(1), "who", json!({}))),
        line("B", "out", &text_result(json!(1), "session B")),
        line("A", "out", &text_result(json!(1), "session A")),
    ]
    .join("\n");
    std::fs::write(&path, text + "\n").unwrap();
    let ask = call(json!(3), "who", json!({}));
    let first = play_all(&sb, &[path.to_str().unwrap()], &[&ask]);
    assert_eq!(answer_text(&first.rest[0]), "session A");
    let second = play_all(&sb, &[path.to_str().unwrap(), "--session", "2"], &[&ask]);
    assert_eq!(answer_text(&second.rest[0]), "session B");
    assert_eq!(second.code, Some(0), "{}", second.stderr);
    // A session the trace does not hold is a usage error (64), not misses (3), and not
    // success (0) when the client asked nothing.
    let none = play_all(&sb, &[path.to_str().unwrap(), "--session", "3"], &[&ask]);
    assert_eq!(none.code, Some(64), "{}", none.stderr);
    assert!(none.stderr.contains("holds 2 sessions"), "{}", none.stderr);
    let idle = play_all(&sb, &[path.to_str().unwrap(), "--session", "3"], &[]);
    assert_eq!(idle.code, Some(64), "{}", idle.stderr);
}

#[test]
fn a_run_name_plays_the_newest_run_with_that_label() {
    let sb = Sandbox::new();
    let dir = sb.path("traces");
    std::fs::create_dir(&dir).unwrap();
    for (stamp, text) in [
        ("2026-05-01T10-00-00-000Z", "old"),
        ("2026-05-02T10-00-00-000Z", "new"),
    ] {
        let p = dir.join(format!("{stamp}-weather.jsonl"));
        let mut t = TraceBuilder::tape(&p, "weather", None);
        t.c(&call(json!(1), "forecast", json!({})))
            .s(&text_result(json!(1), text));
        t.end();
    }
    // The writer stamps meta.startedAt with one start; make the second one newer.
    let newer = dir.join("2026-05-02T10-00-00-000Z-weather.jsonl");
    let text = std::fs::read_to_string(&newer).unwrap().replacen(
        "2026-05-01T10:00:00.000Z",
        "2026-05-02T10:00:00.000Z",
        1,
    );
    std::fs::write(&newer, text).unwrap();
    let out = play_all(
        &sb,
        &["weather", "--dir", dir.to_str().unwrap()],
        &[&call(json!(2), "forecast", json!({}))],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(answer_text(&out.rest[0]), "new");
    let missing = sb
        .play(&["nosuchrun", "--dir", dir.to_str().unwrap()])
        .finish();
    assert_eq!(missing.code, Some(66), "{}", missing.stderr);
    assert!(
        missing.stderr.contains("no run named `nosuchrun`"),
        "{}",
        missing.stderr
    );
}

#[test]
fn record_writes_the_replay_as_a_trace_with_origins() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    t.c(&call(json!(1), "a", json!({})))
        .s(&text_result(json!(1), "A"));
    let tape = t.end();
    let rec = sb.path("replays");
    let out = play_all(
        &sb,
        &[tape.to_str().unwrap(), "--record", rec.to_str().unwrap()],
        &[
            LIVE_INITIALIZE,
            INITIALIZED,
            &call(json!(5), "a", json!({})),
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let files: Vec<_> = std::fs::read_dir(&rec)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1);
    assert!(
        out.stderr.contains(&files[0].display().to_string()),
        "{}",
        out.stderr
    );
    let mut r = reel_trace::TraceReader::open(&files[0]).unwrap();
    let mut seen = Vec::new();
    while let Some(l) = r.next_line() {
        match l.unwrap().parse().unwrap() {
            reel_trace::Line::Meta(m) => assert_eq!(m.label.as_deref(), Some("taped-play")),
            reel_trace::Line::Message(v) => seen.push(format!(
                "{} {}",
                v.dir.as_deref().unwrap(),
                v.origin.as_deref().unwrap()
            )),
            reel_trace::Line::End(e) => assert_eq!(e.counts.unwrap().inbound, 3),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(
        seen,
        ["in live", "out tape", "in live", "in live", "out tape"]
    );
    let check = reel().arg("check").arg(&files[0]).output().unwrap();
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
}

#[test]
fn subset_serves_some_tools_from_the_tape_and_forwards_the_rest() {
    let peers = Peers::get();
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    t.c(&call(json!(1), "taped-tool", json!({"q":1})))
        .s(&text_result(json!(1), "from the tape"))
        .c(&call(json!(2), "echo", json!({"message":"recorded"})))
        .s(&text_result(json!(2), "recorded echo"));
    let tape = t.end();
    let rec = sb.path("replays");
    let server = Peers::script("play_echo_server.py");
    let mut p = sb.play(&[
        tape.to_str().unwrap(),
        "--subset",
        "taped-tool",
        "--record",
        rec.to_str().unwrap(),
        "--",
        peers.python.to_str().unwrap(),
        server.to_str().unwrap(),
    ]);
    p.send(LIVE_INITIALIZE);
    let (init, _) = p.until_response(&json!("init"));
    assert_eq!(
        init.pointer("/result/serverInfo/name"),
        Some(&json!("play-echo")),
        "initialize goes live: {init}"
    );
    p.send(INITIALIZED);
    p.send(&call(json!(5), "taped-tool", json!({"q":1})));
    p.send(&call(json!(6), "echo", json!({"message":"live!"})));
    let (a, _) = p.until_response(&json!(5));
    let (b, _) = p.until_response(&json!(6));
    assert_eq!(answer_text(&a), "from the tape");
    assert_eq!(answer_text(&b), "live!");
    let out = p.finish();
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stderr.contains("2 forwarded live"), "{}", out.stderr);
    let file = std::fs::read_dir(&rec)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(file).unwrap();
    assert!(text.contains(r#""origin":"live""#) && text.contains(r#""origin":"tape""#));
    assert!(
        text.contains("play-echo"),
        "the live answers are in the trace"
    );
    assert!(text.contains(r#""exitCode":0"#), "{text}");
}

/// A live server that ends with calls in flight: each forwarded request gets an error
/// (and so does one sent later), so no client waits forever; the run exits 3.
#[test]
fn subset_live_server_that_ends_leaves_no_call_unanswered() {
    let peers = Peers::get();
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    let tape = t.end();
    let server = sb.path("dies.py");
    std::fs::write(
        &server,
        "import sys, json\n\
         m = json.loads(sys.stdin.readline())\n\
         print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {'protocolVersion': '2025-06-18', 'capabilities': {}, 'serverInfo': {'name': 'dies', 'version': '1'}}}), flush=True)\n\
         sys.stdin.readline()\n",
    )
    .unwrap();
    let rec = sb.path("replays");
    let mut p = sb.play(&[
        tape.to_str().unwrap(),
        "--subset",
        "taped-tool",
        "--record",
        rec.to_str().unwrap(),
        "--",
        peers.python.to_str().unwrap(),
        server.to_str().unwrap(),
    ]);
    p.send(LIVE_INITIALIZE);
    p.until_response(&json!("init"));
    p.send(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#);
    let (lost, _) = p.until_response(&json!(7));
    assert_eq!(
        lost.pointer("/error/data/reel"),
        Some(&json!("live-ended")),
        "{lost}"
    );
    p.send(r#"{"jsonrpc":"2.0","id":8,"method":"tools/list"}"#);
    let (late, _) = p.until_response(&json!(8));
    assert_eq!(late.pointer("/error/code"), Some(&json!(-32010)), "{late}");
    let out = p.finish();
    assert_eq!(out.code, Some(3), "{}", out.stderr);
    assert!(out.stderr.contains("which has ended"), "{}", out.stderr);
}

/// A live server that ignores the end of its input is stopped after its grace, so the
/// replay ends (it waited for the server's output to end, for ever).
#[test]
fn subset_live_server_that_ignores_its_closed_input_is_stopped() {
    let peers = Peers::get();
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    let tape = t.end();
    let server = sb.path("stubborn.py");
    std::fs::write(
        &server,
        "import sys, json, time\n\
         m = json.loads(sys.stdin.readline())\n\
         print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {}}), flush=True)\n\
         sys.stdin.read()\n\
         time.sleep(3600)\n",
    )
    .unwrap();
    let rec = sb.path("replays");
    let mut p = sb.play(&[
        tape.to_str().unwrap(),
        "--subset",
        "taped-tool",
        "--record",
        rec.to_str().unwrap(),
        "--",
        peers.python.to_str().unwrap(),
        server.to_str().unwrap(),
    ]);
    p.send(LIVE_INITIALIZE);
    p.until_response(&json!("init"));
    let out = p.finish();
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stderr.contains("did not exit within 3 s"),
        "{}",
        out.stderr
    );
}

#[test]
fn subset_without_a_live_server_is_a_usage_error() {
    let sb = Sandbox::new();
    let mut t = sb.tape("t.jsonl");
    handshake(&mut t);
    let tape = t.end();
    let out = sb.play(&[tape.to_str().unwrap(), "--subset", "a"]).finish();
    assert_eq!(out.code, Some(64), "{}", out.stderr);
    let out = sb.play(&["/nonexistent/trace.jsonl"]).finish();
    assert_eq!(out.code, Some(66), "{}", out.stderr);
}

#[test]
fn help_lists_every_rule_every_flag_and_the_exit_codes() {
    let out = reel().args(["play", "--help"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout);
    for rule in reel_mcp::normalize::rules() {
        assert!(
            help.contains(rule.name),
            "rule {} missing:\n{help}",
            rule.name
        );
    }
    for flag in [
        "--strict",
        "--lenient",
        "--ignore",
        "--session",
        "--record",
        "--subset",
        "--pace",
        "--dir",
    ] {
        assert!(help.contains(flag), "{flag} missing");
    }
    for code in [
        "0 ", "3 ", "4 ", "64", "66", "69", "73", "-32601", "-32010", "-32700",
    ] {
        assert!(help.contains(code), "{code} missing:\n{help}");
    }
    let top = reel().arg("--help").output().unwrap();
    assert!(
        String::from_utf8_lossy(&top.stdout).contains("play"),
        "play is listed in reel --help"
    );
}
