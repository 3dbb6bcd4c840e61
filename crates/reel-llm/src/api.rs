//! The provider APIs reel knows: which endpoint a path is, which provider speaks it, and
//! each provider's error shape (reel's own answers — a bad upstream, a replay miss —
//! must parse as the provider's errors in the client's SDK).

/// The provider whose wire format an endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// Anthropic Messages.
    Anthropic,
    /// OpenAI (and OpenAI-compatible servers: vLLM, Ollama's `/v1`, OpenRouter).
    OpenAi,
    /// Ollama's own API (`/api/chat`, NDJSON streams).
    Ollama,
}

impl Provider {
    /// The name used in traces and messages.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Anthropic => "anthropic",
            Provider::OpenAi => "openai",
            Provider::Ollama => "ollama",
        }
    }
}

/// What an endpoint is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// `POST /v1/messages` (Anthropic).
    Messages,
    /// `POST /v1/chat/completions` (OpenAI).
    ChatCompletions,
    /// `POST /v1/responses` (OpenAI).
    Responses,
    /// `POST /api/chat` (Ollama).
    OllamaChat,
    /// A recognised endpoint that generates nothing reel assembles into turns
    /// (`count_tokens`, `models`, `embeddings`, legacy `completions`): a compact
    /// `llm.exchange`.
    NonGeneration,
    /// Anything else: a tolerant `llm.exchange` with the response body.
    Other,
}

/// Paths reel recognises, with their endpoint and provider.
const KNOWN: &[(&str, Endpoint, Provider)] = &[
    ("/v1/messages", Endpoint::Messages, Provider::Anthropic),
    (
        "/v1/messages/count_tokens",
        Endpoint::NonGeneration,
        Provider::Anthropic,
    ),
    (
        "/v1/chat/completions",
        Endpoint::ChatCompletions,
        Provider::OpenAi,
    ),
    ("/v1/responses", Endpoint::Responses, Provider::OpenAi),
    ("/v1/completions", Endpoint::NonGeneration, Provider::OpenAi),
    ("/v1/embeddings", Endpoint::NonGeneration, Provider::OpenAi),
    ("/v1/models", Endpoint::NonGeneration, Provider::OpenAi),
    ("/api/chat", Endpoint::OllamaChat, Provider::Ollama),
];

impl Endpoint {
    /// The endpoint of `path` (no query, map prefix stripped) and the provider whose
    /// format it speaks. A request carrying `anthropic-version` is Anthropic's whatever
    /// its path (both providers serve `/v1/models`); other unknown paths are OpenAI's.
    pub fn of(path: &str, anthropic_header: bool) -> (Endpoint, Provider) {
        let path = path.trim_end_matches('/');
        let known = KNOWN.iter().find(|(p, _, _)| *p == path);
        let endpoint = known.map_or(Endpoint::Other, |k| k.1);
        let provider = if anthropic_header {
            Provider::Anthropic
        } else {
            known.map_or(Provider::OpenAi, |k| k.2)
        };
        (endpoint, provider)
    }

    /// True for the endpoints whose exchanges become turn records.
    pub fn generates(self) -> bool {
        matches!(
            self,
            Endpoint::Messages
                | Endpoint::ChatCompletions
                | Endpoint::Responses
                | Endpoint::OllamaChat
        )
    }
}

/// The kind of an error reel answers with itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The upstream could not be reached or broke off (502).
    BadGateway,
    /// No route for the path (404).
    NoRoute,
    /// Replay: the tape has no answer for the request (404).
    Miss,
    /// The request cannot be read (400).
    BadRequest,
}

impl Failure {
    /// The HTTP status reel answers with.
    pub fn status(self) -> u16 {
        match self {
            Failure::BadGateway => 502,
            Failure::NoRoute | Failure::Miss => 404,
            Failure::BadRequest => 400,
        }
    }

    fn anthropic_type(self) -> &'static str {
        match self {
            Failure::BadGateway => "api_error",
            Failure::NoRoute | Failure::Miss => "not_found_error",
            Failure::BadRequest => "invalid_request_error",
        }
    }

    fn openai_code(self) -> &'static str {
        match self {
            Failure::BadGateway => "bad_gateway",
            Failure::NoRoute => "unknown_url",
            Failure::Miss => "reel_tape_miss",
            Failure::BadRequest => "invalid_request",
        }
    }
}

/// An error body in `provider`'s own shape: Anthropic
/// `{"type":"error","error":{"type","message"}}`, OpenAI
/// `{"error":{"message","type","param","code"}}`, Ollama `{"error":"…"}`.
pub fn error_body(provider: Provider, failure: Failure, message: &str) -> Vec<u8> {
    let v = match provider {
        Provider::Anthropic => serde_json::json!({
            "type": "error",
            "error": { "type": failure.anthropic_type(), "message": message },
        }),
        Provider::OpenAi => serde_json::json!({
            "error": {
                "message": message,
                "type": if failure == Failure::BadRequest { "invalid_request_error" } else { "reel_error" },
                "param": null,
                "code": failure.openai_code(),
            },
        }),
        Provider::Ollama => serde_json::json!({ "error": message }),
    };
    serde_json::to_vec(&v).unwrap_or_default()
}

/// The whole HTTP answer reel gives with [`error_body`]: the failure's status and a JSON
/// body in the provider's shape (the proxy's own errors and replay's misses alike).
pub fn error_response(
    provider: Provider,
    failure: Failure,
    message: &str,
) -> http::Response<reel_mcp::reply::Reply> {
    let mut r = http::Response::new(reel_mcp::reply::Reply::full(error_body(
        provider, failure, message,
    )));
    *r.status_mut() =
        http::StatusCode::from_u16(failure.status()).unwrap_or(http::StatusCode::BAD_GATEWAY);
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_classified_and_the_anthropic_header_wins() {
        assert_eq!(
            Endpoint::of("/v1/messages", false),
            (Endpoint::Messages, Provider::Anthropic)
        );
        assert_eq!(
            Endpoint::of("/v1/models", true),
            (Endpoint::NonGeneration, Provider::Anthropic)
        );
        assert_eq!(
            Endpoint::of("/v1/models", false),
            (Endpoint::NonGeneration, Provider::OpenAi)
        );
        assert_eq!(
            Endpoint::of("/v1/files", false),
            (Endpoint::Other, Provider::OpenAi)
        );
    }

    #[test]
    fn error_bodies_have_the_provider_shape() {
        let a: serde_json::Value =
            serde_json::from_slice(&error_body(Provider::Anthropic, Failure::Miss, "m")).unwrap();
        assert_eq!(a["type"], "error");
        assert_eq!(a["error"]["type"], "not_found_error");
        let o: serde_json::Value =
            serde_json::from_slice(&error_body(Provider::OpenAi, Failure::BadGateway, "m"))
                .unwrap();
        assert_eq!(o["error"]["message"], "m");
    }
}
