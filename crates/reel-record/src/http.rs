//! The Streamable HTTP (and legacy HTTP+SSE) recording proxy: `reel rec --url URL`.
//!
//! reel listens on loopback and mirrors the *whole* upstream origin: every method and
//! path is forwarded (the MCP endpoint, OAuth discovery under `/.well-known/`, a legacy
//! `/sse` + `/message` pair), with bodies and event streams passed on chunk by chunk as
//! they arrive. Only what the trace needs is copied on the side; the trace is written by
//! the same queue and writer thread as the stdio proxy's (`queue`, `recorder`), so the
//! same backpressure, `--drop-when-behind` and redaction apply.
//!
//! What crosses reel unchanged, and what does not:
//! - hop-by-hop headers never cross (see `headers`); `Host` becomes the upstream's on
//!   the upstream hop; an `Origin` (already checked to be loopback) becomes the
//!   upstream's origin, so a server's own DNS-rebinding check accepts it;
//!   `Accept-Encoding` becomes `identity`, so bodies stay readable for the trace;
//! - URLs the upstream hands out that point at itself are rewritten to point at reel:
//!   `Location`, `Content-Location`, `Link`, `WWW-Authenticate` (its `resource_metadata`),
//!   the data of a legacy `endpoint` event, and OAuth / OpenID metadata documents under
//!   `/.well-known/oauth-*` and `/.well-known/openid-configuration` or at the path a
//!   `WWW-Authenticate` `resource_metadata` named;
//! - authorization headers and tokens are forwarded as they are; only the trace is
//!   redacted.
//!
//! Security of reel's listener: it binds loopback unless `--listen` says otherwise, and
//! refuses with 403 any request whose `Host` or `Origin` is not a loopback name or a name
//! the user allowed (`guard`).
//!
//! # What the trace holds
//!
//! `meta`: `transport: "http"`, `listen` (the bound address), `upstream` (the URL,
//! redacted), `command: ["reel","rec","--url",URL]` (redacted). Then, every line of the
//! run's sessions, each with its `session` (rule in `proxy`: the `Mcp-Session-Id`, the
//! legacy `sessionId`, or `reel:conn-N` for the N-th client connection when there is no
//! session id):
//! - a request body → `dir: "in"` message, `http: {"req": n, "method", "path",
//!   "headers": {…}}` (`req` counts the run's requests from 1);
//! - a JSON response body → `dir: "out"` message, `http: {"req", "status", "headers"}`;
//!   each SSE event whose data is JSON → one `dir: "out"` message with, in addition,
//!   `"sse": {"id", "event", "retry", "eol"}` (`eol` only when not LF);
//! - an SSE event without JSON data (a priming event, `endpoint`, a lone `retry`) →
//!   `kind: "reel.sse"`, its data in `text`; keep-alive comments are not recorded;
//! - a body that is not JSON → `kind: "reel.nonjson"` (`side` in/out), with `http`;
//! - an exchange that carries no JSON-RPC message (a GET stream, DELETE, OAuth
//!   discovery or token requests — a form body is kept as `reqForm`, only its
//!   `grant_type`, `client_id`, `redirect_uri`, `scope`, `resource`, `response_type`
//!   and `token_type_hint` values unredacted —, a 202 or an error status with an empty
//!   body), one that failed (502:
//!   the upstream is unreachable, `error`), one refused by reel (403, `refused`), or a
//!   stream cut by the client or by reel's shutdown (`end`) → `kind: "reel.http"` with
//!   `http: {"req", "method", "path", "status", "headers", "reqHeaders", "error"?,
//!   "refused"?, "end"?}` and, for a body that is not an MCP message, its first
//!   [`EXCERPT_MAX`] bytes (`raw` when JSON, else `text`; `truncated` = full size);
//! - `end`: `reason: "producer_shutdown"` (no process is wrapped, so no `exitCode`).
//!
//! Headers kept: [`REQUEST_ALLOWLIST`] (+ `mcp-param-*`) and
//! [`RESPONSE_ALLOWLIST`], values redacted (a secret-named header such as
//! `authorization` loses its whole value; `location` is redacted as a request path is:
//! secret-named query values, and an OAuth `code`).
//!
//! Limits: [`CHANNEL_FRAMES`] frames buffered per response; the first event of a
//! GET stream is held until complete (at most [`GATE_MAX`] bytes); metadata
//! documents up to [`METADATA_MAX`]; connecting upstream times out after
//! [`CONNECT_TIMEOUT`]; on stop, connections get [`SHUTDOWN_GRACE`].
//! HTTP/1.1 on both sides.

pub(crate) mod body;
pub(crate) mod guard;
pub(crate) mod headers;
pub(crate) mod lines;
pub(crate) mod note;
pub(crate) mod proxy;
pub(crate) mod upstream;

