//! The owned, typed records of the rarer lines (`meta`, `turn`, `end`), each with an
//! `extra` map so that a rewrite keeps every member this crate does not know.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::block::Block;

/// `producer` of a meta line: `{name, version, configHash?}`, tolerated as a string too.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Producer {
    /// Producer name.
    pub name: String,
    /// Producer version.
    pub version: String,
    /// Hash of the producer's configuration.
    #[serde(
        rename = "configHash",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub config_hash: Option<String>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `meta` line. Every member is optional here so that a reader tolerates incomplete
/// files; `reel check` says which required ones are missing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    /// Format version, `1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v: Option<Value>,
    /// Literal `"meta"`.
    #[serde(rename = "type", default = "meta_tag")]
    pub ty: String,
    /// Start of the session, ISO-8601 UTC with milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// Short human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The argv that launched the server (redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Value>,
    /// Version of mcp-tape, when the producer sets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_tap_version: Option<String>,
    /// `"mcp"` (default), `"llm"`, `"cc-session"`, or anything else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `name[@version]` of the producer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Structured producer attribution (an object, or a string in some files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub producer: Option<Value>,
    /// reel: version of reel's extension vocabulary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reel: Option<u64>,
    /// reel: `"stdio"` or `"http"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// reel: the address the HTTP recorder listened on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listen: Option<String>,
    /// reel: the upstream URL of an HTTP recording.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
    /// reel: the redaction rule set applied to this trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redaction: Option<Value>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn meta_tag() -> String {
    "meta".to_owned()
}

impl Meta {
    /// `meta.kind`, `"mcp"` when absent (spec: consumers MUST assume `"mcp"`).
    pub fn kind_or_default(&self) -> &str {
        self.kind.as_deref().unwrap_or("mcp")
    }

    /// Producer label: `source`, else `producer` (string or `name@version`), else
    /// `mcp-tape@<mcpTapVersion>`, else `None` (the reference consumer's order).
    pub fn producer_label(&self) -> Option<String> {
        if let Some(s) = &self.source {
            return Some(s.clone());
        }
        match &self.producer {
            Some(Value::String(s)) => return Some(s.clone()),
            Some(Value::Object(o)) => {
                if let Some(name) = o.get("name").and_then(Value::as_str) {
                    return Some(match o.get("version").and_then(Value::as_str) {
                        Some(v) => format!("{name}@{v}"),
                        None => name.to_owned(),
                    });
                }
            }
            _ => {}
        }
        self.mcp_tap_version
            .as_ref()
            .map(|v| format!("mcp-tape@{v}"))
    }

    /// The command as strings, when it is an array of strings.
    pub fn command_args(&self) -> Option<Vec<&str>> {
        self.command
            .as_ref()?
            .as_array()?
            .iter()
            .map(Value::as_str)
            .collect()
    }
}

/// Token usage of a turn, normalised to the usage invariant.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens, excluding cache reads and writes.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient_u64"
    )]
    pub input_tokens: Option<u64>,
    /// Output tokens (thinking included).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient_u64"
    )]
    pub output_tokens: Option<u64>,
    /// Tokens read from the prompt cache.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient_u64"
    )]
    pub cache_read_input_tokens: Option<u64>,
    /// Tokens written to the prompt cache.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient_u64"
    )]
    pub cache_creation_input_tokens: Option<u64>,
    /// Thinking tokens, a subset of `output_tokens`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient_u64"
    )]
    pub thinking_tokens: Option<u64>,
    /// Provider members this crate does not know (`service_tier`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn lenient_u64<'de, D>(d: D) -> Result<Option<u64>, D::Error>
where
    D: Deserializer<'de>,
{
    let v = Value::deserialize(d)?;
    Ok(match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                .map(|f| f as u64)
        }),
        _ => None,
    })
}

/// Timing of a turn, in milliseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// Time to first token.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "ser_millis"
    )]
    pub ttft_ms: Option<f64>,
    /// Whole duration.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "ser_millis"
    )]
    pub duration_ms: Option<f64>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Writes a millisecond count as an integer when it is one (`4200`, not `4200.0`), as
