//! A trace written to attack its reader: label, command, method and tool names,
//! arguments, results, error messages, stderr text, event kinds, turn text and ids, and
//! an MMSP cache's items and file name carry `<script>`, an `<img onerror>`, a
//! `javascript:` URL, an ANSI escape and a bidi override. Every view, the RFC pages, a
//! diff and a merge are opened with their rows clicked open; nothing runs
//! (`window.__pwned` stays undefined), no element but the app's module script exists,
//! no handler attribute, image or `javascript:` link appears, and the console is quiet.
//! The text is shown as text: the markup literally, the controls as visible escapes.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::browser::{load, settle};
use super::support::{SHOWN, Viewer};
use super::webdriver::Browser;
use crate::harness::trace::{at, meta, msg_at, rpc, write_lines};

const SCRIPT: &str = "<script>window.__pwned=1</script>";
const IMG: &str = "<img src=x onerror=\"window.__pwned=1\">";
const JS_URL: &str = "javascript:window.__pwned=1";
const ANSI: &str = "\u{1b}[31m";
const BIDI: &str = "\u{202e}";

/// All of it in one string.
fn evil(tag: &str) -> String {
    format!("{SCRIPT}{IMG}{ANSI}{tag}{BIDI}txt")
}

/// The hostile trace; `result` varies the tool's answer (for a diff with drift).
fn hostile_trace(path: &Path, result: &str) -> PathBuf {
    let e = evil("x");
    let mut m = meta(&evil("label"), "mcp");
    m["command"] = json!([e, JS_URL]);
    m["source"] = json!(JS_URL);
    write_lines(
        path,
        &[
            m,
            msg_at(
                1,
                "in",
                rpc::request(
                    json!(1),
                    "initialize",
                    json!({
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": e, "version": JS_URL}}),
                ),
            ),
            msg_at(
                2,
                "out",
                rpc::result(
                    json!(1),
                    json!({
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": e, "version": IMG}, "instructions": SCRIPT}),
                ),
            ),
            msg_at(3, "in", rpc::request(json!(2), "tools/list", json!({}))),
            msg_at(
                4,
                "out",
                rpc::result(
                    json!(2),
                    json!({"tools": [
                {"name": e, "description": JS_URL, "inputSchema": {"type": "object"}},
                {"name": JS_URL, "description": IMG, "inputSchema": {"type": "object"}}]}),
                ),
            ),
            msg_at(
                5,
                "in",
                rpc::call(json!(3), &e, json!({JS_URL: e, "url": JS_URL, "html": IMG})),
            ),
            json!({"t": at(6), "dir": "event", "kind": "reel.stderr", "text": evil("stderr")}),
            json!({"t": at(7), "dir": "event", "kind": evil("kind"), "text": evil("event"), "href": JS_URL}),
            msg_at(
                8,
                "out",
                rpc::result(
                    json!(3),
                    json!({"content": [
                {"type": "text", "text": evil(result)},
                {"type": "resource_link", "uri": JS_URL, "name": e, "mimeType": "text/html"},
                {"type": "image", "data": "PHNjcmlwdD4=", "mimeType": "text/html"}]}),
                ),
            ),
            msg_at(9, "in", rpc::call(json!(4), JS_URL, json!({}))),
            msg_at(10, "out", rpc::error(json!(4), -32000, &evil("error"))),
            msg_at(11, "in", rpc::request(json!(5), &e, json!({"x": SCRIPT}))),
            msg_at(12, "out", rpc::error(json!(5), -32601, IMG)),
            json!({"type": "turn", "t": at(13), "role": "assistant", "model": e, "stop_reason": IMG, "blocks": [
                {"type": "text", "text": evil("turn")},
                {"type": "tool_use", "id": JS_URL, "name": e, "input": {"q": e, "u": JS_URL}}]}),
            json!({"type": "turn", "t": at(14), "role": e, "blocks": [
                {"type": "tool_result", "tool_use_id": JS_URL, "content": evil("result"), "is_error": true},
                {"type": e, "text": SCRIPT}]}),
            json!({"t": at(15), "type": "end", "exitCode": 0, "durationMs": 15}),
        ],
    )
}

/// An MMSP cache whose one conversation (its file name hostile too) carries the same.
fn hostile_cache(dir: &Path) -> String {
    let e = evil("mmsp");
    let name = "x<img src=x onerror=window.__pwned=1>.json";
    let config = json!({"model": e, "system_prompt": SCRIPT, "trace_id": e,
               "tools": [{"name": e, "description": JS_URL, "parameters": {"type": "object"}}]});
    let history = json!([
            {"role": "user", "created_at": 1796160295125_u64,
             "content_items": [{"type": "text.done", "text": e}]},
            {"role": "assistant", "created_at": 1796160295200_u64, "finish_reason": IMG,
             "content_items": [
                {"type": "thinking.done", "thinking": e},
                {"type": "text.done", "text": evil("answer")},
                {"type": "tool_call.done", "name": e, "arguments": {"u": JS_URL, "h": IMG}, "tool_call_id": JS_URL}],
             "usage_metadata": {"prompt_tokens": 1, "response_tokens": 1}},
            {"role": "user", "created_at": 1796160295300_u64,
             "content_items": [{"type": "tool_result.done", "text": e, "tool_call_id": JS_URL}]},
    ]);
    std::fs::create_dir_all(dir).unwrap();
    // MMSP writes `history` first, and readers look for it there.
    let text = format!("{{\"history\": {history}, \"config\": {config}}}");
    std::fs::write(dir.join(name), text).unwrap();
    std::fs::write(dir.join("y.txt"), &e).unwrap();
    name.to_owned()
}

/// Nothing ran and nothing but the app's module is a script (`app`: an app page, else
/// an RFC page, which has no script at all); no console error.
fn assert_inert(b: &Browser, what: &str, app: bool) {
    let report = b.exec(
        "return {
            pwned: typeof window.__pwned,
            scripts: [...document.scripts].map(s => s.getAttribute('src')),
            handlers: document.querySelectorAll('[onerror],[onload],[onclick],[onmouseover]').length,
            images: document.querySelectorAll('img[src=\"x\"]').length,
            jsLinks: [...document.querySelectorAll('[href],[src],[action]')].filter(e => /^\\s*javascript:/i.test(e.getAttribute('href') || e.getAttribute('src') || e.getAttribute('action') || '')).length,
            styles: document.querySelectorAll('style,[style]').length,
        }",
        &[],
    );
    assert_eq!(
        report["pwned"], "undefined",
        "{what}: a payload ran: {report}"
    );
    let want: Vec<&str> = if app {
        vec!["/_reel/assets/app.js"]
    } else {
        vec![]
    };
    assert_eq!(report["scripts"], json!(want), "{what}: {report}");
    for k in ["handlers", "images", "jsLinks", "styles"] {
        assert_eq!(report[k], 0, "{what}: {k}: {report}");
    }
    settle(b, &format!("hostile-{what}"));
}

/// Clicks every element matching `css` open (row by row, as a reader would).
fn open_all(b: &Browser, css: &str) {
    let n = b.find_all(css).len();
    assert!(n > 0, "nothing matches {css}");
    for i in 0..n {
        b.find_all(css)[i].click();
    }
}

/// The page's text shows the markup as text and the controls as escapes.
fn assert_shown_as_text(b: &Browser, what: &str) {
    let text = b.exec("return document.body.innerText", &[]);
    let text = text.as_str().unwrap_or_default();
    assert!(
        text.contains("<script>window.__pwned=1</script>"),
        "{what}: {text}"
    );
    assert!(
        !text.contains(BIDI) && !text.contains(ANSI),
        "{what}: raw controls shown"
    );
    assert!(
        text.contains("\\u{202e}") || text.contains("\\u202e"),
        "{what}: the bidi override is not made visible: {text}"
    );
}

#[test]
fn a_hostile_trace_is_shown_as_text_in_every_view_and_runs_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let path = hostile_trace(&tmp.path().join("hostile.jsonl"), "a");
    let v = Viewer::start(&[&path]);
    let b = Browser::start();
    let page = |view: &str| v.page(&format!("trace=hostile.jsonl&view={view}"));

    load(&b, &page("timeline"), "tr.line[data-n=\"16\"]");
    open_all(&b, "tr.line[data-n]");
    b.wait_until(
        "return document.querySelectorAll('tr.detail pre.payload').length === 16",
        SHOWN,
    );
    assert_shown_as_text(&b, "timeline");
    assert_inert(&b, "timeline", true);

    load(&b, &page("calls"), "tr.call[data-i=\"4\"]");
    open_all(&b, "tr.call[data-i] td:first-child");
    b.wait_until(
        "return document.querySelectorAll('.call-detail').length === 5",
        SHOWN,
    );
    assert_shown_as_text(&b, "calls");
    assert_inert(&b, "calls", true);

    load(&b, &page("tools"), "table.tools tr[data-tool]");
    let tools = b.exec("return [...document.querySelectorAll('table.tools tr[data-tool]')].map(r => r.dataset.tool)", &[]);
    assert!(
        tools.to_string().contains("window.__pwned=1</script>"),
        "{tools}"
    );
    assert_inert(&b, "tools", true);

    load(&b, &page("turns"), "article.turn");
    b.wait_until(
        "return document.querySelectorAll('article.turn').length === 2",
        SHOWN,
    );
    assert_shown_as_text(&b, "turns");
    assert_inert(&b, "turns", true);

    load(&b, &page("events"), ".chips a[data-kind]");
    open_all(&b, "section.view tr.line[data-n]");
    let kinds = b.exec(
        "return [...document.querySelectorAll('.chips a[data-kind]')].map(a => a.dataset.kind)",
        &[],
    );
    assert!(
        kinds
            .to_string()
            .contains(r#"onerror=\"window.__pwned=1\""#),
        "{kinds}"
    );
    b.find_all(".chips a[data-kind]")[0].click();
    b.wait("section.view tr.line[data-n]", SHOWN);
    assert_inert(&b, "events", true);

    load(&b, &page("raw"), "tr.raw[data-n=\"16\"]");
    assert_shown_as_text(&b, "raw");
    assert_inert(&b, "raw", true);

    load(
        &b,
        &v.page("trace=hostile.jsonl&view=search&q=script"),
        "tr.line[data-n]",
    );
    open_all(&b, "tr.line[data-n]");
    assert_inert(&b, "search", true);
}

#[test]
fn a_hostile_mmsp_cache_a_diff_and_a_merge_run_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let name = hostile_cache(&cache);
    let b = Browser::start();
    {
        let v = Viewer::start(&[&cache]);
        load(&b, &v.url, "a[href]");
        let body = v.get("/").body;
        assert!(
            !body.contains("<img src=x"),
            "the listing writes the file name as markup: {body}"
        );
        assert_inert(&b, "mmsp-listing", false);
        let encoded: String = name
            .bytes()
            .map(|c| match c {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'-' | b'_' => {
                    (c as char).to_string()
                }
                _ => format!("%{c:02X}"),
            })
            .collect();
        let conversation = v.get(&format!("/{encoded}"));
        assert_eq!(conversation.status, 200, "{}", conversation.body);
        assert!(
            !conversation.body.contains("<script>window"),
            "{}",
            conversation.body
        );
        load(&b, &format!("{}{encoded}", v.url), "body");
        b.wait_until(
            "return document.body.innerText.includes('<script>window.__pwned=1</script>')",
            SHOWN,
        );
        assert_inert(&b, "mmsp-conversation", false);
        load(
            &b,
            &v.page(&format!("trace={encoded}&view=timeline")),
            "tr.line[data-n]",
        );
        open_all(&b, "tr.line[data-n]");
        b.wait("tr.detail pre.payload", SHOWN);
        assert_inert(&b, "mmsp-timeline", true);
        load(
            &b,
            &v.page(&format!("trace={encoded}&view=turns")),
            "article.turn",
        );
        assert_shown_as_text(&b, "mmsp-turns");
        assert_inert(&b, "mmsp-turns", true);
    }

    let a = hostile_trace(&tmp.path().join("a.jsonl"), "a");
    let bb = hostile_trace(&tmp.path().join("b.jsonl"), "b");
    {
        let v = Viewer::start(&[&a, &bb]);
        load(&b, &v.page(""), ".drifts li.drift.focused");
        b.wait(".drift-detail .sides pre.payload", SHOWN);
        open_all(&b, ".drifts li.drift");
        assert_shown_as_text(&b, "diff");
        assert_inert(&b, "diff", true);
    }
    {
        let v = Viewer::start(&[&a, &bb, &cache.join(&name)]);
        load(&b, &v.page(""), "tr.line[data-n]");
        b.wait_until(
            "return document.querySelectorAll('.badge.src').length > 32",
            SHOWN,
        );
        open_all(&b, "tr.line[data-n]");
        assert_shown_as_text(&b, "merge");
        assert_inert(&b, "merge", true);
    }
}
