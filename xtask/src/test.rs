//! `cargo xtask test`: the one command that says whether the project works, on a
//! developer's machine and in CI alike (`.ci/run` runs exactly this).
//!
//! Steps, in order: `cargo fmt --check` and clippy (skipped with `--no-lint`), `peers`,
//! `cargo test --workspace` with `REEL_PEERS` set, `reel check` and `reel stats` on the
//! README's example trace, the README's `cargo install` command, the packages (the wheel
//! and the npm packages of a dev build, installed with pip, uv and npm and run: `cargo
//! xtask package --profile dev --check`), then the `shared-fixtures` suite.
//!
//! The shared-fixtures suite is every test that reads the other tools' real files in
//! the `shared/` directory beside the workspace. Those tests are `#[ignore]`d, with
//! the one reason [`SHARED_REASON`] names, so a fresh clone with nothing beside it
//! passes `cargo test` on its own; this command then runs them (`-- --ignored`) when
//! `shared/` exists, and says plainly in its summary when it does not. No test may be
//! ignored for any other reason: [`stray_ignores`] fails the run if one is, so an
//! ignored test never hides a failure.
//!
//! Every step runs even when an earlier one failed (a lint slip should not hide a test
//! failure); any failure makes the exit status non-zero. Test counts are read from the
//! test harness's `test result:` lines as they stream by, and a run that executed no
//! test at all is a failure, never a silent pass.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::process::{self, cargo, display};
use crate::{package, peers, watch};

/// The trace the README's first command summarises.
const README_EXAMPLE: &str = "examples/everything-demo.jsonl";

/// What every `#[ignore]` reason in the tree says: the test reads `../shared/fixtures`.
const SHARED_REASON: &str = "reads ../shared/fixtures";

/// `cargo xtask test [--no-lint] [ARGS…]`.
pub fn cmd(args: &[String]) -> anyhow::Result<()> {
    let (lint, cargo_args) = split_args(args);
    // Harness arguments (after `--`) also go to the named suite; package selection does not.
    let harness_args: Vec<String> = cargo_args
        .iter()
        .skip_while(|a| *a != "--")
        .cloned()
        .collect();

    let root = process::workspace_root();
    let shared = root.parent().unwrap_or(&root).join("shared");
    let mut report = Report::default();

    let have_shared = shared.is_dir();
    check_ignores(&root, &mut report);
    if lint {
        lint_steps(&root, &mut report);
    } else {
        println!("xtask: --no-lint: skipping cargo fmt --check and clippy");
    }

    header("peers");
    let peers_dir = peers::dir(&root);
    match peers::ensure(&root) {
        Ok(dir) => report.ok("peers", dir.display().to_string()),
        Err(e) => report.fail("peers", format!("{e:#}")),
    }

    let workspace_seen = test_step(&root, &peers_dir, &cargo_args, &mut report);
    readme_step(&root, &mut report);
    install_step(&root, &mut report);
    packages_step(&root, &mut report);
    let shared_run = if have_shared {
        shared_step(&root, &shared, &peers_dir, &harness_args, &mut report)
    } else {
        no_shared_step(&shared, &mut report);
        None
    };

    let tally = workspace_seen.map(|main| main.with_shared(shared_run, have_shared));
    report.finish(tally)
}

/// `--no-lint` (before any `--`) turns the lint steps off; every other argument goes to
/// `cargo test`.
fn split_args(args: &[String]) -> (bool, Vec<String>) {
    let mut lint = true;
    let mut cargo_args = Vec::new();
    let mut after_dashdash = false;
    for a in args {
        if a == "--" {
            after_dashdash = true;
        }
        if a == "--no-lint" && !after_dashdash {
            lint = false;
        } else {
            cargo_args.push(a.clone());
        }
    }
    (lint, cargo_args)
}

/// Only tests that read the shared fixtures may be `#[ignore]`d.
fn check_ignores(root: &Path, report: &mut Report) {
    match stray_ignores(root) {
        Ok(stray) if stray.is_empty() => {}
        Ok(stray) => report.fail(
            "ignored tests",
            format!(
                "only tests that read ../shared/fixtures may be #[ignore]d (with a reason \
                 saying \"{SHARED_REASON}\"); these are not: {}",
                stray.join(", ")
            ),
        ),
        Err(e) => report.fail("ignored tests", format!("{e:#}")),
    }
}

