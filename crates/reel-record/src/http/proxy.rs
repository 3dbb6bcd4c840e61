//! The reverse proxy itself: one task per client connection, one exchange per request,
//! one pump task per response body.
//!
//! Order in the trace follows cause and effect without ever holding a place in it while
//! waiting on a peer:
//! - a request body is recorded when it is complete, before its end is passed upstream
//!   (the upstream cannot answer a request it has not finished reading);
//! - an SSE chunk takes its place (a ticket) only once the client's channel has room,
//!   is sent, then parsed and its events queued under that ticket: anything the client
//!   does in reaction comes later;
//! - a plain (JSON) body is recorded before its last chunk goes out (or, without a
//!   `Content-Length`, before its end does): a client acts on a JSON body only once
//!   it has all of it.
//!
//! Sessions (`session` on every line): the request's `Mcp-Session-Id`; else the legacy
//! session whose `endpoint` the request was posted to; else the `Mcp-Session-Id` the
//! response issues (an `initialize`); else `reel:conn-N`, the client connection the
//! request came on (2026-07-28, stateless servers, a refused probe). A request line
//! whose session depends on the response waits for the response headers before it is
//! queued (it keeps the time it was received).

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Frame, Incoming};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{self, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use reel_mcp::serve::{accept_until_stopped, stopped};
use reel_mcp::sse::{Eol, Event, Parser};
use reel_trace::Timestamp;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, mpsc, watch};
use tokio_rustls::TlsConnector;

use super::body::{BodyEnd, Reply, ReplyFrame, TeeBody};
use super::guard::{Guard, Refusal};
use super::headers::{
    OriginRewriter, capture_request, capture_response, rewrite_response_urls, strip_hop_by_hop,
};
use super::note::{ExchangeNote, HttpNote, Note, RequestFacts, ResponseFacts, SseFacts};
use super::upstream::{self, UpstreamUrl};
use crate::queue::{FirstBehind, LineRecord, Queue, Stream, Ticket};
use crate::trace::{Notice, NoticeFn};

/// Frames buffered between a pump and the client's connection: the only buffering
/// between the upstream and the client.
pub const CHANNEL_FRAMES: usize = 16;
/// After a stop, how long connections and pumps get to finish before they are cut.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);
/// The first event of a GET event stream is held until complete, up to this many bytes,
/// so that a legacy `endpoint` event pointing at the upstream can be rewritten.
pub const GATE_MAX: usize = 16 * 1024;
/// Bytes of a non-MCP body (an HTML page, a non-JSON-RPC document) kept in its
/// `reel.http` event; the rest is counted (`truncated`), not kept.
pub const EXCERPT_MAX: usize = 64 * 1024;
/// OAuth / OpenID metadata documents are rewritten whole; larger ones are refused (502).
pub const METADATA_MAX: usize = 1024 * 1024;
/// Legacy HTTP+SSE sessions remembered (endpoint → session); the oldest is forgotten first.
pub const MAX_LEGACY_SESSIONS: usize = 65_536;
/// Custom paths of protected-resource metadata (named by `WWW-Authenticate`
/// `resource_metadata`) remembered, so that the document there is rewritten like the
/// ones at the well-known paths; the oldest is forgotten first.
pub const MAX_METADATA_PATHS: usize = 1024;
/// A request or a plain (non-SSE) response body with a `Content-Length` up to this size
/// is read whole before it is passed on: it arrives with its headers, and one write
/// instead of two (headers, then body) halves the proxy's cost per message. Larger
/// bodies, chunked ones and event streams are passed on chunk by chunk.
pub const INLINE_BODY_MAX: u64 = 64 * 1024;

/// What every task shares.
pub(crate) struct Shared {
    pub url: UpstreamUrl,
    pub tls: Option<TlsConnector>,
    pub rewriter: OriginRewriter,
    pub queue: Arc<Queue>,
    pub notices: NoticeFn,
    pub guard: Guard,
    pub listen: SocketAddr,
    pub stop: watch::Receiver<bool>,
    legacy: Mutex<Legacy>,
    metadata_paths: Mutex<VecDeque<String>>,
    requests: AtomicU64,
    failing: AtomicBool,
    refused_told: AtomicBool,
    active_pumps: AtomicUsize,
    pumps_idle: Notify,
}

#[derive(Default)]
struct Legacy {
    by_endpoint: HashMap<String, Arc<str>>,
    order: VecDeque<String>,
}

impl Shared {
    pub fn new(
        url: UpstreamUrl,
        tls: Option<TlsConnector>,
        queue: Arc<Queue>,
        notices: NoticeFn,
        guard: Guard,
        listen: SocketAddr,
        stop: watch::Receiver<bool>,
    ) -> Self {
        Shared {
            rewriter: upstream::rewriter(&url),
            url,
            tls,
            queue,
            notices,
            guard,
            listen,
            stop,
            legacy: Mutex::new(Legacy::default()),
            metadata_paths: Mutex::new(VecDeque::new()),
            requests: AtomicU64::new(0),
            failing: AtomicBool::new(false),
            refused_told: AtomicBool::new(false),
            active_pumps: AtomicUsize::new(0),
            pumps_idle: Notify::new(),
        }
    }

