//! The tape: where each recorded message is in the trace file, and what it is.
//!
//! The index is built once, while the server already runs: [`index`] streams the trace
//! (and its rotated companions) line by line and hands batches of [`Update`]s to a sink as
//! exchanges form, so the handshake at the top of a 100 MB trace is answered before the
//! rest is read. It keeps *positions* ([`LineLoc`]: file, byte offset, length) and small
//! keys (128-bit [`MatchKey`]s), never the messages: [`TapeFiles::read`] re-reads a line
//! with a positioned read when an answer needs it. Memory is therefore proportional to
//! the number of exchanges, not to the size of the tape.
//!
//! Sessions make tapes ([`Selection`]): a session is a `session` member within a
//! `meta`-delimited segment, numbered in order of first appearance; the lines of a
//! client connection without an MCP session (`reel:conn-N`, written by `reel rec --url`
//! for 2026-07-28 traffic or a refused probe) are session-less traffic, pooled into one
//! tape, never numbered. Over stdio one tape is served (`--session N`); over HTTP every
//! session is its own tape ([`index_tapes`]).
//!
//! Invariants:
//! - Updates come in trace order; per tape, an exchange's `Opened` precedes its
//!   `Attached`, `Closed` and `Cancelled` updates, and exchange numbers count up from 0
//!   without gaps.
//! - A line that does not parse is skipped with a warning; a torn last line (no line
//!   break, not JSON: the recorder was killed mid-write) is expected and reported as such.

mod files;
mod indexer;
pub(crate) mod matcher;
mod scan;
mod types;

use std::fs::File;
use std::path::{Path, PathBuf};

use reel_trace::TraceReader;
use serde_json::value::RawValue;

use self::indexer::Indexer;

pub use self::files::TapeFiles;
pub use self::types::{
    HttpFact, IdSplice, IndexEnd, IndexSpec, Item, ItemKind, LineLoc, Selection, Update, Via, WHOLE,
};

/// The event a `reel.sse` record line describes (`None` when the line is not one): its
/// `text` is the event's data (`""` for a `data:` with nothing after it, as the priming
/// event MCP servers send is written); a record without `text` is an event without data.
pub fn recorded_sse_event(line: &[u8]) -> Option<reel_net::sse::Event> {
    match reel_trace::line::parse_line(line).ok()? {
        reel_trace::line::Line::Event(v) => scan::HttpMember::from_raw(v.http)
            .and_then(|h| h.sse)
            .map(|s| reel_net::sse::Event {
                data: v.text.map(|t| t.into_owned()),
                event: s.event.map(|e| e.into_owned()),
                id: s.id.map(|i| i.into_owned()),
                retry: s.retry,
                ..reel_net::sse::Event::default()
            }),
        _ => None,
    }
}

/// Updates are handed over in batches of at most this many…
const BATCH_UPDATES: usize = 256;
/// …or as soon as this many bytes were read since the last batch, so the first
/// exchanges reach the server within a fraction of a millisecond…
const BATCH_BYTES: u64 = 64 * 1024;
/// …and each batch may be twice the previous one, up to these, so that a long tape is
/// handed over in a few hundred batches rather than one per 64 KiB (every hand-over
/// wakes the server).
const BATCH_UPDATES_MAX: usize = 4096;
const BATCH_BYTES_MAX: u64 = 1024 * 1024;

/// Indexes one tape of the trace at `path` ([`Selection::One`]), calling `sink` with
/// batches of updates; stops early when `sink` returns false (the server is gone). The
/// last batch ends with [`Update::Done`].
pub fn index(path: &Path, spec: &IndexSpec, mut sink: impl FnMut(Vec<Update>) -> bool) {
    let spec = IndexSpec {
        selection: match spec.selection {
            Selection::All => Selection::One(1),
            one => one,
        },
        ignore: spec.ignore.clone(),
    };
    index_tapes(path, &spec, |batch| {
        sink(batch.into_iter().map(|(_, u)| u).collect())
    });
}

