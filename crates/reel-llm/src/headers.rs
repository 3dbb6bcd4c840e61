//! Which headers of an LLM exchange the trace keeps (an allowlist: keys, tokens,
//! cookies and organisation ids never reach it), and which a replay sends back.

use http::HeaderMap;
use serde_json::{Map, Value};

/// Request headers kept, besides `x-stainless-*` (the SDK's name and version).
const REQUEST: &[&str] = &[
    "content-type",
    "accept",
    "accept-encoding",
    "user-agent",
    "anthropic-version",
    "anthropic-beta",
    "openai-beta",
];

/// Response headers kept, besides the rate-limit families (`anthropic-ratelimit-*`,
/// `x-ratelimit-*`).
const RESPONSE: &[&str] = &[
    "content-type",
    "content-encoding",
    "request-id",
    "x-request-id",
    "retry-after",
    "retry-after-ms",
    "openai-processing-ms",
    "openai-version",
];

/// Never kept, whatever a family rule says.
fn secret(name: &str) -> bool {
    matches!(
        name,
        "authorization"
            | "x-api-key"
            | "api-key"
            | "cookie"
            | "set-cookie"
            | "proxy-authorization"
            | "openai-organization"
            | "openai-project"
            | "x-stainless-timeout"
    ) || name.contains("organization")
        || name.contains("token")
        || name.contains("secret")
}

fn keep(name: &str, request: bool) -> bool {
    if secret(name) {
        return false;
    }
    if request {
        REQUEST.contains(&name) || name.starts_with("x-stainless-")
    } else {
        RESPONSE.contains(&name)
            || name.starts_with("anthropic-ratelimit-")
            || name.starts_with("x-ratelimit-")
    }
}

/// The kept headers, as a JSON object (repeated headers joined with `, `).
pub fn capture(headers: &HeaderMap, request: bool) -> Map<String, Value> {
    let mut out = Map::new();
    for (name, value) in headers {
        let n = name.as_str();
        if !keep(n, request) {
            continue;
        }
        let v = String::from_utf8_lossy(value.as_bytes()).into_owned();
        match out.get_mut(n) {
            Some(Value::String(prior)) => {
                prior.push_str(", ");
                prior.push_str(&v);
            }
            _ => {
                out.insert(n.to_owned(), Value::String(v));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_never_reach_the_trace() {
        let mut h = HeaderMap::new();
        for (k, v) in [
            ("authorization", "Bearer sk-ant-x"),
            ("x-api-key", "sk-ant-x"),
            ("cookie", "a=b"),
            ("openai-organization", "org-1"),
            ("anthropic-version", "2023-06-01"),
            ("x-stainless-lang", "python"),
        ] {
            h.insert(http::HeaderName::from_static(k), v.parse().unwrap());
        }
        let kept = capture(&h, true);
        let names: Vec<&String> = kept.keys().collect();
        assert_eq!(names, ["anthropic-version", "x-stainless-lang"]);
        let mut r = HeaderMap::new();
        r.insert(
            "anthropic-ratelimit-requests-remaining",
            "9".parse().unwrap(),
        );
        r.insert("set-cookie", "x".parse().unwrap());
        assert_eq!(capture(&r, false).len(), 1);
    }
}
