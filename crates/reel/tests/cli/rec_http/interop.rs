//! Real MCP peers over HTTP, each session run directly and through `reel rec --url`:
//! the client must print the same results both ways, and the trace must hold every
//! message paired within its session.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::harness::rec_support::{Peers, Session, check, run, workspace};
use crate::rec_http::behaviour::trace_lines;
use crate::rec_http::harness::{Server, free_port, proxy};

/// Where the npm peers live (next to the ones `Peers` knows).
fn node_modules() -> PathBuf {
    let root = std::env::var_os("REEL_PEERS")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join(".peers"));
    root.join("node_modules")
}

fn everything(mode: &str, port: u16) -> Server {
    let peers = Peers::get();
    let mut c = Command::new("node");
    c.arg(&peers.everything)
        .arg(mode)
        .env("PORT", port.to_string());
    Server::start(c, port)
}

fn python_server(port: u16) -> Server {
    let peers = Peers::get();
    let mut c = Command::new(&peers.python);
    c.arg(Peers::script("http_server.py")).arg(port.to_string());
    Server::start(c, port)
}

/// Runs the Python SDK client script against `url`; its result lines.
fn python_client(suite: &str, mode: &str, url: &str) -> Vec<String> {
    let peers = Peers::get();
    let mut c = Command::new(&peers.python);
    c.arg(Peers::script("http_client.py"))
        .args([suite, "--mode", mode, url]);
    let f = run(c, Vec::new());
    assert_eq!(
        f.code(),
        Some(0),
        "client failed against {url}: {}",
        f.stderr_text()
    );
    let lines: Vec<String> = String::from_utf8_lossy(&f.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        lines.last().map(String::as_str),
        Some("ALL OK"),
        "{lines:?}"
    );
    lines
}

/// A Node CLI peer (from `node_modules`), run in `dir`; its stdout.
fn node_cli(script: &str, args: &[&str], dir: &std::path::Path) -> String {
    let path = node_modules().join(script);
    assert!(
        path.exists(),
        "peers missing: run `cargo xtask peers` (looked for {})",
        path.display()
    );
    let mut c = Command::new("node");
    c.arg(&path)
        .args(args)
        .current_dir(node_modules())
        .env("HOME", dir);
    let f = run(c, Vec::new());
    assert_eq!(
        f.code(),
        Some(0),
        "{script} {args:?} failed: {}",
        f.stderr_text()
    );
    String::from_utf8_lossy(&f.stdout).into_owned()
}

/// JSON-RPC pairing per (session, direction, id) over the trace's message lines.
#[derive(Debug, Default)]
struct Pairing {
    /// Unanswered requests: (session, method, http.req).
    unanswered: Vec<(String, String, u64)>,
    orphans: Vec<String>,
    requests: usize,
}

fn pairing(lines: &[Value]) -> Pairing {
    let mut pending: HashMap<(String, String, String), (String, u64)> = HashMap::new();
    let mut p = Pairing::default();
    for l in lines {
        let (Some(dir), Some(raw)) = (l["dir"].as_str(), l.get("raw")) else {
            continue;
        };
        if dir != "in" && dir != "out" {
            continue;
        }
        let session = l["session"]
            .as_str()
            .expect("every HTTP message has a session")
            .to_owned();
        let id = &raw["id"];
        if id.is_null() {
            continue;
        }
        let other = if dir == "in" { "out" } else { "in" };
        if let Some(method) = raw["method"].as_str() {
            p.requests += 1;
            let req = l["http"]["req"].as_u64().unwrap_or(0);
            pending.insert(
                (session, dir.to_owned(), id.to_string()),
                (method.to_owned(), req),
            );
        } else if pending
            .remove(&(session.clone(), other.to_owned(), id.to_string()))
            .is_none()
        {
            p.orphans.push(l.to_string());
        }
    }
    p.unanswered = pending
        .into_iter()
        .map(|((s, _, _), (m, r))| (s, m, r))
        .collect();
    p
}

fn messages(lines: &[Value]) -> impl Iterator<Item = &Value> {
    lines
        .iter()
        .filter(|l| l["dir"] == "in" || l["dir"] == "out")
}

