//! `--record`: the replay session itself, written as a trace.

use super::*;

/// `--record`: the replay session written as a trace (tape direction: the client's
/// lines are `in`, what it was sent is `out`), every message line marked with its
/// `origin` (`tape`: from the recording or made by reel; `live`: the client, or the live
/// server of `--subset`). Live content is redacted with the tape's rules.
pub(super) struct Recorder {
    pub(super) w: TraceWriter<File>,
    pub(super) path: PathBuf,
    pub(super) redactor: Redactor,
    pub(super) failed: bool,
}

impl Recorder {
    pub(super) fn create(
        dir: &Path,
        opts: &PlayOptions,
        head: Option<&Meta>,
        redactor: &Redactor,
    ) -> Result<Recorder, PlayError> {
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
        let mut w = TraceWriter::new(file, started);
        let version = reel_trace::REEL_VERSION;
        let meta = Meta {
            v: Some(Value::from(1)),
            ty: "meta".into(),
            label: Some(label),
            command: Some(Value::from(redactor.redact_command(&opts.argv))),
            kind: Some("mcp".into()),
            source: Some(format!("reel@{version}")),
            producer: Some(serde_json::json!({"name": "reel", "version": version})),
            reel: Some(reel_trace::line::REEL_VOCABULARY_VERSION),
            transport: Some("stdio".into()),
            redaction: Some(redactor.describe()),
            ..Meta::default()
        };
        w.write_meta(&meta).map_err(err)?;
        Ok(Recorder {
            w,
            path,
            redactor: redactor.clone(),
            failed: false,
        })
    }

    pub(super) fn check(&mut self, r: io::Result<()>) {
        if r.is_err() {
            self.failed = true;
        }
    }

    pub(super) fn in_line(&mut self, text: &str, crlf: bool) {
        let raw = self.redactor.redact_json(text);
        let mut m = MessageLine::new(Timestamp::now(), Dir::In, &raw);
        m.crlf = crlf;
        m.origin = Some("live");
        let r = self.w.write_message(&m);
        self.check(r);
    }

    pub(super) fn out_line(&mut self, text: &str, origin: &str, is_error: bool) {
        let raw = self.redactor.redact_json(text);
        let mut m = MessageLine::new(Timestamp::now(), Dir::Out, &raw);
        m.origin = Some(origin);
        m.is_error = is_error;
        let r = self.w.write_message(&m);
        self.check(r);
    }

    pub(super) fn nonjson(&mut self, bytes: &[u8]) {
        self.nonjson_side(bytes, Dir::In);
    }

    pub(super) fn nonjson_out(&mut self, bytes: &[u8]) {
        self.nonjson_side(bytes, Dir::Out);
    }

    pub(super) fn nonjson_side(&mut self, bytes: &[u8], side: Dir) {
        let text = String::from_utf8_lossy(bytes);
        let redacted = self.redactor.redact_text(&text).into_owned();
        let payload = if std::str::from_utf8(bytes).is_ok() {
            redacted.as_bytes().to_vec()
        } else {
            bytes.to_vec()
        };
        let mut e = EventLine::new(Timestamp::now(), kinds::NONJSON).with_payload(&payload);
        e.side = Some(side);
        let r = self.w.write_event(&e);
        self.check(r);
    }

    pub(super) fn stderr(&mut self, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        let redacted = self.redactor.redact_text(&text).into_owned();
        let e = EventLine::new(Timestamp::now(), kinds::STDERR).with_payload(redacted.as_bytes());
        let r = self.w.write_event(&e);
        self.check(r);
    }

    pub(super) fn finish(self, ending: Ending) -> io::Result<PathBuf> {
        if self.failed {
            return Err(io::Error::other(format!(
                "{}: some lines could not be written",
                self.path.display()
            )));
        }
        self.w.finish(ending, Timestamp::now())?;
        Ok(self.path)
    }
}
