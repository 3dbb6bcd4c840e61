//! `reel play` against real MCP clients, replaying their own recordings (made here with
//! `reel rec`):
//! - the Python `mcp` 2.3 client against `@modelcontextprotocol/server-everything`
//!   (legacy era after a refused `server/discover` probe; progress; sampling,
//!   elicitation and roots asked by the server) and against a Python SDK `MCPServer`
//!   (2026-07-28): the same client script, unchanged, prints the same result checksums
//!   from the tape, also when it presents another client name and version;
//! - the 2026-07-28 `input_required` round trip against reel's own Python SDK server,
//!   and a client that answers the round differently (client drift, exit 4);
//! - the MCP Inspector CLI and mcporter replaying their own recordings, and mcporter
//!   answered from the Inspector's recording;
//! - the TypeScript SDK client's progress callbacks, which only fire when the progress
//!   reaches it in another read than the call's result (replay delivers them apart);
//! - the Python client's concurrent calls, after which it re-lists tools as its timing
//!   makes it (replay answers list reads again).
//!
//! Peers come from `$REEL_PEERS`, else `<workspace>/.peers` (`cargo xtask peers`); when
//! they are missing the tests fail and say so.

use crate::harness::play_support as support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::*;

const EVERYTHING: &str = "@modelcontextprotocol/server-everything/dist/index.js";
const INSPECTOR: &str = "@modelcontextprotocol/inspector-cli/build/index.js";
const MCPORTER: &str = "mcporter/dist/cli.js";

/// One interop scenario's scratch space: the trace directory of `reel rec` and the
/// wrapper scripts the clients start as their server.
struct Stage {
    sb: Sandbox,
    peers: Peers,
}

/// How one `reel play` run went, read from what its wrapper left behind.
struct Played {
    code: i32,
    stderr: String,
    record: PathBuf,
}

impl Stage {
    fn new() -> Stage {
        Stage {
            sb: Sandbox::new(),
            peers: Peers::get(),
        }
    }

    fn traces(&self) -> PathBuf {
        self.sb.path("traces")
    }

    /// A script that runs `reel rec --dir <traces> -- <server…>` (some clients cannot
    /// pass a `--` through to their server command).
    fn rec_script(&self, server: &[&str]) -> PathBuf {
        let mut cmd = vec![
            env!("CARGO_BIN_EXE_reel").to_owned(),
            "rec".into(),
            "--dir".into(),
            self.traces().display().to_string(),
            "--".into(),
        ];
        cmd.extend(server.iter().map(|s| s.to_string()));
        let p = self.sb.path("rec.sh");
        script(&p, &format!("exec {}", shell_words(&cmd)));
        p
    }

    /// A script that runs `reel play <trace> --record <dir> <extra…>` and leaves its
    /// stderr and exit code next to it (the client starts it, so the test cannot wait
    /// for it directly).
    fn play_script(&self, name: &str, trace: &Path, extra: &[&str]) -> PathBuf {
        let dir = self.sb.path(name);
        std::fs::create_dir_all(&dir).unwrap();
        let mut cmd = vec![
            env!("CARGO_BIN_EXE_reel").to_owned(),
            "play".into(),
            trace.display().to_string(),
            "--record".into(),
            dir.join("record").display().to_string(),
        ];
        cmd.extend(extra.iter().map(|s| s.to_string()));
        let p = dir.join("play.sh");
        script(
            &p,
            &format!(
                "{} 2>{}\necho $? >{}.tmp && mv {}.tmp {}",
                shell_words(&cmd),
                dir.join("stderr").display(),
                dir.join("code").display(),
                dir.join("code").display(),
                dir.join("code").display()
            ),
        );
        p
    }

    /// What the play run called `name` did (waits for its wrapper to finish).
    fn played(&self, name: &str) -> Played {
        let dir = self.sb.path(name);
        let code_file = dir.join("code");
        let deadline = Instant::now() + Duration::from_secs(30);
        while !code_file.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let code = std::fs::read_to_string(&code_file)
            .unwrap_or_else(|_| panic!("reel play ({name}) did not finish"))
            .trim()
            .parse()
            .expect("exit code");
        let record = std::fs::read_dir(dir.join("record"))
            .expect("the replay was recorded")
            .map(|e| e.unwrap().path())
            .next()
            .expect("one replay trace");
        Played {
            code,
            stderr: std::fs::read_to_string(dir.join("stderr")).unwrap_or_default(),
            record,
        }
    }

