//! The upstream: its URL, and HTTP/1.1 connections to it, over TCP or TLS (rustls with
//! the *ring* provider, Mozilla's roots from `webpki-roots` plus any `--upstream-ca`).
//!
//! Limits: connecting (TCP and TLS handshake) gives up after [`CONNECT_TIMEOUT`]; only
//! HTTP/1.1 is spoken upstream (ALPN `http/1.1`), which every MCP server speaks.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use reel_mcp::http::InvalidUrl;

use super::body::TeeBody;
use super::headers::OriginRewriter;

/// How long a connection to the upstream may take to open.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

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
pub use reel_mcp::http::McpUrl as UpstreamUrl;

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

/// Builds the TLS client configuration: Mozilla's roots plus the certificates of each
/// `ca` file (PEM).
pub(crate) fn tls_connector(ca: &[PathBuf]) -> Result<TlsConnector, UrlError> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    for path in ca {
        for cert in read_pem(path)? {
            roots.add(cert).map_err(|e| UrlError::Ca {
                path: path.clone(),
                reason: e.to_string(),
            })?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| UrlError::Ca {
            path: PathBuf::new(),
            reason: e.to_string(),
        })?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsConnector::from(Arc::new(config)))
}

fn read_pem(path: &Path) -> Result<Vec<CertificateDer<'static>>, UrlError> {
    let err = |reason: String| UrlError::Ca {
        path: path.to_owned(),
        reason,
    };
    let certs: Vec<_> = CertificateDer::pem_file_iter(path)
        .map_err(|e| err(e.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|e| err(e.to_string()))?;
    if certs.is_empty() {
        return Err(err("no PEM certificate in it".to_owned()));
    }
    Ok(certs)
}

/// Opens a connection to the upstream and returns its request sender; the connection
/// is driven by a task of its own until either side closes it.
pub(crate) async fn open(
    url: &UpstreamUrl,
    tls: Option<&TlsConnector>,
) -> Result<SendRequest<TeeBody>, String> {
    let connect = async {
        let tcp = TcpStream::connect((url.host.as_str(), url.port))
            .await
            .map_err(|e| format!("cannot connect to {}:{}: {e}", url.host, url.port))?;
        let _ = tcp.set_nodelay(true);
        match tls {
            None => handshake(TokioIo::new(tcp)).await,
            Some(tls) => {
                let name = ServerName::try_from(url.host.clone())
                    .map_err(|e| format!("{}: not a TLS server name: {e}", url.host))?;
                let stream = tls
                    .connect(name, tcp)
                    .await
                    .map_err(|e| format!("TLS with {}:{} failed: {e}", url.host, url.port))?;
                handshake(TokioIo::new(stream)).await
            }
        }
    };
    match tokio::time::timeout(CONNECT_TIMEOUT, connect).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "cannot connect to {}:{} within {} s",
            url.host,
            url.port,
            CONNECT_TIMEOUT.as_secs()
        )),
    }
}

async fn handshake<I>(io: TokioIo<I>) -> Result<SendRequest<TeeBody>, String>
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, conn) = http1::Builder::new()
        .handshake(io)
        .await
        .map_err(|e| format!("HTTP handshake with the upstream failed: {e}"))?;
    tokio::spawn(async move {
        // The connection ends when either side closes it; errors reach the request
        // that was using it.
        let _ = conn.await;
    });
    Ok(sender)
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
