//! Files other tools write, read into reel's trace model. Each format is a converter
//! from its file to trace items ([`Item`]) in the source's order, behind one function,
//! [`convert`]; a sniffer ([`Format::sniff`]) tells the formats apart by the start of a
//! file, and [`discover`] finds the recordings a directory holds. Line formats convert
//! streaming (a file of any size in bounded memory); a format whose tool writes one JSON
//! or YAML document is read whole, as its tool reads it (up to [`MAX_DOCUMENT`]).
//!
//! Formats, each a module:
//! - [`mcporter`]: mcporter's `record` NDJSON (`~/.mcporter/recordings/<session>.ndjson`).
//! - [`mcptape`]: mcptape run directories (`trace.jsonl` + `meta.json`).
//! - [`mcp_vcr`]: mcp-vcr transcripts, YAML and NDJSON.
//! - [`cassette`]: mcp-cassette cassettes (JSON, `format_version` 2 and 3).
//! - [`recorder`]: mcp-recorder cassettes (JSON, `interactions`).
//! - [`mcp_rec`]: mcp-rec sessions (JSONL `{ts, dir, msg}`).
//! - [`agent_vcr`]: agent-vcr `.vcr` files (JSON).
//! - [`mmsp`]: MMSP tracer files (`<id>.json`, 0.5.x and pre-0.5.0), read and written.
//! - [`claude`]: Claude Code session transcripts (`~/.claude/projects/<dir>/<id>.jsonl`).

#![deny(missing_docs)]

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use reel_trace::Timestamp;
use reel_trace::line::{Dir, Turn};

pub mod agent_vcr;
pub mod cassette;
pub mod claude;
pub mod import;
pub mod large;
mod lines;
pub mod mcp_rec;
pub mod mcp_vcr;
pub mod mcporter;
pub mod mcptape;
pub mod mmsp;
pub mod readable;
pub mod recorder;
pub mod yaml_limits;

pub use large::{LARGE_LINE, Large, Part};
pub use lines::{Entry, LineItems, Lines, line_items, read_lines};

/// The event kinds the converters write for what a source holds besides messages and
/// turns: one list, so `reel check` knows every kind an import can leave in a trace.
pub const EVENT_KINDS: [&str; 3] = [
    mcporter::LIFECYCLE,
    recorder::LIFECYCLE,
    mcptape::OTHER_LINE,
];

/// The largest one-document file (JSON or YAML) reel reads: such files are parsed whole.
pub const MAX_DOCUMENT: u64 = 512 << 20;

/// How much of a file [`Format::sniff`] looks at.
pub const SNIFF_BYTES: usize = 64 << 10;

/// A format reel reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// mcporter's recordings.
    Mcporter,
    /// mcptape's run directories.
    Mcptape,
    /// mcp-vcr's transcripts (YAML or NDJSON).
    McpVcr,
    /// mcp-cassette's cassettes.
    Cassette,
    /// mcp-recorder's cassettes.
    Recorder,
    /// mcp-rec's sessions.
    McpRec,
    /// agent-vcr's `.vcr` files.
    AgentVcr,
    /// MMSP tracer files.
    Mmsp,
    /// Claude Code session transcripts.
    ClaudeCode,
}

impl Format {
    /// Every format, for `--from` and its help.
    pub const ALL: &[Format] = &[
        Format::Mcporter,
        Format::Mcptape,
        Format::McpVcr,
        Format::Cassette,
        Format::Recorder,
        Format::McpRec,
        Format::AgentVcr,
        Format::Mmsp,
        Format::ClaudeCode,
    ];

