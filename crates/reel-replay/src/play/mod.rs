//! The tape server (`reel play`): a trace answers as the MCP server.
//!
//! Over stdio one thread owns all replay state and reacts to events from three feeders:
//! the client's stdin (lines), the index of the tape (`crate::tape::index`, batches of
//! updates) and, with `--subset`, the live server. Over HTTP the same state machine
//! serves each recorded session's tape behind a lock (`SharedTape`), driven by the
//! threads that bring it events, and writes to a `ClientOut` that routes each message
//! to its response or stream. Nothing waits on anything else: a request the index has
//! not reached yet is parked and retried as batches arrive; an exchange whose next
//! recorded step depends on the client (its answer to a server→client request) or on
//! time (`--pace`) is a job that resumes when that happens.
//!
//! Invariants:
//! - Answers are the recorded `result`/`error` bytes spliced with the live id
//!   (`crate::splice`); the only edits are ids, progress tokens and a negotiated
//!   `protocolVersion` (over HTTP, an id-less refusal keeps its `null`).
//! - A job emits its exchange's recorded messages in recorded order, the response last;
//!   a message recorded after the client's answer to a server request is emitted after
//!   the live answer arrived.
//! - After `notifications/cancelled` (over HTTP also: the client closed the response),
//!   nothing more of that exchange is sent.
//! - Output lines end in LF; input lines may end in LF or CRLF.
//!
//! Layout: this file holds the event loop, the index batches and the end of a replay;
//! `incoming` takes a client line (matching, forwarding to the live server, answers
//! to server requests), `jobs` replays one recorded exchange, `misses` explains a
//! request no recording answers, `out` writes to the client, `record` writes the
//! replay's own trace, `feed` brings input, `shared_tape` and `http` serve over HTTP.

mod feed;
mod handshake;
#[cfg(feature = "http")]
pub mod http;
mod incoming;
mod jobs;
mod long_lived;
mod misses;
mod out;
mod record;
pub(crate) mod report;
mod shared_tape;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::Instant;

use reel_mcp::jsonrpc::RpcId;
use reel_mcp::normalize::{Normalizer, Pointer, canonical};
use reel_redact::redact::Redactor;
use reel_trace::line::{Line, Meta, parse_line};
use reel_trace::{Ending, OpenError};
use serde_json::Value;

use crate::live::{Live, LiveOutput};
use crate::splice;
use crate::tape::matcher::Tape;
use crate::tape::{IndexSpec, LineLoc, TapeFiles, Update};
use report::{Summary, Unused};

use self::feed::{Feed, Notifier};
pub(crate) use self::incoming::{Incoming, Parsed, parse_live};
use self::jobs::{Job, JobState, ServerRequest};
pub use self::out::DELIVERY_WAIT;
use self::out::LineOut;
pub(crate) use self::out::{ClientOut, Dest, Route};
pub(crate) use self::record::{RecordTo, Recorder};
pub(crate) use self::shared_tape::SharedTape;

/// Longest input line accepted from the client; a longer one is answered with an
/// invalid-request error and dropped.
pub const MAX_LINE: usize = 64 << 20;
/// Recorded requests of one method compared with a missed request to find the nearest.
pub const CANDIDATES_SCANNED: usize = 1000;
/// Index warnings printed (the rest are counted).
pub const WARNINGS_SHOWN: usize = 5;

/// `--pace`: replay the recorded timing, `speed` times faster (1 = as recorded).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pace {
    /// How much faster than recorded (2 = twice as fast, 0.5 = half as fast).
    pub speed: f64,
}

impl FromStr for Pace {
    type Err = String;
    fn from_str(s: &str) -> Result<Pace, String> {
        if s == "recorded" {
            return Ok(Pace { speed: 1.0 });
        }
        let n = s
            .strip_suffix('x')
            .or_else(|| s.strip_suffix('×'))
            .unwrap_or(s);
        match n.parse::<f64>() {
            Ok(speed) if speed.is_finite() && speed > 0.0 => Ok(Pace { speed }),
            _ => Err(format!(
                "`{s}` is not a pace: use `recorded` or a speed factor like `2x` (twice as fast) or `0.5x`"
            )),
        }
    }
}

/// `--subset`: these tools' calls come from the tape, everything else from a live server.
#[derive(Clone, Debug)]
pub struct Subset {
    /// Tool names served from the tape.
    pub tools: Vec<String>,
    /// The live server's command.
    pub command: Vec<String>,
}

