//! Listing a directory's runs: each trace (its rotated companions with it) or foreign
//! recording described from its head and tail, and what was skipped with the reason.
//! The parent module says what a listing holds.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::Serialize;

use reel_trace::Timestamp;
use reel_trace::errors::ErrorTally;
use reel_trace::line::{Counts, Dir, Line, LineError, parse_line};
use reel_trace::reader::TraceReader;

/// The meta line must end within this many bytes of the start of the file.
pub const HEAD_LIMIT: usize = 1 << 20;
/// The last line is looked for within this many bytes of the end of the file.
pub const TAIL_LIMIT: u64 = 1 << 20;
/// Runs without `end.counts` are counted line by line only up to this total size.
pub const SCAN_LIMIT: u64 = 8 << 20;
/// The first window read from the end; grown fourfold up to [`TAIL_LIMIT`].
const TAIL_WINDOW: u64 = 16 << 10;

/// Identifies the JSON document `reel ls --json` prints.
pub const SCHEMA: &str = "reel.ls/1";

/// Why a directory cannot be listed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ListError {
    /// The directory does not exist.
    #[error("{dir}: no such directory")]
    NotFound {
        /// The directory.
        dir: PathBuf,
    },
    /// The path is not a directory.
    #[error("{dir}: not a directory (give the directory that holds the traces)")]
    NotADirectory {
        /// The path.
        dir: PathBuf,
    },
    /// Reading the directory failed.
    #[error("{dir}: cannot read the directory: {source}")]
    Unreadable {
        /// The directory.
        dir: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
}

/// Where a run's counts came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CountsFrom {
    /// `end.counts`, as the producer wrote it.
    End,
    /// Counted by reading the whole run (it is at most [`SCAN_LIMIT`] bytes).
    Scan,
}

/// One recorded run.
///
/// JSON (`reel ls --json`, camelCase): `path`, `files`, `label`, `kind`, `source`,
/// `startedAt`, `durationMs`, `interrupted`, `exitCode`, `reason`, `counts`
/// (`{in, out, events, turns, errors}`), `countsFrom` (`"end"`, `"scan"`), `bytes`,
/// and for llm runs `models` (the models that generated, first use first) and `tokens`
/// (input, cache and output tokens of those generations; echoed turns excluded), from
/// the `end` line's `llm` summary (reel's) or a scan, and `turnless`: how many llm
/// exchanges carried an answer but gave no turns (their tokens are not in `tokens`; see
/// [`reel_trace::llm::TurnCoverage`]; absent when none). Absent facts are `null`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    /// The trace file (the base of a rotated set).
    pub path: PathBuf,
    /// Every file of the run in reading order: rotated companions oldest first, then `path`.
    pub files: Vec<PathBuf>,
    /// `meta.label`.
    pub label: Option<String>,
    /// `meta.kind`, `"mcp"` when absent.
    pub kind: String,
    /// The producer (`meta.source`, else `meta.producer`).
    pub source: Option<String>,
    /// `meta.startedAt`, as written.
    pub started_at: Option<String>,
    /// `end.durationMs`; for an interrupted run, from the start to the last line's `t`.
    /// Written as an integer when whole, as the format writes it.
    #[serde(serialize_with = "millis")]
    pub duration_ms: Option<f64>,
    /// True when the run has no `end` line (the producer was stopped or is still running).
    pub interrupted: bool,
    /// `end.exitCode`.
    pub exit_code: Option<i64>,
    /// `end.reason`.
    pub reason: Option<String>,
    /// Message, event, turn and error counts, when known.
    pub counts: Option<Counts>,
    /// Where `counts` came from.
    pub counts_from: Option<CountsFrom>,
    /// Total size of the run's files.
    pub bytes: u64,
    /// llm runs: the models that generated, in order of first use.
    pub models: Vec<String>,
    /// llm runs: tokens of the generations (input, cache reads and writes, output).
    pub tokens: Option<u64>,
    /// llm runs: exchanges that carried an answer but gave no turns (written only when
    /// there are some).
    #[serde(skip_serializing_if = "is_zero")]
    pub turnless: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Run {
    /// The start as a timestamp, when `startedAt` parses.
    pub fn started(&self) -> Option<Timestamp> {
        self.started_at.as_deref().and_then(Timestamp::parse)
    }
}

