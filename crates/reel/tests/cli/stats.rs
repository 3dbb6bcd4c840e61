//! `reel stats`: traces written by these tests, numbers computed by hand (the comments
//! show the arithmetic), run through the built binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::harness::peer_runs;
use crate::harness::reel;
use crate::harness::sandbox::Sandbox;
use crate::harness::trace::{at, meta, msg_at, rpc, write_lines};

/// Writes a trace into the sandbox, one JSON value per line.
fn trace(sb: &Sandbox, name: &str, lines: &[Value]) -> PathBuf {
    write_lines(&sb.path(name), lines)
}

/// `reel stats ARGS PATHS…` in the sandbox.
fn run(sb: &Sandbox, args: &[&str], paths: &[&Path]) -> Output {
    reel()
        .current_dir(sb.dir())
        .env("NO_COLOR", "1")
        .arg("stats")
        .args(args)
        .args(paths)
        .output()
        .unwrap()
}

/// `reel stats --json`, which must succeed.
fn stats(sb: &Sandbox, paths: &[&Path]) -> Value {
    let out = run(sb, &["--json"], paths);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn call(ms: u64, id: Value, tool: &str) -> Value {
    msg_at(ms, "in", rpc::call(id, tool, json!({})))
}

fn result(ms: u64, id: Value, result: Value) -> Value {
    msg_at(ms, "out", rpc::result(id, result))
}

fn error(ms: u64, id: Value, code: i64, message: &str) -> Value {
    msg_at(ms, "out", rpc::error(id, code, message))
}

fn ok() -> Value {
    json!({"content": [{"type": "text", "text": "ok"}]})
}

fn tool<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name} in {}", report["tools"]))
}

fn close(a: &Value, b: f64) {
    let a = a.as_f64().unwrap_or_else(|| panic!("{a} is not a number"));
    assert!((a - b).abs() < 1e-12, "{a} != {b}");
}

#[test]
fn tool_calls_errors_pending_and_latency() {
    let env = Sandbox::new();
    let lines = vec![
        meta("tools", "mcp"),
        msg_at(
            0,
            "in",
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
        ),
        error(10, json!(1), -32602, "bad params"),
        // search: ok in 100 ms, failed (isError) in 300 ms, an MRTR round, ok in 400 ms,
        // and one never answered.
        call(1000, json!(2), "search"),
        result(1100, json!(2), ok()),
        call(2000, json!(3), "search"),
        result(
            2300,
            json!(3),
            json!({"content": [{"type": "text", "text": "disk"},
                                                   {"type": "text", "text": "full"}], "isError": true}),
        ),
        call(6000, json!(6), "search"),
        result(
            6020,
            json!(6),
            json!({"resultType": "input_required", "requestState": "abc"}),
        ),
        call(6500, json!(7), "search"),
        msg_at(
            6600,
            "out",
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                                "params": {"progressToken": 7, "progress": 1}}),
        ),
        result(6900, json!(7), ok()),
        call(8000, json!(8), "search"),
        // fetch: number 4 is never answered; string "4" is answered in 500 ms; 5 fails
        // with a JSON-RPC error in 50 ms.
        call(3000, json!(4), "fetch"),
        call(3500, json!("4"), "fetch"),
        result(4000, json!("4"), ok()),
        call(5000, json!(5), "fetch"),
        error(5050, json!(5), -32000, "upstream down"),
        // JSON-RPC errors that answer no known request.
        error(7000, json!(99), -1, "who?"),
        error(7100, Value::Null, -32700, "parse error"),
        json!({"t": at(7200), "dir": "event", "kind": "x.y", "raw": {"id": 8, "result": {}}}),
        json!({"t": at(7300), "dir": "sideways", "raw": {}}),
        json!({"t": at(10_000), "type": "end", "exitCode": 0, "durationMs": 10000}),
    ];
    let path = trace(&env, "tools.jsonl", &lines);
    let r = stats(&env, &[&path]);

    assert_eq!(r["schema"], "mcp-tape.stats/1");
    assert_eq!(r["file"], path.display().to_string());
    let s = &r["session"];
    assert_eq!(s["label"], "tools");
    assert_eq!(s["kind"], "mcp");
    assert_eq!(s["producer"], "test@1");
    assert_eq!(s["command"], json!(["srv", "--x"]));
    assert_eq!(s["startedAt"], "2026-01-01T00:00:00.000Z");
    assert_eq!(s["endedAt"], "2026-01-01T00:00:10.000Z");
    assert_eq!(s["durationMs"], 10000);
    assert_eq!(s["exitCode"], 0);
    assert_eq!(s["endReason"], Value::Null);
    // 23 lines: 1 meta, 19 in/out (2 initialize, 9 search, 1 progress, 5 fetch, 2
    // unmatched errors), 1 event, 1 unknown dir, 1 end.
    assert_eq!(
        s["records"],
        json!({"total": 23, "meta": 1, "message": 19, "event": 1, "turn": 0, "end": 1, "other": 1})
    );
    assert_eq!(s["skippedLines"], 0);
    assert_eq!(r["models"], Value::Null);

    // search: calls 2, 3, 7, 8 (6 was an input-required round); latencies 100, 300, 400:
    // p50 = rank ceil(1.5) = 2 -> 300, p95 = rank ceil(2.85) = 3 -> 400.
    assert_eq!(
        tool(&r, "search"),
        &json!({"name": "search", "calls": 4, "errors": 1, "p50Ms": 300, "p95Ms": 400,
                "origin": "mcp", "pending": 1})
    );
    // fetch: latencies 500 and 50 -> sorted [50, 500]: p50 rank 1 -> 50, p95 rank 2 -> 500.
    assert_eq!(
        tool(&r, "fetch"),
        &json!({"name": "fetch", "calls": 3, "errors": 1, "p50Ms": 50, "p95Ms": 500,
                "origin": "mcp", "pending": 1})
    );
    assert_eq!(r["tools"][0]["name"], "search", "most calls first");

    assert_eq!(
        r["errors"],
        json!([
            {"t": at(10), "source": "jsonrpc", "name": "initialize", "message": "bad params (code -32602)"},
            {"t": at(2000), "source": "tool", "name": "search", "message": "disk full"},
            {"t": at(5000), "source": "tool", "name": "fetch", "message": "upstream down (code -32000)"},
            {"t": at(7000), "source": "jsonrpc", "name": "id 99", "message": "who? (code -1)"},
            {"t": at(7100), "source": "jsonrpc", "name": "(notification)", "message": "parse error (code -32700)"},
        ])
    );
    assert_eq!(r["warnings"], json!([]));
}

