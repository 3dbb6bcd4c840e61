//! mcptape's run directories, `.mcptape/runs/<YYYYMMDD-HHMMSS>-<name>/`: `trace.jsonl`,
//! one message a line, and `meta.json` ("server command, protocol version, counts").
//! Known from mcptape's README only (research: peers.md §2; mcptape is not on PyPI): a
//! line is `{v, i, dir: "c2s"|"s2c", kind: "request"|"response"|"notification", id,
//! payload, for_method, for_params, wall_ms}`, where `payload` is the JSON-RPC body
//! without `jsonrpc` and `id` (the README's response payload is only `{"result": …}`),
//! and responses echo their request's method and params.
//!
//! Reading: each message is rebuilt as JSON-RPC (`jsonrpc: "2.0"`, the line's `id`, a
//! request's `method` from its payload), `c2s` as `dir: "in"`. Lines hold no clock time:
//! a request or notification takes the time of the line before it, a response its
//! request's time plus `wall_ms`, from the run's start (`meta.json`'s `started_at`, else
//! the run directory's `YYYYMMDD-HHMMSS` prefix, else the file's modification time).
//! A line of another `kind` is kept as an `mcptape.line` event; a line that is not
//! mcptape's is a [`Problem`], never a crash.
//!
//! Writing ([`export`]): the same line shape, with the request echoes on responses and
//! `wall_ms` the response's latency, and a `meta.json` with the server command, protocol
//! version, counts and the run's start and end.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{
    ConvertError, Converted, ExportError, Exported, Fault, Item, Left, Problem, after_ms,
    first_line, line_items, read_lines,
};
use reel_trace::Timestamp;
use reel_trace::line::Dir;

/// `kind` of a line that is not a message (a kind mcptape writes that reel does not
/// know).
pub const OTHER_LINE: &str = "mcptape.line";

/// What the format cannot hold.
pub const LIMITS: &str = "mcptape runs hold the JSON-RPC messages of one stdio session \
     and no clock time: each message's `jsonrpc` and `id` are rebuilt from the line \
     (`payload` omits them), times are rebuilt from the run's start and each response's \
     `wall_ms`; there is no server stderr, no non-JSON output and no HTTP";

/// True when the file starting with `head` is an mcptape `trace.jsonl`.
pub fn looks_like(head: &[u8]) -> bool {
    let Ok(m) = serde_json::from_slice::<Map<String, Value>>(first_line(head)) else {
        return false;
    };
    m.get("v").is_some_and(Value::is_u64)
        && m.get("i").is_some_and(Value::is_u64)
        && matches!(m.get("dir").and_then(Value::as_str), Some("c2s" | "s2c"))
        && m.get("kind").is_some_and(Value::is_string)
        && m.contains_key("payload")
}

/// True when `dir` is an mcptape run directory.
pub fn is_run_dir(dir: &Path) -> bool {
    dir.join("trace.jsonl").is_file() && dir.join("meta.json").is_file()
}

/// The `trace.jsonl` and `meta.json` (when there is one) of `path`, a run directory or
/// a `trace.jsonl`.
fn run_files(path: &Path) -> (PathBuf, Option<PathBuf>, Option<&Path>) {
    if path.is_dir() {
        let meta = path.join("meta.json");
        (
            path.join("trace.jsonl"),
            meta.is_file().then_some(meta),
            Some(path),
        )
    } else {
        let dir = path.parent();
        let meta = dir.map(|d| d.join("meta.json")).filter(|m| m.is_file());
        (path.to_owned(), meta, dir)
    }
}

