//! The JSON-RPC layer as MCP uses it.
//!
//! The envelope itself (classes, ids, pairing per (session, direction, id), and the
//! pairing of id-less HTTP refusals by the HTTP request that carried them) is defined
//! with the trace format in [`reel_trace::jsonrpc`] and re-exported here; this module adds
//! what needs MCP knowledge: the progress token a request hands out, and which
//! notifications belong to which exchange (see [`crate::exchange`]).

pub use reel_trace::jsonrpc::{
    Envelope, EnvelopeShape, HttpCarried, IdShape, PairKey, Paired, Pairer, RpcId, RpcKind,
    is_id_less_answer,
};

use serde::Deserialize;
use serde_json::value::RawValue;

/// The progress token a request asks for (`params._meta.progressToken`), normalised like
/// an id (a string token never equals a numeric one).
pub fn request_progress_token(env: &Envelope<'_>) -> Option<RpcId> {
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(borrow, rename = "_meta")]
        meta: Option<Meta<'a>>,
    }
    #[derive(Deserialize)]
    struct Meta<'a> {
        #[serde(borrow, rename = "progressToken")]
        progress_token: Option<&'a RawValue>,
    }
    let p: Params<'_> = serde_json::from_str(env.params?.get()).ok()?;
    RpcId::from_raw(p.meta?.progress_token?)
}

/// The token a `notifications/progress` carries (`params.progressToken`).
pub fn notification_progress_token(env: &Envelope<'_>) -> Option<RpcId> {
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(borrow, rename = "progressToken")]
        progress_token: Option<&'a RawValue>,
    }
    let p: Params<'_> = serde_json::from_str(env.params?.get()).ok()?;
    RpcId::from_raw(p.progress_token?)
}

/// The request a `notifications/cancelled` cancels (`params.requestId`).
pub fn cancelled_request_id(env: &Envelope<'_>) -> Option<RpcId> {
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(borrow, rename = "requestId")]
        request_id: Option<&'a RawValue>,
    }
    let p: Params<'_> = serde_json::from_str(env.params?.get()).ok()?;
    RpcId::from_raw(p.request_id?)
}

/// What a request is about, the name that makes it recognisable in a report: the tool of
/// a `tools/call`, the prompt of a `prompts/get`, the URI of a `resources/read`,
/// `resources/subscribe` or `resources/unsubscribe`, the reference of a
/// `completion/complete`. `params` is the request's `params` value.
pub fn call_subject<'v>(method: &str, params: &'v serde_json::Value) -> Option<&'v str> {
    let name = match method {
        methods::TOOLS_CALL | "prompts/get" => params.get("name")?,
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => params.get("uri")?,
        "completion/complete" => {
            let r = params.get("ref")?;
            r.get("name").or_else(|| r.get("uri"))?
        }
        _ => return None,
    };
    name.as_str()
}

/// Well-known method names.
pub mod methods {
    /// Legacy handshake.
    pub const INITIALIZE: &str = "initialize";
    /// 2026-07-28 discovery.
    pub const SERVER_DISCOVER: &str = "server/discover";
    /// Progress notification.
    pub const PROGRESS: &str = "notifications/progress";
    /// Cancellation notification.
    pub const CANCELLED: &str = "notifications/cancelled";
    /// Tool call.
    pub const TOOLS_CALL: &str = "tools/call";
    /// Keepalive.
    pub const PING: &str = "ping";
    /// The client's choice of log level.
    pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
    /// 2026-07-28: the stream of the server's notifications a client subscribes to.
    pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";

    /// Requests that stay open while the server sends what they subscribed to, and are
    /// answered (if ever) when the subscription or the session ends: replay keeps them
    /// open and sends what came on them in its recorded place.
    pub const LONG_LIVED: [&str; 1] = [SUBSCRIPTIONS_LISTEN];

    /// Whether requests of `method` are [`LONG_LIVED`].
    pub fn is_long_lived(method: &str) -> bool {
        LONG_LIVED.contains(&method)
    }

    /// Requests every server answers alike (an empty result): a client other than the
    /// recorded one may send them when it likes.
    pub const ANSWERED_ALIKE: [&str; 2] = [PING, LOGGING_SET_LEVEL];

    /// Client requests that only read one of the server's lists (tools, prompts,
    /// resources, resource templates, tasks; a page of it, by cursor): answering one
    /// again changes nothing on the server, so clients may ask as often as they like
    /// (the Python SDK re-lists tools after every call that finishes before its tool
    /// cache is filled).
    pub const LIST_READS: [&str; 5] = [
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "tasks/list",
    ];

    /// What replay must know of a client request's method.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum RequestClass {
        /// [`ANSWERED_ALIKE`].
        AnsweredAlike,
        /// [`LIST_READS`].
        ListRead,
        /// Anything else: it may change the server, each answer is its own.
        Other,
    }

    /// The class of a client request's method.
    pub fn request_class(method: &str) -> RequestClass {
        if ANSWERED_ALIKE.contains(&method) {
            RequestClass::AnsweredAlike
        } else if LIST_READS.contains(&method) {
            RequestClass::ListRead
        } else {
            RequestClass::Other
        }
    }
}

#[cfg(test)]
mod tests {
    use super::methods::{RequestClass, request_class};

    #[test]
    fn request_classes() {
        for m in ["ping", "logging/setLevel"] {
            assert_eq!(request_class(m), RequestClass::AnsweredAlike, "{m}");
        }
        for m in [
            "tools/list",
            "prompts/list",
            "resources/list",
            "resources/templates/list",
            "tasks/list",
        ] {
            assert_eq!(request_class(m), RequestClass::ListRead, "{m}");
        }
        // Reading one resource or calling a tool is not a list read; roots/list is the
        // server asking the client.
        for m in [
            "resources/read",
            "tools/call",
            "roots/list",
            "initialize",
            "",
        ] {
            assert_eq!(request_class(m), RequestClass::Other, "{m}");
        }
    }

    #[test]
    fn a_call_names_its_tool_prompt_or_resource() {
        use super::call_subject;
        let p = |v: &str| -> serde_json::Value { serde_json::from_str(v).unwrap() };
        assert_eq!(
            call_subject("tools/call", &p(r#"{"name":"add"}"#)),
            Some("add")
        );
        assert_eq!(
            call_subject("resources/read", &p(r#"{"uri":"file:///a"}"#)),
            Some("file:///a")
        );
        assert_eq!(
            call_subject(
                "completion/complete",
                &p(r#"{"ref":{"type":"ref/prompt","name":"p"}}"#)
            ),
            Some("p")
        );
        assert_eq!(call_subject("tools/list", &p(r#"{"name":"x"}"#)), None);
    }
}
