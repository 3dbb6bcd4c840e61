//! The three renderings of a [`DiffReport`]: text for people, one JSON document for
//! programs, GitHub annotation lines for CI.
//!
//! Text shows the first drift in full (its context, every differing JSON pointer, a
//! unified diff of the two payloads pretty-printed), then one line per drift, the notes
//! (differences that are not drift) and the verdict; `all` shows every drift in full.
//!
//! # JSON (`reel.diff/1`)
//!
//! One document, camelCase members:
//! - `schema`: `"reel.diff/1"`; `verdict`: `"identical" | "output" | "structural"`;
//!   `exitCode`: 0, 1 or 2;
//! - `a`, `b`: `{path, files, bytes, lines, messages, exchanges, turns, echoedTurns,
//!   sessions, skippedLines}`;
//! - `counts`: `{paired, identical, added, removed, turnsPaired, output, structural}`;
//! - `ignored`: the `--ignore` pointers;
//! - `drifts`: in A's order, each `{class, kind, subject, a, b, summary, pointers,
//!   changelog?, context, differences?}` where `a`/`b` are `{file, line, responseLine?}`
//!   or null when the drift is on one side only, `kind` is one of the [`Kind`] names,
//!   `changelog` (list methods) is `{list, entries: [{change, name, pointers?,
//!   structural}], otherPointers}`, `context` is `[{place, subject}]`, and
//!   `differences` is `[{pointer, a?, b?}]` (a side's value is absent when the member is
//!   absent there) for the first [`JSON_DETAILED`] drifts;
//! - `omittedDrifts`: drifts counted but not listed (past `MAX_KEPT_DRIFTS`);
//! - `notes`: `[{kind, subject, summary, count, a, b}]`; `warnings`: strings.
//!
//! Members may be added in a later `reel.diff/1` document; a change of meaning gets a
//! new schema name.
//!
//! # GitHub
//!
//! One `::error` (structural) or `::warning` (output) line per drift, on B's file and
//! line (A's when only A has it), then one plain summary line.
//!
//! [`Kind`]: crate::Kind

use std::io::{self, Write};

use reel_report::display::one_line;
use reel_report::junit::{Case, Failure, document};
use serde_json::{Map, Value, json};

use crate::drift::{Change, Class, Drift, Place};
use crate::linediff::{HunkLine, unified};
use crate::{Detail, DiffReport, Verdict};

/// Drifts whose `differences` the JSON document lists (each one re-reads payloads).
pub const JSON_DETAILED: usize = 1000;
/// Differing pointers listed per drift in text.
pub const TEXT_POINTERS: usize = 20;
/// Lines of unified diff shown per drift in text.
pub const TEXT_DIFF_LINES: usize = 200;
/// Characters shown of one unified-diff line: a 64 MB string is one pretty-printed line,
/// and printing it whole (twice) buries the report and floods the terminal.
pub const TEXT_DIFF_LINE_CHARS: usize = 500;
/// Unchanged lines around each change in the unified diff.
pub const DIFF_CONTEXT: usize = 3;

/// How to render text.
#[derive(Clone, Copy, Debug, Default)]
pub struct TextOptions {
    /// Every drift in full, not only the first.
    pub all: bool,
    /// ANSI colour.
    pub color: bool,
    /// The exit code the verdict gets (the CLI owns the table), shown in the summary.
    pub exit_code: u8,
}

struct Paint {
    on: bool,
}

impl Paint {
    fn p(&self, sgr: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{sgr}m{s}\x1b[0m")
        } else {
            s.to_owned()
        }
    }

    fn class(&self, c: Class) -> String {
        match c {
            Class::Structural => self.p("1;31", "structural drift"),
            Class::Output => self.p("1;33", "output drift"),
        }
    }
}

fn short(p: &Option<Place>) -> String {
    p.as_ref()
        .map_or_else(|| "—".to_owned(), |p| p.line.to_string())
}

