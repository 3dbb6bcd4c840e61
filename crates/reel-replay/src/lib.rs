//! # reel-replay
//!
//! Serves a trace as the MCP server (`reel play`) and plays the recorded client against a
//! live server (`reel verify`).

#![deny(missing_docs)]
