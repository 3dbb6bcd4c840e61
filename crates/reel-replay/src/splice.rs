//! Byte-level surgery on recorded JSON-RPC messages.
//!
//! A replayed answer must be the recorded bytes with only what has to change changed: the
//! id (answers carry the live id), a progress token (re-sent with the live token), a
//! negotiated `protocolVersion`. These helpers split one JSON object into its top-level
//! members, each kept as its verbatim text ([`RawValue`]), replace the named ones and join
//! them again. Nothing below the replaced members is ever re-serialised; only the
//! whitespace between top-level members is lost.

use std::borrow::Cow;
use std::fmt;

use reel_trace::json_str::JsonStr;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// The top-level members of a JSON object, in order, values verbatim.
pub struct Members<'a>(pub Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'a> Members<'a> {
    /// Splits `raw`; `None` when it is not a JSON object.
    pub fn parse(raw: &'a str) -> Option<Members<'a>> {
        if !raw.trim_start().starts_with('{') {
            return None;
        }
        let mut de = serde_json::Deserializer::from_str(raw);
        let m = (&mut de).deserialize_map(MembersVisitor).ok()?;
        de.end().ok()?;
        Some(m)
    }

    /// The verbatim text of member `key`.
    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v.get())
    }

    /// Joins the members back, replacing the values of `replace` (key, new raw value)
    /// where the key exists and appending the ones that do not.
    pub fn join_replacing(&self, replace: &[(&str, &str)]) -> String {
        let mut out = String::with_capacity(
            self.0
                .iter()
                .map(|(k, v)| k.len() + v.get().len() + 4)
                .sum::<usize>()
                + 16,
        );
        out.push('{');
        let mut first = true;
        let mut push = |out: &mut String, k: &str, v: &str| {
            if !first {
                out.push(',');
            }
            first = false;
            out.push_str(&serde_json::to_string(k).unwrap_or_default());
            out.push(':');
            out.push_str(v);
        };
        for (k, v) in &self.0 {
            let value = replace
                .iter()
                .find(|(rk, _)| rk == k)
                .map_or(v.get(), |(_, rv)| *rv);
            push(&mut out, k, value);
        }
        for (rk, rv) in replace {
            if !self.0.iter().any(|(k, _)| k == rk) {
                push(&mut out, rk, rv);
            }
        }
        out.push('}');
        out
    }
}

struct MembersVisitor;

impl<'de> Visitor<'de> for MembersVisitor {
    type Value = Members<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut v = Vec::new();
        while let Some(k) = map.next_key::<JsonStr<'de>>()? {
            let value: &'de RawValue = map.next_value()?;
            v.push((k.0, value));
        }
        Ok(Members(v))
    }
}

/// A response to the live request: `{"jsonrpc":"2.0","id":<live>,"result"|"error":<raw>}`
/// with the recorded result or error bytes verbatim.
pub fn response(live_id: &str, member: &str, raw_value: &str) -> String {
    let mut s = String::with_capacity(raw_value.len() + live_id.len() + 32);
    s.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
    s.push_str(live_id);
    s.push_str(",\"");
    s.push_str(member);
    s.push_str("\":");
    s.push_str(raw_value);
    s.push('}');
    s
}

/// A recorded message with its top-level `id` replaced.
pub fn with_id(raw: &str, id: &str) -> Option<String> {
    Some(Members::parse(raw)?.join_replacing(&[("id", id)]))
}

/// A recorded `notifications/progress` with `params.progressToken` replaced.
pub fn with_progress_token(raw: &str, token: &str) -> Option<String> {
    let top = Members::parse(raw)?;
    let params = Members::parse(top.get("params")?)?;
    let params = params.join_replacing(&[("progressToken", token)]);
    Some(top.join_replacing(&[("params", &params)]))
}

/// A recorded `notifications/cancelled` whose `params.requestId` names one of the
/// server→client requests in `fresh` (recorded id text → the id replay sent it with):
/// the notification with that fresh id. `None` when it is no such notification.
pub fn with_fresh_request_id(
    raw: &str,
    fresh: &std::collections::HashMap<String, String>,
) -> Option<String> {
    let top = Members::parse(raw)?;
    if top.get("method")? != "\"notifications/cancelled\"" {
        return None;
    }
    let params = Members::parse(top.get("params")?)?;
    let id = fresh.get(params.get("requestId")?.trim())?;
    let params = params.join_replacing(&[("requestId", id)]);
    Some(top.join_replacing(&[("params", &params)]))
}