/// What `reel play` was asked to do.
#[derive(Clone, Debug)]
pub struct PlayOptions {
    /// The trace file.
    pub trace: PathBuf,
    /// Which recorded session answers (1-based).
    pub session: usize,
    /// Requests must come in recorded order; no generic answers.
    pub strict: bool,
    /// Client drift does not change the exit code.
    pub lenient: bool,
    /// The user's volatile fields.
    pub ignore: Vec<Pointer>,
    /// Write the replay session as a trace into this directory.
    pub record: Option<PathBuf>,
    /// Serve only some tools from the tape.
    pub subset: Option<Subset>,
    /// Replay the recorded timing.
    pub pace: Option<Pace>,
    /// The command line, for `meta.command` of the recorded replay.
    pub argv: Vec<String>,
}

impl PlayOptions {
    /// Defaults for `trace`: session 1, content matching, nothing recorded.
    pub fn new(trace: impl Into<PathBuf>) -> PlayOptions {
        PlayOptions {
            trace: trace.into(),
            session: 1,
            strict: false,
            lenient: false,
            ignore: Vec::new(),
            record: None,
            subset: None,
            pace: None,
            argv: Vec::new(),
        }
    }
}

/// Why a replay could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlayError {
    /// The trace cannot be read.
    #[error(transparent)]
    Trace(#[from] OpenError),
    /// The recording of the replay cannot be created.
    #[error("{dir}: cannot create the replay's trace: {source}")]
    Record {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The live server of `--subset` cannot be started.
    #[error("cannot start the live server `{command}`: {source}")]
    Live {
        /// The command.
        command: String,
        /// Why.
        source: io::Error,
    },
    /// Writing to the client failed for another reason than it going away (or, over
    /// HTTP, a thread or the runtime could not be started).
    #[error("writing to the client: {0}")]
    Output(io::Error),
    /// `--listen` is not an address, or cannot be bound.
    #[error(
        "cannot listen on {addr}: {error}; choose another --listen (e.g. 127.0.0.1:0 for a free port)"
    )]
    Listen {
        /// The address as given.
        addr: String,
        /// Why.
        error: String,
    },
}

pub(crate) enum Event {
    Input(Vec<InputLine>),
    InputEnd,
    /// SIGINT, SIGTERM or SIGHUP reached `play` over stdio: it ends as at the end of
    /// the client's input (a client may end its servers so, Claude Code does). The
    /// flag is set when the server took it.
    Stop(i32, Arc<std::sync::atomic::AtomicBool>),
    Index(Vec<Update>),
    Live(LiveOutput),
    /// The client stopped waiting for the answer to the input that came on this route
    /// (it closed an HTTP response: the 2026-07-28 way to cancel).
    Gone(u64),
}

/// One line from the client, already parsed, redacted, normalised and keyed on the
/// reader thread, so this work runs beside the answering on another core.
pub(crate) struct InputLine {
    pub(crate) content: Content,
    pub(crate) crlf: bool,
    /// Where its answer goes ([`Route::Reply`]): the HTTP request that carried it; 0
    /// over stdio.
    pub(crate) route: u64,
}

pub(crate) enum Content {
    /// Longer than [`MAX_LINE`]: dropped.
    Oversized,
    /// Not UTF-8.
    NotUtf8(Vec<u8>),
    /// The text and what it is.
    Text(String, Parsed),
}

/// Plays the trace as the server: reads the client's messages from `input`, answers on
/// `output`, reports on `diag`, until `input` ends. The summary is printed on `diag` and
/// returned.
pub fn play(
    opts: PlayOptions,
    input: impl Read + Send + 'static,
    output: impl Write,
    diag: &mut dyn Write,
) -> Result<Summary, PlayError> {
    serve(opts, Some(Box::new(input)), output, false, diag)
}

/// [`play`] on this process's stdin and stdout, stdin read on the serving thread where
/// the platform allows (a `poll` on stdin instead of a reader thread): the fastest way
/// to serve a client over stdio. Where the platform tells how much of stdout the client
/// has not read yet, an answer that recorded messages preceded waits until the client
/// has read them (at most [`DELIVERY_WAIT`]).
pub fn play_stdio(opts: PlayOptions, diag: &mut dyn Write) -> Result<Summary, PlayError> {
    serve(opts, None, io::stdout(), true, diag)
}

