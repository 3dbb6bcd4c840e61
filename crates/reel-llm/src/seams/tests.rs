//! Secrets streamed in small deltas, cut at seeded random points: what is written holds
//! no run of a secret, and still assembles into the redacted turn.

use super::*;
use crate::api::Endpoint;
use crate::response::Assembler;
use reel_trace::line::{Block, Turn};

/// A small seeded generator (xorshift): the same split points on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Secrets of several kinds, each with its random part (what must not survive).
fn secrets() -> Vec<(String, String)> {
    let random = |len: usize, seed: u64| {
        let abc = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        let mut r = Rng(seed);
        (0..len)
            .map(|_| abc[r.below(abc.len())] as char)
            .collect::<String>()
    };
    let ant = random(93, 1);
    let (sg1, sg2) = (random(22, 2), random(43, 3));
    let stripe = random(24, 4);
    let npm = random(36, 5);
    vec![
        (format!("sk-ant-api03-{ant}AA"), ant),
        (format!("SG.{sg1}.{sg2}"), format!("{sg1}.{sg2}")),
        (format!("sk_live_{stripe}"), stripe),
        (format!("npm_{npm}"), npm),
        (
            "Authorization: Basic dXNlcjpwYXNzd29yZDEyMzQ1Njc4OTA=".to_owned(),
            "dXNlcjpwYXNzd29yZDEyMzQ1Njc4OTA=".to_owned(),
        ),
    ]
}

/// `text` cut at seeded random points into deltas of 1 to 8 characters.
fn deltas(text: &str, rng: &mut Rng) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let n = 1 + rng.below(8);
        out.push(chars[i..(i + n).min(chars.len())].iter().collect());
        i += n;
    }
    out
}

