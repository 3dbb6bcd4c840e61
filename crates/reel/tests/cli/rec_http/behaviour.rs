//! The proxy's behaviour against a scripted upstream whose every move the test controls.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::harness::rec_support::{Session, eventually, reel};
use crate::rec_http::harness::READ_LIMIT;
use crate::rec_http::harness::{
    Answer, Upstream, free_port, proxy, read_head, read_until, request, send,
};

const PING: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
const PONG: &str = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;

/// Every line of the session's one trace, parsed.
pub fn trace_lines(s: &Session) -> Vec<Value> {
    std::fs::read_to_string(s.trace_path())
        .expect("read the trace")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

fn events<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["kind"] == kind).collect()
}

fn messages<'a>(lines: &'a [Value], dir: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["dir"] == dir).collect()
}

#[test]
fn requests_naming_a_foreign_host_or_origin_get_403_and_never_reach_the_upstream() {
    let up = Upstream::start(|_| Answer::json(200, PONG));
    let s = Session::new();
    let p = proxy(&s, &up.url("/mcp"), &[]);
    let ct = ("content-type", "application/json");
    let local = format!("localhost:{}", p.addr.rsplit(':').next().unwrap());

    let evil_host = request(
        &p.addr,
        "POST",
        "/mcp",
        &[("host", "evil.example"), ct],
        PING,
    );
    assert_eq!(evil_host.status, 403, "{}", evil_host.text());
    assert!(
        evil_host.text().contains("DNS rebinding"),
        "{}",
        evil_host.text()
    );
    let evil_origin = request(
        &p.addr,
        "POST",
        "/mcp",
        &[("host", &local), ("origin", "http://evil.example"), ct],
        PING,
    );
    assert_eq!(evil_origin.status, 403);
    // A foreign name in a second Host or Origin line is refused too, not only in the
    // first one.
    let second_host = request(
        &p.addr,
        "POST",
        "/mcp",
        &[("host", &local), ("host", "evil.example"), ct],
        PING,
    );
    assert_eq!(second_host.status, 403, "{}", second_host.text());
    let local_origin = format!("http://{local}");
    let second_origin = request(
        &p.addr,
        "POST",
        "/mcp",
        &[
            ("host", &local),
            ("origin", &local_origin),
            ("origin", "http://evil.example"),
            ct,
        ],
        PING,
    );
    assert_eq!(second_origin.status, 403, "{}", second_origin.text());
    let fine = request(
        &p.addr,
        "POST",
        "/mcp",
        &[("host", &local), ("origin", &format!("http://{local}")), ct],
        PING,
    );
    assert_eq!((fine.status, fine.text().as_str()), (200, PONG));

    let seen = up.seen();
    assert_eq!(
        seen.len(),
        1,
        "only the allowed request reaches the upstream"
    );
    // Host and Origin name the upstream on the upstream hop.
    let upstream_authority = format!("127.0.0.1:{}", up.port);
    assert_eq!(seen[0].header("host"), Some(upstream_authority.as_str()));
    assert_eq!(
        seen[0].header("origin"),
        Some(format!("http://{upstream_authority}").as_str())
    );
    // reel says so on stderr (read by another thread: give it a moment).
    assert!(
        eventually(READ_LIMIT, || p
            .stderr_text()
            .contains("refused a request with 403")),
        "{}",
        p.stderr_text()
    );

    let f = p.stop();
    assert_eq!(f.code(), Some(0), "{}", f.stderr_text());
    let lines = trace_lines(&s);
    let refused: Vec<&str> = events(&lines, "reel.http")
        .iter()
        .filter_map(|e| e["http"]["refused"].as_str())
        .collect();
    assert_eq!(refused, ["host", "origin", "host", "origin"]);
}

