//! # reel-diff
//!
//! Where two runs drifted apart: two traces of "the same" session (two recordings, or a
//! recording and its replay or verify run) aligned by content, each pair classified, and
//! the result rendered for people (text), programs (JSON, `reel.diff/1`) and CI (GitHub
//! annotations).
//!
//! The pipeline: each trace is read once on its own thread (module `side`) into compact
//! records (match keys, fingerprints by `reel_mcp::normalize::KeyHasher`, file
//! positions); the aligner (`align`) pairs them by content and compares each pair
//! (`compare`), re-reading payloads (`payload`) only where fingerprints differ; the
//! findings become a [`DiffReport`], whose drifts a renderer ([`render`]) shows, re-reading
//! the payloads of the drifts it prints in full ([`DiffReport::detail`]).
//!
//! What "the same" means is the shared normaliser of `reel-mcp` (one implementation for
//! play, verify and diff) plus this crate's [`honest_rules`]. Exit codes: 0 identical,
//! 1 output drift only, 2 structural drift ([`DiffReport::verdict`]; the CLI maps it).

#![deny(missing_docs)]

mod align;
mod bodies;
mod compare;
pub mod drift;
mod linediff;
mod options;
mod payload;
mod place;
pub mod render;
mod side;

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use reel_mcp::normalize::{Difference, Normalizer, diff as value_diff, json_eq, numbers};
pub use reel_mcp::notifications::NotificationCheck;
use reel_redact::redact::Redactor;
use reel_trace::line::parse_line;
use reel_trace::{Line, TraceReader};
use serde::Serialize;
use serde_json::{Value, json};

pub use compare::MAX_KEPT_DRIFTS;
pub use drift::{
    Change, ChangeEntry, Changelog, Class, ContextLine, Drift, HonestRule, Kind, Note, Passed,
    Place, honest_rules, honest_rules_help,
};
pub use options::{DiffError, DiffOptions};
pub use side::{BATCH_LINES, CONTEXT, RESET_AFTER};

use crate::drift::Refs;
use crate::payload::{Payloads, Prep};
use crate::side::{Batch, SideTotals};

/// Batches in flight per side: with [`BATCH_LINES`] lines each, the lead one side may
/// take over the other.
const CHANNEL_BATCHES: usize = 2;

/// How far the diff has read: bytes of both traces together.
pub use reel_trace::Progress;

/// One side's facts.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SideSummary {
    /// The path given.
    pub path: PathBuf,
    /// Every file read (rotated companions first).
    pub files: Vec<PathBuf>,
    /// Bytes of those files.
    pub bytes: u64,
    /// Lines read.
    pub lines: u64,
    /// Message lines (`dir` in/out).
    pub messages: u64,
    /// Exchanges (requests, either direction).
    pub exchanges: u64,
    /// Turns compared (echoed turns excluded).
    pub turns: u64,
    /// Echoed turns skipped.
    pub echoed_turns: u64,
    /// Sessions (meta lines).
    pub sessions: u64,
    /// Lines that did not parse and were skipped.
    pub skipped_lines: u64,
}

/// Totals of a diff.
#[derive(Clone, Copy, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    /// Exchanges paired across the two traces.
    pub paired: u64,
    /// Paired exchanges without any drift.
    pub identical: u64,
    /// Exchanges only in B.
    pub added: u64,
    /// Exchanges only in A.
    pub removed: u64,
    /// Turns paired.
    pub turns_paired: u64,
    /// Output drifts.
    pub output: u64,
    /// Structural drifts.
    pub structural: u64,
}

/// The overall outcome: the one drift verdict of `reel_mcp::drift`.
pub use reel_mcp::drift::Verdict;

/// A drift shown in full: every differing pointer and both payloads pretty-printed
/// (normalised, as compared).
#[derive(Clone, Debug)]
pub struct Detail {
    /// What the payloads are ("response", "progress notifications", "turn", …).
    pub what: String,
    /// Every place the two differ.
    pub differences: Vec<Difference>,
    /// A's payload, pretty-printed, when A has it.
    pub left: Option<String>,
    /// B's payload, pretty-printed, when B has it.
    pub right: Option<String>,
}

