//! `reel verify TRACE --url URL`: the live server over HTTP, as a [`super::peer::Peer`] that behaves
//! like a child process to the rest of verify — lines go in, the server's messages come
//! out as [`LiveOutput`]s.
//!
//! What it does as an MCP client over Streamable HTTP:
//! - each message is its own POST (`Accept: application/json, text/event-stream`); an
//!   answer comes as JSON or as an event stream whose every event is a message (the
//!   server's notifications and requests first); `202` carries nothing;
//! - the `Mcp-Session-Id` the server issues is sent on every later request, and the
//!   negotiated version as `MCP-Protocol-Version`; a 2026-07-28 request (its `_meta`
//!   names the version) carries `MCP-Protocol-Version`, `Mcp-Method` and, for
//!   `tools/call`, `prompts/get` and `resources/read`, `Mcp-Name`;
//! - after `notifications/initialized` of a session it opens the GET server stream (a
//!   `405` is fine), where server requests come; their answers are POSTed back;
//! - a URL whose path ends in `/sse` is legacy HTTP+SSE: a GET opens the stream, whose
//!   `endpoint` event names where to POST; every answer comes on the stream;
//! - an HTTP refusal whose JSON-RPC error has no id (a `400` to a discover probe) is
//!   given the request's id, so it is compared with the recorded answer; a refusal with
//!   no JSON-RPC body becomes an error message naming the status, and so does an
//!   answer the server breaks off (a body short of its length, an event stream cut
//!   before the answer), at once rather than when `--timeout` runs out;
//! - when verify is done, the session is ended with DELETE.
//!
//! HTTP facts that are not messages (statuses, connection failures) are reported as the
//! peer's "stderr", which verify keeps in its trace and its handshake errors. A failed
//! connection ends the peer's output, as a server process exiting does.
//!
//! The connection is the one every upstream of reel's gets ([`reel_net::upstream`]):
//! `http://`, or `https://` with Mozilla's roots, the system's bundle and
//! `--upstream-ca`. `--header NAME=VALUE` goes on every request (credentials the tape's
//! redacted `Authorization` cannot give); it is not in the live run's trace, which holds
//! messages only.
//!
//! Limits: HTTP/1.1, one connection per request; no resumption.

use std::io;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response};
use reel_mcp::http::{headers as mcp_headers, mcp_name};
use reel_mcp::jsonrpc::{Envelope, RpcKind, is_id_less_answer};
use reel_net::http::UpstreamUrl;
use reel_net::sse::Parser;
use serde_json::Value;
use tokio::sync::{Notify, mpsc};

use crate::live::LiveOutput;
use crate::splice;

const INITIALIZED: &str = "notifications/initialized";

/// How long the session's DELETE and the last answers get once verify is done.
pub const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// The live server's URL, split, and how to reach it: what verify connects to.
#[derive(Clone)]
pub struct HttpUrl {
    /// The host name or address connected to.
    pub host: String,
    /// The port.
    pub port: u16,
    /// `host:port`, as sent in `Host`.
    pub authority: String,
    /// The path (and query) requests go to.
    pub path: String,
    /// `https://`.
    pub https: bool,
    /// The TLS configuration for `https://`.
    pub tls: Option<reel_net::upstream::TlsConnector>,
    /// `--header`s, sent with every request.
    pub headers: Vec<(header::HeaderName, HeaderValue)>,
}

impl std::fmt::Debug for HttpUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Header values are credentials: never shown.
        f.debug_struct("HttpUrl")
            .field("authority", &self.authority)
            .field("path", &self.path)
            .field("https", &self.https)
            .field("headers", &self.headers.len())
            .finish()
    }
}

