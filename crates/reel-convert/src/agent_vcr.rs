//! agent-vcr `.vcr` files: one JSON document (agent-vcr's pydantic `VCRRecording`,
//! research: peers.md §6): `format_version`, `metadata` (`recorded_at`, `transport`,
//! `server_command`, `server_args`, ids, tags), and `session` with the
//! `initialize_request` / `initialize_response` pair and `interactions`, each a client
//! request with its response, the server notifications agent-vcr buffered before that
//! response, `timestamp` (when the response came) and `latency_ms`.
//!
//! The messages come out as a wire would have carried them: the request at
//! `timestamp - latency_ms`, its notifications, then the response at `timestamp`; the
//! handshake at `recorded_at`. The `null` members pydantic writes for what a message did
//! not have (`params`, `error`, `result` beside an error, `error.data`) are dropped, so
//! a request reads back as it was sent. Times without an offset (agent-vcr writes local
//! naive times) are read as UTC, with a warning.

use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{ConvertError, Converted, Fault, Item, Problem, after_ms, parse_time, read_document};
use reel_trace::Timestamp;
use reel_trace::line::Dir;

/// What the format cannot hold.
pub const LIMITS: &str = "agent-vcr files hold the client's requests with their responses \
     and the server notifications before each response: no client notifications (it rejects \
     them, notifications/initialized included), no server-to-client requests or their \
     answers, no stderr or HTTP facts, notification times not at all, and request times only \
     as the response's time less its latency";

#[derive(Deserialize)]
struct Recording<'a> {
    #[serde(default)]
    format_version: Option<Value>,
    #[serde(default)]
    metadata: Map<String, Value>,
    #[serde(borrow)]
    session: Session<'a>,
}

#[derive(Deserialize)]
struct Session<'a> {
    initialize_request: Option<Value>,
    initialize_response: Option<Value>,
    #[serde(default, borrow)]
    interactions: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct Interaction {
    timestamp: String,
    request: Value,
    #[serde(default)]
    response: Option<Value>,
    #[serde(default)]
    notifications: Vec<Value>,
    #[serde(default)]
    latency_ms: Option<f64>,
}

/// True when the file starting with `head` is an agent-vcr recording: a JSON object
/// whose `format_version` is a string (mcp-cassette's is a number) and that has an
/// `initialize_request`.
pub fn looks_like(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let text = text.trim_start();
    if !text.starts_with('{') || !text.contains("\"initialize_request\"") {
        return false;
    }
    let Some(at) = text.find("\"format_version\"") else {
        return false;
    };
    let rest = text[at + "\"format_version\"".len()..].trim_start();
    rest.strip_prefix(':')
        .is_some_and(|r| r.trim_start().starts_with('"'))
}

/// Converts the recording at `path`.
pub fn convert(path: &Path) -> Result<Converted, ConvertError> {
    let doc = read_document(path)?;
    let rec: Recording<'_> = serde_json::from_slice(&doc)
        .map_err(|e| ConvertError::Invalid(format!("not an agent-vcr recording: {e}")))?;
    let mut warnings = Vec::new();
    let mut naive = false;
    let recorded_at = rec.metadata.get("recorded_at").and_then(Value::as_str);
    let started = match recorded_at.and_then(parse_time) {
        Some((t, n)) => {
            naive |= n;
            t
        }
        None => {
            warnings.push(
                "no readable `metadata.recorded_at`: the handshake is timed at the first \
                 interaction"
                    .into(),
            );
            first_time(&rec.session).ok_or(ConvertError::Empty)?
        }
    };
    // Stopped before any handshake, agent-vcr writes a made-up one (id 0, empty params)
    // and no interactions: there is nothing recorded to convert.
    if is_placeholder(&rec.session) {
        return Err(ConvertError::Empty);
    }
    let mut items: Vec<Result<Item, Fault>> = Vec::new();
    for (member, dir) in [
        (&rec.session.initialize_request, Dir::In),
        (&rec.session.initialize_response, Dir::Out),
    ] {
        if let Some(v) = member.clone().filter(Value::is_object) {
            items.push(Ok(message(started, dir, v)));
        }
    }
    for raw in &rec.session.interactions {
        naive |= interaction(&doc, raw, &mut items);
    }
    if items.is_empty() {
        return Err(ConvertError::Empty);
    }
    if naive {
        warnings.push(
            "its times have no UTC offset (agent-vcr writes the recording machine's local \
             time): read as UTC"
                .into(),
        );
    }
    Ok(Converted {
        kind: "mcp",
        transport: transport(&rec),
        started,
        facts: facts(&rec),
        warnings,
        items: Box::new(items.into_iter()),
    })
}

