//! `cargo xtask bench [--quick] [NAME…]`: builds reel, runs the named benches (all by
//! default), prints one table and writes `target/bench/results.json`.
//!
//! Each bench is a module with `pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Figure>>`,
//! listed once in [`BENCHES`]. A bench measures reel as a user runs it (the built binary,
//! a child process) and puts the target next to each figure it has one for.
//! A figure that could not be measured has no value and says why; any such figure, or a
//! bench that fails, makes the exit status non-zero after the table and JSON are written.
//! Missing a target is reported, not an error: the figures are the result.
//!
//! `--quick` is a smoke run (small inputs, debug build) that proves the benches work; its
//! figures mean nothing and go to `target/bench/quick/`.

pub mod diff;
mod http_load;
pub mod import;
pub mod llm;
pub mod play;
pub mod play_http;
pub mod reader;
pub mod rec;
pub mod rec_http;
mod sse;
mod synth;
pub mod view;

use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde::Serialize;
use serde_json::json;

use crate::process::{self, cargo, display};

/// What a bench gets: the reel to measure and where to put its files.
pub struct Ctx {
    /// The built `reel` binary.
    pub reel: PathBuf,
    /// A directory the bench may write to and reuse between runs (`target/bench`).
    pub work: PathBuf,
    /// Smoke run: small inputs, figures not meaningful.
    pub quick: bool,
}

/// One measured figure.
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    /// What was measured, e.g. `reel stats --json`.
    pub name: String,
    /// The value; `None` when it could not be measured (the note says why).
    pub value: Option<f64>,
    /// Unit of `value`, e.g. `MB/s` (10^6 bytes per second) or `MiB`.
    pub unit: String,
    /// The target for this figure, if it sets one.
    pub target: Option<Target>,
    /// How it was measured, or why it is missing.
    pub note: String,
}

/// A target: the value must be at least / at most this.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// `value >= .0`.
    AtLeast(f64),
    /// `value <= .0`.
    AtMost(f64),
}

impl Target {
    /// True when `value` meets the target.
    pub fn met(self, value: f64) -> bool {
        match self {
            Target::AtLeast(t) => value >= t,
            Target::AtMost(t) => value <= t,
        }
    }

    fn text(self) -> String {
        match self {
            Target::AtLeast(t) => format!(">= {}", fmt_value(t)),
            Target::AtMost(t) => format!("<= {}", fmt_value(t)),
        }
    }
}

impl Serialize for Target {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (op, v) = match *self {
            Target::AtLeast(v) => (">=", v),
            Target::AtMost(v) => ("<=", v),
        };
        json!({ "op": op, "value": v }).serialize(s)
    }
}

impl Figure {
    /// A measured figure. A value that is not finite (a division by a zero time) is
    /// recorded as not measured.
    pub fn new(name: impl Into<String>, value: f64, unit: impl Into<String>) -> Self {
        let finite = value.is_finite();
        Figure {
            name: name.into(),
            value: finite.then_some(value),
            unit: unit.into(),
            target: None,
            note: if finite {
                String::new()
            } else {
                "not finite (nothing measured?)".into()
            },
        }
    }

    /// A figure that could not be measured, and why.
    pub fn missing(
        name: impl Into<String>,
        unit: impl Into<String>,
        why: impl Into<String>,
    ) -> Self {
        Figure {
            name: name.into(),
            value: None,
            unit: unit.into(),
            target: None,
            note: why.into(),
        }
    }

    /// Sets the target.
    pub fn target(mut self, t: Target) -> Self {
        self.target = Some(t);
        self
    }

    /// Appends to the note.
    pub fn note(mut self, note: impl AsRef<str>) -> Self {
        if !self.note.is_empty() {
            self.note.push_str("; ");
        }
        self.note.push_str(note.as_ref());
        self
    }

    /// Whether the target is met; `None` without a target or a value.
    pub fn met(&self) -> Option<bool> {
        Some(self.target?.met(self.value?))
    }
}

type BenchFn = fn(&Ctx) -> anyhow::Result<Vec<Figure>>;

