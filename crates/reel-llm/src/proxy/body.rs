//! A response body on its way to the client: each frame the upstream sends is handed to
//! hyper at once, and taken in for the record at the next poll (or the end), in the same
//! task, with no channel between them: forwarding never waits for the record, and
//! recording costs no thread wake-up.
//!
//! Per frame, once forwarded: the bytes are decoded when compressed (up to
//! [`DECODED_MAX`]), cut into pieces (SSE events, NDJSON lines, or a whole body), and
//! each piece held for the trace (written at a line seam, past a budget or at the end,
//! so pieces are redacted together); a frame goes out together with the frames that had
//! already arrived behind it (never waiting for more), and its pieces are read into the
//! assistant turn at the next poll. The end of the response — the upstream's end or
//! error, the idle timeout, or the client going away (the body is dropped) — takes in
//! what was forwarded, writes the body pieces held for redaction (see
//! [`crate::tape::HeldBody`]), the turn and the `llm.error` / `llm.truncated` lines.

use std::io::Write as _;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::body::{Body, Bytes, Frame, Incoming, SizeHint};
use serde_json::{Map, Value, json};

use reel_net::reply::Reply;
use reel_trace::Timestamp;
use reel_trace::line::Timing;

use super::exchange::{Exchange, Framing, Shared, millis, redacted_value};
use super::limits::WHOLE_KEPT_MAX;
use super::notice::Notice;
use super::pool::Sender;
use crate::response::Assembler;
use crate::tape::{BodyPiece, HeldBody, kinds};

use std::sync::Arc;

/// What the client gets: reel's own small answer, or a recorded upstream response.
pub(crate) enum Answer {
    /// A body reel has whole.
    Full(Reply),
    /// The upstream's body, recorded as it passes.
    Recorded(Box<RecordedBody>),
}

impl Body for Answer {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        match self.get_mut() {
            Answer::Full(r) => Pin::new(r).poll_frame(cx),
            Answer::Recorded(b) => Pin::new(&mut **b).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Answer::Full(r) => r.is_end_stream(),
            Answer::Recorded(b) => b.finished && b.held.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Answer::Full(r) => r.size_hint(),
            Answer::Recorded(_) => SizeHint::default(),
        }
    }
}

/// Whether reel can decode `encoding` for the record.
pub(super) fn decodable(encoding: &str) -> bool {
    decoder(encoding).is_some()
}

/// Why a response ended.
enum End {
    Complete,
    ClientAbort,
    UpstreamDisconnect,
    IdleTimeout,
}

/// The most decoded bytes of one compressed response recorded: past it, decoding
/// stops and a `reel.gap` event counts the compressed bytes not decoded (a gzip bomb
/// costs the recorder this much, not its expansion; the client gets every byte as sent).
pub(crate) const DECODED_MAX: usize = 64 << 20;

/// How much compressed input is decoded at a time.
const DECODE_STEP: usize = 4 << 10;

/// A decoder for a `content-encoding` reel can read for the record.
fn decoder(encoding: &str) -> Option<Decoder> {
    let out = Capped {
        buf: Vec::new(),
        room: DECODED_MAX,
    };
    match encoding {
        "gzip" | "x-gzip" => Some(Decoder::Gzip(Box::new(flate2::write::GzDecoder::new(out)))),
        "deflate" => Some(Decoder::Deflate(Box::new(flate2::write::ZlibDecoder::new(
            out,
        )))),
        _ => None,
    }
}

/// The decoder's output: takes at most `room` bytes more, then refuses, which stops
/// the decoder within the chunk that reached the cap.
struct Capped {
    buf: Vec<u8>,
    room: usize,
}

impl std::io::Write for Capped {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.room == 0 {
            return Err(std::io::Error::other("the decoded-bytes cap is reached"));
        }
        let n = bytes.len().min(self.room);
        self.buf.extend_from_slice(&bytes[..n]);
        self.room -= n;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

enum Decoder {
    Gzip(Box<flate2::write::GzDecoder<Capped>>),
    Deflate(Box<flate2::write::ZlibDecoder<Capped>>),
}

impl Decoder {
    /// Decodes a chunk: what it completes (up to the cap); a corrupt stream yields
    /// nothing more (the bytes still went on).
    fn decode(&mut self, chunk: &[u8]) -> Vec<u8> {
        let written = match self {
            Decoder::Gzip(d) => d.write_all(chunk).and_then(|()| d.flush()),
            Decoder::Deflate(d) => d.write_all(chunk).and_then(|()| d.flush()),
        };
        let _ = written;
        std::mem::take(&mut self.out().buf)
    }