    /// Requests seen so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    fn push(&self, ticket: Option<Ticket>, lines: Vec<LineRecord>) {
        let ticket = ticket.unwrap_or_else(|| self.queue.ticket());
        let behind = |first| {
            (self.notices)(Notice::Behind {
                dropping: first == FirstBehind::Dropping,
            })
        };
        self.queue.push(ticket, lines, &behind);
    }

    fn upstream_failed(&self, error: &str) {
        if !self.failing.swap(true, Ordering::Relaxed) {
            (self.notices)(Notice::UpstreamFailed {
                error: error.to_owned(),
            });
        }
    }

    fn upstream_ok(&self) {
        if self.failing.load(Ordering::Relaxed) {
            self.failing.store(false, Ordering::Relaxed);
        }
    }

    fn legacy(&self) -> MutexGuard<'_, Legacy> {
        self.legacy.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The legacy session a request posted to `path` belongs to.
    fn legacy_session(&self, path: &str) -> Option<Arc<str>> {
        self.legacy().by_endpoint.get(path).cloned()
    }

    /// Remembers the endpoint a legacy `endpoint` event announced; returns its session
    /// (the value of its `sessionId`/`session_id` query parameter, else the endpoint).
    fn register_endpoint(&self, data: &str, request_path: &str) -> Option<Arc<str>> {
        let data = data.trim();
        let rel = match self.rewriter.strip(data) {
            Some(rest) => rest,
            None if data.contains("://") => return None,
            None => data,
        };
        let path = if rel.starts_with('/') {
            rel.to_owned()
        } else {
            let base = request_path.split('?').next().unwrap_or("/");
            let dir = base.rsplit_once('/').map_or("", |(d, _)| d);
            format!("{dir}/{rel}")
        };
        let key: Arc<str> = path
            .split_once('?')
            .and_then(|(_, q)| {
                q.split('&').find_map(|pair| {
                    let (k, v) = pair.split_once('=')?;
                    (k.to_ascii_lowercase().contains("session") && !v.is_empty()).then_some(v)
                })
            })
            .unwrap_or(&path)
            .into();
        let mut legacy = self.legacy();
        if legacy
            .by_endpoint
            .insert(path.clone(), Arc::clone(&key))
            .is_none()
        {
            legacy.order.push_back(path);
            if legacy.order.len() > MAX_LEGACY_SESSIONS {
                if let Some(old) = legacy.order.pop_front() {
                    legacy.by_endpoint.remove(&old);
                }
            }
        }
        Some(key)
    }

    fn metadata_paths(&self) -> MutexGuard<'_, VecDeque<String>> {
        self.metadata_paths
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Remembers the upstream paths a `WWW-Authenticate` value names as
    /// `resource_metadata`.
    fn note_metadata_urls(&self, headers: &hyper::HeaderMap) {
        for v in headers.get_all(header::WWW_AUTHENTICATE) {
            let Ok(v) = v.to_str() else { continue };
            for url in super::headers::resource_metadata_urls(v) {
                let Some(rest) = self.rewriter.strip(url) else {
                    continue;
                };
                let path = rest.split('#').next().unwrap_or("");
                let path = if path.is_empty() { "/" } else { path };
                let mut paths = self.metadata_paths();
                if !paths.iter().any(|p| p == path) {
                    paths.push_back(path.to_owned());
                    if paths.len() > MAX_METADATA_PATHS {
                        paths.pop_front();
                    }
                }
            }
        }
    }

    /// Whether `path` serves OAuth / OpenID metadata: a well-known path, or one a
    /// `WWW-Authenticate` named.
    fn is_metadata_path(&self, path: &str) -> bool {
        path.starts_with("/.well-known/oauth-")
            || path.starts_with("/.well-known/openid-configuration")
            || self.metadata_paths().iter().any(|p| p == path)
    }

    /// Waits until every pump has finished (or `SHUTDOWN_GRACE` passed).
    pub async fn pumps_done(&self) {
        let wait = async {
            loop {
                let idle = self.pumps_idle.notified();
                if self.active_pumps.load(Ordering::Acquire) == 0 {
                    return;
                }
                idle.await;
            }
        };
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, wait).await;
    }
}

/// Accepts client connections until stopped, then lets them finish (see
/// [`SHUTDOWN_GRACE`]) and waits for the body pumps.
pub(crate) async fn serve(listener: TcpListener, sh: Arc<Shared>) {
    let on_conn = {
        let sh = Arc::clone(&sh);
        move |stream, n| connection(stream, Arc::clone(&sh), n)
    };
    accept_until_stopped(listener, sh.stop.clone(), SHUTDOWN_GRACE, || {}, on_conn).await;
    sh.pumps_done().await;
}

/// A client connection: its session key and its connection to the upstream.
struct ClientConn {
    key: Arc<str>,
    upstream: tokio::sync::Mutex<Option<SendRequest<TeeBody>>>,
}

async fn connection(stream: TcpStream, sh: Arc<Shared>, n: u64) {
    let _ = stream.set_nodelay(true);
    let conn = Arc::new(ClientConn {
        key: format!("reel:conn-{n}").into(),
        upstream: tokio::sync::Mutex::new(None),
    });
    let svc = {
        let sh = Arc::clone(&sh);
        service_fn(move |req| handle(Arc::clone(&sh), Arc::clone(&conn), req))
    };
    let mut http = pin!(http1::Builder::new().serve_connection(TokioIo::new(stream), svc));
    let mut stop = pin!(stopped(sh.stop.clone()));
    tokio::select! {
        _ = http.as_mut() => {}
        _ = &mut stop => {
            http.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(SHUTDOWN_GRACE, http).await;
        }
    }
}

impl ClientConn {
    /// Sends `req` upstream on this client's upstream connection, opening one when there
    /// is none or it was closed; a request the closed connection never took is sent
    /// again once on a fresh one.
    /// `on_sent` runs once the request is handed to the upstream connection, before its
    /// answer is awaited (the trace work it does then overlaps the upstream's).
    async fn send(
        &self,
        sh: &Shared,
        req: Request<TeeBody>,
        on_sent: impl FnOnce(),
    ) -> Result<hyper::Response<Incoming>, String> {
        let mut on_sent = Some(on_sent);
        let mut req = Some(req);
        for attempt in 0..2 {
            let mut sender = {
                let mut slot = self.upstream.lock().await;
                match slot.take() {
                    Some(s) if !s.is_closed() => s,
                    _ => upstream::open(&sh.url, sh.tls.as_ref()).await?,
                }
            };
            if sender.ready().await.is_err() {
                if attempt == 0 {
                    continue;
                }
                return Err("the upstream closed the connection".to_owned());
            }
            let Some(r) = req.take() else {
                return Err("internal error: no request".to_owned());
            };
            let answer = sender.try_send_request(r);
            *self.upstream.lock().await = Some(sender);
            if let Some(f) = on_sent.take() {
                f();
            }
            match answer.await {
                Ok(resp) => return Ok(resp),
                Err(mut e) => match e.take_message() {
                    Some(r) if attempt == 0 => {
                        *self.upstream.lock().await = None;
                        req = Some(r);
                    }
                    _ => return Err(format!("the upstream failed: {}", e.into_error())),
                },
            }
        }
        Err("the upstream closed the connection".to_owned())
    }

