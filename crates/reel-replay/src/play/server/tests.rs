//! The tape server's state machine driven by hand, one event at a time, as the event
//! loop would: the index's updates and the client's lines go in, the messages for the
//! client and the summary come out. No thread, process or socket: the tape is a file
//! the server reads answers from, and the client is a list of what was sent to it.

use std::io;
use std::sync::Arc;

use serde_json::Value;

use super::Server;
use crate::play::input::{Content, Event, InputLine, parse_live};
use crate::play::options::PlayOptions;
use crate::play::out::{ClientOut, Dest, Route};
use crate::play::report::{MISS_CODE, Summary};
use crate::play::shared::Shared;
use crate::tape::{IndexSpec, TapeFiles, Update};

/// The client: every message sent to it, whole, with where it went.
#[derive(Default)]
struct Sent(Vec<(Route, Value)>);

impl ClientOut for Sent {
    fn message(&mut self, dest: Dest, parts: &[&[u8]]) -> io::Result<()> {
        let line: Vec<u8> = parts.concat();
        let v = serde_json::from_slice(line.trim_ascii_end()).expect("a message is JSON");
        self.0.push((dest.route, v));
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A tape server over a trace written from recorded messages, and the index's updates
/// for it, held back until the test hands them over.
struct Harness {
    server: Server<Sent, Vec<u8>>,
    updates: Vec<Update>,
    norm: reel_mcp::normalize::Normalizer,
    _dir: tempfile::TempDir,
}

const META: &str = r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z"}"#;

/// A recorded line: `dir` is `in` (the client's) or `out` (the server's).
fn line(dir: &str, raw: &str) -> String {
    format!(r#"{{"t":"2026-01-01T00:00:00.001Z","dir":"{dir}","raw":{raw}}}"#)
}

impl Harness {
    fn new(recorded: &[(&str, impl AsRef<str>)], strict: bool) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut text = format!("{META}\n");
        for (d, raw) in recorded {
            text.push_str(&line(d, raw.as_ref()));
            text.push('\n');
        }
        std::fs::write(&path, text).unwrap();
        let mut opts = PlayOptions::new(&path);
        opts.strict = strict;
        let shared = Shared::new(&opts, &mut Vec::new());
        let files = Arc::new(TapeFiles::open(&path).unwrap());
        let mut updates = Vec::new();
        crate::tape::index(&path, &IndexSpec::session(1, Vec::new()), |b| {
            updates.extend(b);
            true
        });
        let norm = shared.norm.clone();
        let server = Server::new(
            opts,
            files,
            shared.norm,
            Sent::default(),
            Vec::new(),
            None,
            None,
        );
        Harness {
            server,
            updates,
            norm,
            _dir: dir,
        }
    }

    /// The tape, wholly indexed, before the client says anything.
    fn indexed(recorded: &[(&str, impl AsRef<str>)]) -> Harness {
        let mut h = Harness::new(recorded, false);
        h.index_all();
        h
    }

    /// Hands over the first `n` updates of the index.
    fn index_some(&mut self, n: usize) {
        let batch: Vec<Update> = self.updates.drain(..n).collect();
        self.server.handle(Event::Index(batch));
        self.server.settle().unwrap();
    }

    fn index_all(&mut self) {
        let n = self.updates.len();
        self.index_some(n);
    }

    /// A line from the client; what the server sent in answer to it.
    fn send(&mut self, text: &str) -> Vec<Value> {
        let parsed = parse_live(text, &self.norm);
        self.server.handle(Event::Input(vec![InputLine {
            content: Content::Text(text.to_owned(), parsed),
            crlf: false,
            route: 0,
        }]));
        self.server.settle().unwrap();
        self.take()
    }

    fn take(&mut self) -> Vec<Value> {
        let sent = std::mem::take(&mut self.server.client.out.0);
        sent.into_iter().map(|(_, v)| v).collect()
    }

    /// The client's input ends; the summary and what was said on the diagnostics.
    fn end(mut self) -> (Summary, String) {
        self.server.handle(Event::InputEnd);
        self.server.settle().unwrap();
        let (summary, diag) = self.server.finish();
        (summary, String::from_utf8_lossy(&diag).into_owned())
    }
}

fn call(id: &str, name: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}"}}}}"#)
}

fn result(id: &str, text: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"text":"{text}"}}}}"#)
}

/// The one message sent, which must be there.
fn only(sent: &[Value]) -> &Value {
    assert_eq!(sent.len(), 1, "{sent:?}");
    &sent[0]
}

