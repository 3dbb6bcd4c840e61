//! The HTTP side of the tape server: requests in, responses out.
//!
//! - Every request first passes the loopback guard (403 otherwise).
//! - `POST` to the MCP path (404 elsewhere, unless the URL names a legacy session)
//!   carries one JSON-RPC message. Its session is the `Mcp-Session-Id` reel
//!   issued (unknown or ended: 404), the legacy `sessionId` of the URL, or none: an
//!   `initialize` without a session opens a new live session on the next recorded one
//!   (a fresh session id in the answer's headers); other session-less messages are
//!   answered from the session-less traffic of an HTTP recording, or from the session
//!   the next live session will get of a stdio one. A request's answer is JSON or an
//!   event stream as the recording answered it (status included); notifications and
//!   answers get `202 Accepted`.
//! - `GET` on the MCP path opens the session's server stream, or `405` when the
//!   recording shows one; without a session it opens a legacy HTTP+SSE session when the
//!   next recorded one is legacy (its first event the `endpoint` to POST to).
//! - `DELETE` ends the session (its recorded status, else 200).
//!
//! Limits: a body above [`crate::play::MAX_LINE`] bytes is refused (413, after
//! reading up to [`DRAIN_MAX`] more so the client hears it); the
//! connections get [`SHUTDOWN_GRACE`] to finish once the replay stops.

use std::collections::HashMap;
use std::convert::Infallible;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use reel_mcp::http::headers as mcp_headers;
use reel_mcp::jsonrpc::methods;
use reel_mcp::normalize::Normalizer;
use reel_net::http::LoopbackGuard;

use super::diag::{Diag, LineDiag};
use super::out::{LiveSession, Routes, lock};
use super::reply::{GoneGuard, Reply};
use super::tapes::{Tape, Tapes};
use crate::play::{Content, Event, InputLine, MAX_LINE, Parsed, parse_live};

/// After a stop, how long connections get to finish before they are cut.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// What every request handler shares.
pub(super) struct Ctx {
    pub(super) guard: LoopbackGuard,
    pub(super) routes: Arc<Routes>,
    pub(super) tapes: Arc<Tapes>,
    pub(super) norm: Normalizer,
    /// The MCP endpoint's path (the recorded one, else `/mcp`).
    pub(super) path: String,
    /// The trace was recorded over HTTP (its session-less traffic is pooled in tape 0).
    pub(super) http_trace: bool,
    pub(super) sessions: Mutex<HashMap<String, Arc<LiveSession>>>,
    pub(super) diag: Diag,
    pub(super) refused_told: AtomicBool,
    pub(super) ids: AtomicU64,
}

impl Ctx {
    /// Ends every session and every reply (the replay stops).
    pub(super) fn end_all(&self) {
        for s in lock(&self.sessions).values() {
            s.end();
        }
        self.routes.close_all();
    }

    fn session(&self, id: &str) -> Option<Arc<LiveSession>> {
        lock(&self.sessions).get(id).cloned()
    }

    /// A fresh, unguessable session id (32 hex digits).
    fn new_id(&self) -> String {
        let n = self.ids.fetch_add(1, Ordering::Relaxed);
        let mut out = String::with_capacity(32);
        for salt in 0..2u64 {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(n);
            h.write_u64(salt);
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            h.write_u128(t);
            out.push_str(&format!("{:016x}", h.finish()));
        }
        out
    }

    fn open_session(&self, tape: u32, legacy: bool) -> Arc<LiveSession> {
        let s = Arc::new(LiveSession::new(self.new_id(), tape, legacy));
        lock(&self.sessions).insert(s.id.clone(), Arc::clone(&s));
        self.tapes.bind(tape, &s);
        s
    }
}

/// The service a client connection gets: every request handled against `ctx`.
pub(super) fn service(
    ctx: Arc<Ctx>,
) -> impl hyper::service::Service<
    Request<Incoming>,
    Response = Response<Reply>,
    Error = Infallible,
    Future = impl Future<Output = Result<Response<Reply>, Infallible>> + Send,
