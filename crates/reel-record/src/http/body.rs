//! The request body the proxy hands hyper.
//!
//! [`TeeBody`] is a client's request body on its way upstream: each frame is passed on
//! as it arrives and a copy is kept; when the body is complete the copy goes to the
//! trace (before the end of the body is passed on, so the request is always recorded
//! before anything the upstream answers to it).
//!
//! What the client gets is a `reel_net::reply::Reply`: a small complete body (reel's own
//! answers, a rewritten metadata document) or a stream fed by the task that reads the
//! upstream's response (see `proxy`).

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};

/// How a request body ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BodyEnd {
    /// Complete.
    Whole,
    /// The client's side broke off (it went away mid-body): why.
    ClientBroke(String),
    /// Dropped before its end (the upstream hop gave up on it).
    Dropped,
}

/// What a finished request body reports: its first [`BODY_KEPT_MAX`] bytes, its whole
/// size, and how it ended.
pub(crate) type OnDone = Box<dyn FnOnce(Vec<u8>, u64, BodyEnd) + Send>;

/// The most of a request body kept for the trace. A body passes through as it comes,
/// whatever its size, so reel's memory stays flat; a longer body is recorded as a
/// `reel.http` event with its first bytes and `truncated` (its full size), not as a
/// message.
pub const BODY_KEPT_MAX: usize = 64 << 20;

/// A request body passed through while a copy is kept for the trace — or, for a small
/// body reel already read whole, that body.
pub(crate) struct TeeBody {
    inner: Option<Incoming>,
    whole: Option<Bytes>,
    copy: Vec<u8>,
    /// Bytes passed through so far.
    total: u64,
    on_done: Option<OnDone>,
}

impl TeeBody {
    /// Wraps `inner`; `on_done` is called once, when the body ended, broke off or was
    /// dropped before its end.
    pub fn new(inner: Incoming, on_done: OnDone) -> Self {
        let mut body = TeeBody {
            copy: Vec::new(),
            total: 0,
            on_done: Some(on_done),
            inner: None,
            whole: None,
        };
        // hyper never polls a body that says it is empty: report it now.
        if inner.is_end_stream() {
            body.done(BodyEnd::Whole);
        }
        body.inner = Some(inner);
        body
    }

    /// A body reel has whole (already recorded): sent as it is, with its length.
    pub fn whole(bytes: Bytes) -> Self {
        TeeBody {
            inner: None,
            whole: (!bytes.is_empty()).then_some(bytes),
            copy: Vec::new(),
            total: 0,
            on_done: None,
        }
    }

    fn done(&mut self, end: BodyEnd) {
        if let Some(f) = self.on_done.take() {
            f(std::mem::take(&mut self.copy), self.total, end);
        }
    }
}

impl Drop for TeeBody {
    fn drop(&mut self) {
        self.done(BodyEnd::Dropped);
    }
}

impl Body for TeeBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = &mut *self;
        if let Some(b) = this.whole.take() {
            return Poll::Ready(Some(Ok(Frame::data(b))));
        }
        let Some(inner) = this.inner.as_mut() else {
            return Poll::Ready(None);
        };
        match Pin::new(&mut *inner).poll_frame(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(d) = frame.data_ref() {
                    this.total += d.len() as u64;
                    if this.on_done.is_some() && this.copy.len() < BODY_KEPT_MAX {
                        let room = BODY_KEPT_MAX - this.copy.len();
                        this.copy.extend_from_slice(&d[..d.len().min(room)]);
                    }
                }
                if inner.is_end_stream() {
                    this.done(BodyEnd::Whole);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => {
                this.done(BodyEnd::ClientBroke(e.to_string()));
                Poll::Ready(Some(Err(e)))
            }
            Poll::Ready(None) => {
                this.done(BodyEnd::Whole);
                Poll::Ready(None)
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.whole.is_none() && self.inner.as_ref().is_none_or(Body::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        match (&self.whole, &self.inner) {
            (Some(b), _) => SizeHint::with_exact(b.len() as u64),
            (None, Some(inner)) => inner.size_hint(),
            (None, None) => SizeHint::with_exact(0),
        }
    }
}

pub(crate) use reel_net::reply::{Reply, ReplyFrame};
