//! What the HTTP proxy tells the trace writer about a line, and the redacted JSON of
//! its facts (reel's `http` member); `lines` turns a noted line into trace lines.
//!
//! The proxy's tasks only copy facts (allowlisted header values as received, the path,
//! the status) into a [`HttpNote`]; everything that costs — redaction of header values
//! and query strings, serialising the `http` object — happens here, on the writer
//! thread, once per request or response (the result is cached in the shared facts, so
//! the hundred events of one SSE stream do not redo it).

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use reel_redact::redact::{MARKER, Redactor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// Allowlisted headers, lower-case name and value as received (unredacted).
pub(crate) type HeaderList = Vec<(&'static str, String)>;

/// What a request looked like.
#[derive(Debug)]
pub(crate) struct RequestFacts {
    /// The per-run request counter (`http.req`), from 1.
    pub req: u64,
    pub method: String,
    /// Path and query, as the client sent them.
    pub path: String,
    pub headers: HeaderList,
    /// `{"req","method","path","headers"}`, redacted; built once by the writer.
    json: OnceLock<Box<RawValue>>,
}

impl RequestFacts {
    pub fn new(req: u64, method: &str, path: String, headers: HeaderList) -> Self {
        RequestFacts {
            req,
            method: method.to_owned(),
            path,
            headers,
            json: OnceLock::new(),
        }
    }

    pub(super) fn http(&self, redactor: &Redactor) -> &RawValue {
        self.json.get_or_init(|| {
            let mut s = String::with_capacity(256);
            s.push_str("{\"req\":");
            s.push_str(&self.req.to_string());
            s.push_str(",\"method\":");
            push_str(&mut s, &self.method);
            s.push_str(",\"path\":");
            push_str(&mut s, &redact_path(redactor, &self.path));
            s.push_str(",\"headers\":");
            s.push_str(&headers_json(redactor, &self.headers));
            s.push('}');
            RawValue::from_string(s).unwrap_or_else(|_| to_raw(&Value::Null))
        })
    }
}

/// What a response looked like.
#[derive(Debug)]
pub(crate) struct ResponseFacts {
    pub req: u64,
    pub status: u16,
    pub headers: HeaderList,
    /// `"req":n,"status":s,"headers":{…}` without braces, redacted; built once.
    head: OnceLock<String>,
}

impl ResponseFacts {
    pub fn new(req: u64, status: u16, headers: HeaderList) -> Self {
        ResponseFacts {
            req,
            status,
            headers,
            head: OnceLock::new(),
        }
    }

    fn head(&self, redactor: &Redactor) -> &str {
        self.head.get_or_init(|| {
            format!(
                "\"req\":{},\"status\":{},\"headers\":{}",
                self.req,
                self.status,
                headers_json(redactor, &self.headers)
            )
        })
    }

    pub(super) fn http(&self, redactor: &Redactor, sse: Option<&SseFacts>) -> Box<RawValue> {
        let mut s = String::with_capacity(128);
        s.push('{');
        s.push_str(self.head(redactor));
        if let Some(sse) = sse {
            s.push_str(",\"sse\":");
            s.push_str(&sse.json());
        }
        s.push('}');
        RawValue::from_string(s).unwrap_or_else(|_| to_raw(&Value::Null))
    }
}

/// The SSE framing of one event.
#[derive(Debug, Default)]
pub(crate) struct SseFacts {
    pub id: Option<String>,
    pub event: Option<String>,
    pub retry: Option<u64>,
    /// The event's line ending, when not LF (so a replay can frame it the same way).
    pub eol: Option<reel_net::sse::Eol>,
    /// The event had a `data` field, possibly empty: a `reel.sse` record then has a
    /// `text` (`""` for `data:` with nothing after it), and none when it had no `data`,
    /// which a client does not dispatch.
    pub has_data: bool,
}

impl SseFacts {
    fn json(&self) -> String {
        let mut m = Map::new();
        if let Some(id) = &self.id {
            m.insert("id".into(), id.clone().into());
        }
        if let Some(e) = &self.event {
            m.insert("event".into(), e.clone().into());
        }
        if let Some(r) = self.retry {
            m.insert("retry".into(), r.into());
        }
        if let Some(eol) = self.eol {
            m.insert("eol".into(), eol.as_str().into());
        }
        Value::Object(m).to_string()
    }
}

/// A `reel.http` event: an exchange with no JSON-RPC message, or one that failed.
#[derive(Debug)]
pub(crate) struct ExchangeNote {
    pub request: Arc<RequestFacts>,
    pub response: Option<Arc<ResponseFacts>>,
    /// Why there is no (complete) response: the upstream could not be reached, broke off.
    pub error: Option<String>,
    /// The request was refused by reel itself (`"host"` or `"origin"`).
    pub refused: Option<&'static str>,
    /// How a stream ended when not by the upstream: `"client"` (the client went away)
    /// or `"shutdown"` (reel was stopped).
    pub end: Option<&'static str>,
    /// The body's full size when the line holds only its first bytes.
    pub body_total: Option<u64>,
    /// A form request body (OAuth), written as `reqForm` with its values redacted.
    pub form: Option<Arc<Vec<u8>>>,
}

/// What kind of trace line an HTTP record becomes.
#[derive(Debug)]
pub(crate) enum Note {
    /// A request body: a `dir: "in"` message (or `reel.nonjson` with `side: "in"`).
    Request(Arc<RequestFacts>),
    /// A response body or SSE event data: a `dir: "out"` message (or `reel.nonjson`).
    Response {
        facts: Arc<ResponseFacts>,
        sse: Option<SseFacts>,
    },
    /// An SSE event without a JSON value: `reel.sse`, its data (if any) in `text`.
    Sse {
        facts: Arc<ResponseFacts>,
        sse: SseFacts,
    },
    /// `reel.http`, the body excerpt (if any) as `raw` when JSON, else `text`.
    Exchange(Box<ExchangeNote>),
}

/// The HTTP side of a queued line.
#[derive(Debug)]
pub(crate) struct HttpNote {
    /// The MCP session the line belongs to (see `http.rs` for the rule).
    pub session: Arc<str>,
    pub note: Note,
}

/// Allowlisted headers as the text of a JSON object, values redacted: the object goes
/// through the JSON redactor, so a secret-named header (`authorization`) loses its whole
/// value and the others lose what the value rules find (a bearer token in
/// `www-authenticate`). A repeated header is one member, its values joined with `, `
/// (as HTTP allows).
fn headers_json(redactor: &Redactor, headers: &HeaderList) -> String {
    let mut s = String::with_capacity(64 * headers.len() + 2);
    s.push('{');
    let mut done: Vec<&str> = Vec::with_capacity(headers.len());
    for (i, (name, _)) in headers.iter().enumerate() {
        if done.contains(name) {
            continue;
        }
        done.push(name);
        if i > 0 {
            s.push(',');
        }
        push_str(&mut s, name);
        s.push(':');
        let values: Vec<Cow<'_, str>> = headers
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| match *name {
                // A URL: its query may carry a token or an OAuth code (a redirect
                // from an authorization endpoint), as a request path may.
                "location" => Cow::Owned(redact_path(redactor, v)),
                _ => Cow::Borrowed(v.as_str()),
            })
            .collect();
        push_str(&mut s, &values.join(", "));
    }
    s.push('}');
    match redactor.redact_json(&s) {
        Cow::Borrowed(_) => s,
        Cow::Owned(r) => r,
    }
}

/// Allowlisted headers as a JSON value (for events, which are built as values).
pub(super) fn headers_value(redactor: &Redactor, headers: &HeaderList) -> Value {
    serde_json::from_str(&headers_json(redactor, headers)).unwrap_or(Value::Null)
}

/// Appends `v` as a JSON string.
fn push_str(s: &mut String, v: &str) {
    // Serialising a &str cannot fail.
    s.push_str(&serde_json::to_string(v).unwrap_or_default());
}

/// A path or URL for the trace: free-text rules over the whole, and the value of each
/// query parameter whose name is a secret name (`?api_key=…`, `?token=…`) replaced by
/// the marker.
pub(crate) fn redact_path(redactor: &Redactor, path: &str) -> String {
    let text = redactor.redact_text(path);
    let Some((base, query)) = text.split_once('?') else {
        return text.into_owned();
    };
    let mut out = String::with_capacity(text.len());
    out.push_str(base);
    out.push('?');
    for (i, pair) in query.split('&').enumerate() {
        if i > 0 {
            out.push('&');
        }
        match pair.split_once('=') {
            Some((k, v)) if !v.is_empty() && is_secret_query_name(redactor, k) => {
                out.push_str(k);
                out.push('=');
                out.push_str(MARKER);
            }
            _ => out.push_str(pair),
        }
    }
    out
}

/// Form fields (OAuth) whose values the trace keeps; every other value is replaced by
/// the marker when redaction is on (codes, verifiers, secrets, assertions, tokens).
pub const FORM_KEPT: [&str; 7] = [
    "grant_type",
    "client_id",
    "redirect_uri",
    "scope",
    "resource",
    "response_type",
    "token_type_hint",
];

/// An `application/x-www-form-urlencoded` body for the trace: only [`FORM_KEPT`] values
/// stay (then redacted as free text), the others become the marker; with redaction off,
/// the body as it was.
pub(super) fn redact_form(redactor: &Redactor, form: &str) -> String {
    if !redactor.is_active() {
        return form.to_owned();
    }
    form.split('&')
        .map(|pair| match pair.split_once('=') {
            Some((k, v)) if FORM_KEPT.contains(&k) => {
                format!("{k}={}", redactor.redact_text(v))
            }
            Some((k, _)) => format!("{k}={MARKER}"),
            None => redactor.redact_text(pair).into_owned(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// Whether a URL's query parameter `name` holds a secret: a secret member name, or an
/// OAuth authorization `code` (a redirect's `?code=…&state=…`; the form of the token
/// request that spends it is redacted the same way, see [`redact_form`]).
fn is_secret_query_name(redactor: &Redactor, name: &str) -> bool {
    (redactor.is_active() && name == "code") || is_secret_name(redactor, name)
}

/// Whether the redactor's key rules treat `name` as a secret member name.
fn is_secret_name(redactor: &Redactor, name: &str) -> bool {
    let probe = serde_json::json!({ name: "x" }).to_string();
    matches!(redactor.redact_json(&probe), Cow::Owned(_))
}

pub(super) fn to_raw(v: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(v)
        .unwrap_or_else(|_| RawValue::from_string("null".to_owned()).expect("null is JSON"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_query_values_and_headers_are_redacted_others_kept() {
        let r = Redactor::builtin();
        assert_eq!(
            redact_path(&r, "/message?sessionId=abc&api_key=s3cr3t&token=t"),
            "/message?sessionId=abc&api_key=[REDACTED]&token=[REDACTED]"
        );
        assert_eq!(redact_path(&r, "/mcp"), "/mcp");
        let v = headers_value(
            &r,
            &vec![(
                "location",
                "http://localhost:9/cb?code=c0de&state=s&access_token=t".to_owned(),
            )],
        );
        assert_eq!(
            v["location"],
            "http://localhost:9/cb?code=[REDACTED]&state=s&access_token=[REDACTED]"
        );
        let v = headers_value(
            &r,
            &vec![
                ("authorization", "Basic dXNlcjpwYXNz".to_owned()),
                ("mcp-session-id", "abc".to_owned()),
            ],
        );
        assert_eq!(v["authorization"], "[REDACTED]");
        assert_eq!(v["mcp-session-id"], "abc");
        assert_eq!(
            redact_form(
                &r,
                "grant_type=authorization_code&code=abc&code_verifier=v&client_id=c"
            ),
            "grant_type=authorization_code&code=[REDACTED]&code_verifier=[REDACTED]&client_id=c"
        );
        let off = headers_value(
            &Redactor::disabled(),
            &vec![("authorization", "Basic x".to_owned())],
        );
        assert_eq!(off["authorization"], "Basic x");
    }
}
