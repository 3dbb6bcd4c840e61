//! Redaction: secrets out of the trace, replay intact.
//!
//! Every producer (recorder, importers, `reel redact`) passes what it writes through
//! one [`Redactor`]; `play`, `verify` and `diff` rebuild the same one from
//! `meta.redaction` ([`Redactor::from_description`]) and apply it to live messages
//! before comparing, so a redacted argument still matches. It applies to the trace
//! only, never to forwarded bytes.
//!
//! The rules start from mcp-tape's (research/mcp-tape.md §2.3) and depart where those
//! would break replay. What is matched is replaced by `[REDACTED]`, mcp-tape's marker.
//!
//! # Built-in rules (`reel/1`)
//!
//! | rule | what it redacts | example |
//! | --- | --- | --- |
//! | `secret-keys` | every string inside a member whose key contains `password`, `passwd`, `secret`, `token`, `api_key` (`apiKey`, `api-key`), `authorization`, `private_key`, `access_key` (any case), is `pwd` between word boundaries, or is `bearer`; keys, numbers, booleans, `null` and structure stay. In a command: the value of such a flag (`--api-key X`, `--token=X`), of a credential flag (`--auth X`, `--key X`, `--pat X`, `--openai-key=X`), or of such a variable (`API_KEY=X`) | `{"db_password":"x"}` → `{"db_password":"[REDACTED]"}` |
//! | `aws-access-key` | `AKIA` + 16 upper-case letters or digits | `try AKIAIOSFODNN7EXAMPLE` → `try [REDACTED]` |
//! | `sk-key` | `sk-` + 20 or more of `[A-Za-z0-9_-]` (OpenAI, Anthropic, …) | `sk-proj-…` → `[REDACTED]` |
//! | `github-token` | `ghp_` `gho_` `ghu_` `ghs_` `ghr_` + 36 or more letters or digits | |
//! | `github-pat` | `github_pat_` + 20 or more of `[A-Za-z0-9_]` | |
//! | `jwt` | three dot-separated base64url parts, the first starting `eyJ` | |
//! | `authorization-header` | `Authorization:` and the rest of its line | `Authorization: Bearer abc.def` → `[REDACTED]` |
//! | `bearer` | `Bearer` and the token after it | `use Bearer abc` → `use [REDACTED]` |
//! | `slack-token` | `xoxb-` `xoxa-` `xoxp-` `xoxr-` `xoxs-` + 10 or more | |
//! | `stripe-key` | `sk_live_` or `rk_live_` + 8 or more letters or digits | |
//! | `url-password` | the password in `scheme://user:password@host` (only the password) | `postgres://admin:hunter2@db` → `postgres://admin:[REDACTED]@db` |
//! | `dotenv-path` | in a word (a run of characters that are neither white space nor `"`), from its start to the end of `.env` or `.env.<suffix>` | `load /srv/app/.env.local now` → `load [REDACTED] now` |
//! | `ssh-key-path` | a whole word containing `id_rsa`, `id_ed25519`, `id_ecdsa` or `id_dsa` | `key ~/.ssh/id_ed25519.pub` → `key [REDACTED]` |
//! | `google-api-key` | `AIza` + 35 of `[0-9A-Za-z_-]` | |
//!
//! Value rules apply to string values (not keys, never numbers), to command arguments
//! and to stderr lines; `\b` in them is the ASCII word boundary, as in mcp-tape's
//! JavaScript (`éAKIA…` is still a key). Strings of at least 8 KiB
//! ([`BASE64_SKIP_MIN`]) made only of base64 characters skip the value rules, built-in
//! and `--redact` alike (mcp-tape 0.7 does the same): rewriting inside base64 corrupts
//! the media it carries. The password of `url-password` is found after a user part of
//! at most 128 characters, as in mcp-tape.
//!
//! # Never redacted (replay exemptions)
//!
//! | where | why |
//! | --- | --- |
//! | `jsonrpc`, `id`, `method` of a message (and of each message in a batch) | pairing and matching |
//! | `params.name` (tools/call, prompts/get), `params.requestId` (cancellation) | the matching key, the exchange to stop |
//! | `name` of each entry of `result.tools` / `result.prompts` | tools/list must name the tools that calls use |
//! | `method` of each request in `result.inputRequests` (2026-07-28) | |
//! | `progressToken` anywhere (incl. `_meta.progressToken`) | progress is re-sent with the live token |
//! | `requestState`, `cursor`, `nextCursor` anywhere | opaque handles the peer must get back verbatim (they often look like JWTs) |
//! | everything under `inputSchema`, `outputSchema`, `requestedSchema` | a schema property named `password` or `maxTokens` is not a secret |
//! | numbers, booleans, `null` | a count is not a secret, and a string in their place changes the message's shape |
//! | member names (incl. every key of `_meta`) | only values are ever replaced |
//!
//! Exemptions win over every rule, the user's included: a `--redact` pattern or a
//! rule-file path cannot reach them. Roles are recognised by position, not by
//! `method` (which may come after `params`), so `params.name` is kept for every method.
//!
//! Departure from mcp-tape on containers: mcp-tape replaces the whole value of a
//! secret key (`{"tokens":[1,2]}` → `{"tokens":"[REDACTED]"}`, and
//! `usage.output_tokens_details` objects vanish). Here a secret key redacts every
//! *string* below it and keeps the rest: `{"tokens":[1,2]}` and token-count objects
//! survive, `{"tokens":{"access":"x"}}` → `{"tokens":{"access":"[REDACTED]"}}`, and no
//! string under a secret key survives. The same holds for rule-file paths.
//!
//! # User rules
//!
//! `--redact REGEX` (repeatable) adds a pattern, applied after the built-ins, in order.
//! Patterns use Rust `regex` syntax (<https://docs.rs/regex>): linear time, so no
//! look-around and no backreferences; case-sensitive unless `(?i)`; `^`/`$` anchor to
//! the whole string. A pattern that can match the empty string is refused. Patterns
//! are written verbatim into `meta.redaction`: describe the *shape* of a secret
//! (`MYCO-[A-Z0-9]{20}`), never the secret itself.
//!
//! `--redact-file PATH` reads an mcp-tape rule file:
//! `{"extends": "default" | null, "rules": [...]}` where each rule is
//! `{"type":"path","path":"$.params.arguments.api_key"}`,
//! `{"type":"regex","pattern":"…"}`, `{"type":"truncate","path":"…","maxBytes":N}` or
//! `{"type":"drop-media","minBytes":N}`. `extends` absent or `"default"` keeps the
//! built-ins, `null` drops them; `--no-redact-defaults` drops them whatever the file
//! says. Paths use mcp-tape's subset: `$`, `.name`, `['name']`, `[3]`, `[*]`, `.*`,
//! `..name`. mcp-tape's own default rules (with JavaScript look-behind) load and map to
//! the built-ins above. `truncate` (a string at the path longer than `maxBytes` keeps its
//! first bytes, cut after redaction and never inside a marker, plus
//! ` [truncated from N bytes]`) and `drop-media` (a string of at least `minBytes` that
//! looks like encoded media becomes `[media dropped: N bytes]`) change content replay
//! answers with, so they are never defaults. An unknown rule type is an error, never
//! skipped.
//!
//! # `meta.redaction`
//!
//! [`Redactor::describe`] writes, and [`Redactor::from_description`] reads:
//! `{"rules":"reel/1","marker":"[REDACTED]","defaults":true,"builtin":["secret-keys",
//! "aws-access-key",…],"keys":["password",…],"patterns":[…],"paths":[…]}`, plus
//! `"truncate":[{"path","maxBytes"}]` and `"dropMedia":{"minBytes"}` when used.
//! `rules` versions what each built-in name means; `keys` is informational.
//!
//! # Guarantees
//!
//! - JSON is redacted as text in one pass (see `json`): bytes not rewritten are copied
//!   as received, the result is valid JSON, and when nothing matched the input comes
//!   back borrowed. Input that is not JSON comes back unchanged.
//! - Linear time: every pattern runs on finite automata (the `regex` crate) or a word
//!   scanner that looks at each byte a bounded number of times.
//! - Idempotent: redacting twice gives the same text as redacting once (the marker is
//!   atomic and value rules run until stable, at most four rounds: only contrived
//!   user patterns whose `\b` flips next to a new marker need more).

