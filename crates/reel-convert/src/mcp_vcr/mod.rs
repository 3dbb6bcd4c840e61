//! mcp-vcr transcripts (research: peers.md §3), in its two formats:
//! - YAML (its default): one document, `messages: [{dir: c2s | s2c, payload, t}]` and
//!   `meta: {recorded_at, session_id, server_command, protocol_version, client_hint,
//!   schema_version, version}`, keys sorted (so `messages` comes first). Read whole.
//! - NDJSON (`--format ndjson`): a `{"_type": "meta", …}` line, then `{t, dir, payload}`
//!   lines. Streamed.
//!
//! `t` is whole milliseconds since `meta.recorded_at`. The message written is `payload`
//! serialised compactly. [`export`] writes the YAML form, which every mcp-vcr command
//! reads (its `diff` and `replay --strict` cannot read NDJSON).

use std::io::Write;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{
    ConvertError, Converted, ExportError, Exported, Fault, Item, Left, Outgoing, Problem, after_ms,
    first_line, line_items, parse_time, read_document, read_lines,
};
use reel_trace::Timestamp;
use reel_trace::line::Dir;

/// What the format cannot hold.
pub const LIMITS: &str = "mcp-vcr transcripts hold the JSON-RPC messages of one stdio or \
     legacy SSE session, timed in whole milliseconds from its start: no server stderr, no \
     line that was not JSON-RPC, no HTTP facts; mcp-vcr redacts by default (secret-like \
     fields, tokens and absolute paths replaced), so a redacted request no longer matches \
     the live one";

/// The markers mcp-vcr's redaction leaves in a value.
const REDACTION_MARKS: [&str; 2] = ["<REDACTED", "<PATH>"];

/// The placeholders `mcp-vcr snapshot` puts for what changes between runs.
const NORMALIZED_MARKS: [&str; 4] = ["NORM_ID_", "NORM_TIMESTAMP", "NORM_UUID_", "NORM_CURSOR"];

#[derive(Deserialize)]
struct Message {
    t: Option<Value>,
    dir: Option<String>,
    payload: Option<Value>,
}

#[derive(Deserialize)]
struct NdMeta {
    #[serde(rename = "_type")]
    ty: String,
}

/// True when the file starting with `head` is an mcp-vcr transcript (YAML or NDJSON).
pub fn looks_like(head: &[u8]) -> bool {
    let first = first_line(head);
    if first.first() == Some(&b'{') {
        if let Ok(m) = serde_json::from_slice::<NdMeta>(first) {
            return m.ty == "meta";
        }
        return serde_json::from_slice::<Message>(first).is_ok_and(|m| {
            m.payload.is_some() && m.t.is_some() && matches!(m.dir.as_deref(), Some("c2s" | "s2c"))
        });
    }
    let text = String::from_utf8_lossy(head);
    let key = text
        .lines()
        .map(str::trim_end)
        .find(|l| !l.is_empty() && !l.starts_with('#') && *l != "---");
    matches!(key, Some("messages:" | "meta:" | "messages: []"))
        && (text.contains("\n  payload:")
            || text.contains("\n- dir: c2s")
            || text.contains("\n- dir: s2c")
            || text.contains("\n  recorded_at:"))
}

/// Converts the transcript at `path`, YAML or NDJSON by its first line.
pub fn convert(path: &Path) -> Result<Converted, ConvertError> {
    let mut head = Vec::new();
    {
        use std::io::Read;
        std::fs::File::open(path)?
            .take(super::SNIFF_BYTES as u64)
            .read_to_end(&mut head)?;
    }
    if first_line(&head).first() == Some(&b'{') {
        convert_ndjson(path)
    } else {
        convert_yaml(path)
    }
}

/// What a transcript's `meta` gives: its start, facts and warnings.
struct Head {
    started: Timestamp,
    facts: Map<String, Value>,
    warnings: Vec<String>,
}

