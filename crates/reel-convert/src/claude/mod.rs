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

use std::path::Path;

use serde_json::{Map, Value};

use super::{ConvertError, Converted, first_line};

/// What the format cannot hold.
pub const LIMITS: &str = "Claude Code transcripts hold the conversation as Claude Code \
     saw it, not the API traffic: no request bodies, no system prompt or tool definitions, \
     no time to first token (assistant timing is the time since the turn before it), \
     thinking signatures are dropped, file-history snapshots, progress and other \
     bookkeeping lines are skipped, and a line without a timestamp takes the one before it";

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

mod files;
mod survey;
mod turns;

use files::{FileStream, Head, Merge, Waiting, subagent_files};
pub use survey::Survey;
use survey::survey;
pub use turns::{Converter, Out, SOURCE};

#[cfg(test)]
mod tests;
