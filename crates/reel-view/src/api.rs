//! The JSON the pages read, under `/_reel/api/…`.
//!
//! Every answer is built from the index and the lines it points at, read again from the
//! file: a page of a gigabyte trace costs the lines on it. Strings from the trace go out
//! as JSON strings and the pages insert them as text, never as markup.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::catalog::{Catalog, Entry, KeyError};
use reel_trace::{Dir, LineClass};

use crate::index::{Call, Class, LineRec, NO_TIME, TraceIndex, read_line};
use reel_trace::json_text::pretty;

/// Lines one page holds at most.
pub const MAX_PAGE: usize = 1000;
/// Bytes of a line the raw view and a line's detail show (the rest is said cut).
pub const MAX_LINE_SHOWN: usize = 4 << 20;
/// Bytes of a line read for its one-line summary.
const SUMMARY_READ: usize = 64 << 10;
/// Characters of a one-line summary.
const SUMMARY_CHARS: usize = 160;
/// Search hits one answer holds at most.
pub const MAX_HITS: usize = 500;

/// A request the API cannot answer.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: u16,
    /// What went wrong.
    pub message: String,
}

impl ApiError {
    fn bad(message: impl Into<String>) -> ApiError {
        ApiError {
            status: 400,
            message: message.into(),
        }
    }
}

impl From<KeyError> for ApiError {
    fn from(e: KeyError) -> ApiError {
        let status = match e {
            KeyError::Outside(_) => 403,
            KeyError::Missing(_) => 404,
            KeyError::Unreadable(_) => 422,
        };
        ApiError {
            status,
            message: e.to_string(),
        }
    }
}

/// The query parameters of a request, decoded.
#[derive(Debug, Default)]
pub struct Query(Vec<(String, String)>);

impl Query {
    /// Parses `a=1&b=x%20y` (`+` is a space).
    pub fn parse(q: Option<&str>) -> Result<Query, ApiError> {
        let mut out = Vec::new();
        for pair in q.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let dec = |s: &str| {
                crate::paths::decode(&s.replace('+', " "))
                    .map_err(|e| ApiError::bad(format!("query parameter {k:?}: {e}")))
            };
            out.push((dec(k)?, dec(v)?));
        }
        Ok(Query(out))
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `name`.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    fn required(&self, name: &str) -> Result<&str, ApiError> {
        self.get(name)
            .ok_or_else(|| ApiError::bad(format!("missing query parameter {name:?}")))
    }

    fn number(&self, name: &str, default: u64) -> Result<u64, ApiError> {
        match self.get(name) {
            None | Some("") => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| ApiError::bad(format!("{name}={v:?} is not a number"))),
        }
    }
}

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
    let count = (q.number("count", 200)? as usize).min(MAX_PAGE);
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

/// One timeline row.
fn row(ix: &TraceIndex, n: u64, r: &LineRec, full: bool) -> Value {
    let max = if full { MAX_LINE_SHOWN } else { SUMMARY_READ };
    let (bytes, cut) = read_line(ix.file_of(r), r, max).unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let mut o = Map::new();
    o.insert("n".into(), n.into());
    o.insert("class".into(), r.class.name().into());
    o.insert("dir".into(), r.dir.map(|d| d.as_str()).into());
    o.insert("t".into(), (r.t != NO_TIME).then_some(r.t).into());
    o.insert("label".into(), ix.strings.get(r.label).into());
    o.insert("bytes".into(), r.len.into());
    let parsed: Option<Value> = if cut {
        None
    } else {
        serde_json::from_str(&text).ok()
    };
    o.insert(
        "summary".into(),
        summary(r.class, parsed.as_ref(), &text).into(),
    );
    if let Some(p) = &parsed {
        for (member, name) in [
            ("session", "session"),
            ("corr_id", "corrId"),
            ("source", "source"),
        ] {
            if let Some(s) = p.get(member).and_then(Value::as_str) {
                o.insert(name.into(), s.into());
            }
        }
        if p.get("origin").is_some() {
            o.insert("origin".into(), p["origin"].clone());
        }
    }
    if r.call > 0 {
        let i = (r.call - 1) as usize;
        o.insert("call".into(), i.into());
        if let Some(x) = ix.call(i) {
            let partner = if x.request == n {
                (x.response > 0).then_some(x.response)
            } else if x.response == n {
                Some(x.request)
            } else {
                None
            };
            o.insert("pair".into(), partner.into());
            if x.response == n {
                o.insert("latencyMs".into(), latency(ix, x.request, n).into());
            }
        }
    }
    if full {
        o.insert("text".into(), text.as_ref().into());
        o.insert("cut".into(), cut.into());
        if let Some(raw) = raw_member(&text) {
            o.insert("pretty".into(), pretty(raw).into());
        } else if parsed.is_some() {
            o.insert("pretty".into(), pretty(&text).into());
        }
    }
    Value::Object(o)
}