#[test]
fn models_cost_cache_thinking_and_ttft() {
    let env = Sandbox::new();
    let turn = |ms: u64, extra: Value| {
        let mut t = json!({"t": at(ms), "type": "turn", "role": "assistant", "blocks": []});
        for (k, v) in extra.as_object().unwrap() {
            t[k] = v.clone();
        }
        t
    };
    let sonnet = "claude-sonnet-4-5-20250929";
    let lines = vec![
        meta("agent", "llm"),
        json!({"t": at(0), "type": "turn", "role": "user", "blocks": [{"type": "text", "text": "hi"}]}),
        turn(
            1000,
            json!({"model": sonnet,
            "usage": {"input_tokens": 1000, "output_tokens": 500, "cache_read_input_tokens": 3000,
                      "cache_creation_input_tokens": 1000, "thinking_tokens": 200},
            "timing": {"ttft_ms": 100, "duration_ms": 1000},
            "blocks": [{"type": "thinking", "thinking": "ignored: the count is exact"}]}),
        ),
        turn(
            2000,
            json!({"model": sonnet, "usage": {"input_tokens": 2000, "output_tokens": 1000},
            "timing": {"ttft_ms": 300, "duration_ms": 2000},
            "blocks": [{"type": "thinking", "thinking": "abcdefghij"}, {"type": "text", "text": "x"}]}),
        ),
        // Echoed: the client re-sent it; none of these numbers may count.
        turn(
            2500,
            json!({"model": sonnet, "echoed": true,
            "usage": {"input_tokens": 999_999, "output_tokens": 999_999, "thinking_tokens": 5},
            "timing": {"ttft_ms": 1, "duration_ms": 99_999}}),
        ),
        turn(
            3000,
            json!({"model": "mystery-model-1", "usage": {"input_tokens": 100, "output_tokens": 50},
            "timing": {"ttft_ms": 50}}),
        ),
        turn(4000, json!({})),
        turn(
            5000,
            json!({"model": sonnet,
            "usage": {"input_tokens": 0, "output_tokens": 100, "cache_read_input_tokens": 0},
            "timing": {"ttft_ms": 200}}),
        ),
        json!({"t": at(6000), "type": "end", "reason": "producer_shutdown", "durationMs": 6000}),
    ];
    let path = trace(&env, "agent.jsonl", &lines);
    let r = stats(&env, &[&path]);
    let m = &r["models"];
    let rows = m["perModel"].as_array().unwrap();
    assert_eq!(
        rows.iter()
            .map(|r| r["model"].as_str().unwrap())
            .collect::<Vec<_>>(),
        [sonnet, "(no model)", "mystery-model-1"],
        "calls desc, then name"
    );

    let s = &rows[0];
    assert_eq!(s["calls"], 3);
    assert_eq!(s["inputTokens"], 3000); // 1000 + 2000 + 0
    assert_eq!(s["outputTokens"], 1600); // 500 + 1000 + 100
    assert_eq!(s["cacheReadTokens"], 3000); // 3000 + 0 (the 2nd turn reported none)
    assert_eq!(s["cacheCreationTokens"], 1000);
    assert_eq!(s["thinkingTokens"], 203); // 200 exact + round(10 chars / 4) = 3
    assert_eq!(s["thinkingEstimated"], true);
    close(&s["cacheHitRate"], 3000.0 / (3000.0 + 3000.0 + 1000.0));
    // TTFT [100, 300, 200] -> [100, 200, 300]: p50 rank 2 -> 200, p95 rank 3 -> 300.
    assert_eq!(s["ttftP50Ms"], 200);
    assert_eq!(s["ttftP95Ms"], 300);
    // claude-sonnet-4-5 at 3 / 15 / 0.3 / 3.75 per MTok:
    // 3000*3 + 1600*15 + 3000*0.3 + 1000*3.75 = 9000 + 24000 + 900 + 3750 = 37650 -> $0.03765
    close(&s["estCostUsd"], 0.03765);
    assert_eq!(s["priced"], true);

    assert_eq!(
        rows[1],
        json!({"model": "(no model)", "calls": 1, "inputTokens": null, "outputTokens": null,
               "cacheReadTokens": null, "cacheCreationTokens": null, "thinkingTokens": null,
               "thinkingEstimated": false, "cacheHitRate": null, "ttftP50Ms": null,
               "ttftP95Ms": null, "estCostUsd": null, "priced": false})
    );
    assert_eq!(
        rows[2],
        json!({"model": "mystery-model-1", "calls": 1, "inputTokens": 100, "outputTokens": 50,
               "cacheReadTokens": null, "cacheCreationTokens": null, "thinkingTokens": null,
               "thinkingEstimated": false, "cacheHitRate": null, "ttftP50Ms": 50,
               "ttftP95Ms": 50, "estCostUsd": null, "priced": false})
    );

    let sum = &m["summary"];
    assert_eq!(sum["models"], 3);
    assert_eq!(sum["assistantTurns"], 5);
    assert_eq!(sum["turns"], 7); // every turn record: 1 user + 6 assistant (1 echoed)
    assert_eq!(sum["echoedTurns"], 1);
    assert_eq!(sum["inputTokens"], 3100);
    assert_eq!(sum["outputTokens"], 1650);
    assert_eq!(sum["cacheReadTokens"], 3000);
    assert_eq!(sum["cacheCreationTokens"], 1000);
    assert_eq!(sum["thinkingExactTokens"], 200);
    assert_eq!(sum["thinkingEstimatedTokens"], 3);
    close(&sum["cacheHitRate"], 3000.0 / (3100.0 + 3000.0 + 1000.0));
    assert_eq!(sum["totalModelTimeMs"], 3000); // 1000 + 2000; the echoed turn's is excluded

    let cost = &m["cost"];
    assert_eq!(cost["estimated"], true);
    assert_eq!(cost["currency"], "USD");
    close(&cost["totalUsd"], 0.03765);
    assert_eq!(
        cost["partial"], true,
        "mystery-model-1 had usage but no price"
    );
    assert_eq!(cost["unpricedModels"], json!(["mystery-model-1"]));
    assert_eq!(cost["asOf"], "2026-08-13");
    assert!(cost["source"].as_str().unwrap().contains("list prices"));
    assert_eq!(r["session"]["records"]["turn"], 7);
    assert_eq!(r["session"]["endReason"], "producer_shutdown");
    assert_eq!(r["session"]["exitCode"], Value::Null);
}

