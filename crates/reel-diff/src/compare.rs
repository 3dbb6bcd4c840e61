//! Comparing what the aligner paired: two exchanges, two turns, two loose
//! notifications; and reporting what stayed unpaired.
//!
//! Every comparison starts from the fingerprints the sides computed while reading; only
//! when they differ are the payloads re-read and compared exactly, as normalised values
//! ([`json_eq`]). So the verdict is always the exact one, and the cost of re-reading is
//! paid only where the runs differ.

use std::collections::BTreeMap;

use reel_mcp::drift;
use reel_mcp::normalize::{Difference, diff, json_eq};
use reel_mcp::notifications::{CountVerdict, NotificationCheck, TIMING_NOTE};
use serde_json::{Value, json};

use crate::DiffError;
use crate::bodies::ValueRec;
use crate::drift::{Class, ContextLine, Drift, Kind, MAX_POINTERS, Note, Passed, Place, Refs};
use crate::payload::{Payloads, progress_value, turn_value, usage_value};
use crate::side::{Answer, ExRec, Loc, LooseRec, TurnRec};

/// Drifts kept in full; past this they are counted, not listed (a limit on memory when
/// two unrelated traces are compared).
pub const MAX_KEPT_DRIFTS: usize = 100_000;

/// Everything found so far.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    pub drifts: Vec<Drift>,
    pub omitted: u64,
    pub output: u64,
    pub structural: u64,
    pub paired: u64,
    pub identical: u64,
    pub added: u64,
    pub removed: u64,
    pub turns_paired: u64,
    pub notes: BTreeMap<(String, String), Note>,
    /// What paired without drift, when asked for.
    pub passed: Option<Vec<Passed>>,
}

impl Findings {
    /// Keeps `subject` as passed, at the places `at` gives, when passed ones are kept.
    fn pass(&mut self, subject: &str, at: impl FnOnce() -> (Place, Place)) {
        if let Some(passed) = &mut self.passed {
            let (a, b) = at();
            passed.push(Passed {
                subject: subject.to_owned(),
                a,
                b,
            });
        }
    }

    pub(crate) fn push(&mut self, d: Drift) {
        match d.class {
            Class::Output => self.output += 1,
            Class::Structural => self.structural += 1,
        }
        if self.drifts.len() < MAX_KEPT_DRIFTS {
            self.drifts.push(d);
        } else {
            self.omitted += 1;
        }
    }

    fn note(
        &mut self,
        kind: &str,
        subject: &str,
        summary: String,
        a: Option<Place>,
        b: Option<Place>,
    ) {
        self.notes
            .entry((kind.to_owned(), subject.to_owned()))
            .and_modify(|n| {
                n.count += 1;
                if n.a.is_none() {
                    n.a = a.clone();
                }
                if n.b.is_none() {
                    n.b = b.clone();
                }
            })
            .or_insert(Note {
                kind: kind.to_owned(),
                subject: subject.to_owned(),
                summary,
                count: 1,
                a,
                b,
            });
    }
}

/// Options that change what counts.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Strictness {
    pub usage: bool,
    pub notifications: NotificationCheck,
}

pub(crate) fn place(p: &Payloads, loc: Loc, response: Option<Loc>) -> Place {
    Place {
        file: p.path(loc).to_owned(),
        line: loc.line,
        response_line: response.map(|r| r.line),
    }
}

fn context(p: &Payloads, ctx: &crate::side::Ring) -> Vec<ContextLine> {
    ctx.iter()
        .flatten()
        .map(|(label, loc)| ContextLine {
            place: place(p, *loc, None),
            subject: label.to_string(),
        })
        .collect()
}

fn pointers(diffs: &[Difference]) -> Vec<String> {
    diffs
        .iter()
        .take(MAX_POINTERS)
        .map(|d| d.pointer.clone())
        .collect()
}