/// The answer is the recorded result under the live id.
#[test]
fn an_answer_is_the_recorded_result_with_the_live_id() {
    let (c, r) = (call("1", "echo"), result("1", "hello"));
    let mut h = Harness::indexed(&[("in", &c), ("out", &r)]);
    let sent = h.send(&call(r#""live-9""#, "echo"));
    let answer = only(&sent);
    assert_eq!(answer["id"], "live-9");
    assert_eq!(answer["result"]["text"], "hello");
    let (summary, _) = h.end();
    assert_eq!((summary.answered, summary.missed), (1, 0));
    assert_eq!(summary.unused_total, 0);
}

/// Rule `repeats`: identical calls take the recorded answers in recorded order; one
/// more than the tape holds is a miss, not the last answer again.
#[test]
fn repeated_calls_are_answered_in_recorded_order_then_missed() {
    let rec = [
        ("in", call("1", "tick")),
        ("out", result("1", "first")),
        ("in", call("2", "tick")),
        ("out", result("2", "second")),
    ];
    let mut h = Harness::indexed(&rec);
    let first = h.send(&call("10", "tick"));
    assert_eq!(only(&first)["result"]["text"], "first");
    let second = h.send(&call("11", "tick"));
    assert_eq!(only(&second)["result"]["text"], "second");
    let third = h.send(&call("12", "tick"));
    let miss = only(&third);
    assert_eq!(miss["id"], 12);
    assert_eq!(miss["error"]["code"], MISS_CODE);
    let (summary, diag) = h.end();
    assert_eq!((summary.answered, summary.missed), (2, 1));
    assert!(diag.contains("already answered"), "{diag}");
}

/// A miss: the client gets the miss error under its id, the diagnostics say which
/// request, and the recorded exchange it did not take is reported unused at the end.
#[test]
fn a_miss_is_refused_reported_and_leaves_the_tape_unused() {
    let (c, r) = (call("1", "echo"), result("1", "hello"));
    let mut h = Harness::indexed(&[("in", &c), ("out", &r)]);
    let sent = h.send(&call(r#""m""#, "delete_everything"));
    let miss = only(&sent);
    assert_eq!(miss["id"], "m");
    assert_eq!(miss["error"]["code"], MISS_CODE);
    assert!(miss.get("result").is_none());
    let (summary, diag) = h.end();
    assert_eq!((summary.answered, summary.missed), (0, 1));
    assert!(diag.contains("delete_everything"), "{diag}");
    assert_eq!(summary.unused_total, 1);
    assert_eq!(summary.unused[0].method, "tools/call");
}

/// A method the tape never saw: one any server answers alike (`ping`) gets the generic
/// empty result; any other is a miss refused as a server without the method refuses it
/// (-32601). `--strict` gives no generic answers and refuses with the miss code.
#[test]
fn an_unexpected_method_is_answered_generically_only_when_any_server_would() {
    let (c, r) = (call("1", "echo"), result("1", "hello"));
    let mut h = Harness::indexed(&[("in", &c), ("out", &r)]);
    let ping = h.send(r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#);
    assert_eq!(only(&ping)["result"], serde_json::json!({}));
    let other = h.send(r#"{"jsonrpc":"2.0","id":6,"method":"sampling/unheard"}"#);
    assert_eq!(
        only(&other)["error"]["code"],
        reel_mcp::drift::METHOD_NOT_FOUND
    );
    let (summary, _) = h.end();
    assert_eq!((summary.generic, summary.missed), (1, 1));

    let mut strict = Harness::new(&[("in", &c), ("out", &r)], true);
    strict.index_all();
    let ping = strict.send(r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#);
    assert_eq!(only(&ping)["error"]["code"], MISS_CODE);
}

/// A request the index has not reached yet waits (nothing is sent), and is answered
/// when the batch that holds its exchange arrives; one the rest of the tape does not
/// hold either is missed when the index is done.
#[test]
fn a_request_ahead_of_the_index_waits_for_it() {
    let rec = [
        ("in", call("1", "early")),
        ("out", result("1", "e")),
        ("in", call("2", "late")),
        ("out", result("2", "l")),
    ];
    let mut h = Harness::new(&rec, false);
    // The meta line and the first exchange (opened, closed).
    let first = h
        .updates
        .iter()
        .position(|u| matches!(u, Update::Closed { .. }))
        .unwrap();
    h.index_some(first + 1);
    assert!(h.send(&call("7", "late")).is_empty(), "parked");
    assert!(h.send(&call("8", "nowhere")).is_empty(), "parked too");
    let early = h.send(&call("9", "early"));
    assert_eq!(only(&early)["result"]["text"], "e");
    h.index_all();
    let sent = h.take();
    assert_eq!(sent.len(), 2, "{sent:?}");
    let late = sent.iter().find(|v| v["id"] == 7).expect("the late answer");
    assert_eq!(late["result"]["text"], "l");
    let miss = sent.iter().find(|v| v["id"] == 8).expect("the miss");
    assert_eq!(miss["error"]["code"], MISS_CODE);
}

/// The tape of a call during which the server asked the client (sampling), the
/// client's recorded answer, then the call's answer.
fn sampling_tape() -> Vec<(&'static str, String)> {
    vec![
        ("in", call("1", "summarise")),
        (
            "out",
            r#"{"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{"maxTokens":5}}"#
                .to_owned(),
        ),
        (
            "in",
            r#"{"jsonrpc":"2.0","id":0,"result":{"role":"assistant","content":{"type":"text","text":"short"}}}"#
                .to_owned(),
        ),
        ("out", result("1", "done")),
    ]
}

fn answer_to(id: &Value, text: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"role":"assistant","content":{{"type":"text","text":"{text}"}}}}}}"#
    )
}

/// Which recorded message comes next: the server's request first, and the call's
/// answer only once the client answered it; an answer that differs from the recorded
/// one is client drift, and the replay goes on.
#[test]
fn the_answer_after_a_server_request_waits_for_the_client() {
    for (text, drift) in [("short", 0), ("long", 1)] {
        let rec = sampling_tape();
        let mut h = Harness::indexed(&rec);
        let sent = h.send(&call(r#""c""#, "summarise"));
        let ask = only(&sent);
        assert_eq!(ask["method"], "sampling/createMessage");
        assert_eq!(ask["params"]["maxTokens"], 5);
        let fresh = ask["id"].clone();
        let sent = h.send(&answer_to(&fresh, text));
        let done = only(&sent);
        assert_eq!(done["id"], "c");
        assert_eq!(done["result"]["text"], "done");
        let (summary, _) = h.end();
        assert_eq!(summary.client_drift, drift, "answer {text:?}");
        assert_eq!(summary.answered, 1);
    }
}

/// `notifications/cancelled` for a call that waits on the client: nothing more of
/// that exchange is sent, even when the client answers the server's request after all.
#[test]
fn a_cancelled_call_sends_nothing_more() {
    let rec = sampling_tape();
    let mut h = Harness::indexed(&rec);
    let sent = h.send(&call(r#""c""#, "summarise"));
    let fresh = only(&sent)["id"].clone();
    let cancel =
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c"}}"#;
    assert!(h.send(cancel).is_empty());
    assert!(h.send(&answer_to(&fresh, "short")).is_empty());
    let (summary, _) = h.end();
    assert_eq!(summary.cancelled, 1);
}

/// The end of the client's input with the tape not played to its end: the summary
/// counts and lists the exchanges left, in recorded order.
#[test]
fn the_end_of_input_reports_what_the_tape_still_held() {
    let rec = [
        ("in", call("1", "a")),
        ("out", result("1", "a")),
        ("in", call("2", "b")),
        ("out", result("2", "b")),
        ("in", call("3", "c")),
        ("out", result("3", "c")),
    ];
    let mut h = Harness::indexed(&rec);
    assert_eq!(only(&h.send(&call("1", "b")))["result"]["text"], "b");
    let (summary, _) = h.end();
    assert_eq!(summary.unused_total, 2);
    let params: Vec<&str> = summary.unused.iter().map(|u| u.params.as_str()).collect();
    assert_eq!(params.len(), 2);
    assert!(
        params[0].contains(r#""a""#) && params[1].contains(r#""c""#),
        "{params:?}"
    );
    assert!(summary.to_text().contains("2 recorded exchanges unused"));
}

/// Recorded progress goes out with the live call's token, ahead of the answer; a call
/// that asked for no progress gets none, and the same answer.
#[test]
fn progress_carries_the_live_token_and_only_when_asked_for() {
    let rec = [
        (
            "in",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":1}}}"#,
        ),
        (
            "out",
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#,
        ),
        (
            "out",
            r#"{"jsonrpc":"2.0","id":1,"result":{"text":"slow"}}"#,
        ),
    ];
    let mut h = Harness::indexed(&rec);
    let sent = h.send(
        r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p"}}}"#,
    );
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[0]["method"], "notifications/progress");
    assert_eq!(sent[0]["params"]["progressToken"], "p");
    assert_eq!(sent[1]["id"], "c");

    let mut h = Harness::indexed(&rec);
    let sent = h.send(&call(r#""d""#, "slow"));
    let answer = only(&sent);
    assert_eq!(answer["id"], "d");
    assert_eq!(answer["result"]["text"], "slow");
}