/// fmt, clippy (the full and the stdio-only build), docs and the layout's counts.
fn lint_steps(root: &Path, report: &mut Report) {
    let mut fmt = cargo();
    fmt.current_dir(root)
        .args(["fmt", "--all", "--", "--check"]);
    report.step("fmt", &fmt, |c| process::run(c).map(|()| String::new()));
    let mut clippy = cargo();
    clippy.current_dir(root).args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]);
    report.step("clippy", &clippy, |c| {
        process::run(c).map(|()| String::new())
    });
    // The stdio-only build (no `http` feature: no runtime, HTTP or TLS stack) must
    // keep compiling cleanly; the tests run the full build.
    let mut lean = cargo();
    lean.current_dir(root).args([
        "clippy",
        "-p",
        "reel-record",
        "-p",
        "reel-replay",
        "-p",
        "reel",
        "--no-default-features",
        "--",
        "-D",
        "warnings",
    ]);
    report.step("stdio-only", &lean, |c| {
        process::run(c).map(|()| String::new())
    });
    // Module docs name their limits and parts by link: a link to something made
    // private, or renamed, fails here instead of rotting.
    let mut doc = cargo();
    doc.current_dir(root)
        .args(["doc", "--workspace", "--no-deps", "--quiet"])
        .env("RUSTDOCFLAGS", "-D warnings");
    report.step("docs", &doc, |c| process::run(c).map(|()| String::new()));
    // The layout may only get better: its four counts held to xtask/layout.json.
    match crate::layout::check(root) {
        Ok(summary) => report.ok("layout", summary),
        Err(e) => report.fail("layout", format!("{e:#}")),
    }
}

/// The workspace's `cargo test`; its tally, counted even when the run fails, for the
/// closing line.
fn test_step(
    root: &Path,
    peers_dir: &Path,
    cargo_args: &[String],
    report: &mut Report,
) -> Option<Tally> {
    let mut all = cargo();
    all.current_dir(root)
        .arg("test")
        .env("REEL_PEERS", peers_dir);
    if !cargo_args
        .iter()
        .take_while(|a| *a != "--")
        .any(|a| a == "-p" || a.starts_with("--package"))
    {
        all.arg("--workspace");
    }
    // Every test binary runs even after one fails, so the counts are the whole suite's.
    if !cargo_args.iter().any(|a| a == "--no-fail-fast") {
        all.arg("--no-fail-fast");
    }
    all.args(cargo_args);
    let mut workspace_seen = None;
    report.step("cargo test", &all, |c| {
        cargo_test(c, false, &mut workspace_seen, Watching::TESTS)
    });
    workspace_seen
}

/// The README's first command, on a debug build (the one the tests just built).
fn readme_step(root: &Path, report: &mut Report) {
    let mut example = cargo();
    example
        .current_dir(root)
        .args(["run", "-q", "-p", "reel", "--", "stats", README_EXAMPLE]);
    report.step("readme example", &example, |c| {
        let mut check = cargo();
        check
            .current_dir(root)
            .args(["run", "-q", "-p", "reel", "--", "check", README_EXAMPLE]);
        process::run(&mut check)?;
        process::run(c).map(|()| format!("reel check + stats {README_EXAMPLE}"))
    });
}

/// The README's install command, as a fresh clone runs it: `cargo install --path
/// crates/reel --locked`, into a private root. `--debug` and the workspace's target
/// directory reuse what the tests just built (a release build would add minutes);
/// the path, the lock file and the installed binary are what is checked.
fn install_step(root: &Path, report: &mut Report) {
    let root_dir = root.join("target/install-check");
    let mut install = cargo();
    install
        .current_dir(root)
        .env("CARGO_TARGET_DIR", root.join("target"))
        .args([
            "install",
            "--path",
            "crates/reel",
            "--locked",
            "--debug",
            "--root",
        ])
        .arg(&root_dir);
    report.step("install", &install, |c| {
        process::run(c)?;
        let installed = root_dir.join("bin/reel");
        let out = Command::new(&installed)
            .arg("--version")
            .output()
            .with_context(|| format!("cannot run the installed {}", installed.display()))?;
        let version = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || !version.starts_with("reel ") {
            bail!("{} --version printed {version:?}", installed.display());
        }
        Ok(format!(
            "cargo install --path crates/reel --locked: {}",
            version.trim()
        ))
    });
}

