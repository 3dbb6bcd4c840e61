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
    ConvertError, Converted, ExportError, Fault, Item, Left, Problem, after_ms, first_line,
    line_items, parse_time, read_document, read_lines,
};
use crate::line::Dir;
use crate::time::Timestamp;

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
    let value: Value = serde_norway::from_slice(&doc)
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
            let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(bytes) else {
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
    use crate::line::Line;
    let mut reader = crate::reader::TraceReader::open(trace)?;
    let mut left = Left::default();
    let other = "other lines (stderr, non-JSON output, HTTP facts)";
    let mut started: Option<Timestamp> = None;
    let mut command: Vec<Value> = Vec::new();
    let mut session_id: Option<String> = None;
    let mut label = String::new();
    let mut first_session: Option<Option<String>> = None;
    let mut messages = Vec::new();
    let mut last_ms = 0i64;
    let mut protocol: Option<String> = None;
    let mut client: Option<String> = None;
    while let Some(line) = reader.next_line() {
        let line = line?;
        let Ok(parsed) = line.parse() else {
            left.add(other);
            continue;
        };
        let view = match &parsed {
            Line::Meta(m) => {
                started = m.started_at.as_deref().and_then(Timestamp::parse);
                label = m.label.clone().unwrap_or_default();
                command = match &m.command {
                    Some(Value::Array(a)) => a.iter().filter(|v| v.is_string()).cloned().collect(),
                    Some(Value::String(s)) => vec![s.clone().into()],
                    _ => Vec::new(),
                };
                session_id = m
                    .extra
                    .get("imported")
                    .and_then(|i| i.get("session_id"))
                    .and_then(Value::as_str)
                    .filter(|s| is_session_id(s))
                    .map(str::to_owned);
                continue;
            }
            Line::Message(v) => v,
            Line::End(_) => continue,
            Line::Turn(_) => {
                left.add("turns");
                continue;
            }
            _ => {
                left.add(other);
                continue;
            }
        };
        let dir = match view.dir() {
            Some(Dir::In) => "c2s",
            Some(Dir::Out) => "s2c",
            _ => {
                left.add(other);
                continue;
            }
        };
        let session = view.session.as_deref().map(str::to_owned);
        if first_session.get_or_insert_with(|| session.clone()) != &session {
            left.add("messages of other sessions");
            continue;
        }
        let Some(payload) = view
            .raw_str()
            .and_then(|r| serde_json::from_str::<Value>(r).ok())
        else {
            left.add(other);
            continue;
        };
        if payload.is_array() {
            left.add("batches");
            continue;
        }
        if !payload.is_object() {
            left.add(other);
            continue;
        }
        if dir == "c2s" && payload.get("method").and_then(Value::as_str) == Some("initialize") {
            client = payload
                .pointer("/params/clientInfo/name")
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        if dir == "s2c" && protocol.is_none() {
            protocol = payload
                .pointer("/result/protocolVersion")
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        let t = view.t.as_deref().and_then(Timestamp::parse);
        let start = *started.get_or_insert(t.unwrap_or(Timestamp(0)));
        let ms = t.map_or(last_ms, |t| (t.0 - start.0).max(last_ms));
        last_ms = ms;
        let mut m = Map::new();
        m.insert("dir".into(), dir.into());
        m.insert("payload".into(), payload);
        m.insert("t".into(), ms.into());
        messages.push(Value::Object(m));
    }
    if messages.is_empty() {
        return Err(ExportError::Unfit(
            "the trace holds no JSON-RPC message for an mcp-vcr transcript".into(),
        ));
    }
    let started = started.unwrap_or(Timestamp(0));
    let session_id = session_id.unwrap_or_else(|| {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(format!("{label}\n{}", started.0).as_bytes());
        hex::encode(&digest[..4])
    });
    let mut meta = Map::new();
    if let Some(c) = client {
        meta.insert("client_hint".into(), c.into());
    }
    if let Some(p) = protocol {
        meta.insert("protocol_version".into(), p.into());
    }
    meta.insert(
        "recorded_at".into(),
        started.to_iso().as_str().to_owned().into(),
    );
    meta.insert("schema_version".into(), "1.0".into());
    meta.insert("server_command".into(), command.into());
    meta.insert("session_id".into(), session_id.into());
    meta.insert("version".into(), 1.into());
    let mut doc = Map::new();
    doc.insert("messages".into(), messages.into());
    doc.insert("meta".into(), meta.into());
    let mut text = String::new();
    yaml::map(&doc, 0, &mut text);
    out.write_all(text.as_bytes()).map_err(ExportError::Write)?;
    out.flush().map_err(ExportError::Write)?;
    Ok(left)
}

/// YAML as mcp-vcr's PyYAML reads it back: block style like its own files, and every
/// string double-quoted. PyYAML resolves plain scalars by YAML 1.1, where `2025-11-25`
/// is a date, `yes` a boolean and `1e5` a string; a YAML 1.2 emitter leaves those
/// plain, and mcp-vcr then refuses the transcript (`protocol_version: Input should be a
/// valid string`). Quoting every string, and writing floats the way 1.1 wants them,
/// keeps each value the type it was.
mod yaml {
    use serde_json::{Map, Value};

    /// A mapping's entries at `indent`.
    pub fn map(m: &Map<String, Value>, indent: usize, out: &mut String) {
        for (k, v) in m {
            pad(indent, out);
            key(k, out);
            out.push(':');
            match v {
                Value::Object(o) if !o.is_empty() => {
                    out.push('\n');
                    map(o, indent + 2, out);
                }
                Value::Array(a) if !a.is_empty() => {
                    out.push('\n');
                    seq(a, indent, out);
                }
                _ => {
                    out.push(' ');
                    scalar(v, out);
                    out.push('\n');
                }
            }
        }
    }

    /// A sequence's items at `indent`.
    pub fn seq(a: &[Value], indent: usize, out: &mut String) {
        for v in a {
            pad(indent, out);
            out.push('-');
            match v {
                Value::Object(o) if !o.is_empty() => {
                    // The first entry on the dash's line, the rest below it.
                    let mut inner = String::new();
                    map(o, indent + 2, &mut inner);
                    out.push(' ');
                    out.push_str(&inner[indent + 2..]);
                }
                Value::Array(a) if !a.is_empty() => {
                    out.push('\n');
                    seq(a, indent + 2, out);
                }
                _ => {
                    out.push(' ');
                    scalar(v, out);
                    out.push('\n');
                }
            }
        }
    }

    fn pad(indent: usize, out: &mut String) {
        out.extend(std::iter::repeat_n(' ', indent));
    }

    /// A key: plain when it is a word YAML 1.1 reads as a string, else quoted.
    fn key(k: &str, out: &mut String) {
        let word = k
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let special = matches!(
            k.to_ascii_lowercase().as_str(),
            "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false" | "null"
        );
        if word && !special {
            out.push_str(k);
        } else {
            quoted(k, out);
        }
    }

    fn scalar(v: &Value, out: &mut String) {
        match v {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => number(&n.to_string(), out),
            Value::String(s) => quoted(s, out),
            Value::Array(_) => out.push_str("[]"),
            Value::Object(_) => out.push_str("{}"),
        }
    }

    /// A number; YAML 1.1 floats need a `.` and a signed exponent (`1e5` is a string
    /// there, `1.0e+5` a float).
    fn number(n: &str, out: &mut String) {
        match n.split_once(['e', 'E']) {
            Some((mantissa, exp)) => {
                out.push_str(mantissa);
                if !mantissa.contains('.') {
                    out.push_str(".0");
                }
                out.push('e');
                if !exp.starts_with(['+', '-']) {
                    out.push('+');
                }
                out.push_str(exp);
            }
            None => out.push_str(n),
        }
    }

    /// A double-quoted scalar; what YAML would fold or refuse (line breaks, control
    /// and non-printable characters) escaped.
    fn quoted(s: &str, out: &mut String) {
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                c if (c as u32) < 0x20
                    || (0x7f..=0x9f).contains(&(c as u32))
                    || matches!(
                        c,
                        '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
                    ) =>
                {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }
}

/// mcp-vcr's `session_id` pattern: eight lowercase hex digits.
fn is_session_id(s: &str) -> bool {
    s.len() >= 8
        && s.as_bytes()[..8]
            .iter()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const YAML: &str = "messages:
- dir: c2s
  payload:
    id: 1
    jsonrpc: '2.0'
    method: initialize
    params:
      clientInfo:
        name: demo-client
        version: '0.1'
      protocolVersion: '2025-06-18'
  t: 343
- dir: s2c
  payload:
    id: 1
    jsonrpc: '2.0'
    result:
      protocolVersion: '2025-06-18'
  t: 409
- dir: sideways
  payload: {}
  t: 410
- dir: c2s
  payload:
    id: 4
    jsonrpc: '2.0'
    method: tools/call
    params:
      arguments:
        token: <REDACTED_token>
      name: add
  t: 400
meta:
  client_hint: demo-client
  protocol_version: '2025-06-18'
  recorded_at: '2026-11-30T06:34:43.945345Z'
  schema_version: '1.0'
  server_command:
  - python3
  - demo_server.py
  session_id: 7f2ab8f9
  version: 1
";

    const NDJSON: &str = concat!(
        r#"{"_type": "meta", "version": 1, "recorded_at": "2026-11-30T06:34:45.297225Z", "session_id": "a434e8ab", "server_command": ["python3", "demo_server.py"], "schema_version": "1.0", "protocol_version": "2025-06-18", "client_hint": "demo-client"}"#,
        "\n",
        r#"{"t": 315, "dir": "c2s", "payload": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}}"#,
        "\n",
        r#"{"t": 362, "dir": "s2c", "payload": {"jsonrpc": "2.0", "id": 1, "result": {}}}"#,
        "\n\n",
        r#"{"t": 363, "dir": "c2s", "payload": {"jsonrpc": "2.0", "method": "notif"#,
        "\n",
        r#"{"t": "soon", "dir": "c2s", "payload": {}}"#,
        "\n",
    );

    fn file(text: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        f
    }

    fn messages(items: &[Result<Item, Fault>]) -> Vec<(Dir, Value, Timestamp)> {
        items
            .iter()
            .filter_map(|i| match i {
                Ok(Item::Message { dir, raw, t, .. }) => {
                    Some((*dir, serde_json::from_str(raw).unwrap(), *t))
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_yaml_transcript_becomes_its_messages() {
        assert!(looks_like(YAML.as_bytes()));
        let f = file(YAML);
        let c = convert(f.path()).unwrap();
        let start = Timestamp::parse("2026-11-30T06:34:43.945Z").unwrap();
        assert_eq!(c.started, start);
        assert_eq!(c.facts["session_id"], "7f2ab8f9");
        assert_eq!(c.facts["protocol_version"], "2025-06-18");
        assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
        assert!(c.warnings[0].contains("timed before"));
        assert!(c.warnings[1].contains("redacted"));
        let items: Vec<_> = c.items.collect();
        let msgs = messages(&items);
        assert_eq!(msgs.len(), 3);
        assert_eq!(msgs[0].0, Dir::In);
        assert_eq!(msgs[0].1["jsonrpc"], "2.0", "a string, as YAML quoted it");
        assert_eq!(msgs[0].2, Timestamp(start.0 + 343));
        assert_eq!(msgs[1].0, Dir::Out);
        match &items[2] {
            Err(Fault::Bad(p, _)) => {
                assert_eq!(p.line, 20, "the item's line");
                assert!(p.reason.contains("sideways"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_ndjson_transcript_streams_and_torn_lines_are_problems() {
        assert!(looks_like(NDJSON.as_bytes()));
        let f = file(NDJSON);
        let c = convert(f.path()).unwrap();
        assert_eq!(
            c.started,
            Timestamp::parse("2026-11-30T06:34:45.297Z").unwrap()
        );
        assert_eq!(
            c.facts["server_command"],
            serde_json::json!(["python3", "demo_server.py"])
        );
        let items: Vec<_> = c.items.collect();
        assert_eq!(items.len(), 4);
        assert_eq!(messages(&items).len(), 2);
        assert!(matches!(&items[2], Err(Fault::Bad(p, _)) if p.line == 5));
        assert!(
            matches!(&items[3], Err(Fault::Bad(p, _)) if p.line == 6 && p.reason.contains("soon"))
        );
    }

    #[test]
    fn other_files_are_not_transcripts() {
        assert!(!looks_like(
            br#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z"}"#
        ));
        assert!(!looks_like(
            br#"{"jsonrpc":"2.0","id":1,"_meta":{"dir":"send","server":"d","ts":"2026-01-01T00:00:00Z"}}"#
        ));
        assert!(!looks_like(
            br#"{"ts": 1.5, "dir": "client->server", "msg": {}}"#
        ));
        assert!(!looks_like(b"{\n  \"format_version\": \"1.0.0\","));
        assert!(!looks_like(b"name: ci\non:\n  push:\n"));
        assert!(!looks_like(b""));
        for (text, empty) in [
            ("messages: []\nmeta: {}\n", true),
            ("messages: 3\n", false),
            ("- a\n- b\n", false),
            ("messages:\n- dir: c2s\n  payload: {\n", false),
            ("{\"_type\": \"meta\"}\n", true),
        ] {
            let f = file(text);
            let r = convert(f.path());
            if empty {
                assert!(matches!(r, Err(ConvertError::Empty)), "{text}: {r:?}");
            } else {
                assert!(matches!(r, Err(ConvertError::Invalid(_))), "{text}: {r:?}");
            }
        }
        let f = file("messages:\n- dir: c2s\n  payload: {id: 1, method: ping}\n");
        let c = convert(f.path()).unwrap();
        assert!(c.warnings[0].contains("no `meta`"), "{:?}", c.warnings);
        let f = file("messages:\n- dir: c2s\n  payload: {id: NORM_ID_1, method: ping}\n");
        let c = convert(f.path()).unwrap();
        assert!(c.warnings[1].contains("snapshot"), "{:?}", c.warnings);
    }

    #[test]
    fn an_export_reads_back_as_the_same_messages() {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("t.jsonl");
        let lines = [
            r#"{"v":1,"type":"meta","startedAt":"2026-11-30T06:34:43.000Z","label":"demo","command":["python3","demo_server.py"]}"#,
            r#"{"t":"2026-11-30T06:34:43.010Z","dir":"in","raw":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"c","version":"1"}}}}"#,
            r#"{"t":"2026-11-30T06:34:43.020Z","dir":"out","raw":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","n":1.5,"big":12345678901234,"f":1e20,"on":"yes","s":"a\"b\nc\u2028","e":[],"o":{},"l":[[1,{"k":null}],{"a":true}]}}}"#,
            r#"{"t":"2026-11-30T06:34:43.015Z","dir":"in","raw":[{"jsonrpc":"2.0","method":"a"}]}"#,
            r#"{"t":"2026-11-30T06:34:43.030Z","dir":"event","kind":"stderr","text":"hi"}"#,
            r#"{"t":"2026-11-30T06:34:43.025Z","dir":"in","raw":{"jsonrpc":"2.0","method":"notifications/initialized","params":{"s":"true"}}}"#,
            r#"{"type":"end","t":"2026-11-30T06:34:43.040Z","reason":"eof"}"#,
        ];
        std::fs::write(&trace, lines.join("\n") + "\n").unwrap();
        let mut out = Vec::new();
        let left = export(&trace, &mut out).unwrap();
        assert_eq!(left.0.get("batches"), Some(&1));
        assert_eq!(left.0.values().sum::<u64>(), 2, "{left}");
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("messages:\n"), "{text}");
        let back = dir.path().join("back.yaml");
        std::fs::write(&back, &text).unwrap();
        assert!(looks_like(text.as_bytes()));
        let c = convert(&back).unwrap();
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        assert_eq!(c.facts["client_hint"], "c");
        assert_eq!(c.facts["protocol_version"], "2025-06-18");
        assert!(is_session_id(c.facts["session_id"].as_str().unwrap()));
        let items: Vec<_> = c.items.collect();
        let msgs = messages(&items);
        assert_eq!(msgs.len(), 3);
        assert!(
            text.contains("    protocolVersion: \"2025-06-18\"\n"),
            "{text}"
        );
        assert!(text.contains("    \"on\": \"yes\"\n"), "{text}");
        assert!(text.contains("    f: 1.0e+20\n"), "{text}");
        let result = serde_json::from_str::<Value>(lines[2]).unwrap()["raw"]["result"].clone();
        assert_eq!(msgs[1].1["result"], result, "every value as it was");
        assert_eq!(msgs[1].1["result"]["n"], 1.5);
        assert_eq!(msgs[1].1["result"]["big"], 12345678901234u64);
        assert_eq!(msgs[2].1["params"]["s"], "true", "a string stays a string");
        assert_eq!(
            msgs[2].2,
            Timestamp::parse("2026-11-30T06:34:43.025Z").unwrap()
        );
        let empty = dir.path().join("e.jsonl");
        std::fs::write(&empty, format!("{}\n", lines[0])).unwrap();
        assert!(matches!(
            export(&empty, &mut Vec::new()),
            Err(ExportError::Unfit(_))
        ));
    }

    fn json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            (-1e300f64..1e300).prop_map(Value::from),
            any::<String>().prop_map(Value::from),
            prop_oneof![
                Just("2025-11-25"),
                Just("yes"),
                Just("~"),
                Just("1e5"),
                Just("0o17"),
                Just("- a"),
                Just("a: b"),
                Just("#x"),
                Just(""),
            ]
            .prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                proptest::collection::btree_map(any::<String>(), inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn the_yaml_written_reads_back_as_the_same_values(v in json()) {
            let mut doc = Map::new();
            doc.insert("v".into(), v.clone());
            let mut text = String::new();
            yaml::map(&doc, 0, &mut text);
            let back: Value = serde_norway::from_str(&text).unwrap();
            proptest::prop_assert_eq!(&back["v"], &v, "{}", text);
        }
    }
}