fn millis<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match *v {
        // Below 2^53 every whole f64 is an exact integer.
        Some(f) if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 => {
            s.serialize_i64(f as i64)
        }
        Some(f) => s.serialize_f64(f),
        None => s.serialize_none(),
    }
}

/// A file that looked like a trace by its name but is not one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// The file.
    pub path: PathBuf,
    /// Why it is not listed.
    pub reason: String,
}

/// What `reel ls` shows: the runs in a directory, newest first.
///
/// JSON: `{"schema": "reel.ls/1", "dir", "runs": [Run…], "skipped": [{path, reason}…],
/// "ignored": n}` where `ignored` counts entries that are neither traces nor recordings
/// of a format reel reads.
#[derive(Debug, Clone, Serialize)]
pub struct Listing {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// The directory listed.
    pub dir: PathBuf,
    /// The runs, newest start first; runs without a readable start come last.
    pub runs: Vec<Run>,
    /// `*.jsonl` files that are not traces, and recordings that cannot be read.
    pub skipped: Vec<Skipped>,
    /// Other entries: files that are neither traces nor another tool's recordings,
    /// directories other than mcptape runs, dotfiles.
    pub ignored: u64,
}

impl Listing {
    /// An empty listing of `dir`.
    pub fn empty(dir: &Path) -> Listing {
        Listing {
            schema: SCHEMA,
            dir: dir.to_owned(),
            runs: Vec::new(),
            skipped: Vec::new(),
            ignored: 0,
        }
    }
}

/// Lists the runs in `dir` (not its subdirectories).
pub fn list_runs(dir: &Path) -> Result<Listing, ListError> {
    let entries = std::fs::read_dir(dir).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => ListError::NotFound {
            dir: dir.to_owned(),
        },
        io::ErrorKind::NotADirectory => ListError::NotADirectory {
            dir: dir.to_owned(),
        },
        _ => ListError::Unreadable {
            dir: dir.to_owned(),
            source: e,
        },
    })?;
    let mut listing = Listing::empty(dir);
    // base path → (rotation number, path); the base itself is number 0.
    let mut groups: BTreeMap<PathBuf, Vec<(u64, PathBuf)>> = BTreeMap::new();
    for entry in entries {
        let entry = entry.map_err(|e| ListError::Unreadable {
            dir: dir.to_owned(),
            source: e,
        })?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let is_file = std::fs::metadata(&path).is_ok_and(|m| m.is_file());
        match trace_name(&name) {
            Some((base, n)) if is_file && !name.starts_with('.') => {
                groups.entry(dir.join(base)).or_default().push((n, path));
            }
            _ if !name.starts_with('.')
                && (is_file || reel_convert::mcptape::is_run_dir(&path)) =>
            {
                // Another tool's recording, listed as the run it holds; one of a
                // format reel reads that cannot be read is said, not passed over.
                match foreign_run(&path) {
                    Some(Ok(run)) => listing.runs.push(run),
                    Some(Err(reason)) => listing.skipped.push(Skipped { path, reason }),
                    None => listing.ignored += 1,
                }
            }
            _ => listing.ignored += 1,
        }
    }
    for (base, mut files) in groups {
        // Oldest first: the highest rotation number, the base (0) last.
        files.sort_by_key(|f| std::cmp::Reverse(f.0));
        let files: Vec<PathBuf> = files.into_iter().map(|(_, p)| p).collect();
        let single = (files.len() == 1).then(|| files[0].clone());
        match read_run(base, files) {
            Ok(run) => listing.runs.push(run),
            // A `.jsonl` of another tool's (a Claude Code session, an mcp-rec session).
            Err((path, reason)) => match single.as_deref().and_then(foreign_run) {
                Some(Ok(run)) => listing.runs.push(run),
                Some(Err(reason)) => listing.skipped.push(Skipped { path, reason }),
                None => listing.skipped.push(Skipped { path, reason }),
            },
        }
    }
    listing.runs.sort_by(|a, b| {
        b.started()
            .cmp(&a.started())
            .then_with(|| a.path.cmp(&b.path))
    });
    Ok(listing)
}

