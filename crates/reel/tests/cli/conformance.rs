//! The MCP conformance suite (`@modelcontextprotocol/conformance`, pinned at 0.1.16 and
//! 0.2.0-alpha.12) run against reel, one test per configuration:
//!
//! - the server suite against reel's own fixture server (`peers/conformance_server.py`)
//!   directly, then through `reel rec --url` (and the recording passes `reel check`), then
//!   against `reel play --listen` serving that recording. The same scenarios pass in all
//!   three; [`REPLAY_FAILURES`] would name those that cannot pass against a replay (none),
//!   and [`REPLAY_LOST_PASSES`] the checks that may pass when recorded but not replayed;
//! - the client suite's core scenarios with reel's own client (`peers/conformance_client.py`),
//!   directly (all pass) and with `reel rec --url` spliced between the client and the
//!   suite's server (`peers/conformance_via_rec.py`): there exactly
//!   [`CLIENT_VIA_REC_FAILURES`] fail, each with its failing checks and the reason.
//!
//! Server suite selections, each one suite invocation: 0.1.16 `--suite all` (its legacy
//! scenarios, pending ones included); 0.2.0-alpha.12 `--suite all --spec-version
//! 2025-11-25` (the handshake era) and `--suite all --spec-version 2026-07-28` (the
//! stateless era, `input_required` and the other 2026-07-28 scenarios). The expected
//! scenario set is what the suite's own `list` prints for the same selection. Extension
//! scenarios (`tasks-*`, `sep-2640-*`) are not selected: no revision requires them and the
//! fixture server does not implement those extensions.
//!
//! Client scenarios run one suite invocation each (`--scenario`), [`CLIENT_WORKERS`] at a
//! time, not as the suite's all-at-once `core` run: `sse-retry` (run alone, first) times the
//! client's reconnection against the server's `retry` field, and eighteen clients starting
//! at once on two cores would make that timing, not the client, the thing under test.
//!
//! Peers come from `$REEL_PEERS`, else `<workspace>/.peers` (`cargo xtask peers`); when
//! they are missing the tests fail and say so. Every spawned process is killed on drop;
//! every port is bound by the process that serves it (port 0, announced on stderr).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long a process may take to announce the address it listens on.
const START_LIMIT: Duration = Duration::from_secs(60);
/// How long one suite invocation (or one client scenario) may run.
const RUN_LIMIT: Duration = Duration::from_secs(300);
/// Client scenarios run at once (besides `sse-retry`, which runs alone).
const CLIENT_WORKERS: usize = 3;

/// A scenario that fails in one configuration although it passes directly: the checks
/// that fail, and why.
struct Known {
    scenario: &'static str,
    checks: &'static [&'static str],
    why: &'static str,
}

/// The server-suite scenarios that fail against `reel play --listen` serving a recording of
/// the same selection (none: every scenario passes).
const REPLAY_FAILURES: &[(ServerSuite, &[Known])] = &[
    (ServerSuite::V0116, &[]),
    (ServerSuite::V020Legacy, &[]),
    (ServerSuite::V020Modern, &[]),
];

/// Why `server-sse-polling`'s priming checks may not pass against the replay.
const WHY_PRIMING: &str = "the priming event (an `id` and a `retry` with empty data) the \
    server sends first on the call's POST stream is a reel.sse event in the recording, \
    not a message; a replay that does not resend it leaves the suite no event id and no \
    retry field to see";

/// Why `server-sse-polling`'s resumption check may not pass against the replay.
const WHY_RESUMPTION: &str = "the server closed the call's POST stream after the priming \
    event and answered on the GET the client resumed with Last-Event-ID; a replay that \
    answers on the POST stream in one go leaves nothing to resume (the suite notes the \
    answer came on the POST stream)";

/// A check that passed in the recorded run and may not pass against its replay, and why.
struct Lost {
    scenario: &'static str,
    check: &'static str,
    why: &'static str,
}

