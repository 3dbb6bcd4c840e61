//! The answers as functions of a catalog and a query: paging, filters, calls, search and
//! merge over small traces written to a temporary directory (no server).

use std::path::PathBuf;

use serde_json::{Value, json};

use super::*;

/// `2026-01-01T00:00:<s>Z`.
fn t(s: &str) -> String {
    format!("2026-01-01T00:00:{s}Z")
}

fn meta(label: &str) -> Value {
    json!({"v": 1, "type": "meta", "startedAt": t("00.000"), "label": label, "kind": "mcp"})
}

fn msg(at: &str, dir: &str, raw: Value) -> Value {
    json!({"t": t(at), "dir": dir, "raw": raw})
}

fn call(at: &str, id: u64, tool: &str) -> Value {
    msg(
        at,
        "in",
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool}}),
    )
}

fn answer(at: &str, id: u64, result: Value) -> Value {
    msg(
        at,
        "out",
        json!({"jsonrpc": "2.0", "id": id, "result": result}),
    )
}

fn end(at: &str) -> Value {
    json!({"t": t(at), "type": "end", "exitCode": 0})
}

/// Traces written as files, and the catalog `reel view` would make of them.
struct Fixture {
    _dir: tempfile::TempDir,
    catalog: Catalog,
}

impl Fixture {
    fn new(traces: &[(&str, Vec<Value>)]) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let mut paths: Vec<PathBuf> = Vec::new();
        for (name, lines) in traces {
            let p = dir.path().join(name);
            let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
            std::fs::write(&p, text).unwrap();
            paths.push(p);
        }
        let catalog = Catalog::new(&paths, dir.path(), false).unwrap();
        Fixture { _dir: dir, catalog }
    }

    fn ask(&self, handler: fn(&Catalog, &Query) -> Result<Value, ApiError>, query: &str) -> Value {
        let q = Query::parse(Some(query)).unwrap();
        handler(&self.catalog, &q).unwrap_or_else(|e| panic!("{query}: {e:?}"))
    }

    fn refused(
        &self,
        handler: fn(&Catalog, &Query) -> Result<Value, ApiError>,
        query: &str,
    ) -> ApiError {
        let q = Query::parse(Some(query)).unwrap();
        handler(&self.catalog, &q).expect_err(query)
    }
}

/// The `n` of each row of an answer.
fn ns(v: &Value) -> Vec<u64> {
    v["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["n"].as_u64().unwrap())
        .collect()
}

/// A session of three tool calls: one answered, one refused, one never answered, with
/// a progress notification while the first is open.
fn tools_trace() -> Vec<Value> {
    vec![
        meta("tools"),
        call("01.000", 1, "get_weather"),
        msg(
            "01.100",
            "out",
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": 1, "progress": 1}}),
        ),
        answer(
            "01.250",
            1,
            json!({"content": [{"type": "text", "text": "Sunny in PARIS"}]}),
        ),
        call("02.000", 2, "read_file"),
        msg(
            "02.040",
            "out",
            json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "bad path"}}),
        ),
        call("03.000", 3, "get_weather"),
        end("04.000"),
    ]
}

#[test]
fn lines_come_in_pages_with_the_line_to_ask_from_next() {
    let f = Fixture::new(&[("a.jsonl", tools_trace())]);
    let page = f.ask(lines, "t=a.jsonl&from=2&count=3");
    assert_eq!(ns(&page), [2, 3, 4]);
    assert_eq!(page["next"], 5);
    assert_eq!(page["total"], 8);
    assert_eq!(page["matched"], 8);
    assert_eq!(page["ended"], true);
    let last = f.ask(lines, "t=a.jsonl&from=7&count=3");
    assert_eq!(ns(&last), [7, 8]);
    assert_eq!(last["next"], Value::Null);

    let first = &page["lines"][0];
    assert_eq!(first["class"], "message");
    assert_eq!(first["dir"], "in");
    assert_eq!(first["summary"], "tools/call get_weather");
    // A request names its response, and the response its request and latency.
    assert_eq!(first["pair"], 4);
    let response = &page["lines"][2];
    assert_eq!(response["pair"], 2);
    // A response says what was asked and what came back.
    let said = response["summary"].as_str().unwrap();
    assert!(said.starts_with("tools/call get_weather → "), "{said}");
    assert_eq!(response["latencyMs"], 250);
    assert_eq!(response["call"], first["call"]);
}

