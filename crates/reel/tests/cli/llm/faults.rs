//! What goes wrong between an agent and its model API, through `reel llm`: a stream
//! severed by the upstream or abandoned by the client, an upstream that is down, a rate
//! limit, a compressed body, an in-stream error, an https upstream with and without its
//! CA. The client sees what it would have seen direct; the trace says what happened.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::support::{
    Case, Llm, Tape, Upstream, assert_check_clean, python, python_batch, turn_text,
};
use crate::harness::net::free_port;
use crate::harness::play_http_support::{RUN_LIMIT, Resp, open, request};
use crate::harness::play_support::Peers;
use crate::harness::rec_support::eventually;

const ANTHROPIC: &[(&str, &str)] = &[
    ("content-type", "application/json"),
    ("anthropic-version", "2023-06-01"),
    ("x-api-key", "sk-test-reel-0000000000000000"),
];
const OPENAI: &[(&str, &str)] = &[
    ("content-type", "application/json"),
    ("authorization", "Bearer sk-test-reel-0000000000000000"),
];

fn anthropic_body(model: &str, stream: bool) -> String {
    json!({"model": model, "max_tokens": 64, "stream": stream,
           "messages": [{"role": "user", "content": "Say hello."}]})
    .to_string()
}

fn chat_body(model: &str, stream: bool) -> String {
    json!({"model": model, "stream": stream,
           "messages": [{"role": "user", "content": "Say hello."}]})
    .to_string()
}

/// The text of a chat completion stream's `content` deltas, as a client reads them.
fn chat_stream_text(body: &[u8]) -> String {
    String::from_utf8_lossy(body)
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .filter_map(|v| {
            v["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_owned)
        })
        .collect()
}

/// The one event of `kind` in exchange `n`.
fn event_of<'a>(tape: &'a Tape, n: u64, kind: &str) -> &'a Value {
    let found: Vec<&Value> = tape
        .exchange(n)
        .into_iter()
        .filter(|l| l["kind"] == kind)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one {kind} in exchange {n}: {:?}",
        tape.exchange(n)
    );
    found[0]
}

/// The generated assistant turn of exchange `n`.
fn answer_of(tape: &Tape, n: u64) -> &Value {
    tape.exchange(n)
        .into_iter()
        .find(|l| l["type"] == "turn" && l["role"] == "assistant" && l["echoed"] != true)
        .unwrap_or_else(|| panic!("no assistant turn in exchange {n}: {:?}", tape.exchange(n)))
}

#[test]
fn a_severed_stream_fails_the_client_as_direct_and_leaves_a_truncated_turn() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let cases = [
        Case::new("anthropic", "stream", "text").model("reel-text-sever"),
        Case::new("chat", "stream", "text").model("reel-text-sever"),
    ];
    let direct = {
        let up = Upstream::scripted(tmp, "direct");
        python_batch(
            tmp,
            "direct",
            &super::support::Bases::of(&up.url),
            &[],
            &cases,
        )
    };
    let up = Upstream::scripted(tmp, "up");
    let llm = Llm::record(&tmp.join("traces"), &up.url, &[]);
    let through = python_batch(tmp, "through", &llm.bases(), &[], &cases);
    // A raw client, to know the bytes it got before the cut.
    let raw = open(
        &llm.addr,
        "POST",
        "/v1/chat/completions",
        OPENAI,
        &chat_body("reel-text-sever", true),
    )
    .finish();
    let trace = llm.finish();
    for ((c, d), t) in cases.iter().zip(&direct).zip(&through) {
        assert!(
            d.out.get("error").is_some(),
            "{}: direct did not fail: {}",
            c.name(),
            d.out
        );
        assert_eq!(
            t.out["error"]["class"],
            d.out["error"]["class"],
            "{}: the error through reel: {} vs direct {}",
            c.name(),
            t.out,
            d.out
        );
    }
    let received = chat_stream_text(&raw.body);
    assert!(!received.is_empty(), "{}", raw.text());

    let tape = Tape::read(&trace);
    for n in 1..=3 {
        let turn = answer_of(&tape, n);
        assert_eq!(turn["truncated"], true, "exchange {n}: {turn}");
        assert_eq!(turn["stop_reason"], "truncated", "exchange {n}: {turn}");
        let t = event_of(&tape, n, "llm.truncated");
        assert_eq!(
            t["raw"]["reason"], "upstream_disconnect",
            "exchange {n}: {t}"
        );
        assert!(
            t["raw"]["bytes_so_far"].as_u64().is_some_and(|b| b > 0),
            "{t}"
        );
    }
    assert_eq!(
        turn_text(answer_of(&tape, 3)),
        received,
        "the text the client got"
    );
    assert_eq!(
        event_of(&tape, 3, "llm.truncated")["raw"]["bytes_so_far"].as_u64(),
        Some(raw.body.len() as u64),
        "bytes_so_far: what reached the client"
    );
    assert_eq!(
        turn_text(answer_of(&tape, 2)),
        chat_stream_text(&through[1].raw)
    );
    assert_check_clean(&trace);
}