    /// Whether the cap stopped it.
    fn capped(&self) -> bool {
        let out = match self {
            Decoder::Gzip(d) => d.get_ref(),
            Decoder::Deflate(d) => d.get_ref(),
        };
        out.room == 0
    }

    fn out(&mut self) -> &mut Capped {
        match self {
            Decoder::Gzip(d) => d.get_mut(),
            Decoder::Deflate(d) => d.get_mut(),
        }
    }

    /// What the decoder still holds at the end of the body.
    fn finish(&mut self) -> Vec<u8> {
        if self.capped() {
            return Vec::new();
        }
        let _ = match self {
            Decoder::Gzip(d) => d.try_finish(),
            Decoder::Deflate(d) => d.try_finish(),
        };
        std::mem::take(&mut self.out().buf)
    }
}

/// A piece of a body for the record: its bytes, and for an SSE event its type and data.
struct Piece {
    bytes: Vec<u8>,
    event: Option<(String, String)>,
}

/// The size of the pieces a whole body past [`WHOLE_KEPT_MAX`] is recorded in.
const OVERFLOW_PIECE: usize = 1 << 20;

/// The pieces of a body being cut for the record.
struct Cutter {
    framing: Framing,
    sse: reel_net::sse::Parser,
    pending: Vec<u8>,
    /// A whole body grew past [`WHOLE_KEPT_MAX`]: it is recorded in pieces of at most
    /// [`OVERFLOW_PIECE`] bytes after the first, cut between words, and assembles no
    /// turn.
    overflow: bool,
    /// An SSE event grew past [`EVENT_MAX`]: it is recorded raw, not read, until its end.
    oversized: Option<EventEnd>,
    /// Bytes of events too large to read (what the turn leaves out).
    oversized_bytes: u64,
}

/// The largest SSE event read into the turn; a larger one is recorded in raw pieces
/// and counted in the turn's `omitted_bytes` (memory stays bounded whatever one event
/// weighs).
const EVENT_MAX: usize = 16 << 20;

/// Looks for the blank line that ends an SSE event, across chunks: a line break right
/// after a line break (LF, CR or CRLF).
#[derive(Debug, Clone, Copy)]
struct EventEnd {
    /// The last byte seen ended a line.
    at_line_start: bool,
    /// The last byte seen was a CR (a LF right after it is the same line break).
    after_cr: bool,
}

impl EventEnd {
    /// The state after `seen`, the start of an event.
    fn after(seen: &[u8]) -> EventEnd {
        let mut end = EventEnd {
            at_line_start: false,
            after_cr: false,
        };
        let tail = &seen[seen.len().saturating_sub(2)..];
        let _ = end.find(tail);
        end
    }

    /// Where in `bytes` the event ends (just past its blank line), if it does.
    fn find(&mut self, bytes: &[u8]) -> Option<usize> {
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'\n' && self.after_cr {
                self.after_cr = false;
                continue;
            }
            if b == b'\n' || b == b'\r' {
                if self.at_line_start {
                    let crlf = b == b'\r' && bytes.get(i + 1) == Some(&b'\n');
                    return Some(i + 1 + usize::from(crlf));
                }
                self.at_line_start = true;
                self.after_cr = b == b'\r';
            } else {
                self.at_line_start = false;
                self.after_cr = false;
            }
        }
        None
    }
}

