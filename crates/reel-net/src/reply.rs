//! The body of a response reel streams to a client (a proxy passing an upstream's
//! response on, a tape server sending a recorded one): a small complete body, or frames
//! fed through a bounded channel whose capacity is the only buffering between the side
//! that produces them and the client.
//!
//! Behind the `serve` feature.

use std::pin::Pin;
use std::task::{Context, Poll};

use hyper::body::{Body, Bytes, Frame, SizeHint};
use tokio::sync::mpsc;

/// A frame for the client, or the error that aborts its response.
pub type ReplyFrame = Result<Frame<Bytes>, std::io::Error>;

/// The body of a response to the client.
pub enum Reply {
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
pub struct Streamed {
    rx: mpsc::Receiver<ReplyFrame>,
    /// A data frame was given since the body was last not ready.
    unflushed: bool,
    /// The end (`None`) or error held back for one turn.
    held: Option<Option<ReplyFrame>>,
}

impl Reply {
    /// A complete body.
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
