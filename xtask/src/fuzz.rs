//! `cargo xtask fuzz [--seconds N] [--merge] [TARGET…]`: runs reel's libFuzzer targets
//! (`fuzz/`, cargo-fuzz) one after another, and says how many inputs each tried and
//! what it found.
//!
//! Fuzzing needs a nightly toolchain and cargo-fuzz; nothing else in the project does
//! (the stable suite replays every target's corpus through `crates/reel-fuzz`). This
//! command checks for nightly, installs cargo-fuzz (`cargo install cargo-fuzz
//! --locked`) when it is missing, builds every target once, then runs each for N
//! seconds on one core (`-jobs` would compete with everything else on a small
//! machine). Each run reads the checked-in corpus and regressions and grows a working
//! corpus in `fuzz/work/<target>/` (git-ignored) that the next run starts from;
//! `--merge` then adds to `fuzz/corpus/<target>/` the inputs of the working corpus that
//! reach code the checked-in one does not (libFuzzer's `-merge=1`).
//!
//! Targets are built without a sanitizer (the code under test is safe Rust; ASan would
//! halve the executions) but with debug assertions and overflow checks, cargo-fuzz's
//! default. A crash leaves its input in `fuzz/artifacts/<target>/`, named in the
//! summary; the full libFuzzer output of each run is in `fuzz/logs/<target>.log`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

use crate::process::{self, display, output_of, short};

/// Seconds per target when `--seconds` is not given.
const DEFAULT_SECONDS: u64 = 60;

/// The toolchain cargo-fuzz builds with (`-Zsanitizer` and libFuzzer's coverage
/// instrumentation are nightly-only).
const TOOLCHAIN: &str = "nightly";

/// `cargo xtask fuzz [--seconds N] [--merge] [TARGET…]`.
pub fn cmd(args: &[String]) -> anyhow::Result<()> {
    let mut seconds = DEFAULT_SECONDS;
    let mut merge = false;
    let mut wanted = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seconds" => {
                let v = it
                    .next()
                    .context("--seconds needs a number, e.g. --seconds 60")?;
                seconds = parse_seconds(v)?;
            }
            s if s.starts_with("--seconds=") => seconds = parse_seconds(&s[10..])?,
            "--merge" => merge = true,
            s if s.starts_with('-') => {
                bail!("unknown flag `{s}` for `cargo xtask fuzz` (see `cargo xtask --help`)")
            }
            t => wanted.push(t.to_owned()),
        }
    }

    let root = process::workspace_root();
    let fuzz = root.join("fuzz");
    let all = targets(&fuzz)?;
    for t in &wanted {
        if !all.contains(t) {
            bail!("no fuzz target `{t}`; the targets are: {}", all.join(", "));
        }
    }
    let chosen = if wanted.is_empty() { all } else { wanted };

    ensure_nightly()?;
    ensure_cargo_fuzz()?;
    let mut build = cargo_fuzz(&fuzz, "build");
    process::run(&mut build).context("building the fuzz targets")?;

    let mut results = Vec::new();
    for t in &chosen {
        println!("\n==> xtask fuzz: {t} ({seconds} s)");
        let r = run_target(&fuzz, t, seconds)?;
        println!("    {}", r.line(&root));
        results.push(r);
        if merge {
            merge_into_corpus(&fuzz, t)?;
        }
    }

    println!("\nxtask fuzz summary ({seconds} s per target, one job):");
    let mut total = 0;
    for r in &results {
        println!("  {:<14} {}", r.target, r.line(&root));
        total += r.runs;
    }
    println!("xtask: {total} executions across {} targets", results.len());
    let crashed: Vec<&str> = results
        .iter()
        .filter(|r| r.crash.is_some() || !r.clean)
        .map(|r| r.target.as_str())
        .collect();
    if !crashed.is_empty() {
        bail!(
            "{} target(s) failed: {} (reproduce: cargo +nightly fuzz run TARGET FILE, \
             from fuzz/)",
            crashed.len(),
            crashed.join(", ")
        );
    }
    Ok(())
}

fn parse_seconds(v: &str) -> anyhow::Result<u64> {
    v.parse::<u64>()
        .ok()
        .filter(|&n| n > 0)
        .with_context(|| format!("--seconds takes a positive whole number, not `{v}`"))
}

