//! OpenAI chat completions: a whole completion, and its chunks (SSE or NDJSON) with
//! their deltas of reasoning, content, refusal and tool calls.

use serde_json::Value;

use super::{Assembler, Building, error_text, find, usage};
use crate::request::openai_assistant;

impl Assembler {
    /// What a chat completion and each of its chunks both carry: model, usage, an
    /// error, and the first choice's finish reason; the first choice.
    fn chat_head<'v>(&mut self, v: &'v Value) -> Option<&'v Value> {
        if let Some(m) = v.get("model").and_then(Value::as_str) {
            self.model = Some(m.to_owned());
        }
        let usage = v.get("usage").filter(|u| u.is_object());
        if let Some(u) = usage {
            usage::read(self.endpoint, u, &mut self.reported);
        }
        if v.get("error").is_some() {
            self.error = Some(error_text(v));
        }
        // With a usage chunk asked for, it comes last (after the finish reason).
        if usage.is_some() && self.stop_reason.is_some() {
            self.finished = true;
        }
        let choice = v.pointer("/choices/0")?;
        if let Some(s) = choice.get("finish_reason").and_then(Value::as_str) {
            self.stop_reason = Some(s.to_owned());
            self.finished |= !self.usage_chunk || usage.is_some();
        }
        Some(choice)
    }

    /// A whole chat completion: its head and the first choice's message.
    pub(super) fn chat_completion(&mut self, v: &Value) {
        if let Some(message) = self.chat_head(v).and_then(|c| c.get("message")) {
            self.whole = Some(openai_assistant(message));
        }
    }

    /// Index of the text block of a chat stream (thinking is 0, text 1, tool call `i`
    /// is 2 + i), so blocks come out in a stable order.
    pub(super) fn chat_chunk(&mut self, v: &Value) -> bool {
        let Some(choice) = self.chat_head(v) else {
            return false;
        };
        let Some(d) = choice.get("delta") else {
            return false;
        };
        let mut added = false;
        for key in ["reasoning_content", "reasoning"] {
            if let Some(Value::String(t)) = d.get(key) {
                added |= self.append(0, "thinking", t);
            }
        }
        if let Some(Value::String(t)) = d.get("content") {
            added |= self.append(1, "text", t);
        }
        if let Some(Value::String(t)) = d.get("refusal") {
            added |= self.append(1, "text", t);
        }
        for c in d
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let i = 2 + c.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
            let f = c.get("function").unwrap_or(&Value::Null);
            if self.open_at(i).is_none() {
                self.open.push((
                    i,
                    Building::Tool {
                        id: String::new(),
                        name: String::new(),
                        json: String::new(),
                        value: Value::Null,
                    },
                ));
            }
            if let Some(Building::Tool { id, name, json, .. }) = find(&mut self.open, i) {
                if let Some(s) = c.get("id").and_then(Value::as_str) {
                    id.push_str(s);
                }
                if let Some(s) = f.get("name").and_then(Value::as_str) {
                    name.push_str(s);
                }
                if let Some(s) = f.get("arguments").and_then(Value::as_str) {
                    self.budget.push(json, s);
                    added |= !s.is_empty();
                }
            }
        }
        added
    }
}
