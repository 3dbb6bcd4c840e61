//! The tracer's writer (MMSP-RFC-0010 §4–§6): one conversation saved under a trace id
//! into a cache directory, as `<id>.json` and `<id>.txt`.
//!
//! - The id is checked before anything is written, or even a directory created: an
//!   absolute path, `..` segments that leave the cache directory, an id that names the
//!   directory itself, and an id that a symbolic link takes outside it are refused with
//!   the RFC's message. Any other id is normalised as `path.resolve` normalises a path
//!   (`a//b/` → `a/b`, `agent/../kept` → `kept`), and the suffixes are appended to it
//!   (`run.v2` → `run.v2.json`, not 0.5.6's `with_suffix` replacing `.v2`). An empty
//!   id saves nothing (§4).
//! - Each save rewrites both files whole, each through a temporary file in the same
//!   directory renamed over it, so a reader never meets half a file.
//! - The `.json` is MMSP's own shape, as 0.5.6 writes it: two-space indentation,
//!   non-ASCII unescaped, no final newline, members in MMSP's order (`role`,
//!   `content_items`, `usage_metadata`, `finish_reason`, `created_at`; `type` first in
//!   an item), bytes as standard base64, no `fidelity.item_id` (stripped here whatever
//!   the caller gives), `model` last in the config, and `timestamp` in UTC with
//!   milliseconds and `Z` (RFC-0010 §6, not 0.5.6's naive local time).
//!
//! [`Conversation`] is built from reel's turns ([`Conversation::push_turn`], in
//! `turns.rs`), so a live recorder can push each exchange's new turns and call [`save`]
//! after each completed response, as MMSP saves before it yields its `stop`.

use std::ffi::OsString;
use std::fs;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

use base64::Engine as _;
use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::{Map, Value};

use reel_trace::Timestamp;

/// The client name MMSP's refusal message starts with.
pub const CLIENT: &str = "reel";

/// Why a trace cannot be saved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MmspError {
    /// The trace id would leave the cache directory (RFC-0010 §4); nothing was written.
    #[error(
        "{CLIENT} does not support trace_id '{0}': it must be a relative path that stays \
         inside the cache directory."
    )]
    TraceId(String),
    /// A file or directory cannot be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

/// The two files of a trace id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceFiles {
    /// `<id>.json`, the trace.
    pub json: PathBuf,
    /// `<id>.txt`, the transcript for a reader.
    pub txt: PathBuf,
}

/// The files trace id `id` names under `cache`, checked and normalised as RFC-0010 §4
/// says; `None` for the empty id (no trace). Writes nothing.
pub fn trace_files(cache: &Path, id: &str) -> Result<Option<TraceFiles>, MmspError> {
    if id.is_empty() {
        return Ok(None);
    }
    let refused = || MmspError::TraceId(id.to_owned());
    if id.starts_with('/') || id.contains('\0') || Path::new(id).is_absolute() {
        return Err(refused());
    }
    if Path::new(id)
        .components()
        .any(|c| matches!(c, Component::Prefix(_) | Component::RootDir))
    {
        return Err(refused());
    }
    let mut segments: Vec<&str> = Vec::new();
    for s in id.split('/') {
        match s {
            "" | "." => {}
            ".." => {
                segments.pop().ok_or_else(refused)?;
            }
            s => segments.push(s),
        }
    }
    if segments.is_empty() {
        return Err(refused());
    }
    let target: PathBuf = segments.iter().fold(cache.to_path_buf(), |p, s| p.join(s));
    // Symbolic links count: the check the viewer makes (RFC-0010 §7), on what exists.
    let root = resolve_existing(cache);
    let real = resolve_existing(&target);
    if real == root || !real.starts_with(&root) {
        return Err(refused());
    }
    let with = |suffix: &str| {
        let mut name = OsString::from(target.as_os_str());
        name.push(suffix);
        PathBuf::from(name)
    };
    Ok(Some(TraceFiles {
        json: with(".json"),
        txt: with(".txt"),
    }))
}

/// `p` with its deepest existing ancestor's symbolic links resolved and the rest
/// appended as it is.
fn resolve_existing(p: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut cur = p.to_path_buf();
    loop {
        if let Ok(mut real) = cur.canonicalize() {
            real.extend(rest.iter().rev());
            return real;
        }
        match (cur.file_name().map(ToOwned::to_owned), cur.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                cur = if parent.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    parent.to_path_buf()
                };
            }
            _ => return p.to_path_buf(),
        }
    }
}