fn at_text(diffs: &[Difference]) -> String {
    match diffs {
        [] => String::new(),
        [one] => format!(" at {}", show_pointer(&one.pointer)),
        [first, rest @ ..] => format!(
            " at {} and {} more",
            show_pointer(&first.pointer),
            rest.len()
        ),
    }
}

fn show_pointer(p: &str) -> &str {
    if p.is_empty() { "(the whole value)" } else { p }
}

/// Compares two paired exchanges.
pub(crate) fn exchanges(
    a: &ExRec,
    b: &ExRec,
    pl: &mut [Payloads; 2],
    out: &mut Findings,
) -> Result<(), DiffError> {
    out.paired += 1;
    let before = out.output + out.structural;
    let drift =
        |class, kind, summary: String, diffs: &[Difference], refs: Refs, pl: &[Payloads; 2]| {
            Drift {
                class,
                kind,
                subject: a.label.to_string(),
                a: Some(place(&pl[0], a.request, a.response)),
                b: Some(place(&pl[1], b.request, b.response)),
                summary,
                pointers: pointers(diffs),
                changelog: None,
                context: context(&pl[0], &a.context),
                refs,
            }
        };
    let answers = Refs::Messages {
        a: a.response.into_iter().collect(),
        b: b.response.into_iter().collect(),
        progress: false,
    };
    // The answers are read again only when their bytes (or their classes) differ; a
    // tool result's isError is read from the values then (equal bytes, equal flags).
    let same_class = std::mem::discriminant(&a.answer) == std::mem::discriminant(&b.answer);
    let values = match (a.response, b.response) {
        (Some(x), Some(y)) if a.answer_fp != b.answer_fp || !same_class => {
            Some((pl[0].message(x)?, pl[1].message(y)?))
        }
        _ => None,
    };
    let refine = |answer: &Answer, v: Option<&Value>| match answer {
        Answer::Result { .. } => Answer::Result {
            is_error: &*a.method == "tools/call"
                && v.and_then(|v| v.pointer("/result/isError")) == Some(&Value::Bool(true)),
        },
        other => other.clone(),
    };
    let answer_a = refine(&a.answer, values.as_ref().map(|v| &v.0));
    let answer_b = refine(&b.answer, values.as_ref().map(|v| &v.1));
    if let Some((class, kind, summary)) = answer_change(&a.method, &answer_a, &answer_b) {
        let diffs = match &values {
            Some((va, vb)) => diff(va, vb),
            None => Vec::new(),
        };
        let d = drift(class, kind, summary, &diffs, answers, pl);
        out.push(d);
    } else if let Some((va, vb)) = &values
        && !json_eq(va, vb)
    {
        let diffs = diff(va, vb);
        let is_error = matches!(a.answer, Answer::Error { .. });
        let mut d = match drift::lists::changelog(&a.method, va, vb) {
            Some((log, structural)) => {
                let (class, kind) = if structural {
                    (Class::Structural, Kind::SchemaChanged)
                } else {
                    (Class::Output, Kind::ListChanged)
                };
                let summary = changelog_summary(&log);
                let mut d = drift(class, kind, summary, &diffs, answers, pl);
                d.changelog = Some(log);
                d
            }
            None if is_error => {
                let s = format!("the error changed{}", at_text(&diffs));
                drift(Class::Output, Kind::ErrorChanged, s, &diffs, answers, pl)
            }
            None => {
                let s = format!("the result changed{}", at_text(&diffs));
                drift(Class::Output, Kind::ResultChanged, s, &diffs, answers, pl)
            }
        };
        d.pointers = pointers(&diffs);
        out.push(d);
    }
    // The messages that came while each call was open: its progress (compared without
    // the token) and the other notifications.
    let lists = [
        (&a.progress, &b.progress, a.progress_fp, b.progress_fp, true),
        (&a.others, &b.others, a.others_fp, b.others_fp, false),
    ];
    for (la, lb, fa, fb, progress) in lists {
        if la.len() == lb.len() && fa.finish128() == fb.finish128() {
            continue;
        }
        let va = notification_list(&mut pl[0], la, progress)?;
        let vb = notification_list(&mut pl[1], lb, progress)?;
        if json_eq(&va, &vb) {
            continue;
        }
        let diffs = diff(&va, &vb);
        let what = if progress {
            "progress notifications"
        } else {
            "notifications while it was open"
        };
        let summary = format!(
            "{what} differ ({} in A, {} in B){}",
            la.len(),
            lb.len(),
            at_text(&diffs)
        );
        let refs = Refs::Messages {
            a: la.clone(),
            b: lb.clone(),
            progress,
        };
        let d = drift(
            Class::Output,
            Kind::NotificationsChanged,
            summary,
            &diffs,
            refs,
            pl,
        );
        out.push(d);
    }
    if a.cancelled != b.cancelled {
        let summary = if a.cancelled {
            "cancelled in A, not in B"
        } else {
            "cancelled in B, not in A"
        };
        let d = drift(
            Class::Output,
            Kind::CancellationChanged,
            summary.to_owned(),
            &[],
            Refs::None,
            pl,
        );
        out.push(d);
    }
    if out.output + out.structural == before {
        out.identical += 1;
        out.pass(&a.label, || {
            (
                place(&pl[0], a.request, a.response),
                place(&pl[1], b.request, b.response),
            )
        });
    }
    Ok(())
}

