//! Where a request goes: the provider's API by its path (Anthropic's or OpenAI's
//! public endpoint), one `--upstream` for everything, or a `--map PREFIX=URL` for the
//! paths under a prefix (the prefix is stripped).
//!
//! A request path is joined to the upstream URL's path (`--upstream
//! https://openrouter.ai/api` sends `/v1/chat/completions` to
//! `https://openrouter.ai/api/v1/chat/completions`); when the URL's path already ends
//! in `/v1` and the request's starts with it (`--upstream http://localhost:8000/v1`,
//! the form vLLM and Ollama document), the `/v1` is not doubled. A known endpoint sent
//! without its `/v1` (`/messages`: the Vercel AI SDK's base URL includes the version)
//! goes to the provider's own path, and is named so in the trace; under a `--map` the
//! path goes on as the client sent it (the map's URL may be a gateway with paths of its
//! own). A path reel does not know is read by its request body's shape
//! ([`Route::read_body_shape`]).

use reel_net::http::UpstreamUrl;

use crate::api::{Endpoint, Provider};
use reel_trace::llm::canonical_path;

/// Anthropic's public API.
pub const ANTHROPIC: &str = "https://api.anthropic.com";
/// OpenAI's public API.
pub const OPENAI: &str = "https://api.openai.com";

/// A bad `--upstream` or `--map`.
#[derive(Debug, thiserror::Error)]
#[error("{flag} {value}: {reason}")]
pub struct RouteError {
    /// The flag.
    pub flag: &'static str,
    /// Its value.
    pub value: String,
    /// What is wrong.
    pub reason: String,
}

/// The routing table.
#[derive(Debug, Clone)]
pub struct Routes {
    anthropic: UpstreamUrl,
    openai: UpstreamUrl,
    /// `--upstream`: everything not mapped goes here.
    all: Option<UpstreamUrl>,
    /// `--map`, longest prefix first.
    maps: Vec<(String, UpstreamUrl)>,
}

/// Where one request goes.
#[derive(Debug, Clone)]
pub struct Route<'r> {
    /// The upstream server.
    pub upstream: &'r UpstreamUrl,
    /// Path and query to request upstream.
    pub upstream_path: String,
    /// The provider path, query removed and map prefix stripped (the trace's
    /// `endpoint`).
    pub endpoint: String,
    /// What the endpoint is.
    pub kind: Endpoint,
    /// The provider whose format it speaks.
    pub provider: Provider,
}

impl Route<'_> {
    /// Reads the kind of an exchange whose path reel does not know from its request
    /// body ([`Endpoint::of_body`]), so a generation posted to a gateway's own path gets
    /// its turns; the recorder and replay decide with this one rule.
    pub fn read_body_shape(&mut self, body: &[u8], anthropic_header: bool) {
        if self.kind == Endpoint::Other {
            if let Some(read) = Endpoint::of_body(body, anthropic_header) {
                (self.kind, self.provider) = read;
            }
        }
    }

    /// The upstream URL of the request with its query removed (the trace's scrubbed
    /// `url`: a query can carry a key).
    pub fn scrubbed_url(&self) -> String {
        let scheme = if self.upstream.https { "https" } else { "http" };
        let path = self.upstream_path.split('?').next().unwrap_or("");
        format!("{scheme}://{}{path}", self.upstream.authority)
    }
}

fn parse(flag: &'static str, url: &str) -> Result<UpstreamUrl, RouteError> {
    UpstreamUrl::parse(url).map_err(|e| RouteError {
        flag,
        value: url.to_owned(),
        reason: e.reason,
    })
}

impl Routes {
    /// The table: `upstream` for everything (else each provider's public API), and the
    /// `PREFIX=URL` maps.
    pub fn new(upstream: Option<&str>, maps: &[String]) -> Result<Routes, RouteError> {
        let mut table = Vec::new();
        for m in maps {
            let bad = |reason: &str| RouteError {
                flag: "--map",
                value: m.clone(),
                reason: reason.to_owned(),
            };
            let (prefix, url) = m.split_once('=').ok_or_else(|| bad("not PREFIX=URL"))?;
            let prefix = prefix.trim_end_matches('/');
            if !prefix.starts_with('/') || prefix.len() < 2 {
                return Err(bad("the prefix must be a path such as /openrouter"));
            }
            table.push((prefix.to_owned(), parse("--map", url)?));
        }
        table.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
        Ok(Routes {
            anthropic: parse("--upstream", ANTHROPIC)?,
            openai: parse("--upstream", OPENAI)?,
            all: upstream.map(|u| parse("--upstream", u)).transpose()?,
            maps: table,
        })
    }

    /// The upstreams in use, for the trace's `meta.upstream`.
    pub fn describe(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .maps
            .iter()
            .map(|(p, u)| format!("{p}={}", u.url))
            .collect();
        match &self.all {
            Some(u) => out.push(u.url.clone()),
            None => {
                out.push(ANTHROPIC.to_owned());
                out.push(OPENAI.to_owned());
            }
        }
        out
    }

