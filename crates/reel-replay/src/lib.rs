//! # reel-replay
//!
//! Serves a trace as the MCP server (`reel play`, over stdio or HTTP): no child
//! process, no upstream, the recorded answers to whoever asks; and plays a trace's
//! client against a live server (`reel verify`).
//!
//! It exports what the CLI uses: [`play_stdio`] and [`http::HttpPlay`] with their
//! options and [`Summary`], [`verify`], and the rules `--help` lists. The rest is the
//! crate's own:
//!
//! - `tape`: the index of a trace, built lazily while the server already answers:
//!   positions and keys, never a copy of the messages.
//! - `matcher`: which recorded exchange answers a live request (content, not position;
//!   `--strict` for recorded order).
//! - `server`: the tape server: answers with the live ids, re-sends notifications
//!   and server→client requests at their recorded place, checks the client's answers,
//!   honours cancellation, reports misses and drift, and can record itself; over stdio
//!   here, over Streamable HTTP through [`http`] (`reel play --listen`).
//! - `splice`: the byte-level edits an answer needs (id, progress token, version).
//!
//! The normalisation every comparison uses lives in `reel_mcp::normalize`, shared with
//! `verify` and `diff`.

#![deny(missing_docs)]
// The tape server's routing serves both transports; without the `http` feature the
// HTTP half of it goes unused, and only that build is excused from the lints for it.
#![cfg_attr(not(feature = "http"), allow(dead_code, unused_imports))]

#[cfg(feature = "http")]
pub mod http;
pub(crate) mod live;
pub(crate) mod matcher;
pub(crate) mod report;
pub(crate) mod server;
pub(crate) mod splice;
pub(crate) mod tape;
pub mod verify;

pub use matcher::match_rules_help;
pub use report::{PlayVerdict, Summary};
pub use server::{DELIVERY_WAIT, Pace, PlayError, PlayOptions, Subset, play, play_stdio};
