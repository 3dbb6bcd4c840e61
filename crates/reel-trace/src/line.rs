//! The line kinds of the mcp-replay trace format v1 and reel's additive vocabulary.
//!
//! Two representations live here, for two kinds of work:
//! - borrowed *views* ([`MessageView`]) for the hot path: message and extension lines are
//!   parsed with `raw` kept as the original bytes ([`RawValue`]), never re-serialised;
//! - owned, typed records ([`Meta`], [`Turn`], [`End`]) for the rarer lines, each with an
//!   `extra` map so that a rewrite keeps every member this crate does not know.
//!
//! Classification follows the reference consumer: `type` decides meta/turn/end, then `dir`
//! decides message (`in`/`out`) or extension line (`event`/`command`/`telemetry`); anything
//! else is [`Line::Other`], kept and counted, never fatal (spec §"Tolerance rules").

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// What redaction leaves where a secret was, in any string of a trace.
pub const REDACTED: &str = "[REDACTED]";

/// reel's version, as written to `meta.source` (`reel@<version>`).
pub const REEL_VERSION: &str = env!("CARGO_PKG_VERSION");
/// The format version this crate reads and writes (`meta.v`).
pub const FORMAT_VERSION: u64 = 1;
/// The version of reel's extension vocabulary, written as `meta.reel`.
pub const REEL_VOCABULARY_VERSION: u64 = 1;

/// `dir` of a line: tape direction, not transport direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    /// Client to server.
    In,
    /// Server to client.
    Out,
    /// A one-way producer event (format-extensions §2).
    Event,
    /// A command issued at this layer (format-extensions §2).
    Command,
    /// A passive telemetry sample (format-extensions §2).
    Telemetry,
}

impl Dir {
    /// Parses a `dir` value; `None` for values the format does not define.
    pub fn parse(s: &str) -> Option<Dir> {
        Some(match s {
            "in" => Dir::In,
            "out" => Dir::Out,
            "event" => Dir::Event,
            "command" => Dir::Command,
            "telemetry" => Dir::Telemetry,
            _ => return None,
        })
    }

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Dir::In => "in",
            Dir::Out => "out",
            Dir::Event => "event",
            Dir::Command => "command",
            Dir::Telemetry => "telemetry",
        }
    }

    /// True for the two JSON-RPC directions.
    pub fn is_message(self) -> bool {
        matches!(self, Dir::In | Dir::Out)
    }
}

/// What kind of line a record is, decided from `type` and `dir` alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LineClass {
    /// `type: "meta"`.
    Meta,
    /// `dir: "in" | "out"`.
    Message,
    /// `dir: "event" | "command" | "telemetry"`.
    Event,
    /// `type: "turn"`.
    Turn,
    /// `type: "end"`.
    End,
    /// Anything else: an unknown `type` or `dir`, or neither.
    Other,
}

impl LineClass {
    /// Every class, in the order above.
    pub const ALL: [LineClass; 6] = [
        LineClass::Meta,
        LineClass::Message,
        LineClass::Event,
        LineClass::Turn,
        LineClass::End,
        LineClass::Other,
    ];

    /// Its name, as it serialises.
    pub fn name(self) -> &'static str {
        match self {
            LineClass::Meta => "meta",
            LineClass::Message => "message",
            LineClass::Event => "event",
            LineClass::Turn => "turn",
            LineClass::End => "end",
            LineClass::Other => "other",
        }
    }
}