/// Every bench, by name, in the order `cargo xtask bench` runs them.
const BENCHES: &[(&str, BenchFn)] = &[
    ("reader", reader::run),
    ("import", import::run),
    ("rec", rec::run),
    ("rec-http", rec_http::run),
    ("play", play::run),
    ("play-http", play_http::run),
    ("diff", diff::run),
    ("llm", llm::run),
    ("view", view::run),
];

/// `cargo xtask bench`.
pub fn cmd(args: &[String]) -> anyhow::Result<()> {
    let mut quick = false;
    let mut names = Vec::new();
    for a in args {
        match a.as_str() {
            "--quick" => quick = true,
            s if s.starts_with('-') => {
                bail!("unknown flag `{s}` (cargo xtask bench [--quick] [NAME…])")
            }
            s => match BENCHES.iter().find(|(n, _)| *n == s) {
                Some(b) => names.push(*b),
                None => bail!(
                    "no bench named `{s}`; benches: {}",
                    BENCHES
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            },
        }
    }
    if names.is_empty() {
        names = BENCHES.to_vec();
    }

    let root = process::workspace_root();
    if !quick && cfg!(debug_assertions) && std::env::var_os(REEXEC_ENV).is_none() {
        return reexec_optimised(&root, args);
    }
    let mut work = process::target_dir(&root).join("bench");
    if quick {
        work.push("quick");
    }
    std::fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;
    let reel = build_reel(&root, quick)?;
    let ctx = Ctx { reel, work, quick };
    if quick {
        println!(
            "bench: --quick: small inputs on a debug build; the figures prove the benches run, nothing more"
        );
    }

    let load = load_average();
    if let Some(l) = load {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        println!("bench: load average {l:.2} on {cpus} cores before the run");
        if l > 0.5 * cpus as f64 {
            println!(
                "bench: warning: the machine is busy; wall-clock figures will be low and noisy (CPU-time figures less so)"
            );
        }
    }

    let mut results = Vec::new();
    for (name, run) in &names {
        println!("\n==> bench {name}");
        let outcome = run(&ctx);
        if let Err(e) = &outcome {
            eprintln!("bench {name}: error: {e:#}");
        }
        results.push((*name, outcome));
    }

    print_table(&results);
    let json_path = ctx.work.join("results.json");
    write_results(&json_path, &ctx, load, &results)?;
    println!("results: {}", json_path.display());

    let failed: Vec<String> = results
        .iter()
        .flat_map(|(name, r)| match r {
            Err(_) => vec![format!("{name} (failed)")],
            Ok(figs) => figs
                .iter()
                .filter(|f| f.value.is_none())
                .map(|f| format!("{name}: {}", f.name))
                .collect(),
        })
        .collect();
    if !failed.is_empty() {
        bail!("not measured: {}", failed.join(", "));
    }
    Ok(())
}

/// Set on the optimised xtask that a debug one re-runs, so it runs the benches itself.
const REEXEC_ENV: &str = "REEL_XTASK_BENCH_OPTIMISED";

/// Builds xtask in release and runs the same bench command with it: the in-process work
/// (generating the trace, the validation pass) must be measured optimised, and the
/// optimised xtask stays small, which keeps its share of a child's `ru_maxrss` small.
fn reexec_optimised(root: &Path, args: &[String]) -> anyhow::Result<()> {
    use std::os::unix::process::CommandExt;
    println!("bench: building an optimised xtask to run the benches");
    let xtask = build_bin(root, "xtask", "xtask", true)?;
    let mut cmd = Command::new(&xtask);
    cmd.arg("bench").args(args).env(REEXEC_ENV, "1");
    println!("$ {}", display(&cmd));
    let err = cmd.exec();
    Err(err).with_context(|| format!("cannot run {}", xtask.display()))
}

/// The one-minute load average (Linux), to tell a reader how busy the machine was.
fn load_average() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// Builds reel (release; debug with `--quick`) and returns the binary cargo reports.
fn build_reel(root: &Path, quick: bool) -> anyhow::Result<PathBuf> {
    build_bin(root, "reel", "reel", !quick)
}

/// Builds one binary and returns its path as cargo reports it.
fn build_bin(root: &Path, package: &str, bin: &str, release: bool) -> anyhow::Result<PathBuf> {
    let mut exes = build_targets(root, package, "--bin", &[bin], release)?;
    Ok(exes.remove(0))
}

/// Builds examples of `package` (optimised unless `--quick`) and returns their paths in
/// the order named.
pub fn build_examples(ctx: &Ctx, package: &str, names: &[&str]) -> anyhow::Result<Vec<PathBuf>> {
    build_targets(
        &process::workspace_root(),
        package,
        "--example",
        names,
        !ctx.quick,
    )
}

/// Builds the named targets of one kind (`--bin`, `--example`) and returns the
/// executables cargo reports, in the order named.
fn build_targets(
    root: &Path,
    package: &str,
    kind: &str,
    names: &[&str],
    release: bool,
) -> anyhow::Result<Vec<PathBuf>> {
    let mut c = cargo();
    c.current_dir(root).args(["build", "-p", package]);
    for name in names {
        c.args([kind, name]);
    }
    c.arg("--message-format=json-render-diagnostics");
    if release {
        c.arg("--release");
    }
    let shown = display(&c);
    println!("$ {shown}");
    let mut child = c
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start `{shown}`"))?;
    let mut exes: Vec<Option<PathBuf>> = vec![None; names.len()];
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines() {
            let line = line?;
            let Ok(msg) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            let (Some(name), Some(exe)) =
                (msg["target"]["name"].as_str(), msg["executable"].as_str())
            else {
                continue;
            };
            if let Some(k) = names.iter().position(|n| *n == name) {
                exes[k] = Some(PathBuf::from(exe));
            }
        }
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("`{shown}` failed ({status})");
    }
    names
        .iter()
        .zip(exes)
        .map(|(name, exe)| exe.with_context(|| format!("`{shown}` reported no {name} executable")))
        .collect()
}

