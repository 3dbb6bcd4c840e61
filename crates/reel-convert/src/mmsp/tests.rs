//! The reader, the writer and the RFC-0010 conformance cases (research: mmsp.md
//! §3.1–3.3), on inline data.

use std::path::Path;

use serde_json::{Value, json};

use super::*;
use crate::Left;

/// A 0.5.6 trace: CJK, signed thinking, a tool call and its result, usage, finish
/// reasons, `created_at` on every message, a naive local save time.
const TRACE: &str = r#"{
  "history": [
    {"role": "user", "content_items": [{"type": "text.done", "text": "你好，MMSP"}], "created_at": 1796020437225},
    {"role": "assistant", "content_items": [
        {"type": "thinking.done", "thinking": "用中文回答。", "fidelity": {"signature": "EuYB-sig"}},
        {"type": "text.done", "text": "你好！", "fidelity": {"phase": "final"}}],
     "usage_metadata": {"cached_tokens": 0, "prompt_tokens": 31, "thoughts_tokens": 12, "response_tokens": 9},
     "finish_reason": "stop", "created_at": 1796020437299},
    {"role": "user", "content_items": [{"type": "text.done", "text": "Weather?"}], "created_at": 1796020437505},
    {"role": "assistant", "content_items": [
        {"type": "tool_call.done", "name": "get_weather", "arguments": {"city": "Paris"}, "tool_call_id": "toolu_01"}],
     "usage_metadata": {"cached_tokens": 24, "prompt_tokens": 40, "thoughts_tokens": null, "response_tokens": 30},
     "finish_reason": "tool_call", "created_at": 1796020437559},
    {"role": "user", "content_items": [{"type": "tool_result.done", "text": "22 C", "tool_call_id": "toolu_01"}], "created_at": 1796020437560}
  ],
  "config": {"system_prompt": "Be brief.", "temperature": 0.7, "trace_id": "agent1/c", "model": "fake-claude"},
  "timestamp": "2026-11-30T06:33:57.581759"
}"#;

/// The upstream test's trace written before 0.5.0.
const LEGACY: &str = r#"{"history": [{"role": "user", "content_items": [{"type": "text", "text": "Weather in Paris?"}]}, {"role": "assistant", "content_items": [{"type": "thinking", "thinking": "Look it up."}, {"type": "partial_tool_call", "name": "get_weather", "arguments": "{\"city\": \"Paris\"}", "tool_call_id": "call_1"}, {"type": "tool_call", "name": "get_weather", "arguments": {"city": "Paris"}, "tool_call_id": "call_1"}]}, {"role": "user", "content_items": [{"type": "tool_result", "text": "22 C", "tool_call_id": "call_1"}]}], "config": {"model": "fake-model"}, "timestamp": "2026-01-01T00:00:00"}"#;

fn turns(text: &str) -> (Converted, Vec<(Timestamp, Turn)>) {
    let mut c = convert_bytes(text.as_bytes()).unwrap();
    let items: Vec<_> = std::mem::replace(&mut c.items, Box::new(std::iter::empty())).collect();
    let turns = items
        .into_iter()
        .map(|i| match i {
            Ok(Item::Turn { t, turn }) => (t, *turn),
            other => panic!("not a turn: {other:?}"),
        })
        .collect();
    (c, turns)
}

fn block_json(t: &Turn) -> Vec<Value> {
    t.blocks()
        .iter()
        .map(|b| serde_json::to_value(b).unwrap())
        .collect()
}

#[test]
fn sniffs_mmsp_traces_and_nothing_else() {
    assert!(looks_like(TRACE.as_bytes()));
    assert!(looks_like(LEGACY.as_bytes()));
    assert!(looks_like(b"{\n  \"history\": [],\n  \"config\": {}"));
    assert!(looks_like(&TRACE.as_bytes()[..200]), "a head is enough");
    for other in [
        &br#"{"v":1,"type":"meta"}"#[..],
        b"{\n  \"format_version\": 3, \"history\": []",
        br#"{"history": [1, 2]}"#,
        br#"{"history": "x"}"#,
        br#"{"interactions": [{"history": []}]}"#,
        b"",
        b"history",
    ] {
        assert!(!looks_like(other), "{}", String::from_utf8_lossy(other));
    }
}

