//! Claude Code session transcripts: `~/.claude/projects/<encoded-cwd>/<session-id>.jsonl`,
//! one JSON object per line, each with a `type` (research: mcp-tape.md §2.9). Converted
//! to `turn` records of a `cc-session` trace, the way mcp-tape's `cc` importer maps them:
//!
//! - `user` lines are user turns (a string is one text block; `tool_result` blocks keep
//!   `tool_use_id`, `content`, `is_error`, and the line's `toolUseResult` becomes the
//!   block's `structured` when the line answers one tool);
//! - `assistant` lines are merged by `message.id` into one assistant turn: Claude Code
//!   writes one message as several lines, one content block each, repeating `usage` on
//!   every line, so a message's usage is counted once (from its last line), its `model`
//!   and `stop_reason` kept, thinking blocks without their `signature`;
//! - compaction summaries (`isCompactSummary`), meta lines (`isMeta`), `summary` lines
//!   and `system` lines are system turns with one text block and a `marker` naming what
//!   they were;
//! - everything else (file-history snapshots, queue operations, progress, permission
//!   modes, titles…) is skipped, and counted in the facts (`skippedLines`).
//!
//! Sub-agents: a session's Task sub-agents are written beside it, in
//! `<session-id>/subagents/agent-<id>.jsonl` (Claude Code 2.1.2 and later, workflow agents
//! one level further down) or, before that, as `agent-<id>.jsonl` in the project directory
//! with the parent's `sessionId`. They are converted with their session: their turns,
//! like inline `isSidechain` lines, carry `sidechain: true` and `agentId`, and are merged
//! into the session's turns in time order (each file streamed; a sub-agent file is
//! opened when the session reaches its first line's time).
//!
//! Streaming: a first pass over each file finds its start, the facts, and the messages
//! whose lines are not adjacent (only those are remembered, by id and last line); the
//! second pass buffers only the message being merged. A message whose lines are split
//! by other turns is merged all the same, written where its last line is, and said in a
//! warning: its usage is never counted twice.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{ConvertError, Converted, Fault, Item, Lines, Problem, first_line, read_lines};
use crate::line::{Block, Timing, Turn, Usage};
use crate::time::Timestamp;

/// What the format cannot hold.
pub const LIMITS: &str = "Claude Code transcripts hold the conversation as Claude Code \
     saw it, not the API traffic: no request bodies, no system prompt or tool definitions, \
     no time to first token (assistant timing is the time since the turn before it), \
     thinking signatures are dropped, file-history snapshots, progress and other \
     bookkeeping lines are skipped, and a line without a timestamp takes the one before it";

/// The `source` tag of every converted turn, as mcp-tape's importer writes it.
pub const SOURCE: &str = "cc";

/// `type`s of Claude Code lines (those converted and those skipped).
const LINE_TYPES: &[&str] = &[
    "user",
    "assistant",
    "system",
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "progress",
    "permission-mode",
    "custom-title",
    "agent-name",
    "tag",
    "last-prompt",
    "attachment",
    "pr-link",
];

/// How many split-message warnings one file gives before it sums up the rest.
const MAX_SPLIT_WARNINGS: usize = 10;

/// How deep below `<session-id>/subagents/` sub-agent files are looked for.
const SUBAGENT_DEPTH: usize = 3;

