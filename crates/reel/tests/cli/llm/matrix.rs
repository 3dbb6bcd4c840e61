//! The official SDKs (Python and Node) run directly against a model server, through
//! `reel llm`, and against `reel llm --play` of what was recorded: the same results and
//! the same bytes each way; the trace passes `reel check` and its token totals are the
//! SDK-reported usage, normalised.

use std::collections::BTreeMap;

use serde_json::Value;

use super::support::{
    Bases, Case, Llm, Outcome, Upstream, assert_check_clean, assert_ok, matrix, node_client,
    python_batch, stats,
};

/// Token counts of one round, normalised as the trace keeps them.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Tokens {
    input: f64,
    output: f64,
    cache_read: f64,
    cache_creation: Option<f64>,
    thinking: f64,
}

fn n(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

/// The SDK's usage, normalised: OpenAI's prompt tokens include the cached ones, its
/// reasoning tokens are the thinking.
fn normalised(api: &str, usage: &Value) -> Tokens {
    match api {
        "anthropic" => Tokens {
            input: n(&usage["input_tokens"]),
            output: n(&usage["output_tokens"]),
            cache_read: n(&usage["cache_read_input_tokens"]),
            cache_creation: usage["cache_creation_input_tokens"].as_f64(),
            thinking: 0.0,
        },
        "chat" => {
            let cached = n(&usage["prompt_tokens_details"]["cached_tokens"]);
            Tokens {
                input: n(&usage["prompt_tokens"]) - cached,
                output: n(&usage["completion_tokens"]),
                cache_read: cached,
                cache_creation: None,
                thinking: n(&usage["completion_tokens_details"]["reasoning_tokens"]),
            }
        }
        _ => {
            let cached = n(&usage["input_tokens_details"]["cached_tokens"]);
            Tokens {
                input: n(&usage["input_tokens"]) - cached,
                output: n(&usage["output_tokens"]),
                cache_read: cached,
                cache_creation: None,
                thinking: n(&usage["output_tokens_details"]["reasoning_tokens"]),
            }
        }
    }
}

/// `reel stats --json` agrees with what the SDK reported, model by model. The scripted
/// upstream reports the same usage for every round, so a two-round loop counts twice.
fn assert_stats_match(trace: &std::path::Path, cases: &[Case], outs: &[Outcome]) {
    let mut want: BTreeMap<String, (u64, Tokens)> = BTreeMap::new();
    let mut thinking = 0.0;
    for (c, o) in cases.iter().zip(outs) {
        let rounds = o.out["rounds"].as_u64().expect("rounds");
        let t = normalised(c.api, &o.out["usage"]);
        let model = o.out["result"]["model"]
            .as_str()
            .expect("the result's model")
            .to_owned();
        let e = want.entry(model).or_default();
        e.0 += rounds;
        let r = rounds as f64;
        e.1.input += r * t.input;
        e.1.output += r * t.output;
        e.1.cache_read += r * t.cache_read;
        e.1.cache_creation = t
            .cache_creation
            .map(|c| e.1.cache_creation.unwrap_or(0.0) + r * c);
        thinking += r * t.thinking;
    }
    let s = stats(trace);
    let rows = s["models"]["perModel"].as_array().expect("perModel rows");
    assert_eq!(rows.len(), want.len(), "models: {rows:?}");
    for (model, (calls, t)) in &want {
        let row = rows
            .iter()
            .find(|r| r["model"] == model.as_str())
            .unwrap_or_else(|| panic!("no stats row for {model}: {rows:?}"));
        let got = (
            row["calls"].as_u64(),
            Tokens {
                input: n(&row["inputTokens"]),
                output: n(&row["outputTokens"]),
                cache_read: n(&row["cacheReadTokens"]),
                cache_creation: row["cacheCreationTokens"].as_f64(),
                thinking: 0.0,
            },
        );
        assert_eq!(got, (Some(*calls), *t), "stats of {model}: {row}");
    }
    assert_eq!(
        n(&s["models"]["summary"]["thinkingExactTokens"]),
        thinking,
        "exact thinking tokens: {}",
        s["models"]["summary"]
    );
}

/// Two runs gave the same output line and the same response bytes.
fn assert_same(what: &str, cases: &[Case], want: &[Outcome], got: &[Outcome]) {
    for ((c, w), g) in cases.iter().zip(want).zip(got) {
        assert_ok(c, g);
        assert_eq!(g.out, w.out, "{}: {what}", c.name());
        assert!(
            g.raw == w.raw,
            "{}: {what}: the response bytes differ:\n{}\n---\n{}",
            c.name(),
            String::from_utf8_lossy(&w.raw),
            String::from_utf8_lossy(&g.raw)
        );
    }
}

/// Every case of one api with the Python SDK: direct, through reel, replayed.
fn python_sdk_matrix(api: &'static str) {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let cases = matrix(&[api], &["text", "tool", "think"]);

    // Each upstream numbers its ids from 1: a fresh one per run, the same sequence.
    let direct = {
        let up = Upstream::scripted(tmp, "direct");
        python_batch(tmp, "direct", &Bases::of(&up.url), &[], &cases)
    };
    for (c, o) in cases.iter().zip(&direct) {
        assert_ok(c, o);
    }
    let (through, trace) = {
        let up = Upstream::scripted(tmp, "up");
        let llm = Llm::record(&tmp.join("traces"), &up.url, &[]);
        let through = python_batch(tmp, "through", &llm.bases(), &[], &cases);
        (through, llm.finish())
    };
    assert_same("through reel llm vs direct", &cases, &direct, &through);
    assert_check_clean(&trace);
    assert_stats_match(&trace, &cases, &through);

    // The upstream is gone: the tape answers.
    let player = Llm::play(&trace, &[]);
    let replayed = python_batch(tmp, "replay", &player.bases(), &[], &cases);
    let stopped = player.stop();
    assert_same("replayed vs recorded", &cases, &through, &replayed);
    assert_eq!(
        stopped.code(),
        Some(0),
        "reel llm --play: {}",
        stopped.stderr
    );
}

#[test]
fn python_sdk_anthropic_is_the_same_direct_through_reel_and_replayed() {
    python_sdk_matrix("anthropic");
}

#[test]
fn python_sdk_chat_completions_is_the_same_direct_through_reel_and_replayed() {
    python_sdk_matrix("chat");
}

#[test]
fn python_sdk_responses_is_the_same_direct_through_reel_and_replayed() {
    python_sdk_matrix("responses");
}

#[test]
fn node_sdks_are_the_same_direct_through_reel_and_replayed() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let mut cases = matrix(&["anthropic", "chat", "responses"], &["text"]);
    cases.push(Case::new("chat", "stream", "tool"));
    cases.push(Case::new("anthropic", "plain", "tool"));
    let runs = |tag: &str, bases: &Bases| -> Vec<Outcome> {
        cases
            .iter()
            .enumerate()
            .map(|(i, c)| node_client(tmp, &format!("{tag}-{i}"), bases, c))
            .collect()
    };
    let direct = {
        let up = Upstream::scripted(tmp, "direct");
        runs("direct", &Bases::of(&up.url))
    };
    for (c, o) in cases.iter().zip(&direct) {
        assert_ok(c, o);
    }
    let (through, trace) = {
        let up = Upstream::scripted(tmp, "up");
        let llm = Llm::record(&tmp.join("traces"), &up.url, &[]);
        let through = runs("through", &llm.bases());
        (through, llm.finish())
    };
    assert_same(
        "node: through reel llm vs direct",
        &cases,
        &direct,
        &through,
    );
    assert_check_clean(&trace);
    let player = Llm::play(&trace, &[]);
    let replayed = runs("replay", &player.bases());
    let stopped = player.stop();
    assert_same("node: replayed vs recorded", &cases, &through, &replayed);
    assert_eq!(
        stopped.code(),
        Some(0),
        "reel llm --play: {}",
        stopped.stderr
    );
}

