//! What every span of a recorded session shares, below the builders of MCP and model-call
//! spans: the session's trace (its [`Seed`]), which of the trace's files its lines come
//! from, how the server was reached, the protocol versions it negotiated, and the one
//! constructor of its child spans. The session itself (what is open in it) lives in
//! `spans`, which hands this scope to `mcp` and `genai`; neither of them imports `spans`.

use std::collections::HashMap;

use opentelemetry_proto::tonic::trace::v1::span::{Link, SpanKind};
use opentelemetry_proto::tonic::trace::v1::{Span, Status, status::StatusCode};
use reel_trace::line::Meta;
use reel_trace::{Dir, Timestamp};

use crate::attrs::{Attrs, names};
use crate::ids::{Seed, TraceParent};

/// The longest span name and status message, in bytes.
pub const MAX_NAME: usize = 256;

/// Nanoseconds since the Unix epoch of a trace timestamp.
pub(crate) fn nanos(t: Timestamp) -> u64 {
    u64::try_from(t.millis())
        .unwrap_or(0)
        .saturating_mul(1_000_000)
}

/// A span status: ERROR with `message` (cut at [`MAX_NAME`] bytes).
pub(crate) fn error_status(message: impl Into<String>) -> Option<Status> {
    Some(Status {
        message: crate::attrs::capped(message, MAX_NAME),
        code: StatusCode::Error as i32,
    })
}

/// The side that sent a request.
pub(crate) fn initiator(dir: Dir) -> &'static str {
    match dir {
        Dir::Out => "server",
        _ => "client",
    }
}

/// How the recorded server was reached.
#[derive(Clone, Debug, Default)]
pub(crate) struct Transport {
    /// Streamable HTTP (else stdio).
    http: bool,
    /// The upstream's host and port, when the meta line names it.
    server: Option<(String, u16)>,
}

impl Transport {
    /// The transport a session's `meta` line names.
    pub fn of(meta: &Meta) -> Transport {
        Transport {
            http: meta.transport.as_deref() == Some("http"),
            server: meta
                .upstream
                .as_deref()
                .and_then(|u| reel_net::http::UpstreamUrl::parse(u).ok())
                .map(|u| (u.host, u.port)),
        }
    }

    /// `network.*` and `server.*` of a span.
    pub fn describe(&self, attrs: &mut Attrs) {
        if !self.http {
            attrs.str(names::NETWORK_TRANSPORT, "pipe");
            return;
        }
        attrs
            .str(names::NETWORK_TRANSPORT, "tcp")
            .str(names::NETWORK_PROTOCOL, "http");
        if let Some((host, port)) = &self.server {
            attrs
                .str(names::SERVER_ADDRESS, host.clone())
                .int(names::SERVER_PORT, i64::from(*port));
        }
    }
}

/// The facts of one recorded session that each of its child spans takes.
#[derive(Debug)]
pub(crate) struct SessionScope {
    pub seed: Seed,
    /// Which of the trace's files the lines come from now.
    pub file: u64,
    pub transport: Transport,
    /// The protocol version each MCP session negotiated (by `Mcp-Session-Id`).
    pub protocol: HashMap<Option<String>, String>,
}

impl SessionScope {
    /// The scope of the session seeded by `seed`, whose lines come from file `file`.
    pub fn new(seed: Seed, file: u64, transport: Transport) -> SessionScope {
        SessionScope {
            seed,
            file,
            transport,
            protocol: HashMap::new(),
        }
    }

    /// A span of this session's trace, opened by line `line`: child of the session's
    /// span (or of the caller's, when the request carried a `traceparent`, then linked
    /// to the session's span).
    pub fn span(
        &self,
        line: u64,
        name: String,
        (start, end): (u64, u64),
        attrs: Attrs,
        status: Option<Status>,
        parent: Option<&TraceParent>,
    ) -> Span {
        let (trace_id, parent_span_id, links) = match parent {
            Some(tp) => (
                tp.trace_id.clone(),
                tp.span_id.clone(),
                vec![Link {
                    trace_id: self.seed.trace_id(),
                    span_id: self.seed.session_span_id(),
                    ..Link::default()
                }],
            ),
            None => (
                self.seed.trace_id(),
                self.seed.session_span_id(),
                Vec::new(),
            ),
        };
        Span {
            trace_id,
            span_id: self.seed.span_id(self.file, line),
            parent_span_id,
            name: crate::attrs::capped(name, MAX_NAME),
            kind: SpanKind::Client as i32,
            start_time_unix_nano: start,
            end_time_unix_nano: end.max(start),
            attributes: attrs.0,
            links,
            status,
            ..Span::default()
        }
    }
}