#[test]
fn hop_by_hop_headers_cross_neither_way_and_the_rest_does() {
    let up = Upstream::start(|_| Answer::Full {
        status: 200,
        headers: vec![
            ("content-type".into(), "application/json".into()),
            ("connection".into(), "x-resp-hop".into()),
            ("x-resp-hop".into(), "1".into()),
            ("keep-alive".into(), "timeout=5".into()),
            ("proxy-authenticate".into(), "Basic realm=x".into()),
            ("x-kept".into(), "yes".into()),
        ],
        body: PONG.as_bytes().to_vec(),
    });
    let s = Session::new();
    let p = proxy(&s, &up.url("/mcp"), &[]);
    let r = request(
        &p.addr,
        "POST",
        "/mcp",
        &[
            ("host", &p.addr),
            ("content-type", "application/json"),
            ("connection", "keep-alive, x-hop"),
            ("x-hop", "1"),
            ("keep-alive", "timeout=5"),
            ("te", "trailers"),
            ("proxy-authorization", "Basic eDp5"),
            ("x-end-to-end", "kept"),
        ],
        PING,
    );
    assert_eq!((r.status, r.text().as_str()), (200, PONG));
    for gone in ["x-resp-hop", "keep-alive", "proxy-authenticate"] {
        assert!(r.header(gone).is_none(), "{gone} reached the client: {r:?}");
    }
    assert_eq!(r.header("x-kept"), Some("yes"));

    let seen = up.seen();
    assert_eq!(seen.len(), 1);
    for gone in ["x-hop", "keep-alive", "te", "proxy-authorization"] {
        assert!(
            seen[0].header(gone).is_none(),
            "{gone} reached the upstream: {:?}",
            seen[0]
        );
    }
    assert_ne!(seen[0].header("connection"), Some("keep-alive, x-hop"));
    assert_eq!(seen[0].header("x-end-to-end"), Some("kept"));
    assert_eq!(seen[0].body, PING);
    drop(p);
}

#[test]
fn an_sse_answer_reaches_the_client_event_by_event_before_the_upstream_finishes() {
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    let rx = Mutex::new(Some(rx));
    let up = Upstream::start(move |_| Answer::Stream {
        status: 200,
        headers: vec![("content-type".into(), "text/event-stream".into())],
        chunks: rx.lock().unwrap().take().expect("one streamed answer"),
    });
    let s = Session::new();
    let p = proxy(&s, &up.url("/mcp"), &[]);
    let call = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":7}}}"#;
    let mut conn = send(
        &p.addr,
        "POST",
        "/mcp",
        &[
            ("host", &p.addr),
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
        ],
        call,
    );
    let (status, _) = read_head(&mut conn);
    assert_eq!(status, 200);
    let progress = "event: message\r\nid: e1\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":7,\"progress\":1}}\r\n\r\n";
    tx.send(progress.as_bytes().to_vec()).unwrap();
    let mut got = Vec::new();
    // The upstream has not sent event 2 yet (the test holds it): event 1 must arrive alone.
    read_until(&mut conn, "notifications/progress", &mut got);
    assert!(!String::from_utf8_lossy(&got).contains("\"result\""));
    let result = "event: message\r\nid: e2\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}\r\n\r\n";
    tx.send(result.as_bytes().to_vec()).unwrap();
    read_until(&mut conn, "\"result\"", &mut got);
    drop(tx);
    read_until(&mut conn, "0\r\n\r\n", &mut got);
    let f = p.stop();
    assert_eq!(f.code(), Some(0));

    let lines = trace_lines(&s);
    let out = messages(&lines, "out");
    assert_eq!(out.len(), 2, "{lines:#?}");
    assert_eq!(
        out[0]["http"]["sse"],
        serde_json::json!({"id": "e1", "event": "message", "eol": "crlf"})
    );
    assert_eq!(out[1]["http"]["sse"]["id"], "e2");
    assert_eq!(out[1]["raw"]["id"], 7);
    let req = messages(&lines, "in")[0]["http"]["req"].clone();
    assert!(
        out.iter()
            .all(|o| o["http"]["req"] == req && o["http"]["status"] == 200)
    );
    // Every line of the exchange is in the session of the client's connection.
    assert!(
        lines[1..lines.len() - 1]
            .iter()
            .all(|l| l["session"] == "reel:conn-1")
    );
}

#[test]
fn sse_events_without_json_keep_in_the_trace_whether_they_had_data() {
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    let rx = Mutex::new(Some(rx));
    let up = Upstream::start(move |_| Answer::Stream {
        status: 200,
        headers: vec![("content-type".into(), "text/event-stream".into())],
        chunks: rx.lock().unwrap().take().expect("one streamed answer"),
    });
    let s = Session::new();
    let p = proxy(&s, &up.url("/mcp"), &[]);
    let call = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}"#;
    let mut conn = send(
        &p.addr,
        "POST",
        "/mcp",
        &[("host", &p.addr), ("content-type", "application/json")],
        call,
    );
    assert_eq!(read_head(&mut conn).0, 200);
    // A priming event (`data:` with nothing after it, which a client dispatches), an
    // event with no data at all (which it does not), an empty `ping`, then the answer.
    let wire = "id: p1\ndata: \n\nid: p2\nretry: 500\n\nevent: ping\ndata:\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n";
    tx.send(wire.as_bytes().to_vec()).unwrap();
    drop(tx);
    let mut got = Vec::new();
    read_until(&mut conn, "0\r\n\r\n", &mut got);
    assert!(String::from_utf8_lossy(&got).contains("id: p2\nretry: 500\n\n"));
    assert_eq!(p.stop().code(), Some(0));

    let lines = trace_lines(&s);
    let sse = events(&lines, "reel.sse");
    assert_eq!(sse.len(), 3, "{lines:#?}");
    assert_eq!(
        (&sse[0]["text"], &sse[0]["http"]["sse"]["id"]),
        (&serde_json::json!(""), &serde_json::json!("p1"))
    );
    assert!(sse[1].get("text").is_none(), "{:?}", sse[1]);
    assert_eq!(
        sse[1]["http"]["sse"],
        serde_json::json!({"id": "p2", "retry": 500})
    );
    assert_eq!(
        (&sse[2]["text"], &sse[2]["http"]["sse"]["event"]),
        (&serde_json::json!(""), &serde_json::json!("ping"))
    );
    assert_eq!(messages(&lines, "out").len(), 1);
}

