//! The `llm` bench's model API and its client, in-process on `std::net` threads: an
//! Anthropic-style Messages endpoint that streams SSE as fast as the kernel takes it, and
//! a keep-alive client that times what arrives.
//!
//! The upstream answers every `POST` with the stream its request's `model` names,
//! `bench-stream-EVENTS-BYTES-GAP`: `message_start`, `content_block_start`, EVENTS
//! `content_block_delta` events whose text is BYTES long, GAP µs apart (on an absolute
//! schedule, so sleeping late does not drift), then `content_block_stop`,
//! `message_delta` and `message_stop`. HTTP/1.1 with keep-alive, `Transfer-Encoding:
//! chunked`, each event written as its own chunk with one `write` (the head goes with the
//! first event). Each delta's text starts with the 20-digit nanosecond time it was
//! written, on [`now_ns`]'s clock, which the client shares: the client reads it back to
//! time each event's trip.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// Nanoseconds since this process first asked: the clock the upstream stamps events with
/// and the client times them on.
pub fn now_ns() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    let e = *EPOCH.get_or_init(Instant::now);
    u64::try_from(e.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// The model name of a stream of `events` deltas of `bytes` bytes of text, `gap_us` apart.
pub fn model(events: usize, bytes: usize, gap_us: u64) -> String {
    format!("bench-stream-{events}-{bytes}-{gap_us}")
}

/// SSE payload bytes (the decoded body) of [`model`]`(events, bytes, _)`.
pub fn body_len(events: usize, bytes: usize) -> u64 {
    let mut n = 0;
    for e in prologue() {
        n += e.len();
    }
    n += events * (DELTA_HEAD.len() + bytes.max(STAMP) + DELTA_TAIL.len());
    for e in epilogue() {
        n += e.len();
    }
    n as u64
}

const STAMP: usize = 20;
const DELTA_HEAD: &str = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"";
const DELTA_TAIL: &str = "\"}}\n\n";
const LAST_EVENT: &[u8] = b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

fn prologue() -> [&'static str; 2] {
    [
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_bench\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"bench\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":11,\"output_tokens\":1}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    ]
}

fn epilogue() -> [&'static str; 3] {
    [
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":7}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    ]
}

/// The running upstream; stops accepting when dropped (open connections end with their
/// clients).
pub struct Upstream {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

/// Starts the upstream on a free loopback port.
pub fn start_upstream() -> anyhow::Result<Upstream> {
    let listener = TcpListener::bind("127.0.0.1:0").context("cannot bind the upstream")?;
    let addr = listener.local_addr()?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    now_ns();
    std::thread::Builder::new()
        .name("bench-upstream".into())
        .spawn(move || {
            for conn in listener.incoming() {
                if flag.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let _ = std::thread::Builder::new()
                    .name("bench-upstream-conn".into())
                    .spawn(move || serve_conn(conn));
            }
        })?;
    Ok(Upstream { addr, stop })
}

fn serve_conn(stream: TcpStream) -> anyhow::Result<()> {
    stream.set_nodelay(true)?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut w = stream;
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let mut content_length = 0usize;
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                return Ok(());
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    content_length = v.trim().parse().context("bad content-length")?;
                } else if k.eq_ignore_ascii_case("transfer-encoding") {
                    bail!("the bench upstream reads only content-length request bodies");
                }
            }
        }
        let mut body = vec![0; content_length];
        reader.read_exact(&mut body)?;
        match spec_of(&body) {
            Some((events, bytes, gap)) => stream_answer(&mut w, events, bytes, gap)?,
            None => {
                let msg = b"{\"type\":\"error\",\"error\":{\"type\":\"not_found_error\",\"message\":\"no such model\"}}";
                write!(
                    w,
                    "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                    msg.len()
                )?;
                w.write_all(msg)?;
            }
        }
    }
}

/// `(events, bytes, gap_us)` from a request body's `model`.
fn spec_of(body: &[u8]) -> Option<(usize, usize, u64)> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    let m = v.get("model")?.as_str()?.strip_prefix("bench-stream-")?;
    let mut it = m.split('-');
    let events = it.next()?.parse().ok()?;
    let bytes = it.next()?.parse().ok()?;
    let gap = it.next()?.parse().ok()?;
    Some((events, bytes, gap))
}

fn chunk(out: &mut Vec<u8>, event: &[u8]) {
    out.extend_from_slice(format!("{:x}\r\n", event.len()).as_bytes());
    out.extend_from_slice(event);
    out.extend_from_slice(b"\r\n");
}

