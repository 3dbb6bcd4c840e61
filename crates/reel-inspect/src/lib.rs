//! What reel says about traces without changing them: `reel check` (is a trace well
//! formed, are its requests answered, does its seal hold), `reel stats` (counts,
//! latencies, tokens and cost) and the listing of runs behind `reel ls` and the
//! viewer's home page. It reads traces through `reel-trace` and other tools' files
//! through `reel-convert`; nothing here writes a trace.

#![deny(missing_docs)]

pub mod check;
pub mod runs;
pub mod stats;
