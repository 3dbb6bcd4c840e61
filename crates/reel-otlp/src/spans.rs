//! From trace lines to spans: [`SpanBuilder`] reads a trace line by line, in order, and
//! hands out each span as soon as it is complete, so a file of any size (or one still
//! being written) is exported in bounded memory: what it holds is the open requests and
//! model calls, never the finished ones.
//!
//! What becomes a span:
//! - each recorded session (a `meta` line up to its `end`): one span of kind INTERNAL,
//!   the parent of everything in it; its trace id is the trace of the session;
//! - each MCP request with its response (paired as everywhere in reel, by session,
//!   direction and id, and id-less HTTP refusals by the HTTP request that carried them),
//!   and each notification: kind CLIENT, named and attributed by the OpenTelemetry
//!   semantic conventions for MCP (`{mcp.method.name} {target}`). A request that carried
//!   a W3C `traceparent` in `params._meta` joins the caller's trace as a child of the
//!   caller's span, linked to the session's span;
//! - each model call (the lines of one HTTP request of an LLM recording: the request
//!   turns, `llm.request`, the assistant turn, or `llm.error` / `llm.truncated` /
//!   `llm.exchange`): kind CLIENT, by the GenAI conventions
//!   (`{gen_ai.operation.name} {gen_ai.request.model}`), usage from the trace's
//!   normalised usage (see the `genai` module).
//!
//! No payload is copied into a span (the conventions make tool arguments and results
//! opt-in, and they are what redaction guards): names, ids, codes, error messages and
//! counts only.

use std::collections::HashMap;

use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use reel_trace::Timestamp;
use reel_trace::jsonrpc::{Envelope, Paired, Pairer, RpcKind};
use reel_trace::line::{Line, MessageView, Meta, Turn, kinds, parse_line};
use serde_json::Value;

use crate::attrs::{Attrs, names};
use crate::genai::ModelCall;
use crate::ids::Seed;
use crate::mcp::{self, OpenCall};
pub use crate::scope::MAX_NAME;
use crate::scope::{SessionScope, Transport, nanos};

/// Reads trace lines in order and produces spans.
#[derive(Debug, Default)]
pub struct SpanBuilder {
    file: Option<String>,
    session: Option<Session>,
    done: Vec<Span>,
    last_ns: u64,
    file_index: u64,
}

/// One recorded session: its span's facts, and what is open in it.
#[derive(Debug)]
struct Session {
    /// What its child spans share.
    scope: SessionScope,
    start_ns: u64,
    name: String,
    attrs: Attrs,
    calls: Pairer<OpenCall>,
    models: HashMap<u64, ModelCall>,
    exit_code: Option<i64>,
}

impl Session {
    fn open(
        meta: Option<&Meta>,
        (meta_line, line, file_index): (&[u8], u64, u64),
        file: Option<&str>,
        at: u64,
    ) -> Session {
        let label = meta
            .and_then(|m| m.label.clone())
            .unwrap_or_else(|| "run".into());
        let kind = meta.map_or("mcp", |m| m.kind_or_default()).to_owned();
        let start_ns = meta
            .and_then(|m| m.started_at.as_deref())
            .and_then(Timestamp::parse)
            .map_or(at, nanos);
        let transport = meta.map(Transport::of).unwrap_or_default();
        let mut attrs = Attrs::default();
        attrs
            .str(names::REEL_LABEL, label.clone())
            .str(names::REEL_KIND, kind.clone())
            .opt_str(names::REEL_FILE, file);
        if let Some(args) = meta.and_then(Meta::command_args).filter(|a| !a.is_empty()) {
            let words: Vec<String> = args.into_iter().map(str::to_owned).collect();
            attrs.str(names::REEL_COMMAND, reel_trace::names::shell_words(&words));
        }
        transport.describe(&mut attrs);
        Session {
            scope: SessionScope::new(Seed::of_meta(meta_line, line), file_index, transport),
            start_ns,
            name: format!("reel {kind} session {label}"),
            attrs,
            calls: Pairer::new(),
            models: HashMap::new(),
            exit_code: None,
        }
    }

    /// Closes what is still open and the session's own span, at `end`.
    fn close(mut self, end: u64, out: &mut Vec<Span>) {
        let mut open = self.calls.drain_pending();
        open.sort_by_key(|(_, c)| c.line);
        for (_, call) in open {
            out.push(call.unanswered(&self.scope, end, "pending"));
        }
        let mut models: Vec<ModelCall> = self.models.drain().map(|(_, m)| m).collect();
        models.sort_by_key(|m| m.line);
        for m in models {
            out.push(m.into_span(&self.scope, end));
        }
        if let Some(code) = self.exit_code {
            self.attrs.int(names::REEL_EXIT_CODE, code);
        }
        let mut protocols: Vec<&String> = self.scope.protocol.values().collect();
        protocols.sort();
        protocols.dedup();
        if let [one] = protocols.as_slice() {
            self.attrs.str(names::MCP_PROTOCOL, (*one).clone());
        }
        out.push(Span {
            trace_id: self.scope.seed.trace_id(),
            span_id: self.scope.seed.session_span_id(),
            name: self.name,
            kind: SpanKind::Internal as i32,
            start_time_unix_nano: self.start_ns,
            end_time_unix_nano: end.max(self.start_ns),
            attributes: self.attrs.0,
            ..Span::default()
        });
    }

