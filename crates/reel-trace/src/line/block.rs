//! The content blocks of a turn: the known types typed, any other block kept verbatim.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// A content block of a turn. Known types are typed; any other block (or a known type
/// missing its members) is kept whole as [`Block::Other`].
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// `thinking`.
    Thinking {
        /// The thinking text.
        thinking: String,
        /// Other members (e.g. a provider `signature`).
        extra: Map<String, Value>,
    },
    /// `text`.
    Text {
        /// The text.
        text: String,
        /// Other members.
        extra: Map<String, Value>,
    },
    /// `tool_use`.
    ToolUse {
        /// Id, paired with a later `tool_result.tool_use_id`.
        id: String,
        /// Tool name.
        name: String,
        /// Arguments.
        input: Value,
        /// Other members.
        extra: Map<String, Value>,
    },
    /// `tool_result`.
    ToolResult {
        /// The `tool_use` this answers.
        tool_use_id: String,
        /// A string or an array of content parts.
        content: Value,
        /// True when the tool failed.
        is_error: Option<bool>,
        /// Other members (e.g. `structured`).
        extra: Map<String, Value>,
    },
    /// `history_elided` (LLM addendum): the first `count` request messages were elided.
    HistoryElided {
        /// How many leading messages were elided.
        count: u64,
        /// Rolling hash of the elided prefix.
        sha256: String,
        /// SHA-256 of the request body.
        request_sha256: Option<String>,
        /// Other members.
        extra: Map<String, Value>,
    },
    /// Any other block, kept verbatim.
    Other(Value),
}

impl Block {
    /// The block's `type`, when it has one.
    pub fn type_name(&self) -> Option<&str> {
        Some(match self {
            Block::Thinking { .. } => "thinking",
            Block::Text { .. } => "text",
            Block::ToolUse { .. } => "tool_use",
            Block::ToolResult { .. } => "tool_result",
            Block::HistoryElided { .. } => "history_elided",
            Block::Other(v) => return v.get("type").and_then(Value::as_str),
        })
    }

    /// A block read from JSON: typed when its `type` is known and it has that type's
    /// members with the right JSON types, else kept whole as [`Block::Other`].
    fn from_value(v: Value) -> Block {
        let Value::Object(m) = v else {
            return Block::Other(v);
        };
        match Shape::of(&m) {
            Some(Shape::Thinking) => Block::thinking(m),
            Some(Shape::Text) => Block::text(m),
            Some(Shape::ToolUse) => Block::tool_use(m),
            Some(Shape::ToolResult) => Block::tool_result(m),
            Some(Shape::HistoryElided) => Block::history_elided(m),
            None => Block::Other(Value::Object(m)),
        }
    }

    fn thinking(mut m: Map<String, Value>) -> Block {
        let thinking = take_str(&mut m, "thinking").unwrap_or_default();
        m.remove("type");
        Block::Thinking { thinking, extra: m }
    }

    fn text(mut m: Map<String, Value>) -> Block {
        let text = take_str(&mut m, "text").unwrap_or_default();
        m.remove("type");
        Block::Text { text, extra: m }
    }

    fn tool_use(mut m: Map<String, Value>) -> Block {
        m.remove("type");
        let id = take_str(&mut m, "id").unwrap_or_default();
        let name = take_str(&mut m, "name").unwrap_or_default();
        let input = m.remove("input").unwrap_or(Value::Null);
        Block::ToolUse {
            id,
            name,
            input,
            extra: m,
        }
    }

    fn tool_result(mut m: Map<String, Value>) -> Block {
        m.remove("type");
        let tool_use_id = take_str(&mut m, "tool_use_id").unwrap_or_default();
        let content = m.remove("content").unwrap_or(Value::Null);
        let is_error = m.remove("is_error").and_then(|v| v.as_bool());
        Block::ToolResult {
            tool_use_id,
            content,
            is_error,
            extra: m,
        }
    }

    fn history_elided(mut m: Map<String, Value>) -> Block {
        m.remove("type");
        let count = m.remove("count").and_then(|v| v.as_u64()).unwrap_or(0);
        let sha256 = take_str(&mut m, "sha256").unwrap_or_default();
        let request_sha256 = take_str(&mut m, "request_sha256");
        Block::HistoryElided {
            count,
            sha256,
            request_sha256,
            extra: m,
        }
    }

    /// The block as a JSON object, in the format's shape.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        let extra = match self {
            Block::Other(v) => return v.clone(),
            Block::Thinking { thinking, extra } => {
                m.insert("type".into(), "thinking".into());
                m.insert("thinking".into(), thinking.clone().into());
                extra
            }
            Block::Text { text, extra } => {
                m.insert("type".into(), "text".into());
                m.insert("text".into(), text.clone().into());
                extra
            }
            Block::ToolUse {
                id,
                name,
                input,
                extra,
            } => {
                m.insert("type".into(), "tool_use".into());
                m.insert("id".into(), id.clone().into());
                m.insert("name".into(), name.clone().into());
                m.insert("input".into(), input.clone());
                extra
            }
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
                extra,
            } => {
                m.insert("type".into(), "tool_result".into());
                m.insert("tool_use_id".into(), tool_use_id.clone().into());
                m.insert("content".into(), content.clone());
                if let Some(e) = is_error {
                    m.insert("is_error".into(), (*e).into());
                }
                extra
            }
            Block::HistoryElided {
                count,
                sha256,
                request_sha256,
                extra,
            } => {
                m.insert("type".into(), "history_elided".into());
                m.insert("count".into(), (*count).into());
                m.insert("sha256".into(), sha256.clone().into());
                if let Some(r) = request_sha256 {
                    m.insert("request_sha256".into(), r.clone().into());
                }
                extra
            }
        };
        for (k, v) in extra {
            m.entry(k.clone()).or_insert_with(|| v.clone());
        }
        Value::Object(m)
    }
}

impl<'de> Deserialize<'de> for Block {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(Block::from_value)
    }
}

impl Serialize for Block {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

/// A known block type whose members are there with the right JSON types.
enum Shape {
    Thinking,
    Text,
    ToolUse,
    ToolResult,
    HistoryElided,
}

impl Shape {
    fn of(m: &Map<String, Value>) -> Option<Shape> {
        let is_str = |k: &str| m.get(k).is_some_and(Value::is_string);
        Some(match m.get("type").and_then(Value::as_str)? {
            "thinking" if is_str("thinking") => Shape::Thinking,
            "text" if is_str("text") => Shape::Text,
            "tool_use" if is_str("id") && is_str("name") => Shape::ToolUse,
            "tool_result"
                if is_str("tool_use_id") && m.get("is_error").is_none_or(Value::is_boolean) =>
            {
                Shape::ToolResult
            }
            "history_elided"
                if m.get("count").is_some_and(Value::is_u64)
                    && is_str("sha256")
                    && m.get("request_sha256").is_none_or(Value::is_string) =>
            {
                Shape::HistoryElided
            }
            _ => return None,
        })
    }
}

/// Removes member `k` when it is a string, and returns it.
fn take_str(m: &mut Map<String, Value>, k: &str) -> Option<String> {
    match m.get(k) {
        Some(Value::String(_)) => m.remove(k).and_then(|v| v.as_str().map(str::to_owned)),
        _ => None,
    }
}
