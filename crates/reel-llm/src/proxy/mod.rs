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
//!
//! The files import one way: `request` reads a request and forwards it, `head` answers
//! with the upstream's response head and `body` records the body as it is forwarded
//! (`decode` decodes a compressed one, `cut` cuts it into pieces); below them
//! `exchange` holds what an exchange's halves share, `pool` the kept-alive upstream
//! connections, `limits` the limits above, `notice` what the user hears and `end` how
//! a run ends.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use reel_net::serve::{self, Limits, Stop};
use reel_net::upstream::{self, TlsConnector};
use reel_redact::redact::Redactor;
use reel_trace::Meta;
use reel_trace::target::TraceTarget;

mod body;
mod cut;
mod decode;
mod end;
mod exchange;
mod head;
mod limits;
mod notice;
mod pool;
mod request;

pub use end::{Finished, RunEnd};
pub use limits::{
    IDLE_TIMEOUT, KEPT_BODY_MAX, REQUEST_BUDGET, REQUEST_MAX, SHUTDOWN_GRACE, WHOLE_KEPT_MAX,
};
pub use notice::{Notice, NoticeFn};

use exchange::Shared;
use pool::Pool;
use request::handle;

use crate::history::History;
use crate::mmsp::{Live, MmspTarget};
use crate::route::{RouteError, Routes};
use crate::tape::{Tape, Trouble};

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
        let serving = serve::Serving {
            limits: self.config.limits,
            grace: SHUTDOWN_GRACE,
            on_signals,
        };
        rt.block_on(serve::run(
            self.listener,
            serving,
            &stop,
            || {},
            |_| {
                let sh = Arc::clone(&shared);
                hyper::service::service_fn(move |req| {
                    let sh = Arc::clone(&sh);
                    async move { Ok::<_, Infallible>(handle(sh, req).await) }
                })
            },
        ))
        .map_err(LlmError::Setup)?;
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
