//! Helpers for the check's unit tests: a minimal valid trace around the lines under
//! test, and a report reduced to (rule, line) pairs so that a test states every problem
//! it expects.

use std::path::Path;

use super::{CheckOptions, CheckReport, Rule, check_read};

pub(super) const META: &str = r#"{"v":1,"type":"meta","startedAt":"2026-05-12T23:00:00.000Z","label":"t","command":["srv"],"redaction":{"rules":"reel/1","defaults":true}}"#;
pub(super) const END: &str =
    r#"{"t":"2026-05-12T23:00:01.000Z","type":"end","exitCode":0,"durationMs":1000}"#;

pub(super) fn check(text: &str) -> CheckReport {
    check_read(
        Path::new("t.jsonl"),
        text.as_bytes(),
        &CheckOptions::default(),
    )
    .unwrap()
}

pub(super) fn trace(body: &[&str]) -> String {
    let mut s = String::from(META);
    s.push('\n');
    for l in body {
        s.push_str(l);
        s.push('\n');
    }
    s.push_str(END);
    s.push('\n');
    s
}

pub(super) fn rules(r: &CheckReport) -> Vec<(Rule, Option<u64>)> {
    r.problems.iter().map(|p| (p.rule, p.line)).collect()
}

pub(super) fn msg(t: &str, dir: &str, raw: &str) -> String {
    format!(r#"{{"t":"{t}","dir":"{dir}","raw":{raw}}}"#)
}

pub(super) const T: &str = "2026-05-12T23:00:00.500Z";
