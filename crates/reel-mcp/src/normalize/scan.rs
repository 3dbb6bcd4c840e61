//! One pass over a message's text: its class, the few members replay needs verbatim,
//! and its match keys, without building a `serde_json::Value`.
//!
//! Building a `Value` costs three to four times a validating scan (allocations for every
//! object and string); replay keys every recorded request and every live one, so it
//! keys them while scanning. The normalisation rules are applied on the way, as they are
//! defined in [`super::rules`]: the top-level `id` never enters the key, `_meta` loses
//! `progressToken`, the client keys and the trace-context keys, `initialize` params lose
//! the client's identity (decided once `method` is known, whatever the member order),
//! `--ignore` pointers remove members (array elements count as `null`), and an emptied
//! `_meta` or `params` counts as absent. The result is the same [`MatchKey`] as
//! [`MatchKey::of`] on the normalised `Value` (tests compare the two on every rule).

use std::borrow::Cow;
use std::fmt;

use reel_trace::json_str::JsonStr;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::error::NormalizeError;
use super::key::{
    ArrayHash, MatchKey, h_bool, h_float, h_integer, h_member, h_null, h_object, h_str,
};
use super::members::{CLIENT_META_KEYS, INITIALIZE_CLIENT_KEYS, TRACE_CONTEXT_KEYS};
use super::pointer::{Pointer, array_index};
use crate::jsonrpc::{EnvelopeShape, IdShape, RpcId, RpcKind};

/// What one pass over a message found. Members are borrowed verbatim from the text.
#[derive(Debug)]
pub struct Scanned<'a> {
    /// The JSON-RPC class, as [`crate::jsonrpc::Envelope::kind`] decides it.
    pub kind: RpcKind,
    /// `id`.
    pub id: Option<&'a RawValue>,
    /// `method`, when it is a string.
    pub method: Option<Cow<'a, str>>,
    /// `params._meta.progressToken`.
    pub progress_token: Option<&'a RawValue>,
    /// `params.protocolVersion`.
    pub protocol_version: Option<&'a RawValue>,
    /// `params.name` (the tool or prompt).
    pub name: Option<&'a RawValue>,
    /// `params.requestId` (cancellation).
    pub request_id: Option<&'a RawValue>,
    /// `params.progressToken` (a progress notification's token).
    pub params_progress_token: Option<&'a RawValue>,
    /// `result`, verbatim.
    pub result: Option<&'a RawValue>,
    /// `error`, verbatim.
    pub error: Option<&'a RawValue>,
    /// The match key (method and normalised params).
    pub key: MatchKey,
    /// The key without `params.inputResponses`, when the message has them (a
    /// 2026-07-28 retry whose answers may differ from the recorded ones).
    pub alt_key: Option<MatchKey>,
}

impl<'a> Scanned<'a> {
    /// The facts the exchange builder reads, from this one pass (no second parse).
    pub fn facts(&self) -> crate::exchange::Facts<'a> {
        let id = |r: Option<&'a RawValue>| r.and_then(RpcId::from_raw);
        crate::exchange::Facts {
            env: self.envelope(),
            request_progress_token: id(self.progress_token),
            notification_progress_token: id(self.params_progress_token),
            cancelled_request: id(self.request_id),
        }
    }

    /// The envelope as [`crate::jsonrpc::Envelope::parse`] would give it, without
    /// `params` (which the scan consumed) and `jsonrpc`.
    pub fn envelope(&self) -> crate::jsonrpc::Envelope<'a> {
        crate::jsonrpc::Envelope {
            jsonrpc: None,
            id: self.id,
            method: self.method.clone(),
            params: None,
            result: self.result,
            error: self.error,
        }
    }
}

type Ptrs<'p> = Vec<&'p [String]>;

/// Which of `ptrs` apply below the member `seg`: (is the member itself removed, the
/// pointers that continue below it).
fn children<'p>(ptrs: &[&'p [String]], seg: &str) -> (bool, Ptrs<'p>) {
    let mut removed = false;
    let mut out = Vec::new();
    for p in ptrs {
        if let Some((first, rest)) = p.split_first() {
            if first == "*" || first == seg {
                if rest.is_empty() {
                    removed = true;
                } else {
                    out.push(rest);
                }
            }
        }
    }
    (removed, out)
}

/// [`children`] for array element `i` (RFC 6901 indices: digits, no leading zero).
fn element_children<'p>(ptrs: &[&'p [String]], i: usize) -> (bool, Ptrs<'p>) {
    let mut removed = false;
    let mut out = Vec::new();
    for p in ptrs {
        if let Some((first, rest)) = p.split_first() {
            if first == "*" || array_index(first) == Some(i) {
                if rest.is_empty() {
                    removed = true;
                } else {
                    out.push(rest);
                }
            }
        }
    }
    (removed, out)
}

