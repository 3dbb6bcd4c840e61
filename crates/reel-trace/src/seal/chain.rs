//! The seal's core: the chain of line digests (SHA-256, or HMAC-SHA256 under a key),
//! the sidecar's head, record and close lines as a [`Sealer`] writes them, and the
//! [`LiveSeal`] a trace writer carries. The parent module says what a seal is.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use hmac::{Hmac, Mac};
use serde::Serialize;
use sha2::{Digest as _, Sha256};

use super::SealKey;
use crate::reader::RawLine;
use crate::time::Timestamp;

/// Identifies the sidecar format (the head record's `schema`).
pub const SCHEMA: &str = "reel.seal/1";
/// What the sidecar's name adds to the trace's: `x.jsonl` → `x.jsonl.seal`.
pub const SUFFIX: &str = ".seal";
/// `chain` of an unkeyed seal.
pub const CHAIN_SHA256: &str = "sha256";
/// `chain` of a keyed seal.
pub const CHAIN_HMAC: &str = "hmac-sha256";
/// What F is applied to, after the last chain value, in the close record.
const CLOSE_TAG: &[u8] = b"close";

/// A SHA-256 value.
pub type Digest = [u8; 32];

/// The sidecar of the trace at `trace`: the same path with [`SUFFIX`] added.
pub fn sidecar_path(trace: &Path) -> PathBuf {
    let mut p = trace.as_os_str().to_owned();
    p.push(SUFFIX);
    PathBuf::from(p)
}

/// `d_n` of a line given as written: its bytes and its line ending.
pub fn line_digest(line: &[u8]) -> Digest {
    Sha256::digest(line).into()
}

/// `d_n` of a line as a reader found it: its bytes and the ending the reader took off.
pub fn raw_line_digest(raw: &RawLine<'_>) -> Digest {
    let mut h = Sha256::new();
    h.update(raw.bytes);
    match (raw.terminated, raw.crlf) {
        (true, true) => h.update(b"\r\n"),
        (true, false) => h.update(b"\n"),
        // A CR at EOF without LF stays part of the line's bytes for the reader.
        (false, true) => h.update(b"\r"),
        (false, false) => {}
    }
    h.finalize().into()
}

/// F, the chain's function: SHA-256, or HMAC-SHA-256 under a key.
#[derive(Clone)]
pub(crate) enum ChainFn {
    Sha256,
    Hmac(Box<Hmac<Sha256>>),
}

impl ChainFn {
    pub(crate) fn new(key: Option<&SealKey>) -> ChainFn {
        match key {
            // Any key length is valid for HMAC: new_from_slice cannot fail.
            Some(k) => match Hmac::<Sha256>::new_from_slice(&k.bytes) {
                Ok(mac) => ChainFn::Hmac(Box::new(mac)),
                Err(_) => ChainFn::Sha256,
            },
            None => ChainFn::Sha256,
        }
    }

    pub(crate) fn name(&self) -> &'static str {
        match self {
            ChainFn::Sha256 => CHAIN_SHA256,
            ChainFn::Hmac(_) => CHAIN_HMAC,
        }
    }

    fn apply(&self, a: &[u8], b: &[u8]) -> Digest {
        match self {
            ChainFn::Sha256 => {
                let mut h = Sha256::new();
                h.update(a);
                h.update(b);
                h.finalize().into()
            }
            ChainFn::Hmac(mac) => {
                let mut m = (**mac).clone();
                m.update(a);
                m.update(b);
                m.finalize().into_bytes().into()
            }
        }
    }
}

/// The running chain value `c_n`.
#[derive(Clone)]
pub(crate) struct Chain {
    f: ChainFn,
    value: Digest,
}

impl Chain {
    /// `c_0`, from the digest of the head line as written (LF included).
    pub(crate) fn start(f: ChainFn, head: &Digest) -> Chain {
        let value = f.apply(head, &[]);
        Chain { f, value }
    }

    /// `c_n` from `c_(n-1)` and `d_n`.
    pub(crate) fn link(&mut self, d: &Digest) -> Digest {
        self.value = self.f.apply(&self.value, d);
        self.value
    }

    /// The close record's chain value.
    pub(crate) fn closing(&self) -> Digest {
        self.f.apply(&self.value, CLOSE_TAG)
    }
}

