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
//! The rule itself lives in [`reel_mcp::http::LoopbackGuard`], shared with `reel play
//! --listen`; this adapter reads the two headers from a hyper request.

use hyper::HeaderMap;
use reel_mcp::http::LoopbackGuard;

pub(crate) use reel_mcp::http::Refusal;

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

    #[test]
    fn loopback_names_pass_and_others_are_refused() {
        let g = Guard::default();
        for ok in [
            "127.0.0.1:3000",
            "localhost",
            "LOCALHOST:1",
            "[::1]:80",
            "127.9.9.9",
            "a.localhost:5",
        ] {
            assert!(check(&g, Some(ok), None), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:3000",
            "192.168.1.2:80",
            "[::2]",
            "127.0.0.1.evil.example",
        ] {
            assert!(!check(&g, Some(bad), None), "{bad}");
        }
        assert!(check(&g, Some("localhost:1"), Some("http://localhost:1")));
        assert!(!check(&g, Some("localhost:1"), Some("http://evil.example")));
        assert!(!check(&g, Some("localhost:1"), Some("null")));
        assert!(check(&g, None, None));
        let allowed = Guard::new(["mybox.lan".to_owned()]);
        assert!(check(
            &allowed,
            Some("mybox.lan:8080"),
            Some("https://MYBOX.lan")
        ));
    }
}