/// The member of a 2026-07-28 message's `_meta` that names the `subscriptions/listen`
/// request it belongs to.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// A recorded message stamped with one of the recorded subscription ids in `live`
/// (recorded id text → the live listen request's id), restamped with the live one
/// (`params._meta`, or `result._meta` on an answer). `None` when it carries no such
/// stamp.
pub fn with_subscription_id(
    raw: &str,
    live: &std::collections::HashMap<String, String>,
) -> Option<String> {
    let top = Members::parse(raw)?;
    let outer = if top.get("params").is_some() {
        "params"
    } else {
        "result"
    };
    let obj = Members::parse(top.get(outer)?)?;
    let meta = Members::parse(obj.get("_meta")?)?;
    let id = live.get(meta.get(SUBSCRIPTION_ID)?.trim())?;
    let meta = meta.join_replacing(&[(SUBSCRIPTION_ID, id)]);
    let obj = obj.join_replacing(&[("_meta", &meta)]);
    Some(top.join_replacing(&[(outer, &obj)]))
}

/// A recorded result object with its top-level member `key` replaced by `value`.
#[cfg(test)]
pub fn with_member(raw_object: &str, key: &str, value: &str) -> Option<String> {
    Some(Members::parse(raw_object)?.join_replacing(&[(key, value)]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subscription_stamp_is_restamped_with_the_live_id() {
        let live: std::collections::HashMap<String, String> =
            [("\"listen-1\"".to_owned(), "\"listen-2\"".to_owned())].into();
        let ack = r#"{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"},"notifications":{}}}"#;
        let out = with_subscription_id(ack, &live).unwrap();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["params"]["_meta"][SUBSCRIPTION_ID], "listen-2");
        assert_eq!(v["params"]["notifications"], serde_json::json!({}));
        let other = ack.replace("listen-1", "listen-9");
        assert_eq!(with_subscription_id(&other, &live), None);
        let plain = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
        assert_eq!(with_subscription_id(plain, &live), None);
    }

    #[test]
    fn answers_keep_recorded_bytes() {
        let rec = r#"{"content":[{"type":"text","text":"x  \u00e9"}], "n": 1.50}"#;
        assert_eq!(
            response("\"a\"", "result", rec),
            format!(r#"{{"jsonrpc":"2.0","id":"a","result":{rec}}}"#)
        );
    }

    #[test]
    fn ids_and_tokens_are_replaced_in_place() {
        let req = r#"{"method":"roots/list","jsonrpc":"2.0","id":0, "params":{"a": [1, 2]}}"#;
        assert_eq!(
            with_id(req, "7").unwrap(),
            r#"{"method":"roots/list","jsonrpc":"2.0","id":7,"params":{"a": [1, 2]}}"#
        );
        let prog = r#"{"method":"notifications/progress","params":{"progress":1,"total":3,"progressToken":6},"jsonrpc":"2.0"}"#;
        assert_eq!(
            with_progress_token(prog, "\"tok\"").unwrap(),
            r#"{"method":"notifications/progress","params":{"progress":1,"total":3,"progressToken":"tok"},"jsonrpc":"2.0"}"#
        );
        assert!(with_progress_token(r#"{"method":"x"}"#, "1").is_none());
        let fresh = std::collections::HashMap::from([("5".to_owned(), "0".to_owned())]);
        let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"t"}}"#;
        assert_eq!(
            with_fresh_request_id(cancel, &fresh).unwrap(),
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0,"reason":"t"}}"#
        );
        let other = cancel.replace(":5,", ":6,");
        assert!(with_fresh_request_id(&other, &fresh).is_none());
        assert!(with_id("[1]", "1").is_none());
        assert_eq!(
            with_member(
                r#"{"protocolVersion":"2025-11-25","a\"b":1}"#,
                "protocolVersion",
                "\"2025-06-18\""
            )
            .unwrap(),
            r#"{"protocolVersion":"2025-06-18","a\"b":1}"#
        );
    }
}
