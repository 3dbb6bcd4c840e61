//! The HTTP listeners under abuse: a crowd of slow clients (slowloris) holding
//! connections with request heads that never end, against `reel play --listen` and
//! `reel rec --url`, each run under a descriptor limit of 64 (`prlimit`), must not keep
//! a real client from its answers.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::harness::play_http_support::{Player, post};
use crate::harness::sandbox::Sandbox;
use crate::harness::trace::TraceBuilder;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
const INIT_RESULT: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#;
const CALL: &str =
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"who","arguments":{}}}"#;
const CALL_RESULT: &str =
    r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"real"}]}}"#;

/// Slow clients, each on its own thread until dropped: connect, send the start of a
/// request head, then a header line every 200 ms, forever; connect again when closed.
struct Crowd {
    stop: Arc<AtomicBool>,
    /// Connections the listener closed on them.
    closed: Arc<AtomicU64>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Crowd {
    fn start(addr: &str, n: usize) -> Crowd {
        let addr: SocketAddr = addr.parse().expect("IP:PORT");
        let stop = Arc::new(AtomicBool::new(false));
        let closed = Arc::new(AtomicU64::new(0));
        let threads = (0..n)
            .map(|_| {
                let (stop, closed) = (Arc::clone(&stop), Arc::clone(&closed));
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(1))
                        else {
                            continue;
                        };
                        let _ = s.set_write_timeout(Some(Duration::from_secs(1)));
                        let head = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\n");
                        let mut ok = s.write_all(head.as_bytes()).is_ok();
                        while ok && !stop.load(Ordering::Relaxed) {
                            std::thread::sleep(Duration::from_millis(200));
                            ok = s.write_all(b"X-Slow: 1\r\n").is_ok();
                        }
                        if !ok {
                            closed.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        Crowd {
            stop,
            closed,
            threads,
        }
    }
}

impl Drop for Crowd {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// `reel ARGS…` under a limit of 64 descriptors.
fn limited(args: &[&str]) -> Command {
    let mut c = Command::new("prlimit");
    c.arg("--nofile=64:64")
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_reel"))
        .args(args);
    c
}

fn tape(sb: &Sandbox) -> std::path::PathBuf {
    let mut t = TraceBuilder::stdio();
    t.c(INIT).s(INIT_RESULT).c(CALL).s(CALL_RESULT);
    t.write(&sb.path("tape.jsonl"))
}

/// The real client: initialize, then the call, each answered.
fn real_client(addr: &str, path: &str, what: &str) {
    let init = post(addr, path, None, INIT);
    assert_eq!(init.status, 200, "{what}: {}", init.text());
    let session = init.header("mcp-session-id").map(str::to_owned);
    let call = post(addr, path, session.as_deref(), CALL);
    assert_eq!(call.status, 200, "{what}: {}", call.text());
    assert!(call.text().contains("real"), "{what}: {}", call.text());
}

#[test]
fn a_slowloris_crowd_does_not_starve_a_real_client_of_play_listen() {
    let sb = Sandbox::new();
    let trace = tape(&sb);
    let trace = trace.to_str().unwrap();
    let p = Player::listening(limited(&[
        "play",
        trace,
        "--listen",
        "127.0.0.1:0",
        "--header-timeout",
        "0.5",
    ]));
    let crowd = Crowd::start(&p.addr, 150);
    std::thread::sleep(Duration::from_millis(1500));
    real_client(&p.addr, &p.path, "play --listen");
    assert!(
        crowd.closed.load(Ordering::Relaxed) > 0,
        "no slow connection was let go"
    );
    drop(crowd);
    let s = p.stop();
    assert_eq!(s.code(), Some(0), "{}", s.stderr);
}

#[test]
fn a_slowloris_crowd_does_not_starve_a_real_client_of_rec_url() {
    let sb = Sandbox::new();
    let trace = tape(&sb);
    let upstream = Player::start(&trace, &[]);
    let dir = sb.path("traces");
    let rec = Player::listening(limited(&[
        "rec",
        "--url",
        &upstream.url,
        "--dir",
        dir.to_str().unwrap(),
        "--header-timeout",
        "0.5",
    ]));
    let crowd = Crowd::start(&rec.addr, 150);
    std::thread::sleep(Duration::from_millis(1500));
    real_client(&rec.addr, &rec.path, "rec --url");
    assert!(
        crowd.closed.load(Ordering::Relaxed) > 0,
        "no slow connection was let go"
    );
    drop(crowd);
    let s = rec.stop();
    assert_eq!(s.code(), Some(0), "{}", s.stderr);
    let _ = upstream.stop();
}
