//! MMSP tracer files (MMSP-RFC-0010): `<trace id>.json`, `{"history": […], "config": {…},
//! "timestamp": "…"}`, one conversation at its latest save, read into turns; and the
//! tracer's writer ([`save`]) with [`export`] of a reel trace through it.
//!
//! Reading (this file): each history message is one turn, in order. Item types of 0.5.x
//! (`text.done`, `tool_call.done`, …) and those written before 0.5.0 (`text`,
//! `tool_call`, …) are read alike, as MMSP-RFC-0009 §7 converts them: the legacy name
//! gains `.done`, a stray `partial_tool_call` (a streaming fragment) is dropped. Items
//! become provider-shaped blocks, as reel's LLM recorder writes them:
//! - `text.done` → `text`; `thinking.done` → `thinking`, its `fidelity` (the provider's
//!   signature or encrypted reasoning) dropped as format.md says producers should; the
//!   `_REDACTED_THINKING` sentinel → `redacted_thinking`;
//! - `tool_call.done` → `tool_use`; `tool_result.done` → `tool_result` (its `images` as
//!   image parts of `content`);
//! - `image_url.done` and image `inline_data.done` → `image` blocks; other inline data,
//!   `inline_thinking.done` and `embedding.done` → `mmsp.inline_data`,
//!   `mmsp.inline_thinking`, `mmsp.embedding` blocks. Inline bytes are replaced by
//!   `data_bytes` and `data_sha256` (of the base64 text, as reel's LLM recorder does), so
//!   a trace does not carry the media itself;
//! - `fidelity` of any other item is kept, `item_id` removed, as the block's `fidelity`;
//! - an item of a type reel does not know is kept whole as a block of that type.
//!
//! An assistant message carries `model` (`config.model`), `usage` (MMSP's
//! `usage_metadata`, mapped as [`usage_of`] says), `stop_reason` (from `finish_reason`:
//! `stop` → `end_turn`, `length` → `max_tokens`, `tool_call` → `tool_use`) and, when
//! the message before it has a `created_at`, `timing.duration_ms`. Times are each
//! message's `created_at` (Unix milliseconds), else the file's `timestamp` (read as UTC
//! when it has no offset, as 0.5.6 writes local time without one).

use std::path::Path;

use serde_json::{Map, Value, json};

use super::{ConvertError, Converted, Fault, Item, Problem, parse_time, read_document};
use reel_trace::Timestamp;
use reel_trace::hash::sha256_hex;
use reel_trace::line::{Block, Timing, Turn, Usage};

mod conversation;
mod export;
mod transcript;
mod turns;
mod writer;

pub use conversation::{ContentItem, Conversation, Message, UsageMetadata};
pub use export::{export, request_config};
pub use writer::{CLIENT, MmspError, save, trace_files};

/// What the format cannot hold.
pub const LIMITS: &str = "MMSP traces hold one LLM conversation at its latest save: no MCP \
     traffic, no request or response bodies, no stream timing (only each message's \
     created_at, and none before 0.5.0), no failed or cut-off turns; reel keeps inline media \
     as its size and SHA-256 and drops thinking signatures";

/// The first member name of an MMSP trace.
const HISTORY: &[u8] = b"\"history\"";

/// True when the file starting with `head` is an MMSP trace: a JSON object whose first
/// member is `history`, an array that is empty or holds `content_items`.
pub fn looks_like(head: &[u8]) -> bool {
    let rest = skip_ws(head);
    let Some(rest) = rest.strip_prefix(b"{") else {
        return false;
    };
    let Some(rest) = skip_ws(rest).strip_prefix(HISTORY) else {
        return false;
    };
    let Some(rest) = skip_ws(rest).strip_prefix(b":") else {
        return false;
    };
    let Some(rest) = skip_ws(rest).strip_prefix(b"[") else {
        return false;
    };
    let rest = skip_ws(rest);
    if rest.starts_with(b"]") {
        return true;
    }
    rest.starts_with(b"{") && memchr::memmem::find(rest, b"\"content_items\"").is_some()
}

fn skip_ws(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    &b[n..]
}

/// Converts the MMSP trace at `path`.
pub fn convert(path: &Path) -> Result<Converted, ConvertError> {
    let bytes = read_document(path)?;
    convert_bytes(&bytes)
}

