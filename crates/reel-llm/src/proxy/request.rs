//! A request on its way: its body read within the budget (or refused in the provider's
//! shape), the exchange opened, the request forwarded upstream and, while the answer
//! is awaited, read for the record (its turns, history elided).

use std::sync::Arc;
use std::time::Instant;

use http::{HeaderValue, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use serde_json::{Map, Value, json};

use reel_net::http::strip_hop_by_hop;
use reel_trace::Timestamp;
use reel_trace::line::{Block, Turn};

use super::body::Answer;
use super::exchange::{Exchange, OwnedRoute, RequestFacts, Shared, redacted_value, replay_fields};
use super::head::respond;
use super::limits::{KEPT_BODY_MAX, REQUEST_BUDGET, REQUEST_MAX};
use super::notice::Notice;
use crate::api::{Failure, Provider, error_response};
use crate::headers;
use crate::request::{Request as LlmRequest, matchable};
use crate::tape::kinds;

/// One of reel's own answers, in the provider's error shape.
fn reply(provider: Provider, failure: Failure, message: &str) -> Response<Answer> {
    error_response(provider, failure, message).map(Answer::Full)
}

pub(super) async fn handle(sh: Arc<Shared>, req: Request<Incoming>) -> Response<Answer> {
    let started = Instant::now();
    let t_request = Timestamp::now();
    let path = req
        .uri()
        .path_and_query()
        .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned());
    let anthropic = req.headers().contains_key("anthropic-version");
    let mut route = sh.routes.route(&path, anthropic);
    let (parts, body) = req.into_parts();
    let declared = parts
        .headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    // Held until the request is recorded: its share of the budget.
    let (body, _room) = match read_body(body, declared, &sh.bodies).await {
        Ok(read) => read,
        Err(e) => return refusal(route.provider, e),
    };
    if parts.method == http::Method::POST {
        route.read_body_shape(&body, anthropic);
    }
    let ex = open_exchange(&sh, started, &parts, route.into(), &body);
    forward(sh, ex, parts, body, t_request).await
}

/// The client's answer when its request body was not read: 413, 503 with
/// `retry-after: 1`, or 400, in the provider's error shape.
fn refusal(provider: Provider, error: BodyError) -> Response<Answer> {
    match error {
        BodyError::TooLarge => {
            let msg = format!(
                "reel: the request body is larger than {} MiB",
                REQUEST_MAX >> 20
            );
            let mut r = reply(provider, Failure::BadRequest, &msg);
            *r.status_mut() = StatusCode::PAYLOAD_TOO_LARGE;
            r
        }
        BodyError::Busy => {
            let msg = format!(
                "reel: the request bodies being recorded take {} MiB already; retry",
                REQUEST_BUDGET >> 20
            );
            let mut r = reply(provider, Failure::Busy, &msg);
            r.headers_mut()
                .insert(http::header::RETRY_AFTER, HeaderValue::from_static("1"));
            r
        }
        BodyError::Read(e) => {
            let msg = format!("reel: the request body could not be read: {e}");
            reply(provider, Failure::BadRequest, &msg)
        }
    }
}