impl HttpUrl {
    /// Parses `url` ([`UpstreamUrl`]'s grammar); the error says what is wrong with it.
    pub fn parse(url: &str) -> Result<HttpUrl, String> {
        let parsed = UpstreamUrl::parse(url).map_err(|e| e.to_string())?;
        Ok(HttpUrl {
            host: parsed.host.clone(),
            port: parsed.port,
            authority: parsed.host_port(),
            path: parsed.path,
            https: parsed.https,
            tls: None,
            headers: Vec::new(),
        })
    }

    fn legacy(&self) -> bool {
        self.path.split('?').next().unwrap_or("").ends_with("/sse")
    }
}

type Sink = Arc<dyn Fn(LiveOutput) -> bool + Send + Sync>;

enum Cmd {
    Send(Vec<u8>),
    Close,
}

/// The live server over HTTP.
pub struct HttpPeer {
    cmds: mpsc::UnboundedSender<Cmd>,
    thread: Option<JoinHandle<()>>,
}

impl HttpPeer {
    /// Starts the client (its own thread and runtime); everything the server says goes
    /// to `sink`. Nothing is connected before the first message.
    pub fn start(
        url: HttpUrl,
        sink: impl Fn(LiveOutput) -> bool + Send + Sync + 'static,
    ) -> io::Result<HttpPeer> {
        let (tx, rx) = mpsc::unbounded_channel();
        let sink: Sink = Arc::new(sink);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let thread = std::thread::Builder::new()
            .name("reel-verify-http".into())
            .spawn(move || runtime.block_on(client(url, rx, sink)))?;
        Ok(HttpPeer {
            cmds: tx,
            thread: Some(thread),
        })
    }

    /// Sends one message.
    pub fn send(&mut self, line: &[u8]) -> io::Result<()> {
        self.cmds
            .send(Cmd::Send(line.to_vec()))
            .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))
    }

    /// Verify is done: the session is ended, the output ends.
    pub fn close_input(&mut self) {
        let _ = self.cmds.send(Cmd::Close);
    }

    /// Closes and waits for the client to end.
    pub fn finish(mut self) -> Option<i64> {
        self.close_input();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        None
    }
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        let _ = self.cmds.send(Cmd::Close);
    }
}

/// What the client's tasks share.
struct State {
    url: HttpUrl,
    sink: Sink,
    session: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
    /// Legacy HTTP+SSE: where to POST, once the stream said.
    endpoint: Mutex<Option<String>>,
    endpoint_known: Notify,
    get_opened: std::sync::atomic::AtomicBool,
    failed: std::sync::atomic::AtomicBool,
}

impl State {
    fn note(&self, text: String) {
        (self.sink)(LiveOutput::Stderr(
            format!("reel verify: {text}\n").into_bytes(),
        ));
    }

    fn line(&self, text: &[u8]) {
        (self.sink)(LiveOutput::Line(text.to_vec()));
    }

    /// The connection failed: like a server that exited, the output ends.
    fn fail(&self, what: String) {
        use std::sync::atomic::Ordering;
        if !self.failed.swap(true, Ordering::Relaxed) {
            self.note(what);
            (self.sink)(LiveOutput::End);
        }
    }
}

