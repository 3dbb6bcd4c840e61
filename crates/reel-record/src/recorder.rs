//! Turning observed lines into trace lines.
//!
//! The [`Recorder`] owns the trace's [`LineRecorder`] and does all the per-line work:
//! classifying, redacting, formatting and writing each line (the rules are
//! `reel_redact::record`'s, the same for every producer). Client and server lines are
//! messages (or `reel.nonjson` events when not JSON), server stderr lines `reel.stderr`
//! events, lines dropped with `--drop-when-behind` `reel.gap` events.
//!
//! Lines reach the file whole and in batches: a batch the queue gives out is formatted
//! into a buffer that is written out in one `write`, so a recorder killed with `kill -9`
//! leaves a file readable to its last complete line, and a busy session costs one
//! `write` per batch, not per line.

use std::io::{self, Write};

use reel_redact::record::{LineRecorder, Tags};
use reel_redact::redact::Redactor;
use reel_trace::target::BatchSink;
use reel_trace::{Dir, Ending, Timestamp, TraceWriter};

use crate::queue::{Gap, Item, LineRecord, Stream};

/// The session's recorder: whoever writes a batch (the writer thread, or a forwarding
/// thread writing its own lines) writes it through this.
pub(crate) struct Recorder<W: Write> {
    lines: LineRecorder<BatchSink<W>>,
    /// The first write error; after it nothing more is written (the traffic goes on).
    failed: Option<io::Error>,
}

impl<W: Write> Recorder<W> {
    pub fn new(writer: TraceWriter<BatchSink<W>>, redactor: Redactor) -> Self {
        Recorder {
            lines: LineRecorder::new(writer, redactor),
            failed: None,
        }
    }

    /// Writes a batch the queue gave out, leaving `batch` empty, and hands it to the OS.
    /// `on_error` is called once, on the first write error; after it the batch is
    /// dropped unwritten (the traffic goes on).
    pub fn write_batch(&mut self, batch: &mut Vec<Item>, on_error: &dyn Fn(&io::Error)) {
        for item in batch.drain(..) {
            if self.failed.is_none() {
                let r = self.record(item);
                self.note(r, on_error);
            }
        }
        if self.failed.is_none() {
            let r = self.writer_flush();
            self.note(r, on_error);
        }
    }

    fn note(&mut self, r: io::Result<()>, on_error: &dyn Fn(&io::Error)) {
        if let Err(e) = r {
            on_error(&e);
            self.failed = Some(e);
        }
    }

    fn writer_flush(&mut self) -> io::Result<()> {
        self.lines.flush()
    }

    /// Lines written so far.
    pub fn counts(&self) -> reel_trace::Counts {
        self.lines.counts()
    }

    /// Writes the `end` line and returns the first write error, if any.
    pub fn finish(self, ending: Ending, at: Timestamp) -> Option<io::Error> {
        if let Some(e) = self.failed {
            return Some(e);
        }
        self.lines.finish(ending, at).err()
    }

    fn record(&mut self, #[allow(unused_mut)] mut item: Item) -> io::Result<()> {
        #[cfg(feature = "http")]
        if let Item::Line(l) = &mut item {
            if let Some(note) = l.http.take() {
                return crate::http::lines::write(&mut self.lines, l, *note);
            }
        }
        match item {
            Item::Gap(Gap {
                since,
                lines,
                bytes,
            }) => self.lines.gap(since, lines, bytes),
            Item::Line(l) => match l.stream {
                Stream::ServerStderr => self.lines.stderr(l.t, &l.bytes, l.eol),
                Stream::ClientToServer => self.message(Dir::In, &l, Tags::default()),
                Stream::ServerToClient => self.message(Dir::Out, &l, Tags::default()),
            },
        }
    }

    /// A line that should be one JSON value (see [`LineRecorder::message`]).
    fn message(&mut self, dir: Dir, l: &LineRecord, tags: Tags<'_>) -> io::Result<()> {
        self.lines.message(l.t, dir, &l.bytes, l.eol, tags)
    }
}