#[test]
fn cost_is_null_when_nothing_is_priced_and_whole_when_everything_is() {
    let env = Sandbox::new();
    let only = |model: &str| {
        vec![
            meta("m", "llm"),
            json!({"t": at(1), "type": "turn", "role": "assistant", "model": model, "blocks": [],
                   "usage": {"input_tokens": 1_000_000, "output_tokens": 1_000_000}}),
        ]
    };
    let unpriced = trace(&env, "unpriced.jsonl", &only("gpt-4o-realtime-preview"));
    let c = &stats(&env, &[&unpriced])["models"]["cost"];
    assert_eq!(
        c["totalUsd"],
        Value::Null,
        "an unknown model is never guessed"
    );
    assert_eq!(c["partial"], false);
    assert_eq!(c["unpricedModels"], json!(["gpt-4o-realtime-preview"]));

    // gpt-4o-mini at 0.15 in / 0.60 out: 1M + 1M tokens -> $0.75 (not gpt-4o's price).
    let priced = trace(&env, "priced.jsonl", &only("gpt-4o-mini"));
    let r = stats(&env, &[&priced]);
    close(&r["models"]["cost"]["totalUsd"], 0.75);
    assert_eq!(r["models"]["cost"]["partial"], false);
    assert_eq!(r["models"]["cost"]["unpricedModels"], json!([]));
    assert_eq!(r["models"]["perModel"][0]["cacheHitRate"], Value::Null);
}

