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
use reel_net::http::UpstreamUrl;
use reel_net::upstream::{self, TlsConnector};

/// Tries of one request, the first included.
pub const ATTEMPTS: u32 = 6;

/// How long one try may take, connecting included.
pub const TRY_TIMEOUT: Duration = Duration::from_secs(10);

/// How often a try and a wait look at the deadline.
const POLL: Duration = Duration::from_millis(50);

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
    /// A header that is not `NAME=VALUE` with a valid name and value (its name only:
    /// the value is a credential).
    #[error(
        "header {0:?}: give NAME=VALUE with a valid header name and value (e.g. authorization=Bearer …)"
    )]
    Header(String),
    /// The TLS set-up failed.
    #[error("TLS: {0}")]
    Tls(String),
}

/// Where spans go: the collector's traces URL and the headers it wants (an API key).
#[derive(Clone)]
pub struct Collector {
    url: UpstreamUrl,
    headers: Vec<(http::HeaderName, http::HeaderValue)>,
    tls: Option<TlsConnector>,
}

impl std::fmt::Debug for Collector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Header values and a URL's query are credentials: never printed.
        f.debug_struct("Collector")
            .field("url", &shown(&self.url.url))
            .field("headers", &self.headers.len())
            .finish()
    }
}

impl Collector {
    /// The collector at `url` (`http://` or `https://`), sent `headers` (`NAME=VALUE`,
    /// as `OTEL_EXPORTER_OTLP_HEADERS` lists them) with every request.
    pub fn new(url: &str, headers: &[String]) -> Result<Collector, CollectorError> {
        let url = UpstreamUrl::parse(url).map_err(|e| CollectorError::Url {
            url: shown(&e.url),
            reason: e.reason,
        })?;
        let headers = headers
            .iter()
            .map(|h| {
                let (name, value) = h
                    .split_once('=')
                    .ok_or_else(|| CollectorError::Header(shown_header(h)))?;
                let bad = || CollectorError::Header(name.trim().to_owned());
                let name = http::HeaderName::try_from(name.trim()).map_err(|_| bad())?;
                let value = http::HeaderValue::try_from(value.trim()).map_err(|_| bad())?;
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

    /// The URL for messages: without its query (where a secret may be) or user info.
    pub fn url(&self) -> String {
        shown(&self.url.url)
    }
}

/// `url` without user info and query, for messages.
pub fn shown(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let (authority, path) = match rest.find(['/', '?', '#']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let query = if rest.contains('?') { "?…" } else { "" };
    if scheme.is_empty() {
        format!("{authority}{path}{query}")
    } else {
        format!("{scheme}://{authority}{path}{query}")
    }
}

/// A header argument without `=`: its first word, never what may be a credential.
fn shown_header(h: &str) -> String {
    h.split([':', ' '])
        .next()
        .unwrap_or_default()
        .chars()
        .take(40)
        .collect()
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
    /// is taken, refused for good, [`ATTEMPTS`] tries have failed, or the time
    /// `deadline` says passes. `deadline` is asked again while a try is under way, so a
    /// caller can bring it forward (the end of a recording).
    pub fn send(
        &mut self,
        body: &[u8],
        deadline: &dyn Fn() -> Instant,
    ) -> Result<Accepted, SendError> {
        let body = Bytes::copy_from_slice(body);
        let mut wait = self.backoff.first;
        let mut attempts = 0;
        loop {
            attempts += 1;
            let result = self.try_once(body.clone(), deadline);
            match result {
                Ok(rejected) => return Ok(Accepted { rejected, attempts }),
                Err(e) if !e.retryable || attempts >= ATTEMPTS => return Err(e),
                Err(e) => {
                    let pause = e.retry_after.unwrap_or(wait).min(self.backoff.max);
                    let until = Instant::now() + pause;
                    if until >= deadline() {
                        return Err(e);
                    }
                    while Instant::now() < until {
                        if Instant::now() >= deadline() {
                            return Err(e);
                        }
                        std::thread::sleep(
                            POLL.min(until.saturating_duration_since(Instant::now())),
                        );
                    }
                    wait = (wait * 2).min(self.backoff.max);
                }
            }
        }
    }

    /// One try: the request built, sent over the open connection (or a new one), and
    /// the collector's answer read. `Ok` is the count of spans it rejected.
    fn try_once(&mut self, body: Bytes, deadline: &dyn Fn() -> Instant) -> Result<u64, SendError> {
        let request = self.request(body)?;
        let (parts, body) = self.exchange(request, deadline)?;
        answer(&parts, &body)
    }

    /// The `POST` of `body` to the collector's traces URL, with its headers.
    fn request(&self, body: Bytes) -> Result<http::Request<Full<Bytes>>, SendError> {
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
        request.body(Full::new(body)).map_err(|e| SendError {
            message: e.to_string(),
            retryable: false,
            retry_after: None,
        })
    }

    /// Sends `request` and reads the whole response, within [`TRY_TIMEOUT`] or until
    /// `deadline` passes; the connection is kept for the next try when it answered.
    fn exchange(
        &mut self,
        request: http::Request<Full<Bytes>>,
        deadline: &dyn Fn() -> Instant,
    ) -> Result<(http::response::Parts, Bytes), SendError> {
        let started = Instant::now();
        let conn = self.conn.take();
        let c = &self.collector;
        let (host, port, tls) = (c.url.host.clone(), c.url.port, c.tls.clone());
        let outcome = self.runtime.block_on(async move {
            // Ends the try at TRY_TIMEOUT, or as soon as the deadline passes.
            let expired = async {
                loop {
                    let now = Instant::now();
                    if now >= deadline() || now >= started + TRY_TIMEOUT {
                        break;
                    }
                    tokio::time::sleep(POLL).await;
                }
            };
            let exchange = async move {
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
            };
            tokio::select! {
                done = exchange => Ok(done),
                () = expired => Err(()),
            }
        });
        match outcome {
            Err(()) => Err(SendError {
                message: format!("no answer within {:.1} s", started.elapsed().as_secs_f64()),
                retryable: true,
                retry_after: None,
            }),
            Ok(Err((message, retryable))) => Err(SendError {
                message,
                retryable,
                retry_after: None,
            }),
            Ok(Ok((sender, parts, body))) => {
                self.conn = Some(sender);
                Ok((parts, body))
            }
        }
    }
}

/// What the collector's answer says: the spans it rejected when it took the request,
/// else why not, and whether the specification lets it be tried again.
fn answer(parts: &http::response::Parts, body: &[u8]) -> Result<u64, SendError> {
    let status = parts.status.as_u16();
    if parts.status.is_success() {
        let rejected = ExportTraceServiceResponse::decode(body)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_headers_are_shown_without_their_secrets() {
        assert_eq!(
            shown("https://u:pw@collector.example:4318/v1/traces?api_key=SECRET"),
            "https://collector.example:4318/v1/traces?…"
        );
        assert_eq!(
            shown("http://127.0.0.1:4318/v1/traces"),
            "http://127.0.0.1:4318/v1/traces"
        );
        let e = Collector::new("http://u:pw@h/v1/traces", &[])
            .unwrap_err()
            .to_string();
        assert!(!e.contains("pw"), "{e}");
        let e = Collector::new("http://h/v1/traces", &["Bearer sk-123".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("NAME=VALUE") && !e.contains("sk-123"), "{e}");
        let e = Collector::new("http://h/v1/traces", &["x-key=a\nb".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("x-key") && !e.contains("a\nb"), "{e}");
    }

    fn head(status: u16, retry_after: Option<&str>) -> http::response::Parts {
        let mut response = http::Response::builder().status(status);
        if let Some(v) = retry_after {
            response = response.header(http::header::RETRY_AFTER, v);
        }
        response.body(()).unwrap().into_parts().0
    }

    #[test]
    fn a_taken_request_counts_the_spans_the_collector_rejected() {
        use opentelemetry_proto::tonic::collector::trace::v1::ExportTracePartialSuccess;
        let partial = ExportTraceServiceResponse {
            partial_success: Some(ExportTracePartialSuccess {
                rejected_spans: 3,
                error_message: "too old".into(),
            }),
        };
        assert_eq!(answer(&head(200, None), &partial.encode_to_vec()), Ok(3));
        assert_eq!(answer(&head(200, None), b""), Ok(0));
        // A body that is not a response is still a request taken.
        assert_eq!(answer(&head(202, None), b"not protobuf"), Ok(0));
    }

    #[test]
    fn only_the_specifications_statuses_are_retried_after_the_collectors_wait() {
        let e = answer(&head(503, Some(" 7 ")), b"busy\nnow").unwrap_err();
        assert_eq!(
            e,
            SendError {
                message: "HTTP 503: busy now".into(),
                retryable: true,
                retry_after: Some(Duration::from_secs(7)),
            }
        );
        for status in [429, 502, 504] {
            assert!(
                answer(&head(status, None), b"").unwrap_err().retryable,
                "{status}"
            );
        }
        let e = answer(&head(400, Some("soon")), b"").unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.retryable, e.retry_after),
            ("HTTP 400", false, None)
        );
    }

    #[test]
    fn a_collectors_words_are_cut_at_200_bytes() {
        let long = "x".repeat(500);
        let e = answer(&head(500, None), long.as_bytes()).unwrap_err();
        assert_eq!(e.message, format!("HTTP 500: {}", "x".repeat(200)));
    }
}
