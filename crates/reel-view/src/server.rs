//! The HTTP side: routes, the headers every answer carries, the embedded pages and the
//! live feed.
//!
//! Routes: `/_reel/` (the app), `/_reel/assets/<file>`, `/_reel/api/<name>?…` (JSON,
//! see [`crate::api`]), `/_reel/api/follow?t=KEY` (server-sent events: the trace's
//! progress whenever it grows). On an MMSP cache directory the root serves RFC-0010
//! §7's routes ([`crate::mmsp::respond`]); elsewhere `/` is the app.
//!
//! Every request's `Host` and `Origin` must be loopback names (or the address the
//! viewer was told to listen on), a cross-site fetch is refused, and every answer
//! carries a Content-Security-Policy that allows scripts, styles and connections from
//! the viewer only: trace content that slipped into markup could still run nothing.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use hyper::body::Incoming;
use reel_net::http::LoopbackGuard;
use reel_net::reply::{Reply, ReplyFrame};
use tokio::sync::mpsc;

use crate::api::{self, ApiError, Query};
use crate::catalog::{Catalog, Home};

/// The policy every answer carries.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
img-src 'self' data:; media-src 'self' data:; connect-src 'self'; base-uri 'none'; \
form-action 'none'; frame-ancestors 'none'";

/// How often the live feed says it is still there (keeps proxies and timers quiet).
const KEEPALIVE: Duration = Duration::from_secs(15);

/// The embedded pages: name, content type, bytes.
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "index.html",
        "text/html; charset=utf-8",
        include_str!("../assets/index.html"),
    ),
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/app.js"),
    ),
    (
        "views.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/views.js"),
    ),
    (
        "dom.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/dom.js"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("../assets/style.css"),
    ),
    (
        "mmsp.css",
        "text/css; charset=utf-8",
        include_str!("../assets/mmsp.css"),
    ),
    (
        "favicon.svg",
        "image/svg+xml",
        include_str!("../assets/favicon.svg"),
    ),
];

/// The viewer's state shared by every connection.
pub struct App {
    /// What it shows.
    pub catalog: Catalog,
    /// The names requests may use.
    pub guard: LoopbackGuard,
}

impl App {
    /// Answers one request.
    pub async fn answer(
        self: Arc<Self>,
        req: Request<Incoming>,
    ) -> Result<Response<Reply>, Infallible> {
        let mut resp = match self.check(&req) {
            Err(why) => text(StatusCode::FORBIDDEN, why),
            Ok(()) if req.method() != Method::GET && req.method() != Method::HEAD => {
                let mut r = text(
                    StatusCode::METHOD_NOT_ALLOWED,
                    "the viewer only reads".into(),
                );
                r.headers_mut()
                    .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
                r
            }
            Ok(()) => self.route(&req).await,
        };
        secure(resp.headers_mut());
        Ok(resp)
    }

    fn check(&self, req: &Request<Incoming>) -> Result<(), String> {
        let h = req.headers();
        self.guard
            .check_all(
                h.get_all(header::HOST).iter().map(HeaderValue::as_bytes),
                h.get_all(header::ORIGIN).iter().map(HeaderValue::as_bytes),
            )
            .map_err(|r| r.to_string())?;
        let site = h.get("sec-fetch-site").and_then(|v| v.to_str().ok());
        let mode = h.get("sec-fetch-mode").and_then(|v| v.to_str().ok());
        if site == Some("cross-site") && mode != Some("navigate") {
            return Err("cross-site requests are refused".into());
        }
        // The API answers the viewer's own pages only: a navigation or an iframe of
        // another site (or another port of this host: `same-site`) that names an API
        // route reads trace content, so only same-origin requests and requests no page
        // made (`none`: a typed URL, curl) reach it.
        if req.uri().path().starts_with("/_reel/api/")
            && site.is_some_and(|s| s != "same-origin" && s != "none")
        {
            return Err(format!(
                "the viewer's API answers its own pages only (Sec-Fetch-Site: {})",
                site.unwrap_or_default()
            ));
        }
        Ok(())
    }

