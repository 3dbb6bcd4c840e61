//! What `reel check` writes: the `reel.check/1` JSON document and the lines people read,
//! beside the [`CheckReport`] they render, so every caller (the CLI, the viewer, a test)
//! shows a check the same way.
//!
//! The document:
//!
//! ```text
//! { "schema": "reel.check/1",
//!   "files": [ { "file", "files": [read order], "lines", "bytes", "sessions",
//!                "errors", "warnings", "infos",
//!                "problems": [ { "file", "line"?, "rule", "severity", "message", "count"? } ],
//!                "seal"?: { "seal", "status": "intact" | "open" | "tampered", "chain",
//!                           "authenticated", "sealed", "verified", "closed", "unsealed",
//!                           "first"?: { "kind", "file", "line"?, "sealLine"?, "message" } }
//!                       | { "seal", "unreadable": "why" } }
//!            | { "file", "unreadable": "why" } ],
//!   "errors", "warnings", "infos", "unreadable" }
//! ```
//!
//! `line` is absent for file-level problems and for summaries of unlisted problems;
//! `count` is present on aggregated problems. Counts include problems not listed.
//! `seal` is there only with `--verify` (see [`reel_trace::seal::Verification`]): `first` is
//! the first failure, its `kind` one of `changed`, `removed`, `inserted`, `reordered`,
//! `truncated`, `appended`, `seal-edited`, `wrong-key`, `not-keyed`; each finding is
//! also a problem under its `seal-*` rule. A seal that cannot be read counts as an
//! unreadable input.
//!
//! Problems quote trace content (unknown `type`, `kind`, methods): text lines are made
//! one line ([`reel_report::display::one_line`] is applied where the checker quotes), and the
//! caller writes them through its terminal-safe writer.

use serde::Serialize;

use super::{CheckReport, Problem, Rule, SealOutcome, Severity};
use reel_report::display::{Paint, Tone, plural};
use reel_trace::seal::SealStatus;

/// Identifies the JSON document.
pub const SCHEMA: &str = "reel.check/1";

/// One input's outcome in the document.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum FileResult {
    /// The trace was read and checked.
    Checked(CheckReport),
    /// The input could not be read.
    Unreadable {
        /// The input as named.
        file: String,
        /// Why not.
        unreadable: String,
    },
}

/// The `reel.check/1` document: every input's outcome and the totals.
#[derive(Debug, Serialize)]
pub struct Document {
    schema: &'static str,
    /// Each input, in the order given.
    pub files: Vec<FileResult>,
    /// Errors in every trace.
    pub errors: u64,
    /// Warnings in every trace.
    pub warnings: u64,
    /// Infos in every trace.
    pub infos: u64,
    /// Inputs that could not be read.
    pub unreadable: u64,
}

/// What a check found, all inputs together; the CLI maps it to an exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Every input was read; no errors (warnings and info allowed).
    Clean,
    /// A trace violates the format.
    Violations,
    /// An input could not be read (the others were still checked).
    Unreadable,
}

impl Default for Document {
    fn default() -> Self {
        Document {
            schema: SCHEMA,
            files: Vec::new(),
            errors: 0,
            warnings: 0,
            infos: 0,
            unreadable: 0,
        }
    }
}

impl Document {
    /// Adds a checked trace (its counts count whether or not its problems are listed;
    /// a seal that could not be read counts as an unreadable input).
    pub fn add(&mut self, report: CheckReport) {
        if report.seal_is_unreadable() {
            self.unreadable += 1;
        }
        self.errors += report.errors;
        self.warnings += report.warnings;
        self.infos += report.infos;
        self.files.push(FileResult::Checked(report));
    }

    /// Adds an input that could not be read.
    pub fn add_unreadable(&mut self, file: String, why: String) {
        self.unreadable += 1;
        self.files.push(FileResult::Unreadable {
            file,
            unreadable: why,
        });
    }

    /// The verdict: unreadable inputs first, then errors.
    pub fn verdict(&self) -> Verdict {
        if self.unreadable > 0 {
            Verdict::Unreadable
        } else if self.errors > 0 {
            Verdict::Violations
        } else {
            Verdict::Clean
        }
    }

    /// The closing line over several inputs: `3 files: 1 error, 0 warnings, 2 info`.
    pub fn summary_line(&self) -> String {
        format!(
            "{} files: {}, {}, {}{}",
            self.files.len(),
            plural(self.errors, "error"),
            plural(self.warnings, "warning"),
            plural(self.infos, "info"),
            if self.unreadable > 0 {
                format!(", {} unreadable", self.unreadable)
            } else {
                String::new()
            }
        )
    }
}

/// The tone a severity is shown in.
pub fn tone(s: Severity) -> Tone {
    match s {
        Severity::Error => Tone::Bad,
        Severity::Warning => Tone::Warn,
        Severity::Info => Tone::Note,
    }
}

