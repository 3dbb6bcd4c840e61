//! The recording proxy behind `reel llm`: a reverse proxy on loopback that forwards each
//! request to its provider (see [`crate::route`]) and each response back as it arrives,
//! and writes the exchange to the trace (see [`crate::tape`]).
//!
//! Invariants:
//! - the bytes cross untouched: request and response bodies, status codes, headers
//!   other than hop-by-hop ones and `Host`; reel never retries; a compressed response
//!   is passed on compressed and decoded only for the record;
//! - a streamed response is forwarded chunk by chunk as the upstream sends it; every
//!   SSE event or NDJSON line a chunk completes is held for the trace before the chunk
//!   goes on, and written at the next line seam or the response's end (see
//!   [`crate::tape`]: pieces are redacted together);
//! - when the upstream cannot be reached the client gets a 502 in the provider's error
//!   shape and the trace an `llm.error`; a severed stream reaches the client as a
//!   severed response (what it would have seen direct), and the trace gets the turn as
//!   assembled so far, `truncated`, and an `llm.truncated` with the reason.
//!
//! Limits: a request body is read whole before it is forwarded, up to
//! [`REQUEST_MAX`] (larger: 413 in the provider's shape); the request bodies being
//! read and recorded at once take at most [`REQUEST_BUDGET`] (a request that declares
//! its length waits for room; one that does not, and finds none, gets 503 with
//! `retry-after: 1`, which the SDKs retry); a non-streamed response body
//! over [`WHOLE_KEPT_MAX`] is recorded in pieces cut between words and assembles no turn; an assistant
//! turn holds at most `response::TURN_CONTENT_MAX` of content (the body pieces hold all
//! of it); an upstream silent for `--idle-timeout` (default
//! [`IDLE_TIMEOUT`]) mid-response is cut off (`idle_timeout`). Upstream connections
//! are kept alive and reused, per upstream.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http::{HeaderValue, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use serde_json::{Map, Value, json};

use reel_net::http::strip_hop_by_hop;
use reel_net::serve::{self, Limits, Stop};
use reel_net::upstream::{self, TlsConnector};
use reel_redact::redact::Redactor;
use reel_trace::line::{Block, Turn};
use reel_trace::target::TraceTarget;
use reel_trace::{Meta, Timestamp};

mod body;
mod end;
mod exchange;
mod notice;
mod pool;

pub use body::WHOLE_KEPT_MAX;
pub use end::{Finished, RunEnd};
pub use notice::{Notice, NoticeFn};

use body::{Answer, RecordedBody, Recording};
use exchange::{Exchange, Framing, OwnedRoute, RequestFacts, Shared, redacted_value};
use pool::{Pool, Sender};

use crate::api::{Endpoint, Failure, Provider, error_response};
use crate::headers;
use crate::history::History;
use crate::mmsp::{Live, MmspTarget};
use crate::request::{Request as LlmRequest, matchable};
use crate::route::{RouteError, Routes};
use crate::tape::{Tape, Trouble, kinds};

/// The largest request body forwarded (images and long contexts fit; a runaway does
/// not fill memory).
pub const REQUEST_MAX: usize = 256 << 20;
/// The request bytes read and recorded at once, all requests together: each costs
/// a few times its size while it is parsed and redacted for the record, so this bounds
/// the recorder's memory whatever the clients send at once.
pub const REQUEST_BUDGET: usize = 256 << 20;
/// How long an upstream may stay silent mid-response (`--idle-timeout`).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(600);
/// Time given to open exchanges when the proxy stops.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// What `reel llm` is told.
#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// `IP:PORT` to listen on (port 0: a free one).
    pub listen: String,
    /// `--upstream`: one upstream for everything.
    pub upstream: Option<String>,
    /// `--map PREFIX=URL`.
    pub maps: Vec<String>,
    /// `--ca-file`: extra certificate authorities (PEM).
    pub ca: Vec<PathBuf>,
    /// `--idle-timeout`.
    pub idle_timeout: Duration,
    /// Connection limits.
    pub limits: Limits,
    /// Worker threads (0: by cores).
    pub threads: usize,
    /// `--mmsp DIR`: save the conversations as MMSP tracer files too.
    pub mmsp: Option<MmspTarget>,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            listen: "127.0.0.1:0".into(),
            upstream: None,
            maps: Vec::new(),
            ca: Vec::new(),
            idle_timeout: IDLE_TIMEOUT,
            limits: Limits::for_descriptors(2),
            threads: 0,
            mmsp: None,
        }
    }
}

