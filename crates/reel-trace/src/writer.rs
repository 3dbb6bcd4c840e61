//! Writer: one whole line at a time, each handed to the OS in one `write` before the
//! next is started, so a producer killed with `kill -9` leaves a file that is readable up
//! to its last complete line.
//!
//! Message payloads are embedded verbatim: the writer copies the bytes it is given into
//! `raw` and never re-serialises them.
//!
//! Every line of every producer leaves through one place, `flush_line`; a writer given a
//! [`LiveSeal`] seals each line there, after it went to the sink, and lets the seal's
//! records follow the trace each time the sink is flushed (see [`crate::seal`]).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::value::RawValue;

use crate::errors::ErrorTally;
use crate::line::{Counts, Dir, End, Eol, Meta, Turn};
use crate::names;
use crate::seal::{FailureHook, LiveSeal};
use crate::time::Timestamp;

/// A message line to write (`dir` in/out), with reel's optional members.
#[derive(Debug, Clone, Copy)]
pub struct MessageLine<'a> {
    /// When the message was observed.
    pub t: Timestamp,
    /// Tape direction.
    pub dir: Dir,
    /// The payload: one complete JSON value on one line, copied verbatim.
    pub raw: &'a str,
    /// The MCP session (omitted on single-session stdio traces).
    pub session: Option<&'a str>,
    /// HTTP facts, already serialised as a JSON object.
    pub http: Option<&'a RawValue>,
    /// How the stdio line ended (CR LF, or no line break at the end of the stream).
    pub eol: Eol,
    /// Line breaks outside strings were removed from `raw`.
    pub reformatted: bool,
    /// The original bytes, base64, when `raw` was reformatted and they were asked for.
    pub raw_b64: Option<&'a str>,
    /// `"tape"` or `"live"`, on lines written by replay and verify.
    pub origin: Option<&'a str>,
    /// Whether this message is a JSON-RPC error response, when the producer already
    /// read it so (the recorder's one walk); `None`: the writer looks for itself (see
    /// [`ErrorTally::message_known`]). Counted in `end.counts.errors`.
    pub is_error: Option<bool>,
}

impl<'a> MessageLine<'a> {
    /// A plain message line.
    pub fn new(t: Timestamp, dir: Dir, raw: &'a str) -> Self {
        MessageLine {
            t,
            dir,
            raw,
            session: None,
            http: None,
            eol: Eol::Lf,
            reformatted: false,
            raw_b64: None,
            origin: None,
            is_error: None,
        }
    }
}

/// An extension line (`dir: "event"` etc.) to write.
#[derive(Debug, Serialize)]
pub struct EventLine<'a> {
    /// Timestamp, formatted.
    pub t: String,
    /// `event`, `command` or `telemetry`.
    pub dir: Dir,
    /// The kind, e.g. `reel.stderr`.
    pub kind: &'a str,
    /// For `reel.nonjson`: which pipe the line came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub side: Option<Dir>,
    /// UTF-8 payload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<&'a str>,
    /// Non-UTF-8 payload, base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<String>,
    /// A JSON payload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<&'a RawValue>,
    /// Other members.
    #[serde(flatten)]
    pub fields: serde_json::Map<String, serde_json::Value>,
}

impl<'a> EventLine<'a> {
    /// An event of `kind` at `t` with no payload yet.
    pub fn new(t: Timestamp, kind: &'a str) -> Self {
        EventLine {
            t: t.to_iso().as_str().to_owned(),
            dir: Dir::Event,
            kind,
            side: None,
            text: None,
            bytes: None,
            raw: None,
            fields: serde_json::Map::new(),
        }
    }

    /// Sets the payload from bytes: `text` when UTF-8, else base64 `bytes` (lossless).
    pub fn with_payload(mut self, payload: &'a [u8]) -> Self {
        match std::str::from_utf8(payload) {
            Ok(s) => self.text = Some(s),
            Err(_) => {
                use base64::Engine as _;
                self.bytes = Some(base64::engine::general_purpose::STANDARD.encode(payload));
            }
        }
        self
    }
}

/// How the trace ended.
#[derive(Debug, Clone)]
pub enum Ending {
    /// The wrapped process exited with this code (128+N for signal N, 127 if it never started).
    ExitCode(i64),
    /// A producer that wraps no process: `producer_shutdown`, `transport_error`, …
    Reason(String),
}

