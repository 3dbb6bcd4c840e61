//! Reading a seal: the head record (schema, chain function, key id), then each line
//! record checked as it is read: numbered in order, well formed, and linked to the one
//! before by the chain (when the chain can be recomputed: an unkeyed seal, or a keyed
//! one with its key). The first record that does not hold ends what is trusted.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::findings::{Finding, FindingKind, VerifyError};
use super::{CHAIN_HMAC, CHAIN_SHA256, Chain, ChainFn, Digest, SCHEMA, SealKey};
use crate::reader::LineReader;
use reel_report::display::one_line;

/// What the seal says next.
pub(super) enum Sealed {
    /// The next sealed line's digest.
    Line(Digest),
    /// No more line records; `closed` when a valid close record ended them.
    End { closed: bool },
    /// The seal does not hold together here; nothing after this is trusted.
    Edited(Finding),
}

/// A record of the sidecar, any kind.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    #[serde(rename = "type")]
    ty: Option<String>,
    n: Option<u64>,
    sha256: Option<String>,
    chain: Option<String>,
    lines: Option<u64>,
    t: Option<String>,
}

/// The head record: only what the verifier needs; the rest is information.
#[derive(Deserialize)]
struct Head {
    schema: Option<String>,
    #[serde(rename = "type")]
    ty: Option<String>,
    chain: Option<String>,
    key: Option<String>,
    /// The line count a seal of a finished trace commits to.
    lines: Option<u64>,
}

/// The seal's records, checked as they are read.
pub(super) struct SealStream {
    pub(super) name: String,
    path: PathBuf,
    lines: LineReader<File>,
    /// The chain being recomputed; `None` when it cannot be (a keyed seal and no key, or
    /// another key): then only the numbering and the digests are checked.
    chain: Option<Chain>,
    pub(super) chain_name: String,
    pub(super) authenticated: bool,
    /// Line records read.
    pub(super) count: u64,
    pub(super) closed: bool,
    /// Once the records ended (or broke), [`SealStream::next`] says so again.
    over: Option<bool>,
    /// The line count the head commits to (a seal of a finished trace): it must close
    /// after exactly that many records.
    committed: Option<u64>,
}

impl SealStream {
    /// Opens the seal at `path` and reads its head; what the key changes about what can
    /// be checked (an unkeyed seal given a key, a keyed one without its key) goes to
    /// `findings`.
    pub(super) fn open(
        path: &Path,
        key: Option<&SealKey>,
        findings: &mut Vec<Finding>,
    ) -> Result<SealStream, VerifyError> {
        let mut lines = LineReader::new(open_sidecar(path)?);
        let (head, head_digest) = read_head(&mut lines, path)?;
        let keyed = head.keyed().map_err(|problem| VerifyError::NotASeal {
            path: path.to_owned(),
            problem,
        })?;
        let name = path.display().to_string();
        let (f, finding) = chain_fn(keyed, head.key.as_deref(), key);
        findings.extend(finding.map(|(kind, message)| Finding {
            kind,
            file: name.clone(),
            line: None,
            seal_line: None,
            message,
        }));
        let authenticated = keyed && f.is_some();
        Ok(SealStream {
            name,
            path: path.to_owned(),
            lines,
            chain: f.map(|f| Chain::start(f, &head_digest)),
            chain_name: if keyed { CHAIN_HMAC } else { CHAIN_SHA256 }.to_owned(),
            authenticated,
            count: 0,
            closed: false,
            over: None,
            committed: head.lines,
        })
    }

    /// The records ended without a close record: open, unless the head committed to a
    /// count (a seal of a finished trace is closed when made), then cut.
    fn ended_open(&mut self, number: u64) -> Result<Sealed, VerifyError> {
        self.over = Some(false);
        let Some(n) = self.committed else {
            return Ok(Sealed::End { closed: false });
        };
        Ok(Sealed::Edited(Finding {
            kind: FindingKind::SealEdited,
            file: self.name.clone(),
            line: Some(number),
            seal_line: Some(self.count + 1),
            message: format!(
                "the seal was cut: it was closed when made and committed to {n} lines, and \
                 it ends after {} with no close record; lines from sealed line {} on \
                 cannot be verified",
                self.count,
                self.count + 1
            ),
        }))
    }