fn head_of(meta: Option<&Map<String, Value>>, path: &Path) -> Head {
    let mut warnings = Vec::new();
    let mut facts = Map::new();
    let Some(meta) = meta else {
        warnings.push("no `meta`: times are counted from the file's modification time".into());
        return Head {
            started: mtime(path),
            facts,
            warnings,
        };
    };
    for key in [
        "session_id",
        "protocol_version",
        "server_command",
        "client_hint",
        "schema_version",
        "version",
        "recorded_at",
    ] {
        if let Some(v) = meta.get(key).filter(|v| !v.is_null()) {
            facts.insert(key.into(), v.clone());
        }
    }
    if meta.get("incomplete") == Some(&Value::Bool(true)) {
        let why = meta
            .get("incomplete_reason")
            .and_then(Value::as_str)
            .unwrap_or("no reason given");
        warnings.push(format!("mcp-vcr marked this transcript incomplete ({why})"));
    }
    let started = match meta
        .get("recorded_at")
        .and_then(Value::as_str)
        .and_then(parse_time)
    {
        Some((t, naive)) => {
            if naive {
                warnings.push("`meta.recorded_at` has no UTC offset: read as UTC".into());
            }
            t
        }
        None => {
            warnings.push(
                "no readable `meta.recorded_at`: times are counted from the file's \
                 modification time"
                    .into(),
            );
            mtime(path)
        }
    };
    Head {
        started,
        facts,
        warnings,
    }
}

fn mtime(path: &Path) -> Timestamp {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(Timestamp(0), |d| Timestamp(d.as_millis() as i64))
}

/// What is odd in the messages, counted as they pass.
#[derive(Default)]
struct Oddities {
    backwards: u64,
    redacted: bool,
    normalized: bool,
    last_t: f64,
}

impl Oddities {
    fn note(&mut self, m: &Message) {
        if let Some(t) = m.t.as_ref().and_then(Value::as_f64) {
            if t < self.last_t {
                self.backwards += 1;
            }
            self.last_t = t;
        }
        if self.redacted && self.normalized {
            return;
        }
        if let Some(p) = &m.payload {
            let text = p.to_string();
            self.redacted |= REDACTION_MARKS.iter().any(|mark| text.contains(mark));
            self.normalized |= NORMALIZED_MARKS.iter().any(|mark| text.contains(mark));
        }
    }

    fn warnings(&self, out: &mut Vec<String>) {
        if self.backwards > 0 {
            out.push(format!(
                "{} messages are timed before the message above them",
                self.backwards
            ));
        }
        if self.redacted {
            out.push(
                "mcp-vcr redacted values in it (`<REDACTED_…>`, `<PATH>`): requests holding \
                 them will not match a live client's"
                    .into(),
            );
        }
        if self.normalized {
            out.push(
                "an mcp-vcr snapshot: its ids, timestamps, UUIDs or cursors are placeholders \
                 (`NORM_ID_1`, `NORM_TIMESTAMP`, …), not the values sent"
                    .into(),
            );
        }
    }
}

/// One transcript message as an item.
fn message(started: Timestamp, line: u64, m: Message) -> Result<Item, Problem> {
    let problem = |reason: String| Problem { line, reason };
    let dir = match m.dir.as_deref() {
        Some("c2s") => Dir::In,
        Some("s2c") => Dir::Out,
        other => {
            return Err(problem(format!(
                "`dir` is {}, not \"c2s\" or \"s2c\"",
                super::shown(other)
            )));
        }
    };
    let t = match &m.t {
        Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
        None => 0.0,
        Some(other) => return Err(problem(format!("`t` is {other}, not milliseconds"))),
    };
    let payload = m.payload.ok_or_else(|| problem("no `payload`".into()))?;
    if !payload.is_object() && !payload.is_array() {
        return Err(problem("`payload` is not a JSON-RPC message".into()));
    }
    Ok(Item::Message {
        t: after_ms(started, t),
        dir,
        raw: payload.to_string(),
        session: None,
    })
}

