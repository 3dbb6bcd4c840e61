//! `reel check`: validates a trace against the mcp-replay trace format v1 (with
//! format-extensions and reel's vocabulary) and says, per problem, where it is, which
//! rule it breaks, how bad it is and what to do.
//!
//! Severities follow the spec's tolerance rules: what a conforming reader must tolerate
//! (unknown `type`, `dir`, `kind` and block types, a missing `exitCode`, a torn last
//! line) is never an error. Errors are violations a reader cannot repair; warnings are
//! legal but suspicious (an interrupted recording, unanswered requests); info says what
//! a reader will skip or could not check. Every rule has a stable kebab-case id
//! ([`Rule::id`]); [`Rule::ALL`] lists them with their severity and meaning.
//!
//! Invariants:
//! - One streaming pass over the trace (rotated companions first, as
//!   [`TraceReader::open`] reads them) in bounded memory: the only state that grows with
//!   the file is the map of pending JSON-RPC requests. Everything else is capped and the
//!   cap is named: [`CheckOptions::max_per_rule`] problems listed per rule (the rest
//!   summarised with a count), [`MAX_DISTINCT_NAMES`] distinct unknown names per rule,
//!   [`MAX_REQUEST_BODIES`] request bodies and [`MAX_PENDING_MARKERS`] `history_elided`
//!   markers waiting for each other.
//! - Counts ([`Report::errors`] …) count every problem found, listed or not; an
//!   aggregated info ("unknown kind `x`, 12 lines") counts once.
//! - Lines are read with the crate's line model ([`parse_line`]); `raw` is never
//!   re-serialised. Nothing here panics on input.
//!
//! `history_elided` markers are verified when the trace holds the request body they
//! describe: an `llm.request` or `llm.exchange` event whose `raw.request_sha256` equals
//! the marker's and whose `raw.body` is the body (a JSON string holding the exact bytes,
//! or the body object itself, in which case only the prefix hash can be checked).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::hash::{HashError, RequestDigests, Verdict};
use crate::jsonrpc::{Envelope, PairKey, Paired, Pairer, RpcId, RpcKind};
use crate::line::{Block, Dir, End, Line, LineError, MessageView, Meta, Turn, kinds, parse_line};
use crate::reader::{LineReader, OpenError, RawLine, TraceReader};
use crate::time::Timestamp;

/// Problems listed per rule by default; the rest are counted in one summary line.
pub const DEFAULT_MAX_PER_RULE: usize = 50;
/// Distinct unknown names (types, kinds, …) tallied per rule; further names are counted
/// together as "(other names)".
pub const MAX_DISTINCT_NAMES: usize = 256;
/// Request bodies (from `llm.*` events) whose prefix digests are kept for markers that
/// come later; the oldest is forgotten first.
pub const MAX_REQUEST_BODIES: usize = 128;
/// `history_elided` markers kept waiting for a request body that comes later.
pub const MAX_PENDING_MARKERS: usize = 4096;
/// Cancelled requests remembered so that a late answer is not called an orphan.
pub const MAX_CANCELLED: usize = 4096;
/// Longest excerpt of a value quoted in a message, in characters.
const SNIPPET: usize = 80;

/// `kind` values this checker knows: reel's own and the spec's conventional ones.
pub const KNOWN_KINDS: &[&str] = &[
    kinds::NONJSON,
    kinds::STDERR,
    kinds::GAP,
    kinds::HTTP,
    kinds::SSE,
    "llm.request",
    "llm.exchange",
    "llm.error",
    "llm.truncated",
    "mcp.request",
    "mcp.response",
    "mcp.notification",
];

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
    /// The last line is cut off: the recording was interrupted while writing it.
    TornLastLine = "torn-last-line", Warning;
    /// A blank line (readers skip it).
    BlankLine = "blank-line", Warning;
    /// A session has no end line: the recording was interrupted or is still running.
    NoEnd = "no-end", Warning;
    /// A JSON-RPC request got no response in its session.
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
    /// A `history_elided` block that is not the first block of its turn.
    HistoryElidedPosition = "history-elided-position", Warning;
    /// The request body in the trace does not hash to the marker's `request_sha256`.
    HistoryElidedRequestMismatch = "history-elided-request-mismatch", Warning;
    /// Several sessions (meta lines) appended to one file.
    SeveralSessions = "several-sessions", Warning;
    /// A `t` that parses but is not the canonical `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    TimestampNotCanonical = "timestamp-not-canonical", Warning;
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

/// One problem found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Problem {
    /// The file it is in (a rotated companion, or the trace itself).
    pub file: String,
    /// 1-based line number in that file; absent for file-level problems and summaries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// The rule broken.
    pub rule: Rule,
    /// The rule's severity.
    pub severity: Severity,
    /// What is wrong and, where useful, what to do.
    pub message: String,
    /// For aggregated problems (unknown names, summaries of unlisted problems): how many
    /// occurrences this line stands for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
}

/// The result of checking one trace.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The trace as named by the caller.
    pub file: String,
    /// The files read, in order (rotated companions first).
    pub files: Vec<String>,
    /// Lines read.
    pub lines: u64,
    /// Bytes in the files.
    pub bytes: u64,
    /// Sessions (meta lines).
    pub sessions: u64,
    /// Errors found (listed or not).
    pub errors: u64,
    /// Warnings found (listed or not).
    pub warnings: u64,
    /// Infos found (listed or not).
    pub infos: u64,
    /// The problems listed, in file and line order; summaries last.
    pub problems: Vec<Problem>,
}

impl Report {
    /// True when the trace violates the format.
    pub fn has_errors(&self) -> bool {
        self.errors > 0
    }

