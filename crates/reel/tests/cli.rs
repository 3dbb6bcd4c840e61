//! The contract every command shares: usage errors exit 64, `--help` documents the exit
//! codes, and a reader that goes away is not an error.

use std::process::{Command, Stdio};

fn reel() -> Command {
    Command::new(env!("CARGO_BIN_EXE_reel"))
}

#[test]
fn usage_errors_exit_64() {
    for args in [
        &["--no-such-flag"][..],
        &["no-such-command"],
        &["stats", "--bogus"],
    ] {
        let out = reel().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(64), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?} says why");
    }
}

#[test]
fn help_lists_the_exit_codes() {
    let out = reel().arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    for code in ["64", "66", "69", "70", "73", "128+N"] {
        assert!(text.contains(code), "--help names exit code {code}");
    }
}

#[test]
fn a_closed_stdout_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.jsonl");
    let mut lines = vec![
        r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z","label":"t","command":["x"]}"#
            .to_owned(),
    ];
    for i in 0..2000 {
        lines.push(format!(
            r#"{{"t":"2026-01-01T00:00:00.000Z","dir":"in","raw":{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"tool{i}"}}}}}}"#
        ));
    }
    std::fs::write(&trace, lines.join("\n") + "\n").unwrap();
    for args in [vec!["stats", "--json"], vec!["check", "--json"]] {
        let mut child = reel()
            .args(&args)
            .arg(&trace)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the reading end before reel writes its (large) report.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("Broken pipe"), "{args:?}: {stderr}");
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{args:?} ends with its own verdict, not an error: {:?} {stderr}",
            out.status
        );
    }
}

/// A trace is outside input: an ESC sequence in a label, a tool name, an error message or
/// an unknown `type` must not reach the terminal raw (set its title, clear it, overwrite
/// the verdict, write the clipboard with OSC 52).
#[test]
fn trace_content_cannot_drive_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    // \u001b]0;..\u0007 sets the title, \u001b[2J clears, \r returns over the line,
    // \u009b is the one-byte CSI.
    // \n then FORGED: a line of its own, if a line break in trace content reached stdout.
    let evil = r"\u001b]0;owned\u0007\u001b[2J\r\u009b2J\nFORGED";
    let meta = format!(
        r#"{{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z","label":"run{evil}","command":["x"]}}"#
    );
    let trace = |name: &str, answer: &str| {
        let lines = [
            meta.clone(),
            format!(
                r#"{{"t":"2026-01-01T00:00:00.000Z","dir":"in","raw":{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"tool{evil}"}}}}}}"#
            ),
            format!(
                r#"{{"t":"2026-01-01T00:00:00.000Z","dir":"out","raw":{{"jsonrpc":"2.0","id":1,"error":{{"code":-1,"message":"{answer}{evil}"}}}}}}"#
            ),
            format!(r#"{{"t":"2026-01-01T00:00:00.000Z","type":"odd{evil}"}}"#),
        ];
        let path = dir.path().join(name);
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        path.to_str().unwrap().to_owned()
    };
    let a = trace("a.jsonl", "no");
    let b = trace("b.jsonl", "nope");
    let d = dir.path().to_str().unwrap();
    for args in [
        vec!["check", &a],
        vec!["stats", &a],
        vec!["ls", d],
        vec!["diff", &a, &b],
        vec!["diff", "--format", "github", &a, &b],
        vec!["--color", "always", "diff", &a, &b],
    ] {
        let out = reel().args(&args).output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("\\u{1b}]0;owned"), "{args:?}: {text}");
        assert!(
            !text.lines().any(|l| l.trim_start().starts_with("FORGED")),
            "{args:?}: trace content started a line: {text}"
        );
        for (i, c) in text.char_indices() {
            let sgr = c == '\u{1b}'
                && args[1] == "always"
                && text[i..].starts_with("\u{1b}[")
                && text[i + 2..]
                    .trim_start_matches(|c: char| c.is_ascii_digit() || c == ';')
                    .starts_with('m');
            assert!(
                !c.is_control() || c == '\n' || sgr,
                "{args:?}: a raw {c:?} reached stdout: {text}"
            );
        }
    }
}

/// Naming a trace: every command that reads one takes a path or a run name with
/// `--dir`, and the same rules (`demo~1`, a directory is not a trace, a file and a run
/// of one name are not guessed between).
mod run_names {
    use super::*;
    use std::path::Path;

