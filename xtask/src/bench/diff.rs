//! The diff bench (issue "reel diff A B"): two generated traces of 1 000 000 messages
//! each that differ in exactly one result, `reel diff` over them next to `reel stats`
//! over the same two files, in the same run.
//!
//! A is the reader bench's generator (`synth`), sized to the message count; B is A with
//! one result's text changed in the middle of the file. One full read of both files
//! comes first (warm cache); then, round by round (median of 5), `reel stats --json A B`
//! and `reel diff --json A B`. The diff must find exactly that one drift (exit 1, one
//! `result-changed`), or the bench fails: a fast wrong answer is not a figure.
//!
//! Figures: diff wall time, stats wall time, their ratio (target ≤ 3), the same for CPU
//! time (user + system: diff reads the two traces on two threads, so on a busy machine
//! its wall time suffers more than single-threaded stats; CPU time says what it costs),
//! and diff peak RSS (reported; the bound is the point, not a number the issue sets).

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use super::{Ctx, Figure, Measured, Target, measure, median, synth};

const MESSAGES: u64 = 1_000_000;
const QUICK_MESSAGES: u64 = 20_000;
const ROUNDS: usize = 5;
/// Target from the issue: diff time ≤ 3 × stats time over the same files.
const RATIO: f64 = 3.0;
/// What the changed result says in B.
const MARK: &str = "CHANGED BY THE DIFF BENCH ";

/// Runs the diff bench.
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Figure>> {
    let messages = if ctx.quick { QUICK_MESSAGES } else { MESSAGES };
    let (a, facts) = sized_trace(&ctx.work, messages)?;
    let b = changed_copy(&ctx.work, &a)?;
    let count = facts.inbound + facts.outbound;
    println!(
        "traces: {} and {} ({count} messages each, {:.1} MB each, one result differs)",
        a.display(),
        b.display(),
        facts.bytes as f64 / 1e6
    );
    for f in [&a, &b] {
        let mut r = File::open(f)?;
        let mut buf = vec![0u8; 1 << 20];
        while r.read(&mut buf)? > 0 {}
    }

    let (mut diff_t, mut stats_t, mut rss) = (Vec::new(), Vec::new(), Vec::new());
    let (mut diff_cpu, mut stats_cpu) = (Vec::new(), Vec::new());
    for round in 1..=ROUNDS {
        let stats = timed(ctx, &["stats", "--json"], &a, &b)?;
        if stats.0.code != Some(0) {
            bail!("reel stats ended with {}", stats.0.status_text());
        }
        let diff = timed(ctx, &["diff", "--json"], &a, &b)?;
        check_one_drift(&diff)?;
        println!(
            "round {round}: diff {:.2} s ({:.2} s CPU, {} MiB peak), stats {:.2} s ({:.2} s CPU)",
            diff.0.wall.as_secs_f64(),
            diff.0.cpu.as_secs_f64(),
            diff.0.max_rss >> 20,
            stats.0.wall.as_secs_f64(),
            stats.0.cpu.as_secs_f64()
        );
        diff_cpu.push(diff.0.cpu.as_secs_f64());
        stats_cpu.push(stats.0.cpu.as_secs_f64());
        diff_t.push(diff.0.wall.as_secs_f64());
        stats_t.push(stats.0.wall.as_secs_f64());
        rss.push(diff.0.max_rss as f64 / (1 << 20) as f64);
    }
    let (d, s) = (
        median(&diff_t).unwrap_or(f64::NAN),
        median(&stats_t).unwrap_or(f64::NAN),
    );
    let (dc, sc) = (
        median(&diff_cpu).unwrap_or(f64::NAN),
        median(&stats_cpu).unwrap_or(f64::NAN),
    );
    let how = format!("2 × {count} messages, median of {ROUNDS} warm-cache rounds");
    Ok(vec![
        Figure::new("reel diff --json A B", d, "s").note(&how),
        Figure::new("reel stats --json A B (same files, same run)", s, "s").note(&how),
        Figure::new("diff time / stats time", d / s, "×").target(Target::AtMost(RATIO)),
        Figure::new("reel diff CPU time", dc, "s"),
        Figure::new("reel stats CPU time", sc, "s"),
        Figure::new("diff CPU / stats CPU", dc / sc, "×").note(
            "diff uses two reader threads; on an idle machine its wall time is below its CPU time",
        ),
        Figure::new(
            "reel diff peak RSS",
            rss.iter().copied().fold(0.0, f64::max),
            "MiB",
        )
        .note("ru_maxrss of the reel diff process, largest of the rounds"),
    ])
}

