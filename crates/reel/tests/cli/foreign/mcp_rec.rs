//! mcp-rec 0.1.1 against reel: sessions it records as a stdio proxy (both protocol eras,
//! and server-everything's notifications, progress and server requests) import, check,
//! count and replay to the client that made them; a file it appended a second
//! recording to imports with a warning saying so.

use std::ffi::OsString;
use std::path::Path;

use super::mcp_vcr::{client, imports_checks_counts_and_replays, methods, server};
use super::venv_bin;
use crate::harness::play_http_support::run;
use crate::harness::reel;

/// Without it mcp-rec prints an attribution notice on stderr at each start.
const QUIET: (&str, &str) = ("MCP_REC_NO_NOTICE", "1");

/// `mcp-rec record -o OUT -- SERVER` in front of the client: its results.
fn record(tmp: &Path, suite: &str, mode: &str, out: &Path) -> String {
    let mut words: Vec<OsString> = vec![
        venv_bin("mcp-rec-venv", "mcp-rec").into(),
        "record".into(),
        "-o".into(),
        out.into(),
        "--".into(),
    ];
    words.extend(server(suite));
    client(tmp, suite, mode, &words, &[QUIET])
}

#[test]
fn mcp_rec_sessions_of_both_eras_import_check_count_and_replay() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    for mode in ["legacy", "auto"] {
        let want = client(tmp, "demo", mode, &server("demo"), &[]);
        let src = tmp.join(format!("{mode}.jsonl"));
        assert_eq!(
            record(tmp, "demo", mode, &src),
            want,
            "mcp-rec passes through"
        );
        let text = std::fs::read_to_string(&src).unwrap();
        assert!(text.starts_with("{\"ts\": "), "{text}");
        let lines = imports_checks_counts_and_replays(
            &src,
            ("demo", mode),
            &want,
            &["add", "count_down", "shout"],
            &[],
        );
        assert_eq!(lines[0]["source"], "mcp-rec");
        let era = if mode == "auto" {
            "server/discover"
        } else {
            "initialize"
        };
        assert_eq!(methods(&lines, "in").first().map(String::as_str), Some(era));
        let progress = methods(&lines, "out")
            .into_iter()
            .filter(|m| m == "notifications/progress")
            .count();
        assert_eq!(progress, 3);
    }
}

#[test]
fn mcp_rec_carries_server_everything_notifications_progress_and_server_requests() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let want = client(tmp, "everything", "auto", &server("everything"), &[]);
    let src = tmp.join("everything.jsonl");
    assert_eq!(record(tmp, "everything", "auto", &src), want);
    let lines = imports_checks_counts_and_replays(
        &src,
        ("everything", "auto"),
        &want,
        &[
            "echo",
            "get-roots-list",
            "get-sum",
            "trigger-elicitation-request",
            "trigger-long-running-operation",
            "trigger-sampling-request",
        ],
        // The refused probe the client fell back from is a note, not an error.
        &[],
    );
    let out = methods(&lines, "out");
    for asked in ["sampling/createMessage", "elicitation/create", "roots/list"] {
        assert!(out.iter().any(|m| m == asked), "{asked} kept: {out:?}");
    }
    assert_eq!(
        out.iter()
            .filter(|m| *m == "notifications/progress")
            .count(),
        3
    );
}

#[test]
fn a_file_mcp_rec_appended_a_second_recording_to_imports_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let src = tmp.join("twice.jsonl");
    record(tmp, "demo", "legacy", &src);
    record(tmp, "demo", "legacy", &src);
    let imported = tmp.join("twice-imported.jsonl");
    let mut c = reel();
    c.arg("import").arg("-o").arg(&imported).arg(&src);
    let (code, _, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("2 initialize requests"), "{err}");
    let mut c = reel();
    c.args(["stats", "--json"]).arg(&imported);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    let stats: serde_json::Value = serde_json::from_str(&out).unwrap();
    let add = stats["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "add")
        .cloned()
        .unwrap_or_default();
    assert_eq!(add["calls"], 2, "both recordings' calls: {stats}");
}
