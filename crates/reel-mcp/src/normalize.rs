//! The normaliser: what two honest runs may change in a message without it being a
//! different message. `play` matches live requests against the tape with it, `verify`
//! compares live answers with recorded ones, `diff` aligns two traces: one implementation,
//! so the three never disagree on what "the same" means.
//!
//! Normalisation works on a whole JSON-RPC message (a `serde_json::Value`) in three
//! phases: the built-in removal [`rules`] (each named, described and testable on its
//! own), then the user's `--ignore` JSON pointers ([`Pointer`]), then the clean-up rules
//! that make an emptied `_meta`/`params` equal to an absent one. A live message is first
//! redacted with the trace's own redaction rules ([`Normalizer::with_redactor`]), because
//! the recorded side was redacted when it was written: a redacted argument still matches.
//!
//! Invariants:
//! - Equality after normalisation is JSON value equality: object member order is
//!   irrelevant and numbers compare by value (`1`, `1.0` and `1e0` are equal), see
//!   [`json_eq`] — exactly, also beyond what an `f64` holds ([`numbers`]). [`MatchKey`]
//!   hashes the same equivalence (numbers beyond an `f64` as the `f64` nearest them), so
//!   equal values always have equal keys.
//! - The rules only remove (or, inside arrays, blank) members; they never invent content.

use std::borrow::Cow;
use std::fmt;

use reel_redact::redact::Redactor;
use serde_json::{Map, Value};

mod error;
mod key;
mod members;
pub mod numbers;
mod pointer;
mod scan;

pub use self::error::NormalizeError;
pub use self::key::{KeyHasher, MatchKey};
pub use self::members::{CLIENT_META_KEYS, INITIALIZE_CLIENT_KEYS, TRACE_CONTEXT_KEYS};
pub use self::pointer::{Pointer, PointerError};
pub use self::scan::{ScanSeed, Scanned};

/// When a rule runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Before the user's `--ignore` pointers: removes volatile members.
    Remove,
    /// After them: tidies what the removals left empty.
    Cleanup,
}

/// One built-in normalisation rule: data that `--help` lists and tests exercise one by one.
#[derive(Clone, Copy)]
pub struct Rule {
    /// Short stable name (shown in `--help` and in miss messages).
    pub name: &'static str,
    /// What it ignores and why, one line.
    pub description: &'static str,
    /// When it runs.
    pub phase: Phase,
    apply: fn(&mut Value) -> bool,
}

impl Rule {
    /// Applies the rule to a whole JSON-RPC message; true when it changed something.
    pub fn apply(&self, message: &mut Value) -> bool {
        (self.apply)(message)
    }
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rule")
            .field("name", &self.name)
            .field("phase", &self.phase)
            .finish()
    }
}

static RULES: [Rule; 7] = [
    Rule {
        name: "jsonrpc-id",
        description: "JSON-RPC `id` (each run numbers its requests; answers carry the live id)",
        phase: Phase::Remove,
        apply: rule_jsonrpc_id,
    },
    Rule {
        name: "progress-token",
        description: "`params._meta.progressToken` (recorded progress is re-sent with the live token)",
        phase: Phase::Remove,
        apply: rule_progress_token,
    },
    Rule {
        name: "initialize-client",
        description: "`initialize` params `clientInfo`, `capabilities`, `protocolVersion` (the version is negotiated separately)",
        phase: Phase::Remove,
        apply: rule_initialize_client,
    },
    Rule {
        name: "client-meta",
        description: "2026-07-28 `params._meta` keys io.modelcontextprotocol/clientInfo, clientCapabilities, protocolVersion, logLevel",
        phase: Phase::Remove,
        apply: rule_client_meta,
    },
    Rule {
        name: "trace-context",
        description: "`params._meta` `traceparent`, `tracestate`, `baggage` (OpenTelemetry context, new on every run)",
        phase: Phase::Remove,
        apply: rule_trace_context,
    },
    Rule {
        name: "empty-meta",
        description: "an empty `params._meta` (after the rules and --ignore) equals an absent one",
        phase: Phase::Cleanup,
        apply: rule_empty_meta,
    },
    Rule {
        name: "empty-params",
        description: "empty `params` (`{}`, after the rules and --ignore) equal absent params",
        phase: Phase::Cleanup,
        apply: rule_empty_params,
    },
];

