//! Recording what a producer observed: the one path from an observed line to trace
//! lines, and the one `meta` line every reel producer starts with.
//!
//! Every producer of a trace (`reel rec` over stdio and HTTP, `play --record`,
//! `verify`, and those to come) writes through a [`LineRecorder`], so a line is
//! classified, redacted and written the same way whoever saw it:
//! - a line that is one JSON value (any value: object, batch array, or even `42`,
//!   because the format carries any JSON in `raw` and replay must be able to send it
//!   back) is a message line, `raw` = its exact bytes (after redaction), `eol: "crlf"`
//!   when it ended so. JSON whitespace around the value, and line breaks inside it (a
//!   pretty-printed HTTP body), cannot be kept in `raw`: such a line is written
//!   flattened with `reformatted: true` and, unless redaction changed it, the original
//!   bytes in `raw_b64`;
//! - anything else (blank, text, broken JSON, invalid UTF-8) is an event
//!   (`reel.nonjson` by default) with its `text`, or base64 `bytes` when it is not
//!   UTF-8 — never dropped;
//! - redaction applies to what is written, never to what was forwarded. A non-UTF-8
//!   line in which redaction finds a secret (in its lossy UTF-8 reading) is written as
//!   the redacted lossy text with `lossy: true` rather than as bytes that would leak it;
//! - the text lines of one stream (stderr, each side's non-JSON lines of a stdio
//!   session) are redacted as a stream: a PEM private key printed over thirty lines
//!   loses its body lines too, not only its `BEGIN` line (see
//!   [`Redactor::redact_line`]).

use std::borrow::Cow;
use std::io::{self, Write};
use std::sync::LazyLock;

use base64::Engine as _;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::redact::{LineStreams, Redactor};
use reel_trace::Timestamp;
use reel_trace::jsonrpc::RpcKind;
use reel_trace::line::{Counts, Dir, Eol, Meta, REEL_VOCABULARY_VERSION, kinds};
use reel_trace::writer::{Ending, EventLine, MessageLine, TraceWriter};

/// The facts a producer knows about a line beyond its bytes: reel's extension members.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tags<'a> {
    /// `session`: the MCP session the line belongs to (HTTP).
    pub session: Option<&'a str>,
    /// `http`, already serialised.
    pub http: Option<&'a RawValue>,
    /// `origin`: `tape` or `live` (`play --record`, `verify`).
    pub origin: Option<&'a str>,
}

impl Tags<'_> {
    /// Adds these members to an event the caller builds.
    pub fn add_to(&self, e: &mut EventLine<'_>) {
        if let Some(s) = self.session {
            e.fields.insert("session".into(), s.into());
        }
        if let Some(o) = self.origin {
            e.fields.insert("origin".into(), o.into());
        }
        if let Some(h) = self.http {
            // Events are rare next to messages: a parse here is cheap enough.
            if let Ok(v) = serde_json::from_str::<Value>(h.get()) {
                e.fields.insert("http".into(), v);
            }
        }
    }
}

/// The `meta` line of a trace reel writes: `label`, the `command` (redacted here), the
/// `kind` (`mcp`, `llm`), the `transport`, reel's `source`, `producer` and vocabulary
/// version, and the redaction rules in force. The caller adds what only it knows
/// (`listen`, `upstream`).
pub fn reel_meta(
    label: &str,
    command: &[String],
    kind: &str,
    transport: &str,
    redactor: &Redactor,
) -> Meta {
    let version = reel_trace::REEL_VERSION;
    Meta {
        v: Some(Value::from(1)),
        ty: "meta".to_owned(),
        label: Some(label.to_owned()),
        command: Some(Value::from(redactor.redact_command(command))),
        kind: Some(kind.to_owned()),
        source: Some(format!("reel@{version}")),
        producer: Some(serde_json::json!({ "name": "reel", "version": version })),
        reel: Some(REEL_VOCABULARY_VERSION),
        transport: Some(transport.to_owned()),
        redaction: Some(redactor.describe()),
        ..Meta::default()
    }
}