impl Cutter {
    /// Feeds decoded bytes; returns the pieces they complete.
    fn feed(&mut self, bytes: &[u8]) -> Vec<Piece> {
        let mut out = Vec::new();
        match self.framing {
            Framing::Sse if self.oversized.is_some() => self.feed_oversized(bytes, &mut out),
            Framing::Sse => {
                let mut last = 0;
                let pending = &mut self.pending;
                self.sse.feed_with_ends(bytes, |event, end| {
                    pending.extend_from_slice(&bytes[last..end]);
                    last = end;
                    out.push(Piece {
                        bytes: std::mem::take(pending),
                        event: Some((
                            event.event_type().to_owned(),
                            event.data.unwrap_or_default(),
                        )),
                    });
                });
                self.pending.extend_from_slice(&bytes[last..]);
                if self.pending.len() > EVENT_MAX {
                    // An event too large to read: recorded raw, the parser's copy of it
                    // dropped, and its end looked for in the bytes alone.
                    let held = std::mem::take(&mut self.pending);
                    self.sse = reel_net::sse::Parser::new();
                    self.oversized = Some(EventEnd::after(&held));
                    self.oversized_bytes += held.len() as u64;
                    self.pending = held;
                    self.cut_raw(EVENT_MAX, &mut out);
                }
            }
            Framing::Ndjson => {
                let mut rest = bytes;
                while let Some(i) = memchr(b'\n', rest) {
                    self.pending.extend_from_slice(&rest[..=i]);
                    out.push(Piece {
                        bytes: std::mem::take(&mut self.pending),
                        event: None,
                    });
                    rest = &rest[i + 1..];
                }
                self.pending.extend_from_slice(rest);
            }
            Framing::Whole
                if self.overflow || self.pending.len() + bytes.len() > WHOLE_KEPT_MAX =>
            {
                // Too large to be one piece: from here on, pieces of about
                // OVERFLOW_PIECE bytes, each cut between words where it can be, so a
                // key is not split between two pieces redacted apart.
                let limit = if self.overflow {
                    OVERFLOW_PIECE
                } else {
                    WHOLE_KEPT_MAX
                };
                self.overflow = true;
                self.pending.extend_from_slice(bytes);
                self.cut_raw(limit, &mut out);
            }
            Framing::Whole => self.pending.extend_from_slice(bytes),
        }
        out
    }

    /// Bytes of an event past [`EVENT_MAX`]: recorded raw up to the blank line that ends
    /// it; what follows is parsed again.
    fn feed_oversized(&mut self, bytes: &[u8], out: &mut Vec<Piece>) {
        let Some(end) = self.oversized.as_mut() else {
            return;
        };
        match end.find(bytes) {
            Some(at) => {
                self.oversized = None;
                self.oversized_bytes += at as u64;
                self.pending.extend_from_slice(&bytes[..at]);
                out.push(Piece {
                    bytes: std::mem::take(&mut self.pending),
                    event: None,
                });
                out.extend(self.feed(&bytes[at..]));
            }
            None => {
                self.oversized_bytes += bytes.len() as u64;
                self.pending.extend_from_slice(bytes);
                self.cut_raw(OVERFLOW_PIECE, out);
            }
        }
    }

    /// Emits `pending` as raw pieces of at most `first` bytes, then [`OVERFLOW_PIECE`],
    /// each cut between words where it can be; keeps what is left.
    fn cut_raw(&mut self, first: usize, out: &mut Vec<Piece>) {
        let mut limit = first;
        let mut start = 0;
        while self.pending.len() - start > limit {
            let at = start + reel_net::framing::soft_cut(&self.pending[start..start + limit]);
            out.push(Piece {
                bytes: self.pending[start..at].to_vec(),
                event: None,
            });
            start = at;
            limit = OVERFLOW_PIECE;
        }
        self.pending.drain(..start);
    }

    /// The rest, at the end of the body.
    fn finish(&mut self) -> Option<Piece> {
        if self.pending.is_empty() {
            return None;
        }
        if self.oversized.take().is_some() {
            return Some(Piece {
                bytes: std::mem::take(&mut self.pending),
                event: None,
            });
        }
        let bytes = std::mem::take(&mut self.pending);
        let event = match self.framing {
            Framing::Sse => {
                let mut event = None;
                self.sse.finish(|e| event = Some(e));
                let (ty, data) = event.map_or(("message".to_owned(), String::new()), |e| {
                    (e.event_type().to_owned(), e.data.unwrap_or_default())
                });
                Some((ty, data))
            }
            _ => None,
        };
        Some(Piece { bytes, event })
    }
}

