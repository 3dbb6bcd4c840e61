//! # reel-record
//!
//! Recording proxies: put reel between an MCP client and server, forward every byte
//! untouched, and write the session as a trace.

#![deny(missing_docs)]
