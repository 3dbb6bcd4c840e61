//! The viewer's server over raw HTTP, no browser: the headers every answer carries
//! (page, asset, API, 404, 403, MMSP pages), DNS rebinding refused by Host and Origin,
//! request paths and trace keys that would leave the directory of runs or the MMSP
//! cache (RFC-0010 §7's cases through the real server), and the API's numbers against
//! a real server-everything recording: lines and calls counted from the file, every
//! response paired to its request by (session, id), stats equal to `reel stats --json`.

use std::os::unix::fs::symlink;
use std::path::Path;

use serde_json::{Value, json};

use super::support::{
    Reply, Viewer, http_trace, key, lines_of, pair_by_hand, reel_json, stdio_trace,
    write_mmsp_cache,
};
use crate::harness::trace::{TraceBuilder, msg, rpc};

/// What every file the viewer must never serve holds.
const SECRET: &str = "SECRET-7f3a-never-served";

/// A small trace of one call.
fn small_trace(path: &Path, label: &str) {
    TraceBuilder::new(label)
        .lines([
            msg("in", rpc::call(json!(1), "echo", json!({"text": label}))),
            msg("out", rpc::result(json!(1), rpc::text(label))),
        ])
        .write(path);
}

/// A trace whose text carries [`SECRET`], for the files outside what is shown.
fn secret_trace(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    small_trace(path, SECRET);
}

/// `base/runs` (shown) with one trace, a symlink to a trace outside and one to a
/// directory outside; `base/secret.jsonl`, `base/outside/secret.jsonl` and the
/// sibling `base/runs2/secret.jsonl` outside. Returns `base/runs`.
fn runs_layout(base: &Path) -> std::path::PathBuf {
    let runs = base.join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    small_trace(&runs.join("ok.jsonl"), "ok");
    secret_trace(&base.join("secret.jsonl"));
    secret_trace(&base.join("outside/secret.jsonl"));
    secret_trace(&base.join("runs2/secret.jsonl"));
    symlink(base.join("secret.jsonl"), runs.join("link.jsonl")).unwrap();
    symlink(base.join("outside"), runs.join("linkdir")).unwrap();
    runs
}

/// `base/cache`, an MMSP cache written by `mmsp`, plus `.DS_Store`, a symlink
/// `link_out` to `base/outside`, and secrets in `base/outside` and the sibling
/// `base/cache2`. Returns `base/cache`.
fn mmsp_layout(base: &Path) -> std::path::PathBuf {
    let cache = base.join("cache");
    write_mmsp_cache(&cache);
    std::fs::write(cache.join(".DS_Store"), "finder junk").unwrap();
    for dir in ["outside", "cache2"] {
        std::fs::create_dir_all(base.join(dir)).unwrap();
        std::fs::write(base.join(dir).join("secret.txt"), SECRET).unwrap();
        secret_trace(&base.join(dir).join("secret.json"));
    }
    symlink(base.join("outside"), cache.join("link_out")).unwrap();
    cache
}

fn assert_secure(target: &str, r: &Reply) {
    let csp = r
        .header("content-security-policy")
        .unwrap_or_else(|| panic!("{target} ({}) has no CSP", r.status));
    assert!(csp.contains("script-src 'self'"), "{target}: {csp}");
    assert!(csp.contains("default-src 'none'"), "{target}: {csp}");
    assert!(!csp.contains("unsafe-inline"), "{target}: {csp}");
    assert!(!csp.contains("unsafe-eval"), "{target}: {csp}");
    assert_eq!(
        r.header("x-content-type-options"),
        Some("nosniff"),
        "{target}"
    );
    assert!(
        r.headers
            .iter()
            .all(|(k, _)| !k.starts_with("access-control-")),
        "{target} sends CORS headers: {:?}",
        r.headers
    );
}

