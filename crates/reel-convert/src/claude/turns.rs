//! One file's lines as turns: assistant lines merged by `message.id`, user lines with
//! their tool results, markers for the lines that are about the session.

use std::collections::{HashMap, HashSet, VecDeque};

use serde_json::{Map, Value};

use super::survey::{line_time, message_id};
use crate::{Item, Problem};
use reel_trace::Timestamp;
use reel_trace::line::{Block, Timing, Turn, Usage};

/// The `source` tag of every converted turn, as mcp-tape's importer writes it.
pub const SOURCE: &str = "cc";

/// An assistant message being merged.
#[derive(Debug)]
pub(super) struct Pending {
    pub(super) id: Option<String>,
    pub(super) last: Timestamp,
    pub(super) last_line: u64,
    pub(super) since: Option<Timestamp>,
    pub(super) model: Option<String>,
    pub(super) blocks: Vec<Block>,
    pub(super) usage: Option<Value>,
    pub(super) stop_reason: Option<String>,
    pub(super) tags: Map<String, Value>,
}

/// What one converted line gives: an item, or a problem with the line's bytes.
pub type Out = Result<Item, (Problem, Vec<u8>)>;

/// Converts one file line by line (see the module's doc for the mapping).
#[derive(Debug)]
pub struct Converter {
    pub(super) started: Timestamp,
    pub(super) last_t: Option<Timestamp>,
    pub(super) prev_end: Option<Timestamp>,
    pub(super) split: HashMap<String, (u64, u64)>,
    pub(super) current: Option<Pending>,
    pub(super) held: Vec<Pending>,
    pub(super) emitted: HashSet<String>,
    pub(super) out: VecDeque<Out>,
}

impl Converter {
    /// A converter for a file whose lines without a timestamp before any with one take
    /// `started`.
    pub fn new(started: Timestamp) -> Converter {
        Converter {
            started,
            last_t: None,
            prev_end: None,
            split: HashMap::new(),
            current: None,
            held: Vec::new(),
            emitted: HashSet::new(),
            out: VecDeque::new(),
        }
    }

    /// The split messages a [`Survey`](super::Survey) found: each is held until its last line.
    pub fn with_split(mut self, split: HashMap<String, (u64, u64)>) -> Converter {
        self.split = split;
        self
    }

    /// The next item converted, once one is ready.
    pub fn pop(&mut self) -> Option<Out> {
        self.out.pop_front()
    }

    /// Converts line `number`; blank lines give nothing.
    pub fn line(&mut self, number: u64, bytes: &[u8]) {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let problem = |reason: String| {
            (
                Problem {
                    line: number,
                    reason,
                },
                bytes.to_vec(),
            )
        };
        let m = match serde_json::from_slice::<Map<String, Value>>(bytes) {
            Ok(m) => m,
            Err(e) => {
                self.out
                    .push_back(Err(problem(format!("not a JSON object: {e}"))));
                return;
            }
        };
        let Some(ty) = m.get("type").and_then(Value::as_str) else {
            self.out.push_back(Err(problem(
                "no `type` (not a Claude Code transcript line)".into(),
            )));
            return;
        };
        let t = match line_time(&m) {
            Some(t) => {
                self.last_t = Some(t);
                t
            }
            None => self.last_t.unwrap_or(self.started),
        };
        match ty {
            "assistant" => {
                if let Err(reason) = self.assistant(number, t, &m) {
                    self.out.push_back(Err(problem(reason)));
                }
            }
            "user" => {
                self.flush_current();
                let turn = user_turn(&m);
                self.emit(t, turn);
            }
            "system" => {
                self.flush_current();
                self.emit(t, system_turn(&m));
            }
            "summary" => {
                self.flush_current();
                self.emit(t, summary_turn(&m));
            }
            _ => {}
        }
    }

    /// Ends the file: the message being merged, and any held, go out.
    pub fn finish(&mut self) {
        self.flush_current();
        let held = std::mem::take(&mut self.held);
        for p in held {
            self.emit_pending(p);
        }
    }

