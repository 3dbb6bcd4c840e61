//! The search: message lines by the method or tool/resource/prompt name they are about,
//! and by what their text holds (a literal, or `/re/` for a regular expression), case
//! insensitive, over the lines indexed so far.

use reel_trace::LineClass;
use regex::Regex;
use serde_json::{Value, json};

use super::query::{ApiError, MAX_HITS, Query};
use super::row::{MAX_LINE_SHOWN, row};
use crate::catalog::Catalog;
use crate::index::{Class, LineRec, TraceIndex, read_line};

/// `GET /_reel/api/search?t=KEY&name=N&q=P[&from=N]`: message lines whose method or
/// tool/resource/prompt name is `name` (any when empty) and whose line holds `q`
/// (case-insensitive; `/re/` for a regular expression), as timeline rows.
pub fn search(cat: &Catalog, q: &Query) -> Result<Value, ApiError> {
    let e = cat.open(q.required("t")?)?;
    let from = q.number("from", 1)?.max(1);
    let name = q.get("name").unwrap_or("").trim();
    let pattern = pattern(q.get("q").unwrap_or("").trim())?;
    let ix = e.read();
    let wanted = Wanted::new(&ix, name, pattern);
    let mut hits = Vec::new();
    let mut next = None;
    let start = (from - 1) as usize;
    let mut scanned = start;
    for (i, r) in ix
        .lines
        .iter_from(start)
        .enumerate()
        .map(|(k, r)| (k + start, r))
    {
        scanned = i + 1;
        if wanted.is_nothing() {
            break;
        }
        if !wanted.matches(&ix, r) {
            continue;
        }
        if hits.len() == MAX_HITS {
            next = Some(i as u64 + 1);
            scanned = i;
            break;
        }
        hits.push(row(&ix, i as u64 + 1, r, false));
    }
    // Lines not indexed yet are not searched: `scanned` says where to go on from.
    Ok(json!({
        "lines": hits,
        "next": next,
        "scanned": scanned,
        "total": ix.lines.len(),
        "complete": ix.ended && next.is_none() && scanned == ix.lines.len(),
    }))
}

/// The regular expression of `q`, case-insensitive: `/re/` as written, anything else
/// as a literal; `None` when `q` is empty.
fn pattern(q: &str) -> Result<Option<Regex>, ApiError> {
    if q.is_empty() {
        return Ok(None);
    }
    let re = if let Some(body) = q.strip_prefix('/').and_then(|p| p.strip_suffix('/')) {
        regex::RegexBuilder::new(body)
            .case_insensitive(true)
            .size_limit(1 << 20)
            .build()
            .map_err(|err| ApiError::bad(format!("q: not a regular expression: {err}")))?
    } else {
        regex::RegexBuilder::new(&regex::escape(q))
            .case_insensitive(true)
            .build()
            .map_err(|err| ApiError::bad(err.to_string()))?
    };
    Ok(Some(re))
}

/// What a line must be to be a hit.
struct Wanted<'a> {
    /// The method or tool/resource/prompt name (empty: any).
    name: &'a str,
    /// `name` in the index's strings, when a line has it.
    name_id: Option<u32>,
    /// `"name":"…"`: a tool of an llm trace is a `tool_use` block of a turn, found by
    /// its name member.
    tool_use: String,
    /// What the line's text must match (`None`: anything).
    pattern: Option<Regex>,
}

impl<'a> Wanted<'a> {
    fn new(ix: &TraceIndex, name: &'a str, pattern: Option<Regex>) -> Wanted<'a> {
        Wanted {
            name,
            name_id: ix.strings.find(name).filter(|_| !name.is_empty()),
            tool_use: serde_json::to_string(name)
                .map(|quoted| format!("\"name\":{quoted}"))
                .unwrap_or_default(),
            pattern,
        }
    }

    /// Neither a name nor a pattern: no line is a hit.
    fn is_nothing(&self) -> bool {
        self.name.is_empty() && self.pattern.is_none()
    }

    /// Whether line `r` is a hit: it is about the name, and its text matches.
    fn matches(&self, ix: &TraceIndex, r: &LineRec) -> bool {
        // The line's text, once read (a turn is read to look for its tool).
        let mut text = None;
        if !self.name.is_empty() && !self.is_named(ix, r, &mut text) {
            return false;
        }
        let Some(re) = &self.pattern else {
            return true;
        };
        let bytes = match text {
            Some(b) => b,
            None => match read_line(ix.file_of(r), r, MAX_LINE_SHOWN) {
                Ok((b, _)) => b,
                Err(_) => return false,
            },
        };
        re.is_match(&String::from_utf8_lossy(&bytes))
    }

    /// Whether line `r` is about the name: its label, its call's method or subject, or
    /// a `tool_use` of that name in a turn (whose text is then left in `text`).
    fn is_named(&self, ix: &TraceIndex, r: &LineRec, text: &mut Option<Vec<u8>>) -> bool {
        let by_call = self.name_id.is_some_and(|want| {
            r.label == want
                || r.call
                    .checked_sub(1)
                    .and_then(|c| ix.call(c as usize))
                    .is_some_and(|x| x.subject == want || x.method == want)
        });
        if by_call || r.class != Class::Line(LineClass::Turn) {
            return by_call;
        }
        *text = read_line(ix.file_of(r), r, MAX_LINE_SHOWN)
            .ok()
            .map(|(b, _)| b);
        text.as_ref()
            .is_some_and(|b| memchr::memmem::find(b, self.tool_use.as_bytes()).is_some())
    }
}
