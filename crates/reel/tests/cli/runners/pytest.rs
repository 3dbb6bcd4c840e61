//! The pytest plugin in `python/`, run by pytest itself.
//!
//! `python/tests/` is the plugin's judging suite: the Python MCP SDK client against `reel
//! example server` and server-everything, recorded and replayed offline in each record
//! mode, drifted calls failing with reel's miss report (checked with pytest's `pytester`
//! on inner test files), and the `anthropic` SDK against `reel llm` recording llmock and
//! replaying without it. This test runs that suite with the built `reel` (`REEL_BIN`) on
//! the peers' venv, where `cargo xtask peers` installs pytest and the plugin, and reads
//! pytest's summary line: every test must pass, and as many as the suite holds, so a file
//! pytest failed to collect counts.

use std::fs::{self, File};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::harness::play_support::Peers;
use crate::harness::rec_support::wait_limited;
use crate::harness::workspace;

/// The tests in `python/tests/test_*.py`; change it with the suite.
const EXPECTED_TESTS: u64 = 24;

/// How long the whole suite may take (a few minutes on two cores).
const SUITE_LIMIT: Duration = Duration::from_secs(900);

#[test]
fn python_package_suite_passes_under_pytest() {
    let peers = Peers::get();
    let tmp = tempfile::tempdir().expect("temp dir");
    let stdout = tmp.path().join("stdout");
    let stderr = tmp.path().join("stderr");

    let mut child = Command::new(&peers.python)
        .args([
            "-m",
            "pytest",
            "python/tests",
            "-p",
            "no:cacheprovider",
            "-q",
        ])
        .args(["--color", "no", "-o", "console_output_style=classic"])
        .current_dir(workspace())
        .env("REEL_BIN", env!("CARGO_BIN_EXE_reel"))
        .env("REEL_PEERS", &peers.root)
        .env("TMPDIR", tmp.path())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("NO_COLOR", "1")
        .env_remove("REEL_RECORD_MODE")
        .env_remove("REEL_LLM_UPSTREAM")
        .env_remove("REEL_DIR")
        .env_remove("PYTEST_ADDOPTS")
        .env_remove("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
        .stdin(Stdio::null())
        .stdout(File::create(&stdout).expect("stdout file"))
        .stderr(File::create(&stderr).expect("stderr file"))
        .spawn()
        .expect("start the peers' python");
    let status = wait_limited(&mut child, SUITE_LIMIT);
    let out = fs::read_to_string(&stdout).unwrap_or_default();
    let output = format!(
        "--- stdout\n{out}\n--- stderr\n{}",
        fs::read_to_string(&stderr).unwrap_or_default()
    );
    let status = status.unwrap_or_else(|| {
        panic!(
            "pytest did not finish within {}s\n{output}",
            SUITE_LIMIT.as_secs()
        )
    });

    let counts = summary(&out)
        .unwrap_or_else(|| panic!("pytest printed no summary line ({status})\n{output}"));
    let count = |outcome: &str| {
        counts
            .iter()
            .find(|(o, _)| o == outcome)
            .map_or(0, |(_, n)| *n)
    };
    let others: Vec<&(String, u64)> = counts.iter().filter(|(o, _)| o != "passed").collect();
    assert!(
        status.success() && others.is_empty(),
        "the python/ suite failed ({status}): {others:?}\n{output}"
    );
    assert_eq!(
        count("passed"),
        EXPECTED_TESTS,
        "pytest ran another number of tests than python/tests holds\n{output}"
    );
}

/// The outcome counts of pytest's last summary line, such as `17 passed, 2 failed in
/// 80.12s (0:01:20)` (`-q`; a full run frames it in `=`): `[("passed", 17), ("failed", 2)]`.
fn summary(out: &str) -> Option<Vec<(String, u64)>> {
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

#[test]
fn summary_reads_pytest_counts() {
    let counts = |pairs: &[(&str, u64)]| {
        Some(
            pairs
                .iter()
                .map(|(o, n)| ((*o).to_owned(), *n))
                .collect::<Vec<_>>(),
        )
    };
    assert_eq!(
        summary("x\n19 passed in 80.12s (0:01:20)\n"),
        counts(&[("passed", 19)])
    );
    assert_eq!(
        summary("..\n17 passed, 2 failed, 1 error in 3.50s\n"),
        counts(&[("passed", 17), ("failed", 2), ("error", 1)])
    );
    assert_eq!(
        summary("===== 3 passed in 0.10s =====\n"),
        counts(&[("passed", 3)])
    );
    assert_eq!(summary("collected in the end\n"), None);
}
