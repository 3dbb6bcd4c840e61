//! Serving on a listener, the one way reel's HTTP listeners (`rec --url`, `play
//! --listen`, and those to come) run: a tokio runtime sized by [`worker_threads`], a
//! [`Stop`] flag set by a handle or by SIGINT, SIGTERM and SIGHUP, and an accept loop
//! that, once stopped, closes the listener and gives open connections a grace period
//! before it aborts them.
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
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    Ok((listener, local))
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
pub fn stop_on_signals(stop: Stop) -> io::Result<()> {
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
pub fn stop_on_signals(stop: Stop) -> io::Result<()> {
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        stop.stop();
    });
    Ok(())
}

/// Accepts connections until `stop` is set, running `connection(stream, n)` (n counts
/// from 1) as a task for each; then closes the listener, calls `on_stop`, waits up to
/// `grace` for the connections to finish and aborts the rest.
pub async fn accept_until_stopped<F, Fut>(
    listener: TcpListener,
    stop: watch::Receiver<bool>,
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
            accepted = listener.accept() => match accepted {
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

#[cfg(test)]
mod tests {
    use super::*;

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