fn serve(
    opts: PlayOptions,
    input: Option<Box<dyn Read + Send>>,
    output: impl Write,
    watch_stdout: bool,
    diag: &mut dyn Write,
) -> Result<Summary, PlayError> {
    let files = Arc::new(TapeFiles::open(&opts.trace)?);
    let shared = Shared::new(&opts, diag);
    let (tx, rx) = mpsc::channel();
    let (mut feed, notifier) = match input {
        Some(input) => Feed::threaded(input, shared.norm.clone(), tx, rx),
        None => Feed::stdin(shared.norm.clone(), tx, rx),
    };
    let live = match &opts.subset {
        Some(sub) => {
            let ltx = notifier.clone();
            let live =
                Live::spawn(&sub.command, move |o| ltx.send(Event::Live(o))).map_err(|source| {
                    PlayError::Live {
                        command: sub.command.join(" "),
                        source,
                    }
                })?;
            Some(live)
        }
        None => None,
    };
    let record_dir = match (&opts.record, &opts.subset) {
        (Some(dir), _) => Some(dir.clone()),
        (None, Some(_)) => reel_trace::names::default_trace_dir(),
        (None, None) => None,
    };
    let recorder = match record_dir {
        Some(dir) => Some(Arc::new(Mutex::new(Recorder::create(
            &dir,
            &opts,
            shared.head.as_ref(),
            &shared.record_redactor(),
            "stdio",
        )?))),
        None => None,
    };
    // Over stdio a signal ends the replay as the end of input does; a second one
    // ends the process at once (an index still being read would otherwise hold it).
    let signals = if watch_stdout {
        Some(stop_on_signals(notifier.clone()).map_err(PlayError::Output)?)
    } else {
        None
    };
    spawn_indexer(&opts, notifier);
    let client = LineOut::new(output, watch_stdout);
    let record = recorder.clone().map(|r| RecordTo::new(r, None));
    let mut server = Server::new(opts, files, shared.norm, client, diag, record, live);
    let served = server.run(&mut feed);
    if let Some(s) = signals {
        s.stop();
    }
    served?;
    let (mut summary, diag) = server.finish();
    if let Some(r) = recorder {
        let ending = match summary.live_exit {
            Some(c) => Ending::ExitCode(c),
            None => Ending::Reason("producer_shutdown".into()),
        };
        match finish_recorder(r, ending) {
            Ok(p) => summary.recorded = Some(p),
            Err(e) => {
                let _ = writeln!(diag, "reel play: the replay's trace is incomplete: {e}");
            }
        }
    }
    let _ = diag.write_all(summary.to_text().as_bytes());
    Ok(summary)
}

/// Over stdio, SIGINT, SIGTERM and SIGHUP end the replay as the end of input does: the
/// server thread (this one, which may sit in a blocking read of stdin) is sent
/// [`Event::Stop`] and woken until it has taken it. A second signal ends the process at
/// once (an index still being read would otherwise hold it).
fn stop_on_signals(notifier: Notifier) -> io::Result<reel_net::process::Forwarding> {
    let server = reel_net::process::ThreadWaker::current()?;
    reel_net::process::on_stop_signals(move |sig, count| {
        let taken = Arc::new(std::sync::atomic::AtomicBool::new(false));
        if count > 1 || !notifier.send(Event::Stop(sig, Arc::clone(&taken))) {
            std::process::exit(128 + sig);
        }
        // Woken every 10 ms until the server took the stop (at most 5 s).
        for _ in 0..500 {
            if taken.load(std::sync::atomic::Ordering::Acquire) {
                return;
            }
            server.wake();
            thread::sleep(std::time::Duration::from_millis(10));
        }
    })
}

/// Ends the replay's own trace once every server that wrote to it is done.
pub(crate) fn finish_recorder(r: Arc<Mutex<Recorder>>, ending: Ending) -> io::Result<PathBuf> {
    let rec = Arc::try_unwrap(r)
        .map_err(|_| io::Error::other("a tape server still holds the replay's trace"))?
        .into_inner()
        .map_err(|_| io::Error::other("a tape server panicked while writing the replay's trace"))?;
    rec.finish(ending)
}

/// What every tape server of one replay shares: the trace's head meta line and its
/// redaction rules, turned into the normaliser live messages go through.
#[derive(Clone)]
pub(crate) struct Shared {
    pub(crate) head: Option<Meta>,
    pub(crate) redactor: Redactor,
    pub(crate) norm: Normalizer,
}

