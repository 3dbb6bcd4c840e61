//! # reel-record
//!
//! Recording proxies: put reel between an MCP client and server, forward every byte
//! untouched, and write the session as a trace.
//!
//! [`stdio`] is the stdio proxy behind `reel rec -- CMD…`; [`http`] is the Streamable
//! HTTP (and legacy HTTP+SSE) reverse proxy behind `reel rec --url URL`. The parts they
//! share:
//! - `forward`: the forwarding threads, one per pipe, bytes onward first, lines after;
//! - `reel_net::framing` splits a byte stream into lines *after* the bytes were
//!   forwarded;
//! - `queue`: the one bounded queue between the forwarding threads and the trace,
//!   with backpressure (default) or counted drops (`--drop-when-behind`);
//! - `recorder`: the thread that owns the trace file — it classifies each line (JSON
//!   message or not), redacts it and writes it whole;
//! - `trace`: where the trace goes ([`TraceTarget`]), the errors and notices of a session, the start of
//!   the writer thread;
//! - `reel_net::process` (unix): spawning, waiting for and signalling the wrapped
//!   server.
//!
//! Invariants kept throughout: the bytes the two peers exchange are never changed, delayed
//! only by a forwarding thread's own read and write, and never reordered; the trace holds
//! every line in the order reel observed it, unless the user asked reel to drop lines when
//! behind, and then a `reel.gap` event counts what is missing.

#![deny(missing_docs)]

mod forward;
#[cfg(feature = "http")]
pub mod http;
mod queue;
mod recorder;
pub mod stdio;
mod trace;

#[cfg(feature = "http")]
pub use http::{HttpConfig, HttpError, HttpOutcome, HttpRecorder, StopHandle};
pub use queue::WhenBehind;
pub use stdio::{
    ChildEnd, ClientIo, Notice, Outcome, RecordError, StdioConfig, StdioRecorder, TraceTarget,
};
