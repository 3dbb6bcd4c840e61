//! The corpus through `reel rec --url`: a scripted upstream answers JSON-RPC bodies
//! (as JSON or as an event stream) and a non-JSON 401, the requests and answers carry
//! secrets in bodies, headers and query strings, `--url` has a secret query; then
//! `reel play --listen` on the trace with the same requests. Also reel's refusal of a
//! `--url` with user info.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::{CLASSES, Class, Corpus, Form, Secret, trace_haystack};
use crate::harness::play_http_support::{Player, post};
use crate::harness::rec_support::{Session, run};
use crate::rec_http::harness::{Answer, RawResponse, Seen, Upstream, proxy, request};

/// What the upstream answers one request with.
#[derive(Clone)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

/// One request the client sends, and the reply the upstream gives it.
struct Step {
    method: &'static str,
    path: String,
    headers: Vec<(String, String)>,
    body: String,
    reply: Reply,
    /// A JSON-RPC exchange `reel play` must answer.
    replayed: bool,
}

fn query_of(url: &str) -> &str {
    url.split_once('?').map_or("", |(_, q)| q)
}

/// Whether a class stands in a query string as it is: a token, or a URL's query.
fn fits_a_query(class: &Class) -> bool {
    matches!(class.form, Form::Token | Form::Url)
}

/// A request path carrying `s` in its query: a URL's own query, or `q=<token>`.
fn path_with(s: Option<&Secret>) -> String {
    match s {
        Some(s) if s.form == Form::Token => format!("/mcp?q={}", s.text),
        Some(s) if !query_of(&s.text).is_empty() => format!("/mcp?{}", query_of(&s.text)),
        _ => "/mcp".to_owned(),
    }
}

fn json_reply(body: Value, extra: Vec<(String, String)>) -> Reply {
    let mut headers = vec![("content-type".to_owned(), "application/json".to_owned())];
    headers.extend(extra);
    Reply {
        status: 200,
        headers,
        body: body.to_string(),
    }
}

fn sse_reply(events: &[Value]) -> Reply {
    let body = events
        .iter()
        .map(|e| format!("event: message\ndata: {e}\n\n"))
        .collect();
    Reply {
        status: 200,
        headers: vec![("content-type".to_owned(), "text/event-stream".to_owned())],
        body,
    }
}

fn result_for(s: &Secret) -> Value {
    match s.key {
        Some(_) => {
            let mut structured = s.as_object();
            structured["user"] = json!("bob");
            json!({"content":[{"type":"text","text":structured.to_string()}],"structuredContent":structured})
        }
        None => json!({"content":[{"type":"text","text":format!("echo: {}", s.text)}]}),
    }
}

fn header(name: &str, value: String) -> (String, String) {
    (name.to_owned(), value)
}