/// The checks that may pass in the recorded run but not against its replay, per selection
/// (a ceiling: a replay that reproduces more passes them too). Their scenarios still pass:
/// these checks become warnings or notes, not failures.
const REPLAY_LOST_PASSES: &[(ServerSuite, &[Lost])] = &[
    (ServerSuite::V0116, &[]),
    (
        ServerSuite::V020Legacy,
        &[
            Lost {
                scenario: "server-sse-polling",
                check: "server-sse-priming-event",
                why: WHY_PRIMING,
            },
            Lost {
                scenario: "server-sse-polling",
                check: "server-sse-retry-field",
                why: WHY_PRIMING,
            },
            Lost {
                scenario: "server-sse-polling",
                check: "server-sse-disconnect-resume",
                why: WHY_RESUMPTION,
            },
        ],
    ),
    (ServerSuite::V020Modern, &[]),
];

/// Why the check of the resource the client names fails through `reel rec --url`: by
/// design, for any proxy at another address.
const WHY_RESOURCE: &str = "the authorization server (another origin, not proxied) compares \
    the `resource` the client sends with the one the MCP server published; reel rewrites the \
    published metadata to name itself (else the client must refuse it, RFC 9728 section \
    7.3), so the client names reel's address";

const RESOURCE_CHECK: &[&str] = &["resource-parameter-matches-prm"];

/// A core client scenario that fails only the resource check through `reel rec --url`.
const fn resource_named_by_proxy(scenario: &'static str) -> Known {
    Known {
        scenario,
        checks: RESOURCE_CHECK,
        why: WHY_RESOURCE,
    }
}

/// The core client scenarios that fail with `reel rec --url` spliced in, per suite version
/// (0.1.16 has no check of the resource against the published metadata).
const CLIENT_VIA_REC_FAILURES: &[(&str, &[Known])] = &[
    ("0.1.16", &[]),
    (
        "0.2.0-alpha.12",
        &[
            resource_named_by_proxy("auth/metadata-default"),
            resource_named_by_proxy("auth/metadata-var1"),
            resource_named_by_proxy("auth/metadata-var2"),
            resource_named_by_proxy("auth/metadata-var3"),
            resource_named_by_proxy("auth/token-endpoint-auth-basic"),
            resource_named_by_proxy("auth/token-endpoint-auth-post"),
            resource_named_by_proxy("auth/token-endpoint-auth-none"),
        ],
    ),
];

/// The client suite's `core` scenarios, identical in both pinned versions.
const CLIENT_CORE: &[&str] = &[
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
];

// ---------------------------------------------------------------------------------------
// Peers

/// The installed peers this file drives.
struct Peers {
    /// Node ≥ 22 (the suites need `fs.globSync`).
    node: PathBuf,
    /// `<prefix>/node_modules/@modelcontextprotocol/conformance/dist/index.js` per version.
    suites: BTreeMap<&'static str, PathBuf>,
    python: PathBuf,
    /// `crates/reel/tests/peers`.
    scripts: PathBuf,
}

impl Peers {
    fn get() -> Peers {
        let dir = std::env::var_os("REEL_PEERS")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.peers"));
        let suite = |version: &str| {
            dir.join(format!("conformance-{version}"))
                .join("node_modules/@modelcontextprotocol/conformance/dist/index.js")
        };
        let peers = Peers {
            node: dir.join("node24/node_modules/.bin/node"),
            suites: [
                ("0.1.16", suite("0.1.16")),
                ("0.2.0-alpha.12", suite("0.2.0-alpha.12")),
            ]
            .into_iter()
            .collect(),
            python: dir.join("venv/bin/python"),
            scripts: Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers"),
        };
        let mut wanted = vec![&peers.node, &peers.python];
        wanted.extend(peers.suites.values());
        let missing: Vec<String> = wanted
            .iter()
            .filter(|p| !p.exists())
            .map(|p| p.display().to_string())
            .collect();
        assert!(
            missing.is_empty(),
            "the conformance peers are missing ({}); run `cargo xtask peers` (or set REEL_PEERS)",
            missing.join(", ")
        );
        peers
    }

