//! The corpus through `reel rec -- <server>`: a scripted server that answers each
//! request with prepared lines (non-JSON stdout, a torn JSON line, the response) and
//! stderr, its command line full of secrets; then `reel play` on the trace with the
//! same requests.

use std::path::Path;

use serde_json::{Value, json};

use super::{CLASSES, Class, Corpus, Form, trace_haystack};
use crate::harness::rec_support::{Session, run};
use crate::harness::reel;

/// Answers the n-th line it reads with `DIR/err.n` on stderr and `DIR/out.n` on
/// stdout, and keeps what it read in `DIR/received`. Every further argument is
/// ignored (they are there to be recorded in `meta.command`).
const SERVER: &str = r#"dir=$1
n=0
while IFS= read -r line; do
  n=$((n+1))
  printf '%s\n' "$line" >> "$dir/received"
  if [ -f "$dir/err.$n" ]; then cat "$dir/err.$n" >&2; fi
  if [ -f "$dir/out.$n" ]; then cat "$dir/out.$n"; fi
done
"#;

/// What the client sends and the server answers, line by line.
#[derive(Default)]
struct Script {
    input: Vec<String>,
    /// (request number, stdout bytes), (request number, stderr bytes).
    out: Vec<(usize, String)>,
    err: Vec<(usize, String)>,
}

impl Script {
    /// Sends `line`; the server answers it with `out` and `err`.
    fn exchange(&mut self, line: Value, out: &[String], err: &[String]) {
        self.input.push(line.to_string());
        let n = self.input.len();
        let lines = |v: &[String]| v.iter().map(|l| format!("{l}\n")).collect::<String>();
        if !out.is_empty() {
            self.out.push((n, lines(out)));
        }
        if !err.is_empty() {
            self.err.push((n, lines(err)));
        }
    }

    fn write(&self, dir: &Path) {
        for (n, text) in &self.out {
            std::fs::write(dir.join(format!("out.{n}")), text).unwrap();
        }
        for (n, text) in &self.err {
            std::fs::write(dir.join(format!("err.{n}")), text).unwrap();
        }
    }

    fn stdin(&self) -> String {
        self.input.iter().map(|l| format!("{l}\n")).collect()
    }

    fn stdout(&self) -> String {
        self.out.iter().map(|(_, t)| t.as_str()).collect()
    }

    fn stderr(&self) -> String {
        self.err.iter().map(|(_, t)| t.as_str()).collect()
    }
}

fn call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":arguments,"_meta":{"progressToken":format!("p{id}")}}})
}

fn result(id: u64, result: Value) -> String {
    json!({"jsonrpc":"2.0","id":id,"result":result}).to_string()
}

/// A line the server started and never finished: cut right after the secret.
fn torn(corpus: &mut Corpus, class: &Class) -> String {
    let s = corpus.place(class, "stdout torn JSON line");
    let data = match s.key {
        Some(k) => json!({"user":"bob", k: s.text, "note": "cut CUT and the rest"}),
        None => json!(format!("{} CUT and the rest", s.text)),
    };
    let full = json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":data}}).to_string();
    let at = full.find(" CUT").unwrap_or(full.len());
    full[..at].to_owned()
}

/// The command line: every class once, flags as a server takes them.
fn command_line(corpus: &mut Corpus) -> Vec<String> {
    let mut args = Vec::new();
    for class in CLASSES {
        let s = corpus.place(class, "command line");
        let text = s.as_text();
        let is_flag =
            text.starts_with("--") && text.as_bytes().get(2).is_some_and(u8::is_ascii_lowercase);
        match text.split_once(' ') {
            Some((flag, value)) if is_flag => {
                args.push(flag.to_owned());
                args.push(value.trim_matches('"').to_owned());
            }
            _ => args.push(s.as_text()),
        }
    }
    args
}

