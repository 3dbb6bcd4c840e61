//! mcp-recorder 0.5.0 (`mcp-recorder-venv`, with the Starlette it works with) records
//! here: a YAML scenario against the stdio demo server (`record-scenarios`), and the
//! Python SDK client through its HTTP proxy (`record --target`). Each cassette imports,
//! passes `reel check` and counts right in `reel stats`; `mcp-recorder verify` finds
//! `reel play` of the import (and of the cassette itself) answering every recorded
//! request as the server did. What the tool loses is asserted as lost: server
//! notifications over stdio, and over HTTP the result of a call whose first SSE event was
//! a progress notification (the import says so, and `reel play` answers that call with
//! an error where the recording has no result).

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::cassette::{check, http_client, import, interrupt, play_http, results, rows, tools};
use crate::foreign::venv_bin;
use crate::harness::net::{Server, free_port};
use crate::harness::play_http_support::run;
use crate::harness::play_support::Peers;

/// `mcp-recorder ARGS…`: exit code, stdout, stderr.
fn mcp_recorder(args: &[&str]) -> (Option<i32>, String, String) {
    let mut c = Command::new(venv_bin("mcp-recorder-venv", "mcp-recorder"));
    c.args(args);
    run(c)
}

/// The server messages of a trace's lines: their `method` (`None` for a response).
fn server_methods(trace: &Path) -> Vec<Option<String>> {
    std::fs::read_to_string(trace)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["dir"] == "out")
        .map(|l| l["raw"]["method"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn a_scenario_recording_imports_and_reel_play_passes_mcp_recorder_verify() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let peers = Peers::get();
    let scenarios = tmp.join("scenarios.yml");
    let yaml = format!(
        r#"schema_version: "1.0"
target:
  command: {python}
  args: [{demo}]
scenarios:
  walk:
    description: "list tools, add, shout, count down, a bad call"
    actions:
      - list_tools
      - call_tool:
          name: add
          arguments: {{a: 2, b: 40}}
      - call_tool:
          name: shout
          arguments: {{text: "ünïcode through reel"}}
      - call_tool:
          name: count_down
          arguments: {{start: 3}}
      - call_tool:
          name: add
          arguments: {{a: "two", b: 1}}
"#,
        python = serde_json::to_string(&peers.python).unwrap(),
        demo = serde_json::to_string(&Peers::script("demo_server.py")).unwrap(),
    );
    std::fs::write(&scenarios, yaml).unwrap();
    let out_dir = tmp.join("cassettes");
    let (code, out, err) = mcp_recorder(&[
        "record-scenarios",
        scenarios.to_str().unwrap(),
        "--output-dir",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    let cassette = out_dir.join("walk.json");

    let trace = tmp.join("walk.jsonl");
    let err = import(&cassette, &trace);
    assert_eq!(
        err.matches("mcp-recorder cassettes hold").count(),
        1,
        "{err}"
    );
    check(&trace);
    let text = std::fs::read_to_string(&trace).unwrap();
    let meta: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(meta["source"], "mcp-recorder");
    assert_eq!(meta["transport"], "stdio");
    assert_eq!(meta["imported"]["server_info"]["name"], "reel-demo");
    let counts = rows(&[
        ("add", 2, 1, 0),
        ("count_down", 1, 0, 0),
        ("shout", 1, 0, 0),
    ]);
    assert_eq!(tools(&trace), counts, "the bad add is an error result");
    assert_eq!(tools(&cassette), counts, "read directly");
    // count_down logs a message when it is done: over stdio mcp-recorder discards every
    // server notification, so the server's messages are the six responses alone.
    assert_eq!(server_methods(&trace), vec![None; 6]);

    // mcp-recorder's own verifier sends every recorded request to `reel play` and
    // compares the answers with the recording.
    for (what, file) in [("the import", &trace), ("the cassette", &cassette)] {
        let target = format!(
            "{} play {}",
            env!("CARGO_BIN_EXE_reel"),
            file.to_str().unwrap()
        );
        let (code, out, err) = mcp_recorder(&[
            "verify",
            "--cassette",
            cassette.to_str().unwrap(),
            "--target-stdio",
            &target,
        ]);
        assert_eq!(code, Some(0), "{what}: {out}{err}");
        let said = format!("{out}{err}");
        assert!(said.contains("7/7 passed, 0 failed"), "{what}: {said}");
    }
    // And it fails a server that answers otherwise: the verifier is not blind.
    let drift = tmp.join("drift.json");
    let doc = std::fs::read_to_string(&cassette).unwrap();
    std::fs::write(&drift, doc.replace("\"42\"", "\"43\"")).unwrap();
    let target = format!("{} play {}", env!("CARGO_BIN_EXE_reel"), trace.display());
    let (code, out, _) = mcp_recorder(&[
        "verify",
        "--cassette",
        drift.to_str().unwrap(),
        "--target-stdio",
        &target,
    ]);
    assert_eq!(code, Some(1), "{out}");
}

/// The demo server over Streamable HTTP, with the SDK's DNS-rebinding protection off:
/// behind mcp-recorder's proxy (which names the target host without its port) the
/// protected server answers `initialize` with 421.
fn unprotected_demo_server(port: u16) -> Server {
    let peers_dir = Peers::script("demo_server.py").parent().unwrap().to_owned();
    let program = format!(
        "import sys; sys.dont_write_bytecode = True; sys.path.insert(0, {dir})\n\
         from mcp.server.transport_security import TransportSecuritySettings\n\
         from demo_server import server\n\
         server.run('streamable-http', host='127.0.0.1', port={port}, \
         transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))\n",
        dir = serde_json::to_string(&peers_dir).unwrap(),
    );
    let mut c = Command::new(Peers::get().python);
    c.arg("-c").arg(program);
    Server::start(c, port)
}

#[test]
fn an_http_recording_that_lost_a_result_imports_honestly() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let port = free_port();
    let _upstream = unprotected_demo_server(port);
    let (code, want, err) = http_client("demo", "legacy", &format!("http://127.0.0.1:{port}/mcp"));
    assert_eq!(code, Some(0), "{want}{err}");

    let cassette = tmp.join("http.json");
    let proxy_port = free_port();
    let mut record = Command::new(venv_bin("mcp-recorder-venv", "mcp-recorder"));
    record
        .args(["record", "--target", &format!("http://127.0.0.1:{port}")])
        .args(["--port", &proxy_port.to_string(), "--output"])
        .arg(&cassette);
    let mut proxy = Server::start(record, proxy_port);
    let (code, out, err) = http_client(
        "demo",
        "legacy",
        &format!("http://127.0.0.1:{proxy_port}/mcp"),
    );
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(out, want, "the proxy passes the whole stream on");
    interrupt(&mut proxy);

    let trace = tmp.join("http.jsonl");
    let err = import(&cassette, &trace);
    assert!(
        err.contains("1 result(s) were lost")
            && err.contains(": a notifications/progress stored in its place"),
        "{err}"
    );
    let said = check(&trace);
    assert!(said.contains("unanswered-request"), "{said}");
    let text = std::fs::read_to_string(&trace).unwrap();
    let meta: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(meta["transport"], "http");
    assert_eq!(
        meta["imported"]["server_url"],
        format!("http://127.0.0.1:{port}")
    );
    assert_eq!(
        tools(&trace),
        rows(&[
            ("add", 1, 0, 0),
            ("count_down", 1, 0, 1),
            ("shout", 1, 0, 0)
        ]),
        "count_down's result is lost: it is pending"
    );
    let methods = server_methods(&trace);
    assert_eq!(
        methods
            .iter()
            .filter(|m| m.as_deref() == Some("notifications/progress"))
            .count(),
        1,
        "the stored progress notification is a server message: {methods:?}"
    );

    // reel play answers what the file holds as the server did, and the call it has no
    // result for with an error.
    let want = results(&want);
    let upto = want
        .iter()
        .position(|l| l.starts_with("RESULT count_down "))
        .expect("count_down");
    for (what, file) in [("the import", &trace), ("the cassette", &cassette)] {
        let (code, out, err) = play_http(file, "demo", "legacy");
        assert_ne!(code, Some(0), "{what}");
        assert_eq!(results(&out), want[..upto], "{what}");
        assert!(
            err.contains("the recording ends before the server answered tools/call"),
            "{what}: {err}"
        );
    }
}