    /// Opens (or checks) the upstream connection before the request is built, so that
    /// a failure leaves the client's body in reel's hands.
    async fn ensure(&self, sh: &Shared) -> Result<(), String> {
        let mut slot = self.upstream.lock().await;
        if slot.as_ref().is_some_and(|s| !s.is_closed()) {
            return Ok(());
        }
        *slot = Some(upstream::open(&sh.url, sh.tls.as_ref()).await?);
        Ok(())
    }
}

/// One request and what the trace needs of it.
pub(crate) struct Exchange {
    sh: Arc<Shared>,
    facts: Arc<RequestFacts>,
    conn_key: Arc<str>,
    state: Mutex<ExState>,
}

#[derive(Default)]
struct ExState {
    session: Option<Arc<str>>,
    /// The request line, waiting for its session.
    held: Option<LineRecord>,
    body: BodyState,
    /// A form body (an OAuth token request), kept for the exchange's `reel.http` line.
    form: Option<Arc<Vec<u8>>>,
    /// A response (the upstream's or reel's own) was recorded or is being streamed.
    answered: bool,
    /// The client's request body broke off (it went away mid-body): why.
    client_broke: Option<String>,
}

#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum BodyState {
    #[default]
    Pending,
    Empty,
    /// A body that is (or should be) a JSON-RPC message: a message line of its own.
    Carried,
    /// An `application/x-www-form-urlencoded` body (OAuth): not an MCP message; it goes
    /// into the exchange's `reel.http` line with its values redacted.
    Form,
}

impl Exchange {
    fn lock(&self) -> MutexGuard<'_, ExState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn request_line(&self, mut line: LineRecord, session: Arc<str>) -> LineRecord {
        line.http = Some(Box::new(HttpNote {
            session,
            note: Note::Request(Arc::clone(&self.facts)),
        }));
        line
    }

    /// The request body is complete, or was cut off.
    fn request_done(&self, bytes: Vec<u8>, end: BodyEnd) {
        let mut st = self.lock();
        if let BodyEnd::ClientBroke(why) = end {
            st.client_broke = Some(why);
        }
        if st.body != BodyState::Pending {
            // Recorded already.
            return;
        }
        if bytes.is_empty() {
            st.body = BodyState::Empty;
            return;
        }
        let form = self.facts.headers.iter().any(|(n, v)| {
            *n == "content-type"
                && v.to_ascii_lowercase()
                    .starts_with("application/x-www-form-urlencoded")
        });
        if form {
            st.body = BodyState::Form;
            let mut bytes = bytes;
            bytes.truncate(EXCERPT_MAX);
            st.form = Some(Arc::new(bytes));
            return;
        }
        st.body = BodyState::Carried;
        let line = LineRecord {
            stream: Stream::ClientToServer,
            t: Timestamp::now(),
            bytes,
            crlf: false,
            http: None,
        };
        match st.session.clone() {
            Some(s) => {
                drop(st);
                let line = self.request_line(line, s);
                self.sh.push(None, vec![line]);
            }
            None => st.held = Some(line),
        }
    }

    /// Settles the session (once); a request line waiting for it is queued now.
    fn set_session(&self, s: Arc<str>) {
        let mut st = self.lock();
        if st.session.is_some() {
            return;
        }
        st.session = Some(Arc::clone(&s));
        if let Some(line) = st.held.take() {
            drop(st);
            let line = self.request_line(line, s);
            self.sh.push(None, vec![line]);
        }
    }

    fn session(&self) -> Option<Arc<str>> {
        self.lock().session.clone()
    }

    fn client_broke(&self) -> Option<String> {
        self.lock().client_broke.clone()
    }

    fn session_or_conn(&self) -> Arc<str> {
        self.session().unwrap_or_else(|| Arc::clone(&self.conn_key))
    }

    /// The request carried a JSON-RPC body (or may still: it is not complete yet).
    fn carried_body(&self) -> bool {
        matches!(self.lock().body, BodyState::Pending | BodyState::Carried)
    }

    fn note(&self, response: Option<Arc<ResponseFacts>>) -> ExchangeNote {
        ExchangeNote {
            request: Arc::clone(&self.facts),
            response,
            error: None,
            refused: None,
            end: None,
            body_total: None,
            form: self.lock().form.clone(),
        }
    }

    fn exchange_line(&self, session: Arc<str>, note: ExchangeNote, bytes: Vec<u8>) -> LineRecord {
        LineRecord {
            stream: Stream::ServerToClient,
            t: Timestamp::now(),
            bytes,
            crlf: false,
            http: Some(Box::new(HttpNote {
                session,
                note: Note::Exchange(Box::new(note)),
            })),
        }
    }
}

impl Exchange {
    fn answered(&self) {
        self.lock().answered = true;
    }
}

impl Drop for Exchange {
    /// A request the client gave up on before any answer (it closed the connection: for
    /// a 2026-07-28 request, that is how a client cancels) still shows in the trace.
    fn drop(&mut self) {
        let (held, answered) = {
            let mut st = self.lock();
            (st.held.take(), st.answered)
        };
        let session = self.session_or_conn();
        let mut lines = Vec::new();
        if let Some(line) = held {
            lines.push(self.request_line(line, Arc::clone(&session)));
        }
        if !answered {
            let mut note = self.note(None);
            note.end = Some("client");
            lines.push(self.exchange_line(session, note, Vec::new()));
        }
        if !lines.is_empty() {
            self.sh.push(None, lines);
        }
    }
}

