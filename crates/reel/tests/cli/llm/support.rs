//! What the `reel llm` tests share, on top of `harness`: the scripted upstream
//! (`llm_upstream.py`) and the independent mocks (`llm_mocks.py`) as servers killed on
//! drop, `reel llm` recording or replaying (its address read from its listening line,
//! stopped with SIGINT), the SDK clients (`llm_client.py`, many cases in one process
//! with `--batch`; `llm_client.mjs`), and a recorded trace read back (turns and events
//! by exchange, `reel check`, `reel stats --json`).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::harness::net::{Server, free_port};
use crate::harness::play_http_support::{only_trace, run, trace_lines};
use crate::harness::play_support::Peers;
use crate::harness::player::{Player, Stopped};
use crate::harness::reel;

/// The Python interpreter of the peers.
pub fn python() -> PathBuf {
    Peers::get().python
}

/// Where the peers are installed (the parent of `venv/`).
pub fn peers_root() -> PathBuf {
    python()
        .ancestors()
        .nth(3)
        .expect("the peers' root")
        .to_owned()
}

/// A peer package under `node_modules`, or a failure that says how to install it.
pub fn node_package(name: &str) -> PathBuf {
    let p = peers_root().join("node_modules").join(name);
    assert!(
        p.exists(),
        "peers missing: run `cargo xtask peers` (looked for {})",
        p.display()
    );
    p
}

// ---- upstreams ---------------------------------------------------------------------------

/// A model server on loopback: `llm_upstream.py` or one of the mocks.
pub struct Upstream {
    _server: Server,
    /// `http://127.0.0.1:PORT` (https with TLS).
    pub url: String,
    /// The request log (`LLM_UPSTREAM_LOG`), for `llm_upstream.py`.
    pub log: PathBuf,
}

impl Upstream {
    /// `llm_upstream.py`, its requests logged to `<dir>/<name>.log`.
    pub fn scripted(dir: &Path, name: &str) -> Upstream {
        Upstream::scripted_with(dir, name, &[])
    }

    /// `llm_upstream.py --tls CERT KEY`.
    pub fn scripted_tls(dir: &Path, name: &str, cert: &Path, key: &Path) -> Upstream {
        Upstream::scripted_with(
            dir,
            name,
            &["--tls", cert.to_str().unwrap(), key.to_str().unwrap()],
        )
    }

    fn scripted_with(dir: &Path, name: &str, extra: &[&str]) -> Upstream {
        let port = free_port();
        let log = dir.join(format!("{name}.log"));
        let mut c = Command::new(python());
        c.arg(Peers::script("llm_upstream.py"))
            .args(["--port", &port.to_string()])
            .args(extra)
            .env("LLM_UPSTREAM_LOG", &log);
        let scheme = if extra.is_empty() { "http" } else { "https" };
        Upstream {
            _server: Server::start(c, port),
            url: format!("{scheme}://127.0.0.1:{port}"),
            log,
        }
    }

    /// `llm_mocks.py llmock` or `llm_mocks.py aimock`.
    pub fn mock(which: &str) -> Upstream {
        let port = free_port();
        // llmock runs on a venv of its own (see xtask's peers); the aimock launcher on
        // the shared one.
        let interpreter = match which {
            "llmock" => peers_root().join("llmock-venv/bin/python"),
            _ => python(),
        };
        let mut c = Command::new(interpreter);
        c.arg(Peers::script("llm_mocks.py"))
            .args([which, "--port", &port.to_string()])
            .env("REEL_PEERS", peers_root());
        Upstream {
            _server: Server::start(c, port),
            url: format!("http://127.0.0.1:{port}"),
            log: PathBuf::new(),
        }
    }

    /// `127.0.0.1:PORT`.
    pub fn addr(&self) -> &str {
        self.url.split("://").nth(1).expect("a URL")
    }

    /// The requests it read, in order, as logged.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a log line"))
            .collect()
    }
}

// ---- reel llm ----------------------------------------------------------------------------

/// A running `reel llm` (recording or `--play`): the one player, and where it records.
pub struct Llm {
    player: Player,
    /// `http://127.0.0.1:PORT`, as reel printed it.
    pub url: String,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// Where it records.
    pub dir: PathBuf,
}

impl Llm {
    /// `reel llm --dir DIR --upstream UPSTREAM FLAGS…`.
    pub fn record(dir: &Path, upstream: &str, flags: &[&str]) -> Llm {
        let mut c = reel();
        c.arg("llm")
            .arg("--dir")
            .arg(dir)
            .args(["--upstream", upstream])
            .args(flags);
        Llm::spawn(c, dir)
    }