/// Converts the run at `path` (its directory, or its `trace.jsonl`).
pub fn convert(path: &Path) -> Result<Converted, ConvertError> {
    let (trace, meta_path, dir) = run_files(path);
    let mut warnings = Vec::new();
    let mut facts = Map::new();
    if let Some(mp) = &meta_path {
        let bytes = super::read_document(mp)?;
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(m)) => facts = m,
            Ok(_) => warnings.push("meta.json is not a JSON object: left out".into()),
            Err(e) => warnings.push(format!("meta.json is not JSON ({e}): left out")),
        }
    } else {
        warnings.push("no meta.json beside trace.jsonl: the run's start is unknown".into());
    }
    let started = start_of(&facts, dir)
        .or_else(|| {
            let modified = std::fs::metadata(&trace).ok()?.modified().ok()?;
            let secs = modified.duration_since(std::time::UNIX_EPOCH).ok()?;
            super::from_epoch_secs(secs.as_secs_f64())
        })
        .unwrap_or(Timestamp(0));
    let mut lines = read_lines(&trace)?;
    let mut any = false;
    while let Some((_, bytes)) = lines.next_line()? {
        if !bytes.iter().all(u8::is_ascii_whitespace) {
            any = true;
            break;
        }
    }
    if !any {
        return Err(ConvertError::Empty);
    }
    Ok(Converted {
        kind: "mcp",
        transport: Some("stdio".into()),
        started,
        facts,
        warnings,
        items: Box::new(line_items(read_lines(&trace)?, {
            let mut conv = Converter::new(started);
            move |n, bytes| {
                conv.line(n, bytes)
                    .map_err(|p| Fault::Bad(p, bytes.to_vec()))
            }
        })),
    })
}

/// The run's start: `meta.json`'s own (an ISO time or epoch seconds under a name
/// recorders use), else the directory's `YYYYMMDD-HHMMSS` prefix (read as UTC).
fn start_of(meta: &Map<String, Value>, dir: Option<&Path>) -> Option<Timestamp> {
    for k in [
        "started_at",
        "startedAt",
        "started",
        "start",
        "created_at",
        "created",
    ] {
        match meta.get(k) {
            Some(Value::String(s)) => {
                if let Some((t, _)) = super::parse_time(s) {
                    return Some(t);
                }
            }
            Some(Value::Number(n)) => {
                if let Some(t) = n.as_f64().and_then(super::from_epoch_secs) {
                    return Some(t);
                }
            }
            _ => {}
        }
    }
    let name = dir?.file_name()?.to_str()?;
    let b = name.as_bytes();
    if b.len() < 15 || b[8] != b'-' || !b[..8].iter().chain(&b[9..15]).all(u8::is_ascii_digit) {
        return None;
    }
    let iso = format!(
        "{}-{}-{}T{}:{}:{}Z",
        &name[..4],
        &name[4..6],
        &name[6..8],
        &name[9..11],
        &name[11..13],
        &name[13..15]
    );
    Timestamp::parse(&iso)
}

/// Converts a `trace.jsonl` line by line.
#[derive(Debug)]
pub struct Converter {
    last: Timestamp,
    /// Open requests: (the requester's direction, id as JSON) → when sent.
    open: HashMap<(bool, String), Timestamp>,
}

impl Converter {
    /// A converter for a run that started at `started`.
    pub fn new(started: Timestamp) -> Converter {
        Converter {
            last: started,
            open: HashMap::new(),
        }
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
        let mut m: Map<String, Value> = serde_json::from_slice(bytes)
            .map_err(|e| problem(format!("not a JSON object: {e}")))?;
        let dir = match m.get("dir").and_then(Value::as_str) {
            Some("c2s") => Dir::In,
            Some("s2c") => Dir::Out,
            other => {
                return Err(problem(format!(
                    "`dir` is {}, not c2s or s2c (not an mcptape line)",
                    super::shown(other)
                )));
            }
        };
        let kind = m
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let own_time = ["ts", "t"].iter().find_map(|k| {
            m.get(*k)
                .and_then(Value::as_str)
                .and_then(super::parse_time)
                .map(|(t, _)| t)
        });
        let from_client = dir == Dir::In;
        let id = m.get("id").cloned().filter(|v| !v.is_null());
        let payload = match m.remove("payload") {
            Some(Value::Object(p)) => p,
            Some(_) | None if !is_message_kind(&kind) => {
                let t = own_time.unwrap_or(self.last);
                self.last = self.last.max(t);
                return Ok(Some(Item::Event {
                    t,
                    kind: OTHER_LINE.to_owned(),
                    raw: String::from_utf8_lossy(bytes).trim().to_owned(),
                    session: None,
                }));
            }
            _ => return Err(problem("`payload` is not a JSON object".into())),
        };
        let message = rebuild(&kind, id.as_ref(), payload).map_err(problem)?;
        let wall_ms = m.get("wall_ms").and_then(Value::as_f64);
        let t = self.message_time(&kind, from_client, own_time, &message, wall_ms);
        self.last = self.last.max(t);
        let raw = serde_json::to_string(&Value::Object(message))
            .map_err(|e| problem(format!("cannot write the message: {e}")))?;
        Ok(Some(Item::Message {
            t,
            dir,
            raw,
            session: None,
        }))
    }