#[test]
fn a_client_that_leaves_mid_stream_is_recorded_as_client_abort() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let up = Upstream::scripted(tmp, "up");
    let llm = Llm::record(&tmp.join("traces"), &up.url, &[]);
    let mut conn = open(
        &llm.addr,
        "POST",
        "/v1/messages",
        ANTHROPIC,
        &anthropic_body("reel-text-slow", true),
    );
    assert_eq!(conn.status, 200);
    let first = conn.events(1);
    assert!(format!("{first:?}").contains("message_start"), "{first:?}");
    drop(conn);
    let trace = crate::harness::play_http_support::only_trace(&tmp.join("traces"));
    let aborted = eventually(Duration::from_secs(20), || {
        Tape::read_partial(&trace)
            .iter()
            .any(|l| l["kind"] == "llm.truncated")
    });
    assert!(
        aborted,
        "no llm.truncated after the client left: {}",
        llm.stderr_text()
    );
    let trace = llm.finish();
    let tape = Tape::read(&trace);
    let t = event_of(&tape, 1, "llm.truncated");
    assert_eq!(t["raw"]["reason"], "client_abort", "{t}");
    assert_eq!(answer_of(&tape, 1)["truncated"], true);
    assert_check_clean(&trace);
}

#[test]
fn a_client_that_closes_once_it_has_a_whole_plain_body_left_nothing_cut_short() {
    // The SDKs close their connection as soon as the `Content-Length` is read, which
    // may be before reel has polled the body's end: that answer was whole, and an error
    // answer too.
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let up = Upstream::scripted(tmp, "up");
    let llm = Llm::record(&tmp.join("traces"), &up.url, &[]);
    let cases = [
        Case::new("anthropic", "plain", "text"),
        Case::new("chat", "plain", "text"),
        Case::new("anthropic", "plain", "text").model("reel-text-500"),
    ];
    python_batch(tmp, "sdk", &llm.bases(), &[], &cases);
    let trace = llm.finish();
    let tape = Tape::read(&trace);
    assert!(tape.events("llm.truncated").is_empty(), "{}", tape.text());
    assert_eq!(tape.events("llm.error").len(), 1, "{}", tape.text());
    for n in [1, 2] {
        let answer = answer_of(&tape, n);
        assert_eq!(answer["truncated"], Value::Null, "{answer}");
        assert_ne!(answer["stop_reason"], "truncated", "{answer}");
    }
    assert_check_clean(&trace);
}

#[test]
fn an_unreachable_upstream_is_a_502_in_the_providers_shape_and_an_llm_error() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let nothing = format!("http://127.0.0.1:{}", free_port());
    let llm = Llm::record(&tmp.join("traces"), &nothing, &[]);
    let a = request(
        &llm.addr,
        "POST",
        "/v1/messages",
        ANTHROPIC,
        &anthropic_body("reel-text", false),
    );
    let o = request(
        &llm.addr,
        "POST",
        "/v1/chat/completions",
        OPENAI,
        &chat_body("reel-text", false),
    );
    let trace = llm.finish();
    assert_eq!(a.status, 502, "{}", a.text());
    let a = a.json();
    assert_eq!(a["type"], "error", "Anthropic's shape: {a}");
    assert!(
        a["error"]["type"].is_string() && a["error"]["message"].is_string(),
        "{a}"
    );
    assert_eq!(o.status, 502, "{}", o.text());
    let o = o.json();
    assert!(o["error"]["message"].is_string(), "OpenAI's shape: {o}");
    assert!(o.get("type").is_none(), "{o}");
    let tape = Tape::read(&trace);
    for n in 1..=2 {
        event_of(&tape, n, "llm.error");
    }
    assert_check_clean(&trace);
}

