//! `--record`: the replay session itself, written as a trace. Over HTTP every tape
//! server writes to the one trace (through [`RecordTo`]), each line with the live
//! session it belongs to.

use std::sync::{Arc, Mutex};

use reel_redact::record::{LineRecorder, Tags, reel_meta};

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use reel_redact::redact::Redactor;
use reel_trace::line::{Meta, kinds};
use reel_trace::writer::create_trace_file;
use reel_trace::{Dir, Ending, Eol, Timestamp, TraceWriter};

use super::options::{PlayError, PlayOptions};

/// A tape server's handle on the replay's trace: the shared writer and the session its
/// lines belong to (none over stdio).
pub(crate) struct RecordTo {
    rec: Arc<Mutex<ReplayRecording>>,
    session: Option<String>,
}

impl RecordTo {
    pub(crate) fn new(rec: Arc<Mutex<ReplayRecording>>, session: Option<String>) -> RecordTo {
        RecordTo { rec, session }
    }

    fn with(&self, f: impl FnOnce(&mut ReplayRecording, Option<&str>)) {
        // A writer poisoned by a panic elsewhere is still the best record there is.
        let mut r = self.rec.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut r, self.session.as_deref());
    }

    pub(super) fn in_line(&mut self, text: &str, crlf: bool) {
        self.with(|r, s| r.in_line(text, crlf, s));
    }

    pub(super) fn out_line(&mut self, text: &str, origin: &str) {
        self.with(|r, s| r.out_line(text, origin, s));
    }

    pub(super) fn nonjson(&mut self, bytes: &[u8]) {
        self.with(|r, _| r.nonjson(bytes));
    }

    pub(super) fn nonjson_out(&mut self, bytes: &[u8]) {
        self.with(|r, _| r.nonjson_out(bytes));
    }

    pub(super) fn stderr(&mut self, bytes: &[u8]) {
        self.with(|r, _| r.stderr(bytes));
    }
}

/// `--record`: the replay session written as a trace (tape direction: the client's
/// lines are `in`, what it was sent is `out`), every message line marked with its
/// `origin` (`tape`: from the recording or made by reel; `live`: the client, or the live
/// server of `--subset`). Live content is redacted with the tape's rules, through the
/// one line-recording path every producer uses.
pub(crate) struct ReplayRecording {
    lines: LineRecorder<File>,
    path: PathBuf,
    failed: bool,
}

impl ReplayRecording {
    pub(crate) fn create(
        dir: &Path,
        opts: &PlayOptions,
        head: Option<&Meta>,
        redactor: &Redactor,
        transport: &str,
    ) -> Result<ReplayRecording, PlayError> {
        let err = |source| PlayError::Record {
            dir: dir.to_owned(),
            source,
        };
        reel_trace::names::ensure_dir(dir).map_err(err)?;
        let started = Timestamp::now();
        let base = head.and_then(|m| m.label.clone()).unwrap_or_else(|| {
            opts.trace
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "mcp".into())
        });
        let label = format!("{base}-play");
        let (file, path) = create_trace_file(dir, started, &label).map_err(err)?;
        let mut lines = LineRecorder::new(TraceWriter::new(file, started), redactor.clone());
        lines
            .write_meta(&reel_meta(&label, &opts.argv, "mcp", transport, redactor))
            .map_err(err)?;
        Ok(ReplayRecording {
            lines,
            path,
            failed: false,
        })
    }

    fn check(&mut self, r: io::Result<()>) {
        if r.is_err() {
            self.failed = true;
        }
    }

    fn in_line(&mut self, text: &str, crlf: bool, session: Option<&str>) {
        let tags = Tags {
            session,
            origin: Some("live"),
            ..Tags::default()
        };
        let r = self.lines.message(
            Timestamp::now(),
            Dir::In,
            text.as_bytes(),
            Eol::of(crlf, true),
            tags,
        );
        self.check(r);
    }

    fn out_line(&mut self, text: &str, origin: &str, session: Option<&str>) {
        let tags = Tags {
            session,
            origin: Some(origin),
            ..Tags::default()
        };
        let r = self
            .lines
            .message(Timestamp::now(), Dir::Out, text.as_bytes(), Eol::Lf, tags);
        self.check(r);
    }

    fn nonjson(&mut self, bytes: &[u8]) {
        self.nonjson_side(bytes, Dir::In);
    }

    fn nonjson_out(&mut self, bytes: &[u8]) {
        self.nonjson_side(bytes, Dir::Out);
    }

    fn nonjson_side(&mut self, bytes: &[u8], side: Dir) {
        let r = self.lines.event(
            kinds::NONJSON,
            Some(side),
            Timestamp::now(),
            bytes,
            Eol::Lf,
            Tags::default(),
        );
        self.check(r);
    }

    fn stderr(&mut self, bytes: &[u8]) {
        let r = self.lines.stderr(Timestamp::now(), bytes, Eol::Lf);
        self.check(r);
    }

    pub(crate) fn finish(self, ending: Ending) -> io::Result<PathBuf> {
        if self.failed {
            return Err(io::Error::other(format!(
                "{}: some lines could not be written",
                self.path.display()
            )));
        }
        self.lines.finish(ending, Timestamp::now())?;
        Ok(self.path)
    }
}

/// Ends the replay's own trace once every server that wrote to it is done.
pub(crate) fn finish_recorder(
    r: Arc<Mutex<ReplayRecording>>,
    ending: Ending,
) -> io::Result<PathBuf> {
    let rec = Arc::try_unwrap(r)
        .map_err(|_| io::Error::other("a tape server still holds the replay's trace"))?
        .into_inner()
        .map_err(|_| io::Error::other("a tape server panicked while writing the replay's trace"))?;
    rec.finish(ending)
}