/// Indexes the trace at `path` into tapes, calling `sink` with batches of updates, each
/// tagged with its tape number (or [`WHOLE`]); stops early when `sink` returns false.
/// With [`Selection::All`] every tape ends with its own [`Update::Done`] and the last
/// update is a `Done` tagged [`WHOLE`].
pub fn index_tapes(
    path: &Path,
    spec: &IndexSpec,
    mut sink: impl FnMut(Vec<(u32, Update)>) -> bool,
) {
    let mut ix = Indexer::new(spec);
    let mut reader = match TraceReader::open(path) {
        Ok(r) => r,
        Err(e) => {
            ix.end.error = Some(e.to_string());
            sink(ix.finish());
            return;
        }
    };
    let boms: Vec<bool> = reader.files().iter().map(|p| starts_with_bom(p)).collect();
    let mut file_no: u32 = 0;
    let mut current: Option<PathBuf> = None;
    let mut offset: u64 = 0;
    let mut since_flush: u64 = 0;
    let (mut batch_updates, mut batch_bytes) = (BATCH_UPDATES, BATCH_BYTES);
    while let Some(next) = reader.next_line() {
        let tl = match next {
            Ok(tl) => tl,
            Err(e) => {
                ix.end.error = Some(e.to_string());
                break;
            }
        };
        if current.as_deref() != Some(tl.path) {
            if current.is_some() {
                file_no += 1;
            }
            current = Some(tl.path.to_owned());
            offset = if boms.get(file_no as usize).copied().unwrap_or(false) {
                3
            } else {
                0
            };
        }
        let raw = tl.raw;
        let on_disk = raw.bytes.len() as u64 + u64::from(raw.crlf) + u64::from(raw.terminated);
        let loc = LineLoc {
            file: file_no,
            len: raw.bytes.len() as u32,
            offset,
            line: raw.number,
        };
        offset += on_disk;
        since_flush += on_disk;
        ix.end.lines += 1;
        ix.line(raw.bytes, raw.terminated, loc, &|| tl.location());
        if ix.updates.len() >= batch_updates
            || (since_flush >= batch_bytes && !ix.updates.is_empty())
        {
            since_flush = 0;
            batch_updates = (batch_updates * 2).min(BATCH_UPDATES_MAX);
            batch_bytes = (batch_bytes * 2).min(BATCH_BYTES_MAX);
            if !sink(std::mem::take(&mut ix.updates)) {
                return;
            }
        }
    }
    sink(ix.finish());
}

fn starts_with_bom(p: &Path) -> bool {
    use std::io::Read;
    let mut b = [0u8; 3];
    File::open(p)
        .and_then(|mut f| f.read_exact(&mut b))
        .is_ok_and(|_| b == *b"\xEF\xBB\xBF")
}

/// The `raw` member of a message line, for re-reading an answer: one cheap pass.
#[derive(serde::Deserialize)]
pub(crate) struct LineRaw<'a> {
    /// `raw`, verbatim.
    #[serde(default, borrow)]
    pub(crate) raw: Option<&'a RawValue>,
}

impl<'a> LineRaw<'a> {
    /// Parses a line; `None` when it is not a JSON object with a well-formed `raw`.
    pub(crate) fn parse(bytes: &'a [u8]) -> Option<LineRaw<'a>> {
        // from_slice checks UTF-8 inside strings as it goes: no separate pass.
        serde_json::from_slice(bytes).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reel_trace::Timestamp;

    fn run(text: &str, session: usize) -> Vec<Update> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, text).unwrap();
        let mut all = Vec::new();
        index(&p, &IndexSpec::session(session, vec![]), |b| {
            all.extend(b);
            true
        });
        all
    }

    const META: &str = r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z","redaction":{"enabled":true}}"#;

    #[test]
    fn a_recorded_sse_event_has_data_exactly_when_its_record_has_text() {
        let ev = |text: &str| {
            let line = format!(
                r#"{{"t":"2026-01-01T00:00:00.000Z","dir":"event","kind":"reel.sse",{text}"http":{{"req":1,"sse":{{"id":"p","retry":500}}}}}}"#
            );
            recorded_sse_event(line.as_bytes()).expect("a reel.sse record")
        };
        let priming = ev(r#""text":"","#);
        assert_eq!(
            (
                priming.data.as_deref(),
                priming.id.as_deref(),
                priming.retry
            ),
            (Some(""), Some("p"), Some(500))
        );
        assert_eq!(ev("").data, None);
    }

    #[test]
    fn offsets_point_at_the_lines() {
        let lines = [
            META,
            r#"{"t":"2026-01-01T00:00:00.001Z","dir":"in","raw":{"jsonrpc":"2.0","id":1,"method":"ping"}}"#,
            r#"{"t":"2026-01-01T00:00:00.002Z","dir":"out","raw":{"jsonrpc":"2.0","id":1,"result":{}}}"#,
        ];
        let text = format!("\u{feff}{}\r\n{}\n{}", lines[0], lines[1], lines[2]);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, &text).unwrap();
        let files = TapeFiles::open(&p).unwrap();
        let mut ups = Vec::new();
        index(&p, &IndexSpec::session(1, vec![]), |b| {
            ups.extend(b);
            true
        });
        let mut buf = Vec::new();
        let Update::Opened(o) = &ups[1] else {
            panic!("{ups:?}")
        };
        files.read(o.at, &mut buf).unwrap();
        assert_eq!(buf, lines[1].as_bytes());
        assert_eq!(
            o.t,
            Timestamp::parse("2026-01-01T00:00:00.001Z")
                .unwrap()
                .millis()
        );
        let Update::Closed { at, .. } = &ups[2] else {
            panic!()
        };
        files.read(*at, &mut buf).unwrap();
        assert_eq!(buf, lines[2].as_bytes());
        let Update::Done(end) = ups.last().unwrap() else {
            panic!()
        };
        assert!(end.found && !end.torn && !end.ended);
    }