/// The exchange a read request opens: its number, its route and what the trace keeps
/// of its head (and, for an API reel reads into no turns, of its body).
fn open_exchange(
    sh: &Shared,
    started: Instant,
    parts: &http::request::Parts,
    route: OwnedRoute,
    body: &[u8],
) -> Exchange {
    Exchange {
        n: sh.tape.next_exchange(),
        started,
        method: parts.method.as_str().to_owned(),
        request_sha256: reel_trace::hash::request_sha256(body),
        request_headers: headers::capture(&parts.headers, true),
        facts: None,
        conversation: 0,
        mmsp_id: parts
            .headers
            .get(crate::mmsp::TRACE_ID_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        other: (!route.kind.generates() && body.len() <= KEPT_BODY_MAX)
            .then(|| serde_json::from_slice::<Value>(body).ok())
            .flatten()
            .filter(Value::is_object)
            .map(|v| redacted_value(sh.tape.redactor(), &v)),
        query: parts
            .uri
            .query()
            .map(|q| sh.tape.redactor().redact_text(q).into_owned()),
        route,
    }
}

/// Sends the request upstream, records it while the answer is awaited, and answers the
/// client with the upstream's response (or a 502).
async fn forward(
    sh: Arc<Shared>,
    mut ex: Exchange,
    mut parts: http::request::Parts,
    body: Bytes,
    t_request: Timestamp,
) -> Response<Answer> {
    strip_hop_by_hop(&mut parts.headers);
    if let Ok(host) = HeaderValue::from_str(&ex.route.upstream.authority) {
        parts.headers.insert(http::header::HOST, host);
    }
    parts.uri = match ex.route.upstream_path.parse() {
        Ok(u) => u,
        Err(_) => return reply(ex.route.provider, Failure::BadRequest, "reel: bad path"),
    };
    let upstream_req = Request::from_parts(parts, Full::new(body.clone()));
    let sender = sh.pool.take(&ex.route.upstream, &sh.tls).await;
    let mut sender = match sender {
        Ok(s) => s,
        Err(error) => {
            record_request(&sh, &mut ex, &body, t_request);
            return bad_gateway(&sh, &ex, &error);
        }
    };
    let answer = sender.send_request(upstream_req);
    record_request(&sh, &mut ex, &body, t_request);
    let response = match answer.await {
        Ok(r) => r,
        Err(e) => return bad_gateway(&sh, &ex, &format!("the upstream broke off: {e}")),
    };
    respond(sh, ex, response, sender)
}

/// Why a request body was not read.
enum BodyError {
    TooLarge,
    Busy,
    Read(Box<dyn std::error::Error + Send + Sync>),
}

/// KiB of the budget `bytes` take (at least one).
fn kib(bytes: usize) -> u32 {
    u32::try_from(bytes.div_ceil(1024).max(1)).unwrap_or(u32::MAX)
}

/// Reads a request body whole, up to [`REQUEST_MAX`], taking its room in the budget:
/// all of it up front when its length is `declared` (waiting for room), else as its
/// frames come (refused when there is none, so two readers cannot wait on each other).
async fn read_body<B>(
    mut body: B,
    declared: Option<usize>,
    budget: &Arc<tokio::sync::Semaphore>,
) -> Result<(Bytes, tokio::sync::OwnedSemaphorePermit), BodyError>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut room = match declared {
        Some(n) if n > REQUEST_MAX => return Err(BodyError::TooLarge),
        Some(n) => Arc::clone(budget)
            .acquire_many_owned(kib(n))
            .await
            .map_err(|_| BodyError::Busy)?,
        None => Arc::clone(budget)
            .try_acquire_many_owned(1)
            .map_err(|_| BodyError::Busy)?,
    };
    let mut taken = declared.map_or(1024, |n| kib(n) as usize * 1024);
    let mut out = Vec::with_capacity(declared.unwrap_or(0));
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| BodyError::Read(e.into()))?;
        let Ok(data) = frame.into_data() else {
            continue; // trailers
        };
        if out.len() + data.len() > REQUEST_MAX {
            return Err(BodyError::TooLarge);
        }
        out.extend_from_slice(&data);
        if out.len() > taken {
            let more = kib(out.len() - taken);
            let extra = Arc::clone(budget)
                .try_acquire_many_owned(more)
                .map_err(|_| BodyError::Busy)?;
            room.merge(extra);
            taken += more as usize * 1024;
        }
    }
    Ok((Bytes::from(out), room))
}

/// Reads the request for the record and writes its turns.
fn record_request(sh: &Shared, ex: &mut Exchange, body: &[u8], t: Timestamp) {
    if !ex.route.kind.generates() {
        return;
    }
    let Ok(text) = std::str::from_utf8(body) else {
        return;
    };
    let Some(req) = LlmRequest::parse(ex.route.kind, text) else {
        return;
    };
    let prefixes = req.prefixes();
    let system = req.system_value();
    let scope = format!(
        "{} {}",
        ex.route.endpoint,
        system.as_ref().map(Value::to_string).unwrap_or_default()
    );
    let (elided, conversation) = if prefixes.len() == req.messages.len() + 1 {
        sh.history.elide(&scope, &prefixes)
    } else {
        (0, 0)
    };
    ex.conversation = conversation;
    let mut turns = req.turns(ex.route.kind, elided);
    let elided_sha256 = (elided > 0).then(|| prefixes[elided].clone());
    if let Some(sha) = &elided_sha256 {
        let marker = Block::HistoryElided {
            count: elided as u64,
            sha256: sha.clone(),
            request_sha256: Some(ex.request_sha256.clone()),
            extra: Map::new(),
        };
        match turns.first_mut() {
            Some(first) => first.blocks.get_or_insert_with(Vec::new).insert(0, marker),
            None => turns.push(Turn {
                role: Some("user".into()),
                blocks: Some(vec![marker]),
                ..Turn::default()
            }),
        }
    }
    let t_iso = t.to_iso().as_str().to_owned();
    let live = sh.mmsp.as_ref().map(|live| {
        let id = live.trace_id(ex.mmsp_id.as_deref(), conversation, ex.n);
        let raw = redacted_value(
            sh.tape.redactor(),
            &json!({ "system": system, "tools_count": req.tools_count }),
        );
        let body = serde_json::from_str::<Value>(text).ok();
        ex.mmsp_id = Some(id.clone());
        (live, id, raw, body)
    });
    for mut turn in turns {
        turn.t = Some(t_iso.clone());
        turn.endpoint = Some(ex.route.endpoint.clone());
        turn.source = Some("llm".into());
        let written = sh.tape.turn(ex.n, conversation, &mut turn);
        if let Some((live, id, raw, body)) = &live {
            live.request(id, written, raw, body.as_ref());
        }
    }
    ex.facts = Some(RequestFacts {
        stream: req.stream,
        usage_chunk: req.usage_chunk,
        system,
        tools_count: req.tools_count,
        elided,
        elided_sha256,
        matchable: matchable(ex.route.kind, text, elided),
    });
}

