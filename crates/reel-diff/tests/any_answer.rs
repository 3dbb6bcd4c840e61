//! The invariant that makes `reel diff` worth running: changing any recorded answer —
//! an MCP result, a line that is not JSON, an llm turn, the body of an llm exchange that
//! gave no turns — makes the diff find drift, unless the changed place is ignored by
//! `--ignore`. Traces and the place changed are generated from a seed (proptest).

use std::fmt::Write as _;
use std::path::Path;

use proptest::prelude::*;
use reel_diff::{DiffOptions, Verdict, diff};
use reel_mcp::normalize::Pointer;
use serde_json::{Value, json};

const T: &str = "2026-01-01T00:00:00.000Z";

/// A generated answer: nested objects and arrays of strings and numbers.
fn answer() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        "[a-zA-Z0-9 ,.]{1,12}".prop_map(Value::String),
        (-1000i64..1000).prop_map(|n| json!(n)),
    ];
    leaf.prop_recursive(3, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,6}", inner, 1..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// The JSON pointers of `v`'s leaves, under `prefix`.
fn leaves(v: &Value, prefix: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                leaves(c, &format!("{prefix}/{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                leaves(c, &format!("{prefix}/{i}"), out);
            }
        }
        _ => out.push(prefix.to_owned()),
    }
}

/// `v` with the leaf at `pointer` changed: a string gets one character changed, a
/// number is incremented.
fn changed(v: &Value, pointer: &str) -> Value {
    let mut v = v.clone();
    let leaf = v.pointer_mut(pointer).expect("a leaf");
    let new = match &*leaf {
        Value::String(s) => {
            let mut c: Vec<char> = s.chars().collect();
            c[0] = if c[0] == 'x' { 'y' } else { 'x' };
            Value::String(c.into_iter().collect())
        }
        Value::Number(n) => json!(n.as_i64().unwrap_or(0) + 1),
        other => other.clone(),
    };
    *leaf = new;
    v
}

/// What one trace holds: every answer a generated value.
#[derive(Debug, Clone)]
struct Answers {
    result: Value,
    nonjson: String,
    turn_text: String,
    body: Value,
}

fn mcp_trace(a: &Answers) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"{{"v":1,"type":"meta","startedAt":"{T}","label":"p","command":["s"],"kind":"mcp"}}"#
    );
    let line = |s: &mut String, dir: &str, raw: Value| {
        let _ = writeln!(s, "{}", json!({"t": T, "dir": dir, "raw": raw}));
    };
    line(
        &mut s,
        "in",
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{}}}),
    );
    line(
        &mut s,
        "out",
        json!({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x"}],"structuredContent":a.result}}),
    );
    let _ = writeln!(
        s,
        "{}",
        json!({"t": T, "dir": "event", "kind": "reel.nonjson", "side": "out", "text": a.nonjson})
    );
    let _ = writeln!(
        s,
        r#"{{"t":"{T}","type":"end","durationMs":1,"exitCode":0}}"#
    );
    s
}

fn llm_trace(a: &Answers) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"{{"v":1,"type":"meta","startedAt":"{T}","label":"l","command":[],"kind":"llm"}}"#
    );
    let ev = |s: &mut String, n: u64, kind: &str, raw: Value| {
        let _ = writeln!(
            s,
            "{}",
            json!({"t": T, "dir": "event", "kind": kind, "raw": raw, "http": {"req": n}})
        );
    };
    // Exchange 1: a generation, compared by its turn.
    ev(
        &mut s,
        1,
        "llm.request",
        json!({"endpoint":"/v1/messages","method":"POST","status":200}),
    );
    let _ = writeln!(
        s,
        "{}",
        json!({"t": T, "type": "turn", "role": "assistant", "model": "m",
               "blocks": [{"type": "text", "text": a.turn_text}], "http": {"req": 1}})
    );
    // Exchange 2: an API reel does not read, compared by its body.
    ev(
        &mut s,
        2,
        "llm.exchange",
        json!({"endpoint":"/v1beta/models/g:streamGenerateContent","method":"POST","status":200}),
    );
    let _ = writeln!(
        s,
        "{}",
        json!({"t": T, "dir": "event", "kind": "reel.llm.body",
               "text": format!("data: {}\n\n", a.body), "http": {"req": 2}})
    );
    let _ = writeln!(
        s,
        r#"{{"t":"{T}","type":"end","durationMs":1,"reason":"producer_shutdown"}}"#
    );
    s
}

