//! Serving on a listener, the one way reel's HTTP listeners (`rec --url`, `play
//! --listen`, and those to come) run: a tokio runtime sized by [`worker_threads`], a
//! [`Stop`] flag set by a handle or by SIGINT, SIGTERM and SIGHUP, an accept loop
//! that, once stopped, closes the listener and gives open connections a grace period
//! before it aborts them, and one way to serve a connection (HTTP/1.1 under the
//! header timeout); [`run`] puts them together, the one entry every listener uses.
//!
//! [`Limits`] hold under abuse: a request head (the first, or the next on a kept-alive
//! connection) must arrive whole within [`HEADER_TIMEOUT`], so a crowd of slow clients
//! (slowloris) or idle keep-alive connections is let go; and at most
//! [`Limits::max_connections`] connections are served at once, the rest waiting in the
//! kernel's queue in arrival order, so the descriptors a listener needs for its trace
//! and its upstream connections are never taken by clients, and a real client waits at
//! most for the crowd ahead of it to time out.
//!
//! Behind the `serve` feature, so the crates that need no runtime (and a stdio-only
//! build) do not compile one.
//!
//! [`worker_threads`]: crate::http::worker_threads

use std::future::Future;
use std::io;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// How long a failed `accept` (out of descriptors and the like) waits before the next.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// How long a request head may take to arrive whole, counted from when the connection
/// opened or its last response was written (`--header-timeout`).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections served at once, at most (`--max-connections`); fewer when the process's
/// descriptor limit is lower (see [`Limits::for_descriptors`]).
pub const MAX_CONNECTIONS: usize = 1024;
/// Descriptors kept for what is not a client connection: the trace, the runtime, the
/// standard streams, a child process's pipes.
pub const RESERVED_DESCRIPTORS: u64 = 32;

/// What one listener allows its clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// See [`HEADER_TIMEOUT`].
    pub header_timeout: Duration,
    /// Connections served at once.
    pub max_connections: usize,
}

impl Limits {
    /// The defaults for a listener that uses `per_connection` descriptors for each
    /// client connection (2 for a proxy: the client's and the upstream's): at most
    /// [`MAX_CONNECTIONS`], and no more than the descriptor limit (`ulimit -n`) leaves
    /// after [`RESERVED_DESCRIPTORS`].
    pub fn for_descriptors(per_connection: u64) -> Limits {
        let fit = descriptor_limit()
            .map(|n| n.saturating_sub(RESERVED_DESCRIPTORS) / per_connection.max(1))
            .map_or(MAX_CONNECTIONS, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            });
        Limits {
            header_timeout: HEADER_TIMEOUT,
            max_connections: fit.clamp(1, MAX_CONNECTIONS),
        }
    }
}

/// The soft limit on open descriptors, where the platform tells.
fn descriptor_limit() -> Option<u64> {
    #[cfg(unix)]
    return crate::process::descriptor_limit();
    #[cfg(not(unix))]
    None
}

/// Serves one HTTP/1.1 connection with `service` under `limits`' header timeout; when
/// `stop` is set, lets the request in progress finish for up to `grace`.
async fn serve_http1<S>(
    stream: TcpStream,
    service: S,
    limits: Limits,
    stop: watch::Receiver<bool>,
    grace: Duration,
) where
    S: hyper::service::HttpService<hyper::body::Incoming>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    S::ResBody: 'static,
    <S::ResBody as hyper::body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let _ = stream.set_nodelay(true);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let mut http = pin!(builder.serve_connection(hyper_util::rt::TokioIo::new(stream), service));
    let mut stopping = pin!(stopped(stop));
    tokio::select! {
        _ = http.as_mut() => {}
        _ = &mut stopping => {
            http.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(grace, http).await;
        }
    }
}

/// The stop flag of one listener: set once, seen by every task that subscribed.
#[derive(Debug, Clone)]
pub struct Stop(Arc<watch::Sender<bool>>);

impl Default for Stop {
    fn default() -> Self {
        Stop(Arc::new(watch::channel(false).0))
    }
}

impl Stop {
    /// A flag not set yet.
    pub fn new() -> Stop {
        Stop::default()
    }

    /// Sets the flag: the listener closes, connections get their grace period.
    pub fn stop(&self) {
        let _ = self.0.send(true);
    }