/// The built-in rules, in the order they run (removals, then clean-ups).
pub fn rules() -> &'static [Rule] {
    &RULES
}

/// The rule called `name`.
pub fn rule(name: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.name == name)
}

/// The rules as text for `--help`: one `  name  description` line each, plus the two
/// inputs that are not built-in rules (redaction first, `--ignore` between the phases).
pub fn rules_help() -> String {
    let mut rows: Vec<(&str, String)> = vec![(
        "redaction",
        "first, the trace's own meta.redaction rules are applied to the live message".into(),
    )];
    let described = |phase| {
        RULES
            .iter()
            .filter(move |r| r.phase == phase)
            .map(|r| (r.name, r.description.to_owned()))
    };
    rows.extend(described(Phase::Remove));
    rows.push((
        "--ignore",
        "then each --ignore POINTER (a JSON pointer into the JSON-RPC message)".into(),
    ));
    rows.extend(described(Phase::Cleanup));
    rows.push((
        "equality",
        "then values compare by value: member order aside, numbers exactly (1 = 1.0 = 1e0; integers beyond 64 bits and long decimals by every digit; only play's match key hashes them as the f64 they round to)".into(),
    ));
    reel_report::display::rule_table(rows)
}

fn rule_jsonrpc_id(m: &mut Value) -> bool {
    m.as_object_mut().is_some_and(|o| o.remove("id").is_some())
}

fn params_mut(m: &mut Value) -> Option<&mut Map<String, Value>> {
    m.get_mut("params")?.as_object_mut()
}

fn meta_mut(m: &mut Value) -> Option<&mut Map<String, Value>> {
    params_mut(m)?.get_mut("_meta")?.as_object_mut()
}

fn remove_keys(o: Option<&mut Map<String, Value>>, keys: &[&str]) -> bool {
    let Some(o) = o else { return false };
    let mut changed = false;
    for k in keys {
        changed |= o.remove(*k).is_some();
    }
    changed
}

fn rule_progress_token(m: &mut Value) -> bool {
    remove_keys(meta_mut(m), &["progressToken"])
}

fn rule_initialize_client(m: &mut Value) -> bool {
    if m.get("method").and_then(Value::as_str) != Some(crate::jsonrpc::methods::INITIALIZE) {
        return false;
    }
    remove_keys(params_mut(m), &INITIALIZE_CLIENT_KEYS)
}

fn rule_client_meta(m: &mut Value) -> bool {
    remove_keys(meta_mut(m), &CLIENT_META_KEYS)
}

fn rule_trace_context(m: &mut Value) -> bool {
    remove_keys(meta_mut(m), &TRACE_CONTEXT_KEYS)
}

fn rule_empty_meta(m: &mut Value) -> bool {
    let Some(p) = params_mut(m) else { return false };
    if p.get("_meta")
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty)
    {
        p.remove("_meta");
        return true;
    }
    false
}

fn rule_empty_params(m: &mut Value) -> bool {
    let Some(o) = m.as_object_mut() else {
        return false;
    };
    if o.get("params")
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty)
    {
        o.remove("params");
        return true;
    }
    false
}

impl CanonicalSink for String {
    fn put(&mut self, s: &str) {
        self.push_str(s);
    }
}

trait CanonicalSink {
    fn put(&mut self, s: &str);
}

/// The canonical text of a value: object members sorted by key, numbers by value
/// (integral numbers as integers, others in shortest round-trip form), no whitespace.
/// Two values are [`json_eq`] exactly when their canonical texts are equal.
pub fn canonical(v: &Value) -> String {
    let mut s = String::new();
    write_canonical(v, &mut s);
    s
}

