//! `reel ls`: runs listed newest first from each trace's head and tail, interrupted runs,
//! rotated companions, junk files, the JSON shape and the exit codes. Every trace here is
//! written by the test itself, with reel-trace's writer or byte by byte.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use reel_trace::line::Meta;
use reel_trace::{Dir, Ending, EventLine, MessageLine, Timestamp, TraceWriter, Turn};
use serde_json::{Value, json};

fn reel(args: &[&str], reel_dir: Option<&Path>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_reel"));
    cmd.args(args).env("NO_COLOR", "1").env_remove("REEL_DIR");
    if let Some(d) = reel_dir {
        cmd.env("REEL_DIR", d);
    }
    cmd.output().expect("reel runs")
}

fn ls_json(dir: &Path) -> (Value, String) {
    let out = reel(&["ls", "--json", dir.to_str().unwrap()], None);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("ls --json prints JSON");
    (v, stderr)
}

fn ts(s: &str) -> Timestamp {
    Timestamp::parse(s).unwrap()
}

fn meta(label: &str, started: &str) -> Meta {
    serde_json::from_value(json!({
        "v": 1, "type": "meta", "startedAt": started, "label": label,
        "command": ["node", "server.js"], "source": "reel@test", "reel": 1
    }))
    .unwrap()
}

/// A trace with `n` request/response pairs (the last response an error when `error`).
fn write_trace(path: &Path, label: &str, started: &str, n: u64, error: bool) -> TraceWriter<File> {
    let start = ts(started);
    let mut w = TraceWriter::new(File::create(path).unwrap(), start);
    w.write_meta(&meta(label, started)).unwrap();
    for i in 1..=n {
        let t = Timestamp(start.0 + i as i64 * 100);
        let req = format!(
            r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"echo"}}}}"#
        );
        w.write_message(&MessageLine::new(t, Dir::In, &req))
            .unwrap();
        let is_error = error && i == n;
        let resp = if is_error {
            format!(r#"{{"jsonrpc":"2.0","id":{i},"error":{{"code":-32602,"message":"bad"}}}}"#)
        } else {
            format!(r#"{{"jsonrpc":"2.0","id":{i},"result":{{"content":[]}}}}"#)
        };
        let mut m = MessageLine::new(Timestamp(t.0 + 50), Dir::Out, &resp);
        m.is_error = Some(is_error);
        w.write_message(&m).unwrap();
    }
    w
}

fn runs(v: &Value) -> &Vec<Value> {
    v["runs"].as_array().expect("runs array")
}

fn labels(v: &Value) -> Vec<&str> {
    runs(v)
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect()
}

#[test]
fn runs_are_listed_newest_first_whatever_their_file_names() {
    let dir = tempfile::tempdir().unwrap();
    // File names sort a, b, c; starts sort a (March), c (February), b (January).
    let w = write_trace(
        &dir.path().join("a.jsonl"),
        "march",
        "2026-03-01T10:00:00.000Z",
        2,
        false,
    );
    w.finish(Ending::ExitCode(0), ts("2026-03-01T10:00:01.000Z"))
        .unwrap();
    let w = write_trace(
        &dir.path().join("b.jsonl"),
        "january",
        "2026-01-01T10:00:00.000Z",
        1,
        false,
    );
    w.finish(
        Ending::Reason("producer_shutdown".into()),
        ts("2026-01-01T10:00:02.000Z"),
    )
    .unwrap();
    let w = write_trace(
        &dir.path().join("c.jsonl"),
        "february",
        "2026-02-01T10:00:00.000Z",
        1,
        true,
    );
    w.finish(Ending::ExitCode(3), ts("2026-02-01T10:00:03.000Z"))
        .unwrap();

    let (v, _) = ls_json(dir.path());
    assert_eq!(labels(&v), ["march", "february", "january"]);
    let r = runs(&v);
    assert_eq!(r[0]["exitCode"], 0);
    assert_eq!(r[1]["exitCode"], 3);
    assert_eq!(r[1]["counts"]["errors"], 1);
    assert_eq!(r[2]["exitCode"], Value::Null);
    assert_eq!(r[2]["reason"], "producer_shutdown");
    assert_eq!(r[2]["durationMs"], 2000);
}