/// Everything a diff found.
#[derive(Debug)]
pub struct DiffReport {
    /// Trace A.
    pub a: SideSummary,
    /// Trace B.
    pub b: SideSummary,
    /// Totals.
    pub counts: Counts,
    /// The drifts, in A's order (B's for what only B has); at most
    /// [`MAX_KEPT_DRIFTS`].
    pub drifts: Vec<Drift>,
    /// Drifts counted but not kept.
    pub omitted_drifts: u64,
    /// What paired without drift, in the order compared (with
    /// [`DiffOptions::keep_passed`]; empty otherwise).
    pub passed: Vec<Passed>,
    /// Differences that are not drift.
    pub notes: Vec<Note>,
    /// Things the user should know (skipped lines, redaction rules that could not be
    /// read).
    pub warnings: Vec<String>,
    /// The --ignore pointers used.
    pub ignored: Vec<String>,
    payloads: RefCell<[Payloads; 2]>,
}

impl DiffReport {
    /// Identical, output drift or structural drift.
    pub fn verdict(&self) -> Verdict {
        if self.counts.structural > 0 {
            Verdict::Structural
        } else if self.counts.output > 0 {
            Verdict::Output
        } else {
            Verdict::Identical
        }
    }

    /// Re-reads a drift's payloads to show it in full.
    pub fn detail(&self, d: &Drift) -> Result<Option<Detail>, DiffError> {
        let mut pl = self.payloads.borrow_mut();
        Ok(Some(match &d.refs {
            Refs::None => return Ok(None),
            Refs::Messages { a, b, progress } => messages_detail(&mut pl, a, b, *progress)?,
            Refs::Exchange {
                side,
                request,
                response,
            } => exchange_detail(&mut pl[*side], *side, *request, *response)?,
            Refs::Turns { a, b, usage } => turns_detail(&mut pl, *a, *b, *usage)?,
            Refs::Values { a, b } => Detail {
                what: "answer".to_owned(),
                differences: match (a, b) {
                    (Some(x), Some(y)) => value_diff(x, y),
                    _ => Vec::new(),
                },
                left: a.as_deref().map(pretty),
                right: b.as_deref().map(pretty),
            },
        }))
    }
}

/// A value as a detail shows it: indented, numbers as written.
fn pretty(v: &Value) -> String {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    numbers::show(&text).into_owned()
}

/// Two responses, or the notifications (progress or other) each side sent, compared.
fn messages_detail(
    pl: &mut [Payloads; 2],
    a: &[side::Loc],
    b: &[side::Loc],
    progress: bool,
) -> Result<Detail, DiffError> {
    let (va, vb) = if a.len() == 1 && b.len() == 1 && !progress {
        (pl[0].message(a[0])?, pl[1].message(b[0])?)
    } else if a.is_empty() && b.len() == 1 {
        (Value::Null, pl[1].message(b[0])?)
    } else if b.is_empty() && a.len() == 1 {
        (pl[0].message(a[0])?, Value::Null)
    } else {
        (
            compare::notification_list(&mut pl[0], a, progress)?,
            compare::notification_list(&mut pl[1], b, progress)?,
        )
    };
    let what = if progress {
        "progress notifications"
    } else if a.len() > 1 || b.len() > 1 {
        "notifications"
    } else {
        "response"
    };
    Ok(Detail {
        what: what.to_owned(),
        differences: value_diff(&va, &vb),
        left: (!a.is_empty()).then(|| pretty(&va)),
        right: (!b.is_empty()).then(|| pretty(&vb)),
    })
}

/// An exchange only side `side` has: its request and response, shown on that side.
fn exchange_detail(
    p: &mut Payloads,
    side: usize,
    request: side::Loc,
    response: Option<side::Loc>,
) -> Result<Detail, DiffError> {
    let req = p.message(request)?;
    let resp = match response {
        Some(r) => p.message(r)?,
        None => Value::Null,
    };
    let v = json!({ "request": req, "response": resp });
    let text = Some(pretty(&v));
    Ok(Detail {
        what: "exchange".to_owned(),
        differences: Vec::new(),
        left: if side == 0 { text.clone() } else { None },
        right: if side == 1 { text } else { None },
    })
}

/// Two turns (or their usage figures) compared, either side possibly absent.
fn turns_detail(
    pl: &mut [Payloads; 2],
    a: Option<side::Loc>,
    b: Option<side::Loc>,
    usage: bool,
) -> Result<Detail, DiffError> {
    let mut value = |s: usize, loc: Option<side::Loc>| -> Result<Option<Value>, DiffError> {
        let Some(loc) = loc else { return Ok(None) };
        let t = pl[s].turn(loc)?;
        Ok(Some(if usage {
            payload::usage_value(&t)
        } else {
            payload::turn_value(&t, &pl[s].prep.normalizer)
        }))
    };
    let (va, vb) = (value(0, a)?, value(1, b)?);
    let differences = match (&va, &vb) {
        (Some(x), Some(y)) => value_diff(x, y),
        _ => Vec::new(),
    };
    Ok(Detail {
        what: if usage { "turn usage" } else { "turn" }.to_owned(),
        differences,
        left: va.as_ref().map(pretty),
        right: vb.as_ref().map(pretty),
    })
}