#[test]
fn python_client_and_server_everything_over_streamable_http() {
    let port = free_port();
    let _server = everything("streamableHttp", port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let direct = python_client("everything", "auto", &url);
    let s = Session::new();
    let p = proxy(&s, &url, &[]);
    assert_eq!(python_client("everything", "auto", &p.url), direct);
    assert_eq!(p.stop().code(), Some(0));

    let lines = trace_lines(&s);
    let pairs = pairing(&lines);
    assert!(pairs.orphans.is_empty(), "orphans: {:?}", pairs.orphans);
    assert!(pairs.requests > 15, "{pairs:?}");
    // The discover probe is refused with HTTP 400 and an id-less error: the only
    // request that no response names.
    assert_eq!(pairs.unanswered.len(), 1, "{:?}", pairs.unanswered);
    let (probe_session, method, req) = &pairs.unanswered[0];
    assert_eq!(method, "server/discover");
    let refusal = messages(&lines)
        .find(|l| l["dir"] == "out" && l["http"]["req"] == *req)
        .expect("the refusal is recorded");
    assert_eq!(refusal["http"]["status"], 400);
    assert!(refusal["raw"]["id"].is_null());
    assert!(probe_session.starts_with("reel:conn-"));

    // initialize gets the session its response issues; everything after it is in it.
    let init = messages(&lines)
        .position(|l| l["raw"]["method"] == "initialize")
        .expect("initialize");
    let msgs: Vec<&Value> = messages(&lines).collect();
    let session = msgs[init]["session"].as_str().unwrap();
    let issued = msgs[init + 1]["http"]["headers"]["mcp-session-id"].as_str();
    assert_eq!(Some(session), issued);
    assert!(msgs[init..].iter().all(|m| m["session"] == session));
    // The server's own requests (roots/list, sampling, elicitation) came on the GET
    // stream or on call streams, and were answered.
    let server_requests = msgs
        .iter()
        .filter(|m| {
            m["dir"] == "out" && m["raw"]["method"].is_string() && !m["raw"]["id"].is_null()
        })
        .count();
    assert!(server_requests >= 3, "{server_requests}");
    let get = lines
        .iter()
        .find(|l| l["kind"] == "reel.http" && l["http"]["method"] == "GET")
        .expect("the GET stream is recorded");
    assert_eq!(get["session"], session);

    let (code, rules) = check(&s.trace_path());
    assert_eq!(code, Some(0));
    // The refusal answers the probe by the HTTP request that carried both.
    assert!(rules.is_empty(), "{rules:?}");
}

#[test]
fn python_client_and_python_server_speak_2026_07_28_over_http() {
    let port = free_port();
    let _server = python_server(port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let direct = python_client("demo", "auto", &url);
    let s = Session::new();
    let p = proxy(&s, &url, &[]);
    assert_eq!(python_client("demo", "auto", &p.url), direct);
    assert_eq!(p.stop().code(), Some(0));

    let lines = trace_lines(&s);
    let pairs = pairing(&lines);
    assert!(
        pairs.orphans.is_empty() && pairs.unanswered.is_empty(),
        "{pairs:?}"
    );
    assert!(pairs.requests >= 9);
    let msgs: Vec<&Value> = messages(&lines).collect();
    assert_eq!(msgs[0]["raw"]["method"], "server/discover");
    assert!(msgs.iter().all(|m| m["raw"]["method"] != "initialize"));
    // No session ids in this era: each line is keyed by its client connection.
    assert!(
        msgs.iter()
            .all(|m| m["session"].as_str().unwrap().starts_with("reel:conn-"))
    );
    for m in msgs.iter().filter(|m| m["dir"] == "in") {
        assert_eq!(
            m["http"]["headers"]["mcp-method"], m["raw"]["method"],
            "{m}"
        );
        assert_eq!(m["http"]["headers"]["mcp-protocol-version"], "2026-07-28");
    }
    // count_down's progress came as SSE (CRLF, as sse-starlette frames it) before its result.
    let sse: Vec<&&Value> = msgs
        .iter()
        .filter(|m| m["http"].get("sse").is_some())
        .collect();
    assert!(sse.len() >= 4, "{}", sse.len());
    assert!(sse.iter().all(|m| m["http"]["sse"]["eol"] == "crlf"));
    let (code, rules) = check(&s.trace_path());
    assert_eq!((code, rules), (Some(0), Vec::<String>::new()));
}

#[test]
fn concurrent_clients_of_both_eras_never_cross_pair() {
    let port = free_port();
    let _server = python_server(port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let want_auto = python_client("demo", "auto", &url);
    let want_legacy = python_client("demo", "legacy", &url);
    let s = Session::new();
    let p = proxy(&s, &url, &[]);
    let clients: Vec<_> = ["auto", "legacy", "auto", "legacy"]
        .into_iter()
        .map(|mode| {
            let url = p.url.clone();
            std::thread::spawn(move || (mode, python_client("demo", mode, &url)))
        })
        .collect();
    for c in clients {
        let (mode, got) = c.join().expect("client thread");
        let want = if mode == "auto" {
            &want_auto
        } else {
            &want_legacy
        };
        assert_eq!(&got, want, "{mode} client through reel");
    }
    assert_eq!(p.stop().code(), Some(0));

    let lines = trace_lines(&s);
    let pairs = pairing(&lines);
    assert!(
        pairs.orphans.is_empty() && pairs.unanswered.is_empty(),
        "{pairs:?}"
    );
    // Each legacy client has its own session, with one initialize in it.
    let inits: Vec<&str> = messages(&lines)
        .filter(|m| m["raw"]["method"] == "initialize")
        .map(|m| m["session"].as_str().unwrap())
        .collect();
    assert_eq!(inits.len(), 2);
    assert_ne!(inits[0], inits[1]);
    assert!(inits.iter().all(|s| !s.starts_with("reel:")), "{inits:?}");
    // Every request id of a legacy session is unique in it: no other client's lines.
    for session in inits {
        let ids: Vec<String> = messages(&lines)
            .filter(|m| {
                m["session"] == session && m["dir"] == "in" && m["raw"]["method"].is_string()
            })
            .filter_map(|m| m["raw"].get("id").map(Value::to_string))
            .collect();
        let unique: BTreeSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len(), "{session}: {ids:?}");
    }
    let (code, rules) = check(&s.trace_path());
    assert_eq!((code, rules), (Some(0), Vec::<String>::new()));
}

#[test]
fn legacy_http_sse_server_everything_with_the_inspector_cli() {
    let port = free_port();
    let _server = everything("sse", port);
    let s = Session::new();
    let args = |url: &str| {
        vec![
            url.to_owned(),
            "--method".into(),
            "tools/call".into(),
            "--tool-name".into(),
            "get-sum".into(),
            "--tool-arg".into(),
            "a=2".into(),
            "b=3".into(),
        ]
    };
    let cli = "@modelcontextprotocol/inspector-cli/build/index.js";
    let direct_args = args(&format!("http://127.0.0.1:{port}/sse"));
    let direct = node_cli(
        cli,
        &direct_args.iter().map(String::as_str).collect::<Vec<_>>(),
        s.sb.dir(),
    );
    assert!(direct.contains("The sum of 2 and 3 is 5."), "{direct}");
    let p = proxy(&s, &format!("http://127.0.0.1:{port}/sse"), &[]);
    let through_args = args(&p.url);
    let through = node_cli(
        cli,
        &through_args.iter().map(String::as_str).collect::<Vec<_>>(),
        s.sb.dir(),
    );
    assert_eq!(through, direct);
    assert_eq!(p.stop().code(), Some(0));

    let lines = trace_lines(&s);
    let endpoint: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "reel.sse").collect();
    assert_eq!(endpoint.len(), 1);
    let data = endpoint[0]["text"].as_str().unwrap();
    let session = data
        .split("sessionId=")
        .nth(1)
        .expect("a sessionId in the endpoint");
    let msgs: Vec<&Value> = messages(&lines).collect();
    assert!(msgs.len() >= 6);
    assert!(
        msgs.iter().all(|m| m["session"] == session),
        "every message in the legacy session"
    );
    // Answers arrived on the GET stream (its request number), not on the POSTs.
    let get_req = &lines
        .iter()
        .find(|l| l["kind"] == "reel.http" && l["http"]["method"] == "GET")
        .unwrap()["http"]["req"];
    assert!(
        msgs.iter()
            .filter(|m| m["dir"] == "out")
            .all(|m| m["http"]["req"] == *get_req)
    );
    let pairs = pairing(&lines);
    assert!(
        pairs.orphans.is_empty() && pairs.unanswered.is_empty(),
        "{pairs:?}"
    );
    let (code, rules) = check(&s.trace_path());
    assert_eq!((code, rules), (Some(0), Vec::<String>::new()));
}

#[test]
fn inspector_cli_and_mcporter_over_streamable_http() {
    let port = free_port();
    let _server = everything("streamableHttp", port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let s = Session::new();
    let inspector = "@modelcontextprotocol/inspector-cli/build/index.js";
    let mcporter = "mcporter/dist/cli.js";
    let inspect = |u: &str| {
        node_cli(
            inspector,
            &[
                u,
                "--method",
                "tools/call",
                "--tool-name",
                "echo",
                "--tool-arg",
                "message=through reel",
            ],
            s.sb.dir(),
        )
    };
    let porter = |u: &str| {
        node_cli(
            mcporter,
            &[
                "call",
                "--http-url",
                u,
                "--allow-http",
                "get-sum",
                "a=2",
                "b=3",
                "--output",
                "json",
            ],
            s.sb.dir(),
        )
    };
    let direct = (inspect(&url), porter(&url));
    assert!(direct.0.contains("Echo: through reel"), "{}", direct.0);
    assert!(direct.1.contains('5'), "{}", direct.1);
    let p = proxy(&s, &url, &[]);
    let through = (inspect(&p.url), porter(&p.url));
    assert_eq!(through, direct);
    assert_eq!(p.stop().code(), Some(0));

    let lines = trace_lines(&s);
    let pairs = pairing(&lines);
    assert!(
        pairs.orphans.is_empty() && pairs.unanswered.is_empty(),
        "{pairs:?}"
    );
    let sessions: BTreeSet<&str> = messages(&lines)
        .filter(|m| m["raw"]["method"] == "initialize")
        .map(|m| m["session"].as_str().unwrap())
        .collect();
    assert_eq!(sessions.len(), 2, "one session per client");
    let calls: Vec<&Value> = messages(&lines)
        .filter(|m| m["raw"]["method"] == "tools/call")
        .collect();
    assert_eq!(calls.len(), 2);
    let (code, rules) = check(&s.trace_path());
    assert_eq!((code, rules), (Some(0), Vec::<String>::new()));
}
