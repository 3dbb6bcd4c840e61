//! `reel llm --mmsp DIR`: the conversations a recording sees, saved as MMSP tracer files
//! while they happen (RFC-0010, through `reel_convert::mmsp`'s writer).
//!
//! Each exchange belongs to a trace id: the request's `x-mmsp-trace-id` header, else
//! `<run>/conversation_NNN` for the conversation reel's history elision puts it in
//! (`<run>/exchange_NNN` for a request continuing none). A request's turns wait until
//! its response completes; then they and the response join that id's conversation and
//! both files are rewritten whole. A response that failed or was cut off saves nothing
//! (§3), and its request's turns wait for the next completed response of the same id.
//! What is saved is what the trace holds: redacted, as the trace is.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use reel_convert::Left;
use reel_convert::mmsp::{Conversation, MmspError, request_config, save};
use reel_trace::line::Turn;
use serde_json::Value;

/// The request header naming an exchange's trace id.
pub const TRACE_ID_HEADER: &str = "x-mmsp-trace-id";

/// Where `--mmsp` saves: the cache directory and the run's name.
#[derive(Debug, Clone)]
pub struct MmspTarget {
    /// The cache directory.
    pub cache: PathBuf,
    /// The run's name: the trace ids of conversations without a header go under it.
    pub run: String,
}

impl MmspTarget {
    /// The target of a recording to `trace`: the run is named for the trace file (its
    /// stem), or `label` when the trace is not a file.
    pub fn for_run(cache: PathBuf, trace: Option<&Path>, label: &str) -> MmspTarget {
        let run = trace
            .and_then(Path::file_stem)
            .map_or_else(|| label.to_owned(), |s| s.to_string_lossy().into_owned());
        MmspTarget { cache, run }
    }
}

/// The live conversations of a recording.
pub(crate) struct Live {
    target: MmspTarget,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Each trace id's conversation as last saved.
    saved: HashMap<String, Conversation>,
    /// Request turns waiting for a completed response, by trace id.
    pending: HashMap<String, Vec<Turn>>,
    /// Ids refused already (said once).
    refused: HashSet<String>,
}

/// A save that did not happen, for the user.
pub(crate) struct Failed {
    /// The trace id.
    pub id: String,
    /// Why.
    pub error: String,
}

impl Live {
    pub(crate) fn new(target: MmspTarget) -> Live {
        Live {
            target,
            state: Mutex::new(State::default()),
        }
    }

    /// The trace id of an exchange: the header's, else one per conversation.
    pub(crate) fn trace_id(&self, header: Option<&str>, conversation: u64, n: u64) -> String {
        match header.map(str::trim).filter(|h| !h.is_empty()) {
            Some(h) => h.to_owned(),
            None if conversation > 0 => {
                format!("{}/conversation_{conversation:03}", self.target.run)
            }
            None => format!("{}/exchange_{n:03}", self.target.run),
        }
    }

    /// A turn of the request, as the trace holds it; with the request's config facts
    /// (`raw`: `system`, `tools_count`; `body`: the request body) for a new conversation.
    pub(crate) fn request(&self, id: &str, turn: Turn, raw: &Value, body: Option<&Value>) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let conversation = state.saved.entry(id.to_owned()).or_default();
        request_config(conversation, raw, body);
        if conversation.config_get("tools").is_none() {
            if let Some(tools) = body.and_then(tools_of) {
                conversation.config_set("tools", tools);
            }
        }
        state.pending.entry(id.to_owned()).or_default().push(turn);
    }

    /// The completed response of an exchange of `id`: joins the conversation with the
    /// request turns before it, and saves. `Ok(None)` when nothing was saved.
    pub(crate) fn response(&self, id: &str, turn: &Turn) -> Result<Option<PathBuf>, Failed> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.refused.contains(id) {
            return Ok(None);
        }
        let pending = state.pending.remove(id).unwrap_or_default();
        let conversation = state.saved.entry(id.to_owned()).or_default();
        let mut left = Left::default();
        for t in &pending {
            conversation.push_turn(t, &mut left);
        }
        conversation.push_turn(turn, &mut left);
        if conversation.model.is_empty() {
            conversation.model = "unknown".into();
        }
        conversation.config_set("trace_id", id.into());
        match save(&self.target.cache, id, conversation) {
            Ok(path) => Ok(path),
            Err(e) => {
                if matches!(e, MmspError::TraceId(_)) {
                    state.refused.insert(id.to_owned());
                }
                Err(Failed {
                    id: id.to_owned(),
                    error: e.to_string(),
                })
            }
        }
    }
}

/// The request's tool definitions in MMSP's shape (`{name, description, parameters}`),
/// from any provider's: Anthropic `input_schema`, OpenAI chat `{function: {…}}`,
/// Responses `{name, parameters}`. `None` when the request has none.
fn tools_of(body: &Value) -> Option<Value> {
    let tools = body.get("tools")?.as_array()?;
    let mapped: Vec<Value> = tools
        .iter()
        .filter_map(|t| {
            let f = t.get("function").unwrap_or(t);
            let name = f.get("name")?.clone();
            let mut out = serde_json::Map::new();
            out.insert("name".into(), name);
            if let Some(d) = f.get("description") {
                out.insert("description".into(), d.clone());
            }
            if let Some(p) = f.get("parameters").or_else(|| f.get("input_schema")) {
                out.insert("parameters".into(), p.clone());
            }
            Some(Value::Object(out))
        })
        .collect();
    (!mapped.is_empty()).then_some(Value::Array(mapped))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tools_of_every_provider_come_back_in_mmsp_shape() {
        let schema = json!({"type": "object", "properties": {"city": {"type": "string"}}});
        let want = json!([{"name": "w", "description": "d", "parameters": schema}]);
        let anthropic =
            json!({"tools": [{"name": "w", "description": "d", "input_schema": schema}]});
        let chat = json!({"tools": [{"type": "function", "function": {"name": "w", "description": "d", "parameters": schema}}]});
        let responses = json!({"tools": [{"type": "function", "name": "w", "description": "d", "parameters": schema}]});
        for body in [anthropic, chat, responses] {
            assert_eq!(tools_of(&body), Some(want.clone()));
        }
        assert_eq!(tools_of(&json!({"tools": []})), None);
        assert_eq!(tools_of(&json!({})), None);
    }

    #[test]
    fn trace_ids_come_from_the_header_else_the_conversation() {
        let live = Live::new(MmspTarget {
            cache: PathBuf::from("c"),
            run: "run".into(),
        });
        assert_eq!(live.trace_id(Some(" a/b "), 3, 9), "a/b");
        assert_eq!(live.trace_id(Some(""), 3, 9), "run/conversation_003");
        assert_eq!(live.trace_id(None, 0, 9), "run/exchange_009");
    }

    #[test]
    fn an_mmsp_run_is_named_for_the_trace_file_else_for_the_label() {
        let trace = Path::new("/runs/20261203T184700Z-llm.jsonl");
        let t = MmspTarget::for_run(PathBuf::from("/cache"), Some(trace), "llm");
        assert_eq!(t.run, "20261203T184700Z-llm");
        assert_eq!(t.cache, PathBuf::from("/cache"));
        let t = MmspTarget::for_run(PathBuf::from("/cache"), None, "agent");
        assert_eq!(t.run, "agent");
    }
}
