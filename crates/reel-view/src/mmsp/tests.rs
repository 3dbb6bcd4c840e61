//! RFC-0010 §7's conformance cases and reel's own, against real directories.

use super::media::{base64_encode, wav_of_pcm};
use super::page::{HTML, PLAIN};
use super::*;
use serde_json::json;
use std::os::unix::fs::symlink;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// A cache directory `base/cache` (canonical) with siblings `base/cache2` and
/// `base/outside`, each holding `secret.txt`.
struct Cache {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

fn cache() -> Cache {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("cache");
    fs::create_dir_all(&root).unwrap();
    for sibling in ["cache2", "outside"] {
        fs::create_dir_all(base.join(sibling)).unwrap();
        fs::write(base.join(sibling).join("secret.txt"), "SECRET").unwrap();
    }
    Cache { _tmp: tmp, root }
}

impl Cache {
    fn base(&self) -> &Path {
        self.root.parent().unwrap()
    }

    fn write(&self, rel: &str, content: &str) {
        let path = self.root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }

    fn trace(&self, rel: &str, doc: &Value) {
        self.write(rel, &serde_json::to_string_pretty(doc).unwrap());
    }

    /// `GET /<path>`, the query split off.
    fn get(&self, target: &str) -> Page {
        let target = target.strip_prefix('/').unwrap_or(target);
        match target.split_once('?') {
            Some((p, q)) => respond(&self.root, p, Some(q)),
            None => respond(&self.root, target, None),
        }
    }

