//! What a conversion makes: the items of a source in its order ([`Item`]), what stops
//! one ([`Fault`], [`Problem`]), a converted file ([`Converted`]) and why a file cannot
//! be converted at all ([`ConvertError`]). Every converter speaks in these; the crate
//! root re-exports them.

use std::io;
use std::ops::Range;

use serde_json::{Map, Value};

use reel_trace::Timestamp;
use reel_trace::line::{Dir, Turn};

use crate::yaml_limits;

/// The largest one-document file (JSON or YAML) reel reads: such files are parsed whole.
pub const MAX_DOCUMENT: u64 = 512 << 20;

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
    /// source line ([`crate::large`]); [`Large::into_item`] gives the plain item.
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

/// A message or event whose `raw` holds marks for long strings of the source line it
/// came from, and that line.
#[derive(Debug, Clone, PartialEq)]
pub struct Large {
    /// The item as the converter made it of the skeleton.
    pub item: Box<Item>,
    pub(crate) line: Vec<u8>,
    pub(crate) holes: Vec<Hole>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Hole {
    /// The mark, as a JSON string (quotes included).
    pub(crate) mark: String,
    /// The string in the line, quotes included.
    pub(crate) token: Range<usize>,
}