/// The steps for one class: a call (headers, query, arguments, a result as JSON or as
/// an event stream, a `Location`), a resource read, an error, a 401 that is not JSON.
fn steps_for(corpus: &mut Corpus, class: &Class, index: usize, id: &mut u64) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut place = |what: &str| corpus.place(class, &format!("http {what}"));

    *id += 1;
    let query = fits_a_query(class).then(|| place("request query string"));
    let param = place("request header mcp-param-*");
    let auth = place("request header authorization");
    let hidden = place("request header not recorded (x-api-key, cookie)");
    let arg = place("tools/call arguments");
    let mut arguments = arg.as_object();
    arguments["count"] = json!(3);
    let answer = place("tools/call result");
    let reply_id = *id;
    let mut reply = if index % 2 == 0 {
        json_reply(
            json!({"jsonrpc":"2.0","id":reply_id,"result":result_for(&answer)}),
            vec![],
        )
    } else {
        let note = place("SSE notification");
        sse_reply(&[
            json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":note.as_text()}}),
            json!({"jsonrpc":"2.0","id":reply_id,"result":result_for(&answer)}),
        ])
    };
    if class.form == Form::Url {
        let location = place("response header location");
        reply.headers.push(header("location", location.text));
    }
    steps.push(Step {
        method: "POST",
        path: path_with(query.as_ref()),
        headers: vec![
            header("mcp-param-note", param.as_line()),
            header("authorization", format!("Bearer {}", auth.as_line())),
            header("x-api-key", hidden.as_line()),
            header("cookie", format!("session={}", hidden.as_line())),
        ],
        body: json!({"jsonrpc":"2.0","id":reply_id,"method":"tools/call","params":{"name":"echo","arguments":arguments}}).to_string(),
        reply,
        replayed: true,
    });

    *id += 1;
    let uri = match class.form {
        Form::Url => place("resources/read uri (and mcp-name header)").text,
        _ => format!("file:///notes/{}.txt", class.name),
    };
    let contents = place("resources/read contents");
    steps.push(Step {
        method: "POST",
        path: "/mcp".to_owned(),
        headers: vec![header("mcp-name", uri.clone())],
        body: json!({"jsonrpc":"2.0","id":*id,"method":"resources/read","params":{"uri":uri}}).to_string(),
        reply: json_reply(
            json!({"jsonrpc":"2.0","id":*id,"result":{"contents":[{"uri":uri,"mimeType":"text/plain","text":contents.as_text()}]}}),
            vec![],
        ),
        replayed: true,
    });

    *id += 1;
    let message = place("error.message");
    let data = place("error.data");
    steps.push(Step {
        method: "POST",
        path: "/mcp".to_owned(),
        headers: Vec::new(),
        body: json!({"jsonrpc":"2.0","id":*id,"method":"tools/call","params":{"name":"connect","arguments":{"attempt":*id}}}).to_string(),
        reply: json_reply(
            json!({"jsonrpc":"2.0","id":*id,"error":{"code":-32000,"message":format!("connect failed: {}", message.as_text()),"data":data.as_object()}}),
            vec![],
        ),
        replayed: true,
    });

    let challenge = place("response header www-authenticate");
    let body = place("non-JSON response body");
    steps.push(Step {
        method: "GET",
        path: format!(
            "/files/{}?{}",
            class.name,
            query_of(&path_with(
                fits_a_query(class)
                    .then(|| place("GET query string"))
                    .as_ref()
            ))
        ),
        headers: Vec::new(),
        body: String::new(),
        reply: Reply {
            status: 401,
            headers: vec![
                header("content-type", "text/plain".to_owned()),
                header(
                    "www-authenticate",
                    format!(
                        "Bearer error=\"invalid_token\", error_description=\"{}\"",
                        challenge.as_line().replace('"', "'")
                    ),
                ),
            ],
            body: format!("denied: {}\n", body.as_text()),
        },
        replayed: false,
    });
    steps
}

fn steps(corpus: &mut Corpus) -> Vec<Step> {
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"corpus","version":"1"}}});
    let mut out = vec![Step {
        method: "POST",
        path: "/mcp".to_owned(),
        headers: Vec::new(),
        body: init.to_string(),
        reply: json_reply(
            json!({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{}},"serverInfo":{"name":"secrets","version":"1"}}}),
            vec![header("mcp-session-id", "corpus-session".to_owned())],
        ),
        replayed: true,
    }];
    let mut id = 1;
    for (i, class) in CLASSES.iter().enumerate() {
        out.extend(steps_for(corpus, class, i, &mut id));
    }
    out
}