/// A child process killed on drop, so a failed bench leaves no server behind.
pub struct Running(pub std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts one of the HTTP bench helpers (an echo server, the TCP relay); its address
/// from its `listening on ADDR` line.
pub fn start_listener(exe: &Path, args: &[&str]) -> anyhow::Result<(Running, String)> {
    let mut child = Command::new(exe)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start {}", exe.display()))?;
    let out = child.stdout.take().context("no stdout")?;
    let running = Running(child);
    let mut line = String::new();
    BufReader::new(out).read_line(&mut line)?;
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .with_context(|| format!("{} said {line:?}", exe.display()))?
        .to_owned();
    Ok((running, addr))
}

/// A `reel` that serves HTTP, started by a bench: the process, the URL of its
/// `reel: listening on URL` line, and the rest of its stderr, collected on a thread
/// (so reel never blocks on a full pipe).
pub struct ReelListening {
    /// The process.
    pub child: Running,
    /// What it listens on, as printed.
    pub url: String,
    /// Its stderr after the listening line.
    pub stderr: std::thread::JoinHandle<String>,
}

/// Starts `c` (a `reel` that listens) and waits, at most 30 s, for its listening line.
pub fn start_reel(mut c: Command) -> anyhow::Result<ReelListening> {
    c.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let shown = display(&c);
    println!("$ {shown}");
    let mut child = c
        .spawn()
        .with_context(|| format!("cannot start `{shown}`"))?;
    let err = child.stderr.take().context("no stderr")?;
    let running = Running(child);
    let mut lines = BufReader::new(err).lines();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut said = String::new();
    let url = loop {
        let Some(line) = lines.next() else {
            bail!("`{shown}` exited before it listened: {said}");
        };
        let line = line?;
        if let Some(url) = line.strip_prefix("reel: listening on ") {
            break url.to_owned();
        }
        said.push_str(&line);
        said.push('\n');
        if Instant::now() > deadline {
            bail!("`{shown}` did not listen within 30 s: {said}");
        }
    };
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        for l in lines.map_while(Result::ok) {
            text.push_str(&l);
            text.push('\n');
        }
        text
    });
    Ok(ReelListening {
        child: running,
        url,
        stderr,
    })
}

