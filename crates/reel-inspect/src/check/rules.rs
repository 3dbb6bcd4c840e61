//! What `reel check` checks: every [`Rule`] with its stable kebab-case id, its fixed
//! [`Severity`] and a one-sentence description, declared once in one table (the
//! `rules!` macro) so that the three cannot disagree. Ids are stable because scripts
//! match on them; [`Rule::ALL`] lists errors first, then warnings, then infos.

use serde::{Serialize, Serializer};

/// How bad a problem is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// What a reader will skip, or what could not be checked.
    Info,
    /// Legal, but a sign of trouble (an interrupted recording, an unanswered request).
    Warning,
    /// A violation of the format.
    Error,
}

impl Severity {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

macro_rules! rules {
    ($( #[doc = $doc:literal] $name:ident = $id:literal, $sev:ident; )*) => {
        /// A check rule. Ids are stable: scripts may match on them.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum Rule {
            $( #[doc = $doc] $name, )*
        }

        impl Rule {
            /// Every rule, errors first.
            pub const ALL: &'static [Rule] = &[$(Rule::$name),*];

            /// The stable kebab-case id.
            pub fn id(self) -> &'static str {
                match self { $(Rule::$name => $id,)* }
            }

            /// The rule's severity (fixed per rule).
            pub fn severity(self) -> Severity {
                match self { $(Rule::$name => Severity::$sev,)* }
            }

            /// One sentence on what the rule checks.
            pub fn description(self) -> &'static str {
                match self { $(Rule::$name => $doc.trim_ascii(),)* }
            }
        }
    };
}

