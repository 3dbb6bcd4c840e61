//! The recorded client, as `verify` plays it: one session of a trace turned into a
//! script of steps (the client's requests and notifications, in recorded order) with
//! what each step waited for when it was recorded.
//!
//! A recorded client message is sent once everything that *preceded it on the tape* and
//! that it may depend on has happened live: the answers to its earlier requests that had
//! arrived before it was sent, and the server's own requests (sampling, elicitation,
//! roots) that had been asked by then. Concurrent requests stay concurrent (a request
//! sent while another was pending does not wait for it), and a server request on a timer
//! (server-everything asks `roots/list` 350 ms after `initialize`) is waited for at the
//! place the recording saw it, not raced.
//!
//! Invariants:
//! - `messages` holds the session's message lines in trace order; an exchange's
//!   `request`/`response` indices point into it (the exchange builder is offered exactly
//!   these messages).
//! - Steps are in recorded order and each step's `after_responses` lists only client
//!   exchanges whose answer was recorded before the step and after the previous step, so
//!   waiting for each step's list in turn waits for every earlier answer.
//! - The whole session is held in memory (one `String` per message): verify drives a
//!   live server at the server's pace, so a trace it can use is a session a server can
//!   replay, not a 100 MB tape.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use reel_mcp::exchange::{Exchange, ExchangeBuilder, MessageRef, Outcome};
use reel_mcp::http::is_connection_key;
use reel_mcp::jsonrpc::{Envelope, HttpCarried, RpcKind, methods};
use reel_trace::Progress;
use reel_trace::Throttle;
use reel_trace::line::{Line, Meta, parse_line};
use reel_trace::{Dir, OpenError, TraceReader};

/// One message line of the selected session.
#[derive(Clone, Debug)]
pub struct Message {
    /// Tape direction.
    pub dir: Dir,
    /// The `raw` payload, as recorded.
    pub raw: String,
    /// 1-based line number in its file.
    pub line: u64,
}

/// What a step sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    /// A client request: exchange `exchange`.
    Request {
        /// Index into [`Script::exchanges`].
        exchange: usize,
    },
    /// A client notification; `cancels` is the client exchange a
    /// `notifications/cancelled` names.
    Notification {
        /// The exchange it cancels, if it is a cancellation of a pending request.
        cancels: Option<usize>,
    },
}

/// One client message to send, with what it waits for.
#[derive(Clone, Debug)]
pub struct Step {
    /// Index into [`Script::messages`].
    pub message: usize,
    /// What it is.
    pub kind: StepKind,
    /// Client exchanges whose answers were recorded before this step (and after the
    /// previous one): they must be answered live (or time out) first.
    pub after_responses: Vec<usize>,
    /// How many server→client requests (other than `ping`) the recording had seen
    /// before this step: the live server must have asked as many first.
    pub after_server_requests: usize,
}

/// The recorded session, ready to be played.
#[derive(Debug)]
pub struct Script {
    /// The trace file (the named one; rotated companions are read before it).
    pub path: PathBuf,
    /// The meta line of the session's segment (a default one when there is none).
    pub meta: Meta,
    /// The session's messages, in trace order.
    pub messages: Vec<Message>,
    /// Exchanges of both directions, in order of their requests.
    pub exchanges: Vec<Exchange>,
    /// The client's messages to send, in recorded order.
    pub steps: Vec<Step>,
    /// Server→client requests (exchange indices), in recorded order.
    pub server_requests: Vec<usize>,
    /// Server notifications per method.
    pub notifications: BTreeMap<String, u64>,
    /// Lines that could not be used, with their place.
    pub warnings: Vec<String>,
    /// The trace's last line was cut mid-write.
    pub torn: bool,
}

/// Why a script could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScriptError {
    /// The trace cannot be opened or read.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// The trace holds no such session.
    #[error(
        "{path}: session {session} not found: the trace holds {found} session(s) with messages (--session picks one, counted from 1)"
    )]
    NoSession {
        /// The trace.
        path: PathBuf,
        /// What was asked for.
        session: usize,
        /// Sessions found.
        found: usize,
    },
    /// The session has no client request to play.
    #[error("{path}: session {session} has no client request to play against a server")]
    NoRequests {
        /// The trace.
        path: PathBuf,
        /// The session.
        session: usize,
    },
}