/// A parsed line.
#[derive(Debug)]
pub enum Line<'a> {
    /// The first line of a session.
    Meta(Box<Meta>),
    /// A JSON-RPC message line (`dir` in/out).
    Message(MessageView<'a>),
    /// An extension line (`dir` event/command/telemetry).
    Event(MessageView<'a>),
    /// An LLM turn record.
    Turn(Box<Turn>),
    /// The last line.
    End(Box<End>),
    /// A line of a `type` or `dir` this crate does not know; kept as a view.
    Other(MessageView<'a>),
}

impl Line<'_> {
    /// The line's class.
    pub fn class(&self) -> LineClass {
        match self {
            Line::Meta(_) => LineClass::Meta,
            Line::Message(_) => LineClass::Message,
            Line::Event(_) => LineClass::Event,
            Line::Turn(_) => LineClass::Turn,
            Line::End(_) => LineClass::End,
            Line::Other(_) => LineClass::Other,
        }
    }

    /// The line's `t`, when it has one (`meta` has `startedAt` instead).
    pub fn t(&self) -> Option<&str> {
        match self {
            Line::Meta(m) => m.started_at.as_deref(),
            Line::Message(v) | Line::Event(v) | Line::Other(v) => v.t.as_deref(),
            Line::Turn(t) => t.t.as_deref(),
            Line::End(e) => e.t.as_deref(),
        }
    }
}

/// Why a line could not be parsed at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// The bytes are not UTF-8.
    #[error("not valid UTF-8 (first bad byte at column {column})")]
    InvalidUtf8 {
        /// 1-based byte column of the first invalid byte.
        column: usize,
    },
    /// The text is not JSON.
    #[error("not JSON: {message}")]
    NotJson {
        /// serde_json's description, with its column.
        message: String,
    },
    /// Valid JSON, but not an object.
    #[error("a JSON {found}, not an object")]
    NotObject {
        /// What was found: "array", "string", …
        found: &'static str,
    },
    /// An object whose known members have the wrong type (e.g. `role: 3`).
    #[error("{message}")]
    BadMember {
        /// serde_json's description.
        message: String,
    },
}

/// Parses one line (without its line break) into a [`Line`].
///
/// `raw` members of message and extension lines borrow the input bytes.
pub fn parse_line(bytes: &[u8]) -> Result<Line<'_>, LineError> {
    let text = crate::utf8::validate(bytes).map_err(|e| LineError::InvalidUtf8 {
        column: e.valid_up_to() + 1,
    })?;
    parse_line_str(text)
}

/// [`parse_line`] for text already known to be UTF-8.
pub fn parse_line_str(text: &str) -> Result<Line<'_>, LineError> {
    if !text.trim_start().starts_with('{') {
        return Err(not_an_object(text));
    }
    // One pass for the common lines (messages, events): the view carries `type` too, and
    // only the rarer typed lines (meta, turn, end) are parsed a second time.
    let view: MessageView<'_> = serde_json::from_str(text).map_err(|e| {
        use serde_json::error::Category;
        match e.classify() {
            Category::Data => LineError::BadMember {
                message: e.to_string(),
            },
            _ => LineError::NotJson {
                message: e.to_string(),
            },
        }
    })?;
    let bad = |e: serde_json::Error| LineError::BadMember {
        message: e.to_string(),
    };
    match view.ty.as_deref() {
        Some("meta") => Ok(Line::Meta(Box::new(
            serde_json::from_str(text).map_err(bad)?,
        ))),
        Some("turn") => Ok(Line::Turn(Box::new(
            serde_json::from_str(text).map_err(bad)?,
        ))),
        Some("end") => Ok(Line::End(Box::new(
            serde_json::from_str(text).map_err(bad)?,
        ))),
        Some(_) => Ok(Line::Other(view)),
        None => Ok(match view.dir() {
            Some(d) if d.is_message() => Line::Message(view),
            Some(_) => Line::Event(view),
            None => Line::Other(view),
        }),
    }
}

/// Decides the class of a line from its `type` and `dir` without building it.
pub fn classify(ty: Option<&str>, dir: Option<&str>) -> LineClass {
    match ty {
        Some("meta") => LineClass::Meta,
        Some("turn") => LineClass::Turn,
        Some("end") => LineClass::End,
        Some(_) => LineClass::Other,
        None => match dir.and_then(Dir::parse) {
            Some(d) if d.is_message() => LineClass::Message,
            Some(_) => LineClass::Event,
            None => LineClass::Other,
        },
    }
}

/// A line that does not start with `{`: say what it is, if it is JSON at all.
fn not_an_object(text: &str) -> LineError {
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
        return LineError::NotJson {
            message: e.to_string(),
        };
    }
    let found = match text.trim_start().as_bytes().first() {
        Some(b'[') => "array",
        Some(b'"') => "string",
        Some(b't' | b'f') => "boolean",
        Some(b'n') => "null",
        _ => "number",
    };
    LineError::NotObject { found }
}