#[test]
fn turn_tool_pairing_in_time_order_without_echoed_turns() {
    let env = Sandbox::new();
    let use_ =
        |id: &str, name: &str| json!({"type": "tool_use", "id": id, "name": name, "input": {}});
    let lines = vec![
        meta("turns", "llm"),
        json!({"t": at(0), "type": "turn", "role": "assistant",
               "blocks": [use_("a", "Read"), use_("b", "Bash")]}),
        json!({"t": at(2000), "type": "turn", "role": "user", "blocks": [
            {"type": "tool_result", "tool_use_id": "a", "content": "file"},
            {"type": "tool_result", "tool_use_id": "b", "is_error": true,
             "content": [{"type": "text", "text": "exit 1"}]}]}),
        // An echoed copy of the first turn: its tool_use blocks must not count again.
        json!({"t": at(3000), "type": "turn", "role": "assistant", "echoed": true,
               "blocks": [use_("a", "Read"), use_("b", "Bash")]}),
        json!({"t": at(4000), "type": "turn", "role": "assistant", "blocks": [use_("c", "Read")]}),
        // Written out of order: the result (t = 6.5 s) comes before its use (t = 5 s).
        json!({"t": at(6500), "type": "turn", "role": "user",
               "blocks": [{"type": "tool_result", "tool_use_id": "d", "content": "ok"}]}),
        json!({"t": at(5000), "type": "turn", "role": "assistant", "blocks": [use_("d", "Read")]}),
        // An orphan result is tolerated.
        json!({"t": at(7000), "type": "turn", "role": "user",
               "blocks": [{"type": "tool_result", "tool_use_id": "zz", "content": "?"}]}),
    ];
    let path = trace(&env, "turns.jsonl", &lines);
    let r = stats(&env, &[&path]);
    // Read: a (2000 ms), c (pending), d (1500 ms) -> [1500, 2000]: p50 1500, p95 2000.
    assert_eq!(
        r["tools"],
        json!([
            {"name": "Read", "calls": 3, "errors": 0, "p50Ms": 1500, "p95Ms": 2000, "origin": "turn", "pending": 1},
            {"name": "Bash", "calls": 1, "errors": 1, "p50Ms": 2000, "p95Ms": 2000, "origin": "turn", "pending": 0},
        ])
    );
    assert_eq!(
        r["errors"],
        json!([{"t": at(0), "source": "tool", "name": "Bash", "message": "exit 1"}])
    );
    assert_eq!(r["models"]["summary"]["assistantTurns"], 3);
    assert_eq!(r["models"]["summary"]["echoedTurns"], 1);
    assert_eq!(r["models"]["perModel"][0]["model"], "(no model)");
}

