//! Read → write → read is the identity: every line comes back equal as JSON, unknown
//! members, unknown line types and unknown block types included, and message payloads
//! come back byte for byte.

use std::io::Write;

use proptest::prelude::*;
use reel_trace::{Line, Timestamp, TraceReader, TraceWriter};
use serde_json::{Map, Value, json};

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1.0e9f64..1.0e9).prop_map(|f| json!(f)),
        "[ -~é\u{1F600}\"\\\\\t]{0,12}".prop_map(Value::from),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[a-z_]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Unknown members: names no line kind defines.
fn extras() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map("x_[a-z]{1,5}", json_value(), 0..3)
        .prop_map(|m| m.into_iter().collect())
}

fn with(mut base: Value, extra: Map<String, Value>) -> Value {
    if let Value::Object(o) = &mut base {
        o.extend(extra);
    }
    base
}

fn block() -> impl Strategy<Value = Value> {
    (0..6u8, "[ -~]{0,10}", extras()).prop_map(|(k, s, extra)| {
        let b = match k {
            0 => json!({"type":"text","text":s}),
            1 => json!({"type":"thinking","thinking":s,"signature":"sig"}),
            2 => json!({"type":"tool_use","id":"t1","name":s,"input":{"q":1}}),
            3 => json!({"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":s}],"is_error":true}),
            4 => json!({"type":"history_elided","count":2,"sha256":"ab","request_sha256":"cd"}),
            _ => json!({"type":"some_future_block","data":s}),
        };
        with(b, extra)
    })
}

fn line() -> impl Strategy<Value = Value> {
    let t = "2026-05-12T23:00:00.123Z";
    prop_oneof![
        (
            json_value(),
            extras(),
            prop::sample::select(vec!["in", "out"])
        )
            .prop_map(move |(raw, extra, dir)| with(
                json!({"t":t,"dir":dir,"raw":{"jsonrpc":"2.0","id":1,"result":raw}}),
                extra
            )),
        (json_value(), extras()).prop_map(move |(raw, extra)| with(
            json!({"t":t,"dir":"event","kind":"x.custom","raw":raw}),
            extra
        )),
        (prop::collection::vec(block(), 0..4), extras()).prop_map(move |(blocks, extra)| with(
            json!({"t":t,"type":"turn","role":"assistant","model":"m","blocks":blocks,
                   "usage":{"input_tokens":3,"output_tokens":5,"service_tier":"x"},
                   "timing":{"ttft_ms":12.5},"echoed":false}),
            extra
        )),
        extras().prop_map(move |extra| with(json!({"t":t,"type":"mystery","n":1}), extra)),
        extras().prop_map(move |extra| with(json!({"t":t,"dir":"sideways","raw":[1]}), extra)),
    ]
}

fn trace() -> impl Strategy<Value = Vec<Value>> {
    (extras(), prop::collection::vec(line(), 0..12), extras()).prop_map(|(mx, body, ex)| {
        let mut lines = vec![with(
            json!({"v":1,"type":"meta","startedAt":"2026-05-12T23:00:00.000Z","label":"p",
                   "command":["srv"],"producer":{"name":"x","version":"1","configHash":"h"}}),
            mx,
        )];
        lines.extend(body);
        lines.push(with(
            json!({"t":"2026-05-12T23:00:01.000Z","type":"end","exitCode":0,"durationMs":1000,
                   "counts":{"in":1,"out":1,"events":0,"turns":0,"errors":0}}),
            ex,
        ));
        lines
    })
}

fn read_all(path: &std::path::Path) -> Vec<(Vec<u8>, Value)> {
    let mut r = TraceReader::open(path).unwrap();
    let mut out = Vec::new();
    while let Some(l) = r.next_line() {
        let l = l.unwrap();
        out.push((
            l.raw.bytes.to_vec(),
            serde_json::from_slice(l.raw.bytes).unwrap(),
        ));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn read_write_read_is_identity(lines in trace()) {
        let dir = tempfile::tempdir().unwrap();
        let first = dir.path().join("a.jsonl");
        let mut f = std::fs::File::create(&first).unwrap();
        for l in &lines {
            writeln!(f, "{l}").unwrap();
        }
        drop(f);

        let second = dir.path().join("b.jsonl");
        let mut w = TraceWriter::new(std::fs::File::create(&second).unwrap(), Timestamp(0));
        let mut r = TraceReader::open(&first).unwrap();
        while let Some(l) = r.next_line() {
            let l = l.unwrap();
            let parsed = l.parse().unwrap();
            w.write_parsed(&parsed, l.raw.bytes).unwrap();
        }
        drop(w);

        let a = read_all(&first);
        let b = read_all(&second);
        prop_assert_eq!(a.len(), b.len());
        for ((bytes_a, va), (bytes_b, vb)) in a.iter().zip(&b) {
            prop_assert_eq!(va, vb);
            if let Ok(Line::Message(_)) = reel_trace::line::parse_line(bytes_a) {
                prop_assert_eq!(bytes_a, bytes_b, "message lines are copied verbatim");
            }
        }
    }
}