/// The size of a recording: its file, or the files of its run directory.
fn foreign_bytes(path: &Path) -> u64 {
    match std::fs::read_dir(path) {
        Ok(entries) => entries
            .flatten()
            .filter_map(|e| e.metadata().ok())
            .filter(|m| m.is_file())
            .map(|m| m.len())
            .sum(),
        Err(_) => std::fs::metadata(path).map_or(0, |m| m.len()),
    }
}

/// The run another tool's recording holds (a format of [`reel_convert`]), read
/// through its converter: `source` names the format, the label is the file's name,
/// times and counts are the recording's (read whole: such files are small, and the
/// converter streams). `None` when it is no format reel reads; the reason when it is
/// one but cannot be read (a YAML document past the parser's limits, say).
fn foreign_run(path: &Path) -> Option<Result<Run, String>> {
    let format = if reel_convert::mcptape::is_run_dir(path) {
        reel_convert::Format::Mcptape
    } else {
        reel_convert::sniff_file(path).ok()??
    };
    Some(
        foreign_run_of(path, format)
            .map_err(|e| format!("cannot read this {} recording: {e}", format.name())),
    )
}

fn foreign_run_of(
    path: &Path,
    format: reel_convert::Format,
) -> Result<Run, reel_convert::ConvertError> {
    use reel_convert::{Fault, Found, Item};
    let found = Found {
        format,
        path: path.to_owned(),
        label: String::new(),
    };
    let converted = reel_convert::convert(&found)?;
    let mut counts = Counts::default();
    let mut llm = LlmSummary::default();
    let mut errors = ErrorTally::default();
    let started = converted.started;
    let mut ended = started;
    for item in converted.items {
        match item {
            Ok(item) => {
                ended = ended.max(item.t());
                // A large message's skeleton says all a listing reads of it.
                let item = match item {
                    Item::Large(large) => *large.item,
                    item => item,
                };
                match item {
                    Item::Message { dir, raw, .. } => {
                        match dir {
                            Dir::In => counts.inbound += 1,
                            _ => counts.outbound += 1,
                        }
                        errors.message(dir, None, 0, &raw);
                    }
                    Item::Event { .. } => counts.events += 1,
                    Item::Turn { turn, .. } => {
                        counts.turns += 1;
                        llm.add(&turn);
                        errors.turn(&turn);
                    }
                    Item::Large(_) => {}
                }
            }
            Err(Fault::Bad(..) | Fault::TooLong { .. }) => counts.events += 1,
            Err(Fault::Io(e)) => return Err(e.into()),
        }
    }
    counts.errors = errors.errors();
    Ok(Run {
        path: path.to_owned(),
        files: vec![path.to_owned()],
        label: path.file_stem().map(|s| s.to_string_lossy().into_owned()),
        kind: converted.kind.to_owned(),
        source: Some(format.name().to_owned()),
        started_at: Some(started.to_iso().as_str().to_owned()),
        duration_ms: Some((ended.0 - started.0).max(0) as f64),
        interrupted: false,
        exit_code: None,
        reason: None,
        counts: Some(counts),
        counts_from: Some(CountsFrom::Scan),
        bytes: foreign_bytes(path),
        tokens: (llm.tokens > 0).then_some(llm.tokens),
        turnless: llm.turnless,
        models: llm.models,
    })
}

/// `("x.jsonl", 0)` for `x.jsonl`, `("x.jsonl", 2)` for `x.jsonl.2`, `None` otherwise.
fn trace_name(name: &str) -> Option<(&str, u64)> {
    if name.ends_with(".jsonl") && name.len() > ".jsonl".len() {
        return Some((name, 0));
    }
    let (base, n) = name.rsplit_once('.')?;
    if base.ends_with(".jsonl") && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
        return Some((base, n.parse().ok()?));
    }
    None
}