async fn handle(
    sh: Arc<Shared>,
    conn: Arc<ClientConn>,
    req: Request<Incoming>,
) -> Result<Response<Reply>, Infallible> {
    let n = sh.requests.fetch_add(1, Ordering::Relaxed) + 1;
    let (mut parts, body) = req.into_parts();
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    let facts = Arc::new(RequestFacts::new(
        n,
        parts.method.as_str(),
        path.clone(),
        capture_request(&parts.headers),
    ));
    let session = parts
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(Arc::<str>::from)
        .or_else(|| sh.legacy_session(&path));
    let ex = Arc::new(Exchange {
        sh: Arc::clone(&sh),
        facts,
        conn_key: Arc::clone(&conn.key),
        state: Mutex::new(ExState {
            session,
            ..ExState::default()
        }),
    });
    if let Err(r) = sh.guard.check(&parts.headers) {
        return Ok(refuse(&sh, &ex, r));
    }
    let proxy_origin = match parts
        .headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
    {
        Some(h) => format!("http://{h}"),
        None => format!("http://{}", sh.listen),
    };
    // A small body read whole is recorded once it is on its way upstream.
    let mut whole = None;
    let tee = if hyper::body::Body::is_end_stream(&body)
        || content_length(&parts.headers).is_some_and(|n| n <= INLINE_BODY_MAX)
    {
        match body.collect().await {
            Ok(b) => {
                let b = b.to_bytes();
                whole = Some(b.clone());
                TeeBody::whole(b)
            }
            Err(e) => return Ok(bad_request(&sh, &ex, &e.to_string())),
        }
    } else {
        let ex = Arc::clone(&ex);
        TeeBody::new(
            body,
            Box::new(move |bytes, end| ex.request_done(bytes, end)),
        )
    };
    let record_whole = || {
        if let Some(b) = &whole {
            ex.request_done(b.to_vec(), BodyEnd::Whole);
        }
    };
    if let Err(e) = conn.ensure(&sh).await {
        // Read what the client sent (briefly) so the trace shows the request.
        record_whole();
        let _ = tokio::time::timeout(Duration::from_secs(1), tee.collect()).await;
        return Ok(bad_gateway(&sh, &ex, &e));
    }
    let method = parts.method.clone();
    prepare_upstream_request(&sh, &mut parts);
    let upstream_req = Request::from_parts(parts, tee);
    let answer = {
        let mut stop = pin!(stopped(sh.stop.clone()));
        tokio::select! {
            r = conn.send(&sh, upstream_req, record_whole) => Some(r),
            _ = &mut stop => None,
        }
    };
    // A request that never left still shows in the trace (once).
    record_whole();
    match answer {
        None => Ok(shutting_down(&ex)),
        // The upstream hop failed because the client's body did: not the upstream's
        // fault.
        Some(Err(e)) => match ex.client_broke() {
            Some(why) => Ok(bad_request(&sh, &ex, &why)),
            None => Ok(bad_gateway(&sh, &ex, &e)),
        },
        Some(Ok(resp)) => Ok(respond(&sh, &ex, &conn, resp, &proxy_origin, &method).await),
    }
}

/// The upstream hop's request: hop-by-hop headers out, `Host` the upstream's, a
/// (vetted, loopback) `Origin` the upstream's origin, bodies unencoded so the trace can
/// read them.
fn prepare_upstream_request(sh: &Shared, parts: &mut hyper::http::request::Parts) {
    strip_hop_by_hop(&mut parts.headers);
    if let Ok(h) = HeaderValue::from_str(&sh.url.authority) {
        parts.headers.insert(header::HOST, h);
    }
    if parts.headers.contains_key(header::ORIGIN) {
        let scheme = if sh.url.https { "https" } else { "http" };
        if let Ok(o) = HeaderValue::from_str(&format!("{scheme}://{}", sh.url.authority)) {
            parts.headers.insert(header::ORIGIN, o);
        }
    }
    parts.headers.insert(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static("identity"),
    );
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    if let Ok(uri) = path.parse() {
        parts.uri = uri;
    }
}