/// True when the file starting with `head` is a Claude Code session transcript (a
/// sub-agent's own file is not: it is read with its session).
pub fn looks_like(head: &[u8]) -> bool {
    let line = first_line(head);
    match serde_json::from_slice::<Map<String, Value>>(line) {
        Ok(m) => is_session_line(&m) && (head.len() >= super::SNIFF_BYTES || has_turn(head)),
        // A first line longer than the sniffed head (a long first prompt): Claude Code
        // writes `parentUuid` first on user and assistant lines.
        Err(_) => {
            line.len() + 1 >= head.len()
                && line.starts_with(br#"{"parentUuid":"#)
                && contains(line, br#""sessionId":""#)
                && !contains(line, br#""isSidechain":true"#)
        }
    }
}

/// True when a line of `head` becomes a turn: a whole file of bookkeeping lines (a
/// session opened and left at once) holds nothing to convert, and is not claimed.
fn has_turn(head: &[u8]) -> bool {
    head.split(|&b| b == b'\n').any(|l| {
        serde_json::from_slice::<Map<String, Value>>(l).is_ok_and(|m| {
            matches!(
                m.get("type").and_then(Value::as_str),
                Some("user" | "assistant" | "system" | "summary")
            )
        })
    })
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn is_session_line(m: &Map<String, Value>) -> bool {
    let Some(ty) = m.get("type").and_then(Value::as_str) else {
        return false;
    };
    // Other formats' line markers: reel's and mcptape's `v`, mcporter's `_meta`,
    // mcp-rec's and mcp-vcr's `dir`, JSON-RPC itself.
    if ["v", "_meta", "dir", "jsonrpc", "msg"]
        .iter()
        .any(|k| m.contains_key(*k))
        || !LINE_TYPES.contains(&ty)
    {
        return false;
    }
    if m.get("isSidechain") == Some(&Value::Bool(true))
        && m.get("agentId").is_some_and(Value::is_string)
    {
        return false;
    }
    let has = |k: &str| m.get(k).is_some_and(Value::is_string);
    has("sessionId")
        || (ty == "summary" && has("leafUuid"))
        || (ty == "file-history-snapshot" && has("messageId") && m.contains_key("snapshot"))
}

/// True when `dir` holds a session's sub-agent files (`<session-id>/subagents/`),
/// imported with their session rather than as traces of their own.
pub fn is_subagent_dir(dir: &Path) -> bool {
    dir.file_name().is_some_and(|n| n == "subagents")
}

/// What a first pass over one file finds.
#[derive(Debug, Default)]
pub struct Survey {
    /// The first line's timestamp.
    pub first: Option<Timestamp>,
    /// `sessionId`, `cwd`, `version`, `gitBranch` as first seen.
    pub facts: Map<String, Value>,
    /// Lines skipped, by `type`.
    pub skipped: BTreeMap<String, u64>,
    /// Lines that become turns.
    pub turn_lines: u64,
    /// Assistant messages whose lines are not adjacent: id → (first line, last line).
    pub split: HashMap<String, (u64, u64)>,
    seen: HashMap<String, (u64, u64)>,
    current: Option<String>,
}

impl Survey {
    /// Notes line `number`.
    pub fn line(&mut self, number: u64, bytes: &[u8]) {
        let Ok(m) = serde_json::from_slice::<Map<String, Value>>(bytes) else {
            return;
        };
        if self.first.is_none() {
            self.first = line_time(&m);
        }
        for k in ["sessionId", "cwd", "version", "gitBranch"] {
            if let Some(v) = m.get(k).filter(|v| v.is_string())
                && !self.facts.contains_key(k)
            {
                self.facts.insert(k.to_owned(), v.clone());
            }
        }
        let ty = m.get("type").and_then(Value::as_str).unwrap_or_default();
        match ty {
            "assistant" => {
                self.turn_lines += 1;
                let Some(id) = message_id(&m) else {
                    self.current = None;
                    return;
                };
                match self.seen.get_mut(id) {
                    Some(span) => {
                        if self.current.as_deref() != Some(id) {
                            self.split.insert(id.to_owned(), *span);
                        }
                        span.1 = number;
                    }
                    None => {
                        self.seen.insert(id.to_owned(), (number, number));
                    }
                }
                self.current = Some(id.to_owned());
            }
            "user" | "system" | "summary" => {
                self.turn_lines += 1;
                self.current = None;
            }
            other => *self.skipped.entry(other.to_owned()).or_default() += 1,
        }
    }

    /// Ends the pass: only the split messages' spans are kept.
    pub fn finish(&mut self) {
        for (id, span) in &mut self.split {
            if let Some(s) = self.seen.get(id) {
                *span = *s;
            }
        }
        self.seen = HashMap::new();
        self.current = None;
    }

    /// The warnings the split messages call for, naming `file`.
    pub fn warnings(&self, file: &str) -> Vec<String> {
        let mut split: Vec<(&String, &(u64, u64))> = self.split.iter().collect();
        split.sort_by_key(|(_, span)| **span);
        let mut out: Vec<String> = split
            .iter()
            .take(MAX_SPLIT_WARNINGS)
            .map(|(id, (a, b))| {
                format!(
                    "{file}: assistant message {id} is written on lines {a}…{b} with other \
                     turns between them: merged into one turn (its usage counted once), \
                     written where its last line is"
                )
            })
            .collect();
        if split.len() > MAX_SPLIT_WARNINGS {
            out.push(format!(
                "{file}: {} more assistant messages split the same way",
                split.len() - MAX_SPLIT_WARNINGS
            ));
        }
        out
    }
}

fn survey(path: &Path) -> std::io::Result<Survey> {
    let mut s = Survey::default();
    let mut lines = read_lines(path)?;
    while let Some((number, bytes)) = lines.next_line()? {
        s.line(number, bytes);
    }
    s.finish();
    Ok(s)
}

fn line_time(m: &Map<String, Value>) -> Option<Timestamp> {
    m.get("timestamp")
        .and_then(Value::as_str)
        .and_then(super::parse_time)
        .map(|(t, _)| t)
}

fn message_id(m: &Map<String, Value>) -> Option<&str> {
    m.get("message")
        .and_then(|msg| msg.get("id"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// Converts the session at `path`, its sub-agent files with it.
pub fn convert(path: &Path) -> Result<Converted, ConvertError> {
    let main = survey(path)?;
    let name = |p: &Path| {
        p.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    };
    let mut warnings = main.warnings(&name(path));
    let mut skipped = main.skipped.clone();
    let mut turn_lines = main.turn_lines;
    let mut subagents = Vec::new();
    for sub in subagent_files(path, main.facts.get("sessionId").and_then(Value::as_str)) {
        let s = match survey(&sub) {
            Ok(s) => s,
            Err(e) => {
                warnings.push(format!("{}: cannot be read, left out: {e}", sub.display()));
                continue;
            }
        };
        warnings.extend(s.warnings(&name(&sub)));
        for (k, n) in &s.skipped {
            *skipped.entry(k.clone()).or_default() += n;
        }
        turn_lines += s.turn_lines;
        subagents.push((sub, s));
    }
    if turn_lines == 0 {
        return Err(ConvertError::Empty);
    }
    let started = main
        .first
        .into_iter()
        .chain(subagents.iter().filter_map(|(_, s)| s.first))
        .min()
        .or_else(|| {
            // Only `summary` lines (older Claude Code wrote such files): the file's time.
            let modified = std::fs::metadata(path).ok()?.modified().ok()?;
            let secs = modified.duration_since(std::time::UNIX_EPOCH).ok()?;
            super::from_epoch_secs(secs.as_secs_f64())
        })
        .ok_or_else(|| ConvertError::Invalid("no line has a `timestamp`".into()))?;
    let mut facts = main.facts.clone();
    if !subagents.is_empty() {
        facts.insert("subagents".into(), Value::from(subagents.len()));
    }
    if !skipped.is_empty() {
        let m: Map<String, Value> = skipped.into_iter().map(|(k, n)| (k, n.into())).collect();
        facts.insert("skippedLines".into(), Value::Object(m));
    }
    let mut waiting: Vec<Waiting> = subagents
        .into_iter()
        .map(|(path, s)| Waiting {
            start: s.first.unwrap_or(started),
            path,
            split: s.split,
        })
        .collect();
    // Latest first: the next to open is popped from the end.
    waiting.sort_by(|a, b| b.start.cmp(&a.start).then_with(|| b.path.cmp(&a.path)));
    let first = FileStream::open(path, started, main.split)?;
    Ok(Converted {
        kind: "cc-session",
        transport: None,
        started,
        facts,
        warnings,
        items: Box::new(Merge {
            active: vec![Head::new(first)],
            waiting,
            started,
        }),
    })
}

/// The sub-agent files of the session at `path` (none for a sub-agent file itself).
fn subagent_files(path: &Path, session_id: Option<&str>) -> Vec<PathBuf> {
    let is_agent_file = |p: &Path| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("agent-") && n.ends_with(".jsonl"))
    };
    if is_agent_file(path) {
        return Vec::new();
    }
    let (Some(dir), Some(stem)) = (path.parent(), path.file_stem()) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    collect_agent_files(&dir.join(stem).join("subagents"), 0, &mut found);
    // The layout before 2.1.2: beside the session, naming it as their `sessionId`.
    if let (Some(id), Ok(entries)) = (session_id, std::fs::read_dir(dir)) {
        for e in entries.flatten() {
            let p = e.path();
            if p != path
                && is_agent_file(&p)
                && e.file_type().is_ok_and(|t| t.is_file())
                && first_session_id(&p).as_deref() == Some(id)
            {
                found.push(p);
            }
        }
    }
    found.sort();
    found
}

fn collect_agent_files(dir: &Path, depth: usize, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(ty) = e.file_type() else { continue };
        let p = e.path();
        if ty.is_dir() && depth < SUBAGENT_DEPTH {
            collect_agent_files(&p, depth + 1, found);
        } else if ty.is_file()
            && p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("agent-") && n.ends_with(".jsonl"))
        {
            found.push(p);
        }
    }
}

/// The `sessionId` of the first line of `path` that has one (among its first lines).
fn first_session_id(path: &Path) -> Option<String> {
    let mut lines = read_lines(path).ok()?;
    for _ in 0..8 {
        let (_, bytes) = lines.next_line().ok()??;
        if let Ok(m) = serde_json::from_slice::<Map<String, Value>>(bytes)
            && let Some(id) = m.get("sessionId").and_then(Value::as_str)
        {
            return Some(id.to_owned());
        }
    }
    None
}

/// A sub-agent file not opened yet.
struct Waiting {
    start: Timestamp,
    path: PathBuf,
    split: HashMap<String, (u64, u64)>,
}

/// One file's items, streamed.
struct FileStream {
    lines: Lines,
    conv: Converter,
    done: bool,
}

impl FileStream {
    fn open(
        path: &Path,
        started: Timestamp,
        split: HashMap<String, (u64, u64)>,
    ) -> std::io::Result<FileStream> {
        Ok(FileStream {
            lines: read_lines(path)?,
            conv: Converter::new(started).with_split(split),
            done: false,
        })
    }
}

impl Iterator for FileStream {
    type Item = Result<Item, Fault>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(out) = self.conv.pop() {
                return Some(out.map_err(|(p, bytes)| Fault::Bad(p, bytes)));
            }
            if self.done {
                return None;
            }
            match self.lines.next_line() {
                Ok(Some((number, bytes))) => self.conv.line(number, bytes),
                Ok(None) => {
                    self.done = true;
                    self.conv.finish();
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(Fault::Io(e)));
                }
            }
        }
    }
}

