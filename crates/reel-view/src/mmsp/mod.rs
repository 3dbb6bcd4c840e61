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
//!
//! Layout: here the routing ([`respond`]) and the test of a cache directory; `page`
//! (the response, the chrome, escaping, URLs, formats), `listing` (a directory),
//! `trace` (a trace's rounds) and `media` (the bytes an item carries, checked).

mod listing;
mod media;
mod page;
mod trace;

use std::fs;
use std::io::Read as _;
use std::path::Path;

use reel_convert::mmsp::looks_like;
use serde_json::Value;

use crate::paths::{self, BadPath, Resolved};
use listing::{Sort, listing};
pub use page::{Page, escape};
use page::{chrome, segments_of};
use trace::trace_page;

/// How many directory entries [`is_cache_dir`] looks at, at most.
const SCAN_ENTRIES: usize = 2000;
/// How deep [`is_cache_dir`] looks below the directory.
const SCAN_DEPTH: usize = 4;
/// How much of a file [`is_cache_dir`] reads to tell an MMSP trace.
const SCAN_HEAD: u64 = 64 * 1024;

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

#[cfg(test)]
#[cfg(unix)]
mod tests;
