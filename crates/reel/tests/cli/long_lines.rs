//! Nothing dropped in silence (issue 28, item 6): a source line over the 1 GiB a line
//! may have is read past without being held, and said: `reel import` names the file,
//! the line and its length on stderr, marks its place in the trace with a `reel.gap`
//! event and exits 66 (part of the input could not be read); `reel stats` on the source
//! counts it as a skipped line. The source is a sparse file, so the test writes
//! kilobytes to disk; reel runs under an address-space ceiling well below what holding
//! the line would take twice.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use serde_json::Value;

use crate::hostile_yaml::reel_bounded;

/// The over-long line: 1 GiB and 1 MiB of NUL bytes (a hole in the file).
const LONG: u64 = (1 << 30) + (1 << 20);

const INIT: &str = r#"{"ts": 1796020626.47, "dir": "client->server", "msg": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}}"#;
const ANSWER: &str = r#"{"ts": 1796020626.51, "dir": "server->client", "msg": {"jsonrpc": "2.0", "id": 1, "result": {}}}"#;

/// An mcp-rec session: a request, the over-long line, the answer.
fn session_with_a_long_line(path: &Path) {
    let mut f = std::fs::File::create(path).unwrap();
    writeln!(f, "{INIT}").unwrap();
    let at = f.stream_position().unwrap();
    f.seek(SeekFrom::Start(at + LONG)).unwrap();
    writeln!(f, "\n{ANSWER}").unwrap();
}

#[test]
fn import_says_a_line_over_1_gib_and_exits_66_with_the_rest_imported() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("session.jsonl");
    session_with_a_long_line(&src);
    let out = tmp.path().join("out.jsonl");
    let ran = reel_bounded(
        &[
            "import",
            "--from",
            "mcp-rec",
            src.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(ran.code, Some(66), "stderr: {}", ran.stderr);
    let said = format!("session.jsonl: line 2: {LONG} bytes, over the 1 GiB a line may have");
    assert!(ran.stderr.contains(&said), "{}", ran.stderr);
    assert!(
        ran.stderr
            .contains("imported without lines too long to read"),
        "{}",
        ran.stderr
    );
    let lines: Vec<Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let gaps: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "reel.gap").collect();
    assert_eq!(gaps.len(), 1, "{lines:#?}");
    assert_eq!(gaps[0]["bytes"], LONG);
    assert_eq!(gaps[0]["lines"], 1);
    let messages = lines
        .iter()
        .filter(|l| l["dir"] == "in" || l["dir"] == "out");
    assert_eq!(messages.count(), 2, "the lines around it are imported");
}

#[test]
fn stats_counts_a_line_over_1_gib_as_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("session.jsonl");
    session_with_a_long_line(&src);
    let ran = reel_bounded(&["stats", "--json", src.to_str().unwrap()], None);
    assert_eq!(ran.code, Some(0), "stderr: {}", ran.stderr);
    let v: Value = serde_json::from_slice(&ran.stdout).expect("stats --json prints JSON");
    assert_eq!(v["session"]["skippedLines"], 1, "{v:#}");
}