    /// [`Llm::record`] with `SSL_CERT_FILE` set to `bundle` (or removed).
    pub fn record_trusting(dir: &Path, upstream: &str, bundle: Option<&Path>) -> Llm {
        let mut c = reel();
        c.arg("llm")
            .arg("--dir")
            .arg(dir)
            .args(["--upstream", upstream]);
        match bundle {
            Some(b) => c.env("SSL_CERT_FILE", b),
            None => c.env_remove("SSL_CERT_FILE"),
        };
        Llm::spawn(c, dir)
    }

    /// `reel llm --dir DIR FLAGS…` (routes of its own, from `--map`).
    pub fn record_with(dir: &Path, flags: &[&str]) -> Llm {
        let mut c = reel();
        c.arg("llm").arg("--dir").arg(dir).args(flags);
        Llm::spawn(c, dir)
    }

    /// `reel llm --play TRACE FLAGS…`.
    pub fn play(trace: &Path, flags: &[&str]) -> Llm {
        let mut c = reel();
        c.arg("llm").arg("--play").arg(trace).args(flags);
        Llm::spawn(c, trace.parent().expect("the trace's dir"))
    }

    fn spawn(c: Command, dir: &Path) -> Llm {
        let player = Player::listening(c);
        Llm {
            url: player.url.clone(),
            addr: player
                .url
                .strip_prefix("http://")
                .expect("an http:// URL")
                .to_owned(),
            player,
            dir: dir.to_owned(),
        }
    }

    /// The most memory reel has held so far (`VmHWM`, KiB).
    pub fn peak_rss_kib(&self) -> u64 {
        self.player.peak_memory() / 1024
    }

    /// The base URLs an SDK gets to reach it.
    pub fn bases(&self) -> Bases {
        Bases::of(&self.url)
    }

    pub fn stderr_text(&self) -> String {
        self.player.stderr_text()
    }

    /// Sends SIGINT and waits for reel to exit.
    pub fn stop(self) -> Stopped {
        self.player.signal_and_stop("-INT")
    }

    /// Kills reel with SIGKILL (no clean-up of any kind) and waits for it.
    pub fn kill9(self) {
        self.player.kill();
    }

    /// [`Llm::stop`], asserting exit 0; the one trace it wrote.
    pub fn finish(self) -> PathBuf {
        let dir = self.dir.clone();
        let s = self.stop();
        assert_eq!(s.code(), Some(0), "reel llm: {}", s.stderr);
        only_trace(&dir)
    }
}

// ---- SDK clients -------------------------------------------------------------------------

/// Where the clients' SDKs are sent.
#[derive(Clone, Debug)]
pub struct Bases {
    /// `ANTHROPIC_BASE_URL` (no `/v1`).
    pub anthropic: String,
    /// `OPENAI_BASE_URL` (with `/v1`).
    pub openai: String,
}

impl Bases {
    /// A server taking both APIs under `/v1`.
    pub fn of(url: &str) -> Bases {
        Bases {
            anthropic: url.to_owned(),
            openai: format!("{url}/v1"),
        }
    }
}

/// One run of a client: api, mode, scenario, and what else it is told.
#[derive(Clone, Debug)]
pub struct Case {
    pub api: &'static str,
    pub mode: &'static str,
    pub scenario: &'static str,
    pub model: Option<String>,
    pub prompt: Option<String>,
}

impl Case {
    pub fn new(api: &'static str, mode: &'static str, scenario: &'static str) -> Case {
        Case {
            api,
            mode,
            scenario,
            model: None,
            prompt: None,
        }
    }

    pub fn model(mut self, m: &str) -> Case {
        self.model = Some(m.to_owned());
        self
    }

    pub fn prompt(mut self, p: &str) -> Case {
        self.prompt = Some(p.to_owned());
        self
    }

    pub fn name(&self) -> String {
        format!("{}/{}/{}", self.api, self.mode, self.scenario)
    }

