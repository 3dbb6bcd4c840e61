//! `reel diff` as a user runs it: fixture pairs written here, one per drift class, each
//! asserting the class, the kind, where it is and the exit code; pairs that differ only
//! in what honest runs may differ in (ids, tokens, order, concurrency, timer-driven
//! messages) must diff as identical.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::harness::sandbox::Sandbox;
use crate::harness::trace::{TraceBuilder, msg, rpc};

/// Writes a session into the sandbox: the meta line (with `meta_extra` merged in), the
/// lines, an end.
fn trace_with(sb: &Sandbox, name: &str, meta_extra: Value, lines: &[Value]) -> PathBuf {
    TraceBuilder::new(name)
        .meta(meta_extra)
        .lines(lines.iter().cloned())
        .write(&sb.path(&format!("{name}.jsonl")))
}

fn trace(sb: &Sandbox, name: &str, lines: &[Value]) -> PathBuf {
    trace_with(sb, name, json!({}), lines)
}

fn req(id: Value, method: &str, params: Value) -> Value {
    msg("in", rpc::request(id, method, params))
}
fn res(id: Value, result: Value) -> Value {
    msg("out", rpc::result(id, result))
}
fn err(id: Value, code: i64, message: &str) -> Value {
    msg("out", rpc::error(id, code, message))
}
fn note(dir: &str, method: &str, params: Value) -> Value {
    msg(dir, rpc::notification(method, params))
}
fn call(id: u64, name: &str, args: Value) -> Value {
    msg("in", rpc::call(json!(id), name, args))
}
fn text(id: u64, t: &str) -> Value {
    res(json!(id), rpc::text(t))
}