fn verdict(a: &str, b: &str, ignore: &[&str]) -> Verdict {
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    std::fs::write(&pa, a).unwrap();
    std::fs::write(&pb, b).unwrap();
    let opts = DiffOptions {
        ignore: ignore.iter().map(|p| Pointer::parse(p).unwrap()).collect(),
        ..DiffOptions::default()
    };
    run(&pa, &pb, &opts)
}

fn run(a: &Path, b: &Path, opts: &DiffOptions) -> Verdict {
    diff(a, b, opts, &mut |_| {}).expect("diff").verdict()
}

fn answers() -> impl Strategy<Value = Answers> {
    (answer(), "[ -~]{1,20}", "[a-zA-Z ]{1,20}", answer()).prop_map(
        |(result, nonjson, turn_text, body)| Answers {
            result,
            nonjson,
            turn_text,
            body,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn a_changed_mcp_answer_or_non_json_line_is_drift(a in answers(), pick in any::<prop::sample::Index>()) {
        let same = mcp_trace(&a);
        prop_assert_eq!(verdict(&same, &same, &[]), Verdict::Identical);
        let mut places = Vec::new();
        leaves(&a.result, "", &mut places);
        places.push("nonjson".into());
        let place = pick.get(&places).clone();
        let b = if place == "nonjson" {
            Answers { nonjson: format!("{}!", a.nonjson), result: a.result.clone(), ..a }
        } else {
            Answers { result: changed(&a.result, &place), ..a }
        };
        let other = mcp_trace(&b);
        prop_assert_ne!(verdict(&same, &other, &[]), Verdict::Identical, "changed {}", place);
        if place != "nonjson" {
            // Ignored by the user: no drift.
            let ignored = format!("/result/structuredContent{place}");
            prop_assert_eq!(verdict(&same, &other, &[&ignored]), Verdict::Identical);
        }
    }

    #[test]
    fn a_changed_llm_turn_or_body_is_drift(a in answers(), pick in any::<prop::sample::Index>()) {
        let same = llm_trace(&a);
        prop_assert_eq!(verdict(&same, &same, &[]), Verdict::Identical);
        let mut places = Vec::new();
        leaves(&a.body, "", &mut places);
        places.push("turn".into());
        let place = pick.get(&places).clone();
        let b = if place == "turn" {
            Answers { turn_text: format!("{}!", a.turn_text), body: a.body.clone(), ..a }
        } else {
            Answers { body: changed(&a.body, &place), ..a }
        };
        let other = llm_trace(&b);
        prop_assert_ne!(verdict(&same, &other, &[]), Verdict::Identical, "changed {}", place);
        if place != "turn" {
            let ignored = format!("/body/0{place}");
            prop_assert_eq!(verdict(&same, &other, &[&ignored]), Verdict::Identical);
        }
    }
}

/// An llm trace of `requests` requests sent in order, each answered with its own
/// text, the answers written in `answer_order` (requests that overlapped end in
/// whichever order they end).
fn overlapping(answer_order: &[u64], texts: &[&str]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"{{"v":1,"type":"meta","startedAt":"{T}","label":"l","command":[],"kind":"llm"}}"#
    );
    for n in 1..=texts.len() as u64 {
        let _ = writeln!(
            s,
            "{}",
            json!({"t": T, "type": "turn", "role": "user", "conversation": 1,
                   "blocks": [{"type": "text", "text": "Say hello."}], "http": {"req": n}})
        );
    }
    for &n in answer_order {
        let _ = writeln!(
            s,
            "{}",
            json!({"t": T, "type": "turn", "role": "assistant", "model": format!("m{n}"),
                   "conversation": 1, "http": {"req": n},
                   "blocks": [{"type": "text", "text": texts[n as usize - 1]}]})
        );
    }
    let _ = writeln!(
        s,
        r#"{{"t":"{T}","type":"end","durationMs":1,"reason":"producer_shutdown"}}"#
    );
    s
}

#[test]
fn answers_to_overlapping_requests_pair_by_request_not_by_when_they_ended() {
    // Regression: two honest runs whose overlapping requests ended in another order
    // were a structural drift (the answers paired by the order they were written).
    let texts = ["one", "two", "three"];
    let a = overlapping(&[1, 2, 3], &texts);
    let b = overlapping(&[2, 1, 3], &texts);
    assert_eq!(verdict(&a, &b, &[]), Verdict::Identical);
    // Answers that did change still drift, whatever order they were written in.
    let c = overlapping(&[2, 1, 3], &["one", "TWO", "three"]);
    assert_ne!(verdict(&a, &c, &[]), Verdict::Identical);
}
