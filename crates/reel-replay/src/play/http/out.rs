//! Where the tape servers' messages go over HTTP, and the bodies that carry them.
//!
//! A tape server writes each message with a [`Dest`]: the route of the live request it
//! answers or came within, or the session's server stream. [`Routes`] maps a route to
//! the response waiting for it (a channel the request's handler reads) or, for a legacy
//! HTTP+SSE session, to the session's one event stream. [`LiveSession`] holds the server
//! stream(s) a client opened with GET, and what was sent before it opened one.
//!
//! Invariants:
//! - A message is framed once, where it leaves: JSON as is, or one SSE `message` event
//!   with the line ending the recording's stream used ([`sse_event`]).
//! - A route ends with its `last` message or when a server closes it; a reply body
//!   dropped by the client before its last message tells the tape server (the request
//!   is cancelled, as 2026-07-28 cancels by closing the stream).
//! - An answer delivered apart ([`ClientOut::deliver_apart`]: recorded messages of its
//!   exchange preceded it) leaves in a write of its own: its reply body yields once
//!   before it, so the events before it are flushed to the connection first.

use std::collections::{HashMap, HashSet};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use reel_net::sse::{Eol, Event as SseEvent};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use crate::play::{ClientOut, Dest, Route};

/// Locks, taking over a lock a panicking thread left behind (the data are plain maps
/// and queues that stay consistent between statements).
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One message of a tape server, on its way to a reply.
pub(super) struct Out {
    pub(super) dest: Dest,
    /// The JSON text, or (`framed`) a whole SSE event.
    pub(super) text: Bytes,
    pub(super) framed: bool,
    /// Written apart from what its route carried before.
    pub(super) apart: bool,
}

impl Out {
    /// The SSE event that carries it.
    pub(super) fn event(&self) -> Bytes {
        if self.framed {
            self.text.clone()
        } else {
            sse_event(&self.text, self.dest.via.eol)
        }
    }
}

/// Where a route's messages go.
enum Target {
    /// The response of the request that opened the route.
    Reply(UnboundedSender<Out>),
    /// A legacy HTTP+SSE session's one stream (its POSTs are answered `202 Accepted`).
    Session(Arc<LiveSession>),
}

/// Every open route of the replay.
#[derive(Default)]
pub(super) struct Routes {
    map: Mutex<HashMap<u64, Target>>,
    next: AtomicU64,
}

impl Routes {
    /// A new route answered on a reply channel; its number and the receiving end.
    pub(super) fn reply(&self) -> (u64, UnboundedReceiver<Out>) {
        let (tx, rx) = unbounded_channel();
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        lock(&self.map).insert(n, Target::Reply(tx));
        (n, rx)
    }

    /// A new route whose messages go to a legacy session's stream.
    pub(super) fn to_session(&self, s: &Arc<LiveSession>) -> u64 {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        lock(&self.map).insert(n, Target::Session(Arc::clone(s)));
        n
    }

    /// Forgets a route (its reply ends).
    pub(super) fn remove(&self, n: u64) {
        lock(&self.map).remove(&n);
    }

    /// Ends every reply (the replay stops).
    pub(super) fn close_all(&self) {
        lock(&self.map).clear();
    }

    fn send(&self, n: u64, out: Out) -> bool {
        let last = out.dest.last;
        let mut map = lock(&self.map);
        let delivered = match map.get(&n) {
            Some(Target::Reply(tx)) => tx.send(out).is_ok(),
            Some(Target::Session(s)) => {
                s.push(out.event());
                true
            }
            None => false,
        };
        if last {
            map.remove(&n);
        }
        delivered
    }
}

/// One SSE `message` event carrying `json`.
pub(super) fn sse_event(json: &[u8], eol: Eol) -> Bytes {
    let ev = SseEvent {
        event: Some("message".into()),
        data: Some(String::from_utf8_lossy(json).into_owned()),
        ..SseEvent::default()
    };
    Bytes::from(ev.to_bytes(eol))
}

