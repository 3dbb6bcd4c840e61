//! Keys through `reel llm`: the SDKs' API keys (the Anthropic SDK sends
//! `ANTHROPIC_API_KEY` and `ANTHROPIC_AUTH_TOKEN` as `Authorization: Bearer`; OpenAI's
//! project key), Anthropic's `x-api-key` and an organisation header from a raw client
//! reach the upstream untouched and appear nowhere in the trace.

use serde_json::json;

use super::support::{Case, Llm, Upstream, assert_ok, python_batch};
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