    /// Routes `path_and_query`; `anthropic_header` tells whether the request carries
    /// `anthropic-version`.
    pub fn route(&self, path_and_query: &str, anthropic_header: bool) -> Route<'_> {
        let (path, query) = match path_and_query.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (path_and_query, None),
        };
        let mapped = self.maps.iter().find_map(|(prefix, url)| {
            let rest = path.strip_prefix(prefix.as_str())?;
            (rest.is_empty() || rest.starts_with('/')).then_some((rest, url))
        });
        // The upstream gets the provider's own path (`/messages` → `/v1/messages`),
        // except under a map, whose URL may name a gateway with paths of its own.
        let (sent, upstream) = match mapped {
            Some((rest, url)) => (if rest.is_empty() { "/" } else { rest }, url),
            None => {
                let (_, provider) = Endpoint::of(path, anthropic_header);
                let url = self.all.as_ref().unwrap_or(match provider {
                    Provider::Anthropic => &self.anthropic,
                    _ => &self.openai,
                });
                (path, url)
            }
        };
        let endpoint = canonical_path(sent);
        let sent = if mapped.is_some() { sent } else { &endpoint };
        let (kind, provider) = Endpoint::of(&endpoint, anthropic_header);
        let base = upstream
            .path
            .split('?')
            .next()
            .unwrap_or("")
            .trim_end_matches('/');
        let joined = match sent.strip_prefix("/v1") {
            Some(rest) if base.ends_with("/v1") && (rest.is_empty() || rest.starts_with('/')) => {
                format!("{base}{rest}")
            }
            _ => format!("{base}{sent}"),
        };
        let upstream_path = match query {
            Some(q) => format!("{joined}?{q}"),
            None => joined,
        };
        Route {
            upstream,
            upstream_path,
            endpoint: endpoint.into_owned(),
            kind,
            provider,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn providers_are_routed_by_path() {
        let r = Routes::new(None, &[]).unwrap();
        let a = r.route("/v1/messages?beta=true", false);
        assert_eq!(a.upstream.host, "api.anthropic.com");
        assert_eq!(a.upstream_path, "/v1/messages?beta=true");
        assert_eq!(a.endpoint, "/v1/messages");
        assert_eq!(a.scrubbed_url(), "https://api.anthropic.com/v1/messages");
        let o = r.route("/v1/chat/completions", false);
        assert_eq!(o.upstream.host, "api.openai.com");
        assert_eq!(
            r.route("/v1/models", true).upstream.host,
            "api.anthropic.com"
        );
    }

    #[test]
    fn one_upstream_takes_everything_without_doubling_v1() {
        let r = Routes::new(Some("http://127.0.0.1:8000/v1"), &[]).unwrap();
        let o = r.route("/v1/chat/completions", false);
        assert_eq!(o.upstream.port, 8000);
        assert_eq!(o.upstream_path, "/v1/chat/completions");
        let r = Routes::new(Some("https://openrouter.ai/api"), &[]).unwrap();
        assert_eq!(
            r.route("/v1/chat/completions", false).upstream_path,
            "/api/v1/chat/completions"
        );
    }

    #[test]
    fn a_path_without_its_version_goes_to_the_providers_endpoint() {
        let r = Routes::new(None, &[]).unwrap();
        let a = r.route("/messages", true);
        assert_eq!(a.upstream.host, "api.anthropic.com");
        assert_eq!(a.upstream_path, "/v1/messages");
        assert_eq!(a.endpoint, "/v1/messages");
        assert_eq!(a.kind, Endpoint::Messages);
        let o = r.route("/chat/completions?x=1", false);
        assert_eq!(o.upstream.host, "api.openai.com");
        assert_eq!(o.upstream_path, "/v1/chat/completions?x=1");
        let r = Routes::new(Some("http://127.0.0.1:8000/v1"), &[]).unwrap();
        assert_eq!(r.route("/responses", false).upstream_path, "/v1/responses");
        let r = Routes::new(Some("http://127.0.0.1:8000"), &[]).unwrap();
        assert_eq!(r.route("/messages", true).upstream_path, "/v1/messages");
        // Under a map the path goes on as sent; the endpoint is still the provider's.
        let r = Routes::new(
            None,
            &["/gw=https://gw.example/openai/deployments/d".into()],
        )
        .unwrap();
        let m = r.route("/gw/chat/completions", false);
        assert_eq!(m.upstream_path, "/openai/deployments/d/chat/completions");
        assert_eq!(m.endpoint, "/v1/chat/completions");
        assert_eq!(m.kind, Endpoint::ChatCompletions);
    }

    #[test]
    fn a_map_strips_its_prefix_from_the_endpoint() {
        let r = Routes::new(None, &["/openrouter=https://openrouter.ai/api".into()]).unwrap();
        let m = r.route("/openrouter/v1/chat/completions", false);
        assert_eq!(m.endpoint, "/v1/chat/completions");
        assert_eq!(m.kind, Endpoint::ChatCompletions);
        assert_eq!(m.upstream.host, "openrouter.ai");
        assert_eq!(m.upstream_path, "/api/v1/chat/completions");
        assert!(Routes::new(None, &["nope".into()]).is_err());
        assert!(Routes::new(None, &["x=http://a".into()]).is_err());
    }
}
