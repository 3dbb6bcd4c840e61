//! `reel check --verify`: a trace's seal ([`reel_trace::seal`]) read beside the format
//! check. Each finding of the verification becomes a problem under its `seal-*` rule,
//! so counts, `--min-severity`, the exit status and the `reel.check/1` document treat
//! tampering as they treat any error; the verification's summary is the file entry's
//! `seal` member. Seal problems come after the format's, in the order found.

use super::report::{CheckReport, Problem, SealOutcome};
use super::rules::{Rule, Severity};
use reel_trace::seal::{FindingKind, Verification};

/// The rule a finding is filed under.
pub fn rule_of(kind: FindingKind) -> Rule {
    match kind {
        FindingKind::Changed => Rule::SealChanged,
        FindingKind::Removed => Rule::SealRemoved,
        FindingKind::Inserted => Rule::SealInserted,
        FindingKind::Reordered => Rule::SealReordered,
        FindingKind::Truncated => Rule::SealTruncated,
        FindingKind::Appended => Rule::SealAppended,
        FindingKind::SealEdited => Rule::SealEdited,
        FindingKind::WrongKey => Rule::SealWrongKey,
        FindingKind::NotKeyed => Rule::SealNotKeyed,
        FindingKind::Open => Rule::SealOpen,
        FindingKind::Unauthenticated => Rule::SealUnauthenticated,
    }
}

impl CheckReport {
    /// Adds what the seal says: its findings as problems, its summary as `seal`.
    pub fn add_seal(&mut self, verification: Verification) {
        for f in &verification.findings {
            let rule = rule_of(f.kind);
            match rule.severity() {
                Severity::Error => self.errors += 1,
                Severity::Warning => self.warnings += 1,
                Severity::Info => self.infos += 1,
            }
            self.problems.push(Problem {
                file: f.file.clone(),
                line: f.line,
                rule,
                severity: rule.severity(),
                message: f.message.clone(),
                count: None,
            });
        }
        self.seal = Some(SealOutcome::Verified(Box::new(verification)));
    }

    /// Notes that the trace's seal could not be read (a missing input: `reel check`
    /// exits 66).
    pub fn seal_unreadable(&mut self, seal: String, why: String) {
        self.seal = Some(SealOutcome::Unreadable {
            seal,
            unreadable: why,
        });
    }

    /// True when a seal was asked for and could not be read.
    pub fn seal_is_unreadable(&self) -> bool {
        matches!(self.seal, Some(SealOutcome::Unreadable { .. }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{CheckOptions, check_trace};
    use reel_trace::seal::{seal_trace, verify};

    #[test]
    fn tampering_is_an_error_and_an_open_seal_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("t.jsonl");
        let text = "{\"v\":1,\"type\":\"meta\",\"startedAt\":\"2026-01-01T00:00:00.000Z\",\
                    \"label\":\"t\",\"command\":[\"x\"]}\n\
                    {\"t\":\"2026-01-01T00:00:00.001Z\",\"dir\":\"in\",\"raw\":{\"jsonrpc\":\"2.0\",\"method\":\"a\"}}\n";
        std::fs::write(&trace, text).unwrap();
        seal_trace(&trace, None, false).unwrap();
        std::fs::write(&trace, text.replace("\"a\"", "\"b\"")).unwrap();
        let mut report = check_trace(&trace, &CheckOptions::default()).unwrap();
        let before = report.errors;
        report.add_seal(verify(&trace, None).unwrap());
        assert_eq!(report.errors, before + 1);
        let p = report
            .of_rule(Rule::SealChanged)
            .next()
            .expect("seal-changed");
        assert_eq!(p.line, Some(2));
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["seal"]["status"], "tampered");
        assert_eq!(json["seal"]["first"]["kind"], "changed");
        assert_eq!(json["seal"]["first"]["line"], 2);
        assert_eq!(json["seal"]["first"]["sealLine"], 2);
        assert!(json["seal"].get("findings").is_none());
        assert_eq!(rule_of(FindingKind::Open).severity(), Severity::Warning);
    }
}