impl Shared {
    pub(crate) fn new(opts: &PlayOptions, diag: &mut dyn Write) -> Shared {
        let head = read_head_meta(&opts.trace);
        let redactor = redactor_for(head.as_ref(), diag);
        let norm = Normalizer::new()
            .with_ignore(opts.ignore.clone())
            .with_redactor(redactor.clone());
        Shared {
            head,
            redactor,
            norm,
        }
    }

    /// The rules of the replay's own trace: the tape's, or the built-in ones when the
    /// tape says nothing (redaction is on by default when recording).
    pub(crate) fn record_redactor(&self) -> Redactor {
        match self.head.as_ref().and_then(|m| m.redaction.as_ref()) {
            Some(_) => self.redactor.clone(),
            None => Redactor::builtin(),
        }
    }
}

fn spawn_indexer(opts: &PlayOptions, tx: Notifier) {
    let path = opts.trace.clone();
    let spec = IndexSpec::session(opts.session, opts.ignore.clone());
    thread::Builder::new()
        .name("reel-play-index".into())
        .spawn(move || {
            crate::tape::index(&path, &spec, |batch| tx.send(Event::Index(batch)));
        })
        .ok();
}

/// The first meta line of the trace, for its redaction rules and label.
fn read_head_meta(path: &Path) -> Option<Meta> {
    let mut r = reel_trace::TraceReader::open(path).ok()?;
    let line = r.next_line()?.ok()?;
    match line.parse().ok()? {
        Line::Meta(m) => Some(*m),
        _ => None,
    }
}

/// The trace's own redaction rules, so a live argument is redacted exactly as the
/// recorded one was. A trace without `meta.redaction` was not redacted: nothing is.
fn redactor_for(meta: Option<&Meta>, diag: &mut dyn Write) -> Redactor {
    let Some(desc) = meta.and_then(|m| m.redaction.as_ref()) else {
        return Redactor::disabled();
    };
    match Redactor::from_description(desc) {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(
                diag,
                "reel play: warning: the trace's redaction rules cannot be rebuilt ({e}); using the built-in rules, so a redacted argument may not match"
            );
            Redactor::builtin()
        }
    }
}

/// One tape server: the state machine that answers one client from one recorded
/// session. Its parts, each owned by the concern named on it.
struct Server<C: ClientOut, D: Write> {
    opts: PlayOptions,
    norm: Normalizer,
    src: Source,
    client: Client<C>,
    calls: Calls,
    asks: Asks,
    live: LiveSide,
    recorder: Option<RecordTo>,
    diag: D,
    summary: Summary,
    /// The protocol versions the recorded server answered with, once looked up.
    supported_versions: Option<Vec<String>>,
}

/// The recorded session: its index, the files it points into, and the scratch buffer
/// re-reads of them go through.
struct Source {
    tape: Tape,
    /// Shared by every tape server of one replay: over HTTP one open of the trace
    /// serves all sessions, however many come and go.
    files: Arc<TapeFiles>,
    scratch: Vec<u8>,
    warnings_seen: usize,
    /// Over HTTP: which tape this server answers from (0: the session-less traffic).
    session: Option<u32>,
}

/// The client: where answers go, whether it still reads them, whether its input
/// ended, and the input that waits for the tape's meta line.
struct Client<C> {
    out: C,
    gone: bool,
    input_closed: bool,
    backlog: VecDeque<InputLine>,
}

/// The client's calls in flight: a job per recorded exchange being replayed
/// (`jobs.rs`), the requests the index has not reached yet, and the `--pace` timers.
#[derive(Default)]
struct Calls {
    jobs: HashMap<u64, Job>,
    next: u64,
    by_live_id: HashMap<RpcId, u64>,
    parked: VecDeque<Incoming>,
    timers: BinaryHeap<Reverse<(Instant, u64)>>,
    /// The highest recorded position a job has started from: where unsolicited
    /// messages may go out.
    hw: Option<u64>,
    /// Long-lived requests taken: the recorded id (JSON text) → the live one, which
    /// restamps what the tape sends on their streams (`play/long_lived.rs`).
    subscriptions: HashMap<String, String>,
}

/// Requests the tape sends the client (sampling, roots, elicitation) and the client
/// has not answered yet.
#[derive(Default)]
struct Asks {
    open: HashMap<RpcId, ServerRequest>,
    /// The recorded id (JSON text) of each server→client request sent, and the fresh
    /// id it went out with: a recorded server-side `notifications/cancelled` names the
    /// recorded one.
    ids: HashMap<String, String>,
    next_id: u64,
}