#[test]
fn json_has_every_documented_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("2026-05-12T23-00-00-000Z-fs.jsonl");
    let mut w = write_trace(&path, "fs", "2026-05-12T23:00:00.000Z", 3, true);
    let t = ts("2026-05-12T23:00:05.000Z");
    w.write_event(&EventLine::new(t, "reel.stderr").with_payload(b"log\n"))
        .unwrap();
    let turn: Turn = serde_json::from_value(json!({
        "t": "2026-05-12T23:00:05.000Z", "type": "turn", "role": "assistant", "blocks": []
    }))
    .unwrap();
    w.write_turn(&turn).unwrap();
    w.finish(Ending::ExitCode(0), ts("2026-05-12T23:00:30.000Z"))
        .unwrap();

    let (v, stderr) = ls_json(dir.path());
    assert_eq!(v["schema"], "reel.ls/1");
    assert_eq!(v["dir"], dir.path().to_str().unwrap());
    assert_eq!(v["skipped"], json!([]));
    assert_eq!(v["ignored"], 0);
    assert!(stderr.is_empty(), "{stderr}");
    let r = &runs(&v)[0];
    let p = path.to_str().unwrap();
    assert_eq!(
        r,
        &json!({
            "path": p,
            "files": [p],
            "label": "fs",
            "kind": "mcp",
            "source": "reel@test",
            "startedAt": "2026-05-12T23:00:00.000Z",
            "durationMs": 30000,
            "interrupted": false,
            "exitCode": 0,
            "reason": null,
            "counts": {"in": 3, "out": 3, "events": 1, "turns": 1, "errors": 1},
            "countsFrom": "end",
            "bytes": fs::metadata(&path).unwrap().len(),
            "models": [],
            "tokens": null,
        })
    );
}

#[test]
fn llm_runs_show_their_models_and_tokens_from_the_end_or_a_scan() {
    let dir = tempfile::tempdir().unwrap();
    let turn = |role: &str, model: &str, echoed: bool| -> Turn {
        serde_json::from_value(json!({
            "t": "2026-05-12T23:00:05.000Z", "type": "turn", "role": role, "blocks": [],
            "model": model, "echoed": echoed,
            "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 2}
        }))
        .unwrap()
    };
    let llm_meta = |label: &str| -> Meta {
        serde_json::from_value(json!({
            "v": 1, "type": "meta", "startedAt": "2026-05-12T23:00:00.000Z", "label": label,
            "command": [], "kind": "llm", "source": "reel@test"
        }))
        .unwrap()
    };
    // Interrupted: counted by reading it; the echoed turn and the user turn add nothing.
    let path = dir.path().join("killed.jsonl");
    let mut w = TraceWriter::new(File::create(&path).unwrap(), ts("2026-05-12T23:00:00.000Z"));
    w.write_meta(&llm_meta("killed")).unwrap();
    for t in [
        turn("assistant", "claude-a", false),
        turn("assistant", "claude-a", true),
        turn("user", "claude-b", false),
        turn("assistant", "gpt-b", false),
    ] {
        w.write_turn(&t).unwrap();
    }
    drop(w);
    let (v, _) = ls_json(dir.path());
    let r = &runs(&v)[0];
    assert_eq!(r["models"], json!(["claude-a", "gpt-b"]));
    assert_eq!(r["tokens"], 34);
    // Ended: the end line's `llm` summary is what counts (no scan).
    let path = dir.path().join("ended.jsonl");
    let mut w = TraceWriter::new(File::create(&path).unwrap(), ts("2026-05-12T23:00:00.000Z"));
    w.write_meta(&llm_meta("ended")).unwrap();
    let mut extra = serde_json::Map::new();
    extra.insert(
        "llm".into(),
        json!({"models": ["m-1"], "usage": {"input_tokens": 7, "output_tokens": 3}}),
    );
    w.finish_with(
        Ending::Reason("producer_shutdown".into()),
        ts("2026-05-12T23:00:30.000Z"),
        extra,
    )
    .unwrap();
    let (v, _) = ls_json(dir.path());
    let ended = runs(&v).iter().find(|r| r["label"] == "ended").unwrap();
    assert_eq!(ended["models"], json!(["m-1"]));
    assert_eq!(ended["tokens"], 10);
    let out = reel(&["ls", dir.path().to_str().unwrap()], None);
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.contains("MODELS") && table.contains("claude-a +1"),
        "{table}"
    );
}

#[test]
fn an_interrupted_small_run_is_counted_by_reading_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("killed.jsonl");
    let w = write_trace(&path, "killed", "2026-01-01T00:00:00.000Z", 4, true);
    drop(w); // no end line: the recorder was killed
    // …and it was killed in the middle of a line.
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(br#"{"t":"2026-01-01T00:00:09.000Z","dir":"in","raw":{"jsonrpc":"2.0","id":9,"me"#)
        .unwrap();

    let (v, _) = ls_json(dir.path());
    let r = &runs(&v)[0];
    assert_eq!(r["interrupted"], true);
    assert_eq!(r["exitCode"], Value::Null);
    assert_eq!(r["reason"], Value::Null);
    assert_eq!(r["countsFrom"], "scan");
    assert_eq!(
        r["counts"],
        json!({"in": 4, "out": 4, "events": 0, "turns": 0, "errors": 1})
    );
    // Up to the last complete line: the 4th response, 450 ms after the start.
    assert_eq!(r["durationMs"], 450);

    let out = reel(&["ls", dir.path().to_str().unwrap()], None);
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("interrupted"), "{table}");
    assert!(table.contains("4/4"), "{table}");
}

