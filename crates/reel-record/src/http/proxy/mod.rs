//! The reverse proxy itself: one task per client connection, one exchange per request,
//! one pump task per response body.
//!
//! Order in the trace follows cause and effect without ever holding a place in it while
//! waiting on a peer:
//! - a request body is recorded when it is complete, before its end is passed upstream
//!   (the upstream cannot answer a request it has not finished reading);
//! - an SSE chunk takes its place (a ticket) only once the client's channel has room,
//!   is sent, then parsed and its events queued under that ticket: anything the client
//!   does in reaction comes later;
//! - a plain (JSON) body is recorded before its last chunk goes out (or, without a
//!   `Content-Length`, before its end does): a client acts on a JSON body only once
//!   it has all of it.
//!
//! Sessions (`session` on every line): the request's `Mcp-Session-Id`; else the legacy
//! session whose `endpoint` the request was posted to; else the `Mcp-Session-Id` the
//! response issues (an `initialize`); else `reel:conn-N`, the client connection the
//! request came on (2026-07-28, stateless servers, a refused probe). A request line
//! whose session depends on the response waits for the response headers before it is
//! queued (it keeps the time it was received).
//!
//! The files are cut along hyper's lines, and import downward only: `conn` serves a
//! client connection and hands each request to `request`, which opens an `exchange`
//! (one request's facts and the answers reel gives itself) and passes the upstream's
//! response to `answer`, which starts a body's `pump`; `client` holds a connection's
//! upstream, `shared` what every task shares (the upstream, the queue, the sessions,
//! the metadata rewriting) and `limits` the limits they keep.

mod answer;
mod client;
mod exchange;
mod limits;
mod pump;
mod request;
mod shared;

use std::sync::Arc;

use hyper::service::service_fn;
use reel_net::serve::{self, Serving, Stop};

use client::ClientConn;
pub use limits::{CHANNEL_FRAMES, EXCERPT_MAX, GATE_MAX, METADATA_MAX, SHUTDOWN_GRACE};
use request::handle;
pub(crate) use shared::Shared;

/// Serves client connections until stopped (each request of connection `n` handled as
/// an exchange of that client's), then lets them finish (see [`SHUTDOWN_GRACE`]) and
/// waits for the body pumps.
pub(crate) async fn serve(
    listener: std::net::TcpListener,
    sh: Arc<Shared>,
    serving: Serving,
    stop: &Stop,
) -> std::io::Result<()> {
    let conns = Arc::clone(&sh);
    serve::run(
        listener,
        serving,
        stop,
        || {},
        move |n| {
            let (sh, conn) = (Arc::clone(&conns), Arc::new(ClientConn::new(n)));
            service_fn(move |req| handle(Arc::clone(&sh), Arc::clone(&conn), req))
        },
    )
    .await?;
    sh.pumps_done().await;
    Ok(())
}
