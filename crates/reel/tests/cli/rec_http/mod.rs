//! `reel rec --url` as a user runs it: the built binary as a reverse proxy between an
//! HTTP MCP client and server.
//!
//! - `behaviour`: against a scripted upstream of our own — DNS-rebinding refusals,
//!   hop-by-hop headers, SSE passed on event by event, URL rewriting (legacy `endpoint`,
//!   `WWW-Authenticate`, OAuth metadata), redaction of `Authorization` in the trace only,
//!   SIGTERM, an unreachable upstream, usage errors;
//! - `interop`: real peers — server-everything (Streamable HTTP and legacy SSE), a Python
//!   SDK `MCPServer` speaking 2026-07-28 and 2025-11-25, the Python SDK client,
//!   concurrent clients, the MCP Inspector CLI and mcporter — each run directly and
//!   through reel, with identical results;
//! - `crash`: `kill -9` of the proxy mid-traffic loses no answer a client received.

mod behaviour;
mod crash;
pub(crate) mod harness;
mod interop;
