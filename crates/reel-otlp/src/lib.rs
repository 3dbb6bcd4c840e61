//! # reel-otlp
//!
//! A trace's MCP exchanges and model calls as OpenTelemetry spans, for the tracing
//! backend a team already runs: `reel export otlp` (a file to a collector, or to
//! OTLP/JSON) and `--otlp URL` on `reel rec` and `reel llm` (spans sent while the run
//! is recorded).
//!
//! - [`spans`]: trace lines → spans ([`SpanBuilder`]), one per recorded session, MCP
//!   request/response or notification (module `mcp`) and model call (module `genai`),
//!   named and attributed by the OpenTelemetry semantic conventions ([`attrs::names`]);
//! - [`ids`]: trace and span ids derived from the trace (an export repeated gives the
//!   same ids), and a client's W3C `traceparent`;
//! - [`export`]: spans → `ExportTraceServiceRequest`s (the official protos, from the
//!   `opentelemetry-proto` crate), encoded as protobuf or OTLP/JSON;
//! - [`send`]: OTLP/HTTP to a collector, with the specification's retries;
//! - [`live`]: the live export: a follower of the trace file, a bounded queue, and the
//!   count of what was dropped.

#![deny(missing_docs)]

pub mod attrs;
pub mod export;
pub(crate) mod genai;
pub mod ids;
pub mod live;
pub(crate) mod mcp;
mod scope;
pub mod send;
pub mod spans;

pub use export::{BATCH, request, spans_of_file, to_json, to_protobuf};
pub use live::{ExportTally, LiveExport};
pub use send::{Client, Collector, CollectorError};
pub use spans::SpanBuilder;

/// The protobuf types, for readers of what this crate produces.
pub use opentelemetry_proto::tonic as proto;
