use super::*;
use crate::Item;
use reel_trace::Timestamp;
use reel_trace::line::{Block, Turn};

const T0: &str = "2026-03-01T10:00:00.000Z";

fn line(ty: &str, t: &str, rest: Value) -> String {
    let mut m = serde_json::json!({
        "parentUuid": null, "isSidechain": false, "userType": "external",
        "cwd": "/home/u/proj", "sessionId": "s-1", "version": "2.1.3",
        "gitBranch": "main", "type": ty, "timestamp": t, "uuid": format!("u-{t}"),
    });
    if let (Value::Object(m), Value::Object(r)) = (&mut m, rest) {
        m.extend(r);
    }
    m.to_string()
}

fn assistant(id: &str, t: &str, block: Value, output: u64) -> String {
    line(
        "assistant",
        t,
        serde_json::json!({"requestId": "req", "message": {
            "id": id, "type": "message", "role": "assistant", "model": "claude-x",
            "content": [block], "stop_reason": null,
            "usage": {"input_tokens": 3, "cache_read_input_tokens": 100,
                      "cache_creation_input_tokens": 7, "output_tokens": output,
                      "service_tier": "standard"}}}),
    )
}

fn run(lines: &[String]) -> Vec<Out> {
    let mut s = Survey::default();
    for (i, l) in lines.iter().enumerate() {
        s.line(i as u64 + 1, l.as_bytes());
    }
    s.finish();
    let mut c = Converter::new(Timestamp::parse(T0).unwrap()).with_split(s.split);
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        c.line(i as u64 + 1, l.as_bytes());
        out.extend(std::iter::from_fn(|| c.pop()));
    }
    c.finish();
    out.extend(std::iter::from_fn(|| c.pop()));
    out
}

fn turns(out: Vec<Out>) -> Vec<(Timestamp, Turn)> {
    out.into_iter()
        .filter_map(|o| match o {
            Ok(Item::Turn { t, turn }) => Some((t, *turn)),
            _ => None,
        })
        .collect()
}

