//! The JSON-RPC 2.0 envelope of message lines: what a `raw` payload is (request,
//! notification, response, error, batch), its id, and pairing of requests with
//! responses — by id, and over HTTP by the HTTP request that carried them where a
//! refusal has no id ([`HttpCarried`]).
//!
//! Pairing keys on (session, direction of the request, id). Ids collide across
//! directions (a client's request 1 and a server's request 1 are different calls) and
//! across sessions, and a string id `"1"` is not the number `1`: the id is kept as its
//! JSON text, so the two never meet. Numbers are compared by value (`1` and `1.0` are the
//! same id), strings by their decoded text.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::Hash;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::line::Dir;

/// What a JSON-RPC payload is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RpcKind {
    /// `method` and `id`.
    Request,
    /// `method`, no `id`.
    Notification,
    /// `result` and `id`.
    Response,
    /// `error` (with an `id`, possibly null).
    Error,
    /// A JSON array of messages.
    Batch,
    /// Anything else: not an object, or an object that is none of the above.
    Invalid,
}

/// A JSON-RPC id, normalised so that equal ids compare equal and a string never equals
/// a number.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RpcId {
    /// A numeric id, in canonical text (`1.0` → `1`).
    Number(String),
    /// A string id, decoded.
    String(String),
    /// `null` (allowed on error responses to unparseable requests).
    Null,
}

impl RpcId {
    /// Reads an id from its JSON text; `None` for objects, arrays and booleans.
    pub fn from_raw(raw: &RawValue) -> Option<RpcId> {
        let text = raw.get().trim();
        match text.as_bytes().first()? {
            b'"' => serde_json::from_str::<String>(text).ok().map(RpcId::String),
            b'n' if text == "null" => Some(RpcId::Null),
            b'-' | b'0'..=b'9' => Some(RpcId::Number(canonical_number(text))),
            _ => None,
        }
    }

    /// The id as JSON text (for messages and for answers carrying it).
    pub fn to_json(&self) -> String {
        match self {
            RpcId::Number(n) => n.clone(),
            RpcId::String(s) => serde_json::to_string(s).unwrap_or_default(),
            RpcId::Null => "null".to_owned(),
        }
    }
}

impl std::fmt::Display for RpcId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_json())
    }
}

fn canonical_number(text: &str) -> String {
    // Integers keep their digits (ids beyond 2^53 must not collapse); anything with a
    // fraction or exponent is compared as the f64 it denotes.
    if text.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        let neg = text.starts_with('-');
        let digits = text.trim_start_matches('-').trim_start_matches('0');
        let digits = if digits.is_empty() { "0" } else { digits };
        return if neg && digits != "0" {
            format!("-{digits}")
        } else {
            digits.to_owned()
        };
    }
    match text.parse::<f64>() {
        Ok(f) if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 => format!("{}", f as i64),
        Ok(f) => format!("{f}"),
        Err(_) => text.to_owned(),
    }
}

/// The members of a JSON-RPC message, borrowed from `raw`.
#[derive(Debug, Default, Deserialize)]
pub struct Envelope<'a> {
    /// `jsonrpc`, should be `"2.0"`.
    #[serde(borrow, default)]
    pub jsonrpc: Option<&'a RawValue>,
    /// `id`, present (possibly `null`) or absent.
    #[serde(borrow, default, deserialize_with = "present")]
    pub id: Option<&'a RawValue>,
    /// `method`.
    #[serde(borrow, default, deserialize_with = "str_or_none")]
    pub method: Option<Cow<'a, str>>,
    /// `params`.
    #[serde(borrow, default, deserialize_with = "present")]
    pub params: Option<&'a RawValue>,
    /// `result`.
    #[serde(borrow, default, deserialize_with = "present")]
    pub result: Option<&'a RawValue>,
    /// `error`.
    #[serde(borrow, default, deserialize_with = "present")]
    pub error: Option<&'a RawValue>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

fn str_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Cow<'de, str>>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum S<'a> {
        Str(#[serde(borrow)] Cow<'a, str>),
        Other(serde::de::IgnoredAny),
    }
    Ok(match S::deserialize(d)? {
        S::Str(s) => Some(s),
        S::Other(_) => None,
    })
}

