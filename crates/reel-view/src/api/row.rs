//! One line of a trace as the pages show it: the timeline row (class, direction, time,
//! label, the call it belongs to and its partner line) and the one-line summary of what
//! it holds, read again from the file.

use reel_trace::LineClass;
use reel_trace::json_text::pretty;
use serde_json::{Map, Value};

use crate::index::{Class, LineRec, NO_TIME, TraceIndex, read_line};

/// Bytes of a line the raw view and a line's detail show (the rest is said cut).
pub const MAX_LINE_SHOWN: usize = 4 << 20;
/// Bytes of a line read for its one-line summary.
pub(super) const SUMMARY_READ: usize = 64 << 10;
/// Characters of a one-line summary.
const SUMMARY_CHARS: usize = 160;

/// One timeline row.
pub(super) fn row(ix: &TraceIndex, n: u64, r: &LineRec, full: bool) -> Value {
    let max = if full { MAX_LINE_SHOWN } else { SUMMARY_READ };
    let (bytes, cut) = read_line(ix.file_of(r), r, max).unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let mut o = Map::new();
    o.insert("n".into(), n.into());
    o.insert("class".into(), r.class.name().into());
    o.insert("dir".into(), r.dir.map(|d| d.as_str()).into());
    o.insert("t".into(), (r.t != NO_TIME).then_some(r.t).into());
    o.insert("label".into(), ix.strings.get(r.label).into());
    o.insert("bytes".into(), r.len.into());
    let parsed: Option<Value> = if cut {
        None
    } else {
        serde_json::from_str(&text).ok()
    };
    let mut said = summary(r.class, parsed.as_ref(), &text);
    if let Some(asked) = answered_request(ix, n, r) {
        said = clip(&format!("{asked} → {said}"));
    }
    o.insert("summary".into(), said.into());
    if let Some(p) = &parsed {
        for (member, name) in [
            ("session", "session"),
            ("corr_id", "corrId"),
            ("source", "source"),
        ] {
            if let Some(s) = p.get(member).and_then(Value::as_str) {
                o.insert(name.into(), s.into());
            }
        }
        if p.get("origin").is_some() {
            o.insert("origin".into(), p["origin"].clone());
        }
    }
    if r.call > 0 {
        let i = (r.call - 1) as usize;
        o.insert("call".into(), i.into());
        if let Some(x) = ix.call(i) {
            let partner = if x.request == n {
                (x.response > 0).then_some(x.response)
            } else if x.response == n {
                Some(x.request)
            } else {
                None
            };
            o.insert("pair".into(), partner.into());
            if x.response == n {
                o.insert("latencyMs".into(), latency(ix, x.request, n).into());
            }
        }
    }
    if full {
        o.insert("text".into(), text.as_ref().into());
        o.insert("cut".into(), cut.into());
        if let Some(raw) = raw_member(&text) {
            o.insert("pretty".into(), pretty(raw).into());
        } else if parsed.is_some() {
            o.insert("pretty".into(), pretty(&text).into());
        }
    }
    Value::Object(o)
}

/// For a response, what its request asked (`tools/call add`), read from the request's
/// line; `None` for any other line or a request that cannot be read.
fn answered_request(ix: &TraceIndex, n: u64, r: &LineRec) -> Option<String> {
    let call = ix.call(r.call.checked_sub(1)? as usize)?;
    if call.response != n || call.request == 0 {
        return None;
    }
    let request = ix.line(call.request)?;
    let (bytes, cut) = read_line(ix.file_of(request), request, SUMMARY_READ).ok()?;
    if cut {
        return None;
    }
    let line: Value = serde_json::from_slice(&bytes).ok()?;
    let raw = line.get("raw")?;
    let method = raw.get("method").and_then(Value::as_str)?;
    Some(format!("{method}{}", subject_of(raw.get("params"))))
}

/// The `raw` member of a line, as its text.
fn raw_member(line: &str) -> Option<&str> {
    #[derive(serde::Deserialize)]
    struct R<'a> {
        #[serde(borrow)]
        raw: Option<&'a serde_json::value::RawValue>,
    }
    serde_json::from_str::<R>(line).ok()?.raw.map(|r| r.get())
}

