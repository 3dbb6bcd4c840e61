//! What `reel stats` reads from a line, and nothing more.
//!
//! Every line is first read once into [`Head`]: the members that classify it (`type`,
//! `dir`), its `t`, reel's `session`, `kind`, and `raw` read *straight into* a JSON-RPC
//! summary ([`Rpc`]): method, id (as its original text), `params.name`, the few
//! `result` members that say whether a call failed or asked for input, and `error` as
//! its original text. Everything else is skipped with `IgnoredAny`; strings borrow from
//! the line. So a message line — nearly every line of a busy trace — is parsed exactly
//! once and allocates nothing unless a string had escapes.
//!
//! The rare lines (`meta`, `turn`, `end`, `llm.error` events) are read a second time,
//! into the records of [`super::records`]. Everything here is lenient: a member of the
//! wrong JSON type reads as absent.

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::lenient::{LNum, LStr, LTrue, NotNull, Obj, is_null, present_raw};

/// The members of any line that decide what it is, plus `raw` summarised as JSON-RPC.
///
/// Filled in place by [`read_head`]: a visitor writes each member into the caller's
/// struct, so nothing larger than a string slice is returned through serde's layers
/// (moving this struct through them cost more than a tenth of the scan).
#[derive(Debug, Default)]
pub(crate) struct Head<'a> {
    pub ty: LStr<'a>,
    pub t: LStr<'a>,
    pub dir: LStr<'a>,
    /// reel: the MCP session a message belongs to.
    pub session: LStr<'a>,
    pub kind: LStr<'a>,
    /// reel: `http.req`, the HTTP request that carried a message.
    pub http: Obj<HttpPart>,
    /// What `raw` is; [`Head::rpc`] holds its members when it is an object.
    pub raw: RawKind,
    pub rpc: Rpc<'a>,
}

/// `http` of a message line: only the HTTP request number.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct HttpPart {
    pub req: LNum,
}

impl Head<'_> {
    /// `http.req` (0: not recorded, or not a request number).
    pub fn http_req(&self) -> u64 {
        match self.http.0.as_ref().and_then(|h| h.req.0) {
            Some(r) if r >= 1.0 && r.fract() == 0.0 && r < u64::MAX as f64 => r as u64,
            _ => 0,
        }
    }
}

/// What `raw` is, as far as stats cares.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RawKind {
    /// No `raw` member.
    #[default]
    Absent,
    /// An object: summarised as a JSON-RPC message in [`Head::rpc`].
    Object,
    /// An array (a JSON-RPC batch) or a scalar: not paired.
    Other,
}

/// Reads a line (known to start with `{`) into `head`. A repeated member keeps the last
/// value, as `JSON.parse` does.
pub(crate) fn read_head<'a>(text: &'a str, head: &mut Head<'a>) -> Result<(), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    de::DeserializeSeed::deserialize(HeadSeed(head), &mut de)?;
    de.end()
}

/// The members of a line stats reads.
enum HeadKey {
    Type,
    T,
    Dir,
    Session,
    Kind,
    Http,
    Raw,
    Other,
}

impl<'de> Deserialize<'de> for HeadKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = HeadKey;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(match v {
                    "type" => HeadKey::Type,
                    "t" => HeadKey::T,
                    "dir" => HeadKey::Dir,
                    "session" => HeadKey::Session,
                    "kind" => HeadKey::Kind,
                    "http" => HeadKey::Http,
                    "raw" => HeadKey::Raw,
                    _ => HeadKey::Other,
                })
            }
        }
        d.deserialize_identifier(V)
    }
}

struct HeadSeed<'h, 'a>(&'h mut Head<'a>);

