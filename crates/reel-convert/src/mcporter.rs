//! mcporter's recordings: NDJSON, each line a JSON-RPC message with a top-level
//! `_meta: {dir: "send" | "recv" | "lifecycle", server, ts}` added (research: peers.md
//! §1). `send` is mcporter's client speaking (`dir: "in"`), `recv` the server
//! (`dir: "out"`), `lifecycle` the transport starting and closing (`$transport/start`,
//! `$transport/close`; kept as `mcporter.lifecycle` events). One file may hold several
//! servers, keyed by `_meta.server`: each is a session of its own.
//!
//! The message written is the line without `_meta`. mcporter adds `_meta` as the last
//! member, so the message is the line's own bytes up to it (found from the end; the
//! rest is checked to be JSON, not parsed into values); a line with `_meta`
//! elsewhere is parsed whole, and its members keep their values but not their order. A
//! line that is not JSON, or has no `_meta.dir`, is a [`Problem`], never a crash; a line
//! without `ts` takes the time of the line before it.

use std::path::Path;

use super::{
    ConvertError, Converted, ExportError, Fault, Item, Left, Problem, line_items, read_lines,
};
use reel_trace::Timestamp;
use reel_trace::line::Dir;
use serde::Deserialize;
use serde_json::value::RawValue;

/// `kind` of a transport start or close.
pub const LIFECYCLE: &str = "mcporter.lifecycle";

/// What the format cannot hold.
pub const LIMITS: &str = "mcporter recordings hold the JSON-RPC messages of mcporter's own \
     client only: no server stderr, no HTTP status, headers or SSE framing, and no line that \
     was not JSON-RPC";

#[derive(Deserialize)]
struct MetaOnly<'a> {
    #[serde(rename = "_meta", borrow)]
    meta: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Meta {
    #[serde(default)]
    dir: Option<String>,
    #[serde(default)]
    server: Option<String>,
    #[serde(default)]
    ts: Option<String>,
}

/// A line whose last member is `_meta`: the message before it (the line's bytes, with
/// the member cut out) and the member. `None` when `_meta` is elsewhere or the line
/// ends otherwise: then the line is parsed whole.
fn split_tail(line: &[u8]) -> Option<(String, Meta)> {
    let trim = |b: &[u8]| -> usize {
        b.len()
            - b.iter()
                .rev()
                .take_while(|c| c.is_ascii_whitespace())
                .count()
    };
    let end = trim(line);
    if end == 0 || line[end - 1] != b'}' {
        return None;
    }
    let key = memchr::memmem::rfind(&line[..end], b"\"_meta\"")?;
    let mut value = key + b"\"_meta\"".len();
    while line.get(value).is_some_and(u8::is_ascii_whitespace) {
        value += 1;
    }
    if line.get(value) != Some(&b':') {
        return None;
    }
    // Exactly one object up to the line's closing brace: a nested `_meta` (in
    // `params`) is followed by more than one brace and fails here.
    let meta: Meta = serde_json::from_slice(&line[value + 1..end - 1]).ok()?;
    let before = trim(&line[..key]);
    let message = match line[..before].last() {
        Some(b',') => [&line[..trim(&line[..before - 1])], b"}"].concat(),
        Some(b'{') => [&line[..before], b"}"].concat(),
        _ => return None,
    };
    Some((String::from_utf8(message).ok()?, meta))
}

/// The line from its last `"_meta"` on: where mcporter puts its member (found once per
/// line in the first pass, see [`convert`]).
fn meta_tail(line: &[u8]) -> Option<&[u8]> {
    memchr::memmem::rfind(line, b"\"_meta\"").map(|at| &line[at..])
}

/// The bytes of the string `"KEY":"…"` (`key` is `"KEY":"`) in a `_meta` tail, when it
/// has no escapes; only compared with values parsed before, or parsed itself.
fn tail_string<'a>(tail: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let at = memchr::memmem::find(tail, key)? + key.len();
    let len = memchr::memchr2(b'"', b'\\', &tail[at..])?;
    (tail[at + len] == b'"').then(|| &tail[at..at + len])
}

