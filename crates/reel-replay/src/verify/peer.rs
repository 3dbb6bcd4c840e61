//! The live server verify plays against: a child process over stdio (`-- CMD`) or a
//! server over HTTP (`--url`), behind one face — lines in, [`LiveOutput`]s out.

use std::io;

use super::error::VerifyError;
#[cfg(feature = "http")]
use super::http::{HttpPeer, HttpUrl};
use super::options::VerifyOptions;
use crate::live::{Live, LiveOutput};

/// The live server.
pub enum Peer {
    /// A child process over stdio.
    Process(Live),
    /// A server over HTTP.
    #[cfg(feature = "http")]
    Http(HttpPeer),
}

impl Peer {
    /// Starts the server (or the HTTP client); everything it says goes to `sink`.
    pub fn start(
        opts: &VerifyOptions,
        shown: &str,
        sink: impl Fn(LiveOutput) -> bool + Send + Sync + Clone + 'static,
    ) -> Result<Peer, VerifyError> {
        match &opts.url {
            #[cfg(not(feature = "http"))]
            Some(url) => Err(VerifyError::Url {
                url: url.clone(),
                why: format!("--url {url}: this reel was built without HTTP (the `http` feature)"),
            }),
            #[cfg(feature = "http")]
            Some(url) => {
                let bad = |why: String| VerifyError::Url {
                    url: url.clone(),
                    why,
                };
                let mut url = HttpUrl::parse(url).map_err(bad)?;
                url.headers = super::http::header_pairs(&opts.headers).map_err(bad)?;
                if url.https {
                    let tls = reel_net::upstream::tls_connector(&opts.ca)
                        .map_err(|e| bad(format!("--upstream-ca {e}")))?;
                    url.tls = Some(tls);
                }
                HttpPeer::start(url, sink)
                    .map(Peer::Http)
                    .map_err(|source| VerifyError::Spawn {
                        command: shown.to_owned(),
                        source,
                    })
            }
            None => Live::spawn(&opts.command, sink)
                .map(Peer::Process)
                .map_err(|source| VerifyError::Spawn {
                    command: shown.to_owned(),
                    source,
                }),
        }
    }

    /// Sends one message.
    pub fn send(&mut self, line: &[u8]) -> io::Result<()> {
        match self {
            Peer::Process(l) => l.send(line),
            #[cfg(feature = "http")]
            Peer::Http(h) => h.send(line),
        }
    }

    /// No more messages (stdio: closes its stdin; HTTP: ends the session).
    pub fn close_input(&mut self) {
        match self {
            Peer::Process(l) => l.close_input(),
            #[cfg(feature = "http")]
            Peer::Http(h) => h.close_input(),
        }
    }

    /// Stops it; a process's exit status.
    pub fn finish(self) -> Option<i64> {
        match self {
            Peer::Process(l) => l.finish(),
            #[cfg(feature = "http")]
            Peer::Http(h) => h.finish(),
        }
    }
}