    /// The listed problems of one rule.
    pub fn of_rule(&self, rule: Rule) -> impl Iterator<Item = &Problem> {
        self.problems.iter().filter(move |p| p.rule == rule)
    }
}

/// Knobs of a check.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Problems listed per rule; further ones are counted in one summary problem.
    pub max_per_rule: usize,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            max_per_rule: DEFAULT_MAX_PER_RULE,
        }
    }
}

/// Checks the trace at `path` (with its rotated companions).
///
/// Fails only when a file cannot be opened or read; everything wrong *inside* the files
/// is in the report.
pub fn check_trace(path: &Path, options: &CheckOptions) -> Result<Report, OpenError> {
    let mut reader = TraceReader::open(path)?;
    let files = reader.files().to_vec();
    let mut checker = Checker::new(path, &files, options);
    while let Some(next) = reader.next_line() {
        let line = next?;
        let file = files.iter().position(|f| f == line.path).unwrap_or(0);
        checker.line(file, line.raw, file + 1 == files.len());
    }
    Ok(checker.finish(reader.total_bytes()))
}

/// Checks a trace read from `input`, reported under the name `name` (for tests and
/// for traces that are not files).
pub fn check_read<R: Read>(name: &Path, input: R, options: &CheckOptions) -> io::Result<Report> {
    let files = [name.to_owned()];
    let mut checker = Checker::new(name, &files, options);
    let mut counted = Counted { inner: input, n: 0 };
    let mut lines = LineReader::new(&mut counted);
    while let Some(raw) = lines.next_line()? {
        checker.line(0, raw, true);
    }
    drop(lines);
    Ok(checker.finish(counted.n))
}

/// A reader that counts the bytes it hands out.
struct Counted<R> {
    inner: R,
    n: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.n += n as u64;
        Ok(n)
    }
}

/// Where a problem is: an index into the files read, and a line number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Loc {
    file: usize,
    line: u64,
}

/// A request waiting for its response.
struct PendingRequest {
    loc: Loc,
    method: String,
}

/// An aggregated occurrence count of one name under one rule.
struct Tally {
    first: Loc,
    count: u64,
}

/// A `history_elided` marker waiting for its request body.
struct Marker {
    loc: Loc,
    count: u64,
    sha256: String,
    request_sha256: String,
}

/// A request body seen in an `llm.*` event.
struct StoredBody {
    loc: Loc,
    /// True when the body is the exact bytes (a JSON string), so `request_sha256` can be
    /// checked too; false for a body object (a re-encoding).
    exact: bool,
    digests: Result<RequestDigests, HashError>,
}

/// A problem before it is placed: located by index, so that sorting is cheap.
struct Found {
    loc: Option<Loc>,
    problem: Problem,
}

struct Checker {
    name: String,
    files: Vec<String>,
    max_per_rule: usize,
    lines: u64,
    sessions: u64,
    /// The end line of the current session, once seen.
    ended: Option<Loc>,
    /// The line before the one being checked.
    previous: Option<Loc>,
    /// The line being checked.
    current: Option<Loc>,
    pairer: Pairer<PendingRequest>,
    cancelled: HashSet<PairKey>,
    found: Vec<Found>,
    per_rule: HashMap<Rule, u64>,
    counts: [u64; 3],
    tallies: BTreeMap<(Rule, String), Tally>,
    distinct: HashMap<Rule, usize>,
    bodies: HashMap<String, StoredBody>,
    body_order: VecDeque<String>,
    markers: HashMap<String, Vec<Marker>>,
    pending_markers: usize,
}

impl Checker {
    fn new(name: &Path, files: &[PathBuf], options: &CheckOptions) -> Self {
        Checker {
            name: name.display().to_string(),
            files: files.iter().map(|f| f.display().to_string()).collect(),
            max_per_rule: options.max_per_rule,
            lines: 0,
            sessions: 0,
            ended: None,
            previous: None,
            current: None,
            pairer: Pairer::new(),
            cancelled: HashSet::new(),
            found: Vec::new(),
            per_rule: HashMap::new(),
            counts: [0; 3],
            tallies: BTreeMap::new(),
            distinct: HashMap::new(),
            bodies: HashMap::new(),
            body_order: VecDeque::new(),
            markers: HashMap::new(),
            pending_markers: 0,
        }
    }

    fn file_name(&self, loc: Option<Loc>) -> String {
        loc.and_then(|l| self.files.get(l.file))
            .unwrap_or(&self.name)
            .clone()
    }

    fn count(&mut self, severity: Severity) {
        self.counts[severity as usize] += 1;
    }

    /// Records a problem, listing it unless its rule already has `max_per_rule` listed.
    fn report(&mut self, loc: Option<Loc>, rule: Rule, message: String) {
        self.count(rule.severity());
        let n = self.per_rule.entry(rule).or_insert(0);
        *n += 1;
        if *n as usize <= self.max_per_rule {
            let problem = Problem {
                file: self.file_name(loc),
                line: loc.map(|l| l.line),
                rule,
                severity: rule.severity(),
                message,
                count: None,
            };
            self.found.push(Found { loc, problem });
        }
    }

    /// Counts one occurrence of `name` under an aggregated rule.
    fn tally(&mut self, loc: Loc, rule: Rule, name: &str) {
        let mut key = (rule, snippet(name));
        if !self.tallies.contains_key(&key) {
            let distinct = self.distinct.entry(rule).or_insert(0);
            if *distinct >= MAX_DISTINCT_NAMES {
                key.1 = "(other names)".to_owned();
            }
            if !self.tallies.contains_key(&key) {
                *distinct += 1;
                self.count(rule.severity());
            }
        }
        self.tallies
            .entry(key)
            .or_insert(Tally {
                first: loc,
                count: 0,
            })
            .count += 1;
    }