/// `http.req` of a message's `http` member (0: none).
fn http_req(http: &RawValue) -> u64 {
    #[derive(serde::Deserialize)]
    struct Http {
        #[serde(default)]
        req: Option<u64>,
    }
    serde_json::from_str::<Http>(http.get())
        .ok()
        .and_then(|h| h.req)
        .unwrap_or(0)
}

/// Writes trace lines to any `Write`, one `write_all` per line.
///
/// Give it an unbuffered sink (a `File`): the writer buffers each line itself and hands
/// it over whole.
pub struct TraceWriter<W: Write> {
    out: W,
    line: Vec<u8>,
    started: Timestamp,
    counts: Counts,
    /// `counts.errors` by the one rule of [`crate::errors`].
    errors: ErrorTally,
    bytes_written: u64,
    seal: Option<LiveSeal>,
}

impl<W: Write> TraceWriter<W> {
    /// A writer whose `end.durationMs` counts from `started`.
    pub fn new(out: W, started: Timestamp) -> Self {
        TraceWriter {
            out,
            line: Vec::with_capacity(4096),
            started,
            counts: Counts::default(),
            errors: ErrorTally::default(),
            bytes_written: 0,
            seal: None,
        }
    }

    /// Seals every line written from now on into `seal` (`reel rec --seal`). Give it
    /// before the first line: a seal covers a trace from its first line.
    pub fn seal_with(&mut self, seal: LiveSeal) {
        self.seal = Some(seal);
    }

    /// Calls `hook` once if the seal cannot be written; the trace goes on unsealed.
    pub fn on_seal_failure(&mut self, hook: FailureHook) {
        if let Some(s) = &mut self.seal {
            s.on_failure(hook);
        }
    }

    /// Line counts so far.
    pub fn counts(&self) -> Counts {
        Counts {
            errors: self.errors.errors(),
            ..self.counts
        }
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }

    /// Writes the meta line. `startedAt` is filled from the writer's start when absent.
    pub fn write_meta(&mut self, meta: &Meta) -> io::Result<()> {
        if meta.started_at.is_some() {
            return self.write_serialized(meta);
        }
        let mut m = meta.clone();
        m.started_at = Some(self.started.to_iso().as_str().to_owned());
        self.write_serialized(&m)
    }

    /// Writes a message line, copying `raw` verbatim.
    pub fn write_message(&mut self, m: &MessageLine<'_>) -> io::Result<()> {
        self.write_message_parts(m, &[m.raw])
    }

    /// Writes a message line whose `raw` is `parts` joined (`m.raw` is what error
    /// accounting reads: the same message with its long strings left out, or all of
    /// it). Parts past [`INLINE_RAW`] in all are written where they are, not copied
    /// into the line, and still as one whole line ([`write_all_parts`]).
    pub fn write_message_parts(&mut self, m: &MessageLine<'_>, parts: &[&str]) -> io::Result<()> {
        debug_assert!(
            parts.iter().all(|p| !p.contains('\n')),
            "raw must fit on one line"
        );
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let b = &mut self.line;
        b.clear();
        b.extend_from_slice(b"{\"t\":\"");
        b.extend_from_slice(m.t.to_iso().as_str().as_bytes());
        b.extend_from_slice(b"\",\"dir\":\"");
        b.extend_from_slice(m.dir.as_str().as_bytes());
        b.extend_from_slice(b"\"");
        if let Some(s) = m.session {
            b.extend_from_slice(b",\"session\":");
            push_json_string(b, s);
        }
        b.extend_from_slice(b",\"raw\":");
        let inline = len <= INLINE_RAW;
        let at = b.len();
        if inline {
            for p in parts {
                b.extend_from_slice(p.as_bytes());
            }
        }
        if let Some(h) = m.http {
            b.extend_from_slice(b",\"http\":");
            b.extend_from_slice(h.get().as_bytes());
        }
        if let Some(eol) = m.eol.member() {
            b.extend_from_slice(b",\"eol\":\"");
            b.extend_from_slice(eol.as_bytes());
            b.push(b'"');
        }
        if m.reformatted {
            b.extend_from_slice(b",\"reformatted\":true");
        }
        if let Some(r) = m.raw_b64 {
            b.extend_from_slice(b",\"raw_b64\":");
            push_json_string(b, r);
        }
        if let Some(o) = m.origin {
            b.extend_from_slice(b",\"origin\":");
            push_json_string(b, o);
        }
        b.extend_from_slice(b"}\n");
        match m.dir {
            Dir::In => self.counts.inbound += 1,
            Dir::Out => self.counts.outbound += 1,
            _ => self.counts.events += 1,
        }
        let req = m.http.map_or(0, http_req);
        // A producer that knows a line is an error says so; the others are looked at.
        self.errors
            .message_known(m.dir, m.session, req, m.raw, m.is_error);
        if inline {
            return self.flush_line();
        }
        let (head, tail) = self.line.split_at(at);
        let mut all: Vec<&[u8]> = Vec::with_capacity(parts.len() + 2);
        all.push(head);
        all.extend(parts.iter().map(|p| p.as_bytes()));
        all.push(tail);
        write_all_parts(&mut self.out, &all)?;
        self.bytes_written += (self.line.len() + len) as u64;
        if let Some(s) = &mut self.seal {
            s.line_parts(&all);
        }
        Ok(())
    }

