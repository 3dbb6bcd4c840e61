//! The contract every command shares: usage errors exit 64, `--help` documents the exit
//! codes, and a reader that goes away is not an error.

use std::process::{Command, Stdio};

use crate::harness::reel;

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

/// `reel --version` names the release and the commit the binary was built from (the
/// checkout's HEAD here; a packager's `REEL_BUILD_COMMIT` elsewhere).
#[test]
fn version_names_the_commit_it_was_built_from() {
    // Outside a git checkout (a source archive) the build says `unknown`.
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map_or_else(
            || "unknown".to_owned(),
            |o| String::from_utf8_lossy(&o.stdout).trim().to_owned(),
        );
    let commit = std::env::var("REEL_BUILD_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .unwrap_or(head);
    let out = reel().arg("--version").output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("reel {} ({commit})\n", env!("CARGO_PKG_VERSION"))
    );
}

/// `reel completions bash` is a script bash runs: a command and a flag complete from it.
/// The other shells' scripts name the same commands and flags.
#[test]
fn completion_scripts_complete_commands_and_flags() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("reel.bash");
    let out = reel().args(["completions", "bash"]).output().unwrap();
    assert!(out.status.success());
    std::fs::write(&script, &out.stdout).unwrap();
    let complete = |words: &str| {
        let w: Vec<&str> = words.split(' ').collect();
        let (cur, prev) = (w[w.len() - 1], w[w.len() - 2]);
        // Bash calls the function with the command, the word being completed and the
        // one before it.
        let line = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD={}; COMP_LINE='{words}'; \
             COMP_POINT={}; _reel reel {cur} {prev}; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display(),
            w.len() - 1,
            words.len()
        );
        let out = Command::new("bash").args(["-c", &line]).output().unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(complete("reel re"), "rec\nredact\n");
    assert_eq!(complete("reel rec --upstream"), "--upstream-ca\n");
    for shell in ["zsh", "fish", "powershell", "elvish"] {
        let out = reel().args(["completions", shell]).output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        for word in ["rec", "play", "completions", "upstream-ca"] {
            assert!(text.contains(word), "{shell} names {word}");
        }
    }
    let out = reel().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(64),
        "an unknown shell is a usage error"
    );
}

