//! mcp-vcr 0.2.2 against reel: transcripts it records as a stdio proxy (YAML and
//! NDJSON, both protocol eras, server-everything's notifications, progress and
//! requests) import, check, count and replay to the client that made them; and a `reel
//! rec` session exported as a transcript is one mcp-vcr validates and re-drives a live
//! server with. Also the helpers the other recorders' tests share: the Python SDK
//! client run against a server, and a recording's import checked end to end.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::venv_bin;
use crate::harness::play_http_support::{Peers, only_trace, run, trace_lines};
use crate::harness::reel;

const EVERYTHING: &str = "@modelcontextprotocol/server-everything/dist/index.js";

/// A test server's command: `demo` (tests/peers/demo_server.py) or `everything`
/// (server-everything over stdio).
pub(super) fn server(suite: &str) -> Vec<OsString> {
    let peers = Peers::get();
    match suite {
        "demo" => vec![peers.python.into(), Peers::script("demo_server.py").into()],
        _ => vec![
            "node".into(),
            peers.node_module(EVERYTHING).into(),
            "stdio".into(),
        ],
    }
}

/// `client.py SUITE --mode MODE -- COMMAND…` run in `cwd` with `env`: its stdout (the
/// RESULT lines), which must end in `ALL OK`.
pub(super) fn client(
    cwd: &Path,
    suite: &str,
    mode: &str,
    command: &[OsString],
    env: &[(&str, &str)],
) -> String {
    let mut c = Command::new(Peers::get().python);
    c.arg(Peers::script("client.py"))
        .args([suite, "--mode", mode, "--"])
        .args(command)
        .current_dir(cwd)
        .envs(env.iter().copied());
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "the client failed: {out}\n{err}");
    assert!(out.ends_with("ALL OK\n"), "{out}\n{err}");
    out
}

/// `words` then `rest`, as one command.
pub(super) fn command(words: &[&OsStr], rest: &[OsString]) -> Vec<OsString> {
    words
        .iter()
        .map(|w| w.to_os_string())
        .chain(rest.iter().cloned())
        .collect()
}

/// What a recording made by another tool gives reel, checked end to end: `reel import`
/// writes a trace that passes `reel check`, whose `reel stats --json` counts one call
/// of each of `tools` and no error beyond `errors` (the methods of JSON-RPC errors),
/// and that `reel play` serves to the same client with the same results as `want`
/// (and so does the recording itself, read through a conversion). The trace's lines.
pub(super) fn imports_checks_counts_and_replays(
    src: &Path,
    (suite, mode): (&str, &str),
    want: &str,
    tools: &[&str],
    errors: &[&str],
) -> Vec<Value> {
    let dir = src.parent().expect("a directory");
    let imported = dir.join(format!(
        "imported-{}.jsonl",
        src.file_stem().unwrap().to_string_lossy()
    ));
    let mut c = reel();
    c.arg("import").arg("-o").arg(&imported).arg(src);
    let (code, _, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("reel: note:"), "the format's limits: {err}");
    let mut c = reel();
    c.arg("check").arg(&imported);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "{out}{err}");

    let mut c = reel();
    c.args(["stats", "--json"]).arg(&imported);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    let stats: Value = serde_json::from_str(&out).expect("stats JSON");
    let counted: Vec<(String, u64, u64)> = stats["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap_or_default().to_owned(),
                t["calls"].as_u64().unwrap_or_default(),
                t["errors"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    let mut expected: Vec<(String, u64, u64)> =
        tools.iter().map(|t| (t.to_string(), 1, 0)).collect();
    expected.sort();
    assert_eq!(counted, expected, "{stats}");
    let failed: Vec<&str> = stats["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .filter_map(|e| e["name"].as_str())
        .collect();
    assert_eq!(failed, errors, "{stats}");

    for trace in [&imported, &src.to_path_buf()] {
        let played = client(
            dir,
            suite,
            mode,
            &command(
                &[env!("CARGO_BIN_EXE_reel").as_ref(), "play".as_ref()],
                &[trace.into()],
            ),
            &[],
        );
        assert_eq!(
            played,
            want,
            "reel play {} answers as the server did",
            trace.display()
        );
    }
    trace_lines(&imported)
}

/// The methods of a trace's messages in direction `dir` (`"in"`, `"out"`).
pub(super) fn methods(lines: &[Value], dir: &str) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l["dir"] == dir)
        .filter_map(|l| l["raw"]["method"].as_str().map(str::to_owned))
        .collect()
}

fn mcp_vcr() -> PathBuf {
    venv_bin("mcp-vcr-venv", "mcp-vcr")
}

/// `mcp-vcr record [FLAGS] -o OUT -- SERVER` in front of the client; the client's
/// results must be those of `want`.
fn record(tmp: &Path, suite: &str, mode: &str, flags: &[&str], out: &Path, want: &str) {
    let mut words: Vec<OsString> = vec![mcp_vcr().into(), "record".into()];
    words.extend(flags.iter().map(OsString::from));
    words.extend(["-o".into(), out.into(), "--".into()]);
    words.extend(server(suite));
    let through = client(tmp, suite, mode, &words, &[]);
    assert_eq!(through, want, "mcp-vcr passes everything through");
}