fn anthropic_stream(parts: &[String]) -> Vec<String> {
    let ev = |ty: &str, data: serde_json::Value| format!("event: {ty}\ndata: {data}\n\n");
    let mut out = vec![
        ev(
            "message_start",
            serde_json::json!({"type":"message_start","message":{"id":"m","model":"claude","role":"assistant","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}),
        ),
        ev(
            "content_block_start",
            serde_json::json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
        ),
    ];
    for p in parts {
        out.push(ev(
            "content_block_delta",
            serde_json::json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":p}}),
        ));
    }
    out.push(ev(
        "content_block_stop",
        serde_json::json!({"type":"content_block_stop","index":0}),
    ));
    out.push(ev(
        "message_delta",
        serde_json::json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}),
    ));
    out.push(ev(
        "message_stop",
        serde_json::json!({"type":"message_stop"}),
    ));
    out
}

fn chat_stream(parts: &[String]) -> Vec<String> {
    let mut out: Vec<String> = parts
        .iter()
        .map(|p| {
            let v = serde_json::json!({"id":"c","object":"chat.completion.chunk","model":"gpt","choices":[{"index":0,"delta":{"content":p},"finish_reason":null}]});
            format!("data: {v}\n\n")
        })
        .collect();
    let last = serde_json::json!({"id":"c","object":"chat.completion.chunk","model":"gpt","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]});
    out.push(format!("data: {last}\n\n"));
    out.push("data: [DONE]\n\n".to_owned());
    out
}

/// The turn the pieces assemble into, as the recorder reads a stream.
fn assemble(endpoint: Endpoint, pieces: &[String]) -> Turn {
    let mut a = Assembler::new(endpoint);
    let joined = pieces.concat();
    for event in joined.split("\n\n").filter(|e| !e.is_empty()) {
        let mut ty = "message";
        let mut data = "";
        for line in event.lines() {
            if let Some(t) = line.strip_prefix("event: ") {
                ty = t;
            } else if let Some(d) = line.strip_prefix("data: ") {
                data = d;
            }
        }
        a.sse_event(ty, data);
    }
    a.finish(false)
}

fn text_of(t: &Turn) -> String {
    t.blocks
        .iter()
        .flatten()
        .filter_map(|b| match b {
            Block::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The pieces as the recorder writes them: held ([`crate::tape::HeldBody`]), written
/// together whenever the hold says so and at the end; and how many writes that took.
fn through_holds(r: &Redactor, pieces: &[String]) -> (Vec<String>, usize) {
    let mut held = crate::tape::HeldBody::default();
    let mut out = Vec::new();
    let mut writes = 0;
    let mut write = |held: &mut crate::tape::HeldBody, out: &mut Vec<String>| {
        let taken = held.take();
        if taken.is_empty() {
            return;
        }
        writes += 1;
        let refs: Vec<&[u8]> = taken.iter().map(|p| p.bytes.as_slice()).collect();
        out.extend(
            redact_pieces(r, &refs)
                .into_iter()
                .map(|p| String::from_utf8(p).unwrap()),
        );
    };
    for p in pieces {
        let piece = crate::tape::BodyPiece {
            t: reel_trace::Timestamp::now(),
            us: 0,
            bytes: p.as_bytes().to_vec(),
        };
        if held.hold(piece) {
            write(&mut held, &mut out);
        }
    }
    write(&mut held, &mut out);
    (out, writes)
}

fn check(endpoint: Endpoint, stream: fn(&[String]) -> Vec<String>) {
    let r = Redactor::builtin();
    for (secret, random) in secrets() {
        for seed in 1..=40u64 {
            let mut rng = Rng(seed * 7919);
            let text = format!("Here it is:\n{secret}\nKeep it safe.");
            let pieces = stream(&deltas(&text, &mut rng));
            let (written, _) = through_holds(&r, &pieces);
            assert_eq!(written.len(), pieces.len());
            let joined = written.concat();
            let chars: Vec<char> = random.chars().collect();
            for w in chars.windows(8) {
                let run: String = w.iter().collect();
                assert!(
                    !joined.contains(&run),
                    "{secret} (seed {seed}): {run:?} survives in {joined}"
                );
            }
            let expected = r.redact_turn(&assemble(endpoint, &pieces));
            let got = assemble(endpoint, &written);
            assert_eq!(text_of(&got), text_of(&expected), "{secret} (seed {seed})");
            assert!(text_of(&got).contains(MARKER), "{}", text_of(&got));
        }
    }
}

#[test]
fn what_is_held_is_written_at_each_line_seam_and_a_secret_after_one_is_still_redacted() {
    // Models stream a line break as (the end of) a token: each delta that ends a line
    // is a seam, where what is held so far goes to the trace (a recorder killed later
    // has it). A key split across the deltas of the next line is redacted whole.
    let r = Redactor::builtin();
    let key = "sk-ant-api03-Zq8rT2mX0pVb7KdT4wNsXq7LmN2pR9sT4vW6yZ1bC3dF5gH8jK0aEoIuUeYrAA";
    let mut parts: Vec<String> = ["First line.\n", "Second ", "line.\n", "Key: "]
        .map(str::to_owned)
        .to_vec();
    parts.extend(
        key.as_bytes()
            .chunks(4)
            .map(|c| String::from_utf8(c.to_vec()).unwrap()),
    );
    parts.push("\nDone.".to_owned());
    for stream in [
        anthropic_stream as fn(&[String]) -> Vec<String>,
        chat_stream,
    ] {
        let pieces = stream(&parts);
        let (written, writes) = through_holds(&r, &pieces);
        assert!(writes >= 3, "{writes} writes");
        let joined = written.concat();
        assert!(!joined.contains("Zq8rT2mX"), "{joined}");
        assert!(!joined.contains("EoIuUeYr"), "{joined}");
        assert!(joined.contains(MARKER), "{joined}");
    }
}

#[test]
fn secrets_split_across_anthropic_deltas_are_redacted_and_reassemble() {
    check(Endpoint::Messages, anthropic_stream);
}

#[test]
fn secrets_split_across_chat_deltas_are_redacted_and_reassemble() {
    check(Endpoint::ChatCompletions, chat_stream);
}

#[test]
fn bytes_untouched_by_redaction_stay_as_received() {
    let r = Redactor::builtin();
    let parts: Vec<String> = ["Hel", "lo \u{e9}", " w", "orld"].map(str::to_owned).into();
    let pieces = anthropic_stream(&parts);
    let refs: Vec<&[u8]> = pieces.iter().map(|p| p.as_bytes()).collect();
    let written = redact_pieces(&r, &refs);
    let written: Vec<&[u8]> = written.iter().map(Vec::as_slice).collect();
    assert_eq!(written, refs);
}

#[test]
fn a_secret_across_an_arbitrary_cut_of_plain_text_is_redacted() {
    let r = Redactor::builtin();
    let (secret, random) = secrets().swap_remove(3);
    let text = format!("{{\"note\":\"take {secret} now\"}}");
    let cut = text.find("npm_").unwrap() + 10;
    let written = redact_pieces(&r, &[&text.as_bytes()[..cut], &text.as_bytes()[cut..]]);
    let joined = String::from_utf8(written.concat()).unwrap();
    assert!(!joined.contains(&random[..8]), "{joined}");
    assert_eq!(joined, "{\"note\":\"take [REDACTED] now\"}");
    assert!(
        String::from_utf8(written[0].clone())
            .unwrap()
            .ends_with(MARKER)
    );
}

#[test]
fn alignment_sends_a_cut_inside_a_secret_to_the_end_of_its_marker() {
    let o = "a=xSECRETx b=ySECRETy c";
    let r = "a=[REDACTED] b=[REDACTED] c";
    let a = Alignment::new(o, r);
    assert_eq!(a.map(1), 1);
    assert_eq!(a.map(2), 2);
    assert_eq!(a.map(5), 12);
    assert_eq!(a.map(11), 13);
    assert_eq!(a.map(13), 15);
    assert_eq!(a.map(14), 25);
    assert_eq!(a.map(o.len()), r.len());
}

#[test]
fn string_values_have_their_paths() {
    let raw = r#"{"a":[{"b":"x"},"y"],"c":{"d":"z\"q"}}"#;
    let got: Vec<(Vec<String>, &str)> = string_values(raw)
        .into_iter()
        .map(|(p, r)| (p, &raw[r]))
        .collect();
    let p = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        got,
        vec![
            (p(&["a", "0", "b"]), "\"x\""),
            (p(&["a", "1"]), "\"y\""),
            (p(&["c", "d"]), "\"z\\\"q\""),
        ]
    );
}