    /// `node <suite> <args…>`.
    fn suite(&self, version: &str, args: &[&str]) -> Command {
        let mut c = Command::new(&self.node);
        c.arg(&self.suites[version])
            .args(args)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        c
    }

    fn script(&self, name: &str) -> String {
        self.scripts.join(name).display().to_string()
    }
}

fn reel() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_reel"));
    c.env("NO_COLOR", "1").stdin(Stdio::null());
    c
}

// ---------------------------------------------------------------------------------------
// Processes

/// A spawned process, killed (and reaped) on drop; its stderr is collected as it comes.
struct Proc {
    what: String,
    child: Child,
    stderr: Arc<Mutex<String>>,
    /// The thread copying stderr; it ends when the process closes its stderr.
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Proc {
    /// Starts `cmd` and waits for the stderr line saying `listening on URL`; returns the
    /// process and that URL.
    fn announcing(what: &str, mut cmd: Command) -> (Proc, String) {
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel();
        let pipe = child.stderr.take().expect("stderr");
        let sink = Arc::clone(&stderr);
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = listening_url(&line) {
                    let _ = tx.send(url);
                }
                let mut all = sink.lock().expect("stderr buffer");
                all.push_str(&line);
                all.push('\n');
            }
        });
        let proc = Proc {
            what: what.to_owned(),
            child,
            stderr,
            reader: Some(reader),
        };
        match rx.recv_timeout(START_LIMIT) {
            Ok(url) => (proc, url),
            Err(_) => panic!(
                "{what} did not announce its address within {START_LIMIT:?}; its stderr:\n{}",
                proc.stderr()
            ),
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().expect("stderr buffer").clone()
    }

    /// Sends SIGTERM and waits for the exit status; returns it with everything the
    /// process wrote on stderr.
    fn terminate(mut self) -> (ExitStatus, String) {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(sent.success(), "kill -TERM {} failed", self.what);
        let Some(status) = wait_limited(&mut self.child, RUN_LIMIT) else {
            panic!(
                "{} did not end within {RUN_LIMIT:?} of SIGTERM; its stderr:\n{}",
                self.what,
                self.stderr()
            )
        };
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        (status, self.stderr())
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The URL in a `… listening on URL` line (the convention of the fixture server and of
/// `reel rec --url` / `reel play --listen`).
fn listening_url(line: &str) -> Option<String> {
    let at = line.find("listening on ")? + "listening on ".len();
    let url = line[at..].split_whitespace().next()?;
    url.starts_with("http").then(|| url.to_owned())
}

/// `scheme://host:port` of a URL.
fn origin(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    url[after_scheme..]
        .find('/')
        .map_or(url, |i| &url[..after_scheme + i])
}

fn wait_limited(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `cmd` to completion (killed after [`RUN_LIMIT`]): exit code, stdout, stderr.
fn run(what: &str, mut cmd: Command) -> (Option<i32>, String, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let collect = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = pipe.read_to_string(&mut s);
            s
        })
    };
    let out = collect(Box::new(child.stdout.take().expect("stdout")));
    let err = collect(Box::new(child.stderr.take().expect("stderr")));
    let status = wait_limited(&mut child, RUN_LIMIT);
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let (out, err) = (
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    );
    assert!(
        status.is_some(),
        "{what} did not finish within {RUN_LIMIT:?}; stdout:\n{out}\nstderr:\n{err}"
    );
    (status.and_then(|s| s.code()), out, err)
}

// ---------------------------------------------------------------------------------------
// What a suite run said

/// The checks of one scenario, by status.
#[derive(Debug, Default, Clone)]
struct Tally {
    success: u64,
    failure: u64,
    warning: u64,
    /// `id: message` of each failed check.
    failures: Vec<String>,
    /// The ids of the failed checks.
    failed_ids: BTreeSet<String>,
    /// How many checks of each id passed (an id may occur more than once).
    passed_ids: BTreeMap<String, u64>,
}

