//! `kill -9` of `reel rec --url` at random points of a busy session: every answer the
//! client had received whole is in the trace (each answer reaches the trace file before
//! its last bytes are delivered), twenty times.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::harness::play_http_support::{Player, post};
use crate::harness::sandbox::Sandbox;
use crate::harness::trace::TraceBuilder;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
const INIT_RESULT: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#;

#[test]
fn after_kill_9_the_trace_holds_every_answer_the_client_received() {
    let sb = Sandbox::new();
    let mut t = TraceBuilder::stdio();
    t.c(INIT).s(INIT_RESULT);
    let tape = t.write(&sb.path("tape.jsonl"));
    // The upstream: a tape server that answers every call (from the tape, or with its
    // miss error: an answer all the same).
    let upstream = Player::start(&tape, &[]);
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64
        | 1;
    for run in 0..20 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let dir = sb.path(&format!("traces-{run}"));
        let mut cmd = crate::harness::reel();
        cmd.args(["rec", "--url", &upstream.url, "--dir"]).arg(&dir);
        let rec = Player::listening(cmd);
        let (addr, path) = (rec.addr.clone(), rec.path.clone());
        let received = Arc::new(Mutex::new(Vec::<u64>::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let client = {
            let (received, stop) = (Arc::clone(&received), Arc::clone(&stop));
            std::thread::spawn(move || {
                let init = std::panic::catch_unwind(|| post(&addr, &path, None, INIT));
                let Ok(init) = init else { return };
                let session = init.header("mcp-session-id").map(str::to_owned);
                for id in 2.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let call = format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"n","arguments":{{"i":{id}}}}}}}"#
                    );
                    // A request the kill cuts off panics in the harness: the end.
                    let answer = std::panic::catch_unwind(|| {
                        post(&addr, &path, session.as_deref(), &call).json()
                    });
                    match answer {
                        Ok(a) if a["id"] == id => received.lock().unwrap().push(id),
                        _ => break,
                    }
                }
            })
        };
        std::thread::sleep(Duration::from_millis(100 + (seed >> 33) % 300));
        rec.kill();
        stop.store(true, Ordering::Relaxed);
        let _ = client.join();
        let got = received.lock().unwrap().clone();
        let trace = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .expect("a trace");
        let answered: Vec<u64> = std::fs::read_to_string(&trace)
            .unwrap()
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["dir"] == "out")
            .filter_map(|v| v["raw"]["id"].as_u64())
            .collect();
        let missing: Vec<&u64> = got.iter().filter(|id| !answered.contains(id)).collect();
        assert!(
            missing.is_empty(),
            "run {run}: the client received {} answers; not in the trace: {missing:?}",
            got.len()
        );
    }
    let _ = upstream.stop();
}

/// A 1 GiB request body passes through whole while reel's memory stays flat: it keeps
/// at most `BODY_KEPT_MAX` (64 MiB) of it, and the trace records it as a `reel.http`
/// event with its first bytes and `truncated` (the full size), never silently.
#[test]
fn a_huge_request_body_streams_through_in_flat_memory_and_is_recorded_truncated() {
    use crate::harness::rec_support::Session;
    use crate::rec_http::harness::{Answer, Upstream, proxy, read_head, send};
    let s = Session::new();
    let up = Upstream::start(|_| Answer::json(200, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
    let proxy = proxy(&s, &up.url("/mcp"), &[]);
    let len = 1 << 30;
    let head = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big","arguments":{"blob":""#;
    let mut body = head.as_bytes().to_vec();
    body.resize(len - 4, b'x');
    body.extend_from_slice(br#""}}}"#);
    let mut r = send(
        &proxy.addr,
        "POST",
        "/mcp",
        &[
            ("host", &proxy.addr),
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
        ],
        &body,
    );
    let (status, _) = read_head(&mut r);
    assert_eq!(status, 200);
    let peak = proxy.peak_memory();
    assert!(peak < 160 << 20, "reel held {} MiB", peak >> 20);
    assert_eq!(
        up.seen()[0].body.len(),
        len,
        "the upstream got the whole body"
    );
    drop(r);
    let _ = proxy.stop();
    let trace = std::fs::read_to_string(s.trace_path()).unwrap();
    let lines: Vec<serde_json::Value> = trace
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(
        !lines.iter().any(|l| l["dir"] == "in"),
        "a body past the cap is no message line"
    );
    assert!(
        lines
            .iter()
            .any(|l| l["kind"] == "reel.http" && l["truncated"] == len as u64),
        "no reel.http event with truncated: {len}"
    );
}