rules! {
    /// The first line is not a meta line, or the file is empty.
    MetaMissing = "meta-missing", Error;
    /// A meta line lacks `v`, `startedAt`, `label` or `command`, or one has the wrong type.
    MetaIncomplete = "meta-incomplete", Error;
    /// `meta.v` is a number other than 1.
    MetaVersion = "meta-version", Error;
    /// A line is not valid UTF-8 (and is not a torn last line).
    InvalidUtf8 = "invalid-utf8", Error;
    /// A line is not JSON (and is not a torn last line).
    NotJson = "not-json", Error;
    /// A line is JSON but not an object (an array, a string, a number…).
    NotObject = "not-object", Error;
    /// A member the format defines has the wrong JSON type (`role: 3`, `type: 5`).
    IllTypedMember = "ill-typed-member", Error;
    /// `t` (or `meta.startedAt`) is missing, not ISO-8601, or not UTC.
    BadTimestamp = "bad-timestamp", Error;
    /// A line has neither `type` nor a string `dir`.
    MissingDir = "missing-dir", Error;
    /// A message line (`dir` in/out) has no `raw`.
    MissingRaw = "missing-raw", Error;
    /// A line follows the end line of its session (only a new meta line may).
    LineAfterEnd = "line-after-end", Error;
    /// A turn has no `role` or no `blocks`.
    TurnIncomplete = "turn-incomplete", Error;
    /// An end line has no `durationMs`.
    EndIncomplete = "end-incomplete", Error;
    /// `usage.thinking_tokens` exceeds `usage.output_tokens` (it is a subset of them).
    UsageInvariant = "usage-invariant", Error;
    /// A `history_elided` marker does not match the request body it describes.
    HistoryElidedMismatch = "history-elided-mismatch", Error;
    /// `--verify`: a sealed line was changed.
    SealChanged = "seal-changed", Error;
    /// `--verify`: sealed lines were removed.
    SealRemoved = "seal-removed", Error;
    /// `--verify`: lines not in the seal were inserted before a sealed line.
    SealInserted = "seal-inserted", Error;
    /// `--verify`: sealed lines were reordered.
    SealReordered = "seal-reordered", Error;
    /// `--verify`: the trace ends before its seal (or inside its last sealed line).
    SealTruncated = "seal-truncated", Error;
    /// `--verify`: lines follow the last line of a closed seal.
    SealAppended = "seal-appended", Error;
    /// `--verify`: the seal itself was edited (its records or chain do not hold together).
    SealEdited = "seal-edited", Error;
    /// `--verify --key-file`: the seal was made with another key.
    SealWrongKey = "seal-wrong-key", Error;
    /// `--verify --key-file`: the seal is not keyed, so anyone could have written it.
    SealNotKeyed = "seal-not-keyed", Error;
    /// The last line is cut off: the recording was interrupted while writing it.
    TornLastLine = "torn-last-line", Warning;
    /// A blank line (readers skip it).
    BlankLine = "blank-line", Warning;
    /// A session has no end line: the recording was interrupted or is still running.
    NoEnd = "no-end", Warning;
    /// A JSON-RPC request got no response in its session (an id-less error on its own HTTP response, e.g. a 400 refusing `server/discover`, is one).
    UnansweredRequest = "unanswered-request", Warning;
    /// A JSON-RPC response whose request is not pending in its session.
    OrphanResponse = "orphan-response", Warning;
    /// A request reuses the id of a request still waiting for its response.
    DuplicateRequestId = "duplicate-request-id", Warning;
    /// `raw` of a message line is not a JSON-RPC 2.0 message (or batch of them).
    NotJsonrpc = "not-jsonrpc", Warning;
    /// An `llm.*` kind on a `dir` in/out line (the spec reserves those for JSON-RPC).
    LlmKindOnMessage = "llm-kind-on-message", Warning;
    /// An echoed turn carries `model` or `usage` (it describes no generation).
    EchoedWithGeneration = "echoed-with-generation", Warning;
    /// A turn other than an assistant turn is marked echoed.
    EchoedNotAssistant = "echoed-not-assistant", Warning;
    /// A turn role other than user, assistant or system.
    UnknownRole = "unknown-role", Warning;
    /// A known block type lacks its members (`text` without `text`, …).
    BlockIncomplete = "block-incomplete", Warning;
    /// An `end.exitCode` in a session whose meta names no command (it wrapped no process).
    ExitWithoutProcess = "exit-without-process", Warning;
    /// A `history_elided` block that is not the first block of its turn.
    HistoryElidedPosition = "history-elided-position", Warning;
    /// The request body in the trace does not hash to the marker's `request_sha256`.
    HistoryElidedRequestMismatch = "history-elided-request-mismatch", Warning;
    /// Several sessions (meta lines) appended to one file.
    SeveralSessions = "several-sessions", Warning;
    /// A line longer than reel reads (`reel_trace::reader::MAX_LINE`): skipped.
    LineTooLong = "line-too-long", Warning;
    /// An `eol` other than `"crlf"` or `"none"`: the pipe's bytes cannot be rebuilt.
    UnknownEol = "unknown-eol", Warning;
    /// A `t` that parses but is not the canonical `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    TimestampNotCanonical = "timestamp-not-canonical", Warning;
    /// llm exchanges answered with a body gave no turns (an endpoint reel does not read, or a request body it could not read): their tokens are in no count.
    LlmTurnsMissing = "llm-turns-missing", Warning;
    /// `--verify`: the seal was never closed (an interrupted recording); later lines are unsealed.
    SealOpen = "seal-open", Warning;
    /// A line `type` this checker does not know (readers skip it).
    UnknownType = "unknown-type", Info;
    /// A `dir` this checker does not know (readers ignore it).
    UnknownDir = "unknown-dir", Info;
    /// A `kind` this checker does not know (readers show it as the row summary).
    UnknownKind = "unknown-kind", Info;
    /// A block type this checker does not know (readers show a placeholder).
    UnknownBlockType = "unknown-block-type", Info;
    /// A `meta.kind` other than mcp, llm or cc-session (readers show a generic trace).
    UnknownMetaKind = "unknown-meta-kind", Info;
    /// A `history_elided` marker whose request body is not in the trace.
    HistoryElidedUnverifiable = "history-elided-unverifiable", Info;
    /// An end line with neither `exitCode` nor `reason` (allowed; says nothing of how it ended).
    EndWithoutStatus = "end-without-status", Info;
    /// A session recorded without redaction: it may hold secrets (`reel redact`).
    NotRedacted = "not-redacted", Info;
    /// `--verify` without `--key-file`: a keyed seal's lines were checked, not who wrote it.
    SealUnauthenticated = "seal-unauthenticated", Info;
}

impl Serialize for Rule {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::Rule;

    #[test]
    fn every_rule_has_a_unique_kebab_id() {
        let mut ids: Vec<&str> = Rule::ALL.iter().map(|r| r.id()).collect();
        assert!(ids.iter().all(|id| {
            id.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        }));
        assert!(Rule::ALL.iter().all(|r| !r.description().is_empty()));
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), Rule::ALL.len());
    }
}
