//! MMSP-RFC-0010's viewer routes, served at the root of an MMSP cache directory so the
//! RFC's conformance cases apply as written: `GET /` and `GET /<path>` with
//! `?sort=name|mtime` list a directory, render a `.json` trace round by round, and show
//! any other file as a plain-text transcript.
//!
//! Every request path goes through [`crate::paths`]: decoded once, resolved with symlinks
//! followed, and refused with 403 when it is neither the cache directory nor inside it,
//! compared by path components (MMSP 0.5.6 compares string prefixes and serves a sibling
//! `cache2/`). Listings leave out every entry that resolves outside.
//!
//! Invariants of the pages: everything that comes from the file system or a trace is
//! written through [`escape`], in text and in attributes alike; no page holds a script or
//! a style of its own (the viewer's Content-Security-Policy forbids them), only the link to
//! `/_reel/assets/mmsp.css`; a `src` is only ever a `data:` URL this module checked or
//! built (`data:image/…`, or `data:audio/…` from base64 bytes), so the viewer fetches
//! nothing from outside and no `javascript:` URL reaches an attribute. Times are shown in
//! UTC as `%Y-%m-%d %H:%M:%S UTC`.

use std::fmt::Write as _;
use std::fs;
use std::io::Read as _;
use std::path::{Component, Path};
use std::time::UNIX_EPOCH;

use reel_convert::mmsp::{current_item_type, looks_like};
use reel_convert::parse_time;
use reel_trace::Timestamp;
use serde_json::{Map, Value};

use crate::paths::{self, BadPath, Resolved};

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

const HTML: &str = "text/html; charset=utf-8";
const PLAIN: &str = "text/plain; charset=utf-8";

/// How many directory entries [`is_cache_dir`] looks at, at most.
const SCAN_ENTRIES: usize = 2000;
/// How deep [`is_cache_dir`] looks below the directory.
const SCAN_DEPTH: usize = 4;
/// How much of a file [`is_cache_dir`] reads to tell an MMSP trace.
const SCAN_HEAD: u64 = 64 * 1024;
/// How many values of an embedding a trace page shows.
const EMBEDDING_PREVIEW: usize = 5;

impl Page {
    fn plain(status: u16, body: impl Into<String>) -> Page {
        Page {
            status,
            content_type: PLAIN,
            body: body.into(),
        }
    }

    fn html(body: String) -> Page {
        Page {
            status: 200,
            content_type: HTML,
            body,
        }
    }
}

/// Whether `dir` is an MMSP cache directory: it holds at least one MMSP `*.json` trace
/// (told by [`looks_like`] on the file's first 64 KiB), directly or in subdirectories up
/// to 4 levels down, looking at no more than 2000 entries. A symlink is followed only when
/// it resolves inside `dir`.
pub fn is_cache_dir(dir: &Path) -> bool {
    let Ok(root) = fs::canonicalize(dir) else {
        return false;
    };
    let mut queue = std::collections::VecDeque::from([(root.clone(), 0usize)]);
    let mut seen = 0usize;
    while let Some((here, depth)) = queue.pop_front() {
        let Ok(entries) = fs::read_dir(&here) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > SCAN_ENTRIES {
                return false;
            }
            let Ok(rel) = entry.path().strip_prefix(&root).map(Path::to_path_buf) else {
                continue;
            };
            let Some(rel) = rel.to_str() else { continue };
            let Resolved::Inside(path) = paths::resolve(&root, rel) else {
                continue;
            };
            if path.is_dir() {
                if depth < SCAN_DEPTH && path != here && path != root {
                    queue.push_back((path, depth + 1));
                }
            } else if path.extension().is_some_and(|e| e == "json") && head_is_trace(&path) {
                return true;
            }
        }
    }
    false
}

fn head_is_trace(path: &Path) -> bool {
    let Ok(file) = fs::File::open(path) else {
        return false;
    };
    let mut head = Vec::new();
    file.take(SCAN_HEAD).read_to_end(&mut head).is_ok() && looks_like(&head)
}

