//! The limits the proxy keeps: buffering between a pump and its client, the shutdown
//! grace, what is read whole or kept of a body, and how much it remembers.

use std::time::Duration;

/// Frames buffered between a pump and the client's connection: the only buffering
/// between the upstream and the client.
pub const CHANNEL_FRAMES: usize = 16;
/// After a stop, how long connections and pumps get to finish before they are cut.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);
/// The first event of a GET event stream is held until complete, up to this many bytes,
/// so that a legacy `endpoint` event pointing at the upstream can be rewritten.
pub const GATE_MAX: usize = 16 * 1024;
/// Bytes of a non-MCP body (an HTML page, a non-JSON-RPC document) kept in its
/// `reel.http` event; the rest is counted (`truncated`), not kept.
pub const EXCERPT_MAX: usize = 64 * 1024;
/// OAuth / OpenID metadata documents are rewritten whole; larger ones are refused (502).
pub const METADATA_MAX: usize = 1024 * 1024;
/// Legacy HTTP+SSE sessions remembered (endpoint → session); the oldest is forgotten first.
pub const MAX_LEGACY_SESSIONS: usize = 65_536;
/// Custom paths of protected-resource metadata (named by `WWW-Authenticate`
/// `resource_metadata`) remembered, so that the document there is rewritten like the
/// ones at the well-known paths; the oldest is forgotten first.
pub const MAX_METADATA_PATHS: usize = 1024;
/// A request or a plain (non-SSE) response body with a `Content-Length` up to this size
/// is read whole before it is passed on: it arrives with its headers, and one write
/// instead of two (headers, then body) halves the proxy's cost per message. Larger
/// bodies, chunked ones and event streams are passed on chunk by chunk.
pub const INLINE_BODY_MAX: u64 = 64 * 1024;