/// The made-up handshake agent-vcr writes when stopped before any (id 0, empty params,
/// no interactions).
fn is_placeholder(session: &Session<'_>) -> bool {
    session.interactions.is_empty()
        && session.initialize_request.as_ref().is_some_and(|r| {
            r.get("id") == Some(&Value::from(0))
                && r.get("params") == Some(&Value::Object(Map::new()))
        })
}

fn message(t: Timestamp, dir: Dir, v: Value) -> Item {
    Item::Message {
        t,
        dir,
        raw: clean(v).to_string(),
        session: None,
    }
}

/// One interaction's items: its request, asked at its response's time less its
/// latency, the notifications before the response, and the response; or why it cannot
/// be read. True when its time has no UTC offset.
fn interaction(doc: &[u8], raw: &RawValue, items: &mut Vec<Result<Item, Fault>>) -> bool {
    let line = line_of(doc, raw.get());
    let bad = |reason: String| {
        Err(Fault::Bad(
            Problem { line, reason },
            raw.get().as_bytes().to_vec(),
        ))
    };
    let it: Interaction = match serde_json::from_str(raw.get()) {
        Ok(it) => it,
        Err(e) => {
            items.push(bad(format!("not an agent-vcr interaction: {e}")));
            return false;
        }
    };
    let Some((answered, naive)) = parse_time(&it.timestamp) else {
        items.push(bad(format!("`timestamp` {:?} is not a time", it.timestamp)));
        return false;
    };
    if !it.request.is_object() {
        items.push(bad("`request` is not a JSON-RPC message".into()));
        return false;
    }
    let asked = after_ms(answered, -it.latency_ms.unwrap_or(0.0).max(0.0));
    items.push(Ok(message(asked, Dir::In, it.request)));
    for n in it.notifications.into_iter().filter(Value::is_object) {
        items.push(Ok(message(asked, Dir::Out, n)));
    }
    if let Some(r) = it.response.filter(Value::is_object) {
        items.push(Ok(message(answered, Dir::Out, r)));
    }
    naive
}

/// The trace's transport: agent-vcr's `stdio`, or `http` for its `sse`.
fn transport(rec: &Recording<'_>) -> Option<String> {
    match rec.metadata.get("transport").and_then(Value::as_str) {
        Some("stdio") => Some("stdio".to_owned()),
        Some("sse") => Some("http".to_owned()),
        _ => None,
    }
}

/// What the recording says of itself.
fn facts(rec: &Recording<'_>) -> Map<String, Value> {
    let mut facts = Map::new();
    if let Some(v) = &rec.format_version {
        facts.insert("format_version".into(), v.clone());
    }
    let meta = &rec.metadata;
    for key in [
        "version",
        "transport",
        "session_id",
        "endpoint_id",
        "agent_id",
        "server_url",
    ] {
        if let Some(v) = meta.get(key).filter(|v| !v.is_null()) {
            facts.insert(key.into(), v.clone());
        }
    }
    for key in ["client_info", "server_info", "tags"] {
        if let Some(v) = meta
            .get(key)
            .filter(|v| v.as_object().is_some_and(|o| !o.is_empty()))
        {
            facts.insert(key.into(), v.clone());
        }
    }
    if let Some(cmd) = meta.get("server_command").and_then(Value::as_str) {
        let mut words = vec![Value::from(cmd)];
        if let Some(args) = meta.get("server_args").and_then(Value::as_array) {
            words.extend(args.iter().cloned());
        }
        facts.insert("server_command".into(), words.into());
    }
    facts
}

/// The time of the first interaction that has one.
fn first_time(session: &Session<'_>) -> Option<Timestamp> {
    session.interactions.iter().find_map(|raw| {
        let it: Interaction = serde_json::from_str(raw.get()).ok()?;
        parse_time(&it.timestamp).map(|(t, _)| t)
    })
}

/// The 1-based line of the document on which `part` (a slice of it) starts.
fn line_of(doc: &[u8], part: &str) -> u64 {
    let offset = (part.as_ptr() as usize).saturating_sub(doc.as_ptr() as usize);
    let before = doc.get(..offset).unwrap_or_default();
    before.iter().filter(|&&b| b == b'\n').count() as u64 + 1
}

