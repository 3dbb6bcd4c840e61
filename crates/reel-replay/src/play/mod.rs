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
//! Layout: this file starts a replay over stdio and ends it; `server` holds the state
//! machine's parts, its event loop, the index batches and the end of a replay; `input`
//! is what it is fed, `options` what it was asked, `shared` what the tape servers of
//! one replay share, `job` the state of one replayed exchange. Each concern adds its
//! methods to the server: `incoming` takes a client line (matching, forwarding to the
//! live server, answers to server requests), `jobs` replays one recorded exchange,
//! `misses` explains a request no recording answers, `handshake` serves a client of
//! the other handshake era, `long_lived` keeps long-lived requests open. `out` writes
//! to the client, `record` writes the replay's own trace, `feed` brings input,
//! `shared_tape` and `http` serve over HTTP.

mod feed;
mod handshake;
#[cfg(feature = "http")]
pub mod http;
mod incoming;
mod input;
mod job;
mod jobs;
mod long_lived;
mod misses;
mod options;
mod out;
mod record;
pub(crate) mod report;
mod server;
mod shared;
mod shared_tape;

use std::io::{self, Read, Write};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;

use reel_trace::Ending;

use crate::live::Live;
use crate::tape::{IndexSpec, TapeFiles};
use report::Summary;

use self::feed::{Feed, Notifier};
pub use self::input::MAX_LINE;
pub(crate) use self::input::{Content, Event, InputLine, Parsed, parse_live};
pub use self::options::{CANDIDATES_SCANNED, Pace, PlayError, PlayOptions, Subset, WARNINGS_SHOWN};
pub use self::out::DELIVERY_WAIT;
use self::out::LineOut;
pub(crate) use self::out::{ClientOut, Dest, Route};
pub(crate) use self::record::{RecordTo, ReplayRecording, finish_recorder};
use self::server::Server;
pub(crate) use self::shared::Shared;
pub(crate) use self::shared_tape::SharedTape;

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
        Some(dir) => Some(Arc::new(Mutex::new(ReplayRecording::create(
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

#[cfg(test)]
mod tests {
    use super::*;

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