    /// Its flags.
    pub fn args(&self, raw_out: Option<&Path>) -> Vec<String> {
        let mut a: Vec<String> = [
            "--api",
            self.api,
            "--mode",
            self.mode,
            "--scenario",
            self.scenario,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if let Some(m) = &self.model {
            a.extend(["--model".into(), m.clone()]);
        }
        if let Some(p) = &self.prompt {
            a.extend(["--prompt".into(), p.clone()]);
        }
        if let Some(r) = raw_out {
            a.extend(["--raw-out".into(), r.to_str().unwrap().to_owned()]);
        }
        a
    }
}

/// The matrix of api × mode × scenario.
pub fn matrix(apis: &[&'static str], scenarios: &[&'static str]) -> Vec<Case> {
    let mut v = Vec::new();
    for &api in apis {
        for mode in ["stream", "plain"] {
            for &s in scenarios {
                v.push(Case::new(api, mode, s));
            }
        }
    }
    v
}

/// What one client run printed, and the response bodies it read off the socket.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub out: Value,
    pub raw: Vec<u8>,
}

fn client_env(c: &mut Command, bases: &Bases) {
    c.env("ANTHROPIC_BASE_URL", &bases.anthropic)
        .env("OPENAI_BASE_URL", &bases.openai)
        .env("REEL_PEERS", peers_root())
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_ORG_ID")
        .env_remove("HTTP_PROXY")
        .env_remove("HTTPS_PROXY")
        .env_remove("http_proxy")
        .env_remove("https_proxy")
        .env("NO_PROXY", "*");
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Runs `cases` in turn in one `llm_client.py --batch` against `bases` (with `env`
/// added); their raw bodies go to `<dir>/<tag>-<i>.raw`.
pub fn python_batch(
    dir: &Path,
    tag: &str,
    bases: &Bases,
    env: &[(&str, &str)],
    cases: &[Case],
) -> Vec<Outcome> {
    let raws: Vec<PathBuf> = (0..cases.len())
        .map(|i| dir.join(format!("{tag}-{i}.raw")))
        .collect();
    let script: String = cases
        .iter()
        .zip(&raws)
        .map(|(c, r)| {
            let words: Vec<String> = c.args(Some(r)).iter().map(|a| shell_quote(a)).collect();
            format!("{}\n", words.join(" "))
        })
        .collect();
    let batch = dir.join(format!("{tag}.batch"));
    std::fs::write(&batch, script).expect("write the batch");
    let mut c = Command::new(python());
    c.arg("-W")
        .arg("ignore")
        .arg(Peers::script("llm_client.py"))
        .arg("--batch")
        .arg(&batch);
    client_env(&mut c, bases);
    for (k, v) in env {
        c.env(k, v);
    }
    let (_, stdout, stderr) = run(c);
    let outs: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}; {stderr}")))
        .collect();
    assert_eq!(
        outs.len(),
        cases.len(),
        "llm_client.py printed {} lines for {} cases: {stdout}{stderr}",
        outs.len(),
        cases.len()
    );
    outs.into_iter()
        .zip(raws)
        .map(|(out, r)| Outcome {
            out,
            raw: std::fs::read(&r).unwrap_or_default(),
        })
        .collect()
}

/// One `llm_client.mjs` run against `bases`.
pub fn node_client(dir: &Path, tag: &str, bases: &Bases, case: &Case) -> Outcome {
    node_package("@anthropic-ai/sdk");
    node_package("openai");
    let raw = dir.join(format!("{tag}.raw"));
    let mut c = Command::new("node");
    c.arg(Peers::script("llm_client.mjs"))
        .args(case.args(Some(&raw)));
    client_env(&mut c, bases);
    let (_, stdout, stderr) = run(c);
    let line = stdout.lines().last().unwrap_or_default();
    let out = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("llm_client.mjs printed no JSON ({e}): {stdout}{stderr}"));
    Outcome {
        out,
        raw: std::fs::read(&raw).unwrap_or_default(),
    }
}

/// The Node 24 binary of the peers (the AI SDK declares Node >= 22).
pub fn node24() -> PathBuf {
    let p = peers_root().join("node24/node_modules/.bin/node");
    assert!(
        p.exists(),
        "peers missing: run `cargo xtask peers` (looked for {})",
        p.display()
    );
    p
}

/// `ai_sdk_client.mjs` (the Vercel AI SDK) against `bases`, `runs` times in one process:
/// one JSON line a run.
pub fn ai_sdk_client(
    bases: &Bases,
    api: &str,
    mode: &str,
    scenario: &str,
    model: &str,
    runs: u32,
) -> Vec<Value> {
    node_package("ai");
    let mut c = Command::new(node24());
    c.arg(Peers::script("ai_sdk_client.mjs"))
        .args([
            "--api",
            api,
            "--mode",
            mode,
            "--scenario",
            scenario,
            "--model",
            model,
        ])
        .args(["--runs", &runs.to_string()]);
    client_env(&mut c, bases);
    lines_of(c, "ai_sdk_client.mjs")
}