#[test]
fn every_answer_carries_the_policy_headers_and_no_cors() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = runs_layout(tmp.path());
    let v = Viewer::start(&[&runs]);
    let cases = [
        ("/", 200),
        ("/_reel/", 200),
        ("/_reel/assets/app.js", 200),
        ("/_reel/assets/style.css", 200),
        ("/_reel/api/home", 200),
        ("/_reel/api/lines?t=ok.jsonl", 200),
        ("/_reel/api/follow?t=ok.jsonl", 200),
        ("/_reel/api/lines?t=../secret.jsonl", 0),
        ("/_reel/api/nope", 404),
        ("/_reel/nope", 404),
        ("/nope", 404),
    ];
    for (target, status) in cases {
        let r = v.get(target);
        if status != 0 {
            assert_eq!(r.status, status, "{target}: {}", r.body);
        }
        assert_secure(target, &r);
    }
    let (host, origin) = (
        v.get_with("/_reel/", &[("Host", "evil.example")]),
        v.get_with(
            "/_reel/api/home",
            &[("Host", &v.addr), ("Origin", "http://evil.example")],
        ),
    );
    assert_secure("403 by Host", &host);
    assert_secure("403 by Origin", &origin);
    let app = v.get("/_reel/assets/app.js");
    assert!(
        app.header("content-type")
            .is_some_and(|t| t.contains("javascript")),
        "{:?}",
        app.headers
    );

    let cache = mmsp_layout(&tmp.path().join("m"));
    let m = Viewer::start(&[&cache]);
    for target in [
        "/",
        "/?sort=mtime",
        "/agent",
        "/agent/conv.json",
        "/nonexistent",
        "/../",
        "/_reel/",
        "/_reel/api/home",
    ] {
        assert_secure(target, &m.get(target));
    }
}

#[test]
fn dns_rebinding_is_refused_by_host_and_by_origin() {
    let tmp = tempfile::tempdir().unwrap();
    small_trace(&tmp.path().join("ok.jsonl"), "ok");
    let v = Viewer::start(&[tmp.path()]);
    let port = v.addr.rsplit(':').next().unwrap().to_owned();
    for target in ["/_reel/", "/_reel/api/home", "/_reel/api/lines?t=ok.jsonl"] {
        let evil = v.get_with(target, &[("Host", "evil.example")]);
        assert_eq!(
            evil.status, 403,
            "Host: evil.example on {target}: {}",
            evil.body
        );
        assert!(!evil.body.contains("\"runs\""), "{}", evil.body);
        let evil_port = v.get_with(target, &[("Host", &format!("evil.example:{port}"))]);
        assert_eq!(evil_port.status, 403, "{target}");
        let origin = v.get_with(
            target,
            &[("Host", &v.addr), ("Origin", "http://evil.example")],
        );
        assert_eq!(
            origin.status, 403,
            "Origin: http://evil.example on {target}"
        );
        let local = v.get_with(target, &[("Host", &format!("localhost:{port}"))]);
        assert_eq!(
            local.status, 200,
            "Host: localhost:{port} on {target}: {}",
            local.body
        );
        let own_origin = v.get_with(
            target,
            &[
                ("Host", &v.addr),
                ("Origin", &format!("http://127.0.0.1:{port}")),
            ],
        );
        assert_eq!(own_origin.status, 200, "its own Origin on {target}");
    }
}

/// Asserts that `target` is refused (4xx) without a trace of the secret.
fn refused(v: &Viewer, target: &str) -> Reply {
    let r = v.get(target);
    assert!(
        (400..500).contains(&r.status),
        "{target} answered {}: {}",
        r.status,
        r.body
    );
    assert!(
        !r.body.contains(SECRET),
        "{target} leaked the secret: {}",
        r.body
    );
    assert!(
        !r.body.contains("root:x:0:0"),
        "{target} leaked /etc/passwd"
    );
    r
}

