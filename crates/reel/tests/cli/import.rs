//! `reel import`: other tools' recordings, made here by the real tools, converted into
//! traces that pass `reel check`, count right in `reel stats`, and that `reel play` serves
//! to the same client as the original server answered it. mcporter 0.12.3 (the first
//! with `record`) records calls against reel's example server.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::harness::play_http_support::run;
use crate::harness::play_support::Peers;
use crate::harness::reel;

/// mcporter 0.12.3's CLI.
fn mcporter() -> PathBuf {
    let cli = Peers::get()
        .root
        .join("mcporter-0.12.3/node_modules/mcporter/dist/cli.js");
    assert!(
        cli.exists(),
        "peers missing: run `cargo xtask peers` (looked for {})",
        cli.display()
    );
    cli
}

/// `node mcporter ARGS…` in `cwd` (its `config/mcporter.json` names the servers), with
/// `home` as HOME (recordings go to `home/.mcporter/recordings`).
fn mcporter_in(cwd: &Path, home: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let mut c = Command::new("node");
    c.arg(mcporter())
        .args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env_remove("MCPORTER_RECORD")
        .env_remove("MCPORTER_REPLAY");
    run(c)
}

fn config(dir: &Path, command: &str, args: &[&str]) {
    std::fs::create_dir_all(dir.join("config")).unwrap();
    let cfg = serde_json::json!({"mcpServers": {"demo": {"command": command, "args": args}}});
    std::fs::write(dir.join("config/mcporter.json"), cfg.to_string()).unwrap();
}

#[test]
fn an_mcporter_recording_imports_checks_counts_and_replays_to_mcporter() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let home = tmp.join("home");
    let live = tmp.join("live");
    let reel_bin = env!("CARGO_BIN_EXE_reel");
    config(&live, reel_bin, &["example", "server"]);
    // Each mcporter process starts its recording afresh: one call per recording. A
    // secret in an argument: mcporter keeps it raw; the import must not.
    let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let mcp = mcporter().display().to_string();
    for (session, call) in [
        ("sess", "demo.add a:2 b:3"),
        ("secret", "demo.echo text:$1"),
    ] {
        let script = format!("node \"$0\" call {call}");
        let (code, out, err) = mcporter_in(
            &live,
            &home,
            &["record", session, "--", "sh", "-c", &script, &mcp, secret],
        );
        assert_eq!(code, Some(0), "{out}{err}");
    }
    let recordings = home.join(".mcporter/recordings");
    let raw = std::fs::read_to_string(recordings.join("secret.ndjson")).unwrap();
    assert!(raw.contains(secret), "mcporter records raw");

    let out_dir = tmp.join("imported");
    let mut c = reel();
    c.args(["import", "--dir"])
        .arg(&out_dir)
        .arg(recordings.join("sess.ndjson"))
        .arg(recordings.join("secret.ndjson"));
    let (code, _, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        err.matches("mcporter recordings hold").count(),
        1,
        "the format's limits are said once: {err}"
    );
    let imported = |label: &str| -> PathBuf {
        std::fs::read_dir(&out_dir)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.to_string_lossy().ends_with(&format!("-{label}.jsonl")))
            .unwrap_or_else(|| panic!("no {label} trace"))
    };
    let secret_text = std::fs::read_to_string(imported("secret")).unwrap();
    assert!(!secret_text.contains(secret), "redacted on import");
    let trace = imported("sess");
    let text = std::fs::read_to_string(&trace).unwrap();
    let meta: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(meta["source"], "mcporter");
    let end: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(end["reason"], "imported");
    assert!(end.get("exitCode").is_none());

    for t in [&trace, &imported("secret")] {
        let mut c = reel();
        c.arg("check").arg(t);
        let (code, out, err) = run(c);
        assert_eq!(code, Some(0), "{out}{err}");
    }

    let mut c = reel();
    c.args(["stats", "--json"]).arg(&trace);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    let stats: Value = serde_json::from_str(&out).unwrap();
    let tools = stats["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 1, "{stats}");
    assert_eq!(
        (&tools[0]["name"], &tools[0]["calls"], &tools[0]["errors"]),
        (&"add".into(), &1.into(), &0.into())
    );

    // `reel play` of the import answers mcporter as the example server did.
    let offline = tmp.join("offline");
    config(&offline, reel_bin, &["play", trace.to_str().unwrap()]);
    let (code, out, err) = mcporter_in(&offline, &home, &["call", "demo.add", "a:2", "b:3"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("2 + 3 = 5"), "{out}");
    let (code, _, err) = mcporter_in(&offline, &home, &["call", "demo.add", "a:2", "b:4"]);
    assert_ne!(code, Some(0), "another call is a miss");
    assert!(err.contains("/params/arguments/b"), "{err}");

    // The recording itself, with no import: `reel ls` lists it, and every reading
    // command sniffs it (found by path or by run name).
    let mut c = reel();
    c.args(["ls", "--json"]).arg(&recordings);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    let listing: Value = serde_json::from_str(&out).unwrap();
    let runs = listing["runs"].as_array().unwrap();
    let sess = runs
        .iter()
        .find(|r| r["label"] == "sess")
        .expect("sess listed");
    assert_eq!(sess["source"], "mcporter", "{sess}");
    assert_eq!(sess["interrupted"], false);
    assert!(sess["counts"]["in"].as_u64() >= Some(2), "{sess}");
    assert_eq!(
        runs.len(),
        2,
        "both recordings, not mcporter's config files: {listing}"
    );
    let mut c = reel();
    c.args(["stats", "sess", "--dir"]).arg(&recordings);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "by run name: {err}");
    assert!(out.contains("add"), "{out}");
    let source = recordings.join("sess.ndjson");
    let mut c = reel();
    c.args(["stats", "--json"]).arg(&source);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("is another tool's recording (mcporter), read through a redacted conversion"),
        "{err}"
    );
    let direct: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        direct["tools"], stats["tools"],
        "the same counts as the import's"
    );
    let mut c = reel();
    c.arg("check").arg(&source);
    assert_eq!(run(c).0, Some(0));
    let direct_play = tmp.join("direct");
    config(&direct_play, reel_bin, &["play", source.to_str().unwrap()]);
    let (code, out, err) = mcporter_in(&direct_play, &home, &["call", "demo.add", "a:2", "b:3"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("2 + 3 = 5"), "{out}");
    let mut c = reel();
    c.args(["diff"]).arg(&source).arg(&trace);
    let (code, out, err) = run(c);
    assert_eq!(
        code,
        Some(0),
        "the recording and its import are the same run: {out}{err}"
    );
}

