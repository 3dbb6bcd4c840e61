//! The JSON-RPC layer as MCP uses it.
//!
//! The envelope itself (classes, ids, pairing per (session, direction, id), and the
//! pairing of id-less HTTP refusals by the HTTP request that carried them) is defined
//! with the trace format in [`reel_trace::jsonrpc`] and re-exported here; this module adds
//! what needs MCP knowledge: the progress token a request hands out, and which
//! notifications belong to which exchange (see [`crate::exchange`]).

pub use reel_trace::jsonrpc::{
    Envelope, HttpCarried, PairKey, Paired, Pairer, RpcId, RpcKind, is_id_less_answer,
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
}