/// Answers `GET /<raw_path>?<query>` for the cache directory `root` (canonical).
/// `raw_path` is the request's path without the leading `/`, still percent-encoded;
/// `query` the raw query string.
///
/// Status codes: 400 `Bad request path: …` (plain text) for an undecodable escape or a
/// path that is not UTF-8 once decoded; 403 `Access denied` for a NUL byte (raw or `%00`)
/// and for a path that resolves outside `root`; 404 `Path not found` for one inside that
/// does not exist; 500 `Error reading file: …` / `Error listing directory: …` when the
/// file or directory cannot be read (bad JSON, not UTF-8); otherwise 200 with an HTML page.
pub fn respond(root: &Path, raw_path: &str, query: Option<&str>) -> Page {
    let rel = match paths::decode(raw_path) {
        Ok(rel) => rel,
        Err(BadPath::Nul) => return Page::plain(403, "Access denied"),
        Err(e) => return Page::plain(400, format!("Bad request path: {e}")),
    };
    let path = match paths::resolve(root, &rel) {
        Resolved::Inside(p) => p,
        Resolved::Outside => return Page::plain(403, "Access denied"),
        Resolved::Missing => return Page::plain(404, "Path not found"),
    };
    let segments = segments_of(root, &path);
    if path.is_dir() {
        return listing(root, &path, &segments, Sort::from_query(query));
    }
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) => return Page::plain(500, format!("Error reading file: {e}")),
    };
    if path.extension().is_some_and(|e| e == "json") {
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(doc) => trace_page(&segments, &doc),
            Err(e) => Page::plain(500, format!("Error reading file: {e}")),
        }
    } else {
        match String::from_utf8(bytes) {
            Ok(text) => transcript_page(&segments, &text),
            Err(e) => Page::plain(500, format!("Error reading file: {e}")),
        }
    }
}

