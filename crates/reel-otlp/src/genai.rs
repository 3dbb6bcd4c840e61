//! Model calls as spans, by the OpenTelemetry semantic conventions for GenAI: named
//! `{gen_ai.operation.name} {gen_ai.request.model}`, kind CLIENT, with the provider,
//! the models asked for and answering, the request's `max_tokens`, `temperature` and
//! `top_p`, the finish reason, usage, the server, and errors.
//!
//! Usage comes from the trace's normalised usage (the format's usage invariant: there
//! `input_tokens` excludes cached tokens), converted to the conventions' definition:
//! `gen_ai.usage.input_tokens` = input + cache read + cache creation, the two cache
//! counts also on their own (`gen_ai.usage.cache_read.input_tokens`,
//! `gen_ai.usage.cache_creation.input_tokens`), `gen_ai.usage.output_tokens` as
//! recorded (thinking is part of it). So every provider's call reads the same way.
//!
//! A call is the lines of one HTTP request (`http.req`): its request turns and
//! `llm.request` (written when the response head came), then the assistant turn, or
//! `llm.error` (an error status, or an upstream that could not be reached), or
//! `llm.truncated` (after a partial turn, which says `truncated`), or `llm.exchange`
//! (an endpoint that generates no turn). It is complete when its last line has come.

use opentelemetry_proto::tonic::trace::v1::{Span, Status};
use reel_trace::line::Turn;
use reel_trace::llm::Endpoint;
use serde_json::Value;

use crate::attrs::{Attrs, names};
use crate::ids::TraceParent;
use crate::scope::{SessionScope, error_status};

/// How a model call ended, as far as the lines so far tell.
#[derive(Debug, Default, PartialEq, Eq)]
enum Ending {
    /// Nothing that ends it yet.
    #[default]
    Open,
    /// A complete assistant turn, or an exchange without turns.
    Done,
    /// A partial assistant turn: its `llm.truncated` follows.
    Truncating,
    /// An error or a cut stream.
    Failed,
}

/// One model call being read.
#[derive(Debug, Default)]
pub(crate) struct ModelCall {
    /// Its first line.
    pub line: u64,
    start: u64,
    end: Option<u64>,
    duration_ms: Option<f64>,
    ttft_ms: Option<f64>,
    endpoint: Option<String>,
    url: Option<String>,
    anthropic_header: bool,
    http_status: Option<i64>,
    request_model: Option<String>,
    max_tokens: Option<i64>,
    temperature: Option<f64>,
    top_p: Option<f64>,
    response_model: Option<String>,
    finish_reason: Option<String>,
    usage: Option<reel_trace::line::Usage>,
    conversation: Option<u64>,
    parent: Option<TraceParent>,
    error: Option<(String, String)>,
    ending: Ending,
}

fn str_of(v: &Value, key: &str) -> Option<String> {
    v.get(key)?.as_str().map(str::to_owned)
}

impl ModelCall {
    /// A call whose first line is `line`, at `at`.
    pub fn new(line: u64, at: u64) -> ModelCall {
        ModelCall {
            line,
            start: at,
            ..ModelCall::default()
        }
    }

    /// Reads `llm.request`: `raw` its payload, `body` the request body kept beside it.
    pub fn request(&mut self, raw: &Value, body: Option<&Value>) {
        self.common(raw);
        let headers = raw.get("headers");
        self.anthropic_header = headers.is_some_and(|h| h.get("anthropic-version").is_some());
        if let Some(tp) = headers
            .and_then(|h| h.get("traceparent"))
            .and_then(Value::as_str)
        {
            self.parent = TraceParent::parse(tp);
        }
        if let Some(body) = body {
            self.request_model = str_of(body, "model");
            self.max_tokens = body
                .get("max_tokens")
                .or_else(|| body.get("max_completion_tokens"))
                .or_else(|| body.get("max_output_tokens"))
                .and_then(Value::as_i64);
            self.temperature = body.get("temperature").and_then(Value::as_f64);
            self.top_p = body.get("top_p").and_then(Value::as_f64);
        }
    }

    fn common(&mut self, raw: &Value) {
        if self.endpoint.is_none() {
            self.endpoint = str_of(raw, "endpoint");
        }
        if self.url.is_none() {
            self.url = str_of(raw, "url");
        }
        if let Some(s) = raw.get("status").and_then(Value::as_i64) {
            self.http_status = Some(s);
        }
    }