impl<'a> Envelope<'a> {
    /// Parses `raw`. An array gives `Ok` with [`RpcKind::Batch`] from [`Envelope::kind_of`];
    /// use [`Envelope::parse`] for objects.
    pub fn parse(raw: &'a str) -> Option<Envelope<'a>> {
        if !raw.trim_start().starts_with('{') {
            return None;
        }
        serde_json::from_str(raw).ok()
    }

    /// Classifies a payload given as text.
    pub fn kind_of(raw: &str) -> RpcKind {
        if raw.trim_start().starts_with('[') {
            return RpcKind::Batch;
        }
        Envelope::parse(raw).map_or(RpcKind::Invalid, |e| e.kind())
    }

    /// Classifies the envelope.
    pub fn kind(&self) -> RpcKind {
        EnvelopeShape {
            method: self.method.is_some(),
            id: self.id.map(IdShape::of),
            result: self.result.is_some(),
            error: self.error.is_some(),
        }
        .kind()
    }

    /// True when `jsonrpc` is exactly `"2.0"`.
    pub fn is_v2(&self) -> bool {
        self.jsonrpc.is_some_and(|v| v.get().trim() == "\"2.0\"")
    }

    /// The id, normalised.
    pub fn rpc_id(&self) -> Option<RpcId> {
        self.id.and_then(RpcId::from_raw)
    }

    /// `error.code` and `error.message`, when the error is an object.
    pub fn error_parts(&self) -> Option<(Option<i64>, Option<String>)> {
        #[derive(Deserialize)]
        struct E {
            code: Option<serde_json::Value>,
            message: Option<serde_json::Value>,
        }
        let e: E = serde_json::from_str(self.error?.get()).ok()?;
        Some((
            e.code.and_then(|c| c.as_i64()),
            e.message.and_then(|m| m.as_str().map(str::to_owned)),
        ))
    }
}

/// Which of the members that decide an envelope's kind an object has: the one verdict
/// for a parsed [`Envelope`] and for the readers that note the members as they pass
/// them (the recorder's redaction walk, replay's message scan).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EnvelopeShape {
    /// `method` is present and a string (any other `method` counts as none, as for
    /// [`Envelope::method`]).
    pub method: bool,
    /// `id`, when present.
    pub id: Option<IdShape>,
    /// `result` is present.
    pub result: bool,
    /// `error` is present.
    pub error: bool,
}

/// An `id` as far as the kind of its envelope cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdShape {
    /// `null`.
    Null,
    /// Anything else.
    Given,
}

impl IdShape {
    /// The shape of an id given as its JSON text.
    pub fn of(id: &RawValue) -> IdShape {
        if is_null(id) {
            IdShape::Null
        } else {
            IdShape::Given
        }
    }
}

impl EnvelopeShape {
    /// The kind of an object with these members.
    pub fn kind(self) -> RpcKind {
        match (self.method, self.id, self.result, self.error) {
            (true, Some(IdShape::Given), false, false) => RpcKind::Request,
            (true, None, false, false) => RpcKind::Notification,
            (false, Some(_), true, false) => RpcKind::Response,
            (false, Some(_), false, true) => RpcKind::Error,
            _ => RpcKind::Invalid,
        }
    }
}

fn is_null(v: &RawValue) -> bool {
    v.get().trim() == "null"
}

/// What pairs a response with its request: the session, the direction the *request*
/// travelled, and the id.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PairKey {
    /// The MCP session (`None` on single-session traces).
    pub session: Option<String>,
    /// Direction of the request (`In` for client requests, `Out` for server requests).
    pub request_dir: Dir,
    /// The id.
    pub id: RpcId,
}

impl PairKey {
    /// The key under which a response travelling in `response_dir` finds its request.
    pub fn for_response(session: Option<&str>, response_dir: Dir, id: RpcId) -> PairKey {
        let request_dir = match response_dir {
            Dir::In => Dir::Out,
            _ => Dir::In,
        };
        PairKey {
            session: session.map(str::to_owned),
            request_dir,
            id,
        }
    }
}