fn tools(weather_city_type: &str, weather_desc: &str) -> Value {
    json!({"tools":[
        {"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}},
        {"name":"weather","description":weather_desc,
         "inputSchema":{"type":"object","properties":{"city":{"type":"string"}}}},
        {"name":"echo","inputSchema":{"type":"object","properties":{"city":{"type":weather_city_type}}}}]})
}

/// The reference session: handshake, tools/list (line 5 request), add with progress
/// (line 7), weather (line 10).
fn base(id0: u64, token: &str) -> Vec<Value> {
    let i = |n: u64| id0 + n;
    vec![
        req(
            json!(i(1)),
            "initialize",
            json!({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}),
        ),
        res(
            json!(i(1)),
            json!({"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}),
        ),
        note("in", "notifications/initialized", json!({})),
        req(json!(i(2)), "tools/list", json!({})),
        res(json!(i(2)), tools("string", "the weather")),
        req(
            json!(i(3)),
            "tools/call",
            json!({"name":"add","arguments":{"a":1,"b":2},"_meta":{"progressToken":token}}),
        ),
        note(
            "out",
            "notifications/progress",
            json!({"progressToken":token,"progress":1,"total":1}),
        ),
        text(i(3), "3"),
        call(i(4), "weather", json!({"city":"Lyon"})),
        text(i(4), "sunny"),
    ]
}

struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Ran {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", self.stdout, self.stderr))
    }
}

fn reel(args: &[&str]) -> Ran {
    let out = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run reel");
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn diff_json(a: &Path, b: &Path, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["diff", "--json", a.to_str().unwrap(), b.to_str().unwrap()];
    args.extend(extra);
    let r = reel(&args);
    let v = r.json();
    assert_eq!(v["exitCode"], json!(r.code), "exit code and JSON agree");
    (r.code, v)
}

/// The single drift of a report: (class, kind, subject, A line, B line).
fn only_drift(v: &Value) -> (String, String, String, Option<u64>, Option<u64>) {
    let drifts = v["drifts"].as_array().expect("drifts");
    assert_eq!(drifts.len(), 1, "expected one drift: {drifts:#?}");
    let d = &drifts[0];
    (
        d["class"].as_str().unwrap().to_owned(),
        d["kind"].as_str().unwrap().to_owned(),
        d["subject"].as_str().unwrap().to_owned(),
        d["a"]["line"].as_u64(),
        d["b"]["line"].as_u64(),
    )
}

fn with(mut lines: Vec<Value>, at: usize, line: Value) -> Vec<Value> {
    lines[at] = line;
    lines
}

#[test]
fn honest_differences_ids_tokens_clients_and_timestamps_are_identical() {
    let t = Sandbox::new();
    let a = trace(&t, "a", &base(0, "p1"));
    let mut b_lines = base(100, "other-token");
    // Another client: other identity and capabilities in initialize.
    b_lines[0] = req(
        json!(101),
        "initialize",
        json!({"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"other","version":"9"}}),
    );
    let b = trace(&t, "b", &b_lines);
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["verdict"], "identical");
    assert_eq!(v["counts"]["paired"], 4);
    assert_eq!(v["counts"]["identical"], 4);
    assert_eq!(v["schema"], "reel.diff/1");
}

#[test]
fn output_drift_result_changed_names_the_call_and_the_pointer() {
    let t = Sandbox::new();
    let a = trace(&t, "a", &base(0, "p"));
    let b = trace(&t, "b", &with(base(0, "p"), 9, text(4, "rainy")));
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 1);
    let (class, kind, subject, la, lb) = only_drift(&v);
    assert_eq!(
        (class.as_str(), kind.as_str(), subject.as_str()),
        ("output", "result-changed", "tools/call weather")
    );
    assert_eq!((la, lb), (Some(10), Some(10)));
    let d = &v["drifts"][0];
    assert_eq!(d["a"]["responseLine"], 11);
    assert_eq!(d["pointers"], json!(["/result/content/0/text"]));
    assert_eq!(
        d["differences"][0],
        json!({"pointer":"/result/content/0/text","a":"sunny","b":"rainy"})
    );
    // The context is the exchanges before it in A.
    let ctx: Vec<&str> = d["context"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["subject"].as_str().unwrap())
        .collect();
    assert_eq!(ctx, ["initialize", "tools/list", "tools/call add"]);
}

#[test]
fn text_output_shows_the_first_drift_with_context_pointers_and_a_unified_diff() {
    let t = Sandbox::new();
    let a = trace(&t, "a", &base(0, "p"));
    let b = trace(&t, "b", &with(base(0, "p"), 9, text(4, "rainy")));
    let r = reel(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let out = &r.stdout;
    assert!(
        out.contains("first drift — output drift: tools/call weather"),
        "{out}"
    );
    assert!(out.contains("before it in A:"), "{out}");
    assert!(out.contains("tools/call add"), "{out}");
    assert!(
        out.contains(r#"/result/content/0/text: "sunny" -> "rainy""#),
        "{out}"
    );
    assert!(out.contains("--- A response (normalised)"), "{out}");
    assert!(out.contains(r#"-        "text": "sunny","#), "{out}");
    assert!(out.contains(r#"+        "text": "rainy","#), "{out}");
    assert!(out.contains("output drift (exit 1)"), "{out}");
}

#[test]
fn structural_drift_result_became_an_error() {
    let t = Sandbox::new();
    let a = trace(&t, "a", &base(0, "p"));
    let b = trace(
        &t,
        "b",
        &with(base(0, "p"), 9, err(json!(4), -32603, "boom")),
    );
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 2);
    let (class, kind, subject, la, lb) = only_drift(&v);
    assert_eq!(
        (class.as_str(), kind.as_str(), subject.as_str()),
        ("structural", "became-error", "tools/call weather")
    );
    assert_eq!((la, lb), (Some(10), Some(10)));
    assert!(
        v["drifts"][0]["summary"]
            .as_str()
            .unwrap()
            .contains("-32603 boom")
    );
}

#[test]
fn structural_drift_tool_result_with_is_error() {
    let t = Sandbox::new();
    let a = trace(&t, "a", &base(0, "p"));
    let failing = res(
        json!(4),
        json!({"content":[{"type":"text","text":"no"}],"isError":true}),
    );
    let b = trace(&t, "b", &with(base(0, "p"), 9, failing));
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 2);
    assert_eq!(only_drift(&v).1, "became-error");
}

#[test]
fn structural_drift_method_unknown_and_tool_unknown() {
    let t = Sandbox::new();
    let a = trace(&t, "a", &base(0, "p"));
    let b = trace(
        &t,
        "b",
        &with(base(0, "p"), 4, err(json!(2), -32601, "Method not found")),
    );
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 2);
    let (_, kind, subject, la, _) = only_drift(&v);
    assert_eq!(
        (kind.as_str(), subject.as_str(), la),
        ("method-unknown", "tools/list", Some(5))
    );

    let b = trace(
        &t,
        "b2",
        &with(
            base(0, "p"),
            9,
            err(json!(4), -32602, "Unknown tool: weather"),
        ),
    );
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 2);
    assert_eq!(only_drift(&v).1, "tool-unknown");
}

#[test]
fn structural_drift_call_removed_and_added() {
    let t = Sandbox::new();
    let a = trace(&t, "a", &base(0, "p"));
    let mut fewer = base(0, "p");
    fewer.truncate(8);
    let b = trace(&t, "b", &fewer);
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 2);
    let (class, kind, subject, la, lb) = only_drift(&v);
    assert_eq!(
        (class.as_str(), kind.as_str(), subject.as_str()),
        ("structural", "removed", "tools/call weather")
    );
    assert_eq!((la, lb), (Some(10), None));
    assert_eq!(v["counts"]["removed"], 1);

    let (code, v) = diff_json(&b, &a, &[]);
    assert_eq!(code, 2);
    let (_, kind, _, la, lb) = only_drift(&v);
    assert_eq!((kind.as_str(), la, lb), ("added", None, Some(10)));
}

#[test]
fn structural_drift_input_schema_changed_is_a_changelog() {
    let t = Sandbox::new();
    let a = trace(&t, "a", &base(0, "p"));
    let mut list = tools("number", "the weather");
    list["tools"].as_array_mut().unwrap().remove(0); // add removed
    list["tools"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name":"forecast","inputSchema":{}}));
    let b = trace(&t, "b", &with(base(0, "p"), 4, res(json!(2), list)));
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 2);
    let (class, kind, subject, la, _) = only_drift(&v);
    assert_eq!(
        (class.as_str(), kind.as_str(), subject.as_str(), la),
        ("structural", "schema-changed", "tools/list", Some(5))
    );
    let entries = &v["drifts"][0]["changelog"]["entries"];
    assert_eq!(
        *entries,
        json!([
            {"change":"removed","name":"add","structural":true},
            {"change":"changed","name":"echo","pointers":["/inputSchema/properties/city/type"],"structural":true},
            {"change":"added","name":"forecast","structural":true}
        ])
    );
}

#[test]
fn output_drift_tool_description_changed_is_a_changelog_too() {
    let t = Sandbox::new();
    let a = trace(&t, "a", &base(0, "p"));
    let b = trace(
        &t,
        "b",
        &with(
            base(0, "p"),
            4,
            res(json!(2), tools("string", "today's weather")),
        ),
    );
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 1);
    let (class, kind, ..) = only_drift(&v);
    assert_eq!((class.as_str(), kind.as_str()), ("output", "list-changed"));
    assert_eq!(
        v["drifts"][0]["changelog"]["entries"],
        json!([{"change":"changed","name":"weather","pointers":["/description"],"structural":false}])
    );
}

#[test]
fn output_drift_progress_notifications_differ() {
    let t = Sandbox::new();
    let a = trace(&t, "a", &base(0, "p"));
    let b = trace(
        &t,
        "b",
        &with(
            base(0, "q"),
            6,
            note(
                "out",
                "notifications/progress",
                json!({"progressToken":"q","progress":1,"total":2}),
            ),
        ),
    );
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 1);
    let (class, kind, subject, la, _) = only_drift(&v);
    assert_eq!(
        (class.as_str(), kind.as_str(), subject.as_str(), la),
        ("output", "notifications-changed", "tools/call add", Some(7))
    );
    assert_eq!(
        v["drifts"][0]["pointers"],
        json!(["/progress/0/params/total"])
    );
}

#[test]
fn unsolicited_notifications_compare_as_counts_not_positions() {
    let t = Sandbox::new();
    let log = |n: u64| {
        note(
            "out",
            "notifications/message",
            json!({"level":"info","data":format!("tick {n}")}),
        )
    };
    let mut a_lines = base(0, "p");
    a_lines.insert(3, log(1));
    a_lines.push(log(2));
    let mut b_lines = base(0, "p");
    // The same two messages, elsewhere: one of them lands inside an open call.
    b_lines.insert(9, log(1));
    b_lines.insert(1, log(2));
    let a = trace(&t, "a", &a_lines);
    let b = trace(&t, "b", &b_lines);
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 0, "{v:#}");

    // In place, by content, they differ.
    let (code, v) = diff_json(&a, &b, &["--strict-notifications"]);
    assert_eq!(code, 1, "{v:#}");
    assert!(
        v["drifts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["class"] == "output")
    );

    // A different count is drift.
    let mut c_lines = a_lines.clone();
    c_lines.push(log(3));
    let c = trace(&t, "c", &c_lines);
    let (code, v) = diff_json(&a, &c, &[]);
    assert_eq!(code, 1);
    let (_, kind, subject, ..) = only_drift(&v);
    assert_eq!(
        (kind.as_str(), subject.as_str()),
        (
            "notification-count",
            "notifications/message (server→client)"
        )
    );
    assert_eq!(
        v["drifts"][0]["summary"],
        "2 in A, 3 in B (compared as counts)"
    );
}

#[test]
fn list_changed_counts_are_notes_as_in_verify_unless_notifications_strict() {
    let t = Sandbox::new();
    let changed = || note("out", "notifications/tools/list_changed", json!({}));
    let a = trace(&t, "a", &base(0, "p"));
    // Five announcements, one of them while a call is open, none in A.
    let mut b_lines = base(0, "p");
    for at in [3, 3, 3, 3, 9] {
        b_lines.insert(at, changed());
    }
    let b = trace(&t, "b", &b_lines);
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["notes"][0]["kind"], "notification-count", "{v:#}");
    let summary = v["notes"][0]["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("0 in A, 5 in B; not drift"),
        "{summary}"
    );
    // In place, by content: still a count, and still not drift.
    let (code, v) = diff_json(&a, &b, &["--strict-notifications"]);
    assert_eq!(code, 0, "{v:#}");

    let (code, v) = diff_json(&a, &b, &["--notifications", "strict"]);
    assert_eq!(code, 1, "{v:#}");
    let (_, kind, subject, ..) = only_drift(&v);
    assert_eq!(
        (kind.as_str(), subject.as_str()),
        (
            "notification-count",
            "notifications/tools/list_changed (server→client)"
        )
    );

    // `ignore` skips every notification count, not only list_changed.
    let mut c_lines = b_lines.clone();
    c_lines.push(note("out", "notifications/message", json!({"data":"x"})));
    let c = trace(&t, "c", &c_lines);
    let (code, v) = diff_json(&a, &c, &["--notifications", "ignore"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["notes"], json!([]), "{v:#}");
    let (code, _) = diff_json(&a, &c, &[]);
    assert_eq!(code, 1);
}

/// A trace of the base session whose `weather` result carries `number` (as JSON text).
fn with_number(t: &Sandbox, name: &str, number: &str) -> PathBuf {
    let lines = with(
        base(0, "p"),
        9,
        msg(
            "out",
            json!({"jsonrpc":"2.0","id":4,"result":{"content":[],"structuredContent":{"n":"NUMBER"}}}),
        ),
    );
    let path = trace(t, name, &lines);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("\"NUMBER\"", number)).unwrap();
    path
}

#[test]
fn numbers_beyond_64_bits_compare_by_their_exact_value() {
    let t = Sandbox::new();
    let a = with_number(&t, "a", "12345678901234567890123");
    let b = with_number(&t, "b", "12345678901234567890124");
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 1, "{v:#}");
    let (class, kind, subject, ..) = only_drift(&v);
    assert_eq!(
        (class.as_str(), kind.as_str(), subject.as_str()),
        ("output", "result-changed", "tools/call weather")
    );
    assert_eq!(
        v["drifts"][0]["pointers"],
        json!(["/result/structuredContent/n"])
    );
    // Both numbers are shown as the numbers they are, in JSON and in text.
    let r = reel(&["diff", "--json", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(
        r.stdout.contains(r#""a": 12345678901234567890123"#)
            && r.stdout.contains(r#""b": 12345678901234567890124"#),
        "{}",
        r.stdout
    );
    let r = reel(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(
        r.stdout
            .contains("12345678901234567890123 -> 12345678901234567890124"),
        "{}",
        r.stdout
    );

    // Decimals an f64 rounds alike differ too; the same value spelled otherwise does not.
    let c = with_number(&t, "c", "0.10000000000000000001");
    let d = with_number(&t, "d", "0.10000000000000000002");
    assert_eq!(diff_json(&c, &d, &[]).0, 1);
    let e = with_number(&t, "e", "1.2345678901234567890123e22");
    assert_eq!(diff_json(&a, &e, &[]).0, 0);
    let f = with_number(&t, "f", "9007199254740993.0");
    let g = with_number(&t, "g", "9007199254740993");
    assert_eq!(diff_json(&f, &g, &[]).0, 0);
}

#[test]
fn an_id_less_http_refusal_answers_the_probe_its_http_request_carried() {
    let t = Sandbox::new();
    let probe = |req: u64| {
        json!({"dir":"in","session":"reel:conn-1","http":{"req":req,"method":"POST"},
               "raw":{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}})
    };
    let refusal = |req: u64, id: Value| {
        json!({"dir":"out","session":"reel:conn-1","http":{"req":req,"status":400},
               "raw":{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":id}})
    };
    let session = |first: Vec<Value>| {
        let mut lines = first;
        lines.extend(base(1, "p"));
        lines
    };
    // As recorded (id null), and as `reel verify` writes the live run (the id given).
    let a = trace(&t, "a", &session(vec![probe(1), refusal(1, Value::Null)]));
    let b = trace(&t, "b", &session(vec![probe(1), refusal(1, json!(1))]));
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["counts"]["identical"], 5, "{v:#}");

    // On another HTTP request the refusal answers nothing.
    let c = trace(&t, "c", &session(vec![probe(1), refusal(2, Value::Null)]));
    let (code, v) = diff_json(&b, &c, &[]);
    assert_eq!(code, 2, "{v:#}");
}

#[test]
fn permuted_order_diffs_as_identical() {
    let t = Sandbox::new();
    let a = trace(&t, "a", &base(0, "p"));
    let mut b_lines = base(0, "p");
    // weather before add, with other ids.
    let weather = vec![call(9, "weather", json!({"city":"Lyon"})), text(9, "sunny")];
    let add: Vec<Value> = b_lines.drain(5..8).collect();
    b_lines.truncate(5);
    b_lines.extend(weather);
    b_lines.extend(add);
    let b = trace(&t, "b", &b_lines);
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["counts"]["paired"], 4);
}

#[test]
fn concurrent_calls_answered_out_of_order_diff_as_identical() {
    let t = Sandbox::new();
    let a = trace(&t, "a", &base(0, "p"));
    let mut b_lines: Vec<Value> = base(0, "p")[..5].to_vec();
    b_lines.extend([
        call(20, "weather", json!({"city":"Lyon"})),
        req(
            json!(21),
            "tools/call",
            json!({"name":"add","arguments":{"b":2.0,"a":1},"_meta":{"progressToken":21}}),
        ),
        note(
            "out",
            "notifications/progress",
            json!({"progressToken":21,"progress":1,"total":1}),
        ),
        text(21, "3"),
        text(20, "sunny"),
    ]);
    let b = trace(&t, "b", &b_lines);
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 0, "{v:#}");
}

#[test]
fn repeated_identical_calls_pair_in_request_order() {
    let t = Sandbox::new();
    let head: Vec<Value> = base(0, "p")[..3].to_vec();
    let mut a_lines = head.clone();
    a_lines.extend([
        call(5, "next", json!({})),
        text(5, "one"),
        call(6, "next", json!({})),
        text(6, "two"),
    ]);
    let mut b_lines = head.clone();
    // Both requests first; the answers come back in the other order.
    b_lines.extend([
        call(7, "next", json!({})),
        call(8, "next", json!({})),
        text(8, "two"),
        text(7, "one"),
    ]);
    let a = trace(&t, "a", &a_lines);
    let b = trace(&t, "b", &b_lines);
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 0, "{v:#}");

    // Swapped answers are drift: the first call answered "two".
    let mut c_lines = head;
    c_lines.extend([
        call(7, "next", json!({})),
        text(7, "two"),
        call(8, "next", json!({})),
        text(8, "one"),
    ]);
    let c = trace(&t, "c", &c_lines);
    let (code, v) = diff_json(&a, &c, &[]);
    assert_eq!(code, 1);
    assert_eq!(v["drifts"].as_array().unwrap().len(), 2);
}

#[test]
fn server_requests_align_by_content_wherever_a_timer_put_them() {
    let t = Sandbox::new();
    let roots_req = |id: u64| {
        msg(
            "out",
            json!({"jsonrpc":"2.0","id":id,"method":"roots/list"}),
        )
    };
    let roots_res = |id: u64| msg("in", json!({"jsonrpc":"2.0","id":id,"result":{"roots":[]}}));
    let mut a_lines = base(0, "p");
    a_lines.insert(6, roots_req(0));
    a_lines.insert(7, roots_res(0));
    let mut b_lines = base(0, "p");
    b_lines.extend([roots_req(5), roots_res(5)]);
    let a = trace(&t, "a", &a_lines);
    let b = trace(&t, "b", &b_lines);
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["counts"]["paired"], 5);
}

#[test]
fn unpaired_pings_are_notes_not_drift() {
    let t = Sandbox::new();
    let mut b_lines = base(0, "p");
    b_lines.extend([req(json!(50), "ping", json!({})), res(json!(50), json!({}))]);
    let a = trace(&t, "a", &base(0, "p"));
    let b = trace(&t, "b", &b_lines);
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["notes"][0]["kind"], "ping-unpaired");
    assert_eq!(v["notes"][0]["b"]["line"], 12);
}

#[test]
fn cancellation_in_one_run_only_is_output_drift() {
    let t = Sandbox::new();
    let a = trace(&t, "a", &base(0, "p"));
    let mut b_lines = base(0, "p");
    b_lines.insert(
        9,
        note("in", "notifications/cancelled", json!({"requestId":4})),
    );
    let b = trace(&t, "b", &b_lines);
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 1);
    assert_eq!(only_drift(&v).1, "cancellation-changed");
}

#[test]
fn unanswered_in_b_is_structural() {
    let t = Sandbox::new();
    let a = trace(&t, "a", &base(0, "p"));
    let mut b_lines = base(0, "p");
    b_lines.pop();
    let b = trace(&t, "b", &b_lines);
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 2);
    assert_eq!(only_drift(&v).1, "unanswered");
}

