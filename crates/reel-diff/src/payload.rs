//! What a diff compares, and where it reads it again.
//!
//! The sides read each trace once and keep only positions and fingerprints; when two
//! fingerprints differ, or a drift is shown in full, the payloads are read again here by
//! their [`Loc`] and turned into the values the comparison is about: a message through
//! the other side's redaction rules and the shared normaliser ([`Prep`]), progress
//! without its token, a turn without the ids honest runs change.
//!
//! Invariant: a value here is a pure function of the line's bytes and the options, so
//! "equal fingerprints" on the hot path and "equal values" here never disagree.

use std::borrow::Cow;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use reel_mcp::normalize::Normalizer;
use reel_redact::redact::Redactor;
use reel_trace::line::parse_line;
use reel_trace::{Line, Turn};
use serde::de::IgnoredAny;
use serde_json::{Map, Value};

use crate::DiffError;
use crate::side::Loc;

/// How a side turns payload text into comparable values: the other side's redaction
/// rules (when the two traces were redacted differently), then the shared normaliser.
#[derive(Clone, Debug)]
pub(crate) struct Prep {
    pub normalizer: Normalizer,
    pub cross: Option<Redactor>,
}

impl Prep {
    pub(crate) fn new(ignore: Normalizer, cross: Option<Redactor>) -> Prep {
        let normalizer = match &cross {
            Some(r) => ignore.with_redactor(r.clone()),
            None => ignore,
        };
        Prep { normalizer, cross }
    }

    pub(crate) fn redact<'a>(&self, raw: &'a str) -> Cow<'a, str> {
        match &self.cross {
            Some(r) => r.redact_json(raw),
            None => Cow::Borrowed(raw),
        }
    }

    /// A message's normalised value.
    pub(crate) fn value(&self, raw: &str) -> Option<Value> {
        let v = if self.cross.is_some() {
            self.normalizer.normalize_live(raw)
        } else {
            self.normalizer.normalize_recorded(raw)
        };
        v.ok()
    }
}

/// A progress notification as compared: normalised, without `params.progressToken`.
pub(crate) fn progress_value(mut v: Value) -> Value {
    if let Some(p) = v.get_mut("params").and_then(Value::as_object_mut) {
        p.remove("progressToken");
    }
    v
}

/// A turn as compared: `{role, blocks}` with the ids that differ between honest runs
/// removed (`tool_use.id`, `tool_result.tool_use_id`, a thinking block's `signature`),
/// then the user's --ignore pointers (which address this value for turns).
pub(crate) fn turn_value(t: &Turn, normalizer: &Normalizer) -> Value {
    let blocks: Vec<Value> = t
        .blocks()
        .iter()
        .map(|b| {
            let mut v = b.to_value();
            if let Some(o) = v.as_object_mut() {
                match o.get("type").and_then(Value::as_str) {
                    Some("tool_use") => {
                        o.remove("id");
                    }
                    Some("tool_result") => {
                        o.remove("tool_use_id");
                    }
                    Some("thinking") => {
                        o.remove("signature");
                    }
                    _ => {}
                }
            }
            v
        })
        .collect();
    let mut m = Map::new();
    m.insert(
        "role".into(),
        t.role.clone().map_or(Value::Null, Value::String),
    );
    m.insert("blocks".into(), Value::Array(blocks));
    let mut v = Value::Object(m);
    for p in normalizer.ignored() {
        p.remove_from(&mut v);
    }
    v
}

/// What a turn did, for structural comparison: block types, tool names, error flags.
pub(crate) fn turn_shape(t: &Turn) -> String {
    let mut s = String::new();
    for b in t.blocks() {
        match b {
            reel_trace::Block::ToolUse { name, .. } => {
                s.push_str("tool_use:");
                s.push_str(name);
            }
            reel_trace::Block::ToolResult { is_error, .. } => {
                s.push_str(if *is_error == Some(true) {
                    "tool_result:error"
                } else {
                    "tool_result"
                });
            }
            other => s.push_str(other.type_name().unwrap_or("?")),
        }
        s.push('\n');
    }
    s
}

