//! The flags of reel's HTTP listeners and upstream connections, each defined once and
//! flattened into the commands that take it: `--listen` ([`ListenAddr`]) and `--allow-host`
//! ([`Listen`]),
//! `--header-timeout` and `--max-connections` ([`ListenLimits`], applied to
//! `reel_net::serve::Limits`), `--upstream-ca` ([`UpstreamCa`]). A command narrows a
//! flag with `mut_arg` (what it conflicts with, its own help) rather than defining it
//! again.

use std::path::PathBuf;

/// The loopback address and free port a listener binds when `--listen` is not given.
#[cfg(feature = "http")]
pub const LOOPBACK_ANY_PORT: &str = "127.0.0.1:0";

/// Where an HTTP listener binds.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct ListenAddr {
    /// Where reel's HTTP listener binds (port 0: a free one) [default: 127.0.0.1:0,
    /// loopback]. A non-loopback address exposes it to other machines: say so on
    /// purpose.
    #[arg(long, value_name = "IP:PORT")]
    pub listen: Option<String>,
}

impl ListenAddr {
    /// The address to bind: `--listen`, else loopback on a free port.
    #[cfg(feature = "http")]
    pub fn addr(&self) -> &str {
        self.listen.as_deref().unwrap_or(LOOPBACK_ANY_PORT)
    }
}

/// Where an HTTP listener binds and which names its requests may carry (`Host` and
/// `Origin`, checked by `reel_net::http::LoopbackGuard`).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct Listen {
    #[command(flatten)]
    pub at: ListenAddr,

    /// Also accept requests whose Host or Origin names HOST (repeatable), for a --listen
    /// address other machines reach; loopback names are always accepted, every other
    /// name gets 403 (DNS rebinding).
    #[arg(long = "allow-host", value_name = "HOST")]
    pub allow_host: Vec<String>,
}

impl Listen {
    /// The address to bind: `--listen`, else loopback on a free port.
    #[cfg(feature = "http")]
    pub fn addr(&self) -> &str {
        self.at.addr()
    }

    /// True when either flag was given.
    pub fn given(&self) -> bool {
        self.at.listen.is_some() || !self.allow_host.is_empty()
    }
}

/// Says on stderr that `addr` is reachable from other machines, and what anyone who
/// reaches it can do (`anyone`): the loopback guard stops browsers (DNS rebinding), not
/// other machines.
#[cfg(feature = "http")]
pub fn warn_if_exposed(addr: std::net::SocketAddr, anyone: &str) {
    if !addr.ip().is_loopback() {
        say!(
            "reel: WARNING: listening on {addr}, which is not a loopback address: anyone who can reach it {anyone}"
        );
    }
}

/// Extra certificate authorities for an https upstream.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct UpstreamCa {
    /// A PEM file of extra certificate authorities for an https upstream (repeatable;
    /// Mozilla's roots and the platform's, $SSL_CERT_FILE/$SSL_CERT_DIR, the system
    /// bundle or keychain, are always trusted).
    #[arg(long = "upstream-ca", alias = "ca-file", value_name = "PATH")]
    pub upstream_ca: Vec<PathBuf>,
}

/// The limits of an HTTP listener.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct ListenLimits {
    /// With an HTTP listener: seconds a request head may take to arrive whole, counted
    /// from the connection's opening or its last response; a slower or idle connection
    /// is closed [default: 10].
    #[arg(long, value_name = "SECS", value_parser = positive_seconds)]
    pub header_timeout: Option<f64>,

    /// With an HTTP listener: connections served at once; more wait their turn in
    /// arrival order [default: 1024, fewer when `ulimit -n` is lower].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: Option<u64>,
}

impl ListenLimits {
    /// True when either flag was given.
    pub fn given(&self) -> bool {
        self.header_timeout.is_some() || self.max_connections.is_some()
    }

    /// `limits` with the flags given applied.
    #[cfg(feature = "http")]
    pub fn apply(&self, mut limits: reel_net::serve::Limits) -> reel_net::serve::Limits {
        if let Some(s) = self.header_timeout {
            limits.header_timeout = std::time::Duration::from_secs_f64(s);
        }
        if let Some(n) = self.max_connections {
            limits.max_connections = usize::try_from(n).unwrap_or(usize::MAX);
        }
        limits
    }
}

fn positive_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err(format!(
            "`{s}` is not a number of seconds between 0 and 86400 (e.g. 10 or 0.5)"
        )),
    }
}