#[test]
fn a_large_interrupted_run_has_unknown_counts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    let mut w = write_trace(&path, "big", "2026-01-01T00:00:00.000Z", 0, false);
    let payload = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":"{}"}}}}"#,
        "x".repeat(4000)
    );
    let start = ts("2026-01-01T00:00:00.000Z");
    let mut written = 0u64;
    let mut i = 0;
    while written <= reel_inspect::runs::SCAN_LIMIT {
        i += 1;
        w.write_message(&MessageLine::new(
            Timestamp(start.0 + i),
            Dir::Out,
            &payload,
        ))
        .unwrap();
        written = w.bytes_written();
    }
    drop(w);

    let (v, _) = ls_json(dir.path());
    let r = &runs(&v)[0];
    assert_eq!(r["interrupted"], true);
    assert_eq!(r["counts"], Value::Null);
    assert_eq!(r["countsFrom"], Value::Null);
    assert_eq!(r["durationMs"], i);
    assert!(r["bytes"].as_u64().unwrap() > reel_inspect::runs::SCAN_LIMIT);

    let out = reel(&["ls", dir.path().to_str().unwrap()], None);
    let table = String::from_utf8(out.stdout).unwrap();
    let line = table.lines().nth(1).unwrap();
    assert!(
        line.contains(" ? ") && line.contains("interrupted"),
        "{table}"
    );
}

#[test]
fn rotated_companions_are_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("x.jsonl");
    // The oldest part holds the meta; the base holds the newest lines and the end.
    let w = write_trace(
        &dir.path().join("x.jsonl.1"),
        "rotated",
        "2026-01-01T00:00:00.000Z",
        2,
        false,
    );
    drop(w);
    let mut w = TraceWriter::new(File::create(&base).unwrap(), ts("2026-01-01T00:00:00.000Z"));
    let raw = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    w.write_message(&MessageLine::new(
        ts("2026-01-01T00:00:01.000Z"),
        Dir::In,
        raw,
    ))
    .unwrap();
    w.finish(Ending::ExitCode(0), ts("2026-01-01T00:00:02.000Z"))
        .unwrap();

    let (v, stderr) = ls_json(dir.path());
    assert_eq!(runs(&v).len(), 1, "{v}");
    assert!(stderr.is_empty(), "{stderr}");
    let r = &runs(&v)[0];
    assert_eq!(r["label"], "rotated");
    assert_eq!(r["path"], base.to_str().unwrap());
    assert_eq!(
        r["files"],
        json!([
            dir.path().join("x.jsonl.1").to_str().unwrap(),
            base.to_str().unwrap()
        ])
    );
    let total = fs::metadata(&base).unwrap().len()
        + fs::metadata(dir.path().join("x.jsonl.1")).unwrap().len();
    assert_eq!(r["bytes"], total);
    assert_eq!(r["exitCode"], 0);
    assert_eq!(r["durationMs"], 2000);
}

#[test]
fn junk_files_are_skipped_with_a_note_and_the_rest_listed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let w = write_trace(
        &d.join("good.jsonl"),
        "good",
        "2026-01-01T00:00:00.000Z",
        1,
        false,
    );
    w.finish(Ending::ExitCode(0), ts("2026-01-01T00:00:01.000Z"))
        .unwrap();
    fs::write(d.join("empty.jsonl"), "").unwrap();
    fs::write(d.join("array.jsonl"), "[1,2]\n").unwrap();
    fs::write(
        d.join("message-first.jsonl"),
        "{\"t\":\"2026-01-01T00:00:00.000Z\",\"dir\":\"in\",\"raw\":{}}\n",
    )
    .unwrap();
    fs::write(d.join("binary.jsonl"), b"\xff\xfe\x00garbage\n").unwrap();
    fs::write(
        d.join("no-newline.jsonl"),
        "x".repeat(reel_inspect::runs::HEAD_LIMIT + 1),
    )
    .unwrap();
    fs::write(d.join("notes.txt"), "not a trace").unwrap();
    fs::create_dir(d.join("sub.jsonl")).unwrap();

    let (v, stderr) = ls_json(d);
    assert_eq!(labels(&v), ["good"]);
    let mut skipped: Vec<(String, String)> = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let p = PathBuf::from(s["path"].as_str().unwrap());
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                s["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    skipped.sort();
    let names: Vec<&str> = skipped.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "array.jsonl",
            "binary.jsonl",
            "empty.jsonl",
            "message-first.jsonl",
            "no-newline.jsonl"
        ]
    );
    assert!(skipped[0].1.contains("not an object"), "{skipped:?}");
    assert!(skipped[1].1.contains("UTF-8"), "{skipped:?}");
    assert_eq!(skipped[2].1, "empty file");
    assert!(skipped[3].1.contains("message line"), "{skipped:?}");
    assert!(skipped[4].1.contains("no line break"), "{skipped:?}");
    assert_eq!(v["ignored"], 2, "notes.txt and the directory");
    for n in names {
        assert!(
            stderr.contains(&format!("skipped {}", d.join(n).display())),
            "{n}: {stderr}"
        );
    }
}