    /// When a message was sent: the line's own time; for an answer without one, its
    /// request's time plus `wall_ms` (else no earlier than the last line). A request's
    /// time is kept for its answer.
    fn message_time(
        &mut self,
        kind: &str,
        from_client: bool,
        own_time: Option<Timestamp>,
        message: &Map<String, Value>,
        wall_ms: Option<f64>,
    ) -> Timestamp {
        let key = |requester_is_client: bool| {
            message
                .get("id")
                .map(|id| (requester_is_client, id.to_string()))
        };
        match kind {
            "response" | "error" => {
                let sent = key(!from_client).and_then(|k| self.open.remove(&k));
                match (own_time, sent, wall_ms) {
                    (Some(t), _, _) => t,
                    (None, Some(s), Some(w)) if w >= 0.0 => after_ms(s, w),
                    (None, Some(s), _) => s.max(self.last),
                    (None, None, _) => self.last,
                }
            }
            _ => {
                let t = own_time.unwrap_or(self.last);
                if kind == "request"
                    && let Some(k) = key(from_client)
                {
                    self.open.insert(k, t);
                }
                t
            }
        }
    }
}

fn is_message_kind(kind: &str) -> bool {
    matches!(kind, "request" | "response" | "notification" | "error")
}

/// The JSON-RPC message of a line: `payload` with `jsonrpc` and the line's `id` put
/// back (a payload's own members win).
fn rebuild(
    kind: &str,
    id: Option<&Value>,
    payload: Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    if !is_message_kind(kind) {
        return Err(format!(
            "`kind` is {kind:?}, not request, response or notification"
        ));
    }
    let mut msg = Map::new();
    msg.insert("jsonrpc".into(), "2.0".into());
    if kind != "notification"
        && let Some(id) = id
    {
        msg.insert("id".into(), id.clone());
    }
    msg.extend(payload);
    match kind {
        "request" | "notification" if !msg.get("method").is_some_and(Value::is_string) => {
            Err(format!("a {kind} whose payload has no `method`"))
        }
        "request" | "response" | "error" if !msg.contains_key("id") => {
            Err(format!("a {kind} without an `id`"))
        }
        "response" | "error" if !msg.contains_key("result") && !msg.contains_key("error") => {
            Err("a response whose payload has neither `result` nor `error`".into())
        }
        _ => Ok(msg),
    }
}