#[test]
fn a_filter_by_class_counts_what_it_matches() {
    let f = Fixture::new(&[("a.jsonl", tools_trace())]);
    let page = f.ask(lines, "t=a.jsonl&class=meta,end");
    assert_eq!(ns(&page), [1, 8]);
    assert_eq!(page["matched"], 2);
    // A label no line has matches nothing (not everything).
    let none = f.ask(lines, "t=a.jsonl&label=nothing-has-this");
    assert_eq!((ns(&none).len(), &none["matched"]), (0, &json!(0)));
    let e = f.refused(lines, "t=a.jsonl&class=message,nope");
    assert_eq!(
        (e.status, e.message.as_str()),
        (400, "unknown class \"nope\"")
    );
}

#[test]
fn one_line_comes_whole_with_its_payload_pretty_printed() {
    let f = Fixture::new(&[("a.jsonl", tools_trace())]);
    let l = f.ask(line, "t=a.jsonl&n=4");
    assert_eq!(l["n"], 4);
    assert_eq!(l["cut"], false);
    assert!(l["text"].as_str().unwrap().contains("Sunny in PARIS"));
    assert!(l["pretty"].as_str().unwrap().starts_with("{\n"), "{l}");
    let e = f.refused(line, "t=a.jsonl&n=99");
    assert_eq!(e.status, 404);
    assert_eq!(e.message, "line 99: not in the trace (it has 8)");
    assert_eq!(f.refused(line, "t=nope.jsonl&n=1").status, 404);
}

#[test]
fn raw_pages_are_the_files_lines() {
    let f = Fixture::new(&[("a.jsonl", tools_trace())]);
    let page = f.ask(raw, "t=a.jsonl&from=7&count=5");
    assert_eq!(ns(&page), [7, 8]);
    assert_eq!(page["next"], Value::Null);
    assert_eq!(page["lines"][1]["text"], end("04.000").to_string());
    assert_eq!(f.ask(raw, "t=a.jsonl&count=1")["next"], 2);
}

