//! The tape server over Streamable HTTP: `reel play TRACE --listen ADDR`.
//!
//! The same replay as over stdio — the same tape index, matcher, splicing, misses,
//! client drift and `--record` (one implementation, `crate::play`) — reached over
//! HTTP the way the recording was: a request's answer is JSON or an event stream (its
//! recorded notifications and server→client requests first, then the result) with the
//! recorded status; the server's own messages that belong to no request go on the
//! session's GET stream; a refusal keeps its status and body (`400` and an id-less error
//! to a `server/discover` probe: the HTTP exchange pairs it with the request).
//!
//! Sessions: every recorded session is a tape of its own, answered to one live session,
//! in order — the n-th live session (an `initialize` without a session) is answered from
//! the n-th recorded session in order of first appearance, with a fresh `Mcp-Session-Id`
//! (also for a stdio recording, so its server stream and DELETE work). What a client
//! sends without a session (a 2026-07-28 client, a discover probe) is answered from the
//! recording's session-less traffic (`reel:conn-N` lines of an HTTP recording, pooled
//! and matched by content), or, for a stdio recording, from the session the next live
//! session will get. A legacy HTTP+SSE recording is served the same way: `GET` on its
//! path opens the session and names the endpoint to POST to.
//!
//! Event streams are served as recorded: their priming events (an `id`, `retry`, no
//! message) at their place; a call whose stream the server closed before the answer
//! gets its stream closed the same way and the answer on the GET the client opens to
//! resume (`Last-Event-ID`); a call whose stream the recorded client left unanswered
//! gets its stream opened and nothing more.
//!
//! Security: reel binds loopback unless `--listen` says otherwise, and refuses with 403
//! every request whose `Host` or `Origin` is not a loopback name (DNS rebinding), as
//! `reel rec --url` does ([`reel_net::http::LoopbackGuard`]).
//!
//! Limits: HTTP/1.1; the `Last-Event-ID` a client sends is not looked up (a stream is
//! not replayed from an event on: a resuming GET gets what the recording resumed, a
//! stream broken by the client is not resumed); `--subset` is stdio only; at most
//! [`out::STREAM_BACKLOG`] events wait for a session's server stream to open.

mod diag;
mod out;
mod reply;
mod service;
mod tapes;

use std::io::Write;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex};

use reel_net::http::LoopbackGuard;
use reel_net::serve;
use reel_trace::Ending;

use crate::play::report::Summary;
use crate::play::{PlayError, PlayOptions, ReplayRecording, Shared, finish_recorder};
use crate::tape::TapeFiles;

use diag::{Diag, LineDiag};
pub use out::STREAM_BACKLOG;
pub use service::SHUTDOWN_GRACE;

/// The address reel listens on unless told otherwise: loopback, a free port.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:0";

/// Where and how the tape server listens.
#[derive(Clone, Debug)]
pub struct ListenOptions {
    /// `IP:PORT` (port 0: a free one).
    pub listen: String,
    /// Host names (besides loopback ones) a request's `Host` / `Origin` may name.
    pub allow_hosts: Vec<String>,
    /// Stop on SIGINT, SIGTERM and SIGHUP (the CLI does).
    pub handle_signals: bool,
    /// Worker threads of the HTTP runtime (0: as many as cores, at most 4).
    pub threads: usize,
    /// The header timeout and the connection cap.
    pub limits: reel_net::serve::Limits,
}

impl ListenOptions {
    /// Loopback on a free port, no signal handling.
    pub fn new(listen: impl Into<String>) -> ListenOptions {
        ListenOptions {
            listen: listen.into(),
            allow_hosts: Vec::new(),
            handle_signals: false,
            threads: 0,
            limits: reel_net::serve::Limits::for_descriptors(1),
        }
    }
}

/// Stops a running [`HttpPlay`] from another thread: sessions end, the summary is made.
pub use reel_net::serve::Stop as StopHandle;

/// A tape server bound to its address, before it serves.
pub struct HttpPlay {
    opts: PlayOptions,
    listen: ListenOptions,
    listener: StdListener,
    local: SocketAddr,
    path: String,
    shared: Shared,
    files: Arc<TapeFiles>,
    diag: Diag,
    recorder: Option<Arc<Mutex<ReplayRecording>>>,
    stop: StopHandle,
}

