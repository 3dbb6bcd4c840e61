//! Header work of a reverse proxy: what crosses a hop and what does not, what the trace
//! keeps, and the rewriting of URLs that point at the upstream so they point at reel.
//!
//! Invariants: a hop-by-hop header (RFC 9110 §7.6.1: `Connection` and every header it
//! names, `Keep-Alive`, `Proxy-Connection`, `TE`, `Trailer`, `Transfer-Encoding`,
//! `Upgrade`, `Proxy-Authenticate`, `Proxy-Authorization`) never crosses reel in either
//! direction; every other header crosses unchanged except `Host` (the upstream's, on the
//! upstream hop only), `Origin` (see [`crate::http`]) and the URL-bearing
//! headers [`URL_HEADERS`] names. The trace keeps only the allowlisted headers.

use hyper::HeaderMap;
use hyper::header::HeaderValue;

use super::note::HeaderList;

/// Request headers the trace keeps (values redacted by the trace writer), plus every
/// `mcp-param-*` header.
pub const REQUEST_ALLOWLIST: [&str; 8] = [
    "content-type",
    "accept",
    "authorization",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "last-event-id",
];

/// Response headers the trace keeps.
pub const RESPONSE_ALLOWLIST: [&str; 6] = [
    "content-type",
    "mcp-session-id",
    "mcp-protocol-version",
    "www-authenticate",
    "location",
    "allow",
];

pub(crate) use reel_net::http::strip_hop_by_hop;

/// The allowlisted headers of a request (`mcp-param-*` included), as received, in the
/// order they came.
pub(crate) fn capture_request(headers: &HeaderMap) -> HeaderList {
    let mut out = Vec::with_capacity(8);
    for (name, value) in headers {
        let n = name.as_str();
        if let Some(known) = REQUEST_ALLOWLIST.iter().find(|a| **a == n) {
            out.push((*known, text(value)));
        } else if n.starts_with("mcp-param-") {
            out.push((intern(n), text(value)));
        }
    }
    out
}

/// The allowlisted headers of a response, as received, in the order they came.
pub(crate) fn capture_response(headers: &HeaderMap) -> HeaderList {
    let mut out = Vec::with_capacity(4);
    for (name, value) in headers {
        let n = name.as_str();
        if let Some(known) = RESPONSE_ALLOWLIST.iter().find(|a| **a == n) {
            out.push((*known, text(value)));
        }
    }
    out
}

fn text(v: &HeaderValue) -> String {
    String::from_utf8_lossy(v.as_bytes()).into_owned()
}

/// `mcp-param-*` names, interned so a header list stays `&'static str` (each distinct
/// name is leaked once: names are few and fixed in practice). Bounded: after
/// [`MAX_INTERNED`] distinct names, further ones are kept as `mcp-param-*`.
fn intern(name: &str) -> &'static str {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut guard = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    let set = guard.get_or_insert_with(HashSet::new);
    if let Some(n) = set.get(name) {
        return n;
    }
    if set.len() >= MAX_INTERNED {
        return "mcp-param-*";
    }
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    set.insert(leaked);
    leaked
}

/// Distinct `mcp-param-*` header names the trace keeps by name.
pub const MAX_INTERNED: usize = 256;

/// Rewrites URLs pointing at the upstream origin to reel's origin: the spellings of one
/// origin, each matched case-insensitively and only as a whole origin (followed by the
/// end, `/`, `?`, `#`, a quote, a comma, `;`, `>`, `)` or white space, so
/// `http://h:30` never matches inside `http://h:3001`).
#[derive(Debug, Clone)]
pub(crate) struct OriginRewriter {
    /// Lower-case spellings of the upstream origin (`https://h` and `https://h:443`).
    upstream: Vec<String>,
}

impl OriginRewriter {
    pub fn new(spellings: Vec<String>) -> Self {
        OriginRewriter {
            upstream: spellings
                .into_iter()
                .map(|s| s.to_ascii_lowercase())
                .collect(),
        }
    }

    /// `text` with every upstream origin replaced by `proxy`; `None` when nothing matched.
    pub fn rewrite(&self, text: &str, proxy: &str) -> Option<String> {
        let lower = text.to_ascii_lowercase();
        let mut hits: Vec<(usize, usize)> = Vec::new();
        for origin in &self.upstream {
            let mut from = 0;
            while let Some(i) = lower[from..].find(origin.as_str()) {
                let start = from + i;
                let end = start + origin.len();
                let boundary = lower[end..].chars().next().is_none_or(|c| {
                    matches!(c, '/' | '?' | '#' | '"' | '\'' | ',' | ';' | '>' | ')')
                        || c.is_whitespace()
                });
                let at_start = start == 0 || !lower.as_bytes()[start - 1].is_ascii_alphanumeric();
                if boundary && at_start && !hits.iter().any(|&(s, e)| start < e && s < end) {
                    hits.push((start, end));
                }
                from = end;
            }
        }
        if hits.is_empty() {
            return None;
        }
        hits.sort_unstable();
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (s, e) in hits {
            out.push_str(&text[at..s]);
            out.push_str(proxy);
            at = e;
        }
        out.push_str(&text[at..]);
        Some(out)
    }