/// Stops a reel with SIGTERM and reaps it; its exit status.
pub fn sigterm(reel: &mut Running) -> anyhow::Result<std::process::ExitStatus> {
    let pid = libc::pid_t::try_from(reel.0.id()).context("pid out of range")?;
    // SAFETY: a signal to our own child, which has not been reaped yet.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    Ok(reel.0.wait()?)
}

fn print_table(results: &[(&str, anyhow::Result<Vec<Figure>>)]) {
    let mut rows: Vec<[String; 6]> = vec![[
        "bench".into(),
        "figure".into(),
        "value".into(),
        "unit".into(),
        "target".into(),
        "met".into(),
    ]];
    let mut notes = Vec::new();
    for (name, r) in results {
        match r {
            Err(e) => rows.push([
                name.to_string(),
                format!("FAILED: {e:#}"),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ]),
            Ok(figs) => {
                for f in figs {
                    let value = f.value.map_or("—".to_owned(), fmt_value);
                    let met = match f.met() {
                        Some(true) => "yes",
                        Some(false) => "NO",
                        None => "",
                    };
                    let mut fig_name = f.name.clone();
                    if !f.note.is_empty() {
                        notes.push(f.note.clone());
                        let _ = write!(fig_name, " [{}]", notes.len());
                    }
                    rows.push([
                        name.to_string(),
                        fig_name,
                        value,
                        f.unit.clone(),
                        f.target.map(Target::text).unwrap_or_default(),
                        met.into(),
                    ]);
                }
            }
        }
    }
    let mut widths = [0usize; 6];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    println!();
    for row in &rows {
        let mut line = String::new();
        for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
            let pad = w.saturating_sub(cell.chars().count());
            if i == 2 {
                let _ = write!(line, "{}{cell}  ", " ".repeat(pad));
            } else {
                let _ = write!(line, "{cell}{}  ", " ".repeat(pad));
            }
        }
        println!("{}", line.trim_end());
    }
    for (i, n) in notes.iter().enumerate() {
        println!("[{}] {n}", i + 1);
    }
}

fn write_results(
    path: &Path,
    ctx: &Ctx,
    load: Option<f64>,
    results: &[(&str, anyhow::Result<Vec<Figure>>)],
) -> anyhow::Result<()> {
    // Structs rather than `json!`, so the document keeps this field order.
    #[derive(Serialize)]
    struct Bench<'a> {
        name: &'a str,
        ok: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        figures: &'a [Figure],
    }
    #[derive(Serialize)]
    struct Doc<'a> {
        schema: &'static str,
        quick: bool,
        profile: &'static str,
        reel: &'a Path,
        cpus: usize,
        load_average_before: Option<f64>,
        page_cache: &'static str,
        benches: Vec<Bench<'a>>,
    }
    let doc = Doc {
        schema: "reel.bench/1",
        quick: ctx.quick,
        profile: if ctx.quick { "dev" } else { "release" },
        reel: &ctx.reel,
        cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
        load_average_before: load,
        page_cache: "warm",
        benches: results
            .iter()
            .map(|(name, r)| match r {
                Ok(figs) => Bench {
                    name,
                    ok: true,
                    error: None,
                    figures: figs,
                },
                Err(e) => Bench {
                    name,
                    ok: false,
                    error: Some(format!("{e:#}")),
                    figures: &[],
                },
            })
            .collect(),
    };
    let text = serde_json::to_string_pretty(&doc)?;
    std::fs::write(path, text + "\n").with_context(|| format!("cannot write {}", path.display()))
}

