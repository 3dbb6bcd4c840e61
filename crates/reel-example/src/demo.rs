//! `reel demo`: the whole loop on the example server, as a user would type it.
//!
//! Five steps, each a real command run as a child process and printed first, so a user
//! can copy it: record a session (the example client through `reel rec` to the example
//! server), replay it (`reel play`; the client must get the same answers), record again
//! with the server's `--changed` flag, `reel diff` the two runs (expected: exit 1 and the
//! weather answer as the drift), then `reel stats` of the first run.
//!
//! Every child is given at most [`STEP_TIMEOUT`] and killed after that; the demo goes on
//! with the steps that do not depend on a failed one and says which did not behave.

use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one step may run.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(30);

/// The run names the demo records.
pub const FIRST: &str = "demo";
/// The run recorded with the server's `--changed` flag.
pub const CHANGED: &str = "demo-changed";

/// What the demo needs.
#[derive(Clone, Debug)]
pub struct DemoOptions {
    /// The reel binary to run.
    pub reel: PathBuf,
    /// How to show it in printed commands (`reel` when that is what PATH finds).
    pub shown_reel: String,
    /// Where the traces go.
    pub dir: PathBuf,
    /// The reel run has `reel view` (the closing lines suggest it).
    pub viewer: bool,
}

/// How the demo went.
#[derive(Clone, Debug, Default)]
pub struct DemoOutcome {
    /// Steps that did not behave as expected, with why.
    pub failed: Vec<String>,
    /// The first recording, when it was made.
    pub first: Option<PathBuf>,
    /// The changed recording, when it was made.
    pub changed: Option<PathBuf>,
}

impl DemoOutcome {
    /// True when every step behaved as expected.
    pub fn ok(&self) -> bool {
        self.failed.is_empty()
    }
}

struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(program: &Path, args: &[OsString]) -> io::Result<Ran> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("NO_COLOR", "1")
        .spawn()?;
    let collect = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut s);
            }
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let out = collect(
        child
            .stdout
            .take()
            .map(|o| Box::new(o) as Box<dyn Read + Send>),
    );
    let err = collect(
        child
            .stderr
            .take()
            .map(|e| Box::new(e) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + STEP_TIMEOUT;
    let code = loop {
        if let Some(status) = child.try_wait()? {
            break status.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Ok(Ran {
        code,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

struct Demo<'a> {
    opts: &'a DemoOptions,
    out: &'a mut dyn Write,
    outcome: DemoOutcome,
}

impl Demo<'_> {
    fn os(&self, parts: &[&str]) -> Vec<OsString> {
        parts.iter().map(OsString::from).collect()
    }

    /// Prints `$ reel …` and runs it.
    fn step(&mut self, args: &[OsString]) -> io::Result<Option<Ran>> {
        let mut shown = vec![self.opts.shown_reel.clone()];
        shown.extend(args.iter().map(|a| shell_word(&a.to_string_lossy())));
        // Inner `reel` words (the recorded server, the replaying proxy) shown the same way.
        let reel = self.opts.reel.to_string_lossy().into_owned();
        let shown: Vec<String> = shown
            .into_iter()
            .map(|w| {
                if w == reel {
                    self.opts.shown_reel.clone()
                } else {
                    w
                }
            })
            .collect();
        writeln!(self.out, "   $ {}", shown.join(" "))?;
        match run(&self.opts.reel, args) {
            Ok(r) => Ok(Some(r)),
            Err(e) => {
                self.fail(format!("cannot run {}: {e}", self.opts.reel.display()))?;
                Ok(None)
            }
        }
    }

    fn show(&mut self, text: &str) -> io::Result<()> {
        for line in text.lines() {
            if line.is_empty() {
                writeln!(self.out)?;
            } else {
                writeln!(self.out, "     {line}")?;
            }
        }
        Ok(())
    }

    fn fail(&mut self, why: String) -> io::Result<()> {
        writeln!(self.out, "   ✗ {why}")?;
        self.outcome.failed.push(why);
        Ok(())
    }

    fn good(&mut self, what: &str) -> io::Result<()> {
        writeln!(self.out, "   ✓ {what}")
    }

    fn record(&mut self, name: &str, changed: bool) -> io::Result<Option<(PathBuf, String)>> {
        let reel = self.opts.reel.as_os_str().to_owned();
        let dir = self.opts.dir.as_os_str().to_owned();
        let mut args = self.os(&["example", "client", "--"]);
        args.extend([reel.clone(), "rec".into(), "--dir".into(), dir]);
        args.extend(self.os(&["--name", name, "--"]));
        args.extend([reel, "example".into(), "server".into()]);
        if changed {
            args.push("--changed".into());
        }
        let Some(r) = self.step(&args)? else {
            return Ok(None);
        };
        self.show(&r.stdout)?;
        if r.code != Some(0) {
            self.show(&r.stderr)?;
            self.fail(format!(
                "recording `{name}` ended with {}",
                code_text(r.code)
            ))?;
            return Ok(None);
        }
        match newest_trace(&self.opts.dir, name) {
            Some(path) => {
                let lines = std::fs::read_to_string(&path)
                    .map(|t| t.lines().count())
                    .unwrap_or(0);
                self.good(&format!("recorded {} ({lines} lines)", path.display()))?;
                Ok(Some((path, r.stdout)))
            }
            None => {
                self.fail(format!(
                    "no trace named `{name}` appeared in {}",
                    self.opts.dir.display()
                ))?;
                Ok(None)
            }
        }
    }
}

fn code_text(code: Option<i32>) -> String {
    code.map_or_else(
        || "no exit status (killed or timed out)".to_owned(),
        |c| format!("exit {c}"),
    )
}

/// Quotes a word for a POSIX shell when it needs it.
fn shell_word(w: &str) -> String {
    let plain = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        w.to_owned()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// The newest `*-<name>.jsonl` in `dir` (file names start with the start time).
fn newest_trace(dir: &Path, name: &str) -> Option<PathBuf> {
    let suffix = format!("-{name}.jsonl");
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(OsStr::to_str)
                .is_some_and(|n| n.ends_with(&suffix))
        })
        .collect();
    found.sort();
    found.pop()
}

/// Runs the demo, printing every step to `out`.
pub fn run_demo(opts: &DemoOptions, out: &mut dyn Write) -> io::Result<DemoOutcome> {
    let start = Instant::now();
    let mut d = Demo {
        opts,
        out,
        outcome: DemoOutcome::default(),
    };
    writeln!(
        d.out,
        "reel demo: record, replay, drift, diff and stats on reel's built-in example MCP server.\nFiles go to {}\n",
        opts.dir.display()
    )?;

    writeln!(
        d.out,
        "1. Record a session: the example client talks to the example server through `reel rec`."
    )?;
    let first = d.record(FIRST, false)?;
    d.outcome.first = first.as_ref().map(|f| f.0.clone());

    writeln!(
        d.out,
        "\n2. Replay it: the same client against `reel play`, which answers from the trace (no server runs)."
    )?;
    d.replay(first.as_ref().map(|f| f.1.as_str()))?;

    writeln!(
        d.out,
        "\n3. Record again, with the server's --changed flag (one tool now answers differently)."
    )?;
    let changed = d.record(CHANGED, true)?;
    d.outcome.changed = changed.as_ref().map(|c| c.0.clone());

    writeln!(d.out, "\n4. Where did the two runs drift apart?")?;
    d.diff(first.is_some() && changed.is_some())?;

    writeln!(d.out, "\n5. What happened in the first run?")?;
    d.stats(first.as_ref().map(|f| f.0.as_path()))?;

    d.close(start.elapsed().as_secs_f64())?;
    Ok(d.outcome)
}

impl Demo<'_> {
    /// Step 2: the client against `reel play` must get the recorded `answers`.
    fn replay(&mut self, answers: Option<&str>) -> io::Result<()> {
        let Some(answers) = answers else {
            return self.fail("skipped: nothing was recorded to replay".into());
        };
        let mut args = self.os(&["example", "client", "--"]);
        args.push(self.opts.reel.as_os_str().to_owned());
        args.extend(self.os(&["play", "--dir"]));
        args.push(self.opts.dir.as_os_str().to_owned());
        args.push(FIRST.into());
        if let Some(r) = self.step(&args)? {
            self.show(&r.stdout)?;
            if r.code != Some(0) {
                self.show(&r.stderr)?;
                self.fail(format!("the replay ended with {}", code_text(r.code)))?;
            } else if r.stdout != answers {
                self.fail(
                    "the client got other answers from the tape than from the server".into(),
                )?;
            } else {
                let n = answers.lines().count();
                self.good(&format!(
                    "the client got the same {n} answers from the tape"
                ))?;
            }
        }
        Ok(())
    }

    /// Step 4: `reel diff` of the two recordings must find the weather answer's drift.
    fn diff(&mut self, both_recorded: bool) -> io::Result<()> {
        if !both_recorded {
            return self.fail("skipped: needs both recordings".into());
        }
        let mut args = self.os(&["diff", "--dir"]);
        args.push(self.opts.dir.as_os_str().to_owned());
        args.extend(self.os(&[FIRST, CHANGED]));
        if let Some(r) = self.step(&args)? {
            self.show(&r.stdout)?;
            if r.code == Some(1) && r.stdout.contains("tools/call weather") {
                self.good("exit 1: output drift, and the drift is the weather answer")?;
            } else {
                self.show(&r.stderr)?;
                self.fail(format!(
                    "reel diff ended with {} (expected exit 1, output drift in tools/call weather)",
                    code_text(r.code)
                ))?;
            }
        }
        Ok(())
    }

    /// Step 5: `reel stats` of the first recording.
    fn stats(&mut self, first: Option<&Path>) -> io::Result<()> {
        let Some(path) = first else {
            return self.fail("skipped: nothing was recorded".into());
        };
        let mut args = self.os(&["stats"]);
        args.push(path.as_os_str().to_owned());
        if let Some(r) = self.step(&args)? {
            self.show(&r.stdout)?;
            if r.code == Some(0) {
                self.good("per-tool calls, errors and latency")?;
            } else {
                self.show(&r.stderr)?;
                self.fail(format!("reel stats ended with {}", code_text(r.code)))?;
            }
        }
        Ok(())
    }

    /// The closing lines: what to try next, or how many steps went wrong.
    fn close(&mut self, secs: f64) -> io::Result<()> {
        let opts = self.opts;
        if self.outcome.ok() {
            writeln!(
                self.out,
                "\nEvery step behaved as expected ({secs:.1} s). The traces stay in {}; try\n   {} diff --all --dir {} {FIRST} {CHANGED}",
                opts.dir.display(),
                opts.shown_reel,
                shell_word(&opts.dir.to_string_lossy())
            )?;
            if opts.viewer {
                writeln!(
                    self.out,
                    "or see the drift in the browser:\n   {} view --dir {} {FIRST} {CHANGED}",
                    opts.shown_reel,
                    shell_word(&opts.dir.to_string_lossy())
                )?;
            }
        } else {
            writeln!(
                self.out,
                "\n{} step(s) did not behave as expected ({secs:.1} s); the files are in {}",
                self.outcome.failed.len(),
                opts.dir.display()
            )?;
        }
        Ok(())
    }
}