fn stream_answer(
    w: &mut TcpStream,
    events: usize,
    bytes: usize,
    gap_us: u64,
) -> anyhow::Result<()> {
    let filler: Vec<u8> = b"reel bench stream filler text 0123456789 abcdefghijklmnopqrstuvwxyz. "
        .iter()
        .copied()
        .cycle()
        .take(bytes.saturating_sub(STAMP))
        .collect();
    let mut out = Vec::with_capacity(bytes + 256);
    out.extend_from_slice(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n",
    );
    for e in prologue() {
        chunk(&mut out, e.as_bytes());
    }
    w.write_all(&out)?;
    let start = Instant::now();
    let mut event = Vec::with_capacity(bytes + 256);
    for i in 0..events {
        if gap_us > 0 {
            let due = start + Duration::from_micros(gap_us * (i as u64 + 1));
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
        event.clear();
        event.extend_from_slice(DELTA_HEAD.as_bytes());
        event.extend_from_slice(format!("{:020}", now_ns()).as_bytes());
        event.extend_from_slice(&filler);
        event.extend_from_slice(DELTA_TAIL.as_bytes());
        out.clear();
        chunk(&mut out, &event);
        w.write_all(&out)?;
    }
    out.clear();
    for e in epilogue() {
        chunk(&mut out, e.as_bytes());
    }
    out.extend_from_slice(b"0\r\n\r\n");
    w.write_all(&out)?;
    Ok(())
}

/// One streamed answer as the client saw it.
#[derive(Debug, Default)]
pub struct Answer {
    /// From the request's write to the first body byte.
    pub ttfb: Duration,
    /// Decoded body bytes (the SSE payload).
    pub bytes: u64,
    /// Each delta's trip, ns: arrival on [`now_ns`]'s clock − the stamp it carried
    /// (only when asked for).
    pub trips_ns: Vec<u64>,
}

/// A keep-alive client of one server.
pub struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    host: String,
    /// Requests sent on this connection, to make each request body unique.
    pub sent: u64,
}

impl Client {
    /// Connects to `addr` (`HOST:PORT`).
    pub fn connect(addr: &str) -> anyhow::Result<Client> {
        let s = TcpStream::connect(addr).with_context(|| format!("cannot connect to {addr}"))?;
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(Duration::from_secs(60)))?;
        Ok(Client {
            reader: BufReader::with_capacity(64 * 1024, s.try_clone()?),
            writer: s,
            host: addr.to_owned(),
            sent: 0,
        })
    }

    /// Sends one streaming `POST /v1/messages` for `model` (its user message `tag`) and
    /// reads the whole answer; with `trips`, times each delta.
    pub fn stream(&mut self, model: &str, tag: &str, trips: bool) -> anyhow::Result<Answer> {
        let body = format!(
            r#"{{"model":"{model}","max_tokens":1024,"stream":true,"messages":[{{"role":"user","content":"Say hello ({tag})."}}]}}"#
        );
        let req = format!(
            "POST /v1/messages HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\naccept: text/event-stream\r\nanthropic-version: 2023-06-01\r\nx-api-key: bench-not-a-key\r\ncontent-length: {}\r\n\r\n{body}",
            self.host,
            body.len()
        );
        self.sent += 1;
        let t0 = Instant::now();
        self.writer.write_all(req.as_bytes())?;
        let framing = self.read_head(model)?;
        let mut body = Body {
            sink: Sink::new(trips),
            first: None,
            t0,
        };
        match framing {
            Framing::Chunked => self.read_chunked(&mut body)?,
            Framing::Length(left) => self.read_bytes(left, &mut body, "mid-body")?,
        }
        if !body.sink.tail.ends_with(LAST_EVENT) {
            bail!("the stream did not end with message_stop ({model})");
        }
        Ok(Answer {
            ttfb: body.first.unwrap_or_default(),
            bytes: body.sink.bytes,
            trips_ns: body.sink.trips,
        })
    }

    /// Reads the response head: a 200, and how its body is framed.
    fn read_head(&mut self, model: &str) -> anyhow::Result<Framing> {
        let mut line = String::new();
        self.reader.read_line(&mut line)?;
        if !line.starts_with("HTTP/1.1 200") {
            let mut rest = String::new();
            let _ = self.reader.read_line(&mut rest);
            bail!("the answer was {:?} ({model})", line.trim_end());
        }
        let mut chunked = false;
        let mut length = None;
        loop {
            line.clear();
            if self.reader.read_line(&mut line)? == 0 {
                bail!("the connection closed in the response head");
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':') {
                let v = v.trim();
                if k.eq_ignore_ascii_case("transfer-encoding") {
                    chunked = v.eq_ignore_ascii_case("chunked");
                } else if k.eq_ignore_ascii_case("content-length") {
                    length = v.parse::<u64>().ok();
                }
            }
        }
        if chunked {
            return Ok(Framing::Chunked);
        }
        Ok(Framing::Length(
            length.context("neither chunked nor a content-length")?,
        ))
    }

    /// Reads a chunked body to its last chunk.
    fn read_chunked(&mut self, body: &mut Body) -> anyhow::Result<()> {
        let mut line = String::new();
        loop {
            line.clear();
            if self.reader.read_line(&mut line)? == 0 {
                bail!("the connection closed mid-body");
            }
            let size = line.trim_end();
            let size = size.split(';').next().unwrap_or("");
            let left = u64::from_str_radix(size, 16)
                .with_context(|| format!("bad chunk size line {line:?}"))?;
            if left == 0 {
                // No trailers expected: the blank line ends the body.
                line.clear();
                self.reader.read_line(&mut line)?;
                return Ok(());
            }
            self.read_bytes(left, body, "mid-chunk")?;
            let mut crlf = [0u8; 2];
            self.reader.read_exact(&mut crlf)?;
        }
    }

    /// Feeds the next `left` body bytes to the sink, noting when the first arrived.
    fn read_bytes(&mut self, mut left: u64, body: &mut Body, place: &str) -> anyhow::Result<()> {
        while left > 0 {
            let buf = self.reader.fill_buf()?;
            if buf.is_empty() {
                bail!("the connection closed {place}");
            }
            body.first.get_or_insert_with(|| body.t0.elapsed());
            let n = buf.len().min(left as usize);
            body.sink.feed(&buf[..n]);
            self.reader.consume(n);
            left -= n as u64;
        }
        Ok(())
    }
}