#[test]
fn a_file_reel_cannot_read_is_refused_with_the_formats_named() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("notes.txt");
    std::fs::write(&src, "just text\n").unwrap();
    let mut c = reel();
    c.args(["import", "--dir"])
        .arg(tmp.path().join("out"))
        .arg(&src);
    let (code, _, err) = run(c);
    assert_eq!(code, Some(66), "{err}");
    assert!(err.contains("formats: mcporter"), "{err}");
    let mut c = reel();
    c.args(["import", "--from", "nope"]).arg(&src);
    let (code, _, err) = run(c);
    assert_eq!(code, Some(64), "{err}");

    // A file name with a line break cannot forge a line of reel's own on stderr.
    let evil = tmp.path().join("x\nreel: 99 traces imported\n.txt");
    std::fs::write(&evil, "just text\n").unwrap();
    let mut c = reel();
    c.args(["import", "--dir"])
        .arg(tmp.path().join("out"))
        .arg(&evil);
    let (code, _, err) = run(c);
    assert_eq!(code, Some(66), "{err}");
    assert!(
        !err.lines().any(|l| l.starts_with("reel: 99 traces")),
        "{err}"
    );
    assert!(err.contains("x\\nreel: 99 traces imported\\n.txt"), "{err}");
}

#[test]
fn a_reel_recording_exported_to_mcporter_is_served_by_mcporter_replay() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let home = tmp.join("home");
    let traces = tmp.join("traces");
    let reel_bin = env!("CARGO_BIN_EXE_reel");
    let mcp = mcporter().display().to_string();
    // mcporter's client, recorded by `reel rec` around reel's example server.
    config(
        tmp,
        reel_bin,
        &[
            "rec",
            "--dir",
            traces.to_str().unwrap(),
            "--name",
            "demo",
            "--",
            reel_bin,
            "example",
            "server",
        ],
    );
    let (code, out, err) = mcporter_in(tmp, &home, &["call", "demo.add", "a:2", "b:3"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let trace = crate::harness::play_http_support::only_trace(&traces);

    let recordings = home.join(".mcporter/recordings");
    std::fs::create_dir_all(&recordings).unwrap();
    let exported = recordings.join("roundtrip.ndjson");
    let mut c = reel();
    c.args(["export", "mcporter"])
        .arg(&trace)
        .arg("-o")
        .arg(&exported);
    let (code, _, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    // mcporter replays it for its own client, with no server started…
    let script = "node \"$0\" call demo.add a:2 b:3";
    let (code, out, err) = mcporter_in(
        tmp,
        &home,
        &["replay", "roundtrip", "--", "sh", "-c", script, &mcp],
    );
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("2 + 3 = 5"), "{out}");
    // …and refuses another call, as it does its own recordings.
    let script = "node \"$0\" call demo.add a:2 b:4";
    let (code, _, err) = mcporter_in(
        tmp,
        &home,
        &["replay", "roundtrip", "--", "sh", "-c", script, &mcp],
    );
    assert_ne!(code, Some(0));
    assert!(err.contains("Replay mismatch"), "{err}");

    // And reel imports the export back to the same run.
    let back = tmp.join("back.jsonl");
    let mut c = reel();
    c.args(["import", "-o"]).arg(&back).arg(&exported);
    assert_eq!(run(c).0, Some(0));
    let mut c = reel();
    c.arg("diff").arg(&trace).arg(&back);
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "{out}{err}");
}

