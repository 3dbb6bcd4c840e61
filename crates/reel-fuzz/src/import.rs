//! The importers (`reel_trace::foreign`): one target per format, each feeding arbitrary
//! bytes to the sniffer, the format's converter and the whole import of a file.
//!
//! Asserts: nothing panics on any bytes; every item a converter gives is a message or
//! event of one JSON value, or a turn; the import of any input either refuses it with an
//! error or writes a trace that parses line by line and ends with an `end` line whose
//! reason is `imported`.

use reel_trace::foreign::import::{Output, import};
use reel_trace::foreign::{Fault, Format, Found, Item, convert};
use reel_trace::line::{Line, parse_line};
use reel_trace::redact::Redactor;

/// The body of `import_<format>`: `data` is a file of `format`.
pub fn run(format: Format, data: &[u8]) {
    let _ = Format::sniff(data);
    let Ok(dir) = tempfile::tempdir() else { return };
    let src = dir.path().join("in");
    if std::fs::write(&src, data).is_err() {
        return;
    }
    let found = Found {
        format,
        path: src,
        label: "fuzz".into(),
    };
    if let Ok(converted) = convert(&found) {
        for item in converted.items {
            match item {
                Ok(Item::Message { raw, .. } | Item::Event { raw, .. }) => assert!(
                    serde_json::from_str::<serde_json::Value>(&raw).is_ok(),
                    "an item's raw is one JSON value: {raw}"
                ),
                Ok(Item::Turn { .. }) | Err(Fault::Bad(..)) => {}
                Err(Fault::Io(e)) => panic!("reading a file just written failed: {e}"),
            }
        }
    }
    let out = dir.path().join("out.jsonl");
    let redactor = Redactor::builtin();
    if import(&found, "fuzz", Output::File(&out), &redactor).is_err() {
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

/// `import_mcporter`.
pub fn mcporter(data: &[u8]) {
    run(Format::Mcporter, data);
}
