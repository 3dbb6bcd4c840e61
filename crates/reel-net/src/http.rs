//! HTTP as every side of reel speaks it (the recording proxies, the tape server, verify,
//! the LLM proxy, the OTLP sender, the viewer): an upstream's URL ([`UpstreamUrl`]), the
//! hop-by-hop headers a proxy drops, the worker threads of a listener, percent-decoding,
//! environment references in header values, and the loopback guard of reel's own
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

/// A `--url` that is not an absolute `http://` or `https://` URL reel can use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--url {url}: {reason}; give an absolute http:// or https:// URL, e.g. http://127.0.0.1:3001/mcp"
)]
pub struct InvalidUrl {
    /// The URL as given.
    pub url: String,
    /// What is wrong with it.
    pub reason: String,
}

/// An upstream's URL (an MCP server's `--url`, a model API's `--upstream`, a collector's
/// `--endpoint`), parsed by the `http` crate's URI grammar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamUrl {
    /// The URL as given.
    pub url: String,
    /// `https`.
    pub https: bool,
    /// Host name or address (IPv6 without brackets).
    pub host: String,
    /// Port (the scheme's default when the URL has none).
    pub port: u16,
    /// The URL had an explicit port.
    pub explicit_port: bool,
    /// The URL's authority as written: the `Host` header value for the server.
    pub authority: String,
    /// Path and query of the URL (the MCP endpoint), `/` at least.
    pub path: String,
}

impl UpstreamUrl {
    /// Parses an absolute `http(s)://host[:port][/path][?query]` URL without user info
    /// (credentials belong in the client's `Authorization` header, not in a trace).
    pub fn parse(url: &str) -> Result<UpstreamUrl, InvalidUrl> {
        let invalid = |reason: &str| InvalidUrl {
            url: url.to_owned(),
            reason: reason.to_owned(),
        };
        let uri: ::http::Uri = url.parse().map_err(|e| invalid(&format!("{e}")))?;
        let https = match uri.scheme_str() {
            Some(s) if s.eq_ignore_ascii_case("http") => false,
            Some(s) if s.eq_ignore_ascii_case("https") => true,
            Some(s) => return Err(invalid(&format!("scheme {s} is not http or https"))),
            None => return Err(invalid("it has no scheme")),
        };
        let authority = uri.authority().ok_or_else(|| invalid("it has no host"))?;
        if authority.as_str().contains('@') {
            return Err(invalid(
                "user info in the URL is not supported (let the client send its Authorization header)",
            ));
        }
        // The `http` crate takes the host to be what comes before the first `:` unless
        // it starts with `[`, so `127.0.0.1[::0]:80` has host `127.0.0.1[`; a bracket
        // is only allowed around a whole IPv6 address, or the host reel connects to is
        // not the one the authority (the `Host` header) names.
        let raw_host = authority.host();
        let host = match raw_host.strip_prefix('[') {
            Some(inner) => match inner.strip_suffix(']') {
                Some(v6) if v6.parse::<std::net::Ipv6Addr>().is_ok() => v6,
                _ => {
                    return Err(invalid(&format!(
                        "its host {raw_host} is not an IPv6 address"
                    )));
                }
            },
            None if raw_host.contains(['[', ']']) => {
                return Err(invalid(&format!(
                    "its host {raw_host} has a bracket (only an IPv6 address goes in brackets)"
                )));
            }
            None => raw_host,
        }
        .to_owned();
        // And after the host only a port may follow (`127.0.0.1::[]:80` has host
        // `127.0.0.1` to the `http` crate, and the rest would still go out as `Host`).
        let after_host = authority.as_str().get(raw_host.len()..).unwrap_or("");
        let port_ok = after_host
            .strip_prefix(':')
            .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()));
        if !after_host.is_empty() && !port_ok {
            return Err(invalid(&format!(
                "its authority {authority} is not host[:port]"
            )));
        }
        if host.is_empty() {
            return Err(invalid("it has no host"));
        }
        let port = match after_host.strip_prefix(':') {
            None | Some("") => {
                if https {
                    443
                } else {
                    80
                }
            }
            Some(digits) => match digits.parse::<u16>() {
                Ok(p) if p > 0 => p,
                _ => {
                    return Err(invalid(&format!(
                        "its port {digits} is not one from 1 to 65535"
                    )));
                }
            },
        };
        if uri.path().is_empty() && uri.query().is_none() && url.ends_with('?') {
            return Err(invalid("it has an empty query"));
        }
        Ok(UpstreamUrl {
            url: url.to_owned(),
            https,
            host,
            port,
            explicit_port: authority.port_u16().is_some(),
            authority: authority.as_str().to_owned(),
            path: uri
                .path_and_query()
                .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned()),
        })
    }

    /// `host:port` to connect to (IPv6 hosts in brackets), the port always written.
    pub fn host_port(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// Hop-by-hop headers, besides those `Connection` names.
pub const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "proxy-authenticate",
    "proxy-authorization",
];