fn memchr(b: u8, s: &[u8]) -> Option<usize> {
    s.iter().position(|&c| c == b)
}

/// The recording side of one response.
pub(crate) struct Recording {
    sh: Arc<Shared>,
    ex: Exchange,
    status: u16,
    framing: Framing,
    decoder: Option<Decoder>,
    encoding: Option<String>,
    head_at: Instant,
    assembler: Option<Assembler>,
    cutter: Cutter,
    /// Pieces recorded and forwarded, still to be read into the turn.
    to_assemble: Vec<Piece>,
    /// Pieces forwarded and not yet in the trace: they are redacted together (a
    /// secret streamed across pieces) when the response ends.
    unwritten: HeldBody,
    ttft: Option<Duration>,
    bytes_so_far: u64,
    /// Compressed bytes not decoded for the record, from the frame that reached
    /// [`DECODED_MAX`] on.
    undecoded: u64,
    /// The upstream connection, back to the pool when the body ended cleanly.
    sender: Option<Sender>,
}

impl Recording {
    pub(super) fn new(
        sh: Arc<Shared>,
        ex: Exchange,
        status: u16,
        framing: Framing,
        encoding: Option<String>,
        sender: Sender,
    ) -> Recording {
        let mut assembler = Assembler::new(ex.route.kind);
        assembler.expect_usage_chunk(ex.facts.as_ref().is_some_and(|f| f.usage_chunk));
        Recording {
            decoder: encoding.as_deref().and_then(decoder),
            assembler: Some(assembler),
            cutter: Cutter {
                framing,
                sse: reel_net::sse::Parser::new(),
                pending: Vec::new(),
                overflow: false,
                oversized: None,
                oversized_bytes: 0,
            },
            sh,
            ex,
            status,
            framing,
            encoding,
            head_at: Instant::now(),
            to_assemble: Vec::new(),
            unwritten: HeldBody::default(),
            ttft: None,
            bytes_so_far: 0,
            undecoded: 0,
            sender: Some(sender),
        }
    }

    /// Takes a forwarded data frame in for the record: decoded (up to the cap), cut into
    /// pieces and held (see [`crate::tape::HeldBody`]).
    fn frame(&mut self, data: &[u8]) {
        self.bytes_so_far += data.len() as u64;
        if self.encoding.is_some() && self.decoder.is_none() {
            // Undecodable: the record keeps the bytes as they came.
            self.record_piece(data);
            return;
        }
        let Some(mut d) = self.decoder.take() else {
            self.take_in(data);
            return;
        };
        // A few KiB of compressed input at a time, each step's output cut into pieces
        // before the next: what one step can expand to (about a thousand times its
        // size for deflate) is all the decoded bytes held at once.
        let mut rest = data;
        while !rest.is_empty() {
            if d.capped() {
                self.undecoded += rest.len() as u64;
                break;
            }
            let (step, after) = rest.split_at(rest.len().min(DECODE_STEP));
            let plain = d.decode(step);
            self.take_in(&plain);
            rest = after;
        }
        self.decoder = Some(d);
    }

    /// Cuts `plain` bytes into pieces, records each and keeps them for the turn.
    fn take_in(&mut self, plain: &[u8]) {
        let pieces = self.cutter.feed(plain);
        for p in &pieces {
            self.record_piece(&p.bytes);
        }
        self.to_assemble.extend(pieces);
    }

    /// Reads the recorded pieces into the turn.
    fn assemble(&mut self) {
        if let Some(mut a) = self.assembler.take() {
            self.feed(&mut a);
            self.assembler = Some(a);
        }
    }

    fn feed(&mut self, a: &mut Assembler) {
        for p in self.to_assemble.drain(..) {
            let added = match (&p.event, self.framing) {
                (Some((ty, data)), _) => a.sse_event(ty, data),
                (None, Framing::Ndjson) => {
                    a.ndjson_line(std::str::from_utf8(&p.bytes).unwrap_or(""))
                }
                (None, _) => false,
            };
            if added && self.ttft.is_none() {
                self.ttft = Some(self.ex.started.elapsed());
            }
        }
    }

