//! The live run of `verify`, written as a trace so it can be diffed with the recording
//! and viewed like any other run.
//!
//! Tape direction, as in every reel trace: what reel sent to the server (the recorded
//! client's messages and answers) is `dir:"in"` with `origin:"tape"`; what the server
//! said is `dir:"out"` with `origin:"live"`; its stderr and any stdout line that is not
//! JSON become `reel.stderr` / `reel.nonjson` events. Everything is redacted with the
//! recording's own rules (`meta.redaction`), so the two traces are redacted alike. A
//! line that cannot be written marks the trace as incomplete; the run goes on.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use reel_trace::line::{Meta, kinds};
use reel_trace::redact::Redactor;
use reel_trace::writer::create_trace_file;
use reel_trace::{Dir, Ending, EventLine, MessageLine, Timestamp, TraceWriter};
use serde_json::Value;

/// The trace being written.
pub struct LiveRecord {
    w: TraceWriter<File>,
    path: PathBuf,
    redactor: Redactor,
    failed: Option<io::Error>,
}

impl LiveRecord {
    /// Creates `<dir>/<stamp>-<label>.jsonl` (and `dir`, mode 0700) and writes its meta
    /// line: `label`, the live server's `command` (redacted; its URL over HTTP), the
    /// `transport` and the redaction rules.
    pub fn create(
        dir: &Path,
        label: &str,
        command: &[String],
        redactor: &Redactor,
        transport: &str,
    ) -> io::Result<LiveRecord> {
        reel_trace::names::ensure_dir(dir)?;
        let started = Timestamp::now();
        let (file, path) = create_trace_file(dir, started, label)?;
        let mut w = TraceWriter::new(file, started);
        let version = reel_trace::REEL_VERSION;
        // `Meta::default()` leaves `type` empty; a meta line must say "meta".
        let meta = Meta {
            v: Some(Value::from(1)),
            ty: "meta".to_owned(),
            label: Some(label.to_owned()),
            command: Some(Value::from(redactor.redact_command(command))),
            kind: Some("mcp".into()),
            source: Some(format!("reel@{version}")),
            producer: Some(serde_json::json!({"name": "reel", "version": version})),
            reel: Some(reel_trace::line::REEL_VOCABULARY_VERSION),
            transport: Some(transport.into()),
            redaction: Some(redactor.describe()),
            ..Meta::default()
        };
        w.write_meta(&meta)?;
        Ok(LiveRecord {
            w,
            path,
            redactor: redactor.clone(),
            failed: None,
        })
    }

    /// Where the trace is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn check(&mut self, r: io::Result<()>) {
        if let Err(e) = r {
            self.failed.get_or_insert(e);
        }
    }

    /// A message reel sent (from the tape, or made by reel).
    pub fn sent(&mut self, text: &str, is_error: bool) {
        self.message(Dir::In, text, "tape", is_error);
    }

    /// A message the live server sent.
    pub fn received(&mut self, text: &str, is_error: bool) {
        self.message(Dir::Out, text, "live", is_error);
    }

    fn message(&mut self, dir: Dir, text: &str, origin: &str, is_error: bool) {
        let raw = self.redactor.redact_json(text);
        let mut m = MessageLine::new(Timestamp::now(), dir, &raw);
        m.origin = Some(origin);
        m.is_error = is_error;
        let r = self.w.write_message(&m);
        self.check(r);
    }

    /// A stdout line of the server that is not JSON.
    pub fn nonjson(&mut self, bytes: &[u8]) {
        let redacted;
        let payload: &[u8] = match std::str::from_utf8(bytes) {
            Ok(text) => {
                redacted = self.redactor.redact_text(text).into_owned();
                redacted.as_bytes()
            }
            Err(_) => bytes,
        };
        let mut e = EventLine::new(Timestamp::now(), kinds::NONJSON).with_payload(payload);
        e.side = Some(Dir::Out);
        let r = self.w.write_event(&e);
        self.check(r);
    }

    /// A chunk of the server's stderr.
    pub fn stderr(&mut self, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        let redacted = self.redactor.redact_text(&text).into_owned();
        let e = EventLine::new(Timestamp::now(), kinds::STDERR).with_payload(redacted.as_bytes());
        let r = self.w.write_event(&e);
        self.check(r);
    }

    /// Writes the end line (the server's exit status, or why there is none) and returns
    /// the path, or the first write error.
    pub fn finish(self, exit: Option<i64>) -> Result<PathBuf, (PathBuf, io::Error)> {
        if let Some(e) = self.failed {
            return Err((self.path, e));
        }
        let ending = match exit {
            Some(c) => Ending::ExitCode(c),
            None => Ending::Reason("server_status_unknown".into()),
        };
        match self.w.finish(ending, Timestamp::now()) {
            Ok(_) => Ok(self.path),
            Err(e) => Err((self.path, e)),
        }
    }
}
