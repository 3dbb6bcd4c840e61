//! The checks of each kind of parsed line: meta, message, event, turn (with its
//! blocks), end, and lines of a `type` or `dir` this checker does not know. Each says
//! what the format requires of its kind and hands on what is judged elsewhere: a
//! message's `raw` to `pairing`, a `history_elided` block and the request body of an
//! `llm.*` event to `history`.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::checker::Checker;
use super::members::{describe, describe_text, required_members, snippet};
use super::options::is_known_kind;
use super::rules::Rule;
use super::state::Loc;
use reel_trace::Timestamp;
use reel_trace::line::{Block, Dir, End, MessageView, Meta, Turn, kinds};

impl Checker {
    pub(super) fn meta(&mut self, loc: Loc, meta: &Meta) {
        self.start_session(loc);
        self.no_process = matches!(&meta.command, Some(Value::Array(a)) if a.is_empty());
        match &meta.v {
            None => self.report(
                Some(loc),
                Rule::MetaIncomplete,
                "meta has no `v` (the format version: 1)".into(),
            ),
            Some(Value::Number(n)) if n.as_f64() == Some(1.0) => {}
            Some(Value::Number(n)) => self.report(
                Some(loc),
                Rule::MetaVersion,
                format!(
                    "meta.v is {n}: this is format version 1's checker; a file of another \
                     version may mean something else by the same members"
                ),
            ),
            Some(other) => self.report(
                Some(loc),
                Rule::MetaIncomplete,
                format!("meta.v is {}, expected the number 1", describe(other)),
            ),
        }
        match &meta.started_at {
            None => self.report(
                Some(loc),
                Rule::MetaIncomplete,
                "meta has no `startedAt` (ISO-8601 UTC with milliseconds)".into(),
            ),
            Some(s) => self.check_time(loc, "meta.startedAt", s),
        }
        if meta.label.is_none() {
            self.report(
                Some(loc),
                Rule::MetaIncomplete,
                "meta has no `label` (a short name for the trace)".into(),
            );
        }
        match &meta.command {
            None => self.report(
                Some(loc),
                Rule::MetaIncomplete,
                "meta has no `command` (the argv that started the server, an array of strings)"
                    .into(),
            ),
            Some(c) if meta.command_args().is_none() => self.report(
                Some(loc),
                Rule::MetaIncomplete,
                format!(
                    "meta.command is {}, expected an array of strings",
                    describe(c)
                ),
            ),
            Some(_) => {}
        }
        if let Some(kind) = &meta.kind {
            if !matches!(kind.as_str(), "mcp" | "llm" | "cc-session") {
                self.tally(loc, Rule::UnknownMetaKind, kind);
            }
        }
        let redacted = meta.redaction.as_ref().is_some_and(|d| {
            reel_redact::redact::Redactor::from_description(d).map_or(true, |r| r.is_active())
        });
        if !redacted {
            self.report(
                Some(loc),
                Rule::NotRedacted,
                "this session was recorded without redaction (no meta.redaction, or rules that redact nothing): it may hold secrets; `reel redact` applies the rules now".into(),
            );
        }
    }

    /// Checks a timestamp member that is present.
    fn check_time(&mut self, loc: Loc, member: &str, s: &str) {
        let Some(ts) = Timestamp::parse(s) else {
            self.report(
                Some(loc),
                Rule::BadTimestamp,
                format!(
                    "{member} is \"{}\": not an ISO-8601 date-time (expected UTC with \
                     milliseconds, e.g. 2026-05-12T23:00:00.123Z)",
                    snippet(s)
                ),
            );
            return;
        };
        let utc = s.ends_with(['Z', 'z']) || s.ends_with("+00:00") || s.ends_with("-00:00");
        if !utc {
            self.report(
                Some(loc),
                Rule::BadTimestamp,
                format!(
                    "{member} is \"{}\": not UTC (the format's times end in Z: {})",
                    snippet(s),
                    ts.to_iso()
                ),
            );
        } else if !Timestamp::is_canonical(s) {
            self.report(
                Some(loc),
                Rule::TimestampNotCanonical,
                format!(
                    "{member} is \"{}\", not the canonical form {} (UTC, milliseconds, Z)",
                    snippet(s),
                    ts.to_iso()
                ),
            );
        }
    }

    /// Checks the required `t` of a message, event, turn or end line.
    fn require_time(&mut self, loc: Loc, what: &str, t: Option<&str>) {
        match t {
            Some(s) => self.check_time(loc, "t", s),
            None => self.report(
                Some(loc),
                Rule::BadTimestamp,
                format!(
                    "{what} has no `t` string (ISO-8601 UTC with milliseconds, e.g. \
                     2026-05-12T23:00:00.123Z)"
                ),
            ),
        }
    }

