//! `reel check` end to end: the built binary on traces written into a temp dir, one
//! test per rule and per adversarial input the Foundation issue lists, plus the real
//! fitness-report traces from `shared/fixtures` (which must pass with exit 0).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness::peer_runs;
use crate::harness::sandbox::Sandbox;

const META: &str = r#"{"v":1,"type":"meta","startedAt":"2026-05-12T23:00:00.000Z","label":"t","command":["srv"],"redaction":{"rules":"reel/1","defaults":true}}"#;
const END: &str = r#"{"t":"2026-05-12T23:00:01.000Z","type":"end","exitCode":0,"durationMs":1000}"#;
const T: &str = "2026-05-12T23:00:00.500Z";

/// A trace in the sandbox: META, the given lines, END, each newline-terminated.
fn trace(sb: &Sandbox, name: &str, lines: &[&str]) -> PathBuf {
    sb.write(name, lines_of(META, lines, Some(END)))
}

/// `reel check --json FILE…`: exit code and the document.
fn check_json(sb: &Sandbox, files: &[&Path]) -> (i32, Value) {
    let mut args = vec!["check".to_owned(), "--json".to_owned()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = sb.reel(&refs);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().expect("exit code"), doc)
}

/// Checks one file; returns the exit code and that file's report.
fn check_one(sb: &Sandbox, file: &Path) -> (i32, Value) {
    let (code, doc) = check_json(sb, &[file]);
    (code, doc["files"][0].clone())
}

fn lines_of(first: &str, lines: &[&str], last: Option<&str>) -> String {
    let mut s = format!("{first}\n");
    for l in lines {
        s.push_str(l);
        s.push('\n');
    }
    if let Some(last) = last {
        s.push_str(last);
        s.push('\n');
    }
    s
}

fn msg(dir: &str, raw: &str) -> String {
    format!(r#"{{"t":"{T}","dir":"{dir}","raw":{raw}}}"#)
}

/// (rule, line) of every listed problem.
fn problems(report: &Value) -> Vec<(String, Option<u64>)> {
    report["problems"]
        .as_array()
        .expect("problems array")
        .iter()
        .map(|p| {
            (
                p["rule"].as_str().expect("rule").to_owned(),
                p["line"].as_u64(),
            )
        })
        .collect()
}

fn severity_of(report: &Value, rule: &str) -> String {
    report["problems"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["rule"] == rule))
        .and_then(|p| p["severity"].as_str())
        .unwrap_or_else(|| panic!("no {rule} in {report}"))
        .to_owned()
}

fn message_of(report: &Value, rule: &str) -> String {
    report["problems"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["rule"] == rule))
        .and_then(|p| p["message"].as_str())
        .unwrap_or_else(|| panic!("no {rule} in {report}"))
        .to_owned()
}

/// Asserts exactly these (rule, line) problems and this exit code.
fn expect(sb: &Sandbox, file: &Path, code: i32, want: &[(&str, Option<u64>)]) -> Value {
    let (got_code, report) = check_one(sb, file);
    let want: Vec<(String, Option<u64>)> =
        want.iter().map(|(r, l)| ((*r).to_owned(), *l)).collect();
    assert_eq!(problems(&report), want, "{report:#}");
    assert_eq!(got_code, code, "{report:#}");
    report
}

mod clean {
    use super::*;