use std::net::{SocketAddr, TcpListener as StdListener, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use reel_net::serve;
use reel_redact::record::reel_meta;
use reel_redact::redact::Redactor;
use reel_trace::line::Meta;
use reel_trace::{Counts, Ending, Timestamp, names};

use crate::queue::DEFAULT_QUEUE_BYTES;
use crate::queue::WhenBehind;
use crate::trace::{Notice, NoticeFn, RecordError, TraceTarget, start_writer};

/// The limits named above.
pub use headers::{REQUEST_ALLOWLIST, RESPONSE_ALLOWLIST};
pub use proxy::{CHANNEL_FRAMES, EXCERPT_MAX, GATE_MAX, METADATA_MAX, SHUTDOWN_GRACE};
pub use upstream::CONNECT_TIMEOUT;
pub(crate) use upstream::UpstreamUrl;
pub use upstream::UrlError;

/// The address reel listens on unless told otherwise: loopback, a free port.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:0";

/// What to record and how.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// The upstream MCP endpoint, `http(s)://host[:port]/path`.
    pub url: String,
    /// Where to listen (`127.0.0.1:0` by default: loopback, a free port).
    pub listen: String,
    /// The run's name; derived from the upstream host if `None`.
    pub name: Option<String>,
    /// Redaction applied to the trace (never to forwarded bytes).
    pub redactor: Redactor,
    /// Wait (default) or drop lines when the trace writer falls behind.
    pub when_behind: WhenBehind,
    /// Queue budget in bytes.
    pub queue_bytes: usize,
    /// Host names (besides loopback ones) a request's `Host` / `Origin` may name.
    pub allow_hosts: Vec<String>,
    /// Extra PEM files of certificate authorities for an `https` upstream.
    pub upstream_ca: Vec<PathBuf>,
    /// Stop on SIGINT, SIGTERM and SIGHUP (the CLI does).
    pub handle_signals: bool,
    /// Worker threads of the proxy's runtime (0: as many as cores, at most 4).
    pub threads: usize,
    /// The header timeout and the connection cap (two descriptors a connection: the
    /// client's and the upstream's).
    pub limits: serve::Limits,
}

impl HttpConfig {
    /// The defaults for `url`: loopback listener on a free port, built-in redaction,
    /// never drop.
    pub fn new(url: impl Into<String>) -> Self {
        HttpConfig {
            url: url.into(),
            listen: DEFAULT_LISTEN.to_owned(),
            name: None,
            redactor: Redactor::builtin(),
            when_behind: WhenBehind::Wait,
            queue_bytes: DEFAULT_QUEUE_BYTES,
            allow_hosts: Vec::new(),
            upstream_ca: Vec::new(),
            handle_signals: false,
            threads: 0,
            limits: serve::Limits::for_descriptors(2),
        }
    }
}

/// Why the proxy cannot start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// `--url` is not usable, or an `--upstream-ca` file is not.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// The upstream's host name does not resolve.
    #[error("cannot resolve the upstream host {host}: {error}; check --url")]
    Resolve {
        /// The host.
        host: String,
        /// The resolver's answer.
        error: String,
    },
    /// `--listen` is not an address, or cannot be bound.
    #[error(
        "cannot listen on {addr}: {error}; choose another --listen (e.g. 127.0.0.1:0 for a free port)"
    )]
    Listen {
        /// The address as given.
        addr: String,
        /// Why.
        error: String,
    },
    /// The trace cannot be created or written.
    #[error(transparent)]
    Trace(#[from] RecordError),
    /// The runtime or a thread could not be started.
    #[error("cannot start the proxy: {0}")]
    Runtime(std::io::Error),
}

/// The result of a run.
#[derive(Debug)]
pub struct HttpOutcome {
    /// The trace file, when it is one.
    pub path: Option<PathBuf>,
    /// Lines written, as in `end.counts`.
    pub counts: Counts,
    /// HTTP requests proxied.
    pub requests: u64,
    /// Lines and bytes dropped with [`WhenBehind::Drop`].
    pub dropped: (u64, u64),
    /// The error that stopped the trace early, if any (the traffic was unaffected).
    pub trace_error: Option<std::io::Error>,
}

/// Stops a running proxy from another thread (tests, embedding programs): streams are
/// closed, the trace ends.
pub use reel_net::serve::Stop as StopHandle;

/// A configured proxy, bound to its address, before it runs.
pub struct HttpRecorder {
    config: HttpConfig,
    url: UpstreamUrl,
    listener: StdListener,
    local: SocketAddr,
    tls: Option<reel_net::upstream::TlsConnector>,
    label: String,
    command: Vec<String>,
    upstream_shown: String,
    stop: StopHandle,
}