/// An mcporter recording of one `tools/call` whose argument carries `secret`.
fn recording_with(secret: &str) -> String {
    [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"SECRET"}},"_meta":{"dir":"send","server":"demo","ts":"2026-11-30T06:34:05.590Z"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"SECRET"}]},"_meta":{"dir":"recv","server":"demo","ts":"2026-11-30T06:34:05.593Z"}}"#,
    ]
    .map(|l| l.replace("SECRET", secret) + "\n")
    .concat()
}

/// Import and export name formats from one list: `export` takes the names `import
/// --from` takes, and the old spellings (`cassette`, `vcr`) still mean the same formats
/// on both, with the same output.
#[test]
fn import_and_export_take_the_same_format_names_and_the_old_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = crate::harness::workspace().join("examples/everything-demo.jsonl");
    for (name, alias) in [("mcp-cassette", "cassette"), ("mcp-vcr", "vcr")] {
        let mut outs = Vec::new();
        for spelt in [name, alias] {
            let out = tmp.path().join(format!("{spelt}.out"));
            let mut c = reel();
            c.args(["export", spelt]).arg(&trace).arg("-o").arg(&out);
            let (code, _, err) = run(c);
            assert_eq!(code, Some(0), "export {spelt}: {err}");
            outs.push(std::fs::read(&out).unwrap());
            let imported = tmp.path().join(format!("{spelt}.jsonl"));
            let mut c = reel();
            c.args(["import", "--from", spelt])
                .arg(&out)
                .arg("-o")
                .arg(&imported);
            let (code, _, err) = run(c);
            assert_eq!(code, Some(0), "import --from {spelt}: {err}");
        }
        assert!(outs[0] == outs[1], "{name} and {alias} write the same file");
    }
    let mut c = reel();
    c.args(["export", "nope"]).arg(&trace);
    let (code, _, err) = run(c);
    assert_eq!(code, Some(64), "{err}");
    assert!(
        err.contains("mcporter, mcptape, mcp-cassette, mcp-vcr, mmsp, otlp"),
        "the same names listed: {err}"
    );
}

#[test]
fn exports_of_a_file_read_directly_are_redacted_and_leave_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    // A name no other test's conversion has: the check below looks for it.
    let src = tmp.join("export-redaction-check.ndjson");
    std::fs::write(&src, recording_with(secret)).unwrap();
    // A conversion a killed reel left behind (its process is gone) is swept.
    let stale = std::env::temp_dir().join("reel-read-4194303-00000000deadbeef");
    std::fs::create_dir_all(&stale).unwrap();
    for format in ["cassette", "vcr", "mcporter"] {
        let out = tmp.join(format!("out.{format}"));
        let mut c = reel();
        c.args(["export", format]).arg(&src).arg("-o").arg(&out);
        let (code, _, err) = run(c);
        assert_eq!(code, Some(0), "{format}: {err}");
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(
            !text.contains(secret),
            "{format}: the conversion is redacted"
        );
        assert!(text.contains("echo"), "{format}: {text}");
        assert!(err.contains("redacted conversion"), "{err}");
    }
    assert!(!stale.exists(), "the stale conversion was swept");
    let mine: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("reel-read-"))
        .filter(|e| e.path().join("export-redaction-check.jsonl").exists())
        .collect();
    assert!(mine.is_empty(), "no conversion outlives its command");

    // An export that fails leaves no file; one that would overwrite is refused.
    let llm = tmp.join("llm.jsonl");
    std::fs::write(
        &llm,
        "{\"v\":1,\"type\":\"meta\",\"startedAt\":\"2026-11-30T06:34:05.590Z\",\"kind\":\"llm\"}\n\
         {\"t\":\"2026-11-30T06:34:05.590Z\",\"type\":\"turn\",\"role\":\"user\",\"blocks\":[{\"type\":\"text\",\"text\":\"hi\"}]}\n",
    )
    .unwrap();
    for format in ["cassette", "vcr", "mcporter"] {
        let out = tmp.join(format!("none.{format}"));
        let mut c = reel();
        c.args(["export", format]).arg(&llm).arg("-o").arg(&out);
        let (code, _, err) = run(c);
        assert_eq!(code, Some(66), "{format}: nothing to export: {err}");
        assert!(!out.exists(), "{format}: no file left behind");
        assert!(
            std::fs::read_dir(tmp)
                .unwrap()
                .flatten()
                .all(|e| !e.file_name().to_string_lossy().ends_with(".partial")),
            "no partial file left behind"
        );
    }
    let mut c = reel();
    c.args(["export", "cassette"])
        .arg(&src)
        .arg("-o")
        .arg(tmp.join("out.cassette"));
    let (code, _, err) = run(c);
    assert_eq!(code, Some(73), "an existing -o is not overwritten: {err}");
}