> + Send
+ 'static {
    service_fn(move |req| handle(Arc::clone(&ctx), req))
}

fn respond(status: StatusCode, body: Reply) -> Response<Reply> {
    let mut r = Response::new(body);
    *r.status_mut() = status;
    r
}

fn with_type(mut r: Response<Reply>, content_type: &'static str) -> Response<Reply> {
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

fn with_session(mut r: Response<Reply>, id: &str) -> Response<Reply> {
    if let Ok(v) = HeaderValue::from_str(id) {
        r.headers_mut().insert(mcp_headers::SESSION_ID, v);
    }
    r
}

fn not_allowed(allow: &'static str) -> Response<Reply> {
    let mut r = respond(StatusCode::METHOD_NOT_ALLOWED, Reply::empty());
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    r
}

/// A JSON-RPC error without an id, as MCP servers answer HTTP-level refusals.
fn rpc_refusal(status: StatusCode, code: i64, message: &str) -> Response<Reply> {
    let body = serde_json::json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": null});
    with_type(
        respond(status, Reply::text(body.to_string())),
        "application/json",
    )
}

fn header_str<'a>(req: &'a Request<Incoming>, name: &str) -> Option<&'a str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

async fn handle(ctx: Arc<Ctx>, req: Request<Incoming>) -> Result<Response<Reply>, Infallible> {
    let hosts = req.headers().get_all(header::HOST).iter();
    let origins = req.headers().get_all(header::ORIGIN).iter();
    let checked = ctx.guard.check_all(
        hosts.map(HeaderValue::as_bytes),
        origins.map(HeaderValue::as_bytes),
    );
    if let Err(refusal) = checked {
        if !ctx.refused_told.swap(true, Ordering::Relaxed) {
            let mut d = LineDiag::new(ctx.diag.clone());
            let _ = std::io::Write::write_all(
                &mut d,
                format!(
                    "reel play: refused a request: {refusal} (further refusals are not reported)\n"
                )
                .as_bytes(),
            );
        }
        return Ok(with_type(
            respond(
                StatusCode::FORBIDDEN,
                Reply::text(format!("reel play: forbidden: {refusal}\n")),
            ),
            "text/plain; charset=utf-8",
        ));
    }
    let resp = match *req.method() {
        Method::POST => post(&ctx, req).await,
        Method::GET => get(&ctx, req).await,
        Method::DELETE => delete(&ctx, req),
        _ => not_allowed("GET, POST, DELETE"),
    };
    Ok(resp)
}

/// The legacy HTTP+SSE session a URL names (`?sessionId=`).
fn legacy_session_id(req: &Request<Incoming>) -> Option<String> {
    req.uri().query()?.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == "sessionId").then(|| v.to_owned())
    })
}

/// A client message, read and scanned like a stdio line.
fn content_of(body: &[u8], norm: &Normalizer) -> Content {
    match std::str::from_utf8(body) {
        Ok(text) => {
            let trimmed = text.trim();
            // The replay's trace keeps one message per line.
            let text = if trimmed.contains(['\n', '\r']) {
                serde_json::from_str::<serde_json::Value>(trimmed)
                    .map_or_else(|_| trimmed.replace(['\n', '\r'], " "), |v| v.to_string())
            } else {
                trimmed.to_owned()
            };
            let parsed = parse_live(&text, norm);
            Content::Text(text, parsed)
        }
        Err(_) => Content::NotUtf8(body.to_vec()),
    }
}