/// A change of the answer's class (result, error, none), if any, judged by the one rule
/// of `reel_mcp::drift`.
fn answer_change(method: &str, a: &Answer, b: &Answer) -> Option<(Class, Kind, String)> {
    fn shape(x: &Answer) -> drift::Answer<'_> {
        match x {
            Answer::Pending => drift::Answer::Pending,
            Answer::Result { is_error } => drift::Answer::Result {
                is_error: *is_error,
            },
            Answer::Error { code, message } => drift::Answer::Error {
                code: *code,
                message: message.as_deref(),
            },
        }
    }
    let call = drift::Call {
        method,
        tool: None,
        tool_listed: None,
    };
    let sides = drift::Sides { a: "A", b: "B" };
    drift::answer_change(call, shape(a), shape(b), sides)
        .map(|(kind, summary)| (kind.class(), kind, summary))
}

fn changelog_summary(log: &crate::drift::Changelog) -> String {
    use crate::drift::Change;
    let n = |c: Change| log.entries.iter().filter(|e| e.change == c).count();
    let (added, removed, changed) = (n(Change::Added), n(Change::Removed), n(Change::Changed));
    let mut parts = Vec::new();
    for (count, what) in [(added, "added"), (removed, "removed"), (changed, "changed")] {
        if count > 0 {
            parts.push(format!("{count} {what}"));
        }
    }
    if !log.other_pointers.is_empty() {
        parts.push(format!("{} other difference(s)", log.other_pointers.len()));
    }
    format!("{} changed: {}", log.list, parts.join(", "))
}

/// A list of notifications as one comparable value `{"notifications": [...]}` (progress
/// without its token).
pub(crate) fn notification_list(
    p: &mut Payloads,
    locs: &[Loc],
    progress: bool,
) -> Result<Value, DiffError> {
    let mut list = Vec::with_capacity(locs.len());
    for &loc in locs {
        let v = p.message(loc)?;
        list.push(if progress { progress_value(v) } else { v });
    }
    let key = if progress {
        "progress"
    } else {
        "notifications"
    };
    Ok(json!({ key: list }))
}