/// The head record.
#[derive(Serialize)]
struct HeadRecord<'a> {
    schema: &'static str,
    #[serde(rename = "type")]
    ty: &'static str,
    files: &'a [String],
    t: &'a str,
    producer: serde_json::Value,
    chain: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<String>,
    /// A seal of a finished trace commits to its number of lines up front (covered by
    /// the chain through `c_0`): cut at the tail with its close record, it shows.
    #[serde(skip_serializing_if = "Option::is_none")]
    lines: Option<u64>,
}

/// The close record.
#[derive(Serialize)]
struct CloseRecord<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    lines: u64,
    chain: String,
    t: &'a str,
}

/// Seals lines, one record each, into a sidecar sink. Records wait in memory until
/// [`Sealer::flush`], so a caller decides when the sidecar may catch up with the trace.
pub struct Sealer<S: Write> {
    sink: S,
    chain: Chain,
    lines: u64,
    pending: Vec<u8>,
}

impl<S: Write> Sealer<S> {
    /// A seal of the trace whose files (names, in reading order) are `files`, started
    /// at `at`, keyed when `key` is given. The head record waits for the first flush.
    pub fn new(sink: S, files: &[String], at: Timestamp, key: Option<&SealKey>) -> Sealer<S> {
        Sealer::start(sink, files, at, key, None)
    }

    /// [`Sealer::new`] for a finished trace of `lines` lines: the head commits to the
    /// count, so the seal must close after exactly that many records.
    pub fn committed(
        sink: S,
        files: &[String],
        at: Timestamp,
        key: Option<&SealKey>,
        lines: u64,
    ) -> Sealer<S> {
        Sealer::start(sink, files, at, key, Some(lines))
    }

    fn start(
        sink: S,
        files: &[String],
        at: Timestamp,
        key: Option<&SealKey>,
        committed: Option<u64>,
    ) -> Sealer<S> {
        let f = ChainFn::new(key);
        let t = at.to_iso();
        let head = HeadRecord {
            schema: SCHEMA,
            ty: "head",
            files,
            t: t.as_str(),
            producer: serde_json::json!({ "name": "reel", "version": crate::line::REEL_VERSION }),
            chain: f.name(),
            key: key.map(SealKey::id),
            lines: committed,
        };
        let mut pending = Vec::with_capacity(4096);
        // Serialising plain strings into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut pending, &head);
        pending.push(b'\n');
        let chain = Chain::start(f, &line_digest(&pending));
        Sealer {
            sink,
            chain,
            lines: 0,
            pending,
        }
    }

    /// Seals a line given as written: its bytes and its line ending.
    pub fn seal_line(&mut self, line: &[u8]) {
        self.push(line_digest(line));
    }

    /// Seals a line as a reader found it.
    pub fn seal_raw(&mut self, raw: &RawLine<'_>) {
        self.push(raw_line_digest(raw));
    }

    fn push(&mut self, d: Digest) {
        self.lines += 1;
        let c = self.chain.link(&d);
        // Formatted in place: this runs once per recorded line.
        let mut hex_d = [0u8; 64];
        let mut hex_c = [0u8; 64];
        // Both buffers are exactly twice the digest's length: encoding cannot fail.
        let _ = hex::encode_to_slice(d, &mut hex_d);
        let _ = hex::encode_to_slice(c, &mut hex_c);
        let p = &mut self.pending;
        let _ = write!(p, "{{\"n\":{},\"sha256\":\"", self.lines);
        p.extend_from_slice(&hex_d);
        p.extend_from_slice(b"\",\"chain\":\"");
        p.extend_from_slice(&hex_c);
        p.extend_from_slice(b"\"}\n");
    }

    /// Lines sealed so far.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Writes the records waiting in memory to the sidecar, in one write.
    pub fn flush(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            let r = self.sink.write_all(&self.pending);
            self.pending.clear();
            r?;
        }
        self.sink.flush()
    }

    /// Writes the close record (and everything before it) and returns the sink.
    pub fn close(mut self, at: Timestamp) -> io::Result<S> {
        let t = at.to_iso();
        let record = CloseRecord {
            ty: "close",
            lines: self.lines,
            chain: hex::encode(self.chain.closing()),
            t: t.as_str(),
        };
        // Serialising plain values into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut self.pending, &record);
        self.pending.push(b'\n');
        self.flush()?;
        Ok(self.sink)
    }
}

/// What a [`LiveSeal`] calls when the sidecar cannot be written.
pub type FailureHook = Box<dyn FnMut(&io::Error) + Send>;

