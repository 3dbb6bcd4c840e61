//! The live export of `--otlp URL` on `reel rec` and `reel llm`: spans sent while the
//! run is recorded, without ever making the recording wait.
//!
//! A follower thread reads the trace file as the recorder writes it (the file is the
//! interface: the recorder's path is untouched and pays nothing), builds spans
//! ([`SpanBuilder`]) and offers them to a bounded queue of [`QUEUE`] spans. A sender
//! thread takes batches off the queue (up to [`BATCH`] spans, or what came within
//! [`FLUSH`]) and posts them with retries ([`Client::send`]). When the collector is slow
//! or down the queue fills and further spans are dropped and counted; a batch that
//! failed for good is counted as dropped too. [`LiveExport::finish`] reads the trace to
//! its end, sends what is left within a grace period, and reports the counts.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::trace::v1::Span;
use reel_trace::follow::Follower;

use crate::export::{BATCH, request, to_protobuf};
use crate::send::{Client, Collector};
use crate::spans::SpanBuilder;

/// Spans waiting to be sent; past this, new spans are dropped (and counted).
pub const QUEUE: usize = 4096;

/// How long a span waits for its batch to fill.
pub const FLUSH: Duration = Duration::from_secs(1);

/// How long a batch may be retried while the recording runs.
pub const RETRY_WINDOW: Duration = Duration::from_secs(30);

/// How often the follower looks for new lines.
const POLL: Duration = Duration::from_millis(100);

/// What a live export did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportTally {
    /// Spans the collector took (rejected ones excluded).
    pub sent: u64,
    /// Spans the collector took and then rejected (a partial success).
    pub rejected: u64,
    /// Spans dropped: the queue was full, or their batch failed for good.
    pub dropped: u64,
    /// Tries past the first, all batches together.
    pub retries: u64,
    /// The last failure, if any.
    pub last_error: Option<String>,
    /// The trace could not be read (the export stopped there).
    pub read_error: Option<String>,
}

#[derive(Default)]
struct Shared {
    dropped: AtomicU64,
    closing: AtomicBool,
    deadline: Mutex<Option<Instant>>,
}

/// A queue of spans and the thread that sends them.
pub struct Exporter {
    tx: SyncSender<Span>,
    shared: Arc<Shared>,
    sender: JoinHandle<ExportTally>,
}

impl Exporter {
    /// Starts sending to `client`, queueing at most `queue` spans.
    pub fn start(client: Client, queue: usize) -> Exporter {
        let (tx, rx) = sync_channel(queue.max(1));
        let shared = Arc::new(Shared::default());
        let s = Arc::clone(&shared);
        let sender = std::thread::Builder::new()
            .name("reel-otlp".into())
            .spawn(move || send_loop(client, rx, &s))
            .unwrap_or_else(|_| {
                // No thread: every span will count as dropped.
                std::thread::spawn(ExportTally::default)
            });
        Exporter { tx, shared, sender }
    }

