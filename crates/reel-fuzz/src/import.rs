//! The importers (`reel_convert`): one target per format, each feeding arbitrary
//! bytes to the sniffer, the format's converter and the whole import of a file.
//!
//! Asserts: nothing panics on any bytes; every item a converter gives is a message or
//! event of one JSON value, or a turn; the import of any input either refuses it with an
//! error or writes a trace that parses line by line and ends with an `end` line whose
//! reason is `imported`.

use reel_convert::import::{Output, import};
use reel_convert::{Fault, Format, Found, Item, convert};
use reel_redact::redact::Redactor;
use reel_trace::line::{Line, parse_line};

/// The body of `import_<format>`: `data` is a file of `format`.
pub fn run(format: Format, data: &[u8]) {
    let _ = Format::sniff(data);
    let Ok(dir) = tempfile::tempdir() else { return };
    let src = dir.path().join("in");
    // An mcptape run is a directory: the input is its trace, beside a fixed meta.json.
    let written = if format == Format::Mcptape {
        std::fs::create_dir(&src)
            .and_then(|()| std::fs::write(src.join("trace.jsonl"), data))
            .and_then(|()| std::fs::write(src.join("meta.json"), b"{}"))
    } else {
        std::fs::write(&src, data)
    };
    if written.is_err() {
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
                Ok(Item::Large(large)) => {
                    let (Item::Message { raw, .. } | Item::Event { raw, .. }) = large.into_item()
                    else {
                        panic!("a large item is a message or an event");
                    };
                    assert!(serde_json::from_str::<serde_json::Value>(&raw).is_ok());
                }
                Ok(Item::Turn { .. }) | Err(Fault::Bad(..) | Fault::TooLong { .. }) => {}
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

/// `import_mcptape`.
pub fn mcptape(data: &[u8]) {
    run(Format::Mcptape, data);
}

/// `import_mcp_vcr`.
pub fn mcp_vcr(data: &[u8]) {
    run(Format::McpVcr, data);
}

/// `import_cassette`.
pub fn cassette(data: &[u8]) {
    run(Format::Cassette, data);
}

/// `import_recorder`.
pub fn recorder(data: &[u8]) {
    run(Format::Recorder, data);
}

/// `import_mcp_rec`.
pub fn mcp_rec(data: &[u8]) {
    run(Format::McpRec, data);
}

/// `import_agent_vcr`.
pub fn agent_vcr(data: &[u8]) {
    run(Format::AgentVcr, data);
}

/// `import_mmsp`.
pub fn mmsp(data: &[u8]) {
    run(Format::Mmsp, data);
}

/// `import_claude`.
pub fn claude(data: &[u8]) {
    run(Format::ClaudeCode, data);
}