/// Answers like a legacy HTTP+SSE server and an OAuth-protected one, with absolute URLs
/// built from the `Host` it is sent (as real servers do).
fn self_naming_upstream(stream: Arc<Mutex<Option<mpsc::Receiver<Vec<u8>>>>>) -> Upstream {
    Upstream::start(move |req| {
        let me = format!("http://{}", req.header("host").unwrap_or("?"));
        match (req.method.as_str(), req.path.as_str()) {
            ("GET", "/sse") => Answer::Stream {
                status: 200,
                headers: vec![("content-type".into(), "text/event-stream".into())],
                chunks: stream.lock().unwrap().take().expect("one stream"),
            },
            ("POST", p) if p.starts_with("/message") => Answer::Full {
                status: 202,
                headers: vec![],
                body: b"Accepted".to_vec(),
            },
            ("GET", "/.well-known/oauth-protected-resource/mcp") => Answer::json(
                200,
                &format!(r#"{{"resource":"{me}/mcp","authorization_servers":["{me}"]}}"#),
            ),
            _ => Answer::Full {
                status: 401,
                headers: vec![(
                    "www-authenticate".into(),
                    format!(
                        r#"Bearer resource_metadata="{me}/.well-known/oauth-protected-resource/mcp""#
                    ),
                )],
                body: Vec::new(),
            },
        }
    })
}

#[test]
fn urls_the_upstream_hands_out_are_rewritten_to_the_proxy() {
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    let up = self_naming_upstream(Arc::new(Mutex::new(Some(rx))));
    let me = format!("http://127.0.0.1:{}", up.port);
    let s = Session::new();
    let p = proxy(&s, &up.url("/sse"), &[]);
    let proxy = format!("http://{}", p.addr);

    let denied = request(&p.addr, "GET", "/mcp", &[("host", &p.addr)], b"");
    assert_eq!(denied.status, 401);
    assert_eq!(
        denied.header("www-authenticate"),
        Some(
            format!(
                r#"Bearer resource_metadata="{proxy}/.well-known/oauth-protected-resource/mcp""#
            )
            .as_str()
        )
    );
    let meta = request(
        &p.addr,
        "GET",
        "/.well-known/oauth-protected-resource/mcp",
        &[("host", &p.addr)],
        b"",
    );
    let doc: Value = serde_json::from_slice(&meta.body).expect("a JSON document");
    assert_eq!(doc["resource"], format!("{proxy}/mcp"));
    assert_eq!(doc["authorization_servers"][0], proxy);

    let mut stream = send(
        &p.addr,
        "GET",
        "/sse",
        &[("host", &p.addr), ("accept", "text/event-stream")],
        b"",
    );
    let (status, _) = read_head(&mut stream);
    assert_eq!(status, 200);
    tx.send(format!("event: endpoint\ndata: {me}/message?sessionId=abc\n\n").into_bytes())
        .unwrap();
    let mut got = Vec::new();
    read_until(
        &mut stream,
        &format!("data: {proxy}/message?sessionId=abc\n\n"),
        &mut got,
    );
    assert!(
        !String::from_utf8_lossy(&got).contains(&me),
        "the upstream's origin leaked"
    );
    let posted = request(
        &p.addr,
        "POST",
        "/message?sessionId=abc",
        &[("host", &p.addr), ("content-type", "application/json")],
        PING,
    );
    assert_eq!(posted.status, 202);
    tx.send(format!("event: message\ndata: {PONG}\n\n").into_bytes())
        .unwrap();
    read_until(&mut stream, "\"result\"", &mut got);
    drop(tx);
    assert_eq!(p.stop().code(), Some(0));

    let lines = trace_lines(&s);
    let endpoint = events(&lines, "reel.sse");
    assert_eq!(endpoint.len(), 1);
    assert_eq!(
        endpoint[0]["text"],
        format!("{proxy}/message?sessionId=abc")
    );
    // The legacy session is the endpoint's sessionId, for the POST and the stream alike.
    let ping = messages(&lines, "in");
    assert_eq!(ping.len(), 1);
    assert_eq!(ping[0]["session"], "abc");
    let pong = messages(&lines, "out");
    assert_eq!((pong.len(), &pong[0]["session"]), (1, &Value::from("abc")));
    let meta_event = events(&lines, "reel.http")
        .into_iter()
        .find(|e| e["http"]["path"] == "/.well-known/oauth-protected-resource/mcp")
        .expect("the metadata exchange is recorded");
    assert_eq!(meta_event["raw"]["resource"], format!("{proxy}/mcp"));
}

#[test]
fn authorization_is_redacted_in_the_trace_and_forwarded_intact() {
    let up = Upstream::start(|_| Answer::json(200, PONG));
    let s = Session::new();
    let p = proxy(&s, &up.url("/mcp"), &[]);
    let token = "Bearer sk-proj-abcdefghijklmnopqrstuvwxyz0123456789";
    let r = request(
        &p.addr,
        "POST",
        "/mcp",
        &[
            ("host", &p.addr),
            ("authorization", token),
            ("content-type", "application/json"),
        ],
        PING,
    );
    assert_eq!(r.status, 200);
    assert_eq!(up.seen()[0].header("authorization"), Some(token));
    assert_eq!(p.stop().code(), Some(0));
    let text = std::fs::read_to_string(s.trace_path()).unwrap();
    assert!(!text.contains("sk-proj-"), "the token is in the trace");
    let lines = trace_lines(&s);
    assert_eq!(
        messages(&lines, "in")[0]["http"]["headers"]["authorization"],
        "[REDACTED]"
    );
}

#[test]
fn sigterm_closes_open_streams_and_ends_the_trace_cleanly() {
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    let rx = Mutex::new(Some(rx));
    let up = Upstream::start(move |_| Answer::Stream {
        status: 200,
        headers: vec![
            ("content-type".into(), "text/event-stream".into()),
            ("mcp-session-id".into(), "s-1".into()),
        ],
        chunks: rx.lock().unwrap().take().expect("one stream"),
    });
    let s = Session::new();
    let p = proxy(&s, &up.url("/mcp"), &[]);
    let mut stream = send(
        &p.addr,
        "GET",
        "/mcp",
        &[
            ("host", &p.addr),
            ("accept", "text/event-stream"),
            ("mcp-session-id", "s-1"),
        ],
        b"",
    );
    assert_eq!(read_head(&mut stream).0, 200);
    tx.send(b": keep-alive\n\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n".to_vec())
        .unwrap();
    let mut got = Vec::new();
    read_until(&mut stream, "notifications/message", &mut got);
    let f = p.stop();
    assert_eq!(f.code(), Some(0), "{}", f.stderr_text());
    // The stream was closed: the chunked body ends, then the connection.
    read_until(&mut stream, "0\r\n\r\n", &mut got);
    drop(tx);

    let lines = trace_lines(&s);
    let end = lines.last().unwrap();
    assert_eq!(end["type"], "end");
    assert_eq!(end["reason"], "producer_shutdown");
    assert!(end.get("exitCode").is_none());
    let http = events(&lines, "reel.http");
    assert_eq!(http.first().unwrap()["http"]["method"], "GET");
    assert_eq!(http.last().unwrap()["http"]["end"], "shutdown");
    assert!(
        lines[1..lines.len() - 1]
            .iter()
            .all(|l| l["session"] == "s-1")
    );
    assert_eq!(messages(&lines, "out").len(), 1);
}

#[test]
fn an_unreachable_upstream_gets_502_and_reel_goes_on_until_it_is_up() {
    let port = free_port();
    let s = Session::new();
    let p = proxy(&s, &format!("http://127.0.0.1:{port}/mcp"), &[]);
    let r = request(
        &p.addr,
        "POST",
        "/mcp",
        &[("host", &p.addr), ("content-type", "application/json")],
        PING,
    );
    assert_eq!(r.status, 502);
    assert!(
        r.text().contains("cannot reach the upstream"),
        "{}",
        r.text()
    );
    assert!(
        eventually(READ_LIMIT, || p.stderr_text().contains("502")),
        "{}",
        p.stderr_text()
    );

    let up = Upstream::start_on(port, |_| Answer::json(200, PONG));
    let r = request(
        &p.addr,
        "POST",
        "/mcp",
        &[("host", &p.addr), ("content-type", "application/json")],
        PING,
    );
    assert_eq!((r.status, r.text().as_str()), (200, PONG));
    assert_eq!(up.seen().len(), 1);
    assert_eq!(p.stop().code(), Some(0));

    let lines = trace_lines(&s);
    let failed = events(&lines, "reel.http");
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["http"]["status"], 502);
    assert!(
        failed[0]["http"]["error"]
            .as_str()
            .unwrap()
            .contains("cannot connect")
    );
    // Both requests are in the trace; only the second was answered.
    assert_eq!(messages(&lines, "in").len(), 2);
    assert_eq!(messages(&lines, "out").len(), 1);
}