    /// Writes an extension line.
    pub fn write_event(&mut self, e: &EventLine<'_>) -> io::Result<()> {
        self.counts.events += 1;
        if e.kind == crate::line::kinds::LLM_ERROR {
            self.errors.llm_error();
        }
        self.write_serialized(e)
    }

    /// Writes a turn record.
    pub fn write_turn(&mut self, turn: &Turn) -> io::Result<()> {
        self.counts.turns += 1;
        self.errors.turn(turn);
        self.write_serialized(turn)
    }

    /// Writes a line read from another trace: typed lines (meta, turn, end) from their
    /// typed form, so edits to them are kept along with every unknown member; all other
    /// lines as their original bytes.
    pub fn write_parsed(
        &mut self,
        line: &crate::line::Line<'_>,
        original: &[u8],
    ) -> io::Result<()> {
        use crate::line::Line;
        match line {
            Line::Meta(m) => self.write_serialized(m),
            Line::Turn(t) => self.write_turn(t),
            Line::End(e) => self.write_serialized(e),
            Line::Message(v) => {
                match v.dir() {
                    Some(Dir::In) => self.counts.inbound += 1,
                    Some(Dir::Out) => self.counts.outbound += 1,
                    _ => {}
                }
                if let (Some(dir), Some(raw)) = (v.dir(), v.raw_str()) {
                    self.errors
                        .message(dir, v.session.as_deref(), v.http_req(), raw);
                }
                self.write_verbatim(original)
            }
            Line::Event(v) => {
                self.counts.events += 1;
                if v.kind.as_deref() == Some(crate::line::kinds::LLM_ERROR) {
                    self.errors.llm_error();
                }
                self.write_verbatim(original)
            }
            Line::Other(_) => self.write_verbatim(original),
        }
    }

    /// Writes a line given as bytes (a line read from another trace), verbatim.
    pub fn write_verbatim(&mut self, line: &[u8]) -> io::Result<()> {
        self.line.clear();
        self.line.extend_from_slice(line);
        self.line.push(b'\n');
        self.flush_line()
    }

    /// Writes any serialisable line.
    pub fn write_serialized<T: Serialize>(&mut self, value: &T) -> io::Result<()> {
        self.line.clear();
        serde_json::to_writer(&mut self.line, value)?;
        self.line.push(b'\n');
        self.flush_line()
    }

    /// Flushes the sink. A sink that batches whole lines (the recorder writes each batch
    /// of queued lines with one system call) hands everything it holds to the file.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()?;
        if let Some(s) = &mut self.seal {
            s.flushed();
        }
        Ok(())
    }

    /// Writes the `end` line with `durationMs` and `counts`, and returns the sink.
    pub fn finish(self, ending: Ending, at: Timestamp) -> io::Result<W> {
        self.finish_with(ending, at, serde_json::Map::new())
    }

    /// [`finish`](Self::finish), with more members on the `end` line (a producer's
    /// summary, e.g. `llm`).
    pub fn finish_with(
        mut self,
        ending: Ending,
        at: Timestamp,
        extra: serde_json::Map<String, serde_json::Value>,
    ) -> io::Result<W> {
        let mut end = End {
            t: Some(at.to_iso().as_str().to_owned()),
            ty: "end".to_owned(),
            duration_ms: Some((at.0 - self.started.0).max(0) as f64),
            counts: Some(self.counts()),
            extra,
            ..End::default()
        };
        match ending {
            Ending::ExitCode(c) => end.exit_code = Some(c),
            Ending::Reason(r) => end.reason = Some(r),
        }
        self.write_serialized(&end)?;
        self.out.flush()?;
        if let Some(s) = self.seal.take() {
            s.finish(at);
        }
        Ok(self.out)
    }

    fn flush_line(&mut self) -> io::Result<()> {
        self.out.write_all(&self.line)?;
        self.bytes_written += self.line.len() as u64;
        if let Some(s) = &mut self.seal {
            s.line(&self.line);
        }
        Ok(())
    }
}

