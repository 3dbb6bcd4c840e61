//! Every kind of the corpus through `reel llm`: in what a client sends (a user
//! message) and in what the model answers, as one body (chat completions) and
//! streamed 4 characters per delta (Anthropic Messages, chat completions), so a
//! secret split across the recorded pieces is one too. None may survive in the trace
//! or in the text its pieces stream once joined, and the trace replays every call.

use serde_json::json;

use super::{CLASSES, Corpus, trace_haystack};
use crate::harness::play_http_support::request;
use crate::llm::secrets::streamed_text;
use crate::llm::support::{Llm, Tape, Upstream};

/// How many secrets one request carries.
const PER_REQUEST: usize = 8;

/// One HTTP call: path, headers, body.
type Call = (&'static str, Vec<(&'static str, &'static str)>, String);

/// The calls made for one group of secrets.
fn calls(text: &str) -> Vec<Call> {
    let anthropic = vec![
        ("content-type", "application/json"),
        ("anthropic-version", "2023-06-01"),
        ("x-api-key", "sk-test-reel-0000000000000000"),
    ];
    let openai = vec![
        ("content-type", "application/json"),
        ("authorization", "Bearer sk-test-reel-0000000000000000"),
    ];
    let messages = json!([{"role": "user", "content": text}]);
    vec![
        (
            "/v1/messages",
            anthropic,
            json!({"model": "reel-echo", "max_tokens": 4096, "stream": true, "messages": messages})
                .to_string(),
        ),
        (
            "/v1/chat/completions",
            openai.clone(),
            json!({"model": "reel-echo", "stream": true, "messages": messages}).to_string(),
        ),
        (
            "/v1/chat/completions",
            openai,
            json!({"model": "reel-echo", "messages": messages}).to_string(),
        ),
    ]
}

#[test]
fn no_secret_reaches_an_llm_trace_whole_or_split_and_the_trace_replays() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let up = Upstream::scripted(tmp, "up");
    let llm = Llm::record(&tmp.join("traces"), &up.url, &[]);
    let mut corpus = Corpus::new();
    let mut sent = Vec::new();
    for group in CLASSES.chunks(PER_REQUEST) {
        let texts: Vec<String> = group
            .iter()
            .map(|c| {
                corpus
                    .place(c, "LLM request and answer (whole and split)")
                    .as_text()
            })
            .collect();
        for call in calls(&texts.join("\n")) {
            let r = request(&llm.addr, "POST", call.0, &call.1, &call.2);
            assert_eq!(r.status, 200, "{}", r.text());
            sent.push(call);
        }
    }
    let trace = llm.finish();
    let tape = Tape::read(&trace);
    // The trace, and the text each exchange's pieces stream once joined.
    let mut haystack = trace_haystack(&trace);
    for n in 1..=sent.len() as u64 {
        let pieces: String = tape
            .exchange(n)
            .into_iter()
            .filter(|l| l["kind"] == "reel.llm.body")
            .filter_map(|l| l["text"].as_str().map(str::to_owned))
            .collect();
        haystack.push('\n');
        haystack.push_str(&streamed_text(&pieces));
    }
    corpus.assert_no_leaks(&haystack, "the LLM trace");
    let player = Llm::play(&trace, &[]);
    for (path, headers, body) in &sent {
        let served = request(&player.addr, "POST", path, headers, body);
        assert_eq!(served.status, 200, "{}", served.text());
    }
    let stopped = player.stop();
    assert_eq!(stopped.code(), Some(0), "{}", stopped.stderr);
    eprintln!("{}", corpus.summary());
}
