//! reel's event kinds: the `kind` values of the extension lines reel writes.

/// A stdio line that is not JSON (or not UTF-8), kept losslessly.
pub const NONJSON: &str = "reel.nonjson";
/// A chunk of the server's stderr.
pub const STDERR: &str = "reel.stderr";
/// Lines the recorder dropped (only with `--drop-when-behind`).
pub const GAP: &str = "reel.gap";
/// An HTTP exchange without a JSON-RPC message (a GET stream, DELETE, OAuth
/// discovery, a 202), or one that failed or was refused.
pub const HTTP: &str = "reel.http";
/// An SSE event without JSON data (a priming event, a legacy `endpoint` event).
pub const SSE: &str = "reel.sse";
/// A piece of an LLM response body as it arrived (an SSE event, an NDJSON line, a
/// whole body), what `reel llm --play` answers with.
pub const LLM_BODY: &str = "reel.llm.body";
/// Prefix of every kind reel defines.
pub const PREFIX: &str = "reel.";
/// LLM addendum: one recorded generation exchange.
pub const LLM_REQUEST: &str = "llm.request";
/// LLM addendum: an exchange without turn records.
pub const LLM_EXCHANGE: &str = "llm.exchange";
/// LLM addendum: an upstream or routing failure.
pub const LLM_ERROR: &str = "llm.error";
/// LLM addendum: a stream severed before its natural end.
pub const LLM_TRUNCATED: &str = "llm.truncated";
