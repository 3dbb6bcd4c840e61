//! One recording imported: a foreign file converted into a trace reel writes, with the
//! recording redaction applied (other tools store what they saw raw) and the source's
//! own times (`meta.startedAt`, each line's `t`, `end.durationMs`), ending with
//! `reason: "imported"`. `meta.imported` says where it came from, what the format cannot
//! hold, and what the source says of itself.

use std::io;
use std::path::{Path, PathBuf};

use crate::{ConvertError, Converted, Fault, Format, Found, Item, Problem, convert};
use reel_redact::record::{LineRecorder, Tags, reel_meta};
use reel_redact::redact::Redactor;
use reel_trace::Timestamp;
use reel_trace::line::{Eol, kinds};
use reel_trace::target::{TargetError, TraceTarget};
use reel_trace::writer::{Ending, EventLine};
use serde_json::{Map, Value};

/// Why a file could not be imported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The source cannot be read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The source.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The source is not a format reel reads (and no `--from` said which).
    #[error("{}: not a file reel can import (formats: {}); give --from FORMAT if it is one", path.display(), format_names())]
    Unknown {
        /// The source.
        path: PathBuf,
    },
    /// The source holds nothing to import.
    #[error("{}: empty: no message in it", path.display())]
    Empty {
        /// The source.
        path: PathBuf,
    },
    /// The source is not what its format says.
    #[error("{}: not a readable {} file: {reason}", path.display(), format.name())]
    Invalid {
        /// The source.
        path: PathBuf,
        /// The format it was read as.
        format: Format,
        /// Why.
        reason: String,
    },
    /// The trace cannot be created.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// Writing the trace failed.
    #[error("cannot write the trace {trace}: {source}")]
    Write {
        /// The trace.
        trace: String,
        /// Why.
        source: io::Error,
    },
}

/// The names of the formats reel reads, for a message: `mcporter, mcptape, …`.
pub fn format_names() -> String {
    Format::ALL
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What an import did.
#[derive(Debug)]
pub struct Imported {
    /// The format read.
    pub format: Format,
    /// The trace written, when a file.
    pub path: Option<PathBuf>,
    /// Messages and events written.
    pub items: u64,
    /// Source lines that could not be converted (each also an event in the trace).
    pub problems: Vec<Problem>,
    /// Source lines too long to hold ([`reel_trace::reader::MAX_LINE`]): lost, each marked
    /// in the trace by a `reel.gap` event.
    pub too_long: Vec<LostLine>,
    /// What this file lacks or holds wrong, beyond the format's limits.
    pub warnings: Vec<String>,
}

/// A source line too long to hold, read past and lost; shown as where, how long, the
/// limit, and where the trace marks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LostLine {
    /// Its 1-based number in the source.
    pub line: u64,
    /// Its length in bytes.
    pub bytes: u64,
}

impl std::fmt::Display for LostLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}: {} bytes, over the {} GiB a line may have: read past, not converted \
             (a reel.gap event marks its place)",
            self.line,
            self.bytes,
            reel_trace::reader::MAX_LINE >> 30
        )
    }
}