/// What the first line of a trace says.
struct Head {
    redaction: Option<Value>,
}

fn head(path: &Path) -> Result<Head, DiffError> {
    // A trace is read twice (index, then payloads at their offsets): a pipe or FIFO
    // (`<(cat a.jsonl)`) would be empty the second time and diff against nothing.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return Err(DiffError::Open {
            source: reel_trace::reader::OpenError::NotAFile {
                path: path.to_owned(),
            },
        });
    }
    let mut r = TraceReader::open(path).map_err(|source| DiffError::Open { source })?;
    let Some(first) = r.next_line() else {
        return Err(DiffError::Empty {
            path: path.to_owned(),
        });
    };
    let first = first.map_err(|source| DiffError::Open { source })?;
    let not_trace = |problem: String| DiffError::NotATrace {
        path: first.path.to_owned(),
        problem,
    };
    match parse_line(first.raw.bytes) {
        Ok(Line::Meta(m)) => Ok(Head {
            redaction: m.redaction.clone(),
        }),
        Ok(_) => Ok(Head { redaction: None }),
        Err(e) => Err(not_trace(e.to_string())),
    }
}

/// The redactor another side's messages get: `desc`'s rules, when they can be read.
fn cross_redactor(
    desc: Option<&Value>,
    whose: &str,
    warnings: &mut Vec<String>,
) -> Option<Redactor> {
    let desc = desc?;
    match Redactor::from_description(desc) {
        Ok(r) if r.is_active() => Some(r),
        Ok(_) => None,
        Err(e) => {
            warnings.push(format!(
                "{whose}'s meta.redaction cannot be applied to the other trace ({e}); values redacted in one trace only will show as drift"
            ));
            None
        }
    }
}

/// Diffs trace `a` against trace `b`. `progress` is called now and then from this thread.
pub fn diff(
    a: &Path,
    b: &Path,
    opts: &DiffOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<DiffReport, DiffError> {
    let (head_a, head_b) = (head(a)?, head(b)?);
    let mut warnings = Vec::new();
    let [prep_a, prep_b] = preps(&head_a, &head_b, opts, &mut warnings);
    let payloads = [
        Payloads::new(reel_trace::reader::trace_files(a), prep_a.clone()),
        Payloads::new(reel_trace::reader::trace_files(b), prep_b.clone()),
    ];
    let mut aligner = align::Aligner::new(
        payloads,
        compare::Strictness {
            usage: opts.strict_usage,
            notifications: opts.notifications,
        },
        opts.keep_passed,
    );
    let notes = side::NotificationRules {
        in_place: opts.strict_notifications,
        counts: opts.notifications,
    };
    let (ta, tb) = read_both([a, b], [prep_a, prep_b], notes, &mut aligner, progress)?;
    aligner.finish([&ta, &tb]);
    for (name, t) in [("A", &ta), ("B", &tb)] {
        warnings.extend(skipped_warning(name, t));
    }

    let f = aligner.findings;
    let mut drifts = f.drifts;
    drifts.sort_by_key(order_key);
    Ok(DiffReport {
        a: SideSummary::of(a, &ta),
        b: SideSummary::of(b, &tb),
        counts: Counts {
            paired: f.paired,
            identical: f.identical,
            added: f.added,
            removed: f.removed,
            turns_paired: f.turns_paired,
            output: f.output,
            structural: f.structural,
        },
        drifts,
        omitted_drifts: f.omitted,
        passed: f.passed.unwrap_or_default(),
        notes: f.notes.into_values().collect(),
        warnings,
        ignored: opts.ignore.iter().map(|p| p.as_str().to_owned()).collect(),
        payloads: RefCell::new(aligner.payloads),
    })
}

/// How each side's messages are prepared: normalised alike, and, when the two traces
/// were redacted with different rules, redacted with the other side's rules too.
fn preps(
    head_a: &Head,
    head_b: &Head,
    opts: &DiffOptions,
    warnings: &mut Vec<String>,
) -> [Prep; 2] {
    // Each trace was redacted with its own rules when written; when the rules differ,
    // each side's messages also get the other side's rules, so both are compared as if
    // redacted with both.
    let same_rules = match (&head_a.redaction, &head_b.redaction) {
        (None, None) => true,
        (Some(x), Some(y)) => json_eq(x, y),
        _ => false,
    };
    let (cross_a, cross_b) = if same_rules {
        (None, None)
    } else {
        (
            cross_redactor(head_b.redaction.as_ref(), "B", warnings),
            cross_redactor(head_a.redaction.as_ref(), "A", warnings),
        )
    };
    let base = Normalizer::new().with_ignore(opts.ignore.clone());
    [Prep::new(base.clone(), cross_a), Prep::new(base, cross_b)]
}

/// Reads both traces, each on a thread of its own, and aligns what they send in
/// lockstep on this one: each side's totals.
fn read_both(
    [a, b]: [&Path; 2],
    [prep_a, prep_b]: [Prep; 2],
    notes: side::NotificationRules,
    aligner: &mut align::Aligner,
    progress: &mut dyn FnMut(Progress),
) -> Result<(SideTotals, SideTotals), DiffError> {
    let total = reel_trace::reader::trace_files(a)
        .iter()
        .chain(reel_trace::reader::trace_files(b).iter())
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let (tx_a, rx_a) = mpsc::sync_channel::<Batch>(CHANNEL_BATCHES);
    let (tx_b, rx_b) = mpsc::sync_channel::<Batch>(CHANNEL_BATCHES);
    let (back_a, recycle_a) = mpsc::channel();
    let (back_b, recycle_b) = mpsc::channel();
    let (res_a, res_b, aligned) = std::thread::scope(|scope| {
        let ha = scope.spawn(move || side::read_side(a, prep_a, notes, tx_a, recycle_a));
        let hb = scope.spawn(move || side::read_side(b, prep_b, notes, tx_b, recycle_b));
        let aligned = lockstep(aligner, [rx_a, rx_b], [back_a, back_b], total, progress);
        let join = |h: std::thread::ScopedJoinHandle<'_, Result<SideTotals, DiffError>>| {
            h.join().unwrap_or(Err(DiffError::Aborted))
        };
        (join(ha), join(hb), aligned)
    });
    aligned?;
    Ok((res_a?, res_b?))
}