/// A stream and its next item.
struct Head {
    stream: FileStream,
    next: Option<Result<Item, Fault>>,
}

impl Head {
    fn new(stream: FileStream) -> Head {
        Head { stream, next: None }
    }
}

/// The session's file and its sub-agents' files, merged in time order (the session
/// first on equal times).
struct Merge {
    active: Vec<Head>,
    waiting: Vec<Waiting>,
    started: Timestamp,
}

impl Iterator for Merge {
    type Item = Result<Item, Fault>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            for h in &mut self.active {
                if h.next.is_none() {
                    h.next = h.stream.next();
                }
            }
            self.active.retain(|h| h.next.is_some());
            // A fault goes out at once; otherwise the earliest item.
            let mut best: Option<(usize, Option<Timestamp>)> = None;
            for (i, h) in self.active.iter().enumerate() {
                let t = match &h.next {
                    Some(Ok(item)) => Some(item.t()),
                    _ => None,
                };
                let better = match (best, t) {
                    (None, _) => true,
                    (Some((_, Some(_))), None) => true,
                    (Some((_, Some(b))), Some(t)) => t < b,
                    (Some((_, None)), _) => false,
                };
                if better {
                    best = Some((i, t));
                }
            }
            let due = self.waiting.last().is_some_and(|w| match best {
                None => true,
                Some((_, Some(t))) => w.start < t,
                Some((_, None)) => false,
            });
            if due && let Some(w) = self.waiting.pop() {
                match FileStream::open(&w.path, self.started, w.split) {
                    Ok(s) => self.active.push(Head::new(s)),
                    Err(e) => return Some(Err(Fault::Io(e))),
                }
                continue;
            }
            let (i, _) = best?;
            return self.active[i].next.take();
        }
    }
}

