//! Test support for the readers of other crates (feature `testing`): the grammar of
//! trace lines every fast reader is held to the reference parser on
//! ([`crate::line::parse_line`]).

use proptest::prelude::*;

fn string_or_not(words: &'static [&'static str]) -> BoxedStrategy<String> {
    prop_oneof![
        4 => proptest::sample::select(words).prop_map(|w| serde_json::to_string(w).unwrap()),
        1 => "[a-z.]{0,8}".prop_map(|w| serde_json::to_string(&w).unwrap()),
        1 => Just("3".to_owned()),
        1 => Just("null".to_owned()),
        1 => Just("{}".to_owned()),
    ]
    .boxed()
}

fn name(n: &'static str) -> BoxedStrategy<String> {
    // A member name as written: plain, or with its first letter escaped.
    let escaped = format!("\\u{:04x}{}", n.as_bytes()[0], &n[1..]);
    prop_oneof![4 => Just(n.to_owned()), 1 => Just(escaped)].boxed()
}

fn member() -> BoxedStrategy<(String, String)> {
    let raw = prop_oneof![
        Just(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_owned()),
        Just(r#"{"jsonrpc":"2.0","id":"a","result":{"content":[]}}"#.to_owned()),
        Just("[1,2]".to_owned()),
        Just("42".to_owned()),
        Just("null".to_owned()),
        Just(r#""text""#.to_owned()),
    ];
    prop_oneof![
        (name("type"), string_or_not(&["meta", "turn", "end", "x"])),
        (
            name("dir"),
            string_or_not(&["in", "out", "event", "command", "telemetry", "sideways"])
        ),
        (
            name("t"),
            string_or_not(&["2026-01-01T00:00:00.000Z", "yesterday"])
        ),
        (name("session"), string_or_not(&["s-1", "reel:conn-2"])),
        (
            name("kind"),
            string_or_not(&["reel.stderr", "llm.request", "x.y"])
        ),
        (name("raw"), raw),
        (
            Just("other".to_owned()),
            Just(r#"{"a":[1,{"b":"c"}]}"#.to_owned())
        ),
    ]
    .boxed()
}

/// A trace line from a grammar of the members every reader reads: `type`, `dir`, `t`,
/// `session`, `kind`, `raw` and another, each with right and wrong JSON types and
/// unknown values, a name sometimes written with an escape, in any order, repeated or
/// not; half of the lines are message-shaped (a message `dir` and a `raw` object among
/// the rest), the common line of a trace. Many lines are ones the reference refuses, as
/// a file may hold.
pub fn trace_line() -> impl Strategy<Value = String> {
    let free = proptest::collection::vec(member(), 0..6);
    let message = (
        proptest::sample::select(&["in", "out"][..]),
        proptest::sample::select(
            &[
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#,
                r#"{"jsonrpc":"2.0","id":"a","result":{"content":[]}}"#,
                r#"{"jsonrpc":"2.0","method":"notifications/progress"}"#,
            ][..],
        ),
        proptest::collection::vec(member(), 0..4),
    )
        .prop_map(|(dir, raw, mut rest)| {
            rest.push(("dir".to_owned(), format!("\"{dir}\"")));
            rest.push(("raw".to_owned(), raw.to_owned()));
            rest
        })
        .prop_shuffle();
    prop_oneof![free, message].prop_map(|members| {
        let body: Vec<String> = members
            .iter()
            .map(|(k, v)| format!("\"{k}\":{v}"))
            .collect();
        format!("{{{}}}", body.join(","))
    })
}