    async fn route(self: &Arc<Self>, req: &Request<Incoming>) -> Response<Reply> {
        let path = req.uri().path();
        let query = req.uri().query().map(str::to_owned);
        if path == "/_reel" {
            return redirect("/_reel/");
        }
        if path == "/_reel/" || path == "/_reel/index.html" {
            return asset("index.html");
        }
        if let Some(name) = path.strip_prefix("/_reel/assets/") {
            return asset(name);
        }
        if path == "/_reel/api/follow" {
            return self.follow(query.as_deref());
        }
        if let Some(name) = path.strip_prefix("/_reel/api/") {
            let app = Arc::clone(self);
            let name = name.to_owned();
            let answer =
                tokio::task::spawn_blocking(move || app.api(&name, query.as_deref())).await;
            return match answer {
                Ok(Ok(v)) => json(StatusCode::OK, &v),
                Ok(Err(e)) => json(
                    StatusCode::from_u16(e.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                    &serde_json::json!({ "error": e.message }),
                ),
                Err(_) => text(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "the request failed (a bug: please report)".into(),
                ),
            };
        }
        if path.starts_with("/_reel/") {
            return text(StatusCode::NOT_FOUND, "no such page".into());
        }
        match (&self.catalog.home, &self.catalog.dir) {
            (Home::Mmsp, Some(dir)) => {
                let dir = dir.clone();
                let rel = path.trim_start_matches('/').to_owned();
                let page = tokio::task::spawn_blocking(move || {
                    crate::mmsp::respond(&dir, &rel, query.as_deref())
                })
                .await;
                match page {
                    Ok(p) if p.status == 404 && path == "/favicon.ico" => no_content(),
                    Ok(p) => {
                        let status = StatusCode::from_u16(p.status)
                            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                        let mut r = Response::new(Reply::full(p.body));
                        *r.status_mut() = status;
                        r.headers_mut().insert(
                            header::CONTENT_TYPE,
                            HeaderValue::from_static(p.content_type),
                        );
                        r
                    }
                    Err(_) => text(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "the request failed".into(),
                    ),
                }
            }
            _ if path == "/" || path == "/index.html" => asset("index.html"),
            _ if path == "/favicon.ico" => no_content(),
            _ => text(StatusCode::NOT_FOUND, "no such page".into()),
        }
    }

    fn api(&self, name: &str, query: Option<&str>) -> Result<serde_json::Value, ApiError> {
        let q = Query::parse(query)?;
        let cat = &self.catalog;
        match name {
            "home" => api::home(cat),
            "trace" => api::trace(cat, &q),
            "lines" => api::lines(cat, &q),
            "line" => api::line(cat, &q),
            "raw" => api::raw(cat, &q),
            "calls" => api::calls(cat, &q),
            "stats" => api::stats(cat, &q),
            "search" => api::search(cat, &q),
            "diff" => api::diff(cat, &q),
            "merge" => api::merge(cat, &q),
            _ => Err(ApiError {
                status: 404,
                message: format!("no API {name:?}"),
            }),
        }
    }

    /// The live feed of one trace: an event with its progress now and whenever it
    /// changes, until it has ended or the client goes.
    fn follow(&self, query: Option<&str>) -> Response<Reply> {
        let entry = match Query::parse(query).and_then(|q| {
            let key = q.get("t").ok_or_else(|| ApiError {
                status: 400,
                message: "missing query parameter \"t\"".into(),
            })?;
            self.catalog.open(key).map_err(ApiError::from)
        }) {
            Ok(e) => e,
            Err(e) => {
                return text(
                    StatusCode::from_u16(e.status).unwrap_or(StatusCode::BAD_REQUEST),
                    e.message,
                );
            }
        };
        let (tx, rx) = mpsc::channel::<ReplyFrame>(4);
        let mut progress = entry.progress.subscribe();
        tokio::spawn(async move {
            loop {
                let now = *progress.borrow_and_update();
                let event = format!(
                    "event: progress\ndata: {}\n\n",
                    serde_json::to_string(&now).unwrap_or_default()
                );
                if tx
                    .send(Ok(hyper::body::Frame::data(Bytes::from(event))))
                    .await
                    .is_err()
                    || now.ended
                {
                    return;
                }
                loop {
                    tokio::select! {
                        changed = progress.changed() => {
                            if changed.is_err() {
                                return;
                            }
                            if *progress.borrow() != now {
                                break;
                            }
                        }
                        _ = tokio::time::sleep(KEEPALIVE) => {
                            let ping = Bytes::from_static(b": still here\n\n");
                            if tx.send(Ok(hyper::body::Frame::data(ping))).await.is_err() {
                                return;
                            }
                        }
                    }
                }
            }
        });
        let mut r = Response::new(Reply::stream(rx));
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        r
    }
}

/// The headers every answer carries.
fn secure(h: &mut http::HeaderMap) {
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    h.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
}

fn asset(name: &str) -> Response<Reply> {
    match ASSETS.iter().find(|(n, _, _)| *n == name) {
        Some((_, ty, body)) => {
            let mut r = Response::new(Reply::full(Bytes::from_static(body.as_bytes())));
            r.headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(ty));
            r
        }
        None => text(StatusCode::NOT_FOUND, "no such asset".into()),
    }
}

fn json(status: StatusCode, v: &serde_json::Value) -> Response<Reply> {
    let mut r = Response::new(Reply::full(serde_json::to_vec(v).unwrap_or_default()));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn text(status: StatusCode, body: String) -> Response<Reply> {
    let mut r = Response::new(Reply::full(body));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

fn redirect(to: &'static str) -> Response<Reply> {
    let mut r = Response::new(Reply::full(Bytes::new()));
    *r.status_mut() = StatusCode::FOUND;
    r.headers_mut()
        .insert(header::LOCATION, HeaderValue::from_static(to));
    r
}

fn no_content() -> Response<Reply> {
    let mut r = Response::new(Reply::full(Bytes::new()));
    *r.status_mut() = StatusCode::NO_CONTENT;
    r
}
