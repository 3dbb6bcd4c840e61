//! mcp-recorder's cassettes: one JSON document (research: peers.md §4), `{version: "1.x",
//! metadata: {recorded_at, server_url, transport_type, protocol_version, server_info},
//! interactions: [{type, request, response, response_is_sse, response_status,
//! latency_ms, http_method, http_path}]}`. A `jsonrpc_request` interaction is the
//! client's request (`dir: "in"`) and the one response its proxy kept (`"out"`); a
//! `notification` is a client notification; a `lifecycle` one is an HTTP GET or DELETE
//! with no JSON-RPC body, kept as an `mcp-recorder.lifecycle` event.
//!
//! Times: the file has none per message. `recorded_at` is stamped when the recording
//! starts; each interaction's request is placed after the latencies of those before it,
//! its response `latency_ms` later. The order is the file's (mcp-recorder appends an
//! interaction when its response is complete).
//!
//! mcp-recorder stores only the first SSE event of a streamed response: when the server
//! sent a notification (progress, a log message) or a request of its own before the
//! result, that event is the interaction's `response` and the result is lost. Such a
//! `response` is converted as what it is, a server message, the request left unanswered,
//! and a warning names each lost result.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::cassette::{Probe as Shape, line_of, member_value, trim_to_char, whole_first_line};
use super::{ConvertError, Converted, Fault, Item, Problem, after_ms, parse_time, read_document};
use reel_trace::Timestamp;
use reel_trace::line::Dir;

/// `kind` of an HTTP GET or DELETE the recorder saw.
pub const LIFECYCLE: &str = "mcp-recorder.lifecycle";

/// What the format cannot hold.
pub const LIMITS: &str = "mcp-recorder cassettes hold one client request or notification \
     and at most one server message per interaction, with no per-message times (reel \
     places them from recorded_at and the cumulative latency_ms), no server notifications \
     or server-to-client requests over stdio, only the first SSE event of an HTTP response \
     (a result sent after a progress notification is lost), no HTTP headers and no batches";

/// The major `version` reel reads (mcp-recorder 0.5.0 writes "1.0").
const MAJOR: &str = "1";

/// True when the file starting with `head` is an mcp-recorder cassette: a JSON object
/// with `interactions` and a member only mcp-recorder writes (`transport_type`,
/// `latency_ms`, `response_is_sse`), and no `format_version` (agent-vcr's `.vcr` files
/// also have `metadata` and `interactions`, below `session`).
pub fn looks_like(head: &[u8]) -> bool {
    if let Some(members) = whole_first_line(head) {
        return members.contains_key("interactions")
            && !members.contains_key("format_version")
            && members.contains_key("metadata");
    }
    let Ok(text) = std::str::from_utf8(trim_to_char(head)) else {
        return false;
    };
    let text = text.trim_start_matches('\u{feff}').trim_start();
    text.starts_with('{')
        && text.contains("\"interactions\"")
        && member_value(text, "format_version").is_none()
        && [
            "\"transport_type\"",
            "\"latency_ms\"",
            "\"response_is_sse\"",
        ]
        .iter()
        .any(|m| text.contains(m))
}

#[derive(Deserialize)]
struct Interaction<'a> {
    #[serde(rename = "type", default)]
    ty: Option<String>,
    #[serde(default, borrow)]
    request: Option<&'a RawValue>,
    #[serde(default, borrow)]
    response: Option<&'a RawValue>,
    #[serde(default)]
    response_is_sse: Option<bool>,
    #[serde(default)]
    response_status: Option<i64>,
    #[serde(default)]
    latency_ms: Option<f64>,
    #[serde(default)]
    http_method: Option<String>,
    #[serde(default)]
    http_path: Option<String>,
}

/// Converts the cassette at `path`.
pub fn convert(path: &Path) -> Result<Converted, ConvertError> {
    let doc = read_document(path)?;
    convert_bytes(&doc)
}