    /// The name `--from` takes, and `meta.source` of an imported trace.
    pub fn name(self) -> &'static str {
        match self {
            Format::Mcporter => "mcporter",
            Format::Mcptape => "mcptape",
            Format::McpVcr => "mcp-vcr",
            Format::Cassette => "mcp-cassette",
            Format::Recorder => "mcp-recorder",
            Format::McpRec => "mcp-rec",
            Format::AgentVcr => "agent-vcr",
            Format::Mmsp => "mmsp",
            Format::ClaudeCode => "claude-code",
        }
    }

    /// The formats reel writes (`reel export`), in the order its help lists them.
    pub const WRITTEN: [Format; 5] = [
        Format::Mcporter,
        Format::Mcptape,
        Format::Cassette,
        Format::McpVcr,
        Format::Mmsp,
    ];

    /// Other names the format answers to: `reel export` once said `cassette` and `vcr`
    /// where `import --from` said `mcp-cassette` and `mcp-vcr`; both still work.
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Format::Cassette => &["cassette"],
            Format::McpVcr => &["vcr"],
            _ => &[],
        }
    }

    /// The format named `name` (its [`Format::name`] or one of its
    /// [`Format::aliases`]).
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL
            .iter()
            .copied()
            .find(|f| f.name() == name || f.aliases().contains(&name))
    }

    /// The format of a file that starts with `head` (its first [`SNIFF_BYTES`] bytes, or
    /// all of it), when it is one reel reads; `None` for reel's own traces and anything
    /// unknown. A run directory is told by [`discover`], not here.
    pub fn sniff(head: &[u8]) -> Option<Format> {
        type Check = (Format, fn(&[u8]) -> bool);
        let checks: [Check; 9] = [
            (Format::Mcporter, mcporter::looks_like),
            (Format::Mcptape, mcptape::looks_like),
            (Format::McpVcr, mcp_vcr::looks_like),
            (Format::Cassette, cassette::looks_like),
            (Format::Recorder, recorder::looks_like),
            (Format::McpRec, mcp_rec::looks_like),
            (Format::AgentVcr, agent_vcr::looks_like),
            (Format::Mmsp, mmsp::looks_like),
            (Format::ClaudeCode, claude::looks_like),
        ];
        checks
            .iter()
            .find(|(_, f)| f(head))
            .map(|(format, _)| *format)
    }

    /// What the format cannot hold, said once to whoever reads a converted file.
    pub fn limits(self) -> &'static str {
        match self {
            Format::Mcporter => mcporter::LIMITS,
            Format::Mcptape => mcptape::LIMITS,
            Format::McpVcr => mcp_vcr::LIMITS,
            Format::Cassette => cassette::LIMITS,
            Format::Recorder => recorder::LIMITS,
            Format::McpRec => mcp_rec::LIMITS,
            Format::AgentVcr => agent_vcr::LIMITS,
            Format::Mmsp => mmsp::LIMITS,
            Format::ClaudeCode => claude::LIMITS,
        }
    }
}

/// The first line of `head` that is not blank (all of `head` when it has no line end).
pub fn first_line(head: &[u8]) -> &[u8] {
    head.split(|&b| b == b'\n')
        .find(|l| !l.iter().all(u8::is_ascii_whitespace))
        .unwrap_or_default()
}

/// One item of a converted file, in the order of the source.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// A JSON-RPC message.
    Message {
        /// When the source says it was seen.
        t: Timestamp,
        /// Client to server (`In`) or back (`Out`).
        dir: Dir,
        /// The message, one JSON value on one line.
        raw: String,
        /// The session it belongs to, when the file holds several.
        session: Option<String>,
    },
    /// Anything else the source records, as an event of `kind` with a JSON payload.
    Event {
        /// When.
        t: Timestamp,
        /// reel's name for it.
        kind: String,
        /// The payload, one JSON value.
        raw: String,
        /// The session it belongs to, when the file holds several.
        session: Option<String>,
    },
    /// A conversation turn (an LLM or Claude Code session); its own `t` is ignored.
    Turn {
        /// When.
        t: Timestamp,
        /// The turn.
        turn: Box<Turn>,
    },
    /// A message or event of a line too large to copy, its long strings still in the
    /// source line ([`large`]); [`Large::into_item`] gives the plain item.
    Large(Large),
}

impl Item {
    /// The item's time.
    pub fn t(&self) -> Timestamp {
        match self {
            Item::Message { t, .. } | Item::Event { t, .. } | Item::Turn { t, .. } => *t,
            Item::Large(l) => l.item.t(),
        }
    }
}

/// A source line that cannot be converted: where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct Problem {
    /// 1-based line number in the source (of the document's item, for a document).
    pub line: u64,
    /// What is wrong.
    pub reason: String,
}

/// What stops an item: a part of the source that cannot be converted (kept, as its
/// bytes, as a `reel.nonjson` event), a line too long to hold (lost, and said), or the
/// source failing to read.
#[derive(Debug)]
pub enum Fault {
    /// A line or entry that cannot be converted, and its bytes.
    Bad(Problem, Vec<u8>),
    /// A line over [`reel_trace::reader::MAX_LINE`], read past without being held: its
    /// 1-based number and length. Nothing of it can be kept.
    TooLong {
        /// The line's number.
        line: u64,
        /// Its length in bytes.
        bytes: u64,
    },
    /// Reading failed: the conversion stops.
    Io(io::Error),
}

/// A file converted: what the trace's `meta` needs, then its items.
pub struct Converted {
    /// The trace's `kind`: `"mcp"`, `"llm"` or `"cc-session"`.
    pub kind: &'static str,
    /// The trace's `transport`, when the source says (`"stdio"`, `"http"`).
    pub transport: Option<String>,
    /// When the recording started.
    pub started: Timestamp,
    /// What the source says of itself (server info, its own ids, protocol version),
    /// kept in `meta.imported`.
    pub facts: Map<String, Value>,
    /// What this file lacks or holds wrong, beyond the format's limits.
    pub warnings: Vec<String>,
    /// The items, in order.
    pub items: Box<dyn Iterator<Item = Result<Item, Fault>>>,
}