/// A command's stdout, one JSON value a line; fails with its output when it did not
/// exit 0.
pub fn lines_of(c: Command, what: &str) -> Vec<Value> {
    let (code, stdout, stderr) = run(c);
    assert_eq!(code, Some(0), "{what} failed: {stdout}{stderr}");
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{what}: {e}: {l}; {stderr}")))
        .collect()
}

/// Fails with the case's name when a client run failed.
pub fn assert_ok(case: &Case, o: &Outcome) {
    assert!(
        o.out.get("error").is_none() && o.out.get("result").is_some(),
        "{}: {}",
        case.name(),
        o.out
    );
}

// ---- traces ------------------------------------------------------------------------------

/// A recorded llm trace, read back.
pub struct Tape {
    pub path: PathBuf,
    pub lines: Vec<Value>,
}

impl Tape {
    pub fn read(path: &Path) -> Tape {
        Tape {
            path: path.to_owned(),
            lines: trace_lines(path),
        }
    }

    /// The complete lines of a trace still being written.
    pub fn read_partial(path: &Path) -> Vec<Value> {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The trace's bytes, as text.
    pub fn text(&self) -> String {
        std::fs::read_to_string(&self.path).expect("read the trace")
    }

    /// Turn records, in order.
    pub fn turns(&self) -> Vec<&Value> {
        self.lines.iter().filter(|l| l["type"] == "turn").collect()
    }

    /// Events of `kind`, in order.
    pub fn events(&self, kind: &str) -> Vec<&Value> {
        self.lines.iter().filter(|l| l["kind"] == kind).collect()
    }

    /// The lines of exchange `n` (`http.req`).
    pub fn exchange(&self, n: u64) -> Vec<&Value> {
        self.lines
            .iter()
            .filter(|l| l["http"]["req"].as_u64() == Some(n))
            .collect()
    }

    /// The exchange numbers, in order of first appearance.
    pub fn exchanges(&self) -> Vec<u64> {
        let mut v: Vec<u64> = Vec::new();
        for l in &self.lines {
            if let Some(n) = l["http"]["req"].as_u64() {
                if !v.contains(&n) {
                    v.push(n);
                }
            }
        }
        v
    }

    /// The end line.
    pub fn end(&self) -> &Value {
        let e = self.lines.last().expect("a line");
        assert_eq!(e["type"], "end", "the last line is not an end line: {e}");
        e
    }
}

/// The text of a turn's text blocks, joined.
pub fn turn_text(turn: &Value) -> String {
    turn["blocks"]
        .as_array()
        .map(|bs| {
            bs.iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect()
        })
        .unwrap_or_default()
}

/// `reel check TRACE` exits 0 (it may print notes).
pub fn assert_check_clean(trace: &Path) {
    let out = reel()
        .arg("check")
        .arg(trace)
        .output()
        .expect("run reel check");
    assert_eq!(
        out.status.code(),
        Some(0),
        "reel check {}: {}{}",
        trace.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `reel stats TRACE --json`.
pub fn stats(trace: &Path) -> Value {
    let out = reel()
        .arg("stats")
        .arg(trace)
        .arg("--json")
        .output()
        .expect("run reel stats");
    assert_eq!(
        out.status.code(),
        Some(0),
        "reel stats: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("reel stats --json prints JSON")
}

/// The rolling digest of the first `count` items of `member` (`messages`, `input`) of
/// the request body `body`, computed by Node's `JSON.parse`, `JSON.stringify` and
/// `crypto`: H("") to start, then H(previous + H(JSON.stringify(item))) for each.
pub fn node_rolling_sha256(body: &str, member: &str, count: usize) -> String {
    let script = r#"
const crypto = require("node:crypto");
const H = (s) => crypto.createHash("sha256").update(s, "utf8").digest("hex");
const [member, count] = [process.argv[1], Number(process.argv[2])];
let input = "";
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  let r = H("");
  for (const m of JSON.parse(input)[member].slice(0, count)) r = H(r + H(JSON.stringify(m)));
  process.stdout.write(r);
});
"#;
    use std::io::Write;
    let mut child = Command::new("node")
        .arg("-e")
        .arg(script)
        .arg(member)
        .arg(count.to_string())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run node");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let out = child.wait_with_output().expect("node output");
    assert!(out.status.success(), "node failed");
    String::from_utf8(out.stdout).unwrap()
}