/// What happened when a message was offered to a [`Pairer`].
#[derive(Debug)]
pub enum Paired<T> {
    /// A request was registered and now waits for its response.
    Opened,
    /// A request reused the id of one still pending; the earlier one is returned and
    /// replaced.
    DuplicatePending(T),
    /// A response found its request.
    Closed(T),
    /// A response whose request was never seen (or already answered).
    Orphan,
    /// Not a request or a response (notifications, invalid payloads, batches).
    Ignored,
}

/// True for a response or an error whose id is absent or `null`: an answer JSON-RPC
/// cannot pair (see [`HttpCarried`] for the pairing HTTP gives it).
pub fn is_id_less_answer(kind: RpcKind, id: Option<&RawValue>) -> bool {
    matches!(kind, RpcKind::Response | RpcKind::Error) && id.is_none_or(is_null)
}

/// The client requests open per HTTP request (`http.req` of reel's HTTP traces): the
/// pairing guide where JSON-RPC ids give none.
///
/// The rule, applied by every reader that pairs (play, verify, check, stats): a server
/// message that is a response or an error without an id (absent or `null`) and came on
/// the response to HTTP request `req` answers the client request that HTTP request
/// carried, while that request is open. Servers refuse a request at the HTTP level that
/// way: one older than 2026-07-28 answers the `server/discover` probe every 2026-07-28
/// client sends first with HTTP 400 and `"id": null`, and by ids alone the refusal would
/// answer nothing and the probe would stay unanswered.
///
/// `K` names a request the caller's way (an exchange index, a [`PairKey`]). Request
/// number 0 means "not recorded" and is never remembered.
#[derive(Debug)]
pub struct HttpCarried<K> {
    open: HashMap<u64, K>,
}

impl<K> Default for HttpCarried<K> {
    fn default() -> Self {
        HttpCarried {
            open: HashMap::new(),
        }
    }
}

impl<K: PartialEq> HttpCarried<K> {
    /// Nothing open.
    pub fn new() -> Self {
        Self::default()
    }

    /// Client request `request` came on HTTP request `req`.
    pub fn carried(&mut self, req: u64, request: K) {
        if req != 0 {
            self.open.insert(req, request);
        }
    }

    /// The open request HTTP request `req` carried.
    pub fn get(&self, req: u64) -> Option<&K> {
        self.open.get(&req)
    }

    /// Takes the open request HTTP request `req` carried (its HTTP exchange ended it).
    pub fn take(&mut self, req: u64) -> Option<K> {
        self.open.remove(&req)
    }

    /// `request`, carried by HTTP request `req`, was answered by its id.
    pub fn answered(&mut self, req: u64, request: &K) {
        if self.open.get(&req) == Some(request) {
            self.open.remove(&req);
        }
    }

    /// `request` was answered by its id (its HTTP request unknown here).
    pub fn forget(&mut self, request: &K) {
        self.open.retain(|_, k| k != request);
    }

    /// The request a message answers by the rule above, taken: `Some` only for an
    /// id-less response or error travelling server to client on HTTP request `req`
    /// while the request that HTTP request carried is open.
    pub fn id_less_answer(
        &mut self,
        dir: Dir,
        kind: RpcKind,
        id: Option<&RawValue>,
        req: u64,
    ) -> Option<K> {
        if dir != Dir::Out || req == 0 || !is_id_less_answer(kind, id) {
            return None;
        }
        self.take(req)
    }

    /// Forgets everything (a new trace session).
    pub fn clear(&mut self) {
        self.open.clear();
    }

    /// Nothing is open (always so for a stdio trace).
    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }
}

/// Pairs requests with responses per [`PairKey`], carrying a caller value `T` from the
/// request to its response (a line number, a timestamp, a tool name…). Given the HTTP
/// request that carried each message ([`Pairer::offer_via`]), it also pairs an id-less
/// refusal with its request ([`HttpCarried`]).
#[derive(Debug)]
pub struct Pairer<T> {
    pending: HashMap<PairKey, (T, u64)>,
    carried: HttpCarried<PairKey>,
}