/// One raw request direct to a fresh upstream and one through a fresh reel (ids
/// come from each upstream's counter, so both are its first request).
fn direct_and_through(
    tmp: &Path,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (Resp, Resp, Tape) {
    let direct = {
        let up = Upstream::scripted(tmp, "direct");
        request(up.addr(), "POST", path, headers, body)
    };
    let up = Upstream::scripted(tmp, "up");
    let llm = Llm::record(&tmp.join("traces"), &up.url, &[]);
    let through = request(&llm.addr, "POST", path, headers, body);
    let trace = llm.finish();
    assert_check_clean(&trace);
    (direct, through, Tape::read(&trace))
}

#[test]
fn a_429_passes_through_with_its_status_and_retry_after_and_is_an_llm_error() {
    let tmp = tempfile::tempdir().unwrap();
    let (direct, through, tape) = direct_and_through(
        tmp.path(),
        "/v1/messages",
        ANTHROPIC,
        &anthropic_body("reel-text-429", false),
    );
    assert_eq!(direct.status, 429);
    assert_eq!(through.status, 429, "{}", through.text());
    assert_eq!(through.header("retry-after"), Some("1"));
    assert_eq!(through.header("retry-after"), direct.header("retry-after"));
    assert!(
        through.body == direct.body,
        "{} vs {}",
        through.text(),
        direct.text()
    );
    let e = event_of(&tape, 1, "llm.error");
    assert_eq!(e["raw"]["status"], 429, "{e}");
    assert_eq!(e["raw"]["body"], direct.json(), "{e}");
}

#[test]
fn a_gzip_body_reaches_the_client_compressed_and_the_trace_decoded() {
    let tmp = tempfile::tempdir().unwrap();
    let mut headers = ANTHROPIC.to_vec();
    headers.push(("accept-encoding", "gzip"));
    let (direct, through, tape) = direct_and_through(
        tmp.path(),
        "/v1/messages",
        &headers,
        &anthropic_body("reel-text-gzip", false),
    );
    assert_eq!(direct.header("content-encoding"), Some("gzip"));
    assert_eq!(through.status, 200, "{}", through.text());
    assert_eq!(through.header("content-encoding"), Some("gzip"));
    assert_eq!(&through.body[..2], &[0x1f, 0x8b], "gzip bytes");
    assert!(through.body == direct.body, "the compressed bytes differ");
    assert_eq!(turn_text(answer_of(&tape, 1)), "Hello from the upstream.");
}

#[test]
fn a_gzip_bomb_reaches_the_client_whole_and_the_trace_decoded_up_to_its_cap() {
    // Regression (issue 28): a body that decodes to far more than it weighs was decoded
    // whole into the trace (1 MB → 1 GiB) while the client waited. Past 64 MiB decoded,
    // the recorder stops decoding and counts the rest as a gap.
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let mut headers = ANTHROPIC.to_vec();
    headers.push(("accept-encoding", "gzip"));
    let body = anthropic_body("reel-big-72-gzip", false);
    let direct = {
        let up = Upstream::scripted(tmp, "direct");
        request(up.addr(), "POST", "/v1/messages", &headers, &body)
    };
    let up = Upstream::scripted(tmp, "up");
    let llm = Llm::record(&tmp.join("traces"), &up.url, &[]);
    // The recorder decodes 64 MiB before its cap: slow in a debug build on a busy machine.
    let through = open(&llm.addr, "POST", "/v1/messages", &headers, &body)
        .patient(RUN_LIMIT)
        .finish();
    let peak_mib = llm.peak_rss_kib() >> 10;
    let trace = llm.finish();
    assert_eq!(through.status, 200, "{}", through.text());
    assert!(
        direct.body.len() < 2 << 20,
        "a bomb: {} bytes",
        direct.body.len()
    );
    assert!(through.body == direct.body, "the compressed bytes differ");
    let tape = Tape::read(&trace);
    let gap = tape
        .exchange(1)
        .into_iter()
        .find(|l| l["kind"] == "reel.gap")
        .expect("a reel.gap for the bytes not decoded");
    assert!(gap["bytes"].as_u64().unwrap() > 0, "{gap}");
    let recorded: usize = tape
        .exchange(1)
        .into_iter()
        .filter(|l| l["kind"] == "reel.llm.body")
        .map(|l| l["text"].as_str().map_or(0, str::len))
        .sum();
    assert!(recorded <= 64 << 20, "{recorded} decoded bytes recorded");
    assert!(peak_mib < 320, "reel held {peak_mib} MiB");
    eprintln!("gzip bomb: reel held {peak_mib} MiB at most");
    assert_check_clean(&trace);
}

#[test]
fn an_in_stream_error_is_recorded_as_truncated_by_the_upstream() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let up = Upstream::scripted(tmp, "up");
    let llm = Llm::record(&tmp.join("traces"), &up.url, &[]);
    let a = open(
        &llm.addr,
        "POST",
        "/v1/messages",
        ANTHROPIC,
        &anthropic_body("reel-text-midstream-error", true),
    )
    .finish();
    let trace = llm.finish();
    assert_eq!(a.status, 200);
    assert!(a.text().contains("error"), "{}", a.text());
    let tape = Tape::read(&trace);
    let t = event_of(&tape, 1, "llm.truncated");
    assert!(
        t["raw"]["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("upstream_error:")),
        "{t}"
    );
    assert_check_clean(&trace);
}

/// A test CA and a certificate it signed for 127.0.0.1 and localhost, made by the same
/// code as `reel rec --upstream-ca`'s test (`http_tls_upstream.py`): (CA, cert+key).
fn test_ca(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let ca = dir.join("ca.pem");
    let out = std::process::Command::new(python())
        .arg("-c")
        .arg("import sys; sys.path.insert(0, sys.argv[1]); import http_tls_upstream as t; print(t.make_certs(sys.argv[2]))")
        .arg(Peers::script(""))
        .arg(&ca)
        .output()
        .expect("make the certificates");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let made = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let chain = dir.join("server.pem");
    std::fs::copy(&made, &chain).expect("the server's certificate");
    let _ = std::fs::remove_file(&made);
    (ca, chain)
}

#[test]
fn an_https_upstream_is_reached_with_its_ca_file_or_the_system_bundle_and_refused_without() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let (ca, chain) = test_ca(tmp);
    let up = Upstream::scripted_tls(tmp, "up", &chain, &chain);
    let body = anthropic_body("reel-text", false);

    let llm = Llm::record(
        &tmp.join("with"),
        &up.url,
        &["--upstream-ca", ca.to_str().unwrap()],
    );
    let r = request(&llm.addr, "POST", "/v1/messages", ANTHROPIC, &body);
    let trace = llm.finish();
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["content"][0]["text"], "Hello from the upstream.");
    assert_eq!(
        turn_text(answer_of(&Tape::read(&trace), 1)),
        "Hello from the upstream."
    );
    assert_check_clean(&trace);

    // The system's bundle is trusted too (where a corporate proxy's CA is installed).
    let llm = Llm::record_trusting(&tmp.join("system"), &up.url, Some(&ca));
    let r = request(&llm.addr, "POST", "/v1/messages", ANTHROPIC, &body);
    llm.finish();
    assert_eq!(r.status, 200, "SSL_CERT_FILE is trusted: {}", r.text());

    let llm = Llm::record_trusting(&tmp.join("without"), &up.url, None);
    let r = request(&llm.addr, "POST", "/v1/messages", ANTHROPIC, &body);
    let trace = llm.finish();
    assert_eq!(r.status, 502, "{}", r.text());
    assert_eq!(r.json()["type"], "error", "{}", r.text());
    let tape = Tape::read(&trace);
    let e = event_of(&tape, 1, "llm.error").to_string().to_lowercase();
    assert!(
        e.contains("tls") || e.contains("certificate"),
        "the llm.error names TLS: {e}"
    );
}

