//! OpenAI Responses: a whole response object, and the typed events of its stream
//! (text and reasoning deltas, function calls, items done, the completed response).

use serde_json::{Value, json};

use super::{Assembler, Building, error_text, find, usage};
use crate::request::responses_output;

impl Assembler {
    /// A whole response object (or the one a terminal event carries): model, usage,
    /// status (with why it is incomplete), output items, or its error.
    pub(super) fn responses_object(&mut self, v: &Value) {
        if let Some(m) = v.get("model").and_then(Value::as_str) {
            self.model = Some(m.to_owned());
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            usage::read(self.endpoint, u, &mut self.reported);
        }
        if let Some(s) = v.get("status").and_then(Value::as_str) {
            let reason = v
                .pointer("/incomplete_details/reason")
                .and_then(Value::as_str);
            self.stop_reason = Some(match reason {
                Some(r) => format!("{s}: {r}"),
                None => s.to_owned(),
            });
        }
        if let Some(Value::Array(items)) = v.get("output") {
            self.whole = Some(items.iter().flat_map(responses_output).collect());
        }
        if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
            self.error = Some(error_text(&json!({ "error": e })));
        }
    }

    /// One typed event of a response stream. Returns true when it added content.
    pub(super) fn responses_event(&mut self, v: &Value) -> bool {
        let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
        let index = v.get("output_index").and_then(Value::as_u64).unwrap_or(0) as usize;
        let delta = v.get("delta").and_then(Value::as_str).unwrap_or("");
        match ty {
            "response.created" | "response.in_progress" => {
                if let Some(r) = v.get("response") {
                    if let Some(m) = r.get("model").and_then(Value::as_str) {
                        self.model = Some(m.to_owned());
                    }
                }
                false
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                self.append(index, "text", delta)
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.append(index, "thinking", delta)
            }
            "response.output_item.added" => {
                let item = v.get("item").unwrap_or(&Value::Null);
                if item.get("type").and_then(Value::as_str) == Some("function_call") {
                    self.open.push((
                        index,
                        Building::Tool {
                            id: item
                                .get("call_id")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .into(),
                            name: item
                                .get("name")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .into(),
                            json: String::new(),
                            value: Value::Null,
                        },
                    ));
                }
                false
            }
            "response.function_call_arguments.delta" => match find(&mut self.open, index) {
                Some(Building::Tool { json, .. }) => {
                    self.budget.push(json, delta);
                    !delta.is_empty()
                }
                _ => false,
            },
            "response.output_item.done" => {
                if let Some(pos) = self.open.iter().position(|(i, _)| *i == index) {
                    self.open.remove(pos);
                }
                if let Some(item) = v.get("item") {
                    for b in responses_output(item) {
                        self.done.push((index, b));
                    }
                }
                false
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                if let Some(r) = v.get("response") {
                    self.responses_object(r);
                }
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
}