/// Writes observed lines as trace lines (see the module docs), redacting each.
pub struct LineRecorder<W: Write> {
    writer: TraceWriter<W>,
    redactor: Redactor,
    /// Whether a PEM block is open on stderr and on each side's non-JSON lines
    /// (stdio streams; an HTTP body is redacted whole).
    blocks: LineStreams,
}

impl<W: Write> LineRecorder<W> {
    /// Records into `writer` (its meta line written or not) with `redactor`'s rules.
    pub fn new(writer: TraceWriter<W>, redactor: Redactor) -> Self {
        LineRecorder {
            writer,
            redactor,
            blocks: LineStreams::default(),
        }
    }

    /// The redactor, for producers that format their own extension members.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// Writes the meta line.
    pub fn write_meta(&mut self, meta: &Meta) -> io::Result<()> {
        self.writer.write_meta(meta)
    }

    /// A line that should be one JSON value, seen at `t` going `dir`: a message line,
    /// or a `reel.nonjson` event (side `dir`) when it is not JSON.
    pub fn message(
        &mut self,
        t: Timestamp,
        dir: Dir,
        bytes: &[u8],
        eol: Eol,
        tags: Tags<'_>,
    ) -> io::Result<()> {
        let Some(read) = self.read_message(bytes) else {
            return self.event(kinds::NONJSON, Some(dir), t, bytes, eol, tags);
        };
        self.blocks.message(dir, tags.http.is_some());
        let mut m = tagged(t, dir, &read, tags);
        m.eol = eol;
        let b64;
        if read.reformatted {
            m.reformatted = true;
            if !read.redacted {
                b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
                m.raw_b64 = Some(&b64);
            }
        }
        self.writer.write_message(&m)
    }

    /// A message too large to copy, given as `skeleton` (the message with its long
    /// strings replaced by marks) and `strings`, which finds the marks in a text (the
    /// skeleton redacted, where a mark under a secret name is gone with its string) and
    /// gives each one's string as JSON text. The skeleton is redacted and read as
    /// [`LineRecorder::message`] reads a line, each string kept is redacted as a JSON
    /// string, and the line is written from the pieces, not joined in memory.
    pub fn message_in_parts<'s>(
        &mut self,
        t: Timestamp,
        dir: Dir,
        skeleton: &str,
        strings: impl Fn(&str) -> Vec<(std::ops::Range<usize>, &'s str)>,
        tags: Tags<'_>,
    ) -> io::Result<()> {
        let Some(read) = self.read_message(skeleton.as_bytes()) else {
            return Err(io::Error::other("a message too large to copy is not JSON"));
        };
        self.blocks.message(dir, tags.http.is_some());
        let found = strings(&read.raw);
        let redacted: Vec<Cow<'s, str>> = found
            .iter()
            .map(|(_, s)| self.redactor.redact_json(s))
            .collect();
        let mut parts: Vec<&str> = Vec::with_capacity(2 * redacted.len() + 1);
        let mut at = 0;
        for ((r, _), s) in found.iter().zip(&redacted) {
            parts.push(&read.raw[at..r.start]);
            parts.push(s);
            at = r.end;
        }
        parts.push(&read.raw[at..]);
        self.writer
            .write_message_parts(&tagged(t, dir, &read, tags), &parts)
    }