    /// Holds a piece for the trace; what is held is written once it passes the budget.
    fn record_piece(&mut self, piece: &[u8]) {
        if piece.is_empty() {
            return;
        }
        let us = u64::try_from(self.head_at.elapsed().as_micros()).unwrap_or(u64::MAX);
        let piece = BodyPiece {
            t: Timestamp::now(),
            us,
            bytes: piece.to_vec(),
        };
        if self.unwritten.hold(piece) {
            self.write_held();
        }
    }

    /// Writes the pieces held, redacted together.
    fn write_held(&mut self) {
        let decoded = self.decoder.as_ref().and(self.encoding.as_deref());
        self.sh.tape.bodies(self.ex.n, &mut self.unwritten, decoded);
    }

    /// The end of the response: the rest of the body, the turn, and the error and
    /// truncation lines.
    fn finish(&mut self, end: End) {
        let Some(mut assembler) = self.assembler.take() else {
            return; // finished already
        };
        let whole = self.take_in_the_rest(&mut assembler);
        let reason = truncation(
            &end,
            self.status,
            self.framing,
            // Only the generation endpoints have an end marker reel reads; an unknown
            // API's stream (Gemini's has none) ends when its body does.
            self.ex.route.kind.generates(),
            &assembler,
        );
        let ex = &self.ex;
        if ex.route.kind.generates() && ex.facts.is_some() && self.status < 400 {
            self.write_turn(assembler, reason.as_deref());
        }
        if self.status >= 400 {
            self.write_error(&whole);
        }
        if let Some(reason) = reason {
            self.write_truncated(&reason);
        }
        if let (End::Complete, Some(sender)) = (end, self.sender.take()) {
            self.sh.pool.give_back(&self.ex.route.upstream, sender);
        }
    }

    /// Takes in what the decoder and then the cutter still hold, writes every piece
    /// held (however the response ended, nothing held is dropped: it goes before the
    /// turn) and reads the rest into the turn. Returns the last piece (a whole body).
    fn take_in_the_rest(&mut self, assembler: &mut Assembler) -> Vec<u8> {
        if let Some(rest) = self.decoder.as_mut().map(Decoder::finish) {
            self.take_in(&rest);
        }
        let mut whole = Vec::new();
        if let Some(p) = self.cutter.finish() {
            self.record_piece(&p.bytes);
            if self.framing == Framing::Whole {
                assembler.whole_body(&p.bytes);
                whole = p.bytes;
            } else {
                whole.clone_from(&p.bytes);
                self.to_assemble.push(p);
            }
        }
        self.write_held();
        if self.undecoded > 0 {
            self.sh.tape.gap(
                self.ex.n,
                self.undecoded,
                "decoded body past its cap (64 MiB)",
            );
        }
        self.feed(assembler);
        whole
    }

    /// Writes the assistant turn (truncated when `reason` says so) and, for a
    /// completed response, saves it to MMSP.
    fn write_turn(&self, assembler: Assembler, reason: Option<&str>) {
        let (sh, ex) = (&self.sh, &self.ex);
        let duration = ex.started.elapsed();
        let mut turn = assembler.finish(reason.is_some());
        if self.cutter.oversized_bytes > 0 {
            let before = turn
                .extra
                .get("omitted_bytes")
                .and_then(serde_json::Value::as_u64);
            turn.extra.insert(
                "omitted_bytes".into(),
                (before.unwrap_or(0) + self.cutter.oversized_bytes).into(),
            );
        }
        turn.t = Some(Timestamp::now().to_iso().as_str().to_owned());
        turn.endpoint = Some(ex.route.endpoint.clone());
        turn.stream = Some(self.framing != Framing::Whole);
        turn.source = Some("llm".into());
        turn.timing = Some(Timing {
            ttft_ms: self.ttft.map(millis),
            duration_ms: Some(millis(duration)),
            ..Timing::default()
        });
        let written = sh.tape.turn(ex.n, ex.conversation, &mut turn);
        // MMSP saves a completed response only (RFC-0010 §3).
        if let (Some(live), Some(id), None) = (&sh.mmsp, &ex.mmsp_id, reason) {
            if let Err(f) = live.response(id, &written) {
                (sh.notices)(Notice::MmspFailed {
                    id: f.id,
                    error: f.error,
                });
            }
        }
    }