/// A message, extension or unknown line, borrowed from the input.
///
/// Only the members reel reads are named; all others stay in the line's bytes, which a
/// rewrite copies verbatim.
#[derive(Debug, Default, Deserialize)]
pub struct MessageView<'a> {
    /// `type`, present on meta/turn/end lines and on line types this crate does not know.
    #[serde(rename = "type", borrow, default, deserialize_with = "lenient_str")]
    pub ty: Option<Cow<'a, str>>,
    /// `t`.
    #[serde(borrow, default, deserialize_with = "lenient_str")]
    pub t: Option<Cow<'a, str>>,
    /// `dir`, as written.
    #[serde(borrow, default, deserialize_with = "lenient_str")]
    pub dir: Option<Cow<'a, str>>,
    /// `raw`: the payload, exactly as in the file. `Some` even when it is `null`.
    #[serde(borrow, default, deserialize_with = "present_raw")]
    pub raw: Option<&'a RawValue>,
    /// `kind` (format-extensions §2; `reel.*` kinds are reel's).
    #[serde(borrow, default, deserialize_with = "lenient_str")]
    pub kind: Option<Cow<'a, str>>,
    /// `source` (format-extensions §1).
    #[serde(borrow, default, deserialize_with = "lenient_str")]
    pub source: Option<Cow<'a, str>>,
    /// reel: the MCP session this message belongs to.
    #[serde(borrow, default, deserialize_with = "lenient_str")]
    pub session: Option<Cow<'a, str>>,
    /// reel: HTTP facts (`{req, status, headers, sse}`).
    #[serde(borrow, default, deserialize_with = "present_raw")]
    pub http: Option<&'a RawValue>,
    /// reel: `"crlf"` when the stdio line ended in CRLF, `"none"` when it had no line
    /// break (see [`Eol`]).
    #[serde(borrow, default, deserialize_with = "lenient_str")]
    pub eol: Option<Cow<'a, str>>,
    /// reel: `"tape"` or `"live"` on lines written by `play --record` and `verify`.
    #[serde(borrow, default, deserialize_with = "lenient_str")]
    pub origin: Option<Cow<'a, str>>,
    /// reel: `raw` had line breaks outside strings that were removed.
    #[serde(default, deserialize_with = "lenient_bool")]
    pub reformatted: Option<bool>,
    /// reel: `reel.nonjson` / `reel.stderr` text (UTF-8 payloads).
    #[serde(borrow, default, deserialize_with = "lenient_str")]
    pub text: Option<Cow<'a, str>>,
    /// reel: `reel.nonjson` / `reel.stderr` bytes, base64 (non-UTF-8 payloads).
    #[serde(borrow, default, deserialize_with = "lenient_str")]
    pub bytes: Option<Cow<'a, str>>,
    /// reel: which pipe a `reel.nonjson` line came from (`"in"` or `"out"`).
    #[serde(borrow, default, deserialize_with = "lenient_str")]
    pub side: Option<Cow<'a, str>>,
    /// `corr_id` (format-extensions §5).
    #[serde(borrow, default, deserialize_with = "lenient_str")]
    pub corr_id: Option<Cow<'a, str>>,
}

impl MessageView<'_> {
    /// The members the view reads, as named in a line. A line that repeats one of them
    /// is refused (a repeated member whose value would depend on which copy a reader
    /// takes); any other member may repeat. A fast reader that takes lines the view
    /// would refuse must refuse a repeat of these too.
    pub const MEMBERS: [&'static str; 15] = [
        "type",
        "t",
        "dir",
        "raw",
        "kind",
        "source",
        "session",
        "http",
        "eol",
        "origin",
        "reformatted",
        "text",
        "bytes",
        "side",
        "corr_id",
    ];

    /// Where `name` stands in [`MessageView::MEMBERS`]: a bit a fast reader sets to see
    /// a repeat, found by one `match` rather than a search of the list on every member
    /// of every line.
    pub fn member_index(name: &str) -> Option<usize> {
        Some(match name {
            "type" => 0,
            "t" => 1,
            "dir" => 2,
            "raw" => 3,
            "kind" => 4,
            "source" => 5,
            "session" => 6,
            "http" => 7,
            "eol" => 8,
            "origin" => 9,
            "reformatted" => 10,
            "text" => 11,
            "bytes" => 12,
            "side" => 13,
            "corr_id" => 14,
            _ => return None,
        })
    }
}

