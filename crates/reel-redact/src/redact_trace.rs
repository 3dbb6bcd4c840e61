//! Redaction after the fact (`reel redact`): a trace recorded with `--no-redact`, or a
//! file from a tool that never redacts, rewritten through the same [`Redactor`] a
//! recording uses, so it replays as one would.
//!
//! Each line is edited in place, member by member, and every byte the rules do not
//! change is kept as it was (member order, spacing, unknown members, lines that are not
//! JSON):
//! - `meta`: `redaction` becomes the rules' description (added when missing), so
//!   `play`, `verify` and `diff` redact live messages alike; `command` goes through
//!   [`Redactor::redact_command`];
//! - message lines: `raw` as a JSON-RPC message (the replay exemptions hold); a
//!   `raw_b64` copy of the original bytes is removed when `raw` changed;
//! - every line: `http` facts and turn `blocks` as JSON, event `text` as free text, and
//!   event `bytes` (base64 of a line that was not UTF-8) decoded and redacted as text
//!   (kept as `bytes` when nothing in them is secret, else `text` with `lossy: true`,
//!   as the recorder writes it).
//!
//! A trace already redacted with other rules is refused ([`RewriteError::OtherRules`]):
//! its `meta.redaction` can name one rule set, and replaying needs the one every secret
//! was redacted with.

use std::borrow::Cow;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use base64::Engine;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::redact::{LineStreams, Redactor};
use reel_trace::line::Dir;
use reel_trace::reader::{OpenError, TraceReader};

/// Why a trace could not be redacted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RewriteError {
    /// The trace cannot be read.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// Writing the redacted trace failed.
    #[error("writing the redacted trace: {0}")]
    Write(#[source] io::Error),
    /// The trace says it was redacted with other rules.
    #[error(
        "{path}:{line}: the trace was redacted with other rules (meta.redaction); redact it with those same rules and yours together (--redact-file), or from the unredacted original"
    )]
    OtherRules {
        /// The file.
        path: PathBuf,
        /// Its meta line.
        line: u64,
    },
}

/// What a rewrite changed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Rewritten {
    /// Lines read (and written).
    pub lines: u64,
    /// Lines that changed.
    pub changed: u64,
}

/// Members of a line that may hold secrets, borrowed where they stand.
#[derive(Deserialize)]
struct Members<'a> {
    #[serde(rename = "type", default, borrow)]
    ty: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    dir: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    side: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    raw: Option<&'a RawValue>,
    #[serde(default, borrow)]
    raw_b64: Option<&'a RawValue>,
    #[serde(default, borrow)]
    http: Option<&'a RawValue>,
    #[serde(default, borrow)]
    blocks: Option<&'a RawValue>,
    #[serde(default, borrow)]
    text: Option<&'a RawValue>,
    #[serde(default, borrow)]
    bytes: Option<&'a RawValue>,
    #[serde(default, borrow)]
    command: Option<&'a RawValue>,
    #[serde(default, borrow)]
    redaction: Option<&'a RawValue>,
}

/// One edit of a line: bytes `start..end` become `with`.
struct Edit {
    start: usize,
    end: usize,
    with: String,
}

/// Redacts the trace at `path` (its rotated companions too, as one stream) into `out`
/// with `redactor`.
pub fn redact_trace(
    path: &Path,
    redactor: &Redactor,
    out: &mut dyn Write,
) -> Result<Rewritten, RewriteError> {
    let description = redactor.describe();
    let mut reader = TraceReader::open(path)?;
    let mut done = Rewritten::default();
    let mut streams = LineStreams::default();
    while let Some(line) = reader.next_line() {
        let line = line?;
        done.lines += 1;
        let bytes = line.raw.bytes;
        let edited = match std::str::from_utf8(bytes) {
            Ok(text) => redact_line(text, redactor, &description, &mut streams).map_err(|()| {
                RewriteError::OtherRules {
                    path: line.path.to_owned(),
                    line: line.raw.number,
                }
            })?,
            // Not a trace line at all: readers skip it; it is written as it was.
            Err(_) => None,
        };
        let eol: &[u8] = if line.raw.crlf { b"\r\n" } else { b"\n" };
        let written = match &edited {
            Some(text) => {
                done.changed += 1;
                out.write_all(text.as_bytes())
            }
            None => out.write_all(bytes),
        };
        written
            .and_then(|()| {
                if line.raw.terminated {
                    out.write_all(eol)
                } else if line.raw.crlf {
                    // A last line without LF that ended in CR: the reader took the
                    // CR off as half a line break; it is the file's last byte.
                    out.write_all(b"\r")
                } else {
                    Ok(())
                }
            })
            .map_err(RewriteError::Write)?;
    }
    out.flush().map_err(RewriteError::Write)?;
    Ok(done)
}

