//! mcp-cassette's cassettes: one JSON document (research: peers.md §5) with a header —
//! `format_version` (1 to 3; 2 added the HTTP members `server_url`, `session_id`,
//! `exchange`, `channel`, 3 the `redaction` manifest and the `unclassified` kind),
//! `recorded_at`, `transport` (`stdio` | `http`), `protocol_version`, `server_info` — and
//! `messages[]` of `{seq, t_offset_ms, sender, kind, method, msg_id, payload, redacted,
//! exchange, channel}`. `sender: client` is `dir: "in"`, `server` is `"out"`; the message
//! written is `payload`, its members in the file's order, compacted. A `raw` message
//! (a wire line that was not a JSON object; its payload is that text) is kept as the
//! bytes it was, as reel keeps any non-JSON line.
//!
//! Times: `t_offset_ms` counts from the recorder's start, but `recorded_at` is stamped
//! when the cassette is written, at the end. The start is therefore `recorded_at` less the
//! last offset (the last message is placed at `recorded_at`): the gaps are the file's, the
//! absolute times a little late by however long the recorder idled after the last message.
//!
//! [`export`] writes the other way: a `format_version` 3 cassette `mcp-cassette serve`
//! replays, with no redaction manifest (so replay applies no request transform) and
//! `recorded_at` placed as this reader reads it, so an export imports back to the same times.

use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::Exported;
use super::{
    ConvertError, Converted, ExportError, Fault, Item, Left, Problem, after_ms, parse_time,
    read_document,
};
use reel_trace::Timestamp;
use reel_trace::line::Dir;

/// What the format cannot hold.
pub const LIMITS: &str = "mcp-cassette cassettes hold the JSON-RPC messages of one session \
     with millisecond offsets from the recorder's start and the time the file was written \
     (so absolute times are estimated), no server stderr, no HTTP status, headers or SSE \
     framing beyond which HTTP exchange carried a message, and what its record-time \
     redaction rewrote (by default every key like *token*, *secret* or *password*, \
     progressToken included) reads \"REDACTED\"";

/// The newest `format_version` reel reads (mcp-cassette 0.4.0 writes it).
pub const FORMAT_VERSION: u64 = 3;

/// The value mcp-cassette's default redaction writes.
const REDACTED: &str = "REDACTED";

/// True when the file starting with `head` is an mcp-cassette cassette: a JSON object
/// with `messages` and an integer `format_version` (agent-vcr's is a string), or, for a
/// file without a version, `recorded_at` and `t_offset_ms` members.
pub fn looks_like(head: &[u8]) -> bool {
    if let Some(members) = whole_first_line(head) {
        return members.contains_key("messages")
            && match members.get("format_version") {
                Some(v) => v.get().starts_with(|c: char| c.is_ascii_digit()),
                None => members.contains_key("recorded_at"),
            };
    }
    let Ok(text) = std::str::from_utf8(trim_to_char(head)) else {
        return false;
    };
    let text = text.trim_start_matches('\u{feff}').trim_start();
    if !text.starts_with('{') || !text.contains("\"messages\"") {
        return false;
    }
    match member_value(text, "format_version") {
        Some(v) => v.starts_with(|c: char| c.is_ascii_digit()),
        None => text.contains("\"recorded_at\"") && text.contains("\"t_offset_ms\""),
    }
}

/// The top-level members of the first line of `head` when it is a whole JSON object: a
/// document written on one line, or a line of a line format (reel's own traces,
/// mcporter's), whose nested members must not be taken for a document's.
pub(crate) fn whole_first_line(
    head: &[u8],
) -> Option<std::collections::BTreeMap<String, &RawValue>> {
    serde_json::from_slice(super::first_line(head)).ok()
}

/// `head` without a UTF-8 sequence the 64 KiB cut split.
pub(crate) fn trim_to_char(head: &[u8]) -> &[u8] {
    match std::str::from_utf8(head) {
        Ok(_) => head,
        Err(e) if e.error_len().is_none() => &head[..e.valid_up_to()],
        Err(_) => head,
    }
}

/// The text after `"name":` (whitespace skipped) at its first occurrence in `text`.
pub(crate) fn member_value<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let key = format!("\"{name}\"");
    let at = text.find(&key)?;
    let rest = text[at + key.len()..].trim_start();
    Some(rest.strip_prefix(':')?.trim_start())
}

/// The 1-based line of `part` (a slice of `doc`) in `doc`, counting from `from`
/// (a byte offset whose line is `line`); returns the line and `part`'s offset.
pub(crate) fn line_of(doc: &[u8], part: &str, from: (usize, u64)) -> (usize, u64) {
    let start = doc.as_ptr() as usize;
    let at = (part.as_ptr() as usize)
        .saturating_sub(start)
        .min(doc.len());
    let (off, line) = if at >= from.0 { from } else { (0, 1) };
    let more = doc[off..at].iter().filter(|&&b| b == b'\n').count() as u64;
    (at, line + more)
}