impl std::fmt::Debug for Converted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Converted")
            .field("kind", &self.kind)
            .field("transport", &self.transport)
            .field("started", &self.started)
            .field("facts", &self.facts)
            .field("warnings", &self.warnings)
            .finish_non_exhaustive()
    }
}

/// Why a file cannot be converted at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConvertError {
    /// It cannot be read.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// It holds nothing to convert.
    #[error("empty: no message in it")]
    Empty,
    /// It is not what its format says (a document that does not parse, a member of the
    /// wrong shape).
    #[error("{0}")]
    Invalid(String),
    /// A one-document file over [`MAX_DOCUMENT`].
    #[error("{0} bytes: over the {MAX_DOCUMENT}-byte limit for a one-document file")]
    TooLarge(u64),
    /// A YAML document past a limit of [`yaml_limits`], refused before parsing.
    #[error("refused before parsing: {0}")]
    YamlLimit(#[from] yaml_limits::YamlLimitError),
}

/// A recording found: its format and where it is (a file, or a run directory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The format.
    pub format: Format,
    /// The file or directory.
    pub path: PathBuf,
    /// The name the recording gives itself within the directory searched (an MMSP trace
    /// id, a session id), for the trace's label.
    pub label: String,
}

/// How deep [`discover`] looks below the directory it is given.
pub const DISCOVER_DEPTH: usize = 6;

/// What [`discover`] found: the recordings, and the entries it could not look into.
#[derive(Debug, Default)]
pub struct Discovery {
    /// The recordings, sorted by path.
    pub found: Vec<Found>,
    /// Files and directories below the one searched that could not be read, and why.
    pub unreadable: Vec<(PathBuf, io::Error)>,
}

/// The recordings at `path`: a file (its format sniffed, or `from`), a run directory
/// (mcptape), or a directory searched [`DISCOVER_DEPTH`] deep (symbolic links not
/// followed) for files of any format reel reads — one trace each, Claude Code sub-agent
/// files with their session. An entry below `path` that cannot be read is listed in
/// [`Discovery::unreadable`] and the search goes on; only `path` itself failing is an
/// error. Labels are the path below `path`, `-`-separated, without the extension (an
/// mcptape run: its directory's name).
pub fn discover(path: &Path, from: Option<Format>) -> io::Result<Discovery> {
    let meta = std::fs::metadata(path)?;
    let stem = |p: &Path| {
        strip_extension(p).file_name().map_or_else(
            || "imported".to_owned(),
            |s| s.to_string_lossy().into_owned(),
        )
    };
    let mut d = Discovery::default();
    if meta.is_file() {
        let format = match from {
            Some(f) => Some(f),
            None => sniff_file(path)?,
        };
        d.found.extend(format.map(|format| Found {
            format,
            path: path.to_owned(),
            label: stem(path),
        }));
        return Ok(d);
    }
    if !meta.is_dir() {
        return Ok(d);
    }
    if mcptape::is_run_dir(path) && from.is_none_or(|f| f == Format::Mcptape) {
        d.found.push(Found {
            format: Format::Mcptape,
            path: path.to_owned(),
            label: stem(path),
        });
        return Ok(d);
    }
    std::fs::read_dir(path)?;
    walk(path, path, 0, from, &mut d);
    d.found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(d)
}

fn walk(root: &Path, dir: &Path, depth: usize, from: Option<Format>, d: &mut Discovery) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            d.unreadable.push((dir.to_owned(), e));
            return;
        }
    };
    for entry in entries {
        let (path, ty) = match entry.and_then(|e| Ok((e.path(), e.file_type()?))) {
            Ok(x) => x,
            Err(e) => {
                d.unreadable.push((dir.to_owned(), e));
                continue;
            }
        };
        if ty.is_dir() {
            if mcptape::is_run_dir(&path) && from.is_none_or(|f| f == Format::Mcptape) {
                let label = path
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                d.found.push(Found {
                    format: Format::Mcptape,
                    label,
                    path,
                });
            } else if depth < DISCOVER_DEPTH && !claude::is_subagent_dir(&path) {
                walk(root, &path, depth + 1, from, d);
            }
            continue;
        }
        if !ty.is_file() {
            continue;
        }
        let format = match sniff_file(&path) {
            Ok(Some(f)) => f,
            Ok(None) => continue,
            Err(e) => {
                d.unreadable.push((path, e));
                continue;
            }
        };
        if from.is_some_and(|f| f != format) {
            continue;
        }
        d.found.push(Found {
            format,
            label: relative_label(root, &path),
            path,
        });
    }
}

