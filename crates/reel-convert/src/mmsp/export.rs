//! `reel export mmsp`: the conversations of a reel trace (an LLM recording, or an
//! imported MMSP or Claude Code session: turns are turns) saved through the tracer's
//! writer, one conversation per trace id.
//!
//! A trace of one conversation is saved under the id given. A trace of several (the
//! turns of `reel llm` carry the number of their conversation as `conversation`) saves
//! each under `<id>/conversation_NNN`, `NNN` its number in three digits or more, the
//! layout MMSP's own agents use (`agent1/conversation_001`).
//!
//! The config: a trace imported from MMSP gives back the config it was saved with
//! (kept in `meta.imported.config`), `trace_id` set to the new id; an LLM recording
//! gives the request's system prompt (`llm.request`'s `system`), `max_tokens` and
//! `temperature` (from the recorded request body). Tool definitions are not in a
//! recording (only their names and hashes), so they are counted as left out. MCP
//! messages, failed exchanges and other events have no place in MMSP and are counted.
//!
//! What comes back is MMSP's content, not its bytes: a trace keeps members by name, so
//! the members of the config and of nested objects come back in alphabetical order
//! (`model` last, as MMSP puts it), and thinking signatures, which reel drops on
//! import, do not come back.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::super::{ExportError, Left};
use super::conversation::Conversation;
use super::writer::{MmspError, save_at, trace_files};
use reel_trace::Timestamp;
use reel_trace::line::{Line, Meta, kinds};
use reel_trace::reader::TraceReader;

/// Writes the conversations of `trace` into the MMSP cache directory `cache` (`cache`
/// when empty) under the trace id `id` (RFC-0010 §4–§6); returns the `.json` files
/// written and what the format could not hold. The id is checked before the trace is
/// read; a refused one is [`ExportError::TraceId`] with the RFC's message.
pub fn export(trace: &Path, cache: &Path, id: &str) -> Result<(Vec<PathBuf>, Left), ExportError> {
    let cache = if cache.as_os_str().is_empty() {
        Path::new("cache")
    } else {
        cache
    };
    if trace_files(cache, id).map_err(export_error)?.is_none() {
        return Err(ExportError::TraceId(
            "an empty trace id saves no trace (RFC-0010 §4): give one with --id".into(),
        ));
    }
    let (conversations, left) = read_conversations(trace)?;
    if conversations.is_empty() {
        return Err(ExportError::Unfit(format!(
            "{} holds no conversation turn MMSP can hold",
            trace.display()
        )));
    }
    let several = conversations.len() > 1;
    let now = Timestamp::now();
    let mut written = Vec::new();
    for (n, mut conversation) in conversations {
        let id = if several {
            format!("{id}/conversation_{n:03}")
        } else {
            id.to_owned()
        };
        let Some(files) = trace_files(cache, &id).map_err(export_error)? else {
            continue;
        };
        conversation.config_set("trace_id", id.clone().into());
        if conversation.model.is_empty() {
            conversation.model = "unknown".into();
        }
        save_at(&files, &conversation, now).map_err(export_error)?;
        written.push(files.json);
    }
    Ok((written, left))
}

fn export_error(e: MmspError) -> ExportError {
    match e {
        MmspError::Write { ref source, .. } => {
            ExportError::Write(io::Error::new(source.kind(), e.to_string()))
        }
        e @ MmspError::TraceId(_) => ExportError::TraceId(e.to_string()),
    }
}

/// The trace's conversations by number (0: turns that carry none), each with history.
fn read_conversations(trace: &Path) -> Result<(BTreeMap<u64, Conversation>, Left), ExportError> {
    let mut reader = TraceReader::open(trace)?;
    let mut left = Left::default();
    let mut base = Conversation::default();
    let mut conversations: BTreeMap<u64, Conversation> = BTreeMap::new();
    let mut conversation_of_request: HashMap<u64, u64> = HashMap::new();
    let mut tools_told = BTreeSet::new();
    while let Some(line) = reader.next_line() {
        let line = line?;
        let Ok(parsed) = line.parse() else {
            left.add("lines that are not trace lines");
            continue;
        };
        match parsed {
            Line::Meta(m) => take_imported_config(&mut base, &m),
            Line::Turn(turn) => {
                let n = turn
                    .extra
                    .get("conversation")
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                if let Some(req) = turn
                    .extra
                    .get("http")
                    .and_then(|h| h.get("req"))
                    .and_then(Value::as_u64)
                {
                    conversation_of_request.insert(req, n);
                }
                conversations
                    .entry(n)
                    .or_insert_with(|| base.clone())
                    .push_turn(&turn, &mut left);
            }
            Line::Event(e) => match e.kind.as_deref() {
                Some(kinds::LLM_REQUEST) => {
                    let n = conversation_of_request
                        .get(&e.http_req())
                        .copied()
                        .unwrap_or(0);
                    let raw: Value = e
                        .raw_str()
                        .and_then(|r| serde_json::from_str(r).ok())
                        .unwrap_or(Value::Null);
                    let request = serde_json::from_slice::<Value>(line.raw.bytes)
                        .ok()
                        .and_then(|l| l.get("request")?.get("body").cloned());
                    let conversation = conversations.entry(n).or_insert_with(|| base.clone());
                    let told = request_config(conversation, &raw, request.as_ref());
                    if told && tools_told.insert(n) {
                        left.add("tool definitions (a recording keeps their names only)");
                    }
                }
                Some(kinds::LLM_BODY | kinds::LLM_EXCHANGE) => {}
                Some(kinds::LLM_ERROR | kinds::LLM_TRUNCATED) => left.add("failed exchanges"),
                _ => left.add("events"),
            },
            Line::Message(_) => left.add("MCP messages"),
            Line::End(_) => {}
            Line::Other(_) => left.add("lines of unknown types"),
        }
    }
    conversations.retain(|_, c| !c.history.is_empty());
    Ok((conversations, left))
}

/// The config and model of a trace imported from MMSP (`meta.imported.config`), for
/// every conversation to start from.
fn take_imported_config(base: &mut Conversation, meta: &Meta) {
    let Some(imported) = meta.extra.get("imported").and_then(Value::as_object) else {
        return;
    };
    if imported.get("format").and_then(Value::as_str) != Some("mmsp") {
        return;
    }
    let Some(config) = imported.get("config").and_then(Value::as_object) else {
        return;
    };
    base.model = config
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    base.config = config
        .iter()
        .filter(|(k, _)| *k != "model")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
}

/// What an `llm.request` says of the config (`raw` its payload: `system`,
/// `tools_count`; `body` the request body): the system prompt, `max_tokens` and
/// `temperature`, each kept when the config has none yet. True when the request had
/// tool definitions the config cannot get back.
pub fn request_config(conversation: &mut Conversation, raw: &Value, body: Option<&Value>) -> bool {
    if conversation.config_get("system_prompt").is_none() {
        let system = match raw.get("system") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Array(blocks)) => Some(
                blocks
                    .iter()
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            _ => None,
        };
        if let Some(s) = system.filter(|s| !s.is_empty()) {
            conversation.config_set("system_prompt", s.into());
        }
    }
    if let Some(body) = body {
        for key in ["max_tokens", "temperature"] {
            if let Some(v @ Value::Number(_)) = body.get(key) {
                if conversation.config_get(key).is_none() {
                    conversation.config_set(key, v.clone());
                }
            }
        }
    }
    raw.get("tools_count").and_then(Value::as_u64).unwrap_or(0) > 0
        && conversation.config_get("tools").is_none()
}