/// One message as the file has it; every member optional so that a wrong one is a
/// [`Problem`] naming it.
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(default)]
    seq: Option<i64>,
    #[serde(default)]
    t_offset_ms: Option<f64>,
    #[serde(default)]
    sender: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    redacted: Option<bool>,
    #[serde(default, borrow)]
    payload: Option<&'a RawValue>,
}

/// Converts the cassette at `path`.
pub fn convert(path: &Path) -> Result<Converted, ConvertError> {
    let doc = read_document(path)?;
    convert_bytes(&doc)
}

/// Converts a cassette held in memory.
pub fn convert_bytes(doc: &[u8]) -> Result<Converted, ConvertError> {
    let members = Members(serde_json::from_slice(doc).map_err(|e| {
        ConvertError::Invalid(format!("not an mcp-cassette cassette (a JSON object): {e}"))
    })?);
    let version = members.version()?;
    let recorded_at = members.recorded_at()?;
    let transport = members.transport()?;
    let messages = members.messages()?;
    let facts = members.facts(version)?;

    // The last offset places the start (see the module's note on times).
    let last_offset = messages
        .iter()
        .filter_map(|m| serde_json::from_str::<Message<'_>>(m.get()).ok())
        .filter_map(|m| m.t_offset_ms)
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .fold(0.0_f64, f64::max);
    let started = after_ms(recorded_at, -last_offset);

    let mut items = Vec::with_capacity(messages.len());
    let mut notes = Notes::default();
    let mut at = (0, 1);
    let mut last_t = started;
    for raw in &messages {
        at = line_of(doc, raw.get(), at);
        items.push(message(at.1, raw, started, &mut last_t, &mut notes));
    }
    Ok(Converted {
        kind: "mcp",
        transport: Some(transport),
        started,
        facts,
        warnings: notes.warnings(),
        items: Box::new(items.into_iter()),
    })
}

/// A cassette's top-level members, each read only when asked for.
struct Members<'a>(std::collections::BTreeMap<String, &'a RawValue>);

impl<'a> Members<'a> {
    /// The member `name`, `null` when missing.
    fn header(&self, name: &str) -> Result<Value, ConvertError> {
        match self.0.get(name) {
            None => Ok(Value::Null),
            Some(r) => serde_json::from_str(r.get())
                .map_err(|e| ConvertError::Invalid(format!("`{name}`: {e}"))),
        }
    }

    /// `format_version`, one reel reads (the latest when missing).
    fn version(&self) -> Result<u64, ConvertError> {
        let version = match self.header("format_version")? {
            Value::Null => FORMAT_VERSION,
            v => v.as_u64().ok_or_else(|| {
                ConvertError::Invalid(format!("`format_version` is {v}, not an integer"))
            })?,
        };
        if !(1..=FORMAT_VERSION).contains(&version) {
            return Err(ConvertError::Invalid(format!(
                "cassette format_version {version}: reel reads mcp-cassette format_version 1 \
                 to {FORMAT_VERSION}"
            )));
        }
        Ok(version)
    }

    /// `recorded_at`, which every cassette has.
    fn recorded_at(&self) -> Result<Timestamp, ConvertError> {
        match self.header("recorded_at")? {
            Value::String(s) => parse_time(&s).map(|(t, _)| t).ok_or_else(|| {
                ConvertError::Invalid(format!("`recorded_at` {s:?} is not a date-time"))
            }),
            Value::Null => Err(ConvertError::Invalid(
                "no `recorded_at`: mcp-cassette writes it in every cassette".into(),
            )),
            v => Err(ConvertError::Invalid(format!(
                "`recorded_at` is {v}, not a date-time"
            ))),
        }
    }

    /// `transport`: `stdio` (when missing) or `http`.
    fn transport(&self) -> Result<String, ConvertError> {
        match self.header("transport")? {
            Value::Null => Ok("stdio".to_owned()),
            Value::String(s) if s == "stdio" || s == "http" => Ok(s),
            v => Err(ConvertError::Invalid(format!(
                "`transport` is {v}, not \"stdio\" or \"http\""
            ))),
        }
    }