#[test]
fn a_trace_reads_as_turns_with_usage_stop_reasons_and_times() {
    let (c, turns) = turns(TRACE);
    assert_eq!(c.kind, "llm");
    assert_eq!(c.started, Timestamp(1796020437225));
    assert_eq!(c.facts["trace_id"], "agent1/c");
    assert_eq!(c.facts["config"]["system_prompt"], "Be brief.");
    assert!(
        c.warnings.is_empty(),
        "every message has its time: {:?}",
        c.warnings
    );
    assert_eq!(turns.len(), 5);
    let (t, user) = &turns[0];
    assert_eq!(*t, Timestamp(1796020437225));
    assert_eq!(user.role.as_deref(), Some("user"));
    assert_eq!(user.model, None);
    assert_eq!(
        block_json(user),
        [json!({"type": "text", "text": "你好，MMSP"})]
    );

    let (_, a) = &turns[1];
    assert_eq!(a.model.as_deref(), Some("fake-claude"));
    assert_eq!(a.stop_reason.as_deref(), Some("end_turn"));
    let u = a.usage.as_ref().unwrap();
    assert_eq!(
        (
            u.input_tokens,
            u.cache_read_input_tokens,
            u.output_tokens,
            u.thinking_tokens
        ),
        (Some(31), Some(0), Some(21), Some(12))
    );
    assert_eq!(a.timing.as_ref().unwrap().duration_ms, Some(74.0));
    assert_eq!(
        block_json(a),
        [
            json!({"type": "thinking", "thinking": "用中文回答。"}),
            json!({"type": "text", "text": "你好！", "fidelity": {"phase": "final"}}),
        ],
        "signatures dropped, other fidelity kept"
    );
    let (_, call) = &turns[3];
    assert_eq!(call.stop_reason.as_deref(), Some("tool_use"));
    let u = call.usage.as_ref().unwrap();
    assert_eq!((u.output_tokens, u.thinking_tokens), (Some(30), None));
    assert_eq!(
        block_json(call),
        [
            json!({"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}})
        ]
    );
    assert_eq!(
        block_json(&turns[4].1),
        [json!({"type": "tool_result", "tool_use_id": "toolu_01", "content": "22 C"})]
    );
}

#[test]
fn legacy_items_convert_and_partial_tool_calls_are_dropped() {
    let (c, turns) = turns(LEGACY);
    assert_eq!(c.facts["legacy"], true);
    assert!(c.warnings[0].contains("no offset"), "{:?}", c.warnings);
    assert_eq!(turns.len(), 3);
    // No created_at: every turn at the save time.
    let saved = Timestamp::parse("2026-01-01T00:00:00Z").unwrap();
    assert!(turns.iter().all(|(t, _)| *t == saved));
    let a = &turns[1].1;
    assert_eq!(a.model.as_deref(), Some("fake-model"));
    assert_eq!(a.usage, None);
    assert_eq!(
        block_json(a),
        [
            json!({"type": "thinking", "thinking": "Look it up."}),
            json!({"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}}),
        ]
    );
}

#[test]
fn media_becomes_blocks_with_size_and_hash_not_bytes() {
    let text = r#"{"history": [{"role": "user", "content_items": [
        {"type": "image_url.done", "image_url": "https://example.com/cat.png"},
        {"type": "inline_data.done", "data": "AAECAw==", "mime_type": "image/png"},
        {"type": "inline_data.done", "data": "AAECAw==", "mime_type": "audio/pcm"},
        {"type": "inline_thinking.done", "data": "AAECAw==", "mime_type": "image/png", "fidelity": {"signature": "s"}},
        {"type": "embedding.done", "embedding": [0.1, 0.2]},
        {"type": "thinking.done", "thinking": "_REDACTED_THINKING", "fidelity": {"signature": "x"}},
        {"type": "future.done", "what": 1}]}], "config": {}}"#;
    let (_, turns) = turns(text);
    let sha = reel_trace::hash::sha256_hex(b"AAECAw==");
    assert_eq!(
        block_json(&turns[0].1),
        [
            json!({"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}}),
            json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data_bytes": 8, "data_sha256": sha}}),
            json!({"type": "mmsp.inline_data", "mime_type": "audio/pcm", "data_bytes": 8, "data_sha256": sha}),
            json!({"type": "mmsp.inline_thinking", "mime_type": "image/png", "data_bytes": 8, "data_sha256": sha}),
            json!({"type": "mmsp.embedding", "embedding": [0.1, 0.2]}),
            json!({"type": "redacted_thinking"}),
            json!({"type": "future.done", "what": 1}),
        ]
    );
}

#[test]
fn bad_input_is_an_error_or_a_problem_never_a_panic() {
    for bad in [
        "",
        "[]",
        "{",
        r#"{"history": {}}"#,
        r#"{"history": [], "config": 1}"#,
    ] {
        assert!(convert_bytes(bad.as_bytes()).is_err(), "{bad}");
    }
    assert!(matches!(
        convert_bytes(br#"{"history": []}"#),
        Err(ConvertError::Empty)
    ));
    let text = r#"{"history": [
        1,
        {"role": "system", "content_items": []},
        {"role": "user"},
        {"role": "user", "content_items": [{"type": "text.done"}]},
        {"role": "user", "content_items": [{"type": "tool_call.done", "name": "n", "tool_call_id": "i"}]},
        {"role": "assistant", "content_items": [], "usage_metadata": "x", "created_at": "soon"},
        {"role": "user", "content_items": [{"type": "text.done", "text": "ok"}], "created_at": 1e300}
    ], "timestamp": "yesterday"}"#;
    let mut c = convert_bytes(text.as_bytes()).unwrap();
    assert!(c.warnings.iter().any(|w| w.contains("not a date-time")));
    let items: Vec<_> = std::mem::replace(&mut c.items, Box::new(std::iter::empty())).collect();
    let problems: Vec<String> = items
        .iter()
        .filter_map(|i| match i {
            Err(Fault::Bad(p, _)) => Some(p.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(problems.len(), 5, "{problems:?}");
    assert!(problems[0].starts_with("line 1: message 1"), "{problems:?}");
    assert_eq!(items.iter().filter(|i| i.is_ok()).count(), 2);
}

// The writer.

fn conversation() -> Conversation {
    let mut c = Conversation::new(
        "fake-model",
        vec![
            ("temperature".into(), json!(0.7)),
            ("trace_id".into(), json!("t")),
            ("model".into(), json!("replaced")),
        ],
    );
    c.history.push(Message {
        role: "user".into(),
        content_items: vec![ContentItem::Text {
            text: "Hello 你好".into(),
            fidelity: None,
        }],
        usage_metadata: None,
        finish_reason: None,
        created_at: Some(1),
    });
    c.history.push(Message {
        role: "assistant".into(),
        content_items: vec![
            ContentItem::Text {
                text: "Hi there!".into(),
                fidelity: Some(
                    serde_json::from_str(r#"{"item_id": "0", "signature": "s"}"#).unwrap(),
                ),
            },
            ContentItem::InlineData {
                data: vec![0, 1, 2, 3],
                mime_type: "audio/pcm".into(),
                fidelity: Some(serde_json::from_str(r#"{"item_id": "1"}"#).unwrap()),
            },
            ContentItem::Embedding {
                embedding: (1..=6).map(|i| json!(i as f64 / 10.0)).collect(),
            },
        ],
        usage_metadata: Some(UsageMetadata {
            cached_tokens: Some(2),
            prompt_tokens: Some(10),
            thoughts_tokens: Some(5),
            response_tokens: Some(15),
        }),
        finish_reason: Some("stop".into()),
        created_at: Some(2),
    });
    c
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p.display().to_string());
        }
    }
    out.sort();
    out
}

#[test]
fn a_save_writes_both_files_in_mmsp_shape() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let json_path = save(&cache, "test/conversation", &conversation())
        .unwrap()
        .unwrap();
    assert_eq!(json_path, cache.join("test/conversation.json"));
    let text = read(&json_path);
    assert!(text.starts_with("{\n  \"history\": [\n    {\n      \"role\": \"user\","));
    assert!(!text.ends_with('\n'));
    assert!(text.contains("Hello 你好"), "CJK unescaped");
    assert!(text.contains("\"data\": \"AAECAw==\""), "bytes as base64");
    assert!(!text.contains("item_id"), "no fidelity.item_id");
    let v: Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys.len(), 3);
    assert_eq!(
        v["config"],
        json!({"temperature": 0.7, "trace_id": "t", "model": "fake-model"})
    );
    assert!(
        text.find("\"trace_id\"").unwrap() < text.find("\"model\"").unwrap(),
        "model last"
    );
    let assistant = &v["history"][1];
    assert_eq!(
        assistant["content_items"][0],
        json!({"type": "text.done", "text": "Hi there!", "fidelity": {"signature": "s"}})
    );
    assert_eq!(
        assistant["content_items"][1],
        json!({"type": "inline_data.done", "data": "AAECAw==", "mime_type": "audio/pcm"}),
        "a fidelity of only item_id goes"
    );
    let mut at = 0;
    for k in [
        "\"role\": \"assistant\"",
        "\"content_items\"",
        "\"type\": \"text.done\"",
        "\"text\": \"Hi there!\"",
        "\"usage_metadata\"",
        "\"finish_reason\"",
        "\"created_at\": 2",
    ] {
        at += text[at..]
            .find(k)
            .unwrap_or_else(|| panic!("{k} after {at}"));
    }
    // The timestamp: UTC, milliseconds, Z, now.
    let ts = v["timestamp"].as_str().unwrap();
    assert!(Timestamp::is_canonical(ts), "{ts}");
    let t = Timestamp::parse(ts).unwrap();
    assert!((Timestamp::now().0 - t.0).abs() < 5_000, "{ts}");

    let txt = read(&cache.join("test/conversation.txt"));
    for s in [
        "[1] USER:",
        "[2] ASSISTANT:",
        "Text: Hello 你好",
        "Text: Hi there!",
        "Inline Audio: audio/pcm (0.00 KB)",
        "Embedding: [0.1, 0.2, 0.3, 0.4, 0.5]",
        "  temperature: 0.7",
        "  model: fake-model",
        "Usage Metadata:\n  Cached Tokens: 2\n  Prompt Tokens: 10\n  Thoughts Tokens: 5\n  Response Tokens: 15\n  Total Tokens: 32",
        "Finish Reason: stop",
    ] {
        assert!(txt.contains(s), "{s:?} in\n{txt}");
    }
    assert!(!txt.contains("0.6"), "five embedding values only");
    assert!(
        !txt.contains("trace_id"),
        "the transcript leaves the id out"
    );
    assert!(txt.ends_with("\n"));
    // Nothing else left behind (no temporary files).
    assert_eq!(files_under(&cache).len(), 2);
}

#[test]
fn ids_are_normalised_and_suffixes_appended() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    for (id, file) in [
        ("run.v2", "run.v2"),
        ("conv.txt", "conv.txt"),
        ("agent/../kept", "kept"),
        ("a//b/", "a/b"),
        ("./dot/x", "dot/x"),
        (
            "agent1/subfolder/conversation",
            "agent1/subfolder/conversation",
        ),
    ] {
        let json_path = save(&cache, id, &conversation()).unwrap().unwrap();
        assert_eq!(json_path, cache.join(format!("{file}.json")), "{id}");
        assert!(cache.join(format!("{file}.txt")).is_file(), "{id}");
    }
    assert!(!cache.join("run.json").exists(), "not 0.5.6's with_suffix");
    assert!(
        !cache.join("agent").exists(),
        "no directory made for a folded segment"
    );
    assert_eq!(
        save(&cache, "", &conversation()).unwrap(),
        None,
        "empty id: no trace"
    );
}

#[test]
fn ids_leaving_the_cache_are_refused_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    for id in [
        "../escape",
        "/abs/x",
        ".",
        "agent/..",
        "a/../..",
        "./",
        "x/../../y",
        "a\0b",
    ] {
        let e = save(&cache, id, &conversation()).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "reel does not support trace_id '{id}': it must be a relative path that stays inside the cache directory."
            )
        );
        assert!(matches!(e, MmspError::TraceId(ref i) if i == id));
    }
    assert_eq!(
        files_under(tmp.path()),
        Vec::<String>::new(),
        "nothing written"
    );
    assert!(!cache.exists(), "not even the cache directory");
}