/// An assistant message being merged.
#[derive(Debug)]
struct Pending {
    id: Option<String>,
    last: Timestamp,
    last_line: u64,
    since: Option<Timestamp>,
    model: Option<String>,
    blocks: Vec<Block>,
    usage: Option<Value>,
    stop_reason: Option<String>,
    tags: Map<String, Value>,
}

/// What one converted line gives: an item, or a problem with the line's bytes.
pub type Out = Result<Item, (Problem, Vec<u8>)>;

/// Converts one file line by line (see the module's doc for the mapping).
#[derive(Debug)]
pub struct Converter {
    started: Timestamp,
    last_t: Option<Timestamp>,
    prev_end: Option<Timestamp>,
    split: HashMap<String, (u64, u64)>,
    current: Option<Pending>,
    held: Vec<Pending>,
    emitted: HashSet<String>,
    out: VecDeque<Out>,
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

    /// The split messages a [`Survey`] found: each is held until its last line.
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
                let mut turn = marker_turn(&m, marker, text);
                for k in ["level", "compactMetadata"] {
                    if let Some(v) = m.get(k) {
                        turn.extra.insert(k.to_owned(), v.clone());
                    }
                }
                self.emit(t, turn);
            }
            "summary" => {
                self.flush_current();
                let text = m
                    .get("summary")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let mut turn = marker_turn(&m, "summary", text);
                if let Some(v) = m.get("leafUuid") {
                    turn.extra.insert("leafUuid".into(), v.clone());
                }
                self.emit(t, turn);
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

    fn assistant(
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
    fn flush_current(&mut self) {
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

    fn emit_pending(&mut self, p: Pending) {
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

    fn emit(&mut self, t: Timestamp, turn: Turn) {
        self.prev_end = Some(self.prev_end.map_or(t, |e| e.max(t)));
        self.out.push_back(Ok(Item::Turn {
            t,
            turn: Box::new(turn),
        }));
    }
}

/// `sidechain` and `agentId` of a line, for its turn.
fn tags(m: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    if m.get("isSidechain") == Some(&Value::Bool(true)) {
        out.insert("sidechain".into(), Value::Bool(true));
    }
    if let Some(id) = m.get("agentId").filter(|v| v.is_string()) {
        out.insert("agentId".into(), id.clone());
    }
    out
}

fn new_turn(role: &str, blocks: Vec<Block>, extra: Map<String, Value>) -> Turn {
    Turn {
        t: None,
        ty: "turn".into(),
        role: Some(role.into()),
        blocks: Some(blocks),
        model: None,
        usage: None,
        timing: None,
        source: Some(SOURCE.into()),
        endpoint: None,
        stream: None,
        echoed: None,
        truncated: None,
        stop_reason: None,
        corr_id: None,
        ai: None,
        attest: None,
        extra,
    }
}

fn marker_turn(m: &Map<String, Value>, marker: &str, text: String) -> Turn {
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
fn content_text(content: Option<&Value>) -> String {
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

fn user_turn(m: &Map<String, Value>) -> Turn {
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
fn assistant_block(v: &Value) -> Block {
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

#[cfg(test)]
mod tests {
    use super::*;

    const T0: &str = "2026-03-01T10:00:00.000Z";

    fn line(ty: &str, t: &str, rest: Value) -> String {
        let mut m = serde_json::json!({
            "parentUuid": null, "isSidechain": false, "userType": "external",
            "cwd": "/home/u/proj", "sessionId": "s-1", "version": "2.1.3",
            "gitBranch": "main", "type": ty, "timestamp": t, "uuid": format!("u-{t}"),
        });
        if let (Value::Object(m), Value::Object(r)) = (&mut m, rest) {
            m.extend(r);
        }
        m.to_string()
    }

    fn assistant(id: &str, t: &str, block: Value, output: u64) -> String {
        line(
            "assistant",
            t,
            serde_json::json!({"requestId": "req", "message": {
                "id": id, "type": "message", "role": "assistant", "model": "claude-x",
                "content": [block], "stop_reason": null,
                "usage": {"input_tokens": 3, "cache_read_input_tokens": 100,
                          "cache_creation_input_tokens": 7, "output_tokens": output,
                          "service_tier": "standard"}}}),
        )
    }

    fn run(lines: &[String]) -> Vec<Out> {
        let mut s = Survey::default();
        for (i, l) in lines.iter().enumerate() {
            s.line(i as u64 + 1, l.as_bytes());
        }
        s.finish();
        let mut c = Converter::new(Timestamp::parse(T0).unwrap()).with_split(s.split);
        let mut out = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            c.line(i as u64 + 1, l.as_bytes());
            out.extend(std::iter::from_fn(|| c.pop()));
        }
        c.finish();
        out.extend(std::iter::from_fn(|| c.pop()));
        out
    }

    fn turns(out: Vec<Out>) -> Vec<(Timestamp, Turn)> {
        out.into_iter()
            .filter_map(|o| match o {
                Ok(Item::Turn { t, turn }) => Some((t, *turn)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn sniffs_session_lines_only() {
        let user = line(
            "user",
            T0,
            serde_json::json!({"message": {"role": "user", "content": "hi"}}),
        );
        assert!(looks_like(user.as_bytes()));
        assert!(looks_like(
            br#"{"type":"summary","summary":"Fix it","leafUuid":"x"}"#
        ));
        let snapshot = br#"{"type":"file-history-snapshot","messageId":"m","snapshot":{},"isSnapshotUpdate":false}"#;
        let mut session = snapshot.to_vec();
        session.push(b'\n');
        session.extend_from_slice(user.as_bytes());
        assert!(looks_like(&session));
        assert!(
            !looks_like(snapshot),
            "nothing but bookkeeping: nothing to convert"
        );
        assert!(!looks_like(br#"{"v":1,"type":"meta","sessionId":"x"}"#));
        assert!(!looks_like(
            br#"{"ts":"x","dir":"in","msg":{},"sessionId":"s","type":"user"}"#
        ));
        assert!(!looks_like(
            br#"{"jsonrpc":"2.0","method":"x","_meta":{"dir":"send","ts":"t"}}"#
        ));
        assert!(!looks_like(
            br#"{"v":1,"i":0,"dir":"c2s","kind":"request","id":1,"payload":{}}"#
        ));
        assert!(!looks_like(br#"{"t":1,"dir":"c2s","payload":{}}"#));
        // A sub-agent's own file is read with its session.
        assert!(!looks_like(
            br#"{"isSidechain":true,"agentId":"a1","sessionId":"s","type":"user"}"#
        ));
        assert!(!looks_like(b"not json"));
        assert!(!looks_like(b""));
        // A first line longer than the head.
        let head = br#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","message":"aaaa"#;
        assert!(looks_like(head));
    }

    #[test]
    fn assistant_lines_merge_by_message_id_and_usage_counts_once() {
        let lines = vec![
            line(
                "user",
                T0,
                serde_json::json!({"message": {"role": "user", "content": "read it"}}),
            ),
            assistant(
                "msg_1",
                "2026-03-01T10:00:01.000Z",
                serde_json::json!({"type": "thinking", "thinking": "hmm", "signature": "sig=="}),
                9,
            ),
            r#"{"type":"progress","timestamp":"2026-03-01T10:00:01.500Z","sessionId":"s-1"}"#
                .to_owned(),
            assistant(
                "msg_1",
                "2026-03-01T10:00:02.000Z",
                serde_json::json!({"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"p": 1}}),
                20,
            ),
            line(
                "user",
                "2026-03-01T10:00:03.000Z",
                serde_json::json!({
                "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "data", "is_error": false}]},
                "toolUseResult": {"stdout": "data"}}),
            ),
        ];
        let t = turns(run(&lines));
        assert_eq!(t.len(), 3, "{t:?}");
        let (at, a) = &t[1];
        assert_eq!(*at, Timestamp::parse("2026-03-01T10:00:02.000Z").unwrap());
        assert_eq!(a.role.as_deref(), Some("assistant"));
        assert_eq!(a.model.as_deref(), Some("claude-x"));
        let blocks = a.blocks.as_ref().unwrap();
        assert_eq!(blocks.len(), 2);
        assert!(matches!(&blocks[0], Block::Thinking { extra, .. } if extra.is_empty()));
        assert!(matches!(&blocks[1], Block::ToolUse { name, .. } if name == "Read"));
        let u = a.usage.as_ref().unwrap();
        assert_eq!(u.output_tokens, Some(20), "the last line's usage");
        assert_eq!(u.cache_read_input_tokens, Some(100));
        assert_eq!(a.timing.as_ref().unwrap().duration_ms, Some(2000.0));
        match &t[2].1.blocks.as_ref().unwrap()[0] {
            Block::ToolResult {
                tool_use_id, extra, ..
            } => {
                assert_eq!(tool_use_id, "toolu_1");
                assert_eq!(extra["structured"]["stdout"], "data");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn split_messages_merge_once_and_markers_and_skips() {
        let lines = vec![
            r#"{"type":"summary","summary":"Earlier work","leafUuid":"l1"}"#.to_owned(),
            line(
                "user",
                T0,
                serde_json::json!({"isMeta": true, "message": {"role": "user", "content": "Caveat: local"}}),
            ),
            assistant(
                "msg_2",
                "2026-03-01T10:00:01.000Z",
                serde_json::json!({"type": "text", "text": "a"}),
                5,
            ),
            line(
                "user",
                "2026-03-01T10:00:02.000Z",
                serde_json::json!({"message": {"role": "user", "content": "interject"}}),
            ),
            assistant(
                "msg_2",
                "2026-03-01T10:00:03.000Z",
                serde_json::json!({"type": "text", "text": "b"}),
                6,
            ),
            line(
                "system",
                "2026-03-01T10:00:04.000Z",
                serde_json::json!({"subtype": "compact_boundary", "content": "Conversation compacted", "level": "info"}),
            ),
            line(
                "user",
                "2026-03-01T10:00:05.000Z",
                serde_json::json!({"isCompactSummary": true, "message": {"role": "user", "content": "This session is being continued"}}),
            ),
            r#"{"type":"file-history-snapshot","messageId":"m","snapshot":{}}"#.to_owned(),
            line(
                "assistant",
                "2026-03-01T10:00:06.000Z",
                serde_json::json!({"isSidechain": true, "agentId": "ag", "message": {"id": "msg_3", "model": "claude-y", "content": [{"type": "text", "text": "sub"}]}}),
            ),
        ];
        let mut s = Survey::default();
        for (i, l) in lines.iter().enumerate() {
            s.line(i as u64 + 1, l.as_bytes());
        }
        s.finish();
        assert_eq!(s.split.get("msg_2"), Some(&(3, 5)));
        assert_eq!(s.skipped.get("file-history-snapshot"), Some(&1));
        assert_eq!(s.warnings("f.jsonl").len(), 1);
        let t = turns(run(&lines));
        let roles: Vec<(&str, Option<&str>)> = t
            .iter()
            .map(|(_, t)| {
                (
                    t.role.as_deref().unwrap(),
                    t.extra.get("marker").and_then(Value::as_str),
                )
            })
            .collect();
        assert_eq!(
            roles,
            [
                ("system", Some("summary")),
                ("system", Some("meta")),
                ("user", None),
                ("assistant", None),
                ("system", Some("compact_boundary")),
                ("system", Some("compact_summary")),
                ("assistant", None),
            ]
        );
        // The summary, before any timestamp, takes the start.
        assert_eq!(t[0].0, Timestamp::parse(T0).unwrap());
        let merged = &t[3].1;
        assert_eq!(merged.blocks.as_ref().unwrap().len(), 2);
        assert_eq!(merged.usage.as_ref().unwrap().output_tokens, Some(6));
        assert_eq!(t.iter().filter(|(_, t)| t.usage.is_some()).count(), 1);
        assert_eq!(t[6].1.extra["sidechain"], true);
        assert_eq!(t[6].1.extra["agentId"], "ag");
    }

    #[test]
    fn bad_lines_are_problems_never_panics() {
        let lines: Vec<String> = [
            "not json",
            "[1,2]",
            r#"{"no":"type"}"#,
            r#"{"type":"assistant","timestamp":"2026-03-01T10:00:00Z"}"#,
            r#"{"type":"assistant","message":{"content":"plain"},"timestamp":"bad"}"#,
            r#"{"type":"user","message":{"content":[1,{"type":"tool_result"}]}}"#,
            r#"{"type":"system","content":{"odd":1}}"#,
            "",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let out = run(&lines);
        let problems: Vec<u64> = out
            .iter()
            .filter_map(|o| o.as_ref().err().map(|(p, _)| p.line))
            .collect();
        assert_eq!(problems, [1, 2, 3, 4]);
        assert_eq!(turns(out).len(), 3);
        // Without a survey, a late part of a written message is refused, not counted.
        let mut c = Converter::new(Timestamp::parse(T0).unwrap());
        let a = assistant("m", T0, serde_json::json!({"type": "text", "text": "x"}), 1);
        let u = line("user", T0, serde_json::json!({"message": {"content": "y"}}));
        for (i, l) in [&a, &u, &a].iter().enumerate() {
            c.line(i as u64 + 1, l.as_bytes());
        }
        c.finish();
        let out: Vec<Out> = std::iter::from_fn(|| c.pop()).collect();
        assert_eq!(out.len(), 3);
        assert!(out[2].is_err());
    }

    #[test]
    fn a_session_converts_with_its_subagent_files() {
        let tmp = tempfile::tempdir().unwrap();
        let main = tmp.path().join("s-1.jsonl");
        let lines = [
            line(
                "user",
                T0,
                serde_json::json!({"message": {"role": "user", "content": "go"}}),
            ),
            assistant(
                "msg_1",
                "2026-03-01T10:00:05.000Z",
                serde_json::json!({"type": "text", "text": "done"}),
                4,
            ),
        ];
        std::fs::write(&main, lines.join("\n")).unwrap();
        let sub = tmp.path().join("s-1/subagents");
        std::fs::create_dir_all(&sub).unwrap();
        let sub_line = line(
            "assistant",
            "2026-03-01T10:00:02.000Z",
            serde_json::json!({
            "isSidechain": true, "agentId": "a7",
            "message": {"id": "msg_s", "model": "claude-y", "content": [{"type": "text", "text": "sub"}]}}),
        );
        std::fs::write(sub.join("agent-a7.jsonl"), format!("{sub_line}\n")).unwrap();
        assert!(is_subagent_dir(&sub));
        // The older layout: beside the session, naming it; another session's is not its.
        let old = |id: &str, session: &str, t: &str| {
            let mut l: Value = serde_json::from_str(&line(
                "user",
                t,
                serde_json::json!({
                "isSidechain": true, "agentId": id,
                "message": {"role": "user", "content": "task"}}),
            ))
            .unwrap();
            l["sessionId"] = session.into();
            l.to_string()
        };
        std::fs::write(
            tmp.path().join("agent-b2.jsonl"),
            old("b2", "s-1", "2026-03-01T10:00:03.000Z"),
        )
        .unwrap();
        std::fs::write(
            tmp.path().join("agent-c3.jsonl"),
            old("c3", "s-9", "2026-03-01T10:00:03.000Z"),
        )
        .unwrap();
        assert!(
            !looks_like(old("b2", "s-1", T0).as_bytes()),
            "read with its session"
        );
        let c = convert(&main).unwrap();
        assert_eq!(c.kind, "cc-session");
        assert_eq!(c.facts["sessionId"], "s-1");
        assert_eq!(c.facts["subagents"], 2);
        let items: Vec<Item> = c.items.map(|i| i.unwrap()).collect();
        let agents: Vec<Option<&str>> = items
            .iter()
            .map(|i| match i {
                Item::Turn { turn, .. } => turn.extra.get("agentId").and_then(Value::as_str),
                _ => panic!("{i:?}"),
            })
            .collect();
        assert_eq!(
            agents,
            [None, Some("a7"), Some("b2"), None],
            "in time order"
        );
        let empty = tmp.path().join("e.jsonl");
        std::fs::write(
            &empty,
            r#"{"type":"file-history-snapshot","messageId":"m","snapshot":{}}"#,
        )
        .unwrap();
        assert!(matches!(convert(&empty), Err(ConvertError::Empty)));
        let summaries = tmp.path().join("old.jsonl");
        std::fs::write(
            &summaries,
            r#"{"type":"summary","summary":"A","leafUuid":"l"}"#,
        )
        .unwrap();
        let c = convert(&summaries).unwrap();
        assert!(c.started.0 > 0, "the file's time");
        assert_eq!(c.items.count(), 1);
    }
}
