//! What every page of the MMSP routes shares: the response, the chrome around a page
//! (head, stylesheet, breadcrumb), escaping, the URL of a path inside the cache, and how
//! numbers, sizes, times and durations are written.

use std::fmt::Write as _;
use std::path::{Component, Path};

use reel_trace::Timestamp;

/// One response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The HTTP status.
    pub status: u16,
    /// `text/html; charset=utf-8` or `text/plain; charset=utf-8`.
    pub content_type: &'static str,
    /// The body.
    pub body: String,
}

pub(super) const HTML: &str = "text/html; charset=utf-8";
pub(super) const PLAIN: &str = "text/plain; charset=utf-8";

impl Page {
    pub(super) fn plain(status: u16, body: impl Into<String>) -> Page {
        Page {
            status,
            content_type: PLAIN,
            body: body.into(),
        }
    }

    pub(super) fn html(body: String) -> Page {
        Page {
            status: 200,
            content_type: HTML,
            body,
        }
    }
}

/// The names from `root` down to the canonical `path` inside it.
pub(super) fn segments_of(root: &Path, path: &Path) -> Vec<String> {
    path.strip_prefix(root)
        .map(|rel| {
            rel.components()
                .filter_map(|c| match c {
                    Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The URL path of `segments`, each percent-encoded: `/` for the root.
pub(super) fn url_of(segments: &[String]) -> String {
    let mut url = String::new();
    for s in segments {
        url.push('/');
        url.push_str(&percent_encode(s));
    }
    if url.is_empty() {
        url.push('/');
    }
    url
}

/// Percent-encodes every byte but the unreserved ones (`A-Z a-z 0-9 - . _ ~`), as
/// JavaScript's `encodeURIComponent` does, so the result is one path segment or one
/// fragment value.
pub(super) fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// HTML-escapes `s` for text and for quoted attribute values alike
/// ([`reel_report::display::markup`]).
pub fn escape(s: &str) -> String {
    reel_report::display::markup(s, true)
}

/// HTML-escapes `s` for element content only: `& < >`. Quotes are inert between tags, and
/// a tool call reads `get_weather(city="Paris")` as MMSP's viewer shows it; never use this
/// for an attribute value.
pub(super) fn escape_text(s: &str) -> String {
    reel_report::display::markup(s, false)
}

/// The page around `main`: head, stylesheet, breadcrumb.
pub(super) fn chrome(title: &str, segments: &[String], main: &str) -> String {
    let mut page = String::with_capacity(main.len() + 1024);
    let _ = write!(
        page,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n\
         <link rel=\"stylesheet\" href=\"/_reel/assets/mmsp.css\">\n</head>\n<body>\n\
         <header class=\"topbar\"><span class=\"brand\">MMSP Tracer</span>\
         <nav class=\"crumbs\"><a href=\"/\">cache</a>",
        escape(title)
    );
    for i in 0..segments.len() {
        let _ = write!(
            page,
            "<span class=\"sep\">/</span><a href=\"{}\">{}</a>",
            escape(&url_of(&segments[..=i])),
            escape(&segments[i])
        );
    }
    page.push_str("</nav>");
    if !segments.is_empty() {
        let _ = write!(
            page,
            "<a class=\"button up\" href=\"{}\">Up</a>",
            escape(&url_of(&segments[..segments.len() - 1]))
        );
    }
    page.push_str("</header>\n");
    page.push_str(main);
    page.push_str("\n</body>\n</html>\n");
    page
}

/// `N B`, `x.x KB` or `x.x MB`.
pub(super) fn size_text(n: u64) -> String {
    const K: f64 = 1024.0;
    if n < 1024 {
        format!("{n} B")
    } else if (n as f64) < K * K {
        format!("{:.1} KB", n as f64 / K)
    } else {
        format!("{:.1} MB", n as f64 / (K * K))
    }
}

/// Unix milliseconds as `%Y-%m-%d %H:%M:%S UTC`.
pub(super) fn utc(ms: i64) -> String {
    let iso = Timestamp(ms).to_iso();
    let s = iso.as_str();
    format!("{} {} UTC", &s[..10], &s[11..19])
}

/// `n` with a thin thousands separator: `12,345`.
pub(super) fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A duration in milliseconds, written without a decimal point: `+850 ms`, `+12,500 ms`,
/// `+3 min 20 s`.
pub(super) fn delta_text(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "+" };
    let abs = ms.unsigned_abs();
    if abs < 60_000 {
        format!("{sign}{} ms", grouped(abs))
    } else {
        format!("{sign}{} min {} s", grouped(abs / 60_000), abs / 1000 % 60)
    }
}

pub(super) fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_formatters() {
        assert_eq!(
            escape("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(1234567), "1,234,567");
        assert_eq!(delta_text(600), "+600 ms");
        assert_eq!(delta_text(200_600), "+3 min 20 s");
        assert_eq!(size_text(1023), "1023 B");
        assert_eq!(percent_encode("a b/ü"), "a%20b%2F%C3%BC");
        assert_eq!(
            escape_text("<a href=\"x\">&'"),
            "&lt;a href=\"x\"&gt;&amp;'"
        );
    }
}
