//! A response body on its way to the client: each frame the upstream sends is handed to
//! hyper at once, and taken in for the record at the next poll (or the end), in the same
//! task, with no channel between them: forwarding never waits for the record, and
//! recording costs no thread wake-up.
//!
//! Per frame, once forwarded: the bytes are decoded when compressed (up to
//! [`super::decode::DECODED_MAX`]), cut into pieces (SSE events, NDJSON lines, or a whole body), and
//! each piece held for the trace (written at a line seam, past a budget or at the end,
//! so pieces are redacted together); a frame goes out together with the frames that had
//! already arrived behind it (never waiting for more), and its pieces are read into the
//! assistant turn at the next poll. The end of the response — the upstream's end or
//! error, the idle timeout, or the client going away (the body is dropped) — takes in
//! what was forwarded, writes the body pieces held for redaction (see
//! [`crate::tape::HeldBody`]), the turn and the `llm.error` / `llm.truncated` lines.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::body::{Body, Bytes, Frame, Incoming, SizeHint};
use serde_json::{Map, Value, json};

use reel_net::reply::Reply;
use reel_trace::Timestamp;
use reel_trace::line::Timing;

use super::cut::{Cutter, Piece};
use super::decode::{DECODE_STEP, Decoder, decoder};
use super::exchange::{Exchange, Framing, Shared, millis, redacted_value};
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

/// Why a response ended.
enum End {
    Complete,
    ClientAbort,
    UpstreamDisconnect,
    IdleTimeout,
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
    /// [`super::decode::DECODED_MAX`] on.
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
            cutter: Cutter::new(framing),
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
