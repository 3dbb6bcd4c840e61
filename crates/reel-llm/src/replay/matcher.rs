//! Which recorded exchange answers a live request: the earliest unused one of the
//! same method and endpoint whose request is the same bytes, or the same after
//! normalisation (the trace's redaction, elided history, [`super::VOLATILE`] and
//! `--ignore` pointers); else the miss message naming the nearest.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;

use reel_mcp::normalize::{Difference, Pointer, diff, json_eq};

use super::tape::{LlmTape, Recorded};
use crate::api::{Endpoint, Provider};
use crate::request::{Request as LlmRequest, conversation_member, matchable};

/// The tape's exchanges, which of them were used, and what matching leaves out.
pub(super) struct Matcher {
    pub(super) tape: LlmTape,
    used: Mutex<Vec<bool>>,
    /// [`super::VOLATILE`] and the `--ignore` pointers.
    ignore: Vec<Pointer>,
}

/// A live request, read for matching.
pub(super) struct Live {
    pub(super) method: String,
    pub(super) endpoint: String,
    /// The query, redacted with the tape's rules.
    pub(super) query: Option<String>,
    pub(super) kind: Endpoint,
    pub(super) provider: Provider,
    pub(super) sha256: String,
    pub(super) text: Option<String>,
}

/// What matching needs of a live request, read from it once whatever the number of
/// candidates: its prefix digests, its system prompt and, for each elided count a
/// candidate asks for, its normalised members (redacted as the trace is, volatile and
/// ignored members removed).
struct LiveForm<'l> {
    live: &'l Live,
    request: Option<LlmRequest<'l>>,
    prefixes: Vec<String>,
    system: Option<Value>,
    bodies: HashMap<usize, Option<Value>>,
}

impl<'l> LiveForm<'l> {
    fn new(live: &'l Live, server: &Matcher) -> LiveForm<'l> {
        let request = live
            .text
            .as_deref()
            .filter(|_| live.kind.generates())
            .and_then(|t| LlmRequest::parse(live.kind, t));
        let prefixes = request
            .as_ref()
            .map(LlmRequest::prefixes)
            .unwrap_or_default();
        let system = request
            .as_ref()
            .and_then(LlmRequest::system_value)
            .map(|s| {
                let text = s.to_string();
                serde_json::from_str(&server.tape.redactor.redact_json(&text)).unwrap_or(s)
            });
        LiveForm {
            live,
            request,
            prefixes,
            system,
            bodies: HashMap::new(),
        }
    }

    /// The normalised members with the first `elided` messages left out. The ignore
    /// pointers apply to the whole request first, so they name what the client sent.
    fn body(&mut self, server: &Matcher, elided: usize) -> Option<&Value> {
        let live = self.live;
        self.bodies
            .entry(elided)
            .or_insert_with(|| {
                let m = matchable(live.kind, live.text.as_deref()?, 0)?;
                let redacted = server
                    .tape
                    .redactor
                    .redact_json(&m.to_string())
                    .into_owned();
                let mut v: Value = serde_json::from_str(&redacted).unwrap_or(m);
                for p in &server.ignore {
                    p.remove_from(&mut v);
                }
                let key = conversation_member(live.kind);
                if let Some(Value::Array(items)) = v.get_mut(key) {
                    items.drain(..elided.min(items.len()));
                }
                Some(v)
            })
            .as_ref()
    }
}

impl Matcher {
    /// A matcher over `tape`: the `ignore` pointers leave the recorded requests once,
    /// here; a live request loses them when it is read ([`LiveForm`]).
    pub(super) fn new(mut tape: LlmTape, ignore: Vec<Pointer>) -> Matcher {
        for e in &mut tape.exchanges {
            for body in [&mut e.body, &mut e.full].into_iter().flatten() {
                for p in &ignore {
                    p.remove_from(body);
                }
            }
        }
        let used = vec![false; tape.exchanges.len()];
        Matcher {
            tape,
            used: Mutex::new(used),
            ignore,
        }
    }

    /// Recorded exchanges never asked for: `(n, endpoint)`.
    pub(super) fn unused(&self) -> Vec<(u64, String)> {
        let used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        self.tape
            .exchanges
            .iter()
            .zip(used.iter())
            .filter(|(_, u)| !**u)
            .map(|(e, _)| (e.n, e.endpoint.clone()))
            .collect()
    }

