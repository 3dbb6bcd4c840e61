//! The normaliser (`reel_mcp::normalize`): the streaming scanner that keys every
//! recorded and live request for replay, and the `Value` path that verify and diff use.
//! Both must agree, or a recorded answer stops matching its request.
//!
//! The input is up to three lines, by the choice byte: `--ignore` pointers (separated
//! by tabs), a message, and a second message to compare it with.
//!
//! Asserts: the scanner accepts exactly the objects the `Value` path accepts, and
//! (when no object repeats a key, where the two may differ by design) its match key is
//! [`MatchKey::of`] of the normalised message and its class that of the envelope;
//! normalising is idempotent; `json_eq` is reflexive and symmetric, `diff` is empty
//! exactly for `json_eq` values, and equal values have equal keys and canonical texts.

use std::sync::LazyLock;

use reel_mcp::normalize::{
    MatchKey, NormalizeError, Normalizer, Pointer, canonical, diff, json_eq,
};
use reel_redact::redact::Redactor;
use reel_trace::jsonrpc::Envelope;
use serde::de::{Deserializer as _, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::input::choice;

/// The live side's normaliser, with the built-in redaction (compiled once).
static LIVE: LazyLock<Normalizer> =
    LazyLock::new(|| Normalizer::new().with_redactor(Redactor::builtin()));

/// The target.
pub fn run(data: &[u8]) {
    let (c, data) = choice(data);
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let pointers: Vec<Pointer> = if c & 1 == 1 {
        lines
            .next()
            .unwrap_or_default()
            .split('\t')
            .filter_map(|p| Pointer::parse(p).ok())
            .collect()
    } else {
        Vec::new()
    };
    let n = Normalizer::new().with_ignore(pointers);
    let (first, second) = if c & 2 == 2 {
        (lines.next().unwrap_or_default(), lines.next())
    } else {
        (text.as_ref(), None)
    };
    let a = message(&n, first);
    if let (Some(a), Some(b)) = (&a, second.and_then(|s| message(&n, s))) {
        compare(a, &b);
    }
    let _ = LIVE.normalize_live(first);
}

/// Checks one message; its normalised value when it is one.
fn message(n: &Normalizer, raw: &str) -> Option<Value> {
    let scanned = n.scan(raw);
    let value = n.normalize_recorded(raw);
    let (scanned, value) = match (scanned, value) {
        (Ok(s), Ok(v)) => (s, v),
        (Err(_), Err(_)) => return None,
        // Known and not yet settled: a number beyond an f64 (`1e400`) in a member the
        // scanner skips (or in `result`) is read past by it, and refused by serde_json
        // on the value path; see fuzz/regressions/normalize.
        (Ok(_), Err(NormalizeError::NotJson { message })) if message.contains("out of range") => {
            return None;
        }
        // The value path takes any JSON; the scanner only messages (objects).
        (Err(NormalizeError::NotObject { batch }), Ok(v)) if !v.is_object() => {
            assert_eq!(batch, v.is_array(), "a batch is an array: {raw}");
            return None;
        }
        (s, v) => panic!("the scanner and the value path disagree: {s:?} vs {v:?}"),
    };
    if !has_repeated_key(raw) {
        assert_eq!(scanned.key, MatchKey::of(&value), "scanned key of {raw}");
        if let Some(env) = Envelope::parse(raw) {
            assert_eq!(scanned.kind, env.kind(), "class of {raw}");
        }
    }
    let mut again = value.clone();
    n.normalize_value(&mut again);
    assert_eq!(again, value, "normalising twice");
    compare(&value, &value);
    Some(value)
}

fn compare(a: &Value, b: &Value) {
    let eq = json_eq(a, b);
    assert_eq!(eq, json_eq(b, a), "json_eq is not symmetric");
    assert_eq!(diff(a, b).is_empty(), eq, "diff disagrees with json_eq");
    if eq {
        assert_eq!(MatchKey::of_value(a), MatchKey::of_value(b), "equal values");
        assert_eq!(MatchKey::of(a), MatchKey::of(b), "equal messages");
        assert_eq!(canonical(a), canonical(b), "equal values, canonical texts");
    } else {
        assert_ne!(
            canonical(a),
            canonical(b),
            "unequal values, one canonical text"
        );
    }
}

/// True when some object in `raw` holds a key twice (or `raw` is not JSON, or nests
/// deeper than serde_json reads).
fn has_repeated_key(raw: &str) -> bool {
    let mut de = serde_json::Deserializer::from_str(raw);
    de.deserialize_any(Unique).is_err()
}

/// A visitor that fails on a repeated key anywhere.
struct Unique;

impl<'de> serde::de::DeserializeSeed<'de> for Unique {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(Unique)
    }
}

impl<'de> Visitor<'de> for Unique {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Unique)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys = std::collections::HashSet::new();
        while let Some(k) = map.next_key::<String>()? {
            if !keys.insert(k) {
                return Err(serde::de::Error::custom("repeated key"));
            }
            map.next_value_seed(Unique)?;
        }
        Ok(())
    }
}
