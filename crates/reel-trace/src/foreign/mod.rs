//! Files other tools write, read into reel's trace model: each format a streaming
//! converter from its lines to trace items ([`Item`]), so a file of any size converts in
//! bounded memory, and a sniffer that tells the formats apart by their first line.
//!
//! Formats (more follow the same shape):
//! - [`mcporter`]: mcporter's `record` NDJSON (`~/.mcporter/recordings/<session>.ndjson`).

use crate::line::Dir;
use crate::time::Timestamp;

pub mod import;
pub mod mcporter;

/// A format reel reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// mcporter's recordings.
    Mcporter,
}

impl Format {
    /// Every format, for `--from` and its help.
    pub const ALL: &[Format] = &[Format::Mcporter];

    /// The name `--from` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Mcporter => "mcporter",
        }
    }

    /// The format named `name`.
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.iter().copied().find(|f| f.name() == name)
    }

    /// The format whose file starts with `first_line` (its first non-blank line), when
    /// it is one reel reads; `None` for reel's own traces and anything unknown.
    pub fn sniff(first_line: &[u8]) -> Option<Format> {
        if mcporter::looks_like(first_line) {
            return Some(Format::Mcporter);
        }
        None
    }

    /// What the format cannot hold, said once to whoever reads a converted file.
    pub fn limits(self) -> &'static str {
        match self {
            Format::Mcporter => {
                "mcporter recordings hold the JSON-RPC messages of mcporter's own client only: \
                 no server stderr, no HTTP status, headers or SSE framing, and no line that \
                 was not JSON-RPC"
            }
        }
    }
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
}

impl Item {
    /// The item's time.
    pub fn t(&self) -> Timestamp {
        match self {
            Item::Message { t, .. } | Item::Event { t, .. } => *t,
        }
    }
}

/// A source line that cannot be converted: where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct Problem {
    /// 1-based line number in the source.
    pub line: u64,
    /// What is wrong.
    pub reason: String,
}
