//! `reel import`'s work: a foreign file converted into a trace reel writes, with the
//! recording redaction applied (other tools store what they saw raw) and the source's
//! own times (`meta.startedAt`, each line's `t`, `end.durationMs`), ending with
//! `reason: "imported"`. Two streaming passes over the source: the first finds what the
//! conversion must know up front (the first time, the servers), the second converts.

use std::fs::File;
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};

use super::{Format, Item, Problem, mcporter};
use crate::line::Eol;
use crate::reader::LineReader;
use crate::record::{LineRecorder, Tags, reel_meta};
use crate::redact::Redactor;
use crate::target::{TargetError, TraceTarget};
use crate::writer::{Ending, EventLine};

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
    #[error("{}: not a file reel can import (formats: {}); give --from FORMAT if it is one", path.display(), known())]
    Unknown {
        /// The source.
        path: PathBuf,
    },
    /// The source holds nothing to import.
    #[error("{}: empty", path.display())]
    Empty {
        /// The source.
        path: PathBuf,
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

fn known() -> String {
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
}

/// Where the trace goes, once its start is known.
pub enum Output<'a> {
    /// A new file in this directory, named from the label and the source's start.
    Dir(&'a Path),
    /// Exactly this file (not overwritten).
    File(&'a Path),
}

fn lines(path: &Path) -> Result<LineReader<BufReader<File>>, ImportError> {
    let f = File::open(path).map_err(|source| ImportError::Read {
        path: path.to_owned(),
        source,
    })?;
    Ok(LineReader::new(BufReader::new(f)))
}

/// The format of `path`, from its first non-blank line; `None` for anything but a
/// regular file (a FIFO is never opened here: reading it would wait for a writer).
pub fn sniff(path: &Path) -> Result<Option<Format>, ImportError> {
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Ok(None);
    }
    // A first line over 1 MiB is no format reel reads: it is not loaded to find out.
    let mut r = lines(path)?.with_max_line(1 << 20);
    while let Some(l) = r.next_line().map_err(|source| ImportError::Read {
        path: path.to_owned(),
        source,
    })? {
        if l.skipped.is_some() {
            return Ok(None);
        }
        if !l.bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Format::sniff(l.bytes));
        }
    }
    Ok(None)
}

/// Imports `src` (of `format`, else sniffed) as a trace labelled `label`.
pub fn import(
    src: &Path,
    format: Option<Format>,
    label: &str,
    output: Output<'_>,
    redactor: &Redactor,
) -> Result<Imported, ImportError> {
    let format = match format {
        Some(f) => f,
        None => sniff(src)?.ok_or_else(|| ImportError::Unknown {
            path: src.to_owned(),
        })?,
    };
    let read_err = |source| ImportError::Read {
        path: src.to_owned(),
        source,
    };
    // First pass: the servers, and when the session started.
    let mut servers = mcporter::Servers::default();
    let mut first = None;
    {
        let mut r = lines(src)?;
        let mut probe = mcporter::Converter::new(&servers);
        while let Some(l) = r.next_line().map_err(read_err)? {
            servers.line(l.bytes);
            if first.is_none() {
                first = probe.line(l.number, l.bytes).ok().flatten().map(|i| i.t());
            }
        }
    }
    let started = first.ok_or_else(|| ImportError::Empty {
        path: src.to_owned(),
    })?;
    let target = match output {
        Output::Dir(d) => TraceTarget::create_started(d, label, started)?,
        Output::File(p) => TraceTarget::create_file(p, started)?,
    };
    let name = target.name();
    let write_err = |source| ImportError::Write {
        trace: name.clone(),
        source,
    };
    let mut meta = reel_meta(label, &[], "mcp", "stdio", redactor);
    meta.started_at = Some(started.to_iso().as_str().to_owned());
    meta.source = Some(format.name().to_owned());
    meta.transport = None;
    meta.extra.insert(
        "imported".into(),
        serde_json::json!({
            "format": format.name(),
            "file": src.file_name().map(|n| n.to_string_lossy().into_owned()),
        }),
    );
    let (writer, path) = target.open(&meta)?;
    let mut rec = LineRecorder::new(writer, redactor.clone());
    let mut conv = mcporter::Converter::new(&servers);
    let mut out = Imported {
        format,
        path,
        items: 0,
        problems: Vec::new(),
    };
    let mut r = lines(src)?;
    while let Some(l) = r.next_line().map_err(read_err)? {
        match conv.line(l.number, l.bytes) {
            Ok(None) => {}
            Ok(Some(Item::Message {
                t,
                dir,
                raw,
                session,
            })) => {
                let tags = Tags {
                    session: session.as_deref(),
                    ..Tags::default()
                };
                rec.message(t, dir, raw.as_bytes(), Eol::Lf, tags)
                    .map_err(write_err)?;
                out.items += 1;
            }
            Ok(Some(Item::Event {
                t,
                kind,
                raw,
                session,
            })) => {
                let redacted = rec.redactor().redact_json(&raw).into_owned();
                let value = serde_json::value::RawValue::from_string(redacted)
                    .map_err(|e| write_err(io::Error::other(e)))?;
                let mut e = EventLine::new(t, &kind);
                e.raw = Some(&value);
                if let Some(s) = &session {
                    e.fields.insert("session".into(), s.clone().into());
                }
                rec.write_event(&e).map_err(write_err)?;
                out.items += 1;
            }
            Err(p) => {
                // Kept, redacted, as what it was: a line reel could not read.
                let t = conv.ended().unwrap_or(started);
                rec.event(
                    crate::line::kinds::NONJSON,
                    None,
                    t,
                    l.bytes,
                    Eol::Lf,
                    Tags::default(),
                )
                .map_err(write_err)?;
                out.problems.push(p);
            }
        }
    }
    let ended = conv.ended().unwrap_or(started);
    rec.finish(Ending::Reason("imported".into()), ended)
        .map_err(write_err)?;
    Ok(out)
}
