//! Sending to a collector over OTLP/HTTP: `POST` of protobuf-encoded export requests to
//! its traces URL (`http://HOST:4318/v1/traces`), over reel's one upstream connector
//! (HTTP/1.1, TLS by rustls with the system's and Mozilla's roots).
//!
//! Retries follow the OTLP specification: a connection failure, 429, 502, 503 and 504
//! are retried with exponential backoff ([`Backoff`]: 250 ms doubling to 8 s, at most
//! [`ATTEMPTS`] tries, `Retry-After` honoured), anything else is final. A collector's
//! partial success (`rejected_spans`) is counted, not retried.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceResponse;
use prost::Message;
use reel_mcp::http::McpUrl;
use reel_mcp::upstream::{self, TlsConnector};

/// Tries of one request, the first included.
pub const ATTEMPTS: u32 = 6;

/// How long one try may take, connecting included.
pub const TRY_TIMEOUT: Duration = Duration::from_secs(10);

/// A collector `--otlp` / `--endpoint` named that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CollectorError {
    /// Not an absolute http(s) URL.
    #[error(
        "{url}: {reason}; give the collector's OTLP/HTTP traces URL, e.g. http://127.0.0.1:4318/v1/traces"
    )]
    Url {
        /// As given.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// A header that is not `NAME=VALUE` with a valid name and value.
    #[error("header {0:?}: give NAME=VALUE (e.g. authorization=Bearer …)")]
    Header(String),
    /// The TLS set-up failed.
    #[error("TLS: {0}")]
    Tls(String),
}

/// Where spans go: the collector's traces URL and the headers it wants (an API key).
#[derive(Clone)]
pub struct Collector {
    url: McpUrl,
    headers: Vec<(http::HeaderName, http::HeaderValue)>,
    tls: Option<TlsConnector>,
}

impl std::fmt::Debug for Collector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Header values are credentials: never printed.
        f.debug_struct("Collector")
            .field("url", &self.url.url)
            .field("headers", &self.headers.len())
            .finish()
    }
}

impl Collector {
    /// The collector at `url` (`http://` or `https://`), sent `headers` (`NAME=VALUE`,
    /// as `OTEL_EXPORTER_OTLP_HEADERS` lists them) with every request.
    pub fn new(url: &str, headers: &[String]) -> Result<Collector, CollectorError> {
        let url = McpUrl::parse(url).map_err(|e| CollectorError::Url {
            url: e.url,
            reason: e.reason,
        })?;
        let headers = headers
            .iter()
            .map(|h| {
                let (name, value) = h
                    .split_once('=')
                    .ok_or_else(|| CollectorError::Header(h.clone()))?;
                let name = http::HeaderName::try_from(name.trim())
                    .map_err(|_| CollectorError::Header(h.clone()))?;
                let value = http::HeaderValue::try_from(value.trim())
                    .map_err(|_| CollectorError::Header(h.clone()))?;
                Ok((name, value))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let tls = if url.https {
            Some(upstream::tls_connector(&[]).map_err(|e| CollectorError::Tls(e.to_string()))?)
        } else {
            None
        };
        Ok(Collector { url, headers, tls })
    }

    /// The URL as given.
    pub fn url(&self) -> &str {
        &self.url.url
    }
}

/// Why a request was not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendError {
    /// What happened, for the user.
    pub message: String,
    /// Whether trying again may help (the specification's retryable cases).
    pub retryable: bool,
    /// The collector's `Retry-After`.
    pub retry_after: Option<Duration>,
}

/// What a collector said of a request it took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Accepted {
    /// Spans it rejected (a partial success).
    pub rejected: u64,
    /// Tries it took.
    pub attempts: u32,
}

/// The waits between tries.
#[derive(Debug, Clone, Copy)]
pub struct Backoff {
    /// Before the second try.
    pub first: Duration,
    /// The longest wait.
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            first: Duration::from_millis(250),
            max: Duration::from_secs(8),
        }
    }
}

/// A connection to a collector, kept open between requests and opened again when it
/// breaks. Blocking: it drives a runtime of its own.
pub struct Client {
    collector: Collector,
    runtime: tokio::runtime::Runtime,
    conn: Option<SendRequest<Full<Bytes>>>,
    backoff: Backoff,
}

