//! # reel-mcp
//!
//! What reel knows of JSON-RPC and MCP beyond the trace format: message classes and
//! pairing (re-exported from `reel-trace`), progress tokens and cancellation, and
//! exchanges — a request with its response and the messages that came between.
//! Replay, verify and diff build on these and share one normaliser ([`normalize`]: match
//! keys, volatile fields, the JSON-pointer diff). [`http`] holds what the HTTP sides
//! share of MCP over HTTP (header names, `Mcp-Name`, connection keys); [`drift`] is the
//! one vocabulary of drift classes and kinds, and how an answer's change of class is
//! judged, for diff, verify and play; [`notifications`] says when notification counts
//! that differ between two runs are drift, for verify and diff. The networking runtime
//! (framing, processes, SSE, the listeners' accept loop, upstream connections, the
//! loopback guard) is `reel-net`.

#![deny(missing_docs)]

pub mod drift;
pub mod exchange;
pub mod http;
pub mod jsonrpc;
pub mod normalize;
pub mod notifications;

pub use exchange::{Exchange, ExchangeBuilder, Outcome};