/// One suite invocation, read from its output directory (`checks.json` per scenario) and
/// its exit code.
#[derive(Debug, Clone)]
struct SuiteRun {
    label: String,
    code: Option<i32>,
    scenarios: BTreeMap<String, Tally>,
    /// The `Total: N passed, M failed` line of a server-suite run.
    total: Option<(u64, u64)>,
    log: String,
}

impl SuiteRun {
    fn read(label: &str, out_dir: &Path, code: Option<i32>, log: String) -> SuiteRun {
        let mut scenarios = BTreeMap::new();
        let mut files = Vec::new();
        find_checks(out_dir, &mut files);
        for file in files {
            let dir = file.parent().expect("a result directory");
            let rel = dir.strip_prefix(out_dir).expect("under the output dir");
            let name = scenario_name(&rel.to_string_lossy());
            let checks: Vec<Value> = serde_json::from_slice(
                &std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display())),
            )
            .unwrap_or_else(|e| panic!("{} is not a JSON array of checks: {e}", file.display()));
            let tally: &mut Tally = scenarios.entry(name).or_default();
            for check in &checks {
                match check["status"].as_str() {
                    Some("SUCCESS") => {
                        tally.success += 1;
                        let id = check["id"].as_str().unwrap_or("?").to_owned();
                        *tally.passed_ids.entry(id).or_default() += 1;
                    }
                    Some("FAILURE") => {
                        tally.failure += 1;
                        tally
                            .failed_ids
                            .insert(check["id"].as_str().unwrap_or("?").to_owned());
                        tally.failures.push(format!(
                            "{}: {}",
                            check["id"].as_str().unwrap_or("?"),
                            check["errorMessage"].as_str().unwrap_or("")
                        ));
                    }
                    Some("WARNING") => tally.warning += 1,
                    _ => {}
                }
            }
        }
        SuiteRun {
            label: label.to_owned(),
            code,
            scenarios,
            total: total_line(&log),
            log,
        }
    }

    fn names(&self) -> BTreeSet<String> {
        self.scenarios.keys().cloned().collect()
    }

    fn failed(&self) -> BTreeSet<String> {
        self.scenarios
            .iter()
            .filter(|(_, t)| t.failure > 0)
            .map(|(n, _)| n.clone())
            .collect()
    }

    fn passed(&self) -> BTreeSet<String> {
        &self.names() - &self.failed()
    }

    /// (checks passed, checks failed, warnings) over every scenario.
    fn totals(&self) -> (u64, u64, u64) {
        self.scenarios.values().fold((0, 0, 0), |(s, f, w), t| {
            (s + t.success, f + t.failure, w + t.warning)
        })
    }

    fn summary(&self) -> String {
        let (s, f, w) = self.totals();
        let total = s + f;
        let mut out = format!(
            "{}: {} scenarios, {} pass, {} fail; checks {s} passed / {f} failed / {total} total ({w} warnings)",
            self.label,
            self.scenarios.len(),
            self.passed().len(),
            self.failed().len()
        );
        for (name, t) in self.scenarios.iter().filter(|(_, t)| t.failure > 0) {
            out.push_str(&format!("\n  ✗ {name}: {}", t.failures.join(" | ")));
        }
        out
    }

    /// The run covered exactly `expected`, nothing failed, and the exit code and the
    /// printed totals agree with the files.
    fn assert_all_pass(&self, expected: &BTreeSet<String>) {
        eprintln!("{}", self.summary());
        assert_eq!(
            &self.names(),
            expected,
            "{}: the scenarios run are not the ones the suite lists\n{}",
            self.label,
            self.log
        );
        assert!(
            self.failed().is_empty(),
            "{}: failing scenarios\n{}\n{}",
            self.label,
            self.summary(),
            self.log
        );
        assert_eq!(
            self.code,
            Some(0),
            "{}: exit code\n{}",
            self.label,
            self.log
        );
        self.assert_total_line();
    }

    /// The run covered exactly `expected`; the scenarios in `known` failed with exactly
    /// their checks and every other scenario passed; the exit code says so.
    fn assert_known_failures(&self, expected: &BTreeSet<String>, known: &[Known]) {
        eprintln!("{}", self.summary());
        for k in known {
            eprintln!("  (expected: {} fails, because {})", k.scenario, k.why);
        }
        assert_eq!(
            &self.names(),
            expected,
            "{}: the scenarios run are not the ones the suite lists\n{}",
            self.label,
            self.log
        );
        let got: BTreeMap<String, BTreeSet<String>> = self
            .scenarios
            .iter()
            .filter(|(_, t)| t.failure > 0)
            .map(|(n, t)| (n.clone(), t.failed_ids.clone()))
            .collect();
        let want: BTreeMap<String, BTreeSet<String>> = known
            .iter()
            .map(|k| {
                let checks = k.checks.iter().map(|c| c.to_string()).collect();
                (k.scenario.to_owned(), checks)
            })
            .collect();
        assert_eq!(
            got,
            want,
            "{}: the failing scenarios (and their failing checks) are not the expected ones\n{}",
            self.label,
            self.summary()
        );
        let code = i32::from(!known.is_empty());
        assert_eq!(
            self.code,
            Some(code),
            "{}: exit code\n{}",
            self.label,
            self.log
        );
        self.assert_total_line();
    }

    /// `(scenario, check id)` of the checks that passed in `baseline` more often than here
    /// (failed, became warnings, or were not made at all).
    fn lost_passes(&self, baseline: &SuiteRun) -> BTreeSet<(String, String)> {
        let mut lost = BTreeSet::new();
        for (scenario, was) in &baseline.scenarios {
            let now = self.scenarios.get(scenario);
            for (id, count) in &was.passed_ids {
                let still = now.and_then(|t| t.passed_ids.get(id)).copied().unwrap_or(0);
                if still < *count {
                    lost.insert((scenario.clone(), id.clone()));
                }
            }
        }
        lost
    }

    fn assert_total_line(&self) {
        if let Some((passed, failed)) = self.total {
            let (s, f, _) = self.totals();
            assert_eq!(
                (passed, failed),
                (s, f),
                "{}: the printed totals disagree with the checks files",
                self.label
            );
        }
    }
}

