//! The mcporter importer (`reel_trace::foreign`): its sniffer, its converter, and the
//! whole import of a file into a trace.
//!
//! Asserts: nothing panics on any bytes; every item the converter gives is a message of
//! one JSON value or an event; the import of any input either refuses it with an error
//! or writes a trace that parses line by line and ends with an `end` line whose reason
//! is `imported`.

use reel_trace::foreign::import::{Output, import};
use reel_trace::foreign::{Format, Item, mcporter};
use reel_trace::line::{Line, parse_line};
use reel_trace::redact::Redactor;

/// The target.
pub fn run(data: &[u8]) {
    let mut servers = mcporter::Servers::default();
    for line in data.split(|&b| b == b'\n') {
        let _ = Format::sniff(line);
        servers.line(line);
    }
    let mut c = mcporter::Converter::new(&servers);
    for (i, line) in data.split(|&b| b == b'\n').enumerate() {
        if let Ok(Some(item)) = c.line(i as u64 + 1, line) {
            let raw = match &item {
                Item::Message { raw, .. } | Item::Event { raw, .. } => raw,
            };
            assert!(
                serde_json::from_str::<serde_json::Value>(raw).is_ok(),
                "an item's raw is one JSON value: {raw}"
            );
        }
    }
    let Ok(dir) = tempfile::tempdir() else { return };
    let src = dir.path().join("in.ndjson");
    if std::fs::write(&src, data).is_err() {
        return;
    }
    let out = dir.path().join("out.jsonl");
    let redactor = Redactor::builtin();
    if import(
        &src,
        Some(Format::Mcporter),
        "fuzz",
        Output::File(&out),
        &redactor,
    )
    .is_err()
    {
        return;
    }
    let text = std::fs::read(&out).expect("the trace was written");
    let lines: Vec<&[u8]> = text
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    for l in &lines {
        assert!(parse_line(l).is_ok(), "a line of the import does not parse");
    }
    match lines.last().map(|l| parse_line(l)) {
        Some(Ok(Line::End(e))) => assert_eq!(e.reason.as_deref(), Some("imported")),
        _ => panic!("the import does not end with its end line"),
    }
}
