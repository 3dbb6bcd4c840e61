//! Redaction (owner: in progress). The public surface below is fixed; the rules are
//! filled in by the redaction work.

use std::borrow::Cow;

use serde_json::Value;

/// Applies a rule set to trace content. Identity until the rules land.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    enabled: bool,
}

impl Redactor {
    /// The built-in rules.
    pub fn builtin() -> Self {
        Redactor { enabled: true }
    }

    /// No redaction at all.
    pub fn disabled() -> Self {
        Redactor { enabled: false }
    }

    /// Redacts one JSON value given as text on one line; borrows when nothing changed.
    pub fn redact_json<'a>(&self, raw: &'a str) -> Cow<'a, str> {
        Cow::Borrowed(raw)
    }

    /// Redacts free text (a command argument, a stderr line).
    pub fn redact_text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        Cow::Borrowed(text)
    }

    /// The rule set, as written to `meta.redaction`.
    pub fn describe(&self) -> Value {
        serde_json::json!({ "enabled": self.enabled })
    }
}
