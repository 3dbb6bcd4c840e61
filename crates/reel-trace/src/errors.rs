//! What counts as an error in a run: the one rule every count of errors uses (`reel ls`
//! and the viewer's runs list through the end line's `counts.errors` or a scan,
//! `reel stats`' errors list, the OTLP export's span status).
//!
//! The rule:
//! - a JSON-RPC error response is an error (either way: a client's error answer to a
//!   server's request too), and so is a tool's own error (a result with
//!   `isError: true`), an `llm.error` event, and a `tool_result` block marked
//!   `is_error` in an llm trace (once per `tool_use_id`);
//! - except a refused `server/discover` probe that the client followed with a legacy
//!   `initialize`: a 2026-07-28 client probes first and falls back, as the protocol
//!   says it may, so the refusal is a note ([`ErrorTally::notes`]). A refusal never
//!   followed by `initialize` stays an error.
//!
//! [`ErrorTally`] applies the rule to a trace's lines in order; readers that pair
//! requests with answers themselves (stats) ask [`answer_counts`] about each answer
//! and keep their refusals in a [`ProbeFallback`].

use std::collections::HashSet;

use serde_json::Value;

use crate::jsonrpc::{Envelope, HttpCarried, RpcId, RpcKind};
use crate::line::Dir;

/// The method a 2026-07-28 client probes a server with first.
pub const DISCOVER: &str = "server/discover";
/// The legacy handshake a client falls back to.
pub const INITIALIZE: &str = "initialize";

/// What one answer counts as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerCount {
    /// Not an error.
    Fine,
    /// An error.
    Error,
    /// A refused `server/discover` probe: an error unless `initialize` follows.
    ProbeRefused,
}

/// The rule for one answer: `method` is the request it answers (when known),
/// `jsonrpc_error` whether it is a JSON-RPC error, `tool_error` whether its result
/// says `isError: true`.
pub fn answer_counts(method: Option<&str>, jsonrpc_error: bool, tool_error: bool) -> AnswerCount {
    match (jsonrpc_error, method) {
        (true, Some(DISCOVER)) => AnswerCount::ProbeRefused,
        (true, _) => AnswerCount::Error,
        (false, _) if tool_error => AnswerCount::Error,
        _ => AnswerCount::Fine,
    }
}

/// Refused discover probes waiting to learn whether the client fell back to
/// `initialize` (then they are notes) or not (then they are errors).
#[derive(Debug)]
pub struct ProbeFallback<T> {
    waiting: Vec<T>,
}

impl<T> Default for ProbeFallback<T> {
    fn default() -> Self {
        ProbeFallback {
            waiting: Vec::new(),
        }
    }
}

impl<T> ProbeFallback<T> {
    /// A probe was refused.
    pub fn refused(&mut self, what: T) {
        self.waiting.push(what);
    }

    /// An `initialize` request came: the refusals so far were a fallback; returns them.
    pub fn fell_back(&mut self) -> Vec<T> {
        std::mem::take(&mut self.waiting)
    }

    /// The end of the trace: the refusals no `initialize` followed (errors).
    pub fn unanswered(&mut self) -> Vec<T> {
        std::mem::take(&mut self.waiting)
    }
}

/// The rule applied to a trace's lines in order.
#[derive(Debug, Default)]
pub struct ErrorTally {
    errors: u64,
    notes: u64,
    probes: ProbeFallback<()>,
    /// Open discover probes: by (session, id), and by the HTTP request that carried
    /// them (a refusal may be id-less).
    open_probes: HashSet<(Option<String>, RpcId)>,
    carried: HttpCarried<RpcId>,
    /// `tool_use_id`s whose error result was counted (an llm request re-sends them).
    tool_results: HashSet<String>,
}

