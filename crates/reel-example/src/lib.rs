//! # reel-example
//!
//! What `reel demo` needs with nothing installed but reel: a small but real stdio MCP
//! server ([`server`]: tools, progress notifications, a server→client `roots/list`
//! request, and a `changed` flag that alters one answer), a scripted MCP client
//! ([`client`]) that prints the answers it got, and the demo walk-through ([`demo`])
//! that runs the reel binary's own commands on them.
//!
//! It is a crate of its own, not a module of the CLI, because the CLI is wiring only and
//! this is behaviour a test calls directly; it depends on nothing of reel's, so the demo
//! exercises reel strictly from the outside, as a user does.

#![deny(missing_docs)]

pub mod client;
pub mod demo;
pub mod server;