/// How a response body is framed.
enum Framing {
    Chunked,
    Length(u64),
}

/// A body being read: its sink, and when its first byte came after the request.
struct Body {
    sink: Sink,
    first: Option<Duration>,
    t0: Instant,
}

/// Counts body bytes, keeps the tail, and with `trips` cuts events and times deltas.
struct Sink {
    bytes: u64,
    tail: Vec<u8>,
    timing: bool,
    pending: Vec<u8>,
    trips: Vec<u64>,
}

impl Sink {
    fn new(timing: bool) -> Sink {
        Sink {
            bytes: 0,
            tail: Vec::new(),
            timing,
            pending: Vec::new(),
            trips: Vec::new(),
        }
    }

    fn feed(&mut self, data: &[u8]) {
        self.bytes += data.len() as u64;
        self.tail.extend_from_slice(data);
        let keep = LAST_EVENT.len();
        if self.tail.len() > 4 * keep {
            self.tail.drain(..self.tail.len() - keep);
        }
        if !self.timing {
            return;
        }
        let now = now_ns();
        let from = self.pending.len().saturating_sub(1);
        self.pending.extend_from_slice(data);
        let mut start = 0;
        let mut scan = from;
        while let Some(i) = memchr::memmem::find(&self.pending[scan..], b"\n\n") {
            let end = scan + i + 2;
            let event = &self.pending[start..end];
            if let Some(stamp) = stamp_of(event) {
                self.trips.push(now.saturating_sub(stamp));
            }
            start = end;
            scan = end;
        }
        self.pending.drain(..start);
    }
}

fn stamp_of(event: &[u8]) -> Option<u64> {
    let at = memchr::memmem::find(event, b"\"text\":\"")? + 8;
    let digits = event.get(at..at + STAMP)?;
    std::str::from_utf8(digits).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_through_the_client() {
        let up = start_upstream().unwrap();
        let mut c = Client::connect(&up.addr.to_string()).unwrap();
        for _ in 0..2 {
            let a = c.stream(&model(5, 100, 0), "t", true).unwrap();
            assert_eq!(a.bytes, body_len(5, 100));
            assert_eq!(a.trips_ns.len(), 5);
        }
        let a = c.stream(&model(3, 16384, 1000), "t", false).unwrap();
        assert_eq!(a.bytes, body_len(3, 16384));
        assert!(c.stream("other", "t", false).is_err());
    }
}