    /// The one trace `reel rec` wrote.
    fn recorded(&self) -> PathBuf {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.traces())
            .expect("reel rec wrote a trace")
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        assert_eq!(files.len(), 1, "{files:?}");
        files.remove(0)
    }

    fn python(&self, args: &[&str]) -> Output {
        let out = Command::new(&self.peers.python)
            .args(args)
            .current_dir(self.sb.tmp.path())
            .output()
            .expect("run the Python client");
        assert_eq!(
            out.status.code(),
            Some(0),
            "client failed: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// A node CLI run from `node_modules` (the Inspector CLI resolves `../package.json`
    /// against its working directory).
    fn node(&self, script: &str, args: &[&str]) -> Output {
        let out = Command::new("node")
            .arg(self.peers.node_module(script))
            .args(args)
            .current_dir(&self.peers.node_modules)
            .output()
            .expect("run node");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{script} failed: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }
}

fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| format!("'{}'", w.replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The replay's own trace: (dir, origin, method or "response <id>", raw) per message.
fn replay_lines(path: &Path) -> Vec<(String, String, String, Value)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l.get("raw").is_some())
        .map(|l| {
            let raw = l["raw"].clone();
            let what = raw["method"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| format!("response {}", raw["id"]));
            (
                l["dir"].as_str().unwrap_or_default().to_owned(),
                l["origin"].as_str().unwrap_or_default().to_owned(),
                what,
                raw,
            )
        })
        .collect()
}

fn assert_clean(p: &Played) {
    assert_eq!(p.code, 0, "reel play: {}", p.stderr);
    assert!(
        p.stderr.contains(" 0 missed, 0 client drift"),
        "{}",
        p.stderr
    );
}

/// The Python client against server-everything: record, then replay to the same script
/// and to the same script presenting another client identity.
#[test]
fn python_client_and_server_everything_replay_identically() {
    let st = Stage::new();
    let client = Peers::script("client.py");
    let everything = st.peers.node_module(EVERYTHING);
    let rec = st.rec_script(&["node", everything.to_str().unwrap(), "stdio"]);
    let live = st.python(&[
        client.to_str().unwrap(),
        "everything",
        "--",
        rec.to_str().unwrap(),
    ]);
    let want = stdout(&live);
    assert!(want.ends_with("ALL OK\n"), "{want}");
    let trace = st.recorded();

    let play = st.play_script("same", &trace, &[]);
    let replay = st.python(&[
        client.to_str().unwrap(),
        "everything",
        "--",
        play.to_str().unwrap(),
    ]);
    assert_eq!(
        stdout(&replay),
        want,
        "the same client prints the same results"
    );
    let played = st.played("same");
    assert_clean(&played);

    // What the replay did: the server's requests were asked with fresh ids and
    // answered; progress carried the live request's own token.
    let lines = replay_lines(&played.record);
    for method in ["sampling/createMessage", "elicitation/create", "roots/list"] {
        let asked = lines
            .iter()
            .find(|(d, o, m, _)| d == "out" && o == "tape" && m == method)
            .unwrap_or_else(|| panic!("{method} was not asked"));
        let id = asked.3["id"].clone();
        assert!(
            lines
                .iter()
                .any(|(d, _, m, _)| d == "in" && *m == format!("response {id}")),
            "{method} was not answered"
        );
    }
    let call = lines
        .iter()
        .find(|(d, _, m, raw)| {
            d == "in"
                && m == "tools/call"
                && raw.pointer("/params/name")
                    == Some(&Value::from("trigger-long-running-operation"))
        })
        .expect("the long-running call");
    let token = call
        .3
        .pointer("/params/_meta/progressToken")
        .cloned()
        .expect("a token");
    let progress: Vec<&Value> = lines
        .iter()
        .filter(|(_, _, m, _)| m == "notifications/progress")
        .map(|l| &l.3)
        .collect();
    assert_eq!(progress.len(), 3);
    assert!(
        progress
            .iter()
            .all(|p| p.pointer("/params/progressToken") == Some(&token))
    );

    let other = st.play_script("other", &trace, &[]);
    let as_other = st.python(&[
        Peers::script("play_client_as.py").to_str().unwrap(),
        "another-agent",
        "7.1.2",
        client.to_str().unwrap(),
        "everything",
        "--",
        other.to_str().unwrap(),
    ]);
    assert_eq!(
        stdout(&as_other),
        want,
        "another client identity still matches"
    );
    let played = st.played("other");
    assert_clean(&played);
    let text = std::fs::read_to_string(&played.record).unwrap();
    assert!(
        text.contains("another-agent"),
        "the other identity was sent"
    );
}