/// Why the proxy cannot start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// A bad `--upstream` or `--map`.
    #[error(transparent)]
    Route(#[from] RouteError),
    /// A `--ca-file` that cannot be used.
    #[error("--ca-file {0}")]
    Ca(#[from] upstream::CaError),
    /// The listen address cannot be bound.
    #[error("cannot listen on {listen}: {reason}")]
    Listen {
        /// The address.
        listen: String,
        /// Why.
        reason: String,
    },
    /// The trace cannot be started.
    #[error(transparent)]
    Trace(#[from] reel_trace::target::TargetError),
    /// The runtime cannot be started.
    #[error("cannot start the proxy: {0}")]
    Setup(std::io::Error),
}

/// A bound, not yet running proxy.
pub struct LlmRecorder {
    listener: std::net::TcpListener,
    addr: SocketAddr,
    routes: Routes,
    tls: TlsConnector,
    config: LlmConfig,
}

impl LlmRecorder {
    /// Checks the configuration and binds the listener.
    pub fn bind(config: LlmConfig) -> Result<LlmRecorder, LlmError> {
        let routes = Routes::new(config.upstream.as_deref(), &config.maps)?;
        let tls = upstream::tls_connector(&config.ca)?;
        let (listener, addr) = serve::bind(&config.listen).map_err(|reason| LlmError::Listen {
            listen: config.listen.clone(),
            reason,
        })?;
        Ok(LlmRecorder {
            listener,
            addr,
            routes,
            tls,
            config,
        })
    }

    /// Saves the conversations as MMSP tracer files too (`--mmsp`; see [`crate::mmsp`]).
    pub fn save_mmsp(&mut self, target: MmspTarget) {
        self.config.mmsp = Some(target);
    }

    /// The address clients connect to.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The trace's meta line: `kind: "llm"`, `transport: "http"`, `listen`, `upstream`.
    pub fn meta(&self, label: &str, command: &[String], redactor: &Redactor) -> Meta {
        let mut meta = reel_redact::record::reel_meta(label, command, "llm", "http", redactor);
        meta.listen = Some(format!("http://{}", self.addr));
        meta.upstream = Some(self.routes.describe().join(" "));
        meta
    }

    /// Serves until `stop` is set (or, with `on_signals`, SIGINT/SIGTERM/SIGHUP), then
    /// gives open exchanges [`SHUTDOWN_GRACE`] and hands back the trace.
    pub fn run(
        self,
        trace: TraceTarget,
        meta: &Meta,
        redactor: Redactor,
        stop: Stop,
        on_signals: bool,
        notices: NoticeFn,
    ) -> Result<Finished, LlmError> {
        let (writer, path) = trace.open(meta)?;
        let trace_notices = Arc::clone(&notices);
        let tape = Arc::new(Tape::new(
            writer,
            redactor,
            Box::new(move |t| {
                trace_notices(match t {
                    Trouble::Failed(e) => Notice::TraceFailed {
                        error: e.to_string(),
                    },
                    Trouble::Behind => Notice::Behind,
                })
            }),
        ));
        let rt = serve::runtime(self.config.threads, "reel-llm").map_err(LlmError::Setup)?;
        let shared = Arc::new(Shared {
            bodies: Arc::new(tokio::sync::Semaphore::new(REQUEST_BUDGET >> 10)),
            routes: self.routes,
            tls: self.tls,
            tape: Arc::clone(&tape),
            history: History::new(),
            pool: Pool::default(),
            idle: self.config.idle_timeout,
            notices,
            mmsp: self.config.mmsp.clone().map(Live::new),
        });
        let limits = self.config.limits;
        let listener = self.listener;
        rt.block_on(async move {
            if on_signals {
                serve::stop_on_signals(stop.clone()).map_err(LlmError::Setup)?;
            }
            let listener = tokio::net::TcpListener::from_std(listener).map_err(LlmError::Setup)?;
            let conn_stop = stop.clone();
            serve::accept_until_stopped(
                listener,
                stop.subscribe(),
                limits.max_connections,
                SHUTDOWN_GRACE,
                || {},
                move |stream, _| {
                    let sh = Arc::clone(&shared);
                    let stop = conn_stop.subscribe();
                    async move {
                        let service = hyper::service::service_fn(move |req| {
                            let sh = Arc::clone(&sh);
                            async move { Ok::<_, Infallible>(handle(sh, req).await) }
                        });
                        serve::serve_http1(stream, service, limits, stop, SHUTDOWN_GRACE).await;
                    }
                },
            )
            .await;
            Ok::<(), LlmError>(())
        })?;
        rt.shutdown_timeout(Duration::from_millis(100));
        Ok(Finished { tape, path })
    }

    /// Records a run whose agent could not be started: the trace is opened and ended as
    /// exit 127, and the proxy serves until `stop` is set (the agent's start set it). A
    /// trace that cannot be written is not reported: the agent's failure is.
    pub fn record_unstarted(self, trace: TraceTarget, meta: &Meta, redactor: Redactor, stop: Stop) {
        let finished = self.run(trace, meta, redactor, stop, false, Arc::new(|_| {}));
        if let Ok(f) = finished {
            let _ = f.end(RunEnd::AgentNotStarted);
        }
    }
}

/// The largest request body of an API reel does not read that the trace keeps (as
/// `request.body`); a larger one is matched on replay by its SHA-256 only.
pub const KEPT_BODY_MAX: usize = 1 << 20;

fn reply(provider: Provider, failure: Failure, message: &str) -> Response<Answer> {
    error_response(provider, failure, message).map(Answer::Full)
}

async fn handle(sh: Arc<Shared>, req: Request<Incoming>) -> Response<Answer> {
    let started = Instant::now();
    let t_request = Timestamp::now();
    let path = req
        .uri()
        .path_and_query()
        .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned());
    let anthropic = req.headers().contains_key("anthropic-version");
    let mut route = sh.routes.route(&path, anthropic);
    let (parts, body) = req.into_parts();
    let declared = parts
        .headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    // Held until the request is recorded: its share of the budget.
    let (body, _room) = match read_body(body, declared, &sh.bodies).await {
        Ok(read) => read,
        Err(e) => return refusal(route.provider, e),
    };
    if parts.method == http::Method::POST {
        route.read_body_shape(&body, anthropic);
    }
    let ex = open_exchange(&sh, started, &parts, route.into(), &body);
    forward(sh, ex, parts, body, t_request).await
}

/// The client's answer when its request body was not read: 413, 503 with
/// `retry-after: 1`, or 400, in the provider's error shape.
fn refusal(provider: Provider, error: BodyError) -> Response<Answer> {
    match error {
        BodyError::TooLarge => {
            let msg = format!(
                "reel: the request body is larger than {} MiB",
                REQUEST_MAX >> 20
            );
            let mut r = reply(provider, Failure::BadRequest, &msg);
            *r.status_mut() = StatusCode::PAYLOAD_TOO_LARGE;
            r
        }
        BodyError::Busy => {
            let msg = format!(
                "reel: the request bodies being recorded take {} MiB already; retry",
                REQUEST_BUDGET >> 20
            );
            let mut r = reply(provider, Failure::Busy, &msg);
            r.headers_mut()
                .insert(http::header::RETRY_AFTER, HeaderValue::from_static("1"));
            r
        }
        BodyError::Read(e) => {
            let msg = format!("reel: the request body could not be read: {e}");
            reply(provider, Failure::BadRequest, &msg)
        }
    }
}

/// The exchange a read request opens: its number, its route and what the trace keeps
/// of its head (and, for an API reel reads into no turns, of its body).
fn open_exchange(
    sh: &Shared,
    started: Instant,
    parts: &http::request::Parts,
    route: OwnedRoute,
    body: &[u8],
) -> Exchange {
    Exchange {
        n: sh.tape.next_exchange(),
        started,
        method: parts.method.as_str().to_owned(),
        request_sha256: reel_trace::hash::request_sha256(body),
        request_headers: headers::capture(&parts.headers, true),
        facts: None,
        conversation: 0,
        mmsp_id: parts
            .headers
            .get(crate::mmsp::TRACE_ID_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        other: (!route.kind.generates() && body.len() <= KEPT_BODY_MAX)
            .then(|| serde_json::from_slice::<Value>(body).ok())
            .flatten()
            .filter(Value::is_object)
            .map(|v| redacted_value(sh.tape.redactor(), &v)),
        query: parts
            .uri
            .query()
            .map(|q| sh.tape.redactor().redact_text(q).into_owned()),
        route,
    }
}

/// Sends the request upstream, records it while the answer is awaited, and answers the
/// client with the upstream's response (or a 502).
async fn forward(
    sh: Arc<Shared>,
    mut ex: Exchange,
    mut parts: http::request::Parts,
    body: Bytes,
    t_request: Timestamp,
) -> Response<Answer> {
    strip_hop_by_hop(&mut parts.headers);
    if let Ok(host) = HeaderValue::from_str(&ex.route.upstream.authority) {
        parts.headers.insert(http::header::HOST, host);
    }
    parts.uri = match ex.route.upstream_path.parse() {
        Ok(u) => u,
        Err(_) => return reply(ex.route.provider, Failure::BadRequest, "reel: bad path"),
    };
    let upstream_req = Request::from_parts(parts, Full::new(body.clone()));
    let sender = sh.pool.take(&ex.route.upstream, &sh.tls).await;
    let mut sender = match sender {
        Ok(s) => s,
        Err(error) => {
            record_request(&sh, &mut ex, &body, t_request);
            return bad_gateway(&sh, &ex, &error);
        }
    };
    let answer = sender.send_request(upstream_req);
    record_request(&sh, &mut ex, &body, t_request);
    let response = match answer.await {
        Ok(r) => r,
        Err(e) => return bad_gateway(&sh, &ex, &format!("the upstream broke off: {e}")),
    };
    respond(sh, ex, response, sender)
}

/// Why a request body was not read.
enum BodyError {
    TooLarge,
    Busy,
    Read(Box<dyn std::error::Error + Send + Sync>),
}

/// KiB of the budget `bytes` take (at least one).
fn kib(bytes: usize) -> u32 {
    u32::try_from(bytes.div_ceil(1024).max(1)).unwrap_or(u32::MAX)
}

/// Reads a request body whole, up to [`REQUEST_MAX`], taking its room in the budget:
/// all of it up front when its length is `declared` (waiting for room), else as its
/// frames come (refused when there is none, so two readers cannot wait on each other).
async fn read_body<B>(
    mut body: B,
    declared: Option<usize>,
    budget: &Arc<tokio::sync::Semaphore>,
) -> Result<(Bytes, tokio::sync::OwnedSemaphorePermit), BodyError>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut room = match declared {
        Some(n) if n > REQUEST_MAX => return Err(BodyError::TooLarge),
        Some(n) => Arc::clone(budget)
            .acquire_many_owned(kib(n))
            .await
            .map_err(|_| BodyError::Busy)?,
        None => Arc::clone(budget)
            .try_acquire_many_owned(1)
            .map_err(|_| BodyError::Busy)?,
    };
    let mut taken = declared.map_or(1024, |n| kib(n) as usize * 1024);
    let mut out = Vec::with_capacity(declared.unwrap_or(0));
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| BodyError::Read(e.into()))?;
        let Ok(data) = frame.into_data() else {
            continue; // trailers
        };
        if out.len() + data.len() > REQUEST_MAX {
            return Err(BodyError::TooLarge);
        }
        out.extend_from_slice(&data);
        if out.len() > taken {
            let more = kib(out.len() - taken);
            let extra = Arc::clone(budget)
                .try_acquire_many_owned(more)
                .map_err(|_| BodyError::Busy)?;
            room.merge(extra);
            taken += more as usize * 1024;
        }
    }
    Ok((Bytes::from(out), room))
}