mod command;
mod error;
mod help;
mod json;
mod path;
mod protocol;
mod rules;
mod size;
mod text;

use std::borrow::Cow;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use self::path::PathRules;
use self::rules::{Builder, RuleSet};
use self::text::ValueRules;

pub use self::error::{PatternSource, RedactError};
pub use self::help::{EXEMPTIONS, RULE_DOCS, RuleDoc};
pub use self::text::{BASE64_SKIP_MIN, MARKER};

/// The version of the rule set, written as `meta.redaction.rules`.
pub const RULES_VERSION: &str = "reel/1";

/// What the user asked for (the recorder's flags).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedactionConfig {
    /// Apply the built-in rules (`--no-redact-defaults` turns this off).
    pub defaults: bool,
    /// Extra patterns, in order (`--redact REGEX`).
    pub patterns: Vec<String>,
    /// An mcp-tape rule file (`--redact-file PATH`).
    pub rule_file: Option<PathBuf>,
}

impl Default for RedactionConfig {
    /// The built-in rules and nothing else.
    fn default() -> Self {
        RedactionConfig {
            defaults: true,
            patterns: Vec::new(),
            rule_file: None,
        }
    }
}

/// The compiled rules the walker and the text pass use.
#[derive(Debug)]
pub(crate) struct Compiled {
    pub(crate) secret_keys: bool,
    pub(crate) values: ValueRules,
    pub(crate) paths: PathRules,
    pub(crate) drop_media: Option<usize>,
    has_user_patterns: bool,
}