#[test]
fn trace_keys_that_leave_the_directory_of_runs_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = runs_layout(tmp.path());
    let v = Viewer::start(&[&runs]);
    let secret = tmp.path().join("secret.jsonl");
    let absolute = format!("t={}", secret.display());
    let keys = [
        "t=../secret.jsonl",
        "t=%2e%2e%2fsecret.jsonl",
        "t=..%2fsecret.jsonl",
        "t=%2e%2e/secret.jsonl",
        "t=..%5csecret.jsonl",
        "t=/etc/passwd",
        absolute.as_str(),
        "t=link.jsonl",
        "t=linkdir/secret.jsonl",
        "t=linkdir",
        "t=../runs2/secret.jsonl",
        "t=./../runs2/secret.jsonl",
        "t=ok.jsonl/../../secret.jsonl",
        "t=ok.jsonl%00../secret.jsonl",
        "t=%00",
        "t=",
    ];
    for api in [
        "lines", "trace", "raw", "line", "calls", "stats", "search", "follow",
    ] {
        for k in keys {
            refused(&v, &format!("/_reel/api/{api}?{k}&n=1&q=SECRET"));
        }
    }
    for k in ["a=../secret.jsonl&b=ok.jsonl", "a=ok.jsonl&b=link.jsonl"] {
        refused(&v, &format!("/_reel/api/diff?{k}"));
    }
    refused(&v, "/_reel/api/merge?t=ok.jsonl&t=linkdir/secret.jsonl");
    for path in [
        "/../secret.jsonl",
        "/_reel/assets/../../secret.jsonl",
        "/_reel/assets/%2e%2e/app.js",
        "/runs2/secret.jsonl",
        "/link.jsonl",
    ] {
        refused(&v, path);
    }
    // What is inside is served, so the refusals above are not a server that refuses all.
    let ok = v.api("lines?t=ok.jsonl");
    assert_eq!(ok["total"], 4, "{ok}");
    let home = v.api("home");
    let home_text = home.to_string();
    assert!(home_text.contains("ok.jsonl"), "{home}");
    assert!(!home_text.contains(SECRET), "{home}");
}