/// Converts a cassette held in memory.
pub fn convert_bytes(doc: &[u8]) -> Result<Converted, ConvertError> {
    let members: BTreeMap<String, &RawValue> = serde_json::from_slice(doc).map_err(|e| {
        ConvertError::Invalid(format!("not an mcp-recorder cassette (a JSON object): {e}"))
    })?;
    let version = version_of(&members)?;
    let metadata: Map<String, Value> = match members.get("metadata") {
        None => Map::new(),
        Some(r) => serde_json::from_str(r.get())
            .map_err(|e| ConvertError::Invalid(format!("`metadata` is not an object: {e}")))?,
    };
    let started = recorded_at(&metadata)?;
    let transport = match metadata.get("transport_type").and_then(Value::as_str) {
        Some("http" | "streamable-http" | "streamable_http") => Some("http".to_owned()),
        Some("stdio") => Some("stdio".to_owned()),
        _ => None,
    };
    let interactions: Vec<&RawValue> = match members.get("interactions") {
        None => return Err(ConvertError::Empty),
        Some(r) => serde_json::from_str(r.get()).map_err(|e| {
            ConvertError::Invalid(format!("`interactions` is not a list of interactions: {e}"))
        })?,
    };
    if interactions.is_empty() {
        return Err(ConvertError::Empty);
    }
    let facts = facts(version, &metadata);

    let mut conv = Conversion {
        clock: started,
        items: Vec::new(),
        lost: Vec::new(),
        unanswered: Vec::new(),
    };
    let mut at = (0, 1);
    for raw in &interactions {
        at = line_of(doc, raw.get(), at);
        if let Err(p) = conv.interaction(at.1, raw) {
            conv.items
                .push(Err(Fault::Bad(p, raw.get().as_bytes().to_vec())));
        }
    }
    let warnings = conv.warnings();
    Ok(Converted {
        kind: "mcp",
        transport,
        started,
        facts,
        warnings,
        items: Box::new(conv.items.into_iter()),
    })
}

/// The cassette's `version`, one of the major version reel reads ("1.0" when missing).
fn version_of(members: &BTreeMap<String, &RawValue>) -> Result<String, ConvertError> {
    let invalid = ConvertError::Invalid;
    let version = match members
        .get("version")
        .map(|r| serde_json::from_str::<Value>(r.get()))
    {
        None => "1.0".to_owned(),
        Some(Ok(Value::String(s))) => s,
        Some(Ok(v)) => return Err(invalid(format!("`version` is {v}, not a string"))),
        Some(Err(e)) => return Err(invalid(format!("`version`: {e}"))),
    };
    if version.split('.').next() != Some(MAJOR) {
        return Err(invalid(format!(
            "cassette version {version:?}: reel reads mcp-recorder cassettes of version 1.x"
        )));
    }
    Ok(version)
}

/// `metadata.recorded_at`, which every cassette has: the start.
fn recorded_at(metadata: &Map<String, Value>) -> Result<Timestamp, ConvertError> {
    let invalid = ConvertError::Invalid;
    match metadata.get("recorded_at") {
        Some(Value::String(s)) => parse_time(s)
            .map(|(t, _)| t)
            .ok_or_else(|| invalid(format!("`metadata.recorded_at` {s:?} is not a date-time"))),
        None | Some(Value::Null) => Err(invalid(
            "no `metadata.recorded_at`: mcp-recorder writes it in every cassette".into(),
        )),
        Some(v) => Err(invalid(format!(
            "`metadata.recorded_at` is {v}, not a date-time"
        ))),
    }
}

/// What the cassette says of itself: its version and the metadata that is not empty.
fn facts(version: String, metadata: &Map<String, Value>) -> Map<String, Value> {
    let mut facts = Map::new();
    facts.insert("version".into(), version.into());
    for name in [
        "server_url",
        "transport_type",
        "protocol_version",
        "server_info",
    ] {
        match metadata.get(name) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if s.is_empty() => {}
            Some(v) => {
                facts.insert(name.into(), v.clone());
            }
        }
    }
    facts
}