    /// Reads a line as one JSON value and redacts it: one pass of the redaction walk
    /// validates, classifies and redacts a line as received. A line with raw line
    /// breaks (white space between tokens, or not JSON when inside a string) is judged
    /// as received and then redacted flattened. `None` when it is not one JSON value.
    fn read_message<'a>(&self, bytes: &'a [u8]) -> Option<ReadMessage<'a>> {
        let (value, padded) = trim_json(bytes)?;
        if memchr::memchr2(b'\n', b'\r', value.as_bytes()).is_none() {
            let m = self.redactor.redact_message(value)?;
            return Some(ReadMessage {
                redacted: matches!(m.text, Cow::Owned(_)),
                raw: m.text,
                is_error: m.kind == RpcKind::Error,
                reformatted: padded,
            });
        }
        let kind = VALIDATOR.redact_message(value)?.kind;
        let flat = value.replace(['\n', '\r'], "");
        let raw = self.redactor.redact_json(&flat);
        Some(ReadMessage {
            redacted: matches!(raw, Cow::Owned(_)),
            raw: Cow::Owned(raw.into_owned()),
            is_error: kind == RpcKind::Error,
            reformatted: true,
        })
    }

    /// An event of `kind` whose payload is `bytes` (`text`, or base64 `bytes` when not
    /// UTF-8), redacted as free text; `side` is the pipe it came on, if any. With HTTP
    /// facts and no bytes, the event carries the facts alone.
    pub fn event(
        &mut self,
        kind: &str,
        side: Option<Dir>,
        t: Timestamp,
        bytes: &[u8],
        eol: Eol,
        tags: Tags<'_>,
    ) -> io::Result<()> {
        let mut e = EventLine::new(t, kind);
        e.side = side;
        tags.add_to(&mut e);
        if bytes.is_empty() && tags.http.is_some() {
            return self.writer.write_event(&e);
        }
        let text;
        let http = tags.http.is_some();
        match reel_trace::validate_utf8(bytes) {
            Ok(s) => {
                text = self.blocks.redact(&self.redactor, kind, side, http, s);
                e.text = Some(&text);
            }
            Err(_) => {
                let lossy = String::from_utf8_lossy(bytes);
                match self.blocks.redact(&self.redactor, kind, side, http, &lossy) {
                    Cow::Owned(redacted) => {
                        text = Cow::Owned(redacted);
                        e.text = Some(&text);
                        e.fields.insert("lossy".into(), true.into());
                    }
                    Cow::Borrowed(_) => {
                        e.bytes = Some(base64::engine::general_purpose::STANDARD.encode(bytes));
                    }
                }
            }
        }
        if let Some(eol) = eol.member() {
            e.fields.insert("eol".into(), eol.into());
        }
        self.writer.write_event(&e)
    }

    /// A chunk of the server's stderr: a `reel.stderr` event.
    pub fn stderr(&mut self, t: Timestamp, bytes: &[u8], eol: Eol) -> io::Result<()> {
        self.event(kinds::STDERR, None, t, bytes, eol, Tags::default())
    }

    /// `lines` lines of `bytes` bytes dropped since `since`: a `reel.gap` event.
    pub fn gap(&mut self, since: Timestamp, lines: u64, bytes: u64) -> io::Result<()> {
        let mut e = EventLine::new(since, kinds::GAP);
        e.fields.insert("lines".into(), lines.into());
        e.fields.insert("bytes".into(), bytes.into());
        self.writer.write_event(&e)
    }

    /// A turn, redacted (its blocks, usage and members, as JSON).
    pub fn turn(&mut self, turn: &reel_trace::line::Turn) -> io::Result<()> {
        let turn = self.redactor.redact_turn(turn);
        self.writer.write_turn(&turn)
    }

    /// Writes an event the caller built.
    pub fn write_event(&mut self, e: &EventLine<'_>) -> io::Result<()> {
        self.writer.write_event(e)
    }

    /// Lines written so far.
    pub fn counts(&self) -> Counts {
        self.writer.counts()
    }

    /// Flushes the writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }

    /// Writes the `end` line and returns the output.
    pub fn finish(self, ending: Ending, at: Timestamp) -> io::Result<W> {
        self.writer.finish(ending, at)
    }
}