/// An exchange on one side only.
pub(crate) fn unpaired(side: usize, r: &ExRec, pl: &[Payloads; 2], out: &mut Findings) {
    let here = Some(place(&pl[side], r.request, r.response));
    let (a, b) = if side == 0 {
        (here, None)
    } else {
        (None, here)
    };
    if &*r.method == "ping" {
        let subject = format!("ping ({})", crate::side::DirKey::of(r.dir).text());
        let summary = "pings without a partner (keepalives run on timers)".to_owned();
        out.note("ping-unpaired", &subject, summary, a, b);
        return;
    }
    let (kind, summary) = if side == 0 {
        out.removed += 1;
        (Kind::Removed, "only in A: the call is gone in B")
    } else {
        out.added += 1;
        (Kind::Added, "only in B: a new call")
    };
    out.push(Drift {
        class: Class::Structural,
        kind,
        subject: r.label.to_string(),
        a,
        b,
        summary: summary.to_owned(),
        pointers: Vec::new(),
        changelog: None,
        context: context(&pl[side], &r.context),
        refs: Refs::Exchange {
            side,
            request: r.request,
            response: r.response,
        },
    });
}

/// Compares two paired turns.
pub(crate) fn turns(
    a: &TurnRec,
    b: &TurnRec,
    pl: &mut [Payloads; 2],
    strict: Strictness,
    out: &mut Findings,
) -> Result<(), DiffError> {
    out.turns_paired += 1;
    let before = out.output + out.structural;
    let result = turn_drifts(a, b, pl, strict, out);
    if result.is_ok() && out.output + out.structural == before {
        out.pass(&a.label, || {
            (place(&pl[0], a.loc, None), place(&pl[1], b.loc, None))
        });
    }
    result
}

fn turn_drifts(
    a: &TurnRec,
    b: &TurnRec,
    pl: &mut [Payloads; 2],
    strict: Strictness,
    out: &mut Findings,
) -> Result<(), DiffError> {
    let pa = Some(place(&pl[0], a.loc, None));
    let pb = Some(place(&pl[1], b.loc, None));
    let mk = |class, kind, summary, diffs: &[Difference], usage, pl: &[Payloads; 2]| Drift {
        class,
        kind,
        subject: a.label.to_string(),
        a: pa.clone(),
        b: pb.clone(),
        summary,
        pointers: pointers(diffs),
        changelog: None,
        context: context(&pl[0], &a.context),
        refs: Refs::Turns {
            a: Some(a.loc),
            b: Some(b.loc),
            usage,
        },
    };
    if a.shape_fp != b.shape_fp || a.blocks_fp != b.blocks_fp {
        let ta = pl[0].turn(a.loc)?;
        let tb = pl[1].turn(b.loc)?;
        let va = turn_value(&ta, &pl[0].prep.normalizer);
        let vb = turn_value(&tb, &pl[1].prep.normalizer);
        if !json_eq(&va, &vb) {
            let diffs = diff(&va, &vb);
            let d = if a.shape_fp != b.shape_fp {
                let s = format!("the turn used tools differently{}", at_text(&diffs));
                mk(
                    Class::Structural,
                    Kind::ToolUseChanged,
                    s,
                    &diffs,
                    false,
                    pl,
                )
            } else {
                let s = format!("the turn's content changed{}", at_text(&diffs));
                mk(Class::Output, Kind::TurnChanged, s, &diffs, false, pl)
            };
            out.push(d);
        }
    }
    if a.usage_fp != b.usage_fp {
        let ua = usage_value(&pl[0].turn(a.loc)?);
        let ub = usage_value(&pl[1].turn(b.loc)?);
        let all = diff(&ua, &ub);
        // A generation by another model, or one that stopped for another reason, is a
        // different kind of answer: structural drift. Usage and timing are notes.
        let (structural, diffs): (Vec<Difference>, Vec<Difference>) = all
            .into_iter()
            .partition(|d| d.pointer == "/model" || d.pointer == "/stop_reason");
        for d in &structural {
            let (kind, what) = if d.pointer == "/model" {
                (Kind::ModelChanged, "another model answered")
            } else {
                (
                    Kind::StopReasonChanged,
                    "the generation stopped for another reason",
                )
            };
            let s = format!("{what}: {d}");
            out.push(mk(
                Class::Structural,
                kind,
                s,
                std::slice::from_ref(d),
                true,
                pl,
            ));
        }
        if diffs.is_empty() {
            return Ok(());
        }
        if strict.usage {
            let s = format!("usage or timing changed{}", at_text(&diffs));
            let d = mk(Class::Output, Kind::UsageChanged, s, &diffs, true, pl);
            out.push(d);
        } else {
            let mut fields: Vec<&str> = diffs
                .iter()
                .filter_map(|d| d.pointer.split('/').nth(1))
                .collect();
            fields.dedup();
            for field in fields {
                let first = diffs
                    .iter()
                    .find(|d| d.pointer.split('/').nth(1) == Some(field))
                    .map(ToString::to_string)
                    .unwrap_or_default();
                let kind = field.replace('_', "-");
                out.note(
                    &kind,
                    "turns",
                    format!("first: {first}"),
                    pa.clone(),
                    pb.clone(),
                );
            }
        }
    }
    Ok(())
}

