//! The session's life: who closes what, which status reel exits with, and what the
//! trace says when things go wrong.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::harness::rec_support::{
    Entry, Session, Trace, eventually, reel, run, start, wait_limited,
};

#[test]
fn closing_reels_stdin_closes_the_servers_stdin() {
    let s = Session::new();
    // The server reads until EOF, then says so and exits 5.
    let cmd = s.command(&[], &["sh", "-c", "cat >/dev/null; echo got-eof; exit 5"]);
    let out = run(cmd, b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n".to_vec());
    assert_eq!(out.stdout, b"got-eof\n");
    assert_eq!(out.code(), Some(5));
    let trace = s.trace();
    assert_eq!(trace.end().exit_code, Some(5));
    assert_eq!(trace.raws("in").len(), 1);
}

#[test]
fn the_server_exiting_ends_the_session_while_reels_stdin_is_still_open() {
    let s = Session::new();
    let script = r#"echo '{"jsonrpc":"2.0","method":"notifications/bye"}'; echo 'bye' >&2; exit 3"#;
    let mut r = start(s.command(&[], &["sh", "-c", script]));
    // Keep reel's stdin open: reel must not wait for it.
    let _stdin = r.stdin.take();
    let out = r.wait();
    assert_eq!(out.code(), Some(3), "{}", out.stderr_text());
    assert_eq!(
        out.stdout,
        b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/bye\"}\n"
    );
    let trace = s.trace();
    let end = trace.end();
    assert_eq!(end.exit_code, Some(3));
    assert!(end.duration_ms.is_some());
    let counts = end.counts.expect("counts");
    assert_eq!((counts.inbound, counts.outbound, counts.events), (0, 1, 1));
    // The server's stderr was drained and recorded before `end`.
    assert!(matches!(
        trace.events("reel.stderr")[..],
        [Entry::Event { text: Some(t), .. }] if t == "bye"
    ));
}

#[test]
fn a_server_killed_by_signal_n_gives_128_plus_n() {
    for (sig, code) in [("KILL", 137), ("SEGV", 139)] {
        let s = Session::new();
        let out = run(
            s.command(&[], &["sh", "-c", &format!("kill -{sig} $$")]),
            Vec::new(),
        );
        assert_eq!(out.code(), Some(code), "SIG{sig}: {}", out.stderr_text());
        assert_eq!(s.trace().end().exit_code, Some(i64::from(code)));
    }
}

#[test]
fn sigint_sigterm_and_sighup_to_reel_are_forwarded_to_the_server() {
    for (sig, code) in [("INT", 41), ("TERM", 42), ("HUP", 43)] {
        let s = Session::new();
        // The server traps the signal and exits with its own code: if reel had died of
        // the signal instead, its status would be 128+N and the server's word missing.
        let script = format!(
            "trap 'echo got-{sig}; exit {code}' {sig}; echo ready; while :; do sleep 0.05; done"
        );
        let r = start(s.command(&[], &["sh", "-c", &script]));
        let pid = r.child.id().to_string();
        // The trace shows `ready` once the server runs.
        s.wait_until_written("\"text\":\"ready\"");
        let killed = Command::new("kill")
            .args([&format!("-{sig}"), &pid])
            .status()
            .unwrap();
        assert!(killed.success());
        let out = r.wait();
        assert_eq!(out.code(), Some(code), "SIG{sig}: {}", out.stderr_text());
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("ready\ngot-{sig}\n")
        );
        assert_eq!(s.trace().end().exit_code, Some(i64::from(code)));
    }
}

#[test]
fn a_terminal_ctrl_c_reaches_the_server_once_through_reel() {
    use std::os::unix::process::CommandExt;
    // A terminal signals its whole foreground process group; reel leads one here, as an
    // interactive `reel rec` does. The server must get the SIGINT from reel alone: in
    // reel's group it got it twice, and many servers take a second SIGINT as "exit now".
    let s = Session::new();
    let script = "import signal, sys\n\
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})\n\
        print('ready', flush=True)\n\
        info = signal.sigwaitinfo({signal.SIGINT})\n\
        print('from', info.si_pid, flush=True)\n\
        sys.exit(41)\n";
    let mut cmd = s.command(&[], &["python3", "-c", script]);
    cmd.process_group(0);
    let r = start(cmd);
    let reel_pid = r.child.id();
    // The trace shows `ready` once the server runs.
    s.wait_until_written("\"text\":\"ready\"");
    let killed = Command::new("kill")
        .args(["-INT", "--", &format!("-{reel_pid}")])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = r.wait();
    assert_eq!(out.code(), Some(41), "{}", out.stderr_text());
    // The first SIGINT the server took came from reel, not from the "terminal".
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("ready\nfrom {reel_pid}\n")
    );
}