fn text_response(status: StatusCode, body: String) -> Response<Reply> {
    let mut r = Response::new(Reply::full(body));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

fn refuse(sh: &Shared, ex: &Exchange, r: Refusal) -> Response<Reply> {
    ex.answered();
    if !sh.refused_told.swap(true, Ordering::Relaxed) {
        (sh.notices)(Notice::Refused {
            what: format!("{} {}", r.header, r.value),
        });
    }
    let resp = text_response(
        StatusCode::FORBIDDEN,
        format!(
            "reel: refused: the {} header {:?} is not a loopback name (DNS rebinding protection; start reel with --allow-host to allow it)\n",
            r.header, r.value
        ),
    );
    let facts = Arc::new(ResponseFacts::new(
        ex.facts.req,
        403,
        capture_response(resp.headers()),
    ));
    let mut note = ex.note(Some(facts));
    note.refused = Some(r.header);
    let line = ex.exchange_line(ex.session_or_conn(), note, Vec::new());
    sh.push(None, vec![line]);
    resp
}

fn bad_gateway(sh: &Shared, ex: &Exchange, error: &str) -> Response<Reply> {
    ex.answered();
    sh.upstream_failed(&format!("upstream {}: {error}", sh.url.url));
    let resp = text_response(
        StatusCode::BAD_GATEWAY,
        format!("reel: cannot reach the upstream {}: {error}\n", sh.url.url),
    );
    let facts = Arc::new(ResponseFacts::new(
        ex.facts.req,
        502,
        capture_response(resp.headers()),
    ));
    let mut note = ex.note(Some(facts));
    note.error = Some(error.to_owned());
    let session = ex.session_or_conn();
    ex.set_session(Arc::clone(&session));
    let line = ex.exchange_line(session, note, Vec::new());
    sh.push(None, vec![line]);
    resp
}

fn bad_request(sh: &Shared, ex: &Exchange, error: &str) -> Response<Reply> {
    ex.answered();
    let resp = text_response(
        StatusCode::BAD_REQUEST,
        format!("reel: the request body broke off: {error}\n"),
    );
    let mut note = ex.note(None);
    note.error = Some(format!("the client's request body broke off: {error}"));
    let session = ex.session_or_conn();
    ex.set_session(Arc::clone(&session));
    sh.push(None, vec![ex.exchange_line(session, note, Vec::new())]);
    resp
}

fn content_length(headers: &hyper::HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
}

fn shutting_down(ex: &Exchange) -> Response<Reply> {
    ex.answered();
    let resp = text_response(
        StatusCode::SERVICE_UNAVAILABLE,
        "reel: the recording proxy is shutting down\n".to_owned(),
    );
    let mut note = ex.note(None);
    note.end = Some("shutdown");
    let session = ex.session_or_conn();
    ex.set_session(Arc::clone(&session));
    let line = ex.exchange_line(session, note, Vec::new());
    ex.sh.push(None, vec![line]);
    resp
}

async fn respond(
    sh: &Arc<Shared>,
    ex: &Arc<Exchange>,
    conn: &ClientConn,
    resp: hyper::Response<Incoming>,
    proxy_origin: &str,
    method: &Method,
) -> Response<Reply> {
    sh.upstream_ok();
    ex.answered();
    let (mut parts, body) = resp.into_parts();
    let facts = Arc::new(ResponseFacts::new(
        ex.facts.req,
        parts.status.as_u16(),
        capture_response(&parts.headers),
    ));
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let is_sse = content_type.starts_with("text/event-stream");
    let issued = parts
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(Arc::<str>::from);
    // A legacy GET stream's session comes with its first event.
    let waits_for_endpoint =
        ex.session().is_none() && issued.is_none() && is_sse && method == Method::GET;
    if !waits_for_endpoint {
        ex.set_session(issued.unwrap_or_else(|| Arc::clone(&conn.key)));
    }
    strip_hop_by_hop(&mut parts.headers);
    if parts.headers.contains_key(header::WWW_AUTHENTICATE) {
        sh.note_metadata_urls(&parts.headers);
    }
    rewrite_response_urls(&mut parts.headers, &sh.rewriter, proxy_origin);
    if is_sse && method == Method::GET {
        // A rewritten `endpoint` event changes the length.
        parts.headers.remove(header::CONTENT_LENGTH);
    }

    let is_metadata = content_type.contains("json") && sh.is_metadata_path(&ex.facts.path);
    if is_metadata {
        return metadata(sh, ex, parts, body, facts, proxy_origin).await;
    }

    // A stream opened by a request without a body (a GET) shows in the trace at once.
    if is_sse && !ex.carried_body() && !waits_for_endpoint {
        let note = ex.note(Some(Arc::clone(&facts)));
        sh.push(
            None,
            vec![ex.exchange_line(ex.session_or_conn(), note, Vec::new())],
        );
    }
    let expected = if is_sse || method == Method::HEAD {
        None
    } else {
        content_length(&parts.headers)
    };
    if method == Method::HEAD || expected.is_some_and(|n| n <= INLINE_BODY_MAX) {
        return inline(sh, ex, parts, body, facts).await;
    }
    let (tx, rx) = mpsc::channel(CHANNEL_FRAMES);
    let pump = Pump {
        sh: Arc::clone(sh),
        ex: Arc::clone(ex),
        facts,
        tx,
        kind: if is_sse {
            PumpKind::Sse(SseState {
                parser: Parser::new(),
                gate: (method == Method::GET).then(Vec::new),
                stream_session: None,
                http_event_pending: waits_for_endpoint,
                proxy_origin: proxy_origin.to_owned(),
            })
        } else {
            PumpKind::Plain(PlainState {
                copy: Vec::new(),
                total: 0,
                expected,
                recorded: false,
            })
        },
    };
    sh.active_pumps.fetch_add(1, Ordering::AcqRel);
    tokio::spawn(pump.run(body));
    Response::from_parts(parts, Reply::stream(rx))
}

/// A small plain body read whole before anything goes to the client. Should it not
/// arrive whole (the upstream breaks off, reel is stopped, the client leaves), the
/// trace keeps the upstream's status, the bytes that came and how it ended, as a pump
/// does, and the client gets the same cut-off response, not one of reel's own.
async fn inline(
    sh: &Shared,
    ex: &Arc<Exchange>,
    parts: hyper::http::response::Parts,
    mut body: Incoming,
    facts: Arc<ResponseFacts>,
) -> Response<Reply> {
    let mut read = InlineRead {
        ex: Arc::clone(ex),
        facts,
        bytes: Vec::new(),
        armed: true,
    };
    let mut stop = pin!(stopped(sh.stop.clone()));
    let end = loop {
        let frame = tokio::select! {
            biased;
            _ = &mut stop => break End::Shutdown,
            f = body.frame() => f,
        };
        match frame {
            None => break End::Upstream,
            Some(Err(e)) => break End::Error(format!("the upstream broke off the response: {e}")),
            Some(Ok(frame)) => {
                if let Some(d) = frame.data_ref() {
                    read.bytes.extend_from_slice(d);
                }
            }
        }
    };
    let bytes = read.take();
    if matches!(end, End::Upstream) {
        let line = plain_line(ex, &read.facts, bytes.clone(), bytes.len() as u64);
        sh.push(None, vec![line]);
        return Response::from_parts(parts, Reply::full(bytes));
    }
    let mut note = ex.note(Some(Arc::clone(&read.facts)));
    let (tx, rx) = mpsc::channel(2);
    if !bytes.is_empty() {
        let _ = tx.try_send(Ok(Frame::data(Bytes::from(bytes.clone()))));
    }
    match end {
        End::Error(e) => {
            // The client must see a broken response, not a complete one.
            let _ = tx.try_send(Err(std::io::Error::other(e.clone())));
            note.error = Some(e);
        }
        // The body ends short of its length: hyper cuts the connection.
        _ => note.end = Some("shutdown"),
    }
    sh.push(None, read.cut_lines(bytes, note));
    Response::from_parts(parts, Reply::stream(rx))
}

/// The bytes of a small plain body read so far; recorded, with `end: "client"`, if
/// the client leaves (its handler is dropped) before the body is whole.
struct InlineRead {
    ex: Arc<Exchange>,
    facts: Arc<ResponseFacts>,
    bytes: Vec<u8>,
    armed: bool,
}

impl InlineRead {
    fn take(&mut self) -> Vec<u8> {
        self.armed = false;
        std::mem::take(&mut self.bytes)
    }

    /// The lines of a body cut short: the bytes that came (if any), then how it ended.
    fn cut_lines(&self, bytes: Vec<u8>, note: ExchangeNote) -> Vec<LineRecord> {
        let mut lines = Vec::new();
        if !bytes.is_empty() {
            let total = bytes.len() as u64;
            lines.push(plain_line(&self.ex, &self.facts, bytes, total));
        }
        lines.push(
            self.ex
                .exchange_line(self.ex.session_or_conn(), note, Vec::new()),
        );
        lines
    }
}

impl Drop for InlineRead {
    fn drop(&mut self) {
        if self.armed {
            let bytes = self.take();
            let mut note = self.ex.note(Some(Arc::clone(&self.facts)));
            note.end = Some("client");
            let lines = self.cut_lines(bytes, note);
            self.ex.sh.push(None, lines);
        }
    }
}

/// An OAuth / OpenID metadata document: read whole, upstream URLs rewritten to reel's
/// origin (a client checks that `resource` is the server it talks to), recorded.
async fn metadata(
    sh: &Shared,
    ex: &Exchange,
    mut parts: hyper::http::response::Parts,
    body: Incoming,
    facts: Arc<ResponseFacts>,
    proxy_origin: &str,
) -> Response<Reply> {
    let collected = http_body_util::Limited::new(body, METADATA_MAX)
        .collect()
        .await;
    let bytes = match collected {
        Ok(c) => c.to_bytes(),
        Err(e) => {
            return bad_gateway(
                sh,
                ex,
                &format!(
                    "the metadata document at {} could not be read: {e}",
                    ex.facts.path
                ),
            );
        }
    };
    let rewritten = std::str::from_utf8(&bytes)
        .ok()
        .and_then(|s| sh.rewriter.rewrite(s, proxy_origin));
    let out = rewritten.map_or(bytes, Bytes::from);
    parts.headers.remove(header::CONTENT_LENGTH);
    let note = ex.note(Some(facts));
    sh.push(
        None,
        vec![ex.exchange_line(ex.session_or_conn(), note, out.to_vec())],
    );
    Response::from_parts(parts, Reply::full(out))
}

/// How a response body stream ended.
enum End {
    /// The upstream finished it.
    Upstream,
    /// The upstream broke off.
    Error(String),
    /// The client went away.
    Client,
    /// reel was stopped.
    Shutdown,
}

/// Reads an upstream response body, passes each chunk to the client and records it.
struct Pump {
    sh: Arc<Shared>,
    ex: Arc<Exchange>,
    facts: Arc<ResponseFacts>,
    tx: mpsc::Sender<ReplyFrame>,
    kind: PumpKind,
}

enum PumpKind {
    Sse(SseState),
    Plain(PlainState),
}

struct SseState {
    parser: Parser,
    /// The first event of a GET stream, held until complete (`None` once passed).
    gate: Option<Vec<u8>>,
    /// The legacy session the stream's `endpoint` event named.
    stream_session: Option<Arc<str>>,
    /// The stream's `reel.http` line waits for its session (legacy `endpoint`).
    http_event_pending: bool,
    proxy_origin: String,
}

struct PlainState {
    copy: Vec<u8>,
    total: u64,
    expected: Option<u64>,
    recorded: bool,
}

impl Pump {
    async fn run(mut self, mut body: Incoming) {
        let mut stop = pin!(stopped(self.sh.stop.clone()));
        let end = loop {
            let frame = tokio::select! {
                biased;
                _ = &mut stop => break End::Shutdown,
                // A client that goes away while the stream is idle ends it too (for a
                // 2026-07-28 request, closing the stream is how a client cancels).
                _ = self.tx.closed() => break End::Client,
                f = body.frame() => f,
            };
            match frame {
                None => break End::Upstream,
                Some(Err(e)) => {
                    break End::Error(format!("the upstream broke off the response: {e}"));
                }
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => {
                        if let Err(end) = self.data(data, stop.as_mut()).await {
                            break end;
                        }
                    }
                    Err(frame) => {
                        if let Err(end) = self.send(frame, stop.as_mut()).await {
                            break end;
                        }
                    }
                },
            }
        };
        drop(body);
        self.finish(end).await;
        if self.sh.active_pumps.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.sh.pumps_idle.notify_waiters();
        }
    }

    /// Waits for room in the client's channel (holding no place in the trace).
    async fn room(
        &self,
        stop: Pin<&mut impl std::future::Future<Output = ()>>,
    ) -> Result<mpsc::Permit<'_, ReplyFrame>, End> {
        tokio::select! {
            biased;
            _ = stop => Err(End::Shutdown),
            p = self.tx.reserve() => p.map_err(|_| End::Client),
        }
    }

    async fn send(
        &self,
        frame: Frame<Bytes>,
        stop: Pin<&mut impl std::future::Future<Output = ()>>,
    ) -> Result<(), End> {
        self.room(stop).await?.send(Ok(frame));
        Ok(())
    }

    async fn data(
        &mut self,
        data: Bytes,
        stop: Pin<&mut impl std::future::Future<Output = ()>>,
    ) -> Result<(), End> {
        if matches!(self.kind, PumpKind::Sse(_)) {
            let Some(data) = self.gate(data) else {
                return Ok(());
            };
            let permit = self.room(stop).await?;
            let ticket = memchr::memchr2(b'\n', b'\r', &data).map(|_| self.sh.queue.ticket());
            permit.send(Ok(Frame::data(data.clone())));
            let lines = self.parse(&data);
            if let Some(t) = ticket {
                self.sh.push(Some(t), lines);
            } else if !lines.is_empty() {
                self.sh.push(None, lines);
            }
            return Ok(());
        }
        let carried = self.ex.carried_body();
        let PumpKind::Plain(p) = &mut self.kind else {
            return Ok(());
        };
        p.total += data.len() as u64;
        let last = p.expected == Some(p.total);
        if carried {
            p.copy.extend_from_slice(&data);
        } else if p.copy.len() < EXCERPT_MAX {
            let room = EXCERPT_MAX - p.copy.len();
            p.copy.extend_from_slice(&data[..data.len().min(room)]);
        }
        let permit = self.room(stop).await?;
        let ticket = last.then(|| self.sh.queue.ticket());
        permit.send(Ok(Frame::data(data)));
        if last {
            let lines = self.plain_lines();
            self.sh.push(ticket, lines);
        }
        Ok(())
    }

    /// Passes the first event of a GET stream through the gate; returns what may be
    /// forwarded now.
    fn gate(&mut self, data: Bytes) -> Option<Bytes> {
        let PumpKind::Sse(s) = &mut self.kind else {
            return Some(data);
        };
        let Some(held) = &mut s.gate else {
            return Some(data);
        };
        held.extend_from_slice(&data);
        let end = match first_event_end(held) {
            Some(end) => end,
            None if held.len() > GATE_MAX => held.len(),
            None => return None,
        };
        let held = s.gate.take().unwrap_or_default();
        let (first, rest) = held.split_at(end);
        let mut out = self.first_event(first);
        out.extend_from_slice(rest);
        Some(Bytes::from(out))
    }

    /// The first event of a GET stream: a legacy `endpoint` event registers its session
    /// (before the client can post to it) and, when it points at the upstream, is
    /// rewritten to point at reel.
    fn first_event(&mut self, raw: &[u8]) -> Vec<u8> {
        let PumpKind::Sse(s) = &mut self.kind else {
            return raw.to_vec();
        };
        let mut events = Vec::new();
        let mut p = Parser::new();
        p.feed(raw, |e| events.push(e));
        p.finish(|e| events.push(e));
        let endpoint = events
            .iter()
            .find(|e| e.event.as_deref() == Some("endpoint"))
            .and_then(|e| e.data.clone());
        let mut out = raw.to_vec();
        if let Some(data) = endpoint {
            if let Some(key) = self.sh.register_endpoint(&data, &self.ex.facts.path) {
                s.stream_session = Some(Arc::clone(&key));
                self.ex.set_session(key);
            }
            out = rewrite_data_lines(raw, &self.sh.rewriter, &s.proxy_origin);
        }
        if std::mem::take(&mut s.http_event_pending) {
            let session = s
                .stream_session
                .clone()
                .unwrap_or_else(|| self.ex.session_or_conn());
            let note = self.ex.note(Some(Arc::clone(&self.facts)));
            self.sh
                .push(None, vec![self.ex.exchange_line(session, note, Vec::new())]);
        }
        out
    }

    fn parse(&mut self, data: &[u8]) -> Vec<LineRecord> {
        let PumpKind::Sse(s) = &mut self.kind else {
            return Vec::new();
        };
        let mut events = Vec::new();
        s.parser.feed(data, |e| events.push(e));
        self.sse_lines(events)
    }

    fn stream_session(&self) -> Arc<str> {
        match &self.kind {
            PumpKind::Sse(SseState {
                stream_session: Some(s),
                ..
            }) => Arc::clone(s),
            _ => self.ex.session_or_conn(),
        }
    }

    fn sse_lines(&self, events: Vec<Event>) -> Vec<LineRecord> {
        if events.is_empty() {
            return Vec::new();
        }
        let session = self.stream_session();
        events
            .into_iter()
            .filter(|e| !e.is_comment_only())
            .map(|e| {
                let sse = SseFacts {
                    id: e.id,
                    event: e.event,
                    retry: e.retry,
                    eol: (e.eol != Eol::Lf).then_some(e.eol),
                    has_data: e.data.is_some(),
                };
                let data = e.data.unwrap_or_default();
                let json_like = data.trim_start().starts_with(['{', '[']);
                let note = if json_like {
                    Note::Response {
                        facts: Arc::clone(&self.facts),
                        sse: Some(sse),
                    }
                } else {
                    Note::Sse {
                        facts: Arc::clone(&self.facts),
                        sse,
                    }
                };
                LineRecord {
                    stream: Stream::ServerToClient,
                    t: Timestamp::now(),
                    bytes: data.into_bytes(),
                    crlf: false,
                    http: Some(Box::new(HttpNote {
                        session: Arc::clone(&session),
                        note,
                    })),
                }
            })
            .collect()
    }

    /// The record of a complete plain body (see [`plain_line`]), once.
    fn plain_lines(&mut self) -> Vec<LineRecord> {
        let PumpKind::Plain(p) = &mut self.kind else {
            return Vec::new();
        };
        if std::mem::replace(&mut p.recorded, true) {
            return Vec::new();
        }
        let bytes = std::mem::take(&mut p.copy);
        vec![plain_line(&self.ex, &self.facts, bytes, p.total)]
    }

    async fn finish(&mut self, end: End) {
        let mut lines = Vec::new();
        // Whatever the gate still holds goes out as it is, and into the trace however
        // the stream ended (an upstream that breaks off mid-event, a client that leaves,
        // a stop): the upstream sent it.
        if let PumpKind::Sse(s) = &mut self.kind {
            if let Some(held) = s.gate.take() {
                if !held.is_empty() {
                    let out = self.first_event(&held);
                    let frame = || Ok(Frame::data(Bytes::from(out.clone())));
                    match end {
                        End::Upstream => {
                            if let Ok(p) = self.tx.reserve().await {
                                p.send(frame());
                            }
                        }
                        // No waiting on a client that may not read any more.
                        End::Error(_) | End::Shutdown => {
                            let _ = self.tx.try_send(frame());
                        }
                        End::Client => {}
                    }
                    lines.extend(self.parse(&out));
                }
            }
        }
        match &mut self.kind {
            PumpKind::Sse(s) => {
                let mut events = Vec::new();
                s.parser.finish(|e| events.push(e));
                if std::mem::take(&mut s.http_event_pending) {
                    let note = self.ex.note(Some(Arc::clone(&self.facts)));
                    lines.push(
                        self.ex
                            .exchange_line(self.ex.session_or_conn(), note, Vec::new()),
                    );
                }
                lines.extend(self.sse_lines(events));
            }
            PumpKind::Plain(_) => lines.extend(self.plain_lines()),
        }
        let (error, end_reason) = match &end {
            End::Upstream => (None, None),
            End::Error(e) => (Some(e.clone()), None),
            End::Client => (None, Some("client")),
            End::Shutdown => (None, Some("shutdown")),
        };
        if error.is_some() || end_reason.is_some() {
            let mut note = self.ex.note(Some(Arc::clone(&self.facts)));
            note.error = error.clone();
            note.end = end_reason;
            lines.push(
                self.ex
                    .exchange_line(self.stream_session(), note, Vec::new()),
            );
        }
        if !lines.is_empty() {
            self.sh.push(None, lines);
        }
        if let Some(e) = error {
            // The client must see a broken response, not a complete one.
            let _ = self.tx.try_send(Err(std::io::Error::other(e)));
        }
    }
}

