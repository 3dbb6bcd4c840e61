//! The pass over a trace. [`Checker`] holds everything one streaming read needs (the
//! session being read, the pending requests, the problems found so far, the request
//! bodies and `history_elided` markers waiting for each other), takes the lines one at
//! a time and hands each parsed line to the check of its kind. What does not parse is
//! judged here (a blank, torn, non-UTF-8 or non-JSON line, a JSON value that is not an
//! object, ill-typed members), and so is the session structure: a meta line first,
//! nothing but a new meta line after the end line, one session per file.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::members::ill_typed_members;
use super::options::CheckOptions;
use super::report::CheckReport;
use super::rules::Rule;
use super::state::{Found, Loc, Marker, PendingRequest, StoredBody, Tally};
use reel_trace::jsonrpc::{PairKey, Pairer};
use reel_trace::line::{Line, LineError, parse_line};
use reel_trace::reader::RawLine;

/// The state of one check: a single streaming pass over a trace.
pub(super) struct Checker {
    pub(super) name: String,
    pub(super) files: Vec<String>,
    pub(super) max_per_rule: usize,
    pub(super) lines: u64,
    pub(super) sessions: u64,
    /// The end line of the current session, once seen.
    pub(super) ended: Option<Loc>,
    /// The line before the one being checked.
    pub(super) previous: Option<Loc>,
    /// The line being checked.
    pub(super) current: Option<Loc>,
    pub(super) pairer: Pairer<PendingRequest>,
    pub(super) cancelled: HashSet<PairKey>,
    pub(super) found: Vec<Found>,
    pub(super) per_rule: HashMap<Rule, u64>,
    pub(super) counts: [u64; 3],
    pub(super) tallies: BTreeMap<(Rule, String), Tally>,
    pub(super) distinct: HashMap<Rule, usize>,
    pub(super) bodies: HashMap<String, StoredBody>,
    pub(super) body_order: VecDeque<String>,
    pub(super) markers: HashMap<String, Vec<Marker>>,
    pub(super) pending_markers: usize,
    /// The current session's meta named no command (`command: []`): it wrapped no
    /// process.
    pub(super) no_process: bool,
    /// The current session's llm exchanges and whether they gave turns, with the
    /// line of each exchange's event.
    pub(super) llm: reel_trace::llm::TurnCoverage,
    pub(super) llm_locs: HashMap<u64, Loc>,
}

impl Checker {
    pub(super) fn new(name: &Path, files: &[PathBuf], options: &CheckOptions) -> Self {
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
            no_process: false,
            pending_markers: 0,
            llm: reel_trace::llm::TurnCoverage::default(),
            llm_locs: HashMap::new(),
        }
    }

    pub(super) fn line(&mut self, file: usize, raw: RawLine<'_>, in_last_file: bool) {
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
        if let Some(len) = raw.skipped {
            self.report(
                Some(loc),
                Rule::LineTooLong,
                format!(
                    "this line is {len} bytes, longer than reel reads ({} bytes): it was \
                     skipped, not checked (readers skip it too)",
                    reel_trace::reader::MAX_LINE
                ),
            );
            return;
        }
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

    fn parsed(&mut self, loc: Loc, first: bool, line: Line<'_>, bytes: &[u8]) {
        if let Line::Meta(meta) = &line {
            self.meta(loc, meta);
            return;
        }
        if first {
            let what = match line.class() {
                reel_trace::LineClass::Message => "a message line",
                reel_trace::LineClass::Event => "an event line",
                reel_trace::LineClass::Turn => "a turn",
                reel_trace::LineClass::End => "an end line",
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

    pub(super) fn start_session(&mut self, loc: Loc) {
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
        self.close_pairing();
        let turnless = std::mem::take(&mut self.llm).turnless();
        if let Some(note) = reel_trace::llm::turnless_note(&turnless) {
            let loc = turnless
                .first()
                .and_then(|t| self.llm_locs.get(&t.n))
                .copied();
            self.report(loc, Rule::LlmTurnsMissing, note);
        }
        self.llm_locs.clear();
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

    /// Ends the pass: the last session, the markers still waiting, then the report.
    pub(super) fn finish(mut self, bytes: u64) -> CheckReport {
        if self.lines == 0 {
            self.report(
                None,
                Rule::MetaMissing,
                "empty file: a trace starts with a meta line".into(),
            );
        } else {
            self.close_session(self.previous);
        }
        self.markers_never_settled();
        self.into_report(bytes)
    }
}

#[cfg(test)]
mod tests {
    use crate::check::Rule;
    use crate::check::testing::{END, check, rules};

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
}
