//! What a diff finds: drifts (each with a class and a kind), notes (differences that are
//! not drift), and the rules that decide which is which.
//!
//! Two classes, as the exit codes have them: **output** drift is the same call answered
//! differently (content, error, the notifications around it); **structural** drift is a
//! change of shape (a call added or removed, a method or tool unknown, a schema changed,
//! a result became an error). A pair of exchanges gives at most one drift per subject
//! (its answer, its progress, its cancellation, its other notifications).
//!
//! What two honest runs may differ in is never drift: those rules are data
//! ([`honest_rules`]), listed by `reel diff --help`, together with the shared
//! normaliser's rules.

use std::path::PathBuf;

use serde::Serialize;

use crate::side::Loc;

/// The classes and kinds of drift: the one vocabulary of `reel_mcp::drift`, so diff,
/// verify and play name a change alike.
pub use reel_mcp::drift::{Class, Kind};

/// An exchange or turn paired across the traces that did not drift (kept with
/// [`crate::DiffOptions::keep_passed`], for a report of every exchange: JUnit).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Passed {
    /// What it is (`tools/call add`, `turn assistant`), as drifts name theirs.
    pub subject: String,
    /// Where it is in A.
    pub a: Place,
    /// Where it is in B.
    pub b: Place,
}

/// A place in one trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Place {
    /// The file (a trace's rotated companions are separate files).
    pub file: PathBuf,
    /// 1-based line of the request (or the turn, or the first message counted).
    pub line: u64,
    /// 1-based line of the response, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_line: Option<u64>,
}

/// One exchange or turn shown as context before a drift.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ContextLine {
    /// Where it is.
    pub place: Place,
    /// What it is, e.g. `tools/call add`.
    pub subject: String,
}

/// List answers as changelogs: the one rule of which list changes are structural.
pub use reel_mcp::drift::lists::{Change, ChangeEntry, Changelog};

/// One drift.
#[derive(Clone, Debug, Serialize)]
pub struct Drift {
    /// Output or structural.
    pub class: Class,
    /// What kind.
    pub kind: Kind,
    /// What drifted, e.g. `tools/call weather`, `turn 3 (assistant)`.
    pub subject: String,
    /// Where in A, when it is in A.
    pub a: Option<Place>,
    /// Where in B, when it is in B.
    pub b: Option<Place>,
    /// One line saying what changed.
    pub summary: String,
    /// The first JSON pointers that differ (at most [`MAX_POINTERS`]).
    pub pointers: Vec<String>,
    /// For list methods: what was added, removed, changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changelog: Option<Changelog>,
    /// The exchanges (or turns) just before it, in A when it is in A, else in B.
    pub context: Vec<ContextLine>,
    #[serde(skip)]
    pub(crate) refs: Refs,
}

/// Pointers kept per drift for one-line summaries (the detail view lists them all).
pub const MAX_POINTERS: usize = 8;

/// What to re-read to show a drift in full.
#[derive(Clone, Debug, Default)]
pub(crate) enum Refs {
    #[default]
    None,
    /// Responses (one each) or notification lists, compared as values.
    Messages {
        a: Vec<Loc>,
        b: Vec<Loc>,
        progress: bool,
    },
    /// An exchange on one side only: its request and response.
    Exchange {
        side: usize,
        request: Loc,
        response: Option<Loc>,
    },
    /// Turns (either may be absent).
    Turns {
        a: Option<Loc>,
        b: Option<Loc>,
        usage: bool,
    },
    /// Answers held in memory (`crate::bodies`; either may be absent, or too large to
    /// have been kept).
    Values {
        a: Option<std::sync::Arc<serde_json::Value>>,
        b: Option<std::sync::Arc<serde_json::Value>>,
    },
}

/// A difference reported but not counted as drift.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Note {
    /// What kind of difference (`ping-unpaired`, `notification-count`, `usage`,
    /// `timing`).
    pub kind: String,
    /// What it concerns.
    pub subject: String,
    /// One line.
    pub summary: String,
    /// How many times it was seen.
    pub count: u64,
    /// The first place in A.
    pub a: Option<Place>,
    /// The first place in B.
    pub b: Option<Place>,
}

/// A rule that keeps honest differences between two runs from counting as drift.
#[derive(Clone, Copy, Debug)]
pub struct HonestRule {
    /// Short stable name.
    pub name: &'static str,
    /// What it does, one line.
    pub description: &'static str,
}

static HONEST: [HonestRule; 12] = [
    HonestRule {
        name: "content-alignment",
        description: "exchanges pair by direction, method and normalised params, the earliest unpaired first: order, pipelining and concurrency are not drift",
    },
    HonestRule {
        name: "line-timestamps",
        description: "the `t` of lines, meta.startedAt and the end line never count",
    },
    HonestRule {
        name: "ids-and-sessions",
        description: "JSON-RPC ids and session ids never count (answers pair through their requests)",
    },
    HonestRule {
        name: "http-refusals",
        description: "an error without an id on a request's own HTTP response (a 400 refusing a server/discover probe) answers that request, as play, verify, check and stats pair it",
    },
    HonestRule {
        name: "server-requests",
        description: "server->client requests (sampling, elicitation, roots) are exchanges of their own, aligned by content: when a timer sent them is not drift",
    },
    HonestRule {
        name: "progress-token",
        description: "progress notifications compare per call, in order, without their progressToken",
    },
    HonestRule {
        name: "notification-counts",
        description: "other notifications (logging, ones that arrived while a call was open) compare as counts per method and direction (--strict-notifications: in place, by content; --notifications ignore: not at all)",
    },
    HonestRule {
        name: "list-changed-counts",
        description: "a notifications/*/list_changed count that differs is a note, not drift: it depends on when the client's stream opened, as `reel verify` also rules (--notifications strict: drift)",
    },
    HonestRule {
        name: "ping",
        description: "a ping (either direction) with no partner is a note, not drift: keepalives run on timers",
    },
    HonestRule {
        name: "turn-usage",
        description: "a turn's usage and timing are notes, not drift (--strict-usage: output drift); another model or stop reason is structural drift",
    },
    HonestRule {
        name: "echoed-turns",
        description: "echoed turns (context re-sent in a request, not a generation) are skipped",
    },
    HonestRule {
        name: "events",
        description: "extension lines (stderr, gaps, commands) are not compared; lines that are not JSON are compared by content, in order per direction (a changed one is body-changed output drift); an llm exchange that gave no turns is compared by its body ({status, body: [piece…]}, each SSE data or whole body as JSON when it is; --ignore pointers address that value)",
    },
];

/// The rules, in the order `--help` lists them.
pub fn honest_rules() -> &'static [HonestRule] {
    &HONEST
}

/// The rules as `--help` text, one `  name  description` line each.
pub fn honest_rules_help() -> String {
    reel_report::display::rule_table(HONEST.iter().map(|r| (r.name, r.description.to_owned())))
}
