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