#[test]
fn a_forwarded_signal_reaches_the_processes_the_server_started() {
    // A launcher (`npx`, `uvx`, a shell script) runs the real server as its child. A
    // SIGTERM to reel goes to the server's whole process group, as a terminal's or a
    // client's group signal would have, so the child gets it too.
    let s = Session::new();
    let child =
        "trap 'echo child-got-TERM >&2; exit 0' TERM; echo ready; while :; do sleep 0.05; done";
    let script = format!("sh -c \"{child}\" & wait");
    let r = start(s.command(&[], &["sh", "-c", &script]));
    let pid = r.child.id().to_string();
    // The trace shows `ready` once the server runs.
    s.wait_until_written("\"text\":\"ready\"");
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    let out = r.wait();
    assert!(
        s.trace()
            .events("reel.stderr")
            .iter()
            .any(|e| matches!(e, Entry::Event { text: Some(t), .. } if t == "child-got-TERM")),
        "the server's child was not signalled: {}",
        out.stderr_text()
    );
}

#[test]
fn a_server_that_ignores_sigterm_and_eof_dies_with_a_killed_reel() {
    killed_reel_leaves_no_server(false);
}

/// The same behind a wrapper that forks it (`sh -c`, as `npx` and `uvx` do): the
/// wrapper dies with reel, and the server, its grandchild, must too.
#[test]
fn a_server_behind_a_wrapper_dies_with_a_killed_reel() {
    killed_reel_leaves_no_server(true);
}

fn killed_reel_leaves_no_server(wrapped: bool) {
    use std::os::unix::process::CommandExt;
    // A client that gives up on reel kills its process group (the Python SDK does:
    // SIGTERM, then SIGKILL). The server, in a group of its own, must not outlive reel
    // even when it ignores SIGTERM and the end of its stdin.
    let s = Session::new();
    let script = "import os, signal, time\n\
        signal.signal(signal.SIGTERM, signal.SIG_IGN)\n\
        print('pid', os.getpid(), flush=True)\n\
        while True: time.sleep(1)\n";
    let file = s.sb.dir().join("server.py");
    std::fs::write(&file, script).unwrap();
    // `; true` keeps sh from exec-ing python in its place.
    let wrapper = format!("python3 '{}'; true", file.display());
    let mut cmd = if wrapped {
        s.command(&[], &["sh", "-c", &wrapper])
    } else {
        s.command(&[], &["python3", "-c", script])
    };
    cmd.process_group(0);
    let r = start(cmd);
    let reel_pid = r.child.id();
    let mut server_pid = None;
    let said = eventually(Duration::from_secs(30), || {
        server_pid = s
            .written_so_far()
            .split("\"text\":\"pid ")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .and_then(|p| p.parse::<u32>().ok());
        server_pid.is_some()
    });
    assert!(said, "the server never said its pid");
    let server_pid = server_pid.unwrap().to_string();
    let alive = |pid: &str| {
        Command::new("kill")
            .args(["-0", pid])
            .stderr(Stdio::null())
            .status()
            .unwrap()
            .success()
    };
    assert!(alive(&server_pid));
    let killed = Command::new("kill")
        .args(["-KILL", "--", &format!("-{reel_pid}")])
        .status()
        .unwrap();
    assert!(killed.success());
    let _ = r.wait();
    assert!(
        eventually(Duration::from_secs(30), || !alive(&server_pid)),
        "the server outlived reel"
    );
}