impl<'de: 'a, 'a> de::DeserializeSeed<'de> for HeadSeed<'_, 'a> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for HeadSeed<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
        let h = self.0;
        while let Some(key) = m.next_key::<HeadKey>()? {
            match key {
                HeadKey::Type => h.ty = m.next_value()?,
                HeadKey::T => h.t = m.next_value()?,
                HeadKey::Dir => h.dir = m.next_value()?,
                HeadKey::Session => h.session = m.next_value()?,
                HeadKey::Kind => h.kind = m.next_value()?,
                HeadKey::Http => h.http = m.next_value()?,
                HeadKey::Raw => {
                    h.rpc = Rpc::default();
                    m.next_value_seed(RawSeed {
                        kind: &mut h.raw,
                        rpc: &mut h.rpc,
                    })?;
                }
                HeadKey::Other => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// Reads `raw` in place: an object's members into an [`Rpc`], anything else skipped.
struct RawSeed<'h, 'a> {
    kind: &'h mut RawKind,
    rpc: &'h mut Rpc<'a>,
}

impl<'de: 'a, 'a> de::DeserializeSeed<'de> for RawSeed<'_, 'a> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for RawSeed<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
        *self.kind = RawKind::Object;
        let rpc = self.rpc;
        while let Some(key) = m.next_key::<RpcKey>()? {
            match key {
                RpcKey::Method => rpc.method = m.next_value()?,
                RpcKey::Id => rpc.id = Some(m.next_value::<&'de RawValue>()?),
                RpcKey::Params => {
                    // Only a tools/call's params are read (progress notifications are a
                    // large share of busy traces); `params` before `method` is read too.
                    if rpc.method.get().is_none_or(|method| method == "tools/call") {
                        rpc.params = m.next_value()?;
                    } else {
                        m.next_value::<IgnoredAny>()?;
                    }
                }
                RpcKey::Result => {
                    let part = m.next_value::<Obj<ResultPart<'de>>>()?;
                    rpc.result = Some(part.0.unwrap_or_default());
                }
                RpcKey::Error => rpc.error = Some(m.next_value::<&'de RawValue>()?),
                RpcKey::Other => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<(), A::Error> {
        while s.next_element::<IgnoredAny>()?.is_some() {}
        *self.kind = RawKind::Other;
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        *self.kind = RawKind::Other;
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        *self.kind = RawKind::Other;
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        *self.kind = RawKind::Other;
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        *self.kind = RawKind::Other;
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        *self.kind = RawKind::Other;
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        *self.kind = RawKind::Other;
        Ok(())
    }
}

/// A JSON-RPC message summarised for stats.
#[derive(Debug, Default)]
pub(crate) struct Rpc<'a> {
    pub method: LStr<'a>,
    /// The id as written (its JSON type decides pairing: `"1"` is not `1`).
    pub id: Option<&'a RawValue>,
    /// Read only for `tools/call` (or when `params` comes before `method`).
    pub params: Obj<Params<'a>>,
    /// `Some` whenever `result` is present, `null` included; its members only when an
    /// object.
    pub result: Option<ResultPart<'a>>,
    /// The error as written; read further only when the message is reported.
    pub error: Option<&'a RawValue>,
}

/// The members of a JSON-RPC message stats reads.
enum RpcKey {
    Method,
    Id,
    Params,
    Result,
    Error,
    Other,
}

impl<'de> Deserialize<'de> for RpcKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RpcKey;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(match v {
                    "method" => RpcKey::Method,
                    "id" => RpcKey::Id,
                    "params" => RpcKey::Params,
                    "result" => RpcKey::Result,
                    "error" => RpcKey::Error,
                    _ => RpcKey::Other,
                })
            }
        }
        d.deserialize_identifier(V)
    }
}

impl<'a> Rpc<'a> {
    /// The id when present and not `null`.
    pub fn live_id(&self) -> Option<&'a RawValue> {
        self.id.filter(|id| !is_null(id))
    }

    /// The error when present and not `null`.
    pub fn live_error(&self) -> Option<&'a RawValue> {
        self.error.filter(|e| !is_null(e))
    }
}

/// `params` of a request: only the tool name.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Params<'a> {
    #[serde(borrow)]
    pub name: LStr<'a>,
}

/// The members of a `tools/call` result that decide its outcome.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ResultPart<'a> {
    /// `isError: true`: the tool ran and failed (an execution error).
    #[serde(rename = "isError")]
    pub is_error: LTrue,
    /// `content`, as written; its texts are read only for a failed call.
    #[serde(borrow, deserialize_with = "present_raw")]
    pub content: Option<&'a RawValue>,
    /// MRTR markers: the server asks for more input instead of executing.
    pub input_required: NotNull,
    pub status: InputRequiredTag,
    /// MCP 2026-07-28 spells the marker `resultType: "input_required"`.
    #[serde(rename = "resultType")]
    pub result_type: InputRequiredTag,
    #[serde(rename = "requestState")]
    pub request_state: NotNull,
}

/// Whether a member is the string `"input_required"` (kept as one flag, not the text:
/// the result summary stays small).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(crate) struct InputRequiredTag(pub bool);

impl<'de> Deserialize<'de> for InputRequiredTag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = LStr::deserialize(d)?;
        Ok(InputRequiredTag(s.get() == Some("input_required")))
    }
}