#[test]
fn the_mmsp_cache_routes_keep_to_the_cache_as_rfc_0010_says() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = mmsp_layout(tmp.path());
    let v = Viewer::start(&[&cache]);
    for path in [
        "/../",
        "/..%2f",
        "/%2e%2e/",
        "/%2e%2e%2f",
        "/../cache2/secret.txt",
        "/..%2fcache2%2fsecret.txt",
        "/link_out",
        "/link_out/secret.txt",
        "/agent/../../cache2/secret.txt",
        "/%00",
        "/agent%00",
    ] {
        let r = refused(&v, path);
        assert_eq!(r.status, 403, "{path}: {}", r.body);
    }
    let missing = v.get("/nonexistent");
    assert_eq!(missing.status, 404, "{}", missing.body);
    assert!(!missing.body.contains(SECRET));

    let listing = v.get("/");
    assert_eq!(listing.status, 200, "{}", listing.body);
    assert!(
        listing
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/html"))
    );
    for want in [
        "href=\"/?sort=name\"",
        "href=\"/?sort=mtime\"",
        "agent",
        "media",
        "legacy",
    ] {
        assert!(
            listing.body.contains(want),
            "the listing lacks {want}: {}",
            listing.body
        );
    }
    for unwanted in ["link_out", ".DS_Store", SECRET, "<script"] {
        assert!(
            !listing.body.contains(unwanted),
            "the listing shows {unwanted}: {}",
            listing.body
        );
    }
    assert_eq!(v.get("/?sort=mtime").status, 200);

    let conversation = v.get("/agent/conv.json");
    assert_eq!(conversation.status, 200, "{}", conversation.body);
    assert!(
        conversation
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/html"))
    );
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(cache.join("agent/conv.json")).unwrap())
            .unwrap();
    let first_text = saved["history"]
        .as_array()
        .and_then(|h| {
            h.iter()
                .flat_map(|m| m["content_items"].as_array().into_iter().flatten())
                .find_map(|i| i["text"].as_str())
        })
        .unwrap_or_else(|| panic!("no text item in the saved conversation: {saved}"));
    let shown = first_text.chars().take(8).collect::<String>();
    assert!(
        conversation.body.contains(&html_escape(&shown)),
        "the conversation page does not show {shown:?}: {}",
        conversation.body
    );
    assert!(
        !conversation.body.contains("<script"),
        "{}",
        conversation.body
    );

    // The app's API keeps to the cache as well.
    for k in [
        "../cache2/secret.json",
        "..%2fcache2%2fsecret.json",
        "link_out/secret.json",
        "/etc/passwd",
    ] {
        refused(&v, &format!("/_reel/api/lines?t={k}"));
    }
    assert_eq!(v.api("home")["mode"], "mmsp");
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn assert_numbers_match(trace: &Path) {
    let v = Viewer::start(&[trace]);
    let k = key(trace);
    let lines = lines_of(trace);
    let info = v.api(&format!("trace?t={k}"));
    assert_eq!(info["lines"], lines.len(), "{}: {info}", trace.display());
    let (requests, pairs) = pair_by_hand(&lines);
    assert!(requests > 10, "a real session has calls: {requests}");
    assert_eq!(info["calls"], requests, "{}", trace.display());

    let calls = v.api(&format!("calls?t={k}&count=1000"));
    let rows = calls["calls"].as_array().unwrap();
    assert_eq!(rows.len(), requests, "{calls}");
    let mut answered = 0;
    for c in rows {
        let req = c["request"].as_u64().unwrap();
        let want = pairs
            .get(&req)
            .unwrap_or_else(|| panic!("call {c} names line {req}, not a request"));
        assert_eq!(c["response"].as_u64(), *want, "call {c}");
        let line = &lines[req as usize - 1];
        let id = &line["raw"]["id"];
        assert!(
            c["id"] == *id || c["id"] == id.to_string().as_str(),
            "call {c} vs line {line}"
        );
        assert_eq!(c["method"], line["raw"]["method"], "call {c}");
        if let Some(resp) = *want {
            answered += 1;
            let (ta, tb) = (
                &lines[req as usize - 1]["t"],
                &lines[resp as usize - 1]["t"],
            );
            assert!(
                c["latencyMs"].as_i64().is_some(),
                "a paired call has a latency: {c} ({ta} → {tb})"
            );
            assert!(c["latencyMs"].as_i64().unwrap() >= 0, "{c}");
        }
    }
    assert!(
        answered >= requests - 1,
        "{answered} of {requests} answered"
    );

    // The timeline's rows name the same partners.
    let page = v.api(&format!("lines?t={k}&count=1000"));
    assert_eq!(page["total"], lines.len());
    for r in page["lines"].as_array().unwrap() {
        let n = r["n"].as_u64().unwrap();
        if let Some(Some(resp)) = pairs.get(&n) {
            assert_eq!(r["pair"].as_u64(), Some(*resp), "line {n}: {r}");
        }
    }

    let mut stats = v.api(&format!("stats?t={k}"));
    for row in stats["tools"].as_array_mut().into_iter().flatten() {
        row.as_object_mut().unwrap().remove("meanMs");
    }
    let cli = reel_json("stats", &[trace], &[0]);
    assert_eq!(
        stats, cli,
        "the viewer's stats differ from `reel stats --json`"
    );
}

#[test]
fn the_api_counts_and_pairs_a_stdio_session_as_the_file_holds_it() {
    assert_numbers_match(stdio_trace());
}

#[test]
fn the_api_counts_and_pairs_a_streamable_http_session_as_the_file_holds_it() {
    assert_numbers_match(http_trace());
}