#[cfg(unix)]
#[test]
fn a_symbolic_link_out_of_the_cache_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, cache.join("out")).unwrap();
    std::os::unix::fs::symlink(&cache, cache.join("self")).unwrap();
    assert!(matches!(
        save(&cache, "out/x", &conversation()),
        Err(MmspError::TraceId(_))
    ));
    assert!(matches!(
        save(&cache, "self", &conversation()),
        Err(MmspError::TraceId(_))
    ));
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    // A link that stays inside is followed.
    std::fs::create_dir_all(cache.join("real")).unwrap();
    std::os::unix::fs::symlink(cache.join("real"), cache.join("in")).unwrap();
    save(&cache, "in/x", &conversation()).unwrap().unwrap();
    assert!(cache.join("real/x.json").is_file());
}

#[test]
fn a_later_save_replaces_the_earlier_one_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = conversation();
    save(tmp.path(), "same", &c).unwrap();
    c.history.truncate(1);
    c.history[0].content_items = vec![ContentItem::Text {
        text: "Second message".into(),
        fidelity: None,
    }];
    save(tmp.path(), "same", &c).unwrap();
    let v: Value = serde_json::from_str(&read(&tmp.path().join("same.json"))).unwrap();
    assert_eq!(v["history"].as_array().unwrap().len(), 1);
    let txt = read(&tmp.path().join("same.txt"));
    assert!(txt.contains("Second message") && !txt.contains("Hi there!"));
    assert_eq!(files_under(tmp.path()).len(), 2);
}