fn write_canonical(v: &Value, out: &mut impl CanonicalSink) {
    match v {
        Value::Null => out.put("null"),
        Value::Bool(true) => out.put("true"),
        Value::Bool(false) => out.put("false"),
        Value::Number(n) => out.put(&canonical_number(n)),
        Value::String(s) => out.put(&serde_json::to_string(s).unwrap_or_default()),
        Value::Array(a) => {
            out.put("[");
            for (i, e) in a.iter().enumerate() {
                if i > 0 {
                    out.put(",");
                }
                write_canonical(e, out);
            }
            out.put("]");
        }
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort_unstable();
            out.put("{");
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.put(",");
                }
                out.put(&serde_json::to_string(k).unwrap_or_default());
                out.put(":");
                write_canonical(&o[k.as_str()], out);
            }
            out.put("}");
        }
    }
}

/// A number as the value it denotes: integers (and floats with no fraction that fit
/// in 128 bits) as decimal integers, other floats in Rust's shortest round-trip form.
fn canonical_number(n: &serde_json::Number) -> Cow<'static, str> {
    if let Some(i) = n.as_i64() {
        return Cow::Owned(i.to_string());
    }
    if let Some(u) = n.as_u64() {
        return Cow::Owned(u.to_string());
    }
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 1.0e38 => Cow::Owned((f as i128).to_string()),
        Some(f) => Cow::Owned(format!("{f:e}")),
        None => Cow::Owned(n.to_string()),
    }
}

fn numbers_eq(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x == y;
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return x == y;
    }
    canonical_number(a) == canonical_number(b)
}

/// JSON value equality: member order is irrelevant, numbers compare by value (those
/// [`numbers::parse`] kept as markers by their exact decimal value).
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => numbers_eq(x, y),
        (Value::String(x), Value::String(y)) => match (numbers::marked(x), numbers::marked(y)) {
            (Some(p), Some(q)) => numbers::marked_eq(p, q),
            _ => x == y,
        },
        (Value::String(s), Value::Number(n)) | (Value::Number(n), Value::String(s)) => {
            numbers::marked(s).is_some_and(|m| numbers::marked_eq(m, &n.to_string()))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// One place where two values differ.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    /// JSON pointer to the place (`""` for the whole value).
    pub pointer: String,
    /// The left value there, `None` when absent.
    pub left: Option<Value>,
    /// The right value there, `None` when absent.
    pub right: Option<Value>,
}

/// Longest value text shown by [`Difference`]'s `Display`.
pub const SHOWN_VALUE_CHARS: usize = 120;

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |v: &Option<Value>| match v {
            None => "(absent)".to_owned(),
            Some(v) => shorten(&numbers::show_value(v), SHOWN_VALUE_CHARS),
        };
        let at = if self.pointer.is_empty() {
            "(whole value)"
        } else {
            &self.pointer
        };
        write!(f, "{at}: {} -> {}", show(&self.left), show(&self.right))
    }
}

/// `s` cut to `max` characters with an ellipsis.
pub fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
    t.push('…');
    t
}

/// Where `left` and `right` differ, as JSON pointers with both values, in document
/// order (object members by key). Equal values (per [`json_eq`]) give an empty list.
/// Arrays are compared element by element; a longer array shows its extra elements as
/// absent on the other side.
pub fn diff(left: &Value, right: &Value) -> Vec<Difference> {
    let mut out = Vec::new();
    diff_into(left, right, &mut String::new(), &mut out);
    out
}