/// The names from `root` down to the canonical `path` inside it.
fn segments_of(root: &Path, path: &Path) -> Vec<String> {
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
fn url_of(segments: &[String]) -> String {
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
fn percent_encode(s: &str) -> String {
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
/// ([`reel_trace::display::markup`]).
pub fn escape(s: &str) -> String {
    reel_trace::display::markup(s, true)
}

/// HTML-escapes `s` for element content only: `& < >`. Quotes are inert between tags, and
/// a tool call reads `get_weather(city="Paris")` as MMSP's viewer shows it; never use this
/// for an attribute value.
fn escape_text(s: &str) -> String {
    reel_trace::display::markup(s, false)
}

/// The page around `main`: head, stylesheet, breadcrumb.
fn chrome(title: &str, segments: &[String], main: &str) -> String {
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

/// The order of a listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sort {
    Name,
    Mtime,
}

impl Sort {
    /// `sort=mtime` in the query; anything else (missing, invalid) is by name.
    fn from_query(query: Option<&str>) -> Sort {
        let mtime = query.unwrap_or_default().split('&').any(|pair| {
            pair.split_once('=')
                .is_some_and(|(k, v)| k == "sort" && v == "mtime")
        });
        if mtime { Sort::Mtime } else { Sort::Name }
    }
}

/// One row of a listing.
struct Row {
    name: String,
    /// The URL of what the entry resolves to (a symlink in links to its target).
    href: String,
    dir: bool,
    /// `None` for a dangling symlink whose target would be inside.
    size: Option<u64>,
    mtime: Option<i64>,
}

/// The listing of the directory `path` (canonical, inside `root`, named by `segments`).
///
/// `.DS_Store` and every entry resolving outside `root` (symlinks out, dangling ones
/// included) are left out, and so are names that are not UTF-8 (no request path can name
/// them). A dangling symlink whose target would be inside is listed as a broken link,
/// without size or time, linking to its own name (which answers 404).
fn listing(root: &Path, path: &Path, segments: &[String], sort: Sort) -> Page {
    let entries = match fs::read_dir(path) {
        Ok(e) => e,
        Err(e) => return Page::plain(500, format!("Error listing directory: {e}")),
    };
    let mut rows = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => return Page::plain(500, format!("Error listing directory: {e}")),
        };
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if name == ".DS_Store" {
            continue;
        }
        let mut own = segments.to_vec();
        own.push(name.clone());
        let row = match paths::resolve(root, &own.join("/")) {
            Resolved::Outside => continue,
            Resolved::Missing => Row {
                name,
                href: url_of(&own),
                dir: false,
                size: None,
                mtime: None,
            },
            Resolved::Inside(target) => {
                let Ok(md) = fs::metadata(&target) else {
                    continue;
                };
                let mtime = md
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .map(|d| d.as_millis() as i64);
                Row {
                    name,
                    href: url_of(&segments_of(root, &target)),
                    dir: md.is_dir(),
                    size: (!md.is_dir()).then_some(md.len()),
                    mtime,
                }
            }
        };
        rows.push(row);
    }
    rows.sort_by(|a, b| {
        b.dir.cmp(&a.dir).then_with(|| match sort {
            Sort::Name => a.name.cmp(&b.name),
            Sort::Mtime => b.mtime.cmp(&a.mtime).then_with(|| a.name.cmp(&b.name)),
        })
    });
    let here = url_of(segments);
    let mut main = String::new();
    let _ = write!(
        main,
        "<main class=\"listing\">\n<div class=\"toolbar\"><h1>Traces</h1>\
         <div class=\"segmented\"><a class=\"{}\" href=\"{}?sort=name\">Name</a>\
         <a class=\"{}\" href=\"{}?sort=mtime\">Modified</a></div></div>\n",
        if sort == Sort::Name { "on" } else { "off" },
        escape(&here),
        if sort == Sort::Mtime { "on" } else { "off" },
        escape(&here),
    );
    if rows.is_empty() {
        main.push_str(
            "<p class=\"empty\">No traces here yet. Requests with a <code>trace_id</code> in \
             their config are saved here.</p>\n",
        );
    } else {
        main.push_str(
            "<table class=\"entries\">\n<thead><tr><th>Name</th><th>Modified</th>\
             <th>Size</th></tr></thead>\n<tbody>\n",
        );
        for row in &rows {
            let kind = if row.dir {
                "dir"
            } else if row.size.is_none() {
                "broken"
            } else {
                "file"
            };
            let _ = writeln!(
                main,
                "<tr class=\"{kind}\"><td><a href=\"{}\">{}{}</a></td><td>{}</td><td>{}</td></tr>",
                escape(&row.href),
                escape(&row.name),
                if row.dir { "/" } else { "" },
                row.mtime.map(utc).unwrap_or_default(),
                match (row.dir, row.size) {
                    (true, _) => String::new(),
                    (false, Some(n)) => size_text(n),
                    (false, None) => "broken link".to_owned(),
                },
            );
        }
        main.push_str("</tbody>\n</table>\n");
    }
    main.push_str("</main>");
    Page::html(chrome("Traces - MMSP Tracer", segments, &main))
}

/// `N B`, `x.x KB` or `x.x MB`.
fn size_text(n: u64) -> String {
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
fn utc(ms: i64) -> String {
    let iso = Timestamp(ms).to_iso();
    let s = iso.as_str();
    format!("{} {} UTC", &s[..10], &s[11..19])
}

/// `n` with a thin thousands separator: `12,345`.
fn grouped(n: u64) -> String {
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
fn delta_text(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "+" };
    let abs = ms.unsigned_abs();
    if abs < 60_000 {
        format!("{sign}{} ms", grouped(abs))
    } else {
        format!("{sign}{} min {} s", grouped(abs / 60_000), abs / 1000 % 60)
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A plain-text file: its content in `<pre>`.
fn transcript_page(segments: &[String], text: &str) -> Page {
    let name = segments.last().map(String::as_str).unwrap_or("cache");
    let main = format!(
        "<main class=\"transcript\">\n<h1>{}</h1>\n<p class=\"meta\">Plain-text transcript</p>\n\
         <pre class=\"card\">{}</pre>\n</main>",
        escape(name),
        escape(text)
    );
    Page::html(chrome(&format!("{name} - MMSP Tracer"), segments, &main))
}

/// A `.json` file as a trace, round by round; a JSON document that is not a trace renders
/// as an empty one (its `history` and `config` are read when they have the right shape).
fn trace_page(segments: &[String], doc: &Value) -> Page {
    let name = segments.last().map(String::as_str).unwrap_or("cache");
    let empty = Map::new();
    let history: &[Value] = match doc.get("history") {
        Some(Value::Array(h)) => h,
        _ => &[],
    };
    let config = match doc.get("config") {
        Some(Value::Object(c)) => c,
        _ => &empty,
    };
    let n = history.len();
    let rounds = n.div_ceil(2);
    let mut main = String::new();
    main.push_str("<div class=\"trace-layout\">\n<main class=\"trace\">\n");
    let _ = write!(main, "<h1>{}</h1>\n<p class=\"meta\">", escape(name));
    if let Some(model) = config.get("model").and_then(Value::as_str) {
        let _ = write!(main, "<span class=\"model\">{}</span>", escape(model));
    }
    let _ = write!(
        main,
        "<span>{}</span><span>{}</span>",
        plural(n, "message", "messages"),
        plural(rounds, "round", "rounds")
    );
    if let Some(Value::String(ts)) = doc.get("timestamp") {
        let shown = parse_time(ts).map_or_else(|| ts.clone(), |(t, _)| utc(t.millis()));
        let _ = write!(main, "<span>Saved {}</span>", escape(&shown));
    }
    let _ = writeln!(
        main,
        "<a class=\"button\" href=\"/_reel/#trace={}\">Open in reel</a></p>",
        escape(&percent_encode(&segments.join("/")))
    );
    config_card(&mut main, config);
    let mut previous: Option<i64> = None;
    for (i, message) in history.iter().enumerate() {
        let created = message.get("created_at").and_then(Value::as_i64);
        message_card(&mut main, i, rounds, message, created, previous);
        if created.is_some() {
            previous = created;
        }
    }
    main.push_str("</main>\n");
    rail(&mut main, history, rounds);
    main.push_str("</div>");
    Page::html(chrome(&format!("{name} - MMSP Tracer"), segments, &main))
}

/// Every config key but `trace_id`: `system_prompt` and `tools` folded, strings as they
/// are, other values as JSON.
fn config_card(out: &mut String, config: &Map<String, Value>) {
    out.push_str("<section class=\"card config-card\">\n<h2>Config</h2>\n<dl>\n");
    for (key, value) in config {
        if key == "trace_id" {
            continue;
        }
        let _ = write!(out, "<dt>{}</dt><dd>", escape(key));
        match (key.as_str(), value) {
            ("system_prompt", Value::String(s)) => {
                let _ = write!(
                    out,
                    "<details><summary>Show</summary><pre>{}</pre></details>",
                    escape(s)
                );
            }
            ("tools", Value::Array(tools)) => {
                let _ = write!(
                    out,
                    "<details><summary>{}</summary><pre>{}</pre></details>",
                    plural(tools.len(), "tool", "tools"),
                    escape(&pretty(value))
                );
            }
            (_, Value::String(s)) => out.push_str(&escape(s)),
            (_, v) => {
                let _ = write!(out, "<code>{}</code>", escape(&v.to_string()));
            }
        }
        out.push_str("</dd>\n");
    }
    out.push_str("</dl>\n</section>\n");
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// One message as a card: role, item count, round, times, items, finish reason, usage.
fn message_card(
    out: &mut String,
    i: usize,
    rounds: usize,
    message: &Value,
    created: Option<i64>,
    previous: Option<i64>,
) {
    let role = message.get("role").and_then(Value::as_str).unwrap_or("?");
    let role_class = match role {
        "user" | "assistant" => role,
        _ => "other",
    };
    let items: Vec<(String, &Value)> = match message.get("content_items") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| {
                let ty = item
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown");
                current_item_type(ty).map(|t| (t.into_owned(), item))
            })
            .collect(),
        _ => Vec::new(),
    };
    let _ = write!(
        out,
        "<details class=\"card msg-card\" id=\"msg-{i}\" open>\n<summary>\
         <span class=\"badge role-{role_class}\">{}</span><span>{}</span>\
         <span class=\"round\">Round {} / {rounds}</span>",
        escape(role),
        plural(items.len(), "item", "items"),
        i / 2 + 1,
    );
    if let (Some(now), Some(before)) = (created, previous) {
        let _ = write!(
            out,
            "<span class=\"delta\">{}</span>",
            delta_text(now - before)
        );
    }
    if let Some(t) = created {
        let _ = write!(out, "<span class=\"time\">{}</span>", utc(t));
    }
    out.push_str("</summary>\n<div class=\"items\">\n");
    for (ty, item) in &items {
        item_html(out, ty, item);
    }
    out.push_str("</div>\n");
    footer(out, message);
    out.push_str("</details>\n");
}

/// The CSS class part of an item type: what comes before the first `.`, kept to
/// `[a-z0-9_-]`.
fn kind_of(ty: &str) -> &str {
    let kind = ty.split('.').next().unwrap_or_default();
    if !kind.is_empty()
        && kind
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
    {
        kind
    } else {
        "other"
    }
}

fn str_field<'a>(item: &'a Value, key: &str) -> Option<&'a str> {
    item.get(key).and_then(Value::as_str)
}

/// One item: its type, then what it holds.
fn item_html(out: &mut String, ty: &str, item: &Value) {
    let _ = write!(
        out,
        "<div class=\"item kind-{}\"><div class=\"item-head\"><div class=\"item-type\">{}</div>",
        kind_of(ty),
        escape(ty)
    );
    if matches!(ty, "tool_call.done" | "tool_result.done") {
        if let Some(id) = str_field(item, "tool_call_id") {
            let _ = write!(out, "<span class=\"item-id\">{}</span>", escape(id));
        }
    }
    out.push_str("</div>");
    let has_fidelity = item.get("fidelity").is_some_and(|f| !f.is_null());
    match ty {
        "text.done" => text_body(out, str_field(item, "text"), has_fidelity),
        "thinking.done" => match str_field(item, "thinking") {
            Some("_REDACTED_THINKING") => {
                out.push_str("<div class=\"item-note\">Redacted thinking</div>");
            }
            t => text_body(out, t, has_fidelity),
        },
        "tool_call.done" => {
            let name = str_field(item, "name").unwrap_or("?");
            let _ = write!(
                out,
                "<div class=\"item-call\">{}</div>",
                escape_text(&call_text(name, item.get("arguments")))
            );
        }
        "tool_result.done" => {
            text_body(out, str_field(item, "text"), false);
            if let Some(Value::Array(images)) = item.get("images") {
                for url in images.iter().filter_map(Value::as_str) {
                    image_url_html(out, url);
                }
            }
        }
        "image_url.done" => image_url_html(out, str_field(item, "image_url").unwrap_or("")),
        "inline_data.done" => inline_html(out, "Inline", item),
        "inline_thinking.done" => inline_html(out, "Thinking inline", item),
        "embedding.done" => embedding_html(out, item.get("embedding")),
        _ => {
            let _ = write!(
                out,
                "<pre class=\"item-json\">{}</pre>",
                escape(&pretty(item))
            );
        }
    }
    out.push_str("</div>\n");
}

/// Text or thinking, trimmed; `No text` when empty (`, only fidelity` when that is all).
fn text_body(out: &mut String, text: Option<&str>, has_fidelity: bool) {
    let text = text.unwrap_or_default().trim();
    if text.is_empty() {
        let _ = write!(
            out,
            "<div class=\"item-note\">No text{}</div>",
            if has_fidelity { ", only fidelity" } else { "" }
        );
    } else {
        let _ = write!(out, "<div class=\"item-text\">{}</div>", escape(text));
    }
}

/// A tool call as `name(k="v", n=1)`: string values quoted, others as JSON.
fn call_text(name: &str, arguments: Option<&Value>) -> String {
    let parsed;
    let arguments = match arguments {
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Object(_)) => {
                parsed = v;
                Some(&parsed)
            }
            _ => return format!("{name}({s})"),
        },
        a => a,
    };
    let args = match arguments {
        Some(Value::Object(o)) => o
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", "),
        None | Some(Value::Null) => String::new(),
        Some(v) => v.to_string(),
    };
    format!("{name}({args})")
}