    fn line(&mut self, file: usize, raw: RawLine<'_>, in_last_file: bool) {
        self.lines += 1;
        let loc = Loc {
            file,
            line: raw.number,
        };
        let first = self.lines == 1;
        self.current = Some(loc);
        self.check_line(loc, first, raw, in_last_file);
        self.previous = Some(loc);
    }

    fn check_line(&mut self, loc: Loc, first: bool, raw: RawLine<'_>, in_last_file: bool) {
        if raw.bytes.iter().all(u8::is_ascii_whitespace) {
            self.report(
                Some(loc),
                Rule::BlankLine,
                "blank line: readers skip it, but a trace has one JSON object per line".into(),
            );
            if first {
                self.meta_missing(loc, "a blank line");
            }
            return;
        }
        match parse_line(raw.bytes) {
            Ok(line) => self.parsed(loc, first, line, raw.bytes),
            Err(e) => self.unparsed(loc, first, e, raw, in_last_file),
        }
    }

    fn meta_missing(&mut self, loc: Loc, what: &str) {
        self.report(
            Some(loc),
            Rule::MetaMissing,
            format!(
                "the first line is {what}, not a meta line: a trace starts with \
                 {{\"v\":1,\"type\":\"meta\",\"startedAt\",\"label\",\"command\"}}"
            ),
        );
    }

    fn unparsed(
        &mut self,
        loc: Loc,
        first: bool,
        error: LineError,
        raw: RawLine<'_>,
        in_last_file: bool,
    ) {
        let torn = !raw.terminated
            && in_last_file
            && matches!(
                error,
                LineError::InvalidUtf8 { .. } | LineError::NotJson { .. }
            );
        let what = match &error {
            _ if torn => {
                self.report(
                    Some(loc),
                    Rule::TornLastLine,
                    format!(
                        "the last line is cut off ({} bytes, no final newline, not complete \
                         JSON): the recording was interrupted while writing it; readers \
                         ignore it and everything before it is intact",
                        raw.bytes.len()
                    ),
                );
                "a torn line"
            }
            LineError::InvalidUtf8 { column } => {
                self.report(
                    Some(loc),
                    Rule::InvalidUtf8,
                    format!(
                        "not valid UTF-8 (first bad byte at column {column}): a trace is UTF-8 \
                         JSON; a producer must escape or base64 non-UTF-8 payloads"
                    ),
                );
                "not UTF-8"
            }
            LineError::NotJson { message } => {
                self.report(
                    Some(loc),
                    Rule::NotJson,
                    format!("not JSON ({message}): every line of a trace is one JSON object"),
                );
                "not JSON"
            }
            LineError::NotObject { found } => {
                self.report(
                    Some(loc),
                    Rule::NotObject,
                    format!(
                        "a JSON {found}, not an object: every line of a trace is one JSON object"
                    ),
                );
                "not an object"
            }
            LineError::BadMember { message } => {
                self.ill_typed(loc, first, raw.bytes, message);
                return;
            }
        };
        if first {
            self.meta_missing(loc, what);
        }
    }

    /// A JSON object whose known members have the wrong types: say which, and keep the
    /// session bookkeeping right for meta and end lines.
    fn ill_typed(&mut self, loc: Loc, first: bool, bytes: &[u8], serde_message: &str) {
        let value: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
        let ty = value.get("type").and_then(Value::as_str).unwrap_or("");
        let found = ill_typed_members(ty, &value);
        let listed = if found.is_empty() {
            serde_message.to_owned()
        } else {
            found.join("; ")
        };
        match ty {
            "meta" => {
                self.start_session(loc);
                self.report(Some(loc), Rule::MetaIncomplete, listed);
                return;
            }
            _ if first => self.meta_missing(loc, "a line with ill-typed members"),
            _ => {}
        }
        if let Some(end) = self.ended {
            self.after_end(loc, end);
        }
        self.report(Some(loc), Rule::IllTypedMember, listed);
        if ty == "end" && self.ended.is_none() {
            self.ended = Some(loc);
        }
    }

    fn after_end(&mut self, loc: Loc, end: Loc) {
        self.report(
            Some(loc),
            Rule::LineAfterEnd,
            format!(
                "line after the end line ({}): the end line closes its session; only a new \
                 meta line may follow it",
                self.place(end)
            ),
        );
    }

    /// `line N`, or `file:N` when `loc` is in another file than the one being read.
    fn place(&self, loc: Loc) -> String {
        match self.current {
            Some(c) if c.file != loc.file => format!("{}:{}", self.file_name(Some(loc)), loc.line),
            _ => format!("line {}", loc.line),
        }
    }

    fn parsed(&mut self, loc: Loc, first: bool, line: Line<'_>, bytes: &[u8]) {
        if let Line::Meta(meta) = &line {
            self.meta(loc, meta);
            return;
        }
        if first {
            let what = match line.class() {
                crate::LineClass::Message => "a message line",
                crate::LineClass::Event => "an event line",
                crate::LineClass::Turn => "a turn",
                crate::LineClass::End => "an end line",
                _ => "a line of unknown type",
            };
            self.meta_missing(loc, what);
        }
        if let Some(end) = self.ended {
            self.after_end(loc, end);
        }
        match line {
            Line::Meta(_) => {}
            Line::Message(view) => self.message(loc, &view),
            Line::Event(view) => self.event(loc, &view),
            Line::Turn(turn) => self.turn(loc, &turn),
            Line::End(end) => self.end(loc, &end),
            Line::Other(view) => self.other(loc, &view, bytes),
        }
    }

