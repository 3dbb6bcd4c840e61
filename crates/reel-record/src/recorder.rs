//! The trace-writing thread: turns observed lines into trace lines.
//!
//! It owns the [`TraceWriter`] and does all the per-line work the forwarding threads must
//! not wait for: deciding whether a line is a JSON message, redacting it, and formatting
//! and writing it. Each line is classified once:
//! - a line that is one JSON value (any value: object, batch array, or even `42`, because
//!   the format carries any JSON in `raw` and replay must be able to send it back) is a
//!   message line, `raw` = its exact bytes (after redaction), `eol: "crlf"` when it ended
//!   so. JSON whitespace around the value cannot be kept inside `raw` (a reader sees the
//!   value, not the padding), so such a line is written trimmed with `reformatted: true`
//!   and, unless redaction changed it, the original bytes in `raw_b64`;
//! - anything else (blank, text, broken JSON, invalid UTF-8) is a `reel.nonjson` event
//!   with the pipe in `side` and the line in `text`, or base64 `bytes` when it is not
//!   UTF-8 — never dropped;
//! - server stderr lines are `reel.stderr` events, the same way.
//!
//! Redaction applies to what is written, never to what was forwarded. A non-UTF-8 line
//! in which redaction finds a secret (in its lossy UTF-8 reading) is written as the
//! redacted lossy text with `lossy: true` rather than as bytes that would leak it.
//!
//! Lines reach the file whole and in batches: everything the queue holds is formatted
//! into a buffer that is written out before the writer waits again, so a recorder killed
//! with `kill -9` leaves a file readable to its last complete line, and a busy session
//! costs one `write` per batch, not per line.

use std::borrow::Cow;
use std::io::{self, Write};

use base64::Engine as _;
use reel_trace::jsonrpc::{Envelope, RpcKind};
use reel_trace::redact::Redactor;
use reel_trace::{Dir, Ending, EventLine, MessageLine, Timestamp, TraceWriter};
use serde_json::value::RawValue;

use crate::queue::{Gap, Item, LineRecord, Queue, Stream};

/// The event kinds this recorder writes.
pub(crate) const KIND_NONJSON: &str = "reel.nonjson";
/// Server stderr.
pub(crate) const KIND_STDERR: &str = "reel.stderr";
/// Lines dropped with `--drop-when-behind`.
pub(crate) const KIND_GAP: &str = "reel.gap";

/// Batches whole trace lines into one `write`; a line larger than the batch goes out on
/// its own, without a copy.
pub(crate) struct BatchSink<W: Write> {
    inner: W,
    buf: Vec<u8>,
}

/// Flush a batch once it holds this much.
const BATCH_BYTES: usize = 256 * 1024;

impl<W: Write> BatchSink<W> {
    pub fn new(inner: W) -> Self {
        BatchSink {
            inner,
            buf: Vec::with_capacity(BATCH_BYTES),
        }
    }

    fn write_buf(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            let r = self.inner.write_all(&self.buf);
            self.buf.clear();
            r?;
        }
        Ok(())
    }
}

impl<W: Write> Write for BatchSink<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.buf.len() + data.len() > BATCH_BYTES {
            self.write_buf()?;
        }
        if data.len() >= BATCH_BYTES {
            self.inner.write_all(data)?;
        } else {
            self.buf.extend_from_slice(data);
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_buf()?;
        self.inner.flush()
    }
}

/// What the writer thread hands back when the queue is closed.
pub(crate) struct Recorder<W: Write> {
    writer: TraceWriter<BatchSink<W>>,
    redactor: Redactor,
    /// The first write error; after it nothing more is written (the traffic goes on).
    failed: Option<io::Error>,
}

impl<W: Write> Recorder<W> {
    pub fn new(writer: TraceWriter<BatchSink<W>>, redactor: Redactor) -> Self {
        Recorder {
            writer,
            redactor,
            failed: None,
        }
    }

    /// Writes everything the queue delivers until it is closed and empty. `on_error` is
    /// called once, on the first write error.
    pub fn run(&mut self, queue: &Queue, on_error: &dyn Fn(&io::Error)) {
        let mut batch = Vec::new();
        while queue.take_all(&mut batch) {
            let cost = batch.iter().map(Queue::cost_of).sum();
            for item in batch.drain(..) {
                if self.failed.is_none() {
                    let r = self.record(item);
                    self.note(r, on_error);
                }
            }
            if self.failed.is_none() {
                let r = self.writer_flush();
                self.note(r, on_error);
            }
            queue.written(cost);
        }
    }

    fn note(&mut self, r: io::Result<()>, on_error: &dyn Fn(&io::Error)) {
        if let Err(e) = r {
            on_error(&e);
            self.failed = Some(e);
        }
    }

