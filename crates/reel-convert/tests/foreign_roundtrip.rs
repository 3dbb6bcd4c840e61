//! Import → export → import is identity on what both formats hold: a trace of arbitrary
//! JSON-RPC traffic, exported to each MCP format reel writes and read back through that
//! format's converter, gives the same messages, in the same order and direction, and the
//! same times where the format keeps them.

use std::path::Path;

use proptest::prelude::*;
use reel_convert::{Format, Found, Item};
use reel_trace::Timestamp;
use reel_trace::line::{Dir, Meta};
use reel_trace::writer::{Ending, MessageLine, TraceWriter};
use serde_json::{Value, json};

/// One message of the generated session.
#[derive(Debug, Clone)]
struct Msg {
    dir: Dir,
    value: Value,
    /// Milliseconds after the start.
    at: i64,
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i32>().prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        "[a-zA-Z0-9 _é中\\-]{0,12}".prop_map(Value::from),
        Just(Value::Null),
    ]
}

fn params() -> impl Strategy<Value = Value> {
    let leaf = scalar();
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[a-z]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A session: requests of the client answered (result or error) by the server, with
/// server notifications between, in the order a real session has them.
fn session() -> impl Strategy<Value = Vec<Msg>> {
    let exchange = (
        "[a-z]{1,8}/[a-z]{1,8}",
        params(),
        prop::option::of(params()),
        any::<bool>(),
        0i64..5_000,
        0i64..5_000,
    );
    prop::collection::vec(exchange, 1..8).prop_map(|exchanges| {
        let mut out = Vec::new();
        let mut at = 0;
        for (id, (method, params, note, failed, gap, took)) in exchanges.into_iter().enumerate() {
            at += gap;
            let id = id as i64 + 1;
            out.push(Msg {
                dir: Dir::In,
                value: json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"p": params.clone()}}),
                at,
            });
            if let Some(n) = note {
                out.push(Msg {
                    dir: Dir::Out,
                    value: json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": n}}),
                    at,
                });
            }
            at += took;
            let reply = if failed {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": "failed"}})
            } else {
                json!({"jsonrpc": "2.0", "id": id, "result": {"echo": params}})
            };
            out.push(Msg {
                dir: Dir::Out,
                value: reply,
                at,
            });
        }
        out
    })
}

const START: Timestamp = Timestamp(1_796_020_626_000);

fn write_trace(path: &Path, msgs: &[Msg]) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = TraceWriter::new(std::io::BufWriter::new(f), START);
    let meta = Meta {
        v: Some(1.into()),
        ty: "meta".into(),
        label: Some("prop".into()),
        started_at: Some(START.to_iso().as_str().to_owned()),
        transport: Some("stdio".into()),
        ..Meta::default()
    };
    w.write_meta(&meta).unwrap();
    let mut last = START;
    for m in msgs {
        let raw = m.value.to_string();
        last = Timestamp(START.0 + m.at);
        w.write_message(&MessageLine::new(last, m.dir, &raw))
            .unwrap();
    }
    w.finish(Ending::Reason("closed".into()), last).unwrap();
}

/// The messages `found` converts to: direction, value, time.
fn read_back(found: &Found) -> Vec<(Dir, Value, Timestamp)> {
    let converted = reel_convert::convert(found).unwrap();
    converted
        .items
        .filter_map(
            |i| match i.unwrap_or_else(|_| panic!("a part of {found:?} did not convert")) {
                Item::Message { t, dir, raw, .. } => {
                    Some((dir, serde_json::from_str(&raw).unwrap(), t))
                }
                _ => None,
            },
        )
        .collect()
}

/// Exports `msgs` as `format`, reads the export back, and compares; `times` when the
/// format keeps each message's time to the millisecond.
fn round_trip(format: Format, msgs: &[Msg], times: bool) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.jsonl");
    write_trace(&trace, msgs);
    let out = dir.path().join("export");
    let left = match format {
        Format::Mcporter => {
            let mut f = std::fs::File::create(&out).unwrap();
            reel_convert::mcporter::export(&trace, "prop", &mut f).unwrap()
        }
        Format::Cassette => {
            let mut f = std::fs::File::create(&out).unwrap();
            reel_convert::cassette::export(&trace, &mut f).unwrap()
        }
        Format::McpVcr => {
            let mut f = std::fs::File::create(&out).unwrap();
            reel_convert::mcp_vcr::export(&trace, &mut f).unwrap()
        }
        Format::Mcptape => reel_convert::mcptape::export(&trace, &out).unwrap(),
        other => unreachable!("{other:?} is not an MCP export"),
    };
    prop_assert!(left.is_empty(), "{format:?} left out {left}");
    let sniffed = if format == Format::Mcptape {
        Some(Format::Mcptape)
    } else {
        reel_convert::sniff_file(&out).unwrap()
    };
    prop_assert_eq!(sniffed, Some(format), "the export is sniffed as its format");
    let back = read_back(&Found {
        format,
        path: out,
        label: "prop".into(),
    });
    prop_assert_eq!(back.len(), msgs.len());
    for (m, (dir, value, t)) in msgs.iter().zip(&back) {
        prop_assert_eq!(m.dir, *dir);
        prop_assert_eq!(&m.value, value);
        if times {
            prop_assert_eq!(Timestamp(START.0 + m.at), *t);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn mcporter_round_trips(msgs in session()) {
        round_trip(Format::Mcporter, &msgs, true)?;
    }

    #[test]
    fn cassette_round_trips(msgs in session()) {
        round_trip(Format::Cassette, &msgs, true)?;
    }

    #[test]
    fn vcr_round_trips(msgs in session()) {
        round_trip(Format::McpVcr, &msgs, true)?;
    }

    #[test]
    fn mcptape_round_trips(msgs in session()) {
        round_trip(Format::Mcptape, &msgs, false)?;
    }
}