/// `cargo xtask package --profile dev --check`: the dev build the steps above made goes
/// into the wheel and the npm packages, which are installed and run as a user would.
fn packages_step(root: &Path, report: &mut Report) {
    header("packages");
    let opts = package::Options {
        profile: package::Profile::Dev,
        check: true,
        ..package::Options::default()
    };
    let checked = package::make(root, &opts)
        .and_then(|made| package::check::run(root, &made, &package::HOOKS));
    match checked {
        Ok(summary) => report.ok(
            "packages",
            format!("cargo xtask package --profile dev --check: {summary}"),
        ),
        Err(e) => report.fail("packages", format!("{e:#}")),
    }
}

/// The tests ignored in the main run: they read the other tools' real files.
fn shared_step(
    root: &Path,
    shared: &Path,
    peers_dir: &Path,
    harness_args: &[String],
    report: &mut Report,
) -> Option<Tally> {
    let mut shared_run = None;
    let mut named = cargo();
    named
        .current_dir(root)
        .args(["test", "--workspace", "--no-fail-fast", "--", "--ignored"])
        .args(harness_args.iter().skip(1))
        .env("REEL_PEERS", peers_dir);
    println!(
        "xtask: running the shared-fixtures suite (the tests ignored above: they read the \
         other tools' real files in {})",
        shared.display()
    );
    report.step("shared-fixtures", &named, |c| {
        cargo_test(c, true, &mut shared_run, Watching::TESTS)
    });
    shared_run
}

/// Without the shared fixtures, the step says why it did not run.
fn no_shared_step(shared: &Path, report: &mut Report) {
    header("shared-fixtures");
    let note = format!(
        "not run: {} is missing (the other tools' real files; the repository's own tests \
         do not need it)",
        shared.display()
    );
    println!("xtask: shared-fixtures {note}");
    report.ok("shared-fixtures", note);
}

/// Outcome of one step.
struct StepResult {
    name: &'static str,
    ok: bool,
    detail: String,
}

#[derive(Default)]
struct Report {
    steps: Vec<StepResult>,
}

impl Report {
    fn ok(&mut self, name: &'static str, detail: String) {
        self.steps.push(StepResult {
            name,
            ok: true,
            detail,
        });
    }

    fn fail(&mut self, name: &'static str, detail: String) {
        self.steps.push(StepResult {
            name,
            ok: false,
            detail,
        });
    }