    /// An `eol` reel does not write: the pipe's byte stream cannot be rebuilt.
    fn line_end(&mut self, loc: Loc, view: &MessageView<'_>) {
        if reel_trace::line::Eol::from_member(view.eol.as_deref()).is_none() {
            self.report(
                Some(loc),
                Rule::UnknownEol,
                format!(
                    "eol is \"{}\": a line ends in LF (no eol), \"crlf\" or \"none\"; the \
                     pipe's bytes cannot be rebuilt from this line",
                    snippet(view.eol.as_deref().unwrap_or_default())
                ),
            );
        }
    }

    pub(super) fn message(&mut self, loc: Loc, view: &MessageView<'_>) {
        let dir = view.dir().unwrap_or(Dir::In);
        self.require_time(loc, "a message line", view.t.as_deref());
        self.line_end(loc, view);
        if let Some(kind) = view.kind.as_deref() {
            if kind.starts_with("llm.") {
                self.report(
                    Some(loc),
                    Rule::LlmKindOnMessage,
                    format!(
                        "kind \"{}\" on a dir \"{}\" line: llm lines use dir \"event\"; \
                         in/out are reserved for MCP JSON-RPC",
                        snippet(kind),
                        dir.as_str()
                    ),
                );
            } else if !is_known_kind(kind) {
                self.tally(loc, Rule::UnknownKind, kind);
            }
        }
        let Some(raw) = view.raw else {
            self.report(
                Some(loc),
                Rule::MissingRaw,
                format!(
                    "message line (dir \"{}\") has no `raw`: the JSON-RPC payload is required",
                    dir.as_str()
                ),
            );
            return;
        };
        let session = view.session.as_deref();
        let text = raw.get();
        match text.trim_start().as_bytes().first() {
            Some(b'{') => self.envelope(loc, session, dir, text, None, view.http_req()),
            Some(b'[') => self.batch(loc, session, dir, text),
            _ => self.report(
                Some(loc),
                Rule::NotJsonrpc,
                format!("raw is {}, not a JSON-RPC 2.0 message", describe_text(text)),
            ),
        }
    }

    pub(super) fn event(&mut self, loc: Loc, view: &MessageView<'_>) {
        self.require_time(loc, "an event line", view.t.as_deref());
        self.line_end(loc, view);
        let Some(kind) = view.kind.as_deref() else {
            return;
        };
        if !is_known_kind(kind) {
            self.tally(loc, Rule::UnknownKind, kind);
        }
        if kind == kinds::LLM_REQUEST || kind == kinds::LLM_EXCHANGE {
            if let Some(raw) = view.raw {
                self.request_body(loc, raw.get());
            }
        }
        if self.llm.event(view, loc.line) {
            self.llm_locs.insert(view.http_req(), loc);
        }
    }

    pub(super) fn turn(&mut self, loc: Loc, turn: &Turn) {
        self.require_time(loc, "a turn", turn.t.as_deref());
        if let Some(n) = turn.http_req() {
            self.llm.turn(n);
        }
        match turn.role.as_deref() {
            None => self.report(
                Some(loc),
                Rule::TurnIncomplete,
                "turn has no `role` (\"user\", \"assistant\" or \"system\")".into(),
            ),
            Some("user" | "assistant" | "system") => {}
            Some(role) => self.report(
                Some(loc),
                Rule::UnknownRole,
                format!(
                    "turn role \"{}\": the format defines user, assistant and system",
                    snippet(role)
                ),
            ),
        }
        if turn.blocks.is_none() {
            self.report(
                Some(loc),
                Rule::TurnIncomplete,
                "turn has no `blocks` array (it may be empty, but it must be there)".into(),
            );
        }
        for (i, block) in turn.blocks().iter().enumerate() {
            self.block(loc, i, block);
        }
        if let Some(usage) = &turn.usage {
            if let (Some(thinking), Some(output)) = (usage.thinking_tokens, usage.output_tokens) {
                if thinking > output {
                    self.report(
                        Some(loc),
                        Rule::UsageInvariant,
                        format!(
                            "usage.thinking_tokens ({thinking}) exceeds output_tokens \
                             ({output}): thinking tokens are a subset of the output tokens, \
                             never added to them; normalise usage when recording"
                        ),
                    );
                }
            }
        }
        if turn.is_echoed() {
            let carried: Vec<&str> = [
                ("model", turn.model.is_some()),
                ("usage", turn.usage.is_some()),
            ]
            .iter()
            .filter(|(_, p)| *p)
            .map(|(n, _)| *n)
            .collect();
            if !carried.is_empty() {
                self.report(
                    Some(loc),
                    Rule::EchoedWithGeneration,
                    format!(
                        "echoed turn carries {}: an echoed turn is context the client re-sent, \
                         not a generation; consumers exclude it from model aggregates",
                        carried.join(" and ")
                    ),
                );
            }
            if turn.role.as_deref().is_some_and(|r| r != "assistant") {
                self.report(
                    Some(loc),
                    Rule::EchoedNotAssistant,
                    "a non-assistant turn is marked echoed: only assistant turns are ever echoed"
                        .into(),
                );
            }
        }
    }

