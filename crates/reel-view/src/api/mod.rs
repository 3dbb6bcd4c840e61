//! The JSON the pages read, under `/_reel/api/…`.
//!
//! Every answer is built from the index and the lines it points at, read again from the
//! file: a page of a gigabyte trace costs the lines on it. Strings from the trace go out
//! as JSON strings and the pages insert them as text, never as markup.
//!
//! One file per concern: `query` (parameters, page limits, errors), `row` (a line
//! as a timeline row and its summary), `calls` (the calls view), `search`; here the
//! other answers, each a function of the catalog and the query.

mod calls;
mod query;
mod row;
mod search;

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::catalog::{Catalog, Entry};
use crate::index::{Class, LineRec, NO_TIME, TraceIndex, read_line};

pub use calls::calls;
pub use query::{ApiError, MAX_HITS, MAX_PAGE, Query};
pub use row::MAX_LINE_SHOWN;
use row::{SUMMARY_READ, latency, row};
pub use search::search;

/// `GET /_reel/api/home`: what the first page shows, and the runs of the directory.
pub fn home(cat: &Catalog) -> Result<Value, ApiError> {
    let mut v = serde_json::to_value(&cat.home).unwrap_or_default();
    let mut skipped = Vec::new();
    let runs: Vec<Value> = match &cat.dir {
        Some(dir) => {
            let listing = reel_inspect::runs::list_runs(dir).map_err(|e| ApiError {
                status: 500,
                message: e.to_string(),
            })?;
            // What `reel ls` says it skipped, said here too (names inside the directory).
            skipped = listing
                .skipped
                .iter()
                .filter_map(|k| {
                    let key = cat.key_in_dir(&k.path)?;
                    Some(json!({ "path": key, "reason": k.reason }))
                })
                .collect();
            listing
                .runs
                .iter()
                // A run reached through a symlink out of the directory is not shown.
                .filter(|r| {
                    cat.key_in_dir(&r.path)
                        .is_some_and(|k| cat.path_of(&k).is_ok())
                })
                .map(|r| {
                    let mut row = serde_json::to_value(r).unwrap_or_default();
                    if let Some(o) = row.as_object_mut() {
                        o.insert("key".into(), cat.key_in_dir(&r.path).into());
                        o.insert("rotated".into(), r.files.len().saturating_sub(1).into());
                        o.remove("files");
                        o.insert("path".into(), r.path.display().to_string().into());
                    }
                    row
                })
                .collect()
        }
        None => cat.named_keys().map(|k| json!({ "key": k })).collect(),
    };
    if let Some(o) = v.as_object_mut() {
        o.insert("runs".into(), runs.into());
        o.insert("skipped".into(), skipped.into());
        o.insert(
            "dir".into(),
            cat.dir.as_ref().map(|d| d.display().to_string()).into(),
        );
        o.insert("version".into(), reel_trace::REEL_VERSION.into());
    }
    Ok(v)
}