    /// Runs one step; returns the test tally when the step produced one.
    fn step<F, T>(&mut self, name: &'static str, cmd: &Command, f: F) -> Option<Tally>
    where
        F: FnOnce(&mut Command) -> anyhow::Result<T>,
        T: Into<StepOutcome>,
    {
        header(name);
        let mut cmd = clone(cmd);
        match f(&mut cmd).map(Into::into) {
            Ok(StepOutcome { tally, detail }) => {
                let shown = display(&cmd);
                let detail = match &tally {
                    Some(t) => format!("{shown}: {}", t.line()),
                    None if detail.is_empty() => shown,
                    None => detail,
                };
                self.ok(name, detail);
                tally
            }
            Err(e) => {
                self.fail(name, format!("{e:#}"));
                None
            }
        }
    }

    fn finish(self, tally: Option<Tally>) -> anyhow::Result<()> {
        println!("\nxtask test summary:");
        for s in &self.steps {
            let mark = if s.ok { "ok    " } else { "FAILED" };
            println!("  {mark}  {:<16} {}", s.name, s.detail);
        }
        let failed: Vec<&str> = self
            .steps
            .iter()
            .filter(|s| !s.ok)
            .map(|s| s.name)
            .collect();
        if let Some(t) = tally {
            println!("xtask: {}", t.line());
        }
        if !failed.is_empty() {
            bail!(
                "{} of {} steps failed: {}",
                failed.len(),
                self.steps.len(),
                failed.join(", ")
            );
        }
        Ok(())
    }
}

struct StepOutcome {
    tally: Option<Tally>,
    detail: String,
}

impl From<String> for StepOutcome {
    fn from(detail: String) -> Self {
        StepOutcome {
            tally: None,
            detail,
        }
    }
}

impl From<Tally> for StepOutcome {
    fn from(t: Tally) -> Self {
        StepOutcome {
            tally: Some(t),
            detail: String::new(),
        }
    }
}

fn header(name: &str) {
    println!("\n==> xtask test: {name}");
}

/// `Command` is not `Clone`; steps are described once and run from a copy.
fn clone(cmd: &Command) -> Command {
    let mut c = Command::new(cmd.get_program());
    c.args(cmd.get_args());
    if let Some(d) = cmd.get_current_dir() {
        c.current_dir(d);
    }
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    c
}

/// Counts from the test harness's `test result:` lines.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Tally {
    passed: u64,
    failed: u64,
    ignored: u64,
    /// True when the shared-fixtures suite was not run because `shared/` is missing.
    shared_missing: bool,
}

impl Tally {
    fn line(&self) -> String {
        let mut line = format!(
            "{} passed, {} failed, {} skipped",
            self.passed, self.failed, self.ignored
        );
        if self.shared_missing {
            line.push_str(" (the shared-fixtures suite: ../shared is missing)");
        }
        line
    }

    /// The whole run's counts: the workspace run (where the shared-fixtures tests count
    /// as ignored) plus the shared-fixtures run of those same tests.
    fn with_shared(self, shared: Option<Tally>, have_shared: bool) -> Tally {
        let Some(shared) = shared else {
            return Tally {
                shared_missing: !have_shared,
                ..self
            };
        };
        let ran = shared.passed + shared.failed;
        Tally {
            passed: self.passed + shared.passed,
            failed: self.failed + shared.failed,
            ignored: self.ignored.saturating_sub(ran),
            shared_missing: false,
        }
    }

    /// Adds one `test result: ok. 3 passed; 0 failed; 1 ignored; …` line; other lines
    /// are ignored.
    fn add_line(&mut self, line: &str) {
        let Some(rest) = line.trim_start().strip_prefix("test result:") else {
            return;
        };
        let rest = rest.split_once('.').map_or(rest, |(_, r)| r);
        for part in rest.split(';') {
            let mut words = part.split_whitespace();
            let (Some(n), Some(what)) = (words.next(), words.next()) else {
                continue;
            };
            let Ok(n) = n.parse::<u64>() else { continue };
            match what {
                "passed" => self.passed += n,
                "failed" => self.failed += n,
                "ignored" => self.ignored += n,
                _ => {}
            }
        }
    }
}

/// How a `cargo test` is watched: how long it may take, and where its output goes.
#[derive(Clone, Copy)]
struct Watching {
    /// How long the command may run before the processes still running under it are
    /// named and stopped.
    deadline: Duration,
    /// How long its output may stay open after it has exited: only a process it
    /// started and left running holds it longer.
    grace: Duration,
    /// Whether the output is copied to stdout as it comes (the tests of this module
    /// keep theirs out of the suite's own output, which is counted too).
    echo: bool,
}

impl Watching {
    /// One `cargo test`: far above a whole run on a two-core machine (about 20
    /// minutes) and well inside CI's limit, so a test that never returns fails the step
    /// with names instead of ending the log without a word.
    const TESTS: Watching = Watching {
        deadline: Duration::from_secs(45 * 60),
        grace: Duration::from_secs(20),
        echo: true,
    };
}