/// `--subset`'s live server, if any.
struct LiveSide {
    server: Option<Live>,
    done: bool,
    /// Requests forwarded to the live server and not answered yet (id → id text,
    /// route): answered with an error if the live server ends first.
    forwarded: HashMap<RpcId, (String, u64)>,
}

impl<C: ClientOut, D: Write> Server<C, D> {
    fn new(
        opts: PlayOptions,
        files: Arc<TapeFiles>,
        norm: Normalizer,
        client: C,
        diag: D,
        recorder: Option<RecordTo>,
        live: Option<Live>,
    ) -> Server<C, D> {
        Server {
            opts,
            norm,
            src: Source {
                tape: Tape::new(),
                files,
                scratch: Vec::new(),
                warnings_seen: 0,
                session: None,
            },
            client: Client {
                out: client,
                gone: false,
                input_closed: false,
                backlog: VecDeque::new(),
            },
            calls: Calls::default(),
            asks: Asks::default(),
            live: LiveSide {
                server: live,
                done: false,
                forwarded: HashMap::new(),
            },
            recorder,
            diag,
            summary: Summary::default(),
            supported_versions: None,
        }
    }
}

impl<C: ClientOut, D: Write> Server<C, D> {
    fn run(&mut self, feed: &mut Feed) -> Result<(), PlayError> {
        let mut events = Vec::new();
        loop {
            let live_stop = self.live_stop_deadline();
            let timeout = self
                .calls
                .timers
                .peek()
                .map(|Reverse((due, _))| *due)
                .into_iter()
                .chain(live_stop)
                .min()
                .map(|due| due.saturating_duration_since(Instant::now()));
            let input_only =
                self.src.tape.complete() && self.live.server.is_none() && timeout.is_none();
            if !feed.wait(timeout, input_only, &mut events) {
                break;
            }
            // Everything that is ready is handled before one flush, so a pipelined
            // client gets its answers in few writes.
            for ev in events.drain(..) {
                self.handle(ev);
            }
            self.settle()?;
            if self.done() {
                break;
            }
        }
        Ok(())
    }

    /// After events were handled: timers that are due fire, unsolicited messages whose
    /// place was reached go out, and what was written is flushed.
    fn settle(&mut self) -> Result<(), PlayError> {
        self.fire_timers();
        self.advance_long_lived();
        self.pump_unsolicited();
        if !self.client.gone {
            if let Err(e) = self.client.out.flush() {
                self.client_error(e)?;
            }
        }
        Ok(())
    }

    fn ready(&self) -> bool {
        self.src.tape.meta().is_some() || self.src.tape.complete()
    }

    fn drain_backlog(&mut self) {
        while self.ready() {
            let Some(l) = self.client.backlog.pop_front() else {
                break;
            };
            self.input_line(l);
        }
    }

    /// While the live server is stopping (its input closed, its output still open):
    /// when to stop waiting for it.
    fn live_stop_deadline(&self) -> Option<Instant> {
        match &self.live.server {
            Some(l) if !self.live.done => l.stop_deadline(),
            _ => None,
        }
    }

    fn done(&self) -> bool {
        let live_done = self.live.server.is_none()
            || self.live.done
            || self
                .live_stop_deadline()
                .is_some_and(|d| d <= Instant::now());
        (self.client.input_closed || self.client.gone) && self.src.tape.complete() && live_done
    }

    fn client_error(&mut self, e: io::Error) -> Result<(), PlayError> {
        if e.kind() == io::ErrorKind::BrokenPipe {
            self.client.gone = true;
            self.client.input_closed = true;
            if let Some(l) = self.live.server.as_mut() {
                l.close_input();
            }
            Ok(())
        } else {
            Err(PlayError::Output(e))
        }
    }