    #[test]
    fn a_valid_trace_exits_0_without_problems() {
        let sb = Sandbox::new();
        let f = trace(
            &sb,
            "ok.jsonl",
            &[
                &msg(
                    "in",
                    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#,
                ),
                &msg(
                    "out",
                    r#"{"jsonrpc":"2.0","id":0,"result":{"capabilities":{}}}"#,
                ),
                &msg(
                    "in",
                    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                ),
                &msg(
                    "out",
                    r#"{"jsonrpc":"2.0","id":"s1","method":"roots/list"}"#,
                ),
                &msg("in", r#"{"jsonrpc":"2.0","id":"s1","result":{"roots":[]}}"#),
                &msg("in", r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#),
                &msg(
                    "out",
                    r#"[{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}]"#,
                ),
                r#"{"t":"2026-05-12T23:00:00.600Z","dir":"event","kind":"reel.stderr","text":"hi"}"#,
                r#"{"t":"2026-05-12T23:00:00.700Z","type":"turn","role":"assistant","model":"m","blocks":[{"type":"thinking","thinking":"..."},{"type":"tool_use","id":"u1","name":"Read","input":{}}],"usage":{"input_tokens":1,"output_tokens":10,"thinking_tokens":10}}"#,
                r#"{"t":"2026-05-12T23:00:00.800Z","type":"turn","role":"user","blocks":[{"type":"tool_result","tool_use_id":"u1","content":"ok","is_error":false}]}"#,
            ],
        );
        let report = expect(&sb, &f, 0, &[]);
        assert_eq!(report["lines"], 12);
        assert_eq!(report["sessions"], 1);
        assert_eq!(report["errors"], 0);
        assert_eq!(report["warnings"], 0);
        assert_eq!(report["infos"], 0);
    }

    #[test]
    fn human_output_names_file_line_severity_and_rule() {
        let sb = Sandbox::new();
        let f = trace(&sb, "h.jsonl", &["[1]"]);
        let out = sb.reel(&["check", f.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1));
        let text = String::from_utf8(out.stdout).unwrap();
        let first = text.lines().next().unwrap();
        assert!(
            first.starts_with(&format!("{}:2: error[not-object]: ", f.display())),
            "{text}"
        );
        assert!(
            !text.contains('\x1b'),
            "no colour when NO_COLOR is set: {text}"
        );
        assert!(
            text.contains(&format!(
                "{}: FAIL: 1 error, 0 warnings, 0 info in 3 lines (1 session)",
                f.display()
            )),
            "{text}"
        );
    }

    #[test]
    fn min_severity_filters_the_listing_not_the_verdict() {
        let sb = Sandbox::new();
        let f = sb.write("w.jsonl", format!("{META}\n[1]\n"));
        let out = sb.reel(&["check", "--min-severity", "error", f.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1));
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("error[not-object]"), "{text}");
        assert!(!text.contains("warning[no-end]"), "{text}");
        assert!(text.contains("1 error, 1 warning"), "{text}");
    }

    #[test]
    fn list_rules_names_every_rule() {
        let sb = Sandbox::new();
        let out = sb.reel(&["check", "--list-rules"]);
        assert_eq!(out.status.code(), Some(0));
        let text = String::from_utf8(out.stdout).unwrap();
        for id in [
            "meta-missing",
            "torn-last-line",
            "unknown-kind",
            "history-elided-mismatch",
        ] {
            assert!(text.contains(id), "{id} missing from:\n{text}");
        }
    }

    #[test]
    fn rotated_companions_are_one_trace() {
        let sb = Sandbox::new();
        sb.write(
            "r.jsonl.1",
            lines_of(
                META,
                &[&msg("in", r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)],
                None,
            ),
        );
        let base = sb.write(
            "r.jsonl",
            lines_of(
                &msg("out", r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
                &[],
                Some(END),
            ),
        );
        let report = expect(&sb, &base, 0, &[]);
        assert_eq!(report["files"].as_array().unwrap().len(), 2);
        assert_eq!(report["lines"], 4);
    }

    #[test]
    fn floods_are_listed_up_to_the_limit_then_counted() {
        let sb = Sandbox::new();
        let many: Vec<String> = (0..10).map(|_| "42".to_owned()).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let f = trace(&sb, "flood.jsonl", &refs);
        let out = sb.reel(&[
            "check",
            "--json",
            "--max-per-rule",
            "3",
            f.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(1));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let report = &doc["files"][0];
        assert_eq!(report["errors"], 10);
        let listed = problems(report);
        assert_eq!(listed.len(), 4, "{report:#}");
        assert_eq!(listed[3], ("not-object".to_owned(), None));
        assert_eq!(report["problems"][3]["count"], 7);
    }
}

mod errors {
    use super::*;

    #[test]
    fn meta_missing() {
        let sb = Sandbox::new();
        let f = sb.write(
            "m.jsonl",
            lines_of(
                &msg("in", r#"{"jsonrpc":"2.0","method":"x"}"#),
                &[],
                Some(END),
            ),
        );
        expect(&sb, &f, 1, &[("meta-missing", Some(1))]);
    }

    #[test]
    fn meta_incomplete_names_each_missing_member() {
        let sb = Sandbox::new();
        let f = sb.write(
            "m.jsonl",
            lines_of(
                r#"{"type":"meta","startedAt":"2026-05-12T23:00:00.000Z"}"#,
                &[],
                Some(END),
            ),
        );
        let r = expect(
            &sb,
            &f,
            1,
            &[
                ("meta-incomplete", Some(1)),
                ("meta-incomplete", Some(1)),
                ("meta-incomplete", Some(1)),
                ("not-redacted", Some(1)),
            ],
        );
        let text = r["problems"].to_string();
        for member in ["`v`", "`label`", "`command`"] {
            assert!(text.contains(member), "{member}: {text}");
        }
    }

    #[test]
    fn meta_members_of_the_wrong_type() {
        let sb = Sandbox::new();
        let f = sb.write(
            "m.jsonl",
            lines_of(
                r#"{"v":"1","type":"meta","startedAt":"2026-05-12T23:00:00.000Z","label":"x","command":"srv"}"#,
                &[],
                Some(END),
            ),
        );
        expect(
            &sb,
            &f,
            1,
            &[
                ("meta-incomplete", Some(1)),
                ("meta-incomplete", Some(1)),
                ("not-redacted", Some(1)),
            ],
        );
    }

    #[test]
    fn meta_version() {
        let sb = Sandbox::new();
        let f = sb.write(
            "m.jsonl",
            lines_of(&META.replace("\"v\":1", "\"v\":2"), &[], Some(END)),
        );
        expect(&sb, &f, 1, &[("meta-version", Some(1))]);
    }

    #[test]
    fn not_json_in_the_middle() {
        let sb = Sandbox::new();
        let f = trace(&sb, "j.jsonl", &[r#"{"t":"#]);
        expect(&sb, &f, 1, &[("not-json", Some(2))]);
    }

    #[test]
    fn non_object_lines() {
        let sb = Sandbox::new();
        let f = trace(
            &sb,
            "o.jsonl",
            &["[1,2]", r#""a string""#, "42", "null", "true"],
        );
        let r = expect(
            &sb,
            &f,
            1,
            &[
                ("not-object", Some(2)),
                ("not-object", Some(3)),
                ("not-object", Some(4)),
                ("not-object", Some(5)),
                ("not-object", Some(6)),
            ],
        );
        assert!(message_of(&r, "not-object").contains("array"));
    }

    #[test]
    fn invalid_utf8_inside_a_string() {
        let sb = Sandbox::new();
        let mut bytes = format!("{META}\n").into_bytes();
        bytes.extend_from_slice(
            br#"{"t":"2026-05-12T23:00:00.500Z","dir":"in","raw":{"jsonrpc":"2.0","method":"x","params":{"s":"a"#,
        );
        bytes.extend_from_slice(b"\xff\xfe");
        bytes.extend_from_slice(b"b\"}}}\n");
        bytes.extend_from_slice(format!("{END}\n").as_bytes());
        let f = sb.write("u.jsonl", bytes);
        let r = expect(&sb, &f, 1, &[("invalid-utf8", Some(2))]);
        assert!(message_of(&r, "invalid-utf8").contains("column"));
    }

    #[test]
    fn bad_timestamps_say_the_value() {
        let sb = Sandbox::new();
        let f = trace(
            &sb,
            "t.jsonl",
            &[
                r#"{"t":"yesterday","dir":"in","raw":{"jsonrpc":"2.0","method":"a"}}"#,
                r#"{"dir":"in","raw":{"jsonrpc":"2.0","method":"a"}}"#,
                r#"{"t":"2026-05-13T01:00:00.000+02:00","dir":"in","raw":{"jsonrpc":"2.0","method":"a"}}"#,
                r#"{"t":"2026-05-12T23:00:00Z","dir":"in","raw":{"jsonrpc":"2.0","method":"a"}}"#,
            ],
        );
        let r = expect(
            &sb,
            &f,
            1,
            &[
                ("bad-timestamp", Some(2)),
                ("bad-timestamp", Some(3)),
                ("bad-timestamp", Some(4)),
                ("timestamp-not-canonical", Some(5)),
            ],
        );
        assert!(message_of(&r, "bad-timestamp").contains("\"yesterday\""));
        assert_eq!(severity_of(&r, "timestamp-not-canonical"), "warning");
    }

    #[test]
    fn message_line_without_dir() {
        let sb = Sandbox::new();
        let f = trace(
            &sb,
            "d.jsonl",
            &[
                &format!(r#"{{"t":"{T}","raw":{{"jsonrpc":"2.0","method":"a"}}}}"#),
                &format!(r#"{{"t":"{T}","dir":7,"raw":{{"jsonrpc":"2.0","method":"a"}}}}"#),
            ],
        );
        expect(
            &sb,
            &f,
            1,
            &[("missing-dir", Some(2)), ("missing-dir", Some(3))],
        );
    }

    #[test]
    fn message_line_without_raw() {
        let sb = Sandbox::new();
        let f = trace(&sb, "r.jsonl", &[&format!(r#"{{"t":"{T}","dir":"out"}}"#)]);
        expect(&sb, &f, 1, &[("missing-raw", Some(2))]);
    }

    #[test]
    fn line_after_end() {
        let sb = Sandbox::new();
        let f = sb.write(
            "e.jsonl",
            lines_of(
                META,
                &[END],
                Some(&msg("in", r#"{"jsonrpc":"2.0","method":"late"}"#)),
            ),
        );
        expect(&sb, &f, 1, &[("line-after-end", Some(3))]);
    }

    #[test]
    fn history_elided_that_verifies_false() {
        let sb = Sandbox::new();
        let body = r#"{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}"#;
        let req = sha256_hex(body.as_bytes());
        let event = format!(
            r#"{{"t":"{T}","dir":"event","kind":"llm.request","source":"llm","raw":{{"request_sha256":"{req}","body":{}}}}}"#,
            serde_json::to_string(body).unwrap()
        );
        let turn = format!(
            r#"{{"t":"{T}","type":"turn","role":"user","blocks":[{{"type":"history_elided","count":1,"sha256":"{}","request_sha256":"{req}"}}]}}"#,
            "ab".repeat(32)
        );
        let f = trace(&sb, "h.jsonl", &[&event, &turn]);
        let r = expect(&sb, &f, 1, &[("history-elided-mismatch", Some(3))]);
        assert!(message_of(&r, "history-elided-mismatch").contains("line 2"));
    }

    #[test]
    fn history_elided_that_verifies_true_is_clean() {
        let sb = Sandbox::new();
        // The research vector (mcp-tape.md §1.6), body as an object this time.
        let body = r#"{"model":"claude-example-1","max_tokens":64,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"hello"}]},{"role":"user","content":"again"}]}"#;
        let req = "449e61b27ecea703a853ef3df1580c3998613a43bc9479d0d7c98a9611467620";
        let event = format!(
            r#"{{"t":"{T}","dir":"event","kind":"llm.exchange","raw":{{"request_sha256":"{req}","body":{body}}}}}"#
        );
        let turn = format!(
            r#"{{"t":"{T}","type":"turn","role":"user","blocks":[{{"type":"history_elided","count":2,"sha256":"06b6136d214f5714bd5894f383a5fd9b13a0750810e13d8f177b5e8607472dae","request_sha256":"{req}"}},{{"type":"text","text":"again"}}]}}"#
        );
        let f = trace(&sb, "h.jsonl", &[&turn, &event]);
        expect(&sb, &f, 0, &[]);
    }

    #[test]
    fn usage_invariant() {
        let sb = Sandbox::new();
        let f = trace(
            &sb,
            "u.jsonl",
            &[&format!(
                r#"{{"t":"{T}","type":"turn","role":"assistant","blocks":[],"usage":{{"input_tokens":1,"output_tokens":5,"thinking_tokens":9}}}}"#
            )],
        );
        let r = expect(&sb, &f, 1, &[("usage-invariant", Some(2))]);
        assert!(message_of(&r, "usage-invariant").contains("(9)"));
    }

    #[test]
    fn turn_without_role_or_blocks() {
        let sb = Sandbox::new();
        let f = trace(
            &sb,
            "t.jsonl",
            &[
                &format!(r#"{{"t":"{T}","type":"turn","blocks":[]}}"#),
                &format!(r#"{{"t":"{T}","type":"turn","role":"user"}}"#),
            ],
        );
        expect(
            &sb,
            &f,
            1,
            &[("turn-incomplete", Some(2)), ("turn-incomplete", Some(3))],
        );
    }

    #[test]
    fn end_without_duration() {
        let sb = Sandbox::new();
        let f = sb.write(
            "e.jsonl",
            lines_of(
                META,
                &[],
                Some(r#"{"t":"2026-05-12T23:00:01.000Z","type":"end","exitCode":0}"#),
            ),
        );
        expect(&sb, &f, 1, &[("end-incomplete", Some(2))]);
    }

    #[test]
    fn an_end_without_exit_code_or_reason_is_not_an_error() {
        let sb = Sandbox::new();
        let f = sb.write(
            "e.jsonl",
            lines_of(
                META,
                &[],
                Some(r#"{"t":"2026-05-12T23:00:01.000Z","type":"end","durationMs":1}"#),
            ),
        );
        let r = expect(&sb, &f, 0, &[("end-without-status", Some(2))]);
        assert_eq!(severity_of(&r, "end-without-status"), "info");
    }

    #[test]
    fn an_empty_file_has_no_meta() {
        let sb = Sandbox::new();
        let f = sb.write("empty.jsonl", "");
        let r = expect(&sb, &f, 1, &[("meta-missing", None)]);
        assert!(message_of(&r, "meta-missing").contains("empty file"));
    }
}

mod warnings {
    use super::*;

    #[test]
    fn an_exit_code_without_a_wrapped_process_is_a_warning() {
        let sb = Sandbox::new();
        let meta = r#"{"v":1,"type":"meta","startedAt":"2026-05-12T23:00:00.000Z","label":"l","command":[],"kind":"llm","redaction":{"rules":"reel/1","defaults":true}}"#;
        let f = sb.write(
            "e.jsonl",
            lines_of(
                meta,
                &[],
                Some(
                    r#"{"t":"2026-05-12T23:00:01.000Z","type":"end","exitCode":0,"durationMs":1}"#,
                ),
            ),
        );
        let r = expect(&sb, &f, 0, &[("exit-without-process", Some(2))]);
        assert_eq!(severity_of(&r, "exit-without-process"), "warning");
        let f = sb.write(
            "r.jsonl",
            lines_of(
                meta,
                &[],
                Some(r#"{"t":"2026-05-12T23:00:01.000Z","type":"end","reason":"producer_shutdown","durationMs":1}"#),
            ),
        );
        expect(&sb, &f, 0, &[]);
    }

    #[test]
    fn a_meta_only_file_has_no_end() {
        let sb = Sandbox::new();
        let f = sb.write("m.jsonl", format!("{META}\n"));
        let r = expect(&sb, &f, 0, &[("no-end", Some(1))]);
        assert!(message_of(&r, "no-end").contains("interrupted"));
    }

    #[test]
    fn torn_last_line_is_an_interrupted_recording() {
        let sb = Sandbox::new();
        let f = sb.write(
            "torn.jsonl",
            format!(
                r#"{META}{}{}"#,
                "\n", r#"{"t":"2026-05-12T23:00:00.500Z","dir":"in","raw":{"jsonrpc":"2.0","#
            ),
        );
        let r = expect(
            &sb,
            &f,
            0,
            &[("torn-last-line", Some(2)), ("no-end", Some(2))],
        );
        assert_eq!(severity_of(&r, "torn-last-line"), "warning");
    }

    #[test]
    fn a_torn_line_in_the_middle_is_an_error() {
        let sb = Sandbox::new();
        let f = trace(
            &sb,
            "mid.jsonl",
            &[r#"{"t":"2026-05-12T23:00:00.500Z","dir":"in","raw":{"#],
        );
        expect(&sb, &f, 1, &[("not-json", Some(2))]);
    }

    #[test]
    fn unanswered_requests_are_listed_with_line_and_method() {
        let sb = Sandbox::new();
        let f = trace(
            &sb,
            "u.jsonl",
            &[
                &msg(
                    "in",
                    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#,
                ),
                &msg("in", r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#),
                &msg("out", r#"{"jsonrpc":"2.0","id":2,"result":{}}"#),
            ],
        );
        let r = expect(&sb, &f, 0, &[("unanswered-request", Some(2))]);
        assert!(message_of(&r, "unanswered-request").contains("tools/call"));
    }

    #[test]
    fn responses_without_a_request() {
        let sb = Sandbox::new();
        let f = trace(
            &sb,
            "o.jsonl",
            &[&msg("out", r#"{"jsonrpc":"2.0","id":9,"result":{}}"#)],
        );
        expect(&sb, &f, 0, &[("orphan-response", Some(2))]);
    }

    #[test]
    fn duplicate_pending_ids() {
        let sb = Sandbox::new();
        let f = trace(
            &sb,
            "d.jsonl",
            &[
                &msg("in", r#"{"jsonrpc":"2.0","id":1,"method":"a"}"#),
                &msg("in", r#"{"jsonrpc":"2.0","id":1,"method":"b"}"#),
                &msg("out", r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            ],
        );
        let r = expect(&sb, &f, 0, &[("duplicate-request-id", Some(3))]);
        assert!(message_of(&r, "duplicate-request-id").contains("line 2"));
    }

    #[test]
    fn raw_that_is_not_json_rpc() {
        let sb = Sandbox::new();
        let f = trace(
            &sb,
            "n.jsonl",
            &[
                &msg("in", r#"{"id":1,"method":"a"}"#),
                &msg("out", r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
                &msg("in", r#"{"jsonrpc":"2.0","id":2}"#),
                &msg("in", "42"),
                &msg("in", "[]"),
                &msg("in", r#"[{"jsonrpc":"2.0","method":"ok"},"nope"]"#),
            ],
        );
        expect(
            &sb,
            &f,
            0,
            &[
                ("not-jsonrpc", Some(2)),
                ("not-jsonrpc", Some(4)),
                ("not-jsonrpc", Some(5)),
                ("not-jsonrpc", Some(6)),
                ("not-jsonrpc", Some(7)),
            ],
        );
    }

    #[test]
    fn echoed_turns_carrying_model_or_usage() {
        let sb = Sandbox::new();
        let f = trace(
            &sb,
            "e.jsonl",
            &[&format!(
                r#"{{"t":"{T}","type":"turn","role":"assistant","echoed":true,"model":"m","blocks":[]}}"#
            )],
        );
        expect(&sb, &f, 0, &[("echoed-with-generation", Some(2))]);
    }

    #[test]
    fn several_sessions_in_one_file() {
        let sb = Sandbox::new();
        let f = sb.write("s.jsonl", format!("{META}\n{END}\n{META}\n{END}\n"));
        let r = expect(&sb, &f, 0, &[("several-sessions", Some(3))]);
        assert_eq!(r["sessions"], 2);
    }

    #[test]
    fn a_new_session_before_the_end_leaves_the_first_unended() {
        let sb = Sandbox::new();
        let f = sb.write("s.jsonl", format!("{META}\n{META}\n{END}\n"));
        expect(
            &sb,
            &f,
            0,
            &[("no-end", Some(1)), ("several-sessions", Some(2))],
        );
    }
}

mod tolerated {
    use super::*;

    #[test]
    fn unknown_types_dirs_kinds_and_blocks_are_info_only() {
        let sb = Sandbox::new();
        let f = trace(
            &sb,
            "u.jsonl",
            &[
                &format!(r#"{{"t":"{T}","type":"bookmark","note":"x"}}"#),
                &format!(r#"{{"t":"{T}","type":"bookmark"}}"#),
                &format!(r#"{{"t":"{T}","dir":"sideways","raw":{{}}}}"#),
                &format!(r#"{{"t":"{T}","dir":"event","kind":"rcan.INVOKE","raw":{{}}}}"#),
                &format!(r#"{{"t":"{T}","dir":"telemetry","kind":"rcan.INVOKE","raw":{{}}}}"#),
                &format!(
                    r#"{{"t":"{T}","type":"turn","role":"assistant","blocks":[{{"type":"redacted_thinking","data":"x"}},{{"type":"image"}}]}}"#
                ),
            ],
        );
        let r = expect(
            &sb,
            &f,
            0,
            &[
                ("unknown-type", Some(2)),
                ("unknown-dir", Some(4)),
                ("unknown-kind", Some(5)),
                ("unknown-block-type", Some(7)),
                ("unknown-block-type", Some(7)),
            ],
        );
        assert_eq!(r["infos"], 5);
        assert_eq!(r["problems"][0]["count"], 2);
        assert_eq!(r["problems"][2]["count"], 2);
    }

    #[test]
    fn a_64_mb_line_is_checked_without_panic() {
        let sb = Sandbox::new();
        let big = "x".repeat(64 << 20);
        let request = msg(
            "in",
            &format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"s":"{big}"}}}}}}"#
            ),
        );
        drop(big);
        let f = trace(
            &sb,
            "big.jsonl",
            &[
                &request,
                &msg("out", r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            ],
        );
        drop(request);
        let r = expect(&sb, &f, 0, &[]);
        assert!(r["bytes"].as_u64().unwrap() > 64 << 20);
    }

    #[test]
    fn crlf_and_a_bom_are_tolerated() {
        let sb = Sandbox::new();
        let f = sb.write("c.jsonl", format!("\u{feff}{META}\r\n{END}\r\n"));
        expect(&sb, &f, 0, &[]);
    }
}

mod unreadable {
    use super::*;

    #[test]
    fn a_directory_given_as_a_file() {
        let sb = Sandbox::new();
        let dir = sb.path("traces");
        std::fs::create_dir(&dir).unwrap();
        let out = sb.reel(&["check", dir.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(66));
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("is a directory"), "{err}");
        assert!(err.contains("reel ls"), "{err}");
    }

    #[test]
    fn a_missing_file() {
        let sb = Sandbox::new();
        let out = sb.reel(&["check", "nope.jsonl"]);
        assert_eq!(out.status.code(), Some(66));
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("nope.jsonl: no such file"), "{err}");
    }

    #[test]
    fn the_other_files_are_still_checked_and_reported() {
        let sb = Sandbox::new();
        let bad = trace(&sb, "bad.jsonl", &["[1]"]);
        let good = trace(&sb, "good.jsonl", &[]);
        let missing = sb.path("missing.jsonl");
        let (code, doc) = check_json(&sb, &[&bad, &missing, &good]);
        assert_eq!(code, 66, "{doc:#}");
        assert_eq!(doc["schema"], "reel.check/1");
        let files = doc["files"].as_array().unwrap();
        assert_eq!(files.len(), 3);
        assert_eq!(files[0]["errors"], 1);
        assert!(
            files[1]["unreadable"]
                .as_str()
                .unwrap()
                .contains("no such file")
        );
        assert_eq!(files[2]["errors"], 0);
        assert_eq!(doc["unreadable"], 1);
        assert_eq!(doc["errors"], 1);
    }
}

/// The real fitness-report traces (another producer's files in `../shared/fixtures`,
/// run by `cargo xtask test` when that directory exists) pass: exit 0, no errors.
mod shared_fixtures {
    use super::*;

    fn fixture_dir() -> PathBuf {
        PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/fixtures/mcp-tape/fitness-report"
        ))
    }

    fn traces() -> Vec<PathBuf> {
        let mut out = Vec::new();
        for run in std::fs::read_dir(fixture_dir()).expect("shared fixtures present") {
            let run = run.unwrap().path();
            if run.is_dir() {
                out.push(run.join("mcp.jsonl"));
                out.push(run.join("agent.jsonl"));
            }
        }
        out.sort();
        out
    }

    #[test]
    #[ignore = "reads ../shared/fixtures: `cargo xtask test` runs it when that directory exists"]
    fn fitness_report_traces_check_with_exit_0() {
        let sb = Sandbox::new();
        let files = traces();
        assert_eq!(files.len(), 6);
        let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
        let (code, doc) = check_json(&sb, &refs);
        assert_eq!(code, 0, "{doc:#}");
        assert_eq!(doc["errors"], 0);
        for f in doc["files"].as_array().unwrap() {
            assert_eq!(f["errors"], 0, "{f:#}");
            assert_eq!(f["sessions"], 1, "{f:#}");
        }
    }

    #[test]
    #[ignore = "reads ../shared/fixtures: `cargo xtask test` runs it when that directory exists"]
    fn the_aws_run_has_unanswered_tool_calls() {
        let sb = Sandbox::new();
        let mcp = traces()
            .into_iter()
            .find(|p| p.display().to_string().contains("knowledge-mcp") && p.ends_with("mcp.jsonl"))
            .unwrap();
        let (code, report) = check_one(&sb, &mcp);
        assert_eq!(code, 0);
        let unanswered: Vec<_> = report["problems"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["rule"] == "unanswered-request")
            .collect();
        assert!(!unanswered.is_empty(), "{report:#}");
        assert!(
            unanswered
                .iter()
                .all(|p| p["severity"] == "warning" && p["line"].is_u64())
        );
        assert!(
            unanswered
                .iter()
                .any(|p| p["message"].as_str().unwrap().contains("tools/call"))
        );
    }
}

/// Lowercase-hex SHA-256, for writing markers the checker must reject.
fn sha256_hex(bytes: &[u8]) -> String {
    reel_trace::hash::request_sha256(bytes)
}

/// A quoted value is trace content: a newline in an unknown `type` forged a report line
/// ("x.jsonl: ok: 0 errors") under the real one.
#[test]
fn quoted_trace_content_cannot_forge_report_lines() {
    let t = Sandbox::new();
    let path = t.write(
        "nl.jsonl",
        concat!(
            r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z","label":"l","command":["x"]}"#,
            "\n",
            r#"{"t":"2026-01-01T00:00:00.000Z","type":"odd\nnl.jsonl: ok: 0 errors"}"#,
            "\n"
        ),
    );
    let out = t.reel(&["check", path.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(r#"unknown line type "odd\nnl.jsonl: ok: 0 errors""#),
        "{text}"
    );
    assert!(
        !text.lines().any(|l| l.starts_with("nl.jsonl: ok")),
        "{text}"
    );
}

/// A 2026-07-28 client's `server/discover` probe refused by an older HTTP server (400
/// and an error whose id is `null`) is answered: by the HTTP request that carried both,
/// as play and verify pair it.
mod http_refusal {
    use super::*;

    const PROBE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    const REFUSAL: &str = r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}"#;

    fn line(dir: &str, req: u64, raw: &str, http: &str) -> String {
        format!(
            r#"{{"t":"{T}","dir":"{dir}","session":"reel:conn-1","raw":{raw},"http":{{"req":{req}{http}}}}}"#
        )
    }

    #[test]
    fn a_refused_probe_is_not_an_unanswered_request() {
        let sb = Sandbox::new();
        let f = trace(
            &sb,
            "refused.jsonl",
            &[
                &line("in", 1, PROBE, r#","method":"POST","path":"/mcp""#),
                &line("out", 1, REFUSAL, r#","status":400"#),
            ],
        );
        expect(&sb, &f, 0, &[]);
        // The refusal came on another HTTP request: it answers nothing there.
        let f = trace(
            &sb,
            "elsewhere.jsonl",
            &[
                &line("in", 1, PROBE, ""),
                &line("out", 2, REFUSAL, r#","status":400"#),
            ],
        );
        expect(&sb, &f, 0, &[("unanswered-request", Some(2))]);
    }

    #[test]
    fn a_python_sdk_recording_against_server_everything_checks_clean() {
        let sb = Sandbox::new();
        let server = peer_runs::Everything::start();
        let trace = peer_runs::record_python(&server, sb.dir(), "probe", peer_runs::Timing::Sdk);
        let text = std::fs::read_to_string(&trace).unwrap();
        assert!(
            text.contains(r#""method":"server/discover""#) && text.contains(r#""status":400"#),
            "the client probed and was refused"
        );
        let (code, report) = check_one(&sb, &trace);
        assert_eq!(code, 0, "{report:#}");
        assert_eq!(problems(&report), vec![], "{report:#}");
    }
}