/// True when the file starting with `head` is an mcporter recording.
pub fn looks_like(head: &[u8]) -> bool {
    is_line(super::first_line(head))
}

/// True when `line` is an mcporter recording line.
pub fn is_line(line: &[u8]) -> bool {
    let Ok(m) = serde_json::from_slice::<MetaOnly<'_>>(line) else {
        return false;
    };
    let Some(meta) = m
        .meta
        .and_then(|r| serde_json::from_str::<Meta>(r.get()).ok())
    else {
        return false;
    };
    matches!(meta.dir.as_deref(), Some("send" | "recv" | "lifecycle")) && meta.ts.is_some()
}

/// The servers a recording names, in order of first appearance (a first pass over the
/// file: a file of one server converts without sessions, as a stdio trace is written).
#[derive(Debug, Default)]
pub struct Servers(pub Vec<String>);

impl Servers {
    /// Notes the server of one line (`tail`: its [`meta_tail`]).
    fn line(&mut self, bytes: &[u8], tail: Option<&[u8]>) {
        // The common case, without parsing: the line names a server already seen.
        if let Some(name) = tail.and_then(|t| tail_string(t, b"\"server\":\"")) {
            if self.0.iter().any(|s| s.as_bytes() == name) {
                return;
            }
        }
        let server = match split_tail(bytes) {
            Some((_, meta)) => meta.server,
            None => {
                let Ok(m) = serde_json::from_slice::<MetaOnly<'_>>(bytes) else {
                    return;
                };
                m.meta
                    .and_then(|r| serde_json::from_str::<Meta>(r.get()).ok())
                    .and_then(|m| m.server)
            }
        }
        .unwrap_or_default();
        if !self.0.contains(&server) {
            self.0.push(server);
        }
    }
}

/// Converts the recording at `path`: a first pass finds its servers and start, the
/// second streams.
pub fn convert(path: &Path) -> Result<Converted, ConvertError> {
    let mut servers = Servers::default();
    let mut started = None;
    let mut times = Times::default();
    {
        let mut lines = read_lines(path)?;
        let mut probe = Converter::new(&servers);
        while let Some((number, bytes)) = lines.next_line()? {
            let bytes = &*crate::large::skeleton(bytes);
            let tail = meta_tail(bytes);
            servers.line(bytes, tail);
            times.line(number, bytes, tail);
            if started.is_none() {
                started = probe.line(number, bytes).ok().flatten().map(|i| i.t());
            }
        }
    }
    let started = started.ok_or(ConvertError::Empty)?;
    let mut conv = Converter::new(&servers);
    let transport = None;
    Ok(Converted {
        kind: "mcp",
        transport,
        started,
        facts: serde_json::Map::from_iter([(
            "servers".to_owned(),
            serde_json::Value::from(servers.0.clone()),
        )]),
        warnings: times.warnings(),
        items: Box::new(line_items(read_lines(path)?, move |n, bytes| {
            conv.line(n, bytes)
                .map_err(|p| Fault::Bad(p, bytes.to_vec()))
        })),
    })
}

/// What is wrong with a recording's times, found in the first pass: lines whose
/// `_meta.ts` is missing or not a time (they take the time of the line before), and
/// lines timed before the line above.
#[derive(Debug, Default)]
struct Times {
    last: Option<Timestamp>,
    untimed: Vec<u64>,
    backwards: Vec<u64>,
}

impl Times {
    fn line(&mut self, number: u64, bytes: &[u8], tail: Option<&[u8]>) {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let ts = tail
            .and_then(|t| tail_string(t, b"\"ts\":\""))
            .and_then(|b| std::str::from_utf8(b).ok());
        match ts.and_then(Timestamp::parse) {
            Some(t) => {
                if self.last.is_some_and(|last| t < last) {
                    self.backwards.push(number);
                }
                self.last = Some(t);
            }
            None => self.untimed.push(number),
        }
    }