/// A POST: the message is read and scanned, its tape chosen (see [`Target::of`]), and
/// handed to that tape's server; the answer comes back as JSON or as an event stream
/// (see [`answer`]).
async fn post(ctx: &Ctx, req: Request<Incoming>) -> Response<Reply> {
    let legacy_id = legacy_session_id(&req);
    // The MCP endpoint only; a legacy session posts wherever its `endpoint` said.
    if legacy_id.is_none() && req.uri().path() != ctx.path {
        return respond(StatusCode::NOT_FOUND, Reply::empty());
    }
    let header_id = header_str(&req, mcp_headers::SESSION_ID).map(str::to_owned);
    let body = match read_body(req).await {
        Ok(b) => b,
        Err(status) => return respond(status, Reply::empty()),
    };
    let content = content_of(&body, &ctx.norm);
    let posted = Posted::of(&content);
    let target = match Target::of(ctx, legacy_id, header_id, &posted).await {
        Ok(t) => t,
        Err(refusal) => return refusal,
    };
    let tape_server = match ctx
        .tapes
        .server(target.tape, target.session.as_ref().map(|s| s.id.as_str()))
    {
        Ok(n) => n,
        Err(e) => {
            return rpc_refusal(
                StatusCode::INTERNAL_SERVER_ERROR,
                -32603,
                &format!("reel play: {e}"),
            );
        }
    };
    if let Some(s) = target.session.as_ref().filter(|s| s.legacy) {
        let route = ctx.routes.to_session(s);
        tape_server.send(Event::Input(vec![InputLine {
            content,
            crlf: false,
            route,
        }]));
        return with_type(
            respond(StatusCode::ACCEPTED, Reply::text("Accepted")),
            "text/plain; charset=utf-8",
        );
    }
    let session_id = target.session.as_ref().map(|s| s.id.clone());
    if !posted.expects_answer {
        tape_server.send(Event::Input(vec![InputLine {
            content,
            crlf: false,
            route: 0,
        }]));
        let r = respond(StatusCode::ACCEPTED, Reply::empty());
        return match &session_id {
            Some(id) => with_session(r, id),
            None => r,
        };
    }
    let mut r = answer(ctx, tape_server, content, posted.request).await;
    if let Some(id) = &session_id {
        r = with_session(r, id);
    }
    if target.new_session.is_some() && first_is_error(&r) {
        // A refused initialize opens no session.
        if let Some(s) = target.new_session {
            s.end();
        }
    }
    r
}

/// What a POSTed message is, as far as choosing its tape and its answer goes.
struct Posted {
    /// A request (its answer is JSON even when the recorded body was not).
    request: bool,
    initialize: bool,
    discover: bool,
    /// Anything but a notification or an answer: the POST waits for a reply.
    expects_answer: bool,
}

impl Posted {
    fn of(content: &Content) -> Posted {
        let (request, initialize, discover) = match content {
            Content::Text(_, Parsed::Request(inc)) => (
                true,
                inc.method() == methods::INITIALIZE,
                inc.method() == methods::SERVER_DISCOVER,
            ),
            _ => (false, false, false),
        };
        let expects_answer = !matches!(
            content,
            Content::Text(_, Parsed::Notification { .. } | Parsed::Answer { .. })
        );
        Posted {
            request,
            initialize,
            discover,
            expects_answer,
        }
    }
}

/// Which tape answers a POST, and the live session it belongs to.
struct Target {
    tape: u32,
    session: Option<Arc<LiveSession>>,
    /// The session this POST (an `initialize`) opened: ended again if refused.
    new_session: Option<Arc<LiveSession>>,
}

impl Target {
    /// The session the POST names (legacy query or `Mcp-Session-Id`), a new one for an
    /// `initialize`, or none: the session-less traffic, or for a stdio recording the
    /// session the next live session will get. A session that is unknown or ended is
    /// refused with the response to send.
    async fn of(
        ctx: &Ctx,
        legacy_id: Option<String>,
        header_id: Option<String>,
        posted: &Posted,
    ) -> Result<Target, Response<Reply>> {
        if let (Some(id), None) = (&legacy_id, &header_id) {
            return match ctx.session(id) {
                Some(s) if s.legacy && !s.ended() => Ok(Target::in_session(s)),
                _ => Err(respond(
                    StatusCode::NOT_FOUND,
                    Reply::text("Session not found"),
                )),
            };
        }
        if let Some(id) = header_id {
            return match ctx.session(&id) {
                Some(s) if !s.ended() => Ok(Target::in_session(s)),
                _ => Err(rpc_refusal(
                    StatusCode::NOT_FOUND,
                    -32001,
                    "Session not found: reel play issued no such session, or it ended",
                )),
            };
        }
        Ok(if posted.initialize {
            Target::initialize(ctx).await
        } else if ctx.http_trace && posted.discover && probe_for_next_session(ctx).await {
            Target::sessionless(ctx.tapes.next_unclaimed())
        } else if ctx.http_trace {
            Target::sessionless(0)
        } else {
            Target::sessionless(ctx.tapes.next_unclaimed())
        })
    }

