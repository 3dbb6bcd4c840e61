//! `reel llm --play`: a request the tape has no answer for, identical requests answered
//! in the order they were recorded, `--pace recorded`, an agent run against the tape
//! (`--play TRACE -- CMD`); and `reel llm -- CMD` recording an agent it starts.

use serde_json::{Value, json};

use super::support::{Case, Llm, Tape, Upstream, assert_ok, peers_root, python, python_batch};
use crate::harness::play_http_support::{open, request, run};
use crate::harness::play_support::Peers;
use crate::harness::reel;

const ANTHROPIC: &[(&str, &str)] = &[
    ("content-type", "application/json"),
    ("anthropic-version", "2023-06-01"),
    ("x-api-key", "sk-test-reel-0000000000000000"),
];

fn ask(model: &str, prompt: &str, stream: bool) -> String {
    json!({"model": model, "max_tokens": 64, "stream": stream,
           "messages": [{"role": "user", "content": prompt}]})
    .to_string()
}

/// Records the raw Anthropic requests `bodies`, in turn; their answers and the trace.
fn record(tmp: &std::path::Path, bodies: &[String]) -> (Vec<Vec<u8>>, std::path::PathBuf) {
    let up = Upstream::scripted(tmp, "up");
    let llm = Llm::record(&tmp.join("traces"), &up.url, &[]);
    let answers = bodies
        .iter()
        .map(|b| {
            let r = open(&llm.addr, "POST", "/v1/messages", ANTHROPIC, b).finish();
            assert_eq!(r.status, 200, "{}", r.text());
            r.body
        })
        .collect();
    (answers, llm.finish())
}

#[test]
fn a_miss_is_a_provider_error_naming_the_nearest_exchange_and_exits_3() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, trace) = record(tmp.path(), &[ask("reel-text", "Say hello.", false)]);
    let player = Llm::play(&trace, &[]);
    let r = request(
        &player.addr,
        "POST",
        "/v1/messages",
        ANTHROPIC,
        &ask("reel-text", "Say goodbye.", false),
    );
    let stopped = player.stop();
    assert!(
        r.status >= 400,
        "a miss is an error: {} {}",
        r.status,
        r.text()
    );
    let e: Value = r.json();
    assert_eq!(e["type"], "error", "Anthropic's error shape: {e}");
    let message = e["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("nearest: exchange 1"), "{e}");
    assert!(message.contains("/messages/0"), "where it differs: {e}");
    assert_eq!(stopped.code(), Some(3), "{}", stopped.stderr);
}

#[test]
fn identical_requests_are_answered_in_recorded_order() {
    let tmp = tempfile::tempdir().unwrap();
    let body = ask("reel-text", "Say hello.", false);
    let (answers, trace) = record(tmp.path(), &[body.clone(), body.clone()]);
    let id = |b: &[u8]| serde_json::from_slice::<Value>(b).unwrap()["id"].clone();
    assert_ne!(
        id(&answers[0]),
        id(&answers[1]),
        "the upstream numbers its answers"
    );
    let player = Llm::play(&trace, &[]);
    let replayed: Vec<Vec<u8>> = (0..2)
        .map(|_| request(&player.addr, "POST", "/v1/messages", ANTHROPIC, &body).body)
        .collect();
    let stopped = player.stop();
    assert_eq!(
        replayed.iter().map(|b| id(b)).collect::<Vec<_>>(),
        answers.iter().map(|b| id(b)).collect::<Vec<_>>()
    );
    assert!(replayed == answers, "the replayed bodies differ");
    assert_eq!(stopped.code(), Some(0), "{}", stopped.stderr);
}

#[test]
fn pace_recorded_serves_the_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let body = ask("reel-text-slow", "Say hello.", true);
    let (answers, trace) = record(tmp.path(), std::slice::from_ref(&body));
    let player = Llm::play(&trace, &["--pace", "recorded"]);
    let r = open(&player.addr, "POST", "/v1/messages", ANTHROPIC, &body).finish();
    let stopped = player.stop();
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(
        r.body == answers[0],
        "{}\n---\n{}",
        r.text(),
        String::from_utf8_lossy(&answers[0])
    );
    assert_eq!(stopped.code(), Some(0), "{}", stopped.stderr);
}

#[test]
fn play_with_a_command_runs_the_agent_against_the_tape_and_exits_with_its_status() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let case = Case::new("chat", "plain", "text");
    let (recorded, trace) = {
        let up = Upstream::scripted(tmp, "up");
        let llm = Llm::record(&tmp.join("traces"), &up.url, &[]);
        let o = python_batch(tmp, "rec", &llm.bases(), &[], std::slice::from_ref(&case));
        (o, llm.finish())
    };
    assert_ok(&case, &recorded[0]);
    let agent = |exit: &str| {
        let mut c = reel();
        c.arg("llm")
            .arg("--play")
            .arg(&trace)
            .args(["--", "sh", "-c"])
            .arg(format!(
                "\"$0\" -W ignore \"$1\" --api chat --mode plain --scenario text; exit {exit}"
            ))
            .arg(python())
            .arg(Peers::script("llm_client.py"))
            .env("REEL_PEERS", peers_root())
            .env_remove("OPENAI_API_KEY");
        run(c)
    };
    let (code, stdout, stderr) = agent("0");
    assert_eq!(code, Some(0), "{stderr}");
    let out: Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(out, recorded[0].out, "the agent's result from the tape");
    let (code, _, stderr) = agent("7");
    assert_eq!(code, Some(7), "the agent's status: {stderr}");
}