/// Runs a `cargo test` command, echoing its output while counting tests.
/// `seen` gets the counts whether or not the run succeeds.
fn cargo_test(
    cmd: &mut Command,
    need_tests: bool,
    seen: &mut Option<Tally>,
    watching: Watching,
) -> anyhow::Result<Tally> {
    let shown = display(cmd);
    println!("$ {shown}");
    let mut child = cmd
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start `{shown}`"))?;
    let out = child.stdout.take().context("cargo test's stdout")?;
    let pipe = watch::fd_target(&out);
    let tally = Arc::new(Mutex::new(Tally::default()));
    let (ended, output_end) = mpsc::channel();
    let counted = Arc::clone(&tally);
    let echo = watching.echo;
    thread::spawn(move || {
        let _ = ended.send(read_output(out, echo, &counted));
    });
    let counts = |tally: &Mutex<Tally>| *tally.lock().unwrap_or_else(|e| e.into_inner());

    let Some(status) = process::wait_until(&mut child, watching.deadline)? else {
        let running = watch::descendants(child.id());
        watch::kill(&running);
        let _ = child.kill();
        let _ = child.wait();
        *seen = Some(counts(&tally));
        bail!(
            "`{shown}` was still running after {}s; stopped it and these processes \
             under it:\n{}",
            watching.deadline.as_secs(),
            listed(&running)
        );
    };
    match output_end.recv_timeout(watching.grace) {
        Ok(read) => read?,
        Err(_) => {
            let holding = pipe.as_deref().map(watch::holders).unwrap_or_default();
            watch::kill(&holding);
            *seen = Some(counts(&tally));
            bail!(
                "`{shown}` exited ({status}), but processes the tests started still held \
                 its output open {}s later (a test leaves them running); stopped:\n{}",
                watching.grace.as_secs(),
                listed(&holding)
            );
        }
    }
    let tally = counts(&tally);
    *seen = Some(tally);
    if !status.success() {
        bail!("`{shown}` failed ({status}): {}", tally.line());
    }
    if tally.passed + tally.failed == 0 && (need_tests || !has_filter(cmd)) {
        bail!("`{shown}` ran no test");
    }
    Ok(tally)
}

/// Reads `out` line by line, counting the harness's result lines, and copies it to
/// stdout when `echo`.
fn read_output(out: impl Read, echo: bool, tally: &Mutex<Tally>) -> std::io::Result<()> {
    let mut reader = BufReader::new(out);
    let mut line = Vec::new();
    let stdout = std::io::stdout();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        if echo {
            let mut lock = stdout.lock();
            lock.write_all(&line)?;
            lock.flush()?;
        }
        tally
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .add_line(&String::from_utf8_lossy(&line));
    }
}