/// Scans a message inside a larger document (the `raw` member of a trace line), so the
/// line is read once: a `DeserializeSeed` whose value is what
/// [`Normalizer::scan`](super::Normalizer::scan) returns. A
/// payload that is not an object is consumed and reported as `NotObject`.
pub struct ScanSeed<'n> {
    pub(super) ignore: &'n [Pointer],
}

impl<'de> DeserializeSeed<'de> for ScanSeed<'_> {
    type Value = Result<Scanned<'de>, NormalizeError>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let root: Ptrs<'_> = self.ignore.iter().map(|p| p.segments.as_slice()).collect();
        d.deserialize_any(AnyMessage { ptrs: &root })
    }
}

struct AnyMessage<'r, 'p> {
    ptrs: &'r [&'p [String]],
}

impl<'de> Visitor<'de> for AnyMessage<'_, '_> {
    type Value = Result<Scanned<'de>, NormalizeError>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        MessageVisitor { ptrs: self.ptrs }.visit_map(map).map(Ok)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Err(NormalizeError::NotObject { batch: true }))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(Err(NormalizeError::NotObject { batch: false }))
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
        self.visit_unit()
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
        self.visit_unit()
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
        self.visit_unit()
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
        self.visit_unit()
    }

    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
        self.visit_unit()
    }
}

/// Scans `raw`, applying the rules and `ignore`.
pub(super) fn scan<'a>(raw: &'a str, ignore: &[Pointer]) -> Result<Scanned<'a>, NormalizeError> {
    let trimmed = raw.trim_start();
    if !trimmed.starts_with('{') {
        return Err(match serde_json::from_str::<IgnoredAny>(raw) {
            Err(e) => NormalizeError::NotJson {
                message: e.to_string(),
            },
            Ok(_) => NormalizeError::NotObject {
                batch: trimmed.starts_with('['),
            },
        });
    }
    let root: Ptrs<'_> = ignore.iter().map(|p| p.segments.as_slice()).collect();
    let not_json = |e: serde_json::Error| NormalizeError::NotJson {
        message: e.to_string(),
    };
    let mut de = serde_json::Deserializer::from_str(raw);
    let found = (&mut de)
        .deserialize_map(MessageVisitor { ptrs: &root })
        .map_err(not_json)?;
    de.end().map_err(not_json)?;
    Ok(found)
}

struct MessageVisitor<'r, 'p> {
    ptrs: &'r [&'p [String]],
}

impl<'de> Visitor<'de> for MessageVisitor<'_, '_> {
    type Value = Scanned<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut id = None;
        let mut method_raw: Option<&'de RawValue> = None;
        let mut params: Option<Params<'de>> = None;
        let (mut result, mut error): (Option<&'de RawValue>, Option<&'de RawValue>) = (None, None);
        while let Some(k) = map.next_key::<JsonStr<'de>>()? {
            match k.as_ref() {
                "id" => id = Some(map.next_value::<&'de RawValue>()?),
                "method" => method_raw = Some(map.next_value::<&'de RawValue>()?),
                "params" => {
                    let (removed, below) = children(self.ptrs, "params");
                    let mut p = map.next_value_seed(ParamsSeed { ptrs: &below })?;
                    p.removed = removed;
                    params = Some(p);
                }
                "result" => result = Some(map.next_value()?),
                "error" => error = Some(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let method: Option<Cow<'de, str>> = method_raw.and_then(|r| {
            serde_json::from_str::<JsonStr<'de>>(r.get())
                .ok()
                .map(Cow::from)
        });
        let kind = EnvelopeShape {
            method: method.is_some(),
            id: id.map(IdShape::of),
            result: result.is_some(),
            error: error.is_some(),
        }
        .kind();
        let (method_removed, method_ptrs) = children(self.ptrs, "method");
        let method_hash = match method_raw {
            Some(r) if !method_removed => {
                hash_raw(r.get(), &method_ptrs).map_err(serde::de::Error::custom)?
            }
            _ => h_null(),
        };
        let initialize = method.as_deref() == Some(crate::jsonrpc::methods::INITIALIZE);
        let params_hash = |variant: Variant| match &params {
            None => h_null(),
            Some(p) if p.removed => h_null(),
            Some(p) => p.hash(variant, initialize),
        };
        let key = MatchKey::from_parts(method_hash, params_hash(Variant::Key));
        let alt_key = params
            .as_ref()
            .filter(|p| p.has_input_responses && !p.removed)
            .map(|_| MatchKey::from_parts(method_hash, params_hash(Variant::Alt)));
        let capture = |f: fn(&Params<'de>) -> Option<&'de RawValue>| params.as_ref().and_then(f);
        Ok(Scanned {
            kind,
            id,
            method,
            progress_token: capture(|p| p.progress_token),
            protocol_version: capture(|p| p.protocol_version),
            name: capture(|p| p.name),
            request_id: capture(|p| p.request_id),
            params_progress_token: capture(|p| p.params_progress_token),
            result,
            error,
            key,
            alt_key,
        })
    }
}

/// Hashes a small value given as text (a method, a captured member).
fn hash_raw(text: &str, ptrs: &[&[String]]) -> Result<u128, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    HashSeed { ptrs }.deserialize(&mut de)
}

/// Sums of member hashes with and without the members some rules drop.
#[derive(Default, Clone, Copy)]
struct Sums {
    count: u64,
    sum: u128,
}

impl Sums {
    fn add(&mut self, member: u128) {
        self.count += 1;
        self.sum = self.sum.wrapping_add(member);
    }

