//! What the exports share: what a format had no place for ([`Left`]), why an export
//! failed ([`ExportError`]), and the walk over a trace's messages that every MCP format's
//! writer makes ([`export_messages`]).

use std::io;
use std::path::Path;

use reel_trace::Timestamp;
use reel_trace::line::Dir;

/// What an export left out, by what it was (`"batches"`, `"stderr events"`), for the
/// note on stderr.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Left(pub std::collections::BTreeMap<&'static str, u64>);

impl Left {
    /// One more `what` left out.
    pub fn add(&mut self, what: &'static str) {
        *self.0.entry(what).or_default() += 1;
    }

    /// Nothing was left out.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Display for Left {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|(w, n)| format!("{n} {w}")).collect();
        f.write_str(&parts.join(", "))
    }
}

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// The trace cannot be read.
    #[error(transparent)]
    Read(#[from] reel_trace::reader::OpenError),
    /// The trace holds nothing the format can hold, or what it holds cannot be put in it.
    #[error("{0}")]
    Unfit(String),
    /// The MMSP trace id is refused (RFC-0010 §4): empty, or not a relative path that
    /// stays inside the cache directory.
    #[error("{0}")]
    TraceId(String),
    /// The output cannot be written.
    #[error("cannot write the export: {0}")]
    Write(io::Error),
}

/// Which sessions of a trace an export to a one-session format takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sessions {
    /// The first session's messages (no session counts as one).
    First,
    /// The first session's messages and those of no session (an HTTP recording's probe
    /// before its session began).
    FirstAndNone,
}

/// One JSON-RPC message of a trace being exported: a JSON object.
#[derive(Debug, Clone, Copy)]
pub struct Outgoing<'a> {
    /// When, if the line says.
    pub t: Option<Timestamp>,
    /// Client to server (`In`) or back (`Out`); never another direction.
    pub dir: Dir,
    /// The message, without surrounding white space.
    pub raw: &'a str,
    /// The HTTP exchange that carried it (0: none).
    pub http_req: u64,
    /// The line had HTTP facts.
    pub http: bool,
}

/// What [`export_messages`] hands an export, in the trace's order.
#[derive(Debug, Clone, Copy)]
pub enum Exported<'a> {
    /// The meta line.
    Meta(&'a reel_trace::line::Meta),
    /// A message the format can hold.
    Message(Outgoing<'a>),
}

/// The trace walk every MCP export shares: calls `on` (with `left`, for what the export
/// itself passes over) with the meta line and each message the format can hold (one JSON object, of the sessions `sessions` takes), in
/// order, and counts in `left` what it passed over: batches, messages of other
/// sessions, messages that are not JSON objects, turns, and other lines (stderr,
/// non-JSON output, events).
pub fn export_messages(
    trace: &Path,
    sessions: Sessions,
    left: &mut Left,
    mut on: impl FnMut(Exported<'_>, &mut Left) -> Result<(), ExportError>,
) -> Result<(), ExportError> {
    use reel_trace::line::Line;
    let other = "other lines (stderr, non-JSON output, events)";
    let mut reader = reel_trace::reader::TraceReader::open(trace)?;
    let mut first: Option<Option<String>> = None;
    while let Some(line) = reader.next_line() {
        let line = line?;
        let view = match line.parse() {
            Ok(Line::Meta(m)) => {
                on(Exported::Meta(&m), left)?;
                continue;
            }
            Ok(Line::End(_)) => continue,
            Ok(Line::Message(v)) => v,
            Ok(Line::Turn(_)) => {
                left.add("turns");
                continue;
            }
            _ => {
                left.add(other);
                continue;
            }
        };
        let (Some(dir @ (Dir::In | Dir::Out)), Some(raw)) =
            (view.dir(), view.raw_str().map(str::trim))
        else {
            left.add(other);
            continue;
        };
        let session = view.session.as_deref();
        let taken = match (sessions, session) {
            (Sessions::FirstAndNone, None) => true,
            _ => {
                first
                    .get_or_insert_with(|| session.map(str::to_owned))
                    .as_deref()
                    == session
            }
        };
        if !taken {
            left.add("messages of other sessions");
            continue;
        }
        if raw.starts_with('[') {
            left.add("batches");
            continue;
        }
        if !raw.starts_with('{') {
            left.add("messages that are not JSON objects");
            continue;
        }
        on(
            Exported::Message(Outgoing {
                t: view.t.as_deref().and_then(Timestamp::parse),
                dir,
                raw,
                http_req: view.http_req(),
                http: view.http.is_some(),
            }),
            left,
        )?;
    }
    Ok(())
}