#[test]
fn several_files_merge_without_pairing_across_them() {
    let env = Sandbox::new();
    let a = trace(
        &env,
        "a.jsonl",
        &[
            meta("a", "mcp"),
            call(0, json!(1), "x"),
            result(100, json!(1), ok()),
            call(1000, json!(2), "x"),
            json!({"t": at(2000), "type": "end", "reason": "producer_shutdown", "durationMs": 2000}),
        ],
    );
    let mut b_meta = meta("b", "llm");
    b_meta["startedAt"] = json!(at(1000));
    let b = trace(
        &env,
        "b.jsonl",
        &[
            b_meta,
            // Would close a.jsonl's pending id 2 if ids were paired across files.
            result(1500, json!(2), ok()),
            call(2000, json!(1), "x"),
            result(2300, json!(1), ok()),
            json!({"t": at(9000), "type": "end", "exitCode": 3, "durationMs": 8000}),
        ],
    );
    let r = stats(&env, &[&a, &b]);
    assert_eq!(
        r["file"],
        json!([a.display().to_string(), b.display().to_string()])
    );
    // x: a/1 in 100 ms, a/2 pending, b/1 in 300 ms -> [100, 300]: p50 100, p95 300.
    assert_eq!(
        r["tools"],
        json!([{"name": "x", "calls": 3, "errors": 0, "p50Ms": 100, "p95Ms": 300, "origin": "mcp", "pending": 1}])
    );
    let s = &r["session"];
    assert_eq!(s["label"], "a");
    assert_eq!(s["kind"], "mcp+llm");
    assert_eq!(s["startedAt"], at(0));
    assert_eq!(s["endedAt"], at(9000));
    assert_eq!(s["durationMs"], 9000);
    assert_eq!(s["records"]["total"], 10);
    assert_eq!(s["records"]["message"], 6);
    assert_eq!(s["records"]["end"], 2);
    assert_eq!(s["endReason"], "producer_shutdown");
    assert_eq!(s["exitCode"], 3);
    assert_eq!(r["warnings"], json!([]));
}

#[test]
fn sessions_appended_to_one_file_are_paired_separately_and_warned_about() {
    let env = Sandbox::new();
    let path = trace(
        &env,
        "two.jsonl",
        &[
            meta("s1", "mcp"),
            call(0, json!(1), "x"),
            json!({"t": at(500), "type": "end", "exitCode": 1, "durationMs": 500}),
            meta("s2", "mcp"),
            // Ids restart: this answers nothing in this session.
            result(1000, json!(1), ok()),
            call(2000, json!(1), "x"),
            result(2250, json!(1), ok()),
            json!({"t": at(3000), "type": "end", "exitCode": 0, "durationMs": 2000}),
        ],
    );
    let r = stats(&env, &[&path]);
    assert_eq!(
        r["tools"],
        json!([{"name": "x", "calls": 2, "errors": 0, "p50Ms": 250, "p95Ms": 250, "origin": "mcp", "pending": 1}])
    );
    let w = r["warnings"].as_array().unwrap();
    assert_eq!(w.len(), 1);
    assert_eq!(w[0]["code"], "multiple-sessions-in-file");
    assert_eq!(w[0]["sessions"], 2);
    assert!(w[0]["message"].as_str().unwrap().contains("two.jsonl"));
    // The file spans from the first meta to the last end.
    assert_eq!(r["session"]["label"], "s1");
    assert_eq!(r["session"]["endedAt"], at(3000));
    assert_eq!(r["session"]["durationMs"], 3000);
    assert_eq!(r["session"]["exitCode"], 0);
    assert_eq!(r["session"]["records"]["meta"], 2);
}

#[test]
fn mcp_and_agent_planes_together_are_flagged() {
    let env = Sandbox::new();
    let mcp = trace(
        &env,
        "mcp.jsonl",
        &[
            meta("run", "mcp"),
            call(0, json!(1), "x"),
            result(10, json!(1), ok()),
        ],
    );
    let agent = trace(
        &env,
        "agent.jsonl",
        &[
            meta("run", "llm"),
            json!({"t": at(0), "type": "turn", "role": "assistant",
               "blocks": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}]}),
            json!({"t": at(20), "type": "turn", "role": "user",
               "blocks": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}),
        ],
    );
    let r = stats(&env, &[&mcp, &agent]);
    assert_eq!(r["tools"][0]["origin"], "mixed");
    assert_eq!(r["tools"][0]["calls"], 2);
    assert_eq!(r["warnings"][0]["code"], "mixed-tool-planes");
}

