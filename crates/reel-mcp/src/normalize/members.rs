//! The members the built-in rules remove, named once for the rules over a message's
//! value and for the scan over its text.

/// The 2026-07-28 per-request `_meta` keys that describe the client, not the request
/// (schema `RequestMetaObject`).
pub const CLIENT_META_KEYS: [&str; 4] = [
    "io.modelcontextprotocol/clientInfo",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/logLevel",
];

/// The OpenTelemetry context keys MCP reserves in `_meta` (2026-07-28 "basic" §_meta).
pub const TRACE_CONTEXT_KEYS: [&str; 3] = ["traceparent", "tracestate", "baggage"];

/// The `initialize` params that say who the client is and what it speaks.
pub const INITIALIZE_CLIENT_KEYS: [&str; 3] = ["clientInfo", "capabilities", "protocolVersion"];