    /// `llm.error` for an error status, with the body when it is JSON (redacted).
    fn write_error(&self, whole: &[u8]) {
        let (sh, ex) = (&self.sh, &self.ex);
        let text = String::from_utf8_lossy(whole);
        let body = serde_json::from_str::<Value>(&text)
            .map(|v| redacted_value(sh.tape.redactor(), &v))
            .unwrap_or(Value::Null);
        let raw = json!({
            "endpoint": ex.route.endpoint,
            "url": ex.route.url,
            "status": self.status,
            "body": body,
        });
        sh.tape
            .event(ex.n, Timestamp::now(), kinds::ERROR, &raw, Map::new());
    }

    /// `llm.truncated` with the reason and the bytes that came.
    fn write_truncated(&self, reason: &str) {
        let (sh, ex) = (&self.sh, &self.ex);
        let raw = json!({
            "endpoint": ex.route.endpoint,
            "url": ex.route.url,
            "reason": reason,
            "bytes_so_far": self.bytes_so_far,
        });
        sh.tape
            .event(ex.n, Timestamp::now(), kinds::TRUNCATED, &raw, Map::new());
    }
}

/// Why a response counts as truncated, or `None` when its content arrived whole.
///
/// The rule: a response is truncated when its content was cut before its terminal
/// event. An answer whose terminal event (or last event with content: the stop reason
/// and usage) arrived is complete whoever closed the connection first and however the
/// last writes were framed: SDKs hang up right after `message_delta` or `[DONE]`. An
/// error status or a whole body that ended is complete; so is a stream of a protocol
/// with no end marker reel knows, when its body ended cleanly.
fn truncation(
    end: &End,
    status: u16,
    framing: Framing,
    knows_its_end: bool,
    assembler: &Assembler,
) -> Option<String> {
    if let (End::Complete, Some(e)) = (end, assembler.stream_error()) {
        if status < 400 && framing != Framing::Whole {
            return Some(format!("upstream_error: {e}"));
        }
    }
    if assembler.complete() {
        return None;
    }
    match end {
        End::Complete if status >= 400 || framing == Framing::Whole || !knows_its_end => None,
        End::Complete => Some("upstream_error: the stream ended before its last event".to_owned()),
        End::ClientAbort => Some("client_abort".to_owned()),
        End::UpstreamDisconnect => Some("upstream_disconnect".to_owned()),
        End::IdleTimeout => Some("idle_timeout".to_owned()),
    }
}

/// The upstream's response body, recorded as it is forwarded.
///
/// hyper aborts a response at an error, or at an end short of its `Content-Length`,
/// without writing out the bytes it still buffers; so after a data frame, an end or an
/// error waits one turn (hyper flushes when a body is not ready), and the client gets
/// every byte the upstream sent before the break (as `reel_net::reply` does).
pub(crate) struct RecordedBody {
    upstream: Incoming,
    rec: Recording,
    idle: Duration,
    timer: Pin<Box<tokio::time::Sleep>>,
    finished: bool,
    /// A data frame was given since the body was last not ready.
    unflushed: bool,
    /// The end (`None`) or error held back for one turn.
    held: Option<Option<std::io::Error>>,
    /// How the upstream ended, seen while taking in what had arrived with a frame: the
    /// next poll ends the body.
    ended: Option<(End, Option<std::io::Error>)>,
    /// Frames given to the client and not yet taken in for the record: a frame goes on
    /// first, and is decoded, cut and held for the trace at the next poll (or the end),
    /// so forwarding never waits for the record.
    unrecorded: Vec<Bytes>,
}

/// The most bytes one frame to the client gathers from frames that had already arrived
/// (see [`RecordedBody::with_what_else_arrived`]).
const GATHER_MAX: usize = 256 << 10;