fn find_checks(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            find_checks(&path, out);
        } else if path.file_name().is_some_and(|n| n == "checks.json") {
            out.push(path);
        }
    }
}

/// `server-tools-list-2026-11-30T09-48-59-190Z` → `tools-list`;
/// `auth/metadata-default-2026-…Z` → `auth/metadata-default`.
fn scenario_name(rel: &str) -> String {
    // The suite appends `-` and an ISO timestamp with `:` and `.` made `-` (25 bytes).
    const STAMP: usize = "-2026-11-30T09-48-59-190Z".len();
    let rel = rel.replace('\\', "/");
    let cut = rel.len().saturating_sub(STAMP);
    let (name, stamp) = rel.split_at(cut);
    assert!(
        stamp.starts_with('-') && stamp.ends_with('Z'),
        "unexpected result directory name {rel}"
    );
    name.strip_prefix("server-").unwrap_or(name).to_owned()
}

/// `Total: 40 passed, 0 failed` (server mode).
fn total_line(log: &str) -> Option<(u64, u64)> {
    let line = log.lines().rev().find(|l| l.starts_with("Total: "))?;
    let mut numbers = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<u64>().ok());
    Some((numbers.next()??, numbers.next()??))
}

// ---------------------------------------------------------------------------------------
// The server suite

/// One server-suite selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ServerSuite {
    /// 0.1.16, every server scenario (legacy era).
    V0116,
    /// 0.2.0-alpha.12, every scenario that applies at 2025-11-25 (handshake era).
    V020Legacy,
    /// 0.2.0-alpha.12, every scenario that applies at 2026-07-28 (stateless era).
    V020Modern,
}