fn convert_yaml(path: &Path) -> Result<Converted, ConvertError> {
    let doc = read_document(path)?;
    let text = std::str::from_utf8(&doc).map_err(|e| {
        ConvertError::Invalid(format!("not an mcp-vcr YAML transcript: not UTF-8: {e}"))
    })?;
    // The parser is slow and hungry on deep nesting and aliases it accepts: the limits
    // are checked first, in one pass.
    let limits = super::yaml_limits::YamlLimits::for_input(doc.len(), super::MAX_DOCUMENT);
    super::yaml_limits::check(text, limits)?;
    let value: Value = serde_norway::from_str(text)
        .map_err(|e| ConvertError::Invalid(format!("not an mcp-vcr YAML transcript: {e}")))?;
    let Value::Object(mut top) = value else {
        return Err(ConvertError::Invalid(
            "not an mcp-vcr transcript: the document is not a mapping".into(),
        ));
    };
    let messages = match top.remove("messages") {
        Some(Value::Array(m)) => m,
        Some(Value::Null) | None => Vec::new(),
        Some(_) => {
            return Err(ConvertError::Invalid("`messages` is not a list".into()));
        }
    };
    if messages.is_empty() {
        return Err(ConvertError::Empty);
    }
    let Head {
        started,
        facts,
        mut warnings,
    } = head_of(top.get("meta").and_then(Value::as_object), path);
    let lines = item_lines(&doc, messages.len());
    let mut odd = Oddities::default();
    let mut items = Vec::with_capacity(messages.len());
    for (i, v) in messages.into_iter().enumerate() {
        let line = lines.get(i).copied().unwrap_or(i as u64 + 1);
        let bytes = v.to_string().into_bytes();
        let item = serde_json::from_value::<Message>(v)
            .map_err(|e| Problem {
                line,
                reason: format!("not an mcp-vcr message: {e}"),
            })
            .and_then(|m| {
                odd.note(&m);
                message(started, line, m)
            });
        items.push(item.map_err(|p| Fault::Bad(p, bytes)));
    }
    odd.warnings(&mut warnings);
    Ok(Converted {
        kind: "mcp",
        transport: None,
        started,
        facts,
        warnings,
        items: Box::new(items.into_iter()),
    })
}

/// The 1-based lines on which the `messages` items start, as mcp-vcr writes them (block
/// style, `- ` at the start of a line); fewer than `n` when the document is laid out
/// otherwise (item numbers are used then).
fn item_lines(doc: &[u8], n: usize) -> Vec<u64> {
    let mut out = Vec::new();
    let mut inside = false;
    for (i, line) in doc.split(|&b| b == b'\n').enumerate() {
        if line.starts_with(b"messages:") {
            inside = true;
        } else if inside && line.starts_with(b"- ") {
            out.push(i as u64 + 1);
        } else if inside
            && line
                .first()
                .is_some_and(|b| !b.is_ascii_whitespace() && *b != b'#')
        {
            inside = false;
        }
    }
    if out.len() == n { out } else { Vec::new() }
}

fn convert_ndjson(path: &Path) -> Result<Converted, ConvertError> {
    let mut meta = None;
    let mut any = false;
    let mut odd = Oddities::default();
    {
        let mut lines = read_lines(path)?;
        while let Some((_, bytes)) = lines.next_line()? {
            let bytes = crate::large::skeleton(bytes);
            let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(&bytes) else {
                continue;
            };
            if o.get("_type").and_then(Value::as_str) == Some("meta") {
                meta.get_or_insert(o);
                continue;
            }
            if let Ok(m) = serde_json::from_value::<Message>(Value::Object(o)) {
                any |= m.payload.is_some();
                odd.note(&m);
            }
        }
    }
    if !any {
        return Err(ConvertError::Empty);
    }
    let Head {
        started,
        facts,
        mut warnings,
    } = head_of(meta.as_ref(), path);
    odd.warnings(&mut warnings);
    Ok(Converted {
        kind: "mcp",
        transport: None,
        started,
        facts,
        warnings,
        items: Box::new(line_items(read_lines(path)?, move |n, bytes| {
            nd_line(started, n, bytes)
        })),
    })
}

/// One NDJSON line: nothing for a blank line or the meta line, else its message.
fn nd_line(started: Timestamp, number: u64, bytes: &[u8]) -> Result<Option<Item>, Fault> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let bad = |reason: String| {
        Fault::Bad(
            Problem {
                line: number,
                reason,
            },
            bytes.to_vec(),
        )
    };
    let v: Value = serde_json::from_slice(bytes).map_err(|e| bad(format!("not JSON: {e}")))?;
    if v.get("_type").and_then(Value::as_str) == Some("meta") {
        return Ok(None);
    }
    let m = serde_json::from_value::<Message>(v)
        .map_err(|e| bad(format!("not an mcp-vcr message: {e}")))?;
    message(started, number, m)
        .map(Some)
        .map_err(|p| Fault::Bad(p, bytes.to_vec()))
}

/// Writes `trace` as an mcp-vcr YAML transcript to `out`: its JSON-RPC messages with
/// `t` in milliseconds since the trace's start (never decreasing: mcp-vcr's schema
/// wants them monotonic), and a `meta` with the trace's start, server command, and the
/// protocol version and client name from its handshake. What the format cannot hold
/// (batches, events, turns, messages of a second session) is left out and counted.
pub fn export(trace: &Path, out: &mut dyn Write) -> Result<Left, ExportError> {
    let mut left = Left::default();
    let mut transcript = Transcript::default();
    super::export_messages(trace, super::Sessions::First, &mut left, |e, _| match e {
        Exported::Meta(m) => {
            transcript.meta(m);
            Ok(())
        }
        Exported::Message(msg) => transcript.message(&msg),
    })?;
    if transcript.messages.is_empty() {
        return Err(ExportError::Unfit(
            "the trace holds no JSON-RPC message for an mcp-vcr transcript".into(),
        ));
    }
    let text = transcript.into_yaml();
    out.write_all(text.as_bytes()).map_err(ExportError::Write)?;
    out.flush().map_err(ExportError::Write)?;
    Ok(left)
}

