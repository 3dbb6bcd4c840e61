//! `--header-timeout` and `--max-connections`: what `rec --url` and `play --listen`
//! allow their clients, one flag shape for both (the limits themselves are
//! `reel_net::serve::Limits`).

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
