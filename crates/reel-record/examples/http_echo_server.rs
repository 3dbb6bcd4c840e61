//! A minimal Streamable HTTP MCP server for the `reel rec --url` bench (no SDK): every
//! POST carrying a JSON-RPC request is answered at once with `application/json`
//! `{"jsonrpc":"2.0","id":<its id>,"result":{"content":[{"type":"text","text":"echo"}],
//! "echo":<its params>}}` (the `tools/call echo` of the bench); a notification gets 202.
//!
//!     http_echo_server [--port N] [--threads N]
//!
//! Prints `listening on 127.0.0.1:PORT` on stdout once it accepts connections, then
//! serves until killed. Loopback only.

use std::convert::Infallible;
use std::io::Write as _;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::value::RawValue;

#[derive(serde::Deserialize)]
struct Call<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

async fn answer(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => return Ok(status(StatusCode::BAD_REQUEST)),
    };
    let Ok(call) = serde_json::from_slice::<Call<'_>>(&body) else {
        return Ok(status(StatusCode::BAD_REQUEST));
    };
    let Some(id) = call.id else {
        return Ok(status(StatusCode::ACCEPTED));
    };
    let params = call.params.map_or("null", RawValue::get);
    let out = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[{{"type":"text","text":"echo"}}],"echo":{params}}}}}"#,
        id.get()
    );
    let mut r = Response::new(Full::new(Bytes::from(out)));
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    Ok(r)
}

fn status(s: StatusCode) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::new()));
    *r.status_mut() = s;
    r
}

fn main() -> std::io::Result<()> {
    let mut port = 0u16;
    let mut threads = 2usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let v = args.next().unwrap_or_default();
        match a.as_str() {
            "--port" => port = v.parse().unwrap_or(0),
            "--threads" => threads = v.parse().unwrap_or(2).max(1),
            other => {
                eprintln!(
                    "http_echo_server: unknown argument {other}; usage: http_echo_server [--port N] [--threads N]"
                );
                std::process::exit(64);
            }
        }
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        println!("listening on {}", listener.local_addr()?);
        std::io::stdout().flush()?;
        loop {
            let (stream, _) = listener.accept().await?;
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service_fn(answer))
                    .await;
            });
        }
    })
}
