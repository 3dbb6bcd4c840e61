//! DNS-rebinding protection for reel's own listener.
//!
//! A web page can make a browser send requests to `127.0.0.1` under a name the attacker
//! controls (`Host: evil.example`) or from its own origin (`Origin: http://evil.example`).
//! reel refuses every request whose `Host`, or `Origin` when present, names anything but
//! a loopback host — `localhost` (and `*.localhost`), `127.0.0.0/8`, `[::1]` — or a name
//! the user allowed (`--allow-host`, and the host of a non-wildcard `--listen`).
//! `Origin: null` (a sandboxed page, a file) is refused too. A request without `Host`
//! (HTTP/1.0) is let through: no browser sends one.
//!
//! The rule itself lives in [`reel_net::http::LoopbackGuard`], shared with `reel play
//! --listen`; this adapter reads the two headers from a hyper request.

use hyper::HeaderMap;
use reel_net::http::LoopbackGuard;

pub(crate) use reel_net::http::Refusal;

/// The names the listener answers to.
#[derive(Debug, Clone, Default)]
pub(crate) struct Guard(LoopbackGuard);

impl Guard {
    pub fn new(allowed: impl IntoIterator<Item = String>) -> Self {
        Guard(LoopbackGuard::new(allowed))
    }

    /// Checks `Host` and `Origin`.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        self.0.check_all(
            headers
                .get_all(hyper::header::HOST)
                .iter()
                .map(|v| v.as_bytes()),
            headers
                .get_all(hyper::header::ORIGIN)
                .iter()
                .map(|v| v.as_bytes()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    fn check(g: &Guard, host: Option<&'static str>, origin: Option<&'static str>) -> bool {
        let mut h = HeaderMap::new();
        if let Some(v) = host {
            h.insert("host", HeaderValue::from_static(v));
        }
        if let Some(v) = origin {
            h.insert("origin", HeaderValue::from_static(v));
        }
        g.check(&h).is_ok()
    }

    // The rule itself is tested in reel-mcp; this is the reading of the headers.
    #[test]
    fn reads_host_and_origin_from_the_headers() {
        let g = Guard::default();
        assert!(check(&g, Some("localhost:1"), Some("http://localhost:1")));
        assert!(!check(&g, Some("evil.example"), None));
        assert!(!check(&g, Some("localhost:1"), Some("http://evil.example")));
        assert!(check(&g, None, None));
        let allowed = Guard::new(["mybox.lan".to_owned()]);
        assert!(check(&allowed, Some("mybox.lan:8080"), None));
    }

    #[test]
    fn a_second_host_header_is_checked_too() {
        let mut h = HeaderMap::new();
        h.append("host", HeaderValue::from_static("localhost"));
        h.append("host", HeaderValue::from_static("evil.example"));
        assert!(Guard::default().check(&h).is_err());
    }
}
