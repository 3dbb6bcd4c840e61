//! # reel-trace
//!
//! The mcp-replay trace format v1, as reel reads and writes it: the line kinds
//! ([`line`](mod@line)), a streaming reader over any size of file in bounded memory ([`reader`]),
//! a writer that never leaves half a line behind ([`writer`]), the one path every producer
//! the `history_elided` rolling hash ([`hash`]) and tamper evidence, a hash chain over a
//! trace's lines in a sidecar file ([`seal`]). Redaction and the one path every
//! producer records observed lines through are `reel-redact`; reading traces for what
//! they say (check, stats, runs) is `reel-inspect`; other tools' formats are
//! `reel-convert`.
//!
//! This crate is synchronous and knows nothing of networks. The JSON-RPC *envelope*
//! (request, notification, response, error; ids and pairing) lives here in [`jsonrpc`]
//! because the format defines message lines as JSON-RPC envelopes and the writer, check
//! and stats pair them; MCP meaning (eras, exchanges, match keys) lives in `reel-mcp`.
//!
//! Invariants kept by every module:
//! - `raw` is never re-serialised on the way through: readers borrow it, writers copy it.
//! - A reader is tolerant: unknown `type`, `dir`, `kind`, block types and members are
//!   kept, never fatal. Problems carry the file and line number.

#![deny(missing_docs)]

pub mod errors;
pub mod follow;
pub mod hash;
pub mod json_str;
pub mod json_text;
pub mod jsonrpc;
pub mod line;
pub mod llm;
pub mod names;
mod progress;
pub mod reader;
pub mod seal;
pub mod target;
#[cfg(feature = "testing")]
pub mod testing;
mod time;
mod utf8;
pub mod writer;

pub use line::{
    Block, Counts, Dir, End, Eol, Line, LineClass, LineError, MessageView, Meta, REDACTED,
    REEL_VERSION, Turn, Usage,
};
pub use progress::{Progress, Throttle};
pub use reader::{OpenError, RawLine, TraceLine, TraceReader};
pub use time::{IsoString, Timestamp};
pub use utf8::validate as validate_utf8;
pub use writer::{Ending, EventLine, MessageLine, TraceWriter};