#[test]
fn ignore_pointers_and_ignore_files_make_volatile_content_identical() {
    let t = Sandbox::new();
    let a = trace(&t, "a", &base(0, "p"));
    let b = trace(&t, "b", &with(base(0, "p"), 9, text(4, "rainy")));
    let (code, _) = diff_json(&a, &b, &["--ignore", "/result/content/0/text"]);
    assert_eq!(code, 0);
    let (code, _) = diff_json(&a, &b, &["--ignore", "/result/content/*/text"]);
    assert_eq!(code, 0);
    let file = t.tmp.path().join("ignore.txt");
    std::fs::write(&file, "# volatile\n\n/result/content/0/text\n").unwrap();
    let (code, v) = diff_json(&a, &b, &["--ignore-file", file.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(v["ignored"], json!(["/result/content/0/text"]));
    std::fs::write(&file, "result/x\n").unwrap();
    let r = reel(&[
        "diff",
        "--ignore-file",
        file.to_str().unwrap(),
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 64, "{}", r.stderr);
    assert!(r.stderr.contains("ignore.txt:1"), "{}", r.stderr);
}

#[test]
fn github_format_annotates_b_with_error_and_warning_lines() {
    let t = Sandbox::new();
    let a = trace(&t, "a", &base(0, "p"));
    let mut b_lines = with(base(0, "p"), 9, text(4, "rainy"));
    b_lines.extend([call(60, "echo", json!({"city":"x"})), text(60, "x")]);
    let b = trace(&t, "b", &b_lines);
    let r = reel(&[
        "diff",
        "--format",
        "github",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 2);
    let lines: Vec<&str> = r.stdout.lines().collect();
    let b_file = b.to_str().unwrap();
    assert!(lines.contains(&format!("::warning file={b_file},line=10,title=reel diff%3A output drift (result-changed)::tools/call weather: the result changed at /result/content/0/text").as_str()), "{lines:#?}");
    assert!(lines.iter().any(|l| l.starts_with(&format!("::error file={b_file},line=12,title=reel diff%3A structural drift (added)::tools/call echo"))), "{lines:#?}");
    assert!(
        lines
            .last()
            .unwrap()
            .starts_with("reel diff: structural drift (exit 2)")
    );
    // JUnit for every other CI: a case per exchange compared, read by junitparser.
    let r = reel(&[
        "diff",
        "--format",
        "junit",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let junit = crate::harness::junit(r.stdout.as_bytes());
    let (_, v) = diff_json(&a, &b, &[]);
    let c = &v["counts"];
    let exchanges = c["paired"].as_u64().unwrap()
        + c["added"].as_u64().unwrap()
        + c["removed"].as_u64().unwrap();
    assert_eq!(
        junit["tests"], exchanges,
        "one case per exchange: {junit:#}"
    );
    assert_eq!(junit["failures"], 2, "{junit:#}");
    let failed: Vec<(String, String)> = junit["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| {
            let r = c[1].as_array().unwrap().first()?;
            Some((c[0].as_str()?.to_owned(), r[0].as_str()?.to_owned()))
        })
        .collect();
    assert_eq!(
        failed,
        [
            (
                "line 10: tools/call weather".to_owned(),
                "output drift (result-changed)".to_owned()
            ),
            (
                "line 12 of B: tools/call echo".to_owned(),
                "structural drift (added)".to_owned()
            ),
        ]
    );
    let passed: Vec<&str> = junit["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c[1].as_array().unwrap().is_empty())
        .filter_map(|c| c[0].as_str())
        .collect();
    assert!(passed.contains(&"line 2: initialize"), "{passed:?}");
}

#[test]
fn redaction_rules_of_one_trace_apply_to_the_other() {
    let t = Sandbox::new();
    let rules = json!({"rules":"reel/1","marker":"[REDACTED]","defaults":true});
    let secret_call =
        |password: &str| call(4, "weather", json!({"city":"Lyon","password":password}));
    let a = trace_with(
        &t,
        "a",
        json!({"redaction": rules}),
        &with(base(0, "p"), 8, secret_call("[REDACTED]")),
    );
    let b = trace(&t, "b", &with(base(0, "p"), 8, secret_call("hunter2")));
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 0, "{v:#}");
    // Without the rules the raw secret is a different call.
    let c = trace(&t, "c", &with(base(0, "p"), 8, secret_call("[REDACTED]")));
    let (code, _) = diff_json(&c, &b, &[]);
    assert_eq!(code, 2);
}

#[test]
fn unreadable_inputs_exit_66() {
    let t = Sandbox::new();
    let a = trace(&t, "a", &base(0, "p"));
    let empty = t.tmp.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let text_file = t.tmp.path().join("notes.jsonl");
    std::fs::write(&text_file, "hello\n").unwrap();
    let missing = t.tmp.path().join("missing.jsonl");
    // A FIFO (what `<(cat a.jsonl)` gives): a trace is read twice, so it is refused
    // rather than diffed as empty the second time.
    let fifo = t.tmp.path().join("fifo.jsonl");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    for (other, says) in [
        (&empty, "empty"),
        (&text_file, "notes.jsonl:1: not a trace"),
        (&missing, "no such file"),
        (&t.tmp.path().to_path_buf(), "is a directory"),
        (&fifo, "not a regular file"),
    ] {
        let r = reel(&["diff", a.to_str().unwrap(), other.to_str().unwrap()]);
        assert_eq!(r.code, 66, "{other:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{other:?}: {}", r.stderr);
    }
    let r = reel(&[
        "diff",
        "--dir",
        t.tmp.path().to_str().unwrap(),
        "no-such-run",
        a.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 66);
    assert!(
        r.stderr.contains("no run named `no-such-run`"),
        "{}",
        r.stderr
    );
}

#[test]
fn runs_are_found_by_name() {
    let t = Sandbox::new();
    trace(&t, "first", &base(0, "p"));
    trace(&t, "second", &with(base(0, "p"), 9, text(4, "rainy")));
    let dir = t.tmp.path().to_str().unwrap();
    let r = reel(&["diff", "--json", "--dir", dir, "first", "second"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.json()["b"]["path"]
            .as_str()
            .unwrap()
            .ends_with("second.jsonl")
    );
}

fn turn(role: &str, blocks: Value, model: &str, tokens: u64) -> Value {
    json!({"type":"turn","t":"2026-01-01T00:00:01.000Z","role":role,"blocks":blocks,"model":model,
           "usage":{"input_tokens":tokens,"output_tokens":tokens},"timing":{"duration_ms":tokens * 10}})
}

fn llm(
    tool_id: &str,
    tool: &str,
    city: &str,
    answer: &str,
    model: &str,
    tokens: u64,
) -> Vec<Value> {
    vec![
        turn(
            "user",
            json!([{"type":"text","text":"weather in Lyon?"}]),
            model,
            tokens,
        ),
        turn(
            "assistant",
            json!([{"type":"tool_use","id":tool_id,"name":tool,"input":{"city":city}}]),
            model,
            tokens,
        ),
        turn(
            "user",
            json!([{"type":"tool_result","tool_use_id":tool_id,"content":"sunny"}]),
            model,
            tokens,
        ),
        turn(
            "assistant",
            json!([{"type":"text","text":answer}]),
            model,
            tokens,
        ),
    ]
}

#[test]
fn turn_only_traces_align_by_role_and_order() {
    let t = Sandbox::new();
    let meta = json!({"kind":"llm"});
    let a = trace_with(
        &t,
        "a",
        meta.clone(),
        &llm("tu_1", "weather", "Lyon", "It is sunny.", "m-1", 10),
    );
    // Other tool ids, usage and timing: notes, not drift.
    let b = trace_with(
        &t,
        "b",
        meta.clone(),
        &llm("tu_9", "weather", "Lyon", "It is sunny.", "m-1", 20),
    );
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["counts"]["turnsPaired"], 4);
    let kinds: Vec<&str> = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["timing", "usage"]);
    // Another model answered: structural drift on each turn it answered.
    let m = trace_with(
        &t,
        "m",
        meta.clone(),
        &llm("tu_1", "weather", "Lyon", "It is sunny.", "m-2", 10),
    );
    let (code, v) = diff_json(&a, &m, &[]);
    assert_eq!(code, 2, "{v:#}");
    let drifts = v["drifts"].as_array().unwrap();
    assert!(!drifts.is_empty());
    assert!(drifts.iter().all(|d| d["kind"] == "model-changed"), "{v:#}");
    let (code, v) = diff_json(&a, &b, &["--strict-usage"]);
    assert_eq!(code, 1);
    assert!(
        v["drifts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["kind"] == "usage-changed")
    );

    let c = trace_with(
        &t,
        "c",
        meta.clone(),
        &llm("tu_1", "weather", "Lyon", "It is rainy.", "m-1", 10),
    );
    let (code, v) = diff_json(&a, &c, &[]);
    assert_eq!(code, 1);
    let (class, kind, subject, la, _) = only_drift(&v);
    assert_eq!(
        (class.as_str(), kind.as_str(), subject.as_str(), la),
        ("output", "turn-changed", "assistant turn 2", Some(5))
    );

    let d = trace_with(
        &t,
        "d",
        meta.clone(),
        &llm("tu_1", "weather", "Paris", "It is sunny.", "m-1", 10),
    );
    let (code, v) = diff_json(&a, &d, &[]);
    assert_eq!(code, 1);
    assert_eq!(only_drift(&v).1, "turn-changed");
    assert_eq!(v["drifts"][0]["pointers"], json!(["/blocks/0/input/city"]));

    let e = trace_with(
        &t,
        "e",
        meta.clone(),
        &llm("tu_1", "forecast", "Lyon", "It is sunny.", "m-1", 10),
    );
    let (code, v) = diff_json(&a, &e, &[]);
    assert_eq!(code, 2);
    assert_eq!(only_drift(&v).1, "tool-use-changed");

    let mut fewer = llm("tu_1", "weather", "Lyon", "It is sunny.", "m-1", 10);
    fewer.pop();
    let f = trace_with(&t, "f", meta, &fewer);
    let (code, v) = diff_json(&a, &f, &[]);
    assert_eq!(code, 2);
    let (_, kind, _, la, lb) = only_drift(&v);
    assert_eq!((kind.as_str(), la, lb), ("turn-removed", Some(5), None));
}

#[test]
fn help_lists_every_rule() {
    let r = reel(&["diff", "--help"]);
    assert_eq!(r.code, 0);
    for rule in reel_diff::honest_rules() {
        assert!(r.stdout.contains(rule.name), "{} missing", rule.name);
    }
    for rule in reel_mcp::normalize::rules() {
        assert!(r.stdout.contains(rule.name), "{} missing", rule.name);
    }
    assert!(r.stdout.contains("reel.diff/1"));
}

/// `1e999` and nesting deeper than 128 are valid JSON that serde_json's `Value` refuses;
/// a recorder keeps such answers verbatim, so diff compares them as text instead of
/// refusing the trace with "was the trace changed while diffing?".
#[test]
fn answers_serde_cannot_hold_as_values_are_compared_as_text() {
    let t = Sandbox::new();
    for (x, y) in [
        ("1e999", "2e999"),
        (&*format!("{}1{}", "[".repeat(200), "]".repeat(200)), "[]"),
    ] {
        let side = |name: &str, v: &str| {
            let path = t.tmp.path().join(name);
            let answer = format!(
                r#"{{"t":"2026-01-01T00:00:01.000Z","dir":"out","raw":{{"jsonrpc":"2.0","id":1,"result":{{"n":{v}}}}}}}"#
            );
            let lines = [
                json!({"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z"}).to_string(),
                call(1, "x", json!({})).to_string(),
                answer,
            ];
            std::fs::write(&path, lines.join("\n") + "\n").unwrap();
            path
        };
        let (a, b) = (side("a.jsonl", x), side("b.jsonl", y));
        let (code, v) = diff_json(&a, &b, &[]);
        assert_eq!(code, 1, "{x}: {v:#}");
        assert_eq!(v["drifts"][0]["kind"], "result-changed", "{v:#}");
    }
}

/// A long string is one pretty-printed line: the unified diff shows its start, not all of
/// it twice (a 64 MB answer printed 128 MB to the terminal).
#[test]
fn long_payload_lines_are_clipped_in_the_text_diff() {
    let t = Sandbox::new();
    let long = "x".repeat(100_000);
    let a = trace(&t, "a", &with(base(0, "p"), 9, text(4, &long)));
    let b = trace(
        &t,
        "b",
        &with(base(0, "p"), 9, text(4, &format!("{long}y"))),
    );
    let r = reel(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stdout.len() < 20_000,
        "{} bytes of output",
        r.stdout.len()
    );
    assert!(r.stdout.contains("more bytes; --format json has them all"));
}

/// A turn of conversation `conv`, as `reel llm` writes it.
fn conv_turn(conv: u64, role: &str, text: &str, stop: Option<&str>) -> Value {
    let mut v = json!({"type":"turn","t":"2026-01-01T00:00:01.000Z","role":role,
        "blocks":[{"type":"text","text":text}],"conversation":conv});
    if let Some(s) = stop {
        v["model"] = json!("m-1");
        v["stop_reason"] = json!(s);
    }
    v
}

#[test]
fn llm_turns_pair_within_their_conversation_and_a_stop_reason_change_is_structural() {
    let t = Sandbox::new();
    let meta = json!({"kind":"llm"});
    let a = trace_with(
        &t,
        "a",
        meta.clone(),
        &[
            conv_turn(1, "user", "first", None),
            conv_turn(2, "user", "second", None),
            conv_turn(1, "assistant", "one", Some("end_turn")),
            conv_turn(2, "assistant", "two", Some("end_turn")),
        ],
    );
    // The same two conversations, their answers in the other order: no drift.
    let b = trace_with(
        &t,
        "b",
        meta.clone(),
        &[
            conv_turn(1, "user", "first", None),
            conv_turn(2, "user", "second", None),
            conv_turn(2, "assistant", "two", Some("end_turn")),
            conv_turn(1, "assistant", "one", Some("end_turn")),
        ],
    );
    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["counts"]["turnsPaired"], 4);
    let c = trace_with(
        &t,
        "c",
        meta,
        &[
            conv_turn(1, "user", "first", None),
            conv_turn(2, "user", "second", None),
            conv_turn(1, "assistant", "one", Some("max_tokens")),
            conv_turn(2, "assistant", "two", Some("end_turn")),
        ],
    );
    let (code, v) = diff_json(&a, &c, &[]);
    assert_eq!(code, 2, "{v:#}");
    let (class, kind, _, la, _) = only_drift(&v);
    assert_eq!(
        (class.as_str(), kind.as_str(), la),
        ("structural", "stop-reason-changed", Some(4))
    );
}
