//! The LLM provider APIs as a trace records them: which endpoint a request path is and
//! which provider speaks it. The recorder routes and assembles turns by it (`reel-llm`),
//! and readers of a recording (the OTLP export) name the provider and the operation of a
//! recorded call by it, from the `endpoint` the trace keeps.

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
}
