//! Byte-exactness: whatever the client and server write reaches the other side
//! unchanged, and every line is recorded as the right kind with its exact bytes.

use crate::harness::rec_support::{Entry, Session, run};

/// A line of the corpus, with its terminator, and how it must be recorded.
struct Case {
    wire: Vec<u8>,
    expect: Expect,
}

enum Expect {
    /// A message line with this `raw`.
    Message { raw: Vec<u8>, crlf: bool },
    /// A `reel.nonjson` event with this text.
    Text { text: &'static str, crlf: bool },
    /// A `reel.nonjson` event with these (non-UTF-8) bytes.
    Bytes(&'static [u8]),
}

fn message(line: &[u8]) -> Case {
    let mut wire = line.to_vec();
    wire.push(b'\n');
    Case {
        wire,
        expect: Expect::Message {
            raw: line.to_vec(),
            crlf: false,
        },
    }
}

/// Blank lines, CRLF, invalid UTF-8, text, a batch, unicode, a 3 MB line, a bare JSON
/// number, broken JSON and a last line without LF.
fn corpus() -> Vec<Case> {
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":5,"result":{{"content":[{{"type":"text","text":"{}"}}]}}}}"#,
        "a multi-megabyte line, ".repeat(3 * 1024 * 1024 / 23)
    );
    let crlf_line = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#;
    vec![
        message(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#),
        Case {
            wire: b"\n".to_vec(),
            expect: Expect::Text { text: "", crlf: false },
        },
        Case {
            wire: [&crlf_line[..], b"\r\n"].concat(),
            expect: Expect::Message {
                raw: crlf_line.to_vec(),
                crlf: true,
            },
        },
        Case {
            wire: b"\xff\xfe not UTF-8 \x80\n".to_vec(),
            expect: Expect::Bytes(b"\xff\xfe not UTF-8 \x80"),
        },
        Case {
            wire: b"Starting server... (a log line on stdout)\r\n".to_vec(),
            expect: Expect::Text {
                text: "Starting server... (a log line on stdout)",
                crlf: true,
            },
        },
        message(br#"[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]"#),
        message(r#"{"jsonrpc":"2.0","id":4,"result":{"text":"héllo wörld ✓ 日本語 🎉 \u00e9\n"}}"#.as_bytes()),
        message(big.as_bytes()),
        message(br#"{"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"Method not found"}}"#),
        Case {
            wire: b" \t \n".to_vec(),
            expect: Expect::Text { text: " \t ", crlf: false },
        },
        Case {
            wire: b"{\"jsonrpc\":\"2.0\",\"id\":\n".to_vec(),
            expect: Expect::Text {
                text: "{\"jsonrpc\":\"2.0\",\"id\":",
                crlf: false,
            },
        },
        message(b"42"),
        Case {
            wire: br#"{"jsonrpc":"2.0","id":7,"method":"last/line-without-newline"}"#.to_vec(),
            expect: Expect::Message {
                raw: br#"{"jsonrpc":"2.0","id":7,"method":"last/line-without-newline"}"#.to_vec(),
                crlf: false,
            },
        },
    ]
}

fn assert_recorded(side: &str, got: &[&Entry], cases: &[Case]) {
    assert_eq!(
        got.len(),
        cases.len(),
        "{side}: one trace line per wire line"
    );
    for (i, (entry, case)) in got.iter().zip(cases).enumerate() {
        match (&case.expect, entry) {
            (
                Expect::Message { raw, crlf },
                Entry::Message {
                    raw: got_raw,
                    crlf: got_crlf,
                    reformatted,
                    ..
                },
            ) => {
                assert!(
                    got_raw.as_bytes() == &raw[..],
                    "{side} line {i}: raw differs"
                );
                assert_eq!((got_crlf, reformatted), (crlf, &false), "{side} line {i}");
            }
            (
                Expect::Text { text, crlf },
                Entry::Event {
                    kind,
                    text: Some(t),
                    bytes: None,
                    crlf: got_crlf,
                    ..
                },
            ) => {
                assert_eq!(kind, "reel.nonjson");
                assert_eq!((t.as_str(), got_crlf), (*text, crlf), "{side} line {i}");
            }
            (
                Expect::Bytes(b),
                Entry::Event {
                    kind,
                    text: None,
                    bytes: Some(got),
                    ..
                },
            ) => {
                assert_eq!(kind, "reel.nonjson");
                assert_eq!(&got[..], *b, "{side} line {i}");
            }
            (_, other) => panic!("{side} line {i}: recorded as {other:?}"),
        }
    }
}

#[test]
fn nasty_lines_pass_unchanged_both_ways_and_are_recorded_exactly() {
    let cases = corpus();
    let wire: Vec<u8> = cases.iter().flat_map(|c| c.wire.clone()).collect();
    let s = Session::new();
    let received = s.sb.dir().join("server-received.bin");
    // `tee` is the server: what it reads is what reel gave it, and it echoes it back.
    let cmd = s.command(
        &["--name", "nasty lines"],
        &["tee", received.to_str().unwrap()],
    );
    let out = run(cmd, wire.clone());

    assert_eq!(out.code(), Some(0), "{}", out.stderr_text());
    assert!(out.stdout == wire, "the client received different bytes");
    let server_got = std::fs::read(&received).unwrap();
    assert!(server_got == wire, "the server received different bytes");

    let trace = s.trace();
    assert!(trace.unparsed.is_empty() && !trace.torn_tail);
    let meta = trace.meta();
    assert_eq!(meta.transport.as_deref(), Some("stdio"));
    assert_eq!(meta.label.as_deref(), Some("nasty lines"));
    assert_eq!(
        meta.command,
        Some(serde_json::json!(["tee", received.to_str().unwrap()]))
    );
    assert_eq!(
        meta.source.as_deref(),
        Some(concat!("reel@", env!("CARGO_PKG_VERSION")))
    );
    assert_eq!(meta.kind.as_deref(), Some("mcp"));
    assert!(meta.redaction.is_some());
    assert_recorded("in", &trace.side("in"), &cases);
    assert_recorded("out", &trace.side("out"), &cases);

    let end = trace.end();
    assert_eq!(end.exit_code, Some(0));
    let counts = end.counts.expect("end.counts");
    let messages = cases
        .iter()
        .filter(|c| matches!(c.expect, Expect::Message { .. }))
        .count() as u64;
    let nonjson = cases.len() as u64 - messages;
    assert_eq!((counts.inbound, counts.outbound), (messages, messages));
    assert_eq!(counts.events, 2 * nonjson);
    // The error response, seen once each way.
    assert_eq!(counts.errors, 2);
}

#[test]
fn a_64_mb_line_from_the_server_is_forwarded_and_recorded_whole() {
    let text = "0123456789 abcdefghijklmnopqrstuvwxyz ".repeat(64 * 1024 * 1024 / 38);
    let line = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"text":"{text}"}}}}"#);
    let s = Session::new();
    let file = s.sb.dir().join("big.jsonl");
    std::fs::write(&file, format!("{line}\n")).unwrap();
    let out = run(s.command(&[], &["cat", file.to_str().unwrap()]), Vec::new());
    assert_eq!(out.code(), Some(0), "{}", out.stderr_text());
    assert!(out.stdout.len() == line.len() + 1 && out.stdout.starts_with(line.as_bytes()));
    let trace = s.trace();
    let raws = trace.raws("out");
    assert_eq!(raws.len(), 1);
    assert!(
        raws[0] == line,
        "the recorded line differs (length {})",
        raws[0].len()
    );
}

#[test]
fn a_server_that_writes_a_last_line_without_newline_and_exits_has_it_recorded() {
    let s = Session::new();
    let script = r#"printf '{"jsonrpc":"2.0","method":"notifications/message"}\nnot json\n{"jsonrpc":"2.0","id":9,"result":{}}'"#;
    let out = run(s.command(&[], &["sh", "-c", script]), Vec::new());
    assert_eq!(out.code(), Some(0));
    assert_eq!(
        out.stdout,
        b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\nnot json\n{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}"
    );
    let trace = s.trace();
    assert_eq!(
        trace.raws("out"),
        vec![
            r#"{"jsonrpc":"2.0","method":"notifications/message"}"#,
            r#"{"jsonrpc":"2.0","id":9,"result":{}}"#
        ]
    );
    assert_eq!(trace.events("reel.nonjson").len(), 1);
}

#[test]
fn json_with_padding_is_a_message_that_keeps_its_original_bytes() {
    let s = Session::new();
    let out = run(
        s.command(&[], &["cat"]),
        b"  {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\t\n".to_vec(),
    );
    assert_eq!(out.code(), Some(0));
    let trace = s.trace();
    let Some(Entry::Message {
        raw,
        reformatted,
        raw_b64,
        ..
    }) = trace.side("in").first().copied()
    else {
        panic!("{:?}", trace.lines)
    };
    assert_eq!(raw, r#"{"jsonrpc":"2.0","method":"x"}"#);
    assert!(reformatted);
    let original = crate::harness::rec_support::base64_decode(raw_b64.as_deref().unwrap()).unwrap();
    assert_eq!(original, b"  {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\t");
}

/// The bytes of one pipe put back together from the trace: each recorded line's bytes
/// (`raw`, `text` or base64 `bytes`) followed by the line end its `eol` names.
fn rebuilt(trace: &std::path::Path, pipe: &str) -> Vec<u8> {
    use base64::Engine;
    let mut out = Vec::new();
    for line in std::fs::read_to_string(trace).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let on_pipe = match pipe {
            "stderr" => v["kind"] == "reel.stderr",
            side => v["dir"] == side || (v["kind"] == "reel.nonjson" && v["side"] == side),
        };
        if !on_pipe {
            continue;
        }
        if let Some(raw) = v.get("raw") {
            // A message line's raw is the line's exact text: take it from the file.
            let start = line.find("\"raw\":").unwrap() + 6;
            let text = &line[start..];
            let mut de = serde_json::Deserializer::from_str(text);
            let r: &serde_json::value::RawValue = serde::Deserialize::deserialize(&mut de).unwrap();
            assert_eq!(
                raw,
                &serde_json::from_str::<serde_json::Value>(r.get()).unwrap()
            );
            out.extend_from_slice(r.get().as_bytes());
        } else if let Some(t) = v["text"].as_str() {
            out.extend_from_slice(t.as_bytes());
        } else {
            let b = v["bytes"].as_str().unwrap();
            out.extend(base64::engine::general_purpose::STANDARD.decode(b).unwrap());
        }
        let eol = reel_trace::Eol::from_member(v["eol"].as_str()).expect("a known eol");
        out.extend_from_slice(eol.bytes());
    }
    out
}

/// stdout and stderr rebuilt from the trace are the bytes the server wrote: stderr
/// lines longer than an event holds (one of exactly the limit, one of three times it),
/// CR LF, non-UTF-8 and a last line without a line break on each pipe.
#[test]
fn every_pipe_is_rebuilt_byte_for_byte_from_the_trace() {
    let s = Session::new();
    let limit = 1024 * 1024;
    let mut stdout: Vec<u8> = Vec::new();
    stdout.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n");
    stdout.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"b\"}\r\n");
    stdout.extend_from_slice(b"not json\nbinary \xff\xfe\n");
    stdout.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"last\"}");
    let mut stderr: Vec<u8> = b"one\n".to_vec();
    stderr.extend(std::iter::repeat_n(b'x', 3 * limit + 5));
    stderr.extend_from_slice(b"\ncrlf\r\n");
    stderr.extend(std::iter::repeat_n(b'y', limit));
    stderr.extend_from_slice(b"\npartial \xff at the end");
    let (out_file, err_file) = (s.sb.dir().join("out.bin"), s.sb.dir().join("err.bin"));
    std::fs::write(&out_file, &stdout).unwrap();
    std::fs::write(&err_file, &stderr).unwrap();
    let script = format!(
        "cat '{}'; cat '{}' >&2",
        out_file.display(),
        err_file.display()
    );
    let out = run(
        s.command(&["--no-redact", "--name", "pipes"], &["sh", "-c", &script]),
        Vec::new(),
    );
    assert_eq!(out.code(), Some(0), "{}", out.stderr_text());
    assert!(out.stdout == stdout, "the client got other bytes");
    let trace = s.trace_path();
    assert!(rebuilt(&trace, "out") == stdout, "stdout is not rebuilt");
    assert!(rebuilt(&trace, "stderr") == stderr, "stderr is not rebuilt");
    // reel check knows every line end it wrote.
    let check = crate::harness::reel()
        .args(["check", "--json"])
        .arg(&trace)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap();
    assert!(!doc.to_string().contains("unknown-eol"), "{doc:#}");
}
