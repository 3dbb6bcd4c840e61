//! MCP requests and notifications as spans, by the OpenTelemetry semantic conventions
//! for MCP: named `{mcp.method.name} {target}` (the tool or prompt), kind CLIENT, with
//! the method, JSON-RPC id, session, protocol version, tool, prompt or resource, and
//! errors (`error.type` the JSON-RPC code, or `tool_error` for a tool result with
//! `isError`; status ERROR with the JSON-RPC error's message, a tool result's text being
//! its output and left out).

use opentelemetry_proto::tonic::trace::v1::{Span, Status};
use reel_mcp::jsonrpc::{Envelope, RpcId, call_subject, methods};
use reel_trace::Dir;
use serde_json::Value;

use crate::attrs::{Attrs, names};
use crate::ids::TraceParent;
use crate::scope::{SessionScope, error_status, initiator};

/// The `_meta` key of the 2026-07-28 revision that carries the protocol version on
/// every request.
const META_PROTOCOL: &str = "io.modelcontextprotocol/protocolVersion";

/// A request waiting for its response.
#[derive(Debug)]
pub(crate) struct OpenCall {
    /// The line of the request.
    pub line: u64,
    start: u64,
    dir: Dir,
    method: String,
    id: Option<String>,
    jsonrpc: Option<String>,
    session: Option<String>,
    subject: Option<String>,
    protocol: Option<String>,
    parent: Option<TraceParent>,
}

/// What a request's params say that a span names.
struct Params {
    subject: Option<String>,
    protocol: Option<String>,
    parent: Option<TraceParent>,
}

fn params_of(method: &str, env: &Envelope<'_>) -> Params {
    let params: Value = env
        .params
        .and_then(|p| serde_json::from_str(p.get()).ok())
        .unwrap_or(Value::Null);
    let subject = match method {
        "notifications/resources/updated" => params.get("uri").and_then(Value::as_str),
        _ => call_subject(method, &params),
    };
    let meta = params.get("_meta");
    let text = |key: &str| meta.and_then(|m| m.get(key)).and_then(Value::as_str);
    Params {
        subject: subject.map(str::to_owned),
        protocol: text(META_PROTOCOL).map(str::to_owned),
        parent: text("traceparent").and_then(TraceParent::parse),
    }
}

/// The JSON-RPC version, when it is not 2.0 (the conventions record only that case).
fn jsonrpc_version(env: &Envelope<'_>) -> Option<String> {
    if env.is_v2() {
        return None;
    }
    let v: Value = serde_json::from_str(env.jsonrpc?.get()).ok()?;
    Some(match v {
        Value::String(s) => s,
        other => other.to_string(),
    })
}

/// What a request or notification span says of its message.
struct Described<'a> {
    method: &'a str,
    subject: Option<&'a str>,
    id: Option<&'a str>,
    jsonrpc: Option<&'a str>,
    session: Option<&'a str>,
    /// From the message's own `_meta` (2026-07-28); else the session's negotiated one.
    protocol: Option<&'a str>,
    dir: Dir,
    line: u64,
}

/// The span name and attributes of an MCP message: the one builder of requests' and
/// notifications' spans.
fn described(s: &SessionScope, d: Described<'_>) -> (String, Attrs) {
    let mut attrs = Attrs::default();
    attrs.str(names::MCP_METHOD, d.method);
    let name = name_and_subject(d.method, d.subject, &mut attrs);
    attrs
        .opt_str(names::JSONRPC_ID, d.id)
        .opt_str(names::JSONRPC_VERSION, d.jsonrpc)
        .opt_str(names::MCP_SESSION, d.session);
    let session = d.session.map(str::to_owned);
    let protocol = d
        .protocol
        .map(str::to_owned)
        .or_else(|| s.protocol.get(&session).cloned());
    attrs.opt_str(names::MCP_PROTOCOL, protocol);
    s.transport.describe(&mut attrs);
    attrs
        .str(names::REEL_INITIATOR, initiator(d.dir))
        .int(names::REEL_LINE, i64::try_from(d.line).unwrap_or(i64::MAX));
    (name, attrs)
}

/// The span name and the attributes naming what a method acts on.
fn name_and_subject(method: &str, subject: Option<&str>, attrs: &mut Attrs) -> String {
    match (method, subject) {
        (methods::TOOLS_CALL, Some(tool)) => {
            attrs
                .str(names::GENAI_TOOL, tool)
                .str(names::GENAI_OPERATION, "execute_tool");
            format!("{method} {tool}")
        }
        ("prompts/get", Some(prompt)) => {
            attrs.str(names::GENAI_PROMPT, prompt);
            format!("{method} {prompt}")
        }
        (
            "resources/read"
            | "resources/subscribe"
            | "resources/unsubscribe"
            | "notifications/resources/updated",
            Some(uri),
        ) => {
            // The URI is high-cardinality: an attribute, never part of the name.
            attrs.str(names::MCP_RESOURCE_URI, uri);
            method.to_owned()
        }
        _ => method.to_owned(),
    }
}