    fn message(&mut self, line: u64, m: &MessageView<'_>, at: u64, out: &mut Vec<Span>) {
        let (Some(dir), Some(raw)) = (m.dir(), m.raw_str()) else {
            return;
        };
        let Some(env) = Envelope::parse(raw) else {
            return;
        };
        let session = m.session.as_deref();
        match env.kind() {
            RpcKind::Notification => {
                out.push(mcp::notification(&self.scope, line, at, dir, session, &env));
            }
            RpcKind::Request | RpcKind::Response | RpcKind::Error => {
                let paired = self.calls.offer_via(session, dir, &env, m.http_req(), || {
                    OpenCall::new(line, at, dir, session, &env)
                });
                match paired {
                    Paired::Closed(call) => {
                        out.push(call.answered(&mut self.scope, at, &env, session))
                    }
                    Paired::DuplicatePending(old) => {
                        out.push(old.unanswered(&self.scope, at, "replaced"))
                    }
                    Paired::Opened | Paired::Orphan | Paired::Ignored => {}
                }
            }
            _ => {}
        }
    }

    fn model_call(&mut self, req: u64, line: u64, at: u64) -> &mut ModelCall {
        self.models
            .entry(req)
            .or_insert_with(|| ModelCall::new(line, at))
    }

    fn event(
        &mut self,
        line: u64,
        e: &MessageView<'_>,
        bytes: &[u8],
        at: u64,
        out: &mut Vec<Span>,
    ) {
        let Some(kind) = e.kind.as_deref() else {
            return;
        };
        if !kind.starts_with("llm.") {
            return;
        }
        let req = e.http_req();
        let raw: Value = e
            .raw_str()
            .and_then(|r| serde_json::from_str(r).ok())
            .unwrap_or(Value::Null);
        let call = self.model_call(req, line, at);
        match kind {
            kinds::LLM_REQUEST => {
                let body = serde_json::from_slice::<Value>(bytes)
                    .ok()
                    .and_then(|l| l.get("request")?.get("body").cloned());
                call.request(&raw, body.as_ref());
            }
            kinds::LLM_ERROR => call.failed(&raw, at, false),
            kinds::LLM_TRUNCATED => call.failed(&raw, at, true),
            kinds::LLM_EXCHANGE => call.exchange(&raw, at),
            _ => return,
        }
        self.settle_model(req, out);
    }

    fn turn(&mut self, line: u64, turn: &Turn, at: u64, out: &mut Vec<Span>) {
        let Some(req) = turn
            .extra
            .get("http")
            .and_then(|h| h.get("req"))
            .and_then(Value::as_u64)
        else {
            return;
        };
        let call = self.model_call(req, line, at);
        call.turn(turn, at);
        self.settle_model(req, out);
    }

    /// Emits a model call once everything it will get has come.
    fn settle_model(&mut self, req: u64, out: &mut Vec<Span>) {
        if self.models.get(&req).is_some_and(ModelCall::is_complete) {
            if let Some(call) = self.models.remove(&req) {
                let end = call.end_ns();
                out.push(call.into_span(&self.scope, end));
            }
        }
    }
}

impl SpanBuilder {
    /// A builder for the lines of `file` (named in each session span as
    /// `reel.trace.file`; `None` to leave it out).
    pub fn new(file: Option<String>) -> SpanBuilder {
        SpanBuilder {
            file,
            ..SpanBuilder::default()
        }
    }

    /// Reads line `line` (1-based) of the file, its bytes without the line break. Lines
    /// that are not trace lines are skipped, as every reader of a trace skips them.
    pub fn push(&mut self, line: u64, bytes: &[u8]) {
        let Ok(parsed) = parse_line(bytes) else {
            return;
        };
        let at = parsed.t().and_then(Timestamp::parse).map(nanos);
        if let Some(at) = at {
            self.last_ns = self.last_ns.max(at);
        }
        let at = at.unwrap_or(self.last_ns);
        if let Line::Meta(meta) = &parsed {
            self.close_session();
            let session = Session::open(
                Some(meta),
                (bytes, line, self.file_index),
                self.file.as_deref(),
                at,
            );
            self.last_ns = self.last_ns.max(session.start_ns);
            self.session = Some(session);
            return;
        }
        let file = self.file.as_deref();
        let index = self.file_index;
        let session = self.session.get_or_insert_with(|| {
            // A file that does not start with a meta line (a torn copy): its lines still
            // get a session, seeded by the file's name.
            let seed = file.unwrap_or("trace").as_bytes();
            Session::open(None, (seed, 0, index), file, at)
        });
        match parsed {
            Line::Message(m) => session.message(line, &m, at, &mut self.done),
            Line::Event(e) => session.event(line, &e, bytes, at, &mut self.done),
            Line::Turn(turn) => session.turn(line, &turn, at, &mut self.done),
            Line::End(end) => {
                session.exit_code = end.exit_code;
                self.close_session();
            }
            Line::Meta(_) | Line::Other(_) => {}
        }
    }

    /// The lines that follow come from the trace's next file (a rotated companion):
    /// their line numbers start again.
    pub fn next_file(&mut self) {
        self.file_index += 1;
        if let Some(s) = &mut self.session {
            s.scope.file = self.file_index;
        }
    }

    /// The spans completed so far, taken.
    pub fn take(&mut self) -> Vec<Span> {
        std::mem::take(&mut self.done)
    }

    /// Ends the file: what is open is closed at the last time seen, and every span not
    /// taken yet is returned.
    pub fn finish(mut self) -> Vec<Span> {
        self.close_session();
        self.done
    }

    fn close_session(&mut self) {
        if let Some(session) = self.session.take() {
            session.close(self.last_ns, &mut self.done);
        }
    }
}

#[cfg(test)]
mod tests;
