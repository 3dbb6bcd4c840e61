//! Keys through `reel llm`: the SDKs' API keys (the Anthropic SDK sends
//! `ANTHROPIC_API_KEY` and `ANTHROPIC_AUTH_TOKEN` as `Authorization: Bearer`; OpenAI's
//! project key), Anthropic's `x-api-key` and an organisation header from a raw client
//! reach the upstream untouched and appear nowhere in the trace.

use serde_json::json;

use super::support::{Case, Llm, Tape, Upstream, assert_ok, python_batch, turn_text};
use crate::harness::play_http_support::request;

/// A key of Anthropic's real shape (108 characters).
fn anthropic_key(tag: char) -> String {
    let body: String = "Xq7LmN2pR9sT4vW6yZ1bC3dF5gH8jK0aEoIuUeYr"
        .chars()
        .cycle()
        .take(93)
        .collect();
    format!("sk-ant-api03-{tag}{body}AA")
}

/// A key of OpenAI's project-key shape.
fn openai_key() -> String {
    let body: String = "T3BlbkFJq8Zr2Lm5Nw7Xy0Ab4Cd6Ef9Gh1Ij_Kl-Mn"
        .chars()
        .cycle()
        .take(156)
        .collect();
    format!("sk-proj-{body}")
}

const ORGANISATION: &str = "org-Reel7secretOrganisationId42";

#[test]
fn api_keys_and_organisation_headers_are_forwarded_untouched_and_never_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let (api_key, token, openai) = (anthropic_key('k'), anthropic_key('t'), openai_key());
    let up = Upstream::scripted(tmp, "up");
    let llm = Llm::record(&tmp.join("traces"), &up.url, &[]);
    let cases = [
        Case::new("anthropic", "plain", "text"),
        Case::new("chat", "stream", "text"),
        Case::new("responses", "plain", "text"),
    ];
    let keyed = python_batch(
        tmp,
        "keyed",
        &llm.bases(),
        &[("ANTHROPIC_API_KEY", &api_key), ("OPENAI_API_KEY", &openai)],
        &cases,
    );
    let bearer = python_batch(
        tmp,
        "bearer",
        &llm.bases(),
        &[("ANTHROPIC_AUTH_TOKEN", &token)],
        &cases[..1],
    );
    let auth = format!("Bearer {openai}");
    let raw = request(
        &llm.addr,
        "POST",
        "/v1/chat/completions",
        &[
            ("content-type", "application/json"),
            ("authorization", &auth),
            ("openai-organization", ORGANISATION),
            ("openai-project", "proj_Reel7secretProject42"),
        ],
        &json!({"model": "reel-text", "messages": [{"role": "user", "content": "Say hello."}]})
            .to_string(),
    );
    let direct_key = anthropic_key('x');
    let raw_anthropic = request(
        &llm.addr,
        "POST",
        "/v1/messages",
        &[
            ("content-type", "application/json"),
            ("anthropic-version", "2023-06-01"),
            ("x-api-key", &direct_key),
        ],
        &json!({"model": "reel-text", "max_tokens": 64,
                "messages": [{"role": "user", "content": "Say hello."}]})
        .to_string(),
    );
    let trace = llm.finish();
    assert_eq!(raw_anthropic.status, 200, "{}", raw_anthropic.text());
    for (c, o) in cases.iter().zip(&keyed).chain(cases.iter().zip(&bearer)) {
        assert_ok(c, o);
    }
    assert_eq!(raw.status, 200, "{}", raw.text());

    // Forwarded as the client sent them.
    let seen = up.requests();
    assert_eq!(seen.len(), 6, "{seen:?}");
    assert_eq!(
        seen[0]["headers"]["authorization"],
        format!("Bearer {api_key}")
    );
    assert_eq!(seen[1]["headers"]["authorization"], auth.as_str());
    assert_eq!(seen[2]["headers"]["authorization"], auth.as_str());
    assert_eq!(
        seen[3]["headers"]["authorization"],
        format!("Bearer {token}")
    );
    assert_eq!(seen[4]["headers"]["authorization"], auth.as_str());
    assert_eq!(seen[4]["headers"]["openai-organization"], ORGANISATION);
    assert_eq!(seen[5]["headers"]["x-api-key"], direct_key.as_str());

    // Recorded nowhere, not even in part.
    let text = std::fs::read_to_string(&trace).unwrap();
    for secret in [
        &api_key,
        &token,
        &openai,
        &direct_key,
        &ORGANISATION.to_owned(),
    ] {
        let middle = &secret[secret.len() / 2 - 8..secret.len() / 2 + 8];
        assert!(
            !text.contains(secret.as_str()) && !text.contains(middle),
            "the trace holds a secret ({middle}): {}",
            trace.display()
        );
    }
    assert!(
        !text.contains("Reel7secret"),
        "the trace holds an organisation or project id"
    );
}