    fn ok(&self, target: &str) -> String {
        let page = self.get(target);
        assert_eq!(page.status, 200, "{target}: {}", page.body);
        assert_eq!(page.content_type, HTML);
        page.body
    }
}

/// A trace as MMSP writes it, `history` first (`json!` sorts the keys).
const MINIMAL_TRACE: &str = r#"{"history": [{"role": "user", "content_items": [{"type": "text.done", "text": "hi"}]}], "config": {}}"#;

fn conversation(user: &str, assistant: &str) -> Value {
    json!({
        "history": [
            {"role": "user", "content_items": [{"type": "text.done", "text": user}],
             "created_at": 1_796_020_437_587_i64},
            {"role": "assistant", "content_items": [{"type": "text.done", "text": assistant}],
             "usage_metadata": {"cached_tokens": null, "prompt_tokens": 1200,
                                "thoughts_tokens": 5, "response_tokens": 15},
             "finish_reason": "stop", "created_at": 1_796_020_438_437_i64}
        ],
        "config": {"temperature": 0.7, "model": "fake-model", "trace_id": "agent1/conv1"},
        "timestamp": "2026-10-24T09:30:00.000Z"
    })
}

/// Where `needle` first occurs in `body`, failing when it does not.
fn pos(body: &str, needle: &str) -> usize {
    body.find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in the page"))
}

fn set_mtime(path: &Path, secs: u64) {
    let t = SystemTime::UNIX_EPOCH + Duration::from_secs(secs);
    fs::File::open(path).unwrap().set_modified(t).unwrap();
}

#[test]
fn t11_an_empty_cache_directory_lists_nothing() {
    let c = cache();
    let body = c.ok("/");
    assert!(body.contains("<title>Traces - MMSP Tracer</title>"));
    assert!(body.contains("Tracer"));
    assert!(body.contains("No traces here yet."));
    assert!(body.contains("<link rel=\"stylesheet\" href=\"/_reel/assets/mmsp.css\">"));
    assert!(body.contains("<a href=\"/\">cache</a>"));
}

#[test]
fn t12_directories_and_traces_are_listed_and_rendered() {
    let c = cache();
    c.trace(
        "agent1/conv1.json",
        &conversation("Test message 1", "Test response 1"),
    );
    c.trace(
        "agent1/conv2.json",
        &conversation("Test message 2", "Test response 2"),
    );
    c.trace(
        "agent2/conv1.json",
        &conversation("Test message 3", "Test response 3"),
    );
    let root = c.ok("/");
    assert!(root.contains("href=\"/agent1\">agent1/</a>"));
    assert!(root.contains("href=\"/agent2\">agent2/</a>"));
    let agent1 = c.ok("/agent1");
    assert!(agent1.contains("href=\"/agent1/conv1.json\">conv1.json</a>"));
    assert!(agent1.contains("href=\"/agent1/conv2.json\">conv2.json</a>"));
    assert!(
        agent1.contains("<a href=\"/agent1\">agent1</a>"),
        "breadcrumb"
    );
    let trace = c.ok("/agent1/conv1.json");
    assert!(trace.contains("Test message 1"));
    assert!(trace.contains("Test response 1"));
    assert!(trace.contains("<title>conv1.json - MMSP Tracer</title>"));
}

#[test]
fn t13_t14_outside_is_403_and_missing_is_404() {
    let c = cache();
    let page = c.get("/../");
    assert_eq!((page.status, page.body.as_str()), (403, "Access denied"));
    assert_eq!(page.content_type, PLAIN);
    let page = c.get("/nonexistent");
    assert_eq!((page.status, page.body.as_str()), (404, "Path not found"));
    assert_eq!(
        c.get("/../nonexistent").status,
        403,
        "403 is decided before 404"
    );
}

#[test]
fn t15_t17_listings_sort_by_name_by_default_and_offer_both_orders() {
    let c = cache();
    for name in ["zebra", "apple", "mango"] {
        fs::create_dir(c.root.join(name)).unwrap();
    }
    c.write("aaa.txt", "a file sorts after the directories");
    for target in ["/?sort=name", "/", "/?sort=bogus"] {
        let body = c.ok(target);
        let (a, m, z) = (
            pos(&body, ">apple/<"),
            pos(&body, ">mango/<"),
            pos(&body, ">zebra/<"),
        );
        assert!(a < m && m < z, "{target}");
        assert!(z < pos(&body, ">aaa.txt<"), "{target}: directories first");
        assert!(body.contains("href=\"/?sort=name\""));
        assert!(body.contains("href=\"/?sort=mtime\""));
    }
}

#[test]
fn t16_listings_sort_by_mtime_newest_first() {
    let c = cache();
    for (name, secs) in [("alpha", 1000), ("beta", 2000), ("gamma", 3000)] {
        fs::create_dir(c.root.join(name)).unwrap();
        set_mtime(&c.root.join(name), secs);
    }
    let body = c.ok("/?sort=mtime");
    let (a, b, g) = (
        pos(&body, ">alpha/<"),
        pos(&body, ">beta/<"),
        pos(&body, ">gamma/<"),
    );
    assert!(g < b && b < a);
    assert!(body.contains("sort=name") && body.contains("sort=mtime"));
    assert!(
        body.contains("1970-01-01 00:50:00 UTC"),
        "gamma's time in UTC"
    );
}

#[test]
fn t18_ds_store_is_never_listed() {
    let c = cache();
    c.write(".DS_Store", "x");
    c.write("agent/.DS_Store", "x");
    c.trace("agent/conv.json", &conversation("hi", "hello"));
    assert!(!c.ok("/").contains(".DS_Store"));
    let agent = c.ok("/agent");
    assert!(!agent.contains(".DS_Store"));
    assert!(agent.contains("conv.json"));
}

#[test]
fn t19_a_trace_saved_before_0_5_renders_with_current_item_types() {
    let c = cache();
    c.write(
        "legacy/conversation.json",
        r#"{"history": [{"role": "user", "content_items": [{"type": "text", "text": "Weather in Paris?"}]}, {"role": "assistant", "content_items": [{"type": "thinking", "thinking": "Look it up."}, {"type": "partial_tool_call", "name": "get_weather", "arguments": "{\"city\": \"Paris\"}", "tool_call_id": "call_1"}, {"type": "tool_call", "name": "get_weather", "arguments": {"city": "Paris"}, "tool_call_id": "call_1"}]}, {"role": "user", "content_items": [{"type": "tool_result", "text": "22 C", "tool_call_id": "call_1"}]}], "config": {"model": "fake-model"}, "timestamp": "2026-01-01T00:00:00"}"#,
    );
    let body = c.ok("/legacy/conversation.json");
    for ty in [
        "text.done",
        "thinking.done",
        "tool_call.done",
        "tool_result.done",
    ] {
        assert!(
            body.contains(&format!("class=\"item-type\">{ty}</div>")),
            "{ty}"
        );
    }
    assert!(body.contains("Weather in Paris?"));
    assert!(body.contains("Look it up."));
    assert!(body.contains("<div class=\"item-call\">get_weather(city=\"Paris\")</div>"));
    assert!(body.contains("22 C"));
    assert!(body.contains("<span>2 items</span>"));
    assert!(!body.contains("partial_tool_call"));
    assert!(body.contains("<span>3 messages</span><span>2 rounds</span>"));
    assert!(body.contains("Round 2 / 2"));
    assert!(body.contains("href=\"#msg-0\"") && body.contains("href=\"#msg-2\""));
    assert!(body.contains("<span class=\"item-id\">call_1</span>"));
    assert!(body.contains("Saved 2026-01-01 00:00:00 UTC"));
}

#[test]
fn t6_an_embedding_shows_its_first_five_values_only() {
    let c = cache();
    c.trace(
        "test/multi_content.json",
        &json!({"history": [
            {"role": "user", "content_items": [{"type": "text.done", "text": "embed me"}]},
            {"role": "assistant", "content_items": [
                {"type": "embedding.done", "embedding": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]}
            ]}
        ], "config": {"model": "embedder"}, "timestamp": "2026-10-24T09:30:00.000Z"}),
    );
    let body = c.ok("/test/multi_content.json");
    assert!(body.contains("Embedding: [0.1, 0.2, 0.3, 0.4, 0.5, …]"));
    assert!(body.contains("8 dimensions"));
    assert!(!body.contains("0.6"));
    assert!(!include_str!("../../assets/mmsp.css").contains("0.6"));
}