impl<T> Default for Pairer<T> {
    fn default() -> Self {
        Pairer {
            pending: HashMap::new(),
            carried: HttpCarried::default(),
        }
    }
}

impl<T> Pairer<T> {
    /// An empty pairer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Offers a message. `info` is called only for requests, to build the value kept.
    pub fn offer(
        &mut self,
        session: Option<&str>,
        dir: Dir,
        env: &Envelope<'_>,
        info: impl FnOnce() -> T,
    ) -> Paired<T> {
        self.offer_via(session, dir, env, 0, info)
    }

    /// Offers a message that came on HTTP request `req` (`http.req`; 0 when none is
    /// recorded): as [`Pairer::offer`], and an id-less answer closes the client request
    /// that HTTP request carried.
    pub fn offer_via(
        &mut self,
        session: Option<&str>,
        dir: Dir,
        env: &Envelope<'_>,
        req: u64,
        info: impl FnOnce() -> T,
    ) -> Paired<T> {
        let kind = env.kind();
        if let Some(key) = self.carried.id_less_answer(dir, kind, env.id, req) {
            if let Some((v, _)) = self.pending.remove(&key) {
                return Paired::Closed(v);
            }
        }
        match kind {
            RpcKind::Request => {
                let Some(id) = env.rpc_id() else {
                    return Paired::Ignored;
                };
                let key = PairKey {
                    session: session.map(str::to_owned),
                    request_dir: dir,
                    id,
                };
                if dir == Dir::In && req != 0 {
                    self.carried.carried(req, key.clone());
                }
                match self.pending.insert(key, (info(), req)) {
                    Some((old, _)) => Paired::DuplicatePending(old),
                    None => Paired::Opened,
                }
            }
            RpcKind::Response | RpcKind::Error => {
                let Some(id) = env.rpc_id() else {
                    return Paired::Orphan;
                };
                let key = PairKey::for_response(session, dir, id);
                match self.pending.remove(&key) {
                    Some((v, carried_by)) => {
                        self.carried.answered(carried_by, &key);
                        Paired::Closed(v)
                    }
                    None => Paired::Orphan,
                }
            }
            _ => Paired::Ignored,
        }
    }

    /// Requests still waiting, in no particular order.
    pub fn pending(&self) -> impl Iterator<Item = (&PairKey, &T)> {
        self.pending.iter().map(|(k, (v, _))| (k, v))
    }

    /// Takes the requests still waiting.
    pub fn drain_pending(&mut self) -> Vec<(PairKey, T)> {
        self.carried.clear();
        self.pending.drain().map(|(k, (v, _))| (k, v)).collect()
    }