    /// `messages`, unread; a cassette without any is empty.
    fn messages(&self) -> Result<Vec<&'a RawValue>, ConvertError> {
        let messages: Vec<&RawValue> = match self.0.get("messages") {
            None => return Err(ConvertError::Empty),
            Some(r) => serde_json::from_str(r.get()).map_err(|e| {
                ConvertError::Invalid(format!("`messages` is not a list of messages: {e}"))
            })?,
        };
        if messages.is_empty() {
            return Err(ConvertError::Empty);
        }
        Ok(messages)
    }

    /// What the cassette says of itself.
    fn facts(&self, version: u64) -> Result<Map<String, Value>, ConvertError> {
        let mut facts = Map::new();
        facts.insert("format_version".into(), version.into());
        for name in [
            "server_info",
            "protocol_version",
            "session_id",
            "server_url",
            "redaction",
        ] {
            let v = self.header(name)?;
            if !v.is_null() {
                facts.insert(name.into(), v);
            }
        }
        Ok(facts)
    }
}

/// What the messages showed that the reader of the import should hear once.
#[derive(Default)]
struct Notes {
    redacted: u64,
    redacted_keys: std::collections::BTreeSet<String>,
    unordered: u64,
    last_seq: Option<i64>,
}

impl Notes {
    fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.redacted > 0 {
            let keys: Vec<&str> = self.redacted_keys.iter().map(String::as_str).collect();
            let progress = if self.redacted_keys.contains("progressToken") {
                " (progress notifications so rewritten no longer name the request they \
                 belong to, and a replayer that matches the token will miss the live one)"
            } else {
                ""
            };
            w.push(format!(
                "{} message(s) were rewritten by mcp-cassette's record-time redaction: {} \
                 read \"REDACTED\"{progress}",
                self.redacted,
                if keys.is_empty() {
                    "values".to_owned()
                } else {
                    keys.join(", ")
                }
            ));
        }
        if self.unordered > 0 {
            w.push(format!(
                "{} message(s) are out of `seq` order; kept in the file's order",
                self.unordered
            ));
        }
        w
    }
}

/// The keys whose value is `"REDACTED"`, anywhere in `v`.
fn redacted_keys(v: &Value, keys: &mut std::collections::BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                if v.as_str() == Some(REDACTED) {
                    keys.insert(k.clone());
                } else {
                    redacted_keys(v, keys);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| redacted_keys(v, keys)),
        _ => {}
    }
}

/// Converts one message entry (at `line` of the file).
fn message(
    line: u64,
    raw: &RawValue,
    started: Timestamp,
    last_t: &mut Timestamp,
    notes: &mut Notes,
) -> Result<Item, Fault> {
    let problem = |reason: String| Fault::Bad(Problem { line, reason }, raw.get().into());
    let m: Message<'_> = serde_json::from_str(raw.get())
        .map_err(|e| problem(format!("not an mcp-cassette message: {e}")))?;
    if let Some(seq) = m.seq {
        if notes.last_seq.is_some_and(|last| seq <= last) {
            notes.unordered += 1;
        }
        notes.last_seq = Some(seq);
    }
    let t = match m.t_offset_ms {
        Some(ms) if ms.is_finite() && ms >= 0.0 => after_ms(started, ms),
        Some(ms) => return Err(problem(format!("`t_offset_ms` is {ms}, not an offset"))),
        None => *last_t,
    };
    *last_t = t;
    let dir = match m.sender.as_deref() {
        Some("client") => Dir::In,
        Some("server") => Dir::Out,
        Some(other) => {
            return Err(problem(format!(
                "`sender` is {}, not \"client\" or \"server\"",
                Value::from(other)
            )));
        }
        None => return Err(problem("no `sender`".into())),
    };
    let payload = m
        .payload
        .ok_or_else(|| problem("no `payload`".into()))?
        .get();
    if m.kind.as_deref() == Some("raw") || payload.starts_with('"') {
        // Kept as the bytes it was on the wire, not as the entry that holds it.
        let text = serde_json::from_str::<String>(payload).unwrap_or_else(|_| payload.into());
        let reason = "kind `raw`: a wire line that was not a JSON object, kept as its text";
        return Err(Fault::Bad(
            Problem {
                line,
                reason: reason.into(),
            },
            text.into_bytes(),
        ));
    }
    if !payload.starts_with('{') {
        return Err(problem(format!(
            "`payload` is not a JSON-RPC message object: {}",
            payload.chars().take(40).collect::<String>()
        )));
    }
    match m.kind.as_deref() {
        None | Some("request" | "response" | "notification" | "unclassified") => {}
        Some(other) => return Err(problem(format!("unknown `kind` {}", Value::from(other)))),
    }
    if m.redacted == Some(true) || payload.contains("\"REDACTED\"") {
        notes.redacted += 1;
        if let Ok(v) = serde_json::from_str::<Value>(payload) {
            redacted_keys(&v, &mut notes.redacted_keys);
        }
    }
    Ok(Item::Message {
        t,
        dir,
        raw: reel_trace::json_text::compact(payload),
        session: None,
    })
}

