//! A client connection's state: its session key and its connection to the upstream,
//! opened on demand and reopened once when the upstream closed it.

use std::sync::Arc;

use hyper::Request;
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;

use super::shared::Shared;
use crate::http::body::TeeBody;
use crate::http::upstream;

/// A client connection: its session key and its connection to the upstream.
pub(super) struct ClientConn {
    pub(super) key: Arc<str>,
    pub(super) upstream: tokio::sync::Mutex<Option<SendRequest<TeeBody>>>,
}

impl ClientConn {
    /// Client connection `n` (from 1), with no upstream connection yet.
    pub(super) fn new(n: u64) -> ClientConn {
        ClientConn {
            key: format!("reel:conn-{n}").into(),
            upstream: tokio::sync::Mutex::new(None),
        }
    }

    /// Sends `req` upstream on this client's upstream connection, opening one when there
    /// is none or it was closed; a request the closed connection never took is sent
    /// again once on a fresh one.
    /// `on_sent` runs once the request is handed to the upstream connection, before its
    /// answer is awaited (the trace work it does then overlaps the upstream's).
    pub(super) async fn send(
        &self,
        sh: &Shared,
        req: Request<TeeBody>,
        on_sent: impl FnOnce(),
    ) -> Result<hyper::Response<Incoming>, String> {
        let mut on_sent = Some(on_sent);
        let mut req = Some(req);
        for attempt in 0..2 {
            let mut sender = {
                let mut slot = self.upstream.lock().await;
                match slot.take() {
                    Some(s) if !s.is_closed() => s,
                    _ => upstream::open(&sh.url, sh.tls.as_ref()).await?,
                }
            };
            if sender.ready().await.is_err() {
                if attempt == 0 {
                    continue;
                }
                return Err("the upstream closed the connection".to_owned());
            }
            let Some(r) = req.take() else {
                return Err("internal error: no request".to_owned());
            };
            let answer = sender.try_send_request(r);
            *self.upstream.lock().await = Some(sender);
            if let Some(f) = on_sent.take() {
                f();
            }
            match answer.await {
                Ok(resp) => return Ok(resp),
                Err(mut e) => match e.take_message() {
                    Some(r) if attempt == 0 => {
                        *self.upstream.lock().await = None;
                        req = Some(r);
                    }
                    _ => return Err(format!("the upstream failed: {}", e.into_error())),
                },
            }
        }
        Err("the upstream closed the connection".to_owned())
    }

    /// Opens (or checks) the upstream connection before the request is built, so that
    /// a failure leaves the client's body in reel's hands.
    pub(super) async fn ensure(&self, sh: &Shared) -> Result<(), String> {
        let mut slot = self.upstream.lock().await;
        if slot.as_ref().is_some_and(|s| !s.is_closed()) {
            return Ok(());
        }
        *slot = Some(upstream::open(&sh.url, sh.tls.as_ref()).await?);
        Ok(())
    }
}