impl OpenCall {
    /// The request at `line`, sent at `at` in direction `dir`.
    pub fn new(
        line: u64,
        at: u64,
        dir: Dir,
        session: Option<&str>,
        env: &Envelope<'_>,
    ) -> OpenCall {
        let method = env.method.as_deref().unwrap_or_default().to_owned();
        let params = params_of(&method, env);
        OpenCall {
            line,
            start: at,
            dir,
            id: env.rpc_id().and_then(|id| match id {
                RpcId::Number(n) => Some(n),
                RpcId::String(s) => Some(s),
                RpcId::Null => None,
            }),
            jsonrpc: jsonrpc_version(env),
            session: session.map(str::to_owned),
            subject: params.subject,
            protocol: params.protocol,
            parent: params.parent,
            method,
        }
    }

    fn attrs(&self, s: &SessionScope) -> (String, Attrs) {
        described(
            s,
            Described {
                method: &self.method,
                subject: self.subject.as_deref(),
                id: self.id.as_deref(),
                jsonrpc: self.jsonrpc.as_deref(),
                session: self.session.as_deref(),
                protocol: self.protocol.as_deref(),
                dir: self.dir,
                line: self.line,
            },
        )
    }

    /// The span of a request answered at `at` by `env` (on the response's line, in the
    /// MCP session `session`).
    pub fn answered(
        self,
        s: &mut SessionScope,
        at: u64,
        env: &Envelope<'_>,
        session: Option<&str>,
    ) -> Span {
        if self.method == methods::INITIALIZE {
            if let Some(version) = result_member(env, "protocolVersion") {
                let key = session.map(str::to_owned).or_else(|| self.session.clone());
                s.protocol.insert(key, version);
            }
        }
        let (name, mut attrs) = self.attrs(s);
        let status = outcome(&self.method, env, &mut attrs);
        s.span(
            self.line,
            name,
            (self.start, at),
            attrs,
            status,
            self.parent.as_ref(),
        )
    }

    /// The span of a request no answer was recorded for: it ends at `at`, with
    /// `reel.outcome` saying why (`pending`: none came; `replaced`: its id was reused).
    pub fn unanswered(self, s: &SessionScope, at: u64, why: &str) -> Span {
        let (name, mut attrs) = self.attrs(s);
        attrs.str(names::REEL_OUTCOME, why);
        s.span(
            self.line,
            name,
            (self.start, at),
            attrs,
            None,
            self.parent.as_ref(),
        )
    }
}

/// A string member of a response's `result`.
fn result_member(env: &Envelope<'_>, key: &str) -> Option<String> {
    let result: Value = serde_json::from_str(env.result?.get()).ok()?;
    result.get(key)?.as_str().map(str::to_owned)
}

/// The error attributes and status of a response.
fn outcome(method: &str, env: &Envelope<'_>, attrs: &mut Attrs) -> Option<Status> {
    // The one rule of what counts as an error (`reel_trace::errors`): a refused
    // `server/discover` probe is the legacy server's expected answer, which the client
    // falls back from; its span says so and is not an error.
    if env.error.is_some()
        && reel_trace::errors::answer_counts(Some(method), true, false)
            == reel_trace::errors::AnswerCount::ProbeRefused
    {
        if let (Some(code), _) = env.error_parts().unwrap_or((None, None)) {
            attrs.str(names::RPC_STATUS, code.to_string());
        }
        attrs.str(names::REEL_OUTCOME, "probe_refused");
        return None;
    }
    if env.error.is_some() {
        let (code, message) = env.error_parts().unwrap_or((None, None));
        match code {
            Some(code) => {
                attrs
                    .str(names::ERROR_TYPE, code.to_string())
                    .str(names::RPC_STATUS, code.to_string());
            }
            None => {
                attrs.str(names::ERROR_TYPE, "_OTHER");
            }
        }
        return error_status(message.unwrap_or_default());
    }
    if method != methods::TOOLS_CALL {
        return None;
    }
    let result: Value = env
        .result
        .and_then(|r| serde_json::from_str(r.get()).ok())
        .unwrap_or(Value::Null);
    if result.get("isError").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    // The result's text is the tool's output (what it read, what it was given): a
    // payload, so not in the span.
    attrs.str(names::ERROR_TYPE, "tool_error");
    error_status("the tool reported an error (isError)")
}

/// The span of a notification (it has no answer: it starts and ends when it was sent).
pub(crate) fn notification(
    s: &SessionScope,
    line: u64,
    at: u64,
    dir: Dir,
    session: Option<&str>,
    env: &Envelope<'_>,
) -> Span {
    let method = env.method.as_deref().unwrap_or_default();
    let params = params_of(method, env);
    let jsonrpc = jsonrpc_version(env);
    let (name, attrs) = described(
        s,
        Described {
            method,
            subject: params.subject.as_deref(),
            id: None,
            jsonrpc: jsonrpc.as_deref(),
            session,
            protocol: params.protocol.as_deref(),
            dir,
            line,
        },
    );
    s.span(line, name, (at, at), attrs, None, params.parent.as_ref())
}
