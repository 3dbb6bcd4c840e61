//! `reel verify` as a user runs it: a session recorded with `reel rec` (a real client,
//! the Python `mcp` SDK, against a real server) played back against a live server, the
//! same one or a changed one.
//!
//! Servers: `@modelcontextprotocol/server-everything` (legacy era after a refused
//! `server/discover` probe; it asks the client for roots, sampling and elicitation) and
//! `tests/peers/verify_server.py`, the project's own Python SDK `MCPServer` (both eras;
//! flags make it drift the way a regression would). The peers are installed by
//! `cargo xtask peers`; when they are missing the tests fail and say so.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The longest a single process of these tests may run before it counts as hung.
const RUN_LIMIT: Duration = Duration::from_secs(120);

use crate::harness::sandbox::Sandbox;
use crate::harness::{reel, workspace};

fn script(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// Where the interop peers are: `$REEL_PEERS`, else `<workspace>/.peers`.
struct Peers {
    python: String,
    everything: String,
}

impl Peers {
    /// The peers, or a failure saying how to install them (never a skip).
    fn get() -> Peers {
        let root = std::env::var_os("REEL_PEERS")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace().join(".peers"));
        let python = root.join("venv/bin/python");
        let everything =
            root.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
        for f in [&python, &everything] {
            assert!(
                f.exists(),
                "peers missing: run `cargo xtask peers` (looked for {})",
                f.display()
            );
        }
        Peers {
            python: python.to_string_lossy().into_owned(),
            everything: everything.to_string_lossy().into_owned(),
        }
    }

    fn everything_cmd(&self) -> Vec<String> {
        vec!["node".into(), self.everything.clone(), "stdio".into()]
    }

    /// Our test server with `flags`.
    fn own_server(&self, flags: &[&str]) -> Vec<String> {
        let mut v = vec![self.python.clone(), script("verify_server.py")];
        v.extend(flags.iter().map(|s| s.to_string()));
        v
    }
}

/// Runs `cmd` to completion (at most [`RUN_LIMIT`]) with stdin closed.
fn run(mut cmd: Command) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the command");
    let out = child.stdout.take().expect("stdout");
    let err = child.stderr.take().expect("stderr");
    let read = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let (out, err) = (read(Box::new(out)), read(Box::new(err)));
    let deadline = Instant::now() + RUN_LIMIT;
    let status = loop {
        if let Some(s) = child.try_wait().expect("try_wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running after {RUN_LIMIT:?}: {cmd:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A private trace directory with one recorded session in it.
struct Recorded {
    sb: Sandbox,
    name: String,
}

impl Recorded {
    /// Records `verify_client.py STEPS` (Python SDK client, `mode`) against `server`
    /// through `reel rec --name NAME`.
    fn new(name: &str, mode: &str, steps: &[&str], server: &[String]) -> Recorded {
        let peers = Peers::get();
        let sb = Sandbox::new();
        let dir = sb.path("traces");
        let mut c = Command::new(&peers.python);
        c.arg(script("verify_client.py"))
            .args(["--mode", mode])
            .args(steps)
            .arg("--")
            .arg(env!("CARGO_BIN_EXE_reel"))
            .args(["rec", "--name", name, "--dir"])
            .arg(&dir)
            .arg("--")
            .args(server)
            .current_dir(sb.dir());
        let out = run(c);
        assert_eq!(
            out.status.code(),
            Some(0),
            "recording failed: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        assert!(
            text(&out.stdout).ends_with("ALL OK\n"),
            "{}",
            text(&out.stdout)
        );
        Recorded {
            sb,
            name: name.to_owned(),
        }
    }

    fn dir(&self) -> PathBuf {
        self.sb.path("traces")
    }

    /// The recording itself (not a `-verify` run).
    fn trace(&self) -> PathBuf {
        self.traces()
            .into_iter()
            .find(|p| !p.to_string_lossy().contains("-verify"))
            .expect("the recording")
    }

    fn traces(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(self.dir())
            .expect("trace dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        v.sort();
        v
    }

    fn verify_runs(&self) -> Vec<PathBuf> {
        self.traces()
            .into_iter()
            .filter(|p| p.to_string_lossy().contains("-verify"))
            .collect()
    }

    /// `reel verify --dir DIR FLAGS NAME -- SERVER`.
    fn verify(&self, flags: &[&str], server: &[String]) -> Verified {
        let mut c = reel();
        c.arg("verify")
            .arg("--dir")
            .arg(self.dir())
            .args(flags)
            .arg(&self.name)
            .arg("--")
            .args(server)
            .current_dir(self.sb.dir());
        Verified(run(c))
    }

    /// The same with `--json`, parsed.
    fn verify_json(&self, flags: &[&str], server: &[String]) -> (Option<i32>, Value) {
        let mut all = vec!["--json"];
        all.extend(flags);
        let out = self.verify(&all, server).0;
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "not a JSON report ({e}): {}\nstderr: {}",
                text(&out.stdout),
                text(&out.stderr)
            )
        });
        (out.status.code(), v)
    }
}

