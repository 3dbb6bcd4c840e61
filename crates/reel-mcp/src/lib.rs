//! # reel-mcp
//!
//! What reel knows of JSON-RPC and MCP beyond the trace format: message classes and
//! pairing (re-exported from `reel-trace`), progress tokens and cancellation, and
//! exchanges — a request with its response and the messages that came between.
//! Replay, verify and diff build on these; the normaliser (match keys, volatile fields)
//! joins them here when replay lands.

#![deny(missing_docs)]

pub mod exchange;
pub mod jsonrpc;
pub mod normalize;

pub use exchange::{Exchange, ExchangeBuilder, Outcome};
