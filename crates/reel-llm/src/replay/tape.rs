//! A recorded llm trace read and indexed for serving: each exchange's request as
//! replay matches it, and its answer (status, allowlisted headers, body pieces with
//! their timing, how it ended).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use hyper::body::Bytes;
use serde::Deserialize;
use serde_json::Value;

use reel_redact::redact::Redactor;
use reel_trace::TraceReader;
use reel_trace::line::Line;
use reel_trace::llm::canonical_path;

use super::error::PlayError;
use crate::api::{Endpoint, Provider};
use crate::history::{Kept, rebuild};
use crate::request::conversation_member;
use crate::tape::{BODY, kinds};

/// One recorded exchange.
#[derive(Debug)]
pub(super) struct Recorded {
    pub(super) n: u64,
    /// `path:line` of its `llm.request`/`llm.exchange`.
    pub(super) place: String,
    pub(super) endpoint: String,
    pub(super) method: String,
    pub(super) provider: Provider,
    pub(super) status: u16,
    pub(super) headers: Vec<(String, String)>,
    pub(super) request_sha256: Option<String>,
    pub(super) system: Option<Value>,
    pub(super) body: Option<Value>,
    pub(super) elided: Option<(usize, String)>,
    /// For a request that elided history: its matchable body with the whole
    /// conversation rebuilt from the tape ([`crate::history::rebuild`]).
    pub(super) full: Option<Value>,
    /// The conversation its turns carry (0: not known).
    pub(super) conversation: u64,
    /// The request's query, redacted as recorded.
    pub(super) query: Option<String>,
    /// The body as it arrived: microseconds after the head, bytes (shared, not copied,
    /// when served).
    pub(super) pieces: Vec<(u64, Bytes)>,
    pub(super) decoded: bool,
    /// The recorded response was severed (`upstream_disconnect`, `idle_timeout`).
    pub(super) severed: bool,
    /// Recorded as unreachable: an `llm.error` without a response.
    pub(super) unreachable: Option<String>,
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
    pub(super) exchanges: Vec<Recorded>,
    pub(super) redactor: Redactor,
    pub(super) path: PathBuf,
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
        let mut index = Index::default();
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
            if let Ok(l) = serde_json::from_slice::<LlmLine>(bytes) {
                index.line(place, l);
            }
        }
        let mut exchanges = index.exchanges;
        servable(path, kind.as_deref(), &exchanges)?;
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

/// The exchanges of a trace as its lines are read, by their request number.
#[derive(Default)]
struct Index {
    by_n: HashMap<u64, usize>,
    exchanges: Vec<Recorded>,
}

impl Index {
    /// Takes in one line of the trace (`place`: its `path:line`).
    fn line(&mut self, place: String, l: LlmLine) {
        let n = l.http.as_ref().and_then(|h| h.req).unwrap_or(0);
        if l.ty.as_deref() == Some("turn") {
            if let (Some(c), Some(&i)) = (l.conversation, self.by_n.get(&n)) {
                self.exchanges[i].conversation = c;
            }
            return;
        }
        let Some(k) = l.kind.as_deref() else { return };
        let raw = l.raw.clone().unwrap_or(Value::Null);
        match k {
            kinds::REQUEST | kinds::EXCHANGE => {
                let request = l.request.unwrap_or(Value::Null);
                self.answered(n, place, &raw, &request);
            }
            BODY => self.body_piece(n, &l),
            kinds::TRUNCATED => {
                if let Some(&i) = self.by_n.get(&n) {
                    let reason = s(&raw, "reason");
                    self.exchanges[i].severed =
                        reason == "upstream_disconnect" || reason == "idle_timeout";
                }
            }
            kinds::ERROR if !self.by_n.contains_key(&n) => {
                // Traces of older reels named an unversioned path as sent.
                let endpoint = canonical_path(&s(&raw, "endpoint")).into_owned();
                let (_, provider) = Endpoint::of(&endpoint, false);
                let request = l.request.unwrap_or(Value::Null);
                self.push(
                    n,
                    Recorded {
                        status: 502,
                        unreachable: Some(s(&raw, "error")),
                        ..Recorded::new(n, place, endpoint, provider, &raw, &request)
                    },
                );
            }
            _ => {}
        }
    }

    fn push(&mut self, n: u64, e: Recorded) {
        self.by_n.insert(n, self.exchanges.len());
        self.exchanges.push(e);
    }