/// Compares two paired answers held in memory (`crate::bodies`): a different value
/// is output drift.
pub(crate) fn values(a: &ValueRec, b: &ValueRec, pl: &[Payloads; 2], out: &mut Findings) {
    let pa = place(&pl[0], a.loc, None);
    let pb = place(&pl[1], b.loc, None);
    let same = match (&a.value, &b.value) {
        (Some(x), Some(y)) => json_eq(x, y),
        _ => a.fp == b.fp,
    };
    if same {
        out.pass(&a.label, || (pa, pb));
        return;
    }
    let diffs = match (&a.value, &b.value) {
        (Some(x), Some(y)) => diff(x, y),
        _ => Vec::new(),
    };
    out.push(Drift {
        class: Class::Output,
        kind: Kind::BodyChanged,
        subject: a.label.to_string(),
        a: Some(pa),
        b: Some(pb),
        summary: format!("the answer changed{}", at_text(&diffs)),
        pointers: pointers(&diffs),
        changelog: None,
        context: context(&pl[0], &a.context),
        refs: Refs::Values {
            a: a.value.clone(),
            b: b.value.clone(),
        },
    });
}

/// An answer held in memory on one side only: an exchange added or removed.
pub(crate) fn unpaired_value(side: usize, v: &ValueRec, pl: &[Payloads; 2], out: &mut Findings) {
    let here = Some(place(&pl[side], v.loc, None));
    let (a, b, kind, summary) = if side == 0 {
        (here, None, Kind::Removed, "only in A: gone in B")
    } else {
        (None, here, Kind::Added, "only in B: new")
    };
    out.push(Drift {
        class: Class::Structural,
        kind,
        subject: v.label.to_string(),
        a,
        b,
        summary: summary.to_owned(),
        pointers: Vec::new(),
        changelog: None,
        context: context(&pl[side], &v.context),
        refs: Refs::Values {
            a: (side == 0).then(|| v.value.clone()).flatten(),
            b: (side == 1).then(|| v.value.clone()).flatten(),
        },
    });
}

/// A turn on one side only.
pub(crate) fn unpaired_turn(side: usize, t: &TurnRec, pl: &[Payloads; 2], out: &mut Findings) {
    let here = Some(place(&pl[side], t.loc, None));
    let (a, b) = if side == 0 {
        (here, None)
    } else {
        (None, here)
    };
    let (kind, summary) = if side == 0 {
        (Kind::TurnRemoved, "only in A: the turn is gone in B")
    } else {
        (Kind::TurnAdded, "only in B: a new turn")
    };
    out.push(Drift {
        class: Class::Structural,
        kind,
        subject: t.label.to_string(),
        a,
        b,
        summary: summary.to_owned(),
        pointers: Vec::new(),
        changelog: None,
        context: context(&pl[side], &t.context),
        refs: Refs::Turns {
            a: (side == 0).then_some(t.loc),
            b: (side == 1).then_some(t.loc),
            usage: false,
        },
    });
}