impl HttpRecorder {
    /// Checks the URL (and CA files), resolves the upstream host, binds the listener.
    /// The upstream need not be up yet: requests get 502 until it is.
    pub fn new(config: HttpConfig) -> Result<HttpRecorder, HttpError> {
        let url = UpstreamUrl::parse(&config.url).map_err(UrlError::from)?;
        let tls = if url.https {
            Some(upstream::tls_connector(&config.upstream_ca)?)
        } else {
            None
        };
        (url.host.as_str(), url.port)
            .to_socket_addrs()
            .map_err(|e| HttpError::Resolve {
                host: url.host.clone(),
                error: e.to_string(),
            })?;
        let (listener, local) = serve::bind(&config.listen).map_err(|error| HttpError::Listen {
            addr: config.listen.clone(),
            error,
        })?;
        let upstream_shown = note::redact_path(&config.redactor, &config.url);
        let command = config.redactor.redact_command(&[
            "reel".to_owned(),
            "rec".to_owned(),
            "--url".to_owned(),
            upstream_shown.clone(),
        ]);
        let label = config.name.clone().unwrap_or_else(|| {
            let host = if url.explicit_port {
                format!("{}-{}", url.host, url.port)
            } else {
                url.host.clone()
            };
            names::derive_label(&[host.replace(['.', ':'], "-")])
        });
        Ok(HttpRecorder {
            config,
            url,
            listener,
            local,
            tls,
            label,
            command,
            upstream_shown,
            stop: StopHandle::new(),
        })
    }

    /// The address the proxy is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The URL a client uses instead of the upstream's: reel's address, the upstream's
    /// path.
    pub fn listen_url(&self) -> String {
        format!("http://{}{}", self.local, self.url.path)
    }

    /// [`listen_url`](Self::listen_url) as reel prints it and the trace would show it:
    /// the upstream's query redacted as `meta.upstream` is.
    pub fn shown_listen_url(&self) -> String {
        note::redact_path(&self.config.redactor, &self.listen_url())
    }

    /// The run's label.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The upstream URL as the trace shows it (redacted).
    pub fn upstream(&self) -> &str {
        &self.upstream_shown
    }

    /// A handle that stops [`HttpRecorder::run`] from another thread.
    pub fn stop_handle(&self) -> StopHandle {
        self.stop.clone()
    }

    /// Creates the trace file in `dir`.
    pub fn create_trace(&self, dir: &Path) -> Result<TraceTarget, RecordError> {
        Ok(TraceTarget::create(dir, &self.label)?)
    }

    /// The `meta` line.
    pub fn meta(&self) -> Meta {
        Meta {
            listen: Some(self.local.to_string()),
            upstream: Some(self.upstream_shown.clone()),
            ..reel_meta(
                &self.label,
                &self.command,
                "mcp",
                "http",
                &self.config.redactor,
            )
        }
    }

    /// Serves until stopped (a signal when `handle_signals`, or the [`StopHandle`]),
    /// then closes every stream, writes `end` and returns.
    pub fn run(
        self,
        trace: TraceTarget,
        notices: impl Fn(Notice) + Send + Sync + 'static,
    ) -> Result<HttpOutcome, HttpError> {
        let notices: NoticeFn = Arc::new(notices);
        let (writer, path) = trace.open(&self.meta()).map_err(RecordError::from)?;
        let (sink, writer_thread) = start_writer(
            writer,
            self.config.redactor.clone(),
            self.config.queue_bytes,
            self.config.when_behind,
            &notices,
        )
        .map_err(HttpError::Runtime)?;
        let runtime =
            serve::runtime(self.config.threads, "reel-http").map_err(HttpError::Runtime)?;
        let mut allowed = self.config.allow_hosts.clone();
        if !self.local.ip().is_unspecified() {
            allowed.push(self.local.ip().to_string());
        }
        let shared = Arc::new(proxy::Shared::new(
            self.url.clone(),
            self.tls.clone(),
            Arc::clone(&sink),
            Arc::clone(&notices),
            guard::Guard::new(allowed),
            self.local,
            self.stop.subscribe(),
        ));
        let serving = serve::Serving {
            limits: self.config.limits,
            grace: proxy::SHUTDOWN_GRACE,
            on_signals: self.config.handle_signals,
        };
        let served = runtime.block_on(proxy::serve(
            self.listener,
            Arc::clone(&shared),
            serving,
            &self.stop,
        ));
        runtime.shutdown_timeout(proxy::SHUTDOWN_GRACE);
        served.map_err(HttpError::Runtime)?;
        let recorder = writer_thread.finish().map_err(HttpError::Trace)?;
        let counts = recorder.counts();
        let trace_error = recorder.finish(
            Ending::Reason("producer_shutdown".to_owned()),
            Timestamp::now(),
        );
        Ok(HttpOutcome {
            path,
            counts,
            requests: shared.requests(),
            dropped: sink.dropped(),
            trace_error,
        })
    }
}
