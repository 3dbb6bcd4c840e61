//! # reel-mcp
//!
//! What reel knows of JSON-RPC and MCP beyond the trace format: message classes and
//! pairing (re-exported from `reel-trace`), progress tokens and cancellation, and
//! exchanges — a request with its response and the messages that came between.
//! Replay, verify and diff build on these and share one normaliser ([`normalize`]: match
//! keys, volatile fields, the JSON-pointer diff). [`framing`] splits byte streams into
//! lines for every stdio side of reel; [`sse`] frames and parses HTTP event streams for
//! the recorder, the tape server and verify alike; [`http`] holds what they share of MCP
//! over HTTP (header names, connection keys, the loopback guard, the `--url` parser);
//! [`drift`] is the one vocabulary of drift classes and kinds, and how an answer's
//! change of class is judged, for diff, verify and play;
//! [`notifications`] says when notification counts that differ between two runs are
//! drift, for verify and diff; `serve` (feature `serve`) is the one runtime, stop flag
//! and accept loop of reel's HTTP listeners.

#![deny(missing_docs)]

pub mod drift;
pub mod exchange;
pub mod framing;
pub mod http;
pub mod jsonrpc;
pub mod normalize;
pub mod notifications;
#[cfg(unix)]
pub mod process;
#[cfg(feature = "serve")]
pub mod reply;
#[cfg(feature = "serve")]
pub mod serve;
pub mod sse;
#[cfg(feature = "client")]
pub mod upstream;

pub use exchange::{Exchange, ExchangeBuilder, Outcome};
