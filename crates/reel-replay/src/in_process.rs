//! A tape served inside the test process: `reel play` without a child process or a
//! binary to find, for `cargo test`.
//!
//! [`serve`] starts the tape server on a thread of its own and hands back the client's
//! end of a socket pair: give it to any MCP client as its transport (rmcp takes the two
//! halves of a `tokio::net::UnixStream`). When the client closes it, the replay ends;
//! [`InProcess::finish`] then gives the verdict and the report `reel play` prints on
//! stderr (each miss with its nearest recorded request and a JSON-pointer diff), and
//! [`Replayed::assert_clean`] fails a test with that report.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let (socket, replay) = reel_replay::in_process::serve(
//!     reel_replay::PlayOptions::new("tests/tapes/weather.jsonl"),
//! )?;
//! // … an MCP client talks to the tape over `socket`, then closes it …
//! drop(socket);
//! replay.finish()?.assert_clean();
//! # Ok(())
//! # }
//! ```

use std::io;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::play::report::{PlayVerdict, Summary};
use crate::play::{PlayError, PlayOptions, play};

/// A tape being served in this process.
pub struct InProcess {
    thread: JoinHandle<Result<Summary, PlayError>>,
    report: Arc<Mutex<Vec<u8>>>,
}

/// What a replay served: its counts and its report.
#[derive(Debug, Clone)]
pub struct Replayed {
    /// The counts.
    pub summary: Summary,
    /// What `reel play` prints on stderr: each miss and each client drift as it came,
    /// then the summary.
    pub report: String,
}

impl Replayed {
    /// Clean, misses, client drift (client drift counted as `reel play` counts it).
    pub fn verdict(&self) -> PlayVerdict {
        self.summary.verdict(false)
    }

    /// Panics with the report unless every request was answered from the tape and the
    /// client answered every server request as recorded.
    #[track_caller]
    pub fn assert_clean(&self) {
        assert!(
            self.verdict() == PlayVerdict::Clean,
            "the tape did not answer as recorded ({:?}):\n{}",
            self.verdict(),
            self.report
        );
    }
}

/// Serves the tape `opts` names on a thread; returns the client's end of the socket.
/// The tape is opened before this returns, so a missing trace is an error here.
pub fn serve(opts: PlayOptions) -> Result<(UnixStream, InProcess), PlayError> {
    // Fail now, not on the thread, for a trace that cannot be read.
    reel_trace::TraceReader::open(&opts.trace)?;
    let (client, server) = UnixStream::pair().map_err(PlayError::Output)?;
    let input = server.try_clone().map_err(PlayError::Output)?;
    let report = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&report);
    let thread = std::thread::Builder::new()
        .name("reel-play".into())
        .spawn(move || {
            let mut diag = SharedBuf(sink);
            play(opts, input, server, &mut diag)
        })
        .map_err(PlayError::Output)?;
    Ok((client, InProcess { thread, report }))
}

impl InProcess {
    /// Waits for the replay to end (the client closed its end of the socket) and
    /// returns what it served.
    pub fn finish(self) -> Result<Replayed, PlayError> {
        let summary = self.thread.join().unwrap_or_else(|_| {
            Err(PlayError::Output(io::Error::other(
                "the replay thread panicked",
            )))
        })?;
        let report = self.report.lock().unwrap_or_else(|p| p.into_inner());
        Ok(Replayed {
            summary,
            report: String::from_utf8_lossy(&report).into_owned(),
        })
    }
}

/// The report's buffer, written by the replay thread.
struct SharedBuf(Arc<Mutex<Vec<u8>>>);

impl io::Write for SharedBuf {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
