//! Answers that are neither JSON-RPC messages nor turns, compared by content so that no
//! recorded answer can change without a drift: the body of an llm exchange that gave no
//! turns (an API reel does not read, a body it could not read), and a line that is not
//! JSON (a stdio server's banner, a log line on stdout).
//!
//! Each becomes a [`ValueRec`]: a value held in memory (capped at [`VALUE_MAX`] bytes of
//! text; a larger one is compared by its fingerprint alone), paired with the other side's
//! record of the same key in order (`POST /v1beta/…`, a direction of non-JSON lines).
//! An llm body is compared as its pieces: each SSE event's `data` as JSON when it is,
//! a whole body as JSON when it is, else text; the user's `--ignore` pointers address
//! `{"status", "body": [piece…]}`.

use std::collections::BTreeMap;
use std::sync::Arc;

use reel_mcp::normalize::{KeyHasher as Fingerprint, Normalizer, canonical};
use reel_trace::MessageView;
use serde_json::{Value, json};

use crate::side::{Loc, Ring};

/// The most text of one answer kept to compare and show; past it only the fingerprint.
pub(crate) const VALUE_MAX: usize = 1 << 20;

/// One answer outside JSON-RPC and turns.
#[derive(Debug)]
pub(crate) struct ValueRec {
    /// What pairs it (`llm POST /v1beta/…`, `not JSON, server→client`).
    pub key: Arc<str>,
    /// How drifts name it.
    pub label: Arc<str>,
    pub loc: Loc,
    /// The value's fingerprint (of its canonical text, or of the bytes past the cap).
    pub fp: u128,
    /// The value, unless it was larger than [`VALUE_MAX`].
    pub value: Option<Arc<Value>>,
    pub context: Ring,
}

/// The llm exchanges of one session being read, by `http.req`.
#[derive(Default)]
pub(crate) struct LlmBodies {
    open: BTreeMap<u64, Pending>,
}

struct Pending {
    what: String,
    status: u64,
    loc: Loc,
    pieces: Vec<Value>,
    text_len: usize,
    overflow: Option<Fingerprint>,
    turns: bool,
}

impl LlmBodies {
    /// An `llm.request` or `llm.exchange` event.
    pub(crate) fn exchange(&mut self, v: &MessageView<'_>, loc: Loc) {
        let Some(raw) = v
            .raw_str()
            .and_then(|r| serde_json::from_str::<Value>(r).ok())
        else {
            return;
        };
        let s = |k: &str| raw.get(k).and_then(Value::as_str).unwrap_or("");
        self.open.insert(
            v.http_req(),
            Pending {
                what: format!("{} {}", s("method"), s("endpoint")),
                status: raw.get("status").and_then(Value::as_u64).unwrap_or(0),
                loc,
                pieces: Vec::new(),
                text_len: 0,
                overflow: None,
                turns: false,
            },
        );
    }

    /// A `reel.llm.body` piece.
    pub(crate) fn piece(&mut self, v: &MessageView<'_>) {
        let Some(p) = self.open.get_mut(&v.http_req()) else {
            return;
        };
        // A piece that is not UTF-8 compares as its base64 text.
        let text: &str = match (&v.text, &v.bytes) {
            (Some(t), _) => t,
            (None, Some(b)) => b,
            _ => return,
        };
        p.text_len += text.len();
        if p.text_len > VALUE_MAX || p.overflow.is_some() {
            let f = p.overflow.get_or_insert_with(|| {
                let mut f = Fingerprint::new();
                for piece in &p.pieces {
                    f.write(canonical(piece).as_bytes());
                }
                f
            });
            f.write(text.as_bytes());
            p.pieces.clear();
            return;
        }
        p.pieces.push(piece_value(text));
    }

    /// A turn of exchange `n`: that exchange is compared by its turns.
    pub(crate) fn turn(&mut self, n: u64) {
        if let Some(p) = self.open.get_mut(&n) {
            p.turns = true;
        }
    }

    /// The session ended: the exchanges that gave no turns but had a body, in order.
    pub(crate) fn finish(
        &mut self,
        normalizer: &Normalizer,
    ) -> Vec<(Arc<str>, Loc, u128, Option<Value>)> {
        let open = std::mem::take(&mut self.open);
        open.into_values()
            .filter(|p| !p.turns && (p.text_len > 0))
            .map(|p| {
                let key: Arc<str> = Arc::from(format!("llm {}", p.what));
                match p.overflow {
                    Some(f) => (key, p.loc, f.finish128(), None),
                    None => {
                        let mut v = json!({ "status": p.status, "body": p.pieces });
                        for ptr in normalizer.ignored() {
                            ptr.remove_from(&mut v);
                        }
                        let fp = Fingerprint::of(canonical(&v).as_bytes());
                        (key, p.loc, fp, Some(v))
                    }
                }
            })
            .collect()
    }
}

/// One body piece as compared: an SSE event's `data` lines (each as JSON when it is), a
/// whole body as JSON when it is, else its text.
fn piece_value(text: &str) -> Value {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return v;
    }
    let data: Vec<Value> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| {
            let d = d.strip_prefix(' ').unwrap_or(d);
            serde_json::from_str(d).unwrap_or_else(|_| Value::String(d.to_owned()))
        })
        .collect();
    match data.len() {
        0 => Value::String(text.to_owned()),
        1 => data.into_iter().next().unwrap_or(Value::Null),
        _ => Value::Array(data),
    }
}

/// A non-JSON line's value: its text, or its bytes as base64 (`{"bytes": …}`).
pub(crate) fn nonjson_value(v: &MessageView<'_>) -> Value {
    match (&v.text, &v.bytes) {
        (Some(t), _) => Value::String(t.to_string()),
        (None, Some(b)) => json!({ "bytes": b.as_ref() }),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_pieces_compare_as_their_data() {
        assert_eq!(
            piece_value("data: {\"a\":1}\n\n"),
            json!({"a": 1}),
            "an SSE event's data as JSON"
        );
        assert_eq!(piece_value("event: x\ndata: [DONE]\n\n"), json!("[DONE]"));
        assert_eq!(piece_value("{\"whole\":true}"), json!({"whole": true}));
        assert_eq!(piece_value("plain text"), json!("plain text"));
        assert_eq!(
            piece_value("data: 1\ndata: {\"b\":2}\n\n"),
            json!([1, {"b": 2}])
        );
    }
}