    /// Reads `llm.error` or (`truncated`) `llm.truncated` at `at`.
    pub fn failed(&mut self, raw: &Value, at: u64, truncated: bool) {
        self.common(raw);
        let (class, message) = if truncated {
            let reason = str_of(raw, "reason").unwrap_or_else(|| "truncated".into());
            // `upstream_error: <what>`: the class is before the colon.
            let class = reason.split(':').next().unwrap_or("truncated").to_owned();
            (class, format!("the response was cut short: {reason}"))
        } else if let Some(error) = str_of(raw, "error") {
            ("upstream_unreachable".to_owned(), error)
        } else {
            let status = self.http_status.unwrap_or(0);
            let message = raw
                .get("body")
                .and_then(|b| b.get("error"))
                .and_then(|e| match e {
                    Value::String(s) => Some(s.clone()),
                    e => str_of(e, "message"),
                })
                .unwrap_or_else(|| format!("HTTP {status}"));
            (status.to_string(), message)
        };
        self.error = Some((class, message));
        self.end = Some(at);
        self.ending = Ending::Failed;
    }

    /// Reads `llm.exchange` (an endpoint that generates no turn) at `at`.
    pub fn exchange(&mut self, raw: &Value, at: u64) {
        self.common(raw);
        self.end = Some(at);
        self.ending = Ending::Done;
    }

    /// Reads a turn of the call at `at`.
    pub fn turn(&mut self, turn: &Turn, at: u64) {
        if self.endpoint.is_none() {
            self.endpoint.clone_from(&turn.endpoint);
        }
        if let Some(n) = turn.extra.get("conversation").and_then(Value::as_u64) {
            self.conversation = Some(n);
        }
        if turn.role.as_deref() != Some("assistant") {
            return;
        }
        self.response_model.clone_from(&turn.model);
        self.usage.clone_from(&turn.usage);
        self.finish_reason.clone_from(&turn.stop_reason);
        if let Some(timing) = &turn.timing {
            self.duration_ms = timing.duration_ms;
            self.ttft_ms = timing.ttft_ms;
        }
        self.end = Some(at);
        if self.ending != Ending::Failed {
            self.ending = if turn.truncated == Some(true) {
                Ending::Truncating
            } else {
                Ending::Done
            };
        }
    }

    /// True when no more lines of this call will come.
    pub fn is_complete(&self) -> bool {
        matches!(self.ending, Ending::Done | Ending::Failed)
    }

    /// When the call ended (its last line so far).
    pub fn end_ns(&self) -> u64 {
        self.end.unwrap_or(self.start)
    }

    /// The span, ending at `end` when no line ended it.
    pub fn into_span(self, s: &SessionScope, end: u64) -> Span {
        let end = self.end.unwrap_or(end);
        // The recorder's own clock: the call began `duration_ms` before its turn.
        let start = match self.duration_ms {
            Some(ms) if ms >= 0.0 => end.saturating_sub((ms * 1e6) as u64),
            _ => self.start,
        };
        let endpoint = self.endpoint.as_deref().unwrap_or_default();
        let (kind, provider) = Endpoint::of(endpoint, self.anthropic_header);
        let operation = operation(kind, endpoint);
        let mut attrs = Attrs::default();
        attrs.opt_str(names::GENAI_OPERATION, operation);
        if !endpoint.is_empty() {
            attrs.str(names::GENAI_PROVIDER, provider.name());
        }
        attrs
            .opt_str(names::GENAI_REQUEST_MODEL, self.request_model.clone())
            .opt_str(names::GENAI_RESPONSE_MODEL, self.response_model.clone());
        if let Some(n) = self.max_tokens {
            attrs.int(names::GENAI_MAX_TOKENS, n);
        }
        if let Some(t) = self.temperature {
            attrs.double(names::GENAI_TEMPERATURE, t);
        }
        if let Some(p) = self.top_p {
            attrs.double(names::GENAI_TOP_P, p);
        }
        if let Some(reason) = &self.finish_reason {
            attrs.strs(names::GENAI_FINISH_REASONS, vec![reason.clone()]);
        }
        if let Some(u) = &self.usage {
            usage(u, &mut attrs);
        }
        if let Some(n) = self.conversation {
            attrs.str(names::GENAI_CONVERSATION, n.to_string());
        }
        if let Some(url) = self
            .url
            .as_deref()
            .and_then(|u| reel_net::http::UpstreamUrl::parse(u).ok())
        {
            attrs
                .str(names::SERVER_ADDRESS, url.host)
                .int(names::SERVER_PORT, i64::from(url.port));
        }
        if let Some(status) = self.http_status {
            attrs.int(names::HTTP_STATUS, status);
        }
        if let Some(ms) = self.ttft_ms {
            attrs.double(names::REEL_TTFT_MS, ms);
        }
        let status: Option<Status> = match &self.error {
            Some((class, message)) => {
                attrs.str(names::ERROR_TYPE, class.clone());
                error_status(message.clone())
            }
            None => None,
        };
        if self.ending == Ending::Open || self.ending == Ending::Truncating {
            attrs.str(names::REEL_OUTCOME, "pending");
        }
        attrs.int(
            names::REEL_LINE,
            i64::try_from(self.line).unwrap_or(i64::MAX),
        );
        let name = match (operation, &self.request_model) {
            (Some(op), Some(model)) => format!("{op} {model}"),
            (Some(op), None) => op.to_owned(),
            (None, _) if endpoint.is_empty() => "model call".to_owned(),
            (None, _) => endpoint.to_owned(),
        };
        s.span(
            self.line,
            name,
            (start, end),
            attrs,
            status,
            self.parent.as_ref(),
        )
    }
}

