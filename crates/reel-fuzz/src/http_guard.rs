//! What the HTTP side reads from outside before anything else: the `Host` and `Origin`
//! headers the loopback guard judges (`reel_net::http::LoopbackGuard`, DNS-rebinding
//! protection on every listener) and the `--url` parser (`UpstreamUrl::parse`).
//!
//! The input is lines: a URL, the extra allowed names (comma-separated), then header
//! values, `Host` and `Origin` in turn (any bytes, as a client may send them).
//!
//! Asserts: `check_all` refuses exactly when one of the values alone is refused, naming
//! that header and value; a refusal quotes the value as sent; an allowed name is
//! allowed whatever its case; and a URL that parses has a host, a path, and — when its
//! host is a loopback name — is accepted as its own `Host` and `Origin`.

use reel_net::http::{LoopbackGuard, UpstreamUrl, is_loopback_name};

/// The target.
pub fn run(data: &[u8]) {
    let mut lines = data.split(|&b| b == b'\n');
    let url = String::from_utf8_lossy(lines.next().unwrap_or_default());
    let allowed: Vec<String> = String::from_utf8_lossy(lines.next().unwrap_or_default())
        .split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    let guard = LoopbackGuard::new(allowed.clone());
    let values: Vec<&[u8]> = lines.collect();
    let hosts: Vec<&[u8]> = values.iter().step_by(2).copied().collect();
    let origins: Vec<&[u8]> = values.iter().skip(1).step_by(2).copied().collect();

    let first_refusal = hosts
        .iter()
        .map(|h| guard.check(Some(h), None))
        .chain(origins.iter().map(|o| guard.check(None, Some(o))))
        .find_map(Result::err);
    assert_eq!(
        guard.check_all(hosts.iter().copied(), origins.iter().copied()),
        first_refusal.map_or(Ok(()), Err)
    );
    for h in &hosts {
        if let Err(r) = guard.check(Some(h), None) {
            assert_eq!(r.header, "host");
            assert_eq!(r.value, String::from_utf8_lossy(h));
            let _ = r.to_string();
        }
    }
    for name in &allowed {
        let plain = name.trim_matches(['[', ']']);
        if plain.contains(':') || plain.trim() != plain || plain.is_empty() {
            continue;
        }
        let upper = plain.to_ascii_uppercase();
        assert!(
            guard.check(Some(upper.as_bytes()), None).is_ok(),
            "allowed name {name:?} refused as {upper:?}"
        );
    }

    if let Ok(u) = UpstreamUrl::parse(&url) {
        assert!(!u.host.is_empty(), "no host: {u:?}");
        assert!(!u.path.is_empty(), "no path: {u:?}");
        let _ = u.host_port();
        if is_loopback_name(&u.host.to_ascii_lowercase()) {
            let open = LoopbackGuard::new([]);
            assert!(
                open.check(Some(u.authority.as_bytes()), None).is_ok(),
                "{u:?} refused as its own Host"
            );
            let origin = format!("http://{}", u.authority);
            assert!(
                open.check(None, Some(origin.as_bytes())).is_ok(),
                "{u:?} refused as its own Origin"
            );
        }
    }
}