const SERVER_SUITES: [ServerSuite; 3] = [
    ServerSuite::V0116,
    ServerSuite::V020Legacy,
    ServerSuite::V020Modern,
];

impl ServerSuite {
    fn version(self) -> &'static str {
        match self {
            ServerSuite::V0116 => "0.1.16",
            ServerSuite::V020Legacy | ServerSuite::V020Modern => "0.2.0-alpha.12",
        }
    }

    fn spec_version(self) -> Option<&'static str> {
        match self {
            ServerSuite::V0116 => None,
            ServerSuite::V020Legacy => Some("2025-11-25"),
            ServerSuite::V020Modern => Some("2026-07-28"),
        }
    }

    fn label(self) -> String {
        match self.spec_version() {
            Some(v) => format!("server suite {} at {v}", self.version()),
            None => format!("server suite {}", self.version()),
        }
    }

    /// The scenario names the suite's own `list` gives for this selection.
    fn listed(self, peers: &Peers) -> BTreeSet<String> {
        let mut args = vec!["list", "--server"];
        if let Some(v) = self.spec_version() {
            args.extend(["--spec-version", v]);
        }
        let (code, out, err) = run("conformance list", peers.suite(self.version(), &args));
        assert_eq!(code, Some(0), "conformance list failed: {err}");
        let names: BTreeSet<String> = out
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("- "))
            .map(|l| l.split(" [").next().unwrap_or(l).trim().to_owned())
            .collect();
        assert!(
            !names.is_empty(),
            "conformance list printed no scenario:\n{out}"
        );
        names
    }

    /// Runs the selection against `url`, results in `out_dir`.
    fn run(self, peers: &Peers, url: &str, out_dir: &Path, label: &str) -> SuiteRun {
        let out = out_dir.display().to_string();
        let mut args = vec!["server", "--url", url, "--suite", "all", "-o", &out];
        if let Some(v) = self.spec_version() {
            args.extend(["--spec-version", v]);
        }
        let (code, stdout, stderr) = run(label, peers.suite(self.version(), &args));
        SuiteRun::read(label, out_dir, code, format!("{stdout}\n{stderr}"))
    }
}

/// reel's fixture server on a free port: the process and its MCP URL.
fn fixture_server(peers: &Peers) -> (Proc, String) {
    let mut cmd = Command::new(&peers.python);
    cmd.arg(peers.script("conformance_server.py")).arg("0");
    Proc::announcing("the conformance fixture server", cmd)
}

/// The URL a proxy listening at `listen` serves `upstream` under (same path).
fn proxied(listen: &str, upstream: &str) -> String {
    format!("{}{}", origin(listen), &upstream[origin(upstream).len()..])
}

/// What the recording configuration produced, shared by the test that checks it and the
/// test that replays it (recorded once per test run).
struct Recording {
    runs: Vec<(ServerSuite, SuiteRun, PathBuf)>,
}

fn recording() -> &'static Result<Recording, String> {
    static RECORDING: OnceLock<Result<Recording, String>> = OnceLock::new();
    RECORDING.get_or_init(|| {
        std::panic::catch_unwind(record_server_suites).map_err(|e| {
            e.downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "recording panicked".into())
        })
    })
}

