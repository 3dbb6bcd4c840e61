//! One exchange: what the trace needs of a request, its body recorded when complete,
//! and the answers reel gives itself (refusals, 502, 400, shutting down).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};

use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};
use reel_trace::Timestamp;

use super::limits::EXCERPT_MAX;
use super::shared::Shared;
use crate::http::body::{BodyEnd, Reply};
use crate::http::guard::Refusal;
use crate::http::headers::capture_response;
use crate::http::note::{ExchangeNote, HttpNote, Note, RequestFacts, ResponseFacts};
use crate::queue::{LineRecord, Stream};
use crate::trace::Notice;

/// One request and what the trace needs of it.
pub(crate) struct Exchange {
    pub(super) sh: Arc<Shared>,
    pub(super) facts: Arc<RequestFacts>,
    pub(super) conn_key: Arc<str>,
    pub(super) state: Mutex<ExState>,
}

#[derive(Default)]
pub(super) struct ExState {
    pub(super) session: Option<Arc<str>>,
    /// The request line, waiting for its session.
    pub(super) held: Option<LineRecord>,
    pub(super) body: BodyState,
    /// A form body (an OAuth token request), kept for the exchange's `reel.http` line.
    pub(super) form: Option<Arc<Vec<u8>>>,
    /// A response (the upstream's or reel's own) was recorded or is being streamed.
    pub(super) answered: bool,
    /// The client's request body broke off (it went away mid-body): why.
    pub(super) client_broke: Option<String>,
}

#[derive(Default, Clone, Copy, PartialEq, Eq)]
pub(super) enum BodyState {
    #[default]
    Pending,
    Empty,
    /// A body that is (or should be) a JSON-RPC message: a message line of its own.
    Carried,
    /// An `application/x-www-form-urlencoded` body (OAuth): not an MCP message; it goes
    /// into the exchange's `reel.http` line with its values redacted.
    Form,
}

impl Exchange {
    pub(super) fn lock(&self) -> MutexGuard<'_, ExState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn request_line(&self, mut line: LineRecord, session: Arc<str>) -> LineRecord {
        line.http = Some(Box::new(HttpNote {
            session,
            note: Note::Request(Arc::clone(&self.facts)),
        }));
        line
    }

    /// The request body is complete, or was cut off; `bytes` are its first bytes (at
    /// most `BODY_KEPT_MAX`), `total` its size.
    pub(super) fn request_done(&self, bytes: Vec<u8>, total: u64, end: BodyEnd) {
        let mut st = self.lock();
        if let BodyEnd::ClientBroke(why) = end {
            st.client_broke = Some(why);
        }
        if st.body != BodyState::Pending {
            // Recorded already.
            return;
        }
        if bytes.is_empty() {
            st.body = BodyState::Empty;
            return;
        }
        let form = self.facts.headers.iter().any(|(n, v)| {
            *n == "content-type"
                && v.to_ascii_lowercase()
                    .starts_with("application/x-www-form-urlencoded")
        });
        if form {
            st.body = BodyState::Form;
            let mut bytes = bytes;
            bytes.truncate(EXCERPT_MAX);
            st.form = Some(Arc::new(bytes));
            return;
        }
        st.body = BodyState::Carried;
        if total > bytes.len() as u64 {
            // Too long to keep: its first bytes and its size, in a `reel.http` event.
            drop(st);
            let mut bytes = bytes;
            bytes.truncate(EXCERPT_MAX);
            let mut note = self.note(None);
            note.body_total = Some(total);
            let line = self.exchange_line(self.session_or_conn(), note, bytes);
            self.sh.push(None, vec![line]);
            return;
        }
        let line = LineRecord {
            stream: Stream::ClientToServer,
            t: Timestamp::now(),
            bytes,
            eol: reel_trace::Eol::Lf,
            http: None,
        };
        match st.session.clone() {
            Some(s) => {
                drop(st);
                let line = self.request_line(line, s);
                self.sh.push(None, vec![line]);
            }
            None => st.held = Some(line),
        }
    }

    /// Settles the session (once); a request line waiting for it is queued now.
    pub(super) fn set_session(&self, s: Arc<str>) {
        let mut st = self.lock();
        if st.session.is_some() {
            return;
        }
        st.session = Some(Arc::clone(&s));
        if let Some(line) = st.held.take() {
            drop(st);
            let line = self.request_line(line, s);
            self.sh.push(None, vec![line]);
        }
    }

    pub(super) fn session(&self) -> Option<Arc<str>> {
        self.lock().session.clone()
    }

    pub(super) fn client_broke(&self) -> Option<String> {
        self.lock().client_broke.clone()
    }

    pub(super) fn session_or_conn(&self) -> Arc<str> {
        self.session().unwrap_or_else(|| Arc::clone(&self.conn_key))
    }

    /// The request carried a JSON-RPC body (or may still: it is not complete yet).
    pub(super) fn carried_body(&self) -> bool {
        matches!(self.lock().body, BodyState::Pending | BodyState::Carried)
    }

    pub(super) fn note(&self, response: Option<Arc<ResponseFacts>>) -> ExchangeNote {
        ExchangeNote {
            request: Arc::clone(&self.facts),
            response,
            error: None,
            refused: None,
            end: None,
            body_total: None,
            form: self.lock().form.clone(),
        }
    }

    pub(super) fn exchange_line(
        &self,
        session: Arc<str>,
        note: ExchangeNote,
        bytes: Vec<u8>,
    ) -> LineRecord {
        LineRecord::server_line(session, Note::Exchange(Box::new(note)), bytes)
    }
}