impl HttpPlay {
    /// Checks the trace, binds the listener and creates the `--record` trace;
    /// diagnostics go to `diag`.
    pub fn bind(
        opts: PlayOptions,
        listen: ListenOptions,
        diag: Box<dyn Write + Send>,
    ) -> Result<HttpPlay, PlayError> {
        let files = Arc::new(TapeFiles::open(&opts.trace)?);
        let diag: Diag = Arc::new(Mutex::new(diag));
        let shared = Shared::new(&opts, &mut LineDiag::new(diag.clone()));
        let (listener, local) = serve::bind(&listen.listen).map_err(|error| PlayError::Listen {
            addr: listen.listen.clone(),
            error,
        })?;
        let path = shared
            .head
            .as_ref()
            .and_then(|m| m.upstream.as_deref())
            .and_then(path_of_url)
            .unwrap_or_else(|| "/mcp".to_owned());
        let recorder = match &opts.record {
            Some(dir) => Some(Arc::new(Mutex::new(ReplayRecording::create(
                dir,
                &opts,
                shared.head.as_ref(),
                &shared.record_redactor(),
                "http",
            )?))),
            None => None,
        };
        Ok(HttpPlay {
            opts,
            listen,
            listener,
            local,
            path,
            shared,
            files,
            diag,
            recorder,
            stop: StopHandle::new(),
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The URL a client uses: `http://ADDR/PATH`, PATH the recorded MCP path (from
    /// `meta.upstream`), else `/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.local, self.path)
    }

    /// A handle that stops [`HttpPlay::run`] from another thread.
    pub fn stop_handle(&self) -> StopHandle {
        self.stop.clone()
    }

    /// Serves until stopped (a signal when [`ListenOptions::handle_signals`], or the
    /// [`StopHandle`]); then every session ends and the summary of all of them is
    /// printed on the diagnostics writer and returned.
    pub fn run(self) -> Result<Summary, PlayError> {
        let runtime =
            serve::runtime(self.listen.threads, "reel-play-http").map_err(PlayError::Output)?;
        let routes = Arc::new(out::Routes::default());
        let http_trace = self
            .shared
            .head
            .as_ref()
            .and_then(|m| m.transport.as_deref())
            == Some("http");
        let tapes = tapes::Tapes::new(
            self.opts.clone(),
            Arc::clone(&self.files),
            self.shared.norm.clone(),
            self.diag.clone(),
            self.recorder.clone(),
            Arc::clone(&routes),
        );
        tapes.start_index().map_err(PlayError::Output)?;
        let mut allowed = self.listen.allow_hosts.clone();
        if !self.local.ip().is_unspecified() {
            allowed.push(self.local.ip().to_string());
        }
        let ctx = Arc::new(service::Ctx {
            guard: LoopbackGuard::new(allowed),
            routes,
            tapes: Arc::clone(&tapes),
            norm: self.shared.norm.clone(),
            path: self.path.clone(),
            http_trace,
            sessions: Mutex::new(Default::default()),
            diag: self.diag.clone(),
            refused_told: AtomicBool::new(false),
            ids: AtomicU64::new(0),
        });
        let serving = serve::Serving {
            limits: self.listen.limits,
            grace: SHUTDOWN_GRACE,
            on_signals: self.listen.handle_signals,
        };
        let end = Arc::clone(&ctx);
        let served = runtime.block_on(serve::run(
            self.listener,
            serving,
            &self.stop,
            move || end.end_all(),
            |_| service::service(Arc::clone(&ctx)),
        ));
        ctx.end_all();
        runtime.shutdown_timeout(SHUTDOWN_GRACE);
        served.map_err(PlayError::Output)?;
        let mut summary = tapes.finish()?;
        drop(ctx);
        drop(tapes);
        let mut diag = LineDiag::new(self.diag.clone());
        if let Some(r) = self.recorder {
            match finish_recorder(r, Ending::Reason("producer_shutdown".into())) {
                Ok(p) => summary.recorded = Some(p),
                Err(e) => {
                    let _ = writeln!(diag, "reel play: the replay's trace is incomplete: {e}");
                }
            }
        }
        let _ = diag.write_all(summary.to_text().as_bytes());
        Ok(summary)
    }
}

/// The path of `scheme://authority/path?query` (redacted URLs included).
fn path_of_url(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let path = match rest.find('/') {
        Some(i) => &rest[i..],
        None => "/",
    };
    let path = path.split(['?', '#']).next().unwrap_or("/");
    Some(if path.is_empty() { "/" } else { path }.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_path_is_served() {
        assert_eq!(
            path_of_url("http://127.0.0.1:3001/mcp").as_deref(),
            Some("/mcp")
        );
        assert_eq!(
            path_of_url("https://h/a/sse?token=[REDACTED]").as_deref(),
            Some("/a/sse")
        );
        assert_eq!(path_of_url("http://h").as_deref(), Some("/"));
        assert_eq!(path_of_url("not a url"), None);
    }
}