    /// A receiver for [`stopped`].
    pub fn subscribe(&self) -> watch::Receiver<bool> {
        self.0.subscribe()
    }
}

/// Resolves when the flag is set (never, if the sender is gone without setting it).
pub async fn stopped(mut rx: watch::Receiver<bool>) {
    loop {
        if *rx.borrow_and_update() {
            return;
        }
        if rx.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// Binds `listen` (`IP:PORT`; port 0 for a free one) for an accept loop: a non-blocking
/// std listener (the runtime adopts it) and the address it got. The error says what is
/// wrong, for the caller to name the flag.
pub fn bind(listen: &str) -> Result<(std::net::TcpListener, std::net::SocketAddr), String> {
    let addr: std::net::SocketAddr = listen
        .parse()
        .map_err(|_| "not an IP:PORT address".to_owned())?;
    let listener = std::net::TcpListener::bind(addr).map_err(|e| e.to_string())?;
    widen_backlog(&listener);
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    Ok((listener, local))
}

/// Connections the kernel queues for `accept` (std binds with 128; the kernel caps it
/// at `net.core.somaxconn`, 4096 by default).
pub const BACKLOG: i32 = 4096;

/// Queues up to [`BACKLOG`] connections: while every one of
/// [`Limits::max_connections`] is taken (a slow crowd, say), a real client's connection
/// waits in this queue in arrival order instead of its SYN being dropped and retried
/// ever more slowly.
fn widen_backlog(listener: &std::net::TcpListener) {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: listen on a socket we own, already listening: Linux and the BSDs take
        // it as a change of the backlog. A failure leaves the one std chose.
        unsafe {
            libc::listen(listener.as_raw_fd(), BACKLOG);
        }
    }
    #[cfg(not(unix))]
    let _ = listener;
}

/// The runtime of a listener: `configured` worker threads (0: one per core, at most 4;
/// one: a current-thread runtime), threads named `name`.
pub fn runtime(configured: usize, name: &str) -> io::Result<tokio::runtime::Runtime> {
    let threads = crate::http::worker_threads(configured);
    let mut builder = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(threads);
        b
    };
    builder.thread_name(name).enable_all().build()
}

/// Sets `stop` on SIGINT, SIGTERM or SIGHUP (Ctrl-C elsewhere). Call inside the
/// runtime.
#[cfg(unix)]
fn stop_on_signals(stop: Stop) -> io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    tokio::spawn(async move {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
            _ = hup.recv() => {}
        }
        stop.stop();
    });
    Ok(())
}

/// Sets `stop` on Ctrl-C. Call inside the runtime.
#[cfg(not(unix))]
fn stop_on_signals(stop: Stop) -> io::Result<()> {
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        stop.stop();
    });
    Ok(())
}

/// Accepts connections until `stop` is set, running `connection(stream, n)` (n counts
/// from 1) as a task for each, at most `max_connections` at once (the next waits in the
/// listen queue until one ends); then closes the listener, calls `on_stop`, waits up to
/// `grace` for the connections to finish and aborts the rest.
async fn accept_until_stopped<F, Fut>(
    listener: TcpListener,
    stop: watch::Receiver<bool>,
    max_connections: usize,
    grace: Duration,
    on_stop: impl FnOnce(),
    mut connection: F,
) where
    F: FnMut(TcpStream, u64) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut tasks = tokio::task::JoinSet::new();
    let mut n = 0u64;
    let mut stopping = pin!(stopped(stop));
    loop {
        tokio::select! {
            _ = &mut stopping => break,
            accepted = listener.accept(), if tasks.len() < max_connections.max(1) => match accepted {
                Ok((stream, _)) => {
                    n += 1;
                    tasks.spawn(connection(stream, n));
                }
                Err(_) => tokio::time::sleep(ACCEPT_BACKOFF).await,
            },
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    }
    drop(listener);
    on_stop();
    let all = async { while tasks.join_next().await.is_some() {} };
    let _ = tokio::time::timeout(grace, all).await;
    tasks.abort_all();
}

/// How one listener serves: what it allows its clients, how long a stopping
/// connection may finish its request in progress, and whether SIGINT, SIGTERM and
/// SIGHUP stop it too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Serving {
    /// See [`Limits`].
    pub limits: Limits,
    /// How long, once stopped, a connection may finish its request in progress and the
    /// loop waits for the connections before it aborts them.
    pub grace: Duration,
    /// Set `stop` on SIGINT, SIGTERM and SIGHUP (Ctrl-C elsewhere) too.
    pub on_signals: bool,
}