impl RecordedBody {
    pub(super) fn new(upstream: Incoming, rec: Recording) -> RecordedBody {
        let idle = rec.sh.idle;
        RecordedBody {
            upstream,
            rec,
            idle,
            timer: Box::pin(tokio::time::sleep(idle)),
            finished: false,
            unflushed: false,
            held: None,
            ended: None,
            unrecorded: Vec::new(),
        }
    }

    /// Takes the frames already forwarded in for the record.
    fn record_forwarded(&mut self) {
        for frame in std::mem::take(&mut self.unrecorded) {
            self.rec.frame(&frame);
        }
    }

    /// `data`, followed by the frames the upstream had already sent (each recorded as
    /// it is taken), up to [`GATHER_MAX`]: nothing waits for more, but a client that
    /// fell behind gets what is there in one write rather than one per upstream chunk.
    fn with_what_else_arrived(&mut self, cx: &mut Context<'_>, data: Bytes) -> Bytes {
        let mut gathered: Option<Vec<u8>> = None;
        loop {
            let len = gathered.as_ref().map_or(data.len(), Vec::len);
            if len >= GATHER_MAX {
                break;
            }
            match Pin::new(&mut self.upstream).poll_frame(cx) {
                Poll::Pending => break,
                Poll::Ready(None) => {
                    self.ended = Some((End::Complete, None));
                    break;
                }
                Poll::Ready(Some(Err(e))) => {
                    let e = std::io::Error::other(format!("the upstream broke off: {e}"));
                    self.ended = Some((End::UpstreamDisconnect, Some(e)));
                    break;
                }
                Poll::Ready(Some(Ok(frame))) => {
                    if let Ok(more) = frame.into_data() {
                        self.unrecorded.push(more.clone());
                        gathered
                            .get_or_insert_with(|| data.to_vec())
                            .extend_from_slice(&more);
                    }
                }
            }
        }
        gathered.map_or(data, Bytes::from)
    }