    fn warnings(&self) -> Vec<String> {
        let lines = |v: &[u64]| {
            let shown: Vec<String> = v.iter().take(5).map(u64::to_string).collect();
            let more = if v.len() > 5 { ", …" } else { "" };
            format!("{} line(s) ({}{more})", v.len(), shown.join(", "))
        };
        let mut out = Vec::new();
        if !self.untimed.is_empty() {
            out.push(format!(
                "{} have no `_meta.ts` reel can read: each takes the time of the line before",
                lines(&self.untimed)
            ));
        }
        if !self.backwards.is_empty() {
            out.push(format!(
                "{} are timed before the line above (kept as recorded)",
                lines(&self.backwards)
            ));
        }
        out
    }
}

/// Converts a recording line by line.
#[derive(Debug)]
pub struct Converter {
    sessions: bool,
    last: Option<Timestamp>,
    first: Option<Timestamp>,
}

impl Converter {
    /// A converter for a file naming `servers` (see [`Servers`]).
    pub fn new(servers: &Servers) -> Converter {
        Converter {
            sessions: servers.0.len() > 1,
            last: None,
            first: None,
        }
    }

    /// The time of the first line, once one was converted.
    pub fn started(&self) -> Option<Timestamp> {
        self.first
    }

    /// The time of the last line converted.
    pub fn ended(&self) -> Option<Timestamp> {
        self.last
    }