    /// Whether `url` is an absolute URL at the upstream origin; returns the rest
    /// (path, query, fragment) when it is.
    pub fn strip<'a>(&self, url: &'a str) -> Option<&'a str> {
        let lower = url.to_ascii_lowercase();
        for origin in &self.upstream {
            if lower.starts_with(origin.as_str()) {
                let rest = &url[origin.len()..];
                if rest.is_empty() || rest.starts_with(['/', '?', '#']) {
                    return Some(rest);
                }
            }
        }
        None
    }
}

/// The URLs named by `resource_metadata` parameters in a `WWW-Authenticate` value
/// (RFC 9728 §5.1), quoted or not.
pub(crate) fn resource_metadata_urls(value: &str) -> Vec<&str> {
    const KEY: &str = "resource_metadata=";
    let lower = value.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = lower[from..].find(KEY) {
        let start = from + i + KEY.len();
        let rest = &value[start..];
        let url = match rest.strip_prefix('"') {
            Some(q) => q.split('"').next().unwrap_or(""),
            None => rest.split([',', ' ', '\t']).next().unwrap_or(""),
        };
        if !url.is_empty() {
            out.push(url);
        }
        from = start;
    }
    out
}

/// Headers of a response that carry URLs a client follows: rewritten to reel's origin.
pub const URL_HEADERS: [&str; 4] = ["location", "content-location", "link", "www-authenticate"];

/// Rewrites the upstream origin in the URL-bearing response headers.
pub(crate) fn rewrite_response_urls(headers: &mut HeaderMap, rw: &OriginRewriter, proxy: &str) {
    for name in URL_HEADERS {
        let values: Vec<HeaderValue> = headers.get_all(name).iter().cloned().collect();
        if values.is_empty() {
            continue;
        }
        let mut changed = false;
        let new: Vec<HeaderValue> = values
            .into_iter()
            .map(|v| {
                match v
                    .to_str()
                    .ok()
                    .and_then(|s| rw.rewrite(s, proxy))
                    .and_then(|s| HeaderValue::from_str(&s).ok())
                {
                    Some(n) => {
                        changed = true;
                        n
                    }
                    None => v,
                }
            })
            .collect();
        if changed {
            headers.remove(name);
            for v in new {
                headers.append(name, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_by_hop_headers_and_those_connection_names_are_removed() {
        let mut h = HeaderMap::new();
        for (k, v) in [
            ("connection", "keep-alive, X-Secret-Hop"),
            ("keep-alive", "timeout=5"),
            ("x-secret-hop", "1"),
            ("te", "trailers"),
            ("transfer-encoding", "chunked"),
            ("upgrade", "websocket"),
            ("proxy-authorization", "Basic x"),
            ("authorization", "Bearer t"),
            ("mcp-session-id", "s"),
        ] {
            h.append(k, HeaderValue::from_static(v));
        }
        strip_hop_by_hop(&mut h);
        let mut left: Vec<&str> = h.keys().map(|k| k.as_str()).collect();
        left.sort_unstable();
        assert_eq!(left, ["authorization", "mcp-session-id"]);
    }

    #[test]
    fn only_whole_upstream_origins_are_rewritten() {
        let rw = OriginRewriter::new(vec!["http://127.0.0.1:3001".into()]);
        let p = "http://localhost:9";
        assert_eq!(
            rw.rewrite(
                r#"Bearer resource_metadata="http://127.0.0.1:3001/.well-known/oauth-protected-resource/mcp""#,
                p
            )
            .as_deref(),
            Some(r#"Bearer resource_metadata="http://localhost:9/.well-known/oauth-protected-resource/mcp""#)
        );
        assert_eq!(rw.rewrite("http://127.0.0.1:30011/x", p), None);
        assert_eq!(rw.rewrite("xhttp://127.0.0.1:3001/x", p), None);
        assert_eq!(
            rw.rewrite("HTTP://127.0.0.1:3001", p).as_deref(),
            Some("http://localhost:9")
        );
        assert_eq!(
            rw.strip("http://127.0.0.1:3001/message?sessionId=1"),
            Some("/message?sessionId=1")
        );
        assert_eq!(rw.strip("/message"), None);
        assert_eq!(
            resource_metadata_urls(
                r#"Bearer error="invalid_token", Resource_Metadata="http://h/custom/prm", scope="a""#
            ),
            ["http://h/custom/prm"]
        );
        assert_eq!(
            resource_metadata_urls("Bearer resource_metadata=http://h/x, realm=y"),
            ["http://h/x"]
        );
    }
}