/// The client's 502 when the upstream cannot be reached or broke off; the trace gets
/// an `llm.error` and the user a notice.
fn bad_gateway(sh: &Shared, ex: &Exchange, error: &str) -> Response<Answer> {
    (sh.notices)(Notice::UpstreamFailed {
        error: format!("{}: {error}", ex.route.url),
    });
    let raw = json!({
        "endpoint": ex.route.endpoint,
        "url": ex.route.url,
        "method": ex.method,
        "error": error,
    });
    sh.tape.event(
        ex.n,
        Timestamp::now(),
        kinds::ERROR,
        &raw,
        replay_fields(sh, ex),
    );
    reply(
        ex.route.provider,
        Failure::BadGateway,
        &format!(
            "reel: the upstream {} could not be reached: {error}",
            ex.route.url
        ),
    )
}

#[cfg(test)]
mod budget_tests {
    use std::convert::Infallible;
    use std::time::Duration;

    use super::*;

    fn run<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    fn budget(kib: usize) -> Arc<tokio::sync::Semaphore> {
        Arc::new(tokio::sync::Semaphore::new(kib))
    }

    #[test]
    fn a_body_declared_past_the_maximum_is_refused_unread() {
        let b = budget(1 << 10);
        let r = run(read_body(
            Full::new(Bytes::from_static(b"{}")),
            Some(REQUEST_MAX + 1),
            &b,
        ));
        assert!(matches!(r, Err(BodyError::TooLarge)));
    }

    #[test]
    fn a_body_of_unknown_length_finding_no_room_is_refused_not_queued() {
        // Two readers of unknown length must not wait on each other: the one that
        // finds the budget taken gets 503 (and retries).
        let b = budget(4);
        let held = Arc::clone(&b).try_acquire_many_owned(4).unwrap();
        let r = run(read_body(frames(vec![vec![b'x'; 10]]), None, &b));
        assert!(matches!(r, Err(BodyError::Busy)));
        drop(held);
        let (body, room) = run(read_body(
            frames(vec![vec![b'x'; 1000], vec![b'x'; 2000]]),
            None,
            &b,
        ))
        .ok()
        .unwrap();
        assert_eq!(body.len(), 3000);
        assert_eq!(room.num_permits(), 3, "its size in KiB, rounded up");
        assert_eq!(b.available_permits(), 1);
        drop(room);
        assert_eq!(b.available_permits(), 4);
    }

    #[test]
    fn a_body_of_declared_length_waits_for_room() {
        let b = budget(8);
        let held = Arc::clone(&b).try_acquire_many_owned(8).unwrap();
        let got = run(async {
            let release = tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                drop(held);
            });
            let r = read_body(Full::new(Bytes::from(vec![b'y'; 5000])), Some(5000), &b).await;
            release.await.unwrap();
            r.ok().map(|(body, room)| (body.len(), room.num_permits()))
        });
        assert_eq!(got, Some((5000, 5)));
    }

    /// A body of unknown length that comes as these frames.
    struct Frames(std::collections::VecDeque<Bytes>);

    impl hyper::body::Body for Frames {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
            std::task::Poll::Ready(self.0.pop_front().map(|b| Ok(hyper::body::Frame::data(b))))
        }
    }

    fn frames(frames: Vec<Vec<u8>>) -> Frames {
        Frames(frames.into_iter().map(Bytes::from).collect())
    }
}