/// A live session: the MCP session id reel issued, the recorded session (tape) it is
/// answered from, and its server stream(s).
pub(super) struct LiveSession {
    /// The id reel issued (`Mcp-Session-Id`, or the legacy `sessionId`).
    pub(super) id: String,
    /// The tape that answers it.
    pub(super) tape: u32,
    /// Legacy HTTP+SSE: every message goes on the one stream opened by `GET /sse`.
    pub(super) legacy: bool,
    ended: AtomicBool,
    streams: Mutex<Streams>,
}

#[derive(Default)]
struct Streams {
    /// Open streams, oldest first; `true`: opened to resume (`Last-Event-ID`).
    open: Vec<(UnboundedSender<Bytes>, bool)>,
    /// Events sent before the client opened a stream (or after it closed them all).
    backlog: Vec<Bytes>,
    /// Events for the stream the client will open to resume.
    resume_backlog: Vec<Bytes>,
}

/// Events kept for a session that has no stream open; older ones are dropped first.
pub const STREAM_BACKLOG: usize = 1024;

impl LiveSession {
    pub(super) fn new(id: String, tape: u32, legacy: bool) -> LiveSession {
        LiveSession {
            id,
            tape,
            legacy,
            ended: AtomicBool::new(false),
            streams: Mutex::new(Streams::default()),
        }
    }

    /// Sends one encoded event on the session's first open stream, or keeps it until
    /// one opens.
    pub(super) fn push(&self, event: Bytes) {
        let mut s = lock(&self.streams);
        s.open.retain(|(tx, _)| !tx.is_closed());
        if let Some((tx, _)) = s.open.first() {
            if tx.send(event.clone()).is_ok() {
                return;
            }
        }
        if s.backlog.len() >= STREAM_BACKLOG {
            s.backlog.remove(0);
        }
        s.backlog.push(event);
    }

    /// Sends one encoded event on the latest stream opened to resume, or keeps it until
    /// the client opens one.
    pub(super) fn push_resumed(&self, event: Bytes) {
        let mut s = lock(&self.streams);
        s.open.retain(|(tx, _)| !tx.is_closed());
        if let Some((tx, _)) = s.open.iter().rev().find(|(_, resumed)| *resumed) {
            if tx.send(event.clone()).is_ok() {
                return;
            }
        }
        if s.resume_backlog.len() >= STREAM_BACKLOG {
            s.resume_backlog.remove(0);
        }
        s.resume_backlog.push(event);
    }

    /// Opens a server stream (`resumed`: with `Last-Event-ID`); what waited for such a
    /// stream goes first (after `first`).
    pub(super) fn open_stream(
        &self,
        first: Option<Bytes>,
        resumed: bool,
    ) -> UnboundedReceiver<Bytes> {
        let (tx, rx) = unbounded_channel();
        let mut s = lock(&self.streams);
        let waiting = if resumed {
            std::mem::take(&mut s.resume_backlog)
        } else {
            std::mem::take(&mut s.backlog)
        };
        for ev in first.into_iter().chain(waiting) {
            let _ = tx.send(ev);
        }
        s.open.push((tx, resumed));
        rx
    }

    /// Ends the session: its streams close.
    pub(super) fn end(&self) {
        self.ended.store(true, Ordering::Relaxed);
        lock(&self.streams).open.clear();
    }

    /// True once ended (DELETE, or the replay stopped).
    pub(super) fn ended(&self) -> bool {
        self.ended.load(Ordering::Relaxed)
    }
}

/// A tape's link to the live session it answers (none for the session-less pool).
#[derive(Default)]
pub(super) struct TapeLink {
    session: Mutex<Option<Arc<LiveSession>>>,
    /// Messages for a server stream that no session could take.
    pub(super) dropped: AtomicU64,
}

impl TapeLink {
    pub(super) fn bind(&self, s: &Arc<LiveSession>) {
        *lock(&self.session) = Some(Arc::clone(s));
    }
}

/// A tape server's client: messages to routes and streams.
pub(super) struct HttpOut {
    pub(super) routes: Arc<Routes>,
    pub(super) link: Arc<TapeLink>,
    /// Reply routes whose next message is delivered apart.
    pub(super) apart: HashSet<u64>,
}

