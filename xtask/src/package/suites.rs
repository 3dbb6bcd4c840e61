//! The suites of the packages that depend on `reel-cli`, run where the packages were just
//! installed ([`super::HOOKS`]): the pytest plugin in `python/` in the venv that
//! holds the wheel, and the vitest helper in `js/` in a project that holds the npm
//! tarballs. Each is copied out of the checkout first and set up as its README tells a
//! contributor (`pip install '.[test]'`, `npm install`), so a dependency that is not
//! declared fails here; neither is told where reel is (`REEL_BIN` is unset, cargo and
//! `target/` are off PATH): the plugin and the helper must find the installed one.
//!
//! Every test must pass, and as many as the suite holds: a file the runner failed to
//! collect counts.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::Value;

use super::check::{self, Installed};
use crate::process::{self, display};

/// The tests in `python/tests/test_*.py`; change it with the suite.
const PYTEST_TESTS: u64 = 24;

/// The tests in `js/test/*.test.js`; change it with the suite.
const VITEST_TESTS: u64 = 29;

/// How long a suite may run (pytest takes a few minutes on two cores, vitest less).
const SUITE_LIMIT: Duration = Duration::from_secs(15 * 60);

/// `python/` in the venv with the wheel: `pip install './python[test]'` (reel-cli from
/// the wheel's directory, the test pins from PyPI), then pytest on its tests.
pub fn pytest(env: &Installed<'_>) -> anyhow::Result<String> {
    let root = process::workspace_root();
    let copy = copy_out(&root.join("python"), &env.scratch.join("pytest-reel"))?;
    let python = env.dir.join("bin/python");
    let mut pip = env.command(&python);
    pip.args(crate::peers::PIP_INSTALL)
        .arg("--find-links")
        .arg(check::wheels(env)?)
        .arg(format!("{}[test]", copy.display()));
    process::fetch(&mut pip).context("pip install of pytest-reel with its test extra failed")?;

    let log = env.scratch.join("pytest.log");
    let mut pytest = env.command(&python);
    pytest
        .current_dir(&copy)
        .args(["-m", "pytest", "-p", "no:cacheprovider", "-q"])
        .args(["--color", "no", "-o", "console_output_style=classic"])
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("NO_COLOR", "1")
        .env_remove("REEL_RECORD_MODE")
        .env_remove("REEL_LLM_UPSTREAM")
        .env_remove("PYTEST_ADDOPTS")
        .env_remove("PYTEST_DISABLE_PLUGIN_AUTOLOAD");
    let ok = run_logged(&mut pytest, &log)?;
    let out = fs::read_to_string(&log).unwrap_or_default();
    let counts = pytest_summary(&out)
        .with_context(|| format!("pytest printed no summary line; see {}", log.display()))?;
    let passed = counts
        .iter()
        .find(|(o, _)| o == "passed")
        .map_or(0, |(_, n)| *n);
    let others: Vec<&(String, u64)> = counts.iter().filter(|(o, _)| o != "passed").collect();
    if !ok || !others.is_empty() || passed != PYTEST_TESTS {
        bail!(
            "the pytest-reel suite: {passed} passed of {PYTEST_TESTS}, others {others:?}; \
             see {}{}",
            log.display(),
            check::last_lines(&out)
        );
    }
    Ok(format!("{passed} passed"))
}

