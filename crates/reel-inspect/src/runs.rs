//! The recorded runs in a directory (`reel ls`), each read from its head and tail only,
//! and finding a run by name ([`resolve`], for every command that reads a trace).
//!
//! A trace directory can hold traces of many gigabytes, so a run is described from two
//! small reads: the first line (the `meta`: label, kind, start) and the last line (the
//! `end`: exit code or reason, duration, and reel's `counts`). The tail is found by
//! seeking to the end and reading backwards a window at a time, never by reading the file.
//!
//! Limits, each a constant below:
//! - the meta line must end within the first [`HEAD_LIMIT`] bytes, else the file is not
//!   taken for a trace;
//! - the last line is looked for in the last [`TAIL_LIMIT`] bytes; a longer last line
//!   cannot be an `end` line reel wrote, so such a run reads as interrupted;
//! - a run without `end.counts` (interrupted, or written by another producer) is counted
//!   by reading it whole only when all its files together are at most [`SCAN_LIMIT`]
//!   bytes; larger ones show their counts as unknown.
//!
//! Rotated companions (`x.jsonl.2`, `x.jsonl.1`) belong to the run of `x.jsonl`: its head
//! is read from the oldest file and its tail from the newest, and its size is the sum.
//! A file holding several appended sessions is described by its first `meta` and its last
//! `end`. Files named `*.jsonl` whose first line is not a meta line, and recordings of a
//! format reel reads that cannot be read, are reported as skipped with the reason; other
//! files (and directories, and names starting with `.`) are only counted.

mod listing;
pub mod render;
mod resolve;

pub use listing::{
    CountsFrom, HEAD_LIMIT, ListError, Listing, LlmSummary, Run, SCAN_LIMIT, SCHEMA, Skipped,
    TAIL_LIMIT, list_runs,
};
pub use resolve::{ResolveError, resolve};