/// Converts an MMSP trace held in `bytes`.
fn convert_bytes(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let doc: Value = serde_json::from_slice(bytes)
        .map_err(|e| ConvertError::Invalid(format!("not a JSON document: {e}")))?;
    let Value::Object(mut doc) = doc else {
        return Err(ConvertError::Invalid("not a JSON object".into()));
    };
    let history = match doc.remove("history") {
        Some(Value::Array(h)) => h,
        Some(_) => return Err(ConvertError::Invalid("`history` is not an array".into())),
        None => return Err(ConvertError::Invalid("no `history`".into())),
    };
    if history.is_empty() {
        return Err(ConvertError::Empty);
    }
    let config = match doc.remove("config") {
        Some(Value::Object(c)) => c,
        None | Some(Value::Null) => Map::new(),
        Some(_) => return Err(ConvertError::Invalid("`config` is not an object".into())),
    };
    let mut warnings = Vec::new();
    // The save time only stands in for a message's own time: said when it does.
    let undated = history.iter().any(|m| created_at(m).is_none());
    let saved = match doc.get("timestamp") {
        Some(Value::String(s)) => match parse_time(s) {
            Some((t, naive)) => {
                if naive && undated {
                    warnings.push(format!(
                        "the save time {s:?} has no offset (MMSP before RFC-0010 writes local \
                         time): read as UTC"
                    ));
                }
                Some(t)
            }
            None => {
                warnings.push(format!("the save time {s:?} is not a date-time"));
                None
            }
        },
        _ => None,
    };
    let model = config
        .get("model")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut facts = Map::new();
    if let Some(id) = config.get("trace_id").and_then(Value::as_str) {
        facts.insert("trace_id".into(), id.into());
    }
    if let Some(s) = doc.get("timestamp") {
        facts.insert("timestamp".into(), s.clone());
    }
    let fallback = saved.or_else(|| first_created_at(&history));
    if fallback.is_none() {
        warnings.push("no message has a time (created_at), and the file has no save time".into());
    }
    let fallback = fallback.unwrap_or(Timestamp(0));
    let mut reader = HistoryReader {
        model,
        last: None,
        fallback,
        legacy: false,
    };
    let items: Vec<Result<Item, Fault>> = history
        .iter()
        .enumerate()
        .map(|(i, m)| reader.message(i, m))
        .collect();
    let started = first_created_at(&history).map_or(fallback, |t| t.min(fallback));
    if reader.legacy {
        facts.insert("legacy".into(), true.into());
    }
    facts.insert("config".into(), Value::Object(config));
    Ok(Converted {
        kind: "llm",
        transport: None,
        started,
        facts,
        warnings,
        items: Box::new(items.into_iter()),
    })
}

fn first_created_at(history: &[Value]) -> Option<Timestamp> {
    history.iter().find_map(created_at)
}

fn created_at(m: &Value) -> Option<Timestamp> {
    let v = m.get("created_at")?;
    let ms = v.as_i64().or_else(|| {
        v.as_f64()
            .filter(|f| f.is_finite() && f.abs() < 9.0e15)
            .map(|f| f as i64)
    })?;
    Some(Timestamp(ms))
}

/// Walks the history: what a message needs from the ones before it.
struct HistoryReader {
    model: Option<String>,
    /// The `created_at` of the message before.
    last: Option<Timestamp>,
    /// The time of a message without `created_at`.
    fallback: Timestamp,
    /// A pre-0.5.0 item type was met.
    legacy: bool,
}

impl HistoryReader {
    fn message(&mut self, index: usize, m: &Value) -> Result<Item, Fault> {
        let bad = |reason: String| {
            Fault::Bad(
                Problem {
                    line: index as u64 + 1,
                    reason: format!("message {}: {reason}", index + 1),
                },
                m.to_string().into_bytes(),
            )
        };
        let role = match m.get("role").and_then(Value::as_str) {
            Some(r @ ("user" | "assistant")) => r,
            Some(r) => return Err(bad(format!("role {r:?} is neither user nor assistant"))),
            None => return Err(bad("no role".into())),
        };
        let Some(items) = m.get("content_items").and_then(Value::as_array) else {
            return Err(bad("no content_items array".into()));
        };
        let mut blocks = Vec::with_capacity(items.len());
        for (k, item) in items.iter().enumerate() {
            match self.block(item) {
                Ok(Some(b)) => blocks.push(b),
                Ok(None) => {}
                Err(reason) => return Err(bad(format!("item {}: {reason}", k + 1))),
            }
        }
        let created = created_at(m);
        let t = created.unwrap_or(self.fallback);
        let mut turn = Turn::new(role, blocks);
        turn.source = Some("mmsp".into());
        if role == "assistant" {
            turn.model = self.model.clone();
            turn.usage = m.get("usage_metadata").and_then(usage_of);
            turn.stop_reason = m
                .get("finish_reason")
                .and_then(Value::as_str)
                .map(stop_reason_of);
            if let (Some(now), Some(before)) = (created, self.last) {
                if now >= before {
                    turn.timing = Some(Timing {
                        ttft_ms: None,
                        duration_ms: Some((now.0 - before.0) as f64),
                        extra: Map::new(),
                    });
                }
            }
        }
        if created.is_some() {
            self.last = created;
        }
        Ok(Item::Turn {
            t,
            turn: Box::new(turn),
        })
    }