/// The line redacted, or `None` when nothing in it changes; `Err` for a meta line that
/// names other rules. `streams` carries what the text lines of a stdio stream showed
/// so far (a PEM block printed over many stderr lines), as the recorder's does.
fn redact_line(
    text: &str,
    redactor: &Redactor,
    description: &Value,
    streams: &mut LineStreams,
) -> Result<Option<String>, ()> {
    let Ok(m) = serde_json::from_str::<Members<'_>>(text) else {
        // Not a line of members this reads (a member of the wrong type, one repeated,
        // not an object): whatever JSON it is, it is walked whole with every rule, so
        // a secret in a line no reader accepts does not stay in the trace either.
        return Ok(match redactor.redact_json(text) {
            Cow::Owned(whole) => Some(whole),
            Cow::Borrowed(_) => None,
        });
    };
    let mut edits = Edits::new(text);
    if m.ty.as_deref() == Some("meta") {
        edit_meta(&m, &mut edits, redactor, description)?;
    }
    edit_payload(&m, &mut edits, redactor, streams);
    Ok(edits.apply())
}

/// A meta line: `redaction` becomes `description` (added as the last member when
/// missing; `Err` when it names other rules), and `command` is redacted as a command
/// line.
fn edit_meta(
    m: &Members<'_>,
    edits: &mut Edits<'_>,
    redactor: &Redactor,
    description: &Value,
) -> Result<(), ()> {
    match m.redaction {
        Some(r) => {
            let theirs: Value = serde_json::from_str(r.get()).unwrap_or(Value::Null);
            if theirs != *description && !names_nothing(&theirs) {
                return Err(());
            }
            edits.replace(r, description.to_string());
        }
        None => {
            // Added as the last member.
            if let Some(close) = edits.text.trim_end().strip_suffix('}') {
                let sep = if close.trim_end().ends_with('{') {
                    ""
                } else {
                    ","
                };
                let with = format!("{sep}\"redaction\":{description}");
                edits.push(close.len(), close.len(), with);
            }
        }
    }
    if let Some(c) = m.command {
        if let Ok(args) = serde_json::from_str::<Vec<String>>(c.get()) {
            let redacted = redactor.redact_command(&args);
            if redacted != args {
                edits.replace(c, json_text(&redacted));
            }
        }
    }
    Ok(())
}

/// What a line carries: `raw` as a message (and the `raw_b64` copy a changed `raw`
/// makes stale), `http` facts and turn `blocks` as JSON, an event's `text` or `bytes`
/// as a line of its stream.
fn edit_payload(
    m: &Members<'_>,
    edits: &mut Edits<'_>,
    redactor: &Redactor,
    streams: &mut LineStreams,
) {
    let http = m.http.is_some();
    if let (Some(dir), Some(_)) = (side(m.dir.as_deref()), m.raw) {
        streams.message(dir, http);
    }
    let mut raw_changed = false;
    if let Some(r) = m.raw {
        if let Cow::Owned(s) = redactor.redact_json(r.get()) {
            raw_changed = true;
            edits.replace(r, s);
        }
    }
    for v in [m.http, m.blocks].into_iter().flatten() {
        if let Cow::Owned(s) = redactor.redact_json(v.get()) {
            edits.replace(v, s);
        }
    }
    edit_event_text(m, edits, redactor, streams);
    if raw_changed {
        if let Some(b64) = m.raw_b64 {
            if let Some((start, end)) = member_with_comma(edits.text, edits.at(b64), "raw_b64") {
                edits.push(start, end, String::new());
            }
        }
    }
}

