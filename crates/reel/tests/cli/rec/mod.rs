//! `reel rec` as a user runs it: the built binary between a client and a server.
//!
//! - `bytes`: byte-exact forwarding and the kind and bytes of every recorded line;
//! - `lifecycle`: stdin close, server exit, signals, start failures, `kill -9`;
//! - `behind`: backpressure loses nothing;
//! - `redaction`: secrets leave the trace, never the forwarded bytes;
//! - `interop`: real MCP peers (Python SDK 2.3, server-everything) in both protocol
//!   eras, with and without reel in between.

mod behind;
mod bytes;
mod interop;
mod lifecycle;
mod redaction;