#[test]
fn an_mcptape_export_names_its_run_from_the_label_and_never_leaves_its_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    let src = tmp.path().join("raw.ndjson");
    std::fs::write(&src, recording_with("x")).unwrap();
    let trace = tmp.path().join("evil.jsonl");
    let mut c = reel();
    c.args(["import", "--name", "../../escape/run"])
        .arg("-o")
        .arg(&trace)
        .arg(&src);
    let (code, _, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    let mut c = reel();
    c.args(["export", "mcptape"]).arg(&trace).current_dir(&cwd);
    let (code, _, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    assert!(!tmp.path().join("escape").exists(), "{err}");
    let runs: Vec<String> = std::fs::read_dir(cwd.join(".mcptape/runs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(runs, ["------escape-run"], "one safe name: {err}");
}

#[test]
fn several_sources_import_past_one_that_is_not_a_recording() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let a = tmp.join("a.ndjson");
    std::fs::write(&a, recording_with("x")).unwrap();
    // With a byte order mark, as some editors save it.
    let b = tmp.join("b.ndjson");
    std::fs::write(&b, format!("\u{feff}{}", recording_with("y"))).unwrap();
    let junk = tmp.join("notes.txt");
    std::fs::write(&junk, "just some notes\n").unwrap();
    // Looks like a cassette (recorded_at, messages) but holds no JSON-RPC message.
    let chat = tmp.join("chat.json");
    std::fs::write(
        &chat,
        r#"{"format_version": 3, "recorded_at": "2026-11-30T06:34:05Z", "messages": []}"#,
    )
    .unwrap();
    let out = tmp.join("out");
    let mut c = reel();
    c.arg("import")
        .arg("--dir")
        .arg(&out)
        .args([&a, &junk, &chat, &b]);
    let (code, _, err) = run(c);
    assert_eq!(code, Some(66), "{err}");
    assert!(err.contains("notes.txt"), "{err}");
    assert!(err.contains("2 traces imported"), "{err}");
    let written: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        written.len(),
        2,
        "a and b, not the empty look-alike: {written:?}"
    );
    assert!(
        written
            .iter()
            .all(|n| n.ends_with("-a.jsonl") || n.ends_with("-b.jsonl"))
    );
}

#[test]
fn reel_diff_compares_a_cassette_with_a_transcript_directly() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let export = |src: &Path, format: &str, out: &Path| {
        let mut c = reel();
        c.args(["export", format]).arg(src).arg("-o").arg(out);
        let (code, _, err) = run(c);
        assert_eq!(code, Some(0), "{format}: {err}");
    };
    let same = tmp.join("same.ndjson");
    std::fs::write(&same, recording_with("hello")).unwrap();
    let other = tmp.join("other.ndjson");
    std::fs::write(&other, recording_with("goodbye")).unwrap();
    let cassette = tmp.join("a.mcp.json");
    export(&same, "cassette", &cassette);
    let yaml = tmp.join("b.yaml");
    export(&same, "vcr", &yaml);
    let drifted = tmp.join("c.yaml");
    export(&other, "vcr", &drifted);
    let diff = |a: &Path, b: &Path| {
        let mut c = reel();
        c.arg("diff").arg(a).arg(b);
        run(c)
    };
    let (code, out, err) = diff(&cassette, &yaml);
    assert_eq!(code, Some(0), "the same session in two formats: {out}{err}");
    assert!(
        err.contains("(mcp-cassette)") && err.contains("(mcp-vcr)"),
        "{err}"
    );
    let (code, out, err) = diff(&cassette, &drifted);
    assert_ne!(
        code,
        Some(0),
        "another argument and result drift: {out}{err}"
    );
    assert!(out.contains("tools/call"), "{out}");
}
