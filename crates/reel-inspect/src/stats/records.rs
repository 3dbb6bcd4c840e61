//! The rare lines `reel stats` reads a second time, each into its own lenient record
//! (`meta`, `turn`, `end`, `llm.error` events), and the wording of error messages taken
//! from payloads (JSON-RPC errors, failed results' content).
//!
//! Unlike message lines, these are few, so they are parsed whole; still, every member
//! is lenient (a wrong JSON type reads as absent) and strings borrow from the line.

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::lenient::{LNum, LStr, LTrue, Obj, Seq, is_null, present_raw};

/// The texts of a content array (`[{type:"text", text}]`), for error messages.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct TextPart<'a> {
    #[serde(borrow)]
    pub text: LStr<'a>,
}

/// One element of a content array: a bare string or a part with `text`.
#[derive(Debug, Default)]
pub(crate) struct ContentItem<'a>(pub Option<std::borrow::Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for ContentItem<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = ContentItem<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(ContentItem(Some(v.into())))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(ContentItem(Some(v.to_owned().into())))
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<Self::Value, A::Error> {
                let part = TextPart::deserialize(MapAccessDeserializer::new(m))?;
                Ok(ContentItem(part.text.0))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(ContentItem(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(ContentItem(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(ContentItem(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(ContentItem(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(ContentItem(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(ContentItem(None))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// The texts of a content value, joined with `sep`: a string is itself; an array
/// contributes its string elements and the `text` of its parts; empty texts are dropped.
/// `None` when the value holds no text (or is not JSON). At most `limit` bytes (and one
/// more character) are copied, so that a huge failed result is never copied whole.
pub(crate) fn content_text(raw: &RawValue, sep: &str, limit: usize) -> Option<String> {
    let text = raw.get().trim_start();
    if text.starts_with('"') {
        let s = serde_json::from_str::<std::borrow::Cow<'_, str>>(text).ok()?;
        return (!s.is_empty()).then(|| capped(&[&s], sep, limit));
    }
    let items: Seq<ContentItem<'_>> = serde_json::from_str(text).ok()?;
    let parts: Vec<&str> = items
        .items()
        .iter()
        .filter_map(|i| i.0.as_deref())
        .filter(|s| !s.is_empty())
        .collect();
    (!parts.is_empty()).then(|| capped(&parts, sep, limit))
}

/// `parts` joined with `sep`, stopping one character past `limit` bytes.
fn capped(parts: &[&str], sep: &str, limit: usize) -> String {
    let mut out = String::new();
    for (i, part) in parts.iter().enumerate() {
        for piece in [if i > 0 { sep } else { "" }, part] {
            if out.len() + piece.len() <= limit {
                out.push_str(piece);
                continue;
            }
            let mut end = limit.saturating_sub(out.len()) + 1;
            while end < piece.len() && !piece.is_char_boundary(end) {
                end += 1;
            }
            out.push_str(&piece[..end.min(piece.len())]);
            return out;
        }
    }
    out
}

/// A `meta` line.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct MetaRec<'a> {
    #[serde(rename = "startedAt", borrow)]
    pub started_at: LStr<'a>,
    #[serde(borrow)]
    pub label: LStr<'a>,
    #[serde(borrow)]
    pub command: Seq<LStr<'a>>,
    #[serde(borrow)]
    pub kind: LStr<'a>,
    #[serde(borrow)]
    pub source: LStr<'a>,
    #[serde(borrow)]
    pub producer: ProducerPart<'a>,
    #[serde(rename = "mcpTapVersion", borrow)]
    pub mcp_tap_version: LStr<'a>,
}

impl MetaRec<'_> {
    /// Producer label, in the reference consumer's order: `source`, else `producer`
    /// (a string, or `name@version`), else `mcp-tape@<mcpTapVersion>`.
    pub fn producer_label(&self) -> Option<String> {
        if let Some(s) = self.source.non_empty() {
            return Some(s.to_owned());
        }
        match &self.producer {
            ProducerPart::Str(s) => return s.non_empty().map(str::to_owned),
            ProducerPart::Obj(p) => {
                if let Some(name) = p.name.non_empty() {
                    return Some(match p.version.non_empty() {
                        Some(v) => format!("{name}@{v}"),
                        None => name.to_owned(),
                    });
                }
            }
            ProducerPart::Absent => {}
        }
        self.mcp_tap_version
            .non_empty()
            .map(|v| format!("mcp-tape@{v}"))
    }

    /// `command` when it is an array: its strings, `None` when none are left.
    pub fn command(&self) -> Option<Vec<String>> {
        let args: Vec<String> = self
            .command
            .0
            .as_ref()?
            .iter()
            .filter_map(|s| s.get().map(str::to_owned))
            .collect();
        (!args.is_empty()).then_some(args)
    }
}

/// `meta.producer`: a string or `{name, version}`.
#[derive(Debug, Default)]
pub(crate) enum ProducerPart<'a> {
    #[default]
    Absent,
    Str(LStr<'a>),
    Obj(ProducerObj<'a>),
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ProducerObj<'a> {
    #[serde(borrow)]
    pub name: LStr<'a>,
    #[serde(borrow)]
    pub version: LStr<'a>,
}

impl<'de: 'a, 'a> Deserialize<'de> for ProducerPart<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = ProducerPart<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(ProducerPart::Str(LStr(Some(v.into()))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(ProducerPart::Str(LStr(Some(v.to_owned().into()))))
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<Self::Value, A::Error> {
                ProducerObj::deserialize(MapAccessDeserializer::new(m)).map(ProducerPart::Obj)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(ProducerPart::Absent)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(ProducerPart::Absent)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(ProducerPart::Absent)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(ProducerPart::Absent)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(ProducerPart::Absent)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(ProducerPart::Absent)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// An `end` line.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct EndRec<'a> {
    #[serde(borrow)]
    pub t: LStr<'a>,
    #[serde(borrow)]
    pub reason: LStr<'a>,
    #[serde(rename = "exitCode")]
    pub exit_code: LNum,
    #[serde(rename = "durationMs")]
    pub duration_ms: LNum,
}

/// A `turn` record.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct TurnRec<'a> {
    #[serde(borrow)]
    pub t: LStr<'a>,
    #[serde(borrow)]
    pub role: LStr<'a>,
    #[serde(borrow)]
    pub model: LStr<'a>,
    pub echoed: LTrue,
    pub usage: Obj<UsageRec>,
    pub timing: Obj<TimingRec>,
    #[serde(borrow)]
    pub blocks: Seq<Obj<BlockRec<'a>>>,
}

/// `turn.usage`, each member a finite number or absent.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct UsageRec {
    pub input_tokens: LNum,
    pub output_tokens: LNum,
    pub cache_read_input_tokens: LNum,
    pub cache_creation_input_tokens: LNum,
    pub thinking_tokens: LNum,
}

/// `turn.timing`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct TimingRec {
    pub ttft_ms: LNum,
    pub duration_ms: LNum,
}

/// A content block of a turn, as far as stats reads it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct BlockRec<'a> {
    #[serde(rename = "type", borrow)]
    pub ty: LStr<'a>,
    /// `thinking` text; only its length is used.
    #[serde(borrow)]
    pub thinking: LStr<'a>,
    #[serde(borrow)]
    pub id: LStr<'a>,
    #[serde(borrow)]
    pub name: LStr<'a>,
    #[serde(borrow)]
    pub tool_use_id: LStr<'a>,
    pub is_error: LTrue,
    #[serde(borrow, deserialize_with = "present_raw")]
    pub content: Option<&'a RawValue>,
}

/// An `llm.error` event line: `raw` (or `data`, which mcp-tape also reads).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct LlmErrorRec<'a> {
    #[serde(borrow)]
    pub raw: Obj<LlmErrorRaw<'a>>,
    #[serde(borrow)]
    pub data: Obj<LlmErrorRaw<'a>>,
}

/// The payload of an `llm.error` event.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct LlmErrorRaw<'a> {
    #[serde(borrow)]
    pub endpoint: LStr<'a>,
    #[serde(borrow)]
    pub url: LStr<'a>,
    #[serde(borrow, deserialize_with = "present_raw")]
    pub error: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "present_raw")]
    pub status: Option<&'a RawValue>,
}

/// How mcp-tape words a JSON-RPC (or `llm.error`) error: a string is itself; an object
/// with a `message` is `message (code C)`; any other object is its JSON text; anything
/// else its text.
pub(crate) fn error_message(raw: &RawValue) -> String {
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct ErrObj<'a> {
        #[serde(borrow)]
        message: LStr<'a>,
        #[serde(borrow, deserialize_with = "present_raw")]
        code: Option<&'a RawValue>,
    }
    let text = raw.get().trim();
    match text.as_bytes().first() {
        Some(b'"') => serde_json::from_str::<String>(text).unwrap_or_else(|_| text.to_owned()),
        Some(b'{') => match serde_json::from_str::<ErrObj<'_>>(text) {
            Ok(e) => match e.message.non_empty() {
                Some(m) => match e.code.filter(|c| !is_null(c)) {
                    Some(code) => format!("{m} (code {})", scalar_text(code)),
                    None => m.to_owned(),
                },
                None => text.to_owned(),
            },
            Err(_) => text.to_owned(),
        },
        _ => text.to_owned(),
    }
}

/// A scalar as JavaScript's `String(x)` would show it (strings without quotes).
pub(crate) fn scalar_text(raw: &RawValue) -> String {
    let text = raw.get().trim();
    if text.starts_with('"') {
        serde_json::from_str::<String>(text).unwrap_or_else(|_| text.to_owned())
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_follow_the_reference_wording() {
        let m = |s: &str| error_message(&serde_json::from_str::<Box<RawValue>>(s).unwrap());
        assert_eq!(
            m(r#"{"code":-32601,"message":"nope"}"#),
            "nope (code -32601)"
        );
        assert_eq!(m(r#"{"message":"nope"}"#), "nope");
        assert_eq!(m(r#""plain""#), "plain");
        assert_eq!(m(r#"{"code":1}"#), r#"{"code":1}"#);
        assert_eq!(m("42"), "42");
    }

    #[test]
    fn content_text_joins_strings_and_parts() {
        let c = |s: &str| {
            content_text(
                &serde_json::from_str::<Box<RawValue>>(s).unwrap(),
                "\n",
                100,
            )
        };
        assert_eq!(
            c(r#"["a",{"type":"text","text":"b"},{"type":"image"},""]"#).as_deref(),
            Some("a\nb")
        );
        assert_eq!(c(r#""x""#).as_deref(), Some("x"));
        assert_eq!(c(r#"[]"#), None);
        assert_eq!(c(r#"{"a":1}"#), None);
        let long = |s: &str, limit| {
            content_text(
                &serde_json::from_str::<Box<RawValue>>(s).unwrap(),
                "+",
                limit,
            )
        };
        assert_eq!(long(r#"["abc","déf"]"#, 2).as_deref(), Some("abc"));
        assert_eq!(long(r#"["abc","déf"]"#, 5).as_deref(), Some("abc+dé"));
        assert_eq!(long(r#""abcdef""#, 3).as_deref(), Some("abcd"));
    }
}