    /// An `llm.request` or `llm.exchange`: an exchange the upstream answered, with its
    /// status and allowlisted response headers.
    fn answered(&mut self, n: u64, place: String, raw: &Value, request: &Value) {
        let req_headers = raw.get("headers");
        // Traces of older reels named an unversioned path as sent.
        let endpoint = canonical_path(&s(raw, "endpoint")).into_owned();
        let anthropic = req_headers.is_some_and(|h| h.get("anthropic-version").is_some());
        let (_, provider) = Endpoint::of(&endpoint, anthropic);
        let mut headers: Vec<(String, String)> = raw
            .get("response_headers")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
            .collect();
        headers.retain(|(k, _)| k != "content-length");
        self.push(
            n,
            Recorded {
                status: raw.get("status").and_then(Value::as_u64).unwrap_or(200) as u16,
                headers,
                request_sha256: raw
                    .get("request_sha256")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                system: raw.get("system").cloned(),
                ..Recorded::new(n, place, endpoint, provider, raw, request)
            },
        );
    }

    /// A `reel.llm.body` piece of exchange `n`'s response.
    fn body_piece(&mut self, n: u64, l: &LlmLine) {
        let Some(&i) = self.by_n.get(&n) else { return };
        let piece = match (&l.text, &l.bytes) {
            (Some(t), _) => t.clone().into_bytes(),
            (None, Some(b)) => base64::engine::general_purpose::STANDARD
                .decode(b)
                .unwrap_or_default(),
            _ => return,
        };
        let ex = &mut self.exchanges[i];
        ex.decoded |= l.decoded.is_some();
        ex.pieces.push((l.us.unwrap_or(0), Bytes::from(piece)));
    }
}