impl MessageView<'_> {
    /// The parsed `dir`, `None` when absent or unknown.
    pub fn dir(&self) -> Option<Dir> {
        self.dir.as_deref().and_then(Dir::parse)
    }

    /// The `raw` text, when present.
    pub fn raw_str(&self) -> Option<&str> {
        self.raw.map(RawValue::get)
    }

    /// `http.req`: which HTTP request of the recording carried the message (the
    /// pairing guide of [`crate::jsonrpc::HttpCarried`]); 0 when none is recorded or it
    /// is not a number.
    pub fn http_req(&self) -> u64 {
        #[derive(Deserialize)]
        struct Http {
            #[serde(default)]
            req: Option<u64>,
        }
        self.http
            .and_then(|h| serde_json::from_str::<Http>(h.get()).ok())
            .and_then(|h| h.req)
            .unwrap_or(0)
    }
}

/// Deserialises a member that must be present to be `Some`, `null` included.
fn present_raw<'de, D>(d: D) -> Result<Option<&'de RawValue>, D::Error>
where
    D: Deserializer<'de>,
{
    <&RawValue>::deserialize(d).map(Some)
}

/// A string member; any other JSON type reads as absent rather than failing the line
/// (a reader is tolerant; `reel check` reports the wrong type itself).
fn lenient_str<'de, D>(d: D) -> Result<Option<Cow<'de, str>>, D::Error>
where
    D: Deserializer<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum MaybeStr<'a> {
        Str(#[serde(borrow)] Cow<'a, str>),
        Other(serde::de::IgnoredAny),
    }
    Ok(match MaybeStr::deserialize(d)? {
        MaybeStr::Str(s) => Some(s),
        MaybeStr::Other(_) => None,
    })
}

/// A boolean member; any other JSON type reads as absent.
fn lenient_bool<'de, D>(d: D) -> Result<Option<bool>, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(match serde_json::Value::deserialize(d)? {
        Value::Bool(b) => Some(b),
        _ => None,
    })
}

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

/// A content block of a turn. Known types are typed; any other block (or a known type
/// missing its members) is kept whole as [`Block::Other`].
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// `thinking`.
    Thinking {
        /// The thinking text.
        thinking: String,
        /// Other members (e.g. a provider `signature`).
        extra: Map<String, Value>,
    },
    /// `text`.
    Text {
        /// The text.
        text: String,
        /// Other members.
        extra: Map<String, Value>,
    },
    /// `tool_use`.
    ToolUse {
        /// Id, paired with a later `tool_result.tool_use_id`.
        id: String,
        /// Tool name.
        name: String,
        /// Arguments.
        input: Value,
        /// Other members.
        extra: Map<String, Value>,
    },
    /// `tool_result`.
    ToolResult {
        /// The `tool_use` this answers.
        tool_use_id: String,
        /// A string or an array of content parts.
        content: Value,
        /// True when the tool failed.
        is_error: Option<bool>,
        /// Other members (e.g. `structured`).
        extra: Map<String, Value>,
    },
    /// `history_elided` (LLM addendum): the first `count` request messages were elided.
    HistoryElided {
        /// How many leading messages were elided.
        count: u64,
        /// Rolling hash of the elided prefix.
        sha256: String,
        /// SHA-256 of the request body.
        request_sha256: Option<String>,
        /// Other members.
        extra: Map<String, Value>,
    },
    /// Any other block, kept verbatim.
    Other(Value),
}