    /// The next record, checked.
    pub(super) fn next(&mut self) -> Result<Sealed, VerifyError> {
        if let Some(closed) = self.over {
            return Ok(Sealed::End { closed });
        }
        let read = self
            .lines
            .next_line()
            .map_err(|source| VerifyError::SealUnreadable {
                path: self.path.clone(),
                source,
            })?;
        let Some(raw) = read else {
            return self.ended();
        };
        let number = raw.number;
        if !raw.terminated {
            // A record cut off by a recorder killed while writing it.
            return self.ended_open(number);
        }
        if self.closed {
            return Ok(self.edited(number, "a record follows the close record".into()));
        }
        let Ok(record) = serde_json::from_slice::<Record>(raw.bytes) else {
            return Ok(self.edited(number, "this line is not a seal record".into()));
        };
        match record.ty.as_deref() {
            None => Ok(self.line_record(number, &record)),
            Some("close") => self.close(number, &record),
            Some(_) => Ok(self.edited(number, "this line is not a seal record".into())),
        }
    }

    /// The end of the sidecar: after a close record, the end of the records; before
    /// one, an open (or cut) seal.
    fn ended(&mut self) -> Result<Sealed, VerifyError> {
        if !self.closed {
            let next_line = self.count + 2;
            return self.ended_open(next_line);
        }
        self.over = Some(true);
        Ok(Sealed::End { closed: true })
    }

    /// A close record at sidecar line `number`: it must count the records before it
    /// (and the count the head committed to) and carry the closing chain value; then
    /// nothing may follow it.
    fn close(&mut self, number: u64, record: &Record) -> Result<Sealed, VerifyError> {
        if record.lines != Some(self.count) || self.committed.is_some_and(|n| n != self.count) {
            let says = record
                .lines
                .map_or_else(|| "no".to_owned(), |n| n.to_string());
            let why = format!(
                "the close record says {says} lines, the seal has {}",
                self.count
            );
            return Ok(self.edited(number, why));
        }
        let ok = match (&self.chain, record.chain.as_deref().and_then(parse_hex)) {
            (Some(c), Some(v)) => c.closing() == v,
            (None, Some(_)) => true,
            (_, None) => false,
        };
        if !ok {
            return Ok(self.edited(number, "the close record's chain value is wrong".into()));
        }
        self.closed = true;
        self.next()
    }

    /// A line record at sidecar line `number`: numbered next, with a digest and a
    /// chain value, linked to the record before (when the chain can be recomputed).
    fn line_record(&mut self, number: u64, record: &Record) -> Sealed {
        let expected = self.count + 1;
        if record.n != Some(expected) || record.lines.is_some() || record.t.is_some() {
            let why = match record.n {
                Some(n) => format!("the record of sealed line {expected} is numbered {n}"),
                None => "this line is not a seal record".to_owned(),
            };
            return self.edited(number, why);
        }
        let (Some(d), Some(c)) = (
            record.sha256.as_deref().and_then(parse_hex),
            record.chain.as_deref().and_then(parse_hex),
        ) else {
            return self.edited(
                number,
                "this record's digest or chain is not 64 hex digits".into(),
            );
        };
        if let Some(chain) = &mut self.chain {
            if chain.link(&d) != c {
                let why = format!(
                    "the chain breaks at the record of sealed line {expected} (its digest or \
                     chain value was changed)"
                );
                return self.edited(number, why);
            }
        }
        self.count = expected;
        Sealed::Line(d)
    }

    /// The seal does not hold at sidecar line `number`, for the reason `why`; nothing
    /// after it is read.
    fn edited(&mut self, number: u64, why: String) -> Sealed {
        self.over = Some(false);
        Sealed::Edited(Finding {
            kind: FindingKind::SealEdited,
            file: self.name.clone(),
            line: Some(number),
            seal_line: Some(self.count + 1),
            message: format!(
                "the seal was edited: {why}; lines from sealed line {} on cannot be \
                 verified",
                self.count + 1
            ),
        })
    }

    /// Reads on to the end of the line records; how many were left.
    pub(super) fn rest(&mut self) -> Result<u64, VerifyError> {
        let mut n = 0;
        while let Sealed::Line(_) = self.next()? {
            n += 1;
        }
        Ok(n)
    }

    /// Reads on to the end of the line records, looking for one with digest `d`: how
    /// many records on the first such is (1 = the next one), and how many were left.
    pub(super) fn find(&mut self, d: &Digest) -> Result<(Option<u64>, u64), VerifyError> {
        let mut at = None;
        let mut j = 0;
        while let Sealed::Line(x) = self.next()? {
            j += 1;
            if at.is_none() && &x == d {
                at = Some(j);
            }
        }
        Ok((at, j))
    }
}