#[test]
fn a_trace_page_shows_config_usage_finish_reason_and_a_link_to_reel() {
    let c = cache();
    let mut doc = conversation("Hello", "Hi there!");
    doc["config"]["system_prompt"] = json!("You are a helpful assistant");
    doc["config"]["tools"] = json!([{"name": "get_weather", "parameters": {}}]);
    c.trace("agent 1/conv.json", &doc);
    let body = c.ok("/agent%201/conv.json");
    assert!(body.contains("<span class=\"model\">fake-model</span>"));
    assert!(body.contains("<dt>temperature</dt><dd><code>0.7</code></dd>"));
    assert!(body.contains("<dt>model</dt><dd>fake-model</dd>"));
    assert!(!body.contains("<dt>trace_id</dt>"));
    assert!(body.contains("<summary>Show</summary><pre>You are a helpful assistant</pre>"));
    assert!(body.contains("<summary>1 tool</summary>"));
    assert!(body.contains("<span class=\"badge finish\">stop</span>"));
    assert!(body.contains("Prompt 1,200") && body.contains("Total 1,220"));
    assert!(!body.contains("Cached"), "zero counts are left out");
    assert!(body.contains("<span class=\"delta\">+850 ms</span>"));
    assert!(body.contains("href=\"/_reel/#trace=agent%201%2Fconv.json\">Open in reel</a>"));
    assert!(body.contains("<details class=\"card msg-card\" id=\"msg-1\" open>"));
    assert!(body.contains("<span>1 item</span>"));
}

