//! Reading a trace against its seal: which line was changed, removed, inserted or
//! reordered first, whether the trace was cut short or added to, and whether the seal
//! itself was edited.
//!
//! One streaming pass over both files in step, in bounded memory: the trace's lines
//! (rotated companions first, as every reader reads them) are digested and compared
//! with the seal's line records one by one while the chain is recomputed. At the first
//! line that differs, each stream is read on alone once, looking for the other's line:
//! - the trace's line is nowhere in the rest of the seal and the sealed line nowhere in
//!   the rest of the trace: the line was **changed**;
//! - the sealed line comes later in the trace: lines were **inserted** before it;
//! - the trace's line comes later in the seal: sealed lines were **removed**;
//! - both come later: lines were **reordered**.
//!
//! A trace that ends before its seal was **truncated** (also when its last line is cut
//! off inside); lines after a closed seal were **appended**. Lines after a seal without a
//! close record are **unsealed**: the recorder was stopped before it closed the seal (or
//! is still recording), which is not tampering, and is reported as a warning.
//!
//! Only the first difference is reported: after it, line numbers no longer pair up, and
//! what follows is usually the same change seen again.

use std::path::{Path, PathBuf};

use super::sidecar::{SealStream, Sealed};
use super::{Digest, SealKey, sidecar_path};
use crate::reader::TraceReader;

pub use super::findings::{Finding, FindingKind, SealStatus, Verification, VerifyError};

/// Verifies the trace at `path` (with its rotated companions) against `<path>.seal`;
/// with `key`, also that the seal was made with that key.
///
/// Fails only when the trace or the seal cannot be read; everything wrong in them is
/// in the [`Verification`].
pub fn verify(path: &Path, key: Option<&SealKey>) -> Result<Verification, VerifyError> {
    let mut findings = Vec::new();
    let mut seal = SealStream::open(&sidecar_path(path), key, &mut findings)?;
    let mut trace = TraceStream::open(path)?;
    let walk = walk(&mut seal, &mut trace)?;
    findings.extend(walk.finding);
    let failed = findings.iter().find(|f| f.kind.fails()).cloned();
    let status = if failed.is_some() {
        SealStatus::Tampered
    } else if !seal.closed {
        SealStatus::Open
    } else {
        SealStatus::Intact
    };
    Ok(Verification {
        seal: seal.name.clone(),
        status,
        chain: seal.chain_name.clone(),
        authenticated: seal.authenticated,
        sealed: seal.count,
        verified: walk.verified,
        closed: seal.closed,
        unsealed: walk.unsealed,
        first: failed,
        findings,
    })
}

/// Where the walk of a trace and its seal in step stopped.
struct Walk {
    /// Lines that matched their sealed digests.
    verified: u64,
    /// Lines after a seal that was not closed.
    unsealed: u64,
    /// What ended the walk, unless both ended together and the seal was closed.
    finding: Option<Finding>,
}

/// Reads the trace and its seal in step up to the first line that differs, or the end
/// of either.
fn walk(seal: &mut SealStream, trace: &mut TraceStream) -> Result<Walk, VerifyError> {
    let mut verified = 0u64;
    loop {
        let sealed = seal.next()?;
        let line = trace.next()?;
        let (finding, unsealed) = match (sealed, line) {
            (Sealed::Line(d), Some(l)) if d == l.digest => {
                verified += 1;
                continue;
            }
            (Sealed::Line(d), Some(l)) => (Some(differ(seal, trace, d, l, verified)?), 0),
            (Sealed::Line(_), None) => {
                let missing = 1 + seal.rest()?;
                (Some(trace.ended(verified, missing)), 0)
            }
            (Sealed::End { closed: true }, Some(l)) => {
                let added = 1 + trace.rest()?;
                (Some(appended(&l, verified, added)), 0)
            }
            (Sealed::End { closed: false }, Some(l)) => {
                let unsealed = 1 + trace.rest()?;
                (Some(unsealed_after(&l, verified, unsealed)), unsealed)
            }
            (Sealed::End { closed: false }, None) => (Some(not_closed(&seal.name, verified)), 0),
            (Sealed::End { closed: true }, None) => (None, 0),
            (Sealed::Edited(f), _) => (Some(f), 0),
        };
        return Ok(Walk {
            verified,
            unsealed,
            finding,
        });
    }
}