/// `path` below `root` without its extension (`.mcp.json` whole), `-`-separated: a run
/// name, never a path.
fn relative_label(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let rel = strip_extension(rel);
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("-")
}

/// `path` without its extension; mcp-cassette's `.mcp.json` counts as one.
fn strip_extension(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    match name.as_deref().and_then(|n| n.strip_suffix(".mcp.json")) {
        Some(stem) if !stem.is_empty() => path.with_file_name(stem),
        _ => path.with_extension(""),
    }
}

/// How far [`sniff_file`] reads for a first line longer than [`SNIFF_BYTES`] (a Claude
/// Code line can hold a whole tool result).
pub const SNIFF_LINE_MAX: usize = 16 << 20;

/// The UTF-8 byte order mark some editors put first.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `bytes` without a leading byte order mark.
pub fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(BOM).unwrap_or(bytes)
}

/// The format of the file at `path`, from its first [`SNIFF_BYTES`] bytes, or its whole
/// first line when that is longer (up to [`SNIFF_LINE_MAX`]); a byte order mark is
/// skipped. `None` for anything but a regular file (a FIFO is never opened here: reading
/// it would wait for a writer).
pub fn sniff_file(path: &Path) -> io::Result<Option<Format>> {
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Ok(None);
    }
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    let mut f = File::open(path)?;
    (&mut f).take(SNIFF_BYTES as u64).read_to_end(&mut head)?;
    if head.len() == SNIFF_BYTES && memchr::memchr(b'\n', &head).is_none() {
        let mut rest = Vec::new();
        f.take((SNIFF_LINE_MAX - SNIFF_BYTES) as u64)
            .read_to_end(&mut rest)?;
        let end = memchr::memchr(b'\n', &rest).unwrap_or(rest.len());
        head.extend_from_slice(&rest[..end]);
    }
    Ok(Format::sniff(without_bom(&head)))
}

/// Converts the recording `found`.
pub fn convert(found: &Found) -> Result<Converted, ConvertError> {
    let path = &found.path;
    match found.format {
        Format::Mcporter => mcporter::convert(path),
        Format::Mcptape => mcptape::convert(path),
        Format::McpVcr => mcp_vcr::convert(path),
        Format::Cassette => cassette::convert(path),
        Format::Recorder => recorder::convert(path),
        Format::McpRec => mcp_rec::convert(path),
        Format::AgentVcr => agent_vcr::convert(path),
        Format::Mmsp => mmsp::convert(path),
        Format::ClaudeCode => claude::convert(path),
    }
}

/// Reads a one-document file whole (refusing one over [`MAX_DOCUMENT`]), without a
/// leading byte order mark.
pub fn read_document(path: &Path) -> Result<Vec<u8>, ConvertError> {
    let len = std::fs::metadata(path)?.len();
    if len > MAX_DOCUMENT {
        return Err(ConvertError::TooLarge(len));
    }
    let mut bytes = std::fs::read(path)?;
    if bytes.starts_with(BOM) {
        bytes.drain(..BOM.len());
    }
    Ok(bytes)
}

/// A date-time as the recorders write them: RFC 3339, or without an offset (Python's
/// naive `isoformat()`, read as UTC; the `bool` says it had none).
pub fn parse_time(s: &str) -> Option<(Timestamp, bool)> {
    if let Some(t) = Timestamp::parse(s) {
        return Some((t, false));
    }
    Timestamp::parse(&format!("{s}Z")).map(|t| (t, true))
}

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

/// Milliseconds (fractional allowed) after `start`.
pub fn after_ms(start: Timestamp, ms: f64) -> Timestamp {
    if ms.is_finite() {
        Timestamp(start.0.saturating_add(ms.round() as i64))
    } else {
        start
    }
}

/// The last second a trace can write (9999-12-31T23:59:59Z).
const LAST_SECOND: f64 = 253_402_300_799.0;

/// A time given as seconds since the Unix epoch (fractional allowed); `None` outside
/// the years a trace can write (0 to 9999).
pub fn from_epoch_secs(secs: f64) -> Option<Timestamp> {
    (secs.is_finite() && (0.0..=LAST_SECOND).contains(&secs))
        .then(|| Timestamp((secs * 1000.0).round() as i64))
}

/// A member's value as a message shows it: a JSON string, or `missing`.
pub(crate) fn shown(value: Option<&str>) -> String {
    value.map_or_else(
        || "missing".to_owned(),
        |v| serde_json::Value::from(v).to_string(),
    )
}