    fn block(&mut self, loc: Loc, i: usize, block: &Block) {
        match block {
            Block::HistoryElided {
                count,
                sha256,
                request_sha256,
                ..
            } => {
                if i != 0 {
                    self.report(
                        Some(loc),
                        Rule::HistoryElidedPosition,
                        format!(
                            "history_elided is block {i}; it belongs first in the first turn \
                             recorded for its request"
                        ),
                    );
                }
                for (member, value) in [
                    ("sha256", Some(sha256.as_str())),
                    ("request_sha256", request_sha256.as_deref()),
                ] {
                    if let Some(v) = value.filter(|v| !is_sha256_hex(v)) {
                        self.report(
                            Some(loc),
                            Rule::BlockIncomplete,
                            format!(
                                "block {i} (history_elided) has {member} {}, expected 64 lowercase hex digits",
                                Value::from(v.chars().take(80).collect::<String>())
                            ),
                        );
                    }
                }
                self.history_elided(loc, *count, sha256, request_sha256.as_deref());
            }
            Block::ToolUse { input, .. } if !input.is_object() => self.report(
                Some(loc),
                Rule::BlockIncomplete,
                format!(
                    "block {i} (tool_use) has input {}, expected an object",
                    describe(input)
                ),
            ),
            Block::Other(value) => match block.type_name() {
                Some(ty) => match required_members(ty) {
                    Some(needs) => self.report(
                        Some(loc),
                        Rule::BlockIncomplete,
                        format!("block {i} ({ty}) lacks {needs}; readers show a placeholder"),
                    ),
                    None => self.tally(loc, Rule::UnknownBlockType, ty),
                },
                None => self.report(
                    Some(loc),
                    Rule::BlockIncomplete,
                    format!(
                        "block {i} is {} with no string `type`; readers show a placeholder",
                        describe(value)
                    ),
                ),
            },
            _ => {}
        }
    }

    pub(super) fn end(&mut self, loc: Loc, end: &End) {
        self.require_time(loc, "the end line", end.t.as_deref());
        if end.duration_ms.is_none() {
            self.report(
                Some(loc),
                Rule::EndIncomplete,
                "end has no `durationMs` (milliseconds since meta.startedAt)".into(),
            );
        }
        if let (Some(code), true) = (end.exit_code, self.no_process) {
            self.report(
                Some(loc),
                Rule::ExitWithoutProcess,
                format!(
                    "end has exitCode {code} but meta.command is empty: a producer that wraps \
                     no process (an llm proxy without a command, an importer) ends with \
                     `reason` and no exitCode"
                ),
            );
        }
        if end.exit_code.is_none() && end.reason.is_none() {
            self.report(
                Some(loc),
                Rule::EndWithoutStatus,
                "end has neither exitCode nor reason: allowed, but it says nothing of how the \
                 recording ended"
                    .into(),
            );
        }
        if self.ended.is_none() {
            self.ended = Some(loc);
        }
    }

    pub(super) fn other(&mut self, loc: Loc, view: &MessageView<'_>, bytes: &[u8]) {
        #[derive(Deserialize, Default)]
        struct Head<'a> {
            #[serde(rename = "type", borrow, default)]
            ty: Option<&'a RawValue>,
            #[serde(borrow, default)]
            dir: Option<&'a RawValue>,
        }
        let head: Head<'_> = std::str::from_utf8(bytes)
            .ok()
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or_default();
        if let Some(t) = view.t.as_deref() {
            self.check_time(loc, "t", t);
        }
        if let Some(ty) = head.ty {
            match serde_json::from_str::<Cow<'_, str>>(ty.get()) {
                Ok(name) => self.tally(loc, Rule::UnknownType, &name),
                Err(_) => self.report(
                    Some(loc),
                    Rule::IllTypedMember,
                    format!("`type` is {}, expected a string", describe_text(ty.get())),
                ),
            }
            return;
        }
        match head.dir {
            None => self.report(
                Some(loc),
                Rule::MissingDir,
                "line has neither `type` nor `dir`: a message line needs dir (\"in\" or \
                 \"out\") and raw"
                    .into(),
            ),
            Some(dir) => match serde_json::from_str::<Cow<'_, str>>(dir.get()) {
                Ok(name) => self.tally(loc, Rule::UnknownDir, &name),
                Err(_) => self.report(
                    Some(loc),
                    Rule::MissingDir,
                    format!(
                        "`dir` is {}, not a string: a message line needs dir \"in\" or \"out\"",
                        describe_text(dir.get())
                    ),
                ),
            },
        }
    }
}

/// 64 lowercase hex digits: a SHA-256 as the LLM addendum writes it.
fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}