fn at(p: &Place) -> String {
    match p.response_line {
        Some(r) => format!("{}:{} (answer :{r})", p.file.display(), p.line),
        None => format!("{}:{}", p.file.display(), p.line),
    }
}

/// Writes the text rendering.
pub fn text(r: &DiffReport, opts: TextOptions, w: &mut dyn Write) -> io::Result<()> {
    let paint = Paint { on: opts.color };
    sides_and_warnings(r, &paint, w)?;
    let shown = if opts.all {
        r.drifts.len()
    } else {
        r.drifts.len().min(1)
    };
    for (i, d) in r.drifts.iter().take(shown).enumerate() {
        writeln!(w)?;
        let title = if i == 0 && !opts.all {
            "first drift"
        } else {
            "drift"
        };
        full_drift(r, d, title, &paint, w)?;
    }
    if !r.drifts.is_empty() {
        writeln!(w)?;
        drift_list(r, &paint, w)?;
    }
    if !r.notes.is_empty() {
        writeln!(w)?;
        notes(r, &paint, w)?;
    }
    writeln!(w)?;
    writeln!(w, "{}", verdict_line(r, &paint, opts.exit_code))
}

/// The text rendering's head: each side's trace and size, then the warnings.
fn sides_and_warnings(r: &DiffReport, paint: &Paint, w: &mut dyn Write) -> io::Result<()> {
    for (name, s) in [("A", &r.a), ("B", &r.b)] {
        let turns = if s.turns > 0 {
            format!(", {} turns", s.turns)
        } else {
            String::new()
        };
        writeln!(
            w,
            "{}  {}  ({} messages, {} exchanges{turns})",
            paint.p("1", name),
            s.path.display(),
            s.messages,
            s.exchanges
        )?;
    }
    for warning in &r.warnings {
        writeln!(w, "{} {warning}", paint.p("33", "warning:"))?;
    }
    Ok(())
}

/// Every drift on one line each: class, kind, subject, where in A and B, summary.
fn drift_list(r: &DiffReport, paint: &Paint, w: &mut dyn Write) -> io::Result<()> {
    let total = r.drifts.len() as u64 + r.omitted_drifts;
    writeln!(w, "{}", paint.p("1", &format!("drifts ({total}):")))?;
    let width = r
        .drifts
        .iter()
        .map(|d| one_line(&d.subject).chars().count())
        .max()
        .unwrap_or(0)
        .min(48);
    for d in &r.drifts {
        let class = match d.class {
            Class::Structural => paint.p("31", "structural"),
            Class::Output => paint.p("33", "output    "),
        };
        writeln!(
            w,
            "  {class}  {:<22} {:<width$}  A:{:<6} B:{:<6} {}",
            d.kind.name(),
            one_line(&d.subject),
            short(&d.a),
            short(&d.b),
            one_line(&d.summary)
        )?;
    }
    if r.omitted_drifts > 0 {
        writeln!(
            w,
            "  … and {} more (only the first {} are kept)",
            r.omitted_drifts,
            crate::MAX_KEPT_DRIFTS
        )?;
    }
    Ok(())
}

/// The notes: differences that are not drift, each with how often it was seen.
fn notes(r: &DiffReport, paint: &Paint, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "{}", paint.p("1", "notes (not drift):"))?;
    for n in &r.notes {
        let times = if n.count > 1 {
            format!(" ×{}", n.count)
        } else {
            String::new()
        };
        writeln!(
            w,
            "  {:<14} {}{times}: {}",
            n.kind,
            one_line(&n.subject),
            one_line(&n.summary)
        )?;
    }
    Ok(())
}