/// Opens the sidecar; a missing one is [`VerifyError::NoSeal`].
fn open_sidecar(path: &Path) -> Result<File, VerifyError> {
    File::open(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => VerifyError::NoSeal {
            path: path.to_owned(),
        },
        _ => VerifyError::SealUnreadable {
            path: path.to_owned(),
            source: e,
        },
    })
}

/// Reads the head record, and the digest of its line the chain starts from.
fn read_head(lines: &mut LineReader<File>, path: &Path) -> Result<(Head, Digest), VerifyError> {
    let not_a_seal = |problem: String| VerifyError::NotASeal {
        path: path.to_owned(),
        problem,
    };
    let read = lines
        .next_line()
        .map_err(|source| VerifyError::SealUnreadable {
            path: path.to_owned(),
            source,
        })?;
    let Some(raw) = read else {
        return Err(not_a_seal("the file is empty".into()));
    };
    let head: Head = serde_json::from_slice(raw.bytes)
        .map_err(|_| not_a_seal(format!("its first line is not a {SCHEMA} head record")))?;
    Ok((head, super::raw_line_digest(&raw)))
}

impl Head {
    /// Whether the seal is keyed, read from its schema and chain function; why it is
    /// not a seal this reel reads otherwise.
    fn keyed(&self) -> Result<bool, String> {
        match self.schema.as_deref() {
            Some(SCHEMA) if self.ty.as_deref() == Some("head") => {}
            Some(other) if other.starts_with("reel.seal/") => {
                return Err(format!(
                    "it is a {} seal; this reel reads {SCHEMA}",
                    quoted(other)
                ));
            }
            _ => return Err(format!("its first line is not a {SCHEMA} head record")),
        }
        match self.chain.as_deref() {
            Some(CHAIN_SHA256) => Ok(false),
            Some(CHAIN_HMAC) => Ok(true),
            other => Err(format!(
                "its chain is {}, which this reel does not know (it knows {CHAIN_SHA256} \
                 and {CHAIN_HMAC})",
                other.map_or_else(|| "missing".to_owned(), quoted)
            )),
        }
    }
}

/// The function to recompute a seal's chain with, given whether it is `keyed` (under
/// the key id `head_key`) and the `key` the verifier holds: `None` when the chain cannot
/// be recomputed. What the key changes about what is checked is a finding.
fn chain_fn(
    keyed: bool,
    head_key: Option<&str>,
    key: Option<&SealKey>,
) -> (Option<ChainFn>, Option<(FindingKind, String)>) {
    let shown_id = head_key.map_or_else(|| "none".to_owned(), quoted);
    match (keyed, key) {
        (false, None) => (Some(ChainFn::Sha256), None),
        (false, Some(_)) => (
            Some(ChainFn::Sha256),
            Some((
                FindingKind::NotKeyed,
                "the seal is not keyed, so anyone could have written it (a --key-file was \
                 given); its lines were still checked against it"
                    .into(),
            )),
        ),
        (true, None) => (
            None,
            Some((
                FindingKind::Unauthenticated,
                format!(
                    "the seal is keyed (key id {shown_id}): give its --key-file to check who \
                     wrote it; its line digests were checked"
                ),
            )),
        ),
        (true, Some(k)) if head_key == Some(k.id().as_str()) => (Some(ChainFn::new(Some(k))), None),
        (true, Some(k)) => (
            None,
            Some((
                FindingKind::WrongKey,
                format!(
                    "the seal was made with another key (key id {shown_id}; the --key-file's \
                     is {}): who wrote it cannot be checked, only its line digests",
                    k.id()
                ),
            )),
        ),
    }
}

/// Sidecar content quoted in a message: one line, and at most 64 characters of it.
fn quoted(s: &str) -> String {
    let cut: String = s.chars().take(64).collect();
    let more = if cut.len() < s.len() { "…" } else { "" };
    format!("{}{more}", one_line(&cut))
}

/// 64 lowercase or uppercase hex digits as a digest.
fn parse_hex(s: &str) -> Option<Digest> {
    let mut d = [0u8; 32];
    hex::decode_to_slice(s, &mut d).ok()?;
    Some(d)
}
