//! Tool loops through `reel llm`: the second request's resent assistant turn is
//! `echoed`, the history already on the tape is elided behind a `history_elided` block
//! whose digest is recomputed here from the request the upstream logged (Node's
//! `JSON.stringify`, not reel's code), only real generations count in `reel stats`, and
//! loops replay offline — one at a time and eight at once.

use std::sync::{Arc, Barrier};

use serde_json::{Value, json};

use super::support::{
    Case, Llm, Tape, Upstream, assert_check_clean, assert_ok, node_rolling_sha256, python_batch,
    stats,
};
use crate::harness::play_http_support::request;

/// The `history_elided` block a turn opens with, if any.
fn elided(turn: &Value) -> Option<&Value> {
    turn["blocks"]
        .as_array()?
        .first()
        .filter(|b| b["type"] == "history_elided")
}

#[test]
fn a_tool_loop_echoes_the_resent_turn_elides_its_history_counts_two_generations_and_replays() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let cases: Vec<Case> = ["anthropic", "chat", "responses"]
        .into_iter()
        .map(|api| Case::new(api, "plain", "tool"))
        .collect();
    let up = Upstream::scripted(tmp, "up");
    let llm = Llm::record(&tmp.join("traces"), &up.url, &[]);
    let through = python_batch(tmp, "through", &llm.bases(), &[], &cases);
    let trace = llm.finish();
    let logged = up.requests();
    drop(up);
    for (c, o) in cases.iter().zip(&through) {
        assert_ok(c, o);
        assert_eq!(o.out["rounds"], 2, "{}: {}", c.name(), o.out);
    }
    assert_eq!(logged.len(), 6, "two requests a loop: {logged:?}");

    let tape = Tape::read(&trace);
    assert_eq!(tape.exchanges(), (1..=6).collect::<Vec<_>>());
    for (i, c) in cases.iter().enumerate() {
        let (first, second) = (2 * i as u64 + 1, 2 * i as u64 + 2);
        let generations = |n: u64| {
            tape.exchange(n)
                .into_iter()
                .filter(|l| l["type"] == "turn" && l["role"] == "assistant")
                .filter(|l| l["echoed"] != true)
                .count()
        };
        assert_eq!(generations(first), 1, "{}: exchange {first}", c.name());
        assert_eq!(generations(second), 1, "{}: exchange {second}", c.name());
        assert!(
            tape.exchange(first).iter().all(|l| elided(l).is_none()),
            "{}: nothing to elide in the first request",
            c.name()
        );

        let turns: Vec<&Value> = tape
            .exchange(second)
            .into_iter()
            .filter(|l| l["type"] == "turn")
            .collect();
        let resent = turns
            .iter()
            .find(|t| t["role"] == "assistant" && t["echoed"] == true)
            .unwrap_or_else(|| panic!("{}: no echoed assistant turn in {turns:?}", c.name()));
        assert!(
            resent["blocks"]
                .as_array()
                .is_some_and(|bs| bs.iter().any(|b| b["type"] == "tool_use")),
            "{}: the resent turn carries the call: {resent}",
            c.name()
        );
        assert!(resent.get("usage").is_none(), "{}: {resent}", c.name());

        // The first request's one message is on the tape: it is elided, and the digest
        // is the rolling hash of exactly that message as the client sent it.
        let block = elided(turns[0])
            .unwrap_or_else(|| panic!("{}: no history_elided first: {}", c.name(), turns[0]));
        let count = block["count"].as_u64().expect("count") as usize;
        assert_eq!(count, 1, "{}: {block}", c.name());
        let body = logged[2 * i + 1]["body"].as_str().expect("the logged body");
        let member = if c.api == "responses" {
            "input"
        } else {
            "messages"
        };
        assert_eq!(
            block["sha256"].as_str(),
            Some(node_rolling_sha256(body, member, count).as_str()),
            "{}: history_elided.sha256",
            c.name()
        );
    }
    assert_check_clean(&trace);
    let s = stats(&trace);
    let row = s["models"]["perModel"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["model"] == "reel-tool"))
        .unwrap_or_else(|| panic!("no reel-tool row: {s}"));
    assert_eq!(
        row["calls"], 6,
        "two generations a loop, echoed turns excluded: {row}"
    );
    assert_eq!(
        s["models"]["summary"]["assistantTurns"], 6,
        "{}",
        s["models"]
    );

    let player = Llm::play(&trace, &[]);
    let replayed = python_batch(tmp, "replay", &player.bases(), &[], &cases);
    let stopped = player.stop();
    for ((c, r), t) in cases.iter().zip(&replayed).zip(&through) {
        assert_ok(c, r);
        assert_eq!(r.out, t.out, "{}: replayed", c.name());
        assert!(r.raw == t.raw, "{}: replayed bytes", c.name());
    }
    assert_eq!(stopped.code(), Some(0), "{}", stopped.stderr);
}

// ---- eight loops at once -----------------------------------------------------------------

const HEADERS: &[(&str, &str)] = &[
    ("content-type", "application/json"),
    ("anthropic-version", "2023-06-01"),
    ("x-api-key", "sk-test-reel-0000000000000000"),
];

fn prompt(k: usize) -> String {
    format!("What is the weather in Paris? (conversation {k})")
}