/// The facts of a turn that are reported but are not drift by default.
pub(crate) fn usage_value(t: &Turn) -> Value {
    let mut m = Map::new();
    let opt = |v: Option<Value>| v.unwrap_or(Value::Null);
    m.insert("model".into(), opt(t.model.clone().map(Value::String)));
    m.insert(
        "usage".into(),
        opt(t.usage.as_ref().and_then(|u| serde_json::to_value(u).ok())),
    );
    m.insert(
        "timing".into(),
        opt(t.timing.as_ref().and_then(|u| serde_json::to_value(u).ok())),
    );
    m.insert(
        "stop_reason".into(),
        opt(t.stop_reason.clone().map(Value::String)),
    );
    Value::Object(m)
}

/// Re-reads lines of one side by [`Loc`].
#[derive(Debug)]
pub(crate) struct Payloads {
    pub files: Vec<PathBuf>,
    handles: Vec<Option<File>>,
    pub prep: Prep,
}

impl Payloads {
    pub(crate) fn new(files: Vec<PathBuf>, prep: Prep) -> Payloads {
        let handles = files.iter().map(|_| None).collect();
        Payloads {
            files,
            handles,
            prep,
        }
    }

    /// The file a location is in.
    pub(crate) fn path(&self, loc: Loc) -> &Path {
        self.files
            .get(usize::from(loc.file))
            .map_or(Path::new("?"), PathBuf::as_path)
    }

    fn bytes(&mut self, loc: Loc) -> Result<Vec<u8>, DiffError> {
        let i = usize::from(loc.file);
        let path = self.path(loc).to_owned();
        let reread = |problem: String| DiffError::Reread {
            path: path.clone(),
            line: loc.line,
            problem,
        };
        if self.handles.get(i).is_some_and(Option::is_none) {
            self.handles[i] = Some(File::open(&path).map_err(|e| reread(e.to_string()))?);
        }
        let f = self
            .handles
            .get_mut(i)
            .and_then(Option::as_mut)
            .ok_or_else(|| reread("no such file in the trace".into()))?;
        let len = usize::try_from(loc.len).map_err(|e| reread(e.to_string()))?;
        let mut buf = vec![0u8; len];
        f.seek(SeekFrom::Start(loc.offset))
            .and_then(|_| f.read_exact(&mut buf))
            .map_err(|e| reread(e.to_string()))?;
        Ok(buf)
    }

    /// The normalised message at `loc`.
    pub(crate) fn message(&mut self, loc: Loc) -> Result<Value, DiffError> {
        let bytes = self.bytes(loc)?;
        let problem = |p: &str| DiffError::Reread {
            path: self.path(loc).to_owned(),
            line: loc.line,
            problem: format!("{p} (was the trace changed while diffing?)"),
        };
        match parse_line(&bytes) {
            Ok(Line::Message(v)) => {
                let raw = v.raw_str().ok_or_else(|| problem("no raw member"))?;
                match self.prep.value(raw) {
                    Some(value) => Ok(value),
                    // Valid JSON that serde_json's `Value` refuses: a number beyond f64
                    // (`1e999`) or nesting deeper than 128. The recorder keeps such bytes
                    // verbatim, so the diff compares them as text rather than failing.
                    None if serde_json::from_str::<IgnoredAny>(raw).is_ok() => {
                        Ok(Value::String(raw.to_owned()))
                    }
                    None => Err(problem("raw is not JSON")),
                }
            }
            _ => Err(problem("not a message line")),
        }
    }

    /// The turn at `loc`.
    pub(crate) fn turn(&mut self, loc: Loc) -> Result<Turn, DiffError> {
        let bytes = self.bytes(loc)?;
        match parse_line(&bytes) {
            Ok(Line::Turn(t)) => Ok(*t),
            _ => Err(DiffError::Reread {
                path: self.path(loc).to_owned(),
                line: loc.line,
                problem: "not a turn line (was the trace changed while diffing?)".into(),
            }),
        }
    }
}