/// Every server-suite selection through its own `reel rec --url` in front of one fixture
/// server: one trace per selection. The files live under cargo's scratch dir for
/// integration tests, because two tests read them.
fn record_server_suites() -> Recording {
    let peers = Peers::get();
    forget_old_recordings();
    let scratch = tempfile::Builder::new()
        .prefix("conformance-rec-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("scratch dir")
        .keep();
    let (_server, url) = fixture_server(&peers);
    let mut runs = Vec::new();
    for (i, suite) in SERVER_SUITES.into_iter().enumerate() {
        let traces = scratch.join(format!("traces-{i}"));
        let mut rec = reel();
        rec.args(["rec", "--url", &url, "--listen", "127.0.0.1:0", "--name"])
            .arg(format!("conformance-{i}"))
            .arg("--dir")
            .arg(&traces);
        let (proxy, listen) = Proc::announcing("reel rec --url", rec);
        let label = format!("{} through reel rec --url", suite.label());
        let result = suite.run(
            &peers,
            &proxied(&listen, &url),
            &scratch.join(format!("out-{i}")),
            &label,
        );
        let (status, stderr) = proxy.terminate();
        assert!(
            status.success(),
            "reel rec --url ended with {status} after SIGTERM; its stderr:\n{stderr}"
        );
        let trace = crate::harness::play_http_support::only_trace(&traces);
        runs.push((suite, result, trace));
    }
    Recording { runs }
}

/// Removes the recordings earlier runs left in cargo's scratch dir (an hour old or more,
/// so a run going on beside this one keeps its own).
fn forget_old_recordings() {
    let Ok(entries) = std::fs::read_dir(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > Duration::from_secs(3600));
        if old
            && entry
                .file_name()
                .to_string_lossy()
                .starts_with("conformance-rec-")
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn assert_reel_check(trace: &Path) {
    let mut c = reel();
    c.arg("check").arg(trace);
    let (code, out, err) = run("reel check", c);
    assert_eq!(
        code,
        Some(0),
        "reel check {} failed:\n{out}\n{err}",
        trace.display()
    );
}

#[test]
fn server_suite_directly_against_the_fixture_server() {
    let peers = Peers::get();
    let tmp = tempfile::tempdir().expect("temp dir");
    let (_server, url) = fixture_server(&peers);
    for (i, suite) in SERVER_SUITES.into_iter().enumerate() {
        let run = suite.run(
            &peers,
            &url,
            &tmp.path().join(format!("out-{i}")),
            &suite.label(),
        );
        run.assert_all_pass(&suite.listed(&peers));
    }
}

#[test]
fn server_suite_through_reel_rec_url() {
    let peers = Peers::get();
    let recording = match recording() {
        Ok(r) => r,
        Err(e) => panic!("recording the server suite through reel rec --url failed: {e}"),
    };
    for (suite, run, trace) in &recording.runs {
        run.assert_all_pass(&suite.listed(&peers));
        assert_reel_check(trace);
    }
}

#[test]
fn server_suite_against_reel_play_listen_of_the_recording() {
    let peers = Peers::get();
    let recording = match recording() {
        Ok(r) => r,
        Err(e) => panic!("recording the server suite through reel rec --url failed: {e}"),
    };
    let tmp = tempfile::tempdir().expect("temp dir");
    for (i, (suite, recorded, trace)) in recording.runs.iter().enumerate() {
        let mut play = reel();
        play.arg("play")
            .arg(trace)
            .args(["--listen", "127.0.0.1:0"]);
        let (player, url) = Proc::announcing("reel play --listen", play);
        let label = format!("{} against reel play --listen", suite.label());
        let run = suite.run(&peers, &url, &tmp.path().join(format!("out-{i}")), &label);
        let (status, report) = player.terminate();
        eprintln!("{label}: reel play ended with {status}; it said:\n{report}");

        let known = REPLAY_FAILURES
            .iter()
            .find(|(s, _)| s == suite)
            .map_or(&[][..], |(_, k)| k);
        run.assert_known_failures(&suite.listed(&peers), known);

        let lost = REPLAY_LOST_PASSES
            .iter()
            .find(|(s, _)| s == suite)
            .map_or(&[][..], |(_, l)| l);
        let allowed: BTreeSet<(String, String)> = lost
            .iter()
            .map(|l| (l.scenario.to_owned(), l.check.to_owned()))
            .collect();
        let got = run.lost_passes(recorded);
        for (scenario, check) in &got {
            let why = lost
                .iter()
                .find(|l| l.scenario == scenario && l.check == check)
                .map_or("(not expected)", |l| l.why);
            eprintln!("  (passed when recorded, not replayed: {scenario} {check}: {why})");
        }
        assert!(
            got.is_subset(&allowed),
            "{label}: checks that passed when recorded fail against the replay: {:?}",
            got.difference(&allowed).collect::<Vec<_>>()
        );
    }
}

// ---------------------------------------------------------------------------------------
// The client suite

/// Runs every core client scenario with `command` as the client, one scenario at a time.
fn client_suite(
    peers: &Peers,
    version: &str,
    command: &str,
    out_dir: &Path,
    label: &str,
) -> SuiteRun {
    let out = out_dir.display().to_string();
    let one = |scenario: &str| {
        let args = [
            "client",
            "--command",
            command,
            "--scenario",
            scenario,
            "-o",
            &out,
        ];
        let (code, stdout, stderr) =
            run(&format!("{label}: {scenario}"), peers.suite(version, &args));
        let log = format!("--- {scenario} (exit {code:?})\n{stdout}\n{stderr}\n");
        (code, log)
    };
    // `sse-retry` alone (it is timed), then the rest a few at a time.
    let (timed, rest): (Vec<&str>, Vec<&str>) =
        CLIENT_CORE.iter().partition(|s| **s == "sse-retry");
    let mut results: Vec<(Option<i32>, String)> = timed.into_iter().map(one).collect();
    let queue = Mutex::new(rest.into_iter());
    let done = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..CLIENT_WORKERS {
            scope.spawn(|| {
                loop {
                    let next = queue.lock().expect("queue").next();
                    let Some(scenario) = next else { break };
                    let result = one(scenario);
                    done.lock().expect("results").push(result);
                }
            });
        }
    });
    results.extend(done.into_inner().expect("results"));
    let failed: Vec<String> = results
        .into_iter()
        .filter(|(code, _)| *code != Some(0))
        .map(|(_, log)| log)
        .collect();
    let code = Some(i32::from(!failed.is_empty()));
    SuiteRun::read(label, out_dir, code, failed.concat())
}