/// An event's `text`, and its `bytes` (base64 of a line that was not UTF-8) decoded:
/// each redacted as a line of its stream; redacted bytes are written as `text` with
/// `lossy: true`, as the recorder writes them.
fn edit_event_text(
    m: &Members<'_>,
    edits: &mut Edits<'_>,
    redactor: &Redactor,
    streams: &mut LineStreams,
) {
    let http = m.http.is_some();
    let kind = m.kind.as_deref().unwrap_or_default();
    let event_side = side(m.side.as_deref());
    if let Some(t) = m.text {
        if let Ok(s) = serde_json::from_str::<Cow<'_, str>>(t.get()) {
            if let Cow::Owned(red) = streams.redact(redactor, kind, event_side, http, &s) {
                edits.replace(t, json_text(&red));
            }
        }
    }
    if let Some(b) = m.bytes {
        let decoded = serde_json::from_str::<String>(b.get())
            .ok()
            .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok());
        if let Some(decoded) = decoded {
            let lossy = String::from_utf8_lossy(&decoded);
            if let Cow::Owned(red) = streams.redact(redactor, kind, event_side, http, &lossy) {
                let (start, end) = edits.at(b);
                if let Some(key) = member_start(edits.text, start, "bytes") {
                    let with = format!("\"text\":{},\"lossy\":true", json_text(&red));
                    edits.push(key, end, with);
                }
            }
        }
    }
}

/// `in` or `out` as a direction; anything else as none.
fn side(s: Option<&str>) -> Option<Dir> {
    match s {
        Some("in") => Some(Dir::In),
        Some("out") => Some(Dir::Out),
        _ => None,
    }
}

/// The edits of one line's text, each a byte range and what replaces it.
struct Edits<'t> {
    text: &'t str,
    list: Vec<Edit>,
}