/// Reads the request for the record and writes its turns.
fn record_request(sh: &Shared, ex: &mut Exchange, body: &[u8], t: Timestamp) {
    if !ex.route.kind.generates() {
        return;
    }
    let Ok(text) = std::str::from_utf8(body) else {
        return;
    };
    let Some(req) = LlmRequest::parse(ex.route.kind, text) else {
        return;
    };
    let prefixes = req.prefixes();
    let system = req.system_value();
    let scope = format!(
        "{} {}",
        ex.route.endpoint,
        system.as_ref().map(Value::to_string).unwrap_or_default()
    );
    let (elided, conversation) = if prefixes.len() == req.messages.len() + 1 {
        sh.history.elide(&scope, &prefixes)
    } else {
        (0, 0)
    };
    ex.conversation = conversation;
    let mut turns = req.turns(ex.route.kind, elided);
    let elided_sha256 = (elided > 0).then(|| prefixes[elided].clone());
    if let Some(sha) = &elided_sha256 {
        let marker = Block::HistoryElided {
            count: elided as u64,
            sha256: sha.clone(),
            request_sha256: Some(ex.request_sha256.clone()),
            extra: Map::new(),
        };
        match turns.first_mut() {
            Some(first) => first.blocks.get_or_insert_with(Vec::new).insert(0, marker),
            None => turns.push(Turn {
                role: Some("user".into()),
                blocks: Some(vec![marker]),
                ..Turn::default()
            }),
        }
    }
    let t_iso = t.to_iso().as_str().to_owned();
    let live = sh.mmsp.as_ref().map(|live| {
        let id = live.trace_id(ex.mmsp_id.as_deref(), conversation, ex.n);
        let raw = redacted_value(
            sh.tape.redactor(),
            &json!({ "system": system, "tools_count": req.tools_count }),
        );
        let body = serde_json::from_str::<Value>(text).ok();
        ex.mmsp_id = Some(id.clone());
        (live, id, raw, body)
    });
    for mut turn in turns {
        turn.t = Some(t_iso.clone());
        turn.endpoint = Some(ex.route.endpoint.clone());
        turn.source = Some("llm".into());
        let written = sh.tape.turn(ex.n, conversation, &mut turn);
        if let Some((live, id, raw, body)) = &live {
            live.request(id, written, raw, body.as_ref());
        }
    }
    ex.facts = Some(RequestFacts {
        stream: req.stream,
        usage_chunk: req.usage_chunk,
        system,
        tools_count: req.tools_count,
        elided,
        elided_sha256,
        matchable: matchable(ex.route.kind, text, elided),
    });
}