/// The conversion under way: the derived clock, the items, and what went unanswered.
struct Conversion {
    clock: Timestamp,
    items: Vec<Result<Item, Fault>>,
    /// Results mcp-recorder lost: (request method, id, the method stored instead).
    lost: Vec<(String, String, String)>,
    /// Requests with no server message at all: (method, id, HTTP status).
    unanswered: Vec<(String, String, Option<i64>)>,
}

impl Conversion {
    fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if !self.lost.is_empty() {
            let each: Vec<String> = self
                .lost
                .iter()
                .map(|(m, id, instead)| format!("{m} (id {id}): a {instead} stored in its place"))
                .collect();
            w.push(format!(
                "mcp-recorder kept only the first SSE event of a streamed response, and \
                 {} result(s) were lost, their requests unanswered here: {}",
                each.len(),
                each.join("; ")
            ));
        }
        if !self.unanswered.is_empty() {
            let each: Vec<String> = self
                .unanswered
                .iter()
                .map(|(m, id, status)| match status {
                    Some(s) => format!("{m} (id {id}, HTTP {s})"),
                    None => format!("{m} (id {id})"),
                })
                .collect();
            w.push(format!(
                "{} request(s) have no recorded response: {}",
                each.len(),
                each.join("; ")
            ));
        }
        w
    }

    /// Converts one interaction (at `line` of the file), advancing the clock.
    fn interaction(&mut self, line: u64, raw: &RawValue) -> Result<(), Problem> {
        let problem = |reason: String| Problem { line, reason };
        let i: Interaction<'_> = serde_json::from_str(raw.get())
            .map_err(|e| problem(format!("not an mcp-recorder interaction: {e}")))?;
        let latency = match i.latency_ms {
            None => 0.0,
            Some(ms) if ms.is_finite() && ms >= 0.0 => ms,
            Some(ms) => return Err(problem(format!("`latency_ms` is {ms}, not a latency"))),
        };
        let sent = self.clock;
        let answered = after_ms(sent, latency);
        match i.ty.as_deref() {
            Some("lifecycle") => {
                let event = serde_json::json!({
                    "http_method": i.http_method,
                    "http_path": i.http_path,
                    "response_status": i.response_status,
                    "response_is_sse": i.response_is_sse.unwrap_or(false),
                });
                self.items.push(Ok(Item::Event {
                    t: sent,
                    kind: LIFECYCLE.to_owned(),
                    raw: event.to_string(),
                    session: None,
                }));
            }
            Some(ty @ ("notification" | "jsonrpc_request")) => {
                let exchange = Exchange::read(line, ty, &i)?;
                self.exchange(exchange, sent, answered, i.response_status);
            }
            other => {
                return Err(problem(format!(
                    "`type` is {}, not jsonrpc_request, notification or lifecycle",
                    super::shown(other)
                )));
            }
        }
        self.clock = answered;
        Ok(())
    }

    /// A client message and the server message stored with it; a request whose answer
    /// is not that message is noted as lost, or as unanswered when there is none.
    fn exchange(
        &mut self,
        ex: Exchange<'_>,
        sent: Timestamp,
        answered: Timestamp,
        status: Option<i64>,
    ) {
        self.message(sent, Dir::In, ex.request);
        let method = text(ex.req.method.as_ref());
        // Only a request waits for an answer: a client's response to the
        // server's own request is POSTed with an id too.
        let id = ex.req.id.clone().filter(|_| ex.req.method.is_some());
        match ex.response {
            Some((r, shape)) => {
                self.message(answered, Dir::Out, r);
                let answers = shape.method.is_none() && shape.id == id;
                if let (Some(id), false) = (&id, answers) {
                    let instead = match (&shape.method, &shape.id) {
                        (Some(m), _) => text(Some(m)),
                        (None, Some(other)) => format!("response to id {other}"),
                        (None, None) => "message".to_owned(),
                    };
                    self.lost.push((method, id.to_string(), instead));
                }
            }
            None => {
                if let Some(id) = &id {
                    self.unanswered.push((method, id.to_string(), status));
                }
            }
        }
    }

    fn message(&mut self, t: Timestamp, dir: Dir, raw: &str) {
        self.items.push(Ok(Item::Message {
            t,
            dir,
            raw: reel_trace::json_text::compact(raw),
            session: None,
        }));
    }
}

