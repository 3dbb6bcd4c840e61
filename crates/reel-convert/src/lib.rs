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

pub mod agent_vcr;
pub mod cassette;
pub mod claude;
mod export;
pub mod export_trace;
pub mod import;
pub mod large;
mod lines;
pub mod mcp_rec;
pub mod mcp_vcr;
pub mod mcporter;
pub mod mcptape;
pub mod mmsp;
mod model;
pub mod readable;
pub mod recorder;
mod source;
pub mod yaml_limits;

pub use export::{ExportError, Exported, Left, Outgoing, Sessions, export_messages};
pub use large::{LARGE_LINE, Part};
pub use lines::{Entry, LineItems, Lines, line_items, read_lines};
pub use model::{ConvertError, Converted, Fault, Item, Large, MAX_DOCUMENT, Problem};
pub(crate) use source::shown;
pub use source::{
    SNIFF_BYTES, after_ms, first_line, from_epoch_secs, parse_time, read_document, without_bom,
};

/// The event kinds the converters write for what a source holds besides messages and
/// turns: one list, so `reel check` knows every kind an import can leave in a trace.
pub const EVENT_KINDS: [&str; 3] = [
    mcporter::LIFECYCLE,
    recorder::LIFECYCLE,
    mcptape::OTHER_LINE,
];

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

    /// True when the format is written as files of its own (mcptape, MMSP) rather than
    /// as one stream.
    pub fn writes_files(self) -> bool {
        matches!(self, Format::Mcptape | Format::Mmsp)
    }

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