impl Compiled {
    fn is_identity(&self) -> bool {
        !self.secret_keys
            && self.values.is_empty()
            && self.paths.is_empty()
            && self.drop_media.is_none()
    }

    /// Whether `src` provably needs no change without walking it: no rule looks at
    /// keys or positions, and no built-in value rule can match (`gate` is
    /// `values.builtin_candidate(src)`).
    pub(crate) fn skips_whole(&self, src: &str, gate: bool) -> bool {
        if self.is_identity() {
            return true;
        }
        if self.secret_keys
            || !self.paths.is_empty()
            || self.drop_media.is_some()
            || self.has_user_patterns
            || gate
        {
            return false;
        }
        // An escape can spell anything; let the walker decode it.
        memchr::memchr(b'\\', src.as_bytes()).is_none()
    }

    /// The rules for one string value outside secret and verbatim positions:
    /// `drop-media`, then the value rules, then `truncate`. A truncated string is
    /// recognised by its notice and only its head is redacted again, so the result
    /// is a fixed point: redacting it again changes nothing.
    pub(crate) fn string(&self, text: &str, truncate: Option<usize>, gate: bool) -> Option<String> {
        let dropped = self.drop_media.and_then(|min| size::drop_media(text, min));
        let input = dropped.as_deref().unwrap_or(text);
        let out = match truncate {
            None => self.values.apply(input, gate),
            Some(max) => self.truncated(input, max, gate),
        };
        match out {
            Some(out) => (out != text).then_some(out),
            None => dropped,
        }
    }