fn verdict_line(r: &DiffReport, paint: &Paint, exit_code: u8) -> String {
    let c = &r.counts;
    let head = match r.verdict() {
        Verdict::Identical => paint.p("1;32", "identical"),
        Verdict::Output => paint.p("1;33", "output drift"),
        Verdict::Structural => paint.p("1;31", "structural drift"),
    };
    let mut parts = vec![format!(
        "{} exchanges paired, {} identical",
        c.paired, c.identical
    )];
    if c.added + c.removed > 0 {
        parts.push(format!("{} added, {} removed", c.added, c.removed));
    }
    if c.turns_paired > 0 {
        parts.push(format!("{} turns paired", c.turns_paired));
    }
    parts.push(format!(
        "{} output drift, {} structural",
        c.output, c.structural
    ));
    format!("{head} (exit {exit_code}): {}", parts.join("; "))
}

fn full_drift(
    r: &DiffReport,
    d: &Drift,
    title: &str,
    paint: &Paint,
    w: &mut dyn Write,
) -> io::Result<()> {
    writeln!(
        w,
        "{} — {}: {}  ({})",
        paint.p("1", title),
        paint.class(d.class),
        paint.p("1", &one_line(&d.subject)),
        d.kind.name()
    )?;
    if let Some(a) = &d.a {
        writeln!(w, "  A  {}", at(a))?;
    }
    if let Some(b) = &d.b {
        writeln!(w, "  B  {}", at(b))?;
    }
    writeln!(w, "  {}", one_line(&d.summary))?;
    if !d.context.is_empty() {
        let side = if d.a.is_some() { "A" } else { "B" };
        writeln!(w, "  before it in {side}:")?;
        for c in &d.context {
            writeln!(
                w,
                "    {:<8} {}",
                format!(":{}", c.place.line),
                one_line(&c.subject)
            )?;
        }
    }
    if let Some(log) = &d.changelog {
        writeln!(w, "  {} changelog:", log.list)?;
        for e in &log.entries {
            let (mark, colour) = match e.change {
                Change::Added => ("+", "32"),
                Change::Removed => ("-", "31"),
                Change::Changed => ("~", "33"),
            };
            let tag = if e.structural { " (structural)" } else { "" };
            let pointers = if e.pointers.is_empty() {
                String::new()
            } else {
                format!("  {}", e.pointers.join(", "))
            };
            writeln!(w, "    {} {}{pointers}{tag}", paint.p(colour, mark), e.name)?;
        }
        for p in &log.other_pointers {
            writeln!(w, "    ~ {p}")?;
        }
    }
    let detail = match r.detail(d) {
        Ok(Some(detail)) => detail,
        Ok(None) => return Ok(()),
        Err(e) => {
            writeln!(w, "  (cannot show the payloads: {e})")?;
            return Ok(());
        }
    };
    // A changelog already says what changed by name; positional pointers into a
    // list whose items moved would only repeat it noisily.
    show_detail(&detail, d.changelog.is_none(), paint, w)
}

fn show_detail(
    detail: &Detail,
    pointers: bool,
    paint: &Paint,
    w: &mut dyn Write,
) -> io::Result<()> {
    let listed = if pointers { TEXT_POINTERS } else { 0 };
    for diff in detail.differences.iter().take(listed) {
        writeln!(w, "  {diff}")?;
    }
    if pointers && detail.differences.len() > TEXT_POINTERS {
        writeln!(
            w,
            "  … and {} more differences",
            detail.differences.len() - TEXT_POINTERS
        )?;
    }
    let lines: Vec<String> = match (&detail.left, &detail.right) {
        (Some(l), Some(r)) => {
            let mut out = vec![
                paint.p("31", &format!("--- A {} (normalised)", detail.what)),
                paint.p("32", &format!("+++ B {} (normalised)", detail.what)),
            ];
            for h in unified(l, r, DIFF_CONTEXT) {
                out.push(match h {
                    HunkLine::Header(s) => paint.p("36", &s),
                    HunkLine::Same(s) => format!(" {}", clip(&s)),
                    HunkLine::Left(s) => paint.p("31", &format!("-{}", clip(&s))),
                    HunkLine::Right(s) => paint.p("32", &format!("+{}", clip(&s))),
                });
            }
            if out.len() == 2 {
                out.clear();
            }
            out
        }
        (Some(l), None) => one_side("A", '-', "31", &detail.what, l, paint),
        (None, Some(r)) => one_side("B", '+', "32", &detail.what, r, paint),
        (None, None) => Vec::new(),
    };
    for line in lines.iter().take(TEXT_DIFF_LINES) {
        writeln!(w, "  {line}")?;
    }
    if lines.len() > TEXT_DIFF_LINES {
        writeln!(w, "  … {} more lines", lines.len() - TEXT_DIFF_LINES)?;
    }
    Ok(())
}

