//! Traces written as a test states them: JSON values a line, with the JSON-RPC messages
//! built by the functions here, so no area spells a trace's shape out again.
//!
//! [`TraceBuilder`] is the one builder: a session (a meta line, the lines, an end line)
//! stated as JSON values, as messages whose raw text is kept as written (stdio, or HTTP
//! with their session and `http` facts), and events, each line on a clock a millisecond
//! after the one before; it is written through reel's own trace writer. Its constructors
//! choose the meta and end lines: a generic `mcp` session ([`TraceBuilder::new`]), a
//! `reel play` tape ([`TraceBuilder::tape`]), or a recording over HTTP or stdio
//! ([`TraceBuilder::http`], [`TraceBuilder::stdio`]). [`write_lines`] writes lines
//! exactly as given, for tests about several sessions or odd files; byte-level traces
//! (torn lines, invalid UTF-8) are written as bytes where they are tested.

use std::path::{Path, PathBuf};

use reel_trace::{Dir, Ending, MessageLine, Meta, Timestamp, TraceWriter};
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// When every built trace starts.
pub const STARTED: &str = "2026-01-01T00:00:00.000Z";

/// `2026-01-01T00:MM:SS.mmmZ`, `ms` milliseconds after [`STARTED`] (under an hour).
pub fn at(ms: u64) -> String {
    format!(
        "2026-01-01T00:{:02}:{:02}.{:03}Z",
        ms / 60_000,
        ms / 1000 % 60,
        ms % 1000
    )
}

/// A meta line: format version 1, [`STARTED`], `label`, `kind` (`mcp` or `llm`).
pub fn meta(label: &str, kind: &str) -> Value {
    json!({"v": 1, "type": "meta", "startedAt": STARTED, "label": label,
           "command": ["srv", "--x"], "kind": kind, "source": "test@1"})
}

/// A message line without its time (`dir`: `in`, client to server, or `out`).
pub fn msg(dir: &str, raw: Value) -> Value {
    json!({"dir": dir, "raw": raw})
}

/// A message line at `ms`.
pub fn msg_at(ms: u64, dir: &str, raw: Value) -> Value {
    json!({"t": at(ms), "dir": dir, "raw": raw})
}

/// JSON-RPC messages, as a peer sends them.
pub mod rpc {
    use serde_json::{Value, json};

    /// A request.
    pub fn request(id: Value, method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    /// A `tools/call` of `name` with `arguments`.
    pub fn call(id: Value, name: &str, arguments: Value) -> Value {
        request(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        )
    }

    /// A result.
    pub fn result(id: Value, result: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "result": result})
    }

    /// An error answer.
    pub fn error(id: Value, code: i64, message: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
    }

    /// A notification.
    pub fn notification(method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "method": method, "params": params})
    }

    /// A tool result holding one text block.
    pub fn text(text: &str) -> Value {
        json!({"content": [{"type": "text", "text": text}], "isError": false})
    }
}

/// One session, built line by line on a clock that advances a millisecond a line (and
/// by [`TraceBuilder::wait`]), then written through reel's own [`TraceWriter`]: a meta
/// line, the lines, and the end line its constructor chose.
pub struct TraceBuilder {
    meta: Value,
    start: Timestamp,
    /// Milliseconds after `start` of the last line.
    ms: i64,
    lines: Vec<Line>,
    end: EndLine,
    /// Where [`TraceBuilder::end`] and [`TraceBuilder::unfinished`] write.
    path: Option<PathBuf>,
}

/// A line as the builder holds it until it is written.
enum Line {
    /// Written as the value serialises.
    Value(Value),
    /// A message, `raw` copied verbatim by the writer.
    Message {
        t: Timestamp,
        dir: Dir,
        raw: String,
        session: Option<String>,
        http: Option<Box<RawValue>>,
    },
}

/// How the trace ends.
enum EndLine {
    /// `{"t", "type": "end", "exitCode": 0, "durationMs"}`, a millisecond after the last line.
    ExitCode,
    /// The writer's own end line: exit code 0, the duration and the counts.
    Counted,
    /// `{"type":"end","reason":"producer_shutdown"}`, as `reel rec --url` ends.
    Shutdown,
}

/// Where a trace tape starts.
const TAPE_STARTED: &str = "2026-05-01T10:00:00.000Z";

impl TraceBuilder {
    fn with(meta: Value, started: &str, end: EndLine) -> TraceBuilder {
        TraceBuilder {
            meta,
            start: Timestamp::parse(started).expect("timestamp"),
            ms: 0,
            lines: Vec::new(),
            end,
            path: None,
        }
    }

    /// A session labelled `label`, of kind `mcp`, starting at [`STARTED`].
    pub fn new(label: &str) -> TraceBuilder {
        TraceBuilder::with(meta(label, "mcp"), STARTED, EndLine::ExitCode)
    }

    /// A tape for `reel play` at `path`, recorded over stdio: a meta line carrying
    /// `label` and, when given, the `redaction` description, and the writer's end line.
    pub fn tape(path: &Path, label: &str, redaction: Option<Value>) -> TraceBuilder {
        let meta = Meta {
            v: Some(Value::from(1)),
            ty: "meta".into(),
            started_at: Some(TAPE_STARTED.into()),
            label: Some(label.into()),
            source: Some("reel@test".into()),
            transport: Some("stdio".into()),
            reel: Some(1),
            redaction,
            ..Meta::default()
        };
        let meta = serde_json::to_value(meta).expect("a meta line");
        let mut b = TraceBuilder::with(meta, TAPE_STARTED, EndLine::Counted);
        b.path = Some(path.to_owned());
        b
    }

