//! The README's offline agent test: an agent whose model calls go through `reel llm` and
//! whose MCP server runs under `reel rec`, recorded once and then run again with both
//! served from tape (`reel llm --play … -- agent … reel play …`), the model's upstream
//! gone.

use serde_json::Value;

use super::support::{Upstream, peers_root, python};
use crate::harness::play_http_support::run;
use crate::harness::play_support::Peers;
use crate::harness::reel;

fn newest(dir: &std::path::Path, label: &str) -> std::path::PathBuf {
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "jsonl")
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().ends_with(&format!("-{label}.jsonl")))
        })
        .collect();
    found.sort();
    found
        .pop()
        .unwrap_or_else(|| panic!("no {label} trace in {}", dir.display()))
}

#[test]
fn an_agent_runs_offline_with_its_model_and_its_mcp_server_from_tape() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("traces");
    let reel_bin = env!("CARGO_BIN_EXE_reel");
    let agent = |llm: Vec<String>, mcp: Vec<String>| {
        let mut c = reel();
        c.arg("llm")
            .args(&llm)
            .arg("--")
            .arg(python())
            .args(["-W", "ignore"])
            .arg(Peers::script("llm_agent.py"))
            .arg("--")
            .args(&mcp)
            .env("REEL_PEERS", peers_root())
            .env_remove("ANTHROPIC_API_KEY");
        run(c)
    };
    let d = dir.to_str().unwrap().to_owned();
    let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();

    // Recorded once: the model through reel llm, the MCP server under reel rec.
    let recorded = {
        let up = Upstream::scripted(tmp.path(), "up");
        let (code, stdout, stderr) = agent(
            s(&["--dir", &d, "--name", "agent-llm", "--upstream", &up.url]),
            s(&[
                reel_bin,
                "rec",
                "--dir",
                &d,
                "--name",
                "agent-mcp",
                "--",
                reel_bin,
                "example",
                "server",
            ]),
        );
        assert_eq!(code, Some(0), "{stdout}{stderr}");
        let v: Value =
            serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
        assert_eq!(v["answer"], "It is sunny in Paris.", "{v}");
        assert!(
            v["tool_result"].as_str().is_some_and(|t| !t.is_empty()),
            "the MCP server's weather: {v}"
        );
        v
    }; // the upstream is gone from here on

    let llm_trace = newest(&dir, "agent-llm");
    let mcp_trace = newest(&dir, "agent-mcp");
    let (code, stdout, stderr) = agent(
        s(&["--play", llm_trace.to_str().unwrap()]),
        s(&[reel_bin, "play", mcp_trace.to_str().unwrap()]),
    );
    assert_eq!(code, Some(0), "offline: {stdout}{stderr}");
    let offline: Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(
        offline, recorded,
        "the same tool result and answer, offline"
    );
    assert!(
        stderr.contains("answered 2 requests from the tape; 0 misses"),
        "{stderr}"
    );
}
