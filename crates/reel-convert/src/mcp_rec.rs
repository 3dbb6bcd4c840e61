//! mcp-rec sessions: JSONL, one line per JSON-RPC message the stdio proxy forwarded,
//! `{"ts": <seconds since the Unix epoch>, "dir": "client->server" | "server->client",
//! "msg": {…}}` (research: peers.md §6). A line the proxy could not parse as JSON it
//! keeps as `msg: {"_raw": <text>, "_unparsed": true}`; that text becomes a
//! [`Problem`] here (kept as its bytes, as reel keeps a non-JSON line).
//!
//! mcp-rec opens its output for appending, so a file recorded twice holds two sessions
//! one after the other: converted in order, with a warning (the second `initialize`).
//! The message written is `msg` serialised compactly; nothing else of a line is kept.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::{
    ConvertError, Converted, Fault, Item, Problem, first_line, from_epoch_secs, line_items,
    read_lines,
};
use reel_trace::Timestamp;
use reel_trace::line::Dir;

/// What the format cannot hold.
pub const LIMITS: &str = "mcp-rec sessions hold the JSON-RPC lines of one stdio session and \
     their times: no server stderr, no HTTP, nothing of the session itself (no server \
     command, no recorder version), and a non-JSON line only as mcp-rec's lossy text of it";

#[derive(Deserialize)]
struct Entry {
    ts: Option<f64>,
    dir: Option<String>,
    msg: Option<Value>,
}

/// True when the file starting with `head` is an mcp-rec session.
pub fn looks_like(head: &[u8]) -> bool {
    let Ok(e) = serde_json::from_slice::<Entry>(first_line(head)) else {
        return false;
    };
    e.ts.is_some()
        && e.msg.is_some()
        && matches!(e.dir.as_deref(), Some("client->server" | "server->client"))
}

/// Converts the session at `path`: a first pass finds its start and what is odd in it,
/// the second streams.
pub fn convert(path: &Path) -> Result<Converted, ConvertError> {
    let mut started = None;
    let mut warnings = Vec::new();
    let mut initializes = 0u64;
    let mut backwards = 0u64;
    let mut last: Option<Timestamp> = None;
    {
        let mut lines = read_lines(path)?;
        while let Some((number, bytes)) = lines.next_line()? {
            let bytes = crate::large::skeleton(bytes);
            let Ok(Some(Item::Message { t, dir, raw, .. })) = line(number, &bytes) else {
                continue;
            };
            started.get_or_insert(t);
            if last.is_some_and(|l| t < l) {
                backwards += 1;
            }
            last = Some(t);
            if dir == Dir::In && raw.contains("\"method\":\"initialize\"") {
                initializes += 1;
            }
        }
    }
    let started = started.ok_or(ConvertError::Empty)?;
    if initializes > 1 {
        warnings.push(format!(
            "{initializes} initialize requests: mcp-rec appends each recording to the same \
             file, so this one holds several sessions one after the other"
        ));
    }
    if backwards > 0 {
        warnings.push(format!(
            "{backwards} lines are timed before the line above them"
        ));
    }
    Ok(Converted {
        kind: "mcp",
        transport: None,
        started,
        facts: serde_json::Map::new(),
        warnings,
        items: Box::new(line_items(read_lines(path)?, |n, bytes| {
            line(n, bytes)
                .map_err(|(p, kept)| Fault::Bad(p, kept.unwrap_or_else(|| bytes.to_vec())))
        })),
    })
}

