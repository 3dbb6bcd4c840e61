//! The library on traces long enough to cross every internal boundary: many batches,
//! fresh exchange builders (every `RESET_AFTER` exchanges), appended sessions, rotated
//! companion files, a BOM and CRLF line ends (whose byte offsets the re-read depends on).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use reel_diff::{DiffOptions, Kind, Verdict, diff};

/// Writes `n` exchanges; `answer(i)` is the text of call i; every 7th pair of calls is
/// pipelined (both requests, then the answers in reverse order).
fn session(out: &mut String, n: usize, id0: usize, answer: &dyn Fn(usize) -> String, eol: &str) {
    out.push_str(r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00Z","kind":"mcp"}"#);
    out.push_str(eol);
    let mut i = 0;
    while i < n {
        let line = |out: &mut String, dir: &str, raw: String| {
            let _ = write!(
                out,
                r#"{{"t":"2026-01-01T00:00:00Z","dir":"{dir}","raw":{raw}}}{eol}"#
            );
        };
        let call = |i: usize| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"n","arguments":{{"i":{i}}}}}}}"#,
                id0 + i
            )
        };
        let result = |i: usize| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[{{"type":"text","text":"{}"}}]}}}}"#,
                id0 + i,
                answer(i)
            )
        };
        if i % 7 == 0 && i + 1 < n {
            line(out, "in", call(i));
            line(out, "in", call(i + 1));
            line(out, "out", result(i + 1));
            line(out, "out", result(i));
            i += 2;
        } else {
            line(out, "in", call(i));
            line(out, "out", result(i));
            i += 1;
        }
    }
}

fn write(path: &Path, text: &str) -> PathBuf {
    std::fs::write(path, text).unwrap();
    path.to_owned()
}

const N: usize = 12_000;

#[test]
fn a_long_trace_pair_with_one_changed_answer_finds_exactly_it() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = |i: usize| format!("answer {i}");
    let changed = |i: usize| {
        if i == 9_001 {
            "changed".to_owned()
        } else {
            format!("answer {i}")
        }
    };
    let mut a = String::new();
    session(&mut a, N, 0, &plain, "\n");
    let mut b = String::from("\u{feff}");
    session(&mut b, N, 50_000, &changed, "\r\n");
    let a = write(&tmp.path().join("a.jsonl"), &a);
    let b = write(&tmp.path().join("b.jsonl"), &b);

    let mut calls = 0;
    let r = diff(&a, &b, &DiffOptions::default(), &mut |_| calls += 1).unwrap();
    assert!(calls > 1, "progress was reported {calls} time(s)");
    assert_eq!(r.verdict(), Verdict::Output);
    assert_eq!(r.counts.paired, N as u64);
    assert_eq!(r.drifts.len(), 1, "{:#?}", r.drifts);
    let d = &r.drifts[0];
    assert_eq!(d.kind, Kind::ResultChanged);
    // Where call 9001's request is in B, found by its content.
    let b_text = std::fs::read_to_string(&b).unwrap();
    let want = b_text
        .lines()
        .position(|l| l.contains(r#""arguments":{"i":9001}"#))
        .unwrap() as u64
        + 1;
    assert_eq!(d.b.as_ref().unwrap().line, want);
    // The payload is re-read from the right bytes (BOM and CRLF accounted for).
    let detail = r.detail(d).unwrap().unwrap();
    assert_eq!(detail.differences.len(), 1);
    assert_eq!(
        detail.differences[0].right,
        Some(serde_json::json!("changed"))
    );
}

#[test]
fn appended_sessions_and_rotated_companions_read_as_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = |i: usize| format!("answer {i}");
    // A: two sessions appended to one file (ids restart in the second).
    let mut a = String::new();
    session(&mut a, 5_000, 0, &plain, "\n");
    session(&mut a, 5_000, 0, &|i| format!("answer {}", i + 5_000), "\n");
    let a = write(&tmp.path().join("a.jsonl"), &a);
    // B: the same calls split over a rotated companion and the base file.
    let mut older = String::new();
    session(&mut older, 5_000, 0, &plain, "\n");
    write(&tmp.path().join("b.jsonl.1"), &older);
    let mut newer = String::new();
    session(
        &mut newer,
        5_000,
        7,
        &|i| format!("answer {}", i + 5_000),
        "\n",
    );
    let b = write(&tmp.path().join("b.jsonl"), &newer);

    let r = diff(&a, &b, &DiffOptions::default(), &mut |_| {}).unwrap();
    // Session 2 of A asks i = 0.. again with other answers than session 1: content
    // alignment pairs the first "i: 0" of A with the first of B, and so on.
    assert_eq!(r.verdict(), Verdict::Identical, "{:#?}", r.drifts.first());
    assert_eq!(r.a.sessions, 2);
    assert_eq!(r.b.files.len(), 2);
    assert_eq!(r.counts.paired, 10_000);
}
