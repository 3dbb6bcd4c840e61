//! The body pump: one task per response body, forwarding every chunk and queuing the
//! lines of what went out (SSE events, plain bodies) in cause-and-effect order.

use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Frame, Incoming};
use reel_net::serve::stopped;
use reel_net::sse::{Eol, Event, Parser};
use tokio::sync::mpsc;

use super::exchange::Exchange;
use super::limits::{EXCERPT_MAX, GATE_MAX};
use super::shared::Shared;
use crate::http::body::ReplyFrame;
use crate::http::headers::OriginRewriter;
use crate::http::note::{Note, ResponseFacts, SseFacts};
use crate::queue::LineRecord;

/// How a response body stream ended.
pub(super) enum End {
    /// The upstream finished it.
    Upstream,
    /// The upstream broke off.
    Error(String),
    /// The client went away.
    Client,
    /// reel was stopped.
    Shutdown,
}

/// Reads an upstream response body, passes each chunk to the client and records it.
pub(super) struct Pump {
    pub(super) sh: Arc<Shared>,
    pub(super) ex: Arc<Exchange>,
    pub(super) facts: Arc<ResponseFacts>,
    pub(super) tx: mpsc::Sender<ReplyFrame>,
    pub(super) kind: PumpKind,
}

pub(super) enum PumpKind {
    Sse(SseState),
    Plain(PlainState),
}

pub(super) struct SseState {
    pub(super) parser: Parser,
    /// The first event of a GET stream, held until complete (`None` once passed).
    pub(super) gate: Option<Vec<u8>>,
    /// The legacy session the stream's `endpoint` event named.
    pub(super) stream_session: Option<Arc<str>>,
    /// The stream's `reel.http` line waits for its session (legacy `endpoint`).
    pub(super) http_event_pending: bool,
    pub(super) proxy_origin: String,
}

pub(super) struct PlainState {
    pub(super) copy: Vec<u8>,
    pub(super) total: u64,
    pub(super) expected: Option<u64>,
    pub(super) recorded: bool,
}

