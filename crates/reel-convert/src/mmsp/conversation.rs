//! One conversation as MMSP saves it, and its `.json` text.
//!
//! The `.json` is MMSP's own shape, as 0.5.6 writes it: two-space indentation,
//! non-ASCII unescaped, no final newline, members in MMSP's order (`role`,
//! `content_items`, `usage_metadata`, `finish_reason`, `created_at`; `type` first in
//! an item), bytes as standard base64, no `fidelity.item_id` (stripped here whatever
//! the caller gives), `model` last in the config, and `timestamp` in UTC with
//! milliseconds and `Z` (RFC-0010 §6, not 0.5.6's naive local time).
//!
//! [`Conversation`] is built from reel's turns ([`Conversation::push_turn`], in
//! `turns.rs`), so a live recorder can push each exchange's new turns and call [`save`](super::save)
//! after each completed response, as MMSP saves before it yields its `stop`.

use base64::Engine as _;
use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::{Map, Value};

use reel_trace::Timestamp;

/// One conversation as MMSP saves it: the history, the config as given, and the model
/// of the client that saved it (added to the config last, as `model`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conversation {
    /// The messages, in order.
    pub history: Vec<Message>,
    /// The config members, in order (`trace_id` kept; a `model` here is replaced).
    pub config: Vec<(String, Value)>,
    /// The model id.
    pub model: String,
}

/// A history message (MMSP's `UniMessage`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message {
    /// `user` or `assistant`.
    pub role: String,
    /// The done items, in order.
    pub content_items: Vec<ContentItem>,
    /// Token usage (assistant messages a stream produced).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_metadata: Option<UsageMetadata>,
    /// `stop`, `length`, `tool_call` or `unknown` (assistant messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// Unix milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_at: Option<i64>,
}

/// MMSP's `usage_metadata`: all four counts, `null` when not reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct UsageMetadata {
    /// Input read from the cache.
    pub cached_tokens: Option<u64>,
    /// Input not read from the cache.
    pub prompt_tokens: Option<u64>,
    /// Output spent thinking.
    pub thoughts_tokens: Option<u64>,
    /// The answer's output.
    pub response_tokens: Option<u64>,
}

impl UsageMetadata {
    /// The four counts, null as 0, summed (the transcript's total).
    pub fn total(&self) -> u64 {
        [
            self.cached_tokens,
            self.prompt_tokens,
            self.thoughts_tokens,
            self.response_tokens,
        ]
        .iter()
        .map(|n| n.unwrap_or(0))
        .fold(0, u64::saturating_add)
    }
}

/// A done content item.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentItem {
    /// `text.done`.
    Text {
        /// The text.
        text: String,
        /// Opaque provider data.
        fidelity: Option<Map<String, Value>>,
    },
    /// `image_url.done`: an http(s) URL or a `data:` URI.
    ImageUrl {
        /// The URL.
        image_url: String,
    },
    /// `inline_data.done`: images, audio.
    InlineData {
        /// The bytes (base64 in the file).
        data: Vec<u8>,
        /// Their type.
        mime_type: String,
        /// Opaque provider data.
        fidelity: Option<Map<String, Value>>,
    },
    /// `thinking.done`.
    Thinking {
        /// The thinking text (`_REDACTED_THINKING` for redacted thinking).
        thinking: String,
        /// Opaque provider data (a signature).
        fidelity: Option<Map<String, Value>>,
    },
    /// `inline_thinking.done`: an image a model thinks with.
    InlineThinking {
        /// The bytes (base64 in the file).
        data: Vec<u8>,
        /// Their type.
        mime_type: String,
        /// Opaque provider data.
        fidelity: Option<Map<String, Value>>,
    },
    /// `tool_call.done`.
    ToolCall {
        /// The tool.
        name: String,
        /// Its arguments, an object.
        arguments: Value,
        /// Paired with a `tool_result.done`.
        tool_call_id: String,
        /// Opaque provider data.
        fidelity: Option<Map<String, Value>>,
    },
    /// `tool_result.done`.
    ToolResult {
        /// The result's text.
        text: String,
        /// Image URLs or `data:` URIs.
        images: Vec<String>,
        /// The call it answers.
        tool_call_id: String,
    },
    /// `embedding.done`.
    Embedding {
        /// The vector.
        embedding: Vec<Value>,
    },
    /// Any other done item, written as it is.
    Other(Map<String, Value>),
}