#[test]
fn calls_say_their_outcome_latency_and_what_came_while_they_were_open() {
    let f = Fixture::new(&[("a.jsonl", tools_trace())]);
    let all = f.ask(calls, "t=a.jsonl");
    assert_eq!(all["total"], 3);
    let rows = all["calls"].as_array().unwrap();
    let outcome: Vec<&str> = rows
        .iter()
        .map(|c| c["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcome, ["result", "error", "pending"]);
    let first = &rows[0];
    assert_eq!(first["method"], "tools/call");
    assert_eq!(first["subject"], "get_weather");
    assert_eq!(first["id"], "1");
    assert_eq!(
        (&first["request"], &first["response"]),
        (&json!(2), &json!(4))
    );
    assert_eq!(first["latencyMs"], 250);
    assert_eq!(
        first["attached"],
        json!([{"line": 3, "dir": "out", "method": "notifications/progress", "isRequest": false}])
    );
    assert_eq!(rows[1]["errorCode"], -32602);
    assert_eq!(rows[2]["response"], Value::Null);

    // By name, one page at a time.
    let named = f.ask(calls, "t=a.jsonl&name=get_weather&count=1");
    assert_eq!(named["calls"][0]["i"], 0);
    // The next call of that name, not the next call.
    assert_eq!(named["next"], 2);
    let rest = f.ask(calls, "t=a.jsonl&name=get_weather&from=1");
    let is: Vec<&Value> = rest["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["i"])
        .collect();
    assert_eq!(is, [&json!(2)]);
}

#[test]
fn search_finds_lines_by_name_by_text_and_by_regular_expression() {
    let f = Fixture::new(&[("a.jsonl", tools_trace())]);
    // By the tool's name: its requests, what came while they were open, their answers.
    let by_name = f.ask(search, "t=a.jsonl&name=get_weather");
    assert_eq!(ns(&by_name), [2, 3, 4, 7]);
    assert_eq!(by_name["complete"], true);
    assert_eq!(by_name["scanned"], 8);
    // Text is matched case-insensitively, as a literal.
    assert_eq!(ns(&f.ask(search, "t=a.jsonl&q=sunny+in+paris")), [4]);
    assert!(ns(&f.ask(search, "t=a.jsonl&q=sun.y")).is_empty());
    // `/re/` is a regular expression.
    assert_eq!(ns(&f.ask(search, "t=a.jsonl&q=/sun.y|BAD PATH/")), [4, 6]);
    // Both at once: the name's lines that hold the text.
    assert_eq!(
        ns(&f.ask(search, "t=a.jsonl&name=get_weather&q=%22id%22:3")),
        [7]
    );
    // From a line on.
    assert_eq!(ns(&f.ask(search, "t=a.jsonl&name=get_weather&from=5")), [7]);
    // Neither: nothing.
    let nothing = f.ask(search, "t=a.jsonl");
    assert!(ns(&nothing).is_empty());
    assert_eq!(nothing["next"], Value::Null);
    let e = f.refused(search, "t=a.jsonl&q=/(/");
    assert_eq!(e.status, 400);
    assert!(
        e.message.starts_with("q: not a regular expression: "),
        "{}",
        e.message
    );
}

#[test]
fn search_finds_a_tool_of_an_llm_trace_in_its_turns() {
    let f = Fixture::new(&[(
        "llm.jsonl",
        vec![
            json!({"v": 1, "type": "meta", "startedAt": t("00.000"), "label": "l", "kind": "llm"}),
            json!({"t": t("01.000"), "type": "turn", "role": "user",
                   "blocks": [{"type": "text", "text": "Read the file"}]}),
            json!({"t": t("02.000"), "type": "turn", "role": "assistant",
                   "blocks": [{"type": "tool_use", "id": "u1", "name": "Read", "input": {}}]}),
            end("03.000"),
        ],
    )]);
    assert_eq!(ns(&f.ask(search, "t=llm.jsonl&name=Read")), [3]);
    assert_eq!(ns(&f.ask(search, "t=llm.jsonl&name=Read&q=u1")), [3]);
    assert!(ns(&f.ask(search, "t=llm.jsonl&name=Read&q=absent")).is_empty());
}

#[test]
fn merge_orders_several_traces_by_time_and_says_where_each_line_came_from() {
    let f = Fixture::new(&[
        (
            "a.jsonl",
            vec![
                meta("a"),
                call("01.000", 1, "x"),
                // No time: it keeps its place after the line before.
                json!({"dir": "stderr", "text": "a says"}),
                answer("03.000", 1, json!({})),
            ],
        ),
        (
            "b.jsonl",
            vec![
                meta("b"),
                call("02.000", 1, "y"),
                answer("02.500", 1, json!({})),
            ],
        ),
    ]);
    let merged = f.ask(merge, "t=a.jsonl&t=b.jsonl");
    let order: Vec<(u64, u64)> = merged["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["src"].as_u64().unwrap(), r["n"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        order,
        [(0, 1), (1, 1), (0, 2), (0, 3), (1, 2), (1, 3), (0, 4)]
    );
    assert_eq!(merged["total"], 7);
    assert_eq!(merged["next"], Value::Null);
    let page = f.ask(merge, "t=a.jsonl&t=b.jsonl&from=2&count=2");
    let n: Vec<&Value> = page["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["n"])
        .collect();
    assert_eq!(n, [&json!(2), &json!(3)]);
    assert_eq!(page["next"], 4);
    let e = f.refused(merge, "t=a.jsonl");
    assert_eq!(
        (e.status, e.message.as_str()),
        (400, "merge needs two or more t= traces")
    );
}

#[test]
fn a_traces_facts_name_the_command_that_replays_it() {
    let f = Fixture::new(&[("a.jsonl", tools_trace())]);
    let facts = f.ask(trace, "t=a.jsonl");
    assert_eq!(facts["key"], "a.jsonl");
    assert_eq!(facts["kind"], "mcp");
    assert_eq!(facts["lines"], 8);
    assert_eq!(facts["calls"], 3);
    let play = facts["play"].as_str().unwrap();
    assert!(
        play.starts_with("reel play ") && play.ends_with("a.jsonl"),
        "{play}"
    );
    let p = Path::new("/runs/my run.jsonl");
    assert_eq!(
        play_command(p, "llm", None),
        "reel llm --play '/runs/my run.jsonl'"
    );
    assert_eq!(
        play_command(p, "mcp", Some("http")),
        "reel play --listen 127.0.0.1:8080 '/runs/my run.jsonl'"
    );
    assert_eq!(
        play_command(p, "mcp", Some("stdio")),
        "reel play '/runs/my run.jsonl'"
    );
}

#[test]
fn search_stops_at_max_hits_and_says_where_to_go_on_from() {
    let mut lines = vec![meta("many")];
    lines.extend((1..=MAX_HITS as u64 + 100).map(|id| call("01.000", id, "t")));
    lines.push(end("02.000"));
    let total = lines.len();
    let f = Fixture::new(&[("many.jsonl", lines)]);
    let first = f.ask(search, "t=many.jsonl&name=t");
    assert_eq!(ns(&first).len(), MAX_HITS);
    let next = MAX_HITS as u64 + 2;
    assert_eq!(first["next"], next);
    // `scanned` counts the lines looked at: the one not taken is not among them.
    assert_eq!(first["scanned"], next - 1);
    assert_eq!(first["complete"], false);
    let rest = f.ask(search, &format!("t=many.jsonl&name=t&from={next}"));
    assert_eq!(ns(&rest).len(), 100);
    assert_eq!(ns(&rest)[0], next);
    assert_eq!(rest["next"], Value::Null);
    assert_eq!(rest["scanned"], total);
    assert_eq!(rest["complete"], true);
}
