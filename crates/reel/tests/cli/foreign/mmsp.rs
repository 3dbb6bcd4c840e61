//! MMSP traces both ways, against the real `mmsp` 0.5.6: its tracer writes traces during
//! the test (a scripted client subclassing its own `LLMClient`, so its stream assembly
//! and `Tracer.save_history` run; and a trace in the shape written before 0.5.0), `reel
//! import` reads them, `reel check` passes them and `reel stats` counts their usage;
//! `reel export mmsp` writes the same history, config and usage back, and MMSP's own
//! viewer (`Tracer.create_web_app`, through Flask's test client) renders reel's files.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::foreign::venv_bin;
use crate::harness::play_http_support::run;
use crate::harness::reel;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/mmsp_trace.py")
}

/// `mmsp_trace.py ARGS…` in the mmsp venv; its stdout as JSON.
fn mmsp(args: &[&Path]) -> Value {
    let mut c = Command::new(venv_bin("mmsp-venv", "python"));
    c.arg(script()).args(args);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "{out}{err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// MMSP's viewer on `cache`: `{path: {status, body}}`.
fn view(cache: &Path, paths: &[&str]) -> Value {
    let paths: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
    let mut args: Vec<&Path> = vec![Path::new("view"), cache];
    args.extend(paths.iter().map(PathBuf::as_path));
    mmsp(&args)
}

fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap()
}

/// The imported trace labelled `label` in `dir`.
fn imported(dir: &Path, label: &str) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.to_string_lossy().ends_with(&format!("-{label}.jsonl")))
        .unwrap_or_else(|| panic!("no {label} trace in {}", dir.display()))
}

fn stats(trace: &Path) -> Value {
    let mut c = reel();
    c.args(["stats", "--json"]).arg(trace);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    serde_json::from_str(&out).unwrap()
}

fn check(trace: &Path) {
    let mut c = reel();
    c.arg("check").arg(trace);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "{}: {out}{err}", trace.display());
}

fn export(trace: &Path, cache: &Path, id: &str) -> (Option<i32>, String) {
    let mut c = reel();
    c.args(["export", "mmsp"])
        .arg(trace)
        .arg("--cache")
        .arg(cache)
        .args(["--id", id]);
    let (code, _, err) = run(c);
    (code, err)
}

/// MMSP's history without what reel does not keep: thinking signatures.
fn without_signatures(mut history: Value) -> Value {
    for m in history.as_array_mut().unwrap() {
        for item in m["content_items"].as_array_mut().unwrap() {
            if item["type"] == "thinking.done" {
                item.as_object_mut().unwrap().remove("fidelity");
            }
        }
    }
    history
}

