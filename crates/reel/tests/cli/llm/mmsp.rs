//! `reel llm --mmsp DIR`: a real MMSP client (mmsp 0.5.6's Anthropic client) talks to the
//! scripted upstream through `reel llm`, saving its own trace as MMSP does; reel saves
//! the same conversation from the wire. Both histories are the same, a cut stream saves
//! nothing in either, a request's `x-mmsp-trace-id` names reel's trace id, and an id that
//! would leave the cache directory is refused with the RFC's words, nothing written.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::support::{Upstream, peers_root};
use crate::foreign::venv_bin;
use crate::harness::play_http_support::run;
use crate::harness::play_support::Peers;
use crate::harness::reel;

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The history without the times each side stamps.
fn history(trace: &Value) -> Value {
    let mut h = trace["history"].clone();
    for m in h.as_array_mut().unwrap() {
        m.as_object_mut().unwrap().remove("created_at");
    }
    h
}

#[test]
fn a_real_mmsp_client_and_reel_save_the_same_conversation() {
    let tmp = tempfile::tempdir().unwrap();
    let up = Upstream::scripted(tmp.path(), "up");
    let own = tmp.path().join("own");
    let cache = tmp.path().join("reel-cache");
    let mut c = reel();
    c.arg("llm")
        .arg("--dir")
        .arg(tmp.path().join("traces"))
        .args(["--name", "live", "--upstream", &up.url, "--mmsp"])
        .arg(&cache)
        .arg("--")
        .arg(venv_bin("mmsp-venv", "python"))
        .arg(Peers::script("mmsp_live.py"))
        .args([
            "--sever",
            "--named",
            "named/one",
            "--named-refused",
            "../escape",
        ])
        .env("MMSP_CACHE_DIR", &own)
        .env("REEL_PEERS", peers_root());
    let (code, stdout, stderr) = run(c);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let rounds: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rounds[0]["finish_reason"], "tool_call", "{stdout}");
    assert_eq!(rounds[1]["finish_reason"], "stop", "{stdout}");
    assert!(
        rounds[2].get("error").is_some(),
        "the cut call failed: {stdout}"
    );

    // MMSP saved the tool conversation and the named call, not the cut one.
    let own_files = files(&own);
    let names: Vec<String> = own_files
        .iter()
        .map(|p| p.strip_prefix(&own).unwrap().display().to_string())
        .collect();
    assert_eq!(
        names,
        ["named.json", "named.txt", "weather.json", "weather.txt"]
    );

    // reel saved the same conversation under the run's name, and the named call where
    // its header said; the cut one nowhere; the refused id nowhere, said on stderr.
    let reel_files = files(&cache);
    // Private, as traces are: the saved conversations hold what the model saw.
    use std::os::unix::fs::PermissionsExt;
    for f in &reel_files {
        let mode = std::fs::metadata(f).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", f.display());
    }
    let rel: Vec<String> = reel_files
        .iter()
        .map(|p| p.strip_prefix(&cache).unwrap().display().to_string())
        .collect();
    assert_eq!(rel.len(), 4, "{rel:?}");
    assert!(rel.contains(&"named/one.json".to_owned()), "{rel:?}");
    assert!(rel.contains(&"named/one.txt".to_owned()), "{rel:?}");
    let conversation = reel_files
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "json") && !p.starts_with(cache.join("named")))
        .unwrap();
    let run_dir = conversation
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy();
    assert!(
        run_dir.ends_with("-live"),
        "under the trace's name: {run_dir}"
    );
    assert_eq!(conversation.file_name().unwrap(), "conversation_001.json");
    assert!(!tmp.path().join("escape.json").exists());
    assert!(
        stderr.contains("does not support trace_id '../escape': it must be a relative path that stays inside the cache directory."),
        "{stderr}"
    );

    let theirs = json(&own.join("weather.json"));
    let ours = json(conversation);
    assert_eq!(history(&ours), history(&theirs));
    assert_eq!(history(&ours).as_array().unwrap().len(), 4);
    for key in ["system_prompt", "tools", "model"] {
        assert_eq!(ours["config"][key], theirs["config"][key], "config.{key}");
    }
    let ts = ours["timestamp"].as_str().unwrap();
    assert!(
        ts.ends_with('Z') && ts.len() == 24,
        "UTC with milliseconds: {ts}"
    );
    assert_eq!(
        history(&json(&cache.join("named/one.json"))),
        history(&json(&own.join("named.json")))
    );

    // reel reads MMSP's file and its own alike: the same calls and tokens.
    let summary = |file: &Path| {
        let mut c = reel();
        c.args(["stats", "--json"]).arg(file);
        let (code, out, err) = run(c);
        assert_eq!(code, Some(0), "{err}");
        let stats: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(stats["session"]["kind"], "llm", "{out}");
        stats["models"]["summary"].clone()
    };
    let theirs = summary(&own.join("weather.json"));
    assert_eq!(theirs["assistantTurns"], 2, "{theirs}");
    assert!(theirs["inputTokens"].as_u64().unwrap() > 0, "{theirs}");
    let ours = summary(conversation);
    for key in [
        "assistantTurns",
        "inputTokens",
        "outputTokens",
        "cacheReadTokens",
    ] {
        assert_eq!(ours[key], theirs[key], "{key}");
    }
}