/// An image URL: shown as an image when it is a checked `data:image/…` URL, else as text
/// (the viewer fetches nothing from outside).
fn image_url_html(out: &mut String, url: &str) {
    if safe_image_data_url(url) {
        let _ = write!(
            out,
            "<img class=\"item-image\" alt=\"image\" src=\"{}\">",
            escape(url)
        );
    } else {
        let _ = write!(out, "<div class=\"item-url\">{}</div>", escape(url));
    }
}

/// `data:image/<subtype>[;param…];base64,<base64>` with nothing but token characters in
/// the head and base64 characters in the data.
fn safe_image_data_url(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("data:") else {
        return false;
    };
    let Some((head, data)) = rest.split_once(',') else {
        return false;
    };
    let mut parts = head.split(';');
    let mime = parts.next().unwrap_or_default();
    safe_mime(mime, "image/")
        && parts.all(|p| p.bytes().all(|b| is_token(b) || b == b'='))
        && head.ends_with(";base64")
        && is_base64(data)
}

fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(&b)
}

/// `image/png`, `audio/pcm`, …: `family` then a non-empty token.
fn safe_mime(mime: &str, family: &str) -> bool {
    mime.get(..family.len())
        .is_some_and(|f| f.eq_ignore_ascii_case(family))
        && mime.len() > family.len()
        && mime[family.len()..].bytes().all(is_token)
}

