//! Anthropic Messages: a whole message, and the events of its stream (`message_start`,
//! content block start, delta and stop, `message_delta` with the stop reason and usage,
//! `message_stop`, `error`).

use serde_json::Value;

use super::{Assembler, Building, error_text, find, usage};
use crate::request::anthropic_block;

impl Assembler {
    /// A whole message (or `message_start`'s): model, stop reason, usage, content, or
    /// the error it is.
    pub(super) fn anthropic_message(&mut self, v: &Value) {
        if let Some(m) = v.get("model").and_then(Value::as_str) {
            self.model = Some(m.to_owned());
        }
        if let Some(s) = v.get("stop_reason").and_then(Value::as_str) {
            self.stop_reason = Some(s.to_owned());
        }
        if let Some(u) = v.get("usage") {
            usage::read(self.endpoint, u, &mut self.reported);
        }
        if let Some(Value::Array(content)) = v.get("content") {
            let blocks = content.iter().cloned().map(anthropic_block).collect();
            self.whole = Some(blocks);
        }
        if v.get("type").and_then(Value::as_str) == Some("error") {
            self.error = Some(error_text(v));
        }
    }

    /// One event of a message stream. Returns true when it added content.
    pub(super) fn anthropic_event(&mut self, event: &str, v: &Value) -> bool {
        let ty = v.get("type").and_then(Value::as_str).unwrap_or(event);
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
        match ty {
            "message_start" => {
                if let Some(m) = v.get("message") {
                    self.anthropic_message(m);
                    self.whole = None;
                }
                false
            }
            "content_block_start" => {
                let b = v.get("content_block").cloned().unwrap_or(Value::Null);
                self.open.push((index, started(b)));
                false
            }
            "content_block_delta" => self.anthropic_delta(index, v.get("delta")),
            "content_block_stop" => {
                self.close(index);
                false
            }
            "message_delta" => {
                let stop = v.pointer("/delta/stop_reason").and_then(Value::as_str);
                if let Some(s) = stop {
                    self.stop_reason = Some(s.to_owned());
                }
                if let Some(u) = v.get("usage") {
                    usage::read(self.endpoint, u, &mut self.reported);
                }
                // The stop reason and the final usage: nothing with content follows.
                self.finished |= stop.is_some() && v.get("usage").is_some_and(Value::is_object);
                false
            }
            "message_stop" => {
                self.ended = true;
                false
            }
            "error" => {
                self.error = Some(error_text(v));
                false
            }
            _ => false,
        }
    }

    /// A `content_block_delta`: text, thinking or a tool call's JSON fragment appended
    /// to the block at `index`. Returns true when it added content.
    fn anthropic_delta(&mut self, index: usize, delta: Option<&Value>) -> bool {
        let d = delta.unwrap_or(&Value::Null);
        let s = |k: &str| d.get(k).and_then(Value::as_str).unwrap_or("");
        match d.get("type").and_then(Value::as_str) {
            Some("text_delta") => self.append(index, "text", s("text")),
            Some("thinking_delta") => self.append(index, "thinking", s("thinking")),
            Some("input_json_delta") => {
                let piece = s("partial_json");
                match find(&mut self.open, index) {
                    Some(Building::Tool { json, .. }) => {
                        self.budget.push(json, piece);
                        !piece.is_empty()
                    }
                    _ => false,
                }
            }
            // signature_delta (dropped), citations_delta, …
            _ => false,
        }
    }
}

/// The block an Anthropic `content_block_start` opens: a tool call (`tool_use`,
/// `server_tool_use`, …) gathers JSON fragments; anything else appends to its
/// `thinking` or `text` member.
fn started(b: Value) -> Building {
    let kind = b.get("type").and_then(Value::as_str).unwrap_or("");
    if kind.ends_with("tool_use") {
        let s = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        return Building::Tool {
            id: s("id"),
            name: s("name"),
            json: String::new(),
            value: b,
        };
    }
    let member = if kind == "thinking" {
        "thinking"
    } else {
        "text"
    };
    Building::Block {
        value: b,
        member,
        text: String::new(),
    }
}