/// The conventions' operation of an endpoint.
fn operation(kind: Endpoint, endpoint: &str) -> Option<&'static str> {
    match kind {
        Endpoint::Messages
        | Endpoint::ChatCompletions
        | Endpoint::Responses
        | Endpoint::OllamaChat => Some("chat"),
        _ if endpoint.ends_with("/embeddings") => Some("embeddings"),
        _ if endpoint.ends_with("/v1/completions") => Some("text_completion"),
        _ => None,
    }
}

/// `gen_ai.usage.*` from a turn's normalised usage.
fn usage(u: &reel_trace::line::Usage, attrs: &mut Attrs) {
    let int = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let cached =
        u.cache_read_input_tokens.unwrap_or(0) + u.cache_creation_input_tokens.unwrap_or(0);
    if let Some(input) = u.input_tokens {
        attrs.int(names::GENAI_INPUT_TOKENS, int(input + cached));
    }
    if let Some(output) = u.output_tokens {
        attrs.int(names::GENAI_OUTPUT_TOKENS, int(output));
    }
    if let Some(n) = u.cache_read_input_tokens {
        attrs.int(names::GENAI_CACHE_READ, int(n));
    }
    if let Some(n) = u.cache_creation_input_tokens {
        attrs.int(names::GENAI_CACHE_CREATION, int(n));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn operation_of(endpoint: &str) -> Option<&'static str> {
        operation(Endpoint::of(endpoint, false).0, endpoint)
    }

    #[test]
    fn endpoints_name_the_conventions_operation() {
        for chat in [
            "/v1/messages",
            "/v1/chat/completions",
            "/v1/responses",
            "/api/chat",
        ] {
            assert_eq!(operation_of(chat), Some("chat"), "{chat}");
        }
        assert_eq!(operation_of("/v1/embeddings"), Some("embeddings"));
        assert_eq!(operation_of("/v1/completions"), Some("text_completion"));
        assert_eq!(operation_of("/v1/models"), None);
        assert_eq!(operation_of("/v1/messages/count_tokens"), None);
    }

    fn usage_attrs(u: &reel_trace::line::Usage) -> Vec<(String, i64)> {
        let mut attrs = Attrs::default();
        usage(u, &mut attrs);
        attrs
            .0
            .into_iter()
            .map(|kv| {
                let n = match kv.value.and_then(|v| v.value) {
                    Some(opentelemetry_proto::tonic::common::v1::any_value::Value::IntValue(n)) => {
                        n
                    }
                    other => panic!("{}: {other:?}", kv.key),
                };
                (kv.key, n)
            })
            .collect()
    }

    #[test]
    fn usage_counts_cached_input_into_the_input_and_leaves_out_what_was_not_recorded() {
        let u = reel_trace::line::Usage {
            input_tokens: Some(3),
            output_tokens: Some(7),
            cache_read_input_tokens: Some(40),
            ..Default::default()
        };
        assert_eq!(
            usage_attrs(&u),
            [
                (names::GENAI_INPUT_TOKENS.to_owned(), 43),
                (names::GENAI_OUTPUT_TOKENS.to_owned(), 7),
                (names::GENAI_CACHE_READ.to_owned(), 40),
            ]
        );
        // Cache counts without an input count: no input is made up.
        let u = reel_trace::line::Usage {
            cache_creation_input_tokens: Some(5),
            ..Default::default()
        };
        assert_eq!(
            usage_attrs(&u),
            [(names::GENAI_CACHE_CREATION.to_owned(), 5)]
        );
    }
}