fn diff_into(a: &Value, b: &Value, path: &mut String, out: &mut Vec<Difference>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort_unstable();
            keys.dedup();
            for k in keys {
                let len = path.len();
                push_segment(path, k);
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => diff_into(p, q, path, out),
                    (p, q) => out.push(Difference {
                        pointer: path.clone(),
                        left: p.cloned(),
                        right: q.cloned(),
                    }),
                }
                path.truncate(len);
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            for i in 0..x.len().max(y.len()) {
                let len = path.len();
                path.push('/');
                path.push_str(&i.to_string());
                match (x.get(i), y.get(i)) {
                    (Some(p), Some(q)) => diff_into(p, q, path, out),
                    (p, q) => out.push(Difference {
                        pointer: path.clone(),
                        left: p.cloned(),
                        right: q.cloned(),
                    }),
                }
                path.truncate(len);
            }
        }
        _ if json_eq(a, b) => {}
        _ => out.push(Difference {
            pointer: path.clone(),
            left: Some(a.clone()),
            right: Some(b.clone()),
        }),
    }
}

fn push_segment(path: &mut String, key: &str) {
    path.push('/');
    for c in key.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

/// Normalises messages for comparison: the built-in [`rules`], the user's `--ignore`
/// pointers, and (for live messages) the trace's redaction rules.
#[derive(Debug, Clone, Default)]
pub struct Normalizer {
    ignore: Vec<Pointer>,
    redactor: Option<Redactor>,
}

impl Normalizer {
    /// The built-in rules only.
    pub fn new() -> Normalizer {
        Normalizer::default()
    }

    /// Adds the user's `--ignore` pointers.
    pub fn with_ignore(mut self, ignore: Vec<Pointer>) -> Normalizer {
        self.ignore = ignore;
        self
    }

    /// Redacts live messages with these rules before anything else (the recorded side
    /// was redacted with them when the trace was written).
    pub fn with_redactor(mut self, redactor: Redactor) -> Normalizer {
        self.redactor = Some(redactor);
        self
    }

    /// The `--ignore` pointers.
    pub fn ignored(&self) -> &[Pointer] {
        &self.ignore
    }

    /// Applies the rules and pointers to a parsed message in place (no redaction).
    pub fn normalize_value(&self, message: &mut Value) {
        for r in RULES.iter().filter(|r| r.phase == Phase::Remove) {
            r.apply(message);
        }
        for p in &self.ignore {
            p.remove_from(message);
        }
        for r in RULES.iter().filter(|r| r.phase == Phase::Cleanup) {
            r.apply(message);
        }
    }

    /// Parses and normalises a message read from the trace (already redacted there).
    pub fn normalize_recorded(&self, raw: &str) -> Result<Value, NormalizeError> {
        let mut v = parse(raw)?;
        self.normalize_value(&mut v);
        Ok(v)
    }

    /// Scans a message's text once: its class, the members replay needs verbatim, and
    /// its match keys under the rules and `--ignore` (no redaction: give it the redacted
    /// text, [`Normalizer::redact_live`], for a live message). The key equals
    /// [`MatchKey::of`] of the normalised message.
    pub fn scan<'a>(&self, raw: &'a str) -> Result<Scanned<'a>, NormalizeError> {
        scan::scan(raw, &self.ignore)
    }

    /// [`Normalizer::scan`] as a `DeserializeSeed`, for a message embedded in a larger
    /// document (a trace line's `raw`), so the document is read once.
    pub fn scan_seed(&self) -> ScanSeed<'_> {
        ScanSeed {
            ignore: &self.ignore,
        }
    }

    /// Applies the live-side redaction only (identity without a redactor), for callers
    /// that parse the message once and normalise it with [`Normalizer::normalize_value`].
    pub fn redact_live<'a>(&self, raw: &'a str) -> Cow<'a, str> {
        match &self.redactor {
            Some(r) => r.redact_json(raw),
            None => Cow::Borrowed(raw),
        }
    }

    /// Redacts (when a redactor is set), parses and normalises a live message.
    pub fn normalize_live(&self, raw: &str) -> Result<Value, NormalizeError> {
        let redacted = match &self.redactor {
            Some(r) => r.redact_json(raw),
            None => Cow::Borrowed(raw),
        };
        let mut v = parse(&redacted)?;
        self.normalize_value(&mut v);
        Ok(v)
    }
}