/// A line that is one JSON value.
#[derive(Debug, PartialEq, Eq)]
pub struct Json<'a> {
    /// The value, without surrounding JSON whitespace.
    pub value: &'a str,
    /// There was whitespace around the value.
    pub padded: bool,
    /// A JSON-RPC error response.
    pub is_error: bool,
}

/// A line read as a message (see [`LineRecorder::message`]).
struct ReadMessage<'a> {
    /// What goes into `raw`: the line, flattened and redacted.
    raw: Cow<'a, str>,
    /// Redaction changed it (its original bytes then never go into the trace).
    redacted: bool,
    is_error: bool,
    /// White space around the value or raw line breaks were left out of `raw`.
    reformatted: bool,
}

/// The rules that change nothing: redacting with them only validates and classifies.
static VALIDATOR: LazyLock<Redactor> = LazyLock::new(Redactor::disabled);

/// A message line of `read` with what the producer knows of it (`tags`) and the error
/// verdict of the read: the members [`LineRecorder::message`] and
/// [`LineRecorder::message_in_parts`] write alike.
fn tagged<'m>(
    t: Timestamp,
    dir: Dir,
    read: &'m ReadMessage<'_>,
    tags: Tags<'m>,
) -> MessageLine<'m> {
    let mut m = MessageLine::new(t, dir, &read.raw);
    m.is_error = Some(read.is_error);
    m.session = tags.session;
    m.http = tags.http;
    m.origin = tags.origin;
    m
}

/// Decides whether a line is one JSON value; `None` for anything else. The same walk
/// as the recorder's (one reader of message lines for validity and kind).
pub fn classify(bytes: &[u8]) -> Option<Json<'_>> {
    let (value, padded) = trim_json(bytes)?;
    let kind = VALIDATOR.redact_message(value)?.kind;
    Some(Json {
        value,
        padded,
        is_error: kind == RpcKind::Error,
    })
}

