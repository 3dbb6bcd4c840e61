//! The JSON-RPC layer as MCP uses it.
//!
//! The envelope itself (classes, ids, pairing per (session, direction, id)) is defined
//! with the trace format in [`reel_trace::jsonrpc`] and re-exported here; this module adds
//! what needs MCP knowledge: the progress token a request hands out, and which
//! notifications belong to which exchange (see [`crate::exchange`]).

pub use reel_trace::jsonrpc::{Envelope, PairKey, Paired, Pairer, RpcId, RpcKind};

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
}
