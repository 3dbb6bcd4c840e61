//! The calls view: requests with their responses, latency and what came while each
//! was open.

use reel_trace::Dir;
use serde_json::{Value, json};

use super::query::{ApiError, Query};
use super::row::{SUMMARY_READ, latency};
use crate::catalog::Catalog;
use crate::index::{Call, TraceIndex, read_line};

/// `GET /_reel/api/calls?t=KEY&from=I&count=C[&name=N]`: requests with their
/// responses, latency and what came in between; `from` counts calls from 0.
pub fn calls(cat: &Catalog, q: &Query) -> Result<Value, ApiError> {
    let e = cat.open(q.required("t")?)?;
    let from = q.number("from", 0)? as usize;
    let count = q.count()?;
    let name = q.get("name").filter(|n| !n.is_empty());
    let ix = e.read();
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