fn core_set() -> BTreeSet<String> {
    CLIENT_CORE.iter().map(|s| s.to_string()).collect()
}

#[test]
fn client_suite_core_directly() {
    let peers = Peers::get();
    let tmp = tempfile::tempdir().expect("temp dir");
    let command = format!(
        "{} {}",
        peers.python.display(),
        peers.script("conformance_client.py")
    );
    for version in ["0.1.16", "0.2.0-alpha.12"] {
        let label = format!("client suite {version} core");
        let run = client_suite(&peers, version, &command, &tmp.path().join(version), &label);
        run.assert_all_pass(&core_set());
        assert_eq!(run.totals().2, 0, "{label}: warnings\n{}", run.summary());
    }
}

#[test]
fn client_suite_core_through_reel_rec_url() {
    let peers = Peers::get();
    let tmp = tempfile::tempdir().expect("temp dir");
    for version in ["0.1.16", "0.2.0-alpha.12"] {
        let traces = tmp.path().join(format!("traces-{version}"));
        let command = format!(
            "{python} {via} {reel} {traces} {python} {client}",
            python = peers.python.display(),
            via = peers.script("conformance_via_rec.py"),
            reel = env!("CARGO_BIN_EXE_reel"),
            traces = traces.display(),
            client = peers.script("conformance_client.py"),
        );
        let label = format!("client suite {version} core through reel rec --url");
        let run = client_suite(&peers, version, &command, &tmp.path().join(version), &label);
        let known = CLIENT_VIA_REC_FAILURES
            .iter()
            .find(|(v, _)| *v == version)
            .map_or(&[][..], |(_, k)| k);
        run.assert_known_failures(&core_set(), known);
        assert_eq!(run.totals().2, 0, "{label}: warnings\n{}", run.summary());
        let written: Vec<PathBuf> = std::fs::read_dir(&traces)
            .expect("reel rec wrote its traces")
            .flatten()
            .map(|e| e.path())
            .collect();
        assert_eq!(
            written.len(),
            CLIENT_CORE.len(),
            "{label}: one trace per scenario in {}",
            traces.display()
        );
        for trace in written {
            assert_reel_check(&trace);
        }
    }
}