#[test]
fn a_wrapped_command_sees_the_base_urls_and_its_status_ends_the_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let up = Upstream::scripted(tmp, "up");
    let dir = tmp.join("traces");
    let mut c = reel();
    c.arg("llm")
        .arg("--dir")
        .arg(&dir)
        .args(["--upstream", &up.url, "--", "sh", "-c"])
        .arg(concat!(
            "\"$0\" -W ignore \"$1\" --api anthropic --mode plain --scenario text >/dev/null || exit 99; ",
            "printf '%s|%s|%s|%s\\n' \"$ANTHROPIC_BASE_URL\" \"$OPENAI_BASE_URL\" \"$OPENAI_API_BASE\" \"$GOOGLE_GEMINI_BASE_URL\"; exit 7"
        ))
        .arg(python())
        .arg(Peers::script("llm_client.py"))
        .env("REEL_PEERS", peers_root())
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("OPENAI_BASE_URL");
    let (code, stdout, stderr) = run(c);
    assert_eq!(
        code,
        Some(7),
        "reel exits with the command's status: {stdout}{stderr}"
    );
    let url = stderr
        .lines()
        .find_map(|l| l.strip_prefix("reel: listening on "))
        .unwrap_or_else(|| panic!("no listening line: {stderr}"));
    assert_eq!(stdout.trim(), format!("{url}|{url}/v1|{url}/v1|{url}"));
    let tape = Tape::read(&crate::harness::play_http_support::only_trace(&dir));
    assert_eq!(tape.end()["exitCode"], 7, "{}", tape.end());
    assert_eq!(
        tape.events("llm.request").len(),
        1,
        "the agent's call is recorded"
    );
}

/// `llm_responses_agent.py` (a Responses agent with Codex CLI's per-run identities)
/// against `base`; its output line.
fn responses_agent(base: &str, stream: bool, tool_output: &str) -> (Option<i32>, Value) {
    let mut c = std::process::Command::new(python());
    c.arg(Peers::script("llm_responses_agent.py")).args([
        "--base",
        base,
        "--tool-output",
        tool_output,
    ]);
    if stream {
        c.arg("--stream");
    }
    let (code, out, err) = run(c);
    let line = out.lines().last().unwrap_or_default();
    (
        code,
        serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {out}{err}")),
    )
}

/// A Responses agent sends fresh ids every run (`client_metadata`, the ids of the input
/// items it re-sends): volatile, so a second honest run replays with no miss, the
/// elided history included (compared as the whole conversation rebuilt from the tape);
/// and a real change is named where the request says it (`/input/2/output`), with
/// `--ignore` working in that same index space.
#[test]
fn a_responses_agent_with_per_run_ids_replays_and_misses_name_its_own_pointers() {
    let tmp = tempfile::tempdir().unwrap();
    let upstream = Upstream::scripted(tmp.path(), "up");
    let llm = Llm::record(tmp.path(), &upstream.url, &[]);
    for stream in [false, true] {
        let (code, out) = responses_agent(&llm.url, stream, "sunny, 21 C");
        assert_eq!((code, out["rounds"].as_u64()), (Some(0), Some(2)), "{out}");
    }
    let trace = llm.finish();
    let tape = Tape::read(&trace);
    let elided = tape
        .turns()
        .iter()
        .filter(|t| t.to_string().contains("history_elided"))
        .count();
    assert_eq!(elided, 2, "each second round elided the first");

    let play = Llm::play(&trace, &[]);
    for stream in [false, true] {
        let (code, out) = responses_agent(&play.url, stream, "sunny, 21 C");
        assert_eq!(code, Some(0), "{out}");
        assert_eq!(out["text"], "It is sunny in Paris.");
    }
    let stopped = play.stop();
    assert_eq!(stopped.code(), Some(0), "{}", stopped.stderr);
    assert!(stopped.stderr.contains("0 misses"), "{}", stopped.stderr);

    // Another tool output: a miss that names the request's own member and index.
    let play = Llm::play(&trace, &[]);
    let (code, out) = responses_agent(&play.url, false, "rainy");
    assert_eq!(code, Some(3), "{out}");
    let body = out["error"]["body"].as_str().unwrap();
    assert!(body.contains("/input/2/output"), "{body}");
    assert!(!body.contains("/messages"), "{body}");
    assert_eq!(play.stop().code(), Some(3));
    // Ignored there, it replays.
    let play = Llm::play(&trace, &["--ignore", "/input/2/output"]);
    let (code, out) = responses_agent(&play.url, false, "rainy");
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(play.stop().code(), Some(0));
}