/// One message of the trace, kept for writing.
struct Kept {
    t: Timestamp,
    dir: Dir,
    raw: Box<RawValue>,
    req: u64,
}

/// How a JSON-RPC object is classified, as mcp-cassette's recorder does: by `method`
/// and the presence of `id` alone.
struct Shape {
    kind: &'static str,
    method: Option<String>,
    id: Value,
}

/// A JSON-RPC message's `method` and `id`: `None` when absent (a `null` method reads
/// as absent, as mcp-cassette's recorder tests it; a present `null` id is `Some(Null)`,
/// as its `"id" in obj` does).
#[derive(Deserialize)]
pub(crate) struct Probe {
    #[serde(default)]
    pub(crate) method: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) id: Option<Value>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

fn shape(raw: &RawValue) -> Shape {
    let p: Probe = serde_json::from_str(raw.get()).unwrap_or(Probe {
        method: None,
        id: None,
    });
    let method = p.method.and_then(|m| m.as_str().map(str::to_owned));
    let kind = match (&method, &p.id) {
        (Some(_), Some(_)) => "request",
        (Some(_), None) => "notification",
        (None, Some(_)) => "response",
        (None, None) => "unclassified",
    };
    Shape {
        kind,
        method,
        id: p.id.unwrap_or(Value::Null),
    }
}

/// Writes `trace` as a `format_version` 3 cassette to `out`: each message its payload,
/// classified as mcp-cassette classifies them; `protocol_version` and `server_info`
/// from the initialize exchange as its recorder takes them; an HTTP trace keeps its
/// first session, each message's HTTP request as its `exchange`. Returns what a cassette
/// cannot hold: batches, lines that are not JSON-RPC messages (stderr, events, turns),
/// and other HTTP sessions.
pub fn export(trace: &Path, out: &mut dyn std::io::Write) -> Result<Left, ExportError> {
    let mut left = Left::default();
    let mut started: Option<Timestamp> = None;
    let mut transport = "stdio";
    let mut server_url = Value::Null;
    let mut kept: Vec<Kept> = Vec::new();
    super::export_messages(trace, super::Sessions::First, &mut left, |e, _| {
        let msg = match e {
            Exported::Meta(m) => {
                started = m.started_at.as_deref().and_then(Timestamp::parse);
                if m.transport.as_deref() == Some("http") {
                    transport = "http";
                    server_url = m.upstream.clone().map_or(Value::Null, Value::from);
                }
                return Ok(());
            }
            Exported::Message(msg) => msg,
        };
        let t = msg
            .t
            .or(kept.last().map(|k| k.t))
            .or(started)
            .unwrap_or(Timestamp(0));
        let raw = RawValue::from_string(msg.raw.to_owned())
            .map_err(|e| ExportError::Unfit(format!("a message that is not JSON: {e}")))?;
        kept.push(Kept {
            t,
            dir: msg.dir,
            req: msg.http_req,
            raw,
        });
        Ok(())
    })?;
    if kept.is_empty() {
        return Err(ExportError::Unfit(
            "the trace holds no JSON-RPC message a cassette can hold".into(),
        ));
    }
    let start = started.unwrap_or(kept[0].t).min(kept[0].t);
    let doc = cassette_document(&kept, start, transport, server_url);
    serde_json::to_writer_pretty(&mut *out, &doc)
        .map_err(|e| ExportError::Write(std::io::Error::other(e)))?;
    writeln!(out).map_err(ExportError::Write)?;
    out.flush().map_err(ExportError::Write)?;
    Ok(left)
}

