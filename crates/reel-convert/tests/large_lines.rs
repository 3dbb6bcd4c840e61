//! A line too large to copy (issue 28, item 6) is recorded exactly as the same message
//! would be whole: the skeleton-and-strings path of `reel_convert::large` and
//! `LineRecorder::message_in_parts` gives the bytes `LineRecorder::message` gives for
//! the joined message, redaction included, for long strings anywhere in a message —
//! clean, holding a secret, under a secret name, with escapes, several of them — in
//! message shapes drawn from a seed.

use reel_convert::large::{self, HOLE_MIN};
use reel_convert::{Fault, Item, mcptape};
use reel_redact::record::{LineRecorder, Tags};
use reel_redact::redact::Redactor;
use reel_trace::Timestamp;
use reel_trace::line::Eol;
use reel_trace::writer::{Ending, TraceWriter};

/// A long string's contents of `len` bytes: words, with `tail` at its end.
fn long(len: usize, seed: u64, tail: &str) -> String {
    const WORDS: [&str; 6] = [
        "alpha ",
        "beta ",
        "gamma ",
        "delta\\n",
        "é中 ",
        "\\\"q\\\" ",
    ];
    let mut s = String::with_capacity(len + tail.len());
    let mut x = seed;
    while s.len() < len {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        s.push_str(WORDS[(x >> 33) as usize % WORDS.len()]);
    }
    s.push_str(tail);
    s
}

/// A `tools/call` answer in mcptape's line shape, its result built by `result`.
fn response_line(result: &str) -> Vec<u8> {
    format!(
        r#"{{"v":1,"i":1,"dir":"s2c","kind":"response","id":7,"payload":{{"result":{result}}},"for_method":"tools/call","wall_ms":3}}"#
    )
    .into_bytes()
}

fn recorder() -> LineRecorder<Vec<u8>> {
    LineRecorder::new(
        TraceWriter::new(Vec::new(), Timestamp(0)),
        Redactor::builtin(),
    )
}

fn finish(rec: LineRecorder<Vec<u8>>) -> Vec<u8> {
    rec.finish(Ending::Reason("imported".into()), Timestamp(0))
        .expect("a Vec takes every line")
}

/// The trace of `line` recorded through the large path, and through the whole path.
fn both_ways(line: Vec<u8>) -> (Vec<u8>, Vec<u8>) {
    let mut conv = mcptape::Converter::new(Timestamp(0));
    let mut convert = |n: u64, b: &[u8]| conv.line(n, b).map_err(|p| Fault::Bad(p, b.to_vec()));
    let item = large::convert(2, line.clone(), &mut convert)
        .expect("converts")
        .expect("an item");
    let Item::Large(large) = item else {
        panic!("a line with long strings takes the large path: {item:?}")
    };
    let Item::Message { t, dir, raw, .. } = &*large.item else {
        panic!("a message")
    };
    let mut parts = recorder();
    parts
        .message_in_parts(*t, *dir, raw, |text| large.holes_in(text), Tags::default())
        .expect("written");
    let Item::Message { t, dir, raw, .. } = large.clone().into_item() else {
        panic!("a message")
    };
    let mut whole = recorder();
    whole
        .message(t, dir, raw.as_bytes(), Eol::Lf, Tags::default())
        .expect("written");
    (finish(parts), finish(whole))
}

fn assert_same(line: Vec<u8>, what: &str) -> Vec<u8> {
    let (parts, whole) = both_ways(line);
    assert!(
        parts == whole,
        "{what}: the large path wrote {} bytes, the whole path {}; first difference at {}",
        parts.len(),
        whole.len(),
        parts.iter().zip(&whole).take_while(|(a, b)| a == b).count()
    );
    parts
}

#[test]
fn a_clean_long_text_is_written_as_it_came() {
    let text = long(HOLE_MIN + 10, 1, "");
    let out = assert_same(
        response_line(&format!(
            r#"{{"content":[{{"type":"text","text":"{text}"}}]}}"#
        )),
        "clean text",
    );
    assert!(out.windows(text.len()).any(|w| w == text.as_bytes()));
}

#[test]
fn a_secret_at_the_end_of_a_long_string_is_redacted() {
    let key =
        "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEfGhIjKlMnOpQrStUvWxYz01234567";
    let text = long(HOLE_MIN, 2, &format!(" key {key}"));
    let out = assert_same(
        response_line(&format!(
            r#"{{"content":[{{"type":"text","text":"{text}"}}]}}"#
        )),
        "secret in text",
    );
    let out = String::from_utf8(out).unwrap();
    assert!(!out.contains(key), "the key is gone");
    assert!(out.contains("[REDACTED]"));
}

#[test]
fn a_long_string_under_a_secret_name_becomes_the_marker() {
    let text = long(HOLE_MIN, 3, "");
    let out = assert_same(
        response_line(&format!(
            r#"{{"structuredContent":{{"password":"{text}","note":"kept"}}}}"#
        )),
        "secret name",
    );
    let out = String::from_utf8(out).unwrap();
    assert!(!out.contains(&text[..64]), "nothing of the value is left");
    assert!(
        out.contains(r#""password":"[REDACTED]""#),
        "{}",
        &out[..300.min(out.len())]
    );
}

#[test]
fn several_long_strings_in_seeded_shapes_are_written_as_whole() {
    for seed in 0..3u64 {
        let a = long(HOLE_MIN + seed as usize * 7, seed, "");
        let b = long(HOLE_MIN / 2 + 3, seed + 100, "");
        let c = long(
            HOLE_MIN + 1,
            seed + 200,
            " ghp_0123456789abcdefABCDEF0123456789abcd",
        );
        let result = match seed % 3 {
            0 => format!(
                r#"{{"content":[{{"type":"text","text":"{a}"}},{{"type":"text","text":"{c}"}}]}}"#
            ),
            1 => format!(
                r#"{{"structuredContent":{{"rows":[["{b}","{a}"],["token","{c}"]]}},"content":[]}}"#
            ),
            _ => format!(
                r#"{{"content":[{{"type":"resource","resource":{{"uri":"file:///x","text":"{c}","blob":"{b}"}}}}],"_meta":{{"k":"{a}"}}}}"#
            ),
        };
        assert_same(response_line(&result), &format!("seed {seed}"));
    }
}