#[test]
fn a_gzip_body_replays_decoded_without_its_content_encoding() {
    let tmp = tempfile::tempdir().unwrap();
    let mut headers = ANTHROPIC.to_vec();
    headers.push(("accept-encoding", "gzip"));
    let body = anthropic_body("reel-text-gzip", false);
    let (_, through, tape) = direct_and_through(tmp.path(), "/v1/messages", &headers, &body);
    assert_eq!(through.header("content-encoding"), Some("gzip"));
    let player = Llm::play(&tape.path, &[]);
    let r = request(&player.addr, "POST", "/v1/messages", &headers, &body);
    let stopped = player.stop();
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("content-encoding"), None, "served decoded");
    assert_eq!(
        r.json()["content"][0]["text"],
        "Hello from the upstream.",
        "{}",
        r.text()
    );
    assert_eq!(stopped.code(), Some(0), "{}", stopped.stderr);
}

/// Killed with SIGKILL mid-stream, 20 times at different points: the trace, read up to
/// its last whole line, holds an answer that ended before the kill whole, and of the
/// stream in flight never more than the client had received. That stream's pieces are
/// held until it ends (they are redacted together: a key streamed across events), so
/// they go with the recorder; its request lines are there.
#[test]
fn a_reel_killed_mid_stream_keeps_the_answers_that_ended_and_the_lines_before() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let up = Upstream::scripted(tmp, "up");
    for run in 0..20usize {
        let dir = tmp.join(format!("run-{run}"));
        let llm = Llm::record(&dir, &up.url, &[]);
        let before = request(
            &llm.addr,
            "POST",
            "/v1/messages",
            ANTHROPIC,
            &anthropic_body("reel-text", true),
        );
        assert_eq!(before.status, 200);
        let mut conn = open(
            &llm.addr,
            "POST",
            "/v1/messages",
            ANTHROPIC,
            &anthropic_body("reel-text-slow", true),
        );
        assert_eq!(conn.status, 200);
        // After the first to the eighth of its nine events, as the run goes.
        conn.events(1 + run % 8);
        llm.kill9();
        let received = String::from_utf8_lossy(&conn.body).into_owned();
        let trace = crate::harness::play_http_support::only_trace(&dir);
        let lines = Tape::read_partial(&trace);
        let body = |n: u64| -> String {
            lines
                .iter()
                .filter(|l| l["kind"] == "reel.llm.body" && l["http"]["req"] == n)
                .filter_map(|l| l["text"].as_str().map(str::to_owned))
                .collect()
        };
        assert_eq!(body(1), before.text(), "run {run}: the answer that ended");
        let recorded = body(2);
        assert!(
            received.starts_with(&recorded),
            "run {run}: the client had {received:?}, the trace {recorded:?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l["kind"] == "llm.request" && l["http"]["req"] == 2),
            "run {run}: the request in flight is recorded"
        );
    }
}