    /// The object, or absent (`null`) when empty: the empty-params rule.
    fn hash_or_absent(self) -> u128 {
        if self.count == 0 {
            h_null()
        } else {
            h_object(self.count, self.sum)
        }
    }
}

#[derive(Clone, Copy)]
enum Variant {
    Key,
    Alt,
}

struct Params<'de> {
    /// `None` when params is not an object (then `other` is its hash).
    all: Option<Sums>,
    without_init: Sums,
    without_input: Sums,
    without_both: Sums,
    other: u128,
    removed: bool,
    has_input_responses: bool,
    progress_token: Option<&'de RawValue>,
    protocol_version: Option<&'de RawValue>,
    name: Option<&'de RawValue>,
    request_id: Option<&'de RawValue>,
    params_progress_token: Option<&'de RawValue>,
}

impl Params<'_> {
    fn new(other: u128) -> Self {
        Params {
            all: None,
            without_init: Sums::default(),
            without_input: Sums::default(),
            without_both: Sums::default(),
            other,
            removed: false,
            has_input_responses: false,
            progress_token: None,
            protocol_version: None,
            name: None,
            request_id: None,
            params_progress_token: None,
        }
    }

    fn hash(&self, variant: Variant, initialize: bool) -> u128 {
        let Some(all) = self.all else {
            return self.other;
        };
        match (variant, initialize) {
            (Variant::Key, false) => all,
            (Variant::Key, true) => self.without_init,
            (Variant::Alt, false) => self.without_input,
            (Variant::Alt, true) => self.without_both,
        }
        .hash_or_absent()
    }

    fn add(&mut self, key: &str, value: u128) {
        let member = h_member(key, value);
        let init = INITIALIZE_CLIENT_KEYS.contains(&key);
        let input = key == "inputResponses";
        if let Some(all) = self.all.as_mut() {
            all.add(member);
        }
        if !init {
            self.without_init.add(member);
        }
        if !input {
            self.without_input.add(member);
        }
        if !init && !input {
            self.without_both.add(member);
        }
    }
}

struct ParamsSeed<'r, 'p> {
    ptrs: &'r [&'p [String]],
}

impl<'de> DeserializeSeed<'de> for ParamsSeed<'_, '_> {
    type Value = Params<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(ParamsVisitor { ptrs: self.ptrs })
    }
}

struct ParamsVisitor<'r, 'p> {
    ptrs: &'r [&'p [String]],
}

/// The scalar and array cases of a visitor whose value is built from a plain hash.
macro_rules! plain_values {
    ($wrap:expr) => {
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok($wrap(h_null()))
        }
        fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
            Ok($wrap(h_bool(v)))
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Ok($wrap(h_integer(i128::from(v))))
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Ok($wrap(h_integer(i128::from(v))))
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
            Ok($wrap(h_float(v)))
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok($wrap(h_str(v)))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            hash_seq(self.ptrs, seq).map($wrap)
        }
    };
}