pub(super) fn latency(ix: &TraceIndex, request: u64, response: u64) -> Option<i64> {
    let (a, b) = (ix.line(request)?.t, ix.line(response)?.t);
    (a != NO_TIME && b != NO_TIME).then_some(b - a)
}

/// The one-line summary of a line.
fn summary(class: Class, line: Option<&Value>, text: &str) -> String {
    let Some(v) = line else {
        return clip(text);
    };
    let s = match class {
        Class::Line(LineClass::Message) => message_summary(v.get("raw")),
        Class::Line(LineClass::Event) | Class::Line(LineClass::Other) => {
            let kind = v
                .get("kind")
                .or(v.get("type"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let body = v
                .get("text")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .or_else(|| v.get("bytes").map(|_| "(bytes, not UTF-8)".to_owned()))
                .unwrap_or_else(|| {
                    let mut rest = v.as_object().cloned().unwrap_or_default();
                    for k in ["t", "dir", "kind", "type"] {
                        rest.remove(k);
                    }
                    Value::Object(rest).to_string()
                });
            format!("{kind} {body}")
        }
        Class::Line(LineClass::Turn) => {
            let role = v.get("role").and_then(Value::as_str).unwrap_or("turn");
            let model = v
                .get("model")
                .and_then(Value::as_str)
                .map(|m| format!(" [{m}]"))
                .unwrap_or_default();
            let first = v
                .get("blocks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .find_map(block_summary)
                .unwrap_or_default();
            format!("{role}{model}: {first}")
        }
        Class::Line(LineClass::Meta) => {
            let pick = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
            [
                pick("label"),
                pick("kind"),
                pick("transport"),
                pick("source"),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" · ")
        }
        Class::Line(LineClass::End) => {
            let mut parts = Vec::new();
            if let Some(c) = v.get("exitCode") {
                parts.push(format!("exit {c}"));
            }
            if let Some(r) = v.get("reason").and_then(Value::as_str) {
                parts.push(r.to_owned());
            }
            if let Some(c) = v.get("counts") {
                parts.push(c.to_string());
            }
            parts.join(" · ")
        }
        Class::Bad => text.to_owned(),
    };
    clip(&s)
}

fn block_summary(b: &Value) -> Option<String> {
    let ty = b.get("type").and_then(Value::as_str)?;
    Some(match ty {
        "text" => b.get("text").and_then(Value::as_str)?.to_owned(),
        "tool_use" => format!(
            "tool_use {}({})",
            b.get("name").and_then(Value::as_str).unwrap_or("?"),
            arguments(b.get("input"))
        ),
        "tool_result" => "tool_result".to_owned(),
        "history_elided" => format!(
            "history elided ({} turns)",
            b.get("count")
                .map(Value::to_string)
                .unwrap_or_else(|| "?".into())
        ),
        other => other.to_owned(),
    })
}

/// A tool call's arguments as `city=Lyon, days=3` (strings bare, the rest as JSON).
fn arguments(input: Option<&Value>) -> String {
    match input {
        Some(Value::Object(members)) => members
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            })
            .collect::<Vec<_>>()
            .join(", "),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn message_summary(raw: Option<&Value>) -> String {
    let Some(raw) = raw else {
        return String::new();
    };
    let method = raw.get("method").and_then(Value::as_str);
    let params = raw.get("params");
    if let Some(m) = method {
        let subject = subject_of(params);
        let detail = match (m, params) {
            ("notifications/progress", Some(p)) => format!(
                " {}{}",
                p.get("progress").map(Value::to_string).unwrap_or_default(),
                p.get("total").map(|t| format!("/{t}")).unwrap_or_default()
            ),
            ("tools/call", Some(p)) => p
                .get("arguments")
                .map(|a| format!(" {a}"))
                .unwrap_or_default(),
            (_, Some(p)) if subject.is_empty() => format!(" {p}"),
            _ => String::new(),
        };
        return format!("{m}{subject}{detail}");
    }
    if let Some(e) = raw.get("error") {
        let code = e.get("code").map(Value::to_string).unwrap_or_default();
        let msg = e.get("message").and_then(Value::as_str).unwrap_or("");
        return format!("error {code} {msg}");
    }
    if let Some(r) = raw.get("result") {
        return result_summary(r);
    }
    raw.to_string()
}

/// ` NAME` (a tool or prompt) or ` URI` (a resource) of a request's params, or nothing.
fn subject_of(params: Option<&Value>) -> String {
    params
        .and_then(|p| p.get("name").or(p.get("uri")))
        .and_then(Value::as_str)
        .map(|s| format!(" {s}"))
        .unwrap_or_default()
}

/// What a result says, from its content and never from `_meta`: a tool's text (and
/// what else it returned), `tool error: …` for a tool's own error, the names a list
/// holds, the server an `initialize` answered with; else the result without `_meta`.
fn result_summary(r: &Value) -> String {
    let said = if let Some(content) = r.get("content").and_then(Value::as_array) {
        let parts: Vec<String> = content.iter().map(content_summary).collect();
        match (parts.is_empty(), r.get("structuredContent")) {
            (true, Some(structured)) => structured.to_string(),
            _ => parts.join(" "),
        }
    } else if let Some((list, items)) = ["tools", "prompts", "resources", "resourceTemplates"]
        .iter()
        .find_map(|k| Some((*k, r.get(*k)?.as_array()?)))
    {
        let names: Vec<&str> = items
            .iter()
            .filter_map(|i| i.get("name").and_then(Value::as_str))
            .collect();
        format!("{} {list}: {}", items.len(), names.join(", "))
    } else if let Some(server) = r.get("serverInfo") {
        let pick = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("?").to_owned();
        format!(
            "{} {} (protocol {})",
            pick(server, "name"),
            pick(server, "version"),
            pick(r, "protocolVersion")
        )
    } else {
        let mut rest = r.as_object().cloned().unwrap_or_default();
        rest.remove("_meta");
        Value::Object(rest).to_string()
    };
    if r.get("isError") == Some(&Value::Bool(true)) {
        format!("tool error: {said}")
    } else {
        said
    }
}

/// One item of a tool result's content: its text, else what kind of item it is.
fn content_summary(item: &Value) -> String {
    let kind = item.get("type").and_then(Value::as_str).unwrap_or("?");
    match kind {
        "text" => item
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        "resource" | "resource_link" => {
            let uri = item
                .get("uri")
                .or(item.get("resource").and_then(|r| r.get("uri")))
                .and_then(Value::as_str)
                .unwrap_or("?");
            format!("[{kind} {uri}]")
        }
        other => format!("[{other}]"),
    }
}

/// `s` cut to a summary's length, on a character boundary.
fn clip(s: &str) -> String {
    let s = s.trim();
    match s.char_indices().nth(SUMMARY_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn of(class: LineClass, line: Value) -> String {
        summary(Class::Line(class), Some(&line), &line.to_string())
    }

    #[test]
    fn a_message_is_summarised_by_its_method_and_subject_or_its_answer() {
        let m = |raw: Value| of(LineClass::Message, json!({"dir": "in", "raw": raw}));
        assert_eq!(
            m(json!({"method": "tools/call",
                     "params": {"name": "get_weather", "arguments": {"city": "Paris"}}})),
            "tools/call get_weather {\"city\":\"Paris\"}"
        );
        assert_eq!(
            m(json!({"method": "resources/read", "params": {"uri": "file:///a"}})),
            "resources/read file:///a"
        );
        assert_eq!(
            m(json!({"method": "notifications/progress",
                     "params": {"progressToken": 1, "progress": 3, "total": 10}})),
            "notifications/progress 3/10"
        );
        assert_eq!(
            m(json!({"method": "initialize", "params": {"protocolVersion": "x"}})),
            "initialize {\"protocolVersion\":\"x\"}"
        );
        assert_eq!(
            m(json!({"id": 1, "error": {"code": -32601, "message": "no such method"}})),
            "error -32601 no such method"
        );
        assert_eq!(
            m(json!({"id": 1, "result": {"isError": true,
                     "content": [{"type": "text", "text": "city not found"}]}})),
            "tool error: city not found"
        );
        assert_eq!(m(json!({"id": 1, "result": {}})), "{}");
        assert_eq!(of(LineClass::Message, json!({"dir": "in"})), "");
    }

    /// A result says what it holds, from its content: never from `_meta`, which comes
    /// first in what some servers write.
    #[test]
    fn a_result_is_summarised_by_its_content_never_its_meta() {
        let m = |result: Value| {
            of(
                LineClass::Message,
                json!({"dir": "out", "raw": {"jsonrpc": "2.0", "id": 1, "result": result}}),
            )
        };
        assert_eq!(
            m(json!({"_meta": {"fastmcp": {"tags": []}},
                     "content": [{"type": "text", "text": "42"}]})),
            "42"
        );
        assert_eq!(
            m(
                json!({"content": [{"type": "text", "text": "a"}, {"type": "image", "data": "AA=="},
                                 {"type": "resource_link", "uri": "file:///x"}]})
            ),
            "a [image] [resource_link file:///x]"
        );
        assert_eq!(
            m(json!({"content": [], "structuredContent": {"sum": 42}})),
            "{\"sum\":42}"
        );
        assert_eq!(
            m(json!({"tools": [{"name": "add"}, {"name": "weather"}], "_meta": {"x": 1}})),
            "2 tools: add, weather"
        );
        assert_eq!(
            m(json!({"protocolVersion": "2025-06-18",
                     "serverInfo": {"name": "everything", "version": "2.0"}})),
            "everything 2.0 (protocol 2025-06-18)"
        );
        assert_eq!(m(json!({"_meta": {"a": 1}, "value": 3})), "{\"value\":3}");
    }

    /// A model's tool call names its arguments.
    #[test]
    fn a_tool_use_names_its_arguments() {
        assert_eq!(
            of(
                LineClass::Turn,
                json!({"role": "assistant", "model": "claude-x", "blocks": [
                    {"type": "tool_use", "name": "weather", "input": {"city": "Lyon", "days": 3}}]})
            ),
            "assistant [claude-x]: tool_use weather(city=Lyon, days=3)"
        );
    }

    #[test]
    fn events_turns_meta_and_end_lines_have_summaries_of_their_own() {
        assert_eq!(
            of(
                LineClass::Event,
                json!({"t": "x", "dir": "stderr", "text": "boot"})
            ),
            "boot"
        );
        assert_eq!(
            of(
                LineClass::Event,
                json!({"t": "x", "dir": "event", "kind": "llm.error", "status": 529})
            ),
            "llm.error {\"status\":529}"
        );
        assert_eq!(
            of(LineClass::Event, json!({"kind": "stdout", "bytes": "AAE="})),
            "stdout (bytes, not UTF-8)"
        );
        assert_eq!(
            of(
                LineClass::Turn,
                json!({"role": "assistant", "model": "m1", "blocks": [
                    {"type": "tool_use", "name": "Read", "input": {}},
                    {"type": "text", "text": "later"}]})
            ),
            "assistant [m1]: tool_use Read()"
        );
        assert_eq!(
            of(
                LineClass::Turn,
                json!({"role": "user", "blocks": [{"type": "history_elided", "count": 4}]})
            ),
            "user: history elided (4 turns)"
        );
        assert_eq!(
            of(
                LineClass::Meta,
                json!({"type": "meta", "label": "demo", "kind": "mcp", "transport": "stdio"})
            ),
            "demo · mcp · stdio"
        );
        assert_eq!(
            of(
                LineClass::End,
                json!({"type": "end", "exitCode": 2, "reason": "signal"})
            ),
            "exit 2 · signal"
        );
    }

    #[test]
    fn a_summary_is_cut_at_160_characters_and_a_bad_line_is_its_text() {
        let long = "é".repeat(200);
        let cut = clip(&format!("  {long}  "));
        assert_eq!(cut.chars().count(), SUMMARY_CHARS + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(clip(" short "), "short");
        assert_eq!(summary(Class::Bad, None, "{not json"), "{not json");
        assert_eq!(
            summary(Class::Line(LineClass::Message), None, "cut off"),
            "cut off"
        );
    }

    #[test]
    fn the_raw_member_is_read_as_written() {
        assert_eq!(
            raw_member(r#"{"t":"x","raw":{"b": 1,"a":[2]}}"#),
            Some(r#"{"b": 1,"a":[2]}"#)
        );
        assert_eq!(raw_member(r#"{"t":"x"}"#), None);
        assert_eq!(raw_member("not json"), None);
    }
}