impl Script {
    /// Reads session `session` (1-based, in order of first appearance; a session is a
    /// `session` member within a `meta`-delimited segment, as `reel play --session`
    /// counts them) of the trace at `path`, with the session-less lines of an HTTP
    /// recording (`reel:conn-N`: a discover probe, 2026-07-28 traffic), which are played
    /// with it and never counted as a session.
    pub fn load(path: &Path, session: usize) -> Result<Script, ScriptError> {
        Self::load_reporting(path, session, &mut |_| {})
    }

    /// [`Script::load`], telling `progress` how many of the trace's bytes are read.
    pub fn load_reporting(
        path: &Path,
        session: usize,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Script, ScriptError> {
        let mut reader = TraceReader::open(path)?;
        let total = reader.total_bytes();
        let mut throttle = Throttle::default();
        let mut loader = Loader::new(session.max(1));
        while let Some(next) = reader.next_line() {
            let tl = next?;
            let place = tl.location();
            loader.line(tl.raw.bytes, tl.raw.terminated, tl.raw.number, &place);
            let done = reader.bytes_read();
            throttle.tick(Progress { done, total }, progress);
        }
        progress(Progress { done: total, total });
        let only_pool = loader.sessions.is_empty() && loader.pool_seen && session <= 1;
        if !loader.found && !only_pool {
            return Err(ScriptError::NoSession {
                path: path.to_owned(),
                session,
                found: loader.sessions.len(),
            });
        }
        let script = loader.finish(path);
        if !script
            .steps
            .iter()
            .any(|s| matches!(s.kind, StepKind::Request { .. }))
        {
            return Err(ScriptError::NoRequests {
                path: path.to_owned(),
                session,
            });
        }
        Ok(script)
    }

    /// The recorded message at `i`.
    pub fn message(&self, i: usize) -> &Message {
        &self.messages[i]
    }

    /// The recorded answer of exchange `e`, if there is one.
    pub fn response(&self, e: usize) -> Option<&Message> {
        self.exchanges[e].response.map(|r| &self.messages[r.index])
    }

    /// The request of exchange `e`.
    pub fn request(&self, e: usize) -> &Message {
        &self.messages[self.exchanges[e].request.index]
    }

    /// Whether exchange `e` is a long-lived request (`subscriptions/listen`) the
    /// recorded server answered only after the client's last request: when the session
    /// ended. Verify awaits no such answer (it ends the session itself), as play sends
    /// none early.
    pub fn answered_at_end(&self, e: usize) -> bool {
        let Some(r) = self.exchanges[e].response else {
            return false;
        };
        let method = Envelope::parse(&self.request(e).raw)
            .and_then(|env| env.method.map(|m| m.into_owned()));
        if !method.as_deref().is_some_and(methods::is_long_lived) {
            return false;
        }
        !self
            .steps
            .iter()
            .any(|s| matches!(s.kind, StepKind::Request { .. }) && s.message > r.index)
    }

    /// Client requests in the script.
    pub fn request_count(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| matches!(s.kind, StepKind::Request { .. }))
            .count()
    }
}

struct Loader {
    selected: usize,
    /// Sessions numbered so far (connection-keyed lines are never numbered: they are
    /// the session-less traffic, played with whichever session is selected).
    sessions: Vec<(u64, Option<String>)>,
    /// Open client requests by the HTTP exchange that carried them (`http.req`).
    carried: HttpCarried<usize>,
    /// Id-less HTTP refusals paired by `http.req`: (exchange, its answer).
    refusals: Vec<(usize, MessageRef)>,
    /// Session-less lines were seen (a trace of only those is one session).
    pool_seen: bool,
    segment: u64,
    segment_meta: Option<Meta>,
    meta: Option<Meta>,
    found: bool,
    builder: ExchangeBuilder,
    messages: Vec<Message>,
    steps: Vec<Step>,
    pending_responses: Vec<usize>,
    server_requests: Vec<usize>,
    server_requests_seen: usize,
    notifications: BTreeMap<String, u64>,
    warnings: Vec<String>,
    torn: bool,
}

impl Loader {
    fn new(selected: usize) -> Loader {
        Loader {
            selected,
            sessions: Vec::new(),
            carried: HttpCarried::new(),
            refusals: Vec::new(),
            pool_seen: false,
            segment: 0,
            segment_meta: None,
            meta: None,
            found: false,
            builder: ExchangeBuilder::new(),
            messages: Vec::new(),
            steps: Vec::new(),
            pending_responses: Vec::new(),
            server_requests: Vec::new(),
            server_requests_seen: 0,
            notifications: BTreeMap::new(),
            warnings: Vec::new(),
            torn: false,
        }
    }