/// Whether a trace of `kind` with `exchanges` can be served: an llm trace with
/// recorded exchanges, and response bodies for those that were answered.
fn servable(path: &Path, kind: Option<&str>, exchanges: &[Recorded]) -> Result<(), PlayError> {
    let not_llm = |reason: &str| PlayError::NotLlm {
        path: path.display().to_string(),
        reason: reason.to_owned(),
    };
    if kind != Some("llm") {
        return Err(not_llm(
            "not an llm trace (meta.kind is not \"llm\"); serve MCP traces with `reel play`",
        ));
    }
    if exchanges.is_empty() {
        return Err(not_llm(
            "it holds no recorded exchange (llm.request or llm.exchange events \
             of `reel llm`)",
        ));
    }
    let mut answered = exchanges
        .iter()
        .filter(|e| e.unreachable.is_none())
        .peekable();
    if answered.peek().is_some() && answered.all(|e| e.pieces.is_empty()) {
        return Err(not_llm(
            "its exchanges have no recorded response bodies (reel.llm.body events): \
             only a trace recorded by `reel llm` can be served",
        ));
    }
    Ok(())
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

/// A tape of `lines` (the trace's lines after its meta line), unredacted, as
/// [`LlmTape::open`] indexes them: for the matcher's tests.
#[cfg(test)]
pub(super) fn of_lines(lines: &[Value]) -> LlmTape {
    let mut index = Index::default();
    for (i, v) in lines.iter().enumerate() {
        if let Ok(l) = serde_json::from_value::<LlmLine>(v.clone()) {
            index.line(format!("t.jsonl:{}", i + 2), l);
        }
    }
    let mut exchanges = index.exchanges;
    rebuild_conversations(&mut exchanges);
    LlmTape {
        exchanges,
        redactor: Redactor::disabled(),
        path: PathBuf::from("t.jsonl"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// An index of `lines` (trace lines after the meta line), each placed at its line.
    fn index(lines: &[Value]) -> Index {
        let mut index = Index::default();
        for (i, v) in lines.iter().enumerate() {
            let l: LlmLine = serde_json::from_value(v.clone()).unwrap();
            index.line(format!("t.jsonl:{}", i + 2), l);
        }
        index
    }

    fn request(n: u64, extra: Value) -> Value {
        let mut raw = json!({
            "endpoint": "/v1/messages", "url": "https://api.anthropic.com/v1/messages",
            "method": "POST", "status": 200, "request_sha256": "abc",
            "headers": {"anthropic-version": "2023-06-01"},
            "response_headers": {"content-type": "text/event-stream", "content-length": "12", "request-id": "req_1"},
        });
        if let (Some(o), Value::Object(e)) = (raw.as_object_mut(), extra) {
            o.extend(e);
        }
        json!({"type": "event", "kind": "llm.request", "http": {"req": n}, "raw": raw,
               "request": {"body": {"model": "m"}, "query": "beta=true",
                           "elided": {"count": 2, "sha256": "h2"}}})
    }

    #[test]
    fn an_answered_exchange_keeps_its_status_headers_but_length_and_request_facts() {
        let i = index(&[request(1, json!({"status": 429, "system": "s"}))]);
        let e = &i.exchanges[0];
        assert_eq!((e.n, e.place.as_str()), (1, "t.jsonl:2"));
        assert_eq!(
            (e.method.as_str(), e.endpoint.as_str()),
            ("POST", "/v1/messages")
        );
        assert_eq!(e.provider, Provider::Anthropic);
        assert_eq!(e.status, 429);
        assert_eq!(
            e.headers,
            [
                ("content-type".to_owned(), "text/event-stream".to_owned()),
                ("request-id".to_owned(), "req_1".to_owned())
            ]
        );
        assert_eq!(e.request_sha256.as_deref(), Some("abc"));
        assert_eq!(e.system, Some(json!("s")));
        assert_eq!(e.body, Some(json!({"model": "m"})));
        assert_eq!(e.query.as_deref(), Some("beta=true"));
        assert_eq!(e.elided, Some((2, "h2".to_owned())));
        assert!(e.unreachable.is_none() && !e.severed && e.pieces.is_empty());
    }

    #[test]
    fn body_pieces_turns_and_truncation_join_the_exchange_of_their_request() {
        let i = index(&[
            request(1, json!({})),
            json!({"type": "event", "kind": "reel.llm.body", "http": {"req": 1}, "us": 5, "text": "data: a\n\n"}),
            json!({"type": "event", "kind": "reel.llm.body", "http": {"req": 1}, "us": 9,
                   "bytes": "AAEC", "decoded": "gzip"}),
            json!({"type": "event", "kind": "reel.llm.body", "http": {"req": 7}, "text": "stray"}),
            json!({"type": "turn", "http": {"req": 1}, "conversation": 4}),
            json!({"type": "event", "kind": "llm.truncated", "http": {"req": 1},
                   "raw": {"reason": "idle_timeout"}}),
        ]);
        assert_eq!(
            i.exchanges.len(),
            1,
            "a piece of no known request is dropped"
        );
        let e = &i.exchanges[0];
        let pieces: Vec<(u64, &[u8])> = e.pieces.iter().map(|(us, b)| (*us, &b[..])).collect();
        assert_eq!(pieces, [(5, &b"data: a\n\n"[..]), (9, &[0u8, 1, 2][..])]);
        assert!(e.decoded);
        assert_eq!(e.conversation, 4);
        assert!(e.severed);
    }

    #[test]
    fn a_response_cut_by_its_client_is_not_severed_again() {
        let i = index(&[
            request(1, json!({})),
            json!({"type": "event", "kind": "llm.truncated", "http": {"req": 1},
                   "raw": {"reason": "client_abort"}}),
        ]);
        assert!(!i.exchanges[0].severed);
    }

    #[test]
    fn an_unreachable_upstream_is_an_exchange_answered_502_again() {
        let i = index(&[
            json!({"type": "event", "kind": "llm.error", "http": {"req": 3},
                   "raw": {"endpoint": "/chat/completions", "method": "POST", "error": "connection refused"}}),
            request(4, json!({})),
            // An error after a request is its response's, not an exchange of its own.
            json!({"type": "event", "kind": "llm.error", "http": {"req": 4},
                   "raw": {"endpoint": "/v1/messages", "status": 500}}),
        ]);
        assert_eq!(i.exchanges.len(), 2);
        let e = &i.exchanges[0];
        assert_eq!(e.status, 502);
        assert_eq!(e.unreachable.as_deref(), Some("connection refused"));
        // Older traces named the path without its version.
        assert_eq!(e.endpoint, "/v1/chat/completions");
        assert_eq!(e.provider, Provider::OpenAi);
        assert_eq!(i.exchanges[1].status, 200);
    }

    #[test]
    fn only_an_llm_trace_with_recorded_answers_is_servable() {
        let path = Path::new("t.jsonl");
        let why = |r: Result<(), PlayError>| match r {
            Err(PlayError::NotLlm { reason, .. }) => reason,
            other => panic!("not refused: {other:?}"),
        };
        let answered = index(&[
            request(1, json!({})),
            json!({"type": "event", "kind": "reel.llm.body", "http": {"req": 1}, "text": "x"}),
        ]);
        assert!(servable(path, Some("llm"), &answered.exchanges).is_ok());
        assert!(why(servable(path, Some("mcp"), &answered.exchanges)).contains("reel play"));
        assert!(why(servable(path, Some("llm"), &[])).contains("no recorded exchange"));
        let bodiless = index(&[request(1, json!({}))]);
        assert!(
            why(servable(path, Some("llm"), &bodiless.exchanges))
                .contains("no recorded response bodies")
        );
        let unreachable = index(&[
            json!({"type": "event", "kind": "llm.error", "http": {"req": 1},
                                         "raw": {"endpoint": "/v1/messages", "error": "down"}}),
        ]);
        assert!(servable(path, Some("llm"), &unreachable.exchanges).is_ok());
    }
}