/// The targets: the entry points in `fuzz/fuzz_targets/` (the stable suite checks that
/// they match `reel_fuzz::TARGETS` and `fuzz/Cargo.toml`).
fn targets(fuzz: &Path) -> anyhow::Result<Vec<String>> {
    let dir = fuzz.join("fuzz_targets");
    let entries =
        std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))?;
    let mut out = Vec::new();
    for e in entries {
        let path = e?.path();
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .filter(|_| path.extension().is_some_and(|x| x == "rs"));
        if let Some(stem) = stem {
            out.push(stem.to_owned());
        }
    }
    out.sort();
    Ok(out)
}

fn ensure_nightly() -> anyhow::Result<()> {
    let version = output_of(Command::new("rustup").args(["run", TOOLCHAIN, "rustc", "--version"]));
    match version {
        Some(v) => {
            println!("xtask fuzz: {v}");
            Ok(())
        }
        None => bail!(
            "fuzzing needs the {TOOLCHAIN} toolchain (libFuzzer's instrumentation is \
             nightly-only): rustup toolchain install {TOOLCHAIN}"
        ),
    }
}

fn ensure_cargo_fuzz() -> anyhow::Result<()> {
    let mut probe = nightly_cargo();
    probe.args(["fuzz", "--version"]);
    if let Some(v) = output_of(&mut probe) {
        println!("xtask fuzz: {v}");
        return Ok(());
    }
    println!("xtask fuzz: cargo-fuzz is missing; installing it");
    let mut install = process::cargo();
    install.args(["install", "cargo-fuzz", "--locked"]);
    process::run(&mut install).context("installing cargo-fuzz")
}

/// `cargo` of the nightly toolchain, free of what the outer (stable) cargo set for
/// xtask: its `CARGO`, toolchain and target directory.
fn nightly_cargo() -> Command {
    let mut c = Command::new("rustup");
    c.args(["run", TOOLCHAIN, "cargo"])
        .env_remove("CARGO")
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTC")
        .env_remove("RUSTC_WRAPPER");
    c
}

/// `cargo fuzz SUB` with reel's build settings, run from `fuzz/`.
fn cargo_fuzz(fuzz: &Path, sub: &str) -> Command {
    let mut c = nightly_cargo();
    c.current_dir(fuzz)
        .args(["fuzz", sub, "--sanitizer", "none"]);
    c.arg("--target-dir").arg(fuzz.join("target"));
    c
}

/// What one target's run found.
struct Outcome {
    target: String,
    /// Inputs executed.
    runs: u64,
    /// Seconds it ran (libFuzzer's count, else the wall clock).
    seconds: u64,
    /// The input that crashed it.
    crash: Option<PathBuf>,
    /// libFuzzer ended normally.
    clean: bool,
    /// Its full output.
    log: PathBuf,
}

impl Outcome {
    fn line(&self, root: &Path) -> String {
        let rate = self.runs / self.seconds.max(1);
        let verdict = match (&self.crash, self.clean) {
            (Some(p), _) => format!("CRASH: {}", short(p, root)),
            (None, true) => "ok".to_owned(),
            (None, false) => format!("FAILED (see {})", short(&self.log, root)),
        };
        format!(
            "{:>12} runs in {:>4} s ({rate}/s): {verdict}",
            self.runs, self.seconds
        )
    }
}

fn run_target(fuzz: &Path, target: &str, seconds: u64) -> anyhow::Result<Outcome> {
    let work = fuzz.join("work").join(target);
    let artifacts = fuzz.join("artifacts").join(target);
    let logs = fuzz.join("logs");
    for d in [&work, &artifacts, &logs] {
        std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
    }
    let mut c = cargo_fuzz(fuzz, "run");
    c.arg(target)
        .arg(&work)
        .arg(fuzz.join("corpus").join(target));
    let regressions = fuzz.join("regressions").join(target);
    if regressions.is_dir() {
        c.arg(&regressions);
    }
    c.arg("--")
        .arg(format!("-max_total_time={seconds}"))
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .arg("-print_final_stats=1")
        .arg("-timeout=10");
    println!("$ {}", display(&c));
    let started = std::time::Instant::now();
    let log_path = logs.join(format!("{target}.log"));
    let mut log = std::fs::File::create(&log_path)
        .with_context(|| format!("cannot create {}", log_path.display()))?;
    let mut child = c
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start `{}`", display(&c)))?;
    let mut out = Outcome {
        target: target.to_owned(),
        runs: 0,
        seconds: 0,
        crash: None,
        clean: false,
        log: log_path.clone(),
    };
    if let Some(err) = child.stderr.take() {
        for line in BufReader::new(err).lines() {
            let line = line?;
            writeln!(log, "{line}")?;
            out.read(&line);
            if is_worth_showing(&line) {
                println!("    {line}");
            }
        }
    }
    let status = child.wait()?;
    out.clean = status.success();
    // libFuzzer reports its time only when it ends normally.
    if out.seconds == 0 || out.crash.is_some() {
        out.seconds = started.elapsed().as_secs();
    }
    Ok(out)
}