/// Writes `trace` as an mcptape run directory `dir` (created; an existing one is
/// refused); returns what it could not hold. Only the first session's messages go in
/// (an mcptape run is one stdio session); a server's requests to the client are written
/// as mcptape records them, though `mcptape play` refuses such runs.
pub fn export(trace: &Path, dir: &Path) -> Result<Left, ExportError> {
    if dir.exists() {
        return Err(ExportError::Write(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!(
                "{} exists: reel does not write over a run; give another -o",
                dir.display()
            ),
        )));
    }
    // Read before anything is created: a trace that cannot be read leaves no directory.
    drop(reel_trace::reader::TraceReader::open(trace)?);
    // The run holds what the tools saw: private, as traces are.
    reel_trace::names::create_private_dir(dir).map_err(ExportError::Write)?;
    let file = reel_trace::names::private_file_options()
        .create_new(true)
        .open(dir.join("trace.jsonl"))
        .map_err(ExportError::Write)?;
    let mut out = std::io::BufWriter::new(file);
    let mut left = Left::default();
    let mut w = RunWriter::default();
    super::export_messages(
        trace,
        super::Sessions::FirstAndNone,
        &mut left,
        |e, left| {
            let msg = match e {
                Exported::Meta(m) => {
                    if w.command.is_none() {
                        w.command = m.command.clone();
                        w.label = m.label.clone();
                    }
                    return Ok(());
                }
                Exported::Message(msg) => msg,
            };
            if msg.http {
                left.add("HTTP facts");
            }
            match serde_json::from_str::<Value>(msg.raw) {
                Ok(Value::Object(m)) => match w.line(msg.dir, msg.t, m) {
                    Some(l) => writeln!(out, "{l}").map_err(ExportError::Write)?,
                    None => left.add("messages that are not JSON-RPC"),
                },
                _ => left.add("messages that are not JSON-RPC"),
            }
            Ok(())
        },
    )?;
    out.flush().map_err(ExportError::Write)?;
    drop(out);
    if w.i == 0 {
        let _ = std::fs::remove_dir_all(dir);
        return Err(ExportError::Unfit(format!(
            "{}: no JSON-RPC message to write",
            trace.display()
        )));
    }
    let meta = w.meta();
    reel_trace::names::private_file_options()
        .create_new(true)
        .open(dir.join("meta.json"))
        .and_then(|mut f| std::io::Write::write_all(&mut f, format!("{meta:#}\n").as_bytes()))
        .map_err(ExportError::Write)?;
    Ok(left)
}

/// The state of an export: line numbers, open requests, counts.
#[derive(Default)]
struct RunWriter {
    i: u64,
    command: Option<Value>,
    label: Option<String>,
    protocol: Option<String>,
    /// Open requests: (requester is the client, id as JSON) → (method, params, time).
    open: HashMap<(bool, String), (String, Value, Option<Timestamp>)>,
    counts: std::collections::BTreeMap<&'static str, u64>,
    first: Option<Timestamp>,
    last: Option<Timestamp>,
}

impl RunWriter {
    /// The `trace.jsonl` line of one message, `None` when it is not JSON-RPC.
    fn line(
        &mut self,
        dir: Dir,
        t: Option<Timestamp>,
        mut msg: Map<String, Value>,
    ) -> Option<String> {
        let from_client = dir == Dir::In;
        let id = msg.remove("id").filter(|v| !v.is_null());
        let method = msg.get("method").and_then(Value::as_str).map(str::to_owned);
        let kind = match (&method, &id) {
            (Some(_), Some(_)) => "request",
            (Some(_), None) => "notification",
            (None, Some(_)) if msg.contains_key("result") || msg.contains_key("error") => {
                "response"
            }
            _ => return None,
        };
        msg.remove("jsonrpc");
        if let Some(t) = t {
            self.first.get_or_insert(t);
            self.last = Some(self.last.map_or(t, |l| l.max(t)));
        }
        let mut l = format!(
            "{{\"v\":1,\"i\":{},\"dir\":\"{}\",\"kind\":\"{kind}\"",
            self.i,
            if from_client { "c2s" } else { "s2c" }
        );
        if let Some(id) = &id {
            l.push_str(&format!(",\"id\":{id}"));
        }
        let payload = Value::Object(msg);
        l.push_str(&format!(",\"payload\":{payload}"));
        match kind {
            "request" => self.open_request(from_client, id.as_ref(), method, &payload, t),
            "response" => self.answer(from_client, id.as_ref(), &payload, t, &mut l),
            _ => {}
        }
        l.push('}');
        self.i += 1;
        *self.counts.entry(kind).or_default() += 1;
        *self
            .counts
            .entry(if from_client { "c2s" } else { "s2c" })
            .or_default() += 1;
        Some(l)
    }

