use super::*;

const YAML: &str = "messages:
- dir: c2s
  payload:
    id: 1
    jsonrpc: '2.0'
    method: initialize
    params:
      clientInfo:
        name: demo-client
        version: '0.1'
      protocolVersion: '2025-06-18'
  t: 343
- dir: s2c
  payload:
    id: 1
    jsonrpc: '2.0'
    result:
      protocolVersion: '2025-06-18'
  t: 409
- dir: sideways
  payload: {}
  t: 410
- dir: c2s
  payload:
    id: 4
    jsonrpc: '2.0'
    method: tools/call
    params:
      arguments:
        token: <REDACTED_token>
      name: add
  t: 400
meta:
  client_hint: demo-client
  protocol_version: '2025-06-18'
  recorded_at: '2026-11-30T06:34:43.945345Z'
  schema_version: '1.0'
  server_command:
  - python3
  - demo_server.py
  session_id: 7f2ab8f9
  version: 1
";

const NDJSON: &str = concat!(
    r#"{"_type": "meta", "version": 1, "recorded_at": "2026-11-30T06:34:45.297225Z", "session_id": "a434e8ab", "server_command": ["python3", "demo_server.py"], "schema_version": "1.0", "protocol_version": "2025-06-18", "client_hint": "demo-client"}"#,
    "\n",
    r#"{"t": 315, "dir": "c2s", "payload": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}}"#,
    "\n",
    r#"{"t": 362, "dir": "s2c", "payload": {"jsonrpc": "2.0", "id": 1, "result": {}}}"#,
    "\n\n",
    r#"{"t": 363, "dir": "c2s", "payload": {"jsonrpc": "2.0", "method": "notif"#,
    "\n",
    r#"{"t": "soon", "dir": "c2s", "payload": {}}"#,
    "\n",
);

fn file(text: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f
}