    fn writer_flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }

    /// Lines written so far.
    pub fn counts(&self) -> reel_trace::Counts {
        self.writer.counts()
    }

    /// Writes the `end` line and returns the first write error, if any.
    pub fn finish(self, ending: Ending, at: Timestamp) -> Option<io::Error> {
        if let Some(e) = self.failed {
            return Some(e);
        }
        self.writer.finish(ending, at).err()
    }

    fn record(&mut self, mut item: Item) -> io::Result<()> {
        if let Item::Line(l) = &mut item {
            if let Some(note) = l.http.take() {
                return crate::http::note::write(self, l, *note);
            }
        }
        match item {
            Item::Gap(g) => self.gap(g),
            Item::Line(l) => match l.stream {
                Stream::ServerStderr => self.event(KIND_STDERR, None, &l, Tags::default()),
                Stream::ClientToServer => self.message(Dir::In, &l, Tags::default()),
                Stream::ServerToClient => self.message(Dir::Out, &l, Tags::default()),
            },
        }
    }

    /// The redactor, for producers that format their own extension members.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// A line that should be one JSON value: a message line, or `reel.nonjson` when it
    /// is not JSON. Line breaks inside the value (a pretty-printed HTTP body, multi-line
    /// SSE data) cannot stay in `raw`: they are removed — raw line breaks are always
    /// whitespace between JSON tokens — and the line is marked `reformatted`.
    pub fn message(&mut self, dir: Dir, l: &LineRecord, tags: Tags<'_>) -> io::Result<()> {
        let Some(json) = classify(&l.bytes) else {
            return self.event(KIND_NONJSON, Some(dir), l, tags);
        };
        let flat;
        let (value, reformatted) = if memchr::memchr2(b'\n', b'\r', json.value.as_bytes()).is_some()
        {
            flat = json.value.replace(['\n', '\r'], "");
            (flat.as_str(), true)
        } else {
            (json.value, json.padded)
        };
        let raw = self.redactor.redact_json(value);
        let untouched = matches!(raw, Cow::Borrowed(_));
        let mut m = MessageLine::new(l.t, dir, &raw);
        m.crlf = l.crlf;
        m.is_error = json.is_error;
        m.session = tags.session;
        m.http = tags.http;
        let b64;
        if reformatted {
            m.reformatted = true;
            if untouched {
                b64 = base64::engine::general_purpose::STANDARD.encode(&l.bytes);
                m.raw_b64 = Some(&b64);
            }
        }
        self.writer.write_message(&m)
    }

    /// An extension line whose payload is the line's bytes (`text`, or base64 `bytes`
    /// when not UTF-8), redacted as free text.
    pub fn event(
        &mut self,
        kind: &str,
        side: Option<Dir>,
        l: &LineRecord,
        tags: Tags<'_>,
    ) -> io::Result<()> {
        let mut e = EventLine::new(l.t, kind);
        e.side = side;
        tags.add_to(&mut e);
        if l.bytes.is_empty() && tags.http.is_some() {
            return self.writer.write_event(&e);
        }
        let text;
        match reel_trace::validate_utf8(&l.bytes) {
            Ok(s) => {
                text = self.redactor.redact_text(s);
                e.text = Some(&text);
            }
            Err(_) => {
                let lossy = String::from_utf8_lossy(&l.bytes);
                match self.redactor.redact_text(&lossy) {
                    Cow::Owned(redacted) => {
                        text = Cow::Owned(redacted);
                        e.text = Some(&text);
                        e.fields.insert("lossy".into(), true.into());
                    }
                    Cow::Borrowed(_) => {
                        e.bytes = Some(base64::engine::general_purpose::STANDARD.encode(&l.bytes));
                    }
                }
            }
        }
        if l.crlf {
            e.fields.insert("eol".into(), "crlf".into());
        }
        self.writer.write_event(&e)
    }

    /// Writes an event the caller built.
    pub fn write_event(&mut self, e: &EventLine<'_>) -> io::Result<()> {
        self.writer.write_event(e)
    }

    fn gap(&mut self, g: Gap) -> io::Result<()> {
        let mut e = EventLine::new(g.since, KIND_GAP);
        e.fields.insert("lines".into(), g.lines.into());
        e.fields.insert("bytes".into(), g.bytes.into());
        self.writer.write_event(&e)
    }
}

/// reel's extension members of a line: its MCP session and HTTP facts (HTTP only).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Tags<'a> {
    /// `session`.
    pub session: Option<&'a str>,
    /// `http`, already serialised.
    pub http: Option<&'a RawValue>,
}

impl Tags<'_> {
    pub(crate) fn add_to(&self, e: &mut EventLine<'_>) {
        if let Some(s) = self.session {
            e.fields.insert("session".into(), s.into());
        }
        if let Some(h) = self.http {
            // Events are rare next to messages: a parse here is cheap enough.
            if let Ok(v) = serde_json::from_str(h.get()) {
                e.fields.insert("http".into(), v);
            }
        }
    }
}

/// A line that is one JSON value.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Json<'a> {
    /// The value, without surrounding JSON whitespace.
    pub value: &'a str,
    /// There was whitespace around the value.
    pub padded: bool,
    /// A JSON-RPC error response.
    pub is_error: bool,
}

/// Decides whether a line is one JSON value; `None` for anything else.
pub(crate) fn classify(bytes: &[u8]) -> Option<Json<'_>> {
    let text = reel_trace::validate_utf8(bytes).ok()?;
    let value = text.trim_matches([' ', '\t', '\n', '\r']);
    if value.is_empty() {
        return None;
    }
    let padded = value.len() != text.len();
    // One parse both validates an object and tells whether it is an error response; a
    // duplicate member makes the envelope refuse a document that is still valid JSON.
    if value.starts_with('{') {
        if let Some(env) = Envelope::parse(value) {
            let is_error = env.kind() == RpcKind::Error;
            return Some(Json {
                value,
                padded,
                is_error,
            });
        }
    }
    // Borrowing the whole value as raw text validates it without building anything.
    serde_json::from_str::<&serde_json::value::RawValue>(value).ok()?;
    Some(Json {
        value,
        padded,
        is_error: false,
    })
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
}
