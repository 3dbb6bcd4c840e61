//! Usage normalisation (format.md, "Usage invariant"): `input_tokens` excludes
//! cache reads and writes; `thinking_tokens` is a subset of `output_tokens`.
//! Anthropic reports that shape already; OpenAI's `prompt_tokens` include
//! `cached_tokens` (so `input_tokens = prompt_tokens − cached_tokens`), and its
//! `reasoning_tokens` are part of `completion_tokens`. Ollama reports
//! `prompt_eval_count` and `eval_count`.

use serde_json::Value;

use crate::api::Endpoint;

/// Token counts as the provider reported them, before normalisation.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Reported {
    /// Prompt tokens as the provider counts them (OpenAI's include cached tokens).
    pub input: Option<u64>,
    /// Output tokens.
    pub output: Option<u64>,
    /// Cache reads.
    pub cache_read: Option<u64>,
    /// Cache writes.
    pub cache_creation: Option<u64>,
    /// Reasoning tokens (OpenAI), part of `output`.
    pub reasoning: Option<u64>,
}

fn n(v: &Value, path: &[&str]) -> Option<u64> {
    let mut v = v;
    for p in path {
        v = v.get(p)?;
    }
    v.as_u64()
}

/// Reads a provider's `usage` object (Anthropic, chat completions, Responses)
/// into `r`, keeping what an earlier report gave and the new one lacks.
pub fn read(endpoint: Endpoint, u: &Value, r: &mut Reported) {
    let set = |slot: &mut Option<u64>, v: Option<u64>| {
        if v.is_some() {
            *slot = v;
        }
    };
    match endpoint {
        Endpoint::Messages => {
            set(&mut r.input, n(u, &["input_tokens"]));
            set(&mut r.output, n(u, &["output_tokens"]));
            set(&mut r.cache_read, n(u, &["cache_read_input_tokens"]));
            set(
                &mut r.cache_creation,
                n(u, &["cache_creation_input_tokens"]),
            );
        }
        Endpoint::Responses => {
            set(&mut r.input, n(u, &["input_tokens"]));
            set(&mut r.output, n(u, &["output_tokens"]));
            set(
                &mut r.cache_read,
                n(u, &["input_tokens_details", "cached_tokens"]),
            );
            set(
                &mut r.reasoning,
                n(u, &["output_tokens_details", "reasoning_tokens"]),
            );
        }
        Endpoint::OllamaChat => {
            set(&mut r.input, n(u, &["prompt_eval_count"]));
            set(&mut r.output, n(u, &["eval_count"]));
        }
        _ => {
            set(&mut r.input, n(u, &["prompt_tokens"]));
            set(&mut r.output, n(u, &["completion_tokens"]));
            set(
                &mut r.cache_read,
                n(u, &["prompt_tokens_details", "cached_tokens"]),
            );
            set(
                &mut r.reasoning,
                n(u, &["completion_tokens_details", "reasoning_tokens"]),
            );
        }
    }
}

/// The turn's `usage`, normalised; `None` when nothing was reported.
pub fn normalise(endpoint: Endpoint, r: Reported) -> Option<reel_trace::line::Usage> {
    if r == Reported::default() {
        return None;
    }
    let includes_cached = !matches!(endpoint, Endpoint::Messages | Endpoint::OllamaChat);
    let input = match (r.input, r.cache_read) {
        (Some(i), Some(c)) if includes_cached => Some(i.saturating_sub(c)),
        (i, _) => i,
    };
    Some(reel_trace::line::Usage {
        input_tokens: input,
        output_tokens: r.output,
        cache_read_input_tokens: r.cache_read,
        cache_creation_input_tokens: r.cache_creation,
        thinking_tokens: r.reasoning.filter(|&t| t > 0),
        ..Default::default()
    })
}