/// The text of `raw` when it is a JSON object.
/// The messages of a `jsonrpc_request` or `notification` interaction, read.
struct Exchange<'a> {
    /// The client's message.
    request: &'a str,
    /// Its method and id.
    req: Shape,
    /// The server's message stored with it, and its method and id.
    response: Option<(&'a str, Shape)>,
}

impl<'a> Exchange<'a> {
    /// Reads interaction `i` of type `ty` (at `line`): a request that is a JSON-RPC
    /// object and a response, if any, that is JSON-RPC too.
    fn read(line: u64, ty: &str, i: &Interaction<'a>) -> Result<Exchange<'a>, Problem> {
        let problem = |reason: String| Problem { line, reason };
        let request = object(i.request).ok_or_else(|| {
            problem(format!(
                "a `{ty}` interaction whose `request` is not a JSON-RPC object \
                 (mcp-recorder keeps none of a batch)"
            ))
        })?;
        let req: Shape =
            serde_json::from_str(request).map_err(|e| problem(format!("`request`: {e}")))?;
        let Some(r) = i.response else {
            return Ok(Exchange {
                request,
                req,
                response: None,
            });
        };
        let response =
            object(Some(r)).ok_or_else(|| problem("`response` is not a JSON object".into()))?;
        let shape: Shape =
            serde_json::from_str(response).map_err(|e| problem(format!("`response`: {e}")))?;
        if shape.method.is_none() && shape.id.is_none() {
            // Not JSON-RPC: an error body of the proxy or the server.
            return Err(problem(format!(
                "`response` is not a JSON-RPC message (HTTP {}): {}",
                i.response_status.unwrap_or(0),
                response.chars().take(80).collect::<String>()
            )));
        }
        Ok(Exchange {
            request,
            req,
            response: Some((response, shape)),
        })
    }
}

fn object(raw: Option<&RawValue>) -> Option<&str> {
    raw.map(RawValue::get).filter(|r| r.starts_with('{'))
}

/// A method for a warning: the string itself, else its JSON.
fn text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "a request".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As mcp-recorder 0.5.0 writes an HTTP recording in front of a server that sent a
    /// progress notification before the result of `tools/call`.
    const HTTP: &str = r#"{
  "version": "1.0",
  "metadata": {
    "recorded_at": "2026-11-30T06:51:14.717923+00:00",
    "server_url": "http://127.0.0.1:18091",
    "transport_type": "http",
    "protocol_version": "2025-11-25",
    "server_info": {"name": "sdk-demo", "version": ""}
  },
  "interactions": [
    {"type": "jsonrpc_request",
     "request": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"b": 1, "a": 2}},
     "response": {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25"}},
     "response_is_sse": true, "response_status": 200, "latency_ms": 20,
     "http_method": null, "http_path": null},
    {"type": "notification",
     "request": {"jsonrpc": "2.0", "method": "notifications/initialized"},
     "response": null, "response_is_sse": false, "response_status": 202, "latency_ms": 9,
     "http_method": null, "http_path": null},
    {"type": "jsonrpc_request",
     "request": {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                 "params": {"name": "add", "_meta": {"progressToken": 4}}},
     "response": {"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": 4, "progress": 1}},
     "response_is_sse": true, "response_status": 200, "latency_ms": 100,
     "http_method": null, "http_path": null},
    {"type": "lifecycle", "request": null, "response": null, "response_is_sse": false,
     "response_status": 200, "latency_ms": 6, "http_method": "DELETE", "http_path": "/mcp"}
  ]
}"#;

    fn items(doc: &str) -> (Converted, Vec<Result<Item, Fault>>) {
        let mut c = convert_bytes(doc.as_bytes()).unwrap();
        let items = std::mem::replace(&mut c.items, Box::new(std::iter::empty())).collect();
        (c, items)
    }

    fn message(i: &Result<Item, Fault>) -> (Timestamp, Dir, &str) {
        match i {
            Ok(Item::Message { t, dir, raw, .. }) => (*t, *dir, raw.as_str()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn interactions_become_messages_on_a_derived_clock() {
        assert!(looks_like(HTTP.as_bytes()));
        let (c, items) = items(HTTP);
        assert_eq!(c.kind, "mcp");
        assert_eq!(c.transport.as_deref(), Some("http"));
        let start = Timestamp::parse("2026-11-30T06:51:14.717Z").unwrap();
        assert_eq!(c.started, start);
        assert_eq!(c.facts["server_info"]["name"], "sdk-demo");
        assert_eq!(c.facts["server_url"], "http://127.0.0.1:18091");
        assert_eq!(c.facts["version"], "1.0");
        assert_eq!(items.len(), 6);
        assert_eq!(
            message(&items[0]),
            (
                start,
                Dir::In,
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"b":1,"a":2}}"#
            )
        );
        assert_eq!(message(&items[1]).0, Timestamp(start.0 + 20));
        assert_eq!(message(&items[1]).1, Dir::Out);
        assert_eq!(message(&items[2]).0, Timestamp(start.0 + 20));
        assert_eq!(message(&items[3]).0, Timestamp(start.0 + 29));
        match &items[5] {
            Ok(Item::Event { t, kind, raw, .. }) => {
                assert_eq!(*t, Timestamp(start.0 + 129));
                assert_eq!(kind, LIFECYCLE);
                let v: Value = serde_json::from_str(raw).unwrap();
                assert_eq!(v["http_method"], "DELETE");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_notification_stored_as_the_response_is_a_server_message_and_a_lost_result() {
        let (c, items) = items(HTTP);
        let (_, dir, raw) = message(&items[4]);
        assert_eq!(dir, Dir::Out);
        assert!(raw.contains("notifications/progress"), "{raw}");
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        let w = &c.warnings[0];
        assert!(
            w.contains("tools/call (id 4): a notifications/progress stored in its place"),
            "{w}"
        );
        assert!(w.contains("1 result(s) were lost"), "{w}");
    }

    #[test]
    fn an_unanswered_request_is_said_and_a_stdio_file_reads() {
        let doc = r#"{"version": "1.0", "metadata": {"recorded_at": "2026-11-30T06:36:01.071959",
            "server_url": "stdio://python3 /[REDACTED]", "transport_type": "stdio",
            "protocol_version": null, "server_info": null},
          "interactions": [
            {"type": "jsonrpc_request", "request": {"jsonrpc": "2.0", "id": 7, "method": "ping"},
             "response": null, "response_status": 421, "latency_ms": 3}
          ]}"#;
        let (c, items) = items(doc);
        assert_eq!(c.transport.as_deref(), Some("stdio"));
        assert!(c.facts.get("server_info").is_none());
        assert_eq!(items.len(), 1);
        assert_eq!(
            c.warnings,
            ["1 request(s) have no recorded response: ping (id 7, HTTP 421)"]
        );
        // A client's answer to the server's request is POSTed with an id, and answered
        // with 202 and no body: nothing is missing.
        let answer = doc.replace(
            r#"{"jsonrpc": "2.0", "id": 7, "method": "ping"}"#,
            r#"{"jsonrpc": "2.0", "id": 0, "result": {}}"#,
        );
        let (c, answered) = super::tests::items(&answer);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        assert_eq!(message(&answered[0]).1, Dir::In);
    }

    #[test]
    fn other_files_are_not_recorder_cassettes() {
        for head in [
            &br#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z"}"#[..],
            b"{\n  \"format_version\": 3,\n  \"recorded_at\": \"x\",\n  \"messages\": []",
            b"{\n  \"format_version\": \"1.0.0\",\n  \"metadata\": {\"version\": \"1.0\", \"transport_type\": 1},\n  \"session\": {\"interactions\": []}",
            b"{\n  \"history\": [],\n  \"config\": {}\n}",
            b"[]",
            b"{\"v\":1,\"type\":\"meta\",\"imported\":{\"transport_type\":\"http\"}}\n{\"raw\":{\"interactions\":[]}}\n",
        ] {
            assert!(!looks_like(head), "{}", String::from_utf8_lossy(head));
        }
        let compact = serde_json::to_string(&serde_json::from_str::<Value>(HTTP).unwrap()).unwrap();
        assert!(looks_like(compact.as_bytes()), "a cassette on one line");
        assert!(
            looks_like(&HTTP.as_bytes()[..400]),
            "a cut head still sniffs"
        );
    }

    #[test]
    fn no_cut_or_corruption_of_a_cassette_panics() {
        let doc = HTTP.as_bytes();
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
        assert!(err(&HTTP[..HTTP.len() / 2]).contains("not an mcp-recorder cassette"));
        assert!(err("3").contains("a JSON object"));
        let v2 = HTTP.replace("\"version\": \"1.0\"", "\"version\": \"2.0\"");
        assert!(err(&v2).contains("version \"2.0\""), "{}", err(&v2));
        let vn = HTTP.replace("\"version\": \"1.0\"", "\"version\": 1");
        assert!(err(&vn).contains("not a string"));
        let no_time = HTTP.replace("\"recorded_at\"", "\"when\"");
        assert!(err(&no_time).contains("recorded_at"));
        assert!(err(r#"{"metadata": [], "interactions": []}"#).contains("`metadata`"));
        let t = r#"{"metadata": {"recorded_at": "2026-01-01T00:00:00Z"}, "interactions": {}}"#;
        assert!(err(t).contains("`interactions`"));
        let none = r#"{"metadata": {"recorded_at": "2026-01-01T00:00:00Z"}, "interactions": []}"#;
        assert!(matches!(
            convert_bytes(none.as_bytes()),
            Err(ConvertError::Empty)
        ));
    }

    #[test]
    fn bad_interactions_are_problems_not_failures() {
        let doc = r#"{"metadata": {"recorded_at": "2026-01-01T00:00:00Z"}, "interactions": [
            {"type": "jsonrpc_request", "request": null, "response": null},
            {"type": "rpc", "request": {"jsonrpc": "2.0", "id": 1, "method": "ping"}},
            {"type": "jsonrpc_request", "request": {"jsonrpc": "2.0", "id": 2, "method": "ping"},
             "response": {"error": "Upstream error: refused"}, "response_status": 502},
            {"type": "jsonrpc_request", "request": {"id": 3, "method": "ping"}, "latency_ms": -1},
            "text",
            {"type": "notification", "request": {"jsonrpc": "2.0", "method": "notifications/initialized"}}
        ]}"#;
        let (_, items) = items(doc);
        let reasons: Vec<String> = items
            .iter()
            .filter_map(|i| match i {
                Err(Fault::Bad(p, _)) => Some(p.to_string()),
                _ => None,
            })
            .collect();
        assert_eq!(reasons.len(), 5, "{reasons:?}");
        assert!(reasons[0].starts_with("line 2: "), "{reasons:?}");
        assert!(reasons[0].contains("batch"), "{reasons:?}");
        assert!(reasons[1].contains("`type`"));
        assert!(reasons[2].contains("not a JSON-RPC message (HTTP 502)"));
        assert!(reasons[3].contains("latency_ms"));
        assert!(reasons[4].contains("not an mcp-recorder interaction"));
        assert_eq!(message(&items[5]).1, Dir::In);
    }
}