/// A result's `isError`, read without building the result.
fn tool_error(raw: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Msg {
        #[serde(default)]
        result: Option<Res>,
    }
    #[derive(serde::Deserialize)]
    struct Res {
        #[serde(default, rename = "isError")]
        is_error: Option<Value>,
    }
    raw.contains("\"isError\"")
        && serde_json::from_str::<Msg>(raw)
            .ok()
            .and_then(|m| m.result?.is_error)
            .and_then(|v| v.as_bool())
            == Some(true)
}

impl ErrorTally {
    /// A message line: `dir`, its `session`, `http.req` (0: none) and `raw`.
    pub fn message(&mut self, dir: Dir, session: Option<&str>, http_req: u64, raw: &str) {
        self.message_known(dir, session, http_req, raw, None);
    }

    /// [`ErrorTally::message`] for a producer that already knows whether `raw` is a
    /// JSON-RPC error response (`is_error`): most messages then cost two substring
    /// searches and no parse.
    pub fn message_known(
        &mut self,
        dir: Dir,
        session: Option<&str>,
        http_req: u64,
        raw: &str,
        is_error: Option<bool>,
    ) {
        match dir {
            Dir::In => {
                // A client's error answer to a server's request (a refused sampling
                // request) is a JSON-RPC error too.
                let client_error = match is_error {
                    Some(known) => known,
                    None => raw.contains("\"error\"") && Envelope::kind_of(raw) == RpcKind::Error,
                };
                if client_error {
                    self.errors += 1;
                    return;
                }
                if !(raw.contains(DISCOVER) || raw.contains("\"initialize\"")) {
                    return;
                }
                let Some(env) = Envelope::parse(raw) else {
                    return;
                };
                match (env.method.as_deref(), env.kind()) {
                    (Some(DISCOVER), RpcKind::Request) => {
                        if let Some(id) = env.id.and_then(RpcId::from_raw) {
                            self.carried.carried(http_req, id.clone());
                            self.open_probes.insert((session.map(str::to_owned), id));
                        }
                    }
                    (Some(INITIALIZE), RpcKind::Request) => {
                        self.notes += self.probes.fell_back().len() as u64;
                    }
                    _ => {}
                }
            }
            Dir::Out => {
                let jsonrpc_error = match is_error {
                    Some(known) => known,
                    None => raw.contains("\"error\"") && Envelope::kind_of(raw) == RpcKind::Error,
                };
                let tool_error = !jsonrpc_error && tool_error(raw);
                if !(jsonrpc_error || tool_error) {
                    return;
                }
                let probe = jsonrpc_error
                    && !self.open_probes.is_empty()
                    && Envelope::parse(raw)
                        .is_some_and(|env| self.answers_probe(session, http_req, &env));
                let method = probe.then_some(DISCOVER);
                match answer_counts(method, jsonrpc_error, tool_error) {
                    AnswerCount::Fine => {}
                    AnswerCount::Error => self.errors += 1,
                    AnswerCount::ProbeRefused => self.probes.refused(()),
                }
            }
            _ => {}
        }
    }

    /// Whether an error answers an open discover probe (by id, or id-less on the HTTP
    /// request that carried it).
    fn answers_probe(&mut self, session: Option<&str>, http_req: u64, env: &Envelope<'_>) -> bool {
        if let Some(id) = self
            .carried
            .id_less_answer(Dir::Out, env.kind(), env.id, http_req)
        {
            self.open_probes.retain(|(_, open)| *open != id);
            return true;
        }
        let Some(id) = env.id.and_then(RpcId::from_raw) else {
            return false;
        };
        let key = (session.map(str::to_owned), id);
        let hit = self.open_probes.remove(&key);
        if hit {
            self.carried.forget(&key.1);
        }
        hit
    }

    /// An `llm.error` event.
    pub fn llm_error(&mut self) {
        self.errors += 1;
    }

    /// A turn's `tool_result` block marked `is_error`, by its `tool_use_id`.
    pub fn tool_result_error(&mut self, tool_use_id: &str) {
        if self.tool_results.insert(tool_use_id.to_owned()) {
            self.errors += 1;
        }
    }

