//! reel's turns as MMSP messages ([`Conversation::push_turn`]): blocks back to done
//! items, the reverse of the reader's mapping (`text` → `text.done`, `tool_use` →
//! `tool_call.done`, an `image` with a URL → `image_url.done`, …), usage back to
//! `usage_metadata` (`prompt_tokens` = input + cache writes, `response_tokens` = output
//! − thinking), `stop_reason` back to `finish_reason`. What MMSP has no item for, or
//! what reel no longer holds (inline media summarised to its size and hash), is counted.

use base64::Engine as _;
use serde_json::{Map, Value};

use super::super::Left;
use super::conversation::{ContentItem, Conversation, Message, UsageMetadata};
use super::finish_reason_of;
use reel_trace::Timestamp;
use reel_trace::line::{Block, Turn};

impl Conversation {
    /// Adds `turn` to the history as MMSP holds it, counting in `left` what MMSP has no
    /// place for. A system turn before any message becomes the config's
    /// `system_prompt` (when it has none); a resent (`echoed`) assistant turn is skipped
    /// when the message before is an assistant's (it is that message again); a turn
    /// that did not complete (`truncated`) is left out, as MMSP saves none (RFC-0010 §3);
    /// a `history_elided` marker stands for messages already in the history.
    pub fn push_turn(&mut self, turn: &Turn, left: &mut Left) {
        if turn.truncated == Some(true) {
            left.add("turns cut off before their end");
            return;
        }
        let role = turn.role.as_deref().unwrap_or("user");
        if role == "system" {
            let text = plain_text(turn.blocks());
            if self.history.is_empty() && self.config_get("system_prompt").is_none() {
                self.config_set("system_prompt", text.into());
            } else {
                left.add("system turns");
            }
            return;
        }
        if role == "assistant"
            && turn.is_echoed()
            && self.history.last().is_some_and(|m| m.role == "assistant")
        {
            return;
        }
        let items: Vec<ContentItem> = turn
            .blocks()
            .iter()
            .filter_map(|b| item_of(b, left))
            .collect();
        if items.is_empty() {
            if !turn
                .blocks()
                .iter()
                .all(|b| matches!(b, Block::HistoryElided { .. }))
            {
                left.add("turns with nothing MMSP can hold");
            }
            return;
        }
        let role = if role == "assistant" {
            "assistant"
        } else {
            "user"
        };
        let mut message = Message {
            role: role.into(),
            content_items: items,
            usage_metadata: None,
            finish_reason: None,
            created_at: turn
                .t
                .as_deref()
                .and_then(Timestamp::parse)
                .map(Timestamp::millis),
        };
        if role == "assistant" {
            if let Some(model) = &turn.model {
                if !turn.is_echoed() {
                    self.model.clone_from(model);
                }
            }
            message.usage_metadata = turn.usage.as_ref().map(|u| UsageMetadata {
                cached_tokens: u.cache_read_input_tokens,
                prompt_tokens: match (u.input_tokens, u.cache_creation_input_tokens) {
                    (None, None) => None,
                    (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
                },
                thoughts_tokens: u.thinking_tokens,
                response_tokens: u
                    .output_tokens
                    .map(|o| o.saturating_sub(u.thinking_tokens.unwrap_or(0))),
            });
            message.finish_reason = turn
                .stop_reason
                .as_deref()
                .map(|s| finish_reason_of(s).to_owned());
        }
        self.history.push(message);
    }
}

/// The text of `blocks`, one block a line.
fn plain_text(blocks: &[Block]) -> String {
    let texts: Vec<&str> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    texts.join("\n")
}

fn fidelity_in(extra: &Map<String, Value>) -> Option<Map<String, Value>> {
    match extra.get("fidelity") {
        Some(Value::Object(f)) => Some(f.clone()),
        _ => None,
    }
}

const NO_BYTES: &str = "inline media (reel keeps their size and hash, not their bytes)";

/// Bytes of a base64 `data` member, when the block still has them.
fn data_of(o: &Map<String, Value>) -> Option<Vec<u8>> {
    let d = o.get("data")?.as_str()?;
    base64::engine::general_purpose::STANDARD.decode(d).ok()
}

/// The item for a block, `None` (counted in `left` when something is lost) for one
/// MMSP has no item for.
fn item_of(b: &Block, left: &mut Left) -> Option<ContentItem> {
    Some(match b {
        Block::Text { text, extra } => ContentItem::Text {
            text: text.clone(),
            fidelity: fidelity_in(extra),
        },
        Block::Thinking { thinking, extra } => ContentItem::Thinking {
            thinking: thinking.clone(),
            fidelity: match extra.get("signature") {
                Some(Value::String(s)) => {
                    let mut f = Map::new();
                    f.insert("signature".into(), s.clone().into());
                    Some(f)
                }
                _ => fidelity_in(extra),
            },
        },
        Block::ToolUse {
            id,
            name,
            input,
            extra,
        } => {
            let arguments = match input {
                Value::Object(_) => input.clone(),
                Value::String(s) => match serde_json::from_str::<Value>(s) {
                    Ok(v @ Value::Object(_)) => v,
                    _ => {
                        left.add("tool call arguments that are not an object");
                        Value::Object(Map::new())
                    }
                },
                _ => {
                    left.add("tool call arguments that are not an object");
                    Value::Object(Map::new())
                }
            };
            ContentItem::ToolCall {
                name: name.clone(),
                arguments,
                tool_call_id: id.clone(),
                fidelity: fidelity_in(extra),
            }
        }
        Block::ToolResult {
            tool_use_id,
            content,
            is_error,
            ..
        } => {
            if *is_error == Some(true) {
                left.add("tool error flags");
            }
            let (text, images) = tool_result_parts(content, left);
            ContentItem::ToolResult {
                text,
                images,
                tool_call_id: tool_use_id.clone(),
            }
        }
        Block::HistoryElided { .. } => return None,
        Block::Other(v) => return other_item(v, left),
    })
}

/// A tool result's content as MMSP's text and image URLs.
fn tool_result_parts(content: &Value, left: &mut Left) -> (String, Vec<String>) {
    let parts = match content {
        Value::String(s) => return (s.clone(), Vec::new()),
        Value::Array(parts) => parts,
        Value::Null => return (String::new(), Vec::new()),
        other => return (other.to_string(), Vec::new()),
    };
    let mut texts = Vec::new();
    let mut images = Vec::new();
    for p in parts {
        match p.get("type").and_then(Value::as_str) {
            Some("text") => texts.push(
                p.get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            ),
            Some("image") => match image_url_of(p.get("source")) {
                Some(url) => images.push(url),
                None => left.add(NO_BYTES),
            },
            _ => texts.push(p.to_string()),
        }
    }
    (texts.join("\n"), images)
}

/// An Anthropic image source as a URL (a `data:` URI for base64 data); `None` when its
/// bytes were summarised away.
fn image_url_of(source: Option<&Value>) -> Option<String> {
    let s = source?.as_object()?;
    match s.get("type").and_then(Value::as_str) {
        Some("url") => s.get("url")?.as_str().map(str::to_owned),
        Some("base64") => {
            let data = s.get("data")?.as_str()?;
            let mime = s
                .get("media_type")
                .and_then(Value::as_str)
                .unwrap_or("application/octet-stream");
            Some(format!("data:{mime};base64,{data}"))
        }
        _ => None,
    }
}

/// An image block: its URL, or its bytes when the trace kept them (not only their size
/// and hash).
fn image_item(
    o: &Map<String, Value>,
    fidelity: Option<Map<String, Value>>,
    left: &mut Left,
) -> Option<ContentItem> {
    let source = o.get("source").and_then(Value::as_object);
    match source.and_then(|s| s.get("type")).and_then(Value::as_str) {
        Some("url") => Some(ContentItem::ImageUrl {
            image_url: image_url_of(o.get("source"))?,
        }),
        Some("base64") => {
            let s = source?;
            let Some(data) = data_of(s) else {
                left.add(NO_BYTES);
                return None;
            };
            Some(ContentItem::InlineData {
                data,
                mime_type: s
                    .get("media_type")
                    .and_then(Value::as_str)
                    .unwrap_or("image/png")
                    .to_owned(),
                fidelity,
            })
        }
        _ => {
            left.add(NO_BYTES);
            None
        }
    }
}

fn other_item(v: &Value, left: &mut Left) -> Option<ContentItem> {
    let Some(o) = v.as_object() else {
        left.add("blocks MMSP has no item for");
        return None;
    };
    let ty = o.get("type").and_then(Value::as_str).unwrap_or_default();
    let mime = || {
        o.get("mime_type")
            .and_then(Value::as_str)
            .unwrap_or("application/octet-stream")
            .to_owned()
    };
    let fidelity = fidelity_in(o);
    let no_bytes = |left: &mut Left| {
        left.add(NO_BYTES);
        None
    };
    Some(match ty {
        "image" => return image_item(o, fidelity, left),
        "mmsp.inline_data" | "mmsp.inline_thinking" => {
            let Some(data) = data_of(o) else {
                return no_bytes(left);
            };
            if ty == "mmsp.inline_data" {
                ContentItem::InlineData {
                    data,
                    mime_type: mime(),
                    fidelity,
                }
            } else {
                ContentItem::InlineThinking {
                    data,
                    mime_type: mime(),
                    fidelity,
                }
            }
        }
        "mmsp.embedding" => match o.get("embedding") {
            Some(Value::Array(e)) => ContentItem::Embedding {
                embedding: e.clone(),
            },
            _ => {
                left.add("blocks MMSP has no item for");
                return None;
            }
        },
        "redacted_thinking" => ContentItem::Thinking {
            thinking: "_REDACTED_THINKING".into(),
            fidelity: o.get("data").and_then(Value::as_str).map(|d| {
                let mut f = Map::new();
                f.insert("signature".into(), d.into());
                f
            }),
        },
        t if t.ends_with(".done") => ContentItem::Other(o.clone()),
        _ => {
            left.add("blocks MMSP has no item for");
            return None;
        }
    })
}