/// The Python client against a Python SDK server speaking 2026-07-28 (identity and
/// capabilities in every request's `_meta`).
#[test]
fn python_client_and_a_2026_07_28_server_replay_identically() {
    let st = Stage::new();
    let client = Peers::script("client.py");
    let python = st.peers.python.to_str().unwrap().to_owned();
    let server = Peers::script("demo_server.py");
    let rec = st.rec_script(&[&python, server.to_str().unwrap()]);
    let live = st.python(&[
        client.to_str().unwrap(),
        "demo",
        "--",
        rec.to_str().unwrap(),
    ]);
    let want = stdout(&live);
    let trace = st.recorded();
    let recorded = std::fs::read_to_string(&trace).unwrap();
    assert!(recorded.contains("\"2026-07-28\""), "the session is modern");

    let play = st.play_script("same", &trace, &[]);
    let replay = st.python(&[
        client.to_str().unwrap(),
        "demo",
        "--",
        play.to_str().unwrap(),
    ]);
    assert_eq!(stdout(&replay), want);
    assert_clean(&st.played("same"));

    let other = st.play_script("other", &trace, &[]);
    let as_other = st.python(&[
        Peers::script("play_client_as.py").to_str().unwrap(),
        "another-agent",
        "7.1.2",
        client.to_str().unwrap(),
        "demo",
        "--",
        other.to_str().unwrap(),
    ]);
    assert_eq!(stdout(&as_other), want);
    assert_clean(&st.played("other"));
}

