//! Nothing dropped in silence (issue 28, item 6): a source line over the 1 GiB a line
//! may have is read past without being held, and said: `reel import` names the file,
//! the line and its length on stderr, marks its place in the trace with a `reel.gap`
//! event and exits 66 (part of the input could not be read); `reel stats` on the source
//! counts it as a skipped line. The source is a sparse file, so the test writes
//! kilobytes to disk; reel runs under an address-space ceiling well below what holding
//! the line would take twice.
//!
//! A long line that is kept costs one copy of itself: a 128 MiB message is imported
//! under a ceiling of the line, the reader's growth step and what the binary maps
//! (448 MiB), where holding it in the converter's tree, the rebuilt message and the
//! writer's line besides took over 700 MiB.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use serde_json::Value;

use crate::hostile_yaml::{MEMORY_CEILING, Ran, reel_bounded, reel_within};

/// The over-long line: 1 GiB and 1 MiB of NUL bytes (a hole in the file).
const LONG: u64 = (1 << 30) + (1 << 20);

const INIT: &str = r#"{"ts": 1796020626.47, "dir": "client->server", "msg": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}}"#;
const ANSWER: &str = r#"{"ts": 1796020626.51, "dir": "server->client", "msg": {"jsonrpc": "2.0", "id": 1, "result": {}}}"#;

/// `reel import --from mcp-rec SRC -o OUT` under the address-space ceiling `ceiling`.
fn import_mcp_rec(ceiling: &str, src: &Path, out: &Path) -> Ran {
    let (src, out) = (src.to_str().unwrap(), out.to_str().unwrap());
    reel_within(
        ceiling,
        &["import", "--from", "mcp-rec", src, "-o", out],
        None,
    )
}

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
    let ran = import_mcp_rec(MEMORY_CEILING, &src, &out);
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

#[test]
fn a_kept_line_of_128_mib_is_imported_in_one_copy_of_itself() {
    const BLOB: usize = 128 << 20;
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("session.jsonl");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&src).unwrap());
        writeln!(f, "{INIT}").unwrap();
        write!(
            f,
            r#"{{"ts": 1796020626.51, "dir": "server->client", "msg": {{"jsonrpc": "2.0", "id": 1, "result": {{"contents": [{{"uri": "file:///x.bin", "blob": ""#
        )
        .unwrap();
        let chunk = base64ish(1 << 20);
        for _ in 0..BLOB >> 20 {
            f.write_all(&chunk).unwrap();
        }
        writeln!(f, r#""}}]}}}}}}"#).unwrap();
    }
    let out = tmp.path().join("out.jsonl");
    let ran = import_mcp_rec("--as=469762048", &src, &out);
    assert_eq!(ran.code, Some(0), "stderr: {}", ran.stderr);
    // The answer's line is found and measured as bytes: parsing 128 MiB of JSON in a
    // debug build would take longer than the import.
    let text = std::fs::read(&out).unwrap();
    let long: Vec<&[u8]> = text
        .split(|&b| b == b'\n')
        .filter(|l| l.len() > BLOB)
        .collect();
    assert_eq!(long.len(), 1, "one long line in the trace");
    let line = long[0];
    let head = br#""blob":""#;
    let at = line
        .windows(head.len())
        .position(|w| w == head)
        .expect("the blob's member is in the answer")
        + head.len();
    let blob = &line[at..at + BLOB];
    assert_eq!(
        line[at + BLOB],
        b'"',
        "the blob is whole, no byte more or less"
    );
    assert!(blob.starts_with(&base64ish(64)), "the blob is the source's");
    let rest: Value = serde_json::from_slice(&[&line[..at], &line[at + BLOB..]].concat())
        .expect("the line around the blob is the message line");
    assert_eq!(rest["dir"], "out");
    assert_eq!(rest["raw"]["id"], 1);
}

/// `len` bytes of the base64 alphabet, drawn from a fixed seed.
fn base64ish(len: usize) -> Vec<u8> {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut x = 11u64;
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            alphabet[(x >> 58) as usize]
        })
        .collect()
}