/// The record of a complete plain body: a message line when the exchange is an MCP one
/// (its request carried a body) and the body is not empty; otherwise a `reel.http`
/// event with the status and the body's first bytes (`total` is its full size).
fn plain_line(
    ex: &Exchange,
    facts: &Arc<ResponseFacts>,
    mut bytes: Vec<u8>,
    total: u64,
) -> LineRecord {
    let session = ex.session_or_conn();
    if ex.carried_body() && !bytes.is_empty() {
        return LineRecord {
            stream: Stream::ServerToClient,
            t: Timestamp::now(),
            bytes,
            crlf: false,
            http: Some(Box::new(HttpNote {
                session,
                note: Note::Response {
                    facts: Arc::clone(facts),
                    sse: None,
                },
            })),
        };
    }
    bytes.truncate(EXCERPT_MAX);
    let mut note = ex.note(Some(Arc::clone(facts)));
    if total > bytes.len() as u64 {
        note.body_total = Some(total);
    }
    ex.exchange_line(session, note, bytes)
}

/// The end (after its blank line) of the first event in `bytes`, if it is complete. A
/// CR at the very end may be half of a CRLF: not complete yet.
fn first_event_end(bytes: &[u8]) -> Option<usize> {
    let mut pos = 0;
    let mut line_start = 0;
    let mut any_line = false;
    while let Some(i) = memchr::memchr2(b'\n', b'\r', &bytes[pos..]) {
        let i = pos + i;
        let next = match bytes[i] {
            b'\n' => i + 1,
            _ => match bytes.get(i + 1) {
                Some(b'\n') => i + 2,
                Some(_) => i + 1,
                None => return None,
            },
        };
        if i == line_start {
            if any_line {
                return Some(next);
            }
        } else {
            any_line = true;
        }
        pos = next;
        line_start = next;
    }
    None
}

