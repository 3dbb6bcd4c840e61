//! The JSON-RPC 2.0 envelope of message lines: what a `raw` payload is (request,
//! notification, response, error, batch), its id, and pairing of requests with
//! responses.
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
        match (&self.method, &self.id, &self.result, &self.error) {
            (Some(_), Some(id), None, None) if !is_null(id) => RpcKind::Request,
            (Some(_), None, None, None) => RpcKind::Notification,
            (None, Some(_), Some(_), None) => RpcKind::Response,
            (None, Some(_), None, Some(_)) => RpcKind::Error,
            _ => RpcKind::Invalid,
        }
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

/// Pairs requests with responses per [`PairKey`], carrying a caller value `T` from the
/// request to its response (a line number, a timestamp, a tool name…).
#[derive(Debug)]
pub struct Pairer<T> {
    pending: HashMap<PairKey, T>,
}

impl<T> Default for Pairer<T> {
    fn default() -> Self {
        Pairer {
            pending: HashMap::new(),
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
        match env.kind() {
            RpcKind::Request => {
                let Some(id) = env.rpc_id() else {
                    return Paired::Ignored;
                };
                let key = PairKey {
                    session: session.map(str::to_owned),
                    request_dir: dir,
                    id,
                };
                match self.pending.insert(key, info()) {
                    Some(old) => Paired::DuplicatePending(old),
                    None => Paired::Opened,
                }
            }
            RpcKind::Response | RpcKind::Error => {
                let Some(id) = env.rpc_id() else {
                    return Paired::Orphan;
                };
                match self
                    .pending
                    .remove(&PairKey::for_response(session, dir, id))
                {
                    Some(v) => Paired::Closed(v),
                    None => Paired::Orphan,
                }
            }
            _ => Paired::Ignored,
        }
    }

    /// Requests still waiting, in no particular order.
    pub fn pending(&self) -> impl Iterator<Item = (&PairKey, &T)> {
        self.pending.iter()
    }

    /// Takes the requests still waiting.
    pub fn drain_pending(&mut self) -> Vec<(PairKey, T)> {
        self.pending.drain().collect()
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