    fn handle(&mut self, ev: Event) {
        match ev {
            Event::Input(lines) => {
                // Until the tape's meta line (its redaction rules) is read, input waits
                // in arrival order, so nothing overtakes the handshake.
                if self.client.backlog.is_empty() && self.ready() {
                    for l in lines {
                        self.input_line(l);
                    }
                } else {
                    self.client.backlog.extend(lines);
                }
            }
            Event::InputEnd => self.input_end(),
            Event::Stop(sig, taken) => {
                taken.store(true, std::sync::atomic::Ordering::Release);
                let _ = writeln!(
                    self.diag,
                    "reel play: {} received: ending as at the end of the client's input",
                    reel_net::process::signal_name(sig)
                );
                self.input_end();
            }
            Event::Index(batch) => self.index_batch(batch),
            Event::Live(LiveOutput::Line(l)) => self.live_line(&l),
            Event::Live(LiveOutput::Stderr(b)) => {
                let _ = self.diag.write_all(&b);
                if let Some(r) = self.recorder.as_mut() {
                    r.stderr(&b);
                }
            }
            Event::Live(LiveOutput::End) => {
                self.live.done = true;
                self.fail_forwarded();
            }
            Event::Gone(route) => self.route_gone(route),
        }
    }

    // ---- output ------------------------------------------------------------------

    fn send(&mut self, dest: Dest, line: &str, origin: &str) {
        if let Some(r) = self.recorder.as_mut() {
            r.out_line(line, origin);
        }
        self.send_parts(dest, &[line.as_bytes()]);
    }

    /// Writes one message from parts (bytes the index validated as UTF-8 JSON), with
    /// no copy in between; only when nothing is being recorded.
    fn send_parts(&mut self, dest: Dest, parts: &[&[u8]]) {
        if self.client.gone {
            return;
        }
        if let Err(e) = self.client.out.message(dest, parts) {
            if self.client_error(e).is_err() {
                self.client.gone = true;
            }
        }
    }

    fn send_error(&mut self, dest: Dest, id_raw: &str, error: &Value) {
        let text = splice::response(id_raw, "error", &error.to_string());
        self.send(dest, &text, "tape");
    }

    fn say(&mut self, text: &str) {
        let _ = self.diag.write_all(text.as_bytes());
        if !text.ends_with('\n') {
            let _ = self.diag.write_all(b"\n");
        }
    }

    /// Reads a recorded line and hands its `raw` to `f`.
    fn with_raw<T>(&mut self, at: LineLoc, f: impl FnOnce(&str) -> T) -> Option<T> {
        let mut buf = std::mem::take(&mut self.src.scratch);
        let out = match self.src.files.read(at, &mut buf) {
            Ok(()) => match crate::tape::LineRaw::parse(&buf).and_then(|l| l.raw) {
                Some(raw) => Some(f(raw.get())),
                // A line the index took through the tolerant reader.
                None => match parse_line(&buf) {
                    Ok(Line::Message(v)) => v.raw_str().map(f),
                    _ => None,
                },
            },
            Err(_) => None,
        };
        self.src.scratch = buf;
        if out.is_none() {
            let place = self.src.files.location(at);
            self.say(&format!(
                "reel play: warning: cannot re-read {place} (was the trace changed while playing?)"
            ));
        }
        out
    }

    /// The body a `reel.http` record kept of a response that was no JSON-RPC message:
    /// its `raw` (JSON) or `text`.
    fn with_raw_event(&mut self, at: LineLoc) -> Option<String> {
        let mut buf = std::mem::take(&mut self.src.scratch);
        let out = match self.src.files.read(at, &mut buf) {
            Ok(()) => match parse_line(&buf) {
                Ok(Line::Event(v)) => v
                    .raw
                    .map(|r| r.get().to_owned())
                    .or_else(|| v.text.map(|t| t.into_owned())),
                _ => None,
            },
            Err(_) => None,
        };
        self.src.scratch = buf;
        out
    }

    // ---- the index ---------------------------------------------------------------

    fn index_batch(&mut self, batch: Vec<Update>) {
        for u in batch {
            if let Update::Done(end) = &u {
                self.index_done(end);
            }
            self.src.tape.apply(u);
        }
        for w in self.src.tape.take_warnings() {
            self.src.warnings_seen += 1;
            if self.src.warnings_seen <= WARNINGS_SHOWN {
                self.say(&format!("reel play: tape: {w}"));
            }
        }
        self.drain_backlog();
        self.retry_parked();
        let waiting: Vec<u64> = self
            .calls
            .jobs
            .iter()
            .filter(|(_, j)| j.state == JobState::WaitIndex)
            .map(|(&id, _)| id)
            .collect();
        for id in waiting {
            self.advance(id);
        }
        if self.client.input_closed {
            self.drain_after_input();
        }
    }

