//! The body of reel's HTTP responses ([`Reply`]): a whole body, a session's server
//! stream, or a request's event stream that ends with its answer; and the guard that
//! tells the tape server when the client stopped waiting for that answer.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::sync::mpsc::UnboundedReceiver;

use super::out::Out;
use super::tapes::Tape;
use crate::play::Event;

/// Tells the tape server when the client stopped waiting for a route's answer, unless
/// disarmed first (the answer went out).
pub(super) struct GoneGuard {
    armed: Option<(Arc<Tape>, u64)>,
}

impl GoneGuard {
    pub(super) fn new(tape: Arc<Tape>, route: u64) -> GoneGuard {
        GoneGuard {
            armed: Some((tape, route)),
        }
    }

    /// A guard that tells nothing (a body built by a test).
    #[cfg(test)]
    pub(super) fn disarmed() -> GoneGuard {
        GoneGuard { armed: None }
    }

    pub(super) fn disarm(&mut self) {
        self.armed = None;
    }
}

impl Drop for GoneGuard {
    fn drop(&mut self) {
        if let Some((tape, route)) = self.armed.take() {
            tape.send(Event::Gone(route));
        }
    }
}

/// The body of reel's HTTP responses: a whole body, a server stream, or a request's
/// event stream that ends with its answer.
pub(super) enum Reply {
    Whole(Option<Bytes>),
    Stream(UnboundedReceiver<Bytes>),
    Events {
        first: Option<Bytes>,
        rx: UnboundedReceiver<Out>,
        done: bool,
        guard: GoneGuard,
        /// An event delivered apart, held back one poll so what came before it is
        /// flushed first.
        held: Option<Bytes>,
    },
}

impl Reply {
    pub(super) fn empty() -> Reply {
        Reply::Whole(None)
    }

    pub(super) fn text(t: impl Into<Bytes>) -> Reply {
        let b: Bytes = t.into();
        Reply::Whole((!b.is_empty()).then_some(b))
    }
}

impl Body for Reply {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Reply::Whole(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Reply::Stream(rx) => loop {
                match rx.poll_recv(cx) {
                    Poll::Ready(Some(b)) if b.is_empty() => {}
                    other => return other.map(|o| o.map(|b| Ok(Frame::data(b)))),
                }
            },
            Reply::Events {
                first,
                rx,
                done,
                guard,
                held,
            } => {
                // An empty frame would end a chunked body: never send one.
                if let Some(b) = first.take().filter(|b| !b.is_empty()) {
                    return Poll::Ready(Some(Ok(Frame::data(b))));
                }
                if let Some(b) = held.take() {
                    return Poll::Ready(Some(Ok(Frame::data(b))));
                }
                loop {
                    if *done {
                        return Poll::Ready(None);
                    }
                    match rx.poll_recv(cx) {
                        Poll::Ready(Some(out)) => {
                            if out.dest.last {
                                *done = true;
                                guard.disarm();
                            }
                            let ev = out.event();
                            if ev.is_empty() {
                                continue;
                            }
                            if out.apart {
                                // Pending makes the connection flush what it holds;
                                // the wake brings it back for this event at once.
                                *held = Some(ev);
                                cx.waker().wake_by_ref();
                                return Poll::Pending;
                            }
                            return Poll::Ready(Some(Ok(Frame::data(ev))));
                        }
                        Poll::Ready(None) => {
                            // The tape server closed the route (cancelled, or stopping).
                            guard.disarm();
                            *done = true;
                        }
                        Poll::Pending => return Poll::Pending,
                    }
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Reply::Whole(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Reply::Whole(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            _ => SizeHint::default(),
        }
    }
}