impl ResultPart<'_> {
    /// True for a multi-round-trip "input required" round (not an execution). A result
    /// flagged `isError` is an execution that failed, whatever else it carries.
    pub fn is_input_required(&self) -> bool {
        !self.is_error.0
            && (self.input_required.0
                || self.status.0
                || self.result_type.0
                || self.request_state.0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::records::content_text;
    use super::*;

    #[test]
    fn a_tools_call_line_is_summarised_in_one_pass() {
        let line = r#"{"t":"2026-01-01T00:00:00.000Z","dir":"in","raw":{"jsonrpc":"2.0","id":"7","method":"tools/call","params":{"name":"echo","arguments":{"x":[1,2,{"y":null}]},"_meta":{"progressToken":1}}},"zz":{"a":1}}"#;
        let mut h = Head::default();
        read_head(line, &mut h).unwrap();
        assert_eq!(h.dir.get(), Some("in"));
        assert_eq!(h.raw, RawKind::Object);
        let rpc = h.rpc;
        assert_eq!(rpc.method.get(), Some("tools/call"));
        assert_eq!(rpc.live_id().unwrap().get(), r#""7""#);
        assert_eq!(rpc.params.0.unwrap().name.get(), Some("echo"));
        assert!(rpc.result.is_none());
        // params of other methods are skipped; a repeated member keeps the last value.
        let line = r#"{"dir":"out","raw":{"method":"notifications/progress","params":{"name":"x"},"id":1,"id":"2"}}"#;
        let mut h = Head::default();
        read_head(line, &mut h).unwrap();
        let rpc = h.rpc;
        assert!(rpc.params.0.is_none());
        assert_eq!(rpc.id.unwrap().get(), r#""2""#);
        for (line, kind) in [
            (r#"{"raw":[1]}"#, RawKind::Other),
            (r#"{"raw":null}"#, RawKind::Other),
            ("{}", RawKind::Absent),
        ] {
            let mut h = Head::default();
            read_head(line, &mut h).unwrap();
            assert_eq!(h.raw, kind, "{line}");
        }
        assert!(read_head("[1]", &mut Head::default()).is_err());
    }

    #[test]
    fn results_say_error_and_input_required() {
        let r = |s: &str| -> ResultPart<'static> {
            let line: &'static str = format!(r#"{{"raw":{s}}}"#).leak();
            let mut h = Head::default();
            read_head(line, &mut h).unwrap();
            h.rpc.result.unwrap()
        };
        let e =
            r(r#"{"id":1,"result":{"content":[{"type":"text","text":"boom"}],"isError":true}}"#);
        assert!(e.is_error.0);
        assert_eq!(
            content_text(e.content.unwrap(), " ", 100).as_deref(),
            Some("boom")
        );
        assert!(
            r(r#"{"id":1,"result":{"resultType":"input_required","requestState":"x"}}"#)
                .is_input_required()
        );
        assert!(r(r#"{"id":1,"result":{"input_required":{}}}"#).is_input_required());
        assert!(r(r#"{"id":1,"result":{"status":"input_required"}}"#).is_input_required());
        assert!(!r(r#"{"id":1,"result":{"requestState":"x","isError":true}}"#).is_input_required());
        assert!(!r(r#"{"id":1,"result":null}"#).is_input_required());
    }

    /// One decoder family (issue 29): on every line the reference parser
    /// (`reel_trace::line::parse_line`) accepts, stats' one-pass head reads the same
    /// class, `t`, `session`, `kind` and shape of `raw`. Lines are drawn from a grammar
    /// of the members both read — right and wrong JSON types, unknown values, escaped
    /// names, members in any order, others between them — so the lenient reader is held
    /// to the reference wherever the reference has an answer. (Where the reference
    /// refuses a line, a wrong type or a repeated member, stats reads on leniently by
    /// design: it counts what `reel check` reports.)
    mod against_the_reference {
        use super::*;
        use proptest::prelude::*;
        use reel_trace::line::{Line, classify, parse_line};
        use reel_trace::testing::trace_line as line;

        /// The grammar reaches every class the reference gives, with lines it accepts:
        /// the property above is not vacuous.
        #[test]
        fn the_grammar_reaches_every_class() {
            use proptest::strategy::ValueTree;
            let mut runner = proptest::test_runner::TestRunner::deterministic();
            let mut seen = std::collections::BTreeSet::new();
            let mut accepted = 0;
            for _ in 0..2000 {
                let l = line().new_tree(&mut runner).unwrap().current();
                if let Ok(reference) = parse_line(l.as_bytes()) {
                    accepted += 1;
                    seen.insert(format!("{:?}", reference.class()));
                }
            }
            assert!(accepted >= 200, "only {accepted} of 2000 lines accepted");
            assert_eq!(seen.len(), 6, "classes reached: {seen:?}");
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]
            #[test]
            fn the_head_reads_what_the_reference_reads(line in line()) {
                let Ok(reference) = parse_line(line.as_bytes()) else {
                    return Ok(());
                };
                let mut head = Head::default();
                prop_assert!(read_head(&line, &mut head).is_ok(), "stats refused {line}");
                prop_assert_eq!(
                    classify(head.ty.get(), head.dir.get()),
                    reference.class(),
                    "class of {}", line
                );
                if let Line::Message(v) | Line::Event(v) | Line::Other(v) = &reference {
                    prop_assert_eq!(head.t.get(), v.t.as_deref(), "t of {}", line);
                    prop_assert_eq!(head.session.get(), v.session.as_deref(), "session of {}", line);
                    prop_assert_eq!(head.kind.get(), v.kind.as_deref(), "kind of {}", line);
                    let shape = match v.raw.map(|r| r.get().as_bytes()[0]) {
                        None => RawKind::Absent,
                        Some(b'{') => RawKind::Object,
                        Some(_) => RawKind::Other,
                    };
                    prop_assert_eq!(head.raw, shape, "raw of {}", line);
                }
            }
        }
    }
}
