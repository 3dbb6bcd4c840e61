//! The GitHub Actions workflow in `examples/github-actions/reel.yml`: its reel steps
//! run as GitHub runs them (`bash -e` on the step's script), on tapes of reel's example
//! server, and do what its comments say: pass on a server that answers as recorded,
//! annotate and report output drift without failing (unless asked to), and refuse an
//! empty tape directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::harness::workspace;

/// The `run` script of the step named `name` in job `job`.
fn step(job: &str, name: &str) -> String {
    let path = workspace().join("examples/github-actions/reel.yml");
    let text = std::fs::read_to_string(&path).expect("the workflow");
    let doc: Value = serde_norway::from_str(&text).expect("the workflow is YAML");
    doc["jobs"][job]["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .find(|s| s["name"] == name)
        .and_then(|s| s["run"].as_str())
        .unwrap_or_else(|| panic!("no step {name:?} in job {job}"))
        .to_owned()
}

/// Runs `script` as a GitHub `run` step in `dir` with the workflow's env, the built
/// reel first on PATH: exit code and stdout + stderr.
fn run_step(dir: &Path, script: &str, env: &[(&str, &str)]) -> (Option<i32>, String) {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_reel"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let file = dir.join("step.sh");
    std::fs::write(&file, script).unwrap();
    let mut c = Command::new("bash");
    c.arg("-e")
        .arg(&file)
        .current_dir(dir)
        .env("PATH", path)
        .env("TAPES", "tapes")
        .env("MCP_SERVER", "reel example server")
        .env("REEL_FAIL_ON_OUTPUT", "false")
        .env("NO_COLOR", "1")
        .env_remove("REEL_DIR");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().expect("run bash");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

/// A tape of reel's example client against its example server, in `dir/tapes`.
fn record_tape(dir: &Path) {
    let bin = env!("CARGO_BIN_EXE_reel");
    let out = Command::new(bin)
        .args(["example", "client", "--", bin, "rec", "--dir"])
        .arg(dir.join("tapes"))
        .args(["--name", "weather", "--", bin, "example", "server"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn reports(dir: &Path) -> Vec<Value> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir.join("reel-reports")).unwrap() {
        let xml = std::fs::read(e.unwrap().path()).unwrap();
        v.push(crate::harness::junit(&xml));
    }
    v
}

#[test]
fn the_workflow_verifies_tapes_against_the_live_server_and_reports_drift_as_it_says() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    record_tape(dir);

    let (code, out) = run_step(dir, &step("replay", "Check the tapes"), &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("ok: 0 errors"), "{out}");

    let verify = step("verify", "Verify the tapes against the live server");
    let (code, out) = run_step(dir, &verify, &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("reel: every tape verified"), "{out}");
    assert!(
        !out.contains("::warning") && !out.contains("::error"),
        "{out}"
    );
    let [report] = reports(dir).try_into().unwrap();
    assert_eq!(report["failures"], 0, "{report}");
    assert!(report["tests"].as_u64().unwrap() >= 4, "{report}");

    // A server that answers one call differently: output drift, annotated on the tape
    // and failed in JUnit, but no failed job unless asked for.
    std::fs::remove_dir_all(dir.join("reel-reports")).unwrap();
    let changed = [("MCP_SERVER", "reel example server --changed")];
    let (code, out) = run_step(dir, &verify, &changed);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("::warning file=tapes/") && l.contains("output drift")),
        "{out}"
    );
    assert!(out.contains("::warning::reel: output drift"), "{out}");
    let [report] = reports(dir).try_into().unwrap();
    assert_eq!(report["failures"], 1, "{report}");

    let strict = [
        ("MCP_SERVER", "reel example server --changed"),
        ("REEL_FAIL_ON_OUTPUT", "true"),
    ];
    let (code, out) = run_step(dir, &verify, &strict);
    assert_eq!(code, Some(1), "{out}");

    // A server that cannot start is trouble, and fails the job.
    let (code, out) = run_step(dir, &verify, &[("MCP_SERVER", "/nonexistent/server")]);
    assert!(code.is_some_and(|c| c >= 64), "{code:?} {out}");
    assert!(out.contains("::error::reel verify could not run"), "{out}");

    // No tapes: the check says how to record them.
    let empty = tempfile::tempdir().unwrap();
    std::fs::create_dir(empty.path().join("tapes")).unwrap();
    let (code, out) = run_step(empty.path(), &step("replay", "Check the tapes"), &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("::error::no tapes in tapes"), "{out}");
}