    fn start_session(&mut self, loc: Loc) {
        if self.sessions > 0 {
            self.close_session(self.previous);
            self.report(
                Some(loc),
                Rule::SeveralSessions,
                format!(
                    "session {} starts here: several sessions were appended to one file \
                     (requests are paired within each session; one session per file is \
                     what readers expect)",
                    self.sessions + 1
                ),
            );
        } else if self.lines > 1 {
            // Requests before the first meta belong to no session: do not pair across it.
            self.close_session(self.previous);
        }
        self.sessions += 1;
        self.ended = None;
    }

    /// Ends a session: its unanswered requests and, if it had no end line, that.
    fn close_session(&mut self, last: Option<Loc>) {
        let mut pending = self.pairer.drain_pending();
        pending.sort_by_key(|(_, p)| p.loc);
        for (key, req) in pending {
            let side = match key.request_dir {
                Dir::Out => "server request",
                _ => "request",
            };
            let session = key
                .session
                .as_deref()
                .map(|s| format!(" of MCP session {}", snippet(s)))
                .unwrap_or_default();
            self.report(
                Some(req.loc),
                Rule::UnansweredRequest,
                format!(
                    "{side} {} (id {}){session} got no response before the session ended",
                    snippet(&req.method),
                    key.id
                ),
            );
        }
        self.cancelled.clear();
        if self.ended.is_none() && self.sessions > 0 {
            self.report(
                last,
                Rule::NoEnd,
                "no end line: the recording was interrupted (the producer was killed or \
                 crashed) or is still being written; everything up to here is readable"
                    .into(),
            );
        }
    }

    fn meta(&mut self, loc: Loc, meta: &Meta) {
        self.start_session(loc);
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

    fn message(&mut self, loc: Loc, view: &MessageView<'_>) {
        let dir = view.dir().unwrap_or(Dir::In);
        self.require_time(loc, "a message line", view.t.as_deref());
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
            } else if !KNOWN_KINDS.contains(&kind) {
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
            Some(b'{') => self.envelope(loc, session, dir, text, None),
            Some(b'[') => self.batch(loc, session, dir, text),
            _ => self.report(
                Some(loc),
                Rule::NotJsonrpc,
                format!("raw is {}, not a JSON-RPC 2.0 message", describe_text(text)),
            ),
        }
    }

    fn batch(&mut self, loc: Loc, session: Option<&str>, dir: Dir, text: &str) {
        let elements: Vec<&RawValue> = match serde_json::from_str(text) {
            Ok(e) => e,
            Err(e) => {
                self.report(
                    Some(loc),
                    Rule::NotJsonrpc,
                    format!("raw batch unreadable: {e}"),
                );
                return;
            }
        };
        if elements.is_empty() {
            self.report(
                Some(loc),
                Rule::NotJsonrpc,
                "raw is an empty batch `[]`, which JSON-RPC 2.0 does not allow".into(),
            );
        }
        for (i, element) in elements.iter().enumerate() {
            let element = element.get();
            if element.trim_start().starts_with('{') {
                self.envelope(loc, session, dir, element, Some(i));
            } else {
                self.report(
                    Some(loc),
                    Rule::NotJsonrpc,
                    format!(
                        "batch element {i} is {}, not a JSON-RPC 2.0 message",
                        describe_text(element)
                    ),
                );
            }
        }
    }