    /// An `initialize` without a session. A recording of a server without sessions
    /// holds its initialize in the session-less traffic; otherwise a live session the
    /// recording has no counterpart for gets a tape of its own, empty: its requests are
    /// misses.
    async fn initialize(ctx: &Ctx) -> Target {
        let tape = match ctx.tapes.claim().await {
            Some(k) => Some(k),
            None if ctx.http_trace && ctx.tapes.facts_now(0).initialize => None,
            None => Some(ctx.tapes.claim_missing()),
        };
        match tape {
            Some(k) => {
                let s = ctx.open_session(k, false);
                Target {
                    tape: k,
                    session: Some(Arc::clone(&s)),
                    new_session: Some(s),
                }
            }
            None => Target::sessionless(0),
        }
    }

    fn in_session(s: Arc<LiveSession>) -> Target {
        Target {
            tape: s.tape,
            session: Some(s),
            new_session: None,
        }
    }

    fn sessionless(tape: u32) -> Target {
        Target {
            tape,
            session: None,
            new_session: None,
        }
    }
}

/// Hands a message that expects a reply to its tape server and waits for the first
/// thing on its route: a lone answer recorded as a plain body is sent as one (with its
/// recorded status), anything else opens an event stream that ends with the answer.
async fn answer(
    ctx: &Ctx,
    tape_server: Arc<Tape>,
    content: Content,
    request: bool,
) -> Response<Reply> {
    let (route, mut rx) = ctx.routes.reply();
    let mut guard = GoneGuard::new(Arc::clone(&tape_server), route);
    tape_server.send(Event::Input(vec![InputLine {
        content,
        crlf: false,
        route,
    }]));
    let Some(first) = rx.recv().await else {
        // The tape server closed the route without an answer: cancelled, or stopping.
        guard.disarm();
        return respond(StatusCode::ACCEPTED, Reply::empty());
    };
    if first.dest.last && !first.dest.via.sse && !first.framed {
        guard.disarm();
        let status = match first.dest.via.status {
            0 => StatusCode::OK,
            s => StatusCode::from_u16(s).unwrap_or(StatusCode::OK),
        };
        let json = first.text.first().is_some_and(|b| *b == b'{' || *b == b'[');
        let r = respond(status, Reply::text(first.text));
        return if json || request {
            with_type(r, "application/json")
        } else {
            with_type(r, "text/plain; charset=utf-8")
        };
    }
    let done = first.dest.last;
    if done {
        guard.disarm();
    }
    let body = Reply::Events {
        first: Some(first.event()),
        rx,
        done,
        guard,
        held: None,
    };
    let mut r = with_type(respond(StatusCode::OK, body), "text/event-stream");
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

/// A `server/discover` probe without a session, answered by the session the client
/// opens next rather than by the session-less traffic, when that recording holds no
/// probe and the next recorded session is a legacy one: it refuses the probe as a
/// legacy server does, as over stdio.
async fn probe_for_next_session(ctx: &Ctx) -> bool {
    let next = ctx.tapes.facts(ctx.tapes.next_unclaimed()).await;
    // The index has read the recording up to the next session's first line, so every
    // session-less probe recorded before it is known.
    !ctx.tapes.facts_now(0).discover && next.initialize && !next.discover
}

fn first_is_error(r: &Response<Reply>) -> bool {
    r.status().is_client_error() || r.status().is_server_error()
}

/// Bytes of a too-large body read and dropped before the 413 goes out: a client that is
/// still sending when the connection closes sees a broken pipe, not the answer. A body
/// longer than this gets the connection closed.
const DRAIN_MAX: u64 = 256 << 20;

async fn read_body(req: Request<Incoming>) -> Result<Bytes, StatusCode> {
    let mut body = req.into_body();
    // The usual body is one frame, kept as it came; more are joined.
    let mut first: Option<Bytes> = None;
    let mut joined = Vec::new();
    let mut total: u64 = 0;
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return Err(StatusCode::BAD_REQUEST);
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        total += data.len() as u64;
        if total > MAX_LINE as u64 {
            (first, joined) = (None, Vec::new());
            if total > MAX_LINE as u64 + DRAIN_MAX {
                break;
            }
        } else if let Some(f) = first.take() {
            joined.extend_from_slice(&f);
            joined.extend_from_slice(&data);
        } else if joined.is_empty() {
            first = Some(data);
        } else {
            joined.extend_from_slice(&data);
        }
    }
    if total > MAX_LINE as u64 {
        return Err(StatusCode::PAYLOAD_TOO_LARGE);
    }
    Ok(first.unwrap_or_else(|| Bytes::from(joined)))
}

