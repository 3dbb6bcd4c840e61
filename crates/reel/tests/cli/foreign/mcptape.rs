//! mcptape run directories. mcptape itself is not on PyPI, so nothing here is made by
//! it: a run written from the line shape its README shows imports and passes `reel
//! check`; and a session `reel rec` recorded (the Python SDK client against
//! `demo_server.py`), exported with `reel export mcptape`, imports back to the same
//! messages and, played directly from the run directory, answers the client as the
//! server did.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::harness::play_http_support::{only_trace, run};
use crate::harness::play_support::Peers;
use crate::harness::reel;

/// (dir, message) of every message line of a trace.
fn messages(trace: &Path) -> Vec<(String, Value)> {
    std::fs::read_to_string(trace)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| matches!(l["dir"].as_str(), Some("in" | "out")))
        .map(|l| (l["dir"].as_str().unwrap().to_owned(), l["raw"].clone()))
        .collect()
}

fn check(trace: &Path) {
    let mut c = reel();
    c.arg("check").arg(trace);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "{out}{err}");
}

#[test]
fn a_run_written_as_the_readme_shows_imports_and_checks() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join(".mcptape/runs");
    let dir = runs.join("20260401-120000-daily-run");
    std::fs::create_dir_all(&dir).unwrap();
    let lines = [
        json!({"v": 1, "i": 0, "dir": "c2s", "kind": "request", "id": 1, "payload": {"method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}}),
        json!({"v": 1, "i": 1, "dir": "s2c", "kind": "response", "id": 1, "payload": {"result": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "demo", "version": "1"}}}, "for_method": "initialize", "for_params": {"protocolVersion": "2025-06-18"}, "wall_ms": 12.5}),
        json!({"v": 1, "i": 2, "dir": "c2s", "kind": "notification", "payload": {"method": "notifications/initialized"}}),
        json!({"v": 1, "i": 3, "dir": "c2s", "kind": "request", "id": 4, "payload": {"method": "tools/call", "params": {"name": "add", "arguments": {"a": 2, "b": 3}}}}),
        json!({"v": 1, "i": 4, "dir": "s2c", "kind": "notification", "payload": {"method": "notifications/message", "params": {"level": "info", "data": "adding"}}}),
        // The README's own line.
        serde_json::from_str::<Value>(r#"{"v": 1, "i": 10, "dir": "s2c", "kind": "response", "id": 4, "payload": {"result": {"content": [{"type": "text", "text": "5"}]}}, "for_method": "tools/call", "for_params": {"name": "add", "arguments": {"a": 2, "b": 3}}, "wall_ms": 0.9}"#).unwrap(),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("trace.jsonl"), text).unwrap();
    std::fs::write(
        dir.join("meta.json"),
        r#"{"server_command": ["python", "server.py"], "protocol_version": "2025-06-18", "counts": {"c2s": 3, "s2c": 3}}"#,
    )
    .unwrap();

    let out = tmp.path().join("imported.jsonl");
    let mut c = reel();
    c.args(["import", "-o"]).arg(&out).arg(&dir);
    let (code, _, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("mcptape runs hold"),
        "the limits are said: {err}"
    );
    check(&out);
    let got = messages(&out);
    assert_eq!(got.len(), 6);
    assert_eq!(
        got[5],
        (
            "out".into(),
            json!({"jsonrpc": "2.0", "id": 4, "result": {"content": [{"type": "text", "text": "5"}]}})
        ),
        "the README's response, rebuilt"
    );
    assert_eq!(got[3].1["method"], "tools/call");
    assert!(got[2].1.get("id").is_none());
    let text = std::fs::read_to_string(&out).unwrap();
    let meta: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(meta["source"], "mcptape");
    assert_eq!(
        meta["startedAt"], "2026-04-01T12:00:00.000Z",
        "from the run's name"
    );
    assert_eq!(meta["imported"]["protocol_version"], "2025-06-18");
    let t: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l.get("raw").is_some())
        .map(|l| l["t"].clone())
        .collect();
    assert_eq!(t[1], "2026-04-01T12:00:00.013Z", "request time + wall_ms");

    // The run directory found under `.mcptape/runs`, and read directly.
    let mut c = reel();
    c.args(["stats", "--json"]).arg(&dir);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    let stats: Value = serde_json::from_str(&out).unwrap();
    let tools = stats["tools"].as_array().expect("tools");
    assert_eq!(
        (&tools[0]["name"], &tools[0]["calls"], &tools[0]["errors"]),
        (&"add".into(), &1.into(), &0.into()),
        "{stats}"
    );
    let mut c = reel();
    c.args(["import", "--dir"])
        .arg(tmp.path().join("all"))
        .arg(&runs);
    let (code, _, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        std::fs::read_dir(tmp.path().join("all")).unwrap().count(),
        1
    );
}

#[test]
fn a_reel_recording_exported_to_mcptape_imports_back_and_plays_to_the_python_client() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let peers = Peers::get();
    let client = Peers::script("client.py");
    let server = Peers::script("demo_server.py");
    let reel_bin = env!("CARGO_BIN_EXE_reel");
    let traces = tmp.join("traces");
    let python = |server_cmd: &[&str]| {
        let out = Command::new(&peers.python)
            .arg(&client)
            .args(["demo", "--"])
            .args(server_cmd)
            .current_dir(tmp)
            .output()
            .expect("run the Python client");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(
            out.status.code(),
            Some(0),
            "client failed: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("ALL OK"), "{stdout}");
        stdout
    };
    let live = python(&[
        reel_bin,
        "rec",
        "--dir",
        traces.to_str().unwrap(),
        "--",
        peers.python.to_str().unwrap(),
        server.to_str().unwrap(),
    ]);
    let trace = only_trace(&traces);

    let run_dir = tmp.join(".mcptape/runs/20261201-000000-demo");
    let mut c = reel();
    c.args(["export", "mcptape"])
        .arg(&trace)
        .arg("-o")
        .arg(&run_dir);
    let (code, _, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    let lines: Vec<Value> = std::fs::read_to_string(run_dir.join("trace.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let call = lines
        .iter()
        .find(|l| l["kind"] == "response" && l["for_params"]["name"] == "add")
        .expect("the add response, with its request echoed");
    assert_eq!(call["for_method"], "tools/call");
    assert_eq!(call["for_params"]["arguments"], json!({"a": 2, "b": 40}));
    assert!(call["payload"].get("jsonrpc").is_none());
    assert!(call["wall_ms"].is_number());
    assert!(
        lines
            .iter()
            .enumerate()
            .all(|(i, l)| l["v"] == 1 && l["i"] == i),
        "numbered from 0"
    );
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["counts"]["messages"], lines.len());
    assert!(meta["server_command"].is_array(), "{meta}");
    assert!(meta["protocol_version"].is_string(), "{meta}");
    // Private, as traces are: the run holds what the tools saw.
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&run_dir), 0o700);
    assert_eq!(mode(&run_dir.join("trace.jsonl")), 0o600);
    assert_eq!(mode(&run_dir.join("meta.json")), 0o600);

    // An existing run is not written over.
    let mut c = reel();
    c.args(["export", "mcptape"])
        .arg(&trace)
        .arg("-o")
        .arg(&run_dir);
    let (code, _, err) = run(c);
    assert_ne!(code, Some(0), "{err}");
    assert!(err.contains("exists"), "{err}");

    // Imported back: the same messages, in the same order.
    let back = tmp.join("back.jsonl");
    let mut c = reel();
    c.args(["import", "-o"]).arg(&back).arg(&run_dir);
    let (code, _, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    check(&back);
    assert_eq!(messages(&back), messages(&trace));

    // Played from the run directory itself, it answers the client as the server did.
    let replay = python(&[reel_bin, "play", run_dir.to_str().unwrap()]);
    assert_eq!(replay, live);
}