/// A tape recorded with a 2026-07-28 client (`server/discover`, no `initialize`) serves
/// a legacy client: its `initialize` is answered from the recorded discover result, as
/// the server itself answers it (the same `connect` line as a live legacy session), and
/// every call after it is answered from the tape.
#[test]
fn a_modern_tape_serves_a_legacy_client_through_its_discover_result() {
    let st = Stage::new();
    let client = Peers::script("client.py");
    let python = st.peers.python.to_str().unwrap().to_owned();
    let server = Peers::script("demo_server.py");
    let rec = st.rec_script(&[&python, server.to_str().unwrap()]);
    let client = client.to_str().unwrap();
    let modern = st.python(&[
        client,
        "demo",
        "--mode",
        "auto",
        "--",
        rec.to_str().unwrap(),
    ]);
    assert!(stdout(&modern).ends_with("ALL OK\n"), "{}", stdout(&modern));
    let trace = st.recorded();
    let recorded = std::fs::read_to_string(&trace).unwrap();
    assert!(recorded.contains("server/discover") && !recorded.contains(r#""method":"initialize""#));

    let direct = st.python(&[
        client,
        "demo",
        "--mode",
        "legacy",
        "--",
        &python,
        server.to_str().unwrap(),
    ]);
    let play = st.play_script("legacy", &trace, &[]);
    let legacy = st.python(&[
        client,
        "demo",
        "--mode",
        "legacy",
        "--",
        play.to_str().unwrap(),
    ]);
    let out = stdout(&legacy);
    assert!(out.ends_with("ALL OK\n"), "{out}");
    let connect = |text: &str| text.lines().next().unwrap_or_default().to_owned();
    assert_eq!(
        connect(&out),
        connect(&stdout(&direct)),
        "the handshake as the server gave it"
    );
    let played = st.played("legacy");
    assert_clean(&played);
    assert!(
        played
            .stderr
            .contains("1 handshake answered from the other era's"),
        "{}",
        played.stderr
    );
    assert!(
        played.stderr.contains("; 0 recorded exchanges unused"),
        "{}",
        played.stderr
    );
}

/// input_required (2026-07-28): the tape hands out the recorded round and its
/// requestState; the client's retry matches the recorded retry; other answers are drift.
#[test]
fn an_input_required_round_trip_replays_and_other_answers_are_drift() {
    let st = Stage::new();
    let client = Peers::script("play_mrtr_client.py");
    let python = st.peers.python.to_str().unwrap().to_owned();
    let server = Peers::script("play_mrtr_server.py");
    let rec = st.rec_script(&[&python, server.to_str().unwrap()]);
    let live = st.python(&[client.to_str().unwrap(), "--", rec.to_str().unwrap()]);
    let want = stdout(&live);
    assert!(want.contains("TEXT booked Lyon on monday"), "{want}");
    let trace = st.recorded();
    let recorded = std::fs::read_to_string(&trace).unwrap();
    assert!(
        recorded.contains(r#""resultType":"input_required""#),
        "the server asked with input_required"
    );
    assert!(
        recorded.contains(r#""inputResponses""#),
        "the client retried"
    );

    let play = st.play_script("same", &trace, &[]);
    let replay = st.python(&[client.to_str().unwrap(), "--", play.to_str().unwrap()]);
    assert_eq!(stdout(&replay), want);
    assert_clean(&st.played("same"));

    let friday = st.play_script("friday", &trace, &[]);
    let drifted = st.python(&[
        client.to_str().unwrap(),
        "--day",
        "friday",
        "--",
        friday.to_str().unwrap(),
    ]);
    assert_eq!(
        stdout(&drifted),
        want,
        "the recorded booking is still the answer"
    );
    let played = st.played("friday");
    assert_eq!(played.code, 4, "{}", played.stderr);
    assert!(
        played
            .stderr
            .contains(r#"content/day: "monday" -> "friday""#),
        "{}",
        played.stderr
    );

    let lenient = st.play_script("lenient", &trace, &["--lenient"]);
    st.python(&[
        client.to_str().unwrap(),
        "--day",
        "friday",
        "--",
        lenient.to_str().unwrap(),
    ]);
    assert_eq!(st.played("lenient").code, 0);
}

/// The MCP Inspector CLI and mcporter replay their own recordings; mcporter is also
/// answered from the Inspector's (another client, another request sequence).
#[test]
fn inspector_cli_and_mcporter_replay_their_own_recordings() {
    let st = Stage::new();
    let everything = st.peers.node_module(EVERYTHING);
    let rec = st.rec_script(&["node", everything.to_str().unwrap(), "stdio"]);
    let call = [
        "--method",
        "tools/call",
        "--tool-name",
        "echo",
        "--tool-arg",
        "message=hi",
    ];
    let mut args = vec![rec.to_str().unwrap()];
    args.extend(call);
    let live = st.node(INSPECTOR, &args);
    let inspector_trace = st.recorded();
    let play = st.play_script("inspector", &inspector_trace, &[]);
    let mut args = vec![play.to_str().unwrap()];
    args.extend(call);
    let replay = st.node(INSPECTOR, &args);
    assert_eq!(stdout(&replay), stdout(&live));
    assert!(stdout(&live).contains("Echo: hi"));
    assert_clean(&st.played("inspector"));

    // mcporter, its own recording.
    std::fs::rename(&inspector_trace, st.sb.path("inspector.jsonl")).unwrap();
    let inspector_trace = st.sb.path("inspector.jsonl");
    let rec_cmd = rec.to_str().unwrap();
    let run_mcporter = |server: &str| {
        st.node(
            MCPORTER,
            &[
                "call",
                "--stdio",
                server,
                "echo",
                "message=hi",
                "--output",
                "json",
            ],
        )
    };
    let live = run_mcporter(rec_cmd);
    let mcporter_trace = st.recorded();
    let play = st.play_script("mcporter", &mcporter_trace, &[]);
    let replay = run_mcporter(play.to_str().unwrap());
    assert_eq!(stdout(&replay), stdout(&live));
    assert_clean(&st.played("mcporter"));

    // mcporter answered from the Inspector's recording: another client name and
    // version, and requests the Inspector made that mcporter does not (left unused).
    let play = st.play_script("cross", &inspector_trace, &[]);
    let cross = run_mcporter(play.to_str().unwrap());
    let parsed =
        |o: &Output| -> Value { serde_json::from_slice(&o.stdout).expect("mcporter prints JSON") };
    assert_eq!(parsed(&cross), parsed(&live));
    let played = st.played("cross");
    assert_clean(&played);
    assert!(played.stderr.contains("unused: "), "{}", played.stderr);
}

/// The README's Inspector CLI example, in its argument order: the Inspector's flags
/// first (`--tool-arg` first among them, since it takes every word up to the next
/// flag), then reel's command with the server after `--`.
#[test]
fn inspector_cli_records_through_reel_as_the_readme_shows() {
    let st = Stage::new();
    let everything = st.peers.node_module(EVERYTHING);
    let traces = st.traces();
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let shown = "--tool-arg message=hi --method tools/call --tool-name echo \\\n  reel rec --name inspector -- npx -y @modelcontextprotocol/server-everything";
    assert!(readme.contains(shown), "the README shows the tested order");
    let args = [
        "--tool-arg",
        "message=hi",
        "--method",
        "tools/call",
        "--tool-name",
        "echo",
        env!("CARGO_BIN_EXE_reel"),
        "rec",
        "--name",
        "inspector",
        "--dir",
        traces.to_str().unwrap(),
        "--",
        "node",
        everything.to_str().unwrap(),
        "stdio",
    ];
    let live = st.node(INSPECTOR, &args);
    assert!(stdout(&live).contains("Echo: hi"), "{}", stdout(&live));
    let trace = st.recorded();
    assert!(
        trace.to_string_lossy().ends_with("-inspector.jsonl"),
        "{}",
        trace.display()
    );
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(text.contains(r#""message":"hi""#), "{text}");
}

/// The TypeScript SDK client script (`ts_progress_client.mjs`): `calls` long-running
/// calls over stdio to `server`; the number of progress callbacks each call saw.
fn ts_progress_stdio(st: &Stage, calls: usize, server: &[&str]) -> Vec<usize> {
    let mut c = Command::new("node");
    c.arg(Peers::script("ts_progress_client.mjs"))
        .arg(&st.peers.node_modules)
        .args([&calls.to_string(), "stdio", "--"])
        .args(server)
        .current_dir(st.sb.tmp.path());
    progress_counts(&c.output().expect("run node"), calls)
}

/// The `CALL <i> PROGRESS <n> …` lines of the TypeScript client, as the n of each call.
fn progress_counts(out: &Output, calls: usize) -> Vec<usize> {
    let text = stdout(out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "the TypeScript client failed: {text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let counts: Vec<usize> = text
        .lines()
        .filter_map(|l| l.strip_prefix("CALL "))
        .filter_map(|l| l.split(' ').nth(2)?.parse().ok())
        .collect();
    assert_eq!(counts.len(), calls, "{text}");
    counts
}

/// The TypeScript SDK drops a call's progress handler when its result arrives and runs
/// notification handlers a microtask later: written in one chunk with the result, the
/// recorded progress reached none of them (and play reported success). Replayed, every
/// callback fires, run after run.
#[test]
fn the_typescript_sdk_client_gets_every_progress_callback_over_stdio() {
    let st = Stage::new();
    let everything = st.peers.node_module(EVERYTHING);
    let rec = st.rec_script(&["node", everything.to_str().unwrap(), "stdio"]);
    let calls = 4;
    // Live, the client may lose the last progress itself (the server writes it and the
    // result back to back); the recording holds all of it.
    ts_progress_stdio(&st, calls, &[rec.to_str().unwrap()]);
    let trace = st.recorded();
    let recorded = std::fs::read_to_string(&trace).unwrap();
    assert_eq!(
        recorded
            .matches(r#""method":"notifications/progress""#)
            .count(),
        3 * calls
    );
    for run in 0..5 {
        let name = format!("run{run}");
        let play = st.play_script(&name, &trace, &[]);
        let counts = ts_progress_stdio(&st, calls, &[play.to_str().unwrap()]);
        assert_eq!(counts, vec![3; calls], "replay {run}");
        assert_clean(&st.played(&name));
    }
}

/// The Python SDK lists tools after every call that finishes before its tool cache is
/// filled: live, 8 concurrent calls finishing apart made one `tools/list`; replayed at
/// once, up to 8, and the extra ones missed (exit 3, the client raised). List reads are
/// now answered again from their last recorded answer: 20 replays, no miss.
#[test]
fn python_concurrent_calls_replay_without_misses_when_the_client_lists_more_often() {
    let st = Stage::new();
    let client = Peers::script("concurrent_client.py");
    let client = client.to_str().unwrap();
    let everything = st.peers.node_module(EVERYTHING);
    let rec = st.rec_script(&["node", everything.to_str().unwrap(), "stdio"]);
    let live = st.python(&[client, "8", "stdio", "--", rec.to_str().unwrap()]);
    let want = stdout(&live);
    assert!(want.ends_with("ALL OK\n"), "{want}");
    let trace = st.recorded();
    let lists = replay_lines(&trace)
        .iter()
        .filter(|(d, _, m, _)| d == "in" && m == "tools/list")
        .count();
    assert!(
        lists < 8,
        "the recording re-listed once per call ({lists}): the calls did not finish apart"
    );
    let mut again = 0;
    for run in 0..20 {
        let name = format!("run{run}");
        let play = st.play_script(&name, &trace, &[]);
        let replay = st.python(&[client, "8", "stdio", "--", play.to_str().unwrap()]);
        assert_eq!(stdout(&replay), want, "replay {run}");
        let played = st.played(&name);
        assert_clean(&played);
        again += played.stderr.contains("answered again)") as usize;
    }
    assert!(again > 0, "no replay listed more often than the recording");
}

/// `listen_client.py` (the Python SDK's `Client.listen()`) against `target` (`--`
/// and a server command, or `--url` and a URL); its stdout.
fn listen_client(python: &Path, keep_open: bool, target: &[&str]) -> String {
    let mut c = Command::new(python);
    c.arg(Peers::script("listen_client.py"));
    if keep_open {
        c.arg("--keep-open");
    }
    let out = c
        .args(target)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A 2026-07-28 `subscriptions/listen` stream replays over stdio as live: its
/// acknowledgement and the `ToolsListChanged` a tool call caused come in their recorded
/// places, and the stream stays open (a server's "Connection closed" answer recorded at
/// shutdown is not sent early) — with the stream closed by the client and with it left
/// open to the end.
#[test]
fn a_listen_stream_replays_over_stdio_with_the_python_sdk() {
    let peers = Peers::get();
    let python = peers.python.to_str().unwrap();
    let server = Peers::script("listen_server.py");
    let server = server.to_str().unwrap();
    let reel_bin = env!("CARGO_BIN_EXE_reel");
    let direct = listen_client(&peers.python, false, &["--", python, server]);
    assert!(direct.ends_with("ALL OK\n"), "{direct}");
    for keep_open in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        let rec = listen_client(
            &peers.python,
            keep_open,
            &["--", reel_bin, "rec", "--dir", d, "--", python, server],
        );
        assert_eq!(rec, direct, "through rec");
        let trace = crate::harness::play_http_support::only_trace(dir.path());
        let text = std::fs::read_to_string(&trace).unwrap();
        assert!(text.contains("subscriptions/listen"));
        if keep_open {
            assert!(
                text.contains("Connection closed"),
                "the answer at shutdown: {text}"
            );
        }
        let report = dir.path().join("report.json");
        let t = trace.to_str().unwrap();
        let played = listen_client(
            &peers.python,
            keep_open,
            &[
                "--",
                reel_bin,
                "play",
                t,
                "--report",
                report.to_str().unwrap(),
            ],
        );
        assert_eq!(played, direct, "replayed (keep_open {keep_open})");
        // A client whose listen request has another id (`listen-2`): the stream's
        // acknowledgement and events carry the live id.
        let other_id = listen_client(
            &peers.python,
            keep_open,
            &["--skip-ids", "1", "--", reel_bin, "play", t],
        );
        assert_eq!(other_id, direct, "another live id (keep_open {keep_open})");
        let doc: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
        assert_eq!(doc["verdict"], "clean", "{doc}");
        assert_eq!(doc["summary"]["missed"], 0, "{doc}");
        assert_eq!(doc["summary"]["kept_open"], u64::from(keep_open), "{doc}");
    }
}

/// The same stream over Streamable HTTP: recorded through `reel rec --url`, served by
/// `reel play --listen`.
#[test]
fn a_listen_stream_replays_over_http_with_the_python_sdk() {
    use crate::harness::net::{Server, free_port};
    let peers = Peers::get();
    let port = free_port();
    let mut srv = Command::new(&peers.python);
    srv.arg(Peers::script("listen_server.py"))
        .args(["--http", &port.to_string()]);
    let _server = Server::start(srv, port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let direct = listen_client(&peers.python, false, &["--url", &url]);
    assert!(direct.ends_with("ALL OK\n"), "{direct}");
    let dir = tempfile::tempdir().unwrap();
    let mut rec = crate::harness::reel();
    rec.args(["rec", "--url", &url, "--listen", "127.0.0.1:0", "--dir"])
        .arg(dir.path());
    let proxy = crate::harness::play_http_support::Player::listening(rec);
    for keep_open in [false, true] {
        assert_eq!(
            listen_client(&peers.python, keep_open, &["--url", &proxy.url]),
            direct
        );
    }
    assert_eq!(proxy.stop().code(), Some(0));
    let trace = crate::harness::play_http_support::only_trace(dir.path());
    let play = crate::harness::play_http_support::Player::start(&trace, &[]);
    for keep_open in [false, true] {
        let url = play.url.clone();
        assert_eq!(
            listen_client(&peers.python, keep_open, &["--url", &url]),
            direct
        );
    }
    let stopped = play.stop();
    assert_eq!(stopped.code(), Some(0), "{}", stopped.stderr);
    assert!(stopped.stderr.contains(" 0 missed"), "{}", stopped.stderr);
}

/// `diff` and `verify` read a listen stream as play does: two honest runs are
/// identical, and the recorded client played against the live server is the same
/// (the stream itself not compared: its answer, if any, comes when the session ends).
#[test]
fn diff_and_verify_treat_a_listen_stream_as_play_does() {
    let peers = Peers::get();
    let python = peers.python.to_str().unwrap();
    let server = Peers::script("listen_server.py");
    let server = server.to_str().unwrap();
    let reel_bin = env!("CARGO_BIN_EXE_reel");
    let dir = tempfile::tempdir().unwrap();
    let mut traces = Vec::new();
    for run in ["a", "b"] {
        let d = dir.path().join(run);
        let out = listen_client(
            &peers.python,
            true,
            &[
                "--",
                reel_bin,
                "rec",
                "--dir",
                d.to_str().unwrap(),
                "--",
                python,
                server,
            ],
        );
        assert!(out.ends_with("ALL OK\n"), "{out}");
        traces.push(crate::harness::play_http_support::only_trace(&d));
    }
    let diff = crate::harness::reel()
        .arg("diff")
        .args(&traces)
        .output()
        .unwrap();
    assert_eq!(
        diff.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&diff.stdout),
        String::from_utf8_lossy(&diff.stderr)
    );
    let verify = crate::harness::reel()
        .arg("verify")
        .arg(&traces[0])
        .args(["--no-record", "--timeout", "10", "--", python, server])
        .output()
        .unwrap();
    assert_eq!(
        verify.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&verify.stdout),
        String::from_utf8_lossy(&verify.stderr)
    );
}