async fn get(ctx: &Ctx, req: Request<Incoming>) -> Response<Reply> {
    if req.uri().path() != ctx.path {
        return respond(StatusCode::NOT_FOUND, Reply::empty());
    }
    let header_id = header_str(&req, mcp_headers::SESSION_ID).map(str::to_owned);
    if let Some(id) = header_id {
        let Some(s) = ctx.session(&id).filter(|s| !s.ended()) else {
            return rpc_refusal(
                StatusCode::NOT_FOUND,
                -32001,
                "Session not found: reel play issued no such session, or it ended",
            );
        };
        if s.legacy || ctx.tapes.facts_now(s.tape).get == Some(405) {
            return not_allowed("POST, DELETE");
        }
        let resumed = req.headers().contains_key(mcp_headers::LAST_EVENT_ID);
        let rx = s.open_stream(None, resumed);
        return sse_response(Reply::Stream(rx), Some(&s.id));
    }
    if let Some((k, endpoint)) = ctx.tapes.claim_legacy().await {
        let s = ctx.open_session(k, true);
        let first = reel_net::sse::Event {
            event: Some("endpoint".into()),
            data: Some(format!("{endpoint}?sessionId={}", s.id)),
            ..reel_net::sse::Event::default()
        }
        .to_bytes(reel_net::sse::Eol::Lf);
        let rx = s.open_stream(Some(Bytes::from(first)), false);
        return sse_response(Reply::Stream(rx), None);
    }
    // No session: the recording's answer to a session-less GET, else 405.
    let status = if ctx.http_trace {
        ctx.tapes.facts(0).await.get
    } else {
        None
    };
    match status.and_then(|s| StatusCode::from_u16(s).ok()) {
        Some(s) if s != StatusCode::OK => respond(s, Reply::empty()),
        _ => not_allowed("POST"),
    }
}

fn sse_response(body: Reply, session: Option<&str>) -> Response<Reply> {
    let mut r = with_type(respond(StatusCode::OK, body), "text/event-stream");
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    match session {
        Some(id) => with_session(r, id),
        None => r,
    }
}

fn delete(ctx: &Ctx, req: Request<Incoming>) -> Response<Reply> {
    let Some(id) = header_str(&req, mcp_headers::SESSION_ID).map(str::to_owned) else {
        return not_allowed("GET, POST");
    };
    let Some(s) = lock(&ctx.sessions).remove(&id) else {
        return rpc_refusal(
            StatusCode::NOT_FOUND,
            -32001,
            "Session not found: reel play issued no such session, or it ended",
        );
    };
    s.end();
    ctx.tapes.end(s.tape);
    let status = ctx
        .tapes
        .facts_now(s.tape)
        .delete
        .and_then(|s| StatusCode::from_u16(s).ok())
        .unwrap_or(StatusCode::OK);
    respond(status, Reply::empty())
}
