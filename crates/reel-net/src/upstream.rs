//! Connections to an upstream HTTP server, the one way reel's proxies (`rec --url`,
//! `reel llm`) reach theirs: HTTP/1.1 over TCP, or over TLS with rustls (the *ring*
//! provider). Trusted roots: Mozilla's (`webpki-roots`), the platform's (where a
//! corporate proxy's CA is usually installed: `SSL_CERT_FILE`/`SSL_CERT_DIR`, the system
//! bundle, the macOS keychain, the Windows store; read by `rustls-native-certs`), and any
//! CA files the user names.
//!
//! Limits: connecting (TCP and TLS handshake) gives up after [`CONNECT_TIMEOUT`]; only
//! HTTP/1.1 is spoken upstream (ALPN `http/1.1`).
//!
//! Behind the `client` feature.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Body;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};
use tokio::net::TcpStream;
pub use tokio_rustls::TlsConnector;

/// How long a connection to the upstream may take to open.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The platform's roots, best effort (`rustls-native-certs`: the bundle and directory
/// `SSL_CERT_FILE`/`SSL_CERT_DIR` name, else the system's, the macOS keychain or the
/// Windows store): a store that cannot be read, or a certificate rustls refuses, is
/// skipped (Mozilla's roots are there either way).
fn system_roots(roots: &mut rustls::RootCertStore) {
    let found = rustls_native_certs::load_native_certs();
    let _ = roots.add_parsable_certificates(found.certs);
}

/// A CA file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{}: {reason}", path.display())]
pub struct CaError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    pub reason: String,
}

/// The TLS client configuration: Mozilla's roots, the system's, and the certificates of
/// each `ca` file (PEM).
pub fn tls_connector(ca: &[PathBuf]) -> Result<TlsConnector, CaError> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    system_roots(&mut roots);
    for path in ca {
        for cert in read_pem(path)? {
            roots.add(cert).map_err(|e| CaError {
                path: path.clone(),
                reason: e.to_string(),
            })?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| CaError {
            path: PathBuf::new(),
            reason: e.to_string(),
        })?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsConnector::from(Arc::new(config)))
}

fn read_pem(path: &Path) -> Result<Vec<CertificateDer<'static>>, CaError> {
    let err = |reason: String| CaError {
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

/// Opens a connection to `host:port` (TLS when `tls` is given) and returns its request
/// sender; the connection is driven by a task of its own until either side closes it.
pub async fn open<B>(
    host: &str,
    port: u16,
    tls: Option<&TlsConnector>,
) -> Result<SendRequest<B>, String>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let connect = async {
        let tcp = TcpStream::connect((host, port))
            .await
            .map_err(|e| format!("cannot connect to {host}:{port}: {e}"))?;
        let _ = tcp.set_nodelay(true);
        match tls {
            None => handshake(TokioIo::new(tcp)).await,
            Some(tls) => {
                let name = ServerName::try_from(host.to_owned())
                    .map_err(|e| format!("{host}: not a TLS server name: {e}"))?;
                let stream = tls
                    .connect(name, tcp)
                    .await
                    .map_err(|e| format!("TLS with {host}:{port} failed: {e}"))?;
                handshake(TokioIo::new(stream)).await
            }
        }
    };
    match tokio::time::timeout(CONNECT_TIMEOUT, connect).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "cannot connect to {host}:{port} within {} s",
            CONNECT_TIMEOUT.as_secs()
        )),
    }
}

async fn handshake<I, B>(io: TokioIo<I>) -> Result<SendRequest<B>, String>
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
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