fn one_side(
    side: &str,
    mark: char,
    sgr: &str,
    what: &str,
    text: &str,
    paint: &Paint,
) -> Vec<String> {
    let mut out = vec![paint.p(
        sgr,
        &format!("{mark}{mark}{mark} {side} {what} (normalised)"),
    )];
    out.extend(
        text.lines()
            .map(|l| paint.p(sgr, &format!("{mark}{}", clip(l)))),
    );
    out
}

/// A diff line cut at [`TEXT_DIFF_LINE_CHARS`], saying how much was left out (the JSON
/// rendering keeps every value whole).
fn clip(line: &str) -> std::borrow::Cow<'_, str> {
    match line.char_indices().nth(TEXT_DIFF_LINE_CHARS) {
        None => line.into(),
        Some((at, _)) => format!(
            "{}… ({} more bytes; --format json has them all)",
            &line[..at],
            line.len() - at
        )
        .into(),
    }
}

/// The JSON document (`reel.diff/1`, see the module docs).
pub fn json(r: &DiffReport, exit_code: u8) -> Value {
    let drifts: Vec<Value> = r
        .drifts
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let mut v = serde_json::to_value(d).unwrap_or(Value::Null);
            if i < JSON_DETAILED
                && let Ok(Some(detail)) = r.detail(d)
                && let Some(o) = v.as_object_mut()
            {
                let diffs: Vec<Value> = detail
                    .differences
                    .iter()
                    .map(|x| {
                        let mut m = Map::new();
                        m.insert("pointer".into(), Value::String(x.pointer.clone()));
                        if let Some(a) = &x.left {
                            m.insert("a".into(), a.clone());
                        }
                        if let Some(b) = &x.right {
                            m.insert("b".into(), b.clone());
                        }
                        Value::Object(m)
                    })
                    .collect();
                o.insert("differences".into(), Value::Array(diffs));
            }
            v
        })
        .collect();
    json!({
        "schema": "reel.diff/1",
        "verdict": r.verdict(),
        "exitCode": exit_code,
        "a": r.a,
        "b": r.b,
        "counts": r.counts,
        "ignored": r.ignored,
        "drifts": drifts,
        "omittedDrifts": r.omitted_drifts,
        "notes": r.notes,
        "warnings": r.warnings,
    })
}

/// JUnit XML: a test case per exchange and turn compared (the report must have been
/// made with [`crate::DiffOptions::keep_passed`] for the ones that did not drift), named
/// by its line in A (in B for what only B has) and its subject; a drift is its case's
/// failure, the drifts of one exchange (its answer, its progress) in one case.
pub fn junit(r: &DiffReport) -> String {
    let stem =
        r.a.path
            .file_stem()
            .map_or_else(|| "trace".into(), |s| s.to_string_lossy().into_owned());
    let classname = format!("reel.diff.{stem}");
    // (order, case): cases in A's order, what only B has after.
    let mut cases: Vec<((u8, u64), Case)> = r
        .passed
        .iter()
        .map(|p| {
            (
                (0, p.a.line),
                Case {
                    name: case_name(&p.subject, Some(&p.a), Some(&p.b)),
                    classname: classname.clone(),
                    failure: None,
                },
            )
        })
        .collect();
    for (a, b, ds) in by_exchange(&r.drifts) {
        cases.push(failed_case(a, b, &ds, &classname));
    }
    cases.sort_by_key(|(order, _)| *order);
    let mut cases: Vec<Case> = cases.into_iter().map(|(_, c)| c).collect();
    if r.omitted_drifts > 0 {
        cases.push(Case {
            name: format!("{} more drifts (not kept)", r.omitted_drifts),
            classname: classname.clone(),
            failure: Some(Failure {
                kind: "drift".into(),
                message: format!(
                    "{} more drifts were counted but not kept; run reel diff for them",
                    r.omitted_drifts
                ),
                text: String::new(),
            }),
        });
    }
    document(
        &format!("reel diff {} {}", r.a.path.display(), r.b.path.display()),
        &cases,
    )
}

