//! The first pass over one file: its start, its facts, the lines it skips, and the
//! assistant messages whose lines are not adjacent.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde_json::{Map, Value};

use crate::{parse_time, read_lines};
use reel_trace::Timestamp;

/// How many split-message warnings one file gives before it sums up the rest.
const MAX_SPLIT_WARNINGS: usize = 10;

/// What a first pass over one file finds.
#[derive(Debug, Default)]
pub struct Survey {
    /// The first line's timestamp.
    pub first: Option<Timestamp>,
    /// `sessionId`, `cwd`, `version`, `gitBranch` as first seen.
    pub facts: Map<String, Value>,
    /// Lines skipped, by `type`.
    pub skipped: BTreeMap<String, u64>,
    /// Lines that become turns.
    pub turn_lines: u64,
    /// Assistant messages whose lines are not adjacent: id → (first line, last line).
    pub split: HashMap<String, (u64, u64)>,
    seen: HashMap<String, (u64, u64)>,
    current: Option<String>,
}

impl Survey {
    /// Notes line `number`.
    pub fn line(&mut self, number: u64, bytes: &[u8]) {
        let Ok(m) = serde_json::from_slice::<Map<String, Value>>(bytes) else {
            return;
        };
        if self.first.is_none() {
            self.first = line_time(&m);
        }
        for k in ["sessionId", "cwd", "version", "gitBranch"] {
            if let Some(v) = m.get(k).filter(|v| v.is_string())
                && !self.facts.contains_key(k)
            {
                self.facts.insert(k.to_owned(), v.clone());
            }
        }
        let ty = m.get("type").and_then(Value::as_str).unwrap_or_default();
        match ty {
            "assistant" => {
                self.turn_lines += 1;
                let Some(id) = message_id(&m) else {
                    self.current = None;
                    return;
                };
                match self.seen.get_mut(id) {
                    Some(span) => {
                        if self.current.as_deref() != Some(id) {
                            self.split.insert(id.to_owned(), *span);
                        }
                        span.1 = number;
                    }
                    None => {
                        self.seen.insert(id.to_owned(), (number, number));
                    }
                }
                self.current = Some(id.to_owned());
            }
            "user" | "system" | "summary" => {
                self.turn_lines += 1;
                self.current = None;
            }
            other => *self.skipped.entry(other.to_owned()).or_default() += 1,
        }
    }

    /// Ends the pass: only the split messages' spans are kept.
    pub fn finish(&mut self) {
        for (id, span) in &mut self.split {
            if let Some(s) = self.seen.get(id) {
                *span = *s;
            }
        }
        self.seen = HashMap::new();
        self.current = None;
    }

    /// The warnings the split messages call for, naming `file`.
    pub fn warnings(&self, file: &str) -> Vec<String> {
        let mut split: Vec<(&String, &(u64, u64))> = self.split.iter().collect();
        split.sort_by_key(|(_, span)| **span);
        let mut out: Vec<String> = split
            .iter()
            .take(MAX_SPLIT_WARNINGS)
            .map(|(id, (a, b))| {
                format!(
                    "{file}: assistant message {id} is written on lines {a}…{b} with other \
                     turns between them: merged into one turn (its usage counted once), \
                     written where its last line is"
                )
            })
            .collect();
        if split.len() > MAX_SPLIT_WARNINGS {
            out.push(format!(
                "{file}: {} more assistant messages split the same way",
                split.len() - MAX_SPLIT_WARNINGS
            ));
        }
        out
    }
}

pub(super) fn survey(path: &Path) -> std::io::Result<Survey> {
    let mut s = Survey::default();
    let mut lines = read_lines(path)?;
    while let Some((number, bytes)) = lines.next_line()? {
        s.line(number, &crate::large::skeleton(bytes));
    }
    s.finish();
    Ok(s)
}

pub(super) fn line_time(m: &Map<String, Value>) -> Option<Timestamp> {
    m.get("timestamp")
        .and_then(Value::as_str)
        .and_then(parse_time)
        .map(|(t, _)| t)
}

pub(super) fn message_id(m: &Map<String, Value>) -> Option<&str> {
    m.get("message")
        .and_then(|msg| msg.get("id"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}