/// `reel man --dir` writes reel's page and one per command, nested ones included; each
/// page documents every long flag its command's `--help` does, and `reel man COMMAND`
/// prints the same page.
#[test]
fn man_pages_document_every_command_and_flag() {
    let dir = tempfile::tempdir().unwrap();
    let out = reel()
        .args(["man", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let help = |args: &[&str]| {
        let out = reel().args(args).arg("--help").output().unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let commands: Vec<String> = help(&[])
        .lines()
        .filter(|l| l.starts_with("  ") && !l[2..].starts_with([' ', '-']))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .filter(|c| c.chars().all(|ch| ch.is_ascii_lowercase()))
        .collect();
    assert!(commands.len() >= 15, "{commands:?}");
    for (page, args) in std::iter::once(("reel".to_owned(), vec![]))
        .chain(
            commands
                .iter()
                .map(|c| (format!("reel-{c}"), vec![c.as_str()])),
        )
        .chain([("reel-example-server".to_owned(), vec!["example", "server"])])
    {
        let text = std::fs::read_to_string(dir.path().join(format!("{page}.1")))
            .unwrap_or_else(|e| panic!("{page}.1: {e}"));
        assert!(text.contains(&format!(".TH {page} 1")), "{page}");
        for flag in help(&args)
            .split_whitespace()
            .filter(|w| w.starts_with("--") && w.len() > 2)
        {
            let end = flag[2..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .map_or(flag.len(), |i| i + 2);
            let flag = flag[..end].trim_end_matches('-');
            let roff = flag.replace('-', "\\-");
            assert!(text.contains(&roff), "{page}.1 lacks {flag}");
        }
    }
    let one = reel().args(["man", "rec"]).output().unwrap();
    let file = std::fs::read(dir.path().join("reel-rec.1")).unwrap();
    assert_eq!(one.stdout, file);
    let none = reel().args(["man", "nosuch"]).output().unwrap();
    assert_eq!(none.status.code(), Some(64));
}

/// `reel` alone is a usage error: help on stderr, exit 64 (reel's own table), not 0.
#[test]
fn no_subcommand_is_a_usage_error() {
    let out = reel().output().unwrap();
    assert_eq!(out.status.code(), Some(64));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("Usage: reel"), "{err}");
}

/// Every command a user is told to type is in `reel --help`: the demo prints
/// `reel example client -- …`.
#[test]
fn help_lists_every_command_the_demo_prints() {
    let out = reel().arg("--help").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for command in [
        "rec", "play", "verify", "diff", "check", "stats", "ls", "redact", "demo", "example",
        "view",
    ] {
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with(&format!("{command} "))),
            "`{command}` missing from reel --help:\n{text}"
        );
    }
    let out = reel().args(["example", "--help"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
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

/// A reader that goes away does not hide a verdict: `reel diff A B | head -1` and
/// `reel verify … | true` still exit with the drift they found, and `reel check
/// --list-rules | head` neither panics nor fails.
#[test]
fn a_closed_stdout_keeps_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let closed = |args: &[&std::ffi::OsStr]| {
        let mut child = reel()
            .args(args)
            .env("REEL_DIR", dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        (out.status.code(), stderr)
    };
    let os = |words: &[&str]| -> Vec<std::ffi::OsString> {
        words.iter().map(|w| std::ffi::OsString::from(*w)).collect()
    };
    let run = |v: Vec<std::ffi::OsString>| {
        let v: Vec<&std::ffi::OsStr> = v.iter().map(|s| s.as_os_str()).collect();
        closed(&v)
    };
    assert_eq!(run(os(&["check", "--list-rules"])).0, Some(0));

    // Two runs of the example server, the second changed: drift.
    let me = std::ffi::OsString::from(env!("CARGO_BIN_EXE_reel"));
    let record = |name: &str, changed: bool| {
        let mut cmd = reel();
        cmd.args(["example", "client", "--"])
            .arg(&me)
            .args(["rec", "--dir"])
            .arg(dir.path())
            .args(["--name", name, "--"])
            .arg(&me)
            .args(["example", "server"]);
        if changed {
            cmd.arg("--changed");
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    };
    record("first", false);
    record("second", true);
    for format in ["text", "json", "github"] {
        let (code, err) = run(os(&["diff", "--format", format, "first", "second"]));
        assert_eq!(code, Some(1), "diff --format {format}: {err}");
    }
    let mut verify = os(&["verify", "first", "--no-record", "--"]);
    verify.extend([
        me.clone(),
        "example".into(),
        "server".into(),
        "--changed".into(),
    ]);
    let (code, err) = run(verify);
    assert_eq!(code, Some(1), "verify: {err}");
    // check goes on past the closed pipe to every trace, and keeps its verdict.
    let (code, err) = run(os(&["check", "first", "second"]));
    assert_eq!(code, Some(0), "check: {err}");
}

/// `check`, `stats`, `diff` and `verify` show a progress bar on a terminal (here a pty made by
/// `script`), and nothing on stderr when it is a pipe.
#[test]
fn long_reads_show_progress_on_a_terminal_only() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("big.jsonl");
    let mut text = String::from(
        r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z","label":"big","command":["x"]}"#,
    );
    text.push('\n');
    let pad = "x".repeat(1000);
    for i in 0..3000 {
        text.push_str(&format!(
            r#"{{"t":"2026-01-01T00:00:00.000Z","dir":"in","raw":{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"t","arguments":{{"pad":"{pad}"}}}}}}}}"#
        ));
        text.push('\n');
    }
    std::fs::write(&trace, text).unwrap();
    let other = dir.path().join("other.jsonl");
    std::fs::copy(&trace, &other).unwrap();
    let bin = env!("CARGO_BIN_EXE_reel");
    let (t, o) = (trace.to_str().unwrap(), other.to_str().unwrap());
    for (label, args) in [
        ("reel stats", vec!["stats", "--json", t]),
        ("reel check", vec!["check", "--quiet", t]),
        ("reel diff", vec!["diff", t, o]),
        (
            "reel verify",
            vec!["verify", t, "--no-record", "--", "true"],
        ),
    ] {
        let line = std::iter::once(bin)
            .chain(args.iter().copied())
            .map(|w| format!("'{w}'"))
            .collect::<Vec<_>>()
            .join(" ");
        let on_tty = Command::new("script")
            .args(["-qec", &format!("{line} >/dev/null"), "/dev/null"])
            .env("REEL_PROGRESS_AFTER_MS", "0")
            .output()
            .expect("run script(1)");
        let shown = String::from_utf8_lossy(&on_tty.stdout);
        assert!(
            shown.contains(label),
            "{label}: no bar on a terminal: {shown:?}"
        );
        let piped = reel()
            .args(&args)
            .env("REEL_PROGRESS_AFTER_MS", "0")
            .output()
            .unwrap();
        assert!(piped.stderr.is_empty(), "{label}: {piped:?}");
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
    // \u202e and \u2066 reorder what follows on screen (bidi override and isolate).
    let evil = r"\u001b]0;owned\u0007\u001b[2J\r\u009b2J\u202eevil\u2066\nFORGED";
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
            let bidi = matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
            assert!(
                (!c.is_control() && !bidi) || c == '\n' || sgr,
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

    /// A working directory holding an empty `runs/` trace directory.
    fn with_runs_dir() -> (tempfile::TempDir, std::path::PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let runs = tmp.path().join("runs");
        std::fs::create_dir(&runs).unwrap();
        (tmp, runs)
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
        let (tmp, runs) = with_runs_dir();
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
        let (tmp, runs) = with_runs_dir();
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
        let (tmp, runs) = with_runs_dir();
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

/// `--ignore-file` is one flag everywhere: a file that cannot be read is an input that
/// cannot be read (66) in `diff`, `verify` and `play` alike (it was 64 in one, 66 in the other),
/// and a bad pointer in it is a usage error (64) naming file:line.
#[test]
fn an_ignore_file_is_read_one_way_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let example = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/everything-demo.jsonl"
    );
    let missing = dir.path().join("missing.txt");
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "# comment\n/ok\nnot-a-pointer\n").unwrap();
    for (file, code, says) in [(&missing, 66, "cannot read it"), (&bad, 64, "bad.txt:3")] {
        let f = file.to_str().unwrap();
        for args in [
            vec!["diff", "--ignore-file", f, example, example],
            vec!["verify", example, "--ignore-file", f, "--", "true"],
            vec!["play", example, "--ignore-file", f],
        ] {
            let out = reel().args(&args).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
            assert!(err.contains(says), "{args:?}: {err}");
        }
    }
}

/// Through a real terminal (script(1) gives each command a pty for stdout and stderr):
/// what reel says on stderr quotes outside input too — the file names `ls` skips, the
/// method of a live request `play` cannot answer, a path that names nothing — and none
/// of it reaches the terminal raw: no ESC, OSC, C1 CSI (U+009B) or bidi override.
#[test]
fn outside_input_cannot_drive_the_terminal_through_stderr_either() {
    let dir = tempfile::tempdir().unwrap();
    let evil_raw = "\u{1b}]0;owned\u{7}\u{1b}[2J\u{9b}2J\u{202e}evil";
    let evil_json = r"\u001b]0;owned\u0007\u001b[2J\u009b2J\u202eevil";
    // A file ls skips, named with the sequence itself.
    std::fs::write(
        dir.path().join(format!("x{evil_raw}.jsonl")),
        "not a trace\n",
    )
    .unwrap();
    let tape = dir.path().join("tape.jsonl");
    std::fs::write(
        &tape,
        r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z","label":"t","command":["x"]}
"#,
    )
    .unwrap();
    let live = dir.path().join("live.jsonl");
    std::fs::write(
        &live,
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/{evil_json}","params":{{}}}}"#) + "\n",
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_reel");
    let q = |p: &std::path::Path| p.to_str().unwrap().to_owned();
    let d = q(dir.path());
    let missing = format!("{d}/gone{evil_raw}.jsonl");
    for (what, line, says) in [
        ("ls", format!("'{bin}' ls '{d}'"), "skipped"),
        (
            "play",
            // Its stdout is the protocol, for the client: only stderr is looked at.
            format!("'{bin}' play '{}' < '{}' > /dev/null", q(&tape), q(&live)),
            "miss",
        ),
        ("stats", format!("'{bin}' stats '{missing}'"), "gone"),
        (
            "colour",
            format!("'{bin}' --color always stats '{missing}'"),
            "gone",
        ),
    ] {
        let out = Command::new("script")
            .args(["-qec", &line, "/dev/null"])
            .stdin(Stdio::null())
            .env("NO_COLOR", "1")
            .output()
            .expect("run script(1)");
        let shown = String::from_utf8_lossy(&out.stdout);
        assert!(shown.contains(says), "{what}: {shown:?}");
        assert!(shown.contains("\\u{1b}]0;owned"), "{what}: {shown:?}");
        for (i, c) in shown.char_indices() {
            // The pty turns each line break into CR LF; with --color always, reel's
            // own SGR colours pass.
            let line_end = c == '\r' && shown[i + 1..].starts_with('\n');
            let sgr = c == '\u{1b}'
                && what == "colour"
                && shown[i..].starts_with("\u{1b}[")
                && shown[i + 2..]
                    .trim_start_matches(|c: char| c.is_ascii_digit() || c == ';')
                    .starts_with('m');
            let bidi = matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
            assert!(
                (!c.is_control() && !bidi) || c == '\n' || line_end || sgr,
                "{what}: a raw {c:?} reached the terminal: {shown:?}"
            );
        }
    }
}