    /// A turn: its `tool_result` blocks marked `is_error` count once per id.
    pub fn turn(&mut self, turn: &crate::line::Turn) {
        for b in turn.blocks() {
            if let crate::line::Block::ToolResult {
                tool_use_id,
                is_error: Some(true),
                ..
            } = b
            {
                self.tool_result_error(tool_use_id);
            }
        }
    }

    /// The errors so far (refused probes no `initialize` followed yet included).
    pub fn errors(&self) -> u64 {
        self.errors + self.probes.waiting.len() as u64
    }

    /// Refused discover probes the client fell back from.
    pub fn notes(&self) -> u64 {
        self.notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(t: &mut ErrorTally, lines: &[(Dir, Option<&str>, u64, &str)]) {
        for (dir, session, req, raw) in lines {
            t.message(*dir, *session, *req, raw);
        }
    }

    #[test]
    fn tool_errors_and_jsonrpc_errors_count() {
        let mut t = ErrorTally::default();
        feed(
            &mut t,
            &[
                (
                    Dir::In,
                    None,
                    0,
                    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
                ),
                (
                    Dir::Out,
                    None,
                    0,
                    r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}"#,
                ),
                (
                    Dir::In,
                    None,
                    0,
                    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}"#,
                ),
                (
                    Dir::Out,
                    None,
                    0,
                    r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"\"error\""}],"isError":false}}"#,
                ),
                (
                    Dir::Out,
                    None,
                    0,
                    r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"m"}}"#,
                ),
            ],
        );
        assert_eq!((t.errors(), t.notes()), (2, 0));
    }

    #[test]
    fn a_clients_error_answer_counts_too() {
        let mut t = ErrorTally::default();
        feed(
            &mut t,
            &[(
                Dir::In,
                None,
                0,
                r#"{"jsonrpc":"2.0","id":"s1","error":{"code":-1,"message":"no"}}"#,
            )],
        );
        assert_eq!(t.errors(), 1);
    }

    #[test]
    fn a_refused_probe_the_client_fell_back_from_is_a_note() {
        let probe = r#"{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{}}"#;
        let refusal = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"no"}}"#;
        let refusal_by_id = r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"no"}}"#;
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
        // Over HTTP, id-less on the probe's own request; then the legacy handshake.
        let mut t = ErrorTally::default();
        feed(
            &mut t,
            &[
                (Dir::In, None, 1, probe),
                (Dir::Out, None, 1, refusal),
                (Dir::In, Some("s"), 2, init),
            ],
        );
        assert_eq!((t.errors(), t.notes()), (0, 1));
        // Over stdio, by id.
        let mut t = ErrorTally::default();
        feed(
            &mut t,
            &[
                (Dir::In, None, 0, probe),
                (Dir::Out, None, 0, refusal_by_id),
                (Dir::In, None, 0, init),
            ],
        );
        assert_eq!((t.errors(), t.notes()), (0, 1));
        // No fallback: an error.
        let mut t = ErrorTally::default();
        feed(
            &mut t,
            &[
                (Dir::In, None, 0, probe),
                (Dir::Out, None, 0, refusal_by_id),
            ],
        );
        assert_eq!((t.errors(), t.notes()), (1, 0));
        // An error to another request is one whatever follows.
        let mut t = ErrorTally::default();
        feed(
            &mut t,
            &[(Dir::Out, None, 0, refusal_by_id), (Dir::In, None, 0, init)],
        );
        assert_eq!((t.errors(), t.notes()), (1, 0));
    }

    #[test]
    fn the_rule_for_one_answer() {
        assert_eq!(
            answer_counts(Some("tools/call"), false, true),
            AnswerCount::Error
        );
        assert_eq!(
            answer_counts(Some(DISCOVER), true, false),
            AnswerCount::ProbeRefused
        );
        assert_eq!(answer_counts(None, true, false), AnswerCount::Error);
        assert_eq!(answer_counts(Some("ping"), false, false), AnswerCount::Fine);
    }
}
