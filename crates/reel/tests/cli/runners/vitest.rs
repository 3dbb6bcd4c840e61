//! The npm package in `js/`, run by vitest itself.
//!
//! `js/test/` is the package's judging suite: the TypeScript MCP SDK client against
//! `reel example server` and server-everything, recorded and replayed offline, drifted
//! calls failing with reel's report (also in a user's vitest run of its own), and the
//! Anthropic SDK against `reel llm` recording aimock and replaying without it. This test
//! runs that suite with the built `reel` (`REEL_BIN`) under the pinned vitest from the
//! peers (`cargo xtask peers`), and reads vitest's JSON report: every test must pass,
//! and as many as the suite holds, so a file vitest silently failed to collect counts.

use std::fs::{self, File};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::harness::play_support::Peers;
use crate::harness::rec_support::wait_limited;
use crate::harness::workspace;

/// The tests in `js/test/*.test.js`; change it with the suite.
const EXPECTED_TESTS: u64 = 29;

/// How long the whole suite may take (it takes seconds).
const SUITE_LIMIT: Duration = Duration::from_secs(300);

#[test]
fn js_package_suite_passes_under_vitest() {
    let peers = Peers::get();
    let vitest = peers
        .root
        .join("vitest-4.1.12/node_modules/vitest/vitest.mjs");
    assert!(
        vitest.exists(),
        "peers missing: run `cargo xtask peers` (looked for {})",
        vitest.display()
    );
    let tmp = tempfile::tempdir().expect("temp dir");
    let report = tmp.path().join("vitest.json");
    let stdout = tmp.path().join("stdout");
    let stderr = tmp.path().join("stderr");

    let mut child = Command::new("node")
        .arg(&vitest)
        .args(["run", "--reporter=default", "--reporter=json"])
        .arg(format!("--outputFile.json={}", report.display()))
        .current_dir(workspace().join("js"))
        .env("REEL_BIN", env!("CARGO_BIN_EXE_reel"))
        .env("REEL_PEERS", &peers.root)
        .env("NO_COLOR", "1")
        .env("TMPDIR", tmp.path())
        .env_remove("REEL_RECORD_MODE")
        .env_remove("REEL_DIR")
        .env_remove("FORCE_COLOR")
        .stdin(Stdio::null())
        .stdout(File::create(&stdout).expect("stdout file"))
        .stderr(File::create(&stderr).expect("stderr file"))
        .spawn()
        .expect("start node (the peers need Node.js 20+ on PATH)");
    let status = wait_limited(&mut child, SUITE_LIMIT);
    let output = format!(
        "--- stdout\n{}\n--- stderr\n{}",
        fs::read_to_string(&stdout).unwrap_or_default(),
        fs::read_to_string(&stderr).unwrap_or_default()
    );
    let status = status.unwrap_or_else(|| {
        panic!(
            "vitest did not finish within {}s\n{output}",
            SUITE_LIMIT.as_secs()
        )
    });

    let doc: Value = fs::read(&report)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_else(|| panic!("vitest wrote no JSON report ({status})\n{output}"));
    let count = |key: &str| doc[key].as_u64().unwrap_or(u64::MAX);
    let failed: Vec<String> = doc["testResults"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|file| file["assertionResults"].as_array().into_iter().flatten())
        .filter(|t| t["status"] != "passed")
        .map(|t| format!("{} ({})", t["fullName"], t["status"]))
        .collect();
    assert!(
        status.success() && doc["success"] == true && failed.is_empty(),
        "the js/ suite failed ({status}); not passed: {failed:?}\n{output}"
    );
    assert_eq!(
        (count("numTotalTests"), count("numPassedTests")),
        (EXPECTED_TESTS, EXPECTED_TESTS),
        "vitest ran another number of tests than js/test holds\n{output}"
    );
}