fn first_body(k: usize) -> String {
    json!({
        "model": "reel-tool",
        "max_tokens": 256,
        "tools": [{"name": "get_weather", "description": "Weather of a city.",
                   "input_schema": {"type": "object",
                                    "properties": {"city": {"type": "string"}}}}],
        "messages": [{"role": "user", "content": prompt(k)}],
    })
    .to_string()
}

/// The second request: the first's messages, the answer resent, the tool's result.
fn second_body(k: usize, answer: &Value) -> String {
    let call = answer["content"]
        .as_array()
        .and_then(|c| c.iter().find(|b| b["type"] == "tool_use"))
        .unwrap_or_else(|| panic!("no tool call in {answer}"));
    let mut body: Value = serde_json::from_str(&first_body(k)).unwrap();
    let messages = body["messages"].as_array_mut().unwrap();
    messages.push(json!({"role": "assistant", "content": answer["content"]}));
    messages.push(json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": call["id"], "content": "sunny, 21 C"}]}));
    body.to_string()
}

/// One conversation as its client saw it.
#[derive(Debug, Clone, PartialEq)]
struct Loop {
    answers: [Vec<u8>; 2],
    second: String,
}

impl Loop {
    fn answer(&self, i: usize) -> Value {
        serde_json::from_slice(&self.answers[i]).expect("a JSON answer")
    }
}

/// Runs the eight loops at once against `addr`.
fn eight_loops(addr: &str) -> Vec<Loop> {
    let start = Arc::new(Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|k| {
            let addr = addr.to_owned();
            let start = Arc::clone(&start);
            std::thread::spawn(move || {
                start.wait();
                let r1 = request(&addr, "POST", "/v1/messages", HEADERS, &first_body(k));
                assert_eq!(r1.status, 200, "conversation {k}: {}", r1.text());
                let second = second_body(k, &r1.json());
                let r2 = request(&addr, "POST", "/v1/messages", HEADERS, &second);
                assert_eq!(r2.status, 200, "conversation {k}: {}", r2.text());
                Loop {
                    answers: [r1.body, r2.body],
                    second,
                }
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("a conversation"))
        .collect()
}

#[test]
fn eight_concurrent_tool_loops_are_recorded_apart_and_replayed_each_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let up = Upstream::scripted(tmp, "up");
    let llm = Llm::record(&tmp.join("traces"), &up.url, &[]);
    let loops = eight_loops(&llm.addr);
    let trace = llm.finish();
    drop(up);
    let tape = Tape::read(&trace);
    let exchanges = tape.exchanges();
    assert_eq!(exchanges.len(), 16, "{exchanges:?}");

    for (k, l) in loops.iter().enumerate() {
        let call_id = l.answer(0)["content"][0]["id"]
            .as_str()
            .expect("the call's id")
            .to_owned();
        let ids = [l.answer(0)["id"].clone(), l.answer(1)["id"].clone()];
        // The exchanges whose lines mention this conversation's call.
        let own: Vec<u64> = exchanges
            .iter()
            .copied()
            .filter(|&n| {
                tape.exchange(n)
                    .iter()
                    .any(|line| line.to_string().contains(&call_id))
            })
            .collect();
        assert_eq!(own.len(), 2, "conversation {k} ({call_id}): {own:?}");
        for (round, &n) in own.iter().enumerate() {
            let text: String = tape.exchange(n).iter().map(|l| l.to_string()).collect();
            let msg_id = ids[round].as_str().expect("a message id");
            assert!(
                text.contains(msg_id),
                "conversation {k}: exchange {n} does not hold answer {msg_id}"
            );
            for (j, other) in loops.iter().enumerate() {
                if j == k {
                    continue;
                }
                let their_call = other.answer(0)["content"][0]["id"]
                    .as_str()
                    .unwrap()
                    .to_owned();
                assert!(
                    !text.contains(&their_call) && !text.contains(&prompt(j)),
                    "exchange {n} of conversation {k} holds conversation {j}'s lines"
                );
            }
            let turns: Vec<&Value> = tape
                .exchange(n)
                .into_iter()
                .filter(|l| l["type"] == "turn")
                .collect();
            if round == 0 {
                assert!(
                    turns.iter().any(|t| turn_has(t, &prompt(k))),
                    "conversation {k}: its prompt is in exchange {n}"
                );
            }
            for t in &turns {
                let Some(b) = elided(t) else { continue };
                // Only the first request's one message was on the tape before.
                assert_eq!(
                    round, 1,
                    "conversation {k}: an elision in its first request"
                );
                let count = b["count"].as_u64().expect("count") as usize;
                assert!(count <= 1, "conversation {k}: {b} elides more than it had");
                assert_eq!(
                    b["sha256"].as_str(),
                    Some(node_rolling_sha256(&l.second, "messages", count).as_str()),
                    "conversation {k}: the elided history is another conversation's"
                );
            }
        }
    }
    assert_check_clean(&trace);

    let player = Llm::play(&trace, &[]);
    let replayed = eight_loops(&player.addr);
    let stopped = player.stop();
    for (k, (r, l)) in replayed.iter().zip(&loops).enumerate() {
        assert!(
            r.answers == l.answers,
            "conversation {k}: replayed answers differ:\n{:?}\n{:?}",
            r.answer(0),
            l.answer(0)
        );
    }
    assert_eq!(stopped.code(), Some(0), "{}", stopped.stderr);
}

fn turn_has(t: &Value, text: &str) -> bool {
    t["blocks"]
        .as_array()
        .is_some_and(|bs| bs.iter().any(|b| b["text"].as_str() == Some(text)))
}
