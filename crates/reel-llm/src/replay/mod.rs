//! `reel llm --play TRACE`: a recorded llm trace served as the provider, offline.
//!
//! Each request is matched to a recorded exchange of the same method and endpoint, the
//! earliest not yet used: first the exact request (the SHA-256 of its bytes against
//! `request_sha256`), then the request after normalisation — the trace's redaction rules
//! applied to it, the elided prefix checked against its rolling hash and set aside, tool
//! definitions compared by digest (see [`crate::request::matchable`]), the volatile
//! members [`VOLATILE`] and the `--ignore` pointers removed from both sides. The answer
//! is the recorded one: its status, its allowlisted headers, and its body piece by piece
//! with the recorded boundaries (`--pace recorded` also keeps the recorded gaps). A
//! severed recording is severed again at the same point.
//!
//! A miss is answered in the provider's error shape with a message naming the request,
//! the nearest recorded exchange and where they differ (JSON pointers); the run then
//! exits 3.
//!
//! Limits: a body recorded compressed is served decoded, without its
//! `content-encoding` (the recorded pieces are the decoded text); an exchange recorded
//! without an answer (the upstream was down) is answered 502 again; request bodies up
//! to [`crate::proxy::REQUEST_MAX`].

mod error;
mod matcher;
mod tape;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::{HeaderName, HeaderValue, Request, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::{Frame, Incoming};
use tokio::sync::mpsc;

use reel_mcp::normalize::Pointer;
use reel_net::reply::{Reply, ReplyFrame};
use reel_net::serve::{self, Limits, Stop};
use reel_trace::hash::request_sha256;

pub use error::PlayError;
pub use tape::LlmTape;

use crate::api::{Failure, Provider, error_response as fail};
use crate::route::Routes;
use matcher::{Live, Matcher};

/// Request members that change between honest runs and are never compared.
pub const VOLATILE: &[&str] = &[
    "/metadata/user_id",
    "/user",
    "/safety_identifier",
    "/prompt_cache_key",
    // Responses clients' per-run identities: Codex CLI's session, thread and turn ids,
    // and the ids of the input items it re-sends (assigned anew each run).
    "/client_metadata",
    "/input/*/id",
];

/// How the recorded timing is reproduced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pace {
    /// As fast as the client reads.
    Fast,
    /// The recorded gaps, divided by the factor (`recorded` = 1).
    Scaled(f64),
}

/// What `reel llm --play` is told.
#[derive(Debug, Clone)]
pub struct PlayConfig {
    /// `IP:PORT`.
    pub listen: String,
    /// `--map` prefixes, stripped from request paths as when recording.
    pub maps: Vec<String>,
    /// `--ignore` pointers.
    pub ignore: Vec<Pointer>,
    /// `--pace`.
    pub pace: Pace,
    /// Connection limits.
    pub limits: Limits,
}

/// What a finished replay reports.
#[derive(Debug, Default)]
pub struct PlayReport {
    /// Requests answered from the tape.
    pub answered: u64,
    /// Requests the tape had no answer for, with their messages.
    pub misses: Vec<String>,
    /// Recorded exchanges never asked for: `(n, endpoint)`.
    pub unused: Vec<(u64, String)>,
}

/// What the tape server's connections share.
struct Server {
    matcher: Matcher,
    routes: Routes,
    pace: Pace,
    report: Mutex<PlayReport>,
}

/// A bound tape server.
pub struct LlmPlayer {
    listener: std::net::TcpListener,
    addr: SocketAddr,
    server: Arc<Server>,
    limits: Limits,
}

impl LlmPlayer {
    /// Binds the listener for `tape`.
    pub fn bind(tape: LlmTape, config: PlayConfig) -> Result<LlmPlayer, PlayError> {
        let routes = Routes::new(None, &config.maps)?;
        let (listener, addr) = serve::bind(&config.listen).map_err(|reason| PlayError::Listen {
            listen: config.listen.clone(),
            reason,
        })?;
        let mut ignore: Vec<Pointer> = VOLATILE
            .iter()
            .filter_map(|p| Pointer::parse(p).ok())
            .collect();
        ignore.extend(config.ignore);
        Ok(LlmPlayer {
            listener,
            addr,
            limits: config.limits,
            server: Arc::new(Server {
                matcher: Matcher::new(tape, ignore),
                routes,
                pace: config.pace,
                report: Mutex::new(PlayReport::default()),
            }),
        })
    }

