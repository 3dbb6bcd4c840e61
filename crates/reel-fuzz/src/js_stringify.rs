//! `JSON.stringify(JSON.parse(text))` as reel computes it for `history_elided` hashes
//! (`reel_trace::hash`), on LLM request bodies and recorded messages from outside.
//!
//! Asserts: the output is a fixed point (stringifying it again gives it back, as in
//! JavaScript); JSON that serde_json accepts is accepted, and its stringified form is
//! JSON denoting the same value (numbers as JavaScript's doubles); each element of a
//! body's `messages` array is in stringified form, and the digests count them.

use reel_trace::hash::{RequestDigests, RollingHash, js_stringify, request_messages};
use serde_json::Value;

/// The same value, numbers compared as doubles (JavaScript's only number type) within
/// one unit in the last place: serde_json's default float parsing may round a long
/// literal one ULP off, where `JSON.parse` (and `js_stringify`) round correctly.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => {
                x == y || (x.signum() == y.signum() && x.to_bits().abs_diff(y.to_bits()) <= 1)
            }
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// The target.
pub fn run(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let parsed = serde_json::from_str::<Value>(text);
        match js_stringify(text) {
            Ok(out) => {
                assert_eq!(
                    js_stringify(&out).as_deref(),
                    Ok(out.as_str()),
                    "not a fixed point"
                );
                if let Ok(before) = parsed {
                    let after: Value = serde_json::from_str(&out)
                        .unwrap_or_else(|e| panic!("{out:?} is not JSON: {e}"));
                    assert!(same(&after, &before), "value changed: {before} -> {out}");
                }
            }
            Err(e) => assert!(
                parsed.is_err(),
                "serde_json reads {text:?}, js_stringify: {e}"
            ),
        }
        if let Ok(messages) = request_messages(text) {
            for m in &messages {
                assert_eq!(js_stringify(m).as_deref(), Ok(m.as_str()));
            }
            let digests = RequestDigests::from_body(data).expect("the same body");
            assert_eq!(digests.message_count(), messages.len());
            let _ = digests.prefix(messages.len() as u64);
        }
        let _ = RollingHash::new().push_json(text);
    } else {
        assert!(RequestDigests::from_body(data).is_err());
    }
}
