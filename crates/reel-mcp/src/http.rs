//! MCP over HTTP, the knowledge every HTTP side of reel shares (the recording proxy, the
//! tape server, verify): the names of MCP's HTTP headers, the `Mcp-Name` of a request,
//! and the session key reel gives a client connection that has no MCP session. HTTP
//! itself (URLs, the loopback guard, hop-by-hop headers) is `reel_net::http`.

/// True for the methods whose params name what they act on (`tools/call`,
/// `resources/read`, `prompts/get`): the ones [`mcp_name`] answers for.
pub fn names_subject(method: &str) -> bool {
    use crate::jsonrpc::methods::TOOLS_CALL;
    matches!(method, TOOLS_CALL | "resources/read" | "prompts/get")
}

/// The value of the `Mcp-Name` header (2026-07-28) for a request: `params.name` or
/// `params.uri` of the three methods the Streamable HTTP transport names
/// (`tools/call`, `resources/read`, `prompts/get`), read by
/// [`crate::jsonrpc::call_subject`]; `None` for every other method.
pub fn mcp_name<'v>(method: &str, params: &'v serde_json::Value) -> Option<&'v str> {
    if !names_subject(method) {
        return None;
    }
    crate::jsonrpc::call_subject(method, params)
}

/// Header names, lower case (HTTP header names are case-insensitive).
pub mod headers {
    /// The MCP session (Streamable HTTP, 2025-03-26 … 2025-11-25).
    pub const SESSION_ID: &str = "mcp-session-id";
    /// The negotiated protocol version (from 2025-06-18; 2026-07-28 on every request).
    pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
    /// The JSON-RPC method (2026-07-28).
    pub const METHOD: &str = "mcp-method";
    /// `params.name` or `params.uri` (2026-07-28).
    pub const NAME: &str = "mcp-name";
    /// The event id a client resumes an event stream after.
    pub const LAST_EVENT_ID: &str = "last-event-id";
}

/// The `session` reel's recorder writes for the lines of a client connection that has
/// no MCP session (2026-07-28, stateless servers, a refused probe): this prefix and the
/// connection's number (`reel:conn-1`, …). Replay treats every such line as session-less
/// traffic, not as a session to reproduce.
pub const CONNECTION_SESSION_PREFIX: &str = "reel:conn-";

/// True when a recorded `session` is a connection key rather than an MCP session.
pub fn is_connection_key(session: &str) -> bool {
    session.starts_with(CONNECTION_SESSION_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_name_is_sent_for_the_three_methods_the_transport_names() {
        let p: serde_json::Value = serde_json::json!({"name": "add", "uri": "file:///a"});
        assert_eq!(mcp_name("tools/call", &p), Some("add"));
        assert_eq!(mcp_name("prompts/get", &p), Some("add"));
        assert_eq!(mcp_name("resources/read", &p), Some("file:///a"));
        assert_eq!(mcp_name("resources/subscribe", &p), None);
        assert_eq!(mcp_name("completion/complete", &p), None);
    }

    #[test]
    fn connection_keys_are_not_sessions() {
        assert!(is_connection_key("reel:conn-12"));
        assert!(!is_connection_key("4c5ca01d-53c0-497b-8cea-7dcf6a6fafdb"));
    }
}