/// One problem: `file:line: severity[rule]: message`.
pub fn problem_line(p: &Problem, paint: Paint<'_>) -> String {
    let place = match p.line {
        Some(n) => format!("{}:{n}", p.file),
        None => p.file.clone(),
    };
    let label = format!("{}[{}]", p.severity.as_str(), p.rule);
    format!(
        "{place}: {}: {}",
        paint(tone(p.severity), &label),
        p.message
    )
}

/// A trace's lines: one per listed problem (none when `quiet`), then its summary
/// `file: ok: 0 errors, 1 warning, 0 info in 20 lines (1 session)`. Each line ends in
/// a newline.
pub fn report_text(report: &CheckReport, quiet: bool, paint: Paint<'_>) -> String {
    let mut out = String::new();
    if !quiet {
        for p in &report.problems {
            out.push_str(&problem_line(p, paint));
            out.push('\n');
        }
        if let Some(seal) = &report.seal {
            out.push_str(&format!("{}: {}\n", report.file, seal_text(seal, paint)));
        }
    }
    let status = if report.errors > 0 {
        paint(Tone::Bad, "FAIL")
    } else {
        paint(Tone::Good, "ok")
    };
    out.push_str(&format!(
        "{}: {status}: {}, {}, {} in {} ({})\n",
        report.file,
        plural(report.errors, "error"),
        plural(report.warnings, "warning"),
        plural(report.infos, "info"),
        plural(report.lines, "line"),
        plural(report.sessions, "session"),
    ));
    out
}

/// What a seal says, in one line: `seal intact: 12 of 12 sealed lines verify, closed
/// (x.jsonl.seal, sha256 chain)`.
pub fn seal_text(seal: &SealOutcome, paint: Paint<'_>) -> String {
    let v = match seal {
        SealOutcome::Verified(v) => v,
        SealOutcome::Unreadable { unreadable, .. } => {
            return format!("{}: {unreadable}", paint(Tone::Bad, "seal unreadable"));
        }
    };
    let (tone, word) = match v.status {
        SealStatus::Intact => (Tone::Good, "seal intact"),
        SealStatus::Open => (Tone::Warn, "seal open"),
        SealStatus::Tampered => (Tone::Bad, "seal FAILED"),
    };
    let mut facts = format!(
        "{} of {} verify",
        v.verified,
        plural(v.sealed, "sealed line")
    );
    if v.unsealed > 0 {
        facts.push_str(&format!(", {} unsealed", plural(v.unsealed, "line")));
    }
    facts.push_str(if v.closed { ", closed" } else { ", not closed" });
    let key = if v.authenticated { ", key checked" } else { "" };
    format!(
        "{}: {facts} ({}, {} chain{key})",
        paint(tone, word),
        v.seal,
        v.chain
    )
}

/// Every rule, a line each: severity, id, meaning.
pub fn rules_text(paint: Paint<'_>) -> String {
    let mut out = String::new();
    for rule in Rule::ALL {
        let sev = rule.severity();
        out.push_str(&format!(
            "{} {:<32} {}\n",
            paint(tone(sev), &format!("{:<8}", sev.as_str())),
            rule.id(),
            rule.description()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{CheckOptions, check_read};
    use reel_report::display::plain;

    fn report(text: &str) -> CheckReport {
        check_read(
            std::path::Path::new("t.jsonl"),
            text.as_bytes(),
            &CheckOptions::default(),
        )
        .unwrap()
    }

    #[test]
    fn a_report_reads_as_lines_and_the_document_totals_it() {
        let bad = report("{\"v\":1,\"type\":\"meta\"}\n");
        let text = report_text(&bad, false, &plain);
        assert!(
            text.lines().last().unwrap().starts_with("t.jsonl: FAIL: "),
            "{text}"
        );
        assert!(
            text.lines()
                .next()
                .unwrap()
                .starts_with("t.jsonl:1: error["),
            "{text}"
        );
        let quiet = report_text(&bad, true, &plain);
        assert_eq!(quiet.lines().count(), 1, "{quiet}");
        let mut doc = Document::default();
        assert_eq!(doc.verdict(), Verdict::Clean);
        doc.add(bad);
        assert_eq!(doc.verdict(), Verdict::Violations);
        doc.add_unreadable("gone".into(), "gone: no such file".into());
        assert_eq!(doc.verdict(), Verdict::Unreadable);
        assert!(
            doc.summary_line().ends_with(", 1 unreadable"),
            "{}",
            doc.summary_line()
        );
        let json = serde_json::to_value(&doc).unwrap();
        assert_eq!(json["schema"], SCHEMA);
        assert_eq!(json["files"][1]["unreadable"], "gone: no such file");
    }

    #[test]
    fn every_rule_is_listed_and_painted_by_severity() {
        let painted = rules_text(&|t, s| format!("<{t:?}>{s}"));
        assert_eq!(painted.lines().count(), Rule::ALL.len());
        assert!(painted.contains("<Bad>error"), "{painted}");
    }
}