/// The warning for the lines side `name` skipped (not trace lines), naming the first.
fn skipped_warning(name: &str, t: &SideTotals) -> Option<String> {
    let (loc, problem) = t.first_skipped.as_ref()?;
    let file = t
        .files
        .get(usize::from(loc.file))
        .map_or_else(|| "?".to_owned(), |p| p.display().to_string());
    Some(format!(
        "{name}: {} line(s) skipped, not trace lines; the first: {file}:{}: {problem}",
        t.skipped, loc.line
    ))
}

impl SideSummary {
    fn of(path: &Path, t: &SideTotals) -> SideSummary {
        SideSummary {
            path: path.to_owned(),
            files: t.files.clone(),
            bytes: t.bytes,
            lines: t.lines,
            messages: t.messages,
            exchanges: t.exchanges,
            turns: t.turns,
            echoed_turns: t.echoed_turns,
            sessions: t.sessions,
            skipped_lines: t.skipped,
        }
    }
}

/// Drifts in A's order; what only B has goes by its place in B.
fn order_key(d: &Drift) -> (u8, PathBuf, u64) {
    match (&d.a, &d.b) {
        (Some(p), _) => (0, p.file.clone(), p.line),
        (None, Some(p)) => (0, p.file.clone(), p.line),
        (None, None) => (1, PathBuf::new(), 0),
    }
}

/// Receives the two sides' batches in turn (so neither runs far ahead) and aligns them.
fn lockstep(
    aligner: &mut align::Aligner,
    rx: [mpsc::Receiver<Batch>; 2],
    back: [mpsc::Sender<Vec<side::Event>>; 2],
    total: u64,
    progress: &mut dyn FnMut(Progress),
) -> Result<(), DiffError> {
    let mut open = [true, true];
    let mut read = [0u64; 2];
    while open[0] || open[1] {
        for s in 0..2 {
            if !open[s] {
                continue;
            }
            match rx[s].recv() {
                Ok(mut batch) => {
                    read[s] = batch.bytes;
                    for ev in batch.events.drain(..) {
                        // Returning drops the receivers, which stops both readers.
                        aligner.event(s, ev)?;
                    }
                    // The reader may have finished; then the vector is simply dropped.
                    let _ = back[s].send(batch.events);
                }
                Err(_) => open[s] = false,
            }
        }
        progress(Progress {
            done: read[0] + read[1],
            total,
        });
    }
    Ok(())
}