/// The random parts of `llm_upstream.py`'s `LEAK_ANSWER`: no 8 characters of any may
/// be in the trace.
const LEAKED: &[&str] = &[
    "Xq7LmN2pR9sT4vW6yZ1bC3dF5gH8jK0aEoIuUeYrXq7LmN2pR9sT4vW6yZ1bC3dF5gH8jK0aEoIuUeYrXq7LmN2pR9s",
    "Qw3Er5Ty7Ui9Op1As2Df4G.Hj6Kl8Zx0Cv2Bn4Mq6Wr8Ty0Ui2Op4As6Df8Gh0Jk2Lm4",
    "4eC39HqLyjWDarjtT1zdp7dc",
    "Ab3De5Gh7Jk9Mn1Pq3St5Vw7Yz9Bc1Ef3Hi5",
    "cmVlbDpzM2NyM3RQYXNzd29yZDQy",
];

/// The text an SSE body streams: its deltas' strings joined (Anthropic `delta.text`,
/// chat `choices[0].delta.content`).
pub(crate) fn streamed_text(body: &str) -> String {
    body.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<serde_json::Value>(d).ok())
        .filter_map(|v| {
            v["delta"]["text"]
                .as_str()
                .or_else(|| v["choices"][0]["delta"]["content"].as_str())
                .map(str::to_owned)
        })
        .collect()
}

#[test]
fn keys_streamed_four_characters_per_delta_are_redacted_in_the_pieces_and_replay_so() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let up = Upstream::scripted(tmp, "up");
    let llm = Llm::record(&tmp.join("traces"), &up.url, &[]);
    let calls = [
        (
            "/v1/messages",
            vec![
                ("content-type", "application/json"),
                ("anthropic-version", "2023-06-01"),
                ("x-api-key", "sk-test-reel-0000000000000000"),
            ],
        ),
        (
            "/v1/chat/completions",
            vec![
                ("content-type", "application/json"),
                ("authorization", "Bearer sk-test-reel-0000000000000000"),
            ],
        ),
    ];
    let body = json!({"model": "reel-leak", "max_tokens": 64, "stream": true,
                      "messages": [{"role": "user", "content": "Repeat my keys."}]})
    .to_string();
    for (path, headers) in &calls {
        let r = request(&llm.addr, "POST", path, headers, &body);
        assert_eq!(r.status, 200, "{}", r.text());
        assert!(
            streamed_text(&r.text()).contains(LEAKED[0]),
            "the client gets the live answer"
        );
    }
    let trace = llm.finish();
    let tape = Tape::read(&trace);
    // Neither in the trace's bytes nor in the text its pieces stream once joined.
    let mut texts = vec![std::fs::read_to_string(&trace).unwrap()];
    for n in 1..=2 {
        let pieces = tape
            .exchange(n)
            .into_iter()
            .filter(|l| l["kind"] == "reel.llm.body");
        texts.push(streamed_text(
            &pieces
                .map(|l| l["text"].as_str().unwrap_or(""))
                .collect::<String>(),
        ));
    }
    for (text, secret) in texts
        .iter()
        .flat_map(|t| LEAKED.iter().map(move |s| (t, s)))
    {
        let chars: Vec<char> = secret.chars().collect();
        for run in chars.windows(8).map(|w| w.iter().collect::<String>()) {
            assert!(
                !text.contains(&run),
                "the trace holds {run:?} of a key: {}",
                trace.display()
            );
        }
    }
    let player = Llm::play(&trace, &[]);
    for (n, (path, headers)) in calls.iter().enumerate() {
        let n = n as u64 + 1;
        let recorded: String = tape
            .exchange(n)
            .into_iter()
            .filter(|l| l["kind"] == "reel.llm.body")
            .map(|l| l["text"].as_str().expect("a text piece"))
            .collect();
        let turn = tape
            .exchange(n)
            .into_iter()
            .find(|l| l["type"] == "turn" && l["role"] == "assistant")
            .expect("the assistant turn");
        let redacted = turn_text(turn);
        assert_eq!(redacted.matches("[REDACTED]").count(), 5, "{redacted}");
        assert_eq!(streamed_text(&recorded), redacted, "exchange {n}");
        let served = request(&player.addr, "POST", path, headers, &body);
        assert_eq!(served.status, 200, "{}", served.text());
        assert!(
            served.text() == recorded,
            "exchange {n} is served as recorded:\n{}\n---\n{recorded}",
            served.text()
        );
    }
    let stopped = player.stop();
    assert_eq!(stopped.code(), Some(0), "{}", stopped.stderr);
}