/// A message's `raw` up to this size is copied into the line it is written in; a
/// longer one is written from where it is, in parts.
pub const INLINE_RAW: usize = 1 << 20;

/// Writes `parts` as one write: through [`Write::write_vectored`] until all is written,
/// so a sink that keeps whole writes ([`WholeLinesFile`], [`crate::target::BatchSink`])
/// keeps the parts of one line together.
pub fn write_all_parts<W: Write + ?Sized>(out: &mut W, parts: &[&[u8]]) -> io::Result<()> {
    let mut slices: Vec<io::IoSlice<'_>> = parts
        .iter()
        .filter(|p| !p.is_empty())
        .map(|p| io::IoSlice::new(p))
        .collect();
    let mut rest = &mut slices[..];
    while !rest.is_empty() {
        match out.write_vectored(rest) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => io::IoSlice::advance_slices(&mut rest, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Appends `s` as a JSON string literal.
pub(crate) fn push_json_string(out: &mut Vec<u8>, s: &str) {
    // serde_json writes a &str as a correctly escaped string; writing to a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

/// A trace file that holds only whole writes: when a `write_all` fails partway (a full
/// disk, `ulimit -f`), what it wrote is cut off again, so the file still ends with the
/// last whole line before it. Give it whole lines (or batches of them) per `write_all`,
/// as [`TraceWriter`] does.
pub struct WholeLinesFile {
    file: File,
    len: u64,
}

impl WholeLinesFile {
    /// `file`, to be appended to from its current end.
    pub fn new(file: File) -> io::Result<WholeLinesFile> {
        let len = file.metadata()?.len();
        Ok(WholeLinesFile { file, len })
    }
}

impl WholeLinesFile {
    fn write_whole(&mut self, parts: &[&[u8]]) -> io::Result<()> {
        use std::io::{Seek, SeekFrom};
        let mut written = 0;
        for p in parts {
            if let Err(e) = self.file.write_all(p) {
                // Best effort: a file that cannot be cut is left as it is.
                let _ = self.file.set_len(self.len);
                let _ = self.file.seek(SeekFrom::Start(self.len));
                return Err(e);
            }
            written += p.len() as u64;
        }
        self.len += written;
        Ok(())
    }
}

impl Write for WholeLinesFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf).map(|()| buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.write_whole(&[buf])
    }

    /// All the buffers, or none of them: one line in parts is one write.
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        let parts: Vec<&[u8]> = bufs.iter().map(|b| &**b).collect();
        self.write_whole(&parts)?;
        Ok(parts.iter().map(|p| p.len()).sum())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// Creates a new trace file `<dir>/<stamp>-<label>.jsonl`, mode 0600, never overwriting:
/// when the name is taken (two runs in one millisecond), `-2`, `-3`… is appended.
pub fn create_trace_file(
    dir: &Path,
    started: Timestamp,
    label: &str,
) -> io::Result<(File, PathBuf)> {
    let stem = names::file_stem(started, label);
    for n in 1..1000 {
        let name = if n == 1 {
            format!("{stem}.jsonl")
        } else {
            format!("{stem}-{n}.jsonl")
        };
        let path = dir.join(name);
        let mut opts = OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        match opts.open(&path) {
            Ok(f) => return Ok((f, path)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!(
            "{}: too many traces with this name in one millisecond",
            dir.display()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::line::{Line, parse_line};

    #[test]
    fn the_end_line_counts_errors_by_the_one_rule() {
        let mut w = TraceWriter::new(Vec::new(), Timestamp(0));
        let t = Timestamp(1);
        let mut msg = |dir, raw: &str, is_error: Option<bool>| {
            let mut m = MessageLine::new(t, dir, raw);
            m.is_error = is_error;
            w.write_message(&m).unwrap();
        };
        msg(
            Dir::In,
            r#"{"jsonrpc":"2.0","id":0,"method":"server/discover"}"#,
            Some(false),
        );
        msg(
            Dir::Out,
            r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"no"}}"#,
            Some(true),
        );
        msg(
            Dir::In,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            Some(false),
        );
        msg(
            Dir::Out,
            r#"{"jsonrpc":"2.0","id":2,"result":{"content":[],"isError":true}}"#,
            Some(false),
        );
        // A producer that did not classify its lines: looked at.
        msg(
            Dir::Out,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"x"}}"#,
            None,
        );
        assert_eq!(
            w.counts().errors,
            2,
            "the tool error and the JSON-RPC error"
        );
        let out = w.finish(Ending::ExitCode(0), Timestamp(2)).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.lines().last().unwrap().contains(r#""errors":2"#),
            "{text}"
        );
    }

    #[test]
    fn a_rewritten_line_with_a_long_number_rewrites_to_itself() {
        // Found by fuzzing (fuzz/regressions/trace_line): serde_json's default float
        // parsing may round a long literal one unit in the last place off, so the
        // number an end line was written with read back as another one, and every
        // rewrite of the trace moved it again.
        let line = br#"{"type":"end","t":"2026-01-01T00:00:01.000Z","exitCode":0,"x":{"errors":11111111111111100000000000000006323172129685518563}}"#;
        let rewrite = |bytes: &[u8]| {
            let mut out = Vec::new();
            let mut w = TraceWriter::new(&mut out, Timestamp(0));
            w.write_parsed(&parse_line(bytes).unwrap(), bytes).unwrap();
            drop(w);
            out.pop();
            out
        };
        let once = rewrite(line);
        assert_eq!(rewrite(&once), once, "{}", String::from_utf8_lossy(&once));
    }

    #[test]
    fn message_lines_embed_raw_verbatim() {
        let mut w = TraceWriter::new(Vec::new(), Timestamp(0));
        let raw = r#"{"jsonrpc":"2.0", "id":1 ,"result":{"x":1.50}}"#;
        let mut m = MessageLine::new(Timestamp(1234), Dir::Out, raw);
        m.session = Some("s\"1");
        m.eol = Eol::Crlf;
        w.write_message(&m).unwrap();
        let out = w.finish(Ending::ExitCode(0), Timestamp(5000)).unwrap();
        let text = String::from_utf8(out).unwrap();
        let mut lines = text.lines();
        let first = lines.next().unwrap();
        assert_eq!(
            first,
            r#"{"t":"1970-01-01T00:00:01.234Z","dir":"out","session":"s\"1","raw":{"jsonrpc":"2.0", "id":1 ,"result":{"x":1.50}},"eol":"crlf"}"#
        );
        let Line::Message(v) = parse_line(first.as_bytes()).unwrap() else {
            panic!()
        };
        assert_eq!(v.raw_str(), Some(raw));
        let Line::End(end) = parse_line(lines.next().unwrap().as_bytes()).unwrap() else {
            panic!()
        };
        assert_eq!(end.exit_code, Some(0));
        assert_eq!(end.duration_ms, Some(5000.0));
        assert_eq!(end.counts.unwrap().outbound, 1);
    }

    #[test]
    fn events_keep_non_utf8_payloads() {
        let mut w = TraceWriter::new(Vec::new(), Timestamp(0));
        w.write_event(&EventLine::new(Timestamp(0), "reel.stderr").with_payload(b"ok\n"))
            .unwrap();
        w.write_event(&EventLine::new(Timestamp(0), "reel.nonjson").with_payload(b"\xff\xfe"))
            .unwrap();
        let text =
            String::from_utf8(w.finish(Ending::Reason("x".into()), Timestamp(0)).unwrap()).unwrap();
        assert!(text.contains(r#""text":"ok\n""#), "{text}");
        assert!(text.contains(r#""bytes":"//4=""#), "{text}");
    }

    #[test]
    fn trace_files_are_private_and_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let (_, a) = create_trace_file(dir.path(), Timestamp(0), "x").unwrap();
        let (_, b) = create_trace_file(dir.path(), Timestamp(0), "x").unwrap();
        assert_ne!(a, b);
        assert_eq!(
            a.file_name().unwrap().to_str().unwrap(),
            "1970-01-01T00-00-00-000Z-x.jsonl"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&a).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