/// the format's producers do.
fn ser_millis<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match *v {
        Some(f) if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 => {
            s.serialize_i64(f as i64)
        }
        Some(f) => s.serialize_f64(f),
        None => s.serialize_none(),
    }
}

/// A `turn` record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// Timestamp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t: Option<String>,
    /// Literal `"turn"`.
    #[serde(rename = "type", default = "turn_tag")]
    pub ty: String,
    /// `"user"`, `"assistant"` or `"system"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Content blocks, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<Vec<Block>>,
    /// Provider model id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Token usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Timing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<Timing>,
    /// Producer or origin tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// LLM addendum: provider path of the exchange.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// LLM addendum: assembled from a streamed response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// LLM addendum: re-sent context from a request body, not a generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub echoed: Option<bool>,
    /// LLM addendum: the stream was severed early.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    /// Why generation stopped (`"truncated"` for severed streams).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Correlation id (format-extensions §5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corr_id: Option<String>,
    /// AI-decision provenance (format-extensions §4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ai: Option<Value>,
    /// Attestation, passed through untouched (format-extensions §3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attest: Option<Value>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn turn_tag() -> String {
    "turn".to_owned()
}

impl Turn {
    /// reel's `http.req`: the exchange of an llm trace the turn came from.
    pub fn http_req(&self) -> Option<u64> {
        self.extra.get("http")?.get("req")?.as_u64()
    }

    /// A turn of `role` with `blocks`, nothing else set.
    pub fn new(role: &str, blocks: Vec<Block>) -> Turn {
        Turn {
            role: Some(role.to_owned()),
            blocks: Some(blocks),
            ..Turn::default()
        }
    }

    /// True for `echoed: true` turns, which describe no generation.
    pub fn is_echoed(&self) -> bool {
        self.echoed == Some(true)
    }

    /// The blocks, empty when absent.
    pub fn blocks(&self) -> &[Block] {
        self.blocks.as_deref().unwrap_or_default()
    }
}

/// reel: message and line counts written on `end`, so `reel ls` reads only head and tail.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Message lines client → server.
    #[serde(rename = "in", default)]
    pub inbound: u64,
    /// Message lines server → client.
    #[serde(rename = "out", default)]
    pub outbound: u64,
    /// Extension lines.
    #[serde(default)]
    pub events: u64,
    /// Turn records.
    #[serde(default)]
    pub turns: u64,
    /// JSON-RPC error responses.
    #[serde(default)]
    pub errors: u64,
}

/// The `end` line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct End {
    /// When the producer closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t: Option<String>,
    /// Literal `"end"`.
    #[serde(rename = "type", default = "end_tag")]
    pub ty: String,
    /// Exit code of the wrapped process, for process-wrapping producers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// Why the stream ended, for producers that wrap no process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Milliseconds since `meta.startedAt`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "ser_millis"
    )]
    pub duration_ms: Option<f64>,
    /// reel: line counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<Counts>,
    /// `source`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn end_tag() -> String {
    "end".to_owned()
}

impl Default for Meta {
    /// An empty line of this kind, with its `type` tag set (an empty tag would make it
    /// another kind of line).
    fn default() -> Self {
        serde_json::from_value(serde_json::json!({ "type": "meta" }))
            .unwrap_or_else(|_| unreachable!("an object with only a type tag always parses"))
    }
}

impl Default for Turn {
    /// An empty line of this kind, with its `type` tag set (an empty tag would make it
    /// another kind of line).
    fn default() -> Self {
        Turn {
            t: None,
            ty: turn_tag(),
            role: None,
            blocks: None,
            model: None,
            usage: None,
            timing: None,
            source: None,
            endpoint: None,
            stream: None,
            echoed: None,
            truncated: None,
            stop_reason: None,
            corr_id: None,
            ai: None,
            attest: None,
            extra: Map::new(),
        }
    }
}

impl Default for End {
    /// An empty line of this kind, with its `type` tag set (an empty tag would make it
    /// another kind of line).
    fn default() -> Self {
        serde_json::from_value(serde_json::json!({ "type": "end" }))
            .unwrap_or_else(|_| unreachable!("an object with only a type tag always parses"))
    }
}