/// The message without the `null` members pydantic adds for what it did not have.
fn clean(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        let has_error = o.get("error").is_some_and(|e| !e.is_null());
        o.retain(|k, v| match k.as_str() {
            "params" => !v.is_null(),
            "error" => has_error,
            "result" => !(v.is_null() && has_error),
            _ => true,
        });
        if let Some(e) = o.get_mut("error").and_then(Value::as_object_mut) {
            e.retain(|k, v| k != "data" || !v.is_null());
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const DOC: &str = r#"{
  "format_version": "1.0.0",
  "metadata": {
    "version": "1.0",
    "recorded_at": "2026-11-30T06:47:32.566488",
    "transport": "stdio",
    "client_info": {},
    "server_command": "python3",
    "server_args": ["demo_server.py"],
    "session_id": null
  },
  "session": {
    "initialize_request": {"jsonrpc": "2.0", "id": 1, "method": "initialize",
      "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}},
    "initialize_response": {"jsonrpc": "2.0", "id": 1,
      "result": {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "d", "version": "1"}},
      "error": null},
    "capabilities": {},
    "interactions": [
      {
        "sequence": 0,
        "timestamp": "2026-11-30T06:47:34.643460",
        "direction": "server_to_client",
        "request": {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": null},
        "response": {"jsonrpc": "2.0", "id": 2, "result": null,
          "error": {"code": -32601, "message": "no", "data": null}},
        "notifications": [{"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "x"}}],
        "latency_ms": 2.4
      },
      {
        "sequence": 1,
        "timestamp": "yesterday",
        "request": {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
        "latency_ms": 1
      },
      {"sequence": 2}
    ]
  }
}"#;

    fn file(text: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        f
    }

    #[test]
    fn a_recording_becomes_its_messages_in_wire_order() {
        assert!(looks_like(DOC.as_bytes()));
        let f = file(DOC);
        let c = convert(f.path()).unwrap();
        assert_eq!(c.transport.as_deref(), Some("stdio"));
        assert_eq!(
            c.started,
            Timestamp::parse("2026-11-30T06:47:32.566Z").unwrap()
        );
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        assert!(c.warnings[0].contains("read as UTC"));
        assert_eq!(
            c.facts["server_command"],
            serde_json::json!(["python3", "demo_server.py"])
        );
        assert!(!c.facts.contains_key("session_id"));
        let items: Vec<_> = c.items.collect();
        let msgs: Vec<(Dir, Value, Timestamp)> = items
            .iter()
            .filter_map(|i| match i {
                Ok(Item::Message { dir, raw, t, .. }) => {
                    Some((*dir, serde_json::from_str(raw).unwrap(), *t))
                }
                _ => None,
            })
            .collect();
        assert_eq!(msgs.len(), 5);
        assert_eq!(
            msgs[1].1.get("error"),
            None,
            "pydantic's null error dropped"
        );
        assert_eq!(msgs[2].1["method"], "tools/list");
        assert_eq!(msgs[2].1.get("params"), None);
        assert_eq!(
            msgs[2].2,
            Timestamp::parse("2026-11-30T06:47:34.641Z").unwrap()
        );
        assert_eq!(msgs[3].0, Dir::Out);
        assert_eq!(
            msgs[4].1["error"],
            serde_json::json!({"code": -32601, "message": "no"})
        );
        assert_eq!(msgs[4].1.get("result"), None);
        assert_eq!(
            msgs[4].2,
            Timestamp::parse("2026-11-30T06:47:34.643Z").unwrap()
        );
        let bad: Vec<&Problem> = items
            .iter()
            .filter_map(|i| match i {
                Err(Fault::Bad(p, _)) => Some(p),
                _ => None,
            })
            .collect();
        assert_eq!(bad.len(), 2);
        assert!(bad[0].reason.contains("yesterday"));
        assert_eq!(bad[0].line, 30);
        assert_eq!(bad[1].line, 36);
    }

    #[test]
    fn other_documents_are_refused() {
        assert!(!looks_like(
            b"{\n  \"format_version\": 3,\n  \"initialize_request\": {}"
        ));
        assert!(!looks_like(br#"{"v":1,"type":"meta"}"#));
        assert!(!looks_like(b"messages:\n- dir: c2s\n"));
        assert!(!looks_like(b""));
        for text in [
            "{\"format_version\": \"1.0.0\"",
            "[1, 2]",
            "{\"session\": 3}",
        ] {
            let f = file(text);
            assert!(
                matches!(convert(f.path()), Err(ConvertError::Invalid(_))),
                "{text}"
            );
        }
        let f = file(r#"{"metadata": {}, "session": {"interactions": []}}"#);
        assert!(matches!(convert(f.path()), Err(ConvertError::Empty)));
        // What agent-vcr writes when no initialize passed through it.
        let placeholder = r#"{"format_version": "1.0.0", "metadata": {"recorded_at": "2026-11-30T06:47:32"},
            "session": {"initialize_request": {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}},
            "initialize_response": {"jsonrpc": "2.0", "id": 0, "result": {"capabilities": {}}, "error": null},
            "capabilities": {}, "interactions": []}}"#;
        assert!(looks_like(placeholder.as_bytes()));
        let f = file(placeholder);
        assert!(matches!(convert(f.path()), Err(ConvertError::Empty)));
    }
}