/// A [`Sealer`] riding along with a [`TraceWriter`](crate::TraceWriter): the writer
/// hands it each line after the line went to the trace's sink, and tells it when the
/// sink was flushed; only then are the records written. When the sidecar cannot be
/// written, sealing stops, the hook hears it once, and the trace goes on.
pub struct LiveSeal {
    sealer: Option<Sealer<Box<dyn Write + Send>>>,
    on_failure: Option<FailureHook>,
    /// A failure seen before a hook was given.
    failed: Option<io::Error>,
}

impl LiveSeal {
    /// Seals into `sealer` as the trace is written.
    pub fn new(sealer: Sealer<Box<dyn Write + Send>>) -> LiveSeal {
        LiveSeal {
            sealer: Some(sealer),
            on_failure: None,
            failed: None,
        }
    }

    /// Calls `hook` once if the seal cannot be written (at once when it already failed).
    pub fn on_failure(&mut self, mut hook: FailureHook) {
        if let Some(e) = self.failed.take() {
            hook(&e);
        }
        self.on_failure = Some(hook);
    }

    /// A line (bytes and LF) was handed to the trace's sink.
    pub(crate) fn line(&mut self, line: &[u8]) {
        if let Some(s) = &mut self.sealer {
            s.seal_line(line);
        }
    }

    /// A line handed to the sink in parts (bytes and LF, joined).
    pub(crate) fn line_parts(&mut self, parts: &[&[u8]]) {
        if let Some(s) = &mut self.sealer {
            let mut h = Sha256::new();
            for p in parts {
                h.update(p);
            }
            s.push(h.finalize().into());
        }
    }

    /// The trace's sink was flushed: the records of its lines may follow.
    pub(crate) fn flushed(&mut self) {
        if let Some(s) = &mut self.sealer {
            if let Err(e) = s.flush() {
                self.fail(e);
            }
        }
    }

    /// The trace is complete: writes the close record.
    pub(crate) fn finish(mut self, at: Timestamp) {
        if let Some(s) = self.sealer.take() {
            if let Err(e) = s.close(at) {
                self.fail(e);
            }
        }
    }

    fn fail(&mut self, e: io::Error) {
        self.sealer = None;
        match &mut self.on_failure {
            Some(hook) => hook(&e),
            None => self.failed = Some(e),
        }
    }
}

/// Creates the sidecar for a trace being recorded: `<trace>.seal`, mode 0600, never
/// overwriting one that exists.
pub fn create_sidecar(trace: &Path) -> io::Result<(std::fs::File, PathBuf)> {
    let path = sidecar_path(trace);
    let file = private_options().create_new(true).open(&path)?;
    Ok((file, path))
}

pub(crate) fn private_options() -> OpenOptions {
    crate::names::private_file_options()
}