impl<'de> Visitor<'de> for ParamsVisitor<'_, '_> {
    type Value = Params<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("params")
    }

    plain_values!(Params::new);

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut p = Params::new(0);
        p.all = Some(Sums::default());
        while let Some(k) = map.next_key::<JsonStr<'de>>()? {
            let (removed, below) = children(self.ptrs, &k);
            match k.as_ref() {
                "_meta" => {
                    if removed {
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    }
                    let meta = map.next_value_seed(MetaSeed { ptrs: &below })?;
                    p.progress_token = meta.progress_token;
                    // The empty-meta rule: an emptied _meta is no member at all.
                    if let Some(h) = meta.hash {
                        p.add("_meta", h);
                    }
                }
                "name" | "protocolVersion" | "requestId" | "progressToken" => {
                    let raw: &'de RawValue = map.next_value()?;
                    match k.as_ref() {
                        "name" => p.name = Some(raw),
                        "protocolVersion" => p.protocol_version = Some(raw),
                        "requestId" => p.request_id = Some(raw),
                        _ => p.params_progress_token = Some(raw),
                    }
                    if !removed {
                        let h = hash_raw(raw.get(), &below).map_err(serde::de::Error::custom)?;
                        p.add(&k, h);
                    }
                }
                _ => {
                    if removed {
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    }
                    if &*k == "inputResponses" {
                        p.has_input_responses = true;
                    }
                    let h = map.next_value_seed(HashSeed { ptrs: &below })?;
                    p.add(&k, h);
                }
            }
        }
        Ok(p)
    }
}

struct Meta<'de> {
    /// `None` when nothing is left of it.
    hash: Option<u128>,
    progress_token: Option<&'de RawValue>,
}

struct MetaSeed<'r, 'p> {
    ptrs: &'r [&'p [String]],
}

impl<'de> DeserializeSeed<'de> for MetaSeed<'_, '_> {
    type Value = Meta<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(MetaVisitor { ptrs: self.ptrs })
    }
}

struct MetaVisitor<'r, 'p> {
    ptrs: &'r [&'p [String]],
}

fn meta_of<'de>(h: u128) -> Meta<'de> {
    Meta {
        hash: Some(h),
        progress_token: None,
    }
}

impl<'de> Visitor<'de> for MetaVisitor<'_, '_> {
    type Value = Meta<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("_meta")
    }

    plain_values!(meta_of);

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut sums = Sums::default();
        let mut progress_token = None;
        while let Some(k) = map.next_key::<JsonStr<'de>>()? {
            if &*k == "progressToken" {
                progress_token = Some(map.next_value::<&'de RawValue>()?);
                continue;
            }
            let (removed, below) = children(self.ptrs, &k);
            if removed
                || CLIENT_META_KEYS.contains(&k.as_ref())
                || TRACE_CONTEXT_KEYS.contains(&k.as_ref())
            {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let h = map.next_value_seed(HashSeed { ptrs: &below })?;
            sums.add(h_member(&k, h));
        }
        Ok(Meta {
            hash: (sums.count > 0).then(|| h_object(sums.count, sums.sum)),
            progress_token,
        })
    }
}

/// Hashes any value, applying the pointers below it.
struct HashSeed<'r, 'p> {
    ptrs: &'r [&'p [String]],
}

impl<'de> DeserializeSeed<'de> for HashSeed<'_, '_> {
    type Value = u128;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<u128, D::Error> {
        d.deserialize_any(HashVisitor { ptrs: self.ptrs })
    }
}

struct HashVisitor<'r, 'p> {
    ptrs: &'r [&'p [String]],
}

fn hash_seq<'de, A: SeqAccess<'de>>(ptrs: &[&[String]], mut seq: A) -> Result<u128, A::Error> {
    let mut h = ArrayHash::new();
    let mut i = 0;
    loop {
        if ptrs.is_empty() {
            match seq.next_element_seed(HashSeed { ptrs: &[] })? {
                Some(e) => h.push(e),
                None => break,
            }
        } else {
            let (removed, below) = element_children(ptrs, i);
            if removed {
                // A removed element counts as null, so later positions keep theirs.
                match seq.next_element::<IgnoredAny>()? {
                    Some(_) => h.push(h_null()),
                    None => break,
                }
            } else {
                match seq.next_element_seed(HashSeed { ptrs: &below })? {
                    Some(e) => h.push(e),
                    None => break,
                }
            }
        }
        i += 1;
    }
    Ok(h.finish())
}

fn same(h: u128) -> u128 {
    h
}

impl<'de> Visitor<'de> for HashVisitor<'_, '_> {
    type Value = u128;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    plain_values!(same);

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<u128, A::Error> {
        let mut sums = Sums::default();
        while let Some(k) = map.next_key::<JsonStr<'de>>()? {
            if self.ptrs.is_empty() {
                let h = map.next_value_seed(HashSeed { ptrs: &[] })?;
                sums.add(h_member(&k, h));
                continue;
            }
            let (removed, below) = children(self.ptrs, &k);
            if removed {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let h = map.next_value_seed(HashSeed { ptrs: &below })?;
            sums.add(h_member(&k, h));
        }
        Ok(h_object(sums.count, sums.sum))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Normalizer, Pointer};
    use super::*;
    use serde_json::Value;

