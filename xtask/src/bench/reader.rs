//! The reader bench (issue "Foundation"): how fast and in how little memory reel reads a
//! large trace, next to the floor any JSONL reader has to pay.
//!
//! On a generated 1 GiB message-heavy trace (see `synth`), in the same run, interleaved
//! round by round so that machine noise hits every subject alike, median of 5 rounds
//! (3 with `--quick`):
//! - `reel stats --json FILE`: wall time → MB/s (target ≥ 400), and its peak RSS from the
//!   kernel (`wait4`; target ≤ 64 MiB + 2 × the longest line);
//! - a serde_json validation pass in this (optimised) process: 1 MiB reads, lines split
//!   with memchr, each deserialised into `IgnoredAny` → MB/s, and reel stats as a
//!   fraction of it (target ≥ 0.5);
//! - both again per CPU second (user + sys), which a busy machine distorts far less than
//!   wall time;
//! - `reel check FILE` → MB/s (reported, no target).
//!
//! One full read of the file comes first, so every figure is warm-cache: what is measured
//! is parsing, not the disk. MB is 10^6 bytes; MiB is 2^20.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};

use super::{Ctx, Figure, Measured, Target, measure, median, self_cpu, self_max_rss, synth};

const FULL_SIZE: u64 = 1 << 30;
const QUICK_SIZE: u64 = 16 << 20;
const ROUNDS: usize = 5;
const QUICK_ROUNDS: usize = 3;
const CHUNK: usize = 1 << 20;

/// Targets from the issue.
const STATS_MBPS: f64 = 400.0;
const STATS_RATIO: f64 = 0.5;
const RSS_BASE_MIB: f64 = 64.0;

/// Runs the reader bench.
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Figure>> {
    let size = if ctx.quick { QUICK_SIZE } else { FULL_SIZE };
    let (path, facts) = synth::ensure(&ctx.work, size)?;
    let mb = facts.bytes as f64 / 1e6;
    println!(
        "trace: {} lines, {:.1} MB, average line {} bytes, longest {} bytes",
        facts.lines,
        mb,
        facts.bytes / facts.lines.max(1),
        facts.longest
    );

    let t = Instant::now();
    warm_up(&path)?;
    println!(
        "warm-up read: {:.2} s (figures below are warm-cache)",
        t.elapsed().as_secs_f64()
    );

    let rounds = if ctx.quick { QUICK_ROUNDS } else { ROUNDS };
    let measured = measure_rounds(ctx, &path, facts.lines, mb, rounds)?;
    let rounds_note =
        format!("median of {rounds} interleaved rounds, warm cache, {mb:.0} MB trace");
    let mut figs = speed_figures(&measured, mb, &rounds_note);
    figs.extend(cpu_figures(&measured, mb));
    figs.extend(memory_figures(&measured, rounds));
    figs.push(check_figure(ctx, &measured, mb, &rounds_note));
    Ok(figs)
}

/// What the interleaved rounds measured.
struct Rounds {
    stats: Subject,
    check: Subject,
    validation: Vec<f64>,
    validation_cpu: Vec<f64>,
    longest: usize,
    /// What this process's peak RSS was when it spawned reel stats (see `measure`).
    inherited_rss: u64,
}

/// Each round: `reel stats --json`, the in-process validation pass, `reel check`.
fn measure_rounds(
    ctx: &Ctx,
    path: &Path,
    lines_written: u64,
    mb: f64,
    rounds: usize,
) -> anyhow::Result<Rounds> {
    let mut r = Rounds {
        stats: Subject::new("reel stats --json"),
        check: Subject::new("reel check"),
        validation: Vec::new(),
        validation_cpu: Vec::new(),
        longest: 0,
        inherited_rss: 0,
    };
    for round in 1..=rounds {
        r.inherited_rss = r.inherited_rss.max(self_max_rss());
        r.stats.run(ctx, &["stats", "--json"], path, &[0])?;
        let cpu0 = self_cpu();
        let (secs, lines, long) = validate(path)?;
        r.validation_cpu.push((self_cpu() - cpu0).as_secs_f64());
        if lines != lines_written {
            bail!("validation pass saw {lines} lines, the generator wrote {lines_written}");
        }
        r.longest = long;
        r.validation.push(secs);
        // Exit 1 is `check` finding violations: still a full read, timed, and noted.
        r.check.run(ctx, &["check"], path, &[0, 1])?;
        println!(
            "round {round}: stats {}, validation {:.0} MB/s, check {}",
            r.stats.last_text(mb),
            mb / secs,
            r.check.last_text(mb)
        );
    }
    Ok(r)
}