    #[test]
    fn exchanges_attach_and_unsolicited_anchor() {
        let text = [
            META,
            r#"{"t":"x","dir":"in","raw":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}}"#,
            r#"{"t":"x","dir":"out","raw":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}}"#,
            r#"{"t":"x","dir":"in","raw":{"jsonrpc":"2.0","method":"notifications/initialized"}}"#,
            r#"{"t":"x","dir":"out","raw":{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}}"#,
            r#"{"t":"x","dir":"in","raw":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":2}}}}"#,
            r#"{"t":"x","dir":"out","raw":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":1}}}"#,
            r#"{"t":"x","dir":"out","raw":{"jsonrpc":"2.0","id":0,"method":"roots/list"}}"#,
            r#"{"t":"x","dir":"in","raw":{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}}"#,
            r#"{"t":"x","dir":"out","raw":{"jsonrpc":"2.0","id":2,"result":{}}}"#,
            r#"{"type":"end","exitCode":0}"#,
            r#"{"t":"x","dir":"in","raw":{"jsonrpc":"2.0","id":3,"meth"#,
        ]
        .join("\n");
        let ups = run(&text, 1);
        let kinds: Vec<String> = ups
            .iter()
            .map(|u| match u {
                Update::Meta(_) => "meta".into(),
                Update::Opened(o) => format!("open{}:{}", o.exchange, o.method),
                Update::Closed { exchange, .. } => format!("close{exchange}"),
                Update::Attached { exchange, item } => format!("attach{exchange}:{:?}", item.kind),
                Update::Cancelled { exchange } => format!("cancel{exchange}"),
                Update::ClientNotification { seq, .. } => format!("cn{seq}"),
                Update::Unsolicited { anchor, .. } => format!("un@{anchor:?}"),
                Update::Warning(_) => "warn".into(),
                Update::Http(f) => format!("http:{f:?}"),
                Update::Done(_) => "done".into(),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "meta",
                "open0:initialize",
                "close0",
                "cn2",
                "un@Some(2)",
                "open1:tools/call",
                "attach1:Notification { progress: true }",
                "open2:roots/list",
                "attach1:Request { exchange: 2 }",
                "close2",
                "close1",
                "warn",
                "done"
            ]
        );
        let Update::Done(end) = ups.last().unwrap() else {
            panic!()
        };
        assert!(end.torn && end.ended);
    }

    #[test]
    fn sessions_are_selected_by_number() {
        let text = [
            META,
            r#"{"t":"x","dir":"in","session":"A","raw":{"jsonrpc":"2.0","id":1,"method":"a"}}"#,
            r#"{"t":"x","dir":"in","session":"B","raw":{"jsonrpc":"2.0","id":1,"method":"b"}}"#,
            META,
            r#"{"t":"x","dir":"in","raw":{"jsonrpc":"2.0","id":1,"method":"c"}}"#,
        ]
        .join("\n");
        for (n, m) in [(1, "a"), (2, "b"), (3, "c")] {
            let ups = run(&text, n);
            let methods: Vec<_> = ups
                .iter()
                .filter_map(|u| match u {
                    Update::Opened(o) => Some(o.method.clone()),
                    _ => None,
                })
                .collect();
            assert_eq!(methods, [m]);
        }
        let Update::Done(end) = run(&text, 4).pop().unwrap() else {
            panic!()
        };
        assert!(!end.found);
        assert_eq!(end.sessions, 3);
    }
}
