//! [`Redactor`]: one rule set, shared and cheap to clone, and what it redacts: JSON
//! values and message lines, turns, free text, lines of a text stream, command lines.
//! Each method hands the compiled rules to the pass that does the work (`json`,
//! `strings`, `lines`, `command`).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::compiled::Compiled;
use super::error::RedactError;
use super::lines::LineBlock;
use super::rules::{self, Builder, RedactionConfig, RuleSet};
use super::{command, help, json, lines};

/// A message line after [`Redactor::redact_message`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedactedMessage<'a> {
    /// The line redacted; borrowed when nothing changed.
    pub text: Cow<'a, str>,
    /// Its JSON-RPC kind ([`Envelope::kind_of`](reel_trace::jsonrpc::Envelope::kind_of)'s
    /// verdict).
    pub kind: reel_trace::jsonrpc::RpcKind,
}

/// Applies a rule set to trace content. Cheap to clone (the rules are shared).
#[derive(Clone)]
pub struct Redactor {
    set: Arc<RuleSet>,
    compiled: Arc<Compiled>,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Redactor").field(&self.describe()).finish()
    }
}

impl Default for Redactor {
    /// The built-in rules: redaction is on unless asked otherwise.
    fn default() -> Self {
        Redactor::builtin()
    }
}

impl Redactor {
    /// The built-in rules.
    pub fn builtin() -> Self {
        Redactor::from_parts(Builder::new(true).finish())
    }

    /// No redaction at all.
    pub fn disabled() -> Self {
        Redactor::from_parts(Builder::new(false).finish())
    }

    /// Builds the rule set the user asked for: built-ins (unless `defaults` is off or
    /// the rule file says `"extends": null`), then the rule file's rules, then the
    /// `--redact` patterns.
    pub fn new(config: &RedactionConfig) -> Result<Redactor, RedactError> {
        rules::from_config(config).map(Redactor::from_parts)
    }

    /// Rebuilds the rule set a trace was redacted with, from its `meta.redaction`,
    /// so live messages can be redacted the same way before comparing.
    pub fn from_description(description: &Value) -> Result<Redactor, RedactError> {
        rules::from_description(description).map(Redactor::from_parts)
    }

    fn from_parts((set, compiled): (RuleSet, Compiled)) -> Redactor {
        Redactor {
            set: Arc::new(set),
            compiled: Arc::new(compiled),
        }
    }

    /// Redacts one JSON value given as text; borrows when nothing changed. Bytes that
    /// are not rewritten are copied as received; text that is not JSON is returned
    /// unchanged.
    pub fn redact_json<'a>(&self, raw: &'a str) -> Cow<'a, str> {
        json::redact(&self.compiled, raw)
    }

    /// Redacts a message line as [`redact_json`](Self::redact_json) does, in the one
    /// pass that also validates it and tells its JSON-RPC kind (a recorder needs all
    /// three; reading the line twice was a third of its work). `None` when `raw` is not
    /// one JSON value (white space around it allowed).
    pub fn redact_message<'a>(&self, raw: &'a str) -> Option<RedactedMessage<'a>> {
        json::redact_message(&self.compiled, raw).map(|(text, kind)| RedactedMessage { text, kind })
    }

    /// A turn redacted as its JSON line is: every string member, block and usage figure
    /// under the rules. A redacted line that no longer reads as a turn (a rule that
    /// rewrote a number into a string) keeps the turn's role, time and correlation and
    /// says so in one text block, never the unredacted content.
    pub fn redact_turn(&self, turn: &reel_trace::line::Turn) -> reel_trace::line::Turn {
        let Ok(text) = serde_json::to_string(turn) else {
            return reel_trace::line::Turn::default();
        };
        match self.redact_json(&text) {
            Cow::Borrowed(_) => turn.clone(),
            Cow::Owned(redacted) => {
                serde_json::from_str(&redacted).unwrap_or_else(|_| reel_trace::line::Turn {
                    t: turn.t.clone(),
                    role: turn.role.clone(),
                    corr_id: turn.corr_id.clone(),
                    blocks: Some(vec![reel_trace::line::Block::Text {
                        text: "[reel: this turn's content was redacted whole]".to_owned(),
                        extra: serde_json::Map::new(),
                    }]),
                    ..reel_trace::line::Turn::default()
                })
            }
        }
    }

    /// Redacts a JSON value as [`redact_json`](Self::redact_json) does, and anything
    /// that is not one JSON value as [`redact_text`](Self::redact_text) does: for pieces
    /// of a stream that are JSON as a rule (an SSE event's data, an NDJSON line). One
    /// pass when it is JSON.
    pub fn redact_json_or_text<'a>(&self, raw: &'a str) -> Cow<'a, str> {
        match json::redact_if_json(&self.compiled, raw) {
            Some(r) => r,
            None => self.redact_text(raw),
        }
    }

    /// Redacts free text (a command argument, a stderr line) with the value rules and
    /// the user's patterns.
    pub fn redact_text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.compiled.redact_text(text)
    }

    /// Redacts one line of a stream of free-text lines (a server's stderr, the lines
    /// of a stdio stream that are not JSON) as [`redact_text`](Self::redact_text)
    /// does, and also the body of a PEM private-key block whose `BEGIN` line came
    /// earlier in the same stream: `block` carries that across calls (one per stream).
    /// Borrowed only when the line is unchanged.
    pub fn redact_line<'a>(&self, text: &'a str, block: &mut LineBlock) -> Cow<'a, str> {
        lines::redact_line(&self.compiled, text, block)
    }

    /// Redacts a command line (for `meta.command`): every argument as free text, plus,
    /// with the `secret-keys` rule, the value of a secret-named flag (`--api-key X`,
    /// `--token=X`) or environment assignment (`API_KEY=X`). Values that are plain
    /// numbers stay (`--max-tokens 100`).
    pub fn redact_command(&self, args: &[String]) -> Vec<String> {
        command::redact_command(&self.compiled, self.compiled.secret_keys, args)
    }

    /// Whether this redactor can change anything at all.
    pub fn is_active(&self) -> bool {
        !self.compiled.is_identity()
    }

    /// The rule set, as written to `meta.redaction`: versioned (`rules`), complete
    /// (a rule file's rules are inlined), and enough for
    /// [`from_description`](Self::from_description) to rebuild an equivalent redactor.
    pub fn describe(&self) -> Value {
        self.set.describe()
    }

    /// The built-in rules and the replay exemptions as text for `--help`: for each
    /// rule its name, what it redacts and an example. [`RULE_DOCS`](super::RULE_DOCS) and
    /// [`EXEMPTIONS`](super::EXEMPTIONS) hold the same as data.
    pub fn rules_help() -> String {
        help::rules_help()
    }
}