#[test]
fn usage_errors_have_their_exit_codes() {
    let s = Session::new();
    let run = |args: &[&str]| {
        let out = reel()
            .arg("rec")
            .arg("--dir")
            .arg(s.dir())
            .args(args)
            .output()
            .expect("run reel");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = run(&["--url", "ftp://127.0.0.1/mcp"]);
    assert_eq!(code, Some(64), "{err}");
    assert!(err.contains("http://"), "{err}");
    let (code, err) = run(&[
        "--url",
        "http://127.0.0.1:1/mcp",
        "--listen",
        "not-an-address",
    ]);
    assert_eq!(code, Some(64), "{err}");
    assert!(err.contains("--listen"), "{err}");
    let (code, err) = run(&["--url", "http://no-such-host.invalid/mcp"]);
    assert_eq!(code, Some(69), "{err}");
    let (code, _) = run(&["--url", "http://127.0.0.1:1/mcp", "--", "cat"]);
    assert_eq!(code, Some(64));
    let (code, _) = run(&["--listen", "127.0.0.1:0", "--", "cat"]);
    assert_eq!(code, Some(64), "--listen needs --url");
}

#[test]
fn an_https_upstream_is_reached_with_its_ca_and_refused_without_it() {
    let peers = crate::harness::rec_support::Peers::get();
    let s = Session::new();
    let ca = s.sb.dir().join("ca.pem");
    let port = free_port();
    let mut c = std::process::Command::new(&peers.python);
    c.arg(crate::harness::rec_support::Peers::script(
        "http_tls_upstream.py",
    ))
    .arg(port.to_string())
    .arg(&ca);
    let _server = crate::rec_http::harness::Server::start(c, port);
    let url = format!("https://localhost:{port}/mcp");
    let ct = ("content-type", "application/json");

    let p = proxy(&s, &url, &["--upstream-ca", ca.to_str().unwrap()]);
    let r = request(&p.addr, "POST", "/mcp", &[("host", &p.addr), ct], PING);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.text(),
        r#"{"jsonrpc": "2.0", "id": 1, "result": {"tls": true}}"#
    );
    assert_eq!(p.stop().code(), Some(0));
    let lines = trace_lines(&s);
    assert_eq!(lines[0]["upstream"], url.as_str());
    assert_eq!(messages(&lines, "out")[0]["raw"]["result"]["tls"], true);

    // Without the CA, the certificate is not trusted: 502, and reel says why.
    let s2 = Session::new();
    let p = proxy(&s2, &url, &[]);
    let r = request(&p.addr, "POST", "/mcp", &[("host", &p.addr), ct], PING);
    assert_eq!(r.status, 502);
    assert!(r.text().contains("certificate"), "{}", r.text());
    drop(p);
}