/// Removes the hop-by-hop headers (RFC 9110 §7.6.1: `Connection` and every header it
/// names, and [`HOP_BY_HOP`]) in place: what a proxy must not pass on.
pub fn strip_hop_by_hop(headers: &mut ::http::HeaderMap) {
    let named: Vec<::http::HeaderName> = headers
        .get_all(::http::header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|n| ::http::HeaderName::from_bytes(n.trim().as_bytes()).ok())
        .collect();
    for n in named {
        headers.remove(n);
    }
    for n in HOP_BY_HOP {
        headers.remove(n);
    }
}

/// Worker threads of one of reel's HTTP listeners: `configured`, or for 0 as many as
/// the machine has cores, at most 4 (the proxy and the tape server use the same rule).
pub fn worker_threads(configured: usize) -> usize {
    match configured {
        0 => std::thread::available_parallelism().map_or(2, |n| n.get().min(4)),
        n => n,
    }
}

/// Percent-decodes `raw` (`%XX` to its byte; `+` stays `+`): the one decoder of the
/// viewer's paths and of OpenTelemetry's header variables. Errs with the offset of a `%`
/// that is not followed by two hex digits.
pub fn percent_decode(raw: &str) -> Result<Vec<u8>, usize> {
    let b = raw.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = |k: usize| b.get(k).and_then(|&h| (h as char).to_digit(16));
            let (Some(hi), Some(lo)) = (hex(i + 1), hex(i + 2)) else {
                return Err(i);
            };
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(out)
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

/// The host of `host[:port]` / `[v6][:port]`, without brackets. What follows the last
/// `:` is a port only when it is digits: `localhost:1@evil.example` is no loopback name.
fn host_of_authority(authority: &str) -> &str {
    let a = authority.trim();
    if let Some(rest) = a.strip_prefix('[') {
        return match rest.split_once(']') {
            Some((host, "")) => host,
            Some((host, port)) if is_port(port.strip_prefix(':').unwrap_or("x")) => host,
            _ => a,
        };
    }
    match a.rsplit_once(':') {
        Some((h, port)) if is_port(port) => h,
        _ => a,
    }
}

/// `digits`, as a port is written (empty allowed: `host:` is the default port).
fn is_port(digits: &str) -> bool {
    digits.bytes().all(|b| b.is_ascii_digit())
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

/// A `--header` value with `$NAME` and `${NAME}` replaced by the environment's values
/// (`$$` is a `$`), looked up with `var`; the error names a variable that is not set.
/// The value reaches the server only: it is never printed or written to a trace.
pub fn expand_env(value: &str, var: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        rest = &rest[i + 1..];
        if let Some(r) = rest.strip_prefix('$') {
            out.push('$');
            rest = r;
            continue;
        }
        let (name, after) = match rest.strip_prefix('{') {
            Some(r) => {
                let end = r.find('}').ok_or("an unclosed ${ in a --header value")?;
                (&r[..end], &r[end + 1..])
            }
            None => {
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                (&rest[..end], &rest[end..])
            }
        };
        if name.is_empty() {
            out.push('$');
            continue;
        }
        let v = var(name).ok_or_else(|| {
            format!("--header names ${name}, which is not set in the environment")
        })?;
        out.push_str(&v);
        rest = after;
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::expand_env;

    #[test]
    fn header_values_take_the_environment() {
        let env = |n: &str| (n == "MCP_TOKEN").then(|| "s3cr3t".to_owned());
        assert_eq!(
            expand_env("Bearer $MCP_TOKEN", env).unwrap(),
            "Bearer s3cr3t"
        );
        assert_eq!(
            expand_env("Bearer ${MCP_TOKEN}!", env).unwrap(),
            "Bearer s3cr3t!"
        );
        assert_eq!(expand_env("a$$b $ c", env).unwrap(), "a$b $ c");
        assert!(
            expand_env("$MISSING", env)
                .unwrap_err()
                .contains("$MISSING")
        );
        assert!(expand_env("${MCP_TOKEN", env).is_err());
    }
    use super::*;

    #[test]
    fn a_port_is_digits_so_a_userinfo_trick_is_no_loopback_name() {
        let g = LoopbackGuard::new([]);
        for ok in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:1",
            "[::1]:9",
            "[::1]",
            "localhost:",
        ] {
            assert!(g.check(Some(ok.as_bytes()), None).is_ok(), "{ok}");
        }
        for bad in [
            "localhost:1@evil.example",
            "127.0.0.1:x",
            "[::1]evil",
            "[::1]:8@x",
            "evil.example:80",
        ] {
            assert!(g.check(Some(bad.as_bytes()), None).is_err(), "{bad}");
        }
        assert!(
            g.check(None, Some(b"http://localhost:1@evil.example"))
                .is_err()
        );
    }

    #[test]
    fn urls_parse_or_say_what_is_wrong() {
        let u = UpstreamUrl::parse("http://127.0.0.1:3001/mcp").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("127.0.0.1", 3001, "/mcp")
        );
        let u = UpstreamUrl::parse("https://Example.com/a/b?x=1").unwrap();
        assert_eq!((u.port, u.https, u.path.as_str()), (443, true, "/a/b?x=1"));
        assert_eq!(u.host_port(), "Example.com:443");
        let u = UpstreamUrl::parse("http://[::1]:8080").unwrap();
        assert_eq!((u.host.as_str(), u.path.as_str()), ("::1", "/"));
        assert_eq!(u.host_port(), "[::1]:8080");
        for bad in [
            "ftp://h/x",
            "/mcp",
            "http://user:pw@h/mcp",
            "http://",
            "not a url",
        ] {
            let e = UpstreamUrl::parse(bad).unwrap_err();
            assert!(e.to_string().starts_with(&format!("--url {bad}: ")), "{e}");
        }
    }

    #[test]
    fn a_url_whose_host_has_a_stray_bracket_is_refused() {
        // Found by fuzzing (fuzz/regressions/http_guard): the host was taken as
        // `127.0.0.1` (reel would connect there) while the authority sent as `Host`
        // was `127.0.0.1[::0]:8443`, which reel's own loopback guard refuses.
        for bad in [
            "http://127.0.0.1[::0]:8443/27",
            "http://a]:80/",
            "http://[::1/",
            "http://[not-v6]:80/",
            "http://127.0.10.0::[]:8443/2?",
            "http://127.0.0.1:80:80/",
        ] {
            let e = UpstreamUrl::parse(bad).unwrap_err();
            assert!(e.to_string().starts_with(&format!("--url {bad}: ")), "{e}");
        }
        let u = UpstreamUrl::parse("http://[::1]/mcp").unwrap();
        assert_eq!((u.host.as_str(), u.authority.as_str()), ("::1", "[::1]"));
    }

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
    fn a_port_beyond_65535_or_zero_is_refused_not_turned_into_80() {
        for url in [
            "http://127.0.0.1:99999/mcp",
            "http://127.0.0.1:0/mcp",
            "https://h:65536/",
        ] {
            let e = UpstreamUrl::parse(url).unwrap_err();
            assert!(
                e.reason.contains("is not one from 1 to 65535"),
                "{url}: {e}"
            );
        }
        assert_eq!(UpstreamUrl::parse("http://h:65535/").unwrap().port, 65535);
        assert_eq!(UpstreamUrl::parse("https://h/").unwrap().port, 443);
    }
}
