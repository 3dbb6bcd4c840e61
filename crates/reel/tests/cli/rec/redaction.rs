//! Redaction applies to the trace, never to the bytes the peers exchange.

use crate::harness::rec_support::{Entry, Session, run};

const KEY: &str = "sk-proj-0123456789abcdefghijklmnop";

fn call() -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"login","arguments":{{"apiKey":"{KEY}","note":"key {KEY} inline","count":42}}}}}}"#
    )
}

#[test]
fn secrets_are_redacted_in_the_trace_and_forwarded_intact() {
    let line = call();
    let input = format!("{line}\n");
    let s = Session::new();
    let script = format!("cat; echo 'connecting with {KEY}' >&2");
    let out = run(
        s.command(&[], &["sh", "-c", &script, "--api-key", "hunter2-secret"]),
        input.clone().into_bytes(),
    );
    assert_eq!(out.code(), Some(0), "{}", out.stderr_text());
    // Forwarded untouched, both ways and on stderr.
    assert_eq!(out.stdout, input.as_bytes());
    assert!(
        out.stderr_text()
            .contains(&format!("connecting with {KEY}"))
    );

    let path = s.trace_path();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains(KEY), "the key reached the trace");
    assert!(
        !text.contains("hunter2-secret"),
        "the command's secret reached the trace"
    );
    let trace = s.trace();
    for dir in ["in", "out"] {
        let raws = trace.raws(dir);
        let v: serde_json::Value = serde_json::from_str(raws[0]).unwrap();
        // What replay needs stays; the secrets go.
        assert_eq!(v["id"], 1);
        assert_eq!(v["method"], "tools/call");
        assert_eq!(v["params"]["name"], "login");
        assert_eq!(v["params"]["arguments"]["count"], 42);
        assert_eq!(v["params"]["arguments"]["apiKey"], "[REDACTED]");
        assert_eq!(v["params"]["arguments"]["note"], "key [REDACTED] inline");
    }
    let stderr = trace.events("reel.stderr");
    assert!(
        matches!(stderr[..], [Entry::Event { text: Some(t), .. }] if t == "connecting with [REDACTED]")
    );
    let command = trace.meta().command.clone().unwrap();
    assert_eq!(command[command.as_array().unwrap().len() - 1], "[REDACTED]");
}

#[test]
fn user_patterns_apply_and_no_redact_keeps_everything_but_says_so() {
    let line = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"account MYCO-12345678 ready"}}"#;
    let s = Session::new();
    let out = run(
        s.command(&["--redact", "MYCO-[0-9]+"], &["cat"]),
        format!("{line}\n").into_bytes(),
    );
    assert_eq!(out.code(), Some(0), "{}", out.stderr_text());
    let trace = s.trace();
    assert_eq!(
        trace.raws("in"),
        [
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"account [REDACTED] ready"}}"#
        ]
    );
    assert_eq!(
        trace.meta().redaction.as_ref().unwrap()["patterns"],
        serde_json::json!(["MYCO-[0-9]+"])
    );

    let s = Session::new();
    let input = format!("{}\n", call());
    let out = run(
        s.command(&["--no-redact"], &["cat"]),
        input.clone().into_bytes(),
    );
    assert_eq!(out.code(), Some(0));
    assert!(
        out.stderr_text().contains("--no-redact"),
        "{}",
        out.stderr_text()
    );
    assert_eq!(s.trace().raws("in"), [call().as_str()]);
}

#[test]
fn a_bad_pattern_is_a_usage_error_before_anything_starts() {
    let s = Session::new();
    let marker = s.sb.dir().join("ran");
    let out = run(
        s.command(
            &["--redact", "(unclosed"],
            &["sh", "-c", &format!("touch '{}'", marker.display())],
        ),
        Vec::new(),
    );
    assert_eq!(out.code(), Some(64), "{}", out.stderr_text());
    assert!(
        out.stderr_text().contains("--redact"),
        "{}",
        out.stderr_text()
    );
    assert!(!marker.exists());
    assert!(!s.dir().exists(), "no trace for a run that never started");
}