impl Pump {
    pub(super) async fn run(mut self, mut body: Incoming) {
        let mut stop = pin!(stopped(self.sh.stop.clone()));
        let end = loop {
            let frame = tokio::select! {
                biased;
                _ = &mut stop => break End::Shutdown,
                // A client that goes away while the stream is idle ends it too (for a
                // 2026-07-28 request, closing the stream is how a client cancels).
                _ = self.tx.closed() => break End::Client,
                f = body.frame() => f,
            };
            match frame {
                None => break End::Upstream,
                Some(Err(e)) => {
                    break End::Error(format!("the upstream broke off the response: {e}"));
                }
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => {
                        if let Err(end) = self.data(data, stop.as_mut()).await {
                            break end;
                        }
                    }
                    Err(frame) => {
                        if let Err(end) = self.send(frame, stop.as_mut()).await {
                            break end;
                        }
                    }
                },
            }
        };
        drop(body);
        self.finish(end).await;
        if self.sh.active_pumps.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.sh.pumps_idle.notify_waiters();
        }
    }

    /// Waits for room in the client's channel (holding no place in the trace).
    pub(super) async fn room(
        &self,
        stop: Pin<&mut impl std::future::Future<Output = ()>>,
    ) -> Result<mpsc::Permit<'_, ReplyFrame>, End> {
        tokio::select! {
            biased;
            _ = stop => Err(End::Shutdown),
            p = self.tx.reserve() => p.map_err(|_| End::Client),
        }
    }

    pub(super) async fn send(
        &self,
        frame: Frame<Bytes>,
        stop: Pin<&mut impl std::future::Future<Output = ()>>,
    ) -> Result<(), End> {
        self.room(stop).await?.send(Ok(frame));
        Ok(())
    }

    pub(super) async fn data(
        &mut self,
        data: Bytes,
        stop: Pin<&mut impl std::future::Future<Output = ()>>,
    ) -> Result<(), End> {
        if matches!(self.kind, PumpKind::Sse(_)) {
            let Some(data) = self.gate(data) else {
                return Ok(());
            };
            // The events this data completes reach the trace file before it goes on.
            let lines = self.parse(&data);
            self.sh.push_durable(lines);
            self.room(stop).await?.send(Ok(Frame::data(data)));
            return Ok(());
        }
        let carried = self.ex.carried_body();
        let PumpKind::Plain(p) = &mut self.kind else {
            return Ok(());
        };
        p.total += data.len() as u64;
        let last = p.expected == Some(p.total);
        if carried {
            p.copy.extend_from_slice(&data);
        } else if p.copy.len() < EXCERPT_MAX {
            let room = EXCERPT_MAX - p.copy.len();
            p.copy.extend_from_slice(&data[..data.len().min(room)]);
        }
        if last {
            // The answer reaches the trace file before its last bytes go on.
            let lines = self.plain_lines();
            self.sh.push_durable(lines);
        }
        self.room(stop).await?.send(Ok(Frame::data(data)));
        Ok(())
    }

    /// Passes the first event of a GET stream through the gate; returns what may be
    /// forwarded now.
    pub(super) fn gate(&mut self, data: Bytes) -> Option<Bytes> {
        let PumpKind::Sse(s) = &mut self.kind else {
            return Some(data);
        };
        let Some(held) = &mut s.gate else {
            return Some(data);
        };
        held.extend_from_slice(&data);
        let end = match first_event_end(held) {
            Some(end) => end,
            None if held.len() > GATE_MAX => held.len(),
            None => return None,
        };
        let held = s.gate.take().unwrap_or_default();
        let (first, rest) = held.split_at(end);
        let mut out = self.first_event(first);
        out.extend_from_slice(rest);
        Some(Bytes::from(out))
    }

    /// The first event of a GET stream: a legacy `endpoint` event registers its session
    /// (before the client can post to it) and, when it points at the upstream, is
    /// rewritten to point at reel.
    pub(super) fn first_event(&mut self, raw: &[u8]) -> Vec<u8> {
        let PumpKind::Sse(s) = &mut self.kind else {
            return raw.to_vec();
        };
        let mut events = Vec::new();
        let mut p = Parser::new();
        p.feed(raw, |e| events.push(e));
        p.finish(|e| events.push(e));
        let endpoint = events
            .iter()
            .find(|e| e.event.as_deref() == Some("endpoint"))
            .and_then(|e| e.data.clone());
        let mut out = raw.to_vec();
        if let Some(data) = endpoint {
            if let Some(key) = self.sh.register_endpoint(&data, &self.ex.facts.path) {
                s.stream_session = Some(Arc::clone(&key));
                self.ex.set_session(key);
            }
            out = rewrite_data_lines(raw, &self.sh.rewriter, &s.proxy_origin);
        }
        if std::mem::take(&mut s.http_event_pending) {
            let session = s
                .stream_session
                .clone()
                .unwrap_or_else(|| self.ex.session_or_conn());
            let note = self.ex.note(Some(Arc::clone(&self.facts)));
            self.sh
                .push(None, vec![self.ex.exchange_line(session, note, Vec::new())]);
        }
        out
    }

    pub(super) fn parse(&mut self, data: &[u8]) -> Vec<LineRecord> {
        let PumpKind::Sse(s) = &mut self.kind else {
            return Vec::new();
        };
        let mut events = Vec::new();
        s.parser.feed(data, |e| events.push(e));
        self.sse_lines(events)
    }

    pub(super) fn stream_session(&self) -> Arc<str> {
        match &self.kind {
            PumpKind::Sse(SseState {
                stream_session: Some(s),
                ..
            }) => Arc::clone(s),
            _ => self.ex.session_or_conn(),
        }
    }

    pub(super) fn sse_lines(&self, events: Vec<Event>) -> Vec<LineRecord> {
        if events.is_empty() {
            return Vec::new();
        }
        let session = self.stream_session();
        events
            .into_iter()
            .filter(|e| !e.is_comment_only())
            .map(|e| {
                let sse = SseFacts {
                    id: e.id,
                    event: e.event,
                    retry: e.retry,
                    eol: (e.eol != Eol::Lf).then_some(e.eol),
                    has_data: e.data.is_some(),
                };
                let data = e.data.unwrap_or_default();
                let json_like = data.trim_start().starts_with(['{', '[']);
                let note = if json_like {
                    Note::Response {
                        facts: Arc::clone(&self.facts),
                        sse: Some(sse),
                    }
                } else {
                    Note::Sse {
                        facts: Arc::clone(&self.facts),
                        sse,
                    }
                };
                LineRecord::server_line(Arc::clone(&session), note, data.into_bytes())
            })
            .collect()
    }

    /// The record of a complete plain body (see [`plain_line`]), once.
    pub(super) fn plain_lines(&mut self) -> Vec<LineRecord> {
        let PumpKind::Plain(p) = &mut self.kind else {
            return Vec::new();
        };
        if std::mem::replace(&mut p.recorded, true) {
            return Vec::new();
        }
        let bytes = std::mem::take(&mut p.copy);
        vec![plain_line(&self.ex, &self.facts, bytes, p.total)]
    }

    pub(super) async fn finish(&mut self, end: End) {
        let mut lines = Vec::new();
        // Whatever the gate still holds goes out as it is, and into the trace however
        // the stream ended (an upstream that breaks off mid-event, a client that leaves,
        // a stop): the upstream sent it.
        if let PumpKind::Sse(s) = &mut self.kind {
            if let Some(held) = s.gate.take() {
                if !held.is_empty() {
                    let out = self.first_event(&held);
                    let frame = || Ok(Frame::data(Bytes::from(out.clone())));
                    match end {
                        End::Upstream => {
                            if let Ok(p) = self.tx.reserve().await {
                                p.send(frame());
                            }
                        }
                        // No waiting on a client that may not read any more.
                        End::Error(_) | End::Shutdown => {
                            let _ = self.tx.try_send(frame());
                        }
                        End::Client => {}
                    }
                    lines.extend(self.parse(&out));
                }
            }
        }
        match &mut self.kind {
            PumpKind::Sse(s) => {
                let mut events = Vec::new();
                s.parser.finish(|e| events.push(e));
                if std::mem::take(&mut s.http_event_pending) {
                    let note = self.ex.note(Some(Arc::clone(&self.facts)));
                    lines.push(
                        self.ex
                            .exchange_line(self.ex.session_or_conn(), note, Vec::new()),
                    );
                }
                lines.extend(self.sse_lines(events));
            }
            PumpKind::Plain(_) => lines.extend(self.plain_lines()),
        }
        let (error, end_reason) = match &end {
            End::Upstream => (None, None),
            End::Error(e) => (Some(e.clone()), None),
            End::Client => (None, Some("client")),
            End::Shutdown => (None, Some("shutdown")),
        };
        if error.is_some() || end_reason.is_some() {
            let mut note = self.ex.note(Some(Arc::clone(&self.facts)));
            note.error = error.clone();
            note.end = end_reason;
            lines.push(
                self.ex
                    .exchange_line(self.stream_session(), note, Vec::new()),
            );
        }
        // Before the body's end reaches the client (its channel closes when the pump is
        // dropped): a chunked answer is whole only then.
        self.sh.push_durable(lines);
        if let Some(e) = error {
            // The client must see a broken response, not a complete one.
            let _ = self.tx.try_send(Err(std::io::Error::other(e)));
        }
    }
}