    /// Ends the body with `end`: the record is finished; the client gets `error`, or
    /// the end, after one more turn when a frame is still unflushed.
    fn end(
        &mut self,
        cx: &mut Context<'_>,
        end: End,
        error: Option<std::io::Error>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        self.finished = true;
        self.record_forwarded();
        self.rec.finish(end);
        if std::mem::take(&mut self.unflushed) {
            self.held = Some(error);
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        Poll::Ready(error.map(Err))
    }
}

impl Body for RecordedBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        let this = self.get_mut();
        if let Some(last) = this.held.take() {
            return Poll::Ready(last.map(Err));
        }
        if this.finished {
            return Poll::Ready(None);
        }
        if let Some((end, error)) = this.ended.take() {
            return this.end(cx, end, error);
        }
        // The frames that went out last time: into the record, then into the turn.
        this.record_forwarded();
        this.rec.assemble();
        loop {
            match Pin::new(&mut this.upstream).poll_frame(cx) {
                Poll::Pending => {
                    if this.timer.as_mut().poll(cx).is_ready() {
                        let e = std::io::Error::other("the upstream went silent");
                        return this.end(cx, End::IdleTimeout, Some(e));
                    }
                    this.unflushed = false;
                    return Poll::Pending;
                }
                Poll::Ready(None) => return this.end(cx, End::Complete, None),
                Poll::Ready(Some(Err(e))) => {
                    let e = std::io::Error::other(format!("the upstream broke off: {e}"));
                    return this.end(cx, End::UpstreamDisconnect, Some(e));
                }
                Poll::Ready(Some(Ok(frame))) => {
                    let deadline = tokio::time::Instant::now() + this.idle;
                    this.timer.as_mut().reset(deadline);
                    // Trailers are not passed on (HTTP/1.1 clients of LLM APIs use none).
                    let Ok(data) = frame.into_data() else {
                        continue;
                    };
                    this.unrecorded.push(data.clone());
                    this.unflushed = true;
                    let data = this.with_what_else_arrived(cx, data);
                    return Poll::Ready(Some(Ok(Frame::data(data))));
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.finished && self.held.is_none()
    }
}

impl Drop for RecordedBody {
    fn drop(&mut self) {
        if !self.finished {
            // hyper let go of the body before its end was polled. A client may close as
            // soon as it has the last byte the `Content-Length` promised (the SDKs do,
            // closing their client): that body was whole. Otherwise the client went
            // away.
            self.finished = true;
            let end = match self.ended.take() {
                Some((end, _)) => end,
                None if self.upstream.is_end_stream() => End::Complete,
                None => End::ClientAbort,
            };
            self.record_forwarded();
            self.rec.finish(end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_body_past_its_limit_is_cut_between_words_so_a_key_stays_in_one_piece() {
        // Regression (issue 28): a non-streamed body over 16 MiB was recorded in the
        // chunks it came in, each redacted alone, so a key across the 16 MiB mark
        // survived as two halves.
        let key = b"sk-ant-api03-Zq8rT2mX0pVb7KdT4wNsXq7LmN2pR9sT4vW6yZ1bC3dF5gH8jK0aEoIuAA";
        let mut body = b"{\"text\":\"".to_vec();
        // Across the end of the chunk that first passes the limit.
        while body.len() < WHOLE_KEPT_MAX + 64 * 1024 - 20 {
            body.extend_from_slice(b"lorem ipsum ");
        }
        body.extend_from_slice(key);
        for _ in 0..300_000 {
            body.extend_from_slice(b" dolor sit");
        }
        body.extend_from_slice(b"\"}");
        let mut cutter = Cutter {
            framing: Framing::Whole,
            sse: reel_net::sse::Parser::default(),
            pending: Vec::new(),
            overflow: false,
            oversized: None,
            oversized_bytes: 0,
        };
        let mut pieces = Vec::new();
        for chunk in body.chunks(64 * 1024) {
            pieces.extend(cutter.feed(chunk).into_iter().map(|p| p.bytes));
        }
        pieces.extend(cutter.finish().map(|p| p.bytes));
        assert!(pieces.len() >= 3, "{} pieces", pieces.len());
        assert!(pieces.iter().all(|p| p.len() <= WHOLE_KEPT_MAX));
        assert!(pieces[1..].iter().all(|p| p.len() <= OVERFLOW_PIECE));
        assert_eq!(pieces.concat(), body);
        let whole = pieces
            .iter()
            .filter(|p| p.windows(key.len()).any(|w| w == key))
            .count();
        assert_eq!(whole, 1, "the key is in one piece");
    }

    #[test]
    fn an_sse_event_past_its_limit_is_recorded_raw_and_the_stream_read_on_after_it() {
        // Regression (issue 28): one 1.2 GB event cost 5 times its size (the parser's
        // line, its data, the pending bytes, the piece) and aborted the recorder.
        let small = |text: &str| {
            format!(
                "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"{text}\"}}}}\n\n"
            )
        };
        let mut stream = small("before").into_bytes();
        stream.extend_from_slice(b"event: content_block_delta\ndata: {\"delta\":{\"text\":\"");
        while stream.len() < 40 << 20 {
            stream.extend_from_slice(b"lorem ipsum ");
        }
        stream.extend_from_slice(b"\"}}\r\n\r\n");
        stream.extend_from_slice(small("after").as_bytes());
        let mut cutter = Cutter {
            framing: Framing::Sse,
            sse: reel_net::sse::Parser::new(),
            pending: Vec::new(),
            overflow: false,
            oversized: None,
            oversized_bytes: 0,
        };
        let mut pieces = Vec::new();
        for chunk in stream.chunks(100_000) {
            pieces.extend(cutter.feed(chunk));
        }
        pieces.extend(cutter.finish());
        let joined: Vec<u8> = pieces.iter().flat_map(|p| p.bytes.clone()).collect();
        assert_eq!(joined, stream);
        assert!(pieces.iter().all(|p| p.bytes.len() <= EVENT_MAX + 100_000));
        let read: Vec<&str> = pieces
            .iter()
            .filter_map(|p| p.event.as_ref().map(|(_, d)| d.as_str()))
            .collect();
        assert_eq!(read.len(), 2, "the events around the large one are read");
        assert!(
            read[0].contains("before") && read[1].contains("after"),
            "{read:?}"
        );
        assert!(cutter.oversized_bytes > 39 << 20);
    }
}
