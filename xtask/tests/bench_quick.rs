//! `cargo xtask bench --quick reader` runs end to end: it builds reel, generates a small
//! trace, measures every figure and writes the results document. The figures of a quick
//! run mean nothing; that they exist, are positive and carry their targets is the test.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

#[test]
fn the_reader_bench_runs_and_writes_its_results() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["bench", "--quick", "reader"])
        .current_dir(root)
        .output()
        .expect("xtask runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("warm-cache"), "{stdout}");

    let target = std::env::var_os("CARGO_TARGET_DIR").map_or(root.join("target"), |d| root.join(d));
    let results = target.join("bench/quick/results.json");
    let doc: Value = serde_json::from_slice(&std::fs::read(&results).unwrap()).unwrap();
    assert_eq!(doc["schema"], "reel.bench/1");
    assert_eq!(doc["quick"], true);
    let reader = &doc["benches"][0];
    assert_eq!(reader["name"], "reader");
    assert_eq!(reader["ok"], true);
    let figures = reader["figures"].as_array().unwrap();
    let figure = |name: &str| {
        figures
            .iter()
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("no figure {name} in {figures:?}"))
    };
    for name in [
        "reel stats --json",
        "serde_json validation (IgnoredAny)",
        "reel stats / validation",
        "reel stats peak RSS",
        "longest line",
        "reel check",
    ] {
        let v = figure(name)["value"].as_f64();
        assert!(v.is_some_and(|v| v > 0.0), "{name}: {:?}", figure(name));
    }
    assert_eq!(figure("reel stats --json")["target"]["op"], ">=");
    assert_eq!(figure("reel stats --json")["target"]["value"], 400.0);
    assert_eq!(figure("reel stats / validation")["target"]["value"], 0.5);
    let rss_target = figure("reel stats peak RSS")["target"]["value"]
        .as_f64()
        .unwrap();
    let longest = figure("longest line")["value"].as_f64().unwrap();
    let expected = 64.0 + 2.0 * longest / (1u64 << 20) as f64;
    assert!(
        (rss_target - expected).abs() < 1e-9,
        "{rss_target} vs {expected}"
    );
    // The quick trace is 16 MiB of lines near 550 bytes, with a tools/list answer or two.
    assert!((1000.0..=8000.0).contains(&longest), "{longest}");
}
