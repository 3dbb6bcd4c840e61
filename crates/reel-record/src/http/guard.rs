//! DNS-rebinding protection for reel's own listener.
//!
//! A web page can make a browser send requests to `127.0.0.1` under a name the attacker
//! controls (`Host: evil.example`) or from its own origin (`Origin: http://evil.example`).
//! reel refuses every request whose `Host`, or `Origin` when present, names anything but
//! a loopback host — `localhost` (and `*.localhost`), `127.0.0.0/8`, `[::1]` — or a name
//! the user allowed (`--allow-host`, and the host of a non-wildcard `--listen`).
//! `Origin: null` (a sandboxed page, a file) is refused too. A request without `Host`
//! (HTTP/1.0) is let through: no browser sends one.

use std::net::Ipv4Addr;

use hyper::HeaderMap;

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// `"host"` or `"origin"`.
    pub header: &'static str,
    /// The value, as sent.
    pub value: String,
}

/// The names the listener answers to.
#[derive(Debug, Clone, Default)]
pub(crate) struct Guard {
    /// Extra allowed host names, lower case, without port.
    allowed: Vec<String>,
}

impl Guard {
    pub fn new(allowed: impl IntoIterator<Item = String>) -> Self {
        Guard {
            allowed: allowed
                .into_iter()
                .map(|h| h.trim_matches(['[', ']']).to_ascii_lowercase())
                .collect(),
        }
    }

    /// Checks `Host` and `Origin`.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        if let Some(h) = headers.get(hyper::header::HOST) {
            let value = String::from_utf8_lossy(h.as_bytes());
            if !self.allows(host_of_authority(&value)) {
                return Err(Refusal {
                    header: "host",
                    value: value.into_owned(),
                });
            }
        }
        if let Some(o) = headers.get(hyper::header::ORIGIN) {
            let value = String::from_utf8_lossy(o.as_bytes());
            let ok = value
                .split_once("://")
                .map(|(_, rest)| host_of_authority(rest.split('/').next().unwrap_or("")))
                .is_some_and(|h| self.allows(h));
            if !ok {
                return Err(Refusal {
                    header: "origin",
                    value: value.into_owned(),
                });
            }
        }
        Ok(())
    }

    fn allows(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        is_loopback_name(&host) || self.allowed.contains(&host)
    }
}

/// The host of `host[:port]` / `[v6][:port]`, without brackets.
fn host_of_authority(authority: &str) -> &str {
    let a = authority.trim();
    if let Some(rest) = a.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    a.rsplit_once(':').map_or(a, |(h, _)| h)
}

/// `localhost`, `*.localhost`, `127.0.0.0/8` or `::1`.
pub(crate) fn is_loopback_name(host: &str) -> bool {
    let host = host.trim_end_matches('.');
    host == "localhost"
        || host.ends_with(".localhost")
        || host == "::1"
        || host
            .parse::<Ipv4Addr>()
            .is_ok_and(|ip| ip.octets()[0] == 127)
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