impl Outcome {
    /// Reads one line of libFuzzer's output.
    fn read(&mut self, line: &str) {
        // `#123456	pulse  cov: …` and `#123456	DONE …`: the executions so far.
        let progress = line
            .strip_prefix('#')
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok());
        if let Some(n) = progress {
            self.runs = self.runs.max(n);
        }
        // `Done 123456 runs in 60 second(s)`.
        if let Some(rest) = line.strip_prefix("Done ") {
            let words: Vec<&str> = rest.split_whitespace().collect();
            if let [n, "runs", "in", s, ..] = words[..] {
                self.runs = n.parse().unwrap_or(self.runs);
                self.seconds = s.parse().unwrap_or(self.seconds);
            }
        }
        // `stat::number_of_executed_units: 123456`.
        if let Some(n) = line.strip_prefix("stat::number_of_executed_units:") {
            self.runs = n.trim().parse().unwrap_or(self.runs);
        }
        if let Some(n) = line.strip_prefix("stat::total_time_sec:") {
            self.seconds = n.trim().parse().unwrap_or(self.seconds);
        }
        // `artifact_prefix='…'; Test unit written to fuzz/artifacts/t/crash-…`.
        if let Some((_, path)) = line.split_once("Test unit written to ") {
            self.crash = Some(PathBuf::from(path.trim()));
        }
    }
}

/// libFuzzer's progress is in the log; the terminal gets what a person acts on.
fn is_worth_showing(line: &str) -> bool {
    line.contains("panicked at")
        || line.contains("ERROR:")
        || line.contains("Test unit written")
        || line.starts_with("Done ")
        || line.contains("DONE")
        || line.starts_with("error")
}

fn merge_into_corpus(fuzz: &Path, target: &str) -> anyhow::Result<()> {
    let corpus = fuzz.join("corpus").join(target);
    let before = count_files(&corpus);
    let mut c = cargo_fuzz(fuzz, "run");
    c.arg(target)
        .arg(&corpus)
        .arg(fuzz.join("work").join(target))
        .args(["--", "-merge=1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    process::run(&mut c).with_context(|| format!("merging {target}'s corpus"))?;
    println!(
        "    merged: fuzz/corpus/{target}/ {before} -> {} files",
        count_files(&corpus)
    );
    Ok(())
}

fn count_files(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| d.count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libfuzzer_output_gives_runs_time_and_crash() {
        let mut o = Outcome {
            target: "sse".into(),
            runs: 0,
            seconds: 0,
            crash: None,
            clean: false,
            log: PathBuf::new(),
        };
        o.read("#2\tINITED cov: 97 ft: 98 corp: 1/1b exec/s: 0 rss: 30Mb");
        o.read("#1048576\tpulse  cov: 301 ft: 900 corp: 80/2Kb lim: 4096 exec/s: 349525 rss: 50Mb");
        assert_eq!(o.runs, 1_048_576);
        o.read("Done 20971520 runs in 61 second(s)");
        assert_eq!((o.runs, o.seconds), (20_971_520, 61));
        o.read("stat::number_of_executed_units: 20971530");
        assert_eq!(o.runs, 20_971_530);
        o.read("artifact_prefix='fuzz/artifacts/sse/'; Test unit written to fuzz/artifacts/sse/crash-abc");
        assert_eq!(o.crash, Some(PathBuf::from("fuzz/artifacts/sse/crash-abc")));
    }

    #[test]
    fn every_entry_point_is_a_target() {
        let fuzz = process::workspace_root().join("fuzz");
        let t = targets(&fuzz).unwrap();
        assert!(t.contains(&"trace_line".to_owned()), "{t:?}");
    }
}