/// Inline bytes: a summary, and the image or the audio when the MIME type is safe.
fn inline_html(out: &mut String, label: &str, item: &Value) {
    let mime = str_field(item, "mime_type").unwrap_or("");
    let data = str_field(item, "data").unwrap_or("");
    let audio = safe_mime(mime, "audio/");
    let noun = if safe_mime(mime, "image/") {
        "Image"
    } else if audio {
        "Audio"
    } else {
        "Data"
    };
    let decoded = base64_decode(data);
    let size = decoded
        .as_ref()
        .map_or_else(|| "not base64".to_owned(), |b| size_text(b.len() as u64));
    let _ = write!(
        out,
        "<div class=\"item-note\">{label} {noun}: {} ({size})</div>",
        escape(mime)
    );
    let Some(bytes) = decoded else { return };
    if noun == "Image" {
        let _ = write!(
            out,
            "<img class=\"item-image\" alt=\"{}\" src=\"data:{};base64,{}\">",
            escape(mime),
            escape(mime),
            escape(data)
        );
    } else if audio {
        let src = if is_pcm(mime) {
            format!(
                "data:audio/wav;base64,{}",
                base64_encode(&wav_of_pcm(&bytes))
            )
        } else {
            format!("data:{mime};base64,{data}")
        };
        let _ = write!(
            out,
            "<audio class=\"item-audio\" controls src=\"{}\"></audio>",
            escape(&src)
        );
    }
}