async fn client(url: HttpUrl, mut rx: mpsc::UnboundedReceiver<Cmd>, sink: Sink) {
    let st = Arc::new(State {
        url,
        sink,
        session: Mutex::new(None),
        version: Mutex::new(None),
        endpoint: Mutex::new(None),
        endpoint_known: Notify::new(),
        get_opened: std::sync::atomic::AtomicBool::new(false),
        failed: std::sync::atomic::AtomicBool::new(false),
    });
    let mut posts = tokio::task::JoinSet::new();
    let stream = st
        .url
        .legacy()
        .then(|| tokio::spawn(legacy_stream(Arc::clone(&st))));
    while let Some(cmd) = rx.recv().await {
        match cmd {
            Cmd::Send(line) => {
                posts.spawn(post(Arc::clone(&st), line));
            }
            Cmd::Close => break,
        }
    }
    // Answers still on their way get a moment; then the session ends.
    let drain = async { while posts.join_next().await.is_some() {} };
    let _ = tokio::time::timeout(CLOSE_GRACE, drain).await;
    posts.abort_all();
    if let Some(s) = stream {
        s.abort();
    }
    let session = lock(&st.session).clone();
    if let Some(id) = session {
        let req = request(
            &st,
            Method::DELETE,
            &st.url.path,
            Some(&id),
            None,
            Bytes::new(),
        );
        let _ = tokio::time::timeout(CLOSE_GRACE, send(&st.url, req)).await;
    }
    if !st.failed.load(std::sync::atomic::Ordering::Relaxed) {
        (st.sink)(LiveOutput::End);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// `--header NAME=VALUE` pairs as header names and values; the error names the flag.
pub fn header_pairs(
    given: &[(String, String)],
) -> Result<Vec<(header::HeaderName, HeaderValue)>, String> {
    given
        .iter()
        .map(|(name, value)| {
            let n = header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("--header {name}=…: {name:?} is not a header name"))?;
            let mut v = HeaderValue::from_str(value).map_err(|_| {
                format!("--header {name}=…: the value holds a character a header cannot carry")
            })?;
            v.set_sensitive(true);
            Ok((n, v))
        })
        .collect()
}

/// Connects (over TLS for `https://`, by the one upstream connector) and sends one
/// request.
async fn send(url: &HttpUrl, req: Request<Full<Bytes>>) -> Result<Response<Incoming>, String> {
    let mut sender =
        reel_net::upstream::open::<Full<Bytes>>(&url.host, url.port, url.tls.as_ref()).await?;
    sender
        .send_request(req)
        .await
        .map_err(|e| format!("{} failed: {e}", url.authority))
}

/// What the headers of a POST need to know of its message.
struct Facts {
    kind: RpcKind,
    id: Option<String>,
    method: Option<String>,
    /// `params._meta["io.modelcontextprotocol/protocolVersion"]` (2026-07-28).
    modern_version: Option<String>,
    /// `params.name` or `params.uri` for the methods that name one.
    name: Option<String>,
}

fn facts_of(line: &[u8]) -> Facts {
    let text = std::str::from_utf8(line).unwrap_or_default();
    let env = Envelope::parse(text);
    let kind = env
        .as_ref()
        .map_or_else(|| Envelope::kind_of(text), Envelope::kind);
    let id = env.as_ref().and_then(|e| e.id).map(|i| i.get().to_owned());
    let method = env
        .as_ref()
        .and_then(|e| e.method.as_deref())
        .map(str::to_owned);
    let params: Option<Value> = env
        .as_ref()
        .and_then(|e| e.params)
        .and_then(|p| serde_json::from_str(p.get()).ok());
    let modern_version = params
        .as_ref()
        .and_then(|p| p.pointer("/_meta/io.modelcontextprotocol~1protocolVersion"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let name = method
        .as_deref()
        .zip(params.as_ref())
        .and_then(|(m, p)| mcp_name(m, p))
        .map(str::to_owned);
    Facts {
        kind,
        id,
        method,
        modern_version,
        name,
    }
}

/// A header value as MCP wants it: as is when it is visible ASCII, else
/// `=?base64?…?=` of its UTF-8.
fn header_value(v: &str) -> Option<HeaderValue> {
    if v.bytes().all(|b| (0x20..0x7f).contains(&b)) && v.trim() == v {
        return HeaderValue::from_str(v).ok();
    }
    HeaderValue::from_str(&format!("=?base64?{}?=", base64(v.as_bytes()))).ok()
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn request(
    st: &State,
    method: Method,
    path: &str,
    session: Option<&str>,
    facts: Option<&Facts>,
    body: Bytes,
) -> Request<Full<Bytes>> {
    let mut req = Request::new(Full::new(body));
    *req.method_mut() = method.clone();
    *req.uri_mut() = path
        .parse()
        .unwrap_or_else(|_| hyper::Uri::from_static("/"));
    let h = req.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&st.url.authority) {
        h.insert(header::HOST, v);
    }
    for (name, value) in &st.url.headers {
        h.insert(name.clone(), value.clone());
    }
    let accept = if method == Method::GET {
        "text/event-stream"
    } else {
        "application/json, text/event-stream"
    };
    h.insert(header::ACCEPT, HeaderValue::from_static(accept));
    if method == Method::POST {
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
    }
    if let Some(v) = session.and_then(|s| HeaderValue::from_str(s).ok()) {
        h.insert(mcp_headers::SESSION_ID, v);
    }
    let version = facts
        .and_then(|f| f.modern_version.clone())
        .or_else(|| lock(&st.version).clone());
    if let Some(v) = version.as_deref().and_then(header_value) {
        h.insert(mcp_headers::PROTOCOL_VERSION, v);
    }
    if let Some(f) = facts.filter(|f| f.modern_version.is_some()) {
        if let Some(v) = f.method.as_deref().and_then(header_value) {
            h.insert(mcp_headers::METHOD, v);
        }
        if let Some(v) = f.name.as_deref().and_then(header_value) {
            h.insert(mcp_headers::NAME, v);
        }
    }
    req
}

/// One message, POSTed; whatever comes back goes to the sink.
async fn post(st: Arc<State>, line: Vec<u8>) {
    let facts = facts_of(&line);
    let legacy = st.url.legacy();
    let path = if legacy {
        match wait_endpoint(&st).await {
            Some(p) => p,
            None => return,
        }
    } else {
        st.url.path.clone()
    };
    let session = lock(&st.session).clone();
    let req = request(
        &st,
        Method::POST,
        &path,
        session.as_deref(),
        Some(&facts),
        Bytes::from(line),
    );
    let resp = match send(&st.url, req).await {
        Ok(r) => r,
        Err(e) => return st.fail(e),
    };
    if let Some(id) = resp
        .headers()
        .get(mcp_headers::SESSION_ID)
        .and_then(|v| v.to_str().ok())
    {
        let mut s = lock(&st.session);
        if s.is_none() {
            *s = Some(id.to_owned());
        }
    }
    let status = resp.status();
    let is_sse = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/event-stream"));
    let is_request = facts.kind == RpcKind::Request;
    if is_sse {
        read_events(&st, resp.into_body(), facts.id.as_deref()).await;
    } else {
        let body = match resp.into_body().collect().await {
            Ok(b) => b.to_bytes(),
            Err(e) => {
                st.note(format!("reading the answer failed: {e}"));
                // The request gets its error now, not when --timeout runs out.
                if let (true, Some(id)) = (is_request, &facts.id) {
                    st.line(broken_answer(id, status, &e.to_string()).as_bytes());
                }
                return;
            }
        };
        if !body.is_empty() && !legacy {
            message_body(
                &st,
                &body,
                is_request.then_some(facts.id.as_deref()).flatten(),
                status,
            );
        } else if !status.is_success() {
            st.note(format!(
                "POST {} {} answered {status}",
                facts.method.as_deref().unwrap_or("(answer)"),
                facts.id.as_deref().unwrap_or("")
            ));
            if is_request {
                if let Some(id) = &facts.id {
                    st.line(http_error(id, status, &body).as_bytes());
                }
            }
        }
    }
    if facts.method.as_deref() == Some(INITIALIZED) && !legacy {
        open_stream(&st);
    }
}

/// A JSON-RPC error for a request the server refused at the HTTP level without one.
fn http_error(id: &str, status: hyper::StatusCode, body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let msg = format!(
        "HTTP {status}{}{}",
        if text.trim().is_empty() { "" } else { ": " },
        reel_mcp::normalize::shorten(text.trim(), 200)
    );
    let err = serde_json::json!({"code": -32000, "message": msg});
    splice::response(id, "error", &err.to_string())
}

/// A JSON-RPC error for a request whose answer the server broke off.
fn broken_answer(id: &str, status: hyper::StatusCode, error: &str) -> String {
    let msg = format!("HTTP {status}: the answer broke off: {error}");
    let err = serde_json::json!({"code": -32000, "message": msg});
    splice::response(id, "error", &err.to_string())
}

/// A JSON body: one message (or a batch), to the sink; an id-less error answering
/// `request_id` gets that id.
fn message_body(st: &State, body: &[u8], request_id: Option<&str>, status: hyper::StatusCode) {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.starts_with('[') {
        if let Ok(items) = serde_json::from_str::<Vec<Box<serde_json::value::RawValue>>>(text) {
            for item in items {
                message(st, item.get(), request_id);
            }
            return;
        }
    }
    if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() {
        message(st, text, request_id);
    } else {
        st.note(format!(
            "an answer that is not JSON ({status}): {}",
            reel_mcp::normalize::shorten(text, 200)
        ));
        if let Some(id) = request_id {
            st.line(http_error(id, status, body).as_bytes());
        }
    }
}

/// One message from the server.
fn message(st: &State, text: &str, request_id: Option<&str>) {
    let env = Envelope::parse(text);
    let kind = env
        .as_ref()
        .map_or_else(|| Envelope::kind_of(text), Envelope::kind);
    if matches!(kind, RpcKind::Response | RpcKind::Error) {
        // The rule every trace reader pairs by (reel_trace::jsonrpc::HttpCarried): an
        // id-less answer on a request's HTTP response answers that request.
        let id_less = is_id_less_answer(kind, env.as_ref().and_then(|e| e.id));
        if let (true, Some(id)) = (id_less, request_id) {
            if let Some(with) = splice::with_id(text, id) {
                return st.line(with.as_bytes());
            }
        }
        // The negotiated version goes on every later request.
        if let Some(v) = env
            .as_ref()
            .and_then(|e| e.result)
            .and_then(|r| serde_json::from_str::<Value>(r.get()).ok())
            .and_then(|r| {
                r.get("protocolVersion")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
        {
            *lock(&st.version) = Some(v);
        }
    }
    st.line(text.as_bytes());
}

/// Reads an event stream to its end; every event's data is a message.
async fn read_events(st: &State, mut body: Incoming, request_id: Option<&str>) {
    let mut parser = Parser::new();
    // The answer to the POSTed request came (on its stream, the one answer there is).
    let mut answered = false;
    let mut broke = None;
    loop {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    let mut events = Vec::new();
                    parser.feed(&data, |e| events.push(e));
                    for e in events {
                        answered |= event(st, e, request_id);
                    }
                }
            }
            Some(Err(e)) => {
                st.note(format!("an event stream broke: {e}"));
                broke = Some(e.to_string());
                break;
            }
            None => break,
        }
    }
    let mut events = Vec::new();
    parser.finish(|e| events.push(e));
    for e in events {
        answered |= event(st, e, request_id);
    }
    // A stream that broke before the answer: the request gets its error now, not when
    // --timeout runs out (verify does not resume streams).
    if let (Some(e), Some(id), false) = (broke, request_id, answered) {
        st.line(broken_answer(id, hyper::StatusCode::OK, &e).as_bytes());
    }
}

/// One event to the sink; true when it was an answer (a response or an error).
fn event(st: &State, e: reel_net::sse::Event, request_id: Option<&str>) -> bool {
    if e.event_type() == "endpoint" {
        if let Some(d) = e.data {
            *lock(&st.endpoint) = Some(endpoint_path(&d));
            st.endpoint_known.notify_waiters();
        }
        return false;
    }
    match e.data.filter(|d| !d.trim().is_empty()) {
        Some(data) => {
            message(st, &data, request_id);
            matches!(Envelope::kind_of(&data), RpcKind::Response | RpcKind::Error)
        }
        None => false,
    }
}

/// The path (and query) of an `endpoint` event's URI, absolute or relative.
fn endpoint_path(data: &str) -> String {
    let d = data.trim();
    match d.split_once("://") {
        Some((_, rest)) => rest
            .find('/')
            .map_or_else(|| "/".to_owned(), |i| rest[i..].to_owned()),
        None if d.starts_with('/') => d.to_owned(),
        None => format!("/{d}"),
    }
}

async fn wait_endpoint(st: &State) -> Option<String> {
    loop {
        let notified = st.endpoint_known.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if let Some(p) = lock(&st.endpoint).clone() {
            return Some(p);
        }
        if st.failed.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        notified.await;
    }
}

/// The session's GET stream (once): server requests and unrelated notifications.
fn open_stream(st: &Arc<State>) {
    if st
        .get_opened
        .swap(true, std::sync::atomic::Ordering::Relaxed)
    {
        return;
    }
    let st = Arc::clone(st);
    tokio::spawn(async move {
        let session = lock(&st.session).clone();
        let req = request(
            &st,
            Method::GET,
            &st.url.path,
            session.as_deref(),
            None,
            Bytes::new(),
        );
        match send(&st.url, req).await {
            Ok(resp) if resp.status().is_success() => {
                read_events(&st, resp.into_body(), None).await;
            }
            // 405: the server has no stream for us; fine.
            Ok(_) | Err(_) => {}
        }
    });
}

/// Legacy HTTP+SSE: the one stream, opened first.
async fn legacy_stream(st: Arc<State>) {
    let req = request(&st, Method::GET, &st.url.path, None, None, Bytes::new());
    match send(&st.url, req).await {
        Ok(resp) if resp.status().is_success() => {
            read_events(&st, resp.into_body(), None).await;
        }
        Ok(resp) => st.fail(format!(
            "GET {} answered {} (a legacy HTTP+SSE endpoint answers with an event stream)",
            st.url.path,
            resp.status()
        )),
        Err(e) => st.fail(e),
    }
    st.endpoint_known.notify_waiters();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_are_sensitive_and_checked() {
        let pairs = header_pairs(&[("Authorization".into(), "Bearer x".into())]).unwrap();
        assert!(pairs[0].1.is_sensitive());
        assert!(header_pairs(&[("bad name".into(), "x".into())]).is_err());
    }

    #[test]
    fn urls_and_header_values() {
        let u = HttpUrl::parse("http://127.0.0.1:3001/mcp").unwrap();
        assert_eq!(
            (u.authority.as_str(), u.path.as_str()),
            ("127.0.0.1:3001", "/mcp")
        );
        assert!(!u.legacy());
        let u = HttpUrl::parse("http://localhost/sse").unwrap();
        assert_eq!(u.authority, "localhost:80");
        assert!(u.legacy());
        let u = HttpUrl::parse("https://mcp.example.com/mcp").unwrap();
        assert!(u.https && u.port == 443 && u.host == "mcp.example.com");
        assert!(HttpUrl::parse("ftp://x").is_err());
        assert_eq!(header_value("add").unwrap(), "add");
        assert_eq!(header_value("é").unwrap(), "=?base64?w6k=?=");
        assert_eq!(base64(b"hello"), "aGVsbG8=");
        assert_eq!(
            endpoint_path("/message?sessionId=1"),
            "/message?sessionId=1"
        );
        assert_eq!(endpoint_path("http://h:1/m?x"), "/m?x");
    }

    #[test]
    fn facts_of_a_modern_request() {
        let f = facts_of(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#);
        assert_eq!(f.kind, RpcKind::Request);
        assert_eq!(f.id.as_deref(), Some("3"));
        assert_eq!(f.name.as_deref(), Some("add"));
        assert_eq!(f.modern_version.as_deref(), Some("2026-07-28"));
    }
}