    fn index_done(&mut self, end: &crate::tape::IndexEnd) {
        if let Some(e) = &end.error {
            self.say(&format!("reel play: tape: reading stopped early: {e}"));
        }
        if self.src.warnings_seen > WARNINGS_SHOWN {
            let more = self.src.warnings_seen - WARNINGS_SHOWN;
            self.say(&format!("reel play: tape: {more} more lines skipped"));
        }
        match (end.found, self.src.session) {
            (true, _) | (false, Some(0)) => {}
            (false, Some(k)) => self.say(&format!(
                "reel play: live session {k} has no recorded counterpart: the trace holds {} session{}; everything it asks is a miss",
                end.sessions,
                if end.sessions == 1 { "" } else { "s" },
            )),
            (false, None) => {
                // Session 1 of a trace without traffic is an empty tape, not a mistake.
                self.summary.no_such_session = self.opts.session > 1;
                self.say(&format!(
                    "reel play: the trace holds {} session{}; session {} does not exist (--session)",
                    end.sessions,
                    if end.sessions == 1 { "" } else { "s" },
                    self.opts.session
                ))
            }
        }
    }

    fn retry_parked(&mut self) {
        let ready = self.src.tape.meta().is_some() || self.src.tape.complete();
        if self.calls.parked.is_empty() || !ready {
            return;
        }
        let mut still = VecDeque::new();
        while let Some(inc) = self.calls.parked.pop_front() {
            if self.opts.strict && !still.is_empty() {
                // Recorded order: nothing overtakes a request that waits.
                still.push_back(inc);
                continue;
            }
            if let Some(inc) = self.try_answer(inc) {
                still.push_back(inc);
            }
        }
        self.calls.parked = still;
    }

    // ---- the end -----------------------------------------------------------------

    /// Ends the replay of this tape: what is still parked is missed, and the summary
    /// says what was left unused. Gives the diagnostics writer back for the caller's
    /// last words.
    fn finish(mut self) -> (Summary, D) {
        let _ = self.client.out.flush();
        for (_, job) in std::mem::take(&mut self.calls.jobs) {
            if job.state == JobState::Held {
                self.summary.held += 1;
            }
            if job.state == JobState::WaitPosition {
                self.summary.kept_open += 1;
            }
            self.client.out.close(Route::Reply(job.route));
        }
        for inc in std::mem::take(&mut self.calls.parked) {
            let reason = self.miss_reason(&inc);
            self.miss(inc, reason);
        }
        self.unanswered_server_requests();
        let _ = self.client.out.flush();
        let unused: Vec<u32> = self.src.tape.unused().collect();
        self.summary.unused_total = unused.len() as u64;
        for i in unused.into_iter().take(report::UNUSED_SHOWN) {
            let e = self.src.tape.exchange(i);
            let (at, method) = (e.request.at, self.src.tape.method_name(e.method).to_owned());
            let norm = self.norm.clone();
            let params = self
                .with_raw(at, |raw| norm.normalize_recorded(raw).ok())
                .flatten()
                .and_then(|v| v.get("params").map(canonical))
                .unwrap_or_default();
            self.summary.unused.push(Unused {
                method,
                location: self.src.files.location(at),
                params: report::short(&params),
            });
        }
        self.summary.unsent_unsolicited = self.src.tape.unsent_unsolicited() as u64;
        if self.live.server.is_some() && !self.live.done {
            self.say(&format!(
                "reel play: the live server did not exit within {} s of its input closing; stopping it",
                crate::live::STOP_GRACE.as_secs()
            ));
        }
        self.summary.live_exit = self.live.server.take().and_then(Live::finish);
        self.recorder = None;
        (self.summary, self.diag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pace_values() {
        assert_eq!("recorded".parse::<Pace>().unwrap().speed, 1.0);
        assert_eq!("2x".parse::<Pace>().unwrap().speed, 2.0);
        assert_eq!("0.5×".parse::<Pace>().unwrap().speed, 0.5);
        assert!("0x".parse::<Pace>().is_err());
        assert!("fast".parse::<Pace>().is_err());
    }

    /// A `Write` the test can read back after `play` took it by value.
    #[derive(Clone, Default)]
    struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| io::ErrorKind::Other)?
                .extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A `Write` that keeps each write the server made apart.
    #[derive(Clone, Default)]
    struct Writes(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

    impl Write for Writes {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| io::ErrorKind::Other)?
                .push(String::from_utf8_lossy(b).into_owned());
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn writes_for(tape: &str, input: &str) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, tape).unwrap();
        let out = Writes::default();
        let summary = play(
            PlayOptions::new(&path),
            io::Cursor::new(input.as_bytes().to_vec()),
            out.clone(),
            &mut Vec::new(),
        )
        .unwrap();
        assert_eq!(summary.missed, 0);
        out.0.lock().unwrap().clone()
    }

