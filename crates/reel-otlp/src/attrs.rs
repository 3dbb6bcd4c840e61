//! Span attributes as OTLP key-values, with the names of the semantic conventions the
//! export follows in one place.

use opentelemetry_proto::tonic::common::v1::{AnyValue, ArrayValue, KeyValue, any_value::Value};

/// Attribute names: OpenTelemetry's semantic conventions for MCP, GenAI, errors, RPC and
/// the network, and reel's own (`reel.*`) for what they have no name for.
pub mod names {
    /// The JSON-RPC method of a request or notification.
    pub const MCP_METHOD: &str = "mcp.method.name";
    /// The MCP session (`Mcp-Session-Id` over Streamable HTTP).
    pub const MCP_SESSION: &str = "mcp.session.id";
    /// The negotiated MCP protocol version.
    pub const MCP_PROTOCOL: &str = "mcp.protocol.version";
    /// The resource a request or notification is about.
    pub const MCP_RESOURCE_URI: &str = "mcp.resource.uri";
    /// The request's JSON-RPC id, as text.
    pub const JSONRPC_ID: &str = "jsonrpc.request.id";
    /// The JSON-RPC version, when it is not 2.0.
    pub const JSONRPC_VERSION: &str = "jsonrpc.protocol.version";
    /// A JSON-RPC error code, as text.
    pub const RPC_STATUS: &str = "rpc.response.status_code";
    /// The class of error an operation ended with.
    pub const ERROR_TYPE: &str = "error.type";
    /// `pipe` (stdio) or `tcp` (HTTP).
    pub const NETWORK_TRANSPORT: &str = "network.transport";
    /// `http` over Streamable HTTP.
    pub const NETWORK_PROTOCOL: &str = "network.protocol.name";
    /// The server's host.
    pub const SERVER_ADDRESS: &str = "server.address";
    /// The server's port.
    pub const SERVER_PORT: &str = "server.port";
    /// The HTTP status of a model call.
    pub const HTTP_STATUS: &str = "http.response.status_code";
    /// `execute_tool`, `chat`, `embeddings`, `text_completion`.
    pub const GENAI_OPERATION: &str = "gen_ai.operation.name";
    /// `anthropic`, `openai`, `ollama`.
    pub const GENAI_PROVIDER: &str = "gen_ai.provider.name";
    /// The tool a `tools/call` runs.
    pub const GENAI_TOOL: &str = "gen_ai.tool.name";
    /// The prompt a `prompts/get` reads.
    pub const GENAI_PROMPT: &str = "gen_ai.prompt.name";
    /// The model asked for.
    pub const GENAI_REQUEST_MODEL: &str = "gen_ai.request.model";
    /// The model that answered.
    pub const GENAI_RESPONSE_MODEL: &str = "gen_ai.response.model";
    /// `max_tokens` of the request.
    pub const GENAI_MAX_TOKENS: &str = "gen_ai.request.max_tokens";
    /// `temperature` of the request.
    pub const GENAI_TEMPERATURE: &str = "gen_ai.request.temperature";
    /// `top_p` of the request.
    pub const GENAI_TOP_P: &str = "gen_ai.request.top_p";
    /// Why the model stopped.
    pub const GENAI_FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
    /// Input tokens, cached ones included (the conventions' definition).
    pub const GENAI_INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
    /// Output tokens.
    pub const GENAI_OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
    /// Input tokens read from the provider's cache.
    pub const GENAI_CACHE_READ: &str = "gen_ai.usage.cache_read.input_tokens";
    /// Input tokens written to the provider's cache.
    pub const GENAI_CACHE_CREATION: &str = "gen_ai.usage.cache_creation.input_tokens";
    /// The conversation a model call belongs to.
    pub const GENAI_CONVERSATION: &str = "gen_ai.conversation.id";
    /// The trace file the span was read from.
    pub const REEL_FILE: &str = "reel.trace.file";
    /// The line of the trace that opened the span (1-based).
    pub const REEL_LINE: &str = "reel.trace.line";
    /// The run's label (`--name`).
    pub const REEL_LABEL: &str = "reel.session.label";
    /// The recorded command.
    pub const REEL_COMMAND: &str = "reel.session.command";
    /// `mcp`, `llm`, … (the meta line's `kind`).
    pub const REEL_KIND: &str = "reel.session.kind";
    /// `client` (client→server) or `server` (a server→client request).
    pub const REEL_INITIATOR: &str = "reel.initiator";
    /// `pending`: no answer was recorded; `replaced`: the id was reused before one;
    /// `probe_refused`: a `server/discover` probe a legacy server refused (not an error).
    pub const REEL_OUTCOME: &str = "reel.outcome";
    /// The server's exit code (the `end` line).
    pub const REEL_EXIT_CODE: &str = "reel.exit_code";
    /// Time to the first streamed token of a model call, in milliseconds.
    pub const REEL_TTFT_MS: &str = "reel.llm.ttft_ms";
}

/// The longest string attribute value, in bytes: a tool's name or an error message is
/// short; one that is not is cut (a collector refuses requests past a few MiB, and the
/// whole batch with it).
pub const MAX_VALUE: usize = 1024;

/// `s` cut to at most `max` bytes on a character boundary, `…` marking the cut.
pub fn capped(s: impl Into<String>, max: usize) -> String {
    let mut s = s.into();
    if s.len() > max {
        let mut end = max.saturating_sub('…'.len_utf8());
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
}

/// A span's attributes, in the order added.
#[derive(Clone, Debug, Default)]
pub struct Attrs(pub Vec<KeyValue>);

impl Attrs {
    /// Adds a string attribute (cut at [`MAX_VALUE`] bytes).
    pub fn str(&mut self, key: &str, value: impl Into<String>) -> &mut Self {
        self.put(key, Value::StringValue(capped(value, MAX_VALUE)))
    }

    /// Adds a string attribute when there is a value.
    pub fn opt_str(&mut self, key: &str, value: Option<impl Into<String>>) -> &mut Self {
        if let Some(v) = value {
            self.str(key, v);
        }
        self
    }

    /// Adds an integer attribute.
    pub fn int(&mut self, key: &str, value: i64) -> &mut Self {
        self.put(key, Value::IntValue(value))
    }

    /// Adds a floating-point attribute.
    pub fn double(&mut self, key: &str, value: f64) -> &mut Self {
        self.put(key, Value::DoubleValue(value))
    }

    /// Adds a string-array attribute.
    pub fn strs(&mut self, key: &str, values: Vec<String>) -> &mut Self {
        let values = values
            .into_iter()
            .map(|s| AnyValue {
                value: Some(Value::StringValue(s)),
            })
            .collect();
        self.put(key, Value::ArrayValue(ArrayValue { values }))
    }

    /// True when `key` is set.
    pub fn has(&self, key: &str) -> bool {
        self.0.iter().any(|kv| kv.key == key)
    }

    fn put(&mut self, key: &str, value: Value) -> &mut Self {
        self.0.push(KeyValue {
            key: key.to_owned(),
            value: Some(AnyValue { value: Some(value) }),
            ..KeyValue::default()
        });
        self
    }
}
