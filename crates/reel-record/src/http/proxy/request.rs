//! One request on its way upstream: the exchange opened for it, the guard's check,
//! its body passed on (read whole when small) and recorded, and the answer awaited.

use std::convert::Infallible;
use std::pin::pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response};
use reel_net::serve::stopped;

use super::answer::respond;
use super::client::ClientConn;
use super::exchange::{
    ExState, Exchange, bad_gateway, bad_request, content_length, refuse, shutting_down,
};
use super::limits::INLINE_BODY_MAX;
use super::shared::Shared;
use crate::http::body::{BodyEnd, Reply, TeeBody};
use crate::http::headers::{capture_request, strip_hop_by_hop};
use crate::http::note::RequestFacts;

/// Handles one request: opens its exchange, checks it against the guard, passes it
/// upstream with its body recorded, and answers with the upstream's response (or one
/// of reel's own).
pub(super) async fn handle(
    sh: Arc<Shared>,
    conn: Arc<ClientConn>,
    req: Request<Incoming>,
) -> Result<Response<Reply>, Infallible> {
    let (mut parts, body) = req.into_parts();
    let ex = open_exchange(&sh, &conn, &parts);
    if let Err(r) = sh.guard.check(&parts.headers) {
        return Ok(refuse(&sh, &ex, r));
    }
    let proxy_origin = match parts
        .headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
    {
        Some(h) => format!("http://{h}"),
        None => format!("http://{}", sh.listen),
    };
    let (tee, whole) = match tee_body(&ex, body, &parts.headers).await {
        Ok(teed) => teed,
        Err(e) => return Ok(bad_request(&sh, &ex, &e)),
    };
    let record_whole = || {
        if let Some(b) = &whole {
            ex.request_done(b.to_vec(), b.len() as u64, BodyEnd::Whole);
        }
    };
    if let Err(e) = conn.ensure(&sh).await {
        // Read what the client sent (briefly) so the trace shows the request.
        record_whole();
        let _ = tokio::time::timeout(Duration::from_secs(1), tee.collect()).await;
        return Ok(bad_gateway(&sh, &ex, &e));
    }
    let method = parts.method.clone();
    prepare_upstream_request(&sh, &mut parts);
    let upstream_req = Request::from_parts(parts, tee);
    let answer = {
        let mut stop = pin!(stopped(sh.stop.clone()));
        tokio::select! {
            r = conn.send(&sh, upstream_req, record_whole) => Some(r),
            _ = &mut stop => None,
        }
    };
    // A request that never left still shows in the trace (once).
    record_whole();
    match answer {
        None => Ok(shutting_down(&ex)),
        // The upstream hop failed because the client's body did: not the upstream's
        // fault.
        Some(Err(e)) => match ex.client_broke() {
            Some(why) => Ok(bad_request(&sh, &ex, &why)),
            None => Ok(bad_gateway(&sh, &ex, &e)),
        },
        Some(Ok(resp)) => Ok(respond(&sh, &ex, &conn, resp, &proxy_origin, &method).await),
    }
}

/// The exchange a request opens: its number, its facts as received, and its session
/// when the request names one (its `Mcp-Session-Id`, or the legacy endpoint it was
/// posted to).
fn open_exchange(
    sh: &Arc<Shared>,
    conn: &ClientConn,
    parts: &hyper::http::request::Parts,
) -> Arc<Exchange> {
    let n = sh.requests.fetch_add(1, Ordering::Relaxed) + 1;
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    let facts = Arc::new(RequestFacts::new(
        n,
        parts.method.as_str(),
        path.clone(),
        capture_request(&parts.headers),
    ));
    let session = parts
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(Arc::<str>::from)
        .or_else(|| sh.legacy_session(&path));
    Arc::new(Exchange {
        sh: Arc::clone(sh),
        facts,
        conn_key: Arc::clone(&conn.key),
        state: Mutex::new(ExState {
            session,
            ..ExState::default()
        }),
    })
}

/// The request body as it goes upstream: a small one read whole (returned too, to be
/// recorded once it is on its way), a larger one teed, recorded when complete. Errs
/// with why when the small one could not be read.
async fn tee_body(
    ex: &Arc<Exchange>,
    body: Incoming,
    headers: &hyper::HeaderMap,
) -> Result<(TeeBody, Option<Bytes>), String> {
    if hyper::body::Body::is_end_stream(&body)
        || content_length(headers).is_some_and(|n| n <= INLINE_BODY_MAX)
    {
        let b = body.collect().await.map_err(|e| e.to_string())?.to_bytes();
        return Ok((TeeBody::whole(b.clone()), Some(b)));
    }
    let ex = Arc::clone(ex);
    let tee = TeeBody::new(
        body,
        Box::new(move |bytes, total, end| ex.request_done(bytes, total, end)),
    );
    Ok((tee, None))
}

/// The upstream hop's request: hop-by-hop headers out, `Host` the upstream's, a
/// (vetted, loopback) `Origin` the upstream's origin, bodies unencoded so the trace can
/// read them.
pub(super) fn prepare_upstream_request(sh: &Shared, parts: &mut hyper::http::request::Parts) {
    strip_hop_by_hop(&mut parts.headers);
    if let Ok(h) = HeaderValue::from_str(&sh.url.authority) {
        parts.headers.insert(header::HOST, h);
    }
    if parts.headers.contains_key(header::ORIGIN) {
        let scheme = if sh.url.https { "https" } else { "http" };
        if let Ok(o) = HeaderValue::from_str(&format!("{scheme}://{}", sh.url.authority)) {
            parts.headers.insert(header::ORIGIN, o);
        }
    }
    parts.headers.insert(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static("identity"),
    );
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    if let Ok(uri) = path.parse() {
        parts.uri = uri;
    }
}