/// Converts line `number`; blank lines give nothing. A failure gives the problem and,
/// for a line mcp-rec kept as text, that text (else the line's own bytes are kept).
fn line(number: u64, bytes: &[u8]) -> Result<Option<Item>, (Problem, Option<Vec<u8>>)> {
    let problem = |reason: String| {
        (
            Problem {
                line: number,
                reason,
            },
            None,
        )
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let entry: Entry =
        serde_json::from_slice(bytes).map_err(|e| problem(format!("not an mcp-rec line: {e}")))?;
    let t = entry
        .ts
        .and_then(from_epoch_secs)
        .ok_or_else(|| problem("no `ts` in seconds since the epoch (years 1970 to 9999)".into()))?;
    let dir = match entry.dir.as_deref() {
        Some("client->server") => Dir::In,
        Some("server->client") => Dir::Out,
        Some(other) => {
            return Err(problem(format!(
                "`dir` is {}, not \"client->server\" or \"server->client\"",
                Value::from(other)
            )));
        }
        None => return Err(problem("no `dir`".into())),
    };
    let msg = entry.msg.ok_or_else(|| problem("no `msg`".into()))?;
    if msg.get("_unparsed") == Some(&Value::Bool(true)) {
        let text = msg.get("_raw").and_then(Value::as_str).unwrap_or_default();
        return Err((
            Problem {
                line: number,
                reason: "a line mcp-rec could not parse as JSON (kept as mcp-rec's text of it)"
                    .into(),
            },
            Some(text.as_bytes().to_vec()),
        ));
    }
    if !msg.is_object() && !msg.is_array() {
        return Err(problem("`msg` is not a JSON-RPC message or batch".into()));
    }
    Ok(Some(Item::Message {
        t,
        dir,
        raw: msg.to_string(),
        session: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const LINES: &str = concat!(
        r#"{"ts": 1796020626.4757655, "dir": "client->server", "msg": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}}"#,
        "\n",
        r#"{"ts": 1796020626.511877, "dir": "server->client", "msg": {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "demo", "version": "1"}}}}"#,
        "\n\n",
        r#"{"ts": 1796020626.5123618, "dir": "client->server", "msg": {"jsonrpc": "2.0", "method": "notifications/initialized"}}"#,
        "\n",
        r#"{"ts": 1796020626.6, "dir": "server->client", "msg": {"_raw": "Starting up…", "_unparsed": true}}"#,
        "\n",
        r#"{"ts": 1796020626.7, "dir": "sideways", "msg": {}}"#,
        "\n",
        r#"{"ts": 1796020626.8, "dir": "client->server", "msg": {"jsonrpc": "2.0", "id": 2, "met"#,
        "\n",
    );

    fn file(text: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        f
    }

    #[test]
    fn lines_become_messages_and_bad_lines_problems() {
        assert!(looks_like(LINES.as_bytes()));
        let f = file(LINES);
        let c = convert(f.path()).unwrap();
        assert_eq!(c.started, Timestamp(1_796_020_626_476));
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        let items: Vec<_> = c.items.collect();
        assert_eq!(items.len(), 6);
        match &items[0] {
            Ok(Item::Message { dir, raw, t, .. }) => {
                assert_eq!(*dir, Dir::In);
                assert_eq!(*t, Timestamp(1_796_020_626_476));
                let v: Value = serde_json::from_str(raw).unwrap();
                assert_eq!(v["method"], "initialize");
                assert!(!raw.contains(": "), "compact: {raw}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(&items[1], Ok(Item::Message { dir: Dir::Out, .. })));
        match &items[3] {
            Err(Fault::Bad(p, bytes)) => {
                assert_eq!(p.line, 5);
                assert_eq!(bytes, "Starting up…".as_bytes());
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(&items[4], Err(Fault::Bad(p, _)) if p.line == 6 && p.reason.contains("sideways"))
        );
        assert!(
            matches!(&items[5], Err(Fault::Bad(p, _)) if p.line == 7),
            "torn line"
        );
    }

    #[test]
    fn an_appended_second_recording_is_warned_of() {
        let first = LINES.lines().next().unwrap();
        let again = first.replace("1796020626.4757655", "1796020600.0");
        let f = file(&format!("{first}\n{again}\n"));
        let c = convert(f.path()).unwrap();
        assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
        assert!(c.warnings[0].contains("2 initialize requests"));
    }

    #[test]
    fn other_files_are_not_mcp_rec() {
        assert!(!looks_like(
            br#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z"}"#
        ));
        assert!(!looks_like(
            br#"{"jsonrpc":"2.0","id":1,"_meta":{"dir":"send","server":"d","ts":"2026-01-01T00:00:00Z"}}"#
        ));
        assert!(!looks_like(br#"{"t": 3, "dir": "c2s", "payload": {}}"#));
        assert!(!looks_like(b"messages:\n- dir: c2s\n"));
        assert!(!looks_like(b"{\n  \"format_version\": \"1.0.0\","));
        assert!(!looks_like(b""));
        let f = file("not json at all\n\n");
        assert!(matches!(convert(f.path()), Err(ConvertError::Empty)));
        let f = file(r#"{"ts": -1, "dir": "client->server", "msg": {}}"#);
        assert!(matches!(convert(f.path()), Err(ConvertError::Empty)));
        let f = file(r#"{"ts": 1.5, "dir": "client->server", "msg": "text"}"#);
        assert!(matches!(convert(f.path()), Err(ConvertError::Empty)));
    }
}