/// A trace that cannot be written to the end (`ulimit -f`, as a full disk): the agent
/// gets its whole answer all the same, reel says the trace is incomplete and exits 74;
/// the trace is whole lines up to where it stopped.
#[test]
fn a_trace_write_failing_midway_leaves_the_traffic_alone_and_exits_74() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let up = Upstream::scripted(tmp, "up");
    let dir = tmp.join("traces");
    let mut c = std::process::Command::new("prlimit");
    c.arg(format!("--fsize={}", 64 << 10))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_reel"))
        .arg("llm")
        .arg("--dir")
        .arg(&dir)
        .args(["--upstream", &up.url, "--"])
        .arg(super::support::python())
        .args(["-W", "ignore"])
        .arg(crate::harness::play_support::Peers::script("llm_client.py"))
        .args([
            "--api",
            "anthropic",
            "--mode",
            "stream",
            "--scenario",
            "text",
        ])
        .args(["--model", "reel-big-1"])
        .env("REEL_PEERS", super::support::peers_root());
    let (code, stdout, stderr) = crate::harness::play_http_support::run(c);
    assert_eq!(code, Some(74), "{stderr}");
    assert!(
        stderr.contains("cannot write the trace any more"),
        "{stderr}"
    );
    assert!(stderr.contains("is incomplete"), "{stderr}");
    let out: serde_json::Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    assert_eq!(
        out["text"].as_str().map(str::len),
        Some(1 << 20),
        "the agent got the whole answer"
    );
    let trace = crate::harness::play_http_support::only_trace(&dir);
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(text.ends_with('\n'), "whole lines only");
    assert!(
        text.lines()
            .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok())
    );
}