/// A test case's name: the subject, at its line in A (else in B).
fn case_name(subject: &str, a: Option<&Place>, b: Option<&Place>) -> String {
    match (a, b) {
        (Some(p), _) => format!("line {}: {subject}", p.line),
        (None, Some(p)) => format!("line {} of B: {subject}", p.line),
        (None, None) => subject.to_owned(),
    }
}

/// An exchange's places in A and B, and its drifts.
type ExchangeDrifts<'r> = (Option<&'r Place>, Option<&'r Place>, Vec<&'r Drift>);

/// The drifts grouped by the exchange they were found in (its places in A and B), in
/// the order each exchange first drifted; a drift placed nowhere is a group of its own.
fn by_exchange(drifts: &[Drift]) -> Vec<ExchangeDrifts<'_>> {
    let mut groups: Vec<ExchangeDrifts<'_>> = Vec::new();
    for d in drifts {
        match groups.iter_mut().find(|(a, b, _)| {
            *a == d.a.as_ref() && *b == d.b.as_ref() && (a.is_some() || b.is_some())
        }) {
            Some((_, _, ds)) => ds.push(d),
            None => groups.push((d.a.as_ref(), d.b.as_ref(), vec![d])),
        }
    }
    groups
}

/// The failed case of an exchange at `a` and `b` with drifts `ds` (named for the first),
/// with where it sorts: A's order, what only B has after.
fn failed_case(
    a: Option<&Place>,
    b: Option<&Place>,
    ds: &[&Drift],
    classname: &str,
) -> ((u8, u64), Case) {
    let first = ds[0];
    let text: Vec<String> = ds
        .iter()
        .map(|d| {
            let mut t = format!(
                "{} drift ({}): {}",
                d.class.name(),
                d.kind.name(),
                d.summary
            );
            for p in &d.pointers {
                t.push_str(&format!("\n  {p}"));
            }
            t
        })
        .collect();
    let order = match (a, b) {
        (Some(p), _) => (0, p.line),
        (None, Some(p)) => (1, p.line),
        (None, None) => (2, 0),
    };
    let case = Case {
        name: case_name(&first.subject, a, b),
        classname: classname.to_owned(),
        failure: Some(Failure {
            kind: format!("{} drift ({})", first.class.name(), first.kind.name()),
            message: first.summary.clone(),
            text: text.join("\n"),
        }),
    };
    (order, case)
}

/// Writes GitHub annotation lines, then the verdict with `exit_code`.
pub fn github(r: &DiffReport, exit_code: u8, w: &mut dyn Write) -> io::Result<()> {
    use reel_mcp::drift::github::level;
    use reel_report::github::annotation;
    for d in &r.drifts {
        let place = d.b.as_ref().or(d.a.as_ref());
        let file = place.map(|p| (p.file.display().to_string(), p.line));
        let title = format!("reel diff: {} drift ({})", d.class.name(), d.kind.name());
        let line = annotation(
            level(d.class),
            file.as_ref().map(|(f, l)| (f.as_str(), *l)),
            &title,
            &format!("{}: {}", d.subject, d.summary),
        );
        writeln!(w, "{line}")?;
    }
    writeln!(
        w,
        "reel diff: {}",
        verdict_line(r, &Paint { on: false }, exit_code)
    )
}