/// The line as text without the JSON white space around it, and whether there was
/// any; `None` when it is not UTF-8 or holds nothing else.
fn trim_json(bytes: &[u8]) -> Option<(&str, bool)> {
    let text = reel_trace::validate_utf8(bytes).ok()?;
    let value = text.trim_matches([' ', '\t', '\n', '\r']);
    (!value.is_empty()).then_some((value, value.len() != text.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_json_value_is_a_message_and_nothing_else_is() {
        let err = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}"#;
        assert_eq!(
            classify(err),
            Some(Json {
                value: std::str::from_utf8(err).unwrap(),
                padded: false,
                is_error: true
            })
        );
        for ok in [
            &b"[1,{\"a\":2}]"[..],
            b"42",
            b"\"s\"",
            b"null",
            b"{\"a\":1,\"a\":2}",
        ] {
            let j = classify(ok).unwrap();
            assert!(!j.is_error && !j.padded, "{ok:?}");
        }
        let padded = classify(b" {\"a\":1}\t").unwrap();
        assert_eq!((padded.value, padded.padded), ("{\"a\":1}", true));
        for bad in [
            &b""[..],
            b"   ",
            b"hello",
            b"{\"a\":",
            b"{} {}",
            b"\xff{}",
            b"{\"a\":\"\xff\"}",
        ] {
            assert_eq!(classify(bad), None, "{bad:?}");
        }
    }

    fn recorded(f: impl FnOnce(&mut LineRecorder<Vec<u8>>)) -> Vec<Value> {
        let mut r = LineRecorder::new(
            TraceWriter::new(Vec::new(), Timestamp(0)),
            Redactor::builtin(),
        );
        f(&mut r);
        let out = r.finish(Ending::ExitCode(0), Timestamp(0)).unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The leak the second writer had: a secret in a stdout line that is not UTF-8
    /// went into the trace as base64 of the raw bytes.
    #[test]
    fn a_secret_in_a_non_utf8_line_is_redacted_not_base64ed() {
        let lines = recorded(|r| {
            let line = b"token AKIAIOSFODNN7EXAMPLE \xff";
            r.message(Timestamp(0), Dir::Out, line, Eol::Lf, Tags::default())
                .unwrap();
            r.event(
                kinds::NONJSON,
                Some(Dir::Out),
                Timestamp(0),
                b"plain \xfe",
                Eol::Lf,
                Tags::default(),
            )
            .unwrap();
        });
        assert_eq!(lines[0]["kind"], kinds::NONJSON);
        assert_eq!(lines[0]["lossy"], true);
        let text = lines[0]["text"].as_str().unwrap();
        assert!(
            text.contains("[REDACTED]") && !text.contains("AKIA"),
            "{text}"
        );
        assert!(lines[0].get("bytes").is_none());
        // Nothing secret: the bytes are kept exactly.
        assert_eq!(lines[1]["bytes"], "cGxhaW4g/g==");
    }

    /// A server that prints a private key prints it line by line: every line of the
    /// block goes, on stderr and among stdout's non-JSON lines, and a JSON line ends
    /// an open block on its side.
    #[test]
    fn a_key_printed_over_many_lines_is_redacted_whole() {
        let body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW";
        let lines = recorded(|r| {
            for l in [
                "-----BEGIN OPENSSH PRIVATE KEY-----",
                body,
                "-----END OPENSSH PRIVATE KEY-----",
                body,
            ] {
                r.stderr(Timestamp(0), l.as_bytes(), Eol::Lf).unwrap();
            }
            for l in ["-----BEGIN PRIVATE KEY-----", body, "{}", body] {
                r.message(
                    Timestamp(0),
                    Dir::Out,
                    l.as_bytes(),
                    Eol::Lf,
                    Tags::default(),
                )
                .unwrap();
            }
        });
        let texts: Vec<&str> = lines
            .iter()
            .filter_map(|l| l["text"].as_str().or(l["raw"].as_object().map(|_| "{}")))
            .collect();
        assert_eq!(
            texts,
            [
                MARKER_TEXT,
                MARKER_TEXT,
                MARKER_TEXT,
                body,
                MARKER_TEXT,
                MARKER_TEXT,
                "{}",
                body
            ]
        );
    }

    const MARKER_TEXT: &str = crate::redact::MARKER;

    #[test]
    fn messages_carry_their_tags_and_pretty_json_is_flattened() {
        let lines = recorded(|r| {
            let tags = Tags {
                session: Some("s1"),
                origin: Some("live"),
                ..Tags::default()
            };
            r.message(
                Timestamp(0),
                Dir::In,
                b"{\n \"jsonrpc\":\"2.0\",\"id\":1}",
                Eol::Crlf,
                tags,
            )
            .unwrap();
            r.event(
                kinds::NONJSON,
                Some(Dir::In),
                Timestamp(0),
                b"hi",
                Eol::Lf,
                tags,
            )
            .unwrap();
        });
        assert_eq!(lines[0]["raw"], serde_json::json!({"jsonrpc":"2.0","id":1}));
        assert_eq!(lines[0]["reformatted"], true);
        assert_eq!(lines[0]["session"], "s1");
        assert_eq!(lines[0]["origin"], "live");
        assert_eq!(lines[0]["eol"], "crlf");
        assert_eq!(lines[1]["origin"], "live");
        assert_eq!(lines[1]["text"], "hi");
    }

    #[test]
    fn every_producer_gets_the_same_meta() {
        let m = reel_meta(
            "l",
            &["srv".into(), "--api-key".into(), "k".into()],
            "mcp",
            "stdio",
            &Redactor::builtin(),
        );
        let v = serde_json::to_value(&m).unwrap();
        assert_eq!(v["type"], "meta");
        assert_eq!(v["source"], format!("reel@{}", reel_trace::REEL_VERSION));
        assert_eq!(v["transport"], "stdio");
        assert_eq!(v["command"][2], "[REDACTED]");
        assert!(v["redaction"].is_object());
    }
}