fn parse(raw: &str) -> Result<Value, NormalizeError> {
    numbers::parse(raw).map_err(|e| NormalizeError::NotJson {
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn after(rule_name: &str, mut v: Value) -> (bool, Value) {
        let changed = rule(rule_name).expect("rule exists").apply(&mut v);
        (changed, v)
    }

    #[test]
    fn rule_jsonrpc_id_drops_the_id() {
        let (c, v) = after(
            "jsonrpc-id",
            json!({"jsonrpc":"2.0","id":7,"method":"tools/list"}),
        );
        assert!(c);
        assert_eq!(v, json!({"jsonrpc":"2.0","method":"tools/list"}));
        let (c, _) = after("jsonrpc-id", json!({"jsonrpc":"2.0","method":"x"}));
        assert!(!c);
    }

    #[test]
    fn rule_progress_token_drops_only_the_token() {
        let (c, v) = after(
            "progress-token",
            json!({"method":"tools/call","params":{"name":"a","_meta":{"progressToken":6,"x":1}}}),
        );
        assert!(c);
        assert_eq!(
            v,
            json!({"method":"tools/call","params":{"name":"a","_meta":{"x":1}}})
        );
        // A progressToken outside _meta is content, not the volatile token.
        let (c, _) = after(
            "progress-token",
            json!({"method":"m","params":{"progressToken":1}}),
        );
        assert!(!c);
    }

    #[test]
    fn rule_initialize_client_only_touches_initialize() {
        let init = json!({"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{"roots":{}},
            "clientInfo":{"name":"mcp","version":"0.1.0"},"other":1}});
        let (c, v) = after("initialize-client", init);
        assert!(c);
        assert_eq!(v, json!({"method":"initialize","params":{"other":1}}));
        let call = json!({"method":"tools/call","params":{"clientInfo":1}});
        let (c, v) = after("initialize-client", call.clone());
        assert!(!c);
        assert_eq!(v, call);
    }

    #[test]
    fn rule_client_meta_drops_the_2026_envelope_keys() {
        let (c, v) = after(
            "client-meta",
            json!({"method":"tools/list","params":{"_meta":{
                "io.modelcontextprotocol/protocolVersion":"2026-07-28",
                "io.modelcontextprotocol/clientInfo":{"name":"a","version":"1"},
                "io.modelcontextprotocol/clientCapabilities":{},
                "io.modelcontextprotocol/logLevel":"info",
                "io.modelcontextprotocol/subscriptionId":"keep"}}}),
        );
        assert!(c);
        assert_eq!(
            v,
            json!({"method":"tools/list","params":{"_meta":{
                "io.modelcontextprotocol/subscriptionId":"keep"}}})
        );
    }

    #[test]
    fn rule_trace_context_drops_otel_keys() {
        let (c, v) = after(
            "trace-context",
            json!({"method":"m","params":{"_meta":{"traceparent":"00-a-b-01","tracestate":"x=1","baggage":"k=v"}}}),
        );
        assert!(c);
        assert_eq!(v, json!({"method":"m","params":{"_meta":{}}}));
    }

    #[test]
    fn rule_empty_meta_and_empty_params() {
        let (c, v) = after("empty-meta", json!({"method":"m","params":{"_meta":{}}}));
        assert!(c);
        assert_eq!(v, json!({"method":"m","params":{}}));
        let (c, _) = after(
            "empty-meta",
            json!({"method":"m","params":{"_meta":{"a":1}}}),
        );
        assert!(!c);
        let (c, v) = after("empty-params", json!({"method":"m","params":{}}));
        assert!(c);
        assert_eq!(v, json!({"method":"m"}));
        let (c, _) = after("empty-params", json!({"method":"m","params":[]}));
        assert!(!c);
    }

    #[test]
    fn every_rule_is_listed_once_with_a_description() {
        let names: Vec<_> = rules().iter().map(|r| r.name).collect();
        let mut dedup = names.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(names.len(), dedup.len());
        let help = rules_help();
        for r in rules() {
            assert!(!r.description.is_empty());
            assert!(help.contains(r.name), "{} missing from help", r.name);
        }
        assert!(help.contains("--ignore"));
        assert!(help.contains("redaction"));
    }

    #[test]
    fn two_clients_with_different_identities_normalise_equal() {
        let n = Normalizer::new();
        let a = n
            .normalize_live(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},"_meta":{"progressToken":4,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"mcp","version":"0.1.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}"#)
            .unwrap();
        let b = n
            .normalize_live(r#"{"method":"tools/call","params":{"arguments":{"b":3.0,"a":2},"name":"add","_meta":{"traceparent":"00-1-2-01"}},"id":"x","jsonrpc":"2.0"}"#)
            .unwrap();
        assert!(json_eq(&a, &b), "{a} vs {b}");
        assert_eq!(MatchKey::of(&a), MatchKey::of(&b));
        let c = n
            .normalize_live(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":4}}}"#)
            .unwrap();
        assert_ne!(MatchKey::of(&a), MatchKey::of(&c));
    }

    #[test]
    fn ignore_pointers_remove_members_and_blank_array_elements() {
        let p = |s: &str| Pointer::parse(s).unwrap();
        let n = Normalizer::new().with_ignore(vec![
            p("/params/arguments/now"),
            p("/params/list/1"),
            p("/params/items/*/ts"),
            p("/params/a~1b"),
        ]);
        let v = n
            .normalize_live(r#"{"method":"m","params":{"arguments":{"now":"12:00","q":1},"list":[1,2,3],"items":[{"ts":1,"k":"a"},{"ts":2,"k":"b"}],"a/b":0}}"#)
            .unwrap();
        assert_eq!(
            v,
            json!({"method":"m","params":{"arguments":{"q":1},"list":[1,null,3],"items":[{"k":"a"},{"k":"b"}]}})
        );
        // An ignored pointer that empties params makes them equal to absent ones.
        let n = Normalizer::new().with_ignore(vec![p("/params/now")]);
        let a = n
            .normalize_live(r#"{"method":"m","params":{"now":1}}"#)
            .unwrap();
        let b = n.normalize_live(r#"{"method":"m"}"#).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn pointers_are_validated() {
        assert!(matches!(
            Pointer::parse("params/x"),
            Err(PointerError::NoLeadingSlash { .. })
        ));
        assert!(matches!(
            Pointer::parse("/a~2"),
            Err(PointerError::BadEscape { .. })
        ));
        assert_eq!(Pointer::parse(""), Err(PointerError::WholeMessage));
        assert_eq!(Pointer::parse("/a~0b").unwrap().segments, vec!["a~b"]);
        assert!(
            !Pointer::parse("/x/01")
                .unwrap()
                .remove_from(&mut json!({"x":[1,2]}))
        );
    }

    #[test]
    fn numbers_beyond_an_f64_compare_exactly_and_keep_their_keys() {
        let n = Normalizer::new();
        let msg = |x: &str| format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"n":{x},"m":[{x}]}}}}"#);
        let big = n
            .normalize_recorded(&msg("12345678901234567890123"))
            .unwrap();
        let next = n.normalize_live(&msg("12345678901234567890124")).unwrap();
        let spelled = n
            .normalize_live(&msg("1.2345678901234567890123e22"))
            .unwrap();
        assert!(!json_eq(&big, &next));
        assert!(json_eq(&big, &spelled));
        let d = diff(&big, &next);
        assert_eq!(
            d.iter().map(|d| d.pointer.as_str()).collect::<Vec<_>>(),
            ["/result/m/0", "/result/n"]
        );
        assert_eq!(
            d[1].to_string(),
            "/result/n: 12345678901234567890123 -> 12345678901234567890124"
        );
        // An f64's value stays a number, and equals an exact spelling of itself.
        let f = n.normalize_recorded(&msg("1e22")).unwrap();
        assert!(f["result"]["n"].is_number());
        assert!(json_eq(
            &f,
            &n.normalize_live(&msg("10000000000000000000000")).unwrap()
        ));
        let odd = n.normalize_recorded(&msg("9007199254740993.0")).unwrap();
        assert!(json_eq(
            &odd,
            &n.normalize_live(&msg("9007199254740993")).unwrap()
        ));
        // The text's scan and the value hash a marked number alike.
        let raw = r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"n":12345678901234567890123}}"#;
        let scanned = n.scan(raw).unwrap().key;
        assert_eq!(scanned, MatchKey::of(&n.normalize_recorded(raw).unwrap()));
    }

    #[test]
    fn equality_ignores_member_order_and_number_spelling() {
        let a: Value = serde_json::from_str(r#"{"a":1,"b":[1.0,2e0,{"c":-0}]}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"b":[1,2,{"c":0}],"a":1.0}"#).unwrap();
        assert!(json_eq(&a, &b));
        assert_eq!(canonical(&a), canonical(&b));
        let c: Value = serde_json::from_str(r#"{"b":[1,2,{"c":0.5}],"a":1}"#).unwrap();
        assert!(!json_eq(&a, &c));
        assert_ne!(canonical(&a), canonical(&c));
        assert!(!json_eq(&json!("1"), &json!(1)));
        // Keys follow the same equivalence.
        assert_eq!(MatchKey::of_value(&a), MatchKey::of_value(&b));
        assert_ne!(MatchKey::of_value(&a), MatchKey::of_value(&c));
        assert_ne!(
            MatchKey::of_value(&json!("1")),
            MatchKey::of_value(&json!(1))
        );
        assert_ne!(
            MatchKey::of_value(&json!(["ab", "c"])),
            MatchKey::of_value(&json!(["a", "bc"]))
        );
        assert_ne!(
            MatchKey::of_value(&json!({"a": {"b": 1}})),
            MatchKey::of_value(&json!({"a": {}, "b": 1}))
        );
        assert_eq!(
            MatchKey::of_value(&serde_json::from_str::<Value>("[0.5, -0.0, 1e2]").unwrap()),
            MatchKey::of_value(&json!([0.5, 0, 100]))
        );
        assert!(json_eq(
            &serde_json::from_str::<Value>("18446744073709551615").unwrap(),
            &json!(u64::MAX)
        ));
    }

    #[test]
    fn diff_names_every_differing_pointer_with_both_values() {
        let a = json!({"params":{"name":"echo","arguments":{"x":1,"y":[1,2],"gone":true,"a/b":1}}});
        let b =
            json!({"params":{"name":"echo","arguments":{"x":2,"y":[1,2,3],"new":null,"a/b":1.0}}});
        let d = diff(&a, &b);
        let pointers: Vec<_> = d.iter().map(|x| x.pointer.as_str()).collect();
        assert_eq!(
            pointers,
            [
                "/params/arguments/gone",
                "/params/arguments/new",
                "/params/arguments/x",
                "/params/arguments/y/2"
            ]
        );
        assert_eq!(d[0].right, None);
        assert_eq!(d[1].left, None);
        assert_eq!(d[1].right, Some(Value::Null));
        assert_eq!(d[2].to_string(), "/params/arguments/x: 1 -> 2");
        assert!(diff(&a, &a).is_empty());
        assert_eq!(diff(&json!(1), &json!("1"))[0].pointer, "");
    }

    #[test]
    fn live_messages_are_redacted_before_comparison() {
        // With the identity redactor the live text is used as is; the real rules are
        // exercised by reel-replay's tests once the redaction rules land.
        let n = Normalizer::new().with_redactor(Redactor::disabled());
        let v = n.normalize_live(r#"{"id":1,"method":"m"}"#).unwrap();
        assert_eq!(v, json!({"method":"m"}));
        assert!(matches!(
            n.normalize_live("{"),
            Err(NormalizeError::NotJson { .. })
        ));
    }
}
