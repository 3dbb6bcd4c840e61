//! # reel-llm
//!
//! The second plane of a trace: an agent's LLM API traffic. [`proxy`] is the recording
//! proxy behind `reel llm` (Anthropic Messages, OpenAI chat completions and Responses,
//! Ollama's chat; SSE and NDJSON streamed through as they arrive); [`replay`] serves a
//! recorded llm trace as the provider, offline and byte for byte (`reel llm --play`).
//!
//! The parts:
//! - [`api`]: endpoints, providers and their error shapes;
//! - [`route`]: which upstream a path goes to (`--upstream`, `--map`);
//! - [`request`]: a request body's facts and its conversation as turn records;
//! - [`response`]: the assistant turn assembled from a response, usage normalised;
//! - [`history`]: which leading messages are already on the tape (`history_elided`);
//! - [`headers`]: what the trace keeps of the headers;
//! - [`tape`]: the lines of an llm trace, and what replay needs of them.

#![deny(missing_docs)]

pub mod api;
pub mod headers;
pub mod history;
pub mod mmsp;
pub mod proxy;
pub mod replay;
pub mod request;
pub mod response;
pub mod route;
pub mod seams;
pub mod tape;

pub use proxy::{Finished, LlmConfig, LlmError, LlmRecorder, Notice, NoticeFn, RunEnd};