/// Saves `conversation` under trace id `id` in the cache directory `cache` (created
/// when missing), both files rewritten whole; returns the `.json` written, `None` for
/// the empty id. The id is refused before anything is written.
pub fn save(
    cache: &Path,
    id: &str,
    conversation: &Conversation,
) -> Result<Option<PathBuf>, MmspError> {
    let Some(files) = trace_files(cache, id)? else {
        return Ok(None);
    };
    save_at(&files, conversation, Timestamp::now())?;
    Ok(Some(files.json))
}

/// Writes both files of a save at `now`.
pub(super) fn save_at(
    files: &TraceFiles,
    conversation: &Conversation,
    now: Timestamp,
) -> Result<(), MmspError> {
    let write_err = |path: &Path| {
        let path = path.to_owned();
        move |source| MmspError::Write { path, source }
    };
    // The cache holds conversations: private, as traces are.
    if let Some(dir) = files.json.parent() {
        reel_trace::names::ensure_dir(dir).map_err(write_err(dir))?;
    }
    let json = conversation.to_json(now);
    write_atomic(&files.json, json.as_bytes()).map_err(write_err(&files.json))?;
    let txt = super::transcript::transcript(conversation, now);
    write_atomic(&files.txt, txt.as_bytes()).map_err(write_err(&files.txt))?;
    Ok(())
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`.
fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
    let written = (|| {
        let mut f = reel_trace::names::private_file_options()
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// One conversation as MMSP saves it: the history, the config as given, and the model
/// of the client that saved it (added to the config last, as `model`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conversation {
    /// The messages, in order.
    pub history: Vec<Message>,
    /// The config members, in order (`trace_id` kept; a `model` here is replaced).
    pub config: Vec<(String, Value)>,
    /// The model id.
    pub model: String,
}

/// A history message (MMSP's `UniMessage`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message {
    /// `user` or `assistant`.
    pub role: String,
    /// The done items, in order.
    pub content_items: Vec<ContentItem>,
    /// Token usage (assistant messages a stream produced).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_metadata: Option<UsageMetadata>,
    /// `stop`, `length`, `tool_call` or `unknown` (assistant messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// Unix milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_at: Option<i64>,
}

/// MMSP's `usage_metadata`: all four counts, `null` when not reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct UsageMetadata {
    /// Input read from the cache.
    pub cached_tokens: Option<u64>,
    /// Input not read from the cache.
    pub prompt_tokens: Option<u64>,
    /// Output spent thinking.
    pub thoughts_tokens: Option<u64>,
    /// The answer's output.
    pub response_tokens: Option<u64>,
}

impl UsageMetadata {
    /// The four counts, null as 0, summed (the transcript's total).
    pub fn total(&self) -> u64 {
        [
            self.cached_tokens,
            self.prompt_tokens,
            self.thoughts_tokens,
            self.response_tokens,
        ]
        .iter()
        .map(|n| n.unwrap_or(0))
        .fold(0, u64::saturating_add)
    }
}

/// A done content item.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentItem {
    /// `text.done`.
    Text {
        /// The text.
        text: String,
        /// Opaque provider data.
        fidelity: Option<Map<String, Value>>,
    },
    /// `image_url.done`: an http(s) URL or a `data:` URI.
    ImageUrl {
        /// The URL.
        image_url: String,
    },
    /// `inline_data.done`: images, audio.
    InlineData {
        /// The bytes (base64 in the file).
        data: Vec<u8>,
        /// Their type.
        mime_type: String,
        /// Opaque provider data.
        fidelity: Option<Map<String, Value>>,
    },
    /// `thinking.done`.
    Thinking {
        /// The thinking text (`_REDACTED_THINKING` for redacted thinking).
        thinking: String,
        /// Opaque provider data (a signature).
        fidelity: Option<Map<String, Value>>,
    },
    /// `inline_thinking.done`: an image a model thinks with.
    InlineThinking {
        /// The bytes (base64 in the file).
        data: Vec<u8>,
        /// Their type.
        mime_type: String,
        /// Opaque provider data.
        fidelity: Option<Map<String, Value>>,
    },
    /// `tool_call.done`.
    ToolCall {
        /// The tool.
        name: String,
        /// Its arguments, an object.
        arguments: Value,
        /// Paired with a `tool_result.done`.
        tool_call_id: String,
        /// Opaque provider data.
        fidelity: Option<Map<String, Value>>,
    },
    /// `tool_result.done`.
    ToolResult {
        /// The result's text.
        text: String,
        /// Image URLs or `data:` URIs.
        images: Vec<String>,
        /// The call it answers.
        tool_call_id: String,
    },
    /// `embedding.done`.
    Embedding {
        /// The vector.
        embedding: Vec<Value>,
    },
    /// Any other done item, written as it is.
    Other(Map<String, Value>),
}

impl Serialize for ContentItem {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let b64 = |d: &[u8]| base64::engine::general_purpose::STANDARD.encode(d);
        let mut m = s.serialize_map(None)?;
        let fidelity = |m: &mut S::SerializeMap, f: &Option<Map<String, Value>>| {
            let Some(f) = f else { return Ok(()) };
            let mut f = f.clone();
            f.remove("item_id");
            if f.is_empty() {
                return Ok(());
            }
            m.serialize_entry("fidelity", &f)
        };
        match self {
            ContentItem::Text { text, fidelity: f } => {
                m.serialize_entry("type", "text.done")?;
                m.serialize_entry("text", text)?;
                fidelity(&mut m, f)?;
            }
            ContentItem::ImageUrl { image_url } => {
                m.serialize_entry("type", "image_url.done")?;
                m.serialize_entry("image_url", image_url)?;
            }
            ContentItem::InlineData {
                data,
                mime_type,
                fidelity: f,
            }
            | ContentItem::InlineThinking {
                data,
                mime_type,
                fidelity: f,
            } => {
                let ty = if matches!(self, ContentItem::InlineData { .. }) {
                    "inline_data.done"
                } else {
                    "inline_thinking.done"
                };
                m.serialize_entry("type", ty)?;
                m.serialize_entry("data", &b64(data))?;
                m.serialize_entry("mime_type", mime_type)?;
                fidelity(&mut m, f)?;
            }
            ContentItem::Thinking {
                thinking,
                fidelity: f,
            } => {
                m.serialize_entry("type", "thinking.done")?;
                m.serialize_entry("thinking", thinking)?;
                fidelity(&mut m, f)?;
            }
            ContentItem::ToolCall {
                name,
                arguments,
                tool_call_id,
                fidelity: f,
            } => {
                m.serialize_entry("type", "tool_call.done")?;
                m.serialize_entry("name", name)?;
                m.serialize_entry("arguments", arguments)?;
                m.serialize_entry("tool_call_id", tool_call_id)?;
                fidelity(&mut m, f)?;
            }
            ContentItem::ToolResult {
                text,
                images,
                tool_call_id,
            } => {
                m.serialize_entry("type", "tool_result.done")?;
                m.serialize_entry("text", text)?;
                if !images.is_empty() {
                    m.serialize_entry("images", images)?;
                }
                m.serialize_entry("tool_call_id", tool_call_id)?;
            }
            ContentItem::Embedding { embedding } => {
                m.serialize_entry("type", "embedding.done")?;
                m.serialize_entry("embedding", embedding)?;
            }
            ContentItem::Other(o) => {
                if let Some(ty) = o.get("type") {
                    m.serialize_entry("type", ty)?;
                }
                for (k, v) in o.iter().filter(|(k, _)| *k != "type") {
                    if k == "fidelity" {
                        if let Value::Object(f) = v {
                            fidelity(&mut m, &Some(f.clone()))?;
                            continue;
                        }
                    }
                    m.serialize_entry(k, v)?;
                }
            }
        }
        m.end()
    }
}

/// Members serialised in the order given.
struct Ordered<'a>(&'a [(String, Value)], &'a str);

impl Serialize for Ordered<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        for (k, v) in self.0.iter().filter(|(k, _)| k != "model") {
            m.serialize_entry(k, v)?;
        }
        m.serialize_entry("model", self.1)?;
        m.end()
    }
}

#[derive(Serialize)]
struct TraceFile<'a> {
    history: &'a [Message],
    config: Ordered<'a>,
    timestamp: &'a str,
}

impl Conversation {
    /// An empty conversation of `model` with `config`.
    pub fn new(model: impl Into<String>, config: Vec<(String, Value)>) -> Conversation {
        Conversation {
            history: Vec::new(),
            config,
            model: model.into(),
        }
    }

    /// The config as the file holds it: as given, `model` last.
    pub fn config_with_model(&self) -> Vec<(String, Value)> {
        let mut c: Vec<(String, Value)> = self
            .config
            .iter()
            .filter(|(k, _)| k != "model")
            .cloned()
            .collect();
        c.push(("model".into(), self.model.clone().into()));
        c
    }

    /// The value of config member `key`.
    pub fn config_get(&self, key: &str) -> Option<&Value> {
        self.config.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Sets config member `key` (in its place, or last).
    pub fn config_set(&mut self, key: &str, value: Value) {
        match self.config.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value,
            None => self.config.push((key.to_owned(), value)),
        }
    }

    /// The `.json` text of a save at `now`.
    pub fn to_json(&self, now: Timestamp) -> String {
        let iso = now.to_iso();
        let file = TraceFile {
            history: &self.history,
            config: Ordered(&self.config, &self.model),
            timestamp: iso.as_str(),
        };
        // Only string keys and JSON values: serialising cannot fail.
        serde_json::to_string_pretty(&file).unwrap_or_default()
    }
}
