//! Ollama's chat: its NDJSON lines (or a whole body), content, thinking and tool
//! calls, and the last line's done reason and counts.

use serde_json::{Value, json};

use super::{Assembler, error_text, usage};
use crate::request::tool_use;

impl Assembler {
    /// One line of an Ollama chat (or its whole body): content, thinking and tool
    /// calls, and on the last line the done reason and counts. Returns true when it
    /// added content.
    pub(super) fn ollama_line(&mut self, v: &Value) -> bool {
        if let Some(m) = v.get("model").and_then(Value::as_str) {
            self.model = Some(m.to_owned());
        }
        if v.get("error").is_some() {
            self.error = Some(error_text(v));
        }
        let mut added = false;
        if let Some(msg) = v.get("message") {
            if let Some(t) = msg.get("thinking").and_then(Value::as_str) {
                added |= self.append(0, "thinking", t);
            }
            if let Some(t) = msg.get("content").and_then(Value::as_str) {
                added |= self.append(1, "text", t);
            }
            for (n, c) in msg
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let f = c.get("function").unwrap_or(c);
                let input = f.get("arguments").cloned().unwrap_or_else(|| json!({}));
                let name = f.get("name").and_then(Value::as_str).unwrap_or("");
                self.done
                    .push((2 + n, tool_use(&format!("call_{n}"), name, input)));
                added = true;
            }
        }
        if v.get("done").and_then(Value::as_bool) == Some(true) {
            self.ended = true;
            if let Some(r) = v.get("done_reason").and_then(Value::as_str) {
                self.stop_reason = Some(r.to_owned());
            }
            usage::read(self.endpoint, v, &mut self.reported);
        }
        added
    }
}
