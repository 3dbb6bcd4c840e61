//! `reel redact`: a trace recorded without redaction rewritten with the recording's
//! rules, secrets gone, every other byte kept, and still a tape `reel play` answers
//! from (the live request carries the secret; play redacts it by the new meta's rules).

use std::path::Path;

use serde_json::{Value, json};

use crate::harness::play_support::play_all;
use crate::harness::reel;
use crate::harness::sandbox::Sandbox;
use crate::harness::trace::{TraceBuilder, msg, rpc};

const SECRET: &str = "hunter2-0123456789";
const KEY: &str = "AKIAIOSFODNN7EXAMPLE";

fn login(id: u64) -> Value {
    rpc::call(
        json!(id),
        "login",
        json!({"user": "ann", "password": SECRET}),
    )
}

/// A session recorded with --no-redact: the secret in a call's arguments, an AWS key
/// in its answer and in the command line.
fn unredacted(sb: &Sandbox) -> std::path::PathBuf {
    TraceBuilder::new("raw")
        .meta(json!({"command": ["srv", "--token", SECRET]}))
        .lines([
            msg("in", login(1)),
            msg(
                "out",
                rpc::result(json!(1), rpc::text(&format!("key {KEY}"))),
            ),
        ])
        .write(&sb.path("raw.jsonl"))
}

fn run(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    reel()
        .arg("redact")
        .args(args)
        .current_dir(sb.tmp.path())
        .output()
        .unwrap()
}

fn check_notes(path: &Path) -> Vec<String> {
    let out = reel().args(["check", "--json"]).arg(path).output().unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["files"][0]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["rule"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn secrets_go_the_meta_names_the_rules_and_the_tape_still_answers() {
    let sb = Sandbox::new();
    let raw = unredacted(&sb);
    assert_eq!(check_notes(&raw), ["not-redacted"]);
    let out = run(&sb, &["raw.jsonl", "-o", "red.jsonl"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("3 of 4 lines changed"),
        "{out:?}"
    );
    let red = std::fs::read_to_string(sb.path("red.jsonl")).unwrap();
    assert!(!red.contains(SECRET) && !red.contains(KEY), "{red}");
    assert!(check_notes(&sb.path("red.jsonl")).is_empty());
    // The original is untouched.
    assert!(std::fs::read_to_string(&raw).unwrap().contains(SECRET));
    // A live client sends the secret again: play redacts it as the tape was, and answers.
    let played = play_all(&sb, &["red.jsonl"], &[&login(7).to_string()]);
    assert_eq!(played.code, Some(0), "{}", played.stderr);
    let answer = played
        .rest
        .iter()
        .find(|m| m["id"] == 7)
        .expect("an answer");
    assert_eq!(answer["result"]["content"][0]["text"], "key [REDACTED]");
}

#[test]
fn in_place_several_traces_and_the_refusals() {
    let sb = Sandbox::new();
    unredacted(&sb);
    std::fs::copy(sb.path("raw.jsonl"), sb.path("two.jsonl")).unwrap();
    // Several traces need -o DIR or --in-place.
    let out = run(&sb, &["raw.jsonl", "two.jsonl"]);
    assert_eq!(out.status.code(), Some(64), "{out:?}");
    let out = run(&sb, &["raw.jsonl", "two.jsonl", "--in-place"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    for name in ["raw.jsonl", "two.jsonl"] {
        let text = std::fs::read_to_string(sb.path(name)).unwrap();
        assert!(!text.contains(SECRET), "{name}: {text}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(sb.path(name))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{name}");
        }
    }
    // Other rules than the trace was redacted with: refused, the file left as it is.
    let before = std::fs::read_to_string(sb.path("raw.jsonl")).unwrap();
    let out = run(&sb, &["raw.jsonl", "--in-place", "--redact", "MYCO-[0-9]+"]);
    assert_eq!(out.status.code(), Some(64), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("other rules"));
    assert_eq!(
        std::fs::read_to_string(sb.path("raw.jsonl")).unwrap(),
        before
    );
    // To stdout, with one trace; a missing one is 66.
    let out = run(&sb, &["raw.jsonl"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), before);
    assert_eq!(run(&sb, &["gone.jsonl"]).status.code(), Some(66));
}