    pub(super) fn assistant(
        &mut self,
        number: u64,
        t: Timestamp,
        m: &Map<String, Value>,
    ) -> Result<(), String> {
        let Some(msg) = m.get("message").and_then(Value::as_object) else {
            return Err("an assistant line without a `message` object".into());
        };
        let id = message_id(m).map(str::to_owned);
        let same = |p: &Pending| p.id.is_some() && p.id == id;
        if !self.current.as_ref().is_some_and(same) {
            self.flush_current();
            if let Some(i) = self.held.iter().position(same) {
                self.current = Some(self.held.remove(i));
            } else if id.as_ref().is_some_and(|id| self.emitted.contains(id)) {
                // Only without a survey: a part of a message already written.
                return Err(format!(
                    "a later line of assistant message {} after it was written (its \
                     usage is not counted again)",
                    id.as_deref().unwrap_or_default()
                ));
            } else {
                self.current = Some(Pending {
                    id: id.clone(),
                    last: t,
                    last_line: number,
                    since: self.prev_end,
                    model: None,
                    blocks: Vec::new(),
                    usage: None,
                    stop_reason: None,
                    tags: tags(m),
                });
            }
        }
        let Some(p) = self.current.as_mut() else {
            return Ok(());
        };
        p.last = p.last.max(t);
        p.last_line = number;
        if p.model.is_none() {
            p.model = msg
                .get("model")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned);
        }
        if let Some(u) = msg.get("usage").filter(|u| u.is_object()) {
            p.usage = Some(u.clone());
        }
        if let Some(s) = msg.get("stop_reason").and_then(Value::as_str) {
            p.stop_reason = Some(s.to_owned());
        }
        match msg.get("content") {
            Some(Value::Array(blocks)) => p.blocks.extend(blocks.iter().map(assistant_block)),
            Some(Value::String(s)) if !s.is_empty() => p.blocks.push(Block::Text {
                text: s.clone(),
                extra: Map::new(),
            }),
            _ => {}
        }
        Ok(())
    }

    /// The message being merged goes out, or is held when later lines of it follow.
    pub(super) fn flush_current(&mut self) {
        let Some(p) = self.current.take() else {
            return;
        };
        let more =
            p.id.as_ref()
                .and_then(|id| self.split.get(id))
                .is_some_and(|(_, last)| *last > p.last_line);
        if more {
            self.held.push(p);
        } else {
            self.emit_pending(p);
        }
    }

    pub(super) fn emit_pending(&mut self, p: Pending) {
        if let Some(id) = &p.id
            && self.split.is_empty()
        {
            self.emitted.insert(id.clone());
        }
        let usage = p
            .usage
            .and_then(|u| serde_json::from_value::<Usage>(u).ok());
        let timing = p.since.filter(|s| *s <= p.last).map(|s| Timing {
            duration_ms: Some((p.last.0 - s.0) as f64),
            ..Timing::default()
        });
        let mut turn = new_turn("assistant", p.blocks, p.tags);
        turn.model = p.model;
        turn.usage = usage;
        turn.timing = timing;
        turn.stop_reason = p.stop_reason;
        self.prev_end = Some(self.prev_end.map_or(p.last, |e| e.max(p.last)));
        // A message's time is its last line's: when it was complete.
        self.out.push_back(Ok(Item::Turn {
            t: p.last,
            turn: Box::new(turn),
        }));
    }

    pub(super) fn emit(&mut self, t: Timestamp, turn: Turn) {
        self.prev_end = Some(self.prev_end.map_or(t, |e| e.max(t)));
        self.out.push_back(Ok(Item::Turn {
            t,
            turn: Box::new(turn),
        }));
    }
}