#[test]
fn large_streamed_and_pretty_printed_bodies_cross_intact_and_are_recorded_whole() {
    let big_text = "y".repeat(200 * 1024);
    let big_answer = format!(r#"{{"jsonrpc":"2.0","id":2,"result":{{"text":"{big_text}"}}}}"#);
    let pretty = "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 3,\n  \"result\": {}\n}\n";
    let answer = big_answer.clone();
    let up = Upstream::start(move |req| {
        let id: Value = serde_json::from_slice::<Value>(&req.body).unwrap()["id"].clone();
        match id.as_u64() {
            // Larger than what reel reads whole: passed on chunk by chunk.
            Some(2) => Answer::json(200, &answer),
            Some(3) => Answer::json(200, pretty),
            // No Content-Length: the body ends when the upstream closes.
            _ => {
                let (tx, rx) = mpsc::channel();
                tx.send(PONG.as_bytes().to_vec()).unwrap();
                Answer::Stream {
                    status: 200,
                    headers: vec![("content-type".into(), "application/json".into())],
                    chunks: rx,
                }
            }
        }
    });
    let s = Session::new();
    let p = proxy(&s, &up.url("/mcp"), &[]);
    let ct = ("content-type", "application/json");
    let big_request = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{big_text}"}}}}}}"#
    );
    let r = request(
        &p.addr,
        "POST",
        "/mcp",
        &[("host", &p.addr), ct],
        big_request.as_bytes(),
    );
    assert_eq!(r.body, big_answer.as_bytes());
    assert_eq!(up.seen()[0].body, big_request.as_bytes());
    let r = request(
        &p.addr,
        "POST",
        "/mcp",
        &[("host", &p.addr), ct],
        br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
    );
    assert_eq!(r.text(), pretty);
    let r = request(&p.addr, "POST", "/mcp", &[("host", &p.addr), ct], PING);
    assert_eq!(r.text(), PONG);
    assert_eq!(p.stop().code(), Some(0));

    let lines = trace_lines(&s);
    let (ins, outs) = (messages(&lines, "in"), messages(&lines, "out"));
    assert_eq!((ins.len(), outs.len()), (3, 3));
    assert_eq!(
        ins[0]["raw"]["params"]["arguments"]["text"]
            .as_str()
            .map(str::len),
        Some(big_text.len())
    );
    assert_eq!(
        outs[0]["raw"]["result"]["text"].as_str().map(str::len),
        Some(big_text.len())
    );
    // A body with line breaks is stored on one line, marked, its bytes kept.
    assert_eq!(outs[1]["raw"]["id"], 3);
    assert_eq!(outs[1]["reformatted"], true);
    let b64 = outs[1]["raw_b64"].as_str().expect("raw_b64");
    assert_eq!(
        crate::harness::rec_support::base64_decode(b64).unwrap(),
        pretty.as_bytes()
    );
    assert_eq!(outs[2]["raw"]["id"], 1);
}

