//! Answering a client: the upstream's response passed on, inline when small, and
//! OAuth/OpenID metadata rewritten to point at reel.

use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Frame, Incoming};
use hyper::header::{self};
use hyper::{Method, Response};
use reel_net::serve::stopped;
use reel_net::sse::Parser;
use tokio::sync::mpsc;

use super::client::ClientConn;
use super::exchange::{Exchange, bad_gateway, content_length};
use super::limits::{CHANNEL_FRAMES, INLINE_BODY_MAX, METADATA_MAX};
use super::pump::{End, PlainState, Pump, PumpKind, SseState, plain_line};
use super::shared::Shared;
use crate::http::body::Reply;
use crate::http::headers::{capture_response, rewrite_response_urls, strip_hop_by_hop};
use crate::http::note::{ExchangeNote, ResponseFacts};
use crate::queue::LineRecord;

pub(super) async fn respond(
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
    let waits_for_endpoint = settle_session(ex, conn, &parts.headers, is_sse, method);
    pass_on_headers(
        sh,
        &mut parts.headers,
        proxy_origin,
        is_sse && method == Method::GET,
    );

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

/// Settles the exchange's session from the response: the `Mcp-Session-Id` it issues,
/// else the client connection's. Returns true when it is left open: a legacy GET
/// stream's session comes with its first event.
fn settle_session(
    ex: &Exchange,
    conn: &ClientConn,
    headers: &hyper::HeaderMap,
    is_sse: bool,
    method: &Method,
) -> bool {
    let issued = headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(Arc::<str>::from);
    let waits_for_endpoint =
        ex.session().is_none() && issued.is_none() && is_sse && method == Method::GET;
    if !waits_for_endpoint {
        ex.set_session(issued.unwrap_or_else(|| Arc::clone(&conn.key)));
    }
    waits_for_endpoint
}

/// The response headers as the client gets them: hop-by-hop ones out, the upstream's
/// URLs pointing at the proxy, no `Content-Length` on a GET event stream (a rewritten
/// `endpoint` event changes the length); metadata URLs a `WWW-Authenticate` names are
/// remembered.
fn pass_on_headers(
    sh: &Shared,
    headers: &mut hyper::HeaderMap,
    proxy_origin: &str,
    get_stream: bool,
) {
    strip_hop_by_hop(headers);
    if headers.contains_key(header::WWW_AUTHENTICATE) {
        sh.note_metadata_urls(headers);
    }
    rewrite_response_urls(headers, &sh.rewriter, proxy_origin);
    if get_stream {
        headers.remove(header::CONTENT_LENGTH);
    }
}

/// A small plain body read whole before anything goes to the client. Should it not
/// arrive whole (the upstream breaks off, reel is stopped, the client leaves), the
/// trace keeps the upstream's status, the bytes that came and how it ended, as a pump
/// does, and the client gets the same cut-off response, not one of reel's own.
pub(super) async fn inline(
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
        // In the trace file before the client gets any of it.
        sh.push_durable(vec![line]);
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
pub(super) struct InlineRead {
    pub(super) ex: Arc<Exchange>,
    pub(super) facts: Arc<ResponseFacts>,
    pub(super) bytes: Vec<u8>,
    pub(super) armed: bool,
}

impl InlineRead {
    pub(super) fn take(&mut self) -> Vec<u8> {
        self.armed = false;
        std::mem::take(&mut self.bytes)
    }

    /// The lines of a body cut short: the bytes that came (if any), then how it ended.
    pub(super) fn cut_lines(&self, bytes: Vec<u8>, note: ExchangeNote) -> Vec<LineRecord> {
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
pub(super) async fn metadata(
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