/// An mcp-vcr transcript being written: what the trace's meta line and handshake say,
/// and the messages so far.
#[derive(Default)]
struct Transcript {
    started: Option<Timestamp>,
    command: Vec<Value>,
    session_id: Option<String>,
    label: String,
    messages: Vec<Value>,
    last_ms: i64,
    protocol: Option<String>,
    client: Option<String>,
}

impl Transcript {
    /// The trace's start, label, server command, and the session id it was imported
    /// with (when mcp-vcr's pattern fits it).
    fn meta(&mut self, m: &reel_trace::line::Meta) {
        self.started = m.started_at.as_deref().and_then(Timestamp::parse);
        self.label = m.label.clone().unwrap_or_default();
        self.command = match &m.command {
            Some(Value::Array(a)) => a.iter().filter(|v| v.is_string()).cloned().collect(),
            Some(Value::String(s)) => vec![s.clone().into()],
            _ => Vec::new(),
        };
        self.session_id = m
            .extra
            .get("imported")
            .and_then(|i| i.get("session_id"))
            .and_then(Value::as_str)
            .filter(|s| is_session_id(s))
            .map(str::to_owned);
    }

    /// One message, timed in milliseconds since the start (never decreasing); the
    /// client's name from its `initialize`, the protocol version from the server's
    /// first answer.
    fn message(&mut self, msg: &Outgoing<'_>) -> Result<(), ExportError> {
        let payload: Value = serde_json::from_str(msg.raw)
            .map_err(|e| ExportError::Unfit(format!("a message that is not JSON: {e}")))?;
        let dir = if msg.dir == Dir::In { "c2s" } else { "s2c" };
        if dir == "c2s" && payload.get("method").and_then(Value::as_str) == Some("initialize") {
            self.client = payload
                .pointer("/params/clientInfo/name")
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        if dir == "s2c" && self.protocol.is_none() {
            self.protocol = payload
                .pointer("/result/protocolVersion")
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        let start = *self.started.get_or_insert(msg.t.unwrap_or(Timestamp(0)));
        let ms = msg
            .t
            .map_or(self.last_ms, |t| (t.0 - start.0).max(self.last_ms));
        self.last_ms = ms;
        let mut m = Map::new();
        m.insert("dir".into(), dir.into());
        m.insert("payload".into(), payload);
        m.insert("t".into(), ms.into());
        self.messages.push(Value::Object(m));
        Ok(())
    }

    /// The YAML document: the messages, then the `meta` (a session id derived from the
    /// label and start when the trace has none of mcp-vcr's shape).
    fn into_yaml(self) -> String {
        let started = self.started.unwrap_or(Timestamp(0));
        let label = self.label;
        let session_id = self.session_id.unwrap_or_else(|| {
            use sha2::Digest;
            let digest = sha2::Sha256::digest(format!("{label}\n{}", started.0).as_bytes());
            hex::encode(&digest[..4])
        });
        let mut meta = Map::new();
        if let Some(c) = self.client {
            meta.insert("client_hint".into(), c.into());
        }
        if let Some(p) = self.protocol {
            meta.insert("protocol_version".into(), p.into());
        }
        meta.insert(
            "recorded_at".into(),
            started.to_iso().as_str().to_owned().into(),
        );
        meta.insert("schema_version".into(), "1.0".into());
        meta.insert("server_command".into(), self.command.into());
        meta.insert("session_id".into(), session_id.into());
        meta.insert("version".into(), 1.into());
        let mut doc = Map::new();
        doc.insert("messages".into(), self.messages.into());
        doc.insert("meta".into(), meta.into());
        let mut text = String::new();
        yaml::map(&doc, 0, &mut text);
        text
    }
}

mod yaml;

/// mcp-vcr's `session_id` pattern: eight lowercase hex digits.
fn is_session_id(s: &str) -> bool {
    s.len() >= 8
        && s.as_bytes()[..8]
            .iter()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests;