    /// The block for one item; `None` for an item that is dropped (`partial_tool_call`).
    fn block(&mut self, item: &Value) -> Result<Option<Block>, String> {
        let Some(o) = item.as_object() else {
            return Err("not an object".into());
        };
        let Some(ty) = o.get("type").and_then(Value::as_str) else {
            return Err("no type".into());
        };
        if ty == "partial_tool_call" {
            self.legacy = true;
            return Ok(None);
        }
        let kind = match ty.strip_suffix(".done") {
            Some(k) if is_legacy(k) => k,
            None if is_legacy(ty) => {
                self.legacy = true;
                ty
            }
            _ => return Ok(Some(Block::Other(item.clone()))),
        };
        block_of(kind, o).map(Some)
    }
}

/// The current (0.5.x) name of an item type, as MMSP-RFC-0009 §7 converts a trace written
/// before 0.5.0: a legacy type (`text`, `tool_call`, …) gains `.done`, a
/// `partial_tool_call` (a streaming fragment) is dropped (`None`), and any other type,
/// current or unknown, is kept as it is.
pub fn current_item_type(ty: &str) -> Option<std::borrow::Cow<'_, str>> {
    use std::borrow::Cow;
    if ty == "partial_tool_call" {
        None
    } else if is_legacy(ty) {
        Some(Cow::Owned(format!("{ty}.done")))
    } else {
        Some(Cow::Borrowed(ty))
    }
}

/// The item types written before 0.5.0 (MMSP-RFC-0009 §7).
fn is_legacy(ty: &str) -> bool {
    matches!(
        ty,
        "text"
            | "image_url"
            | "inline_data"
            | "thinking"
            | "inline_thinking"
            | "tool_call"
            | "tool_result"
            | "embedding"
    )
}

fn str_of<'a>(o: &'a Map<String, Value>, k: &str) -> Result<&'a str, String> {
    o.get(k)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("no string `{k}`"))
}

/// An item's `fidelity` without `item_id`, when anything is left of it.
fn fidelity_of(o: &Map<String, Value>) -> Map<String, Value> {
    let mut extra = Map::new();
    if let Some(Value::Object(f)) = o.get("fidelity") {
        let mut f = f.clone();
        f.remove("item_id");
        if !f.is_empty() {
            extra.insert("fidelity".into(), Value::Object(f));
        }
    }
    extra
}

/// `data` (base64 text) as reel keeps inline media: its size and SHA-256.
fn summarised(o: &Map<String, Value>) -> Result<(u64, String), String> {
    let data = str_of(o, "data")?;
    Ok((data.len() as u64, sha256_hex(data.as_bytes())))
}

fn block_of(kind: &str, o: &Map<String, Value>) -> Result<Block, String> {
    Ok(match kind {
        "text" => Block::Text {
            text: str_of(o, "text")?.to_owned(),
            extra: fidelity_of(o),
        },
        "thinking" => {
            let thinking = str_of(o, "thinking")?;
            if thinking == "_REDACTED_THINKING" {
                Block::Other(json!({"type": "redacted_thinking"}))
            } else {
                Block::Thinking {
                    thinking: thinking.to_owned(),
                    extra: Map::new(),
                }
            }
        }
        "tool_call" => tool_use_of(o)?,
        "tool_result" => tool_result_of(o)?,
        "image_url" => {
            Block::Other(json!({"type": "image", "source": url_source(str_of(o, "image_url")?)}))
        }
        "inline_data" => inline_data_of(o)?,
        "inline_thinking" => {
            let mime = str_of(o, "mime_type")?;
            let (n, sha) = summarised(o)?;
            Block::Other(json!({"type": "mmsp.inline_thinking", "mime_type": mime,
                                "data_bytes": n, "data_sha256": sha}))
        }
        "embedding" => match o.get("embedding") {
            Some(v @ Value::Array(_)) => {
                Block::Other(json!({"type": "mmsp.embedding", "embedding": v}))
            }
            _ => return Err("no `embedding` array".into()),
        },
        _ => return Err(format!("unknown item kind {kind:?}")),
    })
}

/// A `tool_call` item: a tool use, its arguments read as JSON when they are a string
/// that holds some.
fn tool_use_of(o: &Map<String, Value>) -> Result<Block, String> {
    let input = match o.get("arguments") {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::String(s.clone())),
        Some(v) => v.clone(),
        None => return Err("no `arguments`".into()),
    };
    Ok(Block::ToolUse {
        id: str_of(o, "tool_call_id")?.to_owned(),
        name: str_of(o, "name")?.to_owned(),
        input,
        extra: fidelity_of(o),
    })
}