/// Rewrites the upstream origin in the `data` lines of one raw event, keeping every
/// other byte (line endings included).
fn rewrite_data_lines(raw: &[u8], rw: &OriginRewriter, proxy: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() + 16);
    let mut rest = raw;
    while !rest.is_empty() {
        let cut = memchr::memchr2(b'\n', b'\r', rest).unwrap_or(rest.len());
        let (line, tail) = rest.split_at(cut);
        let eol_len = match tail {
            [b'\r', b'\n', ..] => 2,
            [] => 0,
            _ => 1,
        };
        match std::str::from_utf8(line)
            .ok()
            .filter(|l| l.starts_with("data:"))
            .and_then(|l| rw.rewrite(l, proxy))
        {
            Some(new) => out.extend_from_slice(new.as_bytes()),
            None => out.extend_from_slice(line),
        }
        out.extend_from_slice(&tail[..eol_len]);
        rest = &tail[eol_len..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_event_ends_after_its_blank_line() {
        assert_eq!(
            first_event_end(b"event: endpoint\ndata: /m\n\nmore"),
            Some(26)
        );
        assert_eq!(
            first_event_end(b"event: endpoint\r\ndata: /m\r\n\r\n"),
            Some(29)
        );
        assert_eq!(first_event_end(b"event: endpoint\r\ndata: /m\r\n\r"), None);
        assert_eq!(first_event_end(b"\n\nid: 1\n"), None);
        assert_eq!(first_event_end(b"id: 1\r\rx"), Some(7));
    }

    #[test]
    fn only_data_lines_pointing_at_the_upstream_are_rewritten() {
        let rw = OriginRewriter::new(vec!["http://127.0.0.1:3002".into()]);
        let raw = b"event: endpoint\r\ndata: http://127.0.0.1:3002/message?sessionId=1\r\n\r\n";
        assert_eq!(
            rewrite_data_lines(raw, &rw, "http://localhost:7"),
            b"event: endpoint\r\ndata: http://localhost:7/message?sessionId=1\r\n\r\n".to_vec()
        );
        let rel = b"event: endpoint\ndata: /message?sessionId=1\n\n";
        assert_eq!(
            rewrite_data_lines(rel, &rw, "http://localhost:7"),
            rel.to_vec()
        );
    }
}
