//! The named suite over real files written by another producer (`../shared/fixtures/`,
//! always present in CI, never copied into the repo):
//! - `reel stats --json` on every fitness-report trace agrees with the
//!   `*.expected-stats.json` beside it on every field that file holds;
//! - every `.jsonl` under `fixtures/mcp-tape/` passes `reel check` with exit 0.

use std::path::{Path, PathBuf};

use serde_json::Value;

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/fixtures/mcp-tape"
);

use crate::harness::reel;

/// Every file under `dir` whose name ends with `suffix`, sorted.
fn files_under(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().ends_with(suffix) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Compares `expected` with `actual` wherever `expected` has a value (objects by the
/// expected keys, `note` ignored; arrays element by element), collecting mismatches as
/// JSON pointers.
fn agree(expected: &Value, actual: &Value, at: &str, problems: &mut Vec<String>) {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                if k == "note" {
                    continue;
                }
                let here = format!("{at}/{k}");
                match a.get(k) {
                    Some(av) => agree(ev, av, &here, problems),
                    None => problems.push(format!("{here}: missing (expected {ev})")),
                }
            }
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                problems.push(format!("{at}: {} elements, expected {}", a.len(), e.len()));
            }
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                agree(ev, av, &format!("{at}/{i}"), problems);
            }
        }
        (Value::Number(e), Value::Number(a)) if e.as_f64() == a.as_f64() => {}
        (e, a) if e == a => {}
        (e, a) => problems.push(format!("{at}: got {a}, expected {e}")),
    }
}

#[test]
#[ignore = "reads ../shared/fixtures: `cargo xtask test` runs it when that directory exists"]
fn stats_agree_with_every_expected_stats_file() {
    let expected_files = files_under(
        &Path::new(FIXTURES).join("fitness-report"),
        ".expected-stats.json",
    );
    assert_eq!(expected_files.len(), 6, "three runs, two planes each");
    let mut problems = Vec::new();
    for expected_path in &expected_files {
        let name = expected_path.file_name().unwrap().to_string_lossy();
        let trace = expected_path.with_file_name(name.replace(".expected-stats.json", ".jsonl"));
        let out = reel()
            .arg("stats")
            .arg("--json")
            .arg(&trace)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            trace.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let actual: Value = serde_json::from_slice(&out.stdout).unwrap();
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(expected_path).unwrap()).unwrap();
        assert_eq!(actual["schema"], "mcp-tape.stats/1");
        assert_eq!(actual["file"], trace.display().to_string());
        let before = problems.len();
        agree(&expected, &actual, "", &mut problems);
        for p in &mut problems[before..] {
            *p = format!("{}: {p}", trace.display());
        }
    }
    assert!(
        problems.is_empty(),
        "disagreements:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_comparison_itself_catches_a_difference() {
    // Guards the helper above: a wrong count, a missing key and a short array all fail.
    let expected: Value = serde_json::json!({"note": "x", "a": {"b": 1}, "c": [1, 2], "d": null});
    let actual: Value = serde_json::json!({"a": {"b": 2}, "c": [1], "e": 0});
    let mut problems = Vec::new();
    agree(&expected, &actual, "", &mut problems);
    assert_eq!(problems.len(), 3, "{problems:?}");
    let mut none = Vec::new();
    agree(
        &expected,
        &serde_json::json!({"a": {"b": 1.0, "z": 1}, "c": [1, 2], "d": null}),
        "",
        &mut none,
    );
    assert!(none.is_empty(), "{none:?}");
}

#[test]
#[ignore = "reads ../shared/fixtures: `cargo xtask test` runs it when that directory exists"]
fn every_mcp_tape_fixture_passes_check() {
    let traces = files_under(Path::new(FIXTURES), ".jsonl");
    assert!(traces.len() >= 6, "fixtures present: {traces:?}");
    let mut failures = Vec::new();
    for trace in &traces {
        let out = reel().arg("check").arg(trace).output().unwrap();
        if out.status.code() != Some(0) {
            failures.push(format!(
                "{}: exit {:?}\n{}{}",
                trace.display(),
                out.status.code(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "reel check failed:\n{}",
        failures.join("\n")
    );
}

/// The other tools' own files: every recording each tool's folder holds imports (sniffed,
/// no `--from`), and every trace the import writes passes `reel check` with exit 0.
#[test]
#[ignore = "reads ../shared/fixtures: `cargo xtask test` runs it when that directory exists"]
fn every_other_tools_file_imports_and_checks() {
    let root = Path::new(FIXTURES).parent().unwrap().to_owned();
    // Folder, and how many recordings at least it holds.
    let tools = [
        ("mcporter", 2),
        ("mcp-vcr", 4),
        ("mcp-cassette", 3),
        ("mcp-recorder", 2),
        ("mcp-rec", 2),
        ("agent-vcr", 1),
        ("mmsp/cache", 5),
    ];
    for (tool, at_least) in tools {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("traces");
        let src = root.join(tool);
        let mut c = reel();
        c.arg("import").arg("--dir").arg(&out).arg(&src);
        let o = c.output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{tool}: {stderr}");
        let traces = files_under(&out, ".jsonl");
        assert!(
            traces.len() >= at_least,
            "{tool}: {} traces from {}: {stderr}",
            traces.len(),
            src.display()
        );
        for t in &traces {
            let o = reel().arg("check").arg(t).output().unwrap();
            assert_eq!(
                o.status.code(),
                Some(0),
                "{tool}: {}: {}{}",
                t.display(),
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
}
