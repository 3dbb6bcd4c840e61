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

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use http::{HeaderName, HeaderValue, Request, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::{Bytes, Frame, Incoming};
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::mpsc;

use reel_mcp::normalize::{Difference, Pointer, diff, json_eq};
use reel_net::reply::{Reply, ReplyFrame};
use reel_net::serve::{self, Limits, Stop};
use reel_redact::redact::Redactor;
use reel_trace::hash::request_sha256;
use reel_trace::line::Line;
use reel_trace::{OpenError, TraceReader};

use crate::api::{Endpoint, Failure, Provider, error_response as fail};
use crate::history::{Kept, rebuild};
use crate::request::{Request as LlmRequest, conversation_member, matchable};
use crate::route::Routes;
use crate::tape::{BODY, kinds};
use reel_trace::llm::canonical_path;

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

/// Why a tape cannot be served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlayError {
    /// The trace cannot be read.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// The trace is not an llm trace.
    #[error("{path}: {reason}")]
    NotLlm {
        /// The trace.
        path: String,
        /// Why.
        reason: String,
    },
    /// A bad `--map`.
    #[error(transparent)]
    Route(#[from] crate::route::RouteError),
    /// The listen address cannot be bound.
    #[error("cannot listen on {listen}: {reason}")]
    Listen {
        /// The address.
        listen: String,
        /// Why.
        reason: String,
    },
    /// The runtime cannot be started.
    #[error("cannot start the tape server: {0}")]
    Setup(std::io::Error),
}

/// One recorded exchange.
#[derive(Debug)]
struct Recorded {
    n: u64,
    /// `path:line` of its `llm.request`/`llm.exchange`.
    place: String,
    endpoint: String,
    method: String,
    provider: Provider,
    status: u16,
    headers: Vec<(String, String)>,
    request_sha256: Option<String>,
    system: Option<Value>,
    body: Option<Value>,
    elided: Option<(usize, String)>,
    /// For a request that elided history: its matchable body with the whole
    /// conversation rebuilt from the tape ([`crate::history::rebuild`]).
    full: Option<Value>,
    /// The conversation its turns carry (0: not known).
    conversation: u64,
    /// The request's query, redacted as recorded.
    query: Option<String>,
    /// The body as it arrived: microseconds after the head, bytes (shared, not copied,
    /// when served).
    pieces: Vec<(u64, Bytes)>,
    decoded: bool,
    /// The recorded response was severed (`upstream_disconnect`, `idle_timeout`).
    severed: bool,
    /// Recorded as unreachable: an `llm.error` without a response.
    unreachable: Option<String>,
}

impl Recorded {
    /// An exchange of `endpoint` from its event's `raw` and reel's `request` member,
    /// with no answer yet (status 200, no headers, no body pieces).
    fn new(
        n: u64,
        place: String,
        endpoint: String,
        provider: Provider,
        raw: &Value,
        request: &Value,
    ) -> Recorded {
        let elided = request.get("elided").and_then(|e| {
            Some((
                e.get("count")?.as_u64()? as usize,
                e.get("sha256")?.as_str()?.to_owned(),
            ))
        });
        Recorded {
            n,
            place,
            endpoint,
            method: s(raw, "method"),
            provider,
            status: 200,
            headers: Vec::new(),
            request_sha256: None,
            system: None,
            body: request.get("body").cloned(),
            elided,
            full: None,
            conversation: 0,
            query: request
                .get("query")
                .and_then(Value::as_str)
                .map(str::to_owned),
            pieces: Vec::new(),
            decoded: false,
            severed: false,
            unreachable: None,
        }
    }
}

#[derive(Deserialize)]
struct LlmLine {
    #[serde(default, rename = "type")]
    ty: Option<String>,
    #[serde(default)]
    conversation: Option<u64>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    http: Option<HttpReq>,
    #[serde(default)]
    raw: Option<Value>,
    #[serde(default)]
    request: Option<Value>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    bytes: Option<String>,
    #[serde(default)]
    us: Option<u64>,
    #[serde(default)]
    decoded: Option<String>,
}

#[derive(Deserialize)]
struct HttpReq {
    #[serde(default)]
    req: Option<u64>,
}

/// A recorded llm trace, indexed for serving.
pub struct LlmTape {
    exchanges: Vec<Recorded>,
    redactor: Redactor,
    path: PathBuf,
}

fn s(v: &Value, k: &str) -> String {
    v.get(k).and_then(Value::as_str).unwrap_or("").to_owned()
}

impl LlmTape {
    /// Reads and indexes `path`.
    pub fn open(path: &Path) -> Result<LlmTape, PlayError> {
        let mut reader = TraceReader::open(path)?;
        let mut redactor = Redactor::disabled();
        let mut kind = None;
        let mut by_n: HashMap<u64, usize> = HashMap::new();
        let mut exchanges: Vec<Recorded> = Vec::new();
        while let Some(line) = reader.next_line() {
            let line = line?;
            let place = line.location();
            let bytes = line.raw.bytes;
            if let Ok(Line::Meta(m)) = line.parse() {
                kind = m.kind.clone();
                if let Some(r) = m.redaction.as_ref() {
                    redactor =
                        Redactor::from_description(r).unwrap_or_else(|_| Redactor::builtin());
                }
                continue;
            }
            let Ok(l) = serde_json::from_slice::<LlmLine>(bytes) else {
                continue;
            };
            let n = l.http.as_ref().and_then(|h| h.req).unwrap_or(0);
            if l.ty.as_deref() == Some("turn") {
                if let (Some(c), Some(&i)) = (l.conversation, by_n.get(&n)) {
                    exchanges[i].conversation = c;
                }
                continue;
            }
            let Some(k) = l.kind.as_deref() else { continue };
            let raw = l.raw.clone().unwrap_or(Value::Null);
            match k {
                kinds::REQUEST | kinds::EXCHANGE => {
                    let req_headers = raw.get("headers");
                    // Traces of older reels named an unversioned path as sent.
                    let endpoint = canonical_path(&s(&raw, "endpoint")).into_owned();
                    let anthropic =
                        req_headers.is_some_and(|h| h.get("anthropic-version").is_some());
                    let (_, provider) = Endpoint::of(&endpoint, anthropic);
                    let mut headers: Vec<(String, String)> = raw
                        .get("response_headers")
                        .and_then(Value::as_object)
                        .into_iter()
                        .flatten()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                        .collect();
                    headers.retain(|(k, _)| k != "content-length");
                    let request = l.request.unwrap_or(Value::Null);
                    by_n.insert(n, exchanges.len());
                    exchanges.push(Recorded {
                        status: raw.get("status").and_then(Value::as_u64).unwrap_or(200) as u16,
                        headers,
                        request_sha256: raw
                            .get("request_sha256")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                        system: raw.get("system").cloned(),
                        ..Recorded::new(n, place, endpoint, provider, &raw, &request)
                    });
                }
                BODY => {
                    let Some(&i) = by_n.get(&n) else { continue };
                    let piece = match (&l.text, &l.bytes) {
                        (Some(t), _) => t.clone().into_bytes(),
                        (None, Some(b)) => base64::engine::general_purpose::STANDARD
                            .decode(b)
                            .unwrap_or_default(),
                        _ => continue,
                    };
                    let ex = &mut exchanges[i];
                    ex.decoded |= l.decoded.is_some();
                    ex.pieces.push((l.us.unwrap_or(0), Bytes::from(piece)));
                }
                kinds::TRUNCATED => {
                    if let Some(&i) = by_n.get(&n) {
                        let reason = s(&raw, "reason");
                        exchanges[i].severed =
                            reason == "upstream_disconnect" || reason == "idle_timeout";
                    }
                }
                kinds::ERROR if !by_n.contains_key(&n) => {
                    // Traces of older reels named an unversioned path as sent.
                    let endpoint = canonical_path(&s(&raw, "endpoint")).into_owned();
                    let (_, provider) = Endpoint::of(&endpoint, false);
                    let request = l.request.unwrap_or(Value::Null);
                    by_n.insert(n, exchanges.len());
                    exchanges.push(Recorded {
                        status: 502,
                        unreachable: Some(s(&raw, "error")),
                        ..Recorded::new(n, place, endpoint, provider, &raw, &request)
                    });
                }
                _ => {}
            }
        }
        if kind.as_deref() != Some("llm") {
            return Err(PlayError::NotLlm {
                path: path.display().to_string(),
                reason:
                    "not an llm trace (meta.kind is not \"llm\"); serve MCP traces with `reel play`"
                        .into(),
            });
        }
        if exchanges.is_empty() {
            return Err(PlayError::NotLlm {
                path: path.display().to_string(),
                reason: "it holds no recorded exchange (llm.request or llm.exchange events \
                         of `reel llm`)"
                    .into(),
            });
        }
        let mut answered = exchanges
            .iter()
            .filter(|e| e.unreachable.is_none())
            .peekable();
        if answered.peek().is_some() && answered.all(|e| e.pieces.is_empty()) {
            return Err(PlayError::NotLlm {
                path: path.display().to_string(),
                reason: "its exchanges have no recorded response bodies (reel.llm.body events): \
                         only a trace recorded by `reel llm` can be served"
                    .into(),
            });
        }
        rebuild_conversations(&mut exchanges);
        if exchanges.iter().any(|e| e.decoded) {
            for e in exchanges.iter_mut().filter(|e| e.decoded) {
                e.headers.retain(|(k, _)| k != "content-encoding");
            }
        }
        Ok(LlmTape {
            exchanges,
            redactor,
            path: path.to_owned(),
        })
    }

    /// How many exchanges the tape holds.
    pub fn len(&self) -> usize {
        self.exchanges.len()
    }

    /// True when the tape holds no exchange.
    pub fn is_empty(&self) -> bool {
        self.exchanges.is_empty()
    }
}

/// Gives each request that elided history its whole conversation, rebuilt from the
/// requests before it ([`crate::history::rebuild`]).
fn rebuild_conversations(exchanges: &mut [Recorded]) {
    let kinds: Vec<&'static str> = exchanges
        .iter()
        .map(|e| conversation_member(Endpoint::of(&e.endpoint, false).0))
        .collect();
    let whole = {
        let kept: Vec<Kept<'_>> = exchanges
            .iter()
            .zip(&kinds)
            .map(|(e, key)| Kept {
                scope: &e.endpoint,
                conversation: e.conversation,
                elided: e.elided.as_ref().map(|(c, _)| *c),
                messages: e
                    .body
                    .as_ref()
                    .and_then(|b| b.get(*key))
                    .and_then(Value::as_array)
                    .map(Vec::as_slice),
            })
            .collect();
        rebuild(&kept)
    };
    for ((e, key), list) in exchanges.iter_mut().zip(kinds).zip(whole) {
        if let (Some(_), Some(list), Some(body)) = (&e.elided, list, &e.body) {
            let mut full = body.clone();
            full[key] = Value::Array(list);
            e.full = Some(full);
        }
    }
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

struct Server {
    tape: LlmTape,
    used: Mutex<Vec<bool>>,
    routes: Routes,
    /// [`VOLATILE`] and the `--ignore` pointers.
    ignore: Vec<Pointer>,
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
        // Volatile members and --ignore pointers leave the recorded requests once, here;
        // a live request loses them when it is read ([`LiveForm`]).
        let mut ignore: Vec<Pointer> = VOLATILE
            .iter()
            .filter_map(|p| Pointer::parse(p).ok())
            .collect();
        ignore.extend(config.ignore);
        let mut tape = tape;
        for e in &mut tape.exchanges {
            for body in [&mut e.body, &mut e.full].into_iter().flatten() {
                for p in &ignore {
                    p.remove_from(body);
                }
            }
        }
        let used = vec![false; tape.exchanges.len()];
        Ok(LlmPlayer {
            listener,
            addr,
            limits: config.limits,
            server: Arc::new(Server {
                tape,
                used: Mutex::new(used),
                routes,
                ignore,
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
        let server = Arc::clone(&self.server);
        let limits = self.limits;
        let listener = self.listener;
        rt.block_on(async move {
            if on_signals {
                serve::stop_on_signals(stop.clone()).map_err(PlayError::Setup)?;
            }
            let listener = tokio::net::TcpListener::from_std(listener).map_err(PlayError::Setup)?;
            let conn_stop = stop.clone();
            serve::accept_until_stopped(
                listener,
                stop.subscribe(),
                limits.max_connections,
                crate::proxy::SHUTDOWN_GRACE,
                || {},
                move |stream, _| {
                    let server = Arc::clone(&server);
                    let stop = conn_stop.subscribe();
                    async move {
                        let service = hyper::service::service_fn(move |req| {
                            let server = Arc::clone(&server);
                            async move { Ok::<_, Infallible>(server.answer(req).await) }
                        });
                        serve::serve_http1(
                            stream,
                            service,
                            limits,
                            stop,
                            crate::proxy::SHUTDOWN_GRACE,
                        )
                        .await;
                    }
                },
            )
            .await;
            Ok::<(), PlayError>(())
        })?;
        rt.shutdown_timeout(Duration::from_millis(100));
        let mut report =
            std::mem::take(&mut *self.server.report.lock().unwrap_or_else(|e| e.into_inner()));
        let used = self.server.used.lock().unwrap_or_else(|e| e.into_inner());
        report.unused = self
            .server
            .tape
            .exchanges
            .iter()
            .zip(used.iter())
            .filter(|(_, u)| !**u)
            .map(|(e, _)| (e.n, e.endpoint.clone()))
            .collect();
        Ok(report)
    }
}

/// A live request, read for matching.
struct Live {
    method: String,
    endpoint: String,
    /// The query, redacted with the tape's rules.
    query: Option<String>,
    kind: Endpoint,
    provider: Provider,
    sha256: String,
    text: Option<String>,
}

/// What matching needs of a live request, read from it once whatever the number of
/// candidates: its prefix digests, its system prompt and, for each elided count a
/// candidate asks for, its normalised members (redacted as the trace is, volatile and
/// ignored members removed).
struct LiveForm<'l> {
    live: &'l Live,
    request: Option<LlmRequest<'l>>,
    prefixes: Vec<String>,
    system: Option<Value>,
    bodies: HashMap<usize, Option<Value>>,
}

impl<'l> LiveForm<'l> {
    fn new(live: &'l Live, server: &Server) -> LiveForm<'l> {
        let request = live
            .text
            .as_deref()
            .filter(|_| live.kind.generates())
            .and_then(|t| LlmRequest::parse(live.kind, t));
        let prefixes = request
            .as_ref()
            .map(LlmRequest::prefixes)
            .unwrap_or_default();
        let system = request
            .as_ref()
            .and_then(LlmRequest::system_value)
            .map(|s| {
                let text = s.to_string();
                serde_json::from_str(&server.tape.redactor.redact_json(&text)).unwrap_or(s)
            });
        LiveForm {
            live,
            request,
            prefixes,
            system,
            bodies: HashMap::new(),
        }
    }

    /// The normalised members with the first `elided` messages left out. The ignore
    /// pointers apply to the whole request first, so they name what the client sent.
    fn body(&mut self, server: &Server, elided: usize) -> Option<&Value> {
        let live = self.live;
        self.bodies
            .entry(elided)
            .or_insert_with(|| {
                let m = matchable(live.kind, live.text.as_deref()?, 0)?;
                let redacted = server
                    .tape
                    .redactor
                    .redact_json(&m.to_string())
                    .into_owned();
                let mut v: Value = serde_json::from_str(&redacted).unwrap_or(m);
                for p in &server.ignore {
                    p.remove_from(&mut v);
                }
                let key = conversation_member(live.kind);
                if let Some(Value::Array(items)) = v.get_mut(key) {
                    items.drain(..elided.min(items.len()));
                }
                Some(v)
            })
            .as_ref()
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
            .map(|q| self.tape.redactor.redact_text(q).into_owned());
        let live = Live {
            method: parts.method.as_str().to_owned(),
            endpoint,
            query,
            kind,
            provider,
            sha256: request_sha256(&body),
            text: std::str::from_utf8(&body).ok().map(str::to_owned),
        };
        match self.take(&live) {
            Ok(i) => self.serve(i).await,
            Err(message) => {
                let mut report = self.report.lock().unwrap_or_else(|e| e.into_inner());
                report.misses.push(message.clone());
                drop(report);
                fail(live.provider, Failure::Miss, &message)
            }
        }
    }

    /// The exchange answering `live`, marked used; or the miss message.
    fn take(&self, live: &Live) -> Result<usize, String> {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        let open = || {
            self.tape.exchanges.iter().enumerate().filter(|(i, e)| {
                !used[*i] && e.endpoint == live.endpoint && e.method == live.method
            })
        };
        let exact = open()
            .find(|(_, e)| {
                e.request_sha256.as_deref() == Some(live.sha256.as_str())
                    && (e.query == live.query || e.query.is_none() && e.body.is_none())
            })
            .map(|(i, _)| i);
        let mut form = LiveForm::new(live, self);
        let found = exact.or_else(|| {
            open()
                .find(|(_, e)| self.differences(&mut form, e).is_some_and(|d| d.is_empty()))
                .map(|(i, _)| i)
        });
        if let Some(i) = found {
            used[i] = true;
            return Ok(i);
        }
        // The nearest: fewest differences among the open exchanges of the endpoint.
        let nearest = open()
            .filter_map(|(_, e)| Some((e, self.differences(&mut form, e)?)))
            .min_by_key(|(_, d)| d.len());
        let what = format!("{} {}", live.method, live.endpoint);
        let model = live
            .text
            .as_deref()
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
            .and_then(|v| v.get("model").and_then(Value::as_str).map(str::to_owned));
        let what = match model {
            Some(m) => format!("{what} (model {m})"),
            None => what,
        };
        Err(match nearest {
            Some((e, d)) => {
                let shown: Vec<String> = d.iter().take(5).map(Difference::to_string).collect();
                format!(
                    "reel: the tape {} has no answer for {what}; nearest: exchange {} ({}), which differs at {}",
                    self.tape.path.display(),
                    e.n,
                    e.place,
                    shown.join("; ")
                )
            }
            None => format!(
                "reel: the tape {} has no unused answer for {what}",
                self.tape.path.display()
            ),
        })
    }

    /// Where the live request differs from `e` after normalisation; `None` when they
    /// cannot be compared (no body on either side).
    fn differences(&self, form: &mut LiveForm<'_>, e: &Recorded) -> Option<Vec<Difference>> {
        let live = form.live;
        let text = live.text.as_deref()?;
        if !live.kind.generates() {
            return Some(self.other_differences(e, live, text));
        }
        form.request.as_ref()?;
        let key = conversation_member(live.kind);
        // The whole conversation when the tape lets it be rebuilt; else the messages
        // after the elided ones, whose digest must then be the recorded one.
        let (recorded, elided) = match (&e.elided, &e.full) {
            (Some(_), Some(full)) => (full, 0),
            (Some((count, sha)), None) => {
                let live_sha = form.prefixes.get(*count);
                if live_sha != Some(sha) {
                    return Some(vec![Difference {
                        pointer: format!("/{key}/0..{count}"),
                        left: Some(Value::String(format!("history {sha}"))),
                        right: live_sha.map(|h| Value::String(format!("history {h}"))),
                    }]);
                }
                (e.body.as_ref()?, *count)
            }
            (None, _) => (e.body.as_ref()?, 0),
        };
        let live_v = form.body(self, elided)?;
        let mut d = if json_eq(recorded, live_v) {
            Vec::new()
        } else {
            diff(recorded, live_v)
        };
        // Pointers name the request's own messages, elided ones counted.
        if elided > 0 {
            for x in &mut d {
                x.pointer = shift_index(&x.pointer, key, elided);
            }
        }
        if form.system != e.system {
            d.push(Difference {
                pointer: "/system".into(),
                left: e.system.clone(),
                right: form.system.clone(),
            });
        }
        Some(d)
    }

    /// An API reel reads into no turns: the same query, and the same body (byte for
    /// byte, else as JSON with the trace's redaction, the volatile members and the
    /// `--ignore` pointers applied to both sides).
    fn other_differences(&self, e: &Recorded, live: &Live, text: &str) -> Vec<Difference> {
        let mut d = Vec::new();
        if e.query != live.query && (e.query.is_some() || live.query.is_some()) {
            d.push(Difference {
                pointer: "?".into(),
                left: e.query.clone().map(Value::String),
                right: live.query.clone().map(Value::String),
            });
        }
        if e.request_sha256.as_deref() == Some(live.sha256.as_str()) {
            return d;
        }
        let parsed = serde_json::from_str::<Value>(text).ok();
        match (&e.body, parsed) {
            (Some(recorded), Some(v)) => {
                let redacted = self.tape.redactor.redact_json(&v.to_string()).into_owned();
                let mut v: Value = serde_json::from_str(&redacted).unwrap_or(v);
                for p in &self.ignore {
                    p.remove_from(&mut v);
                }
                if !json_eq(recorded, &v) {
                    d.extend(diff(recorded, &v));
                }
            }
            (_, None) if text.trim().is_empty() => {}
            (_, v) => d.push(Difference {
                pointer: String::new(),
                left: None,
                right: Some(v.unwrap_or_else(|| Value::String(format!("{} bytes", text.len())))),
            }),
        }
        d
    }

    async fn serve(&self, i: usize) -> Response<Reply> {
        self.report
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .answered += 1;
        let e = &self.tape.exchanges[i];
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

/// `/key/i/…` with `i` moved up by `by` (a pointer into the messages after the elided
/// ones, named in the whole request's index space).
fn shift_index(pointer: &str, key: &str, by: usize) -> String {
    let prefix = format!("/{key}/");
    let Some(rest) = pointer.strip_prefix(&prefix) else {
        return pointer.to_owned();
    };
    let (index, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    match index.parse::<usize>() {
        Ok(i) => format!("{prefix}{}{tail}", i + by),
        Err(_) => pointer.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pointer_after_elided_messages_names_the_whole_requests_index() {
        assert_eq!(
            shift_index("/input/2/output", "input", 3),
            "/input/5/output"
        );
        assert_eq!(shift_index("/input/0", "input", 1), "/input/1");
        assert_eq!(
            shift_index("/messages/1/content/0", "messages", 4),
            "/messages/5/content/0"
        );
        assert_eq!(shift_index("/model", "input", 3), "/model");
        assert_eq!(shift_index("/input/x", "input", 3), "/input/x");
    }

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