fn bad_gateway(sh: &Shared, ex: &Exchange, error: &str) -> Response<Answer> {
    (sh.notices)(Notice::UpstreamFailed {
        error: format!("{}: {error}", ex.route.url),
    });
    let raw = json!({
        "endpoint": ex.route.endpoint,
        "url": ex.route.url,
        "method": ex.method,
        "error": error,
    });
    sh.tape.event(
        ex.n,
        Timestamp::now(),
        kinds::ERROR,
        &raw,
        replay_fields(sh, ex),
    );
    reply(
        ex.route.provider,
        Failure::BadGateway,
        &format!(
            "reel: the upstream {} could not be reached: {error}",
            ex.route.url
        ),
    )
}

/// reel's `request` member: what replay matches a live request against.
fn replay_fields(sh: &Shared, ex: &Exchange) -> Map<String, Value> {
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

/// Writes `llm.request` or `llm.exchange`, answers the client with the response head,
/// and starts the task that pumps the body.
fn respond(
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
            if !body::decodable(e) {
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

#[cfg(test)]
mod budget_tests {
    use super::*;

    fn run<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    fn budget(kib: usize) -> Arc<tokio::sync::Semaphore> {
        Arc::new(tokio::sync::Semaphore::new(kib))
    }

    #[test]
    fn a_body_declared_past_the_maximum_is_refused_unread() {
        let b = budget(1 << 10);
        let r = run(read_body(
            Full::new(Bytes::from_static(b"{}")),
            Some(REQUEST_MAX + 1),
            &b,
        ));
        assert!(matches!(r, Err(BodyError::TooLarge)));
    }

    #[test]
    fn a_body_of_unknown_length_finding_no_room_is_refused_not_queued() {
        // Two readers of unknown length must not wait on each other: the one that
        // finds the budget taken gets 503 (and retries).
        let b = budget(4);
        let held = Arc::clone(&b).try_acquire_many_owned(4).unwrap();
        let r = run(read_body(frames(vec![vec![b'x'; 10]]), None, &b));
        assert!(matches!(r, Err(BodyError::Busy)));
        drop(held);
        let (body, room) = run(read_body(
            frames(vec![vec![b'x'; 1000], vec![b'x'; 2000]]),
            None,
            &b,
        ))
        .ok()
        .unwrap();
        assert_eq!(body.len(), 3000);
        assert_eq!(room.num_permits(), 3, "its size in KiB, rounded up");
        assert_eq!(b.available_permits(), 1);
        drop(room);
        assert_eq!(b.available_permits(), 4);
    }

    #[test]
    fn a_body_of_declared_length_waits_for_room() {
        let b = budget(8);
        let held = Arc::clone(&b).try_acquire_many_owned(8).unwrap();
        let got = run(async {
            let release = tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                drop(held);
            });
            let r = read_body(Full::new(Bytes::from(vec![b'y'; 5000])), Some(5000), &b).await;
            release.await.unwrap();
            r.ok().map(|(body, room)| (body.len(), room.num_permits()))
        });
        assert_eq!(got, Some((5000, 5)));
    }

    /// A body of unknown length that comes as these frames.
    struct Frames(std::collections::VecDeque<Bytes>);

    impl hyper::body::Body for Frames {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
            std::task::Poll::Ready(self.0.pop_front().map(|b| Ok(hyper::body::Frame::data(b))))
        }
    }

    fn frames(frames: Vec<Vec<u8>>) -> Frames {
        Frames(frames.into_iter().map(Bytes::from).collect())
    }
}