/// What an independent mock answers that does not change between its runs (its ids
/// and timestamps do).
fn stable(o: &Outcome) -> Value {
    serde_json::json!({
        "text": o.out["text"],
        "tool_calls": o.out["tool_calls"],
        "thinking": o.out["thinking"],
        "rounds": o.out["rounds"],
        "usage": o.out["usage"],
    })
}

/// The Python SDK against an independent mock: direct, through reel, replayed.
fn mock_matrix(
    which: &str,
    cases: &[Case],
    direct_bases: fn(&str) -> Bases,
    flags: fn(&str) -> Vec<String>,
    through_bases: fn(&str) -> Bases,
) {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let direct = {
        let up = Upstream::mock(which);
        python_batch(tmp, "direct", &direct_bases(&up.url), &[], cases)
    };
    for (c, o) in cases.iter().zip(&direct) {
        assert_ok(c, o);
    }
    let (through, trace, maps) = {
        let up = Upstream::mock(which);
        let f = flags(&up.url);
        let f: Vec<&str> = f.iter().map(String::as_str).collect();
        let llm = Llm::record_with(&tmp.join("traces"), &f);
        let through = python_batch(tmp, "through", &through_bases(&llm.url), &[], cases);
        // Replay strips the same --map prefixes from request paths.
        let maps: Vec<String> = f
            .windows(2)
            .filter(|w| w[0] == "--map")
            .flat_map(|w| [w[0].to_owned(), w[1].to_owned()])
            .collect();
        (through, llm.finish(), maps)
    };
    for ((c, d), t) in cases.iter().zip(&direct).zip(&through) {
        assert_ok(c, t);
        assert_eq!(
            stable(t),
            stable(d),
            "{which} {}: through reel vs direct",
            c.name()
        );
    }
    assert_check_clean(&trace);
    let maps: Vec<&str> = maps.iter().map(String::as_str).collect();
    let player = Llm::play(&trace, &maps);
    let replayed = python_batch(tmp, "replay", &through_bases(&player.url), &[], cases);
    let stopped = player.stop();
    assert_same(
        &format!("{which}: replayed vs recorded"),
        cases,
        &through,
        &replayed,
    );
    assert_eq!(
        stopped.code(),
        Some(0),
        "reel llm --play: {}",
        stopped.stderr
    );
}

#[test]
fn llmock_answers_the_same_direct_through_reel_and_replayed() {
    // llmock serves Anthropic under /anthropic, OpenAI under /v1.
    mock_matrix(
        "llmock",
        &matrix(&["anthropic", "chat", "responses"], &["text", "tool"]),
        |url| Bases {
            anthropic: format!("{url}/anthropic"),
            openai: format!("{url}/v1"),
        },
        |url| {
            vec![
                "--upstream".into(),
                url.to_owned(),
                "--map".into(),
                format!("/anthropic={url}/anthropic"),
            ]
        },
        |url| Bases {
            anthropic: format!("{url}/anthropic"),
            openai: format!("{url}/v1"),
        },
    );
}

#[test]
fn aimock_answers_the_same_direct_through_reel_and_replayed() {
    super::support::node_package("@copilotkit/aimock");
    mock_matrix(
        "aimock",
        &matrix(
            &["anthropic", "chat", "responses"],
            &["text", "tool", "think"],
        ),
        Bases::of,
        |url| vec!["--upstream".into(), url.to_owned()],
        Bases::of,
    );
}