impl Serialize for ContentItem {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        match self {
            ContentItem::Text { text, fidelity: f } => {
                m.serialize_entry("type", "text.done")?;
                m.serialize_entry("text", text)?;
                serialize_fidelity(&mut m, f)?;
            }
            ContentItem::ImageUrl { image_url } => {
                m.serialize_entry("type", "image_url.done")?;
                m.serialize_entry("image_url", image_url)?;
            }
            ContentItem::InlineData {
                data,
                mime_type,
                fidelity: f,
            } => serialize_inline(&mut m, "inline_data.done", data, mime_type, f)?,
            ContentItem::InlineThinking {
                data,
                mime_type,
                fidelity: f,
            } => serialize_inline(&mut m, "inline_thinking.done", data, mime_type, f)?,
            ContentItem::Thinking {
                thinking,
                fidelity: f,
            } => {
                m.serialize_entry("type", "thinking.done")?;
                m.serialize_entry("thinking", thinking)?;
                serialize_fidelity(&mut m, f)?;
            }
            ContentItem::ToolCall {
                name,
                arguments,
                tool_call_id,
                fidelity: f,
            } => {
                m.serialize_entry("type", "tool_call.done")?;
                m.serialize_entry("name", name)?;
                m.serialize_entry("arguments", arguments)?;
                m.serialize_entry("tool_call_id", tool_call_id)?;
                serialize_fidelity(&mut m, f)?;
            }
            ContentItem::ToolResult {
                text,
                images,
                tool_call_id,
            } => {
                m.serialize_entry("type", "tool_result.done")?;
                m.serialize_entry("text", text)?;
                if !images.is_empty() {
                    m.serialize_entry("images", images)?;
                }
                m.serialize_entry("tool_call_id", tool_call_id)?;
            }
            ContentItem::Embedding { embedding } => {
                m.serialize_entry("type", "embedding.done")?;
                m.serialize_entry("embedding", embedding)?;
            }
            ContentItem::Other(o) => serialize_other(&mut m, o)?,
        }
        m.end()
    }
}

/// An item's `fidelity`, without `item_id`, left out when nothing else remains.
fn serialize_fidelity<M: SerializeMap>(
    m: &mut M,
    fidelity: &Option<Map<String, Value>>,
) -> Result<(), M::Error> {
    let Some(f) = fidelity else { return Ok(()) };
    let mut f = f.clone();
    f.remove("item_id");
    if f.is_empty() {
        return Ok(());
    }
    m.serialize_entry("fidelity", &f)
}

/// An `inline_data.done` or `inline_thinking.done` item: its bytes as standard base64.
fn serialize_inline<M: SerializeMap>(
    m: &mut M,
    ty: &str,
    data: &[u8],
    mime_type: &str,
    fidelity: &Option<Map<String, Value>>,
) -> Result<(), M::Error> {
    m.serialize_entry("type", ty)?;
    m.serialize_entry(
        "data",
        &base64::engine::general_purpose::STANDARD.encode(data),
    )?;
    m.serialize_entry("mime_type", mime_type)?;
    serialize_fidelity(m, fidelity)
}

/// Any other item as it is, `type` first and its `fidelity` without `item_id`.
fn serialize_other<M: SerializeMap>(m: &mut M, o: &Map<String, Value>) -> Result<(), M::Error> {
    if let Some(ty) = o.get("type") {
        m.serialize_entry("type", ty)?;
    }
    for (k, v) in o.iter().filter(|(k, _)| *k != "type") {
        if k == "fidelity" {
            if let Value::Object(f) = v {
                serialize_fidelity(m, &Some(f.clone()))?;
                continue;
            }
        }
        m.serialize_entry(k, v)?;
    }
    Ok(())
}

/// Members serialised in the order given.
struct Ordered<'a>(&'a [(String, Value)], &'a str);

impl Serialize for Ordered<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        for (k, v) in self.0.iter().filter(|(k, _)| k != "model") {
            m.serialize_entry(k, v)?;
        }
        m.serialize_entry("model", self.1)?;
        m.end()
    }
}

#[derive(Serialize)]
struct TraceFile<'a> {
    history: &'a [Message],
    config: Ordered<'a>,
    timestamp: &'a str,
}

impl Conversation {
    /// An empty conversation of `model` with `config`.
    pub fn new(model: impl Into<String>, config: Vec<(String, Value)>) -> Conversation {
        Conversation {
            history: Vec::new(),
            config,
            model: model.into(),
        }
    }

    /// The config as the file holds it: as given, `model` last.
    pub fn config_with_model(&self) -> Vec<(String, Value)> {
        let mut c: Vec<(String, Value)> = self
            .config
            .iter()
            .filter(|(k, _)| k != "model")
            .cloned()
            .collect();
        c.push(("model".into(), self.model.clone().into()));
        c
    }

    /// The value of config member `key`.
    pub fn config_get(&self, key: &str) -> Option<&Value> {
        self.config.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Sets config member `key` (in its place, or last).
    pub fn config_set(&mut self, key: &str, value: Value) {
        match self.config.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value,
            None => self.config.push((key.to_owned(), value)),
        }
    }

    /// The `.json` text of a save at `now`.
    pub fn to_json(&self, now: Timestamp) -> String {
        let iso = now.to_iso();
        let file = TraceFile {
            history: &self.history,
            config: Ordered(&self.config, &self.model),
            timestamp: iso.as_str(),
        };
        // Only string keys and JSON values: serialising cannot fail.
        serde_json::to_string_pretty(&file).unwrap_or_default()
    }
}
