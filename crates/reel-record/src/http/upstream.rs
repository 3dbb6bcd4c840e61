//! The upstream: its URL, and HTTP/1.1 connections to it, over TCP or TLS (rustls with
//! the *ring* provider, Mozilla's roots from `webpki-roots` plus any `--upstream-ca`).
//!
//! The connections themselves are `reel_net::upstream`'s (limits: connecting gives up
//! after [`CONNECT_TIMEOUT`]; only HTTP/1.1 is spoken upstream, which every MCP server
//! speaks).

use std::path::PathBuf;

use hyper::client::conn::http1::SendRequest;
use reel_net::upstream::TlsConnector;

use reel_net::http::InvalidUrl;

use super::body::TeeBody;
use super::headers::OriginRewriter;

pub use reel_net::upstream::CONNECT_TIMEOUT;

/// Why `--url` is not usable.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UrlError {
    /// Not an absolute `http://` or `https://` URL.
    #[error(transparent)]
    Invalid(#[from] InvalidUrl),
    /// An `--upstream-ca` file cannot be read or holds no certificate.
    #[error("--upstream-ca {}: {reason}", path.display())]
    Ca {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// The parsed upstream URL: the one URL type of reel's HTTP sides.
pub use reel_net::http::UpstreamUrl;

/// The origin's spellings (`scheme://authority`, and with and without a default port),
/// for rewriting URLs that point at it.
pub(crate) fn rewriter(url: &UpstreamUrl) -> OriginRewriter {
    let scheme = if url.https { "https" } else { "http" };
    let default = if url.https { 443 } else { 80 };
    let host = if url.host.contains(':') {
        format!("[{}]", url.host)
    } else {
        url.host.clone()
    };
    let mut spellings = vec![format!("{scheme}://{}", url.authority)];
    if url.port == default {
        spellings.push(format!("{scheme}://{host}"));
        spellings.push(format!("{scheme}://{host}:{default}"));
    } else {
        spellings.push(format!("{scheme}://{host}:{}", url.port));
    }
    spellings.sort();
    spellings.dedup();
    OriginRewriter::new(spellings)
}

/// Builds the TLS client configuration: Mozilla's roots plus each `--upstream-ca` file.
pub(crate) fn tls_connector(ca: &[PathBuf]) -> Result<TlsConnector, UrlError> {
    reel_net::upstream::tls_connector(ca).map_err(|e| UrlError::Ca {
        path: e.path,
        reason: e.reason,
    })
}

/// Opens a connection to the upstream and returns its request sender.
pub(crate) async fn open(
    url: &UpstreamUrl,
    tls: Option<&TlsConnector>,
) -> Result<SendRequest<TeeBody>, String> {
    reel_net::upstream::open(&url.host, url.port, tls).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_origin_is_rewritten_in_each_spelling() {
        let u = UpstreamUrl::parse("https://Example.com/a/b?x=1").unwrap();
        assert_eq!(
            rewriter(&u).strip("https://example.com:443/.well-known/x"),
            Some("/.well-known/x")
        );
    }
}