    /// A run labelled `label` started at `minute` past midnight, in `dir`.
    fn run(dir: &Path, label: &str, minute: u32, answer: &str) -> std::path::PathBuf {
        let started = format!("2026-01-01T00:{minute:02}:00.000Z");
        let path = dir.join(format!("2026-01-01T00-{minute:02}-00-000Z-{label}.jsonl"));
        let lines = [
            format!(
                r#"{{"v":1,"type":"meta","startedAt":"{started}","label":"{label}","command":["x"]}}"#
            ),
            format!(
                r#"{{"t":"{started}","dir":"in","raw":{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo"}}}}}}"#
            ),
            format!(
                r#"{{"t":"{started}","dir":"out","raw":{{"jsonrpc":"2.0","id":1,"result":{{"content":[{{"type":"text","text":"{answer}"}}]}}}}}}"#
            ),
            format!(r#"{{"t":"{started}","type":"end","exitCode":0,"durationMs":0}}"#),
        ];
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        path
    }

    fn in_dir(cwd: &Path, args: &[&str]) -> std::process::Output {
        reel()
            .args(args)
            .current_dir(cwd)
            .env_remove("REEL_DIR")
            .output()
            .unwrap()
    }

    #[test]
    fn stats_and_check_take_run_names_and_dir() {
        let tmp = tempfile::tempdir().unwrap();
        let runs = tmp.path().join("runs");
        std::fs::create_dir(&runs).unwrap();
        let newest = run(&runs, "demo", 2, "b");
        run(&runs, "demo", 1, "a");
        let out = in_dir(tmp.path(), &["stats", "--json", "--dir", "runs", "demo"]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            doc["file"],
            Path::new("runs")
                .join(newest.file_name().unwrap())
                .display()
                .to_string()
        );
        let out = in_dir(tmp.path(), &["check", "--dir", "runs", "demo", "demo~1"]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("00-02-00-000Z-demo.jsonl: ok"), "{text}");
        assert!(text.contains("00-01-00-000Z-demo.jsonl: ok"), "{text}");
        // REEL_DIR is the default --dir.
        let out = reel()
            .args(["stats", "demo~1"])
            .current_dir(tmp.path())
            .env("REEL_DIR", &runs)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    }

    #[test]
    fn diff_refuses_a_trace_with_itself_and_names_the_run_before() {
        let tmp = tempfile::tempdir().unwrap();
        let runs = tmp.path().join("runs");
        std::fs::create_dir(&runs).unwrap();
        let older = run(&runs, "demo", 1, "a");
        run(&runs, "demo", 2, "b");
        let out = in_dir(tmp.path(), &["diff", "--dir", "runs", "demo", "demo"]);
        assert_eq!(out.status.code(), Some(64), "{out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("are the same file"), "{err}");
        assert!(err.contains("reel diff demo~1 demo"), "{err}");
        let path = older.to_str().unwrap();
        let out = in_dir(tmp.path(), &["diff", path, path]);
        assert_eq!(out.status.code(), Some(64), "{out:?}");
        // The run before the newest, against the newest: their answers differ.
        let out = in_dir(tmp.path(), &["diff", "--dir", "runs", "demo~1", "demo"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
    }

    #[test]
    fn a_directory_named_like_a_run_is_not_taken_for_the_trace() {
        let tmp = tempfile::tempdir().unwrap();
        let runs = tmp.path().join("demo");
        std::fs::create_dir(&runs).unwrap();
        run(&runs, "demo", 1, "a");
        run(&runs, "demo-changed", 2, "b");
        for args in [
            &["stats", "--dir", "demo", "demo"][..],
            &["check", "--dir", "demo", "demo"],
            &["diff", "--dir", "demo", "demo", "demo-changed"],
        ] {
            let out = in_dir(tmp.path(), args);
            assert!(
                matches!(out.status.code(), Some(0 | 1)),
                "{args:?}: {out:?}"
            );
        }
        // No run of that name: the message says what the directory is, and hints once.
        let out = in_dir(tmp.path(), &["stats", "--dir", "demo", "demo/../demo"]);
        assert_eq!(out.status.code(), Some(66), "{out:?}");
        std::fs::create_dir(tmp.path().join("other")).unwrap();
        let out = in_dir(tmp.path(), &["play", "--dir", "demo", "other"]);
        assert_eq!(out.status.code(), Some(66), "{out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("other: a directory, not a trace"), "{err}");
        assert_eq!(err.matches("lists the runs").count(), 1, "{err}");
    }

    #[test]
    fn a_file_and_a_run_of_one_name_are_an_error_naming_both() {
        let tmp = tempfile::tempdir().unwrap();
        let runs = tmp.path().join("runs");
        std::fs::create_dir(&runs).unwrap();
        let recorded = run(&runs, "demo", 1, "a");
        std::fs::copy(&recorded, tmp.path().join("demo")).unwrap();
        let out = in_dir(tmp.path(), &["stats", "--dir", "runs", "demo"]);
        assert_eq!(out.status.code(), Some(64), "{out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("write ./demo for the file"), "{err}");
        let file = recorded.file_name().unwrap().to_str().unwrap();
        assert!(err.contains(&format!("runs/{file} for the run")), "{err}");
        let out = in_dir(tmp.path(), &["stats", "--dir", "runs", "./demo"]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    }

    #[test]
    fn a_missing_trace_says_so_with_one_hint() {
        let tmp = tempfile::tempdir().unwrap();
        for cmd in ["play", "stats", "check", "diff"] {
            let mut args = vec![cmd, "gone.jsonl"];
            if cmd == "diff" {
                args.push("gone2.jsonl");
            }
            let out = in_dir(tmp.path(), &args);
            assert_eq!(out.status.code(), Some(66), "{cmd}: {out:?}");
            let err = String::from_utf8(out.stderr).unwrap();
            assert!(err.contains("gone.jsonl: no such file"), "{cmd}: {err}");
            assert_eq!(err.matches("(give").count(), 1, "{cmd}: {err}");
        }
    }
}