impl Block {
    /// The block's `type`, when it has one.
    pub fn type_name(&self) -> Option<&str> {
        Some(match self {
            Block::Thinking { .. } => "thinking",
            Block::Text { .. } => "text",
            Block::ToolUse { .. } => "tool_use",
            Block::ToolResult { .. } => "tool_result",
            Block::HistoryElided { .. } => "history_elided",
            Block::Other(v) => return v.get("type").and_then(Value::as_str),
        })
    }

    fn from_value(v: Value) -> Block {
        let Value::Object(mut m) = v else {
            return Block::Other(v);
        };
        let ty = m
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let ty = ty.as_str();
        let take_str = |m: &mut Map<String, Value>, k: &str| match m.get(k) {
            Some(Value::String(_)) => m.remove(k).and_then(|v| v.as_str().map(str::to_owned)),
            _ => None,
        };
        let known = match ty {
            "thinking" | "text" => {
                let k = if ty == "text" { "text" } else { "thinking" };
                take_str(&mut m, k).map(|s| (ty.to_owned(), s))
            }
            _ => None,
        };
        if let Some((ty, s)) = known {
            m.remove("type");
            return if ty == "text" {
                Block::Text { text: s, extra: m }
            } else {
                Block::Thinking {
                    thinking: s,
                    extra: m,
                }
            };
        }
        match ty {
            "tool_use"
                if m.get("id").is_some_and(Value::is_string)
                    && m.get("name").is_some_and(Value::is_string) =>
            {
                m.remove("type");
                let id = take_str(&mut m, "id").unwrap_or_default();
                let name = take_str(&mut m, "name").unwrap_or_default();
                let input = m.remove("input").unwrap_or(Value::Null);
                Block::ToolUse {
                    id,
                    name,
                    input,
                    extra: m,
                }
            }
            "tool_result"
                if m.get("tool_use_id").is_some_and(Value::is_string)
                    && m.get("is_error").is_none_or(Value::is_boolean) =>
            {
                m.remove("type");
                let tool_use_id = take_str(&mut m, "tool_use_id").unwrap_or_default();
                let content = m.remove("content").unwrap_or(Value::Null);
                let is_error = m.remove("is_error").and_then(|v| v.as_bool());
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                    extra: m,
                }
            }
            "history_elided"
                if m.get("count").is_some_and(Value::is_u64)
                    && m.get("sha256").is_some_and(Value::is_string)
                    && m.get("request_sha256").is_none_or(Value::is_string) =>
            {
                m.remove("type");
                let count = m.remove("count").and_then(|v| v.as_u64()).unwrap_or(0);
                let sha256 = take_str(&mut m, "sha256").unwrap_or_default();
                let request_sha256 = take_str(&mut m, "request_sha256");
                Block::HistoryElided {
                    count,
                    sha256,
                    request_sha256,
                    extra: m,
                }
            }
            _ => Block::Other(Value::Object(m)),
        }
    }

    /// The block as a JSON object, in the format's shape.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        let extra = match self {
            Block::Other(v) => return v.clone(),
            Block::Thinking { thinking, extra } => {
                m.insert("type".into(), "thinking".into());
                m.insert("thinking".into(), thinking.clone().into());
                extra
            }
            Block::Text { text, extra } => {
                m.insert("type".into(), "text".into());
                m.insert("text".into(), text.clone().into());
                extra
            }
            Block::ToolUse {
                id,
                name,
                input,
                extra,
            } => {
                m.insert("type".into(), "tool_use".into());
                m.insert("id".into(), id.clone().into());
                m.insert("name".into(), name.clone().into());
                m.insert("input".into(), input.clone());
                extra
            }
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
                extra,
            } => {
                m.insert("type".into(), "tool_result".into());
                m.insert("tool_use_id".into(), tool_use_id.clone().into());
                m.insert("content".into(), content.clone());
                if let Some(e) = is_error {
                    m.insert("is_error".into(), (*e).into());
                }
                extra
            }
            Block::HistoryElided {
                count,
                sha256,
                request_sha256,
                extra,
            } => {
                m.insert("type".into(), "history_elided".into());
                m.insert("count".into(), (*count).into());
                m.insert("sha256".into(), sha256.clone().into());
                if let Some(r) = request_sha256 {
                    m.insert("request_sha256".into(), r.clone().into());
                }
                extra
            }
        };
        for (k, v) in extra {
            m.entry(k.clone()).or_insert_with(|| v.clone());
        }
        Value::Object(m)
    }
}

