//! Redaction, and the one path every producer records observed lines through.
//!
//! [`redact`] holds the rules (built-in revisions, rule files, the streaming JSON walk,
//! text, command-line and prose rules); [`redact_trace`] applies them to a trace already
//! written (`reel redact`); [`record`] is the [`record::LineRecorder`] every recorder
//! (stdio, HTTP, LLM, import) writes through, so nothing reaches a trace unredacted by
//! one path and redacted by another. It sits above `reel-trace` (lines, writer) and
//! below every crate that writes a trace.

#![deny(missing_docs)]

pub mod record;
pub mod redact;
pub mod redact_trace;