    /// The address clients connect to.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves until `stop` is set (or, with `on_signals`, a signal), and reports.
    pub fn run(
        self,
        stop: Stop,
        on_signals: bool,
        threads: usize,
    ) -> Result<PlayReport, PlayError> {
        let rt = serve::runtime(threads, "reel-llm-play").map_err(PlayError::Setup)?;
        let serving = serve::Serving {
            limits: self.limits,
            grace: crate::proxy::SHUTDOWN_GRACE,
            on_signals,
        };
        let server = Arc::clone(&self.server);
        rt.block_on(serve::run(
            self.listener,
            serving,
            &stop,
            || {},
            |_| {
                let server = Arc::clone(&server);
                hyper::service::service_fn(move |req| {
                    let server = Arc::clone(&server);
                    async move { Ok::<_, Infallible>(server.answer(req).await) }
                })
            },
        ))
        .map_err(PlayError::Setup)?;
        rt.shutdown_timeout(Duration::from_millis(100));
        let mut report =
            std::mem::take(&mut *self.server.report.lock().unwrap_or_else(|e| e.into_inner()));
        report.unused = self.server.matcher.unused();
        Ok(report)
    }
}

impl Server {
    async fn answer(&self, req: Request<Incoming>) -> Response<Reply> {
        let path = req
            .uri()
            .path_and_query()
            .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned());
        let anthropic = req.headers().contains_key("anthropic-version");
        let mut route = self.routes.route(&path, anthropic);
        let (parts, body) = req.into_parts();
        let body = match http_body_util::Limited::new(body, crate::proxy::REQUEST_MAX)
            .collect()
            .await
        {
            Ok(b) => b.to_bytes(),
            Err(e) => {
                return fail(
                    route.provider,
                    Failure::BadRequest,
                    &format!("reel: cannot read the request: {e}"),
                );
            }
        };
        if parts.method == http::Method::POST {
            route.read_body_shape(&body, anthropic);
        }
        let (endpoint, kind, provider) = (route.endpoint.clone(), route.kind, route.provider);
        let query = parts
            .uri
            .query()
            .map(|q| self.matcher.tape.redactor.redact_text(q).into_owned());
        let live = Live {
            method: parts.method.as_str().to_owned(),
            endpoint,
            query,
            kind,
            provider,
            sha256: request_sha256(&body),
            text: std::str::from_utf8(&body).ok().map(str::to_owned),
        };
        match self.matcher.take(&live) {
            Ok(i) => self.serve(i).await,
            Err(message) => {
                let mut report = self.report.lock().unwrap_or_else(|e| e.into_inner());
                report.misses.push(message.clone());
                drop(report);
                fail(live.provider, Failure::Miss, &message)
            }
        }
    }

    async fn serve(&self, i: usize) -> Response<Reply> {
        self.report
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .answered += 1;
        let e = &self.matcher.tape.exchanges[i];
        if let Some(error) = &e.unreachable {
            return fail(
                e.provider,
                Failure::BadGateway,
                &format!("reel: (recorded) the upstream could not be reached: {error}"),
            );
        }
        let mut r =
            Response::builder().status(StatusCode::from_u16(e.status).unwrap_or(StatusCode::OK));
        if let Some(h) = r.headers_mut() {
            for (k, v) in &e.headers {
                if let (Ok(k), Ok(v)) = (
                    HeaderName::from_bytes(k.as_bytes()),
                    HeaderValue::from_str(v),
                ) {
                    h.append(k, v);
                }
            }
        }
        let (tx, rx) = mpsc::channel::<ReplyFrame>(16);
        let pace = self.pace;
        let pieces = e.pieces.clone();
        let severed = e.severed;
        tokio::spawn(async move {
            let start = Instant::now();
            for (us, piece) in pieces {
                if let Pace::Scaled(f) = pace {
                    let at = Duration::from_micros((us as f64 / f) as u64);
                    if let Some(wait) = at.checked_sub(start.elapsed()) {
                        tokio::time::sleep(wait).await;
                    }
                }
                if tx.send(Ok(Frame::data(piece))).await.is_err() {
                    return;
                }
            }
            if severed {
                let _ = tx
                    .send(Err(std::io::Error::other(
                        "the recorded stream was severed here",
                    )))
                    .await;
            }
        });
        r.body(Reply::stream(rx)).unwrap_or_else(|_| {
            fail(
                Provider::OpenAi,
                Failure::BadRequest,
                "reel: bad recorded header",
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_per_run_ids_are_volatile() {
        let mut body = serde_json::json!({
            "model": "m",
            "client_metadata": {"session_id": "s1", "turn_id": "t1"},
            "input": [{"id": "msg_1", "type": "message"}, {"type": "function_call_output", "id": "x", "output": "o"}],
        });
        for p in VOLATILE {
            Pointer::parse(p).unwrap().remove_from(&mut body);
        }
        assert_eq!(
            body,
            serde_json::json!({"model": "m", "input": [{"type": "message"}, {"type": "function_call_output", "output": "o"}]})
        );
    }
}