impl<'de> Deserialize<'de> for Block {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(Block::from_value)
    }
}

impl Serialize for Block {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
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

/// How a recorded line ended on its pipe, so the byte stream can be rebuilt exactly:
/// the line's bytes, then LF (the default, not written), CR LF (`"eol": "crlf"`) or
/// nothing (`"eol": "none"`: the stream ended without one, or the line was longer than
/// a stderr event holds and the next event continues it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Eol {
    /// LF.
    #[default]
    Lf,
    /// CR LF.
    Crlf,
    /// No line break.
    None,
}

impl Eol {
    /// The end of a line a framer reports as `crlf` and `terminated`.
    pub fn of(crlf: bool, terminated: bool) -> Eol {
        match (terminated, crlf) {
            (false, _) => Eol::None,
            (true, true) => Eol::Crlf,
            (true, false) => Eol::Lf,
        }
    }

    /// The value of the `eol` member, when one is written.
    pub fn member(self) -> Option<&'static str> {
        match self {
            Eol::Lf => None,
            Eol::Crlf => Some("crlf"),
            Eol::None => Some("none"),
        }
    }

    /// The `eol` member's value read back; `None` for a value reel does not write.
    pub fn from_member(value: Option<&str>) -> Option<Eol> {
        match value {
            None => Some(Eol::Lf),
            Some("crlf") => Some(Eol::Crlf),
            Some("none") => Some(Eol::None),
            Some(_) => None,
        }
    }

    /// The line break itself.
    pub fn bytes(self) -> &'static [u8] {
        match self {
            Eol::Lf => b"\n",
            Eol::Crlf => b"\r\n",
            Eol::None => b"",
        }
    }
}

