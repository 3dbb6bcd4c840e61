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

use super::body::TeeBody;
use super::headers::OriginRewriter;

/// How long a connection to the upstream may take to open.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Why `--url` is not usable.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UrlError {
    /// Not an absolute `http://` or `https://` URL.
    #[error(
        "--url {url}: {reason}; give an absolute http:// or https:// URL, e.g. http://127.0.0.1:3001/mcp"
    )]
    Invalid {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An `--upstream-ca` file cannot be read or holds no certificate.
    #[error("--upstream-ca {}: {reason}", path.display())]
    Ca {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// The parsed upstream URL.
#[derive(Debug, Clone)]
pub struct UpstreamUrl {
    /// The URL as given.
    pub url: String,
    /// `https`.
    pub https: bool,
    /// Host name or address (IPv6 without brackets).
    pub host: String,
    /// Port (the scheme's default when the URL has none).
    pub port: u16,
    /// The URL had an explicit port.
    pub explicit_port: bool,
    /// `Host` header value for the upstream hop.
    pub authority: String,
    /// Path and query of the URL (the MCP endpoint), `/` at least.
    pub path: String,
}

impl UpstreamUrl {
    /// Parses an absolute `http(s)://host[:port][/path][?query]` URL without user info.
    pub fn parse(url: &str) -> Result<UpstreamUrl, UrlError> {
        let invalid = |reason: &str| UrlError::Invalid {
            url: url.to_owned(),
            reason: reason.to_owned(),
        };
        let uri: hyper::Uri = url.parse().map_err(|e| invalid(&format!("{e}")))?;
        let https = match uri.scheme_str() {
            Some(s) if s.eq_ignore_ascii_case("http") => false,
            Some(s) if s.eq_ignore_ascii_case("https") => true,
            Some(s) => return Err(invalid(&format!("scheme {s} is not http or https"))),
            None => return Err(invalid("it has no scheme")),
        };
        let authority = uri.authority().ok_or_else(|| invalid("it has no host"))?;
        if authority.as_str().contains('@') {
            return Err(invalid(
                "user info in the URL is not supported (let the client send its Authorization header)",
            ));
        }
        let host = authority.host().trim_matches(['[', ']']).to_owned();
        if host.is_empty() {
            return Err(invalid("it has no host"));
        }
        let port = authority.port_u16().unwrap_or(if https { 443 } else { 80 });
        if uri.path().is_empty() && uri.query().is_none() && url.ends_with('?') {
            return Err(invalid("it has an empty query"));
        }
        Ok(UpstreamUrl {
            url: url.to_owned(),
            https,
            host,
            port,
            explicit_port: authority.port_u16().is_some(),
            authority: authority.as_str().to_owned(),
            path: uri
                .path_and_query()
                .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned()),
        })
    }

    /// The origin's spellings (`scheme://authority`, and with and without a default
    /// port), for rewriting URLs that point at it.
    pub(crate) fn rewriter(&self) -> OriginRewriter {
        let scheme = if self.https { "https" } else { "http" };
        let default = if self.https { 443 } else { 80 };
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let mut spellings = vec![format!("{scheme}://{}", self.authority)];
        if self.port == default {
            spellings.push(format!("{scheme}://{host}"));
            spellings.push(format!("{scheme}://{host}:{default}"));
        } else {
            spellings.push(format!("{scheme}://{host}:{}", self.port));
        }
        spellings.sort();
        spellings.dedup();
        OriginRewriter::new(spellings)
    }
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
    fn urls_parse_or_say_what_is_wrong() {
        let u = UpstreamUrl::parse("http://127.0.0.1:3001/mcp").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("127.0.0.1", 3001, "/mcp")
        );
        let u = UpstreamUrl::parse("https://Example.com/a/b?x=1").unwrap();
        assert_eq!((u.port, u.https, u.path.as_str()), (443, true, "/a/b?x=1"));
        assert_eq!(
            u.rewriter().strip("https://example.com:443/.well-known/x"),
            Some("/.well-known/x")
        );
        let u = UpstreamUrl::parse("http://[::1]:8080").unwrap();
        assert_eq!((u.host.as_str(), u.path.as_str()), ("::1", "/"));
        for bad in [
            "ftp://h/x",
            "/mcp",
            "http://user:pw@h/mcp",
            "http://",
            "not a url",
        ] {
            assert!(UpstreamUrl::parse(bad).is_err(), "{bad}");
        }
    }
}
