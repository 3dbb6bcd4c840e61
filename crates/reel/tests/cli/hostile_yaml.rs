//! Hostile YAML (issue 28, item 5): an mcp-vcr transcript nested 100,000 levels deep,
//! and one whose aliases would expand a kilobyte into terabytes ("billion laughs").
//! `reel import` refuses each with an error naming the file and the limit, and `reel ls`
//! on a directory holding them still lists every good run, showing the bad files as
//! skipped with the reason. Each run is under an address-space ceiling (`prlimit
//! --as`), so a parser that builds the expansion fails the test instead of the machine;
//! a wall-clock kill is only a safety net against a hang, never what is asserted.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The address space reel may use here: plenty for a small import, far below what an
/// expanded alias bomb needs.
pub const MEMORY_CEILING: &str = "--as=2147483648";

/// How long a run may take before it is killed as hung (a safety net only).
pub const HANG: Duration = Duration::from_secs(120);

/// What a bounded run gave: its exit status, stdout and stderr.
pub struct Ran {
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

/// `reel ARGS…` under [`MEMORY_CEILING`], killed after [`HANG`] (the test then fails).
pub fn reel_bounded(args: &[&str], stdin: Option<std::fs::File>) -> Ran {
    reel_within(MEMORY_CEILING, args, stdin)
}

/// `reel ARGS…` under the address-space ceiling `ceiling` (`--as=BYTES`), killed after
/// [`HANG`] (the test then fails).
pub fn reel_within(ceiling: &str, args: &[&str], stdin: Option<std::fs::File>) -> Ran {
    let mut cmd = Command::new("prlimit");
    cmd.arg(ceiling)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_reel"))
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("REEL_DIR")
        .stdin(stdin.map_or_else(Stdio::null, Stdio::from))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("prlimit runs reel");
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = out.read_to_end(&mut b);
        b
    });
    let err = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = err.read_to_end(&mut b);
        b
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for reel") {
            break s;
        }
        if start.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            panic!("reel {args:?} did not finish within {HANG:?}: killed");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Ran {
        code: status.code(),
        stdout: out.join().expect("stdout reader"),
        stderr: String::from_utf8_lossy(&err.join().expect("stderr reader")).into_owned(),
    }
}

/// An mcp-vcr transcript whose one message has `payload` (YAML, on its line).
fn transcript(payload: &str) -> String {
    format!(
        "messages:\n- dir: c2s\n  payload: {payload}\n  t: 1\nmeta:\n  recorded_at: \
         '2026-11-30T10:00:00+00:00'\n"
    )
}

fn good_transcript() -> String {
    transcript("{id: 1, jsonrpc: '2.0', method: tools/list}")
}

/// Flow sequences nested `depth` deep.
fn deep_transcript(depth: usize) -> String {
    transcript(&format!("{}{}", "[".repeat(depth), "]".repeat(depth)))
}

/// Anchors `levels` deep, each an alias `width` times to the one before: `width` to
/// the power `levels` copies of one string once expanded.
fn alias_bomb(levels: usize, width: usize) -> String {
    let mut text =
        String::from("messages:\n- dir: c2s\n  t: 1\n  payload:\n    l0: &l0 [\"lol\"]\n");
    for i in 1..levels {
        let refs = vec![format!("*l{}", i - 1); width].join(", ");
        text.push_str(&format!("    l{i}: &l{i} [{refs}]\n"));
    }
    text
}

fn import(src: &Path, out: &Path) -> Ran {
    reel_bounded(
        &["import", src.to_str().unwrap(), "-o", out.to_str().unwrap()],
        None,
    )
}

#[test]
fn yaml_nested_100k_deep_is_refused_with_the_limit_named() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("deep.yaml");
    std::fs::write(&src, deep_transcript(100_000)).unwrap();
    let out = tmp.path().join("deep.jsonl");
    let ran = import(&src, &out);
    assert_eq!(ran.code, Some(66), "stderr: {}", ran.stderr);
    assert!(ran.stderr.contains("deep.yaml"), "{}", ran.stderr);
    assert!(
        ran.stderr.contains("nested more than 128 deep"),
        "{}",
        ran.stderr
    );
    assert!(!out.exists(), "no trace for a refused source");
}

#[test]
fn a_yaml_alias_bomb_is_refused_within_a_memory_ceiling() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("bomb.yaml");
    let bomb = alias_bomb(12, 10);
    assert!(bomb.len() < 2048, "a small file: {} bytes", bomb.len());
    std::fs::write(&src, bomb).unwrap();
    let ran = import(&src, &tmp.path().join("bomb.jsonl"));
    assert_eq!(ran.code, Some(66), "stderr: {}", ran.stderr);
    assert!(ran.stderr.contains("bomb.yaml"), "{}", ran.stderr);
    assert!(
        ran.stderr.contains("aliases expand the document past"),
        "{}",
        ran.stderr
    );
}

#[test]
fn ls_lists_every_good_run_beside_hostile_yaml() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("runs");
    std::fs::create_dir(&dir).unwrap();
    let good = tmp.path().join("good.yaml");
    std::fs::write(&good, good_transcript()).unwrap();
    let ran = import(&good, &dir.join("imported.jsonl"));
    assert_eq!(ran.code, Some(0), "stderr: {}", ran.stderr);
    std::fs::copy(&good, dir.join("transcript.yaml")).unwrap();
    std::fs::write(dir.join("deep.yaml"), deep_transcript(100_000)).unwrap();
    std::fs::write(dir.join("bomb.yaml"), alias_bomb(12, 10)).unwrap();

    let ran = reel_bounded(&["ls", "--json", dir.to_str().unwrap()], None);
    assert_eq!(ran.code, Some(0), "stderr: {}", ran.stderr);
    let v: Value = serde_json::from_slice(&ran.stdout).expect("ls --json prints JSON");
    let mut listed: Vec<&str> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap().rsplit('/').next().unwrap())
        .collect();
    listed.sort_unstable();
    assert_eq!(listed, ["imported.jsonl", "transcript.yaml"], "{v:#}");
    let skipped: Vec<(String, String)> = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let path = s["path"].as_str().unwrap();
            let name = path.rsplit('/').next().unwrap().to_owned();
            (name, s["reason"].as_str().unwrap().to_owned())
        })
        .collect();
    assert_eq!(skipped.len(), 2, "{v:#}");
    for (name, reason) in &skipped {
        let limit = match name.as_str() {
            "bomb.yaml" => "aliases expand",
            "deep.yaml" => "nested more than 128 deep",
            other => panic!("{other} skipped: {reason}"),
        };
        assert!(reason.contains(limit), "{name}: {reason}");
        assert!(reason.contains("mcp-vcr"), "{name}: {reason}");
    }
    // Said to a person too, with the file's name.
    let ran = reel_bounded(&["ls", dir.to_str().unwrap()], None);
    assert_eq!(ran.code, Some(0), "stderr: {}", ran.stderr);
    assert!(ran.stderr.contains("skipped"), "{}", ran.stderr);
    assert!(ran.stderr.contains("deep.yaml"), "{}", ran.stderr);
}

#[test]
fn stats_of_hostile_yaml_says_why_and_exits_66() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("deep.yaml");
    std::fs::write(&src, deep_transcript(100_000)).unwrap();
    let ran = reel_bounded(&["stats", src.to_str().unwrap()], None);
    assert_eq!(ran.code, Some(66), "stderr: {}", ran.stderr);
    assert!(
        ran.stderr.contains("nested more than 128 deep"),
        "{}",
        ran.stderr
    );
}