#[test]
fn a_huge_trace_is_read_from_its_head_and_tail_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.jsonl");
    let w = write_trace(&path, "huge", "2026-01-01T00:00:00.000Z", 1, false);
    let head = w.bytes_written();
    drop(w);
    // 5 GiB of hole (a sparse file: no disk used) between the head and the end line. A
    // reader of the whole file would find one 5 GiB "line" of NUL bytes in the middle.
    let f = OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(head + (5u64 << 30)).unwrap();
    drop(f);
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(
        b"\n{\"t\":\"2026-01-01T01:00:00.000Z\",\"type\":\"end\",\"exitCode\":0,\"durationMs\":3600000,\"counts\":{\"in\":7,\"out\":8,\"events\":0,\"turns\":0,\"errors\":0}}\n",
    )
    .unwrap();
    drop(f);

    let (v, _) = ls_json(dir.path());
    let r = &runs(&v)[0];
    assert_eq!(r["label"], "huge");
    assert_eq!(r["interrupted"], false);
    assert_eq!(r["counts"]["out"], 8);
    assert_eq!(r["countsFrom"], "end");
    assert_eq!(r["bytes"], fs::metadata(&path).unwrap().len());
    assert!(r["bytes"].as_u64().unwrap() > 5 << 30);
}

#[test]
fn the_table_has_a_row_per_run() {
    let dir = tempfile::tempdir().unwrap();
    let w = write_trace(
        &dir.path().join("one.jsonl"),
        "first-run",
        "2026-01-01T00:00:00.000Z",
        2,
        false,
    );
    w.finish(Ending::ExitCode(0), ts("2026-01-01T00:00:12.340Z"))
        .unwrap();
    let w = write_trace(
        &dir.path().join("two.jsonl"),
        "second-run",
        "2026-01-02T00:00:00.000Z",
        1,
        true,
    );
    w.finish(Ending::ExitCode(1), ts("2026-01-02T00:04:05.000Z"))
        .unwrap();

    let out = reel(&["ls", dir.path().to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0));
    let table = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    assert!(lines[0].starts_with("STARTED (UTC)"), "{table}");
    assert!(
        !table.contains('\x1b'),
        "no colour when not a terminal: {table}"
    );
    let second = lines[1];
    assert!(second.starts_with("2026-01-02 00:00:00"), "{table}");
    for want in ["second-run", "mcp", "4m05s", "1/1", "exit 1", "two.jsonl"] {
        assert!(second.contains(want), "{want} in {second}");
    }
    let first = lines[2];
    for want in ["first-run", "12.3s", "2/2", "exit 0", "one.jsonl"] {
        assert!(first.contains(want), "{want} in {first}");
    }
}

#[test]
fn the_default_directory_is_reel_dir() {
    let dir = tempfile::tempdir().unwrap();
    let w = write_trace(
        &dir.path().join("r.jsonl"),
        "from-env",
        "2026-01-01T00:00:00.000Z",
        1,
        false,
    );
    w.finish(Ending::ExitCode(0), ts("2026-01-01T00:00:01.000Z"))
        .unwrap();
    let out = reel(&["ls", "--json"], Some(dir.path()));
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(labels(&v), ["from-env"]);

    // Nothing recorded yet: the default directory does not exist. Not an error.
    let missing = dir.path().join("not-yet");
    let out = reel(&["ls", "--json"], Some(&missing));
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["runs"], json!([]));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no runs yet"));
}

#[test]
fn a_directory_that_cannot_be_read_exits_66() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let out = reel(&["ls", missing.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(66));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nope") && err.contains("no such directory"),
        "{err}"
    );

    let file = dir.path().join("file.jsonl");
    fs::write(&file, "{}\n").unwrap();
    let out = reel(&["ls", "--json", file.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(66));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a directory"));
}
