//! The recorder reads a message line once: the redaction walk validates it, tells its
//! JSON-RPC kind and redacts it in one pass (`Redactor::redact_message`, and
//! `record::classify` with no rules). These properties hold that pass to serde_json,
//! the parser every reader of the trace uses: the same lines are JSON, the same
//! objects are error responses, and the text is what `redact_json` gives.

use std::sync::LazyLock;

use proptest::prelude::*;
use reel_redact::record::classify;
use reel_redact::redact::Redactor;
use reel_trace::jsonrpc::{Envelope, RpcKind};
use serde_json::Value;
use serde_json::value::RawValue;

static BUILTIN: LazyLock<Redactor> = LazyLock::new(Redactor::builtin);

/// What serde_json says of a line: whether it is one JSON value (white space around
/// it allowed), and its kind when it is one that serde_json can also decode whole
/// (a lone surrogate escape in a member name is valid JSON that a decoder refuses).
fn serde_verdict(text: &str) -> (bool, Option<RpcKind>) {
    let value = text.trim_matches([' ', '\t', '\n', '\r']);
    let valid = !value.is_empty() && serde_json::from_str::<&RawValue>(value).is_ok();
    let decodes = valid && serde_json::from_str::<Value>(value).is_ok();
    (valid, decodes.then(|| Envelope::kind_of(value)))
}

fn check(text: &str) -> Result<(), TestCaseError> {
    let (valid, kind) = serde_verdict(text);
    let ours = classify(text.as_bytes());
    prop_assert_eq!(ours.is_some(), valid, "valid JSON? {}", text);
    let redacted = BUILTIN.redact_message(text.trim_matches([' ', '\t', '\n', '\r']));
    prop_assert_eq!(redacted.is_some(), valid, "redact_message on {}", text);
    if let (Some(json), Some(m)) = (ours, redacted) {
        if let Some(kind) = kind {
            prop_assert_eq!(m.kind, kind, "kind of {}", text);
            prop_assert_eq!(json.is_error, kind == RpcKind::Error, "error? {}", text);
        }
        prop_assert_eq!(m.text, BUILTIN.redact_json(json.value), "text of {}", text);
    }
    Ok(())
}

/// Member names: the six that decide a kind (one spelled with an escape), and others.
fn arb_key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("jsonrpc"),
        Just("id"),
        Just("method"),
        Just("params"),
        Just("result"),
        Just("error"),
        Just("\\u0069d"),
        Just("err\\u006fr"),
        Just("token"),
        Just("x"),
    ]
    .prop_map(|k| format!("\"{k}\""))
}

/// Values, valid and not: the invalid ones make the line not JSON.
fn arb_value() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => Just("null"),
        4 => Just("1"),
        2 => Just("-0.5e3"),
        4 => Just("\"2.0\""),
        2 => Just("\"tools/call\""),
        2 => Just("{\"code\":-32601,\"message\":\"nope\"}"),
        2 => Just("[1,{\"a\":\"sk-abcdefghijklmnopqrstuvwxyz\"}]"),
        2 => Just("{}"),
        2 => Just("\"a\\\"b\\u00e9\""),
        1 => Just("\"lone \\ud800 surrogate\""),
        1 => Just("true"),
        1 => Just("01"),
        1 => Just("\"raw \n break\""),
        1 => Just("\"bad \\x escape\""),
        1 => Just("tru"),
        1 => Just("[1,]"),
        1 => Just("\"open"),
    ]
    .prop_map(str::to_owned)
}

/// An object from members, with the separators sometimes wrong.
fn arb_object() -> impl Strategy<Value = String> {
    (
        prop::collection::vec((arb_key(), arb_value(), 0u8..20), 0..6),
        0u8..20,
    )
        .prop_map(|(members, tail)| {
            let mut s = String::from("{");
            for (i, (k, v, sep)) in members.iter().enumerate() {
                if i > 0 {
                    s.push_str(if *sep == 0 { ";" } else { "," });
                }
                s.push_str(k);
                s.push_str(if *sep == 1 { " " } else { ":" });
                s.push_str(v);
            }
            s.push_str(match tail {
                0 => "",
                1 => ",}",
                2 => "} {}",
                _ => "}",
            });
            s
        })
}

/// A line: an object, a batch of them, or a scalar, with white space around it.
fn arb_line() -> impl Strategy<Value = String> {
    (
        prop_oneof![
            6 => arb_object(),
            2 => prop::collection::vec(arb_object(), 0..3).prop_map(|v| format!("[{}]", v.join(","))),
            1 => arb_value(),
        ],
        prop_oneof![Just(""), Just(" "), Just("\t\r\n")],
    )
        .prop_map(|(line, pad)| format!("{pad}{line}{pad}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn one_pass_reads_lines_as_serde_json_does(line in arb_line()) {
        check(&line)?;
    }

    #[test]
    fn one_pass_reads_any_text_as_serde_json_does(text in "[\\[\\]{}\":,0-9a-z \\\\]{0,40}") {
        check(&text)?;
    }
}

#[test]
fn the_kinds_the_recorder_tells() {
    let cases = [
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}"#,
            RpcKind::Error,
        ),
        (r#"{"id":null,"error":{}}"#, RpcKind::Error),
        (r#"{"\u0069d":1,"error":{}}"#, RpcKind::Error),
        (r#"{"id":1,"error":{},"id":2}"#, RpcKind::Invalid),
        (r#"{"id":1,"error":{},"method":7}"#, RpcKind::Error),
        (r#"{"id":1,"error":{},"method":"m"}"#, RpcKind::Invalid),
        (r#"{"id":1,"result":{},"x":1,"x":2}"#, RpcKind::Response),
        (
            r#"{"id":1,"method":"m","params":{"error":1}}"#,
            RpcKind::Request,
        ),
        (r#"{"id":null,"method":"m"}"#, RpcKind::Invalid),
        (r#"{"method":"m"}"#, RpcKind::Notification),
        (r#"[{"id":1,"error":{}}]"#, RpcKind::Batch),
        ("42", RpcKind::Invalid),
    ];
    for (line, want) in cases {
        let m = BUILTIN
            .redact_message(line)
            .unwrap_or_else(|| panic!("{line}"));
        assert_eq!(m.kind, want, "{line}");
        assert_eq!(Envelope::kind_of(line), want, "{line}");
    }
}