/// `GET /_reel/api/trace?t=KEY`: a trace's facts: meta, progress, counts by class and
/// label, calls, and the command that replays it.
pub fn trace(cat: &Catalog, q: &Query) -> Result<Value, ApiError> {
    let e = cat.open(q.required("t")?)?;
    let ix = read(&e);
    let mut labels: Vec<Value> = ix
        .counts
        .iter()
        .map(|((class, label), n)| {
            json!({"class": class.name(), "label": ix.strings.get(*label), "lines": n})
        })
        .collect();
    labels.sort_by(|a, b| b["lines"].as_u64().cmp(&a["lines"].as_u64()));
    let meta = ix.meta.clone();
    let started = meta
        .as_ref()
        .and_then(|m| m.get("startedAt"))
        .and_then(Value::as_str)
        .and_then(reel_trace::Timestamp::parse)
        .map(|t| t.0);
    let kind = meta
        .as_ref()
        .and_then(|m| m.get("kind"))
        .and_then(Value::as_str)
        .unwrap_or("mcp")
        .to_owned();
    let transport = meta
        .as_ref()
        .and_then(|m| m.get("transport"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let progress = *e.progress.borrow();
    let failure = e.failure.lock().unwrap_or_else(|p| p.into_inner()).clone();
    Ok(json!({
        "key": e.key,
        "path": e.source.display().to_string(),
        "format": e.format,
        "warnings": e.warnings,
        "meta": meta,
        "kind": kind,
        "startedMs": started,
        "lines": ix.lines.len(),
        "calls": ix.call_count(),
        "indexBytes": ix.bytes(),
        "labels": labels,
        "progress": progress,
        "failure": failure,
        "play": play_command(&e.source, &kind, transport.as_deref()),
    }))
}

/// The command that serves the run again from the tape.
fn play_command(path: &Path, kind: &str, transport: Option<&str>) -> String {
    let p = reel_trace::names::shell_words(&[path.display().to_string()]);
    match (kind, transport) {
        ("llm", _) => format!("reel llm --play {p}"),
        (_, Some("http")) => format!("reel play --listen 127.0.0.1:8080 {p}"),
        _ => format!("reel play {p}"),
    }
}

fn read(e: &Entry) -> std::sync::RwLockReadGuard<'_, TraceIndex> {
    e.read()
}

/// Which lines a page of `lines` holds.
struct Filter {
    classes: Vec<Class>,
    label: Option<u32>,
    /// No line matches (a label no line has).
    none: bool,
}

impl Filter {
    fn of(q: &Query, ix: &TraceIndex) -> Result<Filter, ApiError> {
        let mut classes = Vec::new();
        for c in q
            .get("class")
            .unwrap_or("")
            .split(',')
            .filter(|c| !c.is_empty())
        {
            classes.push(
                Class::parse(c).ok_or_else(|| ApiError::bad(format!("unknown class {c:?}")))?,
            );
        }
        let (label, none) = match q.get("label").filter(|l| !l.is_empty()) {
            None => (None, false),
            Some(l) => match ix.strings.find(l) {
                Some(id) => (Some(id), false),
                None => (None, true),
            },
        };
        Ok(Filter {
            classes,
            label,
            none,
        })
    }

    fn admits(&self, r: &LineRec) -> bool {
        !self.none
            && (self.classes.is_empty() || self.classes.contains(&r.class))
            && self.label.is_none_or(|l| r.label == l)
    }
}

/// `GET /_reel/api/lines?t=KEY&from=N&count=C[&class=a,b][&label=L]`: a page of the
/// timeline: the lines from 1-based `from` on that pass the filter, each with its
/// one-line summary; `next` is the line to ask from for the page after.
pub fn lines(cat: &Catalog, q: &Query) -> Result<Value, ApiError> {
    let e = cat.open(q.required("t")?)?;
    let from = q.number("from", 1)?.max(1);
    let count = q.count()?;
    let full = q.get("full") == Some("1");
    let ix = read(&e);
    let filter = Filter::of(q, &ix)?;
    let mut picked = Vec::new();
    let mut next = None;
    let start = (from - 1) as usize;
    for (i, r) in ix
        .lines
        .iter_from(start)
        .enumerate()
        .map(|(k, r)| (k + start, r))
    {
        if !filter.admits(r) {
            continue;
        }
        if picked.len() == count {
            next = Some(i as u64 + 1);
            break;
        }
        picked.push((i as u64 + 1, *r));
    }
    let matched = if filter.classes.is_empty() && filter.label.is_none() && !filter.none {
        ix.lines.len() as u64
    } else {
        ix.lines.iter_from(0).filter(|r| filter.admits(r)).count() as u64
    };
    let rows: Vec<Value> = picked.iter().map(|&(n, r)| row(&ix, n, &r, full)).collect();
    Ok(json!({
        "total": ix.lines.len(),
        "matched": matched,
        "next": next,
        "ended": ix.ended,
        "lines": rows,
    }))
}

/// `GET /_reel/api/line?t=KEY&n=N`: one line in full: its text, its payload
/// pretty-printed, and its row.
pub fn line(cat: &Catalog, q: &Query) -> Result<Value, ApiError> {
    let e = cat.open(q.required("t")?)?;
    let n = q.number("n", 0)?;
    let ix = read(&e);
    let r = *ix.line(n).ok_or_else(|| ApiError {
        status: 404,
        message: format!("line {n}: not in the trace (it has {})", ix.lines.len()),
    })?;
    Ok(row(&ix, n, &r, true))
}

/// `GET /_reel/api/raw?t=KEY&from=N&count=C`: the file itself, line by line.
pub fn raw(cat: &Catalog, q: &Query) -> Result<Value, ApiError> {
    let e = cat.open(q.required("t")?)?;
    let from = q.number("from", 1)?.max(1);
    let count = q.count()?;
    let ix = read(&e);
    let start = (from - 1) as usize;
    let rows: Vec<Value> = ix
        .lines
        .iter_from(start)
        .enumerate()
        .take(count)
        .map(|(k, r)| {
            let i = start + k;
            let (bytes, cut) = read_line(ix.file_of(r), r, SUMMARY_READ).unwrap_or_default();
            json!({"n": i + 1, "text": String::from_utf8_lossy(&bytes), "cut": cut, "bytes": r.len})
        })
        .collect();
    let shown = from - 1 + rows.len() as u64;
    Ok(json!({
        "total": ix.lines.len(),
        "next": (shown < ix.lines.len() as u64).then_some(shown + 1),
        "lines": rows,
    }))
}

/// `GET /_reel/api/stats?t=KEY`: the `mcp-tape.stats/1` document `reel stats --json`
/// writes, from the same code.
pub fn stats(cat: &Catalog, q: &Query) -> Result<Value, ApiError> {
    let e = cat.open(q.required("t")?)?;
    // Computed once per state of the trace: a finished trace is read for it once.
    let size = {
        let p = e.progress.borrow();
        (p.bytes, p.size)
    };
    let mut cached = e.stats.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((at, v)) = cached.as_ref() {
        if *at == size {
            return Ok(v.clone());
        }
    }
    let s =
        reel_inspect::stats::stats_for_paths(std::slice::from_ref(&e.trace)).map_err(|err| {
            ApiError {
                status: 422,
                message: err.to_string(),
            }
        })?;
    let mut v = serde_json::to_value(&s).unwrap_or_default();
    // The mean latency per tool, from the calls the index paired (stats keeps
    // percentiles only).
    let ix = read(&e);
    let mut sums: std::collections::HashMap<&str, (f64, u64)> = std::collections::HashMap::new();
    for i in 0..ix.call_count() {
        let Some(x) = ix.call(i) else { continue };
        let (Some("tools/call"), Some(tool)) = (ix.name(x.method), ix.name(x.subject)) else {
            continue;
        };
        if x.response > 0 {
            if let Some(l) = latency(&ix, x.request, x.response) {
                let s = sums.entry(tool).or_default();
                s.0 += l as f64;
                s.1 += 1;
            }
        }
    }
    if let Some(tools) = v.get_mut("tools").and_then(Value::as_array_mut) {
        for row in tools {
            let mean = row
                .get("name")
                .and_then(Value::as_str)
                .and_then(|n| sums.get(n))
                .map(|(sum, n)| sum / *n as f64);
            if let (Some(o), Some(m)) = (row.as_object_mut(), mean) {
                o.insert("meanMs".into(), json!(m));
            }
        }
    }
    *cached = Some((size, v.clone()));
    Ok(v)
}

/// `GET /_reel/api/diff?a=KEY&b=KEY`: `reel diff --json` of the two, from reel-diff.
pub fn diff(cat: &Catalog, q: &Query) -> Result<Value, ApiError> {
    let (a, b) = (cat.open(q.required("a")?)?, cat.open(q.required("b")?)?);
    let sizes = (a.progress.borrow().size, b.progress.borrow().size);
    let pair = (a.key.clone(), b.key.clone());
    let mut diffs = cat.diffs.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((at, v)) = diffs.get(&pair) {
        if *at == sizes {
            return Ok(v.clone());
        }
    }
    let report = reel_diff::diff(
        &a.trace,
        &b.trace,
        &reel_diff::DiffOptions::default(),
        &mut |_| {},
    )
    .map_err(|err| ApiError {
        status: 422,
        message: err.to_string(),
    })?;
    let code = match report.verdict() {
        reel_mcp::drift::Verdict::Identical => 0,
        reel_mcp::drift::Verdict::Output => 1,
        reel_mcp::drift::Verdict::Structural => 2,
    };
    let mut v = reel_diff::render::json(&report, code);
    if let Some(o) = v.as_object_mut() {
        o.insert("keys".into(), json!([a.key, b.key]));
    }
    diffs.insert(pair, (sizes, v.clone()));
    Ok(v)
}

/// `GET /_reel/api/merge?t=K1&t=K2…&from=N&count=C`: the lines of several traces in
/// time order (lines without a time keep their place after the line before), each with
/// the key of its trace; pairs stay within their own trace, so ids never cross-pair.
pub fn merge(cat: &Catalog, q: &Query) -> Result<Value, ApiError> {
    let keys = q.all("t");
    if keys.len() < 2 {
        return Err(ApiError::bad("merge needs two or more t= traces"));
    }
    let entries: Vec<Arc<Entry>> = keys.iter().map(|k| cat.open(k)).collect::<Result<_, _>>()?;
    let from = q.number("from", 0)? as usize;
    let count = q.count()?;
    let guards: Vec<_> = entries.iter().map(|e| read(e)).collect();
    let mut at = vec![0usize; guards.len()];
    // The time of each source's next line: a line without one takes the time before it.
    let mut last = vec![i64::MIN; guards.len()];
    let mut rows = Vec::new();
    let mut seen = 0usize;
    let total: usize = guards.iter().map(|g| g.lines.len()).sum();
    while seen < from + count {
        let mut best: Option<(i64, usize)> = None;
        for (s, g) in guards.iter().enumerate() {
            let Some(r) = g.lines.get(at[s]) else {
                continue;
            };
            let t = if r.t == NO_TIME { last[s] } else { r.t };
            if best.is_none_or(|(bt, _)| t < bt) {
                best = Some((t, s));
            }
        }
        let Some((t, s)) = best else { break };
        let i = at[s];
        at[s] += 1;
        last[s] = t;
        if seen >= from {
            let Some(&r) = guards[s].lines.get(i) else {
                break;
            };
            let mut row = row(&guards[s], i as u64 + 1, &r, false);
            if let Some(o) = row.as_object_mut() {
                o.insert("src".into(), s.into());
            }
            rows.push(row);
        }
        seen += 1;
    }
    let shown = from + rows.len();
    Ok(json!({
        "keys": keys,
        "total": total,
        "next": (shown < total).then_some(shown),
        "lines": rows,
    }))
}

#[cfg(test)]
mod tests;