/// A short, readable number: 612, 48.3, 0.83.
pub fn fmt_value(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 || (a >= 100.0 && v.fract() == 0.0) {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A finished child process as the kernel accounted for it.
#[derive(Debug, Clone, Copy)]
pub struct Measured {
    /// Exit code, `None` when killed by a signal.
    pub code: Option<i32>,
    /// The signal that killed it.
    pub signal: Option<i32>,
    /// Wall time from just before spawn to reaping.
    pub wall: Duration,
    /// Peak resident set size, bytes (`ru_maxrss`).
    pub max_rss: u64,
    /// User + system CPU time.
    pub cpu: Duration,
}

impl Measured {
    /// "exit 1" or "signal 9".
    pub fn status_text(&self) -> String {
        match (self.code, self.signal) {
            (Some(c), _) => format!("exit {c}"),
            (None, Some(s)) => format!("signal {s}"),
            (None, None) => "unknown status".into(),
        }
    }
}

/// Runs `cmd` to completion and returns its wall time, status and the kernel's resource
/// accounting for exactly that child (`wait4`), which `std::process::Child` does not give.
///
/// Limit: on Linux a child's `ru_maxrss` also counts the memory image it had before
/// `exec`, which is this process's (spawned children share it until they exec);
/// [`self_max_rss`] says how large that can have been.
pub fn measure(cmd: &mut Command) -> anyhow::Result<Measured> {
    let shown = display(cmd);
    let start = Instant::now();
    let child = cmd
        .stdin(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot start `{shown}`"))?;
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data; zero is a valid value for every field.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: pid is our own unreaped child; both out-pointers are valid for writes.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            break;
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err).with_context(|| format!("wait4 for `{shown}`"));
        }
    }
    let wall = start.elapsed();
    // Reaped above; `Child` does not wait on drop, so dropping it only closes our ends.
    drop(child);
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    let (code, signal) = if libc::WIFEXITED(status) {
        (Some(libc::WEXITSTATUS(status)), None)
    } else if libc::WIFSIGNALED(status) {
        (None, Some(libc::WTERMSIG(status)))
    } else {
        (None, None)
    };
    Ok(Measured {
        code,
        signal,
        wall,
        max_rss: maxrss_bytes(ru.ru_maxrss),
        cpu: tv(ru.ru_utime) + tv(ru.ru_stime),
    })
}

/// CPU time this process has used so far (user + system, all threads).
pub fn self_cpu() -> Duration {
    // SAFETY: timespec is plain data; the out-pointer is valid.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid clock id and out-pointer.
    if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The peak RSS of this process's current memory image, bytes: what Linux adds to the
/// `ru_maxrss` of a child spawned now. `/proc/self/status` `VmHWM` on Linux; elsewhere
/// `getrusage`, which may also count images this process had before its own `exec`.
pub fn self_max_rss() -> u64 {
    if let Ok(status) = std::fs::read_to_string("/proc/self/status")
        && let Some(kib) = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    {
        return kib * 1024;
    }
    // SAFETY: as in `measure`.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF with a valid out-pointer.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return 0;
    }
    maxrss_bytes(ru.ru_maxrss)
}

fn maxrss_bytes(v: libc::c_long) -> u64 {
    let v = v.max(0) as u64;
    // Linux reports KiB, macOS bytes.
    if cfg!(target_os = "macos") {
        v
    } else {
        v * 1024
    }
}

/// The median of `xs` (the mean of the middle two for an even count); `None` when empty.
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn targets_and_missing_values() {
        let f = Figure::new("x", 450.0, "MB/s").target(Target::AtLeast(400.0));
        assert_eq!(f.met(), Some(true));
        let f = Figure::new("x", 70.0, "MiB").target(Target::AtMost(64.0));
        assert_eq!(f.met(), Some(false));
        let f = Figure::new("x", f64::INFINITY, "MB/s").target(Target::AtLeast(1.0));
        assert_eq!(f.value, None);
        assert_eq!(f.met(), None);
        assert_eq!(
            serde_json::to_value(Target::AtMost(2.5)).unwrap(),
            json!({"op": "<=", "value": 2.5})
        );
    }

    #[test]
    fn measure_reports_status_and_memory() {
        let m = measure(Command::new("sh").args(["-c", "exit 3"])).unwrap();
        assert_eq!(m.code, Some(3));
        assert_eq!(m.status_text(), "exit 3");
        assert!(m.max_rss > 0);
        assert!(self_max_rss() > 0);
        let m = measure(Command::new("sh").args(["-c", "kill -9 $$"])).unwrap();
        assert_eq!(m.signal, Some(9));
        assert_eq!(m.status_text(), "signal 9");
    }
}
