//! `cargo xtask bench --quick reader rec rec-http play` runs end to end: it builds reel
//! and the bench peers, measures every figure and writes the results document. The
//! figures of a quick run mean nothing; that they exist, carry their targets, and that
//! each ratio target stands next to the ceiling measured in the same run, is the test.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

#[test]
fn the_benches_run_and_write_their_results() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["bench", "--quick", "reader", "rec", "rec-http", "play"])
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

    // Every target of the proxies and the replay has its ceiling beside it.
    let bench = |name: &str| {
        let b = doc["benches"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["name"] == name)
            .unwrap_or_else(|| panic!("no bench {name}"));
        assert_eq!(b["ok"], true, "{b}");
        b["figures"].as_array().unwrap().clone()
    };
    let figure_of = |name: &str, n: &str| {
        bench(name)
            .into_iter()
            .find(|f| f["name"] == n)
            .unwrap_or_else(|| panic!("{name}: no figure {n}"))
    };
    // A ratio (>=) or a cost over the relay (<=, a difference that may come out
    // negative in a quick run), each with the ceiling it is judged against beside it.
    for (name, targeted, op, target, ceiling) in [
        (
            "rec",
            "throughput through reel ÷ direct, 1 KiB, W=16",
            ">=",
            0.9,
            "throughput through the bare relay ÷ direct, 1 KiB, W=16",
        ),
        (
            "rec",
            "throughput through reel ÷ direct, 1 MiB sequential",
            ">=",
            0.9,
            "throughput through the bare relay ÷ direct, 1 MiB sequential",
        ),
        (
            "rec-http",
            "rec --url throughput ÷ direct",
            ">=",
            0.8,
            "bare TCP relay throughput ÷ direct",
        ),
        (
            "play",
            "reel play / (a) Python",
            ">=",
            3.0,
            "(b) Rust / (a) Python: the most any server reaches vs (a)",
        ),
        (
            "play",
            "reel play / (b) Rust",
            ">=",
            0.9,
            "reel play, tape indexed before the calls / (b) Rust",
        ),
        (
            "rec",
            "throughput through reel ÷ bare relay, 1 KiB, W=16",
            ">=",
            0.9,
            "throughput through the bare relay ÷ direct, 1 KiB, W=16",
        ),
        (
            "rec",
            "throughput through reel ÷ bare relay, 1 MiB sequential",
            ">=",
            0.95,
            "throughput through the bare relay ÷ direct, 1 MiB sequential",
        ),
        (
            "rec-http",
            "rec --url throughput ÷ bare TCP relay",
            ">=",
            0.85,
            "bare TCP relay throughput ÷ direct",
        ),
        (
            "rec",
            "reel CPU per forwarded message − the relay's, 1 KiB sequential",
            "<=",
            0.7,
            "bare relay CPU per forwarded message, 1 KiB sequential",
        ),
        (
            "rec-http",
            "rec --url CPU per request − the relay's",
            "<=",
            8.0,
            "bare TCP relay CPU per proxied request",
        ),
    ] {
        let t = figure_of(name, targeted);
        assert_eq!(t["target"]["op"], op, "{t}");
        assert_eq!(t["target"]["value"], target, "{t}");
        assert!(
            t["value"].as_f64().is_some_and(|v| op == "<=" || v > 0.0),
            "{t}"
        );
        let c = figure_of(name, ceiling);
        assert!(c["value"].as_f64().is_some_and(|v| v > 0.0), "{c}");
    }
    // The floors of durable-before-forward beside reel's cost over the relay: the
    // relay writing each chunk to a file, and copying it into a shared mapping.
    for floor in [
        "throughput through the tee relay ÷ bare relay, 1 KiB, W=16",
        "throughput through the mapped tee relay ÷ bare relay, 1 KiB, W=16",
        "throughput through the tee relay ÷ bare relay, 1 MiB sequential",
        "throughput through the mapped tee relay ÷ bare relay, 1 MiB sequential",
    ] {
        let f = figure_of("rec", floor);
        assert!(f["value"].as_f64().is_some_and(|v| v > 0.0), "{f}");
    }
    for floor in [
        "tee relay CPU per forwarded message − the relay's, 1 KiB sequential",
        "mapped tee relay CPU per forwarded message − the relay's, 1 KiB sequential",
    ] {
        let f = figure_of("rec", floor);
        assert!(f["value"].as_f64().is_some_and(f64::is_finite), "{f}");
    }
}