impl HttpOut {
    pub(super) fn new(routes: Arc<Routes>, link: Arc<TapeLink>) -> HttpOut {
        HttpOut {
            routes,
            link,
            apart: HashSet::new(),
        }
    }

    fn deliver(&mut self, mut out: Out) {
        // Nearly always empty: no hashing on the common path.
        if let (Route::Reply(n), false) = (out.dest.route, self.apart.is_empty()) {
            out.apart = self.apart.remove(&n);
        }
        match out.dest.route {
            Route::Reply(n) => {
                self.routes.send(n, out);
            }
            Route::Stream | Route::Resume => match lock(&self.link.session).as_ref() {
                Some(s) if out.dest.route == Route::Resume => s.push_resumed(out.event()),
                Some(s) => s.push(out.event()),
                None => {
                    self.link.dropped.fetch_add(1, Ordering::Relaxed);
                }
            },
        }
    }
}

impl ClientOut for HttpOut {
    fn message(&mut self, dest: Dest, parts: &[&[u8]]) -> io::Result<()> {
        let text = Bytes::from(parts.concat());
        self.deliver(Out {
            dest,
            text,
            framed: false,
            apart: false,
        });
        Ok(())
    }

    fn hold(&mut self, route: Route, via: crate::tape::Via) {
        // Nothing to send but the start of the event stream.
        self.deliver(Out {
            dest: Dest {
                route,
                last: false,
                via,
            },
            text: Bytes::new(),
            framed: true,
            apart: false,
        });
    }

    fn raw_event(&mut self, dest: Dest, event: &SseEvent) -> io::Result<()> {
        let text = Bytes::from(event.to_bytes(dest.via.eol));
        self.deliver(Out {
            dest,
            text,
            framed: true,
            apart: false,
        });
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn close(&mut self, route: Route) {
        if let Route::Reply(n) = route {
            self.apart.remove(&n);
            self.routes.remove(n);
        }
    }

    fn deliver_apart(&mut self, route: Route) -> io::Result<()> {
        if let Route::Reply(n) = route {
            self.apart.insert(n);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use hyper::body::{Body, Frame};

    use super::*;
    use crate::play::http::reply::{GoneGuard, Reply};
    use crate::tape::Via;

    fn data(p: Poll<Option<Result<Frame<Bytes>, Infallible>>>) -> Option<String> {
        match p {
            Poll::Ready(Some(Ok(f))) => f
                .into_data()
                .ok()
                .map(|b| String::from_utf8_lossy(&b).into_owned()),
            Poll::Ready(None) => None,
            Poll::Pending => Some("(pending)".into()),
        }
    }

    /// The answer a tape server delivers apart is marked on its route alone, and its
    /// event stream yields once before it (the connection flushes the progress first).
    #[test]
    fn an_answer_delivered_apart_leaves_after_the_events_before_it() {
        let routes = Arc::new(Routes::default());
        let (n, rx) = routes.reply();
        let mut out = HttpOut::new(Arc::clone(&routes), Arc::default());
        let dest = |last| Dest {
            route: Route::Reply(n),
            last,
            via: Via::default(),
        };
        out.message(dest(false), &[br#"{"method":"notifications/progress"}"#])
            .unwrap();
        out.deliver_apart(Route::Reply(n)).unwrap();
        out.deliver_apart(Route::Reply(n + 1)).unwrap();
        out.message(dest(true), &[br#"{"id":1,"result":{}}"#])
            .unwrap();
        let mut body = Reply::Events {
            first: None,
            rx,
            done: false,
            guard: GoneGuard::disarmed(),
            held: None,
        };
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut poll = || data(Pin::new(&mut body).poll_frame(&mut cx));
        assert!(poll().is_some_and(|e| e.contains("notifications/progress")));
        assert_eq!(poll().as_deref(), Some("(pending)"));
        assert!(poll().is_some_and(|e| e.contains(r#""result""#)));
        assert_eq!(poll(), None);
        assert_eq!(out.apart, HashSet::from([n + 1]));
        out.close(Route::Reply(n + 1));
        assert!(out.apart.is_empty());
    }
}
