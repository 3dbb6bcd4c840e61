//! A directory of the cache as a listing: its entries (those resolving inside the
//! cache), sorted by name or by modification time, directories first.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::time::UNIX_EPOCH;

use super::page::{Page, chrome, escape, segments_of, size_text, url_of, utc};
use crate::paths::{self, Resolved};

/// The order of a listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sort {
    Name,
    Mtime,
}

impl Sort {
    /// `sort=mtime` in the query; anything else (missing, invalid) is by name.
    pub(super) fn from_query(query: Option<&str>) -> Sort {
        let mtime = query.unwrap_or_default().split('&').any(|pair| {
            pair.split_once('=')
                .is_some_and(|(k, v)| k == "sort" && v == "mtime")
        });
        if mtime { Sort::Mtime } else { Sort::Name }
    }

    /// Directories first, then by name, or newest first (then by name).
    fn apply(self, rows: &mut [Row]) {
        rows.sort_by(|a, b| {
            b.dir.cmp(&a.dir).then_with(|| match self {
                Sort::Name => a.name.cmp(&b.name),
                Sort::Mtime => b.mtime.cmp(&a.mtime).then_with(|| a.name.cmp(&b.name)),
            })
        });
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

impl Row {
    /// The row of the entry `name` of the directory named by `segments`: `None` when it
    /// resolves outside `root` or what it resolves to cannot be looked at.
    fn of(root: &Path, segments: &[String], name: String) -> Option<Row> {
        let mut own = segments.to_vec();
        own.push(name.clone());
        match paths::resolve(root, &own.join("/")) {
            Resolved::Outside => None,
            Resolved::Missing => Some(Row {
                name,
                href: url_of(&own),
                dir: false,
                size: None,
                mtime: None,
            }),
            Resolved::Inside(target) => {
                let md = fs::metadata(&target).ok()?;
                let mtime = md
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .map(|d| d.as_millis() as i64);
                Some(Row {
                    name,
                    href: url_of(&segments_of(root, &target)),
                    dir: md.is_dir(),
                    size: (!md.is_dir()).then_some(md.len()),
                    mtime,
                })
            }
        }
    }
}

/// The listing of the directory `path` (canonical, inside `root`, named by `segments`).
///
/// `.DS_Store` and every entry resolving outside `root` (symlinks out, dangling ones
/// included) are left out, and so are names that are not UTF-8 (no request path can name
/// them). A dangling symlink whose target would be inside is listed as a broken link,
/// without size or time, linking to its own name (which answers 404).
pub(super) fn listing(root: &Path, path: &Path, segments: &[String], sort: Sort) -> Page {
    let mut rows = match rows(root, path, segments) {
        Ok(rows) => rows,
        Err(e) => return Page::plain(500, format!("Error listing directory: {e}")),
    };
    sort.apply(&mut rows);
    let main = render(&rows, segments, sort);
    Page::html(chrome("Traces - MMSP Tracer", segments, &main))
}

/// The rows of the directory `path`, unsorted.
fn rows(root: &Path, path: &Path, segments: &[String]) -> std::io::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for entry in fs::read_dir(path)? {
        let Ok(name) = entry?.file_name().into_string() else {
            continue;
        };
        if name == ".DS_Store" {
            continue;
        }
        rows.extend(Row::of(root, segments, name));
    }
    Ok(rows)
}

/// The page's `<main>`: the order switch, then the table (or a note when it is empty).
fn render(rows: &[Row], segments: &[String], sort: Sort) -> String {
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
        for row in rows {
            row_html(&mut main, row);
        }
        main.push_str("</tbody>\n</table>\n");
    }
    main.push_str("</main>");
    main
}

/// One table row: the linked name (`/` after a directory), the time, the size.
fn row_html(out: &mut String, row: &Row) {
    let kind = if row.dir {
        "dir"
    } else if row.size.is_none() {
        "broken"
    } else {
        "file"
    };
    let _ = writeln!(
        out,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_sort_mtime_orders_by_time() {
        assert_eq!(Sort::from_query(Some("x=1&sort=mtime")), Sort::Mtime);
        assert_eq!(Sort::from_query(Some("sort=size")), Sort::Name);
    }
}