/// The last component of a path, as the head's `files` lists it.
pub(crate) fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seal::{SealStatus, verify};

    fn key() -> SealKey {
        SealKey::new(b"0123456789abcdef-key".to_vec()).unwrap()
    }

    #[test]
    fn a_line_digest_is_sha256_of_the_line_with_its_ending() {
        // printf '{"a":1}\n' | sha256sum
        let d = line_digest(b"{\"a\":1}\n");
        let raw = RawLine {
            number: 1,
            bytes: b"{\"a\":1}",
            terminated: true,
            crlf: false,
            skipped: None,
        };
        assert_eq!(d, raw_line_digest(&raw));
        let crlf = RawLine { crlf: true, ..raw };
        assert_eq!(raw_line_digest(&crlf), line_digest(b"{\"a\":1}\r\n"));
        let torn = RawLine {
            terminated: false,
            ..raw
        };
        assert_eq!(raw_line_digest(&torn), line_digest(b"{\"a\":1}"));
        assert_ne!(d, raw_line_digest(&torn));
    }

    #[test]
    fn records_follow_the_head_and_the_chain_links_them() {
        let files = ["t.jsonl".to_owned()];
        let mut s = Sealer::new(Vec::new(), &files, Timestamp(0), None);
        s.seal_line(b"a\n");
        s.seal_line(b"b\n");
        let text = String::from_utf8(s.close(Timestamp(0)).unwrap()).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(lines[0]["schema"], SCHEMA);
        assert_eq!(lines[0]["chain"], CHAIN_SHA256);
        assert!(lines[0].get("key").is_none());
        assert_eq!(lines[1]["n"], 1);
        assert_eq!(lines[1]["sha256"], hex::encode(line_digest(b"a\n")));
        // c_1 = SHA-256(c_0 ‖ d_1), c_0 = SHA-256(SHA-256(head line)).
        let head = format!("{}\n", text.lines().next().unwrap());
        let c0: Digest = Sha256::digest(line_digest(head.as_bytes())).into();
        let mut h = Sha256::new();
        h.update(c0);
        h.update(line_digest(b"a\n"));
        assert_eq!(lines[1]["chain"], hex::encode(h.finalize()));
        assert_eq!(lines[3]["type"], "close");
        assert_eq!(lines[3]["lines"], 2);
    }

    #[test]
    fn a_keyed_chain_differs_and_names_its_key() {
        let files = ["t.jsonl".to_owned()];
        let seal = |key: Option<&SealKey>| {
            let mut s = Sealer::new(Vec::new(), &files, Timestamp(0), key);
            s.seal_line(b"a\n");
            String::from_utf8(s.close(Timestamp(0)).unwrap()).unwrap()
        };
        let plain = seal(None);
        let keyed = seal(Some(&key()));
        let record = |text: &str, i: usize| -> serde_json::Value {
            serde_json::from_str(text.lines().nth(i).unwrap()).unwrap()
        };
        assert_eq!(record(&keyed, 0)["chain"], CHAIN_HMAC);
        assert_eq!(record(&keyed, 0)["key"], key().id());
        // The line's digest is the same; the chain is not.
        assert_eq!(record(&plain, 1)["sha256"], record(&keyed, 1)["sha256"]);
        assert_ne!(record(&plain, 1)["chain"], record(&keyed, 1)["chain"]);
        let other = SealKey::new(b"another key, 16+ bytes".to_vec()).unwrap();
        assert_ne!(key().id(), other.id());
        assert_eq!(key().id().len(), 16);
    }

    /// A sink that fails every write.
    struct Broken;
    impl Write for Broken {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::other("disk full"))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_live_seal_that_cannot_be_written_is_reported_once_and_stops() {
        use std::sync::{Arc, Mutex};
        let files = ["t.jsonl".to_owned()];
        let mut live = LiveSeal::new(Sealer::new(Box::new(Broken), &files, Timestamp(0), None));
        live.line(b"a\n");
        live.flushed();
        let heard = Arc::new(Mutex::new(Vec::new()));
        let h = Arc::clone(&heard);
        live.on_failure(Box::new(move |e| h.lock().unwrap().push(e.to_string())));
        live.line(b"b\n");
        live.flushed();
        live.finish(Timestamp(0));
        assert_eq!(*heard.lock().unwrap(), ["disk full"]);
    }

    /// A trace written by a sealed [`crate::TraceWriter`] straight to its file, as
    /// `reel rec --seal` writes one.
    fn sealed_writer(dir: &Path) -> (crate::TraceWriter<std::fs::File>, PathBuf) {
        let trace = dir.join("t.jsonl");
        let file = std::fs::File::create(&trace).unwrap();
        let (sidecar, _) = create_sidecar(&trace).unwrap();
        let mut w = crate::TraceWriter::new(file, Timestamp(0));
        let files = [file_name(&trace)];
        w.seal_with(LiveSeal::new(Sealer::new(
            Box::new(sidecar),
            &files,
            Timestamp(0),
            None,
        )));
        (w, trace)
    }

    fn message(w: &mut crate::TraceWriter<std::fs::File>, i: u64) {
        let raw = format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"ping\"}}");
        w.write_message(&crate::MessageLine::new(Timestamp(0), crate::Dir::In, &raw))
            .unwrap();
    }

    #[test]
    fn a_sealed_writer_seals_every_line_it_writes() {
        let dir = tempfile::tempdir().unwrap();
        let (mut w, trace) = sealed_writer(dir.path());
        w.write_meta(&crate::Meta::default()).unwrap();
        message(&mut w, 1);
        // Nothing reaches the sidecar before the trace is flushed.
        assert_eq!(std::fs::metadata(sidecar_path(&trace)).unwrap().len(), 0);
        w.flush().unwrap();
        message(&mut w, 2);
        w.finish(crate::Ending::ExitCode(0), Timestamp(9)).unwrap();
        let v = verify(&trace, None).unwrap();
        assert_eq!(v.status, SealStatus::Intact, "{:?}", v.findings);
        assert_eq!((v.sealed, v.verified), (4, 4));
    }

    /// A message past `INLINE_RAW` is written in parts, and sealed as the one line the
    /// parts make (issue 28, item 6: a long line is not copied to be written).
    #[test]
    fn a_message_written_in_parts_is_sealed_as_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let (mut w, trace) = sealed_writer(dir.path());
        w.write_meta(&crate::Meta::default()).unwrap();
        let text = "x".repeat(crate::writer::INLINE_RAW + 5);
        let head = r#"{"jsonrpc":"2.0","id":1,"result":{"text":""#;
        let tail = r#""}}"#;
        w.write_message_parts(
            &crate::MessageLine::new(Timestamp(0), crate::Dir::Out, r#"{"jsonrpc":"2.0","id":1}"#),
            &[head, &text, tail],
        )
        .unwrap();
        message(&mut w, 2);
        w.finish(crate::Ending::ExitCode(0), Timestamp(9)).unwrap();
        let v = verify(&trace, None).unwrap();
        assert_eq!(v.status, SealStatus::Intact, "{:?}", v.findings);
        assert_eq!((v.sealed, v.verified), (4, 4));
        let written = std::fs::read_to_string(&trace).unwrap();
        let line = written.lines().nth(1).unwrap();
        let joined = format!("{head}{text}{tail}");
        let mut whole = crate::TraceWriter::new(Vec::new(), Timestamp(0));
        whole
            .write_message(&crate::MessageLine::new(
                Timestamp(0),
                crate::Dir::Out,
                &joined,
            ))
            .unwrap();
        let whole = whole
            .finish(crate::Ending::ExitCode(0), Timestamp(9))
            .unwrap();
        assert!(
            whole.starts_with(format!("{line}\n").as_bytes()),
            "the parts wrote the line the whole message writes"
        );
    }

    /// The trace's file as the OS has it, behind a sink that batches lines until it is
    /// flushed (as the recorder's does).
    type Disk = std::sync::Arc<std::sync::Mutex<Vec<u8>>>;

    struct Batching {
        disk: Disk,
        buf: Vec<u8>,
    }

    impl Write for Batching {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            self.buf.extend_from_slice(data);
            Ok(data.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            self.disk.lock().unwrap().append(&mut self.buf);
            Ok(())
        }
    }

    /// A sidecar that fails the test when a record arrives for a line the trace's file
    /// does not hold yet.
    struct Behind {
        disk: Disk,
        records: usize,
    }

    impl Write for Behind {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            self.records += data.windows(5).filter(|w| w == b"{\"n\":").count();
            let on_disk = self
                .disk
                .lock()
                .unwrap()
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            assert!(
                self.records <= on_disk,
                "{} records for {on_disk} lines on disk",
                self.records
            );
            Ok(data.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn seal_records_never_run_ahead_of_the_trace_on_disk() {
        let disk = Disk::default();
        let sink = Batching {
            disk: disk.clone(),
            buf: Vec::new(),
        };
        let mut w = crate::TraceWriter::new(sink, Timestamp(0));
        let behind = Behind {
            disk: disk.clone(),
            records: 0,
        };
        let files = ["t.jsonl".to_owned()];
        w.seal_with(LiveSeal::new(Sealer::new(
            Box::new(behind),
            &files,
            Timestamp(0),
            None,
        )));
        w.write_meta(&crate::Meta::default()).unwrap();
        for i in 0..5 {
            let raw = format!("{{\"id\":{i}}}");
            w.write_message(&crate::MessageLine::new(Timestamp(0), crate::Dir::In, &raw))
                .unwrap();
            if i % 2 == 0 {
                w.flush().unwrap();
            }
        }
        w.finish(crate::Ending::ExitCode(0), Timestamp(0)).unwrap();
        assert_eq!(
            disk.lock().unwrap().iter().filter(|&&b| b == b'\n').count(),
            7
        );
    }

    #[test]
    fn a_sealed_writer_that_dies_leaves_a_seal_of_what_it_flushed() {
        let dir = tempfile::tempdir().unwrap();
        let (mut w, trace) = sealed_writer(dir.path());
        w.write_meta(&crate::Meta::default()).unwrap();
        message(&mut w, 1);
        w.flush().unwrap();
        // Written to the file, never flushed: the recorder is killed here.
        message(&mut w, 2);
        message(&mut w, 3);
        drop(w);
        let v = verify(&trace, None).unwrap();
        assert_eq!(v.status, SealStatus::Open, "{:?}", v.findings);
        assert_eq!((v.sealed, v.verified, v.unsealed), (2, 2, 2));
        assert_eq!(v.findings[0].line, Some(3));
    }
}