    fn line(&mut self, bytes: &[u8], terminated: bool, number: u64, place: &str) {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let line = match parse_line(bytes) {
            Ok(l) => l,
            Err(e) if !terminated => {
                self.torn = true;
                self.warnings.push(format!(
                    "{place}: torn last line ignored ({e}); the recording was cut mid-write"
                ));
                return;
            }
            Err(e) => {
                self.warnings.push(format!("{place}: line skipped: {e}"));
                return;
            }
        };
        match line {
            Line::Meta(m) => {
                self.segment += 1;
                self.segment_meta = Some(*m);
            }
            Line::Message(v) => {
                let session = v.session.as_deref();
                let pooled = session.is_some_and(is_connection_key);
                if !pooled {
                    let key = (self.segment, session.map(str::to_owned));
                    let number_of_session = match self.sessions.iter().position(|s| *s == key) {
                        Some(i) => i + 1,
                        None => {
                            self.sessions.push(key);
                            self.sessions.len()
                        }
                    };
                    if number_of_session != self.selected {
                        return;
                    }
                }
                if pooled {
                    self.pool_seen = true;
                } else {
                    self.found = true;
                }
                if self.meta.is_none() {
                    self.meta = Some(self.segment_meta.clone().unwrap_or_default());
                }
                let req = v.http_req();
                match (v.dir(), v.raw_str()) {
                    (Some(dir @ (Dir::In | Dir::Out)), Some(raw)) => {
                        self.message(dir, session, raw, number, place, req);
                    }
                    _ => self
                        .warnings
                        .push(format!("{place}: message line without `raw` skipped")),
                }
            }
            _ => {}
        }
    }

    fn message(
        &mut self,
        dir: Dir,
        session: Option<&str>,
        raw: &str,
        line: u64,
        place: &str,
        req: u64,
    ) {
        let index = self.messages.len();
        self.messages.push(Message {
            dir,
            raw: raw.to_owned(),
            line,
        });
        let env = Envelope::parse(raw);
        let kind = env
            .as_ref()
            .map_or_else(|| Envelope::kind_of(raw), Envelope::kind);
        // (The builder is offered every message all the same: its message indices
        // must stay those of `messages`.)
        let pushed = self.builder.push(session, dir, raw, line);
        // An HTTP refusal without an id (a 400 to a discover probe) answers the request
        // its HTTP exchange carried.
        let id = env.as_ref().and_then(|e| e.id);
        if let Some(e) = self.carried.id_less_answer(dir, kind, id, req) {
            self.refusals.push((e, MessageRef { index, line }));
            self.pending_responses.push(e);
            return;
        }
        if let (Dir::In, Some(e)) = (dir, pushed.opened) {
            self.carried.carried(req, e);
        }
        if let Some(e) = pushed.closed {
            self.carried.forget(&e);
        }
        let method = env
            .as_ref()
            .and_then(|e| e.method.as_deref())
            .unwrap_or_default()
            .to_owned();
        match (dir, kind) {
            (Dir::In, RpcKind::Request) => match pushed.opened {
                Some(exchange) => self.step(index, StepKind::Request { exchange }),
                None => self.warnings.push(format!(
                    "{place}: request skipped: its id is still pending from an earlier request"
                )),
            },
            (Dir::In, RpcKind::Notification) => {
                let cancels = pushed.attached_to.filter(|&e| {
                    let ex = &self.builder.exchanges()[e];
                    method == methods::CANCELLED && ex.cancelled && ex.request_dir == Dir::In
                });
                self.step(index, StepKind::Notification { cancels });
            }
            // The client's answers to the server's requests are sent when the live
            // server asks, not at their recorded place.
            (Dir::In, RpcKind::Response | RpcKind::Error) => {}
            (Dir::Out, RpcKind::Response | RpcKind::Error) => {
                if let Some(e) = pushed.closed {
                    self.pending_responses.push(e);
                }
            }
            (Dir::Out, RpcKind::Request) => {
                if let Some(e) = pushed.opened {
                    self.server_requests.push(e);
                    if method != PING {
                        self.server_requests_seen += 1;
                    }
                }
            }
            (Dir::Out, RpcKind::Notification) => {
                *self.notifications.entry(method).or_default() += 1;
            }
            (_, RpcKind::Batch) => self.warnings.push(format!(
                "{place}: a JSON-RPC batch is not played (no MCP revision since 2025-03-26 allows them)"
            )),
            _ => self
                .warnings
                .push(format!("{place}: not a JSON-RPC message; skipped")),
        }
    }