    /// A request: the protocol version it asks for, if none is known yet, and the
    /// request kept for its answer.
    fn open_request(
        &mut self,
        from_client: bool,
        id: Option<&Value>,
        method: Option<String>,
        payload: &Value,
        t: Option<Timestamp>,
    ) {
        let method = method.unwrap_or_default();
        // Asked for in `initialize`, or (2026-07-28) named in each request's
        // `_meta`; an `initialize` answer overrides either.
        let asked = if method == "initialize" {
            payload.pointer("/params/protocolVersion")
        } else {
            payload
                .get("params")
                .and_then(|p| p.get("_meta"))
                .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
        };
        if self.protocol.is_none()
            && let Some(v) = asked.and_then(Value::as_str)
        {
            self.protocol = Some(v.to_owned());
        }
        let params = payload.get("params").cloned().unwrap_or(Value::Null);
        if let Some(id) = id {
            self.open
                .insert((from_client, id.to_string()), (method, params, t));
        }
    }

    /// A response: its request's method, params and the time between them added to
    /// line `l`; an `initialize` answer's protocol version taken.
    fn answer(
        &mut self,
        from_client: bool,
        id: Option<&Value>,
        payload: &Value,
        t: Option<Timestamp>,
        l: &mut String,
    ) {
        let key = (!from_client, id.map(Value::to_string).unwrap_or_default());
        let Some((method, params, sent)) = self.open.remove(&key) else {
            return;
        };
        if method == "initialize"
            && let Some(v) = payload
                .pointer("/result/protocolVersion")
                .and_then(Value::as_str)
        {
            self.protocol = Some(v.to_owned());
        }
        l.push_str(&format!(",\"for_method\":{}", Value::from(method)));
        if !params.is_null() {
            l.push_str(&format!(",\"for_params\":{params}"));
        }
        if let (Some(s), Some(t)) = (sent, t) {
            l.push_str(&format!(",\"wall_ms\":{}", (t.0 - s.0).max(0)));
        }
    }