/// The trace's line `l` and `added - 1` after it follow a closed seal of `verified`
/// lines.
fn appended(l: &TraceDigest, verified: u64, added: u64) -> Finding {
    Finding {
        kind: FindingKind::Appended,
        file: l.file.clone(),
        line: Some(l.line),
        seal_line: None,
        message: format!(
            "this line was appended: the seal was closed after {}, and this line and {} \
             after it were added",
            lines(verified),
            lines(added - 1)
        ),
    }
}

/// The trace's line `l` and `unsealed - 1` after it follow a seal of `verified` lines
/// that was not closed.
fn unsealed_after(l: &TraceDigest, verified: u64, unsealed: u64) -> Finding {
    Finding {
        kind: FindingKind::Open,
        file: l.file.clone(),
        line: Some(l.line),
        seal_line: None,
        message: format!(
            "this line is not sealed: the seal was not closed (the recording was \
             interrupted, or is still going); its {} verify, and this line and {} after \
             it are unsealed",
            lines(verified),
            lines(unsealed - 1)
        ),
    }
}

/// The trace and the seal `seal_name`, not closed, ended together after `verified`
/// lines.
fn not_closed(seal_name: &str, verified: u64) -> Finding {
    Finding {
        kind: FindingKind::Open,
        file: seal_name.to_owned(),
        line: None,
        seal_line: None,
        message: format!(
            "the seal was not closed (the recording was interrupted, or is still going): \
             its {} verify and nothing follows them, but nothing shows the trace was not \
             cut short with its seal",
            lines(verified)
        ),
    }
}

/// `1 line`, `3 lines`.
fn lines(n: u64) -> String {
    reel_report::display::plural(n, "line")
}

/// Classifies the first line that differs: the trace's line `found` where the seal has
/// `expected` as line `verified + 1`.
fn differ(
    seal: &mut SealStream,
    trace: &mut TraceStream,
    expected: Digest,
    found: TraceDigest,
    verified: u64,
) -> Result<Finding, VerifyError> {
    let n = verified + 1;
    let (in_seal, left) = seal.find(&found.digest)?;
    let in_trace = trace.find(&expected)?;
    let at = |kind, message| Finding {
        kind,
        file: found.file.clone(),
        line: Some(found.line),
        seal_line: Some(n),
        message,
    };
    Ok(match (in_seal, in_trace) {
        (None, None) if !found.terminated => at(
            FindingKind::Truncated,
            format!(
                "the trace was truncated inside this line (sealed line {n}), and {} of \
                 the seal after it are missing",
                lines(left)
            ),
        ),
        (None, None) => at(
            FindingKind::Changed,
            format!("this line was changed: it is not sealed line {n}"),
        ),
        (None, Some((k, place))) => at(
            FindingKind::Inserted,
            format!(
                "this line was inserted: {} not in the seal come before sealed line \
                 {n}, which is now {place}",
                lines(k)
            ),
        ),
        (Some(j), None) => at(
            FindingKind::Removed,
            format!(
                "sealed {} removed: missing before this line, which is sealed line {}",
                if j == 1 {
                    format!("line {n} was")
                } else {
                    format!("lines {n}-{} were", n + j - 1)
                },
                n + j
            ),
        ),
        (Some(j), Some((_, place))) => at(
            FindingKind::Reordered,
            format!(
                "lines were reordered: this line is sealed line {}, and sealed line {n} \
                 is {place}",
                n + j
            ),
        ),
    })
}

/// A trace line's digest and place.
struct TraceDigest {
    digest: Digest,
    file: String,
    line: u64,
    terminated: bool,
}

/// The trace's lines as digests.
struct TraceStream {
    reader: TraceReader,
    paths: Vec<PathBuf>,
    names: Vec<String>,
    /// Where the last line read is, for "the trace ends here".
    last: Option<(usize, u64)>,
}

impl TraceStream {
    fn open(path: &Path) -> Result<TraceStream, VerifyError> {
        let reader = TraceReader::open(path)?;
        let paths = reader.files().to_vec();
        let names = paths.iter().map(|f| f.display().to_string()).collect();
        Ok(TraceStream {
            reader,
            paths,
            names,
            last: None,
        })
    }

    fn next(&mut self) -> Result<Option<TraceDigest>, VerifyError> {
        let Some(line) = self.reader.next_line() else {
            return Ok(None);
        };
        let line = line?;
        let file = self.paths.iter().position(|f| f == line.path).unwrap_or(0);
        self.last = Some((file, line.raw.number));
        Ok(Some(TraceDigest {
            digest: super::raw_line_digest(&line.raw),
            file: self.names[file].clone(),
            line: line.raw.number,
            terminated: line.raw.terminated,
        }))
    }