/// The `raw` member of a line, as its text.
fn raw_member(line: &str) -> Option<&str> {
    #[derive(serde::Deserialize)]
    struct R<'a> {
        #[serde(borrow)]
        raw: Option<&'a serde_json::value::RawValue>,
    }
    serde_json::from_str::<R>(line).ok()?.raw.map(|r| r.get())
}

fn latency(ix: &TraceIndex, request: u64, response: u64) -> Option<i64> {
    let (a, b) = (ix.line(request)?.t, ix.line(response)?.t);
    (a != NO_TIME && b != NO_TIME).then_some(b - a)
}

/// The one-line summary of a line.
fn summary(class: Class, line: Option<&Value>, text: &str) -> String {
    let Some(v) = line else {
        return clip(text);
    };
    let s = match class {
        Class::Line(LineClass::Message) => message_summary(v.get("raw")),
        Class::Line(LineClass::Event) | Class::Line(LineClass::Other) => {
            let kind = v
                .get("kind")
                .or(v.get("type"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let body = v
                .get("text")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .or_else(|| v.get("bytes").map(|_| "(bytes, not UTF-8)".to_owned()))
                .unwrap_or_else(|| {
                    let mut rest = v.as_object().cloned().unwrap_or_default();
                    for k in ["t", "dir", "kind", "type"] {
                        rest.remove(k);
                    }
                    Value::Object(rest).to_string()
                });
            format!("{kind} {body}")
        }
        Class::Line(LineClass::Turn) => {
            let role = v.get("role").and_then(Value::as_str).unwrap_or("turn");
            let model = v
                .get("model")
                .and_then(Value::as_str)
                .map(|m| format!(" [{m}]"))
                .unwrap_or_default();
            let first = v
                .get("blocks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .find_map(block_summary)
                .unwrap_or_default();
            format!("{role}{model}: {first}")
        }
        Class::Line(LineClass::Meta) => {
            let pick = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
            [
                pick("label"),
                pick("kind"),
                pick("transport"),
                pick("source"),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" · ")
        }
        Class::Line(LineClass::End) => {
            let mut parts = Vec::new();
            if let Some(c) = v.get("exitCode") {
                parts.push(format!("exit {c}"));
            }
            if let Some(r) = v.get("reason").and_then(Value::as_str) {
                parts.push(r.to_owned());
            }
            if let Some(c) = v.get("counts") {
                parts.push(c.to_string());
            }
            parts.join(" · ")
        }
        Class::Bad => text.to_owned(),
    };
    clip(&s)
}

fn block_summary(b: &Value) -> Option<String> {
    let ty = b.get("type").and_then(Value::as_str)?;
    Some(match ty {
        "text" => b.get("text").and_then(Value::as_str)?.to_owned(),
        "tool_use" => format!(
            "tool_use {}",
            b.get("name").and_then(Value::as_str).unwrap_or("?")
        ),
        "tool_result" => "tool_result".to_owned(),
        "history_elided" => format!(
            "history elided ({} turns)",
            b.get("count")
                .map(Value::to_string)
                .unwrap_or_else(|| "?".into())
        ),
        other => other.to_owned(),
    })
}

fn message_summary(raw: Option<&Value>) -> String {
    let Some(raw) = raw else {
        return String::new();
    };
    let method = raw.get("method").and_then(Value::as_str);
    let params = raw.get("params");
    if let Some(m) = method {
        let subject = params
            .and_then(|p| p.get("name").or(p.get("uri")))
            .and_then(Value::as_str)
            .map(|s| format!(" {s}"))
            .unwrap_or_default();
        let detail = match (m, params) {
            ("notifications/progress", Some(p)) => format!(
                " {}{}",
                p.get("progress").map(Value::to_string).unwrap_or_default(),
                p.get("total").map(|t| format!("/{t}")).unwrap_or_default()
            ),
            ("tools/call", Some(p)) => p
                .get("arguments")
                .map(|a| format!(" {a}"))
                .unwrap_or_default(),
            (_, Some(p)) if subject.is_empty() => format!(" {p}"),
            _ => String::new(),
        };
        return format!("{m}{subject}{detail}");
    }
    if let Some(e) = raw.get("error") {
        let code = e.get("code").map(Value::to_string).unwrap_or_default();
        let msg = e.get("message").and_then(Value::as_str).unwrap_or("");
        return format!("error {code} {msg}");
    }
    if let Some(r) = raw.get("result") {
        if r.get("isError") == Some(&Value::Bool(true)) {
            return format!("result (isError) {r}");
        }
        return format!("result {r}");
    }
    raw.to_string()
}

/// `s` cut to a summary's length, on a character boundary.
fn clip(s: &str) -> String {
    let s = s.trim();
    match s.char_indices().nth(SUMMARY_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
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
    let count = (q.number("count", 200)? as usize).min(MAX_PAGE);
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

/// `GET /_reel/api/calls?t=KEY&from=I&count=C[&name=N]`: requests with their
/// responses, latency and what came in between; `from` counts calls from 0.
pub fn calls(cat: &Catalog, q: &Query) -> Result<Value, ApiError> {
    let e = cat.open(q.required("t")?)?;
    let from = q.number("from", 0)? as usize;
    let count = (q.number("count", 200)? as usize).min(MAX_PAGE);
    let name = q.get("name").filter(|n| !n.is_empty());
    let ix = read(&e);
    let mut out = Vec::new();
    let mut next = None;
    for i in from..ix.call_count() {
        let Some(x) = ix.call(i) else { break };
        if let Some(n) = name {
            if ix.name(x.method) != Some(n) && ix.name(x.subject) != Some(n) {
                continue;
            }
        }
        if out.len() == count {
            next = Some(i);
            break;
        }
        out.push(call_row(&ix, i));
    }
    Ok(json!({
        "total": ix.call_count(),
        "next": next,
        "ended": ix.ended,
        "calls": out,
    }))
}

fn call_row(ix: &TraceIndex, i: usize) -> Value {
    let Some(x) = ix.call(i).copied() else {
        return Value::Null;
    };
    let response = (x.response > 0).then_some(x.response);
    let read = |n: u64| -> Option<Value> {
        let rec = ix.line(n)?;
        let (b, _) = read_line(ix.file_of(rec), rec, SUMMARY_READ).ok()?;
        serde_json::from_slice(&b).ok()
    };
    let id = read(x.request).and_then(|v| v.pointer("/raw/id").map(Value::to_string));
    let outcome = match response.and_then(read) {
        None => "pending",
        Some(_) if x.error => "error",
        Some(v) if v.pointer("/raw/result/isError") == Some(&Value::Bool(true)) => "tool error",
        Some(_) => "result",
    };
    json!({
        "i": i,
        "method": ix.name(x.method),
        "subject": ix.name(x.subject),
        "session": ix.name(x.session),
        "id": id,
        "dir": x.dir.as_str(),
        "request": x.request,
        "response": response,
        "outcome": outcome,
        "errorCode": x.error_code,
        "latencyMs": response.and_then(|r| latency(ix, x.request, r)),
        "cancelled": x.cancelled,
        "attached": attached(ix, i, &x),
    })
}

/// What came while call `i` was open: the other side's lines that belong to it, and the
/// requests sent in it (calls of their own).
fn attached(ix: &TraceIndex, i: usize, x: &Call) -> Vec<Value> {
    let me = i as u32 + 1;
    let last = if x.response > 0 {
        x.response
    } else {
        ix.lines.len() as u64
    };
    let mut out = Vec::new();
    for n in x.request + 1..last {
        let Some(r) = ix.line(n) else { break };
        if r.call == 0 {
            continue;
        }
        let nested = ix
            .call((r.call - 1) as usize)
            .filter(|c| c.parent == me && c.request == n);
        if r.call == me || nested.is_some() {
            out.push(json!({
                "line": n,
                "dir": r.dir.map(Dir::as_str),
                "method": ix.name(r.label),
                "isRequest": nested.is_some(),
            }));
        }
    }
    out
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

/// `GET /_reel/api/search?t=KEY&name=N&q=P[&from=N]`: message lines whose method or
/// tool/resource/prompt name is `name` (any when empty) and whose line holds `q`
/// (case-insensitive; `/re/` for a regular expression), as timeline rows.
pub fn search(cat: &Catalog, q: &Query) -> Result<Value, ApiError> {
    let e = cat.open(q.required("t")?)?;
    let from = q.number("from", 1)?.max(1);
    let name = q.get("name").unwrap_or("").trim();
    let pattern = q.get("q").unwrap_or("").trim();
    let re = if let Some(body) = pattern.strip_prefix('/').and_then(|p| p.strip_suffix('/')) {
        regex::RegexBuilder::new(body)
            .case_insensitive(true)
            .size_limit(1 << 20)
            .build()
            .map_err(|err| ApiError::bad(format!("q: not a regular expression: {err}")))?
    } else {
        regex::RegexBuilder::new(&regex::escape(pattern))
            .case_insensitive(true)
            .build()
            .map_err(|err| ApiError::bad(err.to_string()))?
    };
    let ix = read(&e);
    let name_id = ix.strings.find(name).filter(|_| !name.is_empty());
    // A tool of an llm trace is a `tool_use` block of a turn, found by its name member.
    let tool_use = serde_json::to_string(name)
        .map(|quoted| format!("\"name\":{quoted}"))
        .unwrap_or_default();
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
        let mut text = None;
        if !name.is_empty() {
            let by_call = name_id.is_some_and(|want| {
                r.label == want
                    || r.call
                        .checked_sub(1)
                        .and_then(|c| ix.call(c as usize))
                        .is_some_and(|x| x.subject == want || x.method == want)
            });
            let in_turn = !by_call && r.class == Class::Line(LineClass::Turn) && {
                text = read_line(ix.file_of(r), r, MAX_LINE_SHOWN)
                    .ok()
                    .map(|(b, _)| b);
                text.as_ref()
                    .is_some_and(|b| memchr::memmem::find(b, tool_use.as_bytes()).is_some())
            };
            if !by_call && !in_turn {
                continue;
            }
        } else if pattern.is_empty() {
            break;
        }
        if !pattern.is_empty() {
            let bytes = match text {
                Some(b) => b,
                None => match read_line(ix.file_of(r), r, MAX_LINE_SHOWN) {
                    Ok((b, _)) => b,
                    Err(_) => continue,
                },
            };
            if !re.is_match(&String::from_utf8_lossy(&bytes)) {
                continue;
            }
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
    let count = (q.number("count", 200)? as usize).min(MAX_PAGE);
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