/// Ollama's `/api/chat` streams NDJSON: forwarded line by line byte for byte, each line a
/// body piece, assembled into the turn with Ollama's counts; replayed the same.
#[test]
fn an_ollama_ndjson_stream_passes_through_is_assembled_and_replays() {
    let tmp = tempfile::tempdir().unwrap();
    let body =
        json!({"model": "reel-text", "messages": [{"role": "user", "content": "hi"}]}).to_string();
    let headers = &[("content-type", "application/json")];
    let (direct, through, tape) = direct_and_through(tmp.path(), "/api/chat", headers, &body);
    assert_eq!(through.status, 200);
    assert_eq!(
        through.body, direct.body,
        "the NDJSON bytes as the upstream sent them"
    );
    let lines = direct.body.iter().filter(|&&b| b == b'\n').count();
    let pieces = tape
        .exchange(1)
        .into_iter()
        .filter(|l| l["kind"] == "reel.llm.body")
        .count();
    assert_eq!(pieces, lines, "one body piece per NDJSON line");
    let turn = answer_of(&tape, 1);
    assert_eq!(turn_text(turn), "Hello from the upstream.");
    assert_eq!(turn["stream"], true);
    assert_eq!(turn["usage"]["input_tokens"], 13);
    assert_eq!(turn["usage"]["output_tokens"], 6);
    let player = Llm::play(&tape.path, &[]);
    let replayed = request(&player.addr, "POST", "/api/chat", headers, &body);
    let stopped = player.stop();
    assert_eq!(replayed.body, direct.body);
    assert_eq!(stopped.code(), Some(0), "{}", stopped.stderr);
}

/// An upstream that goes silent mid-stream for longer than `--idle-timeout` is cut
/// off: the client's response breaks, the trace says `idle_timeout` and keeps what came.
#[test]
fn an_upstream_silent_past_the_idle_timeout_is_cut_off() {
    let tmp = tempfile::tempdir().unwrap();
    let up = Upstream::scripted(tmp.path(), "up");
    let llm = Llm::record(
        &tmp.path().join("traces"),
        &up.url,
        &["--idle-timeout", "0.5"],
    );
    let r = open(
        &llm.addr,
        "POST",
        "/v1/messages",
        ANTHROPIC,
        &anthropic_body("reel-text-stall", true),
    )
    .finish();
    let trace = llm.finish();
    assert_eq!(r.status, 200);
    assert!(r.text().contains("message_start"), "{}", r.text());
    let tape = Tape::read(&trace);
    let t = event_of(&tape, 1, "llm.truncated");
    assert_eq!(t["raw"]["reason"], "idle_timeout", "{t}");
    assert_eq!(answer_of(&tape, 1)["truncated"], true);
    assert_check_clean(&trace);
}

/// `--map PREFIX=URL` sends the paths under PREFIX to URL with the prefix stripped, and
/// the trace's endpoint is the provider path.
#[test]
fn a_mapped_prefix_routes_to_its_upstream_with_the_prefix_stripped() {
    let tmp = tempfile::tempdir().unwrap();
    let up = Upstream::scripted(tmp.path(), "up");
    let map = format!("/local={}", up.url);
    let llm = Llm::record_with(&tmp.path().join("traces"), &["--map", &map]);
    let r = request(
        &llm.addr,
        "POST",
        "/local/v1/chat/completions",
        OPENAI,
        &chat_body("reel-text", false),
    );
    let trace = llm.finish();
    assert_eq!(r.status, 200, "{}", r.text());
    let seen: Vec<String> = up
        .requests()
        .iter()
        .filter_map(|q| q["path"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        seen,
        ["/v1/chat/completions"],
        "the prefix stripped upstream"
    );
    let tape = Tape::read(&trace);
    assert_eq!(answer_of(&tape, 1)["endpoint"], "/v1/chat/completions");
}