impl Exchange {
    pub(super) fn answered(&self) {
        self.lock().answered = true;
    }
}

impl Drop for Exchange {
    /// A request the client gave up on before any answer (it closed the connection: for
    /// a 2026-07-28 request, that is how a client cancels) still shows in the trace.
    fn drop(&mut self) {
        let (held, answered) = {
            let mut st = self.lock();
            (st.held.take(), st.answered)
        };
        let session = self.session_or_conn();
        let mut lines = Vec::new();
        if let Some(line) = held {
            lines.push(self.request_line(line, Arc::clone(&session)));
        }
        if !answered {
            let mut note = self.note(None);
            note.end = Some("client");
            lines.push(self.exchange_line(session, note, Vec::new()));
        }
        if !lines.is_empty() {
            self.sh.push(None, lines);
        }
    }
}

pub(super) fn text_response(status: StatusCode, body: String) -> Response<Reply> {
    let mut r = Response::new(Reply::full(body));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

pub(super) fn refuse(sh: &Shared, ex: &Exchange, r: Refusal) -> Response<Reply> {
    ex.answered();
    if !sh.refused_told.swap(true, Ordering::Relaxed) {
        (sh.notices)(Notice::Refused {
            what: format!("{} {}", r.header, r.value),
        });
    }
    let resp = text_response(
        StatusCode::FORBIDDEN,
        format!(
            "reel: refused: the {} header {:?} is not a loopback name (DNS rebinding protection; start reel with --allow-host to allow it)\n",
            r.header, r.value
        ),
    );
    let facts = Arc::new(ResponseFacts::new(
        ex.facts.req,
        403,
        capture_response(resp.headers()),
    ));
    let mut note = ex.note(Some(facts));
    note.refused = Some(r.header);
    let line = ex.exchange_line(ex.session_or_conn(), note, Vec::new());
    sh.push(None, vec![line]);
    resp
}

pub(super) fn bad_gateway(sh: &Shared, ex: &Exchange, error: &str) -> Response<Reply> {
    ex.answered();
    sh.upstream_failed(&format!("upstream {}: {error}", sh.url.url));
    let resp = text_response(
        StatusCode::BAD_GATEWAY,
        format!("reel: cannot reach the upstream {}: {error}\n", sh.url.url),
    );
    let facts = Arc::new(ResponseFacts::new(
        ex.facts.req,
        502,
        capture_response(resp.headers()),
    ));
    let mut note = ex.note(Some(facts));
    note.error = Some(error.to_owned());
    let session = ex.session_or_conn();
    ex.set_session(Arc::clone(&session));
    let line = ex.exchange_line(session, note, Vec::new());
    sh.push(None, vec![line]);
    resp
}

pub(super) fn bad_request(sh: &Shared, ex: &Exchange, error: &str) -> Response<Reply> {
    ex.answered();
    let resp = text_response(
        StatusCode::BAD_REQUEST,
        format!("reel: the request body broke off: {error}\n"),
    );
    let mut note = ex.note(None);
    note.error = Some(format!("the client's request body broke off: {error}"));
    let session = ex.session_or_conn();
    ex.set_session(Arc::clone(&session));
    sh.push(None, vec![ex.exchange_line(session, note, Vec::new())]);
    resp
}

pub(super) fn content_length(headers: &hyper::HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
}

pub(super) fn shutting_down(ex: &Exchange) -> Response<Reply> {
    ex.answered();
    let resp = text_response(
        StatusCode::SERVICE_UNAVAILABLE,
        "reel: the recording proxy is shutting down\n".to_owned(),
    );
    let mut note = ex.note(None);
    note.end = Some("shutdown");
    let session = ex.session_or_conn();
    ex.set_session(Arc::clone(&session));
    let line = ex.exchange_line(session, note, Vec::new());
    ex.sh.push(None, vec![line]);
    resp
}