    fn meta(&self) -> Value {
        let mut counts: Map<String, Value> = self
            .counts
            .iter()
            .map(|(k, n)| ((*k).to_owned(), Value::from(*n)))
            .collect();
        counts.insert("messages".into(), self.i.into());
        let iso = |t: Option<Timestamp>| t.map(|t| Value::from(t.to_iso().as_str()));
        serde_json::json!({
            "v": 1,
            "name": self.label,
            "server_command": self.command,
            "protocol_version": self.protocol,
            "counts": counts,
            "started_at": iso(self.first),
            "ended_at": iso(self.last),
            "written_by": concat!("reel ", env!("CARGO_PKG_VERSION")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const README_LINE: &str = r#"{"v": 1, "i": 10, "dir": "s2c", "kind": "response", "id": 4, "payload": {"result": {"content": [{"type": "text", "text": "5"}]}}, "for_method": "tools/call", "for_params": {"name": "add", "arguments": {"a": 2, "b": 3}}, "wall_ms": 0.9}"#;
    const REQUEST: &str = r#"{"v": 1, "i": 9, "dir": "c2s", "kind": "request", "id": 4, "payload": {"method": "tools/call", "params": {"name": "add", "arguments": {"a": 2, "b": 3}}}}"#;

    fn raw(item: Item) -> (Timestamp, Dir, Value) {
        match item {
            Item::Message { t, dir, raw, .. } => (t, dir, serde_json::from_str(&raw).unwrap()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn sniffs_trace_lines_only() {
        assert!(looks_like(README_LINE.as_bytes()));
        assert!(looks_like(REQUEST.as_bytes()));
        assert!(!looks_like(br#"{"v":1,"type":"meta","label":"x"}"#));
        assert!(!looks_like(
            br#"{"t":315,"dir":"c2s","payload":{"jsonrpc":"2.0"}}"#
        ));
        assert!(!looks_like(br#"{"ts":"x","dir":"in","msg":{}}"#));
        assert!(!looks_like(b"[]"));
        assert!(!looks_like(b""));
    }

    #[test]
    fn messages_are_rebuilt_and_responses_timed_by_wall_ms() {
        let start = Timestamp::parse("2026-04-01T00:00:00.000Z").unwrap();
        let mut c = Converter::new(start);
        let (t, dir, req) = raw(c.line(1, REQUEST.as_bytes()).unwrap().unwrap());
        assert_eq!((t, dir), (start, Dir::In));
        assert_eq!(
            req,
            serde_json::json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": 2, "b": 3}}})
        );
        let (t, dir, resp) = raw(c.line(2, README_LINE.as_bytes()).unwrap().unwrap());
        assert_eq!(dir, Dir::Out);
        assert_eq!(t, Timestamp(start.0 + 1));
        assert_eq!(resp["id"], 4);
        assert_eq!(resp["jsonrpc"], "2.0");
        assert_eq!(resp["result"]["content"][0]["text"], "5");
        let note = r#"{"v":1,"i":11,"dir":"s2c","kind":"notification","payload":{"method":"notifications/message","params":{}}}"#;
        let (_, _, n) = raw(c.line(3, note.as_bytes()).unwrap().unwrap());
        assert!(n.get("id").is_none());
        let other = r#"{"v":1,"i":12,"dir":"s2c","kind":"stderr","payload":"boom"}"#;
        assert!(
            matches!(c.line(4, other.as_bytes()).unwrap(), Some(Item::Event { kind, .. }) if kind == OTHER_LINE)
        );
    }

    #[test]
    fn bad_lines_are_problems_never_panics() {
        let mut c = Converter::new(Timestamp(0));
        for (n, l) in [
            "not json",
            "[1]",
            r#"{"v":1,"dir":"up","kind":"request","payload":{}}"#,
            r#"{"v":1,"dir":"c2s","kind":"request","id":1,"payload":{}}"#,
            r#"{"v":1,"dir":"c2s","kind":"request","payload":{"method":"x"}}"#,
            r#"{"v":1,"dir":"s2c","kind":"response","id":1,"payload":{}}"#,
            r#"{"v":1,"dir":"s2c","kind":"response","id":1,"payload":[]}"#,
        ]
        .iter()
        .enumerate()
        {
            let err = c.line(n as u64 + 1, l.as_bytes()).unwrap_err();
            assert_eq!(err.line, n as u64 + 1, "{err}");
        }
        assert_eq!(c.line(9, b"   ").unwrap(), None);
    }

    #[test]
    fn the_start_comes_from_meta_or_the_run_name() {
        let m: Map<String, Value> =
            serde_json::from_str(r#"{"started_at":"2026-04-01T00:00:00Z"}"#).unwrap();
        assert_eq!(start_of(&m, None), Timestamp::parse("2026-04-01T00:00:00Z"));
        let dir = Path::new("/x/.mcptape/runs/20260402-101112-daily");
        assert_eq!(
            start_of(&Map::new(), Some(dir)),
            Timestamp::parse("2026-04-02T10:11:12Z")
        );
        assert_eq!(start_of(&Map::new(), Some(Path::new("/x/run"))), None);
    }

    #[test]
    fn an_exported_run_reads_back_the_same_messages() {
        use reel_trace::writer::{Ending, MessageLine, TraceWriter};
        let tmp = tempfile::tempdir().unwrap();
        let trace = tmp.path().join("t.jsonl");
        let start = Timestamp::parse("2026-04-01T00:00:00.000Z").unwrap();
        let msgs = [
            (
                Dir::In,
                r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
            ),
            (
                Dir::Out,
                r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25"}}"#,
            ),
            (
                Dir::In,
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            ),
            (
                Dir::In,
                r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"add"}}"#,
            ),
            (
                Dir::Out,
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#,
            ),
            (
                Dir::Out,
                r#"{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"no"}}"#,
            ),
            (Dir::Out, r#"[{"jsonrpc":"2.0","method":"x"}]"#),
        ];
        {
            let mut w = TraceWriter::new(std::fs::File::create(&trace).unwrap(), start);
            let meta = reel_trace::line::Meta {
                v: Some(1.into()),
                ty: "meta".into(),
                label: Some("demo".into()),
                command: Some(serde_json::json!(["server", "--x"])),
                ..reel_trace::line::Meta::default()
            };
            w.write_meta(&meta).unwrap();
            for (i, (dir, raw)) in msgs.iter().enumerate() {
                let m = MessageLine::new(Timestamp(start.0 + 10 * i as i64), *dir, raw);
                w.write_message(&m).unwrap();
            }
            w.finish(Ending::ExitCode(0), Timestamp(start.0 + 100))
                .unwrap();
        }
        let run = tmp.path().join("runs/r1");
        let left = export(&trace, &run).unwrap();
        assert_eq!(left.0.get("batches"), Some(&1));
        assert!(is_run_dir(&run));
        let text = std::fs::read_to_string(run.join("trace.jsonl")).unwrap();
        let first: Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
        assert_eq!(first["for_method"], "initialize");
        assert_eq!(first["wall_ms"], 10);
        assert!(first["payload"].get("jsonrpc").is_none());
        let meta: Value =
            serde_json::from_str(&std::fs::read_to_string(run.join("meta.json")).unwrap()).unwrap();
        assert_eq!(meta["protocol_version"], "2025-11-25");
        assert_eq!(meta["counts"]["messages"], 6);
        assert_eq!(meta["server_command"][0], "server");
        let c = convert(&run).unwrap();
        assert_eq!(c.started, start);
        let back: Vec<(Dir, Value)> = c
            .items
            .map(|i| {
                let (_, d, v) = raw(i.unwrap());
                (d, v)
            })
            .collect();
        let want: Vec<(Dir, Value)> = msgs[..6]
            .iter()
            .map(|(d, r)| (*d, serde_json::from_str(r).unwrap()))
            .collect();
        assert_eq!(back, want);
        assert!(matches!(export(&trace, &run), Err(ExportError::Write(_))));
    }

    #[test]
    fn one_session_is_exported_and_the_others_said() {
        use reel_trace::writer::{Ending, MessageLine, TraceWriter};
        let tmp = tempfile::tempdir().unwrap();
        let trace = tmp.path().join("t.jsonl");
        let start = Timestamp::parse("2026-04-01T00:00:00.000Z").unwrap();
        {
            let mut w = TraceWriter::new(std::fs::File::create(&trace).unwrap(), start);
            let meta = reel_trace::line::Meta {
                v: Some(1.into()),
                ty: "meta".into(),
                ..reel_trace::line::Meta::default()
            };
            w.write_meta(&meta).unwrap();
            for (session, raw) in [
                (
                    None,
                    r#"{"jsonrpc":"2.0","id":1,"method":"server/discover"}"#,
                ),
                (
                    Some("a"),
                    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
                ),
                (
                    Some("b"),
                    r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
                ),
            ] {
                let mut m = MessageLine::new(start, Dir::In, raw);
                m.session = session;
                w.write_message(&m).unwrap();
            }
            w.finish(Ending::ExitCode(0), start).unwrap();
        }
        let run = tmp.path().join("r");
        let left = export(&trace, &run).unwrap();
        assert_eq!(left.0.get("messages of other sessions"), Some(&1));
        let text = std::fs::read_to_string(run.join("trace.jsonl")).unwrap();
        assert_eq!(text.lines().count(), 2);
        // A trace without messages is refused, and leaves nothing behind.
        let empty = tmp.path().join("e.jsonl");
        std::fs::write(&empty, "{\"v\":1,\"type\":\"meta\"}\n").unwrap();
        let none = tmp.path().join("none");
        assert!(matches!(export(&empty, &none), Err(ExportError::Unfit(_))));
        assert!(!none.exists());
    }
}
