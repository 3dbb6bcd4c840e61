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

use reel_redact::record::{LineRecorder, Tags, reel_meta};
use reel_redact::redact::Redactor;
use reel_trace::line::kinds;
use reel_trace::writer::create_trace_file;
use reel_trace::{Dir, Ending, Eol, Timestamp, TraceWriter};

/// The trace being written.
pub struct LiveRecord {
    lines: LineRecorder<File>,
    path: PathBuf,
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
        let mut lines = LineRecorder::new(TraceWriter::new(file, started), redactor.clone());
        lines.write_meta(&reel_meta(label, command, "mcp", transport, redactor))?;
        Ok(LiveRecord {
            lines,
            path,
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
    pub fn sent(&mut self, text: &str) {
        self.message(Dir::In, text, "tape");
    }

    /// A message the live server sent.
    pub fn received(&mut self, text: &str) {
        self.message(Dir::Out, text, "live");
    }

    /// A message line; the recorder tells an error from its envelope.
    fn message(&mut self, dir: Dir, text: &str, origin: &str) {
        let tags = Tags {
            origin: Some(origin),
            ..Tags::default()
        };
        let r = self
            .lines
            .message(Timestamp::now(), dir, text.as_bytes(), Eol::Lf, tags);
        self.check(r);
    }

    /// A stdout line of the server that is not JSON.
    pub fn nonjson(&mut self, bytes: &[u8]) {
        let r = self.lines.event(
            kinds::NONJSON,
            Some(Dir::Out),
            Timestamp::now(),
            bytes,
            Eol::Lf,
            Tags::default(),
        );
        self.check(r);
    }

    /// A chunk of the server's stderr.
    pub fn stderr(&mut self, bytes: &[u8]) {
        let r = self.lines.stderr(Timestamp::now(), bytes, Eol::Lf);
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
        match self.lines.finish(ending, Timestamp::now()) {
            Ok(_) => Ok(self.path),
            Err(e) => Err((self.path, e)),
        }
    }
}