/// reel's event kinds.
pub mod kinds {
    /// A stdio line that is not JSON (or not UTF-8), kept losslessly.
    pub const NONJSON: &str = "reel.nonjson";
    /// A chunk of the server's stderr.
    pub const STDERR: &str = "reel.stderr";
    /// Lines the recorder dropped (only with `--drop-when-behind`).
    pub const GAP: &str = "reel.gap";
    /// An HTTP exchange without a JSON-RPC message (a GET stream, DELETE, OAuth
    /// discovery, a 202), or one that failed or was refused.
    pub const HTTP: &str = "reel.http";
    /// An SSE event without JSON data (a priming event, a legacy `endpoint` event).
    pub const SSE: &str = "reel.sse";
    /// A piece of an LLM response body as it arrived (an SSE event, an NDJSON line, a
    /// whole body), what `reel llm --play` answers with.
    pub const LLM_BODY: &str = "reel.llm.body";
    /// Prefix of every kind reel defines.
    pub const PREFIX: &str = "reel.";
    /// LLM addendum: one recorded generation exchange.
    pub const LLM_REQUEST: &str = "llm.request";
    /// LLM addendum: an exchange without turn records.
    pub const LLM_EXCHANGE: &str = "llm.exchange";
    /// LLM addendum: an upstream or routing failure.
    pub const LLM_ERROR: &str = "llm.error";
    /// LLM addendum: a stream severed before its natural end.
    pub const LLM_TRUNCATED: &str = "llm.truncated";
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_raw_borrows_the_original_bytes() {
        let line =
            br#"{"t":"2026-01-01T00:00:00.000Z","dir":"in","raw":{"b": 1.0 ,"a":[ ]},"zz":1}"#;
        let Line::Message(m) = parse_line(line).unwrap() else {
            panic!("not a message")
        };
        assert_eq!(m.raw_str(), Some(r#"{"b": 1.0 ,"a":[ ]}"#));
        assert_eq!(m.dir(), Some(Dir::In));
    }

    #[test]
    fn defaults_carry_their_type_tag() {
        assert_eq!(Meta::default().ty, "meta");
        assert_eq!(Turn::default().ty, "turn");
        assert_eq!(End::default().ty, "end");
        let text = serde_json::to_string(&Meta::default()).unwrap();
        assert!(matches!(
            parse_line(text.as_bytes()).unwrap(),
            Line::Meta(_)
        ));
    }

    #[test]
    fn null_raw_is_present() {
        let Line::Message(m) = parse_line(br#"{"t":"x","dir":"out","raw":null}"#).unwrap() else {
            panic!()
        };
        assert_eq!(m.raw_str(), Some("null"));
        let Line::Message(m) = parse_line(br#"{"t":"x","dir":"out"}"#).unwrap() else {
            panic!()
        };
        assert!(m.raw.is_none());
    }

    #[test]
    fn classes() {
        let class = |s: &str| parse_line(s.as_bytes()).unwrap().class();
        assert_eq!(class(r#"{"type":"meta","v":1}"#), LineClass::Meta);
        assert_eq!(
            class(r#"{"type":"turn","role":"user","blocks":[]}"#),
            LineClass::Turn
        );
        assert_eq!(class(r#"{"type":"end","exitCode":0}"#), LineClass::End);
        assert_eq!(class(r#"{"type":"weird"}"#), LineClass::Other);
        assert_eq!(class(r#"{"dir":"sideways","raw":1}"#), LineClass::Other);
        assert_eq!(class(r#"{"dir":"event","kind":"x.y"}"#), LineClass::Event);
        assert_eq!(class(r#"{"dir":3}"#), LineClass::Other);
    }

    #[test]
    fn errors_are_specific() {
        assert_eq!(
            parse_line(b"[1,2]").unwrap_err(),
            LineError::NotObject { found: "array" }
        );
        assert!(matches!(
            parse_line(b"{\"t\":"),
            Err(LineError::NotJson { .. })
        ));
        assert_eq!(
            parse_line(b"{\"t\":\"\xff\"}").unwrap_err(),
            LineError::InvalidUtf8 { column: 7 }
        );
    }

    #[test]
    fn blocks_keep_unknown_members_and_types() {
        let text = r#"{"type":"turn","role":"assistant","blocks":[{"type":"thinking","thinking":"","signature":"s"},{"type":"tool_use","id":"a","name":"n","input":{},"caller":{"type":"direct"}},{"type":"redacted_thinking","data":"x"},{"type":"text"}],"future":true}"#;
        let Line::Turn(turn) = parse_line(text.as_bytes()).unwrap() else {
            panic!()
        };
        assert!(matches!(turn.blocks()[0], Block::Thinking { .. }));
        assert!(matches!(turn.blocks()[1], Block::ToolUse { .. }));
        assert_eq!(turn.blocks()[2].type_name(), Some("redacted_thinking"));
        assert!(matches!(turn.blocks()[3], Block::Other(_)));
        let again: Value = serde_json::to_value(&*turn).unwrap();
        let orig: Value = serde_json::from_str(text).unwrap();
        assert_eq!(again, orig);
    }

    /// `MessageView::MEMBERS` is the parser's own list: a repeat of each is refused,
    /// a repeat of any other name is not.
    #[test]
    fn the_view_members_are_the_ones_a_repeat_of_is_refused() {
        for m in MessageView::MEMBERS {
            let line = format!(r#"{{"dir":"event","{m}":"a","{m}":"b"}}"#);
            let line = line.replacen(
                r#""dir":"event","dir":"a","dir":"b""#,
                r#""dir":"in","dir":"out""#,
                1,
            );
            assert!(
                parse_line(line.as_bytes()).is_err(),
                "{m} repeated is refused: {line}"
            );
        }
        for (i, m) in MessageView::MEMBERS.iter().enumerate() {
            assert_eq!(MessageView::member_index(m), Some(i), "{m}");
        }
        for other in ["note", "types", "raw_b64", "Dir"] {
            assert_eq!(MessageView::member_index(other), None, "{other}");
            let line = format!(r#"{{"dir":"event","{other}":1,"{other}":2}}"#);
            assert!(parse_line(line.as_bytes()).is_ok(), "{other} may repeat");
        }
    }
}