impl Client {
    /// A client of `collector`.
    pub fn new(collector: Collector) -> std::io::Result<Client> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        Ok(Client {
            collector,
            runtime,
            conn: None,
            backoff: Backoff::default(),
        })
    }

    /// The waits between tries (tests shorten them).
    pub fn with_backoff(mut self, backoff: Backoff) -> Client {
        self.backoff = backoff;
        self
    }

    /// The collector.
    pub fn collector(&self) -> &Collector {
        &self.collector
    }

    /// Sends `body` (an encoded export request), retrying what may be retried, until it
    /// is taken, refused for good, [`ATTEMPTS`] tries have failed, or `deadline` passes.
    pub fn send(&mut self, body: &[u8], deadline: Instant) -> Result<Accepted, SendError> {
        let body = Bytes::copy_from_slice(body);
        let mut wait = self.backoff.first;
        let mut attempts = 0;
        loop {
            attempts += 1;
            let left = deadline.saturating_duration_since(Instant::now());
            let result = self.try_once(body.clone(), left.min(TRY_TIMEOUT));
            match result {
                Ok(rejected) => return Ok(Accepted { rejected, attempts }),
                Err(e) if !e.retryable || attempts >= ATTEMPTS => return Err(e),
                Err(e) => {
                    let pause = e.retry_after.unwrap_or(wait).min(self.backoff.max);
                    if Instant::now() + pause >= deadline {
                        return Err(e);
                    }
                    std::thread::sleep(pause);
                    wait = (wait * 2).min(self.backoff.max);
                }
            }
        }
    }

    fn try_once(&mut self, body: Bytes, limit: Duration) -> Result<u64, SendError> {
        let c = &self.collector;
        let mut request = http::Request::post(c.url.path.as_str())
            .header(http::header::HOST, c.url.authority.as_str())
            .header(http::header::CONTENT_TYPE, "application/x-protobuf")
            .header(
                http::header::USER_AGENT,
                concat!("reel/", env!("CARGO_PKG_VERSION")),
            );
        for (name, value) in &c.headers {
            request = request.header(name, value);
        }
        let request = request.body(Full::new(body)).map_err(|e| SendError {
            message: e.to_string(),
            retryable: false,
            retry_after: None,
        })?;
        let conn = self.conn.take();
        let (host, port, tls) = (c.url.host.clone(), c.url.port, c.tls.clone());
        let outcome = self.runtime.block_on(async move {
            tokio::time::timeout(limit, async move {
                let mut sender = match conn {
                    Some(s) if !s.is_closed() => s,
                    _ => upstream::open(&host, port, tls.as_ref())
                        .await
                        .map_err(|m| (m, true))?,
                };
                sender.ready().await.map_err(|e| (e.to_string(), true))?;
                let response = sender
                    .send_request(request)
                    .await
                    .map_err(|e| (e.to_string(), true))?;
                let (parts, body) = response.into_parts();
                let body = body
                    .collect()
                    .await
                    .map_err(|e| (e.to_string(), true))?
                    .to_bytes();
                Ok::<_, (String, bool)>((sender, parts, body))
            })
            .await
        });
        let (sender, parts, body) = match outcome {
            Err(_) => {
                return Err(SendError {
                    message: format!("no answer within {} s", limit.as_secs_f64()),
                    retryable: true,
                    retry_after: None,
                });
            }
            Ok(Err((message, retryable))) => {
                return Err(SendError {
                    message,
                    retryable,
                    retry_after: None,
                });
            }
            Ok(Ok(done)) => done,
        };
        self.conn = Some(sender);
        let status = parts.status.as_u16();
        if parts.status.is_success() {
            let rejected = ExportTraceServiceResponse::decode(body.as_ref())
                .ok()
                .and_then(|r| r.partial_success)
                .map_or(0, |p| u64::try_from(p.rejected_spans).unwrap_or(0));
            return Ok(rejected);
        }
        let retry_after = parts
            .headers
            .get(http::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        // The collector's words, cut and without control characters (they reach a
        // terminal).
        let said: String = String::from_utf8_lossy(&body[..body.len().min(200)])
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        Err(SendError {
            message: format!(
                "HTTP {status}{}",
                if said.is_empty() {
                    String::new()
                } else {
                    format!(": {}", said.trim())
                }
            ),
            retryable: matches!(status, 429 | 502 | 503 | 504),
            retry_after,
        })
    }
}
