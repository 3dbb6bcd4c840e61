//! Assembling the assistant turn from a response: a whole JSON body, the events of an
//! SSE stream (Anthropic Messages, chat completion chunks, Responses' typed events) or
//! the lines of an NDJSON stream (Ollama), with `usage` normalised to the format's
//! invariant (see [`usage`]).
//!
//! The assembler only reads: the bytes the client gets are never its business. It
//! tolerates what it does not know (an unknown event or block is skipped or kept
//! whole), and after a severed stream [`Assembler::finish`] still gives everything
//! assembled up to the cut.

use serde_json::{Value, json};

use reel_trace::line::{Block, Turn};

use crate::api::Endpoint;
use crate::request::{
    anthropic_block, block, openai_assistant, responses_output, tool_input, tool_use,
};

/// A content block being assembled from deltas.
#[derive(Debug)]
enum Building {
    /// Text, thinking, or any block whose deltas append to one string member.
    Block {
        value: Value,
        /// The member deltas append to (`text`, `thinking`).
        member: &'static str,
        text: String,
    },
    /// A tool call whose input arrives as JSON fragments.
    Tool {
        id: String,
        name: String,
        json: String,
        /// Other members of the start block (`type: server_tool_use`, …).
        value: Value,
    },
}

impl Building {
    fn text(kind: &'static str) -> Building {
        Building::Block {
            value: json!({ "type": kind }),
            member: kind,
            text: String::new(),
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

    fn finish(self) -> Block {
        match self {
            Building::Block {
                mut value,
                member,
                text,
            } => {
                if let Some(o) = value.as_object_mut() {
                    let joined = match o.get(member).and_then(Value::as_str) {
                        Some(prior) if !prior.is_empty() => format!("{prior}{text}"),
                        _ => text,
                    };
                    o.insert(member.to_owned(), Value::String(joined));
                }
                anthropic_block(value)
            }
            Building::Tool {
                id,
                name,
                json,
                mut value,
            } => {
                let input = tool_input(&json);
                match value.as_object_mut() {
                    Some(o) if o.get("type").and_then(Value::as_str) != Some("tool_use") => {
                        o.insert("input".into(), input);
                        block(value)
                    }
                    _ => tool_use(&id, &name, input),
                }
            }
        }
    }
}

/// The most content (text, thinking, tool-call JSON) one assistant turn holds: a longer
/// answer's turn keeps its first [`TURN_CONTENT_MAX`] bytes and says how many it left
/// out (`omitted_bytes`); the response's body pieces in the trace hold all of it. Keeps
/// the recorder's memory flat whatever the answer's size.
pub const TURN_CONTENT_MAX: usize = 4 << 20;

/// What a turn may still take, and what it left out.
#[derive(Debug)]
struct Budget {
    left: usize,
    omitted: u64,
}

impl Budget {
    /// Appends `piece` to `dst` as far as the budget goes (at a character boundary).
    fn push(&mut self, dst: &mut String, piece: &str) {
        if piece.len() <= self.left {
            dst.push_str(piece);
            self.left -= piece.len();
            return;
        }
        let mut cut = self.left;
        while !piece.is_char_boundary(cut) {
            cut -= 1;
        }
        dst.push_str(&piece[..cut]);
        self.left -= cut;
        self.omitted += (piece.len() - cut) as u64;
    }
}

fn find(open: &mut [(usize, Building)], index: usize) -> Option<&mut Building> {
    open.iter_mut().find(|(i, _)| *i == index).map(|(_, b)| b)
}

pub mod usage;

pub use usage::Reported;

/// Assembles one response's assistant turn.
#[derive(Debug)]
pub struct Assembler {
    endpoint: Endpoint,
    /// Finished blocks, in order.
    done: Vec<(usize, Block)>,
    /// Blocks being assembled, by their index in the response.
    open: Vec<(usize, Building)>,
    reported: Reported,
    model: Option<String>,
    stop_reason: Option<String>,
    /// The provider said so in the stream (Responses' `response.completed`, …): take
    /// its whole output rather than the deltas.
    whole: Option<Vec<Block>>,
    /// An error the stream carried (Anthropic `event: error`, an OpenAI error chunk).
    error: Option<String>,
    /// The stream's natural end was seen (`message_stop`, `[DONE]`, `done: true`,
    /// `response.completed`), or the body was whole.
    ended: bool,
    /// The last event that carries content was seen: Anthropic's `message_delta` with
    /// the stop reason and usage, a chat chunk with the finish reason (and, when the
    /// request asked for it, the usage chunk after it). A client may hang up right
    /// after it, before the stream's own end marker.
    finished: bool,
    /// The chat request asked for a usage chunk (`stream_options.include_usage`).
    usage_chunk: bool,
    budget: Budget,
}

impl Assembler {
    /// An assembler for a response of `endpoint`.
    pub fn new(endpoint: Endpoint) -> Assembler {
        Assembler {
            endpoint,
            done: Vec::new(),
            open: Vec::new(),
            reported: Reported::default(),
            model: None,
            stop_reason: None,
            whole: None,
            error: None,
            ended: false,
            finished: false,
            usage_chunk: false,
            budget: Budget {
                left: TURN_CONTENT_MAX,
                omitted: 0,
            },
        }
    }

    /// The chat request asked for a final usage chunk (`stream_options.include_usage`):
    /// the content is complete only once it came.
    pub fn expect_usage_chunk(&mut self, asked: bool) {
        self.usage_chunk = asked;
    }

    /// Whether the stream's natural end was seen.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Whether everything the answer carries arrived: its end marker, or the last event
    /// with content (the stop reason and usage) when the client hung up before the
    /// marker. A response cut short of this is truncated; one that got here is not,
    /// whoever closed first.
    pub fn complete(&self) -> bool {
        self.ended || self.finished
    }

    /// The error the stream itself carried, if any.
    pub fn stream_error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// A whole (non-streamed) JSON body.
    pub fn whole_body(&mut self, body: &[u8]) {
        let Ok(v) = serde_json::from_slice::<Value>(body) else {
            return;
        };
        self.ended = true;
        match self.endpoint {
            Endpoint::Messages => self.anthropic_message(&v),
            Endpoint::Responses => self.responses_object(&v),
            Endpoint::OllamaChat => {
                self.ollama_line(&v);
            }
            _ => self.chat_completion(&v),
        }
    }

    /// One SSE event (its `event` type and joined `data`). Returns true when it added
    /// content (for the time to first token).
    pub fn sse_event(&mut self, event: &str, data: &str) -> bool {
        if data == "[DONE]" {
            self.ended = true;
            return false;
        }
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            return false;
        };
        match self.endpoint {
            Endpoint::Messages => self.anthropic_event(event, &v),
            Endpoint::Responses => self.responses_event(&v),
            Endpoint::OllamaChat => self.ollama_line(&v),
            _ => self.chat_chunk(&v),
        }
    }

    /// One NDJSON line (Ollama; an OpenAI-compatible server that streams NDJSON).
    pub fn ndjson_line(&mut self, line: &str) -> bool {
        match serde_json::from_str::<Value>(line) {
            Ok(v) if self.endpoint == Endpoint::OllamaChat => self.ollama_line(&v),
            Ok(v) => self.chat_chunk(&v),
            Err(_) => false,
        }
    }

    fn open_at(&mut self, index: usize) -> Option<&mut Building> {
        self.open
            .iter_mut()
            .find(|(i, _)| *i == index)
            .map(|(_, b)| b)
    }

    fn close(&mut self, index: usize) {
        if let Some(pos) = self.open.iter().position(|(i, _)| *i == index) {
            let (i, b) = self.open.remove(pos);
            self.done.push((i, b.finish()));
        }
    }

    fn append(&mut self, index: usize, kind: &'static str, piece: &str) -> bool {
        if piece.is_empty() {
            return false;
        }
        if self.open_at(index).is_none() {
            self.open.push((index, Building::text(kind)));
        }
        match find(&mut self.open, index) {
            Some(Building::Block { text, .. }) => self.budget.push(text, piece),
            Some(Building::Tool { json, .. }) => self.budget.push(json, piece),
            None => {}
        }
        true
    }

    // --- Anthropic Messages --------------------------------------------------------

    fn anthropic_message(&mut self, v: &Value) {
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

    fn anthropic_event(&mut self, event: &str, v: &Value) -> bool {
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
                self.open.push((index, Building::started(b)));
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

    // --- OpenAI chat completions ---------------------------------------------------

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

    fn chat_completion(&mut self, v: &Value) {
        if let Some(message) = self.chat_head(v).and_then(|c| c.get("message")) {
            self.whole = Some(openai_assistant(message));
        }
    }

    /// Index of the text block of a chat stream (thinking is 0, text 1, tool call `i`
    /// is 2 + i), so blocks come out in a stable order.
    fn chat_chunk(&mut self, v: &Value) -> bool {
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

    // --- OpenAI Responses ----------------------------------------------------------

    fn responses_object(&mut self, v: &Value) {
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

    fn responses_event(&mut self, v: &Value) -> bool {
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
                self.error = Some(error_text(&json!({ "error": v })));
                false
            }
            _ => false,
        }
    }

    // --- Ollama ----------------------------------------------------------------------

    fn ollama_line(&mut self, v: &Value) -> bool {
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

    /// The assistant turn. `truncated` is set when the stream was severed: the turn is
    /// marked so, with `stop_reason: "truncated"`, and holds what was assembled.
    pub fn finish(mut self, truncated: bool) -> Turn {
        let blocks = match self.whole.take() {
            Some(b) if !truncated || self.open.is_empty() => b,
            _ => {
                let mut open = std::mem::take(&mut self.open);
                for (i, b) in open.drain(..) {
                    self.done.push((i, b.finish()));
                }
                self.done.sort_by_key(|(i, _)| *i);
                self.done.into_iter().map(|(_, b)| b).collect()
            }
        };
        let mut extra = serde_json::Map::new();
        if self.budget.omitted > 0 {
            extra.insert("omitted_bytes".into(), self.budget.omitted.into());
        }
        Turn {
            role: Some("assistant".into()),
            blocks: Some(blocks),
            extra,
            model: self.model,
            usage: usage::normalise(self.endpoint, self.reported),
            stream: None,
            truncated: truncated.then_some(true),
            stop_reason: if truncated {
                Some("truncated".into())
            } else {
                self.stop_reason
            },
            ..Turn::default()
        }
    }
}

/// `type: message` of an error object, for `llm.truncated`'s `upstream_error: …`.
fn error_text(v: &Value) -> String {
    let e = v.get("error").unwrap_or(v);
    let kind = e
        .get("type")
        .or_else(|| e.get("code"))
        .and_then(Value::as_str)
        .unwrap_or("error");
    match e.get("message").and_then(Value::as_str) {
        Some(m) => format!("{kind}: {m}"),
        None => kind.to_owned(),
    }
}

#[cfg(test)]
mod tests;