/// One process a line, or a note that none was found.
fn listed(procs: &[watch::Proc]) -> String {
    if procs.is_empty() {
        return "  (none found)".to_owned();
    }
    procs
        .iter()
        .map(|p| format!("  {p}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// True when the user narrowed the run (a test-name filter), where zero tests may be right.
fn has_filter(cmd: &Command) -> bool {
    let args: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let before = args.iter().take_while(|a| *a != "--");
    let after = args.iter().skip_while(|a| *a != "--").skip(1);
    // `cargo test NAME`: a bare word after `test` that is not a flag or a flag's value.
    let mut prev_flag = false;
    let mut bare = false;
    for a in before.skip(1) {
        if a.starts_with('-') {
            prev_flag = !a.contains('=') && takes_value(a);
        } else if !prev_flag {
            bare = true;
        } else {
            prev_flag = false;
        }
    }
    bare || after.clone().any(|a| !a.starts_with('-'))
}

fn takes_value(flag: &str) -> bool {
    matches!(
        flag,
        "-p" | "--package"
            | "--test"
            | "--bin"
            | "--example"
            | "--bench"
            | "--features"
            | "-F"
            | "-j"
            | "--jobs"
            | "--target"
            | "--target-dir"
            | "--profile"
            | "--manifest-path"
            | "--exclude"
            | "--color"
            | "--message-format"
            | "--config"
            | "-Z"
    )
}

/// Every `#[ignore]` in the workspace's Rust sources whose reason does not say
/// [`SHARED_REASON`], as `file:line`.
fn stray_ignores(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut stray = Vec::new();
    let mut stack = vec![root.join("crates"), root.join("xtask")];
    while let Some(dir) = stack.pop() {
        let entries =
            std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))?;
        for entry in entries {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                for (n, line) in text.lines().enumerate() {
                    let line = line.trim_start();
                    if line.starts_with("#[ignore") && !line.contains(SHARED_REASON) {
                        let shown = path.strip_prefix(root).unwrap_or(&path);
                        stray.push(format!("{}:{}", shown.display(), n + 1));
                    }
                }
            }
        }
    }
    stray.sort();
    Ok(stray)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    const SHORT: Watching = Watching {
        deadline: Duration::from_secs(3),
        grace: Duration::from_secs(1),
        echo: false,
    };

    /// A process left running with the output still open fails the step within the
    /// grace, is named and stopped; the counts read before are kept.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_process_left_holding_the_output_is_named_and_stopped() {
        let mut seen = None;
        let err = cargo_test(
            &mut sh("echo 'test result: ok. 2 passed; 0 failed; 0 ignored'; \
                     exec 2>/dev/null; sleep 47 &"),
            true,
            &mut seen,
            SHORT,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("still held its output open"), "{err}");
        assert!(err.contains("sleep 47"), "{err}");
        assert_eq!(seen.map(|t| t.passed), Some(2));
        assert!(
            crate::watch::leaves_the_table("sleep 47"),
            "the holder was stopped"
        );
    }

    /// A command that outlives its deadline fails the step, naming what ran under it.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_step_past_its_deadline_names_what_is_running() {
        let mut seen = None;
        let err = cargo_test(
            &mut sh("echo 'running 1 test'; sleep 53; true"),
            true,
            &mut seen,
            SHORT,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("still running after 3s"), "{err}");
        assert!(err.contains("sleep 53"), "{err}");
    }

    #[test]
    fn a_run_that_ends_with_its_output_is_counted() {
        let mut seen = None;
        let tally = cargo_test(
            &mut sh("echo 'test result: ok. 3 passed; 0 failed; 1 ignored'"),
            true,
            &mut seen,
            SHORT,
        )
        .unwrap();
        assert_eq!((tally.passed, tally.ignored), (3, 1));
    }

    #[test]
    fn tally_reads_harness_summaries() {
        let mut t = Tally::default();
        t.add_line("test result: ok. 12 passed; 0 failed; 3 ignored; 0 measured; 0 filtered out; finished in 0.01s\n");
        t.add_line("test result: FAILED. 4 passed; 2 failed; 0 ignored; 0 measured; 1 filtered out; finished in 1.00s");
        t.add_line("test something ... ok");
        t.add_line("running 12 tests");
        assert_eq!(
            t,
            Tally {
                passed: 16,
                failed: 2,
                ignored: 3,
                shared_missing: false,
            }
        );
        assert_eq!(t.line(), "16 passed, 2 failed, 3 skipped");
    }

    #[test]
    fn the_shared_run_turns_ignored_tests_into_passed_ones() {
        let main = Tally {
            passed: 453,
            failed: 0,
            ignored: 7,
            shared_missing: false,
        };
        let shared = Tally {
            passed: 6,
            failed: 1,
            ..Tally::default()
        };
        assert_eq!(
            main.with_shared(Some(shared), true).line(),
            "459 passed, 1 failed, 0 skipped"
        );
        assert_eq!(
            main.with_shared(None, false).line(),
            "453 passed, 0 failed, 7 skipped (the shared-fixtures suite: ../shared is missing)"
        );
    }

    #[test]
    fn only_shared_fixture_tests_are_ignored() {
        let root = crate::process::workspace_root();
        assert_eq!(stray_ignores(&root).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn filters_are_told_from_flags() {
        let cmd = |args: &[&str]| {
            let mut c = Command::new("cargo");
            c.args(args);
            has_filter(&c)
        };
        assert!(!cmd(&["test", "--workspace"]));
        assert!(!cmd(&["test", "-p", "reel", "--test", "ls"]));
        assert!(cmd(&["test", "--workspace", "ordering"]));
        assert!(cmd(&["test", "--", "ordering"]));
        assert!(!cmd(&["test", "--", "--nocapture"]));
    }
}