#[test]
fn a_save_into_a_file_is_a_write_error() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("file"), "x").unwrap();
    let e = save(tmp.path(), "file/x", &conversation()).unwrap_err();
    assert!(matches!(e, MmspError::Write { .. }), "{e}");
}

#[test]
fn turns_read_back_into_the_same_history() {
    let (c, turns) = turns(TRACE);
    let mut conversation = Conversation::new("", Vec::new());
    let mut left = Left::default();
    for (t, mut turn) in turns {
        turn.t = Some(t.to_iso().as_str().to_owned());
        conversation.push_turn(&turn, &mut left);
    }
    assert!(left.is_empty(), "{left}");
    assert_eq!(conversation.model, "fake-claude");
    let written: Value = serde_json::from_str(&conversation.to_json(Timestamp(0))).unwrap();
    let mut original: Value = serde_json::from_str(TRACE).unwrap();
    // Thinking signatures are what reel drops.
    original["history"][1]["content_items"][0]
        .as_object_mut()
        .unwrap()
        .remove("fidelity");
    assert_eq!(written["history"], original["history"]);
    assert_eq!(c.facts["config"]["model"], "fake-claude");
}

#[test]
fn llm_turns_become_messages_and_what_does_not_fit_is_counted() {
    let turn = |v: Value| serde_json::from_value::<Turn>(v).unwrap();
    let mut c = Conversation::default();
    let mut left = Left::default();
    for t in [
        json!({"type": "turn", "role": "system", "blocks": [{"type": "text", "text": "Be brief."}]}),
        json!({"type": "turn", "role": "user", "t": "2026-01-01T00:00:00.000Z",
               "blocks": [{"type": "text", "text": "hi"},
                          {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data_bytes": 8, "data_sha256": "x"}}]}),
        json!({"type": "turn", "role": "assistant", "model": "claude-x", "stop_reason": "max_tokens",
               "usage": {"input_tokens": 5, "cache_creation_input_tokens": 2, "cache_read_input_tokens": 1,
                         "output_tokens": 9, "thinking_tokens": 4},
               "blocks": [{"type": "thinking", "thinking": "t", "signature": "sig"}, {"type": "text", "text": "yo"}]}),
        json!({"type": "turn", "role": "assistant", "echoed": true, "blocks": [{"type": "text", "text": "yo"}]}),
        json!({"type": "turn", "role": "user", "blocks": [{"type": "history_elided", "count": 2, "sha256": "x"},
               {"type": "tool_result", "tool_use_id": "a", "is_error": true,
                "content": [{"type": "text", "text": "boom"}, {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}]}]}),
        json!({"type": "turn", "role": "assistant", "truncated": true, "blocks": [{"type": "text", "text": "cut"}]}),
        json!({"type": "turn", "role": "assistant", "blocks": [{"type": "tool_use", "id": "b", "name": "n", "input": "[1]"},
               {"type": "server_tool_use", "id": "c"}]}),
    ] {
        c.push_turn(&turn(t), &mut left);
    }
    assert_eq!(c.config_get("system_prompt"), Some(&json!("Be brief.")));
    assert_eq!(c.model, "claude-x");
    let v: Value = serde_json::from_str(&c.to_json(Timestamp(0))).unwrap();
    let h = v["history"].as_array().unwrap();
    assert_eq!(h.len(), 4, "{h:?}");
    assert_eq!(h[0]["created_at"], 1767225600000_i64);
    assert_eq!(
        h[0]["content_items"],
        json!([{"type": "text.done", "text": "hi"}])
    );
    assert_eq!(
        h[1],
        json!({"role": "assistant", "content_items": [
            {"type": "thinking.done", "thinking": "t", "fidelity": {"signature": "sig"}},
            {"type": "text.done", "text": "yo"}],
            "usage_metadata": {"cached_tokens": 1, "prompt_tokens": 7, "thoughts_tokens": 4, "response_tokens": 5},
            "finish_reason": "length"})
    );
    assert_eq!(
        h[2]["content_items"],
        json!([{"type": "tool_result.done", "text": "boom", "images": ["https://x/y.png"], "tool_call_id": "a"}])
    );
    assert_eq!(h[3]["content_items"][0]["arguments"], json!({}));
    assert_eq!(
        left.to_string(),
        "1 blocks MMSP has no item for, 1 inline media (reel keeps their size and hash, not their bytes), \
         1 tool call arguments that are not an object, 1 tool error flags, \
         1 turns cut off before their end"
    );
}

#[test]
fn finish_and_stop_reasons_map_both_ways() {
    for f in ["stop", "length", "tool_call"] {
        assert_eq!(finish_reason_of(&stop_reason_of(f)), f);
    }
    assert_eq!(stop_reason_of("unknown"), "unknown");
    assert_eq!(finish_reason_of("refusal"), "unknown");
    assert_eq!(finish_reason_of("tool_calls"), "tool_call");
}

proptest::proptest! {
    /// Write → read → write is identity on what reel keeps: text, tool calls and their
    /// results, usage, finish reasons and times.
    #[test]
    fn a_written_trace_reads_back_to_the_same_history(
        exchanges in proptest::collection::vec(
            ("\\PC{0,12}", "\\PC{0,12}", proptest::option::of(0u64..1000), 0u64..1000, 0usize..3),
            1..4,
        )
    ) {
        let mut c = Conversation::new("m", vec![("trace_id".into(), json!("p"))]);
        let mut at = 1_700_000_000_000_i64;
        for (k, (question, answer, cached, prompt, finish)) in exchanges.into_iter().enumerate() {
            at += 10;
            c.history.push(Message {
                role: "user".into(),
                content_items: vec![
                    ContentItem::Text { text: question, fidelity: None },
                    ContentItem::ToolResult {
                        text: "r".into(),
                        images: Vec::new(),
                        tool_call_id: format!("c{k}"),
                    },
                ],
                usage_metadata: None,
                finish_reason: None,
                created_at: Some(at),
            });
            at += 10;
            c.history.push(Message {
                role: "assistant".into(),
                content_items: vec![
                    ContentItem::Text { text: answer, fidelity: None },
                    ContentItem::ToolCall {
                        name: "t".into(),
                        arguments: json!({"k": k}),
                        tool_call_id: format!("c{k}"),
                        fidelity: None,
                    },
                ],
                usage_metadata: Some(UsageMetadata {
                    cached_tokens: cached,
                    prompt_tokens: Some(prompt),
                    thoughts_tokens: Some(1),
                    response_tokens: Some(2),
                }),
                finish_reason: Some(["stop", "length", "tool_call"][finish].into()),
                created_at: Some(at),
            });
        }
        let written = c.to_json(Timestamp(0));
        let (_, turns) = turns(&written);
        let mut back = Conversation::new("", c.config.clone());
        let mut left = Left::default();
        for (t, mut turn) in turns {
            turn.t = Some(t.to_iso().as_str().to_owned());
            back.push_turn(&turn, &mut left);
        }
        proptest::prop_assert!(left.is_empty());
        proptest::prop_assert_eq!(back.to_json(Timestamp(0)), written);
    }
}