#[test]
fn an_oauth_token_exchange_crosses_intact_and_leaves_no_secret_in_the_trace() {
    let up = Upstream::start(|_| {
        Answer::json(
            200,
            r#"{"access_token":"at-5ecret-value","refresh_token":"rt-5ecret-value","token_type":"Bearer","expires_in":3600}"#,
        )
    });
    let s = Session::new();
    let p = proxy(&s, &up.url("/mcp"), &[]);
    let form = b"grant_type=authorization_code&code=c0de-5ecret&code_verifier=ver1fier-5ecret&client_id=reel-test&redirect_uri=http%3A%2F%2Flocalhost%3A1%2Fcb";
    let r = request(
        &p.addr,
        "POST",
        "/token",
        &[
            ("host", &p.addr),
            ("content-type", "application/x-www-form-urlencoded"),
        ],
        form,
    );
    assert_eq!(r.status, 200);
    assert!(
        r.text().contains("at-5ecret-value"),
        "the client gets the token"
    );
    assert_eq!(
        up.seen()[0].body,
        form,
        "the upstream gets the form as sent"
    );
    assert_eq!(p.stop().code(), Some(0));

    let text = std::fs::read_to_string(s.trace_path()).unwrap();
    assert!(!text.contains("5ecret"), "a secret is in the trace: {text}");
    let lines = trace_lines(&s);
    assert!(messages(&lines, "in").is_empty() && messages(&lines, "out").is_empty());
    let token = events(&lines, "reel.http");
    assert_eq!(token.len(), 1);
    assert_eq!(
        token[0]["http"]["reqForm"],
        "grant_type=authorization_code&code=[REDACTED]&code_verifier=[REDACTED]&client_id=reel-test&redirect_uri=http%3A%2F%2Flocalhost%3A1%2Fcb"
    );
    assert_eq!(token[0]["raw"]["access_token"], "[REDACTED]");
    assert_eq!(token[0]["raw"]["expires_in"], 3600);
}