/// Describes the run made of `files` (oldest first). The error names the file that is not
/// a trace and why.
fn read_run(base: PathBuf, files: Vec<PathBuf>) -> Result<Run, (PathBuf, String)> {
    let (first, last) = match (files.first(), files.last()) {
        (Some(f), Some(l)) => (f.clone(), l.clone()),
        _ => return Err((base, "no files".into())),
    };
    let mut bytes = 0;
    for f in &files {
        bytes += std::fs::metadata(f)
            .map_err(|e| (f.clone(), format!("cannot read: {e}")))?
            .len();
    }
    let meta = match read_head(&first).map_err(|e| (first.clone(), format!("cannot read: {e}")))? {
        Head::Meta(m) => m,
        Head::NotATrace(why) => return Err((first, why)),
    };
    let tail = read_tail(&last).map_err(|e| (last.clone(), format!("cannot read: {e}")))?;

    let started_at = meta.started_at.clone();
    let started = started_at.as_deref().and_then(Timestamp::parse);
    let mut run = Run {
        path: base,
        files,
        label: meta.label.clone(),
        kind: meta.kind_or_default().to_owned(),
        source: meta.producer_label(),
        started_at,
        duration_ms: None,
        interrupted: true,
        exit_code: None,
        reason: None,
        counts: None,
        counts_from: None,
        bytes,
        models: Vec::new(),
        tokens: None,
        turnless: 0,
    };
    match tail {
        Tail::End(end) => {
            run.interrupted = false;
            run.exit_code = end.exit_code;
            run.reason = end.reason.clone();
            run.duration_ms = end.duration_ms.or_else(|| {
                let t = end.t.as_deref().and_then(Timestamp::parse)?;
                Some((t.0 - started?.0) as f64)
            });
            if let Some(c) = end.counts {
                run.counts = Some(c);
                run.counts_from = Some(CountsFrom::End);
            }
            if let Some(s) = end.extra.get("llm").and_then(LlmSummary::from_value) {
                run.models = s.models;
                run.tokens = Some(s.tokens);
                run.turnless = s.turnless;
            }
        }
        Tail::Last { t } => {
            run.duration_ms = match (t, started) {
                (Some(t), Some(s)) if t >= s => Some((t.0 - s.0) as f64),
                _ => None,
            };
        }
    }
    if run.counts.is_none() && bytes <= SCAN_LIMIT {
        let (counts, llm) = count_lines(&run.files);
        run.counts = Some(counts);
        if run.kind == "llm" || !llm.models.is_empty() {
            run.models = llm.models;
            run.tokens = Some(llm.tokens);
            run.turnless = llm.turnless;
        }
        run.counts_from = Some(CountsFrom::Scan);
    }
    Ok(run)
}

enum Head {
    Meta(Box<reel_trace::line::Meta>),
    NotATrace(String),
}