/// The record of a complete plain body: a message line when the exchange is an MCP one
/// (its request carried a body) and the body is not empty; otherwise a `reel.http`
/// event with the status and the body's first bytes (`total` is its full size).
pub(super) fn plain_line(
    ex: &Exchange,
    facts: &Arc<ResponseFacts>,
    mut bytes: Vec<u8>,
    total: u64,
) -> LineRecord {
    let session = ex.session_or_conn();
    if ex.carried_body() && !bytes.is_empty() {
        let note = Note::Response {
            facts: Arc::clone(facts),
            sse: None,
        };
        return LineRecord::server_line(session, note, bytes);
    }
    bytes.truncate(EXCERPT_MAX);
    let mut note = ex.note(Some(Arc::clone(facts)));
    if total > bytes.len() as u64 {
        note.body_total = Some(total);
    }
    ex.exchange_line(session, note, bytes)
}

/// The end (after its blank line) of the first event in `bytes`, if it is complete. A
/// CR at the very end may be half of a CRLF: not complete yet.
pub(super) fn first_event_end(bytes: &[u8]) -> Option<usize> {
    let mut pos = 0;
    let mut line_start = 0;
    let mut any_line = false;
    while let Some(i) = memchr::memchr2(b'\n', b'\r', &bytes[pos..]) {
        let i = pos + i;
        let next = match bytes[i] {
            b'\n' => i + 1,
            _ => match bytes.get(i + 1) {
                Some(b'\n') => i + 2,
                Some(_) => i + 1,
                None => return None,
            },
        };
        if i == line_start {
            if any_line {
                return Some(next);
            }
        } else {
            any_line = true;
        }
        pos = next;
        line_start = next;
    }
    None
}