fn messages(items: &[Result<Item, Fault>]) -> Vec<(Dir, Value, Timestamp)> {
    items
        .iter()
        .filter_map(|i| match i {
            Ok(Item::Message { dir, raw, t, .. }) => {
                Some((*dir, serde_json::from_str(raw).unwrap(), *t))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_yaml_transcript_becomes_its_messages() {
    assert!(looks_like(YAML.as_bytes()));
    let f = file(YAML);
    let c = convert(f.path()).unwrap();
    let start = Timestamp::parse("2026-11-30T06:34:43.945Z").unwrap();
    assert_eq!(c.started, start);
    assert_eq!(c.facts["session_id"], "7f2ab8f9");
    assert_eq!(c.facts["protocol_version"], "2025-06-18");
    assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
    assert!(c.warnings[0].contains("timed before"));
    assert!(c.warnings[1].contains("redacted"));
    let items: Vec<_> = c.items.collect();
    let msgs = messages(&items);
    assert_eq!(msgs.len(), 3);
    assert_eq!(msgs[0].0, Dir::In);
    assert_eq!(msgs[0].1["jsonrpc"], "2.0", "a string, as YAML quoted it");
    assert_eq!(msgs[0].2, Timestamp(start.0 + 343));
    assert_eq!(msgs[1].0, Dir::Out);
    match &items[2] {
        Err(Fault::Bad(p, _)) => {
            assert_eq!(p.line, 20, "the item's line");
            assert!(p.reason.contains("sideways"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_ndjson_transcript_streams_and_torn_lines_are_problems() {
    assert!(looks_like(NDJSON.as_bytes()));
    let f = file(NDJSON);
    let c = convert(f.path()).unwrap();
    assert_eq!(
        c.started,
        Timestamp::parse("2026-11-30T06:34:45.297Z").unwrap()
    );
    assert_eq!(
        c.facts["server_command"],
        serde_json::json!(["python3", "demo_server.py"])
    );
    let items: Vec<_> = c.items.collect();
    assert_eq!(items.len(), 4);
    assert_eq!(messages(&items).len(), 2);
    assert!(matches!(&items[2], Err(Fault::Bad(p, _)) if p.line == 5));
    assert!(matches!(&items[3], Err(Fault::Bad(p, _)) if p.line == 6 && p.reason.contains("soon")));
}

#[test]
fn other_files_are_not_transcripts() {
    assert!(!looks_like(
        br#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z"}"#
    ));
    assert!(!looks_like(
            br#"{"jsonrpc":"2.0","id":1,"_meta":{"dir":"send","server":"d","ts":"2026-01-01T00:00:00Z"}}"#
        ));
    assert!(!looks_like(
        br#"{"ts": 1.5, "dir": "client->server", "msg": {}}"#
    ));
    assert!(!looks_like(b"{\n  \"format_version\": \"1.0.0\","));
    assert!(!looks_like(b"name: ci\non:\n  push:\n"));
    assert!(!looks_like(b""));
    for (text, empty) in [
        ("messages: []\nmeta: {}\n", true),
        ("messages: 3\n", false),
        ("- a\n- b\n", false),
        ("messages:\n- dir: c2s\n  payload: {\n", false),
        ("{\"_type\": \"meta\"}\n", true),
    ] {
        let f = file(text);
        let r = convert(f.path());
        if empty {
            assert!(matches!(r, Err(ConvertError::Empty)), "{text}: {r:?}");
        } else {
            assert!(matches!(r, Err(ConvertError::Invalid(_))), "{text}: {r:?}");
        }
    }
    let f = file("messages:\n- dir: c2s\n  payload: {id: 1, method: ping}\n");
    let c = convert(f.path()).unwrap();
    assert!(c.warnings[0].contains("no `meta`"), "{:?}", c.warnings);
    let f = file("messages:\n- dir: c2s\n  payload: {id: NORM_ID_1, method: ping}\n");
    let c = convert(f.path()).unwrap();
    assert!(c.warnings[1].contains("snapshot"), "{:?}", c.warnings);
}

#[test]
fn an_export_reads_back_as_the_same_messages() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.jsonl");
    let lines = [
        r#"{"v":1,"type":"meta","startedAt":"2026-11-30T06:34:43.000Z","label":"demo","command":["python3","demo_server.py"]}"#,
        r#"{"t":"2026-11-30T06:34:43.010Z","dir":"in","raw":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"c","version":"1"}}}}"#,
        r#"{"t":"2026-11-30T06:34:43.020Z","dir":"out","raw":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","n":1.5,"big":12345678901234,"f":1e20,"on":"yes","s":"a\"b\nc\u2028","e":[],"o":{},"l":[[1,{"k":null}],{"a":true}]}}}"#,
        r#"{"t":"2026-11-30T06:34:43.015Z","dir":"in","raw":[{"jsonrpc":"2.0","method":"a"}]}"#,
        r#"{"t":"2026-11-30T06:34:43.030Z","dir":"event","kind":"stderr","text":"hi"}"#,
        r#"{"t":"2026-11-30T06:34:43.025Z","dir":"in","raw":{"jsonrpc":"2.0","method":"notifications/initialized","params":{"s":"true"}}}"#,
        r#"{"type":"end","t":"2026-11-30T06:34:43.040Z","reason":"eof"}"#,
    ];
    std::fs::write(&trace, lines.join("\n") + "\n").unwrap();
    let mut out = Vec::new();
    let left = export(&trace, &mut out).unwrap();
    assert_eq!(left.0.get("batches"), Some(&1));
    assert_eq!(left.0.values().sum::<u64>(), 2, "{left}");
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("messages:\n"), "{text}");
    let back = dir.path().join("back.yaml");
    std::fs::write(&back, &text).unwrap();
    assert!(looks_like(text.as_bytes()));
    let c = convert(&back).unwrap();
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_eq!(c.facts["client_hint"], "c");
    assert_eq!(c.facts["protocol_version"], "2025-06-18");
    assert!(is_session_id(c.facts["session_id"].as_str().unwrap()));
    let items: Vec<_> = c.items.collect();
    let msgs = messages(&items);
    assert_eq!(msgs.len(), 3);
    assert!(
        text.contains("    protocolVersion: \"2025-06-18\"\n"),
        "{text}"
    );
    assert!(text.contains("    \"on\": \"yes\"\n"), "{text}");
    assert!(text.contains("    f: 1.0e+20\n"), "{text}");
    let result = serde_json::from_str::<Value>(lines[2]).unwrap()["raw"]["result"].clone();
    assert_eq!(msgs[1].1["result"], result, "every value as it was");
    assert_eq!(msgs[1].1["result"]["n"], 1.5);
    assert_eq!(msgs[1].1["result"]["big"], 12345678901234u64);
    assert_eq!(msgs[2].1["params"]["s"], "true", "a string stays a string");
    assert_eq!(
        msgs[2].2,
        Timestamp::parse("2026-11-30T06:34:43.025Z").unwrap()
    );
    let empty = dir.path().join("e.jsonl");
    std::fs::write(&empty, format!("{}\n", lines[0])).unwrap();
    assert!(matches!(
        export(&empty, &mut Vec::new()),
        Err(ExportError::Unfit(_))
    ));
}

fn json() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e300f64..1e300).prop_map(Value::from),
        any::<String>().prop_map(Value::from),
        prop_oneof![
            Just("2025-11-25"),
            Just("yes"),
            Just("~"),
            Just("1e5"),
            Just("0o17"),
            Just("- a"),
            Just("a: b"),
            Just("#x"),
            Just(""),
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            proptest::collection::btree_map(any::<String>(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest::proptest! {
    #[test]
    fn the_yaml_written_reads_back_as_the_same_values(v in json()) {
        let mut doc = Map::new();
        doc.insert("v".into(), v.clone());
        let mut text = String::new();
        yaml::map(&doc, 0, &mut text);
        let back: Value = serde_norway::from_str(&text).unwrap();
        proptest::prop_assert_eq!(&back["v"], &v, "{}", text);
    }
}