/// The one way a reel listener serves HTTP/1.1: adopts `listener` (from [`bind`]) into
/// the runtime, stops on the signals when `serving` says so, and accepts until `stop`
/// is set, serving connection `n` (from 1) with the service `service(n)` builds; once
/// stopped, closes the listener, calls `on_stop`, waits up to the grace for the
/// connections to finish and aborts the rest. Call inside the runtime ([`runtime`]); fails only when
/// the listener cannot be adopted or the signals cannot be hooked.
pub async fn run<F, S>(
    listener: std::net::TcpListener,
    serving: Serving,
    stop: &Stop,
    on_stop: impl FnOnce(),
    mut service: F,
) -> io::Result<()>
where
    F: FnMut(u64) -> S,
    S: hyper::service::HttpService<hyper::body::Incoming> + Send + 'static,
    S::Future: Send,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    S::ResBody: Send + 'static,
    <S::ResBody as hyper::body::Body>::Data: Send,
    <S::ResBody as hyper::body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let listener = TcpListener::from_std(listener)?;
    if serving.on_signals {
        stop_on_signals(stop.clone())?;
    }
    let Serving { limits, grace, .. } = serving;
    let conn_stop = stop.clone();
    accept_until_stopped(
        listener,
        stop.subscribe(),
        limits.max_connections,
        grace,
        on_stop,
        move |stream, n| {
            let svc = service(n);
            let stop = conn_stop.subscribe();
            async move { serve_http1(stream, svc, limits, stop, grace).await }
        },
    )
    .await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `run` serves each connection with the service built for its number, and once
    /// stopped calls `on_stop` and returns.
    #[test]
    fn run_serves_each_connection_with_its_own_service_until_stopped() {
        use std::io::{Read, Write};
        use std::sync::atomic::{AtomicBool, Ordering};

        let rt = runtime(2, "t").unwrap();
        let (listener, addr) = bind("127.0.0.1:0").unwrap();
        let stop = Stop::new();
        let stopped = Arc::new(AtomicBool::new(false));
        let serving = Serving {
            limits: Limits::for_descriptors(1),
            grace: Duration::from_secs(1),
            on_signals: false,
        };
        let (s, seen) = (stop.clone(), Arc::clone(&stopped));
        let server = std::thread::spawn(move || {
            rt.block_on(run(
                listener,
                serving,
                &s,
                move || seen.store(true, Ordering::SeqCst),
                |n| {
                    hyper::service::service_fn(move |_req| async move {
                        Ok::<_, std::convert::Infallible>(hyper::Response::new(format!("conn {n}")))
                    })
                },
            ))
        });
        for n in 1..=2 {
            let mut c = std::net::TcpStream::connect(addr).unwrap();
            c.write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                .unwrap();
            let mut answer = String::new();
            c.read_to_string(&mut answer).unwrap();
            assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
            assert!(answer.ends_with(&format!("conn {n}")), "{answer}");
        }
        assert!(!stopped.load(Ordering::SeqCst));
        stop.stop();
        server.join().unwrap().unwrap();
        assert!(stopped.load(Ordering::SeqCst), "on_stop ran");
        assert!(
            std::net::TcpStream::connect(addr).is_err(),
            "the listener is closed"
        );
    }

    /// A stopped loop closes its listener and waits for a connection in progress.
    #[test]
    fn the_loop_stops_and_lets_a_connection_finish() {
        let rt = runtime(1, "t").unwrap();
        rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let stop = Stop::new();
            let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel();
            let s = stop.clone();
            let serving = tokio::spawn(accept_until_stopped(
                listener,
                stop.subscribe(),
                MAX_CONNECTIONS,
                Duration::from_secs(5),
                || {},
                move |_stream, n| {
                    let done = done_tx.clone();
                    let s = s.clone();
                    async move {
                        s.stop();
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        let _ = done.send(n);
                    }
                },
            ));
            let _client = TcpStream::connect(addr).await.unwrap();
            serving.await.unwrap();
            assert_eq!(done_rx.recv().await, Some(1));
            assert!(
                TcpStream::connect(addr).await.is_err(),
                "the listener is closed"
            );
        });
    }
}
