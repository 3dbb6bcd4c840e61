//! Any client that speaks a provider's API is recorded with its turns, whatever path it
//! posts to: the Vercel AI SDK posts `/messages` (its base URL includes `/v1`), a
//! gateway serves chat completions under a path of its own. And an exchange reel cannot
//! read into turns is said so by `check`, `stats` and `ls`, never counted as 0 tokens.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::support::{
    Bases, Case, Llm, Tape, Upstream, ai_sdk_client, assert_check_clean, assert_ok, lines_of,
    python, python_batch, stats,
};
use crate::harness::reel;

/// The assistant turns of a trace that are generations (not echoed from a request).
fn generations(tape: &Tape) -> Vec<&Value> {
    tape.turns()
        .into_iter()
        .filter(|t| t["role"] == "assistant" && t["echoed"] != true)
        .collect()
}

#[test]
fn the_ai_sdk_posting_without_v1_is_recorded_with_turns_and_replayed() {
    let tmp = tempfile::tempdir().unwrap();
    let upstream = Upstream::scripted(tmp.path(), "up");
    let llm = Llm::record(tmp.path(), &upstream.url, &[]);
    // As `reel llm -- CMD` sets them: ANTHROPIC_BASE_URL without `/v1`, so the AI SDK
    // posts `/messages` and `/chat/completions`-style paths under what it was given.
    let bases = llm.bases();
    let mut live = Vec::new();
    for api in ["anthropic", "chat", "responses"] {
        for mode in ["stream", "plain"] {
            let out = ai_sdk_client(&bases, api, mode, "tool", "reel-tool", 1);
            assert_eq!(
                out[0]["text"], "It is sunny in Paris.",
                "{api}/{mode}: {}",
                out[0]
            );
            assert_eq!(out[0]["steps"], 2, "{api}/{mode}: {}", out[0]);
            live.push(out[0].clone());
        }
    }
    let trace = llm.finish();

    // The upstream was asked at the provider's own paths.
    let paths: Vec<String> = upstream
        .requests()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(paths.len(), 12, "{paths:?}");
    assert!(paths.iter().all(|p| p.starts_with("/v1/")), "{paths:?}");

    let tape = Tape::read(&trace);
    let gens = generations(&tape);
    assert_eq!(gens.len(), 12, "one assistant turn per exchange");
    assert!(
        gens.iter()
            .all(|t| t["model"] == "reel-tool" && t["usage"].is_object())
    );
    assert!(
        gens.iter().all(|t| t["stop_reason"] != "truncated"),
        "no turn is truncated"
    );
    for t in tape.turns() {
        let e = t["endpoint"].as_str().unwrap();
        assert!(
            ["/v1/messages", "/v1/chat/completions", "/v1/responses"].contains(&e),
            "endpoint {e}"
        );
    }
    assert_check_clean(&trace);
    let s = stats(&trace);
    assert_eq!(model_calls(&s, "reel-tool"), 12, "{s}");
    assert!(s["warnings"].as_array().unwrap().is_empty(), "{s}");

    // Replayed offline to the same client: the same answers.
    let play = Llm::play(&trace, &[]);
    let bases = play.bases();
    let mut replayed = Vec::new();
    for api in ["anthropic", "chat", "responses"] {
        for mode in ["stream", "plain"] {
            replayed.push(ai_sdk_client(&bases, api, mode, "tool", "reel-tool", 1).remove(0));
        }
    }
    let stopped = play.stop();
    assert_eq!(stopped.code(), Some(0), "{}", stopped.stderr);
    assert_eq!(replayed, live);
}