    fn truncated(&self, input: &str, max: usize, gate: bool) -> Option<String> {
        if let Some((head, notice)) = size::split_truncated(input) {
            return self.values.apply(head, gate).map(|head| head + notice);
        }
        let redacted = self.values.apply(input, gate);
        let full = redacted.as_deref().unwrap_or(input);
        match size::truncate(full, max) {
            Some((head, notice)) => {
                let head = self
                    .values
                    .apply(head, gate)
                    .unwrap_or_else(|| head.to_owned());
                Some(head + &notice)
            }
            None => redacted,
        }
    }
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
        Builder::new(true).finish()
    }

    /// No redaction at all.
    pub fn disabled() -> Self {
        Builder::new(false).finish()
    }

    /// Builds the rule set the user asked for: built-ins (unless `defaults` is off or
    /// the rule file says `"extends": null`), then the rule file's rules, then the
    /// `--redact` patterns.
    pub fn new(config: &RedactionConfig) -> Result<Redactor, RedactError> {
        rules::from_config(config)
    }

    /// Rebuilds the rule set a trace was redacted with, from its `meta.redaction`,
    /// so live messages can be redacted the same way before comparing.
    pub fn from_description(description: &Value) -> Result<Redactor, RedactError> {
        rules::from_description(description)
    }

    fn from_parts(set: RuleSet, compiled: Compiled) -> Redactor {
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

    /// Redacts free text (a command argument, a stderr line) with the value rules and
    /// the user's patterns.
    pub fn redact_text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match self.compiled.values.apply(text, true) {
            Some(redacted) => Cow::Owned(redacted),
            None => Cow::Borrowed(text),
        }
    }

    /// Redacts a command line (for `meta.command`): every argument as free text, plus,
    /// with the `secret-keys` rule, the value of a secret-named flag (`--api-key X`,
    /// `--token=X`) or environment assignment (`API_KEY=X`). Values that are plain
    /// numbers stay (`--max-tokens 100`).
    pub fn redact_command(&self, args: &[String]) -> Vec<String> {
        command::redact_command(self, self.compiled.secret_keys, args)
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
    /// rule its name, what it redacts and an example. [`RULE_DOCS`] and
    /// [`EXEMPTIONS`] hold the same as data.
    pub fn rules_help() -> String {
        help::rules_help()
    }
}

#[cfg(test)]
mod tests {
    use super::text::ValueRule;
    use super::*;

    #[test]
    fn rule_docs_name_every_builtin_in_order() {
        let names: Vec<&str> = RULE_DOCS.iter().map(|r| r.name).collect();
        let mut expected = vec![rules::SECRET_KEYS];
        expected.extend(ValueRule::ALL.iter().map(|r| r.name()));
        assert_eq!(names, expected);
        let help = Redactor::rules_help();
        for name in names {
            assert!(help.contains(name), "{name} missing from help");
        }
    }

    #[test]
    fn command_flags() {
        let r = Redactor::builtin();
        let args: Vec<String> = [
            "npx",
            "-y",
            "srv",
            "--api-key",
            "ctx7sk-abc",
            "--token=xyz",
            "--max-tokens",
            "100",
            "API_KEY=abc",
            "PATH=/bin",
            "--verbose",
            "--password",
            "--next",
            "--auth",
            "s3cr3t",
            "--openai-key=sk-1",
            "--key-file",
            "/etc/k.pem",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let out = r.redact_command(&args);
        assert_eq!(
            out,
            [
                "npx",
                "-y",
                "srv",
                "--api-key",
                MARKER,
                "--token=[REDACTED]",
                "--max-tokens",
                "100",
                "API_KEY=[REDACTED]",
                "PATH=/bin",
                "--verbose",
                "--password",
                "--next",
                "--auth",
                MARKER,
                "--openai-key=[REDACTED]",
                "--key-file",
                "/etc/k.pem",
            ]
        );
        assert_eq!(r.redact_command(&out), out, "idempotent");
        assert_eq!(Redactor::disabled().redact_command(&args), args);
    }
}