    /// A session recorded by `reel rec --url UPSTREAM` (transport http).
    pub fn http(upstream: &str) -> TraceBuilder {
        let meta = json!({"v":1,"type":"meta","startedAt":TAPE_STARTED,
            "label":"scripted","source":"reel@test","reel":1,"transport":"http",
            "listen":"127.0.0.1:1","upstream":upstream});
        TraceBuilder::with(meta, TAPE_STARTED, EndLine::Shutdown)
    }

    /// A session recorded over stdio, ending as [`TraceBuilder::http`]'s does.
    pub fn stdio() -> TraceBuilder {
        let meta = json!({"v":1,"type":"meta","startedAt":TAPE_STARTED,
            "label":"scripted","source":"reel@test","reel":1,"transport":"stdio"});
        TraceBuilder::with(meta, TAPE_STARTED, EndLine::Shutdown)
    }

    /// Sets (or adds) the meta line's members in `members` (an object).
    pub fn meta(mut self, members: Value) -> TraceBuilder {
        if let (Some(m), Value::Object(extra)) = (self.meta.as_object_mut(), members) {
            m.extend(extra);
        }
        self
    }

    /// Adds lines; one without `t` (and not an event with a `type`) is stamped a
    /// millisecond after the line before it.
    pub fn lines(mut self, lines: impl IntoIterator<Item = Value>) -> TraceBuilder {
        for line in lines {
            self.push(line);
        }
        self
    }

    /// The next millisecond on the clock.
    fn tick(&mut self) -> Timestamp {
        self.ms += 1;
        Timestamp(self.start.millis() + self.ms)
    }

    fn push(&mut self, mut line: Value) {
        let t = self.tick();
        if line.get("t").is_none() && line.get("type").is_none() {
            line["t"] = json!(t.to_iso().as_str());
        }
        self.lines.push(Line::Value(line));
    }

    fn message(
        &mut self,
        dir: Dir,
        session: Option<&str>,
        raw: &str,
        http: Option<Value>,
    ) -> &mut Self {
        let t = self.tick();
        self.lines.push(Line::Message {
            t,
            dir,
            raw: raw.to_owned(),
            session: session.map(str::to_owned),
            http: http.map(|h| RawValue::from_string(h.to_string()).expect("http facts")),
        });
        self
    }

    /// A client → server message (`raw` is JSON text, kept as written).
    pub fn c(&mut self, raw: &str) -> &mut Self {
        self.message(Dir::In, None, raw, None)
    }

    /// A server → client message.
    pub fn s(&mut self, raw: &str) -> &mut Self {
        self.message(Dir::Out, None, raw, None)
    }

    /// A client message over HTTP: its `session` and `http` facts when given.
    pub fn c_http(&mut self, session: Option<&str>, raw: &str, http: Option<Value>) -> &mut Self {
        self.message(Dir::In, session, raw, http)
    }

    /// A server message over HTTP.
    pub fn s_http(&mut self, session: Option<&str>, raw: &str, http: Option<Value>) -> &mut Self {
        self.message(Dir::Out, session, raw, http)
    }

    /// A `reel.http` or `reel.sse` event (`fields` an object).
    pub fn event(&mut self, session: Option<&str>, kind: &str, mut fields: Value) -> &mut Self {
        fields["dir"] = json!("event");
        fields["kind"] = json!(kind);
        if let Some(s) = session {
            fields["session"] = json!(s);
        }
        self.push(fields);
        self
    }

    /// Lets `ms` milliseconds pass.
    pub fn wait(&mut self, ms: i64) -> &mut Self {
        self.ms += ms;
        self
    }

    /// Writes the meta line and the lines to `out`; the end line too when `end`.
    fn write_to<W: std::io::Write>(&self, out: W, end: bool) {
        let mut w = TraceWriter::new(out, self.start);
        w.write_serialized(&self.meta).expect("meta");
        for line in &self.lines {
            match line {
                Line::Value(v) => w.write_serialized(v).expect("line"),
                Line::Message {
                    t,
                    dir,
                    raw,
                    session,
                    http,
                } => {
                    let mut m = MessageLine::new(*t, *dir, raw);
                    m.session = session.as_deref();
                    m.http = http.as_deref();
                    w.write_message(&m).expect("message");
                }
            }
        }
        if !end {
            w.flush().expect("flush");
            return;
        }
        let at = Timestamp(self.start.millis() + self.ms + 1);
        match self.end {
            EndLine::ExitCode => {
                let end = json!({"t": at.to_iso().as_str(), "type": "end", "exitCode": 0,
                                 "durationMs": self.ms + 1});
                w.write_serialized(&end).expect("end");
                w.flush().expect("flush");
            }
            EndLine::Counted => {
                w.finish(Ending::ExitCode(0), at).expect("end");
            }
            EndLine::Shutdown => {
                w.write_verbatim(br#"{"type":"end","reason":"producer_shutdown"}"#)
                    .expect("end");
                w.flush().expect("flush");
            }
        }
    }

    /// Writes the trace, with its end line, to `path`.
    pub fn write(&self, path: &Path) -> PathBuf {
        let file = std::fs::File::create(path).expect("create trace");
        self.write_to(file, true);
        path.to_owned()
    }

    /// Writes the tape to the path it was made for, with its end line.
    pub fn end(self) -> PathBuf {
        let path = self.path.clone().expect("a tape made for a path");
        self.write(&path)
    }

    /// Writes the tape without an end line (the recorder was killed).
    pub fn unfinished(self) -> PathBuf {
        let path = self.path.clone().expect("a tape made for a path");
        let file = std::fs::File::create(&path).expect("create trace");
        self.write_to(file, false);
        path
    }
}

/// Writes `lines` to `path`, one JSON value a line, nothing added.
pub fn write_lines(path: &Path, lines: &[Value]) -> PathBuf {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, text).expect("write trace");
    path.to_owned()
}