/// Search by name finds a call's answer whatever its direction (a server→client
/// request's answer too) and the turns that used a tool of that name; it says whether
/// the whole trace was searched.
#[test]
fn search_by_name_finds_answers_both_ways_and_tool_uses_in_turns() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("s.jsonl");
    TraceBuilder::new("search")
        .lines([
            msg("in", rpc::call(json!(1), "roots", json!({}))),
            msg("out", rpc::request(json!(7), "sampling/createMessage", json!({"maxTokens": 5}))),
            msg("in", rpc::result(json!(7), json!({"role": "assistant"}))),
            msg("out", rpc::result(json!(1), rpc::text("done"))),
            json!({"type": "turn", "t": "2026-01-01T00:00:01.000Z", "role": "assistant",
                   "blocks": [{"type": "tool_use", "id": "tu1", "name": "get_weather", "input": {}}]}),
        ])
        .write(&path);
    let v = Viewer::start(&[&path]);
    let lines = |query: &str| -> Vec<u64> {
        let r = v.api(&format!("search?t=s.jsonl&{query}"));
        assert_eq!(r["complete"], true, "{query}: {r}");
        r["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["n"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(
        lines("name=sampling/createMessage"),
        [3, 4],
        "the request and its answer"
    );
    assert_eq!(lines("name=roots"), [2, 5]);
    assert_eq!(
        lines("name=get_weather"),
        [6],
        "the turn that used the tool"
    );
    assert_eq!(lines("name=roots&q=done"), [5]);
    assert_eq!(lines("name=nothing-by-this-name"), Vec::<u64>::new());
}

/// A trace named on the command line that is no trace is refused at once (66), and a
/// directory's files that are not traces are said on its first page, as `reel ls`
/// says them.
#[test]
fn what_is_not_a_trace_is_said_not_shown_empty() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("notes.jsonl");
    std::fs::write(&bad, "just some notes\n").unwrap();
    small_trace(&tmp.path().join("ok.jsonl"), "ok");
    let mut c = crate::harness::reel();
    c.arg("view").arg(&bad).args(["--listen", "127.0.0.1:0"]);
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(66));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("notes.jsonl:1: not a trace"), "{err}");
    let v = Viewer::start(&[tmp.path()]);
    let home = v.api("home");
    let skipped = home["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{home}");
    assert_eq!(skipped[0]["path"], "notes.jsonl");
    assert!(!skipped[0]["reason"].as_str().unwrap().is_empty());
    assert_eq!(home["runs"].as_array().unwrap().len(), 1);
}

/// A listener on every address warns that the traces are readable by whoever reaches
/// it, prints a URL that works here, and answers an `--allow-host` name; the Host
/// check still refuses other names.
#[test]
fn a_listener_beyond_loopback_warns_and_answers_allowed_names_only() {
    let tmp = tempfile::tempdir().unwrap();
    small_trace(&tmp.path().join("ok.jsonl"), "ok");
    let mut c = crate::harness::reel();
    c.arg("view")
        .arg(tmp.path())
        .args(["--listen", "0.0.0.0:0", "--allow-host", "mybox.lan"]);
    let v = Viewer::spawn(c);
    assert!(v.url.starts_with("http://127.0.0.1:"), "{}", v.url);
    assert!(
        v.stderr_text().contains("WARNING: listening on 0.0.0.0:"),
        "{}",
        v.stderr_text()
    );
    let port = v.addr.rsplit(':').next().unwrap().to_owned();
    let allowed = v.get_with("/_reel/api/home", &[("Host", &format!("mybox.lan:{port}"))]);
    assert_eq!(allowed.status, 200, "{}", allowed.body);
    let other = v.get_with("/_reel/api/home", &[("Host", &format!("other.lan:{port}"))]);
    assert_eq!(other.status, 403);
    let trick = v.get_with("/_reel/api/home", &[("Host", "localhost:1@evil.example")]);
    assert_eq!(trick.status, 403, "a port is digits");
}