#[test]
fn a_generation_under_a_gateways_own_path_is_read_by_its_body() {
    let tmp = tempfile::tempdir().unwrap();
    let upstream = Upstream::scripted(tmp.path(), "up");
    let llm = Llm::record(tmp.path(), &upstream.url, &[]);
    // Azure OpenAI's shape: the chat completions API under /openai/deployments/D.
    let bases = Bases {
        anthropic: llm.url.clone(),
        openai: format!("{}/openai/deployments/reel", llm.url),
    };
    let cases = [
        Case::new("chat", "stream", "text"),
        Case::new("chat", "plain", "tool"),
    ];
    for (c, o) in cases
        .iter()
        .zip(python_batch(tmp.path(), "gw", &bases, &[], &cases))
    {
        assert_ok(c, &o);
    }
    let trace = llm.finish();
    let tape = Tape::read(&trace);
    let gens = generations(&tape);
    assert_eq!(gens.len(), 3, "a text round and a two-round tool loop");
    assert!(gens.iter().all(|t| t["usage"]["output_tokens"] == 9));
    assert!(
        tape.turns()
            .iter()
            .all(|t| t["endpoint"] == "/openai/deployments/reel/chat/completions")
    );
    assert_check_clean(&trace);
    let s = stats(&trace);
    assert_eq!(
        (model_calls(&s, "reel-text"), model_calls(&s, "reel-tool")),
        (1, 2),
        "{s}"
    );
}

/// `reel stats --json`'s generation count of `model`.
fn model_calls(stats: &Value, model: &str) -> u64 {
    stats["models"]["perModel"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["model"] == model)
        .and_then(|r| r["calls"].as_u64())
        .unwrap_or(0)
}

