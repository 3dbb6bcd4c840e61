//! Problems, and the report they end up in. Every check files its problems here: a
//! problem is listed unless its rule already has `max_per_rule` listed, and counted
//! either way; unknown names are tallied into one problem per name and rule (at most
//! [`MAX_DISTINCT_NAMES`] names per rule, the rest under "(other names)"). At the end
//! the tallies and one summary per rule with unlisted problems are added, and the
//! problems sorted by file and line. [`Problem`] and [`CheckReport`] serialise to the
//! entries of `reel check --json` (schema `reel.check/1`).

use super::checker::Checker;
use super::members::snippet;
use super::options::MAX_DISTINCT_NAMES;
use super::report::{CheckReport, Problem};
use super::rules::{Rule, Severity};
use super::state::{Found, Loc, Tally};

impl Checker {
    fn file_name(&self, loc: Option<Loc>) -> String {
        loc.and_then(|l| self.files.get(l.file))
            .unwrap_or(&self.name)
            .clone()
    }

    fn count(&mut self, severity: Severity) {
        self.counts[severity as usize] += 1;
    }

    /// Records a problem, listing it unless its rule already has `max_per_rule` listed.
    pub(super) fn report(&mut self, loc: Option<Loc>, rule: Rule, message: String) {
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
    pub(super) fn tally(&mut self, loc: Loc, rule: Rule, name: &str) {
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

    /// `line N`, or `file:N` when `loc` is in another file than the one being read.
    pub(super) fn place(&self, loc: Loc) -> String {
        match self.current {
            Some(c) if c.file != loc.file => format!("{}:{}", self.file_name(Some(loc)), loc.line),
            _ => format!("line {}", loc.line),
        }
    }

    /// Adds the tallies and the summaries of unlisted problems, sorts, and builds the
    /// report.
    pub(super) fn into_report(mut self, bytes: u64) -> CheckReport {
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
        CheckReport {
            file: self.name,
            files: self.files,
            lines: self.lines,
            bytes,
            sessions: self.sessions,
            errors: self.counts[Severity::Error as usize],
            warnings: self.counts[Severity::Warning as usize],
            infos: self.counts[Severity::Info as usize],
            problems,
            seal: None,
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

#[cfg(test)]
mod tests {
    use crate::check::testing::{T, check, trace};
    use crate::check::{DEFAULT_MAX_PER_RULE, MAX_DISTINCT_NAMES, Problem, Rule};

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

    /// Every kind an import writes is known (one list in reel-convert), so a trace reel
    /// imported itself checks without `unknown-kind` notes.
    #[test]
    fn the_kinds_an_import_writes_are_known() {
        let lines: Vec<String> = reel_convert::EVENT_KINDS
            .iter()
            .map(|k| format!(r#"{{"t":"{T}","dir":"event","kind":"{k}","raw":{{}}}}"#))
            .collect();
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let r = check(&trace(&refs));
        assert_eq!(r.of_rule(Rule::UnknownKind).count(), 0, "{:?}", r.problems);
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
}