/// Rewrites the upstream origin in the `data` lines of one raw event, keeping every
/// other byte (line endings included).
pub(super) fn rewrite_data_lines(raw: &[u8], rw: &OriginRewriter, proxy: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() + 16);
    let mut rest = raw;
    while !rest.is_empty() {
        let cut = memchr::memchr2(b'\n', b'\r', rest).unwrap_or(rest.len());
        let (line, tail) = rest.split_at(cut);
        let eol_len = match tail {
            [b'\r', b'\n', ..] => 2,
            [] => 0,
            _ => 1,
        };
        match std::str::from_utf8(line)
            .ok()
            .filter(|l| l.starts_with("data:"))
            .and_then(|l| rw.rewrite(l, proxy))
        {
            Some(new) => out.extend_from_slice(new.as_bytes()),
            None => out.extend_from_slice(line),
        }
        out.extend_from_slice(&tail[..eol_len]);
        rest = &tail[eol_len..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_event_ends_after_its_blank_line() {
        assert_eq!(
            first_event_end(b"event: endpoint\ndata: /m\n\nmore"),
            Some(26)
        );
        assert_eq!(
            first_event_end(b"event: endpoint\r\ndata: /m\r\n\r\n"),
            Some(29)
        );
        assert_eq!(first_event_end(b"event: endpoint\r\ndata: /m\r\n\r"), None);
        assert_eq!(first_event_end(b"\n\nid: 1\n"), None);
        assert_eq!(first_event_end(b"id: 1\r\rx"), Some(7));
    }

    #[test]
    fn only_data_lines_pointing_at_the_upstream_are_rewritten() {
        let rw = OriginRewriter::new(vec!["http://127.0.0.1:3002".into()]);
        let raw = b"event: endpoint\r\ndata: http://127.0.0.1:3002/message?sessionId=1\r\n\r\n";
        assert_eq!(
            rewrite_data_lines(raw, &rw, "http://localhost:7"),
            b"event: endpoint\r\ndata: http://localhost:7/message?sessionId=1\r\n\r\n".to_vec()
        );
        let rel = b"event: endpoint\ndata: /message?sessionId=1\n\n";
        assert_eq!(
            rewrite_data_lines(rel, &rw, "http://localhost:7"),
            rel.to_vec()
        );
    }
}