/// reel stats and the validation pass in MB/s, and their ratio.
fn speed_figures(r: &Rounds, mb: f64, rounds_note: &str) -> Vec<Figure> {
    let valid_mbps = median(&r.validation).map(|s| mb / s);
    let stats_mbps = r.stats.median_secs().map(|s| mb / s);
    vec![
        match stats_mbps {
            Some(v) => Figure::new("reel stats --json", v, "MB/s")
                .note(rounds_note)
                .note(r.stats.cpu_text()),
            None => Figure::missing("reel stats --json", "MB/s", r.stats.failure_text()),
        }
        .target(Target::AtLeast(STATS_MBPS)),
        match valid_mbps {
            Some(v) => Figure::new("serde_json validation (IgnoredAny)", v, "MB/s")
                .note(if cfg!(debug_assertions) {
                    "in-process (a debug build: --quick): 1 MiB reads, memchr line split, one IgnoredAny per line"
                } else {
                    "in-process, optimised: 1 MiB reads, memchr line split, one IgnoredAny per line"
                }),
            None => Figure::missing("serde_json validation (IgnoredAny)", "MB/s", "no round ran"),
        },
        match (stats_mbps, valid_mbps) {
            (Some(s), Some(v)) => Figure::new("reel stats / validation", s / v, "ratio"),
            _ => Figure::missing(
                "reel stats / validation",
                "ratio",
                "reel stats was not measured",
            ),
        }
        .target(Target::AtLeast(STATS_RATIO)),
    ]
}

/// Per CPU second: what the same work costs when other processes take turns on the
/// cores (a shared or busy machine stretches wall time, not CPU time).
fn cpu_figures(r: &Rounds, mb: f64) -> Vec<Figure> {
    let stats_cpu_mbps = r.stats.median_cpu().map(|c| mb / c);
    let valid_cpu_mbps = median(&r.validation_cpu).map(|c| mb / c);
    vec![
        match stats_cpu_mbps {
            Some(v) => Figure::new("reel stats --json per CPU second", v, "MB/s")
                .note("bytes / (user + sys) of reel stats, median"),
            None => Figure::missing(
                "reel stats --json per CPU second",
                "MB/s",
                r.stats.failure_text(),
            ),
        },
        match valid_cpu_mbps {
            Some(v) => Figure::new("validation per CPU second", v, "MB/s"),
            None => Figure::missing("validation per CPU second", "MB/s", "no round ran"),
        },
        match (stats_cpu_mbps, valid_cpu_mbps) {
            (Some(s), Some(v)) => Figure::new("reel stats / validation, CPU time", s / v, "ratio"),
            _ => Figure::missing(
                "reel stats / validation, CPU time",
                "ratio",
                "reel stats was not measured",
            ),
        },
    ]
}

/// reel stats' peak RSS against its target, which the longest line sets.
fn memory_figures(r: &Rounds, rounds: usize) -> Vec<Figure> {
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    let rss_target = RSS_BASE_MIB + 2.0 * mib(r.longest as u64);
    vec![
        match r.stats.peak_rss() {
            Some(rss) => Figure::new("reel stats peak RSS", mib(rss), "MiB").note(format!(
                "ru_maxrss via wait4, highest of {rounds} rounds; an upper bound: Linux also \
                 counts the spawning process's peak, here at most {:.1} MiB",
                mib(r.inherited_rss)
            )),
            None => Figure::missing("reel stats peak RSS", "MiB", r.stats.failure_text()),
        }
        .target(Target::AtMost(rss_target)),
        Figure::new("longest line", r.longest as f64, "bytes").note(format!(
            "RSS target = {RSS_BASE_MIB} MiB + 2 x longest line = {rss_target:.2} MiB"
        )),
    ]
}

/// reel check in MB/s, and its exit code when it found violations.
fn check_figure(ctx: &Ctx, r: &Rounds, mb: f64, rounds_note: &str) -> Figure {
    match r.check.median_secs() {
        Some(s) => {
            let f = Figure::new("reel check", mb / s, "MB/s").note(rounds_note);
            match r.check.nonzero_exit {
                Some(code) => f.note(format!(
                    "check exited {code} on the generated trace (see {})",
                    ctx.work.join("check.out").display()
                )),
                None => f,
            }
        }
        None => Figure::missing("reel check", "MB/s", r.check.failure_text()),
    }
}

/// One reel command measured over the rounds.
struct Subject {
    name: &'static str,
    secs: Vec<f64>,
    rss: Vec<u64>,
    cpu: Vec<f64>,
    failed: Option<String>,
    nonzero_exit: Option<i32>,
}

impl Subject {
    fn new(name: &'static str) -> Self {
        Subject {
            name,
            secs: Vec::new(),
            rss: Vec::new(),
            cpu: Vec::new(),
            failed: None,
            nonzero_exit: None,
        }
    }