fn script(corpus: &mut Corpus) -> Script {
    let mut sc = Script::default();
    sc.exchange(
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"corpus","version":"1"}}}),
        &[result(1, json!({"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{}},"serverInfo":{"name":"secrets","version":"1"}}))],
        &[],
    );
    sc.exchange(
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        &[],
        &[],
    );
    let mut id = 1;
    for class in CLASSES {
        // Arguments in, a result out (text, or structuredContent and its text twin),
        // with non-JSON stdout and stderr around it.
        id += 1;
        let arg = corpus.place(class, "tools/call arguments");
        let mut arguments = arg.as_object();
        arguments["count"] = json!(3);
        let answer = corpus.place(class, "tools/call result");
        let body = match answer.key {
            Some(_) => {
                let mut structured = answer.as_object();
                structured["user"] = json!("bob");
                json!({"content":[{"type":"text","text":serde_json::to_string_pretty(&structured).unwrap()}],"structuredContent":structured})
            }
            None => json!({"content":[{"type":"text","text":format!("echo: {}", answer.text)}]}),
        };
        let log = corpus.place(class, "stdout non-JSON line");
        let stderr = corpus.place(class, "stderr");
        let mut out = vec![format!("server log: {}", log.as_text())];
        out.push(torn(corpus, class));
        out.push(result(id, body));
        sc.exchange(
            call(id, "echo", arguments),
            &out.join("\n")
                .lines()
                .map(str::to_owned)
                .collect::<Vec<_>>(),
            &[format!("debug: {}", stderr.as_text())],
        );

        // A resource: its URI (when the secret is a URL) and its contents.
        id += 1;
        let uri = match class.form {
            Form::Url => corpus.place(class, "resources/read uri").text,
            _ => format!("file:///notes/{}.txt", class.name),
        };
        let contents = corpus.place(class, "resources/read contents");
        sc.exchange(
            json!({"jsonrpc":"2.0","id":id,"method":"resources/read","params":{"uri":uri}}),
            &[result(
                id,
                json!({"contents":[{"uri":uri,"mimeType":"text/plain","text":contents.as_text()}]}),
            )],
            &[],
        );

        // An error: its message and its data.
        id += 1;
        let message = corpus.place(class, "error.message");
        let data = corpus.place(class, "error.data");
        let error = json!({"jsonrpc":"2.0","id":id,"error":{"code":-32000,"message":format!("connect failed: {}", message.as_text()),"data":data.as_object()}});
        sc.exchange(
            call(id, "connect", json!({"attempt": id})),
            &[error.to_string()],
            &[],
        );
    }
    sc
}

#[test]
fn no_secret_reaches_a_stdio_trace_and_the_trace_replays() {
    let mut corpus = Corpus::new();
    let s = Session::new();
    let dir = s.sb.dir().join("server");
    std::fs::create_dir_all(&dir).unwrap();
    let server = s.sb.dir().join("server.sh");
    std::fs::write(&server, SERVER).unwrap();
    let sc = script(&mut corpus);
    sc.write(&dir);
    let mut command = vec![
        "sh".to_owned(),
        server.display().to_string(),
        dir.display().to_string(),
    ];
    command.extend(command_line(&mut corpus));
    let command: Vec<&str> = command.iter().map(String::as_str).collect();

    let out = run(s.command(&[], &command), sc.stdin().into_bytes());
    let seed = corpus.summary();
    assert_eq!(out.code(), Some(0), "{}\n{seed}", out.stderr_text());

    // Forwarded untouched both ways: the server read what the client sent, the client
    // got what the server wrote, and the server's stderr passed through as written.
    let received = std::fs::read_to_string(dir.join("received")).unwrap();
    assert_eq!(received, sc.stdin(), "{seed}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), sc.stdout(), "{seed}");
    let stderr = out.stderr_text();
    let (own, server_err): (Vec<&str>, Vec<&str>) =
        stderr.lines().partition(|l| l.starts_with("reel:"));
    let passed: String = server_err.iter().map(|l| format!("{l}\n")).collect();
    assert_eq!(passed, sc.stderr(), "{seed}");

    let trace = s.trace_path();
    let mut haystack = trace_haystack(&trace);
    haystack.push_str(&trace.display().to_string());
    corpus.assert_no_leaks(&haystack, "the stdio trace");
    corpus.assert_no_leaks(&own.join("\n"), "reel's stderr");

    // The redacted trace answers the same requests: every live argument is redacted
    // with the trace's rules before matching.
    let played = run(
        {
            let mut c = reel();
            c.arg("play").arg(&trace);
            c
        },
        sc.stdin().into_bytes(),
    );
    let summary = played.stderr_text();
    assert_eq!(played.code(), Some(0), "reel play: {summary}\n{seed}");
    assert!(summary.contains(" 0 missed"), "{summary}\n{seed}");
    let answers = String::from_utf8_lossy(&played.stdout).lines().count();
    assert!(answers >= 3 * CLASSES.len(), "{answers} answers: {summary}");
    eprintln!("stdio corpus: {seed}");
}

#[test]
fn keys_across_the_cut_of_a_long_stderr_line_are_redacted() {
    // Regression (issue 28): a server's stderr line over 1 MiB is recorded in pieces,
    // each redacted alone; a key across the cut left both halves in the trace. The cut
    // now falls between words.
    let mut corpus = Corpus::new();
    let s = Session::new();
    let words = "word ".repeat((1 << 20) / 5 - 8);
    let mut line = words.clone();
    let mut placed = Vec::new();
    for name in ["anthropic-key", "groq-key", "github-classic-token"] {
        let class = CLASSES.iter().find(|c| c.name == name).unwrap();
        let secret = corpus.place(class, "stderr across the 1 MiB cut");
        placed.push(secret.text.clone());
    }
    // The first key straddles the 1 MiB limit; the others follow it, and the line goes
    // on past a second cut.
    line.push_str(&placed.join(" "));
    line.push(' ');
    line.push_str(&words);
    line.push_str(&words);
    let printer = s.sb.dir().join("stderr.txt");
    std::fs::write(&printer, format!("{line}\n")).unwrap();
    let command = [
        "sh",
        "-c",
        "cat \"$0\" >&2; cat >/dev/null",
        printer.to_str().unwrap(),
    ];
    let out = run(s.command(&[], &command), Vec::new());
    assert_eq!(out.code(), Some(0), "{}", out.stderr_text());
    let trace = s.trace_path();
    corpus.assert_no_leaks(&trace_haystack(&trace), "the trace of a long stderr line");
    // Recorded in more than one piece.
    let pieces = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .filter(|l| l.contains("\"reel.stderr\""))
        .count();
    assert!(pieces >= 2, "{pieces} stderr events");
}