fn is_pcm(mime: &str) -> bool {
    let lower = mime.to_ascii_lowercase();
    lower == "audio/pcm" || lower.starts_with("audio/l16")
}

/// Raw 16-bit PCM as a WAV file: 24 kHz, mono, as MMSP's audio models send it.
fn wav_of_pcm(pcm: &[u8]) -> Vec<u8> {
    const RATE: u32 = 24_000;
    let len = u32::try_from(pcm.len()).unwrap_or(u32::MAX - 36);
    let mut wav = Vec::with_capacity(44 + pcm.len());
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + len).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&RATE.to_le_bytes());
    wav.extend_from_slice(&(RATE * 2).to_le_bytes()); // bytes per second
    wav.extend_from_slice(&2u16.to_le_bytes()); // block align
    wav.extend_from_slice(&16u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&len.to_le_bytes());
    wav.extend_from_slice(&pcm[..len as usize]);
    wav
}

/// The first five values of an embedding and how many there are; never the sixth.
fn embedding_html(out: &mut String, embedding: Option<&Value>) {
    let Some(Value::Array(values)) = embedding else {
        out.push_str("<div class=\"item-note\">No embedding</div>");
        return;
    };
    let shown: Vec<String> = values
        .iter()
        .take(EMBEDDING_PREVIEW)
        .map(Value::to_string)
        .collect();
    let more = if values.len() > EMBEDDING_PREVIEW {
        ", …"
    } else {
        ""
    };
    let _ = write!(
        out,
        "<div class=\"item-text\">Embedding: [{}{more}] <span class=\"item-id\">{}</span></div>",
        escape(&shown.join(", ")),
        plural(values.len(), "dimension", "dimensions")
    );
}

