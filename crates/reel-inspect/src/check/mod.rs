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
//! - Counts ([`CheckReport::errors`] …) count every problem found, listed or not; an
//!   aggregated info ("unknown kind `x`, 12 lines") counts once.
//! - Lines are read with the crate's line model ([`parse_line`]); `raw` is never
//!   re-serialised. Nothing here panics on input.
//!
//! `history_elided` markers are verified when the trace holds the request body they
//! describe: an `llm.request` or `llm.exchange` event whose `raw.request_sha256` equals
//! the marker's and whose `raw.body` is the body (a JSON string holding the exact bytes,
//! or the body object itself, in which case only the prefix hash can be checked).
//!
//! The check is split by concern: `rules` names what is checked ([`Rule`], its id,
//! severity and meaning); `checker` walks the trace, keeps the session state and judges
//! the lines that do not parse; `lines` checks each kind of parsed line; `pairing`
//! pairs JSON-RPC requests with their responses and honours cancellation; `history`
//! verifies `history_elided` markers; `members` holds the member type tables and how a
//! value is quoted in a message; `filing` files problems under their caps and builds
//! the [`CheckReport`] (`report`); `state` holds what the checker keeps between lines, and
//! `options` its knobs and caps; `seal` adds what a trace's seal says (`--verify`) to it; [`render`]
//! writes reports as the `reel.check/1` document and as text.
//!
//! [`parse_line`]: reel_trace::line::parse_line

mod checker;
mod filing;
mod history;
mod lines;
mod members;
mod options;
mod pairing;
pub mod render;
mod report;
mod rules;
mod seal;
mod state;
#[cfg(test)]
mod testing;

use std::io::{self, Read};
use std::path::Path;

use checker::Checker;
use reel_trace::reader::{LineReader, OpenError, TraceReader};
use reel_trace::{Progress, Throttle};

pub use options::{
    CheckOptions, DEFAULT_MAX_PER_RULE, KNOWN_KINDS, MAX_CANCELLED, MAX_DISTINCT_NAMES,
    MAX_PENDING_MARKERS, MAX_REQUEST_BODIES, is_known_kind,
};
pub use report::{CheckReport, Problem, SealOutcome};
pub use rules::{Rule, Severity};
pub use seal::rule_of;

/// Checks the trace at `path` (with its rotated companions).
///
/// Fails only when a file cannot be opened or read; everything wrong *inside* the files
/// is in the report.
pub fn check_trace(path: &Path, options: &CheckOptions) -> Result<CheckReport, OpenError> {
    check_trace_reporting(path, options, &mut |_| {})
}

/// [`check_trace`], telling `progress` how many of the trace's bytes are read (every
/// MiB, and at the end).
pub fn check_trace_reporting(
    path: &Path,
    options: &CheckOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<CheckReport, OpenError> {
    let mut reader = TraceReader::open(path)?;
    let files = reader.files().to_vec();
    let total = reader.total_bytes();
    let mut checker = Checker::new(path, &files, options);
    let mut throttle = Throttle::default();
    while let Some(next) = reader.next_line() {
        let line = next?;
        let file = files.iter().position(|f| f == line.path).unwrap_or(0);
        checker.line(file, line.raw, file + 1 == files.len());
        let done = reader.bytes_read();
        throttle.tick(Progress { done, total }, progress);
    }
    progress(Progress { done: total, total });
    Ok(checker.finish(total))
}

/// Checks a trace read from `input`, reported under the name `name` (for tests and
/// for traces that are not files).
pub fn check_read<R: Read>(
    name: &Path,
    input: R,
    options: &CheckOptions,
) -> io::Result<CheckReport> {
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

#[cfg(test)]
mod tests {
    use super::testing::{T, check, msg, rules, trace};

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
}