#[test]
fn bad_lines_are_skipped_never_fatal() {
    let env = Sandbox::new();
    let mut bytes = Vec::new();
    for l in [meta("bad", "mcp"), call(0, json!(1), "x")] {
        bytes.extend_from_slice(format!("{l}\n").as_bytes());
    }
    bytes.extend_from_slice(b"[1,2]\n42\n\"text\"\nnot json at all\n\n   \n");
    bytes.extend_from_slice(
        b"{\"t\":\"2026-01-01T00:00:00.500Z\",\"dir\":\"out\",\"raw\":\"\xff\xfe\"}\n",
    );
    // A repeated member is valid JSON (the last one wins, as JSON.parse does).
    bytes.extend_from_slice(br#"{"t":"2026-01-01T00:00:00.900Z","dir":"out","raw":{"id":7,"result":{"isError":false,"isError":true}}}"#);
    bytes.extend_from_slice(b"\n");
    bytes.extend_from_slice(format!("{}\r\n", result(1000, json!(1), ok())).as_bytes());
    bytes.extend_from_slice(b"{\"t\":\"2026-01-01T00:00:02.000Z\",\"dir\":\"in\",\"raw\":{\"id\":");
    let path = env.write("bad.jsonl", &bytes);
    let r = stats(&env, &[&path]);
    // Skipped: the array, the number, the string, the non-JSON line, the invalid UTF-8
    // line and the torn last line; blank lines are not records at all.
    assert_eq!(r["session"]["skippedLines"], 6);
    assert_eq!(r["session"]["records"]["total"], 4);
    assert_eq!(r["session"]["records"]["message"], 3);
    assert_eq!(
        r["tools"],
        json!([{"name": "x", "calls": 1, "errors": 0, "p50Ms": 1000, "p95Ms": 1000, "origin": "mcp", "pending": 0}])
    );
    // No end line: endedAt is the greatest t.
    assert_eq!(r["session"]["endedAt"], at(1000));
    assert_eq!(r["session"]["durationMs"], 1000);
    assert_eq!(r["session"]["endReason"], Value::Null);
}

#[test]
fn a_64_mib_line_is_read() {
    let env = Sandbox::new();
    let mut bytes = Vec::with_capacity((64 << 20) + 1024);
    for l in [meta("big", "mcp"), call(0, json!(1), "x")] {
        bytes.extend_from_slice(format!("{l}\n").as_bytes());
    }
    bytes.extend_from_slice(br#"{"t":"2026-01-01T00:00:00.005Z","dir":"out","raw":{"id":1,"result":{"isError":true,"content":[{"type":"text","text":""#);
    bytes.resize(bytes.len() + (64 << 20), b'x');
    bytes.extend_from_slice(b"\"}]}}}\n");
    let path = env.write("big.jsonl", &bytes);
    let r = stats(&env, &[&path]);
    assert_eq!(r["tools"][0]["errors"], 1);
    assert_eq!(r["tools"][0]["p50Ms"], 5);
    let message = r["errors"][0]["message"].as_str().unwrap();
    assert_eq!(
        message,
        format!("{}…", "x".repeat(500)),
        "messages are cut to 500 bytes"
    );
}

#[test]
fn unreadable_inputs_exit_66_with_a_clear_message() {
    let env = Sandbox::new();
    let good = trace(&env, "good.jsonl", &[meta("ok", "mcp")]);
    let empty = env.write("empty.jsonl", b"");
    let not_json = env.write("notes.txt", b"hello world\n{\"type\":\"meta\"}\n");
    let array_first = env.write("array.jsonl", b"[1]\n");
    let dir = env.dir().join("adir");
    std::fs::create_dir(&dir).unwrap();
    let missing = env.dir().join("missing.jsonl");
    for (path, says) in [
        (&missing, "no such file"),
        (&dir, "is a directory"),
        (&empty, "empty"),
        (&not_json, "notes.txt:1: not a trace"),
        (&array_first, "not a trace"),
    ] {
        let out = run(&env, &[], &[&good, path]);
        assert_eq!(out.status.code(), Some(66), "{}", path.display());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{}: {err}", path.display());
        assert!(!err.contains("panicked"), "{err}");
        assert!(out.stdout.is_empty());
    }
    // A trace that is only a meta line is a trace.
    let r = stats(&env, &[&good]);
    assert_eq!(r["session"]["records"]["total"], 1);
    assert_eq!(r["tools"], json!([]));
    assert_eq!(r["errors"], json!([]));
    assert_eq!(r["session"]["endedAt"], Value::Null);
    assert_eq!(r["session"]["durationMs"], Value::Null);
}

#[test]
fn the_table_shows_tools_models_errors_and_warnings() {
    let env = Sandbox::new();
    let path = trace(
        &env,
        "t.jsonl",
        &[
            meta("table", "mcp"),
            call(0, json!(1), "lookup"),
            error(1250, json!(1), -32000, "no such row"),
            json!({"t": at(2000), "type": "turn", "role": "assistant", "model": "claude-haiku-4-5",
               "usage": {"input_tokens": 1000, "output_tokens": 200}, "blocks": []}),
            meta("again", "mcp"),
        ],
    );
    let out = run(&env, &[], &[&path]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        !text.contains('\x1b'),
        "no colour when NO_COLOR is set or stdout is not a terminal"
    );
    for needle in [
        "table",
        "lookup",
        "calls",
        "errors",
        "pending",
        "p50",
        "p95",
        "1.2s",
        "claude-haiku-4-5",
        "hit rate",
        "ttft p50",
        "$0.0020",
        "no such row",
        "multiple-sessions-in-file",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
    let coloured = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(["--color", "always", "stats"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&coloured.stdout).contains('\x1b'));
}

#[test]
fn help_documents_merging_and_limits() {
    let out = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(["stats", "--help"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "mcp-tape.stats/1",
        "merge",
        "multiple-sessions-in-file",
        "10000",
        "66",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from --help");
    }
}

/// A turn whose usage holds `1e999` (valid JSON, beyond f64) passed the line's head but
/// not the turn reader: it was counted as a turn and silently left out of the models.
/// It is a skipped line now, and the readable turn beside it still counts.
#[test]
fn a_turn_serde_cannot_read_is_skipped_not_silently_dropped() {
    let env = Sandbox::new();
    let turn = |usage: &str| {
        format!(
            r#"{{"t":"2026-01-01T00:00:01.000Z","type":"turn","role":"assistant","model":"m","usage":{usage},"blocks":[]}}"#
        )
    };
    let text = [
        meta("big", "llm").to_string(),
        turn(r#"{"input_tokens":1,"output_tokens":1e999}"#),
        turn(r#"{"input_tokens":2,"output_tokens":3}"#),
    ]
    .join("\n")
        + "\n";
    let path = env.write("big.jsonl", text.as_bytes());
    let r = stats(&env, &[&path]);
    assert_eq!(r["session"]["skippedLines"], 1, "{r:#}");
    assert_eq!(r["session"]["records"]["turn"], 1, "{r:#}");
    assert_eq!(r["models"]["summary"]["assistantTurns"], 1, "{r:#}");
}

/// The refusal of a 2026-07-28 client's `server/discover` probe by an older HTTP server
/// (400, id `null`) is the probe's answer, paired by the HTTP request that carried both
/// (as check, play and verify pair it): an error of `server/discover`, not of a
/// "(notification)".
#[test]
fn a_refused_discover_probe_is_an_error_of_server_discover() {
    let env = Sandbox::new();
    let http = |req: u64, status: Option<u16>| match status {
        Some(s) => json!({"req": req, "status": s}),
        None => json!({"req": req, "method": "POST", "path": "/mcp"}),
    };
    let lines = vec![
        meta("probe", "mcp"),
        json!({"t": at(0), "dir": "in", "session": "reel:conn-1", "http": http(1, None),
               "raw": {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}}),
        json!({"t": at(5), "dir": "out", "session": "reel:conn-1", "http": http(1, Some(400)),
               "raw": {"jsonrpc": "2.0", "error": {"code": -32000, "message": "Bad Request: Server not initialized"}, "id": null}}),
        // An id-less error on an HTTP request that carried no request stays unnamed.
        json!({"t": at(9), "dir": "out", "session": "reel:conn-1", "http": http(7, Some(400)),
               "raw": {"jsonrpc": "2.0", "error": {"code": -32700, "message": "parse error"}, "id": null}}),
    ];
    let path = trace(&env, "probe.jsonl", &lines);
    let r = stats(&env, &[&path]);
    assert_eq!(
        r["errors"],
        json!([
            {"t": at(5), "source": "jsonrpc", "name": "server/discover", "message": "Bad Request: Server not initialized (code -32000)"},
            {"t": at(9), "source": "jsonrpc", "name": "(notification)", "message": "parse error (code -32700)"},
        ])
    );
}

/// The Python SDK 2.3 probes with `server/discover`, server-everything refuses it, and
/// the client falls back to `initialize`: the refusal is a note, not an error, in
/// `stats` and in `ls` alike (one rule, `reel_trace::errors`).
#[test]
fn a_python_sdk_recording_against_server_everything_has_no_error_for_its_fallback() {
    let env = Sandbox::new();
    let server = peer_runs::Everything::start();
    let trace = peer_runs::record_python(&server, env.dir(), "probe", peer_runs::Timing::Sdk);
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(text.contains("server/discover") && text.contains(r#""method":"initialize""#));
    let r = stats(&env, &[&trace]);
    let errors = r["errors"].as_array().unwrap();
    assert!(errors.is_empty(), "{errors:#?}");
    let warnings = r["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w["code"] == "discover-probe-fallback"),
        "{warnings:#?}"
    );
    assert_eq!(ls_errors(env.dir(), "probe"), 0);
}

/// `reel ls --json`'s error count of the run labelled `label` in `dir`.
fn ls_errors(dir: &Path, label: &str) -> u64 {
    let out = reel().arg("ls").arg(dir).arg("--json").output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == label)
        .and_then(|r| r["counts"]["errors"].as_u64())
        .unwrap_or_else(|| panic!("no run {label}: {v}"))
}

/// Tool errors (`isError: true`) and JSON-RPC errors count the same in `ls` (from the
/// end line a recorder writes, and from a scan) and in `stats`; a refused probe with no
/// fallback is an error.
#[test]
fn ls_and_stats_count_errors_by_one_rule() {
    let env = Sandbox::new();
    let rpc = |mut v: Value| {
        v["jsonrpc"] = json!("2.0");
        v
    };
    let lines = vec![
        meta("errs", "mcp"),
        msg_at(
            0,
            "in",
            rpc(json!({"id": 0, "method": "server/discover", "params": {}})),
        ),
        msg_at(
            1,
            "out",
            rpc(json!({"id": 0, "error": {"code": -32601, "message": "no"}})),
        ),
        msg_at(
            2,
            "in",
            rpc(json!({"id": 1, "method": "tools/call", "params": {"name": "t", "arguments": {}}})),
        ),
        msg_at(
            3,
            "out",
            rpc(
                json!({"id": 1, "result": {"content": [{"type": "text", "text": "boom"}], "isError": true}}),
            ),
        ),
        msg_at(
            4,
            "in",
            rpc(json!({"id": 2, "method": "tools/call", "params": {"name": "t", "arguments": {}}})),
        ),
        msg_at(
            5,
            "out",
            rpc(json!({"id": 2, "error": {"code": -32602, "message": "bad"}})),
        ),
        msg_at(
            6,
            "in",
            rpc(json!({"id": 3, "method": "tools/call", "params": {"name": "t", "arguments": {}}})),
        ),
        msg_at(
            7,
            "out",
            rpc(
                json!({"id": 3, "result": {"content": [{"type": "text", "text": "\"error\" is fine"}]}}),
            ),
        ),
        // The server asks; the client refuses with an error.
        msg_at(
            8,
            "out",
            rpc(json!({"id": "s1", "method": "sampling/createMessage", "params": {}})),
        ),
        msg_at(
            9,
            "in",
            rpc(json!({"id": "s1", "error": {"code": -1, "message": "refused"}})),
        ),
    ];
    let path = trace(&env, "errs.jsonl", &lines);
    let r = stats(&env, &[&path]);
    assert_eq!(r["errors"].as_array().unwrap().len(), 4, "{r:#}");
    // No end line: ls scans (the end line's count is the writer's, the same rule).
    assert_eq!(ls_errors(env.dir(), "errs"), 4);
}
