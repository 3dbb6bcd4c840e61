//! # reel-replay
//!
//! Serves a trace as the MCP server (`reel play`, over stdio or HTTP): no child
//! process, no upstream, the recorded answers to whoever asks; and plays a trace's
//! client against a live server (`reel verify`).
//!
//! It is laid out by command, and exports what the CLI uses:
//!
//! - `play`: the tape server (`reel play`): answers with the live ids, re-sends
//!   notifications and server→client requests at their recorded place, checks the
//!   client's answers, honours cancellation, reports misses and drift ([`Summary`]),
//!   and can record itself; over stdio ([`play_stdio`]), and over Streamable HTTP in
//!   `play::http` (`reel play --listen`, the `http` feature).
//! - [`verify`]: the recorded client played against a live server (`reel verify`).
//! - `in_process` (Unix): the tape server on a thread of the caller's process, for
//!   `cargo test` with any Rust MCP client (rmcp): the client's end of a socket pair,
//!   and the verdict with `reel play`'s report when the client is done.
//! - `tape` (the crate's own): the index of a trace, built lazily while the server
//!   already answers (positions and keys, never a copy of the messages), and the
//!   matcher that says which recorded exchange answers a live request (content, not
//!   position; `--strict` for recorded order).
//! - `splice` and `live` (the crate's own): the byte-level edits an answer needs (id,
//!   progress token, version), and the live server process of `verify` and
//!   `play --subset`.
//!
//! The normalisation every comparison uses lives in `reel_mcp::normalize`, shared with
//! `verify` and `diff`.

#![deny(missing_docs)]
// The tape server's routing serves both transports; without the `http` feature the
// HTTP half of it goes unused, and only that build is excused from the lints for it.
#![cfg_attr(not(feature = "http"), allow(dead_code, unused_imports))]

#[cfg(unix)]
pub mod in_process;
pub(crate) mod live;
pub mod play;
pub(crate) mod splice;
pub(crate) mod tape;
pub mod verify;

pub use play::report::{PlayVerdict, Summary};
pub use play::{DELIVERY_WAIT, Pace, PlayError, PlayOptions, Subset, play, play_stdio};
pub use tape::matcher::match_rules_help;