    const META: &str = r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z"}"#;

    /// The result that recorded progress preceded is written apart from that progress
    /// (a client may drop the call's progress handler on its result before handling
    /// what came in the same read); answers without such messages are not split.
    #[test]
    fn an_answer_after_progress_is_written_apart_and_plain_answers_together() {
        let tape = format!(
            "{META}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n",
            r#"{"t":"2026-01-01T00:00:00.001Z","dir":"in","raw":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":1}}}}"#,
            r#"{"t":"2026-01-01T00:00:00.002Z","dir":"out","raw":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}}"#,
            r#"{"t":"2026-01-01T00:00:00.003Z","dir":"out","raw":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}}"#,
            r#"{"t":"2026-01-01T00:00:00.004Z","dir":"out","raw":{"jsonrpc":"2.0","id":1,"result":{"slow":true}}}"#,
            r#"{"t":"2026-01-01T00:00:00.005Z","dir":"in","raw":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fast"}}}"#,
            r#"{"t":"2026-01-01T00:00:00.006Z","dir":"out","raw":{"jsonrpc":"2.0","id":2,"result":{"fast":1}}}"#,
            r#"{"t":"2026-01-01T00:00:00.007Z","dir":"in","raw":{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fast","arguments":{"again":true}}}}"#,
        ) + r#"{"t":"2026-01-01T00:00:00.008Z","dir":"out","raw":{"jsonrpc":"2.0","id":3,"result":{"fast":2}}}"#
            + "\n";
        let slow = r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p"}}}"#;
        let writes = writes_for(&tape, &format!("{slow}\n"));
        assert_eq!(writes.len(), 2, "{writes:?}");
        assert_eq!(writes[0].matches("notifications/progress").count(), 2);
        assert!(writes[1].contains(r#""slow":true"#), "{writes:?}");

        // Two plain calls that arrive together are answered in one write.
        let fast = r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"fast"}}"#;
        let again = r#"{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"fast","arguments":{"again":true}}}"#;
        let writes = writes_for(&tape, &format!("{fast}\n{again}\n"));
        assert_eq!(writes.len(), 1, "{writes:?}");
    }

    /// The library entry point with any reader as input (the reader-thread feed), a
    /// request whose answer lies past the first index batch, and a miss.
    #[test]
    fn play_answers_from_any_reader() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut text =
            String::from(r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z"}"#);
        text.push('\n');
        let pad = "p".repeat(1000);
        for i in 0..300 {
            text.push_str(&format!(
                "{{\"t\":\"2026-01-01T00:00:00.001Z\",\"dir\":\"in\",\"raw\":{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/call\",\"params\":{{\"name\":\"n\",\"arguments\":{{\"i\":{i},\"pad\":\"{pad}\"}}}}}}}}\n{{\"t\":\"2026-01-01T00:00:00.002Z\",\"dir\":\"out\",\"raw\":{{\"result\":{{\"n\":{i}}},\"jsonrpc\":\"2.0\",\"id\":{i}}}}}\n"
            ));
        }
        std::fs::write(&path, text).unwrap();
        let input = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/call\",\"params\":{{\"name\":\"n\",\"arguments\":{{\"pad\":\"{pad}\",\"i\":299}}}}}}\r\n{{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"tools/call\",\"params\":{{\"name\":\"n\"}}}}"
        );
        let out = Shared::default();
        let mut diag = Vec::new();
        let summary = play(
            PlayOptions::new(&path),
            io::Cursor::new(input.into_bytes()),
            out.clone(),
            &mut diag,
        )
        .unwrap();
        let written = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = written.lines().collect();
        assert_eq!(lines[0], r#"{"result":{"n":299},"jsonrpc":"2.0","id":"a"}"#);
        assert!(
            lines[1].contains(r#""id":"b""#) && lines[1].contains("-32010"),
            "{written}"
        );
        assert_eq!(
            (summary.answered, summary.missed, summary.unused_total),
            (1, 1, 299)
        );
        assert_eq!(summary.verdict(false), crate::PlayVerdict::Misses);
        let diag = String::from_utf8(diag).unwrap();
        assert!(diag.contains("miss: tools/call (id \"b\")"), "{diag}");
    }
}