#[test]
fn traces_mmsp_writes_import_check_count_and_export_back_as_mmsp_wrote_them() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let cache = tmp.join("cache");
    let expected = mmsp(&[Path::new("write"), &cache]);

    // The whole cache directory: one trace per trace id, the legacy one included.
    let out = tmp.join("imported");
    let mut c = reel();
    c.args(["import", "--dir"]).arg(&out).arg(&cache);
    let (code, _, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        err.matches("MMSP traces hold").count(),
        1,
        "the format's limits are said once: {err}"
    );
    let conv = imported(&out, "agent-conv");
    let media = imported(&out, "media-pic");
    let legacy = imported(&out, "legacy-old");
    for t in [&conv, &media, &legacy] {
        check(t);
    }

    let text = std::fs::read_to_string(&conv).unwrap();
    let meta: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(
        (&meta["kind"], &meta["source"]),
        (&json!("llm"), &json!("mmsp"))
    );
    assert_eq!(meta["imported"]["trace_id"], "agent/conv");
    assert!(!text.contains("sig-1"), "thinking signatures dropped");

    for (trace, key, model) in [
        (&conv, "agent/conv", "fake-claude"),
        (&media, "media/pic", "fake-gemini-image"),
    ] {
        let s = stats(trace);
        let rows = s["models"]["perModel"].as_array().unwrap();
        assert_eq!(rows.len(), 1, "{s}");
        let (row, want) = (&rows[0], &expected[key]);
        assert_eq!(row["model"], model);
        assert_eq!(row["inputTokens"], want["input"], "{key}: {row}");
        assert_eq!(row["outputTokens"], want["output"], "{key}: {row}");
        assert_eq!(row["thinkingTokens"], want["thinking"], "{key}: {row}");
        let cache_read = want.get("cache_read").cloned().unwrap_or(Value::Null);
        assert_eq!(row["cacheReadTokens"], cache_read, "{key}: {row}");
    }
    assert_eq!(stats(&conv)["models"]["perModel"][0]["calls"], 3);

    // Legacy: `.done` blocks only, the partial tool call gone, the model from the config.
    let legacy_text = std::fs::read_to_string(&legacy).unwrap();
    assert!(!legacy_text.contains("partial_tool_call"));
    let turns: Vec<Value> = legacy_text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["type"] == "turn")
        .collect();
    assert_eq!(turns.len(), 3);
    assert_eq!(turns[1]["model"], "fake-model");
    assert_eq!(
        turns[1]["blocks"],
        json!([{"type": "thinking", "thinking": "Look it up."},
               {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}}])
    );
    assert_eq!(
        turns[0]["t"], "2026-01-01T00:00:00.000Z",
        "the file's save time"
    );

    // Back to MMSP: the same history, config and usage as MMSP's own file.
    let exported = tmp.join("exported");
    let (code, err) = export(&conv, &exported, "agent/conv");
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("left out"), "nothing lost: {err}");
    let ours = read_json(&exported.join("agent/conv.json"));
    let theirs = read_json(&cache.join("agent/conv.json"));
    assert_eq!(
        ours["history"],
        without_signatures(theirs["history"].clone())
    );
    assert_eq!(ours["config"], theirs["config"]);
    let ts = ours["timestamp"].as_str().unwrap();
    assert!(
        ts.len() == 24 && ts.ends_with('Z'),
        "UTC with milliseconds: {ts}"
    );
    let txt = std::fs::read_to_string(exported.join("agent/conv.txt")).unwrap();
    for s in [
        "[6] ASSISTANT:",
        "Text: 你好！有什么可以帮你？",
        "Tool Call: get_weather",
        "Tool Result (ID: toolu_01): {\"temp\": 22, \"sky\": \"sunny\"}",
        "  Cached Tokens: 24\n  Prompt Tokens: 40\n  Response Tokens: 30\n  Total Tokens: 94",
        "Finish Reason: tool_call",
        "  system_prompt: You are a helpful assistant.",
    ] {
        assert!(txt.contains(s), "{s:?} in\n{txt}");
    }

    // The legacy trace comes back in current item types.
    let (code, err) = export(&legacy, &exported, "legacy/old");
    assert_eq!(code, Some(0), "{err}");
    let old = read_json(&exported.join("legacy/old.json"));
    let types: Vec<Vec<&str>> = old["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            m["content_items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["type"].as_str().unwrap())
                .collect()
        })
        .collect();
    assert_eq!(
        types,
        [
            vec!["text.done"],
            vec!["thinking.done", "tool_call.done"],
            vec!["tool_result.done"]
        ]
    );
    assert_eq!(
        old["config"],
        json!({"trace_id": "legacy/old", "model": "fake-model"})
    );

    // Media: reel keeps its size and hash, not its bytes, and says what it left out.
    let (code, err) = export(&media, &exported, "media/pic");
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("3 inline media (reel keeps their size and hash, not their bytes)"),
        "{err}"
    );
    let pic = read_json(&exported.join("media/pic.json"));
    assert_eq!(
        pic["history"][0]["content_items"][1]["image_url"],
        "https://example.com/cat.png"
    );

    // MMSP's own viewer renders reel's files.
    let pages = view(
        &exported,
        &[
            "/",
            "/agent",
            "/agent/conv.json",
            "/agent/conv.txt",
            "/legacy/old.json",
        ],
    );
    for (path, page) in pages.as_object().unwrap() {
        assert_eq!(page["status"], 200, "{path}: {}", page["body"]);
    }
    assert!(pages["/"]["body"].as_str().unwrap().contains("agent"));
    assert!(
        pages["/agent"]["body"]
            .as_str()
            .unwrap()
            .contains("conv.json")
    );
    let trace_page = pages["/agent/conv.json"]["body"].as_str().unwrap();
    for s in [
        "你好！有什么可以帮你？",
        "用户打招呼，我用中文回答。",
        "class=\"item-type\">tool_call.done</div>",
        "get_weather(city=\"Paris\")",
        "It is 22 °C and sunny.",
        "fake-claude",
        "6 messages",
    ] {
        assert!(trace_page.contains(s), "{s:?} not in the viewer's page");
    }
    assert!(
        pages["/agent/conv.txt"]["body"]
            .as_str()
            .unwrap()
            .contains("Tool Call: get_weather")
    );
    assert!(
        pages["/legacy/old.json"]["body"]
            .as_str()
            .unwrap()
            .contains("get_weather(city=\"Paris\")")
    );

    // And reel reads its own MMSP files back to the same usage.
    let again = tmp.join("again");
    let mut c = reel();
    c.args(["import", "--dir"])
        .arg(&again)
        .arg(exported.join("agent/conv.json"));
    let (code, _, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    let back = std::fs::read_dir(&again)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert_eq!(
        stats(&back)["models"]["perModel"],
        stats(&conv)["models"]["perModel"]
    );
}

