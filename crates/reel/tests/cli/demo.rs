//! `reel demo` as a user runs it on a fresh machine: nothing but reel, a temporary
//! directory, exit 0, and every step printed with the command that does it.

use std::process::Command;

#[test]
fn demo_runs_the_whole_loop_in_a_temp_dir_and_exits_0() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_reel"))
        .arg("demo")
        .env("TMPDIR", tmp.path())
        .env("NO_COLOR", "1")
        .env_remove("REEL_DIR")
        .output()
        .expect("run reel demo");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for step in [
        "example client --",
        " rec --dir ",
        " play --dir ",
        "--changed",
        " diff --dir ",
        " stats ",
    ] {
        assert!(text.contains(step), "no `{step}` command printed:\n{text}");
    }
    assert!(
        text.contains("the client got the same 6 answers from the tape"),
        "{text}"
    );
    assert!(
        text.contains("exit 1: output drift, and the drift is the weather answer"),
        "{text}"
    );
    assert!(text.contains("Every step behaved as expected"), "{text}");
    // The files went to a new directory under TMPDIR.
    let dirs: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let traces = std::fs::read_dir(&dirs[0]).unwrap().count();
    assert_eq!(traces, 2, "two recordings in {}", dirs[0].display());
}

#[test]
fn demo_with_dir_writes_there() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("new/sub");
    let out = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(["demo", "--dir"])
        .arg(&dir)
        .output()
        .expect("run reel demo");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().any(|n| n.ends_with("-demo.jsonl")),
        "{names:?}"
    );
    assert!(
        names.iter().any(|n| n.ends_with("-demo-changed.jsonl")),
        "{names:?}"
    );
}

/// `reel demo --dir demo` leaves a directory `./demo` beside the runs named `demo`: the
/// steps that name the runs must find the runs, not the directory.
#[test]
fn demo_with_a_relative_dir_named_like_its_run() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(["demo", "--dir", "demo"])
        .current_dir(tmp.path())
        .env("NO_COLOR", "1")
        .output()
        .expect("run reel demo");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("Every step behaved as expected"), "{text}");
}