/// Where the trace goes, once its start is known.
#[derive(Debug, Clone, Copy)]
pub enum Output<'a> {
    /// A new file in this directory, named from the label and the source's start.
    Dir(&'a Path),
    /// Exactly this file (not overwritten).
    File(&'a Path),
}

/// Imports `found` as a trace labelled `label`.
pub fn import(
    found: &Found,
    label: &str,
    output: Output<'_>,
    redactor: &Redactor,
) -> Result<Imported, ImportError> {
    let Converted {
        kind,
        transport,
        started,
        facts,
        warnings,
        items,
    } = convert_found(found)?;
    let facts_session = facts
        .get("session_id")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let target = match output {
        Output::Dir(d) => TraceTarget::create_started(d, label, started)?,
        Output::File(p) => TraceTarget::create_file(p, started)?,
    };
    let name = target.name();
    let write_err = |source| ImportError::Write {
        trace: name.clone(),
        source,
    };
    // The server command, where the source names it (redacted as a recording's is).
    let mut meta = reel_meta(label, &server_command(&facts), kind, "stdio", redactor);
    meta.started_at = Some(started.to_iso().as_str().to_owned());
    meta.source = Some(found.format.name().to_owned());
    meta.transport = transport.clone();
    let imported = imported_meta(found, facts, &warnings, redactor);
    meta.extra.insert("imported".into(), imported);
    let (writer, path) = target.open(&meta)?;
    let mut rec = LineRecorder::new(writer, redactor.clone());
    let mut out = Imported {
        format: found.format,
        path,
        items: 0,
        problems: Vec::new(),
        too_long: Vec::new(),
        warnings,
    };
    let mut sessions = (transport.as_deref() == Some("http")).then_some(HttpSessions {
        id: facts_session,
        open: None,
    });
    let last = write_items(&mut rec, items, started, sessions.as_mut(), &mut out)
        .map_err(|e| e.into_import_error(&found.path, write_err))?;
    rec.finish(Ending::Reason("imported".into()), last)
        .map_err(write_err)?;
    if out.items == 0 && out.problems.is_empty() && out.too_long.is_empty() {
        // A file that only looks like the format: no trace of nothing is left behind.
        if let Some(p) = &out.path {
            let _ = std::fs::remove_file(p);
        }
        return Err(ImportError::Empty {
            path: found.path.clone(),
        });
    }
    Ok(out)
}

/// `found` read as its format says, or why it cannot be.
fn convert_found(found: &Found) -> Result<Converted, ImportError> {
    let path = found.path.clone();
    convert(found).map_err(|e| match e {
        ConvertError::Io(source) => ImportError::Read { path, source },
        ConvertError::Empty => ImportError::Empty { path },
        e => ImportError::Invalid {
            path,
            format: found.format,
            reason: e.to_string(),
        },
    })
}

/// `meta.imported`: the format, the file, what the format cannot hold, this file's
/// warnings and what the source says of itself, redacted.
fn imported_meta(
    found: &Found,
    facts: Map<String, Value>,
    warnings: &[String],
    redactor: &Redactor,
) -> Value {
    let format = found.format;
    let mut imported = Map::new();
    imported.insert("format".into(), format.name().into());
    imported.insert(
        "file".into(),
        found
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .into(),
    );
    imported.insert("limits".into(), format.limits().into());
    if !warnings.is_empty() {
        imported.insert("warnings".into(), warnings.to_vec().into());
    }
    for (k, v) in facts {
        imported.entry(k).or_insert(v);
    }
    // What the source says of itself is as raw as its messages.
    let imported = Value::Object(imported).to_string();
    serde_json::from_str(&redactor.redact_json(&imported)).unwrap_or(Value::Null)
}

/// Why writing the converted items stopped.
enum ItemsError {
    /// The source could not be read on.
    Read(io::Error),
    /// The trace could not be written.
    Write(io::Error),
}

impl ItemsError {
    fn into_import_error(
        self,
        src: &Path,
        write_err: impl FnOnce(io::Error) -> ImportError,
    ) -> ImportError {
        match self {
            ItemsError::Read(source) => ImportError::Read {
                path: src.to_owned(),
                source,
            },
            ItemsError::Write(e) => write_err(e),
        }
    }
}

/// Writes every converted item, counting them into `out`: a line reel could not read
/// kept as a `reel.nonjson` event, a line too long to hold marked by a `reel.gap`.
/// Returns the time of the last item.
fn write_items<W: io::Write>(
    rec: &mut LineRecorder<W>,
    items: impl Iterator<Item = Result<Item, Fault>>,
    started: Timestamp,
    mut sessions: Option<&mut HttpSessions>,
    out: &mut Imported,
) -> Result<Timestamp, ItemsError> {
    let mut last = started;
    for item in items {
        let item = match item {
            Ok(item) => item,
            Err(Fault::Io(e)) => return Err(ItemsError::Read(e)),
            Err(Fault::TooLong { line, bytes }) => {
                // Nothing of it can be kept: the trace says where and how much.
                rec.gap(last, 1, bytes).map_err(ItemsError::Write)?;
                out.too_long.push(LostLine { line, bytes });
                continue;
            }
            Err(Fault::Bad(p, bytes)) => {
                // Kept, redacted, as what it was: a part reel could not read.
                rec.event(kinds::NONJSON, None, last, &bytes, Eol::Lf, Tags::default())
                    .map_err(ItemsError::Write)?;
                out.problems.push(p);
                continue;
            }
        };
        let t = item.t();
        last = last.max(t);
        record_item(rec, sessions.as_deref_mut(), t, item).map_err(ItemsError::Write)?;
        out.items += 1;
    }
    Ok(last)
}

/// Writes one converted item: a message (in parts when it is too large to copy), an
/// event, or a turn, each redacted on the way.
fn record_item<W: io::Write>(
    rec: &mut LineRecorder<W>,
    sessions: Option<&mut HttpSessions>,
    t: Timestamp,
    item: Item,
) -> io::Result<()> {
    let session_of =
        |session: Option<String>, dir, raw: &str, sessions: Option<&mut HttpSessions>| match (
            session, sessions,
        ) {
            (None, Some(s)) => Some(s.of(dir, raw).to_owned()),
            (session, _) => session,
        };
    match item {
        Item::Message {
            dir, raw, session, ..
        } => {
            let session = session_of(session, dir, &raw, sessions);
            let tags = Tags {
                session: session.as_deref(),
                ..Tags::default()
            };
            rec.message(t, dir, raw.as_bytes(), Eol::Lf, tags)
        }
        Item::Large(large) => {
            let Item::Message {
                dir, raw, session, ..
            } = &*large.item
            else {
                // An event's payload is written whole: copied.
                return record_item(rec, sessions, t, large.into_item());
            };
            let session = session_of(session.clone(), *dir, raw, sessions);
            let tags = Tags {
                session: session.as_deref(),
                ..Tags::default()
            };
            rec.message_in_parts(t, *dir, raw, |text| large.holes_in(text), tags)
        }
        Item::Event {
            kind, raw, session, ..
        } => {
            let redacted = rec.redactor().redact_json(&raw).into_owned();
            let value =
                serde_json::value::RawValue::from_string(redacted).map_err(io::Error::other)?;
            let mut e = EventLine::new(t, &kind);
            e.raw = Some(&value);
            if let Some(s) = &session {
                e.fields.insert("session".into(), s.clone().into());
            }
            rec.write_event(&e)
        }
        Item::Turn { mut turn, .. } => {
            turn.t = Some(t.to_iso().as_str().to_owned());
            rec.turn(&turn)
        }
    }
}

/// The sessions of an HTTP recording whose format keeps none per message: what came
/// before the client's `initialize` (a refused `server/discover` probe, or all of a
/// 2026-07-28 session, which has no session) is connection traffic, `reel:conn-1`, as
/// `reel rec --url` writes it; from `initialize` on, the session the file names (or
/// `imported`). So `reel play --listen` serves each era as it was recorded.
struct HttpSessions {
    id: Option<String>,
    open: Option<String>,
}

impl HttpSessions {
    fn of(&mut self, dir: reel_trace::line::Dir, raw: &str) -> &str {
        if self.open.is_none()
            && dir == reel_trace::line::Dir::In
            && reel_trace::jsonrpc::Envelope::parse(raw)
                .is_some_and(|e| e.method.as_deref() == Some("initialize"))
        {
            self.open = Some(self.id.clone().unwrap_or_else(|| "imported".to_owned()));
        }
        self.open.as_deref().unwrap_or("reel:conn-1")
    }
}

/// The server command a source names: `server_command` as a list of words, or as one
/// word with its `server_args` (agent-vcr); nothing otherwise.
fn server_command(facts: &Map<String, Value>) -> Vec<String> {
    let words = |v: &Value| -> Option<Vec<String>> {
        v.as_array()?
            .iter()
            .map(|w| w.as_str().map(str::to_owned))
            .collect()
    };
    match facts.get("server_command") {
        Some(Value::Array(_)) => facts
            .get("server_command")
            .and_then(words)
            .unwrap_or_default(),
        Some(Value::String(program)) => {
            let mut command = vec![program.clone()];
            command.extend(facts.get("server_args").and_then(words).unwrap_or_default());
            command
        }
        _ => Vec::new(),
    }
}