/// With --strict-notifications: two loose notifications at the same position.
pub(crate) fn loose(
    a: &LooseRec,
    b: &LooseRec,
    pl: &mut [Payloads; 2],
    out: &mut Findings,
) -> Result<(), DiffError> {
    if a.method == b.method && a.fp == b.fp {
        return Ok(());
    }
    let va = pl[0].message(a.loc)?;
    let vb = pl[1].message(b.loc)?;
    if json_eq(&va, &vb) {
        return Ok(());
    }
    let diffs = diff(&va, &vb);
    out.push(Drift {
        class: Class::Output,
        kind: Kind::NotificationsChanged,
        subject: format!("{} ({})", a.method, crate::side::DirKey::of(a.dir).text()),
        a: Some(place(&pl[0], a.loc, None)),
        b: Some(place(&pl[1], b.loc, None)),
        summary: format!(
            "the notification in this position differs{} (--strict-notifications)",
            at_text(&diffs)
        ),
        pointers: pointers(&diffs),
        changelog: None,
        context: Vec::new(),
        refs: Refs::Messages {
            a: vec![a.loc],
            b: vec![b.loc],
            progress: false,
        },
    });
    Ok(())
}

/// With --strict-notifications: a loose notification with no counterpart.
pub(crate) fn unpaired_loose(side: usize, r: &LooseRec, pl: &[Payloads; 2], out: &mut Findings) {
    let here = Some(place(&pl[side], r.loc, None));
    let (a, b) = if side == 0 {
        (here, None)
    } else {
        (None, here)
    };
    out.push(Drift {
        class: Class::Output,
        kind: Kind::NotificationCount,
        subject: format!("{} ({})", r.method, crate::side::DirKey::of(r.dir).text()),
        a,
        b,
        summary: format!(
            "only in {} (--strict-notifications)",
            if side == 0 { "A" } else { "B" }
        ),
        pointers: Vec::new(),
        changelog: None,
        context: Vec::new(),
        refs: Refs::Messages {
            a: if side == 0 { vec![r.loc] } else { Vec::new() },
            b: if side == 1 { vec![r.loc] } else { Vec::new() },
            progress: false,
        },
    });
}

/// Unsolicited messages compared as counts per (direction, method); which counts of
/// notifications are drift is `check`'s to say (the rule verify applies).
pub(crate) fn counts(
    a: &[BTreeMap<String, crate::side::Count>; 2],
    b: &[BTreeMap<String, crate::side::Count>; 2],
    check: NotificationCheck,
    pl: &[Payloads; 2],
    out: &mut Findings,
) {
    for (d, dir) in [crate::side::DirKey::In, crate::side::DirKey::Out]
        .into_iter()
        .enumerate()
    {
        let mut keys: Vec<&String> = a[d].keys().chain(b[d].keys()).collect();
        keys.sort();
        keys.dedup();
        for key in keys {
            let (ca, cb) = (a[d].get(key), b[d].get(key));
            let (na, nb) = (ca.map_or(0, |c| c.n), cb.map_or(0, |c| c.n));
            // A parenthesised key names no method (a response to no request, a batch…):
            // those always compare.
            let verdict = if key.starts_with('(') {
                NotificationCheck::Strict.judge(key, na, nb)
            } else {
                check.judge(key, na, nb)
            };
            let subject = format!("{key} ({})", dir.text());
            let (pa, pb) = (
                ca.map(|c| place(&pl[0], c.first, None)),
                cb.map(|c| place(&pl[1], c.first, None)),
            );
            match verdict {
                CountVerdict::Same => continue,
                CountVerdict::Timing => {
                    let summary = format!("{na} in A, {nb} in B; {TIMING_NOTE}");
                    out.note("notification-count", &subject, summary, pa, pb);
                    continue;
                }
                CountVerdict::Drift => {}
            }
            out.push(Drift {
                class: Class::Output,
                kind: Kind::NotificationCount,
                subject,
                a: pa,
                b: pb,
                summary: format!("{na} in A, {nb} in B (compared as counts)"),
                pointers: Vec::new(),
                changelog: None,
                context: Vec::new(),
                refs: Refs::None,
            });
        }
    }
}
