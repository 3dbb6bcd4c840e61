//! What the tape server is fed: the client's lines, scanned once on the thread that
//! reads them ([`InputLine`], [`Parsed`], [`Incoming`]), and the events of the index and
//! the live server beside them ([`Event`]).

use std::sync::Arc;

use reel_mcp::jsonrpc::{RpcId, RpcKind};
use reel_mcp::normalize::{MatchKey, NormalizeError, Normalizer, canonical};
use serde_json::Value;
use serde_json::value::RawValue;

use super::report;
use crate::live::LiveOutput;
use crate::tape::Update;

/// Longest input line accepted from the client; a longer one is answered with an
/// invalid-request error and dropped.
pub const MAX_LINE: usize = 64 << 20;

pub(crate) enum Event {
    Input(Vec<InputLine>),
    InputEnd,
    /// SIGINT, SIGTERM or SIGHUP reached `play` over stdio: it ends as at the end of
    /// the client's input (a client may end its servers so, Claude Code does). The
    /// flag is set when the server took it.
    Stop(i32, Arc<std::sync::atomic::AtomicBool>),
    Index(Vec<Update>),
    Live(LiveOutput),
    /// The client stopped waiting for the answer to the input that came on this route
    /// (it closed an HTTP response: the 2026-07-28 way to cancel).
    Gone(u64),
}

/// One line from the client, already parsed, redacted, normalised and keyed on the
/// reader thread, so this work runs beside the answering on another core.
pub(crate) struct InputLine {
    pub(crate) content: Content,
    pub(crate) crlf: bool,
    /// Where its answer goes ([`Route::Reply`]): the HTTP request that carried it; 0
    /// over stdio.
    pub(crate) route: u64,
}

pub(crate) enum Content {
    /// Longer than [`MAX_LINE`]: dropped.
    Oversized,
    /// Not UTF-8.
    NotUtf8(Vec<u8>),
    /// The text and what it is.
    Text(String, Parsed),
}

/// A live client request.
pub(crate) struct Incoming {
    /// The line as received (forwarded as is with `--subset`; normalised again only
    /// when a miss or drift has to be explained).
    pub(super) line: String,
    pub(super) id: RpcId,
    /// The id as JSON text, for the answer.
    pub(super) id_raw: String,
    pub(super) method: String,
    /// `params._meta.progressToken` as JSON text.
    pub(super) token_raw: Option<String>,
    /// `params.protocolVersion` (initialize).
    pub(super) protocol_version: Option<String>,
    /// `params.name` (tools/call).
    pub(super) tool: Option<String>,
    pub(super) key: MatchKey,
    pub(super) alt_key: Option<MatchKey>,
    /// Redaction changed the request before it was keyed: recorded calls whose secrets
    /// differed may share its key.
    pub(super) redacted: bool,
    /// Where its answer goes ([`Route::Reply`]).
    pub(super) route: u64,
}

/// A live line, scanned once on the reader thread: redacted with the tape's rules,
/// classified like [`reel_mcp::jsonrpc::Envelope::kind`], the members replay needs taken out verbatim,
/// and keyed ([`Normalizer::scan`]: no `Value` is built on this path).
pub(crate) enum Parsed {
    Request(Box<Incoming>),
    Notification {
        method: String,
        cancelled: Option<RpcId>,
        key: MatchKey,
    },
    Answer {
        id: Option<RpcId>,
    },
    /// JSON, an object, but no request, notification or response.
    Invalid {
        id_raw: String,
    },
    /// JSON, but not an object (`batch`: an array).
    NotObject {
        batch: bool,
    },
    /// Not JSON.
    NotJson(String),
}

fn string_of(raw: Option<&RawValue>) -> Option<String> {
    raw.and_then(|r| serde_json::from_str::<String>(r.get()).ok())
}

pub(crate) fn parse_live(line: &str, norm: &Normalizer) -> Parsed {
    let redacted = norm.redact_live(line);
    let changed = matches!(redacted, std::borrow::Cow::Owned(_)) && redacted != line;
    let s = match norm.scan(&redacted) {
        Ok(s) => s,
        Err(NormalizeError::NotObject { batch }) => return Parsed::NotObject { batch },
        Err(e) => return Parsed::NotJson(e.to_string()),
    };
    let id = s.id.and_then(RpcId::from_raw);
    let id_raw = s.id.map(|r| r.get().to_owned());
    match s.kind {
        RpcKind::Request => Parsed::Request(Box::new(Incoming {
            id: id.unwrap_or(RpcId::Null),
            id_raw: id_raw.unwrap_or_else(|| "null".into()),
            method: s.method.as_deref().unwrap_or_default().to_owned(),
            token_raw: s.progress_token.map(|t| t.get().to_owned()),
            protocol_version: string_of(s.protocol_version),
            tool: string_of(s.name),
            key: s.key,
            alt_key: s.alt_key,
            redacted: changed,
            line: String::new(),
            route: 0,
        })),
        RpcKind::Notification => Parsed::Notification {
            method: s.method.as_deref().unwrap_or_default().to_owned(),
            cancelled: s.request_id.and_then(RpcId::from_raw),
            key: s.key,
        },
        RpcKind::Response | RpcKind::Error => Parsed::Answer { id },
        _ => Parsed::Invalid {
            id_raw: id_raw.unwrap_or_else(|| "null".into()),
        },
    }
}

impl Incoming {
    /// The method.
    pub(crate) fn method(&self) -> &str {
        &self.method
    }
    /// The request as the matcher compared it (redacted, normalised), for diagnostics.
    pub(super) fn normalized(&self, norm: &Normalizer) -> Option<Value> {
        norm.normalize_live(&self.line).ok()
    }

    pub(super) fn params_text(&self, norm: &Normalizer) -> String {
        let p = self
            .normalized(norm)
            .as_ref()
            .and_then(|v| v.get("params"))
            .map_or_else(
                || {
                    // Normalisation drops identity-only params (an `initialize`'s client
                    // info, an empty `_meta`): say so rather than deny there were any.
                    let sent = serde_json::from_str::<Value>(&self.line)
                        .is_ok_and(|v| v.get("params").is_some());
                    if sent {
                        "(none left after normalisation)"
                    } else {
                        "(no params)"
                    }
                    .to_owned()
                },
                canonical,
            );
        report::short(&p)
    }
}