/// Finish reason and usage: the non-zero counts, then their total (MMSP's `prompt_tokens`
/// leaves out the cached input, so the total adds `cached_tokens` back).
fn footer(out: &mut String, message: &Value) {
    let finish = message.get("finish_reason").and_then(Value::as_str);
    let usage = message.get("usage_metadata").and_then(Value::as_object);
    if finish.is_none() && usage.is_none() {
        return;
    }
    out.push_str("<div class=\"msg-footer\">");
    if let Some(f) = finish {
        let _ = write!(out, "<span class=\"badge finish\">{}</span>", escape(f));
    }
    if let Some(u) = usage {
        let mut total = 0u64;
        for (key, label) in [
            ("cached_tokens", "Cached"),
            ("prompt_tokens", "Prompt"),
            ("thoughts_tokens", "Thoughts"),
            ("response_tokens", "Response"),
        ] {
            let n = u.get(key).and_then(Value::as_u64).unwrap_or(0);
            if n > 0 {
                total = total.saturating_add(n);
                let _ = write!(out, "<span class=\"usage\">{label} {}</span>", grouped(n));
            }
        }
        let _ = write!(
            out,
            "<span class=\"usage total\">Total {}</span>",
            grouped(total)
        );
    }
    out.push_str("</div>\n");
}

/// The right rail: one link per round, with the time between assistant answers.
fn rail(out: &mut String, history: &[Value], rounds: usize) {
    let _ = write!(
        out,
        "<nav class=\"rail\"><h2>Rounds ({rounds})</h2>\n<ol>\n"
    );
    let mut last_answer: Option<i64> = None;
    for r in 0..rounds {
        let _ = write!(out, "<li><a href=\"#msg-{}\">Round {}</a>", 2 * r, r + 1);
        let answer = history
            .get(2 * r + 1)
            .and_then(|m| m.get("created_at"))
            .and_then(Value::as_i64);
        if let (Some(now), Some(before)) = (answer, last_answer) {
            let _ = write!(
                out,
                " <span class=\"delta\">{}</span>",
                delta_text(now - before)
            );
        }
        if answer.is_some() {
            last_answer = answer;
        }
        out.push_str("</li>\n");
    }
    out.push_str("</ol>\n</nav>\n");
}

fn is_base64(s: &str) -> bool {
    base64_decode(s).is_some()
}

/// Standard base64 with padding, as MMSP writes bytes; `None` for anything else.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(s).ok()
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
#[cfg(unix)]
mod tests;
