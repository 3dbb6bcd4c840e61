//! reel's local web viewer: `reel view`.
//!
//! An HTTP server on loopback ([`View::bind`], then [`View::run`]) that shows traces in
//! a browser: the runs of a directory, one trace in six views (timeline, calls, tools,
//! turns, events, raw), the diff of two (reel-diff's alignment and drift classes), a
//! merge of several by time, a trace still being written (followed live), and MMSP
//! cache directories at the routes of MMSP-RFC-0010 §7. The pages are plain HTML, CSS
//! and JavaScript modules embedded in the binary; nothing is fetched from elsewhere.
//!
//! Layout: [`catalog`] (what is shown, keys to traces), [`index`] (one trace's lines and
//! calls, growing as the file does), [`api`] (the JSON the pages read), [`server`]
//! (routes, headers, the live feed), [`mmsp`] (the RFC's listing and conversation
//! pages), [`paths`] (request paths checked by components).
#![deny(missing_docs)]

pub mod api;
pub mod catalog;
pub mod index;
pub mod mmsp;
pub mod paths;
pub mod server;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use reel_net::http::LoopbackGuard;
use reel_net::serve::{self, Limits, Serving, Stop};

pub use catalog::{Catalog, Home};

/// How long open connections (live feeds) get to finish once the viewer stops.
const GRACE: Duration = Duration::from_millis(200);

/// What `reel view` was asked to show and where.
#[derive(Debug, Clone)]
pub struct Config {
    /// The paths given: none (then `default_dir`), a directory, or trace files.
    pub paths: Vec<PathBuf>,
    /// Where runs are when no path is given.
    pub default_dir: PathBuf,
    /// `IP:PORT` to listen on (port 0: a free one).
    pub listen: String,
    /// Show a directory as an MMSP cache even when none of its files looks like one.
    pub mmsp: bool,
    /// Host names besides the loopback ones that requests may name in `Host`/`Origin`.
    pub allow_hosts: Vec<String>,
}

/// Why the viewer cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// A path given cannot be shown.
    #[error("{0}")]
    Input(String),
    /// The listen address cannot be bound.
    #[error("--listen {listen}: {problem}")]
    Listen {
        /// The address.
        listen: String,
        /// Why.
        problem: String,
    },
    /// The runtime could not be set up.
    #[error("cannot start the viewer: {0}")]
    Setup(std::io::Error),
}

/// A viewer bound to its address, not serving yet.
pub struct View {
    app: Arc<server::App>,
    listener: std::net::TcpListener,
    addr: SocketAddr,
}

impl View {
    /// Opens what `config` names and binds the listener.
    pub fn bind(config: &Config) -> Result<View, ViewError> {
        let catalog = Catalog::new(&config.paths, &config.default_dir, config.mmsp)
            .map_err(ViewError::Input)?;
        // The traces named are opened now (their indexing starts), and one that is no
        // trace is said now, not as an empty page.
        let keys: Vec<String> = catalog.named_keys().map(str::to_owned).collect();
        for key in keys {
            let entry = catalog
                .open(&key)
                .map_err(|e| ViewError::Input(e.to_string()))?;
            let ix = entry.read();
            if ix
                .lines
                .get(0)
                .is_some_and(|r| r.class == index::Class::Bad)
            {
                return Err(ViewError::Input(format!(
                    "{}:1: not a trace: the first line is not a JSON object",
                    entry.source.display()
                )));
            }
        }
        let (listener, addr) =
            serve::bind(&config.listen).map_err(|problem| ViewError::Listen {
                listen: config.listen.clone(),
                problem,
            })?;
        // A listener on a non-loopback address answers to that address too.
        let own = (!addr.ip().is_loopback() && !addr.ip().is_unspecified())
            .then(|| addr.ip().to_string());
        let allowed = config.allow_hosts.iter().cloned().chain(own);
        let app = Arc::new(server::App {
            catalog,
            guard: LoopbackGuard::new(allowed),
        });
        Ok(View {
            app,
            listener,
            addr,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL of its first page (on this machine: a listener on every address is
    /// reached through loopback).
    pub fn url(&self) -> String {
        let mut addr = self.addr;
        if addr.ip().is_unspecified() {
            addr.set_ip(if addr.is_ipv4() {
                std::net::Ipv4Addr::LOCALHOST.into()
            } else {
                std::net::Ipv6Addr::LOCALHOST.into()
            });
        }
        format!("http://{addr}/")
    }

    /// What the first page shows.
    pub fn home(&self) -> &Home {
        &self.app.catalog.home
    }

    /// Serves until `stop` is set (or, with `on_signals`, SIGINT/SIGTERM/SIGHUP).
    pub fn run(self, stop: Stop, on_signals: bool) -> Result<(), ViewError> {
        let rt = serve::runtime(2, "reel-view").map_err(ViewError::Setup)?;
        let serving = Serving {
            limits: Limits::for_descriptors(1),
            grace: GRACE,
            on_signals,
        };
        let app = self.app;
        rt.block_on(serve::run(
            self.listener,
            serving,
            &stop,
            || {},
            |_| {
                let app = Arc::clone(&app);
                hyper::service::service_fn(move |req| Arc::clone(&app).answer(req))
            },
        ))
        .map_err(ViewError::Setup)?;
        rt.shutdown_timeout(Duration::from_millis(100));
        Ok(())
    }
}