#[test]
fn a_json_file_that_is_not_a_trace_renders_as_an_empty_trace() {
    let c = cache();
    c.write("server.json", r#"{"port": 25752}"#);
    let body = c.ok("/server.json");
    assert!(body.contains("<span>0 messages</span><span>0 rounds</span>"));
    assert!(body.contains("Rounds (0)"));
}

#[test]
fn unreadable_files_are_500_with_the_reason() {
    let c = cache();
    c.write("bad.json", "{\"history\": [");
    let page = c.get("/bad.json");
    assert_eq!(page.status, 500);
    assert_eq!(page.content_type, PLAIN);
    assert!(
        page.body.starts_with("Error reading file: "),
        "{}",
        page.body
    );
    fs::write(c.root.join("latin1.txt"), b"caf\xe9").unwrap();
    let page = c.get("/latin1.txt");
    assert_eq!(page.status, 500);
    assert!(page.body.starts_with("Error reading file: "));
    fs::write(c.root.join("latin1.json"), b"{\"a\": \"caf\xe9\"}").unwrap();
    assert_eq!(c.get("/latin1.json").status, 500);
}

#[test]
fn other_files_are_plain_text_transcripts() {
    let c = cache();
    c.write("agent1/conv.txt", "USER: <b>Hello</b> & bye\n");
    let body = c.ok("/agent1/conv.txt");
    assert!(body.contains("Plain-text transcript"));
    assert!(body.contains("<pre class=\"card\">USER: &lt;b&gt;Hello&lt;/b&gt; &amp; bye\n</pre>"));
}

#[test]
fn undecodable_paths_are_400_and_nul_is_403() {
    let c = cache();
    let page = c.get("/a%2");
    assert_eq!(page.status, 400);
    assert!(page.body.starts_with("Bad request path: "));
    assert_eq!(c.get("/%ff").status, 400);
    let page = c.get("/a%00b");
    assert_eq!((page.status, page.body.as_str()), (403, "Access denied"));
}

/// The viewer probe's tree: symlinks `link_out` → `outside`, `link_file.txt` →
/// `outside/secret.txt`, `link_in` → `agent1`.
fn probe_cache() -> Cache {
    let c = cache();
    c.trace(
        "agent1/conversation_001.json",
        &conversation("Test", "Done"),
    );
    symlink(c.base().join("outside"), c.root.join("link_out")).unwrap();
    symlink(
        c.base().join("outside/secret.txt"),
        c.root.join("link_file.txt"),
    )
    .unwrap();
    symlink(c.root.join("agent1"), c.root.join("link_in")).unwrap();
    c
}

#[test]
fn r5_paths_outside_the_cache_are_403_symlinks_and_siblings_included() {
    let c = probe_cache();
    for target in [
        "/../",
        "/..%2f",
        "/%2e%2e/",
        "/../outside/x",
        "/../outside/secret.txt",
        "/link_out",
        "/link_out/secret.txt",
        "/link_file.txt",
        "/../cache2/secret.txt",
        "/%2e%2e/cache2/secret.txt",
    ] {
        let page = c.get(target);
        assert_eq!(
            (page.status, page.body.as_str()),
            (403, "Access denied"),
            "{target}"
        );
    }
    assert!(c.ok("/link_in/conversation_001.json").contains("Test"));
}

#[test]
fn r6_listings_leave_out_entries_resolving_outside() {
    let c = probe_cache();
    let body = c.ok("/");
    assert!(!body.contains("link_out"));
    assert!(!body.contains("link_file.txt"));
    assert!(
        body.contains("href=\"/agent1\">link_in/</a>"),
        "a link in points at its target"
    );
    assert!(!body.contains("SECRET"));
}

#[test]
fn a_dangling_symlink_inside_does_not_break_the_listing() {
    let c = probe_cache();
    symlink(c.root.join("agent1/gone.json"), c.root.join("dangling_in")).unwrap();
    symlink(c.base().join("outside/gone"), c.root.join("dangling_out")).unwrap();
    let body = c.ok("/");
    assert!(body.contains("<tr class=\"broken\"><td><a href=\"/dangling_in\">dangling_in</a>"));
    assert!(body.contains("broken link"));
    assert!(!body.contains("dangling_out"));
    assert!(body.contains(">agent1/<"));
    assert_eq!(c.get("/dangling_in").status, 404);
    assert_eq!(c.get("/dangling_out").status, 403);
}

#[test]
fn listings_show_sizes_and_escape_names() {
    let c = cache();
    c.write("small.txt", "12345");
    fs::write(c.root.join("big.txt"), vec![b'x'; 1536]).unwrap();
    fs::write(c.root.join("huge.txt"), vec![b'x'; 3 * 1024 * 1024 / 2]).unwrap();
    c.write("<b>&'x\".txt", "x");
    let body = c.ok("/");
    assert!(body.contains("<td>5 B</td>"));
    assert!(body.contains("<td>1.5 KB</td>"));
    assert!(body.contains("<td>1.5 MB</td>"));
    assert!(body.contains(">&lt;b&gt;&amp;&#39;x&quot;.txt</a>"));
    assert!(body.contains("href=\"/%3Cb%3E%26%27x%22.txt\""));
    assert_eq!(c.get("/%3Cb%3E%26%27x%22.txt").status, 200);
}

#[test]
fn media_is_inlined_only_from_checked_data() {
    let c = cache();
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
    c.trace(
        "media/image_and_audio.json",
        &json!({"history": [
            {"role": "user", "content_items": [
                {"type": "image_url.done", "image_url": "https://example.com/cat.png"},
                {"type": "image_url.done", "image_url": format!("data:image/png;base64,{png}")},
                {"type": "inline_data.done", "data": png, "mime_type": "image/png"}
            ]},
            {"role": "assistant", "content_items": [
                {"type": "inline_thinking.done", "data": png, "mime_type": "image/png",
                 "fidelity": {"signature": "gem-sig-1"}},
                {"type": "inline_data.done", "data": "AAECAwQFBgc=", "mime_type": "audio/pcm"},
                {"type": "thinking.done", "thinking": "", "fidelity": {"signature": "s"}},
                {"type": "tool_result.done", "text": "ok", "tool_call_id": "c1",
                 "images": ["http://example.com/x.png"]}
            ]}
        ]}),
    );
    let body = c.ok("/media/image_and_audio.json");
    assert!(body.contains("<div class=\"item-url\">https://example.com/cat.png</div>"));
    assert!(body.contains("<div class=\"item-url\">http://example.com/x.png</div>"));
    assert!(!body.contains("src=\"http"));
    assert_eq!(
        body.matches(&format!("src=\"data:image/png;base64,{png}\""))
            .count(),
        3
    );
    assert!(body.contains("Inline Image: image/png (69 B)"));
    assert!(body.contains("Thinking inline Image: image/png"));
    assert!(body.contains("Inline Audio: audio/pcm (8 B)"));
    let wav = base64_encode(&wav_of_pcm(&[0, 1, 2, 3, 4, 5, 6, 7]));
    assert!(body.contains(&format!(
        "<audio class=\"item-audio\" controls src=\"data:audio/wav;base64,{wav}\"></audio>"
    )));
    assert!(body.contains("No text, only fidelity"));
}

#[test]
fn hostile_content_produces_no_live_markup() {
    let c = cache();
    let xss = "<script>alert(1)</script><img src=x onerror=alert(1)>";
    c.trace(
        "evil/<script>.json",
        &json!({"history": [
            {"role": "<script>x</script>", "content_items": [
                {"type": "text.done", "text": xss},
                {"type": "<img onerror=alert(1)>", "text": xss},
                {"type": "image_url.done", "image_url": "javascript:alert(1)"},
                {"type": "image_url.done", "image_url": "data:image/png;base64,AAAA\" onerror=\"alert(1)"},
                {"type": "image_url.done", "image_url": "data:text/html;base64,PHNjcmlwdD4="},
                {"type": "inline_data.done", "data": "AAAA", "mime_type": "image/png\" onerror=\"alert(1)"},
                {"type": "inline_data.done", "data": "AAAA\"><script>", "mime_type": "image/png"},
                {"type": "inline_data.done", "data": "AAAA", "mime_type": "text/html"}
            ]},
            {"role": "assistant", "content_items": [
                {"type": "tool_call.done", "name": xss, "arguments": {xss: xss}, "tool_call_id": xss},
                {"type": "tool_result.done", "text": xss, "tool_call_id": "'\"",
                 "images": ["javascript:alert(1)"]},
                {"type": "embedding.done", "embedding": [xss]}
            ], "finish_reason": xss, "usage_metadata": {"prompt_tokens": xss}}
        ], "config": {"model": xss, xss: xss, "tools": xss}, "timestamp": xss}),
    );
    let body = c.ok("/evil/%3Cscript%3E.json");
    assert!(!body.contains("<script"), "{body}");
    assert!(!body.contains("<img src=x"));
    assert!(!body.contains("<img onerror"));
    assert!(!body.contains("onerror=\""));
    assert!(!body.contains("javascript:alert(1)\""));
    assert!(!body.contains("src=\"javascript:") && !body.contains("href=\"javascript:"));
    assert!(!body.contains("src=\"data:text/html"));
    assert!(!body.contains(" style="), "no inline style");
    assert!(body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(body.contains("<div class=\"item kind-other\">"));
    // Every `src` on the page is a data URL this module checked.
    for (at, _) in body.match_indices("src=\"") {
        assert!(
            body[at + 5..].starts_with("data:image/png;base64,AAAA\""),
            "{}",
            &body[at..]
        );
    }
}

#[test]
fn cache_directories_are_told_by_a_trace_inside() {
    let c = cache();
    assert!(!is_cache_dir(&c.root), "empty");
    c.write("server.json", r#"{"port": 1}"#);
    c.write("notes.txt", "x");
    assert!(!is_cache_dir(&c.root), "no trace");
    let outside_trace = c.base().join("outside/t.json");
    fs::write(&outside_trace, MINIMAL_TRACE).unwrap();
    symlink(c.base().join("outside"), c.root.join("link_out")).unwrap();
    symlink(&outside_trace, c.root.join("t.json")).unwrap();
    assert!(!is_cache_dir(&c.root), "symlinks out are not followed");
    c.write("a/b/c/conv.json", MINIMAL_TRACE);
    assert!(is_cache_dir(&c.root));
    assert!(!is_cache_dir(&c.root.join("missing")));
}

#[test]
fn cache_directories_are_looked_at_four_levels_down_only() {
    let c = cache();
    c.write("1/2/3/4/5/conv.json", MINIMAL_TRACE);
    assert!(!is_cache_dir(&c.root));
    assert!(is_cache_dir(&c.root.join("1")));
}