/// `js/` in a project of its own: `npm install` (its pinned devDependencies), the
/// tarballs added as a user adds them, then `npm test` (tsc on the types, then vitest).
pub fn vitest(env: &Installed<'_>) -> anyhow::Result<String> {
    let root = process::workspace_root();
    let copy = copy_out(&root.join("js"), &env.scratch.join("reel-test"))?;
    let npm = |args: &[&str]| {
        let mut cmd = env.command("npm");
        cmd.current_dir(&copy).args(args);
        cmd
    };
    process::fetch(&mut npm(&["install", "--no-audit", "--no-fund"]))
        .context("npm install in the reel-test package failed")?;
    let mut add = npm(&["install", "--no-save", "--no-audit", "--no-fund"]);
    add.arg(&env.made.npm_platform).arg(&env.made.npm_main);
    process::fetch(&mut add).context("npm install of the reel-cli tarballs failed")?;

    let log = env.scratch.join("vitest.log");
    let report = env.scratch.join("vitest.json");
    let mut test = npm(&["test", "--", "--reporter=default", "--reporter=json"]);
    test.arg(format!("--outputFile.json={}", report.display()))
        .env("NO_COLOR", "1")
        .env_remove("REEL_RECORD_MODE")
        .env_remove("FORCE_COLOR");
    let ok = run_logged(&mut test, &log)?;
    let out = fs::read_to_string(&log).unwrap_or_default();
    let doc: Value = fs::read(&report)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .with_context(|| {
            format!(
                "vitest wrote no JSON report (tsc may have failed); see {}{}",
                log.display(),
                check::last_lines(&out)
            )
        })?;
    let count = |key: &str| doc[key].as_u64().unwrap_or(u64::MAX);
    let not_passed: Vec<String> = doc["testResults"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|file| file["assertionResults"].as_array().into_iter().flatten())
        .filter(|t| t["status"] != "passed")
        .map(|t| format!("{} ({})", t["fullName"], t["status"]))
        .collect();
    let (total, passed) = (count("numTotalTests"), count("numPassedTests"));
    if !ok || doc["success"] != true || !not_passed.is_empty() || passed != VITEST_TESTS {
        bail!(
            "the reel-test suite: {passed} of {total} passed ({VITEST_TESTS} expected); not \
             passed: {not_passed:?}; see {}{}",
            log.display(),
            check::last_lines(&out)
        );
    }
    Ok(format!("tsc, {passed} passed"))
}

/// Copies a package's directory as a fresh checkout holds it (no `node_modules`, no
/// build output) into `to`; returns `to`.
fn copy_out(from: &Path, to: &Path) -> anyhow::Result<std::path::PathBuf> {
    let mut cp = Command::new("cp");
    cp.arg("-a").arg(from).arg(to);
    process::run(&mut cp)?;
    for leftover in ["node_modules", "build", ".pytest_cache"] {
        let _ = fs::remove_dir_all(to.join(leftover));
    }
    Ok(to.to_path_buf())
}

/// Runs `cmd` with its output in `log`, at most [`SUITE_LIMIT`]; true when it succeeds.
fn run_logged(cmd: &mut Command, log: &Path) -> anyhow::Result<bool> {
    let shown = display(cmd);
    println!("$ {shown}  (output in {})", log.display());
    let file = fs::File::create(log).with_context(|| format!("cannot create {}", log.display()))?;
    let mut child = cmd
        .stdout(file.try_clone()?)
        .stderr(file)
        .stdin(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot start `{shown}`"))?;
    match process::wait_until(&mut child, SUITE_LIMIT)? {
        Some(status) => Ok(status.success()),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "`{shown}` was still running after {}s; see {}",
                SUITE_LIMIT.as_secs(),
                log.display()
            )
        }
    }
}

/// The outcome counts of pytest's last summary line, such as `17 passed, 2 failed in
/// 80.12s (0:01:20)` (`-q`; a full run frames it in `=`): `[("passed", 17), ("failed", 2)]`.
fn pytest_summary(out: &str) -> Option<Vec<(String, u64)>> {
    out.lines().rev().find_map(|l| {
        let line = l.trim().trim_matches('=').trim();
        let (counts, duration) = line.rsplit_once(" in ")?;
        if !duration.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        counts
            .split(", ")
            .map(|part| {
                let (n, outcome) = part.split_once(' ')?;
                Some((outcome.to_owned(), n.parse().ok()?))
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytest_summary_reads_the_counts() {
        let counts = |pairs: &[(&str, u64)]| {
            Some(
                pairs
                    .iter()
                    .map(|(o, n)| ((*o).to_owned(), *n))
                    .collect::<Vec<_>>(),
            )
        };
        assert_eq!(
            pytest_summary("x\n19 passed in 80.12s (0:01:20)\n"),
            counts(&[("passed", 19)])
        );
        assert_eq!(
            pytest_summary("..\n17 passed, 2 failed, 1 error in 3.50s\n"),
            counts(&[("passed", 17), ("failed", 2), ("error", 1)])
        );
        assert_eq!(
            pytest_summary("===== 3 passed in 0.10s =====\n"),
            counts(&[("passed", 3)])
        );
        assert_eq!(pytest_summary("collected in the end\n"), None);
    }
}