    /// Converts line `number`; blank lines give nothing.
    pub fn line(&mut self, number: u64, bytes: &[u8]) -> Result<Option<Item>, Problem> {
        let problem = |reason: String| Problem {
            line: number,
            reason,
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        let (raw, meta) = match split_tail(bytes) {
            Some((raw, meta)) => {
                serde_json::from_str::<serde::de::IgnoredAny>(&raw)
                    .map_err(|e| problem(format!("not a JSON object: {e}")))?;
                (raw, meta)
            }
            None => {
                // Members by name, their values borrowed as they are (nothing below
                // `_meta` is parsed); a repeated member keeps its last value, as
                // JSON.parse does.
                let mut members: std::collections::BTreeMap<String, &RawValue> =
                    serde_json::from_slice(bytes)
                        .map_err(|e| problem(format!("not a JSON object: {e}")))?;
                let meta = members
                    .remove("_meta")
                    .ok_or_else(|| problem("no `_meta` (not an mcporter recording line)".into()))?;
                let meta: Meta = serde_json::from_str(meta.get())
                    .map_err(|e| problem(format!("`_meta` is not mcporter's: {e}")))?;
                let raw = serde_json::to_string(&members)
                    .map_err(|e| problem(format!("cannot write the message: {e}")))?;
                (raw, meta)
            }
        };
        let t = match meta.ts.as_deref().and_then(Timestamp::parse) {
            Some(t) => t,
            None => self
                .last
                .ok_or_else(|| problem("no `_meta.ts` and no line before it".into()))?,
        };
        self.first.get_or_insert(t);
        self.last = Some(t);
        let session = self
            .sessions
            .then(|| meta.server.clone().unwrap_or_default());
        Ok(Some(match meta.dir.as_deref() {
            Some("send") => Item::Message {
                t,
                dir: Dir::In,
                raw,
                session,
            },
            Some("recv") => Item::Message {
                t,
                dir: Dir::Out,
                raw,
                session,
            },
            Some("lifecycle") => Item::Event {
                t,
                kind: LIFECYCLE.to_owned(),
                raw,
                session,
            },
            Some(other) => {
                return Err(problem(format!(
                    "`_meta.dir` is {}, not send, recv or lifecycle",
                    serde_json::Value::from(other)
                )));
            }
            None => return Err(problem("no `_meta.dir`".into())),
        }))
    }
}

/// Writes `trace` as an mcporter recording to `out`: each message line becomes its
/// `raw` with `_meta: {dir, server, ts}` added as its last member (the message's own
/// bytes otherwise unchanged), `mcporter.lifecycle` events their lifecycle lines. The
/// server is `server`, except in a trace imported from mcporter, whose sessions are its
/// servers.
pub fn export(
    trace: &std::path::Path,
    server: &str,
    out: &mut dyn std::io::Write,
) -> Result<Left, ExportError> {
    use reel_trace::line::Line;
    let mut reader = reel_trace::reader::TraceReader::open(trace)?;
    let mut left = Left::default();
    let other = "other lines (stderr, non-JSON output, HTTP facts, turns)";
    // A trace imported from mcporter keys its sessions by server: they go back as such.
    let mut sessions_are_servers = false;
    let mut written = 0u64;
    while let Some(line) = reader.next_line() {
        let line = line?;
        let parsed = match line.parse() {
            Ok(p) => p,
            Err(_) => {
                left.add(other);
                continue;
            }
        };
        let (dir, view) = match &parsed {
            Line::Meta(m) => {
                sessions_are_servers = m.source.as_deref() == Some("mcporter");
                continue;
            }
            Line::Message(v) => match v.dir() {
                Some(Dir::In) => ("send", v),
                Some(Dir::Out) => ("recv", v),
                _ => {
                    left.add(other);
                    continue;
                }
            },
            Line::Event(v) if v.kind.as_deref() == Some(LIFECYCLE) => ("lifecycle", v),
            Line::End(_) => continue,
            _ => {
                left.add(other);
                continue;
            }
        };
        let Some(raw) = view.raw_str().map(str::trim_end) else {
            left.add(other);
            continue;
        };
        if !raw.starts_with('{') || !raw.ends_with('}') {
            left.add("batches");
            continue;
        }
        let name = match view.session.as_deref() {
            Some(s) if sessions_are_servers => s,
            _ => server,
        };
        let meta = serde_json::json!({
            "dir": dir,
            "server": name,
            "ts": view.t.as_deref().unwrap_or_default(),
        });
        let body = raw[..raw.len() - 1].trim_end();
        let sep = if body.ends_with('{') { "" } else { "," };
        writeln!(out, "{body}{sep}\"_meta\":{meta}}}").map_err(ExportError::Write)?;
        written += 1;
    }
    if written == 0 {
        return Err(ExportError::Unfit(format!(
            "{} holds no JSON-RPC message for an mcporter recording",
            trace.display()
        )));
    }
    out.flush().map_err(ExportError::Write)?;
    Ok(left)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    const LINES: &[&str] = &[
        r#"{"jsonrpc":"2.0","method":"$transport/start","_meta":{"dir":"lifecycle","server":"demo","ts":"2026-11-30T06:34:05.316Z"}}"#,
        r#"{"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}},"jsonrpc":"2.0","id":2,"_meta":{"dir":"send","server":"demo","ts":"2026-11-30T06:34:05.590Z"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"5"}],"isError":false},"_meta":{"dir":"recv","server":"demo","ts":"2026-11-30T06:34:05.593Z"}}"#,
    ];

    #[test]
    fn lines_become_messages_without_their_meta() {
        assert!(looks_like(LINES[0].as_bytes()));
        assert!(!looks_like(br#"{"v":1,"type":"meta"}"#));
        assert!(!looks_like(b"{\n  \"format_version\": 3,"));
        let mut servers = Servers::default();
        for l in LINES {
            servers.line(l.as_bytes(), meta_tail(l.as_bytes()));
        }
        assert_eq!(servers.0, ["demo"]);
        let mut c = Converter::new(&servers);
        let items: Vec<Item> = LINES
            .iter()
            .enumerate()
            .map(|(i, l)| c.line(i as u64 + 1, l.as_bytes()).unwrap().unwrap())
            .collect();
        assert!(matches!(&items[0], Item::Event { kind, session: None, .. } if kind == LIFECYCLE));
        match &items[1] {
            Item::Message {
                dir, raw, session, ..
            } => {
                assert_eq!(*dir, Dir::In);
                assert!(session.is_none());
                let v: Value = serde_json::from_str(raw).unwrap();
                assert_eq!(v["params"]["arguments"]["b"], 3);
                assert!(v.get("_meta").is_none());
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(c.started(), Timestamp::parse("2026-11-30T06:34:05.316Z"));
        assert_eq!(c.ended(), Timestamp::parse("2026-11-30T06:34:05.593Z"));
    }

    #[test]
    fn several_servers_are_sessions_and_bad_lines_are_problems() {
        let servers = Servers(vec!["a".into(), "b".into()]);
        let mut c = Converter::new(&servers);
        let item = c.line(1, LINES[1].as_bytes()).unwrap().unwrap();
        assert!(matches!(item, Item::Message { session: Some(ref s), .. } if s == "demo"));
        assert_eq!(c.line(2, b"not json").unwrap_err().line, 2);
        assert!(c.line(3, br#"{"id":1}"#).is_err());
        assert_eq!(c.line(4, b"  ").unwrap(), None);
    }
}

#[cfg(test)]
mod tail {
    use super::*;

    #[test]
    fn untimed_and_backwards_lines_are_warned_about() {
        let mut t = Times::default();
        let line = |ts: &str| {
            format!(r#"{{"id":1,"result":{{}},"_meta":{{"dir":"recv","server":"s","ts":"{ts}"}}}}"#)
        };
        let l = line("2026-11-30T06:34:05.590Z");
        t.line(1, l.as_bytes(), meta_tail(l.as_bytes()));
        let l = line("not a time");
        t.line(2, l.as_bytes(), meta_tail(l.as_bytes()));
        let l = line("2020-01-01T00:00:00.000Z");
        t.line(3, l.as_bytes(), meta_tail(l.as_bytes()));
        t.line(4, b"  ", None);
        let l = line("2026-11-30T06:34:06.000Z");
        t.line(5, l.as_bytes(), meta_tail(l.as_bytes()));
        let w = t.warnings();
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].starts_with("1 line(s) (2) have no `_meta.ts`"),
            "{w:?}"
        );
        assert!(w[1].starts_with("1 line(s) (3) are timed before"), "{w:?}");
    }

    #[test]
    fn a_last_meta_is_cut_out_and_the_message_keeps_its_bytes() {
        let line = br#"{"method":"tools/call","params":{"_meta":{"progressToken":1},"b":2,"a":1},"id":3 , "_meta" : {"dir":"send","server":"s","ts":"2026-11-30T06:34:05.590Z"}}"#;
        let (raw, meta) = split_tail(line).unwrap();
        assert_eq!(
            raw,
            r#"{"method":"tools/call","params":{"_meta":{"progressToken":1},"b":2,"a":1},"id":3}"#
        );
        assert_eq!(meta.server.as_deref(), Some("s"));
        let only = br#"{"_meta":{"dir":"lifecycle","ts":"2026-11-30T06:34:05.590Z"}}"#;
        assert_eq!(split_tail(only).unwrap().0, "{}");
    }

    #[test]
    fn a_meta_elsewhere_is_parsed_whole() {
        // First member, and nested only: the tail is not `_meta`'s.
        let first =
            br#"{"_meta":{"dir":"recv","ts":"2026-11-30T06:34:05.590Z"},"id":1,"result":{}}"#;
        assert!(split_tail(first).is_none());
        let nested =
            br#"{"id":1,"params":{"_meta":{"dir":"send","ts":"2026-11-30T06:34:05.590Z"}}}"#;
        assert!(split_tail(nested).is_none());
        let mut c = Converter::new(&Servers::default());
        match c.line(1, first).unwrap().unwrap() {
            Item::Message { dir, raw, .. } => {
                assert_eq!(dir, Dir::Out);
                assert_eq!(raw, r#"{"id":1,"result":{}}"#);
            }
            other => panic!("{other:?}"),
        }
        assert!(c.line(2, nested).is_err(), "no top-level _meta");
        // A torn message before a whole `_meta` is a problem, not a message.
        let torn =
            br#"{"id":1,"result":[1,2,"_meta":{"dir":"recv","ts":"2026-11-30T06:34:05.590Z"}}"#;
        assert!(c.line(3, torn).is_err());
    }
}