    /// Queues `span`, or drops it (counted) when the queue is full. Never waits.
    pub fn offer(&self, span: Span) {
        match self.tx.try_send(span) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.shared.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Sends what is queued, for at most `grace`, and reports.
    pub fn finish(self, grace: Duration) -> ExportTally {
        if let Ok(mut d) = self.shared.deadline.lock() {
            *d = Some(Instant::now() + grace);
        }
        self.shared.closing.store(true, Ordering::Relaxed);
        drop(self.tx);
        let mut report = self.sender.join().unwrap_or_default();
        report.dropped += self.shared.dropped.load(Ordering::Relaxed);
        report
    }
}

fn send_loop(mut client: Client, rx: Receiver<Span>, shared: &Shared) -> ExportTally {
    let mut report = ExportTally::default();
    let mut open = true;
    while open {
        let mut batch = Vec::new();
        let until = Instant::now() + FLUSH;
        while batch.len() < BATCH {
            let wait = until.saturating_duration_since(Instant::now());
            match rx.recv_timeout(wait) {
                Ok(span) => batch.push(span),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => {
                    open = false;
                    break;
                }
            }
        }
        if batch.is_empty() {
            continue;
        }
        // A batch is retried for RETRY_WINDOW, and no longer than the end of the
        // recording's grace, however far it got.
        let window = Instant::now() + RETRY_WINDOW;
        let deadline = || {
            let finish = shared.deadline.lock().ok().and_then(|d| *d);
            finish.map_or(window, |f| f.min(window))
        };
        let n = batch.len() as u64;
        if shared.closing.load(Ordering::Relaxed) && Instant::now() >= deadline() {
            report.dropped += n;
            continue;
        }
        match client.send(&to_protobuf(&request(batch)), &deadline) {
            Ok(accepted) => {
                report.sent += n.saturating_sub(accepted.rejected);
                report.rejected += accepted.rejected;
                report.retries += u64::from(accepted.attempts.saturating_sub(1));
            }
            Err(e) => {
                report.dropped += n;
                report.last_error = Some(e.message);
            }
        }
    }
    report
}

/// A live export following a trace file.
pub struct LiveExport {
    stop: Arc<AtomicBool>,
    follower: JoinHandle<(Exporter, Option<String>)>,
}

impl LiveExport {
    /// Follows the trace at `path` (being written) and sends its spans to `collector`.
    pub fn start(path: PathBuf, collector: Collector) -> std::io::Result<LiveExport> {
        let client = Client::new(collector)?;
        let exporter = Exporter::start(client, QUEUE);
        let stop = Arc::new(AtomicBool::new(false));
        let s = Arc::clone(&stop);
        let follower = std::thread::Builder::new()
            .name("reel-otlp-follow".into())
            .spawn(move || {
                let error = follow(&path, &exporter, &s).err();
                (exporter, error)
            })?;
        Ok(LiveExport { stop, follower })
    }

    /// The recording has ended: reads the trace to its end, sends what is left within
    /// `grace`, and reports.
    pub fn finish(self, grace: Duration) -> ExportTally {
        self.stop.store(true, Ordering::Relaxed);
        match self.follower.join() {
            Ok((exporter, read_error)) => {
                let mut report = exporter.finish(grace);
                report.read_error = read_error;
                report
            }
            Err(_) => ExportTally {
                read_error: Some("the follower thread failed".into()),
                ..ExportTally::default()
            },
        }
    }
}

/// Follows the trace at `path` (its rotated companions first) until `stop` is set and
/// its end is reached, offering each finished span to `exporter`.
fn follow(path: &std::path::Path, exporter: &Exporter, stop: &AtomicBool) -> Result<(), String> {
    let mut follower = Follower::open(path);
    let mut builder = SpanBuilder::new(Some(path.display().to_string()));
    let mut line = 0u64;
    loop {
        let stopping = stop.load(Ordering::Relaxed);
        let n = follower
            .read_more(usize::MAX, &mut |bytes, _| {
                line += 1;
                builder.push(line, bytes);
            })
            .map_err(|e| format!("{}: {e}", path.display()))?;
        for span in builder.take() {
            exporter.offer(span);
        }
        if n == 0 {
            if stopping {
                break;
            }
            std::thread::sleep(POLL);
        }
    }
    // A last line without its line break (a recorder that was killed).
    follower.finish(&mut |bytes, _| {
        line += 1;
        builder.push(line, bytes);
    });
    for span in builder.finish() {
        exporter.offer(span);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::send::Collector;

    #[test]
    fn a_full_queue_drops_and_counts_and_never_waits() {
        // Port 9 on loopback: nothing listens, every try fails at once.
        let collector = Collector::new("http://127.0.0.1:9/v1/traces", &[]).unwrap();
        let exporter = Exporter::start(Client::new(collector).unwrap(), 2);
        for _ in 0..50 {
            exporter.offer(Span::default());
        }
        let report = exporter.finish(Duration::ZERO);
        assert_eq!(report.sent, 0);
        assert_eq!(report.dropped, 50, "{report:?}");
    }
}