    fn envelope(
        &mut self,
        loc: Loc,
        session: Option<&str>,
        dir: Dir,
        text: &str,
        element: Option<usize>,
    ) {
        let at = element.map_or(String::from("raw"), |i| format!("batch element {i}"));
        let env: Envelope<'_> = match serde_json::from_str(text) {
            Ok(env) => env,
            Err(e) => {
                self.report(
                    Some(loc),
                    Rule::NotJsonrpc,
                    format!("{at} cannot be read as a JSON-RPC message: {e}"),
                );
                return;
            }
        };
        if !env.is_v2() {
            let got = env
                .jsonrpc
                .map_or(String::from("no `jsonrpc` member"), |v| {
                    format!("\"jsonrpc\": {}", snippet(v.get()))
                });
            self.report(
                Some(loc),
                Rule::NotJsonrpc,
                format!("{at} has {got}; a JSON-RPC 2.0 message has \"jsonrpc\": \"2.0\""),
            );
        }
        let kind = env.kind();
        if kind == RpcKind::Invalid {
            let present: Vec<&str> = [
                ("method", env.method.is_some()),
                ("id", env.id.is_some()),
                ("result", env.result.is_some()),
                ("error", env.error.is_some()),
            ]
            .iter()
            .filter(|(_, p)| *p)
            .map(|(n, _)| *n)
            .collect();
            self.report(
                Some(loc),
                Rule::NotJsonrpc,
                format!(
                    "{at} is neither a request (method + non-null id), a notification \
                     (method, no id) nor a response (id + result or error); it has: {}",
                    if present.is_empty() {
                        "none of these".to_owned()
                    } else {
                        present.join(", ")
                    }
                ),
            );
            return;
        }
        if kind == RpcKind::Notification && env.method.as_deref() == Some("notifications/cancelled")
        {
            self.cancel(session, dir, &env);
            return;
        }
        let method = env.method.as_deref().unwrap_or_default().to_owned();
        match self
            .pairer
            .offer(session, dir, &env, || PendingRequest { loc, method })
        {
            Paired::DuplicatePending(old) => {
                let id = env.rpc_id().map(|i| i.to_string()).unwrap_or_default();
                self.report(
                    Some(loc),
                    Rule::DuplicateRequestId,
                    format!(
                        "request id {id} reuses the id of {} ({}) which is still unanswered: \
                         ids must be unique among pending requests, so that one can no \
                         longer be paired",
                        self.place(old.loc),
                        snippet(&old.method)
                    ),
                );
            }
            Paired::Orphan => {
                let id = env.rpc_id();
                let cancelled = id.as_ref().is_some_and(|id| {
                    self.cancelled
                        .contains(&PairKey::for_response(session, dir, id.clone()))
                });
                // An error answering an unreadable request carries id null by design.
                if cancelled || (kind == RpcKind::Error && id == Some(RpcId::Null)) {
                    return;
                }
                let id = id.map_or_else(|| "(not a valid id)".to_owned(), |i| i.to_string());
                let from = if dir == Dir::Out { "client" } else { "server" };
                self.report(
                    Some(loc),
                    Rule::OrphanResponse,
                    format!(
                        "{at}: response to id {id} has no pending {from} request in this \
                         session (never sent, or already answered)"
                    ),
                );
            }
            Paired::Opened | Paired::Closed(_) | Paired::Ignored => {}
        }
    }

    /// `notifications/cancelled`: the request it names needs no response any more.
    fn cancel(&mut self, session: Option<&str>, dir: Dir, env: &Envelope<'_>) {
        #[derive(Deserialize)]
        struct Params<'a> {
            #[serde(borrow, rename = "requestId", default)]
            request_id: Option<&'a RawValue>,
        }
        let Some(params) = env.params else { return };
        let Ok(Params {
            request_id: Some(id),
        }) = serde_json::from_str::<Params<'_>>(params.get())
        else {
            return;
        };
        let Ok(null) = serde_json::from_str::<&RawValue>("null") else {
            return;
        };
        // Offer a stand-in answer from the other side: it closes the pending request.
        let answer = Envelope {
            id: Some(id),
            result: Some(null),
            ..Envelope::default()
        };
        let other = if dir == Dir::In { Dir::Out } else { Dir::In };
        self.pairer
            .offer(session, other, &answer, || PendingRequest {
                loc: Loc { file: 0, line: 0 },
                method: String::new(),
            });
        if let Some(id) = RpcId::from_raw(id) {
            if self.cancelled.len() < MAX_CANCELLED {
                self.cancelled
                    .insert(PairKey::for_response(session, other, id));
            }
        }
    }

    fn event(&mut self, loc: Loc, view: &MessageView<'_>) {
        self.require_time(loc, "an event line", view.t.as_deref());
        let Some(kind) = view.kind.as_deref() else {
            return;
        };
        if !KNOWN_KINDS.contains(&kind) {
            self.tally(loc, Rule::UnknownKind, kind);
        }
        if matches!(kind, "llm.request" | "llm.exchange") {
            if let Some(raw) = view.raw {
                self.request_body(loc, raw.get());
            }
        }
    }

    /// Keeps the prefix digests of a request body an `llm.*` event carries, and settles
    /// the markers that were waiting for it.
    fn request_body(&mut self, loc: Loc, raw: &str) {
        #[derive(Deserialize)]
        struct Exchange<'a> {
            #[serde(borrow, default)]
            request_sha256: Option<Cow<'a, str>>,
            #[serde(borrow, default)]
            body: Option<&'a RawValue>,
        }
        let Ok(Exchange {
            request_sha256: Some(sha),
            body: Some(body),
        }) = serde_json::from_str::<Exchange<'_>>(raw)
        else {
            return;
        };
        let text = body.get();
        let stored = match text.as_bytes().first() {
            Some(b'"') => match serde_json::from_str::<String>(text) {
                Ok(exact) => StoredBody {
                    loc,
                    exact: true,
                    digests: RequestDigests::from_body(exact.as_bytes()),
                },
                Err(_) => return,
            },
            Some(b'{') => StoredBody {
                loc,
                exact: false,
                digests: RequestDigests::from_body(text.as_bytes()),
            },
            _ => return,
        };
        let key = sha.to_ascii_lowercase();
        if let Some(waiting) = self.markers.remove(&key) {
            self.pending_markers -= waiting.len();
            for marker in waiting {
                self.settle(&marker, &stored);
            }
        }
        if self.bodies.len() >= MAX_REQUEST_BODIES {
            if let Some(oldest) = self.body_order.pop_front() {
                self.bodies.remove(&oldest);
            }
        }
        if self.bodies.insert(key.clone(), stored).is_none() {
            self.body_order.push_back(key);
        }
    }

    fn history_elided(&mut self, loc: Loc, count: u64, sha256: &str, request: Option<&str>) {
        let Some(request) = request else {
            self.tally(loc, Rule::HistoryElidedUnverifiable, "no request_sha256");
            return;
        };
        let marker = Marker {
            loc,
            count,
            sha256: sha256.to_owned(),
            request_sha256: request.to_ascii_lowercase(),
        };
        if let Some(body) = self.bodies.remove(&marker.request_sha256) {
            self.settle(&marker, &body);
            self.bodies.insert(marker.request_sha256, body);
        } else if self.pending_markers < MAX_PENDING_MARKERS {
            self.pending_markers += 1;
            self.markers
                .entry(marker.request_sha256.clone())
                .or_default()
                .push(marker);
        } else {
            self.tally(
                loc,
                Rule::HistoryElidedUnverifiable,
                "body not in the trace",
            );
        }
    }

    fn settle(&mut self, marker: &Marker, body: &StoredBody) {
        let at = self.place(body.loc);
        let digests = match &body.digests {
            Ok(d) => d,
            Err(e) => {
                self.report(
                    Some(marker.loc),
                    Rule::HistoryElidedUnverifiable,
                    format!(
                        "history_elided cannot be verified: the request body at {at} is not \
                         a request with a messages array ({e})"
                    ),
                );
                return;
            }
        };
        let request = body.exact.then_some(marker.request_sha256.as_str());
        match digests.verify(marker.count, &marker.sha256, request) {
            Verdict::Verified => {}
            Verdict::Mismatch { recorded, computed } => self.report(
                Some(marker.loc),
                Rule::HistoryElidedMismatch,
                format!(
                    "history_elided.sha256 is {} but the first {} messages of the request \
                     body at {at} hash to {computed}: the marker does not describe what was \
                     sent",
                    snippet(&recorded),
                    marker.count
                ),
            ),
            Verdict::TooFewMessages { count, available } => self.report(
                Some(marker.loc),
                Rule::HistoryElidedMismatch,
                format!(
                    "history_elided.count is {count} but the request body at {at} has only \
                     {available} messages"
                ),
            ),
            Verdict::RequestMismatch { recorded, computed } => self.report(
                Some(marker.loc),
                Rule::HistoryElidedRequestMismatch,
                format!(
                    "the request body at {at} hashes to {computed}, not to request_sha256 {}: \
                     it was redacted or re-encoded (the elided prefix does match)",
                    snippet(&recorded)
                ),
            ),
            Verdict::Unverifiable { reason } => self.report(
                Some(marker.loc),
                Rule::HistoryElidedUnverifiable,
                format!("history_elided cannot be verified: {reason}"),
            ),
        }
    }

    fn turn(&mut self, loc: Loc, turn: &Turn) {
        self.require_time(loc, "a turn", turn.t.as_deref());
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

    fn end(&mut self, loc: Loc, end: &End) {
        self.require_time(loc, "the end line", end.t.as_deref());
        if end.duration_ms.is_none() {
            self.report(
                Some(loc),
                Rule::EndIncomplete,
                "end has no `durationMs` (milliseconds since meta.startedAt)".into(),
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

    fn other(&mut self, loc: Loc, view: &MessageView<'_>, bytes: &[u8]) {
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

    fn finish(mut self, bytes: u64) -> Report {
        if self.lines == 0 {
            self.report(
                None,
                Rule::MetaMissing,
                "empty file: a trace starts with a meta line".into(),
            );
        } else {
            self.close_session(self.previous);
        }
        let waiting: Vec<Marker> = self.markers.drain().flat_map(|(_, m)| m).collect();
        for marker in waiting {
            self.tally(
                marker.loc,
                Rule::HistoryElidedUnverifiable,
                "body not in the trace",
            );
        }
        for ((rule, name), tally) in std::mem::take(&mut self.tallies) {
            let problem = Problem {
                file: self.file_name(Some(tally.first)),
                line: Some(tally.first.line),
                rule,
                severity: rule.severity(),
                message: tally_message(rule, &name, tally.count),
                count: Some(tally.count),
            };
            self.found.push(Found {
                loc: Some(tally.first),
                problem,
            });
        }
        self.found
            .sort_by_key(|f| f.loc.map_or((usize::MAX, u64::MAX), |l| (l.file, l.line)));
        let mut summaries: Vec<(Rule, u64)> = self
            .per_rule
            .iter()
            .filter(|(_, n)| **n as usize > self.max_per_rule)
            .map(|(r, n)| (*r, *n - self.max_per_rule as u64))
            .collect();
        summaries.sort();
        let mut problems: Vec<Problem> = self.found.into_iter().map(|f| f.problem).collect();
        for (rule, more) in summaries {
            problems.push(Problem {
                file: self.name.clone(),
                line: None,
                rule,
                severity: rule.severity(),
                message: format!(
                    "{more} more {} problems not listed (the first {} are)",
                    rule.id(),
                    self.max_per_rule
                ),
                count: Some(more),
            });
        }
        Report {
            file: self.name,
            files: self.files,
            lines: self.lines,
            bytes,
            sessions: self.sessions,
            errors: self.counts[Severity::Error as usize],
            warnings: self.counts[Severity::Warning as usize],
            infos: self.counts[Severity::Info as usize],
            problems,
        }
    }
}

fn tally_message(rule: Rule, name: &str, count: u64) -> String {
    let lines = if count == 1 {
        "1 line".to_owned()
    } else {
        format!("{count} lines")
    };
    match rule {
        Rule::UnknownType => {
            format!("unknown line type \"{name}\" ({lines}, first here): readers skip it")
        }
        Rule::UnknownDir => {
            format!("unknown dir \"{name}\" ({lines}, first here): readers ignore it")
        }
        Rule::UnknownKind => format!(
            "kind \"{name}\" is not one reel knows ({lines}, first here): readers show it as \
             the row summary"
        ),
        Rule::UnknownBlockType => format!(
            "unknown block type \"{name}\" ({count} blocks, first here): readers show a \
             placeholder"
        ),
        Rule::UnknownMetaKind => format!(
            "meta.kind \"{name}\" ({count} sessions, first here): readers show a generic trace"
        ),
        Rule::HistoryElidedUnverifiable if name == "no request_sha256" => format!(
            "{count} history_elided blocks (first here) have no request_sha256, so their \
             request cannot be found to verify them"
        ),
        Rule::HistoryElidedUnverifiable => format!(
            "{count} history_elided blocks (first here) cannot be verified: the elided request \
             bodies are not in the trace (an llm.request or llm.exchange event with the same \
             request_sha256 and a `body` would let them be)"
        ),
        _ => format!("{name} ({lines}, first here)"),
    }
}

/// What a known block type requires, for the message when it lacks it; `None` for types
/// this checker does not know.
fn required_members(ty: &str) -> Option<&'static str> {
    Some(match ty {
        "thinking" => "a string `thinking`",
        "text" => "a string `text`",
        "tool_use" => "a string `id` and a string `name`",
        "tool_result" => "a string `tool_use_id` (and a boolean `is_error`, if any)",
        "history_elided" => {
            "a non-negative integer `count` and a string `sha256` (and a string `request_sha256`)"
        }
        _ => return None,
    })
}

/// The JSON type a member must have.
#[derive(Clone, Copy)]
enum Expect {
    Number,
    Integer,
    Count,
    Str,
    Bool,
    Array,
    Object,
}

impl Expect {
    fn accepts(self, v: &Value) -> bool {
        match self {
            Expect::Number => v.is_number(),
            Expect::Integer => v.is_i64(),
            Expect::Count => v.is_u64(),
            Expect::Str => v.is_string(),
            Expect::Bool => v.is_boolean(),
            Expect::Array => v.is_array(),
            Expect::Object => v.is_object(),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Expect::Number => "a number",
            Expect::Integer => "an integer",
            Expect::Count => "a non-negative integer",
            Expect::Str => "a string",
            Expect::Bool => "a boolean",
            Expect::Array => "an array",
            Expect::Object => "an object",
        }
    }
}

/// The members of a line whose JSON type is wrong, as sentences (`null` counts as
/// absent, as the typed line model reads it).
fn ill_typed_members(ty: &str, value: &Value) -> Vec<String> {
    use Expect::*;
    let table: &[(&str, Expect)] = match ty {
        "meta" => &[
            ("startedAt", Str),
            ("label", Str),
            ("command", Array),
            ("mcpTapVersion", Str),
            ("kind", Str),
            ("source", Str),
            ("reel", Count),
            ("transport", Str),
            ("listen", Str),
            ("upstream", Str),
        ],
        "turn" => &[
            ("t", Str),
            ("role", Str),
            ("blocks", Array),
            ("model", Str),
            ("usage", Object),
            ("timing", Object),
            ("timing.ttft_ms", Number),
            ("timing.duration_ms", Number),
            ("source", Str),
            ("endpoint", Str),
            ("stream", Bool),
            ("echoed", Bool),
            ("truncated", Bool),
            ("stop_reason", Str),
            ("corr_id", Str),
        ],
        "end" => &[
            ("t", Str),
            ("exitCode", Integer),
            ("reason", Str),
            ("durationMs", Number),
            ("counts", Object),
            ("counts.in", Count),
            ("counts.out", Count),
            ("counts.events", Count),
            ("counts.turns", Count),
            ("counts.errors", Count),
            ("source", Str),
        ],
        _ => &[("reformatted", Bool)],
    };
    let prefix = if ty.is_empty() { "line" } else { ty };
    let mut found = Vec::new();
    for (path, expect) in table {
        let mut v = Some(value);
        for part in path.split('.') {
            v = v.and_then(|v| v.get(part));
        }
        match v {
            Some(v) if !v.is_null() && !expect.accepts(v) => found.push(format!(
                "{prefix}.{path} is {}, expected {}",
                describe(v),
                expect.name()
            )),
            _ => {}
        }
    }
    found
}

/// A JSON value for a message: its type and an excerpt.
fn describe(v: &Value) -> String {
    let ty = match v {
        Value::Null => return "null".into(),
        Value::Bool(b) => return format!("{b} (a boolean)"),
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    format!("{} ({ty})", snippet(&v.to_string()))
}

/// [`describe`] for JSON text, without building the value.
fn describe_text(text: &str) -> String {
    let t = text.trim();
    let ty = match t.as_bytes().first() {
        Some(b'"') => "a string",
        Some(b'[') => "an array",
        Some(b'{') => "an object",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => return "null".into(),
        _ => "a number",
    };
    format!("{} ({ty})", snippet(t))
}

/// At most [`SNIPPET`] characters of `s`, with `…` when cut.
fn snippet(s: &str) -> String {
    match s.char_indices().nth(SNIPPET) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = r#"{"v":1,"type":"meta","startedAt":"2026-05-12T23:00:00.000Z","label":"t","command":["srv"]}"#;
    const END: &str =
        r#"{"t":"2026-05-12T23:00:01.000Z","type":"end","exitCode":0,"durationMs":1000}"#;

    fn check(text: &str) -> Report {
        check_read(
            Path::new("t.jsonl"),
            text.as_bytes(),
            &CheckOptions::default(),
        )
        .unwrap()
    }

    fn trace(body: &[&str]) -> String {
        let mut s = String::from(META);
        s.push('\n');
        for l in body {
            s.push_str(l);
            s.push('\n');
        }
        s.push_str(END);
        s.push('\n');
        s
    }

    fn rules(r: &Report) -> Vec<(Rule, Option<u64>)> {
        r.problems.iter().map(|p| (p.rule, p.line)).collect()
    }

    fn msg(t: &str, dir: &str, raw: &str) -> String {
        format!(r#"{{"t":"{t}","dir":"{dir}","raw":{raw}}}"#)
    }

    const T: &str = "2026-05-12T23:00:00.500Z";

    #[test]
    fn a_clean_trace_has_no_problems() {
        let r = check(&trace(&[
            &msg(T, "in", r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#),
            &msg(
                T,
                "out",
                r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#,
            ),
            &msg(T, "in", r#"[{"jsonrpc":"2.0","id":"a","method":"ping"}]"#),
            &msg(T, "out", r#"[{"jsonrpc":"2.0","id":"a","result":{}}]"#),
        ]));
        assert_eq!(rules(&r), vec![]);
        assert_eq!((r.lines, r.sessions, r.errors), (6, 1, 0));
    }

    #[test]
    fn ids_pair_per_direction_session_and_type() {
        let r = check(&trace(&[
            &msg(T, "in", r#"{"jsonrpc":"2.0","id":1,"method":"a"}"#),
            &msg(T, "out", r#"{"jsonrpc":"2.0","id":"1","result":{}}"#),
            &msg(T, "in", r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
        ]));
        assert_eq!(
            rules(&r),
            vec![
                (Rule::UnansweredRequest, Some(2)),
                (Rule::OrphanResponse, Some(3)),
                (Rule::OrphanResponse, Some(4)),
            ]
        );
    }

    #[test]
    fn cancelled_requests_need_no_answer() {
        let r = check(&trace(&[
            &msg(T, "in", r#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#),
            &msg(
                T,
                "in",
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#,
            ),
            &msg(T, "out", r#"{"jsonrpc":"2.0","id":7,"result":{}}"#),
        ]));
        assert_eq!(rules(&r), vec![]);
    }

    #[test]
    fn pairing_restarts_with_each_session() {
        let text = format!(
            "{META}\n{}\n{END}\n{META}\n{}\n{END}\n",
            msg(T, "in", r#"{"jsonrpc":"2.0","id":1,"method":"a"}"#),
            msg(T, "out", r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
        );
        let r = check(&text);
        assert_eq!(
            rules(&r),
            vec![
                (Rule::UnansweredRequest, Some(2)),
                (Rule::SeveralSessions, Some(4)),
                (Rule::OrphanResponse, Some(5)),
            ]
        );
        assert_eq!(r.sessions, 2);
    }

    #[test]
    fn floods_are_capped_with_a_summary() {
        let lines: Vec<String> = (0..120).map(|_| "[1]".to_owned()).collect();
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let r = check(&trace(&refs));
        assert_eq!(r.errors, 120);
        assert_eq!(r.of_rule(Rule::NotObject).count(), DEFAULT_MAX_PER_RULE + 1);
        let summary = r.problems.last().unwrap();
        assert_eq!(
            (summary.rule, summary.line, summary.count),
            (Rule::NotObject, None, Some(70))
        );
    }

    #[test]
    fn unknown_names_are_tallied_once_each() {
        let r = check(&trace(&[
            r#"{"t":"2026-05-12T23:00:00.500Z","dir":"event","kind":"x.y","raw":{}}"#,
            r#"{"t":"2026-05-12T23:00:00.500Z","dir":"event","kind":"x.y","raw":{}}"#,
            r#"{"t":"2026-05-12T23:00:00.500Z","dir":"event","kind":"x.z","raw":{}}"#,
            r#"{"t":"2026-05-12T23:00:00.500Z","type":"turn","role":"user","blocks":[{"type":"image"},{"type":"image"}]}"#,
        ]));
        assert_eq!(r.infos, 3);
        let kinds: Vec<_> = r
            .of_rule(Rule::UnknownKind)
            .map(|p| (p.line, p.count))
            .collect();
        assert_eq!(kinds, vec![(Some(2), Some(2)), (Some(4), Some(1))]);
        assert_eq!(
            r.of_rule(Rule::UnknownBlockType).next().unwrap().count,
            Some(2)
        );
        assert_eq!(r.errors + r.warnings, 0);
    }

    #[test]
    fn distinct_unknown_names_are_capped() {
        let lines: Vec<String> = (0..MAX_DISTINCT_NAMES + 40)
            .map(|i| format!(r#"{{"t":"{T}","dir":"event","kind":"k.{i}"}}"#))
            .collect();
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let r = check(&trace(&refs));
        let kinds: Vec<&Problem> = r.of_rule(Rule::UnknownKind).collect();
        assert_eq!(kinds.len(), MAX_DISTINCT_NAMES + 1);
        assert_eq!(r.infos, MAX_DISTINCT_NAMES as u64 + 1);
        let other = kinds
            .iter()
            .find(|p| p.message.contains("(other names)"))
            .unwrap();
        assert_eq!(other.count, Some(40));
    }

    #[test]
    fn history_elided_is_verified_against_a_body_in_the_trace() {
        let body = r#"{"model":"claude-example-1","max_tokens":64,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"hello"}]},{"role":"user","content":"again"}]}"#;
        let req = crate::hash::request_sha256(body.as_bytes());
        let good = "06b6136d214f5714bd5894f383a5fd9b13a0750810e13d8f177b5e8607472dae";
        let event = format!(
            r#"{{"t":"{T}","dir":"event","kind":"llm.request","raw":{{"request_sha256":"{req}","body":{}}}}}"#,
            serde_json::to_string(body).unwrap()
        );
        let turn = |sha: &str| {
            format!(
                r#"{{"t":"{T}","type":"turn","role":"user","blocks":[{{"type":"history_elided","count":2,"sha256":"{sha}","request_sha256":"{req}"}}]}}"#
            )
        };
        // Marker before and after its body; a wrong one after.
        let r = check(&trace(&[
            &turn(good),
            &event,
            &turn(good),
            &turn(&"0".repeat(64)),
        ]));
        assert_eq!(rules(&r), vec![(Rule::HistoryElidedMismatch, Some(5))]);
        // Without the body, nothing can be verified: info only.
        let r = check(&trace(&[&turn(good), &turn(&"0".repeat(64))]));
        assert_eq!(rules(&r), vec![(Rule::HistoryElidedUnverifiable, Some(2))]);
        assert_eq!(r.problems[0].count, Some(2));
        assert_eq!(r.errors, 0);
    }

    #[test]
    fn ill_typed_members_are_named() {
        let r = check(&format!(
            "{}\n{}\n{END}\n",
            r#"{"v":1,"type":"meta","startedAt":5,"label":"x","command":[]}"#,
            r#"{"t":"2026-05-12T23:00:00.500Z","type":"turn","role":3,"blocks":[]}"#
        ));
        assert_eq!(
            rules(&r),
            vec![
                (Rule::MetaIncomplete, Some(1)),
                (Rule::IllTypedMember, Some(2))
            ]
        );
        assert!(r.problems[0].message.contains("meta.startedAt is 5"));
        assert!(r.problems[1].message.contains("turn.role is 3"));
        assert_eq!(r.sessions, 1);
    }

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