impl<'t> Edits<'t> {
    fn new(text: &'t str) -> Edits<'t> {
        Edits {
            text,
            list: Vec::new(),
        }
    }

    /// Where `v`, a member value borrowed from the line, stands in it.
    fn at(&self, v: &RawValue) -> (usize, usize) {
        let start = v.get().as_ptr() as usize - self.text.as_ptr() as usize;
        (start, start + v.get().len())
    }

    /// `v` becomes `with`, unless it is that already.
    fn replace(&mut self, v: &RawValue, with: String) {
        let (start, end) = self.at(v);
        if self.text[start..end] != with {
            self.list.push(Edit { start, end, with });
        }
    }

    fn push(&mut self, start: usize, end: usize, with: String) {
        self.list.push(Edit { start, end, with });
    }

    /// The line with the edits made in order of where they start (one that starts
    /// inside an earlier one is dropped); `None` when there is none.
    fn apply(mut self) -> Option<String> {
        if self.list.is_empty() {
            return None;
        }
        self.list.sort_by_key(|e| e.start);
        let text = self.text;
        let mut out = String::with_capacity(text.len() + 64);
        let mut pos = 0;
        for e in self.list {
            if e.start < pos {
                continue;
            }
            out.push_str(&text[pos..e.start]);
            out.push_str(&e.with);
            pos = e.end;
        }
        out.push_str(&text[pos..]);
        Some(out)
    }
}

/// True for a description under which nothing is redacted (`--no-redact`).
fn names_nothing(description: &Value) -> bool {
    Redactor::from_description(description).is_ok_and(|r| !r.is_active())
}

fn json_text<T: serde::Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// Where the member whose value starts at `value` begins: its key `"name"`, before the
/// colon and any white space.
fn member_start(text: &str, value: usize, name: &str) -> Option<usize> {
    let before = text[..value].trim_end().strip_suffix(':')?.trim_end();
    let key = format!("\"{name}\"");
    before.strip_suffix(key.as_str()).map(str::len)
}

/// The member `name` (key to value end) with the comma that joins it to its neighbour.
fn member_with_comma(text: &str, value: (usize, usize), name: &str) -> Option<(usize, usize)> {
    let key = member_start(text, value.0, name)?;
    let head = text[..key].trim_end();
    if let Some(comma) = head.strip_suffix(',') {
        return Some((comma.len(), value.1));
    }
    let tail = &text[value.1..];
    let rest = tail.trim_start().strip_prefix(',')?;
    Some((key, text.len() - rest.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redacted(lines: &[&str]) -> (String, Rewritten) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let mut out = Vec::new();
        let done = redact_trace(&path, &Redactor::builtin(), &mut out).unwrap();
        (String::from_utf8(out).unwrap(), done)
    }

    const META: &str = r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z","label":"x","command":["srv","--api-key","sk-abcdefghijklmnopqrstuvwx"]}"#;

    #[test]
    fn a_last_line_without_lf_keeps_its_final_cr() {
        // Found by fuzzing (fuzz/regressions/redact_trace): the CR that ended a last
        // line without LF was dropped from the rewritten trace.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, "not json\r\ntorn\r").unwrap();
        let mut out = Vec::new();
        redact_trace(&path, &Redactor::builtin(), &mut out).unwrap();
        assert_eq!(out, b"not json\r\ntorn\r");
    }

    #[test]
    fn secrets_go_everything_else_stays_byte_for_byte() {
        let msg = r#"{"t":"2026-01-01T00:00:00.001Z", "dir":"in","raw":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"password":"hunter2"}}},"zzz":1}"#;
        let plain = r#"{"t":"2026-01-01T00:00:00.002Z","dir":"out","raw":{"jsonrpc":"2.0","id":1,"result":{}}}"#;
        let (out, done) = redacted(&[META, msg, plain, "not json at all"]);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            done,
            Rewritten {
                lines: 4,
                changed: 2
            }
        );
        assert!(
            !out.contains("hunter2") && !out.contains("sk-abcdef"),
            "{out}"
        );
        let meta: Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(meta["redaction"], Redactor::builtin().describe());
        assert_eq!(meta["command"][2], "[REDACTED]");
        // Only the secret changed: spacing, member order and unknown members stay.
        assert_eq!(lines[1], msg.replace("hunter2", "[REDACTED]"));
        assert_eq!(lines[2], plain);
        assert_eq!(lines[3], "not json at all");
    }

    #[test]
    fn events_text_bytes_and_raw_b64_are_redacted() {
        let text = r#"{"t":"2026-01-01T00:00:00.001Z","dir":"event","kind":"reel.stderr","text":"key AKIAIOSFODNN7EXAMPLE"}"#;
        let b64 =
            base64::engine::general_purpose::STANDARD.encode(b"token AKIAIOSFODNN7EXAMPLE \xff");
        let bytes = format!(
            r#"{{"t":"2026-01-01T00:00:00.002Z","dir":"event","kind":"reel.nonjson","side":"out","bytes":"{b64}"}}"#
        );
        let orig = base64::engine::general_purpose::STANDARD.encode(br#"{"password": "hunter2"}"#);
        let reformatted = format!(
            r#"{{"t":"2026-01-01T00:00:00.003Z","dir":"out","raw":{{"password":"hunter2"}},"reformatted":true,"raw_b64":"{orig}"}}"#
        );
        let (out, _) = redacted(&[META, text, &bytes, &reformatted]);
        assert!(
            !out.contains("AKIA") && !out.contains(&b64) && !out.contains(&orig),
            "{out}"
        );
        let lines: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[1]["text"], "key [REDACTED]");
        assert_eq!(lines[2]["lossy"], true);
        assert!(lines[2]["text"].as_str().unwrap().contains("[REDACTED]"));
        assert!(lines[3].get("raw_b64").is_none() && lines[3]["reformatted"] == true);
    }

    /// As the recorder does: a key printed over many stderr lines loses every line.
    #[test]
    fn a_pem_block_over_stderr_lines_goes_whole() {
        let event = |text: &str| {
            format!(
                r#"{{"t":"2026-01-01T00:00:00.001Z","dir":"event","kind":"reel.stderr","text":"{text}"}}"#
            )
        };
        let body = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun";
        let lines = [
            META.to_owned(),
            event("-----BEGIN RSA PRIVATE KEY-----"),
            event(body),
            event("-----END RSA PRIVATE KEY-----"),
            event("done"),
        ];
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let (out, _) = redacted(&refs);
        assert!(!out.contains(body), "{out}");
        assert!(out.contains(r#""text":"done""#));
    }

    #[test]
    fn redacting_twice_changes_nothing_more_and_other_rules_are_refused() {
        let msg = r#"{"t":"2026-01-01T00:00:00.001Z","dir":"in","raw":{"jsonrpc":"2.0","id":1,"method":"x","params":{"token":"abc"}}}"#;
        let (once, _) = redacted(&[META, msg]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("once.jsonl");
        std::fs::write(&path, &once).unwrap();
        let mut twice = Vec::new();
        let done = redact_trace(&path, &Redactor::builtin(), &mut twice).unwrap();
        assert_eq!(done.changed, 0);
        assert_eq!(String::from_utf8(twice).unwrap(), once);
        let mine = Redactor::new(&crate::redact::RedactionConfig {
            patterns: vec!["MYCO-[0-9]+".into()],
            ..Default::default()
        })
        .unwrap();
        let refused = redact_trace(&path, &mine, &mut Vec::new());
        assert!(
            matches!(refused, Err(RewriteError::OtherRules { line: 1, .. })),
            "{refused:?}"
        );
    }

    /// `reel redact` on lines of every shape (the shared grammar of
    /// `reel_trace::testing`, with a secret put in at any place as a `raw` member): the
    /// secret is gone from the rewritten trace, whether or not the reference parser reads
    /// the line (a wrong-typed or repeated member must not keep a secret in).
    mod against_the_grammar {
        use super::*;
        use proptest::prelude::*;
        use reel_trace::testing::trace_line;

        const SECRET: &str = "hunter2-correct-horse-battery";
        static BUILTIN: std::sync::LazyLock<Redactor> = std::sync::LazyLock::new(Redactor::builtin);

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(1000))]
            #[test]
            fn a_secret_in_any_line_is_gone(line in trace_line(), at in 0usize..8) {
                let member = format!(r#""raw":{{"password":"{SECRET}"}}"#);
                let inner = &line[1..line.len() - 1];
                let mut parts: Vec<&str> = if inner.is_empty() { Vec::new() } else { inner.split(',').collect() };
                // Members never hold a top-level comma of their own in this grammar
                // except inside `raw` objects: insert at a member boundary found by
                // re-joining, so the line stays one JSON object when it was one.
                let joined: Vec<String> = {
                    let mut out = Vec::new();
                    let mut cur = String::new();
                    let mut depth = 0i32;
                    for p in parts.drain(..) {
                        if !cur.is_empty() { cur.push(','); }
                        cur.push_str(p);
                        depth += p.matches(['{', '[']).count() as i32 - p.matches(['}', ']']).count() as i32;
                        if depth == 0 { out.push(std::mem::take(&mut cur)); }
                    }
                    if !cur.is_empty() { out.push(cur); }
                    out
                };
                let mut members = joined;
                let at = at.min(members.len());
                members.insert(at, member);
                let line = format!("{{{}}}", members.join(","));
                let redactor = &*BUILTIN;
                let out = redact_line(&line, redactor, &redactor.describe(), &mut LineStreams::default())
                    .unwrap_or(None)
                    .unwrap_or_else(|| line.clone());
                prop_assert!(!out.contains(SECRET), "the secret stayed in {}", line);
            }
        }
    }
}
