//! Reading one trace: the per-line dispatch of `reel stats` and the state it keeps
//! while a trace is read (session facts, open JSON-RPC requests, turn tool blocks).
//!
//! Invariants: every non-blank line is either a record (a JSON object, counted in one
//! class) or a skipped line, never both and never fatal; a new `meta` line closes the
//! session before it (its open requests and unpaired `tool_use` blocks become pending
//! calls) and starts a new pairing scope.

use std::collections::HashMap;
use std::path::Path;

use super::errors::{ErrorRow, ErrorSource, MAX_MESSAGE_BYTES};
use super::records::{self, EndRec, LlmErrorRec, MetaRec, TurnRec};
use super::report::{LineCounts, Session};
use super::tools::{self, McpPairing, Outcome, Pending, PendingKey, TurnPairing, TurnTools};
use super::wire::{self, Head, RawKind, Rpc};
use super::{Collector, StatsError, Warning, lenient};
use reel_trace::Timestamp;
use reel_trace::errors::{self, AnswerCount, ProbeFallback};
use reel_trace::jsonrpc::{HttpCarried, RpcId, RpcKind};
use reel_trace::line::Dir;
use reel_trace::reader::TraceReader;

/// Parses `$text` as `$ty` and evaluates `$body` with it bound to `$v` (and the text
/// it borrows from bound to `$t`). A JSON object that `$ty` refuses although it is valid
/// JSON (a duplicated member: serde refuses, `JSON.parse` keeps the last) is normalised
/// through `serde_json::Value` and read again. A macro because the record borrows from
/// a string that may live only inside it.
macro_rules! with_record {
    ($ty:ident, $text:expr, |$v:ident, $t:ident| $body:expr) => {{
        let text: &str = $text;
        match serde_json::from_str::<$ty<'_>>(text) {
            Ok($v) => {
                let $t: &str = text;
                Ok($body)
            }
            Err(e) if e.classify() == serde_json::error::Category::Data => {
                match serde_json::from_str::<serde_json::Value>(text) {
                    Ok(value) => {
                        let normalised = value.to_string();
                        match serde_json::from_str::<$ty<'_>>(&normalised) {
                            Ok($v) => {
                                let $t: &str = &normalised;
                                Ok($body)
                            }
                            Err(e) => Err(e),
                        }
                    }
                    Err(e) => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    }};
}

/// The facts of the first `meta` line.
#[derive(Default)]
struct MetaFacts {
    label: Option<String>,
    kind: String,
    started_at: Option<String>,
    command: Option<Vec<String>>,
    producer: Option<String>,
}

/// The facts of an `end` line.
#[derive(Default, Clone)]
struct EndFacts {
    t: Option<String>,
    reason: Option<String>,
    exit_code: Option<f64>,
    duration_ms: Option<f64>,
}

/// The state of reading one trace.
pub(super) struct Scan<'c, 'p> {
    c: &'c mut Collector<'p>,
    records: LineCounts,
    skipped: u64,
    meta: Option<MetaFacts>,
    metas: u64,
    first_end: Option<EndFacts>,
    last_end: Option<EndFacts>,
    max_t: String,
    /// The current session's number.
    session: u32,
    /// reel `session` values, interned per trace (0 = none).
    channels: HashMap<String, u32>,
    mcp: McpPairing,
    /// Open client requests by the HTTP request that carried them: an id-less refusal
    /// answers one (the rule check, play and verify pair by).
    carried: HttpCarried<PendingKey>,
    turns: TurnPairing,
    /// The current session's llm exchanges and whether they gave turns.
    llm: reel_trace::llm::TurnCoverage,
    /// Exchanges of the sessions read so far that gave no turns.
    turnless: Vec<reel_trace::llm::Turnless>,
    /// Refused discover probes, until an `initialize` makes them a fallback (the rule
    /// of [`reel_trace::errors`]).
    probes: ProbeFallback<ErrorRow>,
    /// Refused probes the client fell back from.
    fell_back: u64,
}

/// What [`Scan::finish`] hands back.
pub(super) struct TraceFacts {
    pub facts: Session,
    pub metas: u64,
    /// llm exchanges that carried an answer and gave no turns.
    pub turnless: Vec<reel_trace::llm::Turnless>,
    /// Refused discover probes the client fell back from (notes, not errors).
    pub probes_fell_back: u64,
}

impl<'c, 'p> Scan<'c, 'p> {
    pub fn new(c: &'c mut Collector<'p>) -> Self {
        let session = c.next_session;
        c.next_session += 1;
        Scan {
            c,
            records: LineCounts::default(),
            skipped: 0,
            meta: None,
            metas: 0,
            first_end: None,
            last_end: None,
            max_t: String::new(),
            session,
            channels: HashMap::new(),
            mcp: McpPairing::default(),
            carried: HttpCarried::new(),
            turns: TurnPairing::default(),
            llm: reel_trace::llm::TurnCoverage::default(),
            turnless: Vec::new(),
            probes: ProbeFallback::default(),
            fell_back: 0,
        }
    }

    /// Reads one non-blank line. `Err` says why it is not a record (it is then counted
    /// as skipped).
    pub fn line(&mut self, bytes: &[u8]) -> Result<(), String> {
        let problem = match reel_trace::validate_utf8(bytes) {
            Err(e) => format!("not valid UTF-8 (byte {})", e.valid_up_to() + 1),
            Ok(text) if !text.starts_with('{') => not_object(text),
            Ok(text) => match self.read(text) {
                Ok(()) => return Ok(()),
                Err(e) => format!("not JSON ({e})"),
            },
        };
        self.skipped += 1;
        Err(problem)
    }

    /// `n` lines that were lost (too long to read, or dropped by their producer, as a
    /// `reel.gap` event says): counted as skipped.
    pub fn lost_lines(&mut self, n: u64) {
        self.skipped = self.skipped.saturating_add(n);
    }

    /// Reads a line starting with `{` and records it. A line that is valid JSON but
    /// that the summary refuses (a repeated member inside `params` or `result`) is
    /// normalised through `serde_json::Value` and read again.
    fn read(&mut self, text: &str) -> Result<(), serde_json::Error> {
        let mut head = Head::default();
        match wire::read_head(text, &mut head) {
            Ok(()) => self.record(&head, text),
            Err(e) if e.classify() == serde_json::error::Category::Data => {
                let normalised = serde_json::from_str::<serde_json::Value>(text)?.to_string();
                let mut head = Head::default();
                wire::read_head(&normalised, &mut head)?;
                self.record(&head, &normalised)
            }
            Err(e) => Err(e),
        }
    }

    /// Counts and reads one record. `Err` when a turn or end line the head accepted
    /// cannot be read whole (serde_json refuses a number beyond f64, `1e999`, or nesting
    /// past 128 that the head skipped over): it is then a skipped line, said so, rather
    /// than a turn counted in `records` and silently missing from the models.
    fn record(&mut self, head: &Head<'_>, text: &str) -> Result<(), serde_json::Error> {
        match head.ty.get() {
            Some("turn") => {
                with_record!(TurnRec, text, |turn, _t| self.turn_line(&turn))?;
                if head.http_req() > 0 {
                    self.llm.turn(head.http_req());
                }
            }
            Some("end") => {
                with_record!(EndRec, text, |e, _t| self.end_line(&e))?;
            }
            _ => {}
        }
        self.records.total += 1;
        if let Some(t) = head.t.non_empty() {
            if t > self.max_t.as_str() {
                self.max_t.clear();
                self.max_t.push_str(t);
            }
        }
        match head.ty.get() {
            Some("meta") => {
                self.records.meta += 1;
                self.meta_line(text);
            }
            Some("end") => self.records.end += 1,
            Some("turn") => self.records.turn += 1,
            _ => match head.dir.get() {
                Some("in" | "out") => {
                    self.records.message += 1;
                    if head.raw == RawKind::Object {
                        self.message(head, &head.rpc);
                    }
                }
                Some("event" | "command" | "telemetry") => {
                    self.records.event += 1;
                    if head.dir.get() == Some("event") {
                        if head.kind.get() == Some(reel_trace::line::kinds::GAP) {
                            self.gap(text);
                        }
                        self.llm_event(head, text);
                    }
                }
                _ => self.records.other += 1,
            },
        }
        Ok(())
    }

    /// A `reel.gap` event: the lines it says were lost (one when it does not say) were
    /// never read, so they are skipped lines of this trace.
    fn gap(&mut self, text: &str) {
        let lines = serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .and_then(|v| v.get("lines").and_then(serde_json::Value::as_u64))
            .unwrap_or(1);
        self.lost_lines(lines);
    }

    /// An `llm.*` or `reel.llm.body` event: errors, and which exchanges gave turns.
    fn llm_event(&mut self, head: &Head<'_>, text: &str) {
        use reel_trace::line::kinds;
        match head.kind.get() {
            Some(kinds::LLM_ERROR) => {
                let t = head.t.non_empty().map(str::to_owned);
                let _ = with_record!(LlmErrorRec, text, |e, _t| self.llm_error(t, &e));
            }
            Some(kinds::LLM_REQUEST | kinds::LLM_EXCHANGE) => {
                let raw = serde_json::from_str::<serde_json::Value>(text)
                    .ok()
                    .and_then(|mut v| v.get_mut("raw").map(serde_json::Value::take));
                if let Some(raw) = raw {
                    let line = self.records.total;
                    self.llm.exchange(head.http_req(), line, &raw);
                }
            }
            Some(kinds::LLM_BODY) => self.llm.body(head.http_req()),
            _ => {}
        }
    }

    fn meta_line(&mut self, text: &str) {
        self.metas += 1;
        if self.metas > 1 || self.records.total > 1 {
            // A new session: what is still open belongs to the one before.
            self.end_session();
            self.session = self.c.next_session;
            self.c.next_session += 1;
        }
        if self.meta.is_none() {
            let _ = with_record!(MetaRec, text, |m, _t| {
                self.meta = Some(MetaFacts {
                    label: m.label.non_empty().map(str::to_owned),
                    kind: m.kind.non_empty().unwrap_or("mcp").to_owned(),
                    started_at: m.started_at.non_empty().map(str::to_owned),
                    command: m.command(),
                    producer: m.producer_label(),
                });
            });
        }
    }

    fn end_line(&mut self, e: &EndRec<'_>) {
        let facts = EndFacts {
            t: e.t.non_empty().map(str::to_owned),
            reason: e.reason.non_empty().map(str::to_owned),
            exit_code: e.exit_code.0,
            duration_ms: e.duration_ms.0,
        };
        if self.first_end.is_none() {
            self.first_end = Some(facts.clone());
        }
        self.last_end = Some(facts);
    }

    fn turn_line(&mut self, turn: &TurnRec<'_>) {
        self.c.models.add(turn);
        if turn.echoed.0 {
            return; // an echoed turn repeats earlier tool_use blocks verbatim
        }
        let mut tt = TurnTools {
            t: turn.t.non_empty().map(str::to_owned),
            results: Vec::new(),
            uses: Vec::new(),
        };
        for b in turn.blocks.items().iter().filter_map(|b| b.0.as_ref()) {
            match b.ty.get() {
                Some("tool_result") => {
                    let Some(id) = b.tool_use_id.get() else {
                        continue;
                    };
                    let error = b.is_error.0.then(|| {
                        b.content
                            .and_then(|c| records::content_text(c, "\n", MAX_MESSAGE_BYTES))
                            .unwrap_or_else(|| "tool error".to_owned())
                    });
                    tt.results.push((id.to_owned(), error));
                }
                Some("tool_use") => {
                    let Some(id) = b.id.get() else { continue };
                    let name = b.name.non_empty().unwrap_or(tools::UNKNOWN_TOOL);
                    let tool = self.c.tools.intern(name);
                    tt.uses.push((id.to_owned(), tool));
                }
                _ => {}
            }
        }
        self.turns.push(tt);
    }

    /// A JSON-RPC message line: tools/call pairing and JSON-RPC errors.
    fn message(&mut self, head: &Head<'_>, rpc: &Rpc<'_>) {
        let inbound = head.dir.get() == Some("in");
        if inbound {
            // A client's error answer to a server's request is a JSON-RPC error too (the
            // one rule of `reel_trace::errors`).
            if let (None, Some(e)) = (rpc.method.get(), rpc.live_error()) {
                let name = match rpc.live_id() {
                    Some(id) => format!("client answer to id {}", records::scalar_text(id)),
                    None => "client answer".to_owned(),
                };
                self.jsonrpc_error(head, name, e);
                return;
            }
            let (Some(method), Some(id)) = (rpc.method.get(), rpc.live_id()) else {
                return;
            };
            let Some(id) = RpcId::from_raw(id) else {
                return;
            };
            if method == errors::INITIALIZE {
                self.fell_back += self.probes.fell_back().len() as u64;
            }
            let pending = if method == "tools/call" {
                let name = rpc
                    .params
                    .0
                    .as_ref()
                    .and_then(|p| p.name.non_empty())
                    .unwrap_or(tools::UNKNOWN_TOOL);
                Pending::Tool {
                    tool: self.c.tools.intern(name),
                    at: head.t.get().and_then(Timestamp::parse),
                    t: tools::Stamp::new(head.t.get()),
                }
            } else {
                Pending::Other {
                    method: method.into(),
                }
            };
            let key = self.key(head, id);
            let req = head.http_req();
            if req != 0 {
                self.carried.carried(req, key.clone());
            }
            self.mcp.open(key, pending, &mut self.c.tools);
            return;
        }
        // Server to client: a response closes a client request.
        let error = rpc.live_error();
        let is_response =
            rpc.method.get().is_none() && (rpc.result.is_some() || rpc.error.is_some());
        let id = rpc
            .live_id()
            .filter(|_| is_response)
            .and_then(RpcId::from_raw);
        let kind = match (is_response, rpc.error.is_some()) {
            (false, _) => RpcKind::Invalid,
            (true, true) => RpcKind::Error,
            (true, false) => RpcKind::Response,
        };
        let refused = self
            .carried
            .id_less_answer(Dir::Out, kind, rpc.id, head.http_req());
        let key = match (id, refused) {
            (_, Some(key)) => key,
            (Some(id), None) => self.key(head, id),
            (None, None) => {
                if let Some(e) = error {
                    let name = match rpc.live_id() {
                        Some(id) => format!("id {}", records::scalar_text(id)),
                        None => "(notification)".to_owned(),
                    };
                    self.jsonrpc_error(head, name, e);
                }
                return;
            }
        };
        self.close(head, rpc, key, error);
    }

    /// A response (or error) for the client request `key`.
    fn close(
        &mut self,
        head: &Head<'_>,
        rpc: &Rpc<'_>,
        key: PendingKey,
        error: Option<&serde_json::value::RawValue>,
    ) {
        if !self.carried.is_empty() {
            self.carried.forget(&key);
        }
        match self.mcp.pending.remove(&key) {
            Some(Pending::Tool { tool, at, t }) => {
                let outcome = match (error, &rpc.result) {
                    (Some(e), _) => Outcome::Executed {
                        error: Some(records::error_message(e)),
                    },
                    (None, Some(r)) if r.is_error.0 => Outcome::Executed {
                        error: Some(
                            r.content
                                .and_then(|c| records::content_text(c, " ", MAX_MESSAGE_BYTES))
                                .map(|s| s.trim().to_owned())
                                .filter(|s| !s.is_empty())
                                .unwrap_or_else(|| "tool reported an error".to_owned()),
                        ),
                    },
                    (None, Some(r)) if r.is_input_required() => Outcome::InputRequired,
                    _ => Outcome::Executed { error: None },
                };
                let answered_at = head.t.get().and_then(Timestamp::parse);
                McpPairing::close_tool(
                    &mut self.c.tools,
                    &mut self.c.errors,
                    (tool, at, t),
                    answered_at,
                    outcome,
                );
            }
            Some(Pending::Other { method }) => {
                if let Some(e) = error {
                    let row = self.jsonrpc_error_row(head, method.to_string(), e);
                    match errors::answer_counts(Some(&method), true, false) {
                        AnswerCount::ProbeRefused => self.probes.refused(row),
                        _ => self.c.errors.push(row),
                    }
                }
            }
            None => {
                if let Some(e) = error {
                    let name = format!("id {}", key.id_text());
                    self.jsonrpc_error(head, name, e);
                }
            }
        }
    }

    fn key(&mut self, head: &Head<'_>, id: RpcId) -> PendingKey {
        let channel = match head.session.get() {
            None => 0,
            Some(s) => match self.channels.get(s) {
                Some(c) => *c,
                None => {
                    let c = self.channels.len() as u32 + 1;
                    self.channels.insert(s.to_owned(), c);
                    c
                }
            },
        };
        PendingKey {
            session: self.session,
            channel,
            id,
        }
    }

    fn jsonrpc_error(
        &mut self,
        head: &Head<'_>,
        name: String,
        error: &serde_json::value::RawValue,
    ) {
        let row = self.jsonrpc_error_row(head, name, error);
        self.c.errors.push(row);
    }

    fn jsonrpc_error_row(
        &self,
        head: &Head<'_>,
        name: String,
        error: &serde_json::value::RawValue,
    ) -> ErrorRow {
        ErrorRow {
            t: head.t.non_empty().map(str::to_owned),
            source: ErrorSource::Jsonrpc,
            name,
            message: records::error_message(error),
        }
    }

    fn llm_error(&mut self, t: Option<String>, e: &LlmErrorRec<'_>) {
        let raw = e.raw.0.as_ref().or(e.data.0.as_ref());
        let name = raw
            .and_then(|r| r.endpoint.non_empty().or_else(|| r.url.non_empty()))
            .unwrap_or("(llm)")
            .to_owned();
        let message = match raw {
            Some(r) => match (live(r.error), live(r.status)) {
                (Some(err), _) => records::error_message(err),
                (None, Some(status)) => format!("HTTP {}", records::scalar_text(status)),
                (None, None) => "llm error".to_owned(),
            },
            None => "llm error".to_owned(),
        };
        self.c.errors.push(ErrorRow {
            t,
            source: ErrorSource::Llm,
            name,
            message,
        });
    }

    /// Closes the current session: unanswered requests and unpaired tool_use blocks
    /// become pending calls.
    fn end_session(&mut self) {
        self.carried.clear();
        let turnless = std::mem::take(&mut self.llm).turnless();
        self.turnless.extend(turnless);
        self.mcp.finish(&mut self.c.tools);
        self.turns.finish(&mut self.c.tools, &mut self.c.errors);
    }

    pub fn finish(mut self) -> TraceFacts {
        self.end_session();
        // Refused probes no `initialize` followed are errors after all.
        for row in self.probes.unanswered() {
            self.c.errors.push(row);
        }
        let meta = self.meta.take();
        // One session: the reference's rule (first end line). Several: the file spans
        // from the first meta to the last end.
        let several = self.metas > 1;
        let end = if several {
            self.last_end.take()
        } else {
            self.first_end.take()
        };
        let max_t = (!self.max_t.is_empty()).then(|| std::mem::take(&mut self.max_t));
        let started_at = meta.as_ref().and_then(|m| m.started_at.clone());
        let ended_at = end.as_ref().and_then(|e| e.t.clone()).or(max_t);
        let between =
            tools::ms_between(started_at.as_deref(), ended_at.as_deref()).map(|ms| ms as f64);
        let duration_ms = if several {
            between
        } else {
            end.as_ref().and_then(|e| e.duration_ms).or(between)
        };
        let (label, kind, command, producer) = match meta {
            Some(m) => (m.label, Some(m.kind), m.command, m.producer),
            None => (None, None, None, None),
        };
        TraceFacts {
            facts: Session {
                label,
                kind,
                started_at,
                ended_at,
                duration_ms,
                command,
                producer,
                records: self.records,
                skipped_lines: self.skipped,
                end_reason: end.as_ref().and_then(|e| e.reason.clone()),
                exit_code: end.as_ref().and_then(|e| e.exit_code),
            },
            metas: self.metas,
            turnless: std::mem::take(&mut self.turnless),
            probes_fell_back: self.fell_back,
        }
    }
}

impl PendingKey {
    /// The id as mcp-tape's `String(id)` shows it.
    fn id_text(&self) -> String {
        match &self.id {
            RpcId::String(s) | RpcId::Number(s) => s.clone(),
            RpcId::Null => "null".to_owned(),
        }
    }
}

/// A raw member unless it is `null`.
fn live(v: Option<&serde_json::value::RawValue>) -> Option<&serde_json::value::RawValue> {
    v.filter(|v| !lenient::is_null(v))
}

/// Why a line that does not start with `{` is not a record.
fn not_object(text: &str) -> String {
    match serde_json::from_str::<serde::de::IgnoredAny>(text) {
        Err(e) => format!("not JSON ({e})"),
        Ok(_) => match text.as_bytes().first() {
            Some(b'[') => "a JSON array, not an object".to_owned(),
            Some(b'"') => "a JSON string, not an object".to_owned(),
            _ => "a JSON scalar, not an object".to_owned(),
        },
    }
}

impl Collector<'_> {
    /// Reads the trace at `path` (after its rotated companions `path.N`…`path.1`).
    pub fn add_trace(&mut self, path: &Path) -> Result<(), StatsError> {
        self.add_trace_reporting(path, &mut |_| {})
    }

    /// [`Collector::add_trace`], telling `read` the bytes of this trace read so far
    /// after each line.
    pub(super) fn add_trace_reporting(
        &mut self,
        path: &Path,
        read: &mut dyn FnMut(u64),
    ) -> Result<(), StatsError> {
        let mut reader = TraceReader::open(path)?;
        let mut scan = Scan::new(self);
        let mut first = true;
        while let Some(line) = reader.next_line() {
            let line = line?;
            if line.raw.skipped.is_some() {
                // Read past, not held (over the reader's limit): a line not counted.
                scan.lost_lines(1);
                read(reader.bytes_read());
                continue;
            }
            let bytes = line.raw.bytes;
            let Some(start) = bytes.iter().position(|b| !b.is_ascii_whitespace()) else {
                continue; // blank lines are not records
            };
            let counted = scan.line(&bytes[start..]);
            if first {
                if let Err(problem) = counted {
                    return Err(StatsError::NotATrace {
                        path: line.path.to_owned(),
                        line: line.raw.number,
                        problem,
                    });
                }
                first = false;
            }
            read(reader.bytes_read());
        }
        if first {
            return Err(StatsError::Empty {
                path: reader
                    .files()
                    .first()
                    .cloned()
                    .unwrap_or_else(|| path.to_owned()),
            });
        }
        let session = scan.finish();
        let file = path.display().to_string();
        if session.metas > 1 {
            self.warnings.push(Warning {
                code: "multiple-sessions-in-file",
                message: format!(
                    "{file}: {} sessions were appended to one file (one per meta line); \
                     JSON-RPC ids and tool_use ids are paired within each session",
                    session.metas
                ),
                sessions: Some(session.metas),
            });
        }
        if session.probes_fell_back > 0 {
            self.warnings.push(Warning {
                code: "discover-probe-fallback",
                message: format!(
                    "{file}: the server refused the client's server/discover probe and the \
                     client fell back to initialize ({} time(s)): a note, not an error",
                    session.probes_fell_back
                ),
                sessions: None,
            });
        }
        if let Some(note) = reel_trace::llm::turnless_note(&session.turnless) {
            self.warnings.push(Warning {
                code: "llm-turns-missing",
                message: format!("{file}: {note}"),
                sessions: None,
            });
        }
        self.sessions.push(session.facts);
        self.files.push(file);
        Ok(())
    }
}
