//! A whole answer is never called truncated. The rule: a response is truncated when its
//! content was cut before its terminal event. Clients hang up right after the event they
//! need (litellm after Anthropic's `message_delta`, others after `[DONE]`), upstreams
//! coalesce the last events with the closing chunk, pause before it, or end the body by
//! closing the connection; none of that cuts content. Each client family runs every
//! ending 20 times; not one turn may be `truncated` and not one `llm.truncated` written,
//! and two honest runs diff as identical.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::clients::litellm;
use super::support::{
    Case, Llm, Tape, Upstream, ai_sdk_client, assert_check_clean, assert_ok, lines_of, python,
    python_batch,
};
use crate::harness::play_support::Peers;
use crate::harness::reel;

/// How the upstream writes the end of a whole answer (`llm_upstream.py`'s endings).
const ENDINGS: [&str; 4] = ["coalesce", "gap", "linger", "closedelim"];
const RUNS: u32 = 20;

/// `reel-text-<ending>` for every ending, comma-separated (the clients ask each in turn).
fn models() -> String {
    ENDINGS.map(|e| format!("reel-text-{e}")).join(",")
}

/// Checks the recorded trace: `want` generations, none truncated, each with the
/// model's own stop reason, no `llm.truncated` line; `reel check` clean.
fn assert_whole(trace: &Path, want: usize) {
    let tape = Tape::read(trace);
    let truncated = tape.events("llm.truncated");
    assert!(
        truncated.is_empty(),
        "{} llm.truncated lines, first: {}",
        truncated.len(),
        truncated[0]
    );
    let gens: Vec<&Value> = tape
        .turns()
        .into_iter()
        .filter(|t| t["role"] == "assistant" && t["echoed"] != true)
        .collect();
    assert_eq!(gens.len(), want, "one generation per request");
    for t in &gens {
        let reason = t["stop_reason"].as_str().unwrap_or("");
        assert!(
            ["end_turn", "stop", "completed"].contains(&reason) && t["truncated"].is_null(),
            "a whole answer recorded as {reason}: {t}"
        );
    }
    assert_check_clean(trace);
}

/// `llm_hangup_client.py`: a raw client that closes the connection right after the
/// event it stops at.
fn hangup(url: &str, api: &str, stop: &str, runs: u32) -> Command {
    let mut c = Command::new(python());
    c.arg(Peers::script("llm_hangup_client.py"))
        .args([
            "--url",
            url,
            "--api",
            api,
            "--stop",
            stop,
            "--model",
            &models(),
        ])
        .args(["--runs", &runs.to_string()]);
    c
}

#[test]
fn a_client_that_hangs_up_after_the_answer_gets_no_truncated_turn() {
    let tmp = tempfile::tempdir().unwrap();
    let upstream = Upstream::scripted(tmp.path(), "up");
    let llm = Llm::record(tmp.path(), &upstream.url, &[]);
    let mut n = 0;
    for api in ["anthropic", "chat", "responses"] {
        for stop in ["content", "end"] {
            let outs = lines_of(hangup(&llm.url, api, stop, RUNS), "llm_hangup_client.py");
            assert_eq!(outs.len(), RUNS as usize * ENDINGS.len());
            assert!(
                outs.iter().all(|o| o["stop_reason"].is_string()),
                "{outs:?}"
            );
            n += outs.len();
        }
    }
    assert_whole(&llm.finish(), n);
}

#[test]
fn the_official_sdks_get_no_truncated_turn_whatever_the_last_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let upstream = Upstream::scripted(tmp.path(), "up");
    let llm = Llm::record(tmp.path(), &upstream.url, &[]);
    let mut cases = Vec::new();
    for _ in 0..RUNS {
        for api in ["anthropic", "chat", "responses"] {
            for e in ENDINGS {
                let mode = if e == "closedelim" && api == "chat" {
                    "plain" // a close-delimited JSON body, beside the streams
                } else {
                    "stream"
                };
                cases.push(Case::new(api, mode, "text").model(&format!("reel-text-{e}")));
            }
        }
    }
    let outs = python_batch(tmp.path(), "py", &llm.bases(), &[], &cases);
    for (c, o) in cases.iter().zip(&outs) {
        assert_ok(c, o);
        assert_eq!(o.out["text"], "Hello from the upstream.", "{}", c.name());
    }
    assert_whole(&llm.finish(), cases.len());
}

#[test]
fn the_official_node_sdks_get_no_truncated_turn_whatever_the_last_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let upstream = Upstream::scripted(tmp.path(), "up");
    let llm = Llm::record(tmp.path(), &upstream.url, &[]);
    let bases = llm.bases();
    let mut n = 0;
    for api in ["anthropic", "chat", "responses"] {
        for e in ENDINGS {
            let mut c = Command::new("node");
            c.arg(Peers::script("llm_client.mjs"))
                .args(["--api", api, "--mode", "stream", "--scenario", "text"])
                .args([
                    "--model",
                    &format!("reel-text-{e}"),
                    "--repeat",
                    &RUNS.to_string(),
                ])
                .env("ANTHROPIC_BASE_URL", &bases.anthropic)
                .env("OPENAI_BASE_URL", &bases.openai)
                .env("REEL_PEERS", super::support::peers_root())
                .env_remove("ANTHROPIC_API_KEY")
                .env_remove("OPENAI_API_KEY");
            let outs = lines_of(c, "llm_client.mjs");
            assert_eq!(outs.len(), RUNS as usize, "{api}/{e}");
            assert!(
                outs.iter().all(|o| o["text"] == "Hello from the upstream."),
                "{outs:?}"
            );
            n += outs.len();
        }
    }
    assert_whole(&llm.finish(), n);
}

#[test]
fn the_ai_sdk_and_litellm_get_no_truncated_turn_whatever_the_last_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let upstream = Upstream::scripted(tmp.path(), "up");
    let llm = Llm::record(tmp.path(), &upstream.url, &[]);
    let mut n = 0;
    for api in ["anthropic", "chat", "responses"] {
        let outs = ai_sdk_client(&llm.bases(), api, "stream", "text", &models(), RUNS);
        assert!(
            outs.iter().all(|o| o["text"] == "Hello from the upstream."),
            "{outs:?}"
        );
        n += outs.len();
    }
    for api in ["anthropic", "chat"] {
        let outs = lines_of(litellm(&llm.url, api, "stream", &models(), RUNS), "litellm");
        assert!(
            outs.iter().all(|o| o["text"] == "Hello from the upstream."),
            "{outs:?}"
        );
        n += outs.len();
    }
    assert_eq!(n, 5 * RUNS as usize * ENDINGS.len());
    assert_whole(&llm.finish(), n);
}

#[test]
fn two_honest_runs_with_different_last_writes_diff_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let upstream = Upstream::scripted(tmp.path(), "up");
    let mut traces = Vec::new();
    for run in ["a", "b"] {
        let dir = tmp.path().join(run);
        let llm = Llm::record(&dir, &upstream.url, &[]);
        for api in ["anthropic", "chat", "responses"] {
            lines_of(hangup(&llm.url, api, "content", 1), "llm_hangup_client.py");
        }
        traces.push(llm.finish());
    }
    let out = reel()
        .arg("diff")
        .args(&traces)
        .output()
        .expect("reel diff");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