    /// The exchange answering `live`, marked used; or the miss message.
    pub(super) fn take(&self, live: &Live) -> Result<usize, String> {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        let open = || {
            self.tape.exchanges.iter().enumerate().filter(|(i, e)| {
                !used[*i] && e.endpoint == live.endpoint && e.method == live.method
            })
        };
        let exact = open()
            .find(|(_, e)| {
                e.request_sha256.as_deref() == Some(live.sha256.as_str())
                    && (e.query == live.query || e.query.is_none() && e.body.is_none())
            })
            .map(|(i, _)| i);
        let mut form = LiveForm::new(live, self);
        let found = exact.or_else(|| {
            open()
                .find(|(_, e)| self.differences(&mut form, e).is_some_and(|d| d.is_empty()))
                .map(|(i, _)| i)
        });
        if let Some(i) = found {
            used[i] = true;
            return Ok(i);
        }
        // The nearest: fewest differences among the open exchanges of the endpoint.
        let nearest = open()
            .filter_map(|(_, e)| Some((e, self.differences(&mut form, e)?)))
            .min_by_key(|(_, d)| d.len());
        let what = format!("{} {}", live.method, live.endpoint);
        let model = live
            .text
            .as_deref()
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
            .and_then(|v| v.get("model").and_then(Value::as_str).map(str::to_owned));
        let what = match model {
            Some(m) => format!("{what} (model {m})"),
            None => what,
        };
        Err(match nearest {
            Some((e, d)) => {
                let shown: Vec<String> = d.iter().take(5).map(Difference::to_string).collect();
                format!(
                    "reel: the tape {} has no answer for {what}; nearest: exchange {} ({}), which differs at {}",
                    self.tape.path.display(),
                    e.n,
                    e.place,
                    shown.join("; ")
                )
            }
            None => format!(
                "reel: the tape {} has no unused answer for {what}",
                self.tape.path.display()
            ),
        })
    }

    /// Where the live request differs from `e` after normalisation; `None` when they
    /// cannot be compared (no body on either side).
    fn differences(&self, form: &mut LiveForm<'_>, e: &Recorded) -> Option<Vec<Difference>> {
        let live = form.live;
        let text = live.text.as_deref()?;
        if !live.kind.generates() {
            return Some(self.other_differences(e, live, text));
        }
        form.request.as_ref()?;
        let key = conversation_member(live.kind);
        // The whole conversation when the tape lets it be rebuilt; else the messages
        // after the elided ones, whose digest must then be the recorded one.
        let (recorded, elided) = match (&e.elided, &e.full) {
            (Some(_), Some(full)) => (full, 0),
            (Some((count, sha)), None) => {
                let live_sha = form.prefixes.get(*count);
                if live_sha != Some(sha) {
                    return Some(vec![Difference {
                        pointer: format!("/{key}/0..{count}"),
                        left: Some(Value::String(format!("history {sha}"))),
                        right: live_sha.map(|h| Value::String(format!("history {h}"))),
                    }]);
                }
                (e.body.as_ref()?, *count)
            }
            (None, _) => (e.body.as_ref()?, 0),
        };
        let live_v = form.body(self, elided)?;
        let mut d = if json_eq(recorded, live_v) {
            Vec::new()
        } else {
            diff(recorded, live_v)
        };
        // Pointers name the request's own messages, elided ones counted.
        if elided > 0 {
            for x in &mut d {
                x.pointer = shift_index(&x.pointer, key, elided);
            }
        }
        if form.system != e.system {
            d.push(Difference {
                pointer: "/system".into(),
                left: e.system.clone(),
                right: form.system.clone(),
            });
        }
        Some(d)
    }