#[test]
fn metadata_at_the_custom_path_www_authenticate_names_is_rewritten_too() {
    let up = Upstream::start(|req| {
        let me = format!("http://{}", req.header("host").unwrap_or("?"));
        match req.path.as_str() {
            "/custom/prm" => Answer::json(200, &format!(r#"{{"resource":"{me}/mcp"}}"#)),
            // Never named: served as it is.
            "/other/doc" => Answer::json(200, &format!(r#"{{"resource":"{me}/mcp"}}"#)),
            _ => Answer::Full {
                status: 401,
                headers: vec![(
                    "www-authenticate".into(),
                    format!(r#"Bearer resource_metadata="{me}/custom/prm""#),
                )],
                body: Vec::new(),
            },
        }
    });
    let me = format!("http://127.0.0.1:{}", up.port);
    let s = Session::new();
    let p = proxy(&s, &up.url("/mcp"), &[]);
    let proxy = format!("http://{}", p.addr);
    let get = |path: &str| request(&p.addr, "GET", path, &[("host", &p.addr)], b"");
    let before = get("/custom/prm");
    assert!(
        before.text().contains(&me),
        "not named yet: {}",
        before.text()
    );
    let denied = get("/mcp");
    assert_eq!(
        denied.header("www-authenticate"),
        Some(format!(r#"Bearer resource_metadata="{proxy}/custom/prm""#).as_str())
    );
    let doc: Value = serde_json::from_slice(&get("/custom/prm").body).unwrap();
    assert_eq!(doc["resource"], format!("{proxy}/mcp"));
    assert!(get("/other/doc").text().contains(&me));
    drop(p);
}

/// An upstream that dies in the middle of a small `Content-Length` body (one reel reads
/// whole before passing it on): the client gets what the upstream sent, cut off as it
/// was, not a 502 of reel's own; the trace keeps the upstream's status, the bytes that
/// came and the error.
#[test]
fn a_small_body_the_upstream_breaks_off_reaches_the_client_and_the_trace_as_it_came() {
    const PART: &str = r#"{"jsonrpc":"2.0","id":1,"#;
    let up = Upstream::start(|_| {
        let (tx, rx) = mpsc::channel();
        tx.send(PART.as_bytes().to_vec()).unwrap();
        Answer::Stream {
            status: 200,
            headers: vec![
                ("content-type".into(), "application/json".into()),
                ("content-length".into(), "100".into()),
            ],
            chunks: rx,
        }
    });
    let s = Session::new();
    let p = proxy(&s, &up.url("/mcp"), &[]);
    let mut r = send(
        &p.addr,
        "POST",
        "/mcp",
        &[("host", &p.addr), ("content-type", "application/json")],
        PING,
    );
    let (status, headers) = read_head(&mut r);
    assert_eq!(status, 200);
    assert_eq!(headers["content-length"], ["100"]);
    let mut got = Vec::new();
    let _ = std::io::Read::read_to_end(&mut r, &mut got);
    assert_eq!(String::from_utf8_lossy(&got), PART);
    let f = p.stop();
    assert_eq!(f.code(), Some(0), "{}", f.stderr_text());

    let lines = trace_lines(&s);
    let cut = events(&lines, "reel.nonjson");
    assert_eq!(cut.len(), 1, "{lines:?}");
    assert_eq!(cut[0]["text"], PART);
    assert_eq!(cut[0]["http"]["status"], 200);
    let http = events(&lines, "reel.http");
    assert_eq!(http.len(), 1, "{lines:?}");
    assert_eq!(http[0]["http"]["status"], 200);
    assert!(
        http[0]["http"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("broke off")),
        "{lines:?}"
    );
}

/// reel stopped while it waits for the rest of a small body: the trace says the
/// response was cut by the shutdown (with the upstream's status once it had it), not
/// nothing at all.
#[test]
fn a_small_body_still_arriving_at_sigterm_is_recorded_as_cut_by_the_shutdown() {
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    let rx = Mutex::new(Some(rx));
    let up = Upstream::start(move |_| Answer::Stream {
        status: 200,
        headers: vec![
            ("content-type".into(), "application/json".into()),
            ("content-length".into(), "100".into()),
        ],
        chunks: rx.lock().unwrap().take().expect("one answer"),
    });
    let s = Session::new();
    let p = proxy(&s, &up.url("/mcp"), &[]);
    let _client = send(
        &p.addr,
        "POST",
        "/mcp",
        &[("host", &p.addr), ("content-type", "application/json")],
        PING,
    );
    assert!(eventually(READ_LIMIT, || !up.seen().is_empty()));
    let f = p.stop();
    assert_eq!(f.code(), Some(0), "{}", f.stderr_text());
    drop(tx);

    let lines = trace_lines(&s);
    assert_eq!(messages(&lines, "in").len(), 1, "{lines:?}");
    let http = events(&lines, "reel.http");
    assert_eq!(http.len(), 1, "{lines:?}");
    assert_eq!(http[0]["http"]["end"], "shutdown", "{lines:?}");
    assert_eq!(lines.last().unwrap()["type"], "end");
}

/// The first event of a GET stream is held until it is complete (a legacy `endpoint`
/// may need rewriting). An upstream that breaks off before that event's blank line
/// still had it reach the client and the trace.
#[test]
fn a_get_streams_first_event_cut_off_by_the_upstream_reaches_the_client_and_the_trace() {
    const EVENT: &str =
        "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n";
    let up = Upstream::start(|_| {
        let (tx, rx) = mpsc::channel();
        // One chunk of a chunked body, then the connection closes: no last chunk.
        tx.send(format!("{:x}\r\n{EVENT}\r\n", EVENT.len()).into_bytes())
            .unwrap();
        Answer::Stream {
            status: 200,
            headers: vec![
                ("content-type".into(), "text/event-stream".into()),
                ("transfer-encoding".into(), "chunked".into()),
            ],
            chunks: rx,
        }
    });
    let s = Session::new();
    let p = proxy(&s, &up.url("/mcp"), &[]);
    let mut stream = send(
        &p.addr,
        "GET",
        "/mcp",
        &[
            ("host", &p.addr),
            ("accept", "text/event-stream"),
            ("mcp-session-id", "s-1"),
        ],
        b"",
    );
    assert_eq!(read_head(&mut stream).0, 200);
    let mut got = Vec::new();
    read_until(&mut stream, "\"params\":{}}\n", &mut got);
    let f = p.stop();
    assert_eq!(f.code(), Some(0), "{}", f.stderr_text());

    let lines = trace_lines(&s);
    let out = messages(&lines, "out");
    assert_eq!(out.len(), 1, "{lines:?}");
    assert_eq!(out[0]["raw"]["method"], "notifications/message");
    assert_eq!(out[0]["http"]["sse"]["id"], "1");
    let http = events(&lines, "reel.http");
    assert!(
        http.last().unwrap()["http"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("broke off")),
        "{lines:?}"
    );
}

/// An upstream that is its own authorization server redirects the browser back to the
/// client with the authorization code in the `Location` query: the client gets it, the
/// trace does not (the token request that spends the code is redacted too).
#[test]
fn an_authorization_redirect_keeps_its_code_out_of_the_trace() {
    const LOCATION: &str = "http://localhost:1/cb?code=c0de-5ecret&state=st8";
    let up = Upstream::start(|_| Answer::Full {
        status: 302,
        headers: vec![("location".into(), LOCATION.into())],
        body: Vec::new(),
    });
    let s = Session::new();
    let p = proxy(&s, &up.url("/mcp"), &[]);
    let r = request(
        &p.addr,
        "GET",
        "/authorize?response_type=code&client_id=c&state=st8",
        &[("host", &p.addr)],
        b"",
    );
    assert_eq!((r.status, r.header("location")), (302, Some(LOCATION)));
    assert_eq!(p.stop().code(), Some(0));

    let text = std::fs::read_to_string(s.trace_path()).unwrap();
    assert!(!text.contains("5ecret"), "a secret is in the trace: {text}");
    let lines = trace_lines(&s);
    let redirect = events(&lines, "reel.http");
    assert_eq!(
        redirect[0]["http"]["headers"]["location"],
        "http://localhost:1/cb?code=[REDACTED]&state=st8"
    );
}

/// A client that goes away in the middle of a large (streamed) request body: the trace
/// keeps what it sent and blames the client, and reel does not report the upstream as
/// failing (it was not).
#[test]
fn a_client_leaving_mid_body_is_not_reported_as_an_upstream_failure() {
    let up = Upstream::start(|_| Answer::json(200, PONG));
    let s = Session::new();
    let p = proxy(&s, &up.url("/mcp"), &[]);
    {
        let mut client = std::net::TcpStream::connect(&p.addr).unwrap();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ncontent-length: 200000\r\n\r\n",
            p.addr
        );
        std::io::Write::write_all(&mut client, head.as_bytes()).unwrap();
        std::io::Write::write_all(&mut client, &[b'{'; 100_000]).unwrap();
    }
    let broke = "the client's request body broke off";
    assert!(
        eventually(READ_LIMIT, || std::fs::read_to_string(s.trace_path())
            .is_ok_and(|t| t.contains(broke))),
        "{}",
        std::fs::read_to_string(s.trace_path()).unwrap_or_default()
    );
    let f = p.stop();
    assert_eq!(f.code(), Some(0), "{}", f.stderr_text());
    assert!(!f.stderr_text().contains("502"), "{}", f.stderr_text());
    let lines = trace_lines(&s);
    let cut = events(&lines, "reel.nonjson");
    assert_eq!(cut.len(), 1, "{lines:?}");
    assert_eq!(cut[0]["side"], "in");
    assert!(up.seen().is_empty());
}