fn timed(ctx: &Ctx, args: &[&str], a: &Path, b: &Path) -> anyhow::Result<(Measured, Vec<u8>)> {
    let out = ctx.work.join("diff-bench-stdout.json");
    let file = File::create(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut cmd = std::process::Command::new(&ctx.reel);
    cmd.args(args).arg(a).arg(b).stdout(file);
    let m = measure(&mut cmd)?;
    Ok((m, std::fs::read(&out)?))
}

fn check_one_drift((m, stdout): &(Measured, Vec<u8>)) -> anyhow::Result<()> {
    if m.code != Some(1) {
        bail!(
            "reel diff ended with {} (expected exit 1: one output drift)",
            m.status_text()
        );
    }
    let v: serde_json::Value =
        serde_json::from_slice(stdout).context("reel diff --json did not print JSON")?;
    let drifts = v["drifts"].as_array().map_or(0, Vec::len);
    let kind = v["drifts"][0]["kind"].as_str().unwrap_or_default();
    let changed = v["drifts"][0]["differences"][0]["b"]
        .as_str()
        .is_some_and(|t| t.starts_with(MARK));
    if drifts != 1 || kind != "result-changed" || !changed {
        bail!("reel diff found {drifts} drift(s), first {kind:?}; expected the one changed result");
    }
    Ok(())
}

/// A generated trace with at least `messages` messages (the generator is sized in
/// bytes: a small sample gives the bytes per message).
fn sized_trace(work: &Path, messages: u64) -> anyhow::Result<(PathBuf, synth::Facts)> {
    let mut sample = Vec::new();
    let f = synth::generate(&mut sample, 4 << 20)?;
    let per_message = f.bytes as f64 / (f.inbound + f.outbound).max(1) as f64;
    // Round up to whole MiB (the cache key) with 2% to spare.
    let bytes = (messages as f64 * per_message * 1.02) as u64;
    let bytes = bytes.div_ceil(1 << 20) << 20;
    let (path, facts) = synth::ensure(work, bytes)?;
    if facts.inbound + facts.outbound < messages {
        bail!(
            "the generated trace has {} messages, fewer than {messages}",
            facts.inbound + facts.outbound
        );
    }
    Ok((path, facts))
}

/// `a` with one result's text changed in the middle of the file, regenerated when `a`
/// is newer.
fn changed_copy(work: &Path, a: &Path) -> anyhow::Result<PathBuf> {
    let stem = a.file_stem().and_then(|s| s.to_str()).unwrap_or("trace");
    let b = work.join(format!("{stem}-diff-b.jsonl"));
    let fresh = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if let (Some(ta), Some(tb)) = (fresh(a), fresh(&b))
        && tb >= ta
    {
        return Ok(b);
    }
    let lines = BufReader::new(File::open(a)?).lines().count();
    let mut out = BufWriter::with_capacity(1 << 20, File::create(&b)?);
    let mut changed = false;
    let needle = r#""result":{"content":[{"type":"text","text":""#;
    for (i, line) in BufReader::with_capacity(1 << 20, File::open(a)?)
        .lines()
        .enumerate()
    {
        let mut line = line?;
        if !changed
            && i >= lines / 2
            && let Some(at) = line.find(needle)
        {
            line.insert_str(at + needle.len(), MARK);
            changed = true;
        }
        out.write_all(line.as_bytes())?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    if !changed {
        bail!("no result to change in {}", a.display());
    }
    Ok(b)
}
