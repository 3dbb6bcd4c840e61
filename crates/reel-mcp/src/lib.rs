//! # reel-mcp
//!
//! What reel knows of JSON-RPC and MCP beyond the trace format: message classes,
//! request/response pairing per (session, direction, id), exchanges with the
//! notifications that came between request and response.

#![deny(missing_docs)]

pub mod jsonrpc;