/// The cassette of `kept`, offsets counted from `start`.
fn cassette_document<'a>(
    kept: &'a [Kept],
    start: Timestamp,
    transport: &str,
    url: Value,
) -> Document<'a> {
    let http = transport == "http";
    // Which HTTP requests carried a client message: a server message on another is a
    // GET stream's.
    let posts: std::collections::BTreeSet<u64> = kept
        .iter()
        .filter(|k| k.dir == Dir::In)
        .map(|k| k.req)
        .collect();
    let mut init_id = None;
    let mut protocol_version = Value::Null;
    let mut server_info = Value::Null;
    let mut messages = Vec::with_capacity(kept.len());
    let mut last_offset = 0;
    for (seq, k) in kept.iter().enumerate() {
        let s = shape(&k.raw);
        if k.dir == Dir::In && s.method.as_deref() == Some("initialize") {
            init_id = Some(s.id.clone());
        } else if k.dir == Dir::Out && s.kind == "response" && init_id.as_ref() == Some(&s.id) {
            if let Ok(v) = serde_json::from_str::<Value>(k.raw.get()) {
                if let Some(pv) = v
                    .pointer("/result/protocolVersion")
                    .filter(|p| p.is_string())
                {
                    protocol_version = pv.clone();
                }
                if let Some(info) = v.pointer("/result/serverInfo")
                    && let (Some(name), Some(version)) = (info.get("name"), info.get("version"))
                {
                    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                    server_info = serde_json::json!({"name": text(name), "version": text(version)});
                }
            }
        }
        let offset = (k.t.millis() - start.millis()).max(last_offset);
        last_offset = offset;
        let (exchange, channel) = match (http && k.req > 0, k.dir) {
            (false, _) => (Value::Null, Value::Null),
            (true, Dir::In) => (k.req.into(), Value::Null),
            (true, _) if posts.contains(&k.req) => (k.req.into(), "post".into()),
            (true, _) => (k.req.into(), "get".into()),
        };
        messages.push(Entry {
            seq,
            t_offset_ms: offset,
            sender: if k.dir == Dir::In { "client" } else { "server" },
            kind: s.kind,
            method: s.method,
            msg_id: match s.id {
                Value::String(_) | Value::Number(_) => s.id,
                _ => Value::Null,
            },
            payload: &k.raw,
            redacted: false,
            exchange,
            channel,
        });
    }
    // As this reader reads it: the last message at `recorded_at`.
    let recorded_at = Timestamp(start.millis() + last_offset);
    Document {
        format_version: FORMAT_VERSION,
        recorded_at: recorded_at.to_iso().as_str().to_owned(),
        transport: transport.to_owned(),
        server_url: url,
        session_id: Value::Null,
        protocol_version,
        server_info,
        redaction: Value::Null,
        messages,
    }
}

/// A cassette as mcp-cassette writes it, its members in its order.
#[derive(serde::Serialize)]
struct Document<'a> {
    format_version: u64,
    recorded_at: String,
    transport: String,
    server_url: Value,
    session_id: Value,
    protocol_version: Value,
    server_info: Value,
    redaction: Value,
    messages: Vec<Entry<'a>>,
}

/// One message of a written cassette; `payload` is the trace's bytes.
#[derive(serde::Serialize)]
struct Entry<'a> {
    seq: usize,
    t_offset_ms: i64,
    sender: &'static str,
    kind: &'static str,
    method: Option<String>,
    msg_id: Value,
    payload: &'a RawValue,
    redacted: bool,
    exchange: Value,
    channel: Value,
}

#[cfg(test)]
mod tests {
    use super::*;
    use reel_trace::line::Meta;
    use reel_trace::writer::{Ending, MessageLine, TraceWriter};

    const V2: &str = r#"{
  "format_version": 2,
  "recorded_at": "2026-07-18T19:22:31.662011Z",
  "transport": "stdio",
  "server_url": null,
  "session_id": null,
  "protocol_version": "2024-11-05",
  "server_info": {"name": "echo-example", "version": "1.0.0"},
  "messages": [
    {"seq": 0, "t_offset_ms": 125, "sender": "client", "kind": "request",
     "method": "initialize", "msg_id": 1,
     "payload": {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2024-11-05", "capabilities": {}}},
     "redacted": false, "exchange": null, "channel": null},
    {"seq": 1, "t_offset_ms": 186, "sender": "server", "kind": "response",
     "method": null, "msg_id": 1,
     "payload": {"jsonrpc": "2.0", "id": 1, "result": {"z": "a b", "a": 1}},
     "redacted": false, "exchange": null, "channel": null},
    {"seq": 2, "t_offset_ms": 200, "sender": "server", "kind": "raw",
     "method": null, "msg_id": null, "payload": "booting...",
     "redacted": false, "exchange": null, "channel": null}
  ]
}"#;

