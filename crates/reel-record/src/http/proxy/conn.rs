//! A client connection's task: the requests it carries, each handled as an exchange.

use std::sync::Arc;

use hyper::service::service_fn;
use reel_net::serve::{Limits, serve_http1};
use tokio::net::TcpStream;

use super::client::ClientConn;
use super::limits::SHUTDOWN_GRACE;
use super::request::handle;
use super::shared::Shared;

/// Serves one client connection until it closes or the proxy stops.
pub(super) async fn connection(stream: TcpStream, sh: Arc<Shared>, n: u64, limits: Limits) {
    let conn = Arc::new(ClientConn {
        key: format!("reel:conn-{n}").into(),
        upstream: tokio::sync::Mutex::new(None),
    });
    let svc = {
        let sh = Arc::clone(&sh);
        service_fn(move |req| handle(Arc::clone(&sh), Arc::clone(&conn), req))
    };
    serve_http1(stream, svc, limits, sh.stop.clone(), SHUTDOWN_GRACE).await;
}