    /// Reads on to the end; how many lines were left.
    fn rest(&mut self) -> Result<u64, VerifyError> {
        let mut n = 0;
        while self.next()?.is_some() {
            n += 1;
        }
        Ok(n)
    }

    /// Reads on until a line with digest `d`: how many lines on it is (1 = the next),
    /// and where it is.
    fn find(&mut self, d: &Digest) -> Result<Option<(u64, String)>, VerifyError> {
        let mut k = 0;
        while let Some(l) = self.next()? {
            k += 1;
            if &l.digest == d {
                return Ok(Some((k, format!("{}:{}", l.file, l.line))));
            }
        }
        Ok(None)
    }

    /// The finding for a trace that ended with `missing` sealed lines to go.
    fn ended(&self, verified: u64, missing: u64) -> Finding {
        let (file, line) = match self.last {
            Some((f, l)) => (self.names[f].clone(), Some(l)),
            None => (self.names.last().cloned().unwrap_or_default(), None),
        };
        Finding {
            kind: FindingKind::Truncated,
            file,
            line,
            seal_line: Some(verified + 1),
            message: format!(
                "the trace was truncated: it ends here, after {} of {}; the last {} \
                 removed",
                lines(verified),
                lines(verified + missing),
                if missing == 1 {
                    "line was".to_owned()
                } else {
                    format!("{missing} were")
                }
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seal::{SealKey, seal_trace};

    /// A trace of `n` distinct lines (a meta line first), sealed.
    struct Fixture {
        dir: tempfile::TempDir,
        lines: Vec<String>,
    }

    impl Fixture {
        fn new(n: usize, key: Option<&SealKey>) -> Fixture {
            let dir = tempfile::tempdir().unwrap();
            let mut lines = vec![r#"{"v":1,"type":"meta","label":"t"}"#.to_owned()];
            for i in 1..n {
                lines.push(format!(
                    r#"{{"t":"2026-01-01T00:00:00.{i:03}Z","dir":"in","raw":{i}}}"#
                ));
            }
            let s = Fixture { dir, lines };
            s.write(&s.lines);
            seal_trace(&s.path(), key, false).unwrap();
            s
        }

        fn path(&self) -> PathBuf {
            self.dir.path().join("t.jsonl")
        }

        fn write(&self, lines: &[String]) {
            let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
            std::fs::write(self.path(), text).unwrap();
        }

        fn verify(&self) -> Verification {
            verify(&self.path(), None).unwrap()
        }

        fn seal_text(&self) -> String {
            std::fs::read_to_string(sidecar_path(&self.path())).unwrap()
        }

        /// The seal a recorder writes line by line (`rec --seal`): no committed count.
        fn live_seal_text(&self) -> String {
            let files = ["t.jsonl".to_owned()];
            let mut s =
                crate::seal::Sealer::new(Vec::new(), &files, crate::time::Timestamp(0), None);
            for l in &self.lines {
                s.seal_line(format!("{l}\n").as_bytes());
            }
            String::from_utf8(s.close(crate::time::Timestamp(0)).unwrap()).unwrap()
        }

        fn write_seal(&self, text: &str) {
            std::fs::write(sidecar_path(&self.path()), text).unwrap();
        }
    }

    /// The first failing finding's kind, trace line and sealed line.
    fn first(v: &Verification) -> (FindingKind, Option<u64>, Option<u64>) {
        let f = v.first.as_ref().expect("a failing finding");
        (f.kind, f.line, f.seal_line)
    }

    #[test]
    fn an_untouched_trace_verifies() {
        let s = Fixture::new(6, None);
        let v = s.verify();
        assert_eq!(v.status, SealStatus::Intact, "{:?}", v.findings);
        assert_eq!((v.sealed, v.verified, v.closed), (6, 6, true));
        assert!(v.findings.is_empty() && v.first.is_none());
        assert!(!v.authenticated);
    }

    #[test]
    fn a_changed_line_is_named() {
        let s = Fixture::new(6, None);
        let mut l = s.lines.clone();
        l[3] = l[3].replace("\"raw\":3", "\"raw\":33");
        s.write(&l);
        let v = s.verify();
        assert_eq!(v.status, SealStatus::Tampered);
        assert_eq!(first(&v), (FindingKind::Changed, Some(4), Some(4)));
        assert_eq!(v.verified, 3);
        // Even a changed line ending counts.
        let mut text: String = s.lines.iter().map(|l| format!("{l}\n")).collect();
        text = text.replacen('\n', "\r\n", 2);
        std::fs::write(s.path(), text).unwrap();
        assert_eq!(first(&s.verify()), (FindingKind::Changed, Some(1), Some(1)));
    }

    #[test]
    fn a_removed_line_is_named() {
        let s = Fixture::new(6, None);
        let mut l = s.lines.clone();
        l.remove(2);
        s.write(&l);
        let v = s.verify();
        assert_eq!(first(&v), (FindingKind::Removed, Some(3), Some(3)));
        let msg = &v.first.unwrap().message;
        assert!(msg.contains("sealed line 3 was removed"), "{msg}");
        // Two in a row.
        let mut l = s.lines.clone();
        l.drain(2..4);
        s.write(&l);
        let v = s.verify();
        assert_eq!(first(&v), (FindingKind::Removed, Some(3), Some(3)));
        assert!(v.first.unwrap().message.contains("lines 3-4 were"));
    }

    #[test]
    fn an_inserted_line_is_named() {
        let s = Fixture::new(6, None);
        let mut l = s.lines.clone();
        l.insert(
            2,
            r#"{"t":"2026-01-01T00:00:00.500Z","dir":"out","raw":{}}"#.into(),
        );
        s.write(&l);
        let v = s.verify();
        assert_eq!(first(&v), (FindingKind::Inserted, Some(3), Some(3)));
        let msg = &v.first.unwrap().message;
        assert!(
            msg.contains("which is now ") && msg.contains("t.jsonl:4"),
            "{msg}"
        );
    }

    #[test]
    fn reordered_lines_are_named() {
        let s = Fixture::new(6, None);
        let mut l = s.lines.clone();
        l.swap(2, 4);
        s.write(&l);
        let v = s.verify();
        assert_eq!(first(&v), (FindingKind::Reordered, Some(3), Some(3)));
        let msg = &v.first.unwrap().message;
        assert!(msg.contains("this line is sealed line 5"), "{msg}");
    }

    #[test]
    fn a_truncated_trace_is_named_whether_cut_between_lines_or_inside_one() {
        let s = Fixture::new(6, None);
        s.write(&s.lines[..4]);
        let v = s.verify();
        assert_eq!(first(&v), (FindingKind::Truncated, Some(4), Some(5)));
        assert!(v.first.unwrap().message.contains("the last 2 were removed"));
        // Cut inside the last line.
        let text: String = s.lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(s.path(), &text[..text.len() - 10]).unwrap();
        let v = s.verify();
        assert_eq!(first(&v), (FindingKind::Truncated, Some(6), Some(6)));
        // Emptied.
        std::fs::write(s.path(), "").unwrap();
        let v = s.verify();
        assert_eq!(first(&v), (FindingKind::Truncated, None, Some(1)));
    }

    #[test]
    fn lines_after_a_closed_seal_are_appended() {
        let s = Fixture::new(4, None);
        let mut l = s.lines.clone();
        l.push(r#"{"type":"end","exitCode":0}"#.into());
        s.write(&l);
        let v = s.verify();
        assert_eq!(first(&v), (FindingKind::Appended, Some(5), None));
        assert_eq!(v.verified, 4);
    }

    /// The sidecar without its close record, as a killed recorder leaves it.
    fn opened(seal: &str) -> String {
        let mut lines: Vec<&str> = seal.lines().collect();
        lines.pop();
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    #[test]
    fn an_open_seal_verifies_its_lines_and_leaves_the_rest_unsealed() {
        let s = Fixture::new(5, None);
        // A seal made while recording commits to no count: only such a seal can be open.
        let good = s.live_seal_text();
        s.write_seal(&opened(&good));
        let v = s.verify();
        assert_eq!(v.status, SealStatus::Open);
        assert!(v.first.is_none());
        assert_eq!(v.findings[0].kind, FindingKind::Open);
        // The recorder went on writing after its last flushed record, then died: a torn
        // record at the end of the sidecar, and lines the seal never saw.
        let mut l = s.lines.clone();
        l.push(r#"{"t":"2026-01-01T00:00:01.000Z","dir":"in","raw":9}"#.into());
        l.push(r#"{"t":"2026-01-01T00:00:01.001Z","dir":"in","raw":10}"#.into());
        s.write(&l);
        let mut seal = opened(&good);
        seal.push_str(r#"{"n":6,"sha256":"ab"#);
        s.write_seal(&seal);
        let v = s.verify();
        assert_eq!(v.status, SealStatus::Open, "{:?}", v.findings);
        assert_eq!((v.verified, v.unsealed), (5, 2));
        assert_eq!(v.findings[0].line, Some(6));
        // But a changed line before the end of the open seal is still tampering.
        let mut l = s.lines.clone();
        l[1] = l[1].replace("\"raw\":1", "\"raw\":2");
        s.write(&l);
        assert_eq!(first(&s.verify()).0, FindingKind::Changed);
    }

    #[test]
    fn a_finished_seal_cut_short_is_edited_not_open() {
        let s = Fixture::new(5, None);
        let good = s.seal_text();
        assert!(
            good.lines().next().unwrap().contains("\"lines\":5"),
            "{good}"
        );
        // Its close record dropped (and the trace's last line with the record of it).
        let mut l = s.lines.clone();
        l.pop();
        s.write(&l);
        let records: Vec<&str> = good.lines().collect();
        let cut: String = records[..records.len() - 2]
            .iter()
            .map(|r| format!("{r}\n"))
            .collect();
        s.write_seal(&cut);
        let v = s.verify();
        assert_eq!(first(&v).0, FindingKind::SealEdited, "{:?}", v.findings);
        assert!(
            v.findings[0].message.contains("committed to 5 lines"),
            "{:?}",
            v.findings
        );
    }

    #[test]
    fn an_edited_seal_is_named() {
        let s = Fixture::new(5, None);
        let good = s.seal_text();
        let records: Vec<&str> = good.lines().collect();
        let join = |r: &[String]| -> String { r.iter().map(|l| format!("{l}\n")).collect() };
        let owned: Vec<String> = records.iter().map(|r| r.to_string()).collect();

        // A record's digest changed (to match an edited trace line): the chain breaks.
        let mut l = s.lines.clone();
        l[2] = l[2].replace("\"raw\":2", "\"raw\":7");
        s.write(&l);
        let mut r = owned.clone();
        let forged = hex::encode(super::super::line_digest(format!("{}\n", l[2]).as_bytes()));
        let v: serde_json::Value = serde_json::from_str(&r[3]).unwrap();
        r[3] = r[3].replace(v["sha256"].as_str().unwrap(), &forged);
        s.write_seal(&join(&r));
        let v = s.verify();
        assert_eq!(first(&v), (FindingKind::SealEdited, Some(4), Some(3)));
        assert!(v.first.unwrap().message.contains("chain breaks"));
        s.write(&s.lines);

        // A record removed from the seal.
        let mut r = owned.clone();
        r.remove(2);
        s.write_seal(&join(&r));
        assert_eq!(first(&s.verify()).0, FindingKind::SealEdited);

        // The head edited.
        let mut r = owned.clone();
        r[0] = r[0].replace("\"t.jsonl\"", "\"u.jsonl\"");
        s.write_seal(&join(&r));
        assert_eq!(
            first(&s.verify()),
            (FindingKind::SealEdited, Some(2), Some(1))
        );

        // Cut short and closed again with the last record's chain value.
        let mut r = owned[..4].to_vec();
        let last: serde_json::Value = serde_json::from_str(&r[3]).unwrap();
        r.push(format!(
            r#"{{"type":"close","lines":3,"chain":"{}","t":"2026-01-01T00:00:00.000Z"}}"#,
            last["chain"].as_str().unwrap()
        ));
        s.write(&s.lines[..3]);
        s.write_seal(&join(&r));
        let v = s.verify();
        assert_eq!(first(&v).0, FindingKind::SealEdited);
        assert!(v.first.unwrap().message.contains("close record"));
        s.write(&s.lines);

        // Something after the close record.
        let mut r = owned.clone();
        r.push(r#"{"n":6,"sha256":"00","chain":"00"}"#.into());
        s.write_seal(&join(&r));
        assert_eq!(first(&s.verify()).0, FindingKind::SealEdited);
    }

    #[test]
    fn keys_are_checked() {
        let key = SealKey::new(b"a seal key of 16+ bytes".to_vec()).unwrap();
        let other = SealKey::new(b"another key, 16+ bytes".to_vec()).unwrap();
        let s = Fixture::new(4, Some(&key));
        let with = |k: Option<&SealKey>| verify(&s.path(), k).unwrap();
        let v = with(Some(&key));
        assert_eq!(v.status, SealStatus::Intact, "{:?}", v.findings);
        assert!(v.authenticated);
        // Without the key: the lines are checked, who wrote the seal is not.
        let v = with(None);
        assert_eq!(v.status, SealStatus::Intact);
        assert!(!v.authenticated);
        assert_eq!(v.findings[0].kind, FindingKind::Unauthenticated);
        // Another key fails.
        assert_eq!(first(&with(Some(&other))).0, FindingKind::WrongKey);
        // A forger without the key re-seals the edited trace: with the key, caught.
        let mut l = s.lines.clone();
        l[1] = l[1].replace("\"raw\":1", "\"raw\":5");
        s.write(&l);
        seal_trace(&s.path(), None, true).unwrap();
        let v = with(Some(&key));
        assert_eq!(first(&v).0, FindingKind::NotKeyed);
        assert_eq!(v.status, SealStatus::Tampered);
        // And a forged keyed seal made with another key.
        seal_trace(&s.path(), Some(&other), true).unwrap();
        assert_eq!(first(&with(Some(&key))).0, FindingKind::WrongKey);
    }

    #[test]
    fn a_keyed_seal_checked_with_its_key_catches_a_recomputed_chain() {
        let key = SealKey::new(b"a seal key of 16+ bytes".to_vec()).unwrap();
        let s = Fixture::new(3, Some(&key));
        // A forger edits line 2 and rewrites its record with an unkeyed chain value.
        let mut l = s.lines.clone();
        l[1] = l[1].replace("\"raw\":1", "\"raw\":4");
        s.write(&l);
        let text = s.seal_text();
        let mut r: Vec<String> = text.lines().map(str::to_owned).collect();
        let d = super::super::line_digest(format!("{}\n", l[1]).as_bytes());
        let rec: serde_json::Value = serde_json::from_str(&r[2]).unwrap();
        r[2] = format!(
            r#"{{"n":2,"sha256":"{}","chain":"{}"}}"#,
            hex::encode(d),
            rec["chain"].as_str().unwrap()
        );
        s.write_seal(&r.iter().map(|l| format!("{l}\n")).collect::<String>());
        let v = verify(&s.path(), Some(&key)).unwrap();
        assert_eq!(first(&v), (FindingKind::SealEdited, Some(3), Some(2)));
    }

    #[test]
    fn a_missing_or_foreign_sidecar_is_an_error_not_a_finding() {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("t.jsonl");
        std::fs::write(&trace, "{\"type\":\"meta\"}\n").unwrap();
        assert!(matches!(
            verify(&trace, None),
            Err(VerifyError::NoSeal { .. })
        ));
        for (text, says) in [
            ("", "empty"),
            ("{\"a\":1}\n", "head record"),
            (
                "{\"schema\":\"reel.seal/9\",\"type\":\"head\"}\n",
                "reel.seal/9",
            ),
            (
                "{\"schema\":\"reel.seal/1\",\"type\":\"head\",\"chain\":\"md5\"}\n",
                "md5",
            ),
        ] {
            std::fs::write(sidecar_path(&trace), text).unwrap();
            let e = verify(&trace, None).unwrap_err();
            assert!(
                matches!(e, VerifyError::NotASeal { .. }) && e.to_string().contains(says),
                "{text:?}: {e}"
            );
        }
    }

    #[test]
    fn rotated_companions_are_sealed_as_one_trace() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("t.jsonl");
        let older = dir.path().join("t.jsonl.1");
        std::fs::write(&older, "{\"type\":\"meta\"}\n{\"a\":1}\n").unwrap();
        std::fs::write(&base, "{\"a\":2}\n{\"a\":3}\n").unwrap();
        let sealed = seal_trace(&base, None, false).unwrap();
        assert_eq!(sealed.files, ["t.jsonl.1", "t.jsonl"]);
        assert_eq!(sealed.lines, 4);
        assert_eq!(verify(&base, None).unwrap().status, SealStatus::Intact);
        // A line changed in the companion is named in the companion.
        std::fs::write(&older, "{\"type\":\"meta\"}\n{\"a\":9}\n").unwrap();
        let v = verify(&base, None).unwrap();
        let f = v.first.unwrap();
        assert_eq!(
            (f.kind, f.line, f.seal_line),
            (FindingKind::Changed, Some(2), Some(2))
        );
        assert!(f.file.ends_with("t.jsonl.1"), "{}", f.file);
        // The companion gone: its lines are missing.
        std::fs::remove_file(&older).unwrap();
        let v = verify(&base, None).unwrap();
        assert_eq!(first(&v), (FindingKind::Removed, Some(1), Some(1)));
    }
}
