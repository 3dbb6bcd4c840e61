//! A tape served in-process to the official Rust MCP SDK (rmcp) in `cargo test`: the
//! way a Rust project tests its agent against a recorded server, offline.
//!
//! `tests/tapes/example.jsonl` is a real recording: `reel example client -- reel rec
//! --name weather -- reel example server`.

use std::path::PathBuf;

use reel_replay::PlayOptions;
use reel_replay::in_process::{self, Replayed};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::json;

fn tape() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/tapes/example.jsonl")
}

/// Connects rmcp to the tape, runs `calls` (tool, arguments), closes, and returns what
/// each call got (its first text, or the error) and what the replay saw.
async fn run(calls: &[(&str, serde_json::Value)]) -> (Vec<String>, Replayed) {
    let (socket, replay) = in_process::serve(PlayOptions::new(tape())).expect("the tape");
    socket.set_nonblocking(true).unwrap();
    let (read, write) = tokio::net::UnixStream::from_std(socket)
        .unwrap()
        .into_split();
    let client = ().serve((read, write)).await.expect("initialize from the tape");
    let tools = client.list_all_tools().await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "weather"), "{tools:?}");
    let mut answers = Vec::new();
    for (tool, args) in calls {
        let params = CallToolRequestParams::new(tool.to_string())
            .with_arguments(args.as_object().cloned().unwrap_or_default());
        answers.push(match client.call_tool(params).await {
            Ok(r) => r
                .content
                .first()
                .and_then(|c| c.as_text())
                .map(|t| t.text.clone())
                .unwrap_or_default(),
            Err(e) => format!("error: {e}"),
        });
    }
    client.cancel().await.expect("close the client");
    let replayed = tokio::task::spawn_blocking(move || replay.finish())
        .await
        .unwrap()
        .expect("the replay");
    (answers, replayed)
}

#[tokio::test]
async fn rmcp_is_answered_from_the_tape_in_process() {
    let (answers, replayed) = run(&[
        ("add", json!({"a": 2, "b": 40})),
        ("weather", json!({"city": "Lyon"})),
    ])
    .await;
    assert_eq!(answers, ["2 + 40 = 42", "Lyon: 21°C, light wind"]);
    replayed.assert_clean();
    assert_eq!(replayed.summary.missed, 0);
    assert!(replayed.summary.answered >= 4, "{:?}", replayed.summary);
}

#[tokio::test]
async fn a_call_the_tape_cannot_answer_fails_with_the_miss_report() {
    let (answers, replayed) = run(&[("weather", json!({"city": "Paris"}))]).await;
    assert!(answers[0].starts_with("error: "), "{answers:?}");
    assert!(
        answers[0].contains("no recorded answer for tools/call"),
        "{answers:?}"
    );
    assert_eq!(replayed.summary.missed, 1);
    let report = &replayed.report;
    assert!(report.contains("miss: tools/call"), "{report}");
    assert!(
        report.contains(r#"/params/arguments/city: "Lyon" -> "Paris""#),
        "{report}"
    );
    let failed = std::panic::catch_unwind(|| replayed.assert_clean()).unwrap_err();
    let message = failed.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message.contains("did not answer as recorded (Misses)"),
        "{message}"
    );
    assert!(message.contains(r#""Lyon" -> "Paris""#), "{message}");
}

#[test]
fn a_tape_that_is_not_there_is_an_error_at_once() {
    let missing = std::env::temp_dir().join("reel-no-such-tape.jsonl");
    assert!(in_process::serve(PlayOptions::new(missing)).is_err());
}
