//! Traces written as a test states them: JSON values a line, with the JSON-RPC messages
//! built by the functions here, so no area spells a trace's shape out again.
//!
//! [`TraceBuilder`] writes one session (a meta line, the lines, an end line), giving
//! each line without a `t` the next millisecond. [`write_lines`] writes lines exactly as
//! given, for tests about several sessions or odd files. Tapes for `reel play` come from
//! `play_support::TapeWriter`, which goes through reel's own trace writer; byte-level
//! traces (torn lines, invalid UTF-8) are written as bytes where they are tested.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// When every built trace starts.
pub const STARTED: &str = "2026-01-01T00:00:00.000Z";

/// `2026-01-01T00:MM:SS.mmmZ`, `ms` milliseconds after [`STARTED`] (under an hour).
pub fn at(ms: u64) -> String {
    format!(
        "2026-01-01T00:{:02}:{:02}.{:03}Z",
        ms / 60_000,
        ms / 1000 % 60,
        ms % 1000
    )
}

/// A meta line: format version 1, [`STARTED`], `label`, `kind` (`mcp` or `llm`).
pub fn meta(label: &str, kind: &str) -> Value {
    json!({"v": 1, "type": "meta", "startedAt": STARTED, "label": label,
           "command": ["srv", "--x"], "kind": kind, "source": "test@1"})
}

/// A message line without its time (`dir`: `in`, client to server, or `out`).
pub fn msg(dir: &str, raw: Value) -> Value {
    json!({"dir": dir, "raw": raw})
}

/// A message line at `ms`.
pub fn msg_at(ms: u64, dir: &str, raw: Value) -> Value {
    json!({"t": at(ms), "dir": dir, "raw": raw})
}

/// JSON-RPC messages, as a peer sends them.
pub mod rpc {
    use serde_json::{Value, json};

    /// A request.
    pub fn request(id: Value, method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    /// A `tools/call` of `name` with `arguments`.
    pub fn call(id: Value, name: &str, arguments: Value) -> Value {
        request(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        )
    }

    /// A result.
    pub fn result(id: Value, result: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "result": result})
    }

    /// An error answer.
    pub fn error(id: Value, code: i64, message: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
    }

    /// A notification.
    pub fn notification(method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "method": method, "params": params})
    }

    /// A tool result holding one text block.
    pub fn text(text: &str) -> Value {
        json!({"content": [{"type": "text", "text": text}], "isError": false})
    }
}

/// One session: a meta line, the lines, and an end line (exit code 0).
pub struct TraceBuilder {
    meta: Value,
    lines: Vec<Value>,
}

impl TraceBuilder {
    /// A session labelled `label`, of kind `mcp`.
    pub fn new(label: &str) -> TraceBuilder {
        TraceBuilder {
            meta: meta(label, "mcp"),
            lines: Vec::new(),
        }
    }

    /// Sets (or adds) the meta line's members in `members` (an object).
    pub fn meta(mut self, members: Value) -> TraceBuilder {
        if let (Some(m), Value::Object(extra)) = (self.meta.as_object_mut(), members) {
            m.extend(extra);
        }
        self
    }

    /// Adds lines; one without `t` (and not an event with a `type`) is stamped a
    /// millisecond after the line before it.
    pub fn lines(mut self, lines: impl IntoIterator<Item = Value>) -> TraceBuilder {
        self.lines.extend(lines);
        self
    }

    /// The trace's text.
    pub fn text(&self) -> String {
        let mut text = format!("{}\n", self.meta);
        let mut ms = 0;
        for line in &self.lines {
            ms += 1;
            let mut line = line.clone();
            if line.get("t").is_none() && line.get("type").is_none() {
                line["t"] = json!(at(ms));
            }
            text.push_str(&format!("{line}\n"));
        }
        let end = json!({"t": at(ms + 1), "type": "end", "exitCode": 0, "durationMs": ms + 1});
        text.push_str(&format!("{end}\n"));
        text
    }

    /// Writes the trace to `path`.
    pub fn write(&self, path: &Path) -> PathBuf {
        std::fs::write(path, self.text()).expect("write trace");
        path.to_owned()
    }
}

/// Writes `lines` to `path`, one JSON value a line, nothing added.
pub fn write_lines(path: &Path, lines: &[Value]) -> PathBuf {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, text).expect("write trace");
    path.to_owned()
}