    /// Runs `reel ARGS FILE` once; a failure is remembered and later rounds skip it.
    fn run(
        &mut self,
        ctx: &Ctx,
        args: &[&str],
        path: &Path,
        ok_codes: &[i32],
    ) -> anyhow::Result<()> {
        if self.failed.is_some() {
            return Ok(());
        }
        let out_name = format!("{}.out", args[0]);
        let err_name = format!("{}.err", args[0]);
        let stdout = File::create(ctx.work.join(&out_name))?;
        let stderr = File::create(ctx.work.join(&err_name))?;
        let mut cmd = Command::new(&ctx.reel);
        cmd.args(args)
            .arg(path)
            .stdout(Stdio::from(stdout))
            .stderr(Stdio::from(stderr))
            .env("NO_COLOR", "1");
        let m: Measured = measure(&mut cmd)?;
        match m.code {
            Some(c) if ok_codes.contains(&c) => {
                if c != 0 {
                    self.nonzero_exit = Some(c);
                }
                self.secs.push(m.wall.as_secs_f64());
                self.rss.push(m.max_rss);
                self.cpu.push(m.cpu.as_secs_f64());
            }
            _ => {
                let err = std::fs::read_to_string(ctx.work.join(&err_name)).unwrap_or_default();
                let first = err.lines().next().unwrap_or("").trim();
                self.failed = Some(format!(
                    "{} failed ({}): {first}",
                    self.name,
                    m.status_text()
                ));
            }
        }
        Ok(())
    }

    fn last_text(&self, mb: f64) -> String {
        match (&self.failed, self.secs.last()) {
            (Some(_), _) => "FAILED".into(),
            (None, Some(s)) => format!("{:.0} MB/s", mb / s),
            (None, None) => "-".into(),
        }
    }

    fn median_secs(&self) -> Option<f64> {
        if self.failed.is_some() {
            return None;
        }
        median(&self.secs)
    }

    fn median_cpu(&self) -> Option<f64> {
        if self.failed.is_some() {
            return None;
        }
        median(&self.cpu)
    }

    fn peak_rss(&self) -> Option<u64> {
        if self.failed.is_some() {
            return None;
        }
        self.rss.iter().copied().max()
    }

    /// CPU time against wall time: shows whether the command used more than one core.
    fn cpu_text(&self) -> String {
        match (median(&self.cpu), median(&self.secs)) {
            (Some(c), Some(w)) => format!("CPU (user+sys) {c:.2} s for {w:.2} s wall"),
            _ => String::new(),
        }
    }

    fn failure_text(&self) -> String {
        self.failed.clone().unwrap_or_else(|| "no round ran".into())
    }
}

/// Reads the whole file once so that every measured run finds it in the page cache.
fn warm_up(path: &Path) -> anyhow::Result<()> {
    let mut f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut buf = vec![0u8; CHUNK];
    while f.read(&mut buf)? > 0 {}
    Ok(())
}

/// The validation pass: what parsing every line as JSON costs at least. Returns
/// (seconds, lines, longest line).
fn validate(path: &Path) -> anyhow::Result<(f64, u64, usize)> {
    let start = Instant::now();
    let mut f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut buf = vec![0u8; CHUNK];
    // The start of a line that continues into the next chunk.
    let mut carry: Vec<u8> = Vec::new();
    let mut lines = 0u64;
    let mut longest = 0usize;
    let mut check = |line: &[u8], lines: &mut u64| -> anyhow::Result<()> {
        *lines += 1;
        longest = longest.max(line.len());
        serde_json::from_slice::<serde::de::IgnoredAny>(line)
            .with_context(|| format!("{}:{lines}: not JSON", path.display()))?;
        Ok(())
    };
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        let chunk = &buf[..n];
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', chunk) {
            if carry.is_empty() {
                check(&chunk[start..nl], &mut lines)?;
            } else {
                carry.extend_from_slice(&chunk[start..nl]);
                check(&carry, &mut lines)?;
                carry.clear();
            }
            start = nl + 1;
        }
        carry.extend_from_slice(&chunk[start..]);
    }
    if !carry.is_empty() {
        check(&carry, &mut lines)?;
    }
    Ok((start.elapsed().as_secs_f64(), lines, longest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_counts_lines_across_chunks_and_rejects_bad_ones() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let mut text = String::new();
        let long = "x".repeat(CHUNK + 10);
        text.push_str(&format!("{{\"a\":\"{long}\"}}\n{{\"b\":1}}\n[1,2]"));
        std::fs::write(&p, &text).unwrap();
        let (_, lines, longest) = validate(&p).unwrap();
        assert_eq!(lines, 3);
        assert_eq!(longest, long.len() + 8);
        std::fs::write(&p, "{\"a\":1}\n{\"a\":\n").unwrap();
        let e = validate(&p).unwrap_err();
        assert!(format!("{e:#}").contains(":2: not JSON"), "{e:#}");
    }
}