    /// The scanner's key equals the key of the normalised `Value`, message by message.
    fn agree(n: &Normalizer, raw: &str) {
        let scanned = n.scan(raw).unwrap_or_else(|e| panic!("{raw}: {e}"));
        let normalized = n.normalize_recorded(raw).unwrap();
        assert_eq!(
            scanned.key,
            MatchKey::of(&normalized),
            "key of {raw}\nnormalised: {normalized}"
        );
        let mut v: Value = serde_json::from_str(raw).unwrap();
        let had = v
            .get_mut("params")
            .and_then(Value::as_object_mut)
            .and_then(|p| p.remove("inputResponses"))
            .is_some();
        let mut without: Value = v;
        n.normalize_value(&mut without);
        assert_eq!(
            scanned.alt_key,
            had.then(|| MatchKey::of(&without)),
            "alt key of {raw}"
        );
    }

    const MESSAGES: &[&str] = &[
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi","n":[1,2.0,{"x":null}]}}}"#,
        r#"{"params":{"arguments":{"n":[1,2,{"x":null}],"message":"hi"},"name":"echo"},"method":"tools/call","id":"z","jsonrpc":"2.0"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":2,"traceparent":"00-1-2-01","tracestate":"x","baggage":"b","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/logLevel":"info"}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":2,"keep":true}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"x","version":"1"}}}"#,
        r#"{"params":{"clientInfo":{"name":"x"},"protocolVersion":"2025-06-18","extra":1},"id":4,"method":"initialize"}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"book","arguments":{"city":"Lyon"},"inputResponses":{"q":{"action":"accept","content":{"day":"monday"}}},"requestState":"s.1"}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"x","params":[1,"two",{"three":3.5}]}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"m","params":{"s":"esc\"aped \u00e9 \n","big":18446744073709551615,"neg":-3,"f":1e300,"z":-0.0}}"#,
        r#"{"jsonrpc":"2.0","id":9,"result":{"content":[]}}"#,
        r#"{"jsonrpc":"2.0","id":9,"method":"m","params":{"protocolVersion":{"not":"a string"},"name":["n"]}}"#,
    ];

    #[test]
    fn the_scanner_keys_like_the_rules_on_values() {
        let plain = Normalizer::new();
        let p = |s: &str| Pointer::parse(s).unwrap();
        let ignoring = Normalizer::new().with_ignore(vec![
            p("/params/arguments/message"),
            p("/params/arguments/n/1"),
            p("/params/*/x"),
            p("/params/_meta/keep"),
            p("/params/extra"),
            p("/params/s"),
        ]);
        for raw in MESSAGES {
            agree(&plain, raw);
            agree(&ignoring, raw);
        }
        let whole_params = Normalizer::new().with_ignore(vec![p("/params")]);
        agree(&whole_params, MESSAGES[0]);
        let method = Normalizer::new().with_ignore(vec![p("/method")]);
        agree(&method, MESSAGES[0]);
    }

    #[test]
    fn the_scanner_classifies_and_captures() {
        let n = Normalizer::new();
        let s = n.scan(MESSAGES[2]).unwrap();
        assert_eq!(s.kind, RpcKind::Request);
        assert_eq!(s.id.map(RawValue::get), Some("2"));
        assert_eq!(s.method.as_deref(), Some("tools/call"));
        assert_eq!(s.progress_token.map(RawValue::get), Some("2"));
        assert_eq!(s.name.map(RawValue::get), Some("\"a\""));
        let c = n.scan(MESSAGES[11]).unwrap();
        assert_eq!(c.kind, RpcKind::Notification);
        assert_eq!(c.request_id.map(RawValue::get), Some("7"));
        assert_eq!(n.scan(MESSAGES[14]).unwrap().kind, RpcKind::Response);
        let init = n.scan(MESSAGES[7]).unwrap();
        assert_eq!(
            init.protocol_version.map(RawValue::get),
            Some("\"2025-11-25\"")
        );
        assert_eq!(
            n.scan(r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#)
                .unwrap()
                .kind,
            RpcKind::Invalid
        );
        assert!(matches!(
            n.scan("[1]"),
            Err(NormalizeError::NotObject { batch: true })
        ));
        assert!(matches!(
            n.scan("7"),
            Err(NormalizeError::NotObject { batch: false })
        ));
        assert!(matches!(n.scan("{"), Err(NormalizeError::NotJson { .. })));
        assert!(matches!(
            n.scan("{} x"),
            Err(NormalizeError::NotJson { .. })
        ));
    }
}
