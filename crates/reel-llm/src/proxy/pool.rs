//! Kept-alive upstream connections, per upstream: an exchange takes one that is still
//! ready (or opens one) and gives it back when its response ended cleanly.

use std::collections::HashMap;
use std::sync::Mutex;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;

use reel_net::http::UpstreamUrl;
use reel_net::upstream::{self, TlsConnector};

/// One upstream connection's request side.
pub(super) type Sender = SendRequest<Full<Bytes>>;

/// Idle kept-alive connections, per upstream.
#[derive(Default)]
pub(super) struct Pool {
    idle: Mutex<HashMap<(String, u16, bool), Vec<Sender>>>,
}

impl Pool {
    pub(super) async fn take(
        &self,
        url: &UpstreamUrl,
        tls: &TlsConnector,
    ) -> Result<Sender, String> {
        let key = (url.host.clone(), url.port, url.https);
        loop {
            let candidate = {
                let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
                idle.get_mut(&key).and_then(Vec::pop)
            };
            match candidate {
                Some(s) if s.is_ready() => return Ok(s),
                Some(_) => continue,
                None => break,
            }
        }
        upstream::open(&url.host, url.port, url.https.then_some(tls)).await
    }

    pub(super) fn give_back(&self, url: &UpstreamUrl, sender: Sender) {
        if sender.is_closed() {
            return;
        }
        let key = (url.host.clone(), url.port, url.https);
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let list = idle.entry(key).or_default();
        if list.len() < 64 {
            list.push(sender);
        }
    }
}
