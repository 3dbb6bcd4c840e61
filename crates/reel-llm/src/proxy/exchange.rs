//! One exchange's facts, shared by its request and response halves, and the state
//! every exchange shares (routes, pool, trace, history): the types the request side
//! (`proxy`) and the response side (`body`) both hold.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use reel_net::http::UpstreamUrl;
use reel_net::upstream::TlsConnector;
use reel_redact::redact::Redactor;

use super::notice::NoticeFn;
use super::pool::Pool;
use crate::api::{Endpoint, Provider};
use crate::history::History;
use crate::mmsp::Live;
use crate::route::{Route, Routes};
use crate::tape::Tape;

/// What every exchange shares.
pub(super) struct Shared {
    /// [`crate::proxy::REQUEST_BUDGET`], in KiB.
    pub(super) bodies: Arc<tokio::sync::Semaphore>,
    pub(super) routes: Routes,
    pub(super) tls: TlsConnector,
    pub(super) tape: Arc<Tape>,
    pub(super) history: History,
    pub(super) pool: Pool,
    pub(super) idle: Duration,
    pub(super) notices: NoticeFn,
    pub(super) mmsp: Option<Live>,
}

/// How a response body is framed for the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Framing {
    Sse,
    Ndjson,
    Whole,
}

/// One exchange's facts, shared by its request and response halves.
pub(super) struct Exchange {
    pub(super) n: u64,
    pub(super) started: Instant,
    pub(super) route: OwnedRoute,
    pub(super) method: String,
    pub(super) request_sha256: String,
    pub(super) request_headers: Map<String, Value>,
    /// The request read for the record (generation endpoints).
    pub(super) facts: Option<RequestFacts>,
    /// The conversation it continues (0: none known).
    pub(super) conversation: u64,
    /// `--mmsp`: the request's `x-mmsp-trace-id`, then the exchange's trace id.
    pub(super) mmsp_id: Option<String>,
    /// A request reel reads into no turns: its JSON body, redacted (up to
    /// [`crate::proxy::KEPT_BODY_MAX`]), so replay can match it by content and `--ignore`.
    pub(super) other: Option<Value>,
    /// The request's query, redacted (`?alt=sse`): replay matches on it.
    pub(super) query: Option<String>,
}

/// The route an exchange took, owned by it.
pub(super) struct OwnedRoute {
    pub(super) upstream: UpstreamUrl,
    pub(super) upstream_path: String,
    pub(super) endpoint: String,
    pub(super) kind: Endpoint,
    pub(super) provider: Provider,
    pub(super) url: String,
}

impl From<Route<'_>> for OwnedRoute {
    fn from(r: Route<'_>) -> OwnedRoute {
        OwnedRoute {
            url: r.scrubbed_url(),
            upstream: r.upstream.clone(),
            upstream_path: r.upstream_path,
            endpoint: r.endpoint,
            kind: r.kind,
            provider: r.provider,
        }
    }
}

/// What the request said that the response side needs.
pub(super) struct RequestFacts {
    pub(super) stream: bool,
    /// `stream_options.include_usage` (chat completions).
    pub(super) usage_chunk: bool,
    pub(super) system: Option<Value>,
    pub(super) tools_count: usize,
    pub(super) elided: usize,
    pub(super) elided_sha256: Option<String>,
    pub(super) matchable: Option<Value>,
}

/// reel's `request` member: what replay matches a live request against.
pub(super) fn replay_fields(sh: &Shared, ex: &Exchange) -> Map<String, Value> {
    let mut fields = Map::new();
    let mut request = Map::new();
    if let Some(f) = &ex.facts {
        if let Some(m) = &f.matchable {
            let text = m.to_string();
            let redacted = sh.tape.redactor().redact_json(&text);
            let v = serde_json::from_str(&redacted).unwrap_or_else(|_| m.clone());
            request.insert("body".into(), v);
        }
        if let Some(sha) = &f.elided_sha256 {
            request.insert("elided".into(), json!({ "count": f.elided, "sha256": sha }));
        }
    }
    if let Some(b) = &ex.other {
        request.insert("body".into(), b.clone());
    }
    if let Some(q) = &ex.query {
        request.insert("query".into(), q.clone().into());
    }
    fields.insert("request".into(), Value::Object(request));
    fields
}

/// `v` redacted as the trace's JSON is.
pub(super) fn redacted_value(redactor: &Redactor, v: &Value) -> Value {
    let text = v.to_string();
    serde_json::from_str(&redactor.redact_json(&text)).unwrap_or_else(|_| v.clone())
}

/// `d` in whole milliseconds, as the trace writes timings.
pub(super) fn millis(d: Duration) -> f64 {
    (d.as_secs_f64() * 1000.0).round()
}