    fn step(&mut self, message: usize, kind: StepKind) {
        self.steps.push(Step {
            message,
            kind,
            after_responses: std::mem::take(&mut self.pending_responses),
            after_server_requests: self.server_requests_seen,
        });
    }

    fn finish(self, path: &Path) -> Script {
        let mut exchanges = self.builder.exchanges().to_vec();
        for (e, answer) in self.refusals {
            if let Some(ex) = exchanges.get_mut(e) {
                let code = Envelope::parse(&self.messages[answer.index].raw)
                    .and_then(|env| env.error_parts().and_then(|(c, _)| c));
                ex.response = Some(answer);
                ex.outcome = Outcome::Error(code);
            }
        }
        Script {
            path: path.to_owned(),
            meta: self.meta.unwrap_or_default(),
            messages: self.messages,
            exchanges,
            steps: self.steps,
            server_requests: self.server_requests,
            notifications: self.notifications,
            warnings: self.warnings,
            torn: self.torn,
        }
    }
}

/// The part of a line's `http` member the script needs.
/// `ping` from the server is answered but never waited for: servers send it on timers.
pub const PING: &str = "ping";

#[cfg(test)]
mod tests {
    use super::*;

    fn load(lines: &[&str], session: usize) -> Result<Script, ScriptError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, lines.join("\n")).unwrap();
        Script::load(&p, session)
    }

    const META: &str = r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z"}"#;

    #[test]
    fn steps_wait_for_earlier_answers_and_server_requests() {
        let s = load(
            &[
                META,
                r#"{"t":"x","dir":"in","raw":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}}"#,
                r#"{"t":"x","dir":"out","raw":{"jsonrpc":"2.0","id":1,"result":{}}}"#,
                r#"{"t":"x","dir":"in","raw":{"jsonrpc":"2.0","method":"notifications/initialized"}}"#,
                r#"{"t":"x","dir":"in","raw":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}}"#,
                // Sent while 2 is pending: concurrent, does not wait for it.
                r#"{"t":"x","dir":"in","raw":{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"b"}}}"#,
                r#"{"t":"x","dir":"out","raw":{"jsonrpc":"2.0","id":0,"method":"roots/list"}}"#,
                r#"{"t":"x","dir":"in","raw":{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}}"#,
                r#"{"t":"x","dir":"out","raw":{"jsonrpc":"2.0","method":"notifications/message","params":{}}}"#,
                r#"{"t":"x","dir":"out","raw":{"jsonrpc":"2.0","id":3,"result":{}}}"#,
                r#"{"t":"x","dir":"out","raw":{"jsonrpc":"2.0","id":2,"result":{}}}"#,
                r#"{"t":"x","dir":"in","raw":{"jsonrpc":"2.0","id":4,"method":"ping"}}"#,
                r#"{"t":"x","dir":"in","raw":{"jsonrpc":"2.0","id":5,"meth"#,
            ],
            1,
        )
        .unwrap();
        let waits: Vec<(Vec<usize>, usize)> = s
            .steps
            .iter()
            .map(|st| (st.after_responses.clone(), st.after_server_requests))
            .collect();
        // Exchanges: 0 initialize, 1 call a, 2 call b, 3 roots/list (server), 4 ping.
        assert_eq!(
            waits,
            [
                (vec![], 0),
                (vec![0], 0),
                (vec![], 0),
                (vec![], 0),
                (vec![2, 1], 1)
            ]
        );
        assert_eq!(s.server_requests, [3]);
        assert_eq!(s.notifications.get("notifications/message"), Some(&1));
        assert!(s.torn);
        assert_eq!(s.request_count(), 4);
        assert_eq!(s.response(3).unwrap().dir, Dir::In);
    }

    #[test]
    fn cancellations_name_their_exchange() {
        let s = load(
            &[
                META,
                r#"{"t":"x","dir":"in","raw":{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}}"#,
                r#"{"t":"x","dir":"in","raw":{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}}"#,
            ],
            1,
        )
        .unwrap();
        assert_eq!(s.steps[1].kind, StepKind::Notification { cancels: Some(0) });
        assert!(s.exchanges[0].cancelled);
    }

    #[test]
    fn missing_sessions_and_empty_sessions_are_errors() {
        let lines = [
            META,
            r#"{"t":"x","dir":"out","raw":{"jsonrpc":"2.0","method":"notifications/message"}}"#,
        ];
        assert!(matches!(
            load(&lines, 1),
            Err(ScriptError::NoRequests { .. })
        ));
        assert!(matches!(
            load(&lines, 2),
            Err(ScriptError::NoSession { found: 1, .. })
        ));
    }
}