/// The upstream: each request's reply, found by its method, path and body.
fn upstream(steps: &[Step]) -> Upstream {
    let replies: HashMap<(String, String, String), Reply> = steps
        .iter()
        .map(|s| {
            (
                (s.method.to_owned(), s.path.clone(), s.body.clone()),
                s.reply.clone(),
            )
        })
        .collect();
    let replies = Arc::new(replies);
    Upstream::start(move |seen: &Seen| {
        let key = (
            seen.method.clone(),
            seen.path.clone(),
            String::from_utf8_lossy(&seen.body).into_owned(),
        );
        match replies.get(&key) {
            Some(r) => Answer::Full {
                status: r.status,
                headers: r.headers.clone(),
                body: r.body.clone().into_bytes(),
            },
            None => Answer::json(404, r#"{"error":"not scripted"}"#),
        }
    })
}

fn send(addr: &str, step: &Step, session: Option<&str>) -> RawResponse {
    let mut headers: Vec<(&str, &str)> = vec![
        ("host", addr),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    if let Some(s) = session {
        headers.push(("mcp-session-id", s));
    }
    headers.extend(step.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    request(
        addr,
        step.method,
        &step.path,
        &headers,
        step.body.as_bytes(),
    )
}

#[test]
fn no_secret_reaches_an_http_trace_or_reels_stderr_and_the_trace_replays() {
    let mut corpus = Corpus::new();
    let steps = steps(&mut corpus);
    let up = upstream(&steps);
    let key = corpus.place(&CLASSES[index_of("url-key")], "--url query string");
    let token = corpus.place(&CLASSES[index_of("url-access-token")], "--url query string");
    let url = up.url(&format!(
        "/mcp?{}&{}",
        query_of(&key.text),
        query_of(&token.text)
    ));
    let s = Session::new();
    let proxy = proxy(&s, &url, &[]);
    let seed = corpus.summary();

    let mut session = None;
    for step in &steps {
        let r = send(&proxy.addr, step, session.as_deref());
        // What the upstream sent reaches the client as sent.
        assert_eq!(
            r.status, step.reply.status,
            "{} {}\n{seed}",
            step.method, step.path
        );
        assert_eq!(r.text(), step.reply.body, "{seed}");
        for (k, v) in &step.reply.headers {
            assert_eq!(r.header(k), Some(v.as_str()), "{k}\n{seed}");
        }
        if let Some(id) = r.header("mcp-session-id") {
            session = Some(id.to_owned());
        }
    }
    let stopped = proxy.stop();
    assert_eq!(stopped.code(), Some(0), "{}\n{seed}", stopped.stderr_text());

    // What the client sent reaches the upstream as sent, secrets and all.
    let seen = up.seen();
    assert_eq!(seen.len(), steps.len(), "{seed}");
    for (step, got) in steps.iter().zip(&seen) {
        assert_eq!(got.path, step.path, "{seed}");
        assert_eq!(String::from_utf8_lossy(&got.body), step.body, "{seed}");
        for (k, v) in &step.headers {
            assert_eq!(got.header(k), Some(v.as_str()), "{k}\n{seed}");
        }
    }

    let trace = s.trace_path();
    corpus.assert_no_leaks(&trace_haystack(&trace), "the HTTP trace");
    corpus.assert_no_leaks(&stopped.stderr_text(), "reel's stderr");

    // The trace answers the same JSON-RPC requests, on the path it was recorded at.
    let p = Player::start(&trace, &[]);
    let mut session: Option<String> = None;
    for step in steps.iter().filter(|s| s.replayed) {
        let r = post(&p.addr, &p.path, session.as_deref(), &step.body);
        assert_eq!(
            r.status,
            step.reply.status,
            "replayed {}: {}",
            step.body,
            r.text()
        );
        if let Some(id) = r.header("mcp-session-id") {
            session = Some(id.to_owned());
        }
    }
    let played = p.stop();
    assert_eq!(
        played.code(),
        Some(0),
        "reel play: {}\n{seed}",
        played.stderr
    );
    assert!(
        played.stderr.contains(" 0 missed"),
        "{}\n{seed}",
        played.stderr
    );
    eprintln!("http corpus: {seed}");
}

fn index_of(name: &str) -> usize {
    CLASSES
        .iter()
        .position(|c| c.name == name)
        .unwrap_or_else(|| panic!("no class {name}"))
}

/// `--url` with credentials is refused, and the refusal does not print them.
#[test]
fn a_refused_url_with_user_info_does_not_print_it() {
    let mut corpus = Corpus::new();
    for name in ["url-userinfo-password", "url-userinfo-token"] {
        let url = corpus.place(&CLASSES[index_of(name)], "refused --url").text;
        let s = Session::new();
        let mut c = crate::harness::reel();
        c.args(["rec", "--dir"]).arg(s.dir()).args(["--url", &url]);
        let out = run(c, Vec::new());
        assert_eq!(out.code(), Some(64), "{}", out.stderr_text());
        assert!(
            out.stderr_text().contains("user info"),
            "{}",
            out.stderr_text()
        );
        corpus.assert_no_leaks(&out.stderr_text(), "the refusal");
    }
}
