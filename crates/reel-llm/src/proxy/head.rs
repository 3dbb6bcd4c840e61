//! The upstream's response head: its framing read, the `llm.request` (or, for an API
//! reel reads into no turns, `llm.exchange`) line written, and the client answered with
//! the head while the body is recorded as it is forwarded.

use std::sync::Arc;

use http::Response;
use hyper::body::Incoming;
use serde_json::{Value, json};

use reel_net::http::strip_hop_by_hop;
use reel_trace::Timestamp;

use super::body::{Answer, RecordedBody, Recording};
use super::decode::decodable;
use super::exchange::{Exchange, Framing, Shared, redacted_value, replay_fields};
use super::pool::Sender;
use crate::api::Endpoint;
use crate::headers;
use crate::tape::kinds;

/// Writes `llm.request` or `llm.exchange`, answers the client with the response head,
/// and starts the task that pumps the body.
pub(super) fn respond(
    sh: Arc<Shared>,
    ex: Exchange,
    response: Response<Incoming>,
    sender: Sender,
) -> Response<Answer> {
    let (mut parts, body) = response.into_parts();
    let status = parts.status.as_u16();
    let content_type = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let encoding = parts
        .headers
        .get(http::header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_ascii_lowercase())
        .filter(|v| !v.is_empty() && v != "identity");
    let framing = if content_type.starts_with("text/event-stream") {
        Framing::Sse
    } else if content_type.contains("ndjson")
        || (ex.route.kind == Endpoint::OllamaChat
            && ex.facts.as_ref().is_some_and(|f| f.stream)
            && status < 400)
    {
        Framing::Ndjson
    } else {
        Framing::Whole
    };
    let response_headers = headers::capture(&parts.headers, false);
    let stream = framing != Framing::Whole;
    let mut raw = json!({
        "endpoint": ex.route.endpoint,
        "url": ex.route.url,
        "method": ex.method,
        "status": status,
    });
    let facts = ex.facts.as_ref().filter(|_| ex.route.kind.generates());
    let kind = if let (Some(f), Some(o)) = (facts, raw.as_object_mut()) {
        o.insert("stream".into(), stream.into());
        o.insert("request_sha256".into(), ex.request_sha256.clone().into());
        o.insert("headers".into(), Value::Object(ex.request_headers.clone()));
        o.insert("response_headers".into(), Value::Object(response_headers));
        if let Some(s) = &f.system {
            o.insert("system".into(), redacted_value(sh.tape.redactor(), s));
        }
        o.insert("tools_count".into(), f.tools_count.into());
        kinds::REQUEST
    } else if let Some(o) = raw.as_object_mut() {
        o.insert("request_sha256".into(), ex.request_sha256.clone().into());
        o.insert("response_headers".into(), Value::Object(response_headers));
        if let Some(e) = &encoding {
            if !decodable(e) {
                o.insert(
                    "reason".into(),
                    format!("content-encoding {e} is not decoded; the body is kept as bytes")
                        .into(),
                );
            }
        }
        kinds::EXCHANGE
    } else {
        kinds::EXCHANGE
    };
    let mut fields = replay_fields(&sh, &ex);
    if !ex.route.kind.generates() && ex.other.is_none() {
        // Replay matches a non-generation request on its body as sent.
        if let Some(body) = fields.get_mut("request").and_then(Value::as_object_mut) {
            body.remove("body");
        }
    }
    sh.tape.event(ex.n, Timestamp::now(), kind, &raw, fields);

    strip_hop_by_hop(&mut parts.headers);
    let body = RecordedBody::new(
        body,
        Recording::new(sh, ex, status, framing, encoding, sender),
    );
    Response::from_parts(parts, Answer::Recorded(Box::new(body)))
}
