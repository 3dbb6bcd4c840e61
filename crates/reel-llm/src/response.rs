//! Assembling the assistant turn from a response: a whole JSON body, the events of an
//! SSE stream (Anthropic Messages, chat completion chunks, Responses' typed events) or
//! the lines of an NDJSON stream (Ollama), with `usage` normalised to the format's
//! invariant (see [`usage`]).
//!
//! The assembler only reads: the bytes the client gets are never its business. It
//! tolerates what it does not know (an unknown event or block is skipped or kept
//! whole), and after a severed stream [`Assembler::finish`] still gives everything
//! assembled up to the cut.
//!
//! What every provider shares (the blocks being built, the content budget, the turn)
//! is here; each provider's bodies and events are read in a file of its own:
//! `anthropic`, `chat` (chat completions), `responses`, `ollama`.

use serde_json::{Value, json};

use reel_trace::line::{Block, Turn};

use crate::api::Endpoint;
use crate::request::{anthropic_block, block, tool_input, tool_use};

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

mod anthropic;
mod chat;
mod ollama;
mod responses;
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
    let (e, kind_keys) = match v.get("error") {
        // Ollama: `{"error": "model … not found"}`.
        Some(Value::String(text)) => return format!("error: {text}"),
        // An error object: its `type` (Anthropic, OpenAI), else its `code`.
        Some(e) => (e, ["type", "code"]),
        // The error is the event itself (Responses' `error` event): its `type` is the
        // event's, the kind is its `code`.
        None => (v, ["code", "type"]),
    };
    let kind = kind_keys
        .iter()
        .find_map(|k| e.get(*k).and_then(Value::as_str))
        .unwrap_or("error");
    match e.get("message").and_then(Value::as_str) {
        Some(m) => format!("{kind}: {m}"),
        None => kind.to_owned(),
    }
}

#[cfg(test)]
mod tests;