/// A `tool_result` item: its text, and its images after it as image parts.
fn tool_result_of(o: &Map<String, Value>) -> Result<Block, String> {
    let text = str_of(o, "text")?;
    let images: Vec<&str> = match o.get("images") {
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let content = if images.is_empty() {
        Value::String(text.to_owned())
    } else {
        let mut parts = vec![json!({"type": "text", "text": text})];
        parts.extend(
            images
                .iter()
                .map(|u| json!({"type": "image", "source": url_source(u)})),
        );
        Value::Array(parts)
    };
    Ok(Block::ToolResult {
        tool_use_id: str_of(o, "tool_call_id")?.to_owned(),
        content,
        is_error: None,
        extra: Map::new(),
    })
}

/// An `inline_data` item, summarised: an image block for an image, else
/// `mmsp.inline_data`.
fn inline_data_of(o: &Map<String, Value>) -> Result<Block, String> {
    let mime = str_of(o, "mime_type")?;
    let (n, sha) = summarised(o)?;
    let mut b = if mime.starts_with("image/") {
        json!({"type": "image", "source": {"type": "base64", "media_type": mime,
               "data_bytes": n, "data_sha256": sha}})
    } else {
        json!({"type": "mmsp.inline_data", "mime_type": mime,
               "data_bytes": n, "data_sha256": sha})
    };
    with_fidelity(&mut b, o);
    Ok(Block::Other(b))
}

fn with_fidelity(b: &mut Value, o: &Map<String, Value>) {
    if let (Value::Object(b), Some(f)) = (b, fidelity_of(o).remove("fidelity")) {
        b.insert("fidelity".into(), f);
    }
}

/// An image URL as an Anthropic image source: a `data:` URI summarised like inline data.
fn url_source(url: &str) -> Value {
    if let Some(rest) = url.strip_prefix("data:") {
        if let Some((head, data)) = rest.split_once(',') {
            let media_type = head.split(';').next().unwrap_or_default();
            return json!({"type": "base64", "media_type": media_type,
                          "data_bytes": data.len(), "data_sha256": sha256_hex(data.as_bytes())});
        }
    }
    json!({"type": "url", "url": url})
}

/// MMSP's `usage_metadata` as reel's usage (research: mmsp.md §1.5): `prompt_tokens`
/// (input not read from the cache) → `input_tokens`, `cached_tokens` →
/// `cache_read_input_tokens`, `thoughts_tokens + response_tokens` → `output_tokens`,
/// `thoughts_tokens` → `thinking_tokens`; a null count stays unknown. MMSP does not
/// tell cache writes apart: they are in `prompt_tokens`.
pub fn usage_of(u: &Value) -> Option<Usage> {
    let o = u.as_object()?;
    let n = |k: &str| o.get(k).and_then(Value::as_u64);
    let (thoughts, response) = (n("thoughts_tokens"), n("response_tokens"));
    let output = match (thoughts, response) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
    };
    Some(Usage {
        input_tokens: n("prompt_tokens"),
        output_tokens: output,
        cache_read_input_tokens: n("cached_tokens"),
        cache_creation_input_tokens: None,
        thinking_tokens: thoughts,
        extra: Map::new(),
    })
}

/// MMSP's `finish_reason` as an Anthropic `stop_reason` (any other value kept).
pub fn stop_reason_of(finish: &str) -> String {
    match finish {
        "stop" => "end_turn",
        "length" => "max_tokens",
        "tool_call" => "tool_use",
        other => other,
    }
    .to_owned()
}

/// A `stop_reason` (Anthropic's, OpenAI's, or one [`stop_reason_of`] kept) as MMSP's
/// `finish_reason`: `stop`, `length`, `tool_call` or `unknown`.
pub fn finish_reason_of(stop: &str) -> &'static str {
    match stop {
        "end_turn" | "stop_sequence" | "stop" | "STOP" | "completed" => "stop",
        "max_tokens" | "length" | "MAX_TOKENS" | "max_output_tokens" => "length",
        "tool_use" | "tool_calls" | "function_call" | "tool_call" => "tool_call",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod current_item_type_tests {
    use super::current_item_type;

    #[test]
    fn legacy_types_gain_done_and_partial_tool_calls_are_dropped() {
        assert_eq!(current_item_type("text").as_deref(), Some("text.done"));
        assert_eq!(
            current_item_type("tool_result").as_deref(),
            Some("tool_result.done")
        );
        assert_eq!(
            current_item_type("embedding").as_deref(),
            Some("embedding.done")
        );
        assert_eq!(current_item_type("partial_tool_call"), None);
        assert_eq!(current_item_type("text.done").as_deref(), Some("text.done"));
        assert_eq!(
            current_item_type("text.delta").as_deref(),
            Some("text.delta")
        );
        assert_eq!(current_item_type("custom").as_deref(), Some("custom"));
    }
}
