//! One trace line (`reel_trace::line::parse_line`): every line of every trace a reading
//! command opens comes through it.
//!
//! Asserts: parsing never panics; the class agrees with `classify` on the line's own
//! `type` and `dir`; a message's `raw` is borrowed from the input; and a parsed line
//! written back by the writer (`write_parsed`: meta, turn and end re-serialised, the
//! others verbatim) parses again to an equal line of the same class — rewriting a trace
//! keeps what it read.

use reel_trace::line::{Line, classify, parse_line};
use reel_trace::{Timestamp, TraceWriter};

/// The target.
pub fn run(data: &[u8]) {
    let Ok(line) = parse_line(data) else {
        return;
    };
    let _ = line.t();
    match &line {
        Line::Message(v) | Line::Event(v) | Line::Other(v) => {
            assert_eq!(line.class(), classify(v.ty.as_deref(), v.dir.as_deref()));
            if let Some(raw) = v.raw_str() {
                let start = raw.as_ptr() as usize - data.as_ptr() as usize;
                assert!(start + raw.len() <= data.len(), "raw is not in the line");
            }
            let _ = (v.dir(), v.http_req());
        }
        Line::Meta(m) => {
            let _ = (m.kind_or_default(), m.producer_label(), m.command_args());
        }
        Line::Turn(t) => {
            let _ = t.is_echoed();
            for b in t.blocks() {
                let _ = (b.type_name(), b.to_value());
            }
        }
        Line::End(_) => {}
    }
    // A line of a trace holds no LF; the writer's output is then one line.
    if data.contains(&b'\n') {
        return;
    }
    let mut out = Vec::new();
    let mut w = TraceWriter::new(&mut out, Timestamp(0));
    w.write_parsed(&line, data).expect("writing to memory");
    w.flush().expect("writing to memory");
    drop(w);
    let text = out
        .strip_suffix(b"\n")
        .expect("the writer ends a line with LF");
    assert!(!text.contains(&b'\n'), "one line became several: {text:?}");
    let again = parse_line(text).unwrap_or_else(|e| {
        panic!(
            "the rewritten line does not parse ({e}): {}",
            String::from_utf8_lossy(text)
        )
    });
    assert_eq!(again.class(), line.class());
    match (&line, &again) {
        (Line::Meta(a), Line::Meta(b)) => assert_eq!(a, b),
        (Line::Turn(a), Line::Turn(b)) => assert_eq!(a, b),
        (Line::End(a), Line::End(b)) => assert_eq!(a, b),
        _ => assert_eq!(text, data),
    }
}