    /// An API reel reads into no turns: the same query, and the same body (byte for
    /// byte, else as JSON with the trace's redaction, the volatile members and the
    /// `--ignore` pointers applied to both sides).
    fn other_differences(&self, e: &Recorded, live: &Live, text: &str) -> Vec<Difference> {
        let mut d = Vec::new();
        if e.query != live.query && (e.query.is_some() || live.query.is_some()) {
            d.push(Difference {
                pointer: "?".into(),
                left: e.query.clone().map(Value::String),
                right: live.query.clone().map(Value::String),
            });
        }
        if e.request_sha256.as_deref() == Some(live.sha256.as_str()) {
            return d;
        }
        let parsed = serde_json::from_str::<Value>(text).ok();
        match (&e.body, parsed) {
            (Some(recorded), Some(v)) => {
                let redacted = self.tape.redactor.redact_json(&v.to_string()).into_owned();
                let mut v: Value = serde_json::from_str(&redacted).unwrap_or(v);
                for p in &self.ignore {
                    p.remove_from(&mut v);
                }
                if !json_eq(recorded, &v) {
                    d.extend(diff(recorded, &v));
                }
            }
            (_, None) if text.trim().is_empty() => {}
            (_, v) => d.push(Difference {
                pointer: String::new(),
                left: None,
                right: Some(v.unwrap_or_else(|| Value::String(format!("{} bytes", text.len())))),
            }),
        }
        d
    }
}

/// `/key/i/…` with `i` moved up by `by` (a pointer into the messages after the elided
/// ones, named in the whole request's index space).
fn shift_index(pointer: &str, key: &str, by: usize) -> String {
    let prefix = format!("/{key}/");
    let Some(rest) = pointer.strip_prefix(&prefix) else {
        return pointer.to_owned();
    };
    let (index, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    match index.parse::<usize>() {
        Ok(i) => format!("{prefix}{}{tail}", i + by),
        Err(_) => pointer.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pointer_after_elided_messages_names_the_whole_requests_index() {
        assert_eq!(
            shift_index("/input/2/output", "input", 3),
            "/input/5/output"
        );
        assert_eq!(shift_index("/input/0", "input", 1), "/input/1");
        assert_eq!(
            shift_index("/messages/1/content/0", "messages", 4),
            "/messages/5/content/0"
        );
        assert_eq!(shift_index("/model", "input", 3), "/model");
        assert_eq!(shift_index("/input/x", "input", 3), "/input/x");
    }

    use reel_trace::hash::request_sha256;
    use serde_json::json;

    use super::super::tape::of_lines;

    /// A tape of Anthropic requests, each recorded as `llm.request` (its digest, its
    /// system prompt and its matchable body) with one body piece.
    fn tape_of(requests: &[&str]) -> LlmTape {
        let mut lines = Vec::new();
        for (n, text) in (1u64..).zip(requests) {
            let mut raw = json!({
                "endpoint": "/v1/messages",
                "method": "POST",
                "status": 200,
                "request_sha256": request_sha256(text.as_bytes()),
                "headers": {"anthropic-version": "2023-06-01"},
            });
            // Recorded as the proxy writes it: a system prompt only when there is one.
            if let Some(s) =
                LlmRequest::parse(Endpoint::Messages, text).and_then(|r| r.system_value())
            {
                raw["system"] = s;
            }
            let body = matchable(Endpoint::Messages, text, 0);
            let request = json!({"type": "event", "kind": "llm.request", "http": {"req": n},
                                 "raw": raw, "request": {"body": body}});
            let answer = json!({"type": "event", "kind": "reel.llm.body", "http": {"req": n},
                                "text": format!("answer {n}")});
            lines.extend([request, answer]);
        }
        of_lines(&lines)
    }

    fn live(text: &str) -> Live {
        Live {
            method: "POST".into(),
            endpoint: "/v1/messages".into(),
            query: None,
            kind: Endpoint::Messages,
            provider: Provider::Anthropic,
            sha256: request_sha256(text.as_bytes()),
            text: Some(text.to_owned()),
        }
    }

    fn ignoring(pointers: &[&str]) -> Vec<Pointer> {
        pointers
            .iter()
            .map(|p| Pointer::parse(p).unwrap())
            .collect()
    }

    const ASK: &str = r#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#;

    #[test]
    fn the_same_request_is_answered_by_the_earliest_unused_exchange_then_the_next() {
        let m = Matcher::new(tape_of(&[ASK, ASK]), Vec::new());
        assert_eq!(m.take(&live(ASK)), Ok(0));
        assert_eq!(m.take(&live(ASK)), Ok(1));
        let miss = m.take(&live(ASK)).unwrap_err();
        assert!(
            miss.contains("has no unused answer for POST /v1/messages (model m)"),
            "{miss}"
        );
        assert!(m.unused().is_empty());
    }

    #[test]
    fn a_request_that_differs_only_where_it_is_ignored_matches_after_normalisation() {
        let recorded = r#"{"model":"m","metadata":{"user_id":"u1"},"temperature":0,"messages":[{"role":"user","content":"hi"}]}"#;
        let asked = r#"{"metadata":{"user_id":"u2"},"model":"m","temperature":1,"messages":[{"role":"user","content":"hi"}]}"#;
        let m = Matcher::new(tape_of(&[recorded]), ignoring(&["/metadata/user_id"]));
        let miss = m.take(&live(asked)).unwrap_err();
        assert!(miss.contains("nearest: exchange 1 (t.jsonl:2)"), "{miss}");
        assert!(miss.contains("/temperature"), "{miss}");
        assert!(
            !miss.contains("/metadata"),
            "ignored members are not differences: {miss}"
        );
        let m = Matcher::new(
            tape_of(&[recorded]),
            ignoring(&["/metadata/user_id", "/temperature"]),
        );
        assert_eq!(m.take(&live(asked)), Ok(0));
        assert_eq!(m.unused(), []);
    }

    #[test]
    fn another_endpoint_or_method_is_never_an_answer() {
        let m = Matcher::new(tape_of(&[ASK]), Vec::new());
        let mut other = live(ASK);
        other.endpoint = "/v1/messages/count_tokens".into();
        assert!(m.take(&other).unwrap_err().contains("no unused answer"));
        let mut get = live(ASK);
        get.method = "GET".into();
        assert!(m.take(&get).is_err());
        assert_eq!(m.unused(), [(1, "/v1/messages".to_owned())]);
    }

    #[test]
    fn a_different_system_prompt_is_a_difference_at_system() {
        let recorded =
            r#"{"model":"m","system":"be brief","messages":[{"role":"user","content":"hi"}]}"#;
        let m = Matcher::new(tape_of(&[recorded]), Vec::new());
        let asked =
            r#"{"model":"m","system":"be long","messages":[{"role":"user","content":"hi"}]}"#;
        let miss = m.take(&live(asked)).unwrap_err();
        assert!(miss.contains("/system"), "{miss}");
        let same =
            r#"{"model":"m","system":"be brief","messages":[{"role":"user","content":"hi"}]}"#;
        assert_eq!(m.take(&live(same)), Ok(0));
    }
}
