//! MCP over HTTP, the knowledge every HTTP side of reel shares (the recording proxy, the
//! tape server, verify): the names of MCP's HTTP headers, the session key reel gives a
//! client connection that has no MCP session, and the loopback guard of reel's own
//! listeners against DNS rebinding.
//!
//! The guard: a web page can make a browser send requests to `127.0.0.1` under a name
//! the attacker controls (`Host: evil.example`) or from its own origin (`Origin:
//! http://evil.example`). A listener of reel refuses (403) every request whose `Host`,
//! or `Origin` when present, names anything but a loopback host — `localhost` (and
//! `*.localhost`), `127.0.0.0/8`, `[::1]` — or a name the user allowed. `Origin: null`
//! (a sandboxed page, a file) is refused too. A request without `Host` (HTTP/1.0) is let
//! through: no browser sends one. The check is pure (header values in, a verdict out),
//! so it needs no HTTP library.

use std::net::Ipv4Addr;

/// Worker threads of one of reel's HTTP listeners: `configured`, or for 0 as many as
/// the machine has cores, at most 4 (the proxy and the tape server use the same rule).
pub fn worker_threads(configured: usize) -> usize {
    match configured {
        0 => std::thread::available_parallelism().map_or(2, |n| n.get().min(4)),
        n => n,
    }
}

/// Header names, lower case (HTTP header names are case-insensitive).
pub mod headers {
    /// The MCP session (Streamable HTTP, 2025-03-26 … 2025-11-25).
    pub const SESSION_ID: &str = "mcp-session-id";
    /// The negotiated protocol version (from 2025-06-18; 2026-07-28 on every request).
    pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
    /// The JSON-RPC method (2026-07-28).
    pub const METHOD: &str = "mcp-method";
    /// `params.name` or `params.uri` (2026-07-28).
    pub const NAME: &str = "mcp-name";
    /// The event id a client resumes an event stream after.
    pub const LAST_EVENT_ID: &str = "last-event-id";
}

/// The `session` reel's recorder writes for the lines of a client connection that has
/// no MCP session (2026-07-28, stateless servers, a refused probe): this prefix and the
/// connection's number (`reel:conn-1`, …). Replay treats every such line as session-less
/// traffic, not as a session to reproduce.
pub const CONNECTION_SESSION_PREFIX: &str = "reel:conn-";

/// True when a recorded `session` is a connection key rather than an MCP session.
pub fn is_connection_key(session: &str) -> bool {
    session.starts_with(CONNECTION_SESSION_PREFIX)
}

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// `"host"` or `"origin"`.
    pub header: &'static str,
    /// The value, as sent (lossily decoded).
    pub value: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}: {}` is not a loopback name (DNS-rebinding protection)",
            self.header, self.value
        )
    }
}

/// The names a loopback listener answers to.
#[derive(Debug, Clone, Default)]
pub struct LoopbackGuard {
    /// Extra allowed host names, lower case, without port or brackets.
    allowed: Vec<String>,
}

impl LoopbackGuard {
    /// A guard that allows loopback names and `allowed` (host names or IP addresses;
    /// case and brackets do not matter).
    pub fn new(allowed: impl IntoIterator<Item = String>) -> Self {
        LoopbackGuard {
            allowed: allowed
                .into_iter()
                .map(|h| h.trim_matches(['[', ']']).to_ascii_lowercase())
                .collect(),
        }
    }

    /// Checks a request's `Host` and `Origin` header values (`None` when absent).
    pub fn check(&self, host: Option<&[u8]>, origin: Option<&[u8]>) -> Result<(), Refusal> {
        if let Some(h) = host {
            let value = String::from_utf8_lossy(h);
            if !self.allows(host_of_authority(&value)) {
                return Err(Refusal {
                    header: "host",
                    value: value.into_owned(),
                });
            }
        }
        if let Some(o) = origin {
            let value = String::from_utf8_lossy(o);
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

    /// Checks every `Host` and `Origin` header line of a request. A request may carry
    /// a header twice (no browser sends two `Host` lines, but a raw client can): every
    /// value must pass, not only the first, which is all a `get` of the header sees.
    pub fn check_all<'a>(
        &self,
        hosts: impl IntoIterator<Item = &'a [u8]>,
        origins: impl IntoIterator<Item = &'a [u8]>,
    ) -> Result<(), Refusal> {
        for host in hosts {
            self.check(Some(host), None)?;
        }
        for origin in origins {
            self.check(None, Some(origin))?;
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
pub fn is_loopback_name(host: &str) -> bool {
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

    fn ok(g: &LoopbackGuard, host: Option<&str>, origin: Option<&str>) -> bool {
        g.check(host.map(str::as_bytes), origin.map(str::as_bytes))
            .is_ok()
    }

    #[test]
    fn loopback_names_pass_and_others_are_refused() {
        let g = LoopbackGuard::default();
        for host in [
            "127.0.0.1:3000",
            "localhost",
            "LOCALHOST:1",
            "[::1]:80",
            "127.9.9.9",
            "a.localhost:5",
        ] {
            assert!(ok(&g, Some(host), None), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:3000",
            "192.168.1.2:80",
            "[::2]",
            "127.0.0.1.evil.example",
        ] {
            assert!(!ok(&g, Some(host), None), "{host}");
        }
        assert!(ok(&g, Some("localhost:1"), Some("http://localhost:1")));
        let refused = g
            .check(Some(b"localhost:1"), Some(b"http://evil.example"))
            .unwrap_err();
        assert_eq!(refused.header, "origin");
        assert!(!ok(&g, Some("localhost:1"), Some("null")));
        assert!(ok(&g, None, None));
        let allowed = LoopbackGuard::new(["mybox.lan".to_owned()]);
        assert!(ok(
            &allowed,
            Some("mybox.lan:8080"),
            Some("https://MYBOX.lan")
        ));
    }

    #[test]
    fn a_foreign_value_in_a_repeated_header_is_refused() {
        let g = LoopbackGuard::default();
        let local: &[u8] = b"localhost:1";
        let evil: &[u8] = b"evil.example";
        assert!(g.check_all([local, local], []).is_ok());
        assert_eq!(g.check_all([local, evil], []).unwrap_err().header, "host");
        let origins: [&[u8]; 2] = [b"http://localhost:1", b"http://evil.example"];
        assert_eq!(g.check_all([local], origins).unwrap_err().header, "origin");
    }

    #[test]
    fn connection_keys_are_not_sessions() {
        assert!(is_connection_key("reel:conn-12"));
        assert!(!is_connection_key("4c5ca01d-53c0-497b-8cea-7dcf6a6fafdb"));
    }
}