#[test]
fn sniffs_session_lines_only() {
    let user = line(
        "user",
        T0,
        serde_json::json!({"message": {"role": "user", "content": "hi"}}),
    );
    assert!(looks_like(user.as_bytes()));
    assert!(looks_like(
        br#"{"type":"summary","summary":"Fix it","leafUuid":"x"}"#
    ));
    let snapshot = br#"{"type":"file-history-snapshot","messageId":"m","snapshot":{},"isSnapshotUpdate":false}"#;
    let mut session = snapshot.to_vec();
    session.push(b'\n');
    session.extend_from_slice(user.as_bytes());
    assert!(looks_like(&session));
    assert!(
        !looks_like(snapshot),
        "nothing but bookkeeping: nothing to convert"
    );
    assert!(!looks_like(br#"{"v":1,"type":"meta","sessionId":"x"}"#));
    assert!(!looks_like(
        br#"{"ts":"x","dir":"in","msg":{},"sessionId":"s","type":"user"}"#
    ));
    assert!(!looks_like(
        br#"{"jsonrpc":"2.0","method":"x","_meta":{"dir":"send","ts":"t"}}"#
    ));
    assert!(!looks_like(
        br#"{"v":1,"i":0,"dir":"c2s","kind":"request","id":1,"payload":{}}"#
    ));
    assert!(!looks_like(br#"{"t":1,"dir":"c2s","payload":{}}"#));
    // A sub-agent's own file is read with its session.
    assert!(!looks_like(
        br#"{"isSidechain":true,"agentId":"a1","sessionId":"s","type":"user"}"#
    ));
    assert!(!looks_like(b"not json"));
    assert!(!looks_like(b""));
    // A first line longer than the head.
    let head = br#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","message":"aaaa"#;
    assert!(looks_like(head));
}

#[test]
fn assistant_lines_merge_by_message_id_and_usage_counts_once() {
    let lines = vec![
        line(
            "user",
            T0,
            serde_json::json!({"message": {"role": "user", "content": "read it"}}),
        ),
        assistant(
            "msg_1",
            "2026-03-01T10:00:01.000Z",
            serde_json::json!({"type": "thinking", "thinking": "hmm", "signature": "sig=="}),
            9,
        ),
        r#"{"type":"progress","timestamp":"2026-03-01T10:00:01.500Z","sessionId":"s-1"}"#
            .to_owned(),
        assistant(
            "msg_1",
            "2026-03-01T10:00:02.000Z",
            serde_json::json!({"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"p": 1}}),
            20,
        ),
        line(
            "user",
            "2026-03-01T10:00:03.000Z",
            serde_json::json!({
            "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "data", "is_error": false}]},
            "toolUseResult": {"stdout": "data"}}),
        ),
    ];
    let t = turns(run(&lines));
    assert_eq!(t.len(), 3, "{t:?}");
    let (at, a) = &t[1];
    assert_eq!(*at, Timestamp::parse("2026-03-01T10:00:02.000Z").unwrap());
    assert_eq!(a.role.as_deref(), Some("assistant"));
    assert_eq!(a.model.as_deref(), Some("claude-x"));
    let blocks = a.blocks.as_ref().unwrap();
    assert_eq!(blocks.len(), 2);
    assert!(matches!(&blocks[0], Block::Thinking { extra, .. } if extra.is_empty()));
    assert!(matches!(&blocks[1], Block::ToolUse { name, .. } if name == "Read"));
    let u = a.usage.as_ref().unwrap();
    assert_eq!(u.output_tokens, Some(20), "the last line's usage");
    assert_eq!(u.cache_read_input_tokens, Some(100));
    assert_eq!(a.timing.as_ref().unwrap().duration_ms, Some(2000.0));
    match &t[2].1.blocks.as_ref().unwrap()[0] {
        Block::ToolResult {
            tool_use_id, extra, ..
        } => {
            assert_eq!(tool_use_id, "toolu_1");
            assert_eq!(extra["structured"]["stdout"], "data");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn split_messages_merge_once_and_markers_and_skips() {
    let lines = vec![
        r#"{"type":"summary","summary":"Earlier work","leafUuid":"l1"}"#.to_owned(),
        line(
            "user",
            T0,
            serde_json::json!({"isMeta": true, "message": {"role": "user", "content": "Caveat: local"}}),
        ),
        assistant(
            "msg_2",
            "2026-03-01T10:00:01.000Z",
            serde_json::json!({"type": "text", "text": "a"}),
            5,
        ),
        line(
            "user",
            "2026-03-01T10:00:02.000Z",
            serde_json::json!({"message": {"role": "user", "content": "interject"}}),
        ),
        assistant(
            "msg_2",
            "2026-03-01T10:00:03.000Z",
            serde_json::json!({"type": "text", "text": "b"}),
            6,
        ),
        line(
            "system",
            "2026-03-01T10:00:04.000Z",
            serde_json::json!({"subtype": "compact_boundary", "content": "Conversation compacted", "level": "info"}),
        ),
        line(
            "user",
            "2026-03-01T10:00:05.000Z",
            serde_json::json!({"isCompactSummary": true, "message": {"role": "user", "content": "This session is being continued"}}),
        ),
        r#"{"type":"file-history-snapshot","messageId":"m","snapshot":{}}"#.to_owned(),
        line(
            "assistant",
            "2026-03-01T10:00:06.000Z",
            serde_json::json!({"isSidechain": true, "agentId": "ag", "message": {"id": "msg_3", "model": "claude-y", "content": [{"type": "text", "text": "sub"}]}}),
        ),
    ];
    let mut s = Survey::default();
    for (i, l) in lines.iter().enumerate() {
        s.line(i as u64 + 1, l.as_bytes());
    }
    s.finish();
    assert_eq!(s.split.get("msg_2"), Some(&(3, 5)));
    assert_eq!(s.skipped.get("file-history-snapshot"), Some(&1));
    assert_eq!(s.warnings("f.jsonl").len(), 1);
    let t = turns(run(&lines));
    let roles: Vec<(&str, Option<&str>)> = t
        .iter()
        .map(|(_, t)| {
            (
                t.role.as_deref().unwrap(),
                t.extra.get("marker").and_then(Value::as_str),
            )
        })
        .collect();
    assert_eq!(
        roles,
        [
            ("system", Some("summary")),
            ("system", Some("meta")),
            ("user", None),
            ("assistant", None),
            ("system", Some("compact_boundary")),
            ("system", Some("compact_summary")),
            ("assistant", None),
        ]
    );
    // The summary, before any timestamp, takes the start.
    assert_eq!(t[0].0, Timestamp::parse(T0).unwrap());
    let merged = &t[3].1;
    assert_eq!(merged.blocks.as_ref().unwrap().len(), 2);
    assert_eq!(merged.usage.as_ref().unwrap().output_tokens, Some(6));
    assert_eq!(t.iter().filter(|(_, t)| t.usage.is_some()).count(), 1);
    assert_eq!(t[6].1.extra["sidechain"], true);
    assert_eq!(t[6].1.extra["agentId"], "ag");
}

#[test]
fn bad_lines_are_problems_never_panics() {
    let lines: Vec<String> = [
        "not json",
        "[1,2]",
        r#"{"no":"type"}"#,
        r#"{"type":"assistant","timestamp":"2026-03-01T10:00:00Z"}"#,
        r#"{"type":"assistant","message":{"content":"plain"},"timestamp":"bad"}"#,
        r#"{"type":"user","message":{"content":[1,{"type":"tool_result"}]}}"#,
        r#"{"type":"system","content":{"odd":1}}"#,
        "",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = run(&lines);
    let problems: Vec<u64> = out
        .iter()
        .filter_map(|o| o.as_ref().err().map(|(p, _)| p.line))
        .collect();
    assert_eq!(problems, [1, 2, 3, 4]);
    assert_eq!(turns(out).len(), 3);
    // Without a survey, a late part of a written message is refused, not counted.
    let mut c = Converter::new(Timestamp::parse(T0).unwrap());
    let a = assistant("m", T0, serde_json::json!({"type": "text", "text": "x"}), 1);
    let u = line("user", T0, serde_json::json!({"message": {"content": "y"}}));
    for (i, l) in [&a, &u, &a].iter().enumerate() {
        c.line(i as u64 + 1, l.as_bytes());
    }
    c.finish();
    let out: Vec<Out> = std::iter::from_fn(|| c.pop()).collect();
    assert_eq!(out.len(), 3);
    assert!(out[2].is_err());
}

#[test]
fn a_session_converts_with_its_subagent_files() {
    let tmp = tempfile::tempdir().unwrap();
    let main = tmp.path().join("s-1.jsonl");
    let lines = [
        line(
            "user",
            T0,
            serde_json::json!({"message": {"role": "user", "content": "go"}}),
        ),
        assistant(
            "msg_1",
            "2026-03-01T10:00:05.000Z",
            serde_json::json!({"type": "text", "text": "done"}),
            4,
        ),
    ];
    std::fs::write(&main, lines.join("\n")).unwrap();
    let sub = tmp.path().join("s-1/subagents");
    std::fs::create_dir_all(&sub).unwrap();
    let sub_line = line(
        "assistant",
        "2026-03-01T10:00:02.000Z",
        serde_json::json!({
        "isSidechain": true, "agentId": "a7",
        "message": {"id": "msg_s", "model": "claude-y", "content": [{"type": "text", "text": "sub"}]}}),
    );
    std::fs::write(sub.join("agent-a7.jsonl"), format!("{sub_line}\n")).unwrap();
    assert!(is_subagent_dir(&sub));
    // The older layout: beside the session, naming it; another session's is not its.
    let old = |id: &str, session: &str, t: &str| {
        let mut l: Value = serde_json::from_str(&line(
            "user",
            t,
            serde_json::json!({
            "isSidechain": true, "agentId": id,
            "message": {"role": "user", "content": "task"}}),
        ))
        .unwrap();
        l["sessionId"] = session.into();
        l.to_string()
    };
    std::fs::write(
        tmp.path().join("agent-b2.jsonl"),
        old("b2", "s-1", "2026-03-01T10:00:03.000Z"),
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("agent-c3.jsonl"),
        old("c3", "s-9", "2026-03-01T10:00:03.000Z"),
    )
    .unwrap();
    assert!(
        !looks_like(old("b2", "s-1", T0).as_bytes()),
        "read with its session"
    );
    let c = convert(&main).unwrap();
    assert_eq!(c.kind, "cc-session");
    assert_eq!(c.facts["sessionId"], "s-1");
    assert_eq!(c.facts["subagents"], 2);
    let items: Vec<Item> = c.items.map(|i| i.unwrap()).collect();
    let agents: Vec<Option<&str>> = items
        .iter()
        .map(|i| match i {
            Item::Turn { turn, .. } => turn.extra.get("agentId").and_then(Value::as_str),
            _ => panic!("{i:?}"),
        })
        .collect();
    assert_eq!(
        agents,
        [None, Some("a7"), Some("b2"), None],
        "in time order"
    );
    let empty = tmp.path().join("e.jsonl");
    std::fs::write(
        &empty,
        r#"{"type":"file-history-snapshot","messageId":"m","snapshot":{}}"#,
    )
    .unwrap();
    assert!(matches!(convert(&empty), Err(ConvertError::Empty)));
    let summaries = tmp.path().join("old.jsonl");
    std::fs::write(
        &summaries,
        r#"{"type":"summary","summary":"A","leafUuid":"l"}"#,
    )
    .unwrap();
    let c = convert(&summaries).unwrap();
    assert!(c.started.0 > 0, "the file's time");
    assert_eq!(c.items.count(), 1);
}
