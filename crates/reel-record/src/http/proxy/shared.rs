//! What every task of the proxy shares: the upstream, the queue, the sessions (legacy
//! endpoints), the metadata paths to rewrite, and the counts of requests and pumps.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use hyper::header;
use reel_net::upstream::TlsConnector;
use tokio::sync::{Notify, watch};

use super::limits::{MAX_LEGACY_SESSIONS, MAX_METADATA_PATHS, SHUTDOWN_GRACE};
use crate::http::guard::Guard;
use crate::http::headers::OriginRewriter;
use crate::http::upstream::{self, UpstreamUrl};
use crate::queue::{LineRecord, Ticket};
use crate::trace::{Notice, NoticeFn, TraceSink};

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
    pub(super) requests: AtomicU64,
    failing: AtomicBool,
    pub(super) refused_told: AtomicBool,
    pub(super) active_pumps: AtomicUsize,
    pub(super) pumps_idle: Notify,
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

    pub(super) fn upstream_failed(&self, error: &str) {
        if !self.failing.swap(true, Ordering::Relaxed) {
            (self.notices)(Notice::UpstreamFailed {
                error: error.to_owned(),
            });
        }
    }

    pub(super) fn upstream_ok(&self) {
        if self.failing.load(Ordering::Relaxed) {
            self.failing.store(false, Ordering::Relaxed);
        }
    }

    fn legacy(&self) -> MutexGuard<'_, Legacy> {
        self.legacy.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The legacy session a request posted to `path` belongs to.
    pub(super) fn legacy_session(&self, path: &str) -> Option<Arc<str>> {
        self.legacy().by_endpoint.get(path).cloned()
    }

    /// Remembers the endpoint a legacy `endpoint` event announced; returns its session
    /// (the value of its `sessionId`/`session_id` query parameter, else the endpoint).
    pub(super) fn register_endpoint(&self, data: &str, request_path: &str) -> Option<Arc<str>> {
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
    pub(super) fn note_metadata_urls(&self, headers: &hyper::HeaderMap) {
        for v in headers.get_all(header::WWW_AUTHENTICATE) {
            let Ok(v) = v.to_str() else { continue };
            for url in crate::http::headers::resource_metadata_urls(v) {
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
    pub(super) fn is_metadata_path(&self, path: &str) -> bool {
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