struct Verified(Output);

impl Verified {
    fn code(&self) -> Option<i32> {
        self.0.status.code()
    }
    fn all(&self) -> String {
        text(&self.0.stdout) + &text(&self.0.stderr)
    }
}

/// The message lines of a trace as (dir, origin, raw JSON).
fn messages(path: &Path) -> Vec<(String, Option<String>, Value)> {
    std::fs::read_to_string(path)
        .expect("read trace")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("raw").is_some() && matches!(v["dir"].as_str(), Some("in" | "out")))
        .map(|v| {
            (
                v["dir"].as_str().unwrap_or_default().to_owned(),
                v.get("origin").and_then(Value::as_str).map(str::to_owned),
                v["raw"].clone(),
            )
        })
        .collect()
}

fn drift_kinds(report: &Value) -> Vec<(String, String, String)> {
    report["drift"]
        .as_array()
        .expect("drift list")
        .iter()
        .map(|d| {
            (
                d["class"].as_str().unwrap_or_default().to_owned(),
                d["kind"].as_str().unwrap_or_default().to_owned(),
                format!(
                    "{}{}",
                    d["method"].as_str().unwrap_or_default(),
                    d["tool"]
                        .as_str()
                        .map(|t| format!(" {t}"))
                        .unwrap_or_default()
                ),
            )
        })
        .collect()
}