/// An LLM recording in reel's own shape: two conversations (their turns numbered), a
/// resent assistant turn, a request's system prompt, an MCP message and a failed
/// exchange MMSP has no place for.
fn llm_trace(dir: &Path) -> PathBuf {
    let lines = [
        json!({"v": 1, "type": "meta", "startedAt": "2026-12-01T10:00:00.000Z", "label": "agents", "kind": "llm"}),
        json!({"t": "2026-12-01T10:00:00.100Z", "type": "turn", "role": "user", "conversation": 1, "http": {"req": 1},
               "blocks": [{"type": "text", "text": "你好"}]}),
        json!({"t": "2026-12-01T10:00:00.110Z", "dir": "event", "kind": "llm.request", "source": "llm", "http": {"req": 1},
               "raw": {"endpoint": "/v1/messages", "status": 200, "stream": true, "system": "Be brief.", "tools_count": 0},
               "request": {"body": {"model": "claude-x", "max_tokens": 256}}}),
        json!({"t": "2026-12-01T10:00:01.000Z", "type": "turn", "role": "assistant", "conversation": 1, "http": {"req": 1},
               "model": "claude-x", "stop_reason": "end_turn",
               "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 3},
               "blocks": [{"type": "text", "text": "你好！"}]}),
        json!({"t": "2026-12-01T10:00:02.000Z", "type": "turn", "role": "user", "conversation": 2, "http": {"req": 2},
               "blocks": [{"type": "text", "text": "Other agent"}]}),
        json!({"t": "2026-12-01T10:00:03.000Z", "type": "turn", "role": "assistant", "conversation": 2, "http": {"req": 2},
               "model": "claude-y", "stop_reason": "tool_use", "usage": {"input_tokens": 7, "output_tokens": 2},
               "blocks": [{"type": "tool_use", "id": "t1", "name": "look", "input": {"q": "x"}}]}),
        json!({"t": "2026-12-01T10:00:04.000Z", "type": "turn", "role": "assistant", "conversation": 1, "http": {"req": 3},
               "echoed": true, "blocks": [{"type": "text", "text": "你好！"}]}),
        json!({"t": "2026-12-01T10:00:04.000Z", "type": "turn", "role": "user", "conversation": 1, "http": {"req": 3},
               "blocks": [{"type": "text", "text": "Again"}]}),
        json!({"t": "2026-12-01T10:00:04.500Z", "dir": "event", "kind": "llm.error", "source": "llm", "http": {"req": 3},
               "raw": {"endpoint": "/v1/messages", "status": 529}}),
        json!({"t": "2026-12-01T10:00:05.000Z", "dir": "in", "raw": {"jsonrpc": "2.0", "method": "ping", "id": 1}}),
        json!({"t": "2026-12-01T10:00:06.000Z", "type": "end", "reason": "producer_shutdown", "durationMs": 6000}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let path = dir.join("agents.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn an_llm_recording_of_two_conversations_exports_one_trace_id_each() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = llm_trace(tmp.path());
    let cache = tmp.path().join("cache");
    let (code, err) = export(&trace, &cache, "run");
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("left out: 1 MCP messages, 1 failed exchanges"),
        "{err}"
    );
    let one = read_json(&cache.join("run/conversation_001.json"));
    assert_eq!(
        one["config"],
        json!({"system_prompt": "Be brief.", "max_tokens": 256, "trace_id": "run/conversation_001", "model": "claude-x"})
    );
    assert_eq!(
        one["history"],
        json!([
            {"role": "user", "content_items": [{"type": "text.done", "text": "你好"}], "created_at": 1796119200100_i64},
            {"role": "assistant", "content_items": [{"type": "text.done", "text": "你好！"}],
             "usage_metadata": {"cached_tokens": 3, "prompt_tokens": 10, "thoughts_tokens": null, "response_tokens": 5},
             "finish_reason": "stop", "created_at": 1796119201000_i64},
            {"role": "user", "content_items": [{"type": "text.done", "text": "Again"}], "created_at": 1796119204000_i64}
        ])
    );
    let raw = std::fs::read_to_string(cache.join("run/conversation_001.json")).unwrap();
    assert!(raw.contains("你好！"), "CJK unescaped");
    let two = read_json(&cache.join("run/conversation_002.json"));
    assert_eq!(two["config"]["model"], "claude-y");
    assert_eq!(two["history"][1]["finish_reason"], "tool_call");
    assert_eq!(
        two["history"][1]["content_items"][0],
        json!({"type": "tool_call.done", "name": "look", "arguments": {"q": "x"}, "tool_call_id": "t1"})
    );
    let pages = view(&cache, &["/run", "/run/conversation_002.json"]);
    assert_eq!(pages["/run"]["status"], 200);
    assert!(
        pages["/run"]["body"]
            .as_str()
            .unwrap()
            .contains("conversation_001.json")
    );
    let page = &pages["/run/conversation_002.json"];
    assert_eq!(page["status"], 200);
    assert!(page["body"].as_str().unwrap().contains("look(q=\"x\")"));
}

#[test]
fn a_trace_id_leaving_the_cache_is_refused_with_exit_64_and_nothing_written() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = llm_trace(tmp.path());
    let cache = tmp.path().join("cache");
    for id in ["../escape", "/abs/x", ".", "agent/.."] {
        let (code, err) = export(&trace, &cache, id);
        assert_eq!(code, Some(64), "{id}: {err}");
        assert!(
            err.contains(&format!(
                "does not support trace_id '{id}': it must be a relative path that stays inside the cache directory."
            )),
            "{err}"
        );
    }
    assert!(
        !cache.exists(),
        "nothing written, not even the cache directory"
    );
    assert!(!tmp.path().join("escape.json").exists());
    // The id as path.resolve normalises it, the suffix appended.
    let (code, err) = export(&trace, &cache, "agent/../run.v2");
    assert_eq!(code, Some(0), "{err}");
    assert!(cache.join("run.v2/conversation_001.json").is_file());
}