/// Reads the first line (at most [`HEAD_LIMIT`] bytes) and parses it as a meta line.
fn read_head(path: &Path) -> io::Result<Head> {
    let mut f = File::open(path)?;
    let mut buf = Vec::with_capacity(64 << 10);
    let mut chunk = vec![0u8; 64 << 10];
    let line_end = loop {
        if let Some(i) = memchr::memchr(b'\n', &buf) {
            break i;
        }
        if buf.len() >= HEAD_LIMIT {
            return Ok(Head::NotATrace(format!(
                "no line break in the first {} KiB, so no meta line",
                HEAD_LIMIT >> 10
            )));
        }
        let n = f.read(&mut chunk)?;
        if n == 0 {
            if buf.is_empty() {
                return Ok(Head::NotATrace("empty file".into()));
            }
            break buf.len();
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let mut line = &buf[..line_end];
    line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    line = line.strip_suffix(b"\r").unwrap_or(line);
    Ok(match parse_line(line) {
        Ok(Line::Meta(m)) => Head::Meta(m),
        Ok(other) => Head::NotATrace(match class_name(&other) {
            Some(class) => format!("line 1 is {class} line, not a meta line"),
            None => "line 1 is not a meta line (no known `type` or `dir`)".to_owned(),
        }),
        Err(e) => Head::NotATrace(format!("line 1 is not a meta line: {}", short_error(&e))),
    })
}

fn class_name(line: &Line<'_>) -> Option<&'static str> {
    Some(match line {
        Line::Meta(_) => "a meta",
        Line::Message(_) => "a message",
        Line::Event(_) => "an extension",
        Line::Turn(_) => "a turn",
        Line::End(_) => "an end",
        Line::Other(_) => return None,
    })
}

fn short_error(e: &LineError) -> String {
    match e {
        LineError::NotJson { .. } => "not JSON".into(),
        other => other.to_string(),
    }
}

enum Tail {
    /// The last line is an `end` line.
    End(Box<reel_trace::line::End>),
    /// No `end`: the `t` of the last line that parses, when there is one.
    Last { t: Option<Timestamp> },
}

/// Finds the last line by reading backwards from the end of the file.
fn read_tail(path: &Path) -> io::Result<Tail> {
    let mut f = File::open(path)?;
    let len = f.metadata()?.len();
    let mut window = TAIL_WINDOW.min(len);
    loop {
        let mut buf = vec![0u8; window as usize];
        f.seek(SeekFrom::Start(len - window))?;
        f.read_exact(&mut buf)?;
        let whole_file = window == len;
        // Trailing line breaks and blank lines are not a line.
        let end = buf
            .iter()
            .rposition(|b| !b" \t\r\n".contains(b))
            .map_or(0, |i| i + 1);
        let body = &buf[..end];
        // Lines that are complete in the window, last first. The first piece of a window
        // that does not start the file may be the cut-off end of a longer line.
        let mut lines: Vec<&[u8]> = body.rsplit(|&b| b == b'\n').collect();
        if !whole_file {
            lines.pop();
        }
        if let Some(last) = lines.first() {
            let last = last.strip_suffix(b"\r").unwrap_or(last);
            if let Ok(Line::End(e)) = parse_line(last) {
                return Ok(Tail::End(e));
            }
            // Interrupted: the time of the last line that parses (a torn one does not).
            let t = lines
                .iter()
                .take(4)
                .filter_map(|l| parse_line(l.strip_suffix(b"\r").unwrap_or(l)).ok())
                .find_map(|l| l.t().and_then(Timestamp::parse));
            return Ok(Tail::Last { t });
        }
        if whole_file || window >= TAIL_LIMIT {
            return Ok(Tail::Last { t: None });
        }
        window = (window * 4).min(TAIL_LIMIT).min(len);
    }
}

/// Counts lines by kind, reading every file (only called under [`SCAN_LIMIT`]), and
/// sums the generations of llm turns.
fn count_lines(files: &[PathBuf]) -> (Counts, LlmSummary) {
    let mut c = Counts::default();
    let mut llm = LlmSummary::default();
    let mut coverage = reel_trace::llm::TurnCoverage::default();
    let mut errors = ErrorTally::default();
    for f in files {
        let Ok(mut reader) = TraceReader::open_single(f) else {
            continue;
        };
        while let Some(Ok(line)) = reader.next_line() {
            let parsed = line.parse();
            if let Ok(Line::Event(e)) = &parsed {
                coverage.event(e, 0);
                if e.kind.as_deref() == Some(reel_trace::line::kinds::LLM_ERROR) {
                    errors.llm_error();
                }
            }
            match parsed {
                Ok(Line::Message(m)) => {
                    match m.dir() {
                        Some(Dir::In) => c.inbound += 1,
                        Some(Dir::Out) => c.outbound += 1,
                        _ => {}
                    }
                    if let (Some(dir), Some(raw)) = (m.dir(), m.raw_str()) {
                        errors.message(dir, m.session.as_deref(), m.http_req(), raw);
                    }
                }
                Ok(Line::Event(_)) => c.events += 1,
                Ok(Line::Turn(t)) => {
                    c.turns += 1;
                    llm.add(&t);
                    errors.turn(&t);
                    if let Some(n) = t.http_req() {
                        coverage.turn(n);
                    }
                }
                _ => {}
            }
        }
    }
    llm.turnless = coverage.turnless().len() as u64;
    c.errors = errors.errors();
    (c, llm)
}

/// What an llm run's `end` line sums up (reel's `llm` member): the models that
/// generated, first use first, and the tokens of their generations. Echoed turns and
/// turns of other roles count for nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LlmSummary {
    /// Models, in order of first use.
    pub models: Vec<String>,
    /// Input, cache-read, cache-creation and output tokens.
    pub tokens: u64,
    /// The same, by field: input, output, cache reads, cache writes.
    pub usage: [u64; 4],
    /// Exchanges that carried an answer but gave no turns (not in `tokens`).
    pub turnless: u64,
}

impl LlmSummary {
    /// Counts `turn` when it is a generation.
    pub fn add(&mut self, turn: &reel_trace::line::Turn) {
        if turn.is_echoed() || turn.role.as_deref() != Some("assistant") {
            return;
        }
        if let Some(m) = &turn.model {
            if !self.models.contains(m) {
                self.models.push(m.clone());
            }
        }
        if let Some(u) = &turn.usage {
            let parts = [
                u.input_tokens,
                u.output_tokens,
                u.cache_read_input_tokens,
                u.cache_creation_input_tokens,
            ];
            for (sum, n) in self.usage.iter_mut().zip(parts) {
                *sum += n.unwrap_or(0);
            }
            self.tokens = self.usage.iter().sum();
        }
    }

    /// The `end.llm` member: `{"models": […], "usage": {input_tokens, output_tokens,
    /// cache_read_input_tokens, cache_creation_input_tokens}}`.
    pub fn to_value(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "models": self.models,
            "usage": {
                "input_tokens": self.usage[0],
                "output_tokens": self.usage[1],
                "cache_read_input_tokens": self.usage[2],
                "cache_creation_input_tokens": self.usage[3],
            },
        });
        if self.turnless > 0 {
            v["turnless"] = self.turnless.into();
        }
        v
    }

    /// Reads an `end.llm` member.
    pub fn from_value(v: &serde_json::Value) -> Option<LlmSummary> {
        let models = v
            .get("models")?
            .as_array()?
            .iter()
            .filter_map(|m| m.as_str().map(str::to_owned))
            .collect();
        let u = v.get("usage");
        let n = |k: &str| {
            u.and_then(|u| u.get(k))
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0)
        };
        let usage = [
            n("input_tokens"),
            n("output_tokens"),
            n("cache_read_input_tokens"),
            n("cache_creation_input_tokens"),
        ];
        Some(LlmSummary {
            models,
            tokens: usage.iter().sum(),
            usage,
            turnless: v
                .get("turnless")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_names_and_companions() {
        assert_eq!(trace_name("a.jsonl"), Some(("a.jsonl", 0)));
        assert_eq!(trace_name("a.jsonl.12"), Some(("a.jsonl", 12)));
        assert_eq!(trace_name("a.jsonl.x"), None);
        assert_eq!(trace_name("a.jsonl."), None);
        assert_eq!(trace_name(".jsonl"), None);
        assert_eq!(trace_name("a.json"), None);
        assert_eq!(trace_name("notes.txt"), None);
    }

    fn tail_of(text: &[u8]) -> Tail {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, text).unwrap();
        read_tail(&p).unwrap()
    }

    #[test]
    fn tail_finds_the_end_line_past_blank_lines_and_crlf() {
        let text = b"{\"type\":\"meta\"}\r\n{\"t\":\"2026-01-01T00:00:01.000Z\",\"type\":\"end\",\"exitCode\":3}\r\n\n";
        let Tail::End(e) = tail_of(text) else {
            panic!("no end")
        };
        assert_eq!(e.exit_code, Some(3));
    }

    #[test]
    fn tail_of_an_interrupted_trace_gives_the_last_time() {
        let mut text = b"{\"type\":\"meta\"}\n".to_vec();
        text.extend_from_slice(b"{\"t\":\"2026-01-01T00:00:02.000Z\",\"dir\":\"in\",\"raw\":{}}\n");
        text.extend_from_slice(b"{\"t\":\"2026-01-01T00:00:03.0");
        let Tail::Last { t } = tail_of(&text) else {
            panic!("an end")
        };
        assert_eq!(t, Timestamp::parse("2026-01-01T00:00:02.000Z"));
    }

    #[test]
    fn tail_window_grows_past_a_long_last_line_and_stops_at_the_limit() {
        let mut text = b"{\"type\":\"meta\"}\n".to_vec();
        let pad = "x".repeat(100_000);
        text.extend_from_slice(
            format!("{{\"type\":\"end\",\"reason\":\"r\",\"pad\":\"{pad}\"}}\n").as_bytes(),
        );
        assert!(matches!(tail_of(&text), Tail::End(_)));
        let huge = "x".repeat(TAIL_LIMIT as usize + 10);
        let mut text = b"{\"type\":\"meta\"}\n".to_vec();
        text.extend_from_slice(format!("{{\"type\":\"end\",\"pad\":\"{huge}\"}}\n").as_bytes());
        assert!(matches!(tail_of(&text), Tail::Last { t: None }));
    }
}