/// POSTs `body` to `url` with Python's standard library; the response body.
fn post(url: &str, body: &str) -> String {
    let script = r#"
import sys, urllib.request
r = urllib.request.urlopen(urllib.request.Request(sys.argv[1], sys.argv[2].encode(),
    {"content-type": "application/json", "x-goog-api-key": "AIza-test"}))
sys.stdout.write(r.read().decode())
"#;
    let out = Command::new(python())
        .args(["-c", script, url, body])
        .output()
        .expect("python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// POSTs `body` to `url`; `STATUS BODY` (an HTTP error is an answer here).
fn post_status(url: &str, body: &str) -> String {
    let script = r#"
import sys, urllib.request, urllib.error
try:
    r = urllib.request.urlopen(urllib.request.Request(sys.argv[1], sys.argv[2].encode(),
        {"content-type": "application/json"}))
    sys.stdout.write(f"{r.status} {r.read().decode()}")
except urllib.error.HTTPError as e:
    sys.stdout.write(f"{e.code} {e.read().decode()}")
"#;
    let out = Command::new(python())
        .args(["-c", script, url, body])
        .output()
        .expect("python");
    String::from_utf8(out.stdout).unwrap()
}

fn ls_json(dir: &Path) -> Value {
    let out = reel().arg("ls").arg(dir).arg("--json").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn an_api_reel_does_not_read_is_said_so_never_zero_tokens_in_silence() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("runs");
    let upstream = Upstream::scripted(tmp.path(), "up");
    let llm = Llm::record(&dir, &upstream.url, &[]);
    let body = r#"{"contents":[{"role":"user","parts":[{"text":"Say hello."}]}]}"#;
    let plain = post(
        &format!("{}/v1beta/models/reel-text:generateContent", llm.url),
        body,
    );
    assert!(plain.contains("Hello from the upstream."), "{plain}");
    let streamed = post(
        &format!(
            "{}/v1beta/models/reel-text:streamGenerateContent?alt=sse",
            llm.url
        ),
        body,
    );
    assert_eq!(streamed.matches("data: ").count(), 3, "{streamed}");
    let trace = llm.finish();
    let tape = Tape::read(&trace);
    assert!(tape.turns().is_empty());
    // Gemini's stream has no end marker: one that ended cleanly is not truncated.
    assert!(tape.events("llm.truncated").is_empty(), "{}", tape.text());

    let check = reel().arg("check").arg(&trace).output().unwrap();
    let text = String::from_utf8_lossy(&check.stdout).into_owned();
    assert!(
        text.contains("warning[llm-turns-missing]")
            && text.contains("2 llm exchanges carried an answer but gave no turns")
            && text.contains("POST /v1beta/models/reel-text:generateContent")
            && text.contains("an endpoint reel does not read"),
        "{text}"
    );

    let s = stats(&trace);
    let warning = s["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "llm-turns-missing")
        .unwrap_or_else(|| panic!("{s}"));
    assert!(warning["message"].as_str().unwrap().contains("not counted"));
    let human = reel().arg("stats").arg(&trace).output().unwrap();
    let human = String::from_utf8_lossy(&human.stdout);
    assert!(
        human.contains("llm exchanges gave none, see the warnings"),
        "{human}"
    );

    // Replayed by content: the same answers; another query or body is a miss, and an
    // ignored member is not.
    let play = Llm::play(&trace, &[]);
    let url = |q: &str| {
        format!(
            "{}/v1beta/models/reel-text:streamGenerateContent{q}",
            play.url
        )
    };
    let other_query = post_status(&url("?alt=json"), body);
    assert!(
        other_query.starts_with("404") && other_query.contains("differs at ?"),
        "{other_query}"
    );
    let changed_body = body.replace("Say hello.", "Say goodbye.");
    let miss = post_status(&url("?alt=sse"), &changed_body);
    assert!(miss.contains("/contents/0/parts/0/text"), "{miss}");
    assert_eq!(post(&url("?alt=sse"), body), streamed);
    drop(play);
    let play = Llm::play(&trace, &["--ignore", "/contents/0/parts/0/text"]);
    let url = format!(
        "{}/v1beta/models/reel-text:streamGenerateContent?alt=sse",
        play.url
    );
    assert_eq!(post(&url, &changed_body), streamed);
    drop(play);

    // Two runs whose answers differ are never "identical", turns or not.
    let changed = tmp.path().join("changed.jsonl");
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(text.contains("Hello from"));
    std::fs::write(&changed, text.replace("Hello", "Goodbye")).unwrap();
    let diff = reel()
        .arg("diff")
        .arg(&trace)
        .arg(&changed)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(
        diff.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&diff.stderr)
    );
    let report: Value = serde_json::from_slice(&diff.stdout).unwrap();
    let drifts = report["drifts"].as_array().unwrap();
    assert_eq!(drifts.len(), 2, "{report}");
    assert!(
        drifts.iter().all(|d| d["kind"] == "body-changed"),
        "{report}"
    );
    assert!(
        drifts[0]["subject"]
            .as_str()
            .unwrap()
            .starts_with("llm POST /v1beta/models/reel-text:"),
        "{report}"
    );

    let runs = ls_json(&dir);
    assert_eq!(runs["runs"][0]["turnless"], 2, "{runs}");
    let ls = reel().arg("ls").arg(&dir).output().unwrap();
    assert!(String::from_utf8_lossy(&ls.stdout).contains("+2 unread"));
    // The same count from a scan, when the trace has no end line to read it from.
    let text = std::fs::read_to_string(&trace).unwrap();
    let cut: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains(r#""type":"end""#))
        .collect();
    std::fs::write(&trace, cut.join("\n") + "\n").unwrap();
    assert_eq!(ls_json(&dir)["runs"][0]["turnless"], 2);
}

#[test]
fn litellm_through_reel_gets_turns_on_both_apis() {
    let tmp = tempfile::tempdir().unwrap();
    let upstream = Upstream::scripted(tmp.path(), "up");
    let llm = Llm::record(tmp.path(), &upstream.url, &[]);
    for api in ["anthropic", "chat"] {
        for mode in ["stream", "plain"] {
            let out = lines_of(litellm(&llm.url, api, mode, "reel-text", 1), "litellm");
            assert_eq!(out[0]["text"], "Hello from the upstream.", "{api}/{mode}");
        }
    }
    let trace = llm.finish();
    let gens = generations(&Tape::read(&trace)).len();
    assert_eq!(gens, 4);
    assert_check_clean(&trace);
}

/// `llm_litellm_client.py` on litellm's own venv.
pub(super) fn litellm(base: &str, api: &str, mode: &str, model: &str, runs: u32) -> Command {
    let venv = super::support::peers_root().join("litellm-venv/bin/python");
    assert!(
        venv.exists(),
        "peers missing: run `cargo xtask peers` ({})",
        venv.display()
    );
    let mut c = Command::new(venv);
    c.arg(crate::harness::play_support::Peers::script(
        "llm_litellm_client.py",
    ))
    .args([
        "--base", base, "--api", api, "--mode", mode, "--model", model,
    ])
    .args(["--runs", &runs.to_string()])
    .env("NO_PROXY", "*");
    c
}