fn pointers(drift: &Value) -> Vec<String> {
    drift["differences"]
        .as_array()
        .expect("differences")
        .iter()
        .map(|d| d["pointer"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// `reel check` accepts the trace.
fn check_passes(path: &Path) {
    let mut c = reel();
    c.arg("check").arg(path);
    let out = run(c);
    assert_eq!(
        out.status.code(),
        Some(0),
        "reel check {}: {}{}",
        path.display(),
        text(&out.stdout),
        text(&out.stderr)
    );
}

const EVERYTHING_STEPS: [&str; 9] = [
    "tools",
    r#"call:echo:{"message":"verify me"}"#,
    r#"call:get-sum:{"a":40,"b":2}"#,
    r#"call:trigger-long-running-operation:{"duration":0.3,"steps":3}"#,
    r#"call:trigger-sampling-request:{"prompt":"hello","maxTokens":16}"#,
    "call:trigger-elicitation-request:{}",
    // server-everything asks roots/list 350 ms after initialization.
    "sleep:0.5",
    "call:get-roots-list:{}",
    r#"prompt:args-prompt:{"city":"Lyon","state":"ARA"}"#,
];

#[test]
fn everything_against_itself_is_clean_and_its_requests_are_answered_from_the_tape() {
    let peers = Peers::get();
    let mut steps = EVERYTHING_STEPS.to_vec();
    steps.push("read:demo://resource/static/document/architecture.md");
    let rec = Recorded::new("everything", "auto", &steps, &peers.everything_cmd());
    let (code, report) = rec.verify_json(&[], &peers.everything_cmd());
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(report["result"], "same");
    // discover probe, initialize, tools/list, 6 calls, prompts/get, resources/read.
    assert_eq!(report["summary"]["requests"], 11, "{report:#}");
    assert_eq!(report["summary"]["same"], 11, "{report:#}");
    // roots/list, sampling/createMessage and elicitation/create, each from the tape.
    assert_eq!(report["serverRequests"]["asked"], 3, "{report:#}");
    assert_eq!(
        report["serverRequests"]["answeredFromTape"], 3,
        "{report:#}"
    );
    let progress = report["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["method"] == "notifications/progress")
        .expect("progress counted");
    assert_eq!(
        (progress["recorded"].as_u64(), progress["live"].as_u64()),
        (Some(3), Some(3))
    );

    // The live run: a readable trace, tape direction, every line marked.
    let runs = rec.verify_runs();
    assert_eq!(runs.len(), 1, "{runs:?}");
    check_passes(&runs[0]);
    let lines = messages(&runs[0]);
    for (dir, origin, raw) in &lines {
        let want = if dir == "in" { "tape" } else { "live" };
        assert_eq!(origin.as_deref(), Some(want), "{dir} {raw}");
    }
    // The handshake as the live server needed it: probe refused, then initialize.
    let sent: Vec<&str> = lines
        .iter()
        .filter(|(d, _, r)| d == "in" && r.get("method").is_some() && r.get("id").is_some())
        .map(|(_, _, r)| r["method"].as_str().unwrap())
        .collect();
    assert_eq!(&sent[..3], ["server/discover", "initialize", "tools/list"]);
    // The server's requests were answered with the recorded answers, under its ids.
    let answers: Vec<&Value> = lines
        .iter()
        .filter(|(d, _, r)| d == "in" && r.get("result").is_some())
        .map(|(_, _, r)| r)
        .collect();
    assert_eq!(answers.len(), 3);
    assert!(
        answers
            .iter()
            .any(|a| a["result"]["model"] == "reel-verify-model")
    );
    assert!(
        answers
            .iter()
            .any(|a| a["result"]["roots"][0]["name"] == "reel-verify")
    );
    assert!(answers.iter().any(|a| a["result"]["action"] == "accept"));
    // Progress came back with the token reel handed out, not the recorded one.
    let call = lines
        .iter()
        .find(|(d, _, r)| d == "in" && r["params"]["name"] == "trigger-long-running-operation")
        .expect("the long-running call was sent");
    let token = call.2["params"]["_meta"]["progressToken"].clone();
    assert_eq!(token, call.2["id"]);
    let tokens: Vec<&Value> = lines
        .iter()
        .filter(|(_, _, r)| r["method"] == "notifications/progress")
        .map(|(_, _, r)| &r["params"]["progressToken"])
        .collect();
    assert_eq!(tokens, [&token, &token, &token]);
}

#[test]
fn a_time_embedding_result_passes_with_ignore() {
    let peers = Peers::get();
    let server = peers.own_server(&[]);
    let rec = Recorded::new(
        "clock",
        "legacy",
        &["tools", "call:clock:{}", r#"call:add:{"a":1,"b":2}"#],
        &server,
    );
    let (code, report) = rec.verify_json(&["--no-record"], &server);
    assert_eq!(code, Some(1), "{report:#}");
    assert_eq!(
        drift_kinds(&report),
        [(
            "output".into(),
            "result-changed".into(),
            "tools/call clock".into()
        )]
    );
    assert_eq!(
        pointers(&report["drift"][0]),
        ["/result/content/0/text", "/result/structuredContent/result"]
    );
    let (code, report) = rec.verify_json(
        &[
            "--no-record",
            "--ignore",
            "/result/content/0/text",
            "--ignore",
            "/result/structuredContent/result",
        ],
        &server,
    );
    assert_eq!(code, Some(0), "{report:#}");
    // The same pointers from a file.
    let file = rec.sb.path("volatile.txt");
    std::fs::write(
        &file,
        "# clock output\n/result/content/0/text\n\n/result/structuredContent/result\n",
    )
    .unwrap();
    let (code, _) = rec.verify_json(
        &["--no-record", "--ignore-file", file.to_str().unwrap()],
        &server,
    );
    assert_eq!(code, Some(0));
    assert!(rec.verify_runs().is_empty(), "--no-record wrote a trace");
}

#[test]
fn live_answers_are_redacted_with_the_recordings_rules_before_comparison() {
    let peers = Peers::get();
    let server = peers.own_server(&[]);
    let rec = Recorded::new("secret", "legacy", &["call:credentials:{}"], &server);
    let recorded = std::fs::read_to_string(rec.trace()).unwrap();
    assert!(recorded.contains("use [REDACTED] to connect"), "{recorded}");
    // A new token on every call: equal only once the live answer is redacted alike.
    let (code, report) = rec.verify_json(&[], &server);
    assert_eq!(code, Some(0), "{report:#}");
    let live = std::fs::read_to_string(&rec.verify_runs()[0]).unwrap();
    assert!(live.contains("use [REDACTED] to connect"), "{live}");
    assert!(
        !live.contains("ghp_"),
        "the live run's trace holds the secret: {live}"
    );
}

#[test]
fn an_altered_result_is_output_drift_naming_exactly_that_call() {
    let peers = Peers::get();
    let steps = [
        "tools",
        r#"call:shout:{"text":"hi"}"#,
        r#"call:add:{"a":2,"b":40}"#,
        r#"call:count:{"steps":3}"#,
        r#"call:confirm:{"item":"disk"}"#,
    ];
    let rec = Recorded::new("alter", "legacy", &steps, &peers.own_server(&[]));
    let (code, report) = rec.verify_json(&[], &peers.own_server(&["--alter", "add"]));
    assert_eq!(code, Some(1), "{report:#}");
    assert_eq!(
        drift_kinds(&report),
        [(
            "output".into(),
            "result-changed".into(),
            "tools/call add".into()
        )]
    );
    let d = &report["drift"][0];
    assert_eq!(
        pointers(d),
        ["/result/content/0/text", "/result/structuredContent/result"]
    );
    assert_eq!(d["differences"][0]["recorded"], "42");
    assert_eq!(d["differences"][0]["live"], "43");
    assert_eq!(report["summary"]["outputDrift"], 1);
    assert_eq!(report["summary"]["structuralDrift"], 0);
    // The legacy session's elicitation came from the server and was answered.
    assert_eq!(
        report["serverRequests"]["answeredFromTape"], 1,
        "{report:#}"
    );

    // The text report leads with that call, its context and the changed pointer.
    let out = rec.verify(&["--no-record"], &peers.own_server(&["--alter", "add"]));
    assert_eq!(out.code(), Some(1));
    let t = out.all();
    assert!(
        t.starts_with("first drift: output drift in tools/call add"),
        "{t}"
    );
    assert!(t.contains("tools/call shout") && t.contains("same"), "{t}");
    assert!(t.contains(r#"/result/content/0/text: "42" -> "43""#), "{t}");
    assert!(
        t.contains("reel verify: output-drift: 6 requests: 5 same, 1 output drift"),
        "{t}"
    );

    // For GitHub Actions: the drift as a warning on the recorded request's line.
    let out = rec.verify(
        &["--no-record", "--format", "github"],
        &peers.own_server(&["--alter", "add"]),
    );
    assert_eq!(out.code(), Some(1));
    let t = out.all();
    let line = d["line"].as_u64().unwrap();
    let trace = report["trace"].as_str().unwrap();
    let want = format!(
        "::warning file={},line={line},title=reel verify%3A output drift (result-changed)::tools/call add: ",
        trace.replace(':', "%3A").replace(',', "%2C")
    );
    assert!(t.lines().any(|l| l.starts_with(&want)), "{want}\n{t}");
    assert_eq!(t.lines().filter(|l| l.starts_with("::")).count(), 1, "{t}");

    // For every other CI: JUnit XML, read by a real JUnit consumer (junitparser).
    let out = rec.verify(
        &["--no-record", "--format", "junit"],
        &peers.own_server(&["--alter", "add"]),
    );
    assert_eq!(out.code(), Some(1));
    let junit = crate::harness::junit(&out.0.stdout);
    assert_eq!(junit["tests"], 6, "one case per request: {junit:#}");
    assert_eq!(junit["failures"], 1, "{junit:#}");
    let failed: Vec<&Value> = junit["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !c[1].as_array().unwrap().is_empty())
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0][0], format!("line {line}: tools/call add"));
    assert_eq!(failed[0][1][0][0], "output drift (result-changed)");
    assert!(
        t.contains("reel verify: output-drift: 6 requests: 5 same, 1 output drift"),
        "{t}"
    );
}

#[test]
fn a_list_changed_count_is_reported_but_is_drift_only_when_strict() {
    let peers = Peers::get();
    let rec = Recorded::new(
        "listchanged",
        "legacy",
        &["tools", r#"call:add:{"a":2,"b":40}"#],
        &peers.own_server(&[]),
    );
    // The recording saw the server announce a changed tool list twice (a server that
    // registers tools after `initialized` does, depending on timing); this live run of
    // the same server will not.
    let path = rec.trace();
    let text = std::fs::read_to_string(&path).unwrap();
    let (body, end) = text.trim_end().rsplit_once('\n').expect("an end line");
    let note = r#"{"t":"2026-01-01T00:00:00.000Z","dir":"out","raw":{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}}"#;
    std::fs::write(&path, format!("{body}\n{note}\n{note}\n{end}\n")).unwrap();

    let (code, report) = rec.verify_json(&["--no-record"], &peers.own_server(&[]));
    assert_eq!(code, Some(0), "{report:#}");
    let counted = report["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["method"] == "notifications/tools/list_changed")
        .cloned();
    assert_eq!(
        counted,
        Some(
            serde_json::json!({"method": "notifications/tools/list_changed", "recorded": 2, "live": 0})
        )
    );
    assert!(
        report["notes"].to_string().contains("list_changed"),
        "{report:#}"
    );
    let (code, report) = rec.verify_json(
        &["--no-record", "--notifications", "strict"],
        &peers.own_server(&[]),
    );
    assert_eq!(code, Some(1), "{report:#}");
    assert_eq!(
        report["drift"][0]["kind"], "notification-count",
        "{report:#}"
    );
}

#[test]
fn a_removed_tool_is_structural_drift() {
    let peers = Peers::get();
    let steps = [
        "tools",
        r#"call:shout:{"text":"hi"}"#,
        r#"call:add:{"a":2,"b":40}"#,
    ];
    let rec = Recorded::new("remove", "legacy", &steps, &peers.own_server(&[]));
    let (code, report) = rec.verify_json(&[], &peers.own_server(&["--remove", "shout"]));
    assert_eq!(code, Some(2), "{report:#}");
    assert_eq!(
        drift_kinds(&report),
        [
            (
                "structural".into(),
                "schema-changed".into(),
                "tools/list".into()
            ),
            (
                "structural".into(),
                "tool-unknown".into(),
                "tools/call shout".into()
            ),
        ]
    );
    // Only shout is gone: the list is aligned by name, not by position.
    assert_eq!(pointers(&report["drift"][0]), ["/result/tools/1"]);
    assert_eq!(report["summary"]["same"], 2, "{report:#}");
}

#[test]
fn a_call_never_answered_is_structural_drift() {
    let peers = Peers::get();
    let steps = [r#"call:count:{"steps":2}"#, r#"call:add:{"a":2,"b":40}"#];
    let rec = Recorded::new("hang", "legacy", &steps, &peers.own_server(&[]));
    let (code, report) = rec.verify_json(
        &["--no-record", "--timeout", "2"],
        &peers.own_server(&["--hang", "count"]),
    );
    assert_eq!(code, Some(2), "{report:#}");
    let kinds = drift_kinds(&report);
    assert!(
        kinds.contains(&(
            "structural".into(),
            "unanswered".into(),
            "tools/call count".into()
        )),
        "{kinds:?}"
    );
    // Every other request (the ones after it too) was still played and answered the same.
    let requests = report["summary"]["requests"].as_u64().unwrap();
    assert_eq!(
        report["summary"]["same"].as_u64(),
        Some(requests - 1),
        "{report:#}"
    );
    assert_eq!(report["summary"]["structuralDrift"], 1, "{report:#}");
}

#[test]
fn a_server_that_dies_mid_session_is_structural_drift_and_the_rest_is_not_sent() {
    let peers = Peers::get();
    let steps = [
        r#"call:add:{"a":2,"b":40}"#,
        r#"call:count:{"steps":2}"#,
        r#"call:shout:{"text":"a"}"#,
        r#"call:shout:{"text":"b"}"#,
    ];
    let rec = Recorded::new("die", "legacy", &steps, &peers.own_server(&[]));
    let (code, report) = rec.verify_json(&[], &peers.own_server(&["--die", "count"]));
    assert_eq!(code, Some(2), "{report:#}");
    let kinds = drift_kinds(&report);
    assert_eq!(
        kinds,
        [
            (
                "structural".into(),
                "unanswered".into(),
                "tools/call count".into()
            ),
            (
                "structural".into(),
                "unanswered".into(),
                "tools/call shout".into()
            ),
        ],
        "{report:#}"
    );
    assert_eq!(report["summary"]["notSent"], 2, "{report:#}");
    assert_eq!(report["serverExit"], 4, "{report:#}");
    // The live run's trace ends with the server's status and holds its last words.
    let run = &rec.verify_runs()[0];
    check_passes(run);
    let trace = std::fs::read_to_string(run).unwrap();
    assert!(trace.contains("dying in count"), "{trace}");
    assert!(
        trace.lines().last().unwrap().contains(r#""exitCode":4"#),
        "{trace}"
    );
}

#[test]
fn a_server_that_cannot_start_is_69() {
    let peers = Peers::get();
    let rec = Recorded::new("nostart", "legacy", &["tools"], &peers.own_server(&[]));
    let out = rec.verify(&[], &["/nonexistent/reel-test-server".to_owned()]);
    assert_eq!(out.code(), Some(69), "{}", out.all());
    assert!(
        out.all().contains("cannot start the server"),
        "{}",
        out.all()
    );

    let out = rec.verify(&["--no-record"], &peers.own_server(&["--crash"]));
    assert_eq!(out.code(), Some(69), "{}", out.all());
    let t = out.all();
    assert!(
        t.contains("exited before answering the handshake (exit status 3)"),
        "{t}"
    );
    assert!(t.contains("refusing to start"), "stderr tail missing: {t}");

    let out = rec.verify(
        &["--no-record", "--timeout", "1", "--start-timeout", "1"],
        &["sleep".into(), "30".into()],
    );
    assert_eq!(out.code(), Some(69), "{}", out.all());
    assert!(
        out.all()
            .contains("did not answer the handshake within 1 s"),
        "{}",
        out.all()
    );
}

#[test]
fn a_2026_07_28_server_is_verified_in_its_own_era() {
    let peers = Peers::get();
    let steps = [
        "tools",
        r#"call:add:{"a":2,"b":40}"#,
        r#"call:count:{"steps":3}"#,
        r#"call:confirm:{"item":"disk"}"#,
        "read:note://readme",
        r#"prompt:summarize:{"topic":"stdio"}"#,
    ];
    let rec = Recorded::new("modern", "auto", &steps, &peers.own_server(&[]));
    let recorded = messages(&rec.trace());
    let (code, report) = rec.verify_json(&[], &peers.own_server(&[]));
    assert_eq!(code, Some(0), "{report:#}");
    // discover, tools/list, 3 calls + the input_required retry, read, prompt.
    assert_eq!(report["summary"]["same"], 8, "{report:#}");

    let runs = rec.verify_runs();
    check_passes(&runs[0]);
    let live = messages(&runs[0]);
    let methods: Vec<&str> = live
        .iter()
        .filter(|(d, _, r)| d == "in" && r.get("id").is_some())
        .filter_map(|(_, _, r)| r["method"].as_str())
        .collect();
    assert_eq!(methods[0], "server/discover");
    assert!(!methods.contains(&"initialize"), "{methods:?}");
    // The retry carries the state the live server handed out, not the recorded one
    // (this server encrypts it with a key of its own process).
    let state = |msgs: &[(String, Option<String>, Value)], dir: &str, at: &str| -> String {
        msgs.iter()
            .filter(|(d, _, _)| d == dir)
            .find_map(|(_, _, r)| r.pointer(at).and_then(Value::as_str).map(str::to_owned))
            .expect("a requestState")
    };
    let handed_out = state(&live, "out", "/result/requestState");
    assert_eq!(state(&live, "in", "/params/requestState"), handed_out);
    assert_ne!(state(&recorded, "out", "/result/requestState"), handed_out);

    let (code, report) = rec.verify_json(&["--no-record"], &peers.own_server(&["--alter", "add"]));
    assert_eq!(code, Some(1), "{report:#}");
    assert_eq!(
        drift_kinds(&report),
        [(
            "output".into(),
            "result-changed".into(),
            "tools/call add".into()
        )]
    );
}

#[test]
fn a_server_request_the_tape_never_saw_gets_an_error_and_is_reported() {
    let peers = Peers::get();
    let rec = Recorded::new(
        "sampling",
        "auto",
        &[
            "tools",
            r#"call:trigger-sampling-request:{"prompt":"hi","maxTokens":8}"#,
        ],
        &peers.everything_cmd(),
    );
    // The same session with the server's sampling request (and the answer) cut out.
    let original = std::fs::read_to_string(rec.trace()).unwrap();
    let edited: Vec<&str> = original
        .lines()
        .filter(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_default();
            let asked = v["raw"]["method"] == "sampling/createMessage";
            let answer = v["dir"] == "in" && v["raw"]["result"]["model"].is_string();
            !asked && !answer
        })
        .collect();
    assert_eq!(original.lines().count(), edited.len() + 2);
    let cut = rec.sb.path("cut.jsonl");
    std::fs::write(&cut, edited.join("\n") + "\n").unwrap();
    let mut c = reel();
    c.args(["verify", "--json", "--no-record"])
        .arg(&cut)
        .arg("--")
        .args(peers.everything_cmd());
    let out = run(c);
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert_eq!(out.status.code(), Some(2), "{report:#}");
    assert_eq!(report["serverRequests"]["unknown"], 1, "{report:#}");
    let kinds = drift_kinds(&report);
    assert_eq!(
        kinds[0],
        (
            "structural".into(),
            "added".into(),
            "sampling/createMessage".into()
        )
    );
}

#[test]
fn bad_input_and_usage_have_their_exit_codes() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("missing.jsonl");
    let mut c = reel();
    c.args(["verify", "--no-record"])
        .arg(&missing)
        .args(["--", "true"]);
    let out = run(c);
    assert_eq!(out.status.code(), Some(66), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("no such file"),
        "{}",
        text(&out.stderr)
    );

    let empty = tmp.path().join("empty.jsonl");
    std::fs::write(
        &empty,
        "{\"v\":1,\"type\":\"meta\",\"startedAt\":\"2026-01-01T00:00:00.000Z\"}\n{\"type\":\"end\",\"reason\":\"x\"}\n",
    )
    .unwrap();
    let mut c = reel();
    c.args(["verify", "--no-record"])
        .arg(&empty)
        .args(["--", "true"]);
    let out = run(c);
    assert_eq!(out.status.code(), Some(66), "{}", text(&out.stderr));

    for args in [
        vec!["verify", "x.jsonl"],
        vec!["verify", "--ignore", "result/x", "x.jsonl", "--", "true"],
        vec!["verify", "--timeout", "0", "x.jsonl", "--", "true"],
    ] {
        let mut c = reel();
        c.args(&args).current_dir(tmp.path());
        let out = run(c);
        assert_eq!(
            out.status.code(),
            Some(64),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn help_names_the_timeout_the_notification_rule_and_the_json_shape() {
    let mut c = reel();
    c.args(["verify", "--help"]);
    let out = run(c);
    assert_eq!(out.status.code(), Some(0));
    let t = text(&out.stdout);
    for needle in [
        "--timeout <SECS>",
        "[default: 30]",
        "COUNTS PER",
        "reel.verify/2",
        "--ignore <POINTER>",
        "/result/requestState",
        "jsonrpc-id",
        "69",
    ] {
        assert!(t.contains(needle), "--help lacks {needle:?}:\n{t}");
    }
}

/// A session written directly with `TraceWriter`: two calls in flight at once (the
/// recorded answers came in the other order), a progress token that is a string, and a
/// call the client cancelled. Recorded ids start at 11, live ones at 1.
#[test]
fn concurrent_calls_stay_concurrent_and_cancellations_name_the_live_id() {
    use reel_trace::{Dir, Ending, MessageLine, Meta, Timestamp, TraceWriter};
    let peers = Peers::get();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("written.jsonl");
    let file = std::fs::File::create(&path).unwrap();
    let mut w = TraceWriter::new(file, Timestamp::now());
    let meta: Meta = serde_json::from_str(
        r#"{"v":1,"type":"meta","label":"written","startedAt":"2026-01-01T00:00:00.000Z"}"#,
    )
    .unwrap();
    w.write_meta(&meta).unwrap();
    let lines: [(Dir, &str); 12] = [
        (
            Dir::In,
            r#"{"jsonrpc":"2.0","id":11,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hand","version":"1"}}}"#,
        ),
        (
            Dir::Out,
            r#"{"jsonrpc":"2.0","id":11,"result":{"protocolVersion":"2025-11-25"}}"#,
        ),
        (
            Dir::In,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ),
        (
            Dir::In,
            r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"count","arguments":{"steps":20},"_meta":{"progressToken":"tok-a"}}}"#,
        ),
        (
            Dir::In,
            r#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":40}}}"#,
        ),
        (
            Dir::Out,
            r#"{"jsonrpc":"2.0","id":13,"result":{"content":[{"type":"text","text":"42"}],"structuredContent":{"result":42},"isError":false}}"#,
        ),
        (
            Dir::Out,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-a","progress":1,"total":20}}"#,
        ),
        (
            Dir::Out,
            r#"{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"counted to 20"}],"structuredContent":{"result":"counted to 20"},"isError":false}}"#,
        ),
        (
            Dir::In,
            r#"{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"count","arguments":{"steps":500},"_meta":{"progressToken":14}}}"#,
        ),
        (
            Dir::In,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":14,"reason":"user"}}"#,
        ),
        (
            Dir::In,
            r#"{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":1}}}"#,
        ),
        (
            Dir::Out,
            r#"{"jsonrpc":"2.0","id":15,"result":{"content":[{"type":"text","text":"2"}],"structuredContent":{"result":2},"isError":false}}"#,
        ),
    ];
    for (dir, raw) in lines {
        w.write_message(&MessageLine::new(Timestamp::now(), dir, raw))
            .unwrap();
    }
    w.finish(Ending::ExitCode(0), Timestamp::now()).unwrap();

    let dir = tmp.path().join("runs");
    let mut c = reel();
    c.args(["verify", "--json", "--notifications", "ignore"])
        .args([
            "--ignore",
            "/result/capabilities",
            "--ignore",
            "/result/serverInfo",
        ])
        .args(["--ignore", "/result/instructions", "--dir"])
        .arg(&dir)
        .arg(&path)
        .arg("--")
        .args(peers.own_server(&[]));
    let out = run(c);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    // initialize and three calls compared; the cancelled one is not.
    assert_eq!(report["summary"]["same"], 4, "{report:#}");
    assert_eq!(report["summary"]["notCompared"], 1, "{report:#}");

    let run_path = PathBuf::from(report["record"].as_str().expect("recorded"));
    assert!(
        run_path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .ends_with("-written-verify.jsonl")
    );
    let live = messages(&run_path);
    let position = |pred: &dyn Fn(&str, &Value) -> bool| {
        live.iter()
            .position(|(d, _, r)| pred(d, r))
            .expect("line present")
    };
    let count20 = &live[position(&|d, r| d == "in" && r["params"]["arguments"]["steps"] == 20)].2;
    let count20_id = count20["id"].clone();
    // A string token stays a string, fresh and tied to the live id.
    assert_eq!(
        count20["params"]["_meta"]["progressToken"],
        Value::from(format!("reel-{count20_id}"))
    );
    // The second call went out before the first was answered.
    let add_sent = position(&|d, r| d == "in" && r["params"]["arguments"]["b"] == 40);
    let count_answered = position(&|d, r| d == "out" && r["id"] == count20_id);
    assert!(add_sent < count_answered, "{live:#?}");
    // The cancellation names the id the cancelled call went out with.
    let count500_id = live[position(&|d, r| d == "in" && r["params"]["arguments"]["steps"] == 500)]
        .2["id"]
        .clone();
    let cancel = &live[position(&|_, r| r["method"] == "notifications/cancelled")].2;
    assert_eq!(cancel["params"]["requestId"], count500_id);
    assert_ne!(count500_id, Value::from(14));
}

#[test]
fn a_refused_probe_falls_back_and_a_server_that_now_accepts_it_is_restarted() {
    let peers = Peers::get();
    let steps = [
        "tools",
        r#"call:add:{"a":1,"b":2}"#,
        r#"call:confirm:{"item":"x"}"#,
    ];
    let legacy = peers.own_server(&["--legacy-only"]);
    let rec = Recorded::new("probe", "auto", &steps, &legacy);

    // The same legacy server: probe refused as recorded, then initialize.
    let (code, report) = rec.verify_json(&[], &legacy);
    assert_eq!(code, Some(0), "{report:#}");
    let live = messages(&rec.verify_runs()[0]);
    let sent: Vec<&str> = live
        .iter()
        .filter(|(d, _, r)| d == "in" && r.get("id").is_some())
        .filter_map(|(_, _, r)| r["method"].as_str())
        .collect();
    assert_eq!(&sent[..2], ["server/discover", "initialize"]);

    // The server now speaks 2026-07-28 too: that is reported, and the legacy session
    // is still played (on a fresh process) and found the same.
    // A refusal that became an answer is output drift, as `reel diff` rules it.
    let (code, report) = rec.verify_json(&["--no-record"], &peers.own_server(&[]));
    assert_eq!(code, Some(1), "{report:#}");
    assert_eq!(
        drift_kinds(&report),
        [(
            "output".into(),
            "error-became-result".into(),
            "server/discover".into()
        )]
    );
    let requests = report["summary"]["requests"].as_u64().unwrap();
    assert_eq!(
        report["summary"]["same"].as_u64(),
        Some(requests - 1),
        "{report:#}"
    );
    assert_eq!(
        report["serverRequests"]["answeredFromTape"], 1,
        "{report:#}"
    );
}

/// Regression: verify's own trace writer wrote a server's non-UTF-8 stdout line as
/// base64 of its bytes, secret and all, where `reel rec` redacts it. Every producer
/// now records through one path: the live run's trace holds the line redacted.
#[test]
fn a_secret_in_a_non_utf8_stdout_line_is_redacted_in_the_live_run() {
    let dir = tempfile::tempdir().unwrap();
    let me = env!("CARGO_BIN_EXE_reel");
    let rec = reel()
        .args([
            "example", "client", "--", me, "rec", "--name", "clean", "--dir",
        ])
        .arg(dir.path())
        .args(["--", me, "example", "server"])
        .output()
        .unwrap();
    assert_eq!(rec.status.code(), Some(0), "{rec:?}");
    // The same server, printing a secret in a line that is not UTF-8 first.
    let noisy = format!("printf 'key AKIAIOSFODNN7EXAMPLE \\377\\n'; exec '{me}' example server");
    let out = reel()
        .args(["verify", "clean", "--name", "noisy", "--dir"])
        .arg(dir.path())
        .args(["--", "sh", "-c", &noisy])
        .output()
        .unwrap();
    assert!(out.status.code().is_some(), "{out:?}");
    let live = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("-noisy.jsonl"))
        .expect("the live run's trace");
    let text = std::fs::read_to_string(&live).unwrap();
    assert!(!text.contains("AKIAIOSFODNN7EXAMPLE"), "{text}");
    let line = text
        .lines()
        .find(|l| l.contains("reel.nonjson"))
        .expect("the line is recorded");
    // Redacted text, not base64 of the raw bytes (which would hold the key).
    assert!(
        line.contains("[REDACTED]") && line.contains("\"lossy\":true"),
        "{line}"
    );
    assert!(!line.contains("\"bytes\""), "{line}");
}

/// A stdio recording whose one tool call answers `number` (its JSON text).
fn numbered_trace(dir: &Path, name: &str, number: &str) -> PathBuf {
    let lines = [
        r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z","label":"n","kind":"mcp","source":"test"}"#.to_owned(),
        r#"{"t":"2026-01-01T00:00:00.000Z","dir":"in","raw":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}}"#.to_owned(),
        r#"{"t":"2026-01-01T00:00:00.010Z","dir":"out","raw":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}}"#.to_owned(),
        r#"{"t":"2026-01-01T00:00:00.020Z","dir":"in","raw":{"jsonrpc":"2.0","method":"notifications/initialized"}}"#.to_owned(),
        r#"{"t":"2026-01-01T00:00:00.030Z","dir":"in","raw":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count","arguments":{}}}}"#.to_owned(),
        format!(r#"{{"t":"2026-01-01T00:00:00.040Z","dir":"out","raw":{{"jsonrpc":"2.0","id":2,"result":{{"content":[],"structuredContent":{{"n":{number}}}}}}}}}"#),
        r#"{"t":"2026-01-01T00:00:01.000Z","type":"end","exitCode":0}"#.to_owned(),
    ];
    let path = dir.join(format!("{name}.jsonl"));
    std::fs::write(&path, lines.join("\n") + "\n").expect("write trace");
    path
}

#[test]
fn numbers_beyond_64_bits_compare_by_their_exact_value() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let recorded = numbered_trace(tmp.path(), "recorded", "12345678901234567890123");
    // The live server is `reel play` of a run that answered one more.
    let verify = |live: &Path| {
        let mut c = reel();
        c.arg("verify")
            .arg(&recorded)
            .args(["--no-record", "--json", "--"])
            .arg(env!("CARGO_BIN_EXE_reel"))
            .arg("play")
            .arg(live);
        run(c)
    };
    let out = verify(&numbered_trace(
        tmp.path(),
        "other",
        "12345678901234567890124",
    ));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let stdout = text(&out.stdout);
    let report: Value = serde_json::from_str(&stdout).expect("a JSON report");
    assert_eq!(
        drift_kinds(&report),
        [(
            "output".to_owned(),
            "result-changed".to_owned(),
            "tools/call count".to_owned()
        )]
    );
    assert!(
        stdout.contains(r#""recorded": 12345678901234567890123"#)
            && stdout.contains(r#""live": 12345678901234567890124"#),
        "{stdout}"
    );
    // The same number spelled otherwise is the same answer.
    let out = verify(&numbered_trace(
        tmp.path(),
        "same",
        "1.2345678901234567890123e22",
    ));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}
