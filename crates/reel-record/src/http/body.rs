//! The two bodies the proxy hands hyper.
//!
//! [`TeeBody`] is a client's request body on its way upstream: each frame is passed on
//! as it arrives and a copy is kept; when the body is complete the copy goes to the
//! trace (before the end of the body is passed on, so the request is always recorded
//! before anything the upstream answers to it).
//!
//! [`Reply`] is what the client gets: a small complete body (reel's own answers, a
//! rewritten metadata document) or a stream fed by the task that reads the upstream's
//! response (see `proxy`), through a bounded channel whose capacity is the only
//! buffering between the two sides.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use tokio::sync::mpsc;

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

/// A frame for the client, or the error that aborts its response.
pub(crate) type ReplyFrame = Result<Frame<Bytes>, std::io::Error>;

/// The body of a response to the client.
pub(crate) enum Reply {
    /// Complete: a small body reel has whole.
    Full(Option<Bytes>),
    /// Streamed: frames as the upstream sends them.
    Stream(Streamed),
}

/// The receiving end of a streamed body.
///
/// hyper aborts a response at an error, or at an end short of its `Content-Length`,
/// without writing out the bytes it still buffers; so after a data frame, an end or an
/// error waits one turn (hyper flushes when a body is not ready), and the client gets
/// every byte the upstream sent before the break.
pub(crate) struct Streamed {
    rx: mpsc::Receiver<ReplyFrame>,
    /// A data frame was given since the body was last not ready.
    unflushed: bool,
    /// The end (`None`) or error held back for one turn.
    held: Option<Option<ReplyFrame>>,
}

impl Reply {
    pub fn full(b: impl Into<Bytes>) -> Self {
        Reply::Full(Some(b.into()))
    }

    /// A body fed by `rx`; it ends when every sender is gone.
    pub fn stream(rx: mpsc::Receiver<ReplyFrame>) -> Self {
        Reply::Stream(Streamed {
            rx,
            unflushed: false,
            held: None,
        })
    }
}

impl Streamed {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Option<ReplyFrame>> {
        if let Some(last) = self.held.take() {
            return Poll::Ready(last);
        }
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                self.unflushed = true;
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(last) if std::mem::take(&mut self.unflushed) => {
                self.held = Some(last);
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Poll::Pending => {
                self.unflushed = false;
                Poll::Pending
            }
            ready => ready,
        }
    }
}

impl Body for Reply {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<ReplyFrame>> {
        match &mut *self {
            Reply::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Reply::Stream(s) => s.poll(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Reply::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Reply::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Reply::Full(None) => SizeHint::with_exact(0),
            Reply::Stream(_) => SizeHint::default(),
        }
    }
}