    const V3_HTTP: &str = r#"{
  "format_version": 3,
  "recorded_at": "2026-11-30T06:50:16.000Z",
  "transport": "http",
  "server_url": "http://127.0.0.1:18081/mcp",
  "session_id": "00067b1de0d8",
  "protocol_version": "2025-11-25",
  "server_info": {"name": "sdk-demo", "version": ""},
  "redaction": {"profile": null, "backends": ["structural"], "packs": [], "rule_ids": [],
                "salt_mode": "stable", "applied_at": "2026-11-30T06:50:16.000Z"},
  "messages": [
    {"seq": 0, "t_offset_ms": 1000, "sender": "client", "kind": "request",
     "method": "tools/call", "msg_id": 4,
     "payload": {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                 "params": {"name": "add", "_meta": {"progressToken": "REDACTED"}}},
     "redacted": true, "exchange": 3, "channel": null},
    {"seq": 1, "t_offset_ms": 1500, "sender": "server", "kind": "notification",
     "method": "notifications/progress", "msg_id": null,
     "payload": {"jsonrpc": "2.0", "method": "notifications/progress",
                 "params": {"progressToken": "REDACTED", "progress": 1}},
     "redacted": true, "exchange": 3, "channel": "post"},
    {"seq": 2, "t_offset_ms": 2000, "sender": "server", "kind": "response",
     "method": null, "msg_id": 4,
     "payload": {"jsonrpc": "2.0", "id": 4, "result": {}},
     "redacted": false, "exchange": 3, "channel": "post"}
  ]
}"#;

    fn items(c: Converted) -> Vec<Result<Item, Fault>> {
        c.items.collect()
    }

    #[test]
    fn a_v2_cassette_reads_in_order_with_the_raw_line_kept() {
        assert!(looks_like(V2.as_bytes()));
        let c = convert_bytes(V2.as_bytes()).unwrap();
        assert_eq!(c.kind, "mcp");
        assert_eq!(c.transport.as_deref(), Some("stdio"));
        assert_eq!(c.facts["format_version"], 2);
        assert_eq!(c.facts["server_info"]["name"], "echo-example");
        assert!(
            c.facts.get("session_id").is_none(),
            "null facts are left out"
        );
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        // The last message is at `recorded_at`; the others keep their gaps.
        let end = Timestamp::parse("2026-07-18T19:22:31.662Z").unwrap();
        assert_eq!(c.started, Timestamp(end.0 - 200));
        let items = items(c);
        assert_eq!(items.len(), 3);
        match &items[0] {
            Ok(Item::Message {
                t,
                dir,
                raw,
                session,
            }) => {
                assert_eq!(*t, Timestamp(end.0 - 75));
                assert_eq!(*dir, Dir::In);
                assert!(session.is_none());
                assert!(raw.starts_with(r#"{"jsonrpc":"2.0","id":1,"method":"initialize""#));
            }
            other => panic!("{other:?}"),
        }
        match &items[1] {
            Ok(Item::Message { dir, raw, .. }) => {
                assert_eq!(*dir, Dir::Out);
                assert_eq!(
                    raw,
                    r#"{"jsonrpc":"2.0","id":1,"result":{"z":"a b","a":1}}"#
                );
            }
            other => panic!("{other:?}"),
        }
        match &items[2] {
            Err(Fault::Bad(p, bytes)) => {
                assert_eq!(bytes, b"booting...");
                assert!(p.reason.contains("raw"), "{p}");
                assert_eq!(p.line, 19, "the entry's line in the file");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_v3_http_cassette_says_its_facts_and_its_redaction_once() {
        assert!(looks_like(V3_HTTP.as_bytes()));
        let c = convert_bytes(V3_HTTP.as_bytes()).unwrap();
        assert_eq!(c.transport.as_deref(), Some("http"));
        assert_eq!(c.facts["session_id"], "00067b1de0d8");
        assert_eq!(c.facts["server_url"], "http://127.0.0.1:18081/mcp");
        assert_eq!(c.facts["protocol_version"], "2025-11-25");
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        assert!(
            c.warnings[0].starts_with("2 message(s)"),
            "{:?}",
            c.warnings
        );
        assert!(c.warnings[0].contains("progressToken"), "{:?}", c.warnings);
        let items = items(c);
        assert_eq!(items.len(), 3);
        assert!(items.iter().all(|i| matches!(i, Ok(Item::Message { .. }))));
    }

    #[test]
    fn other_files_are_not_cassettes() {
        for head in [
            &br#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z"}"#[..],
            br#"{"jsonrpc":"2.0","id":1,"_meta":{"dir":"send","server":"a","ts":"x"}}"#,
            b"{\n  \"format_version\": \"1.0.0\",\n  \"session\": {},\n  \"messages\": []",
            b"{\n  \"history\": [],\n  \"config\": {}\n}",
            b"{\n  \"version\": \"1.0\",\n  \"metadata\": {},\n  \"interactions\": []\n}",
            b"just text",
            b"",
            // An imported trace: its meta names the format version, a message holds
            // `messages`.
            b"{\"v\":1,\"type\":\"meta\",\"imported\":{\"format_version\":2}}\n{\"dir\":\"out\",\"raw\":{\"params\":{\"messages\":[]}}}\n",
        ] {
            assert!(!looks_like(head), "{}", String::from_utf8_lossy(head));
        }
        let compact = serde_json::to_string(&serde_json::from_str::<Value>(V2).unwrap()).unwrap();
        assert!(looks_like(compact.as_bytes()), "a cassette on one line");
        // A head cut inside a multi-byte character still sniffs.
        let mut cut = V2.as_bytes()[..300].to_vec();
        cut.extend_from_slice(&"é".as_bytes()[..1]);
        assert!(looks_like(&cut));
    }

    #[test]
    fn no_cut_or_corruption_of_a_cassette_panics() {
        let doc = V3_HTTP.as_bytes();
        for n in 0..doc.len() {
            let _ = looks_like(&doc[..n]);
            if let Ok(c) = convert_bytes(&doc[..n]) {
                c.items.for_each(drop);
            }
            let mut bent = doc.to_vec();
            bent[n] = match bent[n] {
                b'"' => b'0',
                b'{' => b'[',
                b'0'..=b'9' => b'"',
                _ => b'}',
            };
            if let Ok(c) = convert_bytes(&bent) {
                c.items.for_each(drop);
            }
        }
    }

    #[test]
    fn bad_documents_are_clear_errors() {
        let err = |doc: &str| convert_bytes(doc.as_bytes()).unwrap_err().to_string();
        assert!(err(&V2[..V2.len() / 2]).contains("not an mcp-cassette cassette"));
        assert!(err("[1, 2]").contains("a JSON object"));
        let v4 = V2.replace("\"format_version\": 2", "\"format_version\": 4");
        assert!(err(&v4).contains("format_version 4"), "{}", err(&v4));
        let vs = V2.replace("\"format_version\": 2", "\"format_version\": \"1.0.0\"");
        assert!(err(&vs).contains("not an integer"));
        let no_time = V2.replace("\"recorded_at\"", "\"written\"");
        assert!(err(&no_time).contains("recorded_at"));
        let bad_time = V2.replace("2026-07-18T19:22:31.662011Z", "yesterday");
        assert!(err(&bad_time).contains("not a date-time"));
        let transport = V2.replace("\"transport\": \"stdio\"", "\"transport\": \"ws\"");
        assert!(err(&transport).contains("transport"));
        let not_list =
            r#"{"format_version": 3, "recorded_at": "2026-01-01T00:00:00Z", "messages": {}}"#;
        assert!(err(not_list).contains("`messages`"));
        let none =
            r#"{"format_version": 3, "recorded_at": "2026-01-01T00:00:00Z", "messages": []}"#;
        assert!(matches!(
            convert_bytes(none.as_bytes()),
            Err(ConvertError::Empty)
        ));
    }

    #[test]
    fn bad_messages_are_problems_not_failures() {
        let doc = r#"{"format_version": 3, "recorded_at": "2026-01-01T00:00:00Z", "messages": [
            {"seq": 0, "t_offset_ms": 1, "sender": "proxy", "kind": "request", "payload": {}},
            {"seq": 1, "t_offset_ms": 2, "sender": "client", "kind": "request"},
            {"seq": 2, "t_offset_ms": "soon", "sender": "client", "payload": {}},
            {"seq": 3, "t_offset_ms": 3, "sender": "client", "kind": "request", "payload": [1]},
            {"seq": 4, "t_offset_ms": 4, "sender": "client", "kind": "wat", "payload": {}},
            17,
            {"seq": 5, "t_offset_ms": 5, "sender": "client", "kind": "unclassified", "payload": {"x": 1}}
        ]}"#;
        let items = items(convert_bytes(doc.as_bytes()).unwrap());
        let reasons: Vec<String> = items
            .iter()
            .filter_map(|i| match i {
                Err(Fault::Bad(p, _)) => Some(p.to_string()),
                _ => None,
            })
            .collect();
        assert_eq!(reasons.len(), 6, "{reasons:?}");
        assert!(reasons[0].starts_with("line 2: `sender`"), "{reasons:?}");
        assert!(reasons[1].contains("no `payload`"));
        assert!(reasons[2].contains("not an mcp-cassette message"));
        assert!(reasons[3].contains("not a JSON-RPC message object"));
        assert!(reasons[4].contains("unknown `kind`"));
        assert!(matches!(&items[6], Ok(Item::Message { raw, .. }) if raw == r#"{"x":1}"#));
    }

    fn trace(dir: &Path, lines: &[(Dir, &str)]) -> std::path::PathBuf {
        let path = dir.join("t.jsonl");
        let start = Timestamp::parse("2026-05-01T10:00:00.000Z").unwrap();
        let mut w = TraceWriter::new(std::fs::File::create(&path).unwrap(), start);
        let meta = Meta {
            v: Some(Value::from(1)),
            ty: "meta".into(),
            label: Some("demo".into()),
            started_at: Some(start.to_iso().as_str().to_owned()),
            transport: Some("stdio".into()),
            ..Meta::default()
        };
        w.write_meta(&meta).unwrap();
        for (i, (dir, raw)) in lines.iter().enumerate() {
            let t = Timestamp(start.0 + 10 * (i as i64 + 1));
            w.write_message(&MessageLine::new(t, *dir, raw)).unwrap();
        }
        w.finish(Ending::ExitCode(0), Timestamp(start.0 + 1000))
            .unwrap();
        path
    }

    #[test]
    fn an_export_reads_back_to_the_same_messages_and_times() {
        let tmp = tempfile::tempdir().unwrap();
        let lines = [
            (
                Dir::In,
                r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#,
            ),
            (
                Dir::Out,
                r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"s","version":"1"}}}"#,
            ),
            (
                Dir::In,
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            ),
            (Dir::In, r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            (
                Dir::Out,
                r#"{"jsonrpc":"2.0","id":"s1","method":"roots/list"}"#,
            ),
            (
                Dir::In,
                r#"{"jsonrpc":"2.0","id":"s1","result":{"roots":[]}}"#,
            ),
        ];
        let path = trace(tmp.path(), &lines);
        let mut out = Vec::new();
        let left = export(&path, &mut out).unwrap();
        assert_eq!(left.to_string(), "1 batches");
        let doc: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(doc["format_version"], 3);
        assert_eq!(doc["protocol_version"], "2025-06-18");
        assert_eq!(
            doc["server_info"],
            serde_json::json!({"name": "s", "version": "1"})
        );
        let kinds: Vec<&str> = doc["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            ["request", "response", "notification", "request", "response"]
        );
        assert_eq!(doc["messages"][3]["sender"], "server");
        assert_eq!(doc["messages"][3]["msg_id"], "s1");

        let back = convert_bytes(&out).unwrap();
        assert_eq!(
            back.started,
            Timestamp::parse("2026-05-01T10:00:00.000Z").unwrap()
        );
        let got: Vec<(Timestamp, Dir, String)> = back
            .items
            .map(|i| match i {
                Ok(Item::Message { t, dir, raw, .. }) => (t, dir, raw),
                other => panic!("{other:?}"),
            })
            .collect();
        let start = back.started.0;
        let want: Vec<(Timestamp, Dir, String)> = lines
            .iter()
            .enumerate()
            .filter(|(_, (_, raw))| raw.starts_with('{'))
            .map(|(i, (d, raw))| (Timestamp(start + 10 * (i as i64 + 1)), *d, raw.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn an_http_trace_keeps_its_first_session_and_its_exchanges() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("h.jsonl");
        let start = Timestamp::parse("2026-05-01T10:00:00.000Z").unwrap();
        let mut w = TraceWriter::new(std::fs::File::create(&path).unwrap(), start);
        let meta = Meta {
            v: Some(Value::from(1)),
            ty: "meta".into(),
            started_at: Some(start.to_iso().as_str().to_owned()),
            transport: Some("http".into()),
            upstream: Some("http://127.0.0.1:9/mcp".into()),
            ..Meta::default()
        };
        w.write_meta(&meta).unwrap();
        let lines: [(&str, Dir, u64, &str); 5] = [
            (
                "a",
                Dir::In,
                1,
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
            ),
            (
                "a",
                Dir::Out,
                1,
                r#"{"jsonrpc":"2.0","method":"notifications/progress"}"#,
            ),
            ("a", Dir::Out, 1, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            (
                "a",
                Dir::Out,
                2,
                r#"{"jsonrpc":"2.0","method":"notifications/message"}"#,
            ),
            (
                "b",
                Dir::In,
                3,
                r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            ),
        ];
        let http: Vec<Box<RawValue>> = lines
            .iter()
            .map(|l| RawValue::from_string(format!(r#"{{"req":{}}}"#, l.2)).unwrap())
            .collect();
        for (i, (session, dir, _, raw)) in lines.iter().enumerate() {
            let mut m = MessageLine::new(Timestamp(start.0 + i as i64), *dir, raw);
            m.session = Some(session);
            m.http = Some(&http[i]);
            w.write_message(&m).unwrap();
        }
        w.finish(Ending::ExitCode(0), Timestamp(start.0 + 10))
            .unwrap();
        let mut out = Vec::new();
        let left = export(&path, &mut out).unwrap();
        assert_eq!(left.to_string(), "1 messages of other sessions");
        let doc: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(doc["transport"], "http");
        assert_eq!(doc["server_url"], "http://127.0.0.1:9/mcp");
        let placed: Vec<(Value, Value)> = doc["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["exchange"].clone(), m["channel"].clone()))
            .collect();
        assert_eq!(
            placed,
            [
                (1.into(), Value::Null),
                (1.into(), "post".into()),
                (1.into(), "post".into()),
                (2.into(), "get".into()),
            ]
        );
    }

    #[test]
    fn a_trace_with_no_message_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let path = trace(tmp.path(), &[(Dir::In, "[]")]);
        let err = export(&path, &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("no JSON-RPC message"), "{err}");
    }
}