#[test]
fn a_command_that_cannot_start_gives_127_a_message_and_a_complete_trace() {
    let s = Session::new();
    let out = run(
        s.command(&[], &["/nonexistent/mcp-server", "--port", "1"]),
        Vec::new(),
    );
    assert_eq!(out.code(), Some(127));
    let err = out.stderr_text();
    assert!(
        err.contains("cannot start `/nonexistent/mcp-server --port 1`")
            && err.contains("No such file or directory"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    let trace = s.trace();
    assert_eq!(
        trace.meta().command,
        Some(serde_json::json!([
            "/nonexistent/mcp-server",
            "--port",
            "1"
        ]))
    );
    assert_eq!(trace.end().exit_code, Some(127));
    assert_eq!(trace.lines.len(), 2);
}

#[test]
fn a_trace_that_cannot_be_created_gives_73_and_the_server_never_runs() {
    let s = Session::new();
    let file = s.sb.dir().join("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    let marker = s.sb.dir().join("server-ran");
    let mut cmd = reel();
    cmd.arg("rec").arg("--dir").arg(file.join("traces")).args([
        "--",
        "sh",
        "-c",
        &format!("touch '{}'", marker.display()),
    ]);
    let out = run(cmd, Vec::new());
    assert_eq!(out.code(), Some(73), "{}", out.stderr_text());
    assert!(
        out.stderr_text()
            .contains("cannot create the trace directory"),
        "{}",
        out.stderr_text()
    );
    assert!(!marker.exists(), "the server was started");
    // --dir naming the file itself: the message says what is wrong with it.
    let mut cmd = reel();
    cmd.arg("rec").arg("--dir").arg(&file).args(["--", "true"]);
    let out = run(cmd, Vec::new());
    assert_eq!(out.code(), Some(73), "{}", out.stderr_text());
    assert!(
        out.stderr_text()
            .contains("a-file: it exists and is not a directory"),
        "{}",
        out.stderr_text()
    );
}

#[test]
fn stderr_is_passed_through_and_recorded_unless_no_stderr() {
    let script = "echo 'Starting server...' >&2; printf 'no newline' >&2";
    let s = Session::new();
    let out = run(s.command(&[], &["sh", "-c", script]), Vec::new());
    assert_eq!(out.code(), Some(0));
    assert!(
        out.stderr_text().contains("Starting server...\nno newline"),
        "{}",
        out.stderr_text()
    );
    let texts: Vec<String> = s
        .trace()
        .events("reel.stderr")
        .iter()
        .filter_map(|e| match e {
            Entry::Event { text, .. } => text.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["Starting server...", "no newline"]);

    let s = Session::new();
    let out = run(
        s.command(&["--no-stderr"], &["sh", "-c", script]),
        Vec::new(),
    );
    assert!(out.stderr_text().contains("Starting server...\nno newline"));
    assert!(s.trace().events("reel.stderr").is_empty());
}

#[test]
fn kill_9_of_reel_leaves_a_trace_readable_to_its_last_complete_line() {
    let s = Session::new();
    let mut child = s
        .command(&[], &["cat"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    // Stream messages until reel is gone.
    let writer = std::thread::spawn(move || {
        let pad = "x".repeat(900);
        for i in 0.. {
            let line = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/call\",\"params\":{{\"pad\":\"{pad}\"}}}}\n"
            );
            if stdin.write_all(line.as_bytes()).is_err() {
                break;
            }
        }
    });
    let reader = std::thread::spawn(move || {
        let mut n = 0u64;
        for line in BufReader::new(stdout).split(b'\n') {
            if line.is_err() {
                break;
            }
            n += 1;
        }
        n
    });
    let s_dir = s.dir();
    let busy = eventually(Duration::from_secs(60), || {
        std::fs::read_dir(&s_dir)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .and_then(|e| std::fs::metadata(e.path()).ok())
            .is_some_and(|m| m.len() > 4 * 1024 * 1024)
    });
    assert!(busy, "the trace never grew");
    child.kill().unwrap(); // SIGKILL, mid-stream
    let status = wait_limited(&mut child, Duration::from_secs(30)).expect("reel died");
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
    let _ = writer.join();
    let echoed = reader.join().unwrap();

    let trace = Trace::read(&s.trace_path());
    // Every complete line parses; only a torn last line may not.
    match (&trace.unparsed[..], trace.torn_tail) {
        ([], _) => {}
        ([_], true) => {}
        (bad, torn) => panic!("unparsable lines {bad:?} (torn tail: {torn})"),
    }
    assert!(matches!(trace.lines.first(), Some(Entry::Meta(_))));
    assert!(
        !trace.lines.iter().any(|l| matches!(l, Entry::End(_))),
        "no end line after kill -9"
    );
    let ins = trace.raws("in");
    assert!(ins.len() > 1000, "{} messages recorded", ins.len());
    // Recorded in order, none skipped.
    for (i, raw) in ins.iter().enumerate() {
        assert!(
            raw.starts_with(&format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},")),
            "line {i}: {}",
            &raw[..40]
        );
    }
    assert!(echoed > 0);
    check_says_interrupted(&s.trace_path());
}

/// `reel check` on an interrupted trace: no errors, and it says the session has no end.
fn check_says_interrupted(path: &std::path::Path) {
    let (code, rules) = crate::harness::rec_support::check(path);
    assert_eq!(code, Some(0), "reel check found errors: {rules:?}");
    assert!(
        rules.iter().any(|r| r == "no-end"),
        "reel check said: {rules:?}"
    );
}

/// A client that closed its ends of reel's stdout and stderr made reel panic (exit 101)
/// on its first `reel:` notice: std's `eprintln!` panics on EPIPE. The forwarding
/// thread died with it, so the trace lost the server's output and its `end`.
#[test]
fn a_client_that_closed_reels_stdout_and_stderr_loses_nothing_from_the_trace() {
    let s = Session::new();
    let script = r#"read line; i=0; while [ $i -lt 20 ]; do echo "{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{\"i\":$i}}"; echo "log $i" >&2; i=$((i+1)); done; exit 4"#;
    let mut cmd = s.command(&[], &["sh", "-c", script]);
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start reel");
    // The client goes away before anything is said: both read ends closed.
    drop(child.stdout.take());
    drop(child.stderr.take());
    let mut stdin = child.stdin.take().expect("stdin");
    let _ = stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
    drop(stdin);
    let status =
        wait_limited(&mut child, crate::harness::rec_support::RUN_LIMIT).expect("reel ended");
    assert_eq!(status.code(), Some(4), "the server's status, not a panic");
    let trace = s.trace();
    assert_eq!(trace.end().exit_code, Some(4));
    assert_eq!(trace.raws("in").len(), 1);
    assert_eq!(trace.raws("out").len(), 20);
    assert_eq!(trace.events("reel.stderr").len(), 20);
}

/// The client's thread is never waited for, so a line the client had begun without
/// ending it (no LF yet) when the server exited was lost from the trace, although the
/// server had received it and answered.
#[test]
fn a_client_line_without_newline_is_recorded_when_the_server_exits_first() {
    let s = Session::new();
    let request = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    // The server reads exactly the request's bytes, answers, and exits.
    let script = format!(
        r#"dd bs=1 count={} of=/dev/null 2>/dev/null; echo '{{"jsonrpc":"2.0","id":1,"result":{{}}}}'"#,
        request.len()
    );
    let mut r = start(s.command(&[], &["sh", "-c", &script]));
    let mut stdin = r.stdin.take().expect("stdin");
    stdin.write_all(request).expect("write the request");
    stdin.flush().expect("flush");
    // reel's stdin stays open until reel has ended.
    let out = r.wait();
    drop(stdin);
    assert_eq!(out.code(), Some(0), "{}", out.stderr_text());
    let trace = s.trace();
    assert_eq!(
        trace.raws("in"),
        vec![std::str::from_utf8(request).expect("UTF-8")]
    );
    assert_eq!(trace.raws("out").len(), 1);
}

/// `reel rec ARGS…` with files limited to `bytes` (`ulimit -f`; a write past it fails
/// as on a full disk).
fn with_file_limit(s: &Session, bytes: u64, command: &[&str]) -> Command {
    let inner = s.command(&[], command);
    let mut c = Command::new("prlimit");
    c.arg(format!("--fsize={bytes}"))
        .arg("--")
        .arg(inner.get_program())
        .args(inner.get_args());
    c.current_dir(s.sb.dir());
    c
}

#[test]
fn a_trace_write_failing_midway_exits_74_and_says_the_servers_status() {
    let s = Session::new();
    let server = r#"i=0; while [ $i -lt 2000 ]; do echo "{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{\"i\":$i}}"; i=$((i+1)); done; exit 5"#;
    let out = run(
        with_file_limit(&s, 16 << 10, &["sh", "-c", server]),
        Vec::new(),
    );
    let err = out.stderr_text();
    assert_eq!(out.code(), Some(74), "{err}");
    assert!(err.contains("is incomplete"), "{err}");
    assert!(err.contains("server's own status was 5"), "{err}");
    // The traffic went on: the client got every line.
    let forwarded = String::from_utf8_lossy(&out.stdout);
    assert_eq!(forwarded.lines().count(), 2000);
    // What the trace holds is whole lines, up to where the disk gave out.
    let trace = std::fs::read_to_string(s.trace_path()).unwrap();
    assert!(
        trace.len() <= 16 << 10 && trace.ends_with('\n'),
        "{}",
        trace.len()
    );
}

/// A message too long to copy into the writer's line is written in parts, and still as
/// one write: when the disk gives out inside it, the trace ends at the line before.
#[test]
fn a_long_message_cut_by_the_disk_leaves_whole_lines() {
    let s = Session::new();
    let server = r#"echo '{"jsonrpc":"2.0","method":"n","params":{}}'; printf '{"jsonrpc":"2.0","method":"n","params":{"t":"'; head -c 2097152 /dev/zero | tr '\0' a; printf '"}}\n'; exit 0"#;
    let out = run(
        with_file_limit(&s, 1 << 20, &["sh", "-c", server]),
        Vec::new(),
    );
    let err = out.stderr_text();
    assert_eq!(out.code(), Some(74), "{err}");
    // The client got the long line whole.
    let long = r#"{"jsonrpc":"2.0","method":"n","params":{"t":""#.len() + (2 << 20) + 4;
    let first = r#"{"jsonrpc":"2.0","method":"n","params":{}}"#.len() + 1;
    assert_eq!(out.stdout.len(), first + long, "{err}");
    let trace = std::fs::read_to_string(s.trace_path()).unwrap();
    assert!(trace.ends_with('\n'), "the trace ends on a whole line");
    for line in trace.lines() {
        serde_json::from_str::<serde_json::Value>(line).expect("every line is whole JSON");
    }
    assert!(
        trace.len() < 1 << 20,
        "the long line is not in: {}",
        trace.len()
    );
}

#[test]
fn a_trace_whose_first_line_cannot_be_written_leaves_no_file() {
    let s = Session::new();
    let out = run(with_file_limit(&s, 0, &["true"]), Vec::new());
    assert_eq!(out.code(), Some(73), "{}", out.stderr_text());
    let left: Vec<_> = std::fs::read_dir(s.dir()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// `kill -9` of reel at random points of a busy session, twenty times: every line the
/// client had received, and every line the server had, is in the trace (reel writes a
/// line to the trace file before it delivers the bytes that complete it), and the
/// server does not outlive reel.
#[test]
fn after_kill_9_the_trace_holds_every_line_either_peer_received() {
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let seed_shown = seed;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for run in 0..20 {
        let s = Session::new();
        let received = s.sb.dir().join("server-received.jsonl");
        let mut r = start(s.command(&["--no-redact"], &["tee", received.to_str().unwrap()]));
        let mut to_reel = r.stdin.take().unwrap();
        // The client: writes requests as fast as reel takes them, in bursts.
        let writer = std::thread::spawn(move || {
            for i in 0.. {
                let burst: String = (0..8)
                    .map(|k| {
                        format!(
                            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}}\n",
                            i * 8 + k
                        )
                    })
                    .collect();
                if to_reel.write_all(burst.as_bytes()).is_err() {
                    break;
                }
            }
        });
        std::thread::sleep(Duration::from_millis(20 + next() % 200));
        let _ = Command::new("kill")
            .args(["-KILL", &r.child.id().to_string()])
            .status();
        let client_got = r.wait().stdout;
        let _ = writer.join();
        // No orphan: the server (`tee`, named by its unique output path) is gone.
        let marker = received.to_str().unwrap().to_owned();
        let server_alive = || {
            std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
                std::fs::read(e.path().join("cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&marker))
            })
        };
        assert!(
            eventually(Duration::from_secs(10), || !server_alive()),
            "run {run}: the server outlived reel"
        );
        // Whole lines only: a line cut by the kill was never received.
        let whole = |bytes: &[u8]| -> Vec<String> {
            let text = String::from_utf8_lossy(bytes);
            let end = text.rfind('\n').map_or(0, |i| i + 1);
            text[..end].lines().map(str::to_owned).collect()
        };
        let client_lines = whole(&client_got);
        // tee may still be writing what it read when reel died; give it a moment.
        std::thread::sleep(Duration::from_millis(100));
        let server_lines = whole(&std::fs::read(&received).unwrap_or_default());
        // Killed before it made its trace: then nothing went through it either.
        let made = std::fs::read_dir(s.dir()).is_ok_and(|mut d| d.next().is_some());
        if !made {
            assert!(
                client_lines.is_empty() && server_lines.is_empty(),
                "run {run}"
            );
            continue;
        }
        let trace = std::fs::read_to_string(s.trace_path()).unwrap();
        let recorded = |dir: &str| -> Vec<String> {
            trace
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter(|v| v["dir"] == dir)
                .map(|v| v["raw"].to_string())
                .collect()
        };
        let canon = |l: &String| {
            serde_json::from_str::<serde_json::Value>(l)
                .unwrap()
                .to_string()
        };
        let (ins, outs) = (recorded("in"), recorded("out"));
        let client_lines: Vec<String> = client_lines.iter().map(canon).collect();
        let server_lines: Vec<String> = server_lines.iter().map(canon).collect();
        assert!(
            outs.len() >= client_lines.len() && outs[..client_lines.len()] == client_lines[..],
            "run {run} (seed {seed_shown}): the client got {} lines, the trace holds {} out",
            client_lines.len(),
            outs.len()
        );
        assert!(
            ins.len() >= server_lines.len() && ins[..server_lines.len()] == server_lines[..],
            "run {run} (seed {seed_shown}): the server got {} lines, the trace holds {} in",
            server_lines.len(),
            ins.len()
        );
    }
}