/// `sidechain` and `agentId` of a line, for its turn.
pub(super) fn tags(m: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    if m.get("isSidechain") == Some(&Value::Bool(true)) {
        out.insert("sidechain".into(), Value::Bool(true));
    }
    if let Some(id) = m.get("agentId").filter(|v| v.is_string()) {
        out.insert("agentId".into(), id.clone());
    }
    out
}

pub(super) fn new_turn(role: &str, blocks: Vec<Block>, extra: Map<String, Value>) -> Turn {
    Turn {
        source: Some(SOURCE.into()),
        extra,
        ..Turn::new(role, blocks)
    }
}

pub(super) fn marker_turn(m: &Map<String, Value>, marker: &str, text: String) -> Turn {
    let mut extra = tags(m);
    extra.insert("marker".into(), marker.into());
    new_turn(
        "system",
        vec![Block::Text {
            text,
            extra: Map::new(),
        }],
        extra,
    )
}

/// The text of a user message's content (a string, or its text blocks joined).
pub(super) fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A `system` line: a system turn marked with its `subtype`, its `content` as text
/// (the subtype when it has none), with its `level` and `compactMetadata`.
pub(super) fn system_turn(m: &Map<String, Value>) -> Turn {
    let text = match m.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(v) if !v.is_null() => v.to_string(),
        _ => m
            .get("subtype")
            .and_then(Value::as_str)
            .unwrap_or("system")
            .to_owned(),
    };
    let marker = m.get("subtype").and_then(Value::as_str).unwrap_or("system");
    let mut turn = marker_turn(m, marker, text);
    for k in ["level", "compactMetadata"] {
        if let Some(v) = m.get(k) {
            turn.extra.insert(k.to_owned(), v.clone());
        }
    }
    turn
}

/// A `summary` line: a system turn marked `summary`, with its `leafUuid`.
pub(super) fn summary_turn(m: &Map<String, Value>) -> Turn {
    let text = m
        .get("summary")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut turn = marker_turn(m, "summary", text);
    if let Some(v) = m.get("leafUuid") {
        turn.extra.insert("leafUuid".into(), v.clone());
    }
    turn
}

pub(super) fn user_turn(m: &Map<String, Value>) -> Turn {
    let content = m.get("message").and_then(|msg| msg.get("content"));
    if m.get("isCompactSummary") == Some(&Value::Bool(true)) {
        return marker_turn(m, "compact_summary", content_text(content));
    }
    if m.get("isMeta") == Some(&Value::Bool(true)) {
        return marker_turn(m, "meta", content_text(content));
    }
    let mut blocks: Vec<Block> = match content {
        Some(Value::String(s)) => vec![Block::Text {
            text: s.clone(),
            extra: Map::new(),
        }],
        Some(Value::Array(parts)) => parts
            .iter()
            .map(|p| serde_json::from_value::<Block>(p.clone()).unwrap_or(Block::Other(p.clone())))
            .collect(),
        _ => Vec::new(),
    };
    let mut extra = tags(m);
    if let Some(structured) = m.get("toolUseResult") {
        let mut results = blocks
            .iter_mut()
            .filter(|b| matches!(b, Block::ToolResult { .. }));
        match (results.next(), results.next()) {
            (Some(Block::ToolResult { extra: e, .. }), None) => {
                e.insert("structured".into(), structured.clone());
            }
            _ => {
                extra.insert("toolUseResult".into(), structured.clone());
            }
        }
    }
    new_turn("user", blocks, extra)
}

/// An assistant content block: thinking without its signature, redacted thinking
/// without its opaque data, the rest as the format reads them.
pub(super) fn assistant_block(v: &Value) -> Block {
    let mut v = v.clone();
    if let Value::Object(o) = &mut v {
        match o.get("type").and_then(Value::as_str) {
            Some("thinking") => {
                o.remove("signature");
            }
            Some("redacted_thinking") => {
                o.remove("data");
            }
            _ => {}
        }
    }
    serde_json::from_value::<Block>(v.clone()).unwrap_or(Block::Other(v))
}
