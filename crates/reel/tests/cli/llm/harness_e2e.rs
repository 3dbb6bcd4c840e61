//! An agent harness end to end: Claude Code (npm `@anthropic-ai/claude-code`, its
//! native binary) run offline against the scripted upstream. `reel install` wraps the
//! MCP server of its project's `.mcp.json` in `reel rec`, `reel llm -- claude -p …`
//! records its model calls; then the whole run replays offline — `reel llm --play` as
//! the model, `reel play` as the MCP server — with the same answer, and play's report
//! holds the verdict although Claude Code ends its MCP servers by signal. `reel
//! uninstall` puts the original config back byte for byte. Codex CLI and Gemini CLI are
//! recorded and replayed offline the same way (model calls only).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::support::{Tape, Upstream, peers_root, python};
use crate::harness::play_http_support::run;
use crate::harness::play_support::Peers;
use crate::harness::reel;

/// The `claude` command of the pinned peer.
fn claude() -> PathBuf {
    let p = peers_root().join("claude-code-2.1.332/node_modules/.bin/claude");
    assert!(
        p.exists(),
        "peers missing: run `cargo xtask peers` (looked for {})",
        p.display()
    );
    p
}

/// `claude -p` asking for the MCP tool `add`, with the MCP servers of `mcp_config`; as
/// the argument list after `--` of a `reel llm`.
fn claude_args(mcp_config: &Path) -> Vec<String> {
    [
        claude().to_str().unwrap(),
        "-p",
        "Add 2 and 3 with the tool.",
        "--model",
        "reel-mcp-add",
        "--mcp-config",
        mcp_config.to_str().unwrap(),
        "--allowedTools",
        "mcp__demo__add",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// A command with Claude Code's environment for an offline run: its own HOME, a fake
/// key, no traffic but the model's, its MCP tools offered up front (no tool search).
fn offline(mut c: Command, home: &Path) -> Command {
    c.env("HOME", home)
        .env("ANTHROPIC_API_KEY", "sk-ant-test-reel-0000")
        .env("ANTHROPIC_SMALL_FAST_MODEL", "reel-text")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("ENABLE_TOOL_SEARCH", "false")
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("ANTHROPIC_BASE_URL");
    c
}

fn only_jsonl(dir: &Path) -> PathBuf {
    crate::harness::play_http_support::only_trace(dir)
}

#[test]
fn claude_code_records_through_install_and_llm_and_replays_offline() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let (home, project, mcp_traces, llm_traces) = (
        t.join("home"),
        t.join("project"),
        t.join("mcp"),
        t.join("llm"),
    );
    for d in [&home, &project] {
        std::fs::create_dir_all(d).unwrap();
    }
    let config = project.join(".mcp.json");
    let original = serde_json::json!({"mcpServers": {"demo": {
        "command": python(), "args": [Peers::script("demo_server.py")]}}})
    .to_string();
    std::fs::write(&config, &original).unwrap();

    // reel install wraps the project's server in reel rec.
    let mut c = reel();
    c.args(["install", "--target", "claude-code", "--project"])
        .arg(&project)
        .arg("--dir")
        .arg(&mcp_traces)
        .env("HOME", &home);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "{out}{err}");
    let wrapped = std::fs::read_to_string(&config).unwrap();
    assert!(wrapped.contains(r#""rec""#), "{wrapped}");

    // Recorded: the model through reel llm, the MCP server through reel rec.
    let upstream = Upstream::scripted(t, "up");
    let mut c = reel();
    c.arg("llm")
        .arg("--dir")
        .arg(&llm_traces)
        .args(["--upstream", &upstream.url, "--"])
        .args(claude_args(&config))
        .current_dir(&project);
    let (code, live, err) = run(offline(c, &home));
    assert_eq!(code, Some(0), "{live}{err}");
    assert_eq!(live.trim(), r#"The tool said: {"result":5}."#, "{err}");
    let llm_trace = only_jsonl(&llm_traces);
    let mcp_trace = only_jsonl(&mcp_traces);
    let tape = Tape::read(&llm_trace);
    assert!(
        tape.turns()
            .iter()
            .any(|t| t.to_string().contains(r#""name":"mcp__demo__add""#)),
        "the model's tool_use is recorded"
    );
    let mcp = std::fs::read_to_string(&mcp_trace).unwrap();
    assert!(mcp.contains(r#""method":"tools/call""#), "{mcp}");

    // reel uninstall puts the exact bytes back.
    let mut c = reel();
    c.args(["uninstall", "--target", "claude-code", "--project"])
        .arg(&project)
        .env("HOME", &home);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), original);

    // Offline: no upstream at all, the model and the MCP server from their tapes.
    drop(upstream);
    let report = t.join("play-report.json");
    let play_config = t.join("play.json");
    let reel_bin = env!("CARGO_BIN_EXE_reel");
    std::fs::write(
        &play_config,
        serde_json::json!({"mcpServers": {"demo": {"command": reel_bin,
            "args": ["play", mcp_trace, "--report", report]}}})
        .to_string(),
    )
    .unwrap();
    let mut c = reel();
    c.arg("llm")
        .arg("--play")
        .arg(&llm_trace)
        .arg("--")
        .args(claude_args(&play_config))
        .current_dir(&project);
    let (code, replayed, err) = run(offline(c, &home));
    assert_eq!(code, Some(0), "{replayed}{err}");
    assert_eq!(replayed, live, "the same answer, offline");
    assert!(err.contains("0 misses"), "{err}");
    // Claude Code ended the tape server by signal; its verdict is on file all the same.
    let doc = wait_for(&report);
    assert_eq!(doc["verdict"], "clean", "{doc}");
    assert_eq!(doc["exit"], 0, "{doc}");
    assert!(doc["summary"]["answered"].as_u64().unwrap() >= 3, "{doc}");
}

/// The report play writes when it ends: Claude Code does not wait for its servers, so
/// give play a moment.
fn wait_for(report: &Path) -> Value {
    for _ in 0..100 {
        if let Ok(text) = std::fs::read_to_string(report) {
            return serde_json::from_str(&text).expect("a JSON report");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("reel play wrote no report at {}", report.display());
}

/// A peer harness's command, installed by `cargo xtask peers` under `prefix`.
fn peer_bin(prefix: &str, name: &str) -> PathBuf {
    let p = peers_root()
        .join(prefix)
        .join("node_modules/.bin")
        .join(name);
    assert!(
        p.exists(),
        "peers missing: run `cargo xtask peers` (looked for {})",
        p.display()
    );
    p
}

/// `codex exec` with reel (at `base`) as a model provider of its own: Codex reads no
/// base-URL variable for its built-in provider's Responses calls (it tries WebSockets to
/// the real host), so the provider is given with `-c`, as `reel llm --help` says.
fn codex(base: &str, home: &Path) -> Command {
    let codex_home = home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let mut c = Command::new(peer_bin("codex-0.171.0", "codex"));
    c.args(["exec", "--skip-git-repo-check", "-m", "reel-tool"])
        .args(["-c", "model_provider=reel", "-c"])
        .arg(format!(
            r#"model_providers.reel={{name="reel",base_url="{base}/v1",wire_api="responses",env_key="OPENAI_API_KEY"}}"#
        ))
        .arg("What is the weather in Paris?")
        .env("HOME", home)
        .env("CODEX_HOME", &codex_home)
        .env("OPENAI_API_KEY", "sk-test-reel-0000")
        .env_remove("OPENAI_BASE_URL");
    c
}

/// Codex CLI through `reel llm` (a tool round: two Responses requests, the second
/// eliding the first, every request with fresh per-run ids), then a new Codex run
/// against `reel llm --play`: the same answer and no miss.
#[test]
fn codex_cli_records_a_tool_round_and_replays_it_offline() {
    let tmp = tempfile::tempdir().unwrap();
    let (home, dir, work) = (
        tmp.path().join("home"),
        tmp.path().join("llm"),
        tmp.path().join("work"),
    );
    std::fs::create_dir_all(&work).unwrap();
    let upstream = Upstream::scripted(tmp.path(), "up");
    let llm = super::support::Llm::record(&dir, &upstream.url, &[]);
    let mut c = codex(&llm.url, &home);
    c.current_dir(&work);
    let (code, live, err) = run(c);
    assert_eq!(code, Some(0), "{live}{err}");
    assert!(
        live.trim().ends_with("It is sunny in Paris."),
        "{live}{err}"
    );
    let trace = llm.finish();
    let tape = Tape::read(&trace);
    assert_eq!(tape.events("llm.request").len(), 2, "a tool round");
    assert!(
        tape.text().contains("history_elided"),
        "the second request elided the first"
    );
    assert!(tape.text().contains("client_metadata") || tape.text().contains("\"input\""));
    drop(upstream);

    let play = super::support::Llm::play(&trace, &[]);
    let mut c = codex(&play.url, &home);
    c.current_dir(&work);
    let (code, replayed, err) = run(c);
    assert_eq!(code, Some(0), "{replayed}{err}");
    assert!(
        replayed.trim().ends_with("It is sunny in Paris."),
        "{replayed}"
    );
    let stopped = play.stop();
    assert_eq!(stopped.code(), Some(0), "{}", stopped.stderr);
    assert!(stopped.stderr.contains("0 misses"), "{}", stopped.stderr);
}

/// Gemini CLI, which reads GOOGLE_GEMINI_BASE_URL (set by `reel llm -- CMD`): its
/// Gemini API stream, an API reel reads into no turns, is recorded whole and not
/// truncated, said so by `reel check`, and replayed offline to a new run.
#[test]
fn gemini_cli_records_through_reel_llm_and_replays_offline() {
    let tmp = tempfile::tempdir().unwrap();
    let (home, dir, work) = (
        tmp.path().join("home"),
        tmp.path().join("llm"),
        tmp.path().join("work"),
    );
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        home.join(".gemini/settings.json"),
        r#"{"security":{"auth":{"selectedType":"gemini-api-key"}},"telemetry":{"enabled":false},"privacy":{"usageStatisticsEnabled":false}}"#,
    )
    .unwrap();
    let gemini = |c: &mut Command| {
        c.arg(peer_bin("gemini-cli-0.61.0", "gemini"))
            .args(["-p", "Say hello", "-m", "reel-text"])
            .current_dir(&work)
            .env("HOME", &home)
            .env("GEMINI_API_KEY", "AIza-test-reel-0000")
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .env_remove("GOOGLE_GEMINI_BASE_URL");
    };
    let upstream = Upstream::scripted(tmp.path(), "up");
    let mut c = reel();
    c.arg("llm")
        .arg("--dir")
        .arg(&dir)
        .args(["--upstream", &upstream.url, "--"]);
    gemini(&mut c);
    let (code, live, err) = run(c);
    assert_eq!(code, Some(0), "{live}{err}");
    assert_eq!(live.trim(), "Hello from the upstream.", "{err}");
    let trace = only_jsonl(&dir);
    let tape = Tape::read(&trace);
    assert!(tape.events("llm.truncated").is_empty(), "{}", tape.text());
    assert_eq!(tape.events("llm.exchange").len(), 1);
    let check = reel().arg("check").arg(&trace).output().unwrap();
    assert!(String::from_utf8_lossy(&check.stdout).contains("llm-turns-missing"));
    drop(upstream);

    let mut c = reel();
    c.arg("llm").arg("--play").arg(&trace).arg("--");
    gemini(&mut c);
    let (code, replayed, err) = run(c);
    assert_eq!(code, Some(0), "{replayed}{err}");
    assert_eq!(replayed, live);
    assert!(err.contains("0 misses"), "{err}");
}