/// `--mmsp` shows a directory as an MMSP cache even before it holds a trace: the RFC's
/// listing at the root (empty-directory text, both sort links), not a runs page.
#[test]
fn mmsp_forces_a_cache_directory_with_no_trace_yet() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    let plain = Viewer::start(&[&cache]);
    assert_eq!(
        plain.api("home")["mode"],
        "runs",
        "nothing says it is a cache"
    );
    drop(plain);
    let mut c = crate::harness::reel();
    c.arg("view")
        .arg(&cache)
        .args(["--mmsp", "--listen", "127.0.0.1:0"]);
    let v = Viewer::spawn(c);
    assert_eq!(v.api("home")["mode"], "mmsp");
    let root = v.get("/");
    assert_eq!(root.status, 200, "{}", root.body);
    assert!(root.body.contains("No traces here yet"), "{}", root.body);
    assert!(root.body.contains("?sort=name") && root.body.contains("?sort=mtime"));
}

/// The API answers the viewer's own pages only: a cross-site navigation or iframe (which
/// pass a fetch check) and a page of another port of this host (`same-site`) are refused
/// on `/_reel/api/…`, while the viewer's pages stay reachable from a link.
#[test]
fn the_api_answers_its_own_pages_only() {
    let tmp = tempfile::tempdir().unwrap();
    small_trace(&tmp.path().join("ok.jsonl"), "ok");
    let v = Viewer::start(&[tmp.path()]);
    let host = v.addr.clone();
    for target in ["/_reel/api/home", "/_reel/api/line?t=ok.jsonl&n=2"] {
        for (site, mode, dest) in [
            ("cross-site", "navigate", "iframe"),
            ("cross-site", "navigate", "document"),
            ("same-site", "navigate", "iframe"),
            ("same-site", "cors", "empty"),
        ] {
            let r = v.get_with(
                target,
                &[
                    ("Host", &host),
                    ("Sec-Fetch-Site", site),
                    ("Sec-Fetch-Mode", mode),
                    ("Sec-Fetch-Dest", dest),
                ],
            );
            assert_eq!(r.status, 403, "{site} {mode} {dest} {target}: {}", r.body);
            assert!(!r.body.contains("\"runs\"") && !r.body.contains("\"text\""));
        }
        for site in ["same-origin", "none"] {
            let r = v.get_with(target, &[("Host", &host), ("Sec-Fetch-Site", site)]);
            assert_eq!(r.status, 200, "{site} {target}: {}", r.body);
        }
    }
    let page = v.get_with(
        "/_reel/",
        &[
            ("Host", &host),
            ("Sec-Fetch-Site", "cross-site"),
            ("Sec-Fetch-Mode", "navigate"),
        ],
    );
    assert_eq!(page.status, 200, "a link to the viewer still opens it");
}

/// A line nested thousands deep is shown at the cost of its bytes: its detail (with
/// the pretty text) stays within a few times the line, and the viewer goes on serving.
#[test]
fn a_deeply_nested_line_costs_what_its_bytes_do() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("deep.jsonl");
    let depth = 60_000;
    let nested = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
    let text = format!(
        "{}\n{{\"t\":\"2026-01-01T00:00:00.000Z\",\"dir\":\"out\",\"raw\":{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"x\":{nested}}}}}}}\n",
        r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z","label":"deep","command":[],"kind":"mcp"}"#
    );
    std::fs::write(&path, &text).unwrap();
    let v = Viewer::start(&[tmp.path()]);
    let r = v.get("/_reel/api/line?t=deep.jsonl&n=2");
    assert_eq!(r.status, 200, "{}", &r.body[..r.body.len().min(300)]);
    assert!(
        r.body.len() < 8 * text.len() + (1 << 20),
        "{} bytes for a {}-byte line",
        r.body.len(),
        text.len()
    );
    assert_eq!(v.get("/_reel/api/home").status, 200, "still serving");
}
