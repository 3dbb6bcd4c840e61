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
//!
//! The file is cut along hyper's lines: this module holds what every connection shares
//! (the upstream, the queue, the sessions, the metadata rewriting); `conn` a client
//! connection; `exchange` one request and the answers reel gives itself; `answer`
//! passing the upstream's response on; `pump` a response body's pump and the lines it
//! records.

mod answer;
mod conn;
mod exchange;
mod pump;

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use hyper::header;
use reel_net::serve::{Limits, accept_until_stopped};
use reel_net::upstream::TlsConnector;
use tokio::net::TcpListener;
use tokio::sync::{Notify, watch};

use super::guard::Guard;
use super::headers::OriginRewriter;
use super::upstream::{self, UpstreamUrl};
use crate::queue::{LineRecord, Ticket};
use crate::trace::{Notice, NoticeFn, TraceSink};
use conn::connection;

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
    pub sink: Arc<TraceSink>,
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
        sink: Arc<TraceSink>,
        notices: NoticeFn,
        guard: Guard,
        listen: SocketAddr,
        stop: watch::Receiver<bool>,
    ) -> Self {
        Shared {
            rewriter: upstream::rewriter(&url),
            url,
            tls,
            sink,
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

    pub(super) fn push(&self, ticket: Option<Ticket>, lines: Vec<LineRecord>) {
        let ticket = ticket.unwrap_or_else(|| self.sink.ticket());
        self.sink.push(ticket, lines);
    }

    /// Queues `lines` and returns once they are in the trace file
    /// (`TraceSink::push_durable`): called before the bytes that completed them go to
    /// the client. It blocks the runtime thread while it writes (or waits for room), as
    /// a file write does.
    pub(super) fn push_durable(&self, lines: Vec<LineRecord>) {
        self.sink.push_durable(lines);
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
pub(crate) async fn serve(listener: TcpListener, sh: Arc<Shared>, limits: Limits) {
    let on_conn = {
        let sh = Arc::clone(&sh);
        move |stream, n| connection(stream, Arc::clone(&sh), n, limits)
    };
    let max = limits.max_connections;
    accept_until_stopped(
        listener,
        sh.stop.clone(),
        max,
        SHUTDOWN_GRACE,
        || {},
        on_conn,
    )
    .await;
    sh.pumps_done().await;
}