#[test]
fn mcp_vcr_transcripts_of_both_eras_import_check_count_and_replay() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    for (mode, flags, file) in [
        ("legacy", &[][..], "legacy.yaml"),
        ("auto", &["--format", "ndjson"][..], "modern.ndjson"),
    ] {
        let want = client(tmp, "demo", mode, &server("demo"), &[]);
        let src = tmp.join(file);
        record(tmp, "demo", mode, flags, &src, &want);
        let text = std::fs::read_to_string(&src).unwrap();
        if file.ends_with(".yaml") {
            assert!(text.starts_with("messages:\n"), "{text}");
        } else {
            assert!(text.starts_with("{\"_type\": \"meta\""), "{text}");
        }
        let lines = imports_checks_counts_and_replays(
            &src,
            ("demo", mode),
            &want,
            &["add", "count_down", "shout"],
            &[],
        );
        let imported = &lines[0]["imported"];
        assert_eq!(lines[0]["source"], "mcp-vcr");
        assert!(
            imported["session_id"]
                .as_str()
                .is_some_and(|s| s.len() == 8),
            "{imported}"
        );
        assert!(imported["server_command"].is_array(), "{imported}");
        let first = methods(&lines, "in").into_iter().next();
        let era = if mode == "auto" {
            "server/discover"
        } else {
            "initialize"
        };
        assert_eq!(first.as_deref(), Some(era), "{mode}");
        assert_eq!(
            methods(&lines, "out")
                .iter()
                .filter(|m| *m == "notifications/progress")
                .count(),
            3,
            "count_down's progress, kept"
        );
    }
}

#[test]
fn mcp_vcr_carries_server_everything_notifications_progress_and_server_requests() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let want = client(tmp, "everything", "auto", &server("everything"), &[]);
    let src = tmp.join("everything.yaml");
    record(tmp, "everything", "auto", &[], &src, &want);
    let lines = imports_checks_counts_and_replays(
        &src,
        ("everything", "auto"),
        &want,
        &[
            "echo",
            "get-roots-list",
            "get-sum",
            "trigger-elicitation-request",
            "trigger-long-running-operation",
            "trigger-sampling-request",
        ],
        // server-everything refuses the 2026-07-28 probe; the client falls back.
        // The refused probe the client fell back from is a note, not an error.
        &[],
    );
    let out = methods(&lines, "out");
    for asked in ["sampling/createMessage", "elicitation/create", "roots/list"] {
        assert!(out.iter().any(|m| m == asked), "{asked} kept: {out:?}");
    }
    let progress = out
        .iter()
        .filter(|m| *m == "notifications/progress")
        .count();
    assert_eq!(progress, 3, "{out:?}");
    // The client's answers to the server's requests are kept too.
    let answers = lines
        .iter()
        .filter(|l| l["dir"] == "in" && l["raw"].get("result").is_some())
        .count();
    assert!(answers >= 3, "{answers} answers");
}

#[test]
fn a_reel_recording_exported_to_mcp_vcr_is_validated_and_replayed_by_mcp_vcr() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let traces = tmp.join("traces");
    let reel_bin: &OsStr = env!("CARGO_BIN_EXE_reel").as_ref();
    let rec = command(
        &[
            reel_bin,
            "rec".as_ref(),
            "--dir".as_ref(),
            traces.as_os_str(),
            "--name".as_ref(),
            "demo".as_ref(),
            "--".as_ref(),
        ],
        &server("demo"),
    );
    client(tmp, "demo", "legacy", &rec, &[]);
    let trace = only_trace(&traces);

    let exported = tmp.join("demo.yaml");
    let mut c = reel();
    c.args(["export", "vcr"])
        .arg(&trace)
        .arg("-o")
        .arg(&exported);
    let (code, _, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    let text = std::fs::read_to_string(&exported).unwrap();
    assert!(text.starts_with("messages:\n"), "{text}");

    // mcp-vcr's own schema check accepts it…
    let mut c = Command::new(mcp_vcr());
    c.arg("validate").arg(&exported).current_dir(tmp);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("is valid"), "{out}");
    // …and its replay re-drives the live server with it, every response the same…
    let mut c = Command::new(mcp_vcr());
    c.args(["replay", "--strict"])
        .arg(&exported)
        .arg("--")
        .args(server("demo"))
        .current_dir(tmp);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("Replay completed successfully"), "{out}");
    // …where another server is a regression it reports.
    let mut c = Command::new(mcp_vcr());
    c.args(["replay", "--strict"])
        .arg(&exported)
        .arg("--")
        .arg(reel_bin)
        .args(["example", "server"])
        .current_dir(tmp);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(1), "{out}{err}");

    // And reel imports the export back to the same run.
    let back = tmp.join("back.jsonl");
    let mut c = reel();
    c.args(["import", "-o"]).arg(&back).arg(&exported);
    let (code, _, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    let messages = |path: &Path| -> Vec<(String, Value)> {
        trace_lines(path)
            .into_iter()
            .filter(|l| l["dir"] == "in" || l["dir"] == "out")
            .map(|l| {
                (
                    l["dir"].as_str().unwrap_or_default().to_owned(),
                    l["raw"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(messages(&back), messages(&trace), "the same messages");
    let mut c = reel();
    c.arg("diff").arg(&trace).arg(&back);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "{out}{err}");
}