    /// How many requests are waiting.
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(s: &str) -> Envelope<'_> {
        Envelope::parse(s).unwrap()
    }

    #[test]
    fn kinds() {
        assert_eq!(
            Envelope::kind_of(r#"{"jsonrpc":"2.0","id":1,"method":"a"}"#),
            RpcKind::Request
        );
        assert_eq!(
            Envelope::kind_of(r#"{"jsonrpc":"2.0","method":"a"}"#),
            RpcKind::Notification
        );
        assert_eq!(
            Envelope::kind_of(r#"{"jsonrpc":"2.0","id":1,"result":null}"#),
            RpcKind::Response
        );
        assert_eq!(
            Envelope::kind_of(
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#
            ),
            RpcKind::Error
        );
        assert_eq!(
            Envelope::kind_of(r#"[{"jsonrpc":"2.0","method":"a"}]"#),
            RpcKind::Batch
        );
        assert_eq!(
            Envelope::kind_of(r#"{"jsonrpc":"2.0","id":1}"#),
            RpcKind::Invalid
        );
        assert_eq!(Envelope::kind_of("42"), RpcKind::Invalid);
    }

    #[test]
    fn string_one_is_not_number_one() {
        let a = env(r#"{"id":"1","method":"m"}"#).rpc_id().unwrap();
        let b = env(r#"{"id":1,"method":"m"}"#).rpc_id().unwrap();
        let c = env(r#"{"id":1.0,"method":"m"}"#).rpc_id().unwrap();
        assert_ne!(a, b);
        assert_eq!(b, c);
        let big = env(r#"{"id":99999999999999999999,"method":"m"}"#)
            .rpc_id()
            .unwrap();
        assert_eq!(big.to_json(), "99999999999999999999");
    }

    #[test]
    fn an_id_less_refusal_answers_the_request_its_http_request_carried() {
        let mut p: Pairer<u32> = Pairer::new();
        let probe = env(r#"{"jsonrpc":"2.0","id":1,"method":"server/discover"}"#);
        let refusal =
            env(r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request"},"id":null}"#);
        assert!(matches!(
            p.offer_via(Some("c1"), Dir::In, &probe, 1, || 10),
            Paired::Opened
        ));
        // Not on another HTTP request, and not without one.
        assert!(matches!(
            p.offer_via(Some("c1"), Dir::Out, &refusal, 2, || 0),
            Paired::Orphan
        ));
        assert!(matches!(
            p.offer(Some("c1"), Dir::Out, &refusal, || 0),
            Paired::Orphan
        ));
        assert!(matches!(
            p.offer_via(Some("c1"), Dir::Out, &refusal, 1, || 0),
            Paired::Closed(10)
        ));
        assert_eq!(p.pending_len(), 0);
        // Once answered, the HTTP request answers nothing more.
        assert!(matches!(
            p.offer_via(Some("c1"), Dir::Out, &refusal, 1, || 0),
            Paired::Orphan
        ));
    }

    #[test]
    fn an_answered_request_leaves_nothing_for_a_later_id_less_error() {
        let mut c: HttpCarried<u32> = HttpCarried::new();
        let null = serde_json::from_str::<&RawValue>("null").unwrap();
        let one = serde_json::from_str::<&RawValue>("1").unwrap();
        c.carried(4, 7);
        c.carried(0, 8);
        assert_eq!(c.get(0), None);
        assert_eq!(
            c.id_less_answer(Dir::Out, RpcKind::Error, Some(one), 4),
            None
        );
        assert_eq!(
            c.id_less_answer(Dir::In, RpcKind::Error, Some(null), 4),
            None
        );
        assert_eq!(
            c.id_less_answer(Dir::Out, RpcKind::Notification, None, 4),
            None
        );
        c.answered(4, &7);
        assert_eq!(
            c.id_less_answer(Dir::Out, RpcKind::Error, Some(null), 4),
            None
        );
        c.carried(5, 9);
        assert_eq!(c.id_less_answer(Dir::Out, RpcKind::Error, None, 5), Some(9));
        assert!(is_id_less_answer(RpcKind::Response, Some(null)));
        assert!(!is_id_less_answer(RpcKind::Request, None));
    }

    #[test]
    fn pairs_per_direction_and_session() {
        let mut p: Pairer<u32> = Pairer::new();
        let req = env(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#);
        let sreq = env(r#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage"}"#);
        let resp = env(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        assert!(matches!(
            p.offer(None, Dir::In, &req, || 10),
            Paired::Opened
        ));
        assert!(matches!(
            p.offer(None, Dir::Out, &sreq, || 20),
            Paired::Opened
        ));
        assert!(matches!(
            p.offer(Some("s2"), Dir::In, &req, || 30),
            Paired::Opened
        ));
        // The client's answer (dir in) closes the server's request.
        assert!(matches!(
            p.offer(None, Dir::In, &resp, || 0),
            Paired::Closed(20)
        ));
        assert!(matches!(
            p.offer(None, Dir::Out, &resp, || 0),
            Paired::Closed(10)
        ));
        assert!(matches!(
            p.offer(None, Dir::Out, &resp, || 0),
            Paired::Orphan
        ));
        assert_eq!(p.pending_len(), 1);
        assert!(matches!(
            p.offer(Some("s2"), Dir::In, &req, || 40),
            Paired::DuplicatePending(30)
        ));
    }
}
