//! The example MCP client: starts a server command on stdio and runs a fixed script
//! (initialize, tools/list, add, countdown with progress, weather, roots), answering
//! the server's `roots/list` request, and prints one answer line per step.
//!
//! The answer lines are what `reel demo` compares between a recording and its replay:
//! they hold what the server said and nothing that changes between honest runs (no ids,
//! no progress tokens, no times).
//!
//! Limits: each answer is awaited at most [`ANSWER_TIMEOUT`]; after the script the
//! server's stdin is closed and it gets [`EXIT_TIMEOUT`] to exit before it is killed.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long one answer may take.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(15);
/// How long the server may take to exit once its stdin is closed.
pub const EXIT_TIMEOUT: Duration = Duration::from_secs(10);

/// The roots this client shares when the server asks.
pub const ROOT_URI: &str = "file:///srv/reel-demo";

/// Why the script could not run to its end.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// No command was given.
    #[error("no server command given")]
    NoCommand,
    /// The command could not be started.
    #[error("cannot start `{command}`: {source}")]
    Start {
        /// The command.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// The server stopped talking before the script was done.
    #[error("{step}: the server closed its output before answering")]
    Closed {
        /// The step.
        step: String,
    },
    /// No answer in time.
    #[error("{step}: no answer within {timeout:?}")]
    Timeout {
        /// The step.
        step: String,
        /// How long it waited.
        timeout: Duration,
    },
    /// Writing to the server failed.
    #[error("{step}: cannot write to the server: {source}")]
    Write {
        /// The step.
        step: String,
        /// Why.
        source: std::io::Error,
    },
}

/// What a run of the script gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transcript {
    /// One line per step: `step  answer`.
    pub answers: Vec<String>,
    /// Steps answered with a JSON-RPC error.
    pub errors: usize,
    /// The server's exit status, `None` when it had to be killed or was killed by a signal.
    pub exit_code: Option<i32>,
}

/// Runs the script against `command`, printing each answer line to `out` as it comes.
pub fn drive(command: &[OsString], out: &mut dyn Write) -> Result<Transcript, ClientError> {
    let (program, args) = command.split_first().ok_or(ClientError::NoCommand)?;
    let shown = command
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|source| ClientError::Start {
            command: shown,
            source,
        })?;
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let (tx, rx) = mpsc::channel::<String>();
    if let Some(stdout) = stdout {
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
    }
    let mut session = Session {
        stdin,
        rx,
        next_id: 1,
        progress: Vec::new(),
        roots_asked: 0,
        answers: Vec::new(),
        errors: 0,
    };
    let result = session.script(out);
    drop(session.stdin.take());
    let exit_code = wait(&mut child);
    result?;
    Ok(Transcript {
        answers: session.answers,
        errors: session.errors,
        exit_code,
    })
}

fn wait(child: &mut Child) -> Option<i32> {
    let deadline = Instant::now() + EXIT_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.code(),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

struct Session {
    stdin: Option<ChildStdin>,
    rx: Receiver<String>,
    next_id: u64,
    progress: Vec<String>,
    roots_asked: usize,
    answers: Vec<String>,
    errors: usize,
}

impl Session {
    fn script(&mut self, out: &mut dyn Write) -> Result<(), ClientError> {
        let init = self.request(
            "initialize",
            "initialize",
            json!({"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":false}},
                   "clientInfo":{"name":"reel-example-client","version":env!("CARGO_PKG_VERSION")}}),
        )?;
        let line = match &init {
            Ok(r) => format!(
                "{} {}, protocol {}",
                r.pointer("/serverInfo/name")
                    .and_then(Value::as_str)
                    .unwrap_or("?"),
                r.pointer("/serverInfo/version")
                    .and_then(Value::as_str)
                    .unwrap_or("?"),
                r.get("protocolVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
            ),
            Err(e) => e.clone(),
        };
        self.answer(out, "initialize", line);
        self.send(
            "initialized",
            &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        )?;

        let tools = self.request("tools/list", "tools/list", json!({}))?;
        let line = match &tools {
            Ok(r) => r
                .get("tools")
                .and_then(Value::as_array)
                .map(|ts| {
                    ts.iter()
                        .filter_map(|t| t.get("name").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default(),
            Err(e) => e.clone(),
        };
        self.answer(out, "tools/list", line);

        let calls: [(&str, Value, bool); 4] = [
            ("add", json!({"a":2,"b":40}), false),
            ("countdown", json!({"from":3}), true),
            ("weather", json!({"city":"Lyon"}), false),
            ("roots", json!({}), false),
        ];
        for (name, arguments, with_progress) in calls {
            self.progress.clear();
            self.roots_asked = 0;
            let mut params = json!({"name":name,"arguments":arguments});
            if with_progress {
                params["_meta"] = json!({"progressToken": format!("demo-{name}")});
            }
            let r = self.request(name, "tools/call", params)?;
            let mut line = match &r {
                Ok(r) => r
                    .pointer("/content/0/text")
                    .and_then(Value::as_str)
                    .unwrap_or("(no text)")
                    .to_owned(),
                Err(e) => e.clone(),
            };
            if !self.progress.is_empty() {
                line = format!("progress {}; {line}", self.progress.join(" "));
            }
            if self.roots_asked > 0 {
                line = format!("{line} (asked roots/list {} time(s))", self.roots_asked);
            }
            self.answer(out, name, line);
        }
        Ok(())
    }

    fn answer(&mut self, out: &mut dyn Write, step: &str, text: String) {
        let line = format!("{step:<11} {text}");
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
        self.answers.push(line);
    }

    fn send(&mut self, step: &str, v: &Value) -> Result<(), ClientError> {
        let mut line = v.to_string();
        line.push('\n');
        let write = |s: &mut Option<ChildStdin>| -> std::io::Result<()> {
            let stdin = s
                .as_mut()
                .ok_or_else(|| std::io::Error::other("stdin is closed"))?;
            stdin.write_all(line.as_bytes())?;
            stdin.flush()
        };
        write(&mut self.stdin).map_err(|source| ClientError::Write {
            step: step.to_owned(),
            source,
        })
    }

    /// Sends a request and waits for its answer: `Ok(Ok(result))`, or `Ok(Err(text))`
    /// for a JSON-RPC error. Server requests and progress that come meanwhile are handled.
    fn request(
        &mut self,
        step: &str,
        method: &str,
        params: Value,
    ) -> Result<Result<Value, String>, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(
            step,
            &json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}),
        )?;
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.rx.recv_timeout(left) {
                Ok(l) => l,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(ClientError::Timeout {
                        step: step.to_owned(),
                        timeout: ANSWER_TIMEOUT,
                    });
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(ClientError::Closed {
                        step: step.to_owned(),
                    });
                }
            };
            let Ok(msg) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            match (msg.get("method").and_then(Value::as_str), msg.get("id")) {
                (Some(m), Some(sid)) => self.answer_server(step, m, sid.clone())?,
                (Some("notifications/progress"), None) => {
                    let p = &msg["params"];
                    self.progress
                        .push(format!("{}/{}", p["progress"], p["total"]));
                }
                (Some(_), None) => {}
                (None, Some(rid)) if *rid == json!(id) => {
                    if let Some(e) = msg.get("error") {
                        self.errors += 1;
                        return Ok(Err(format!(
                            "error {} {}",
                            e.get("code").unwrap_or(&Value::Null),
                            e.get("message").and_then(Value::as_str).unwrap_or_default()
                        )));
                    }
                    return Ok(Ok(msg.get("result").cloned().unwrap_or(Value::Null)));
                }
                (None, _) => {}
            }
        }
    }

    fn answer_server(&mut self, step: &str, method: &str, id: Value) -> Result<(), ClientError> {
        let reply = match method {
            "roots/list" => {
                self.roots_asked += 1;
                json!({"jsonrpc":"2.0","id":id,"result":{"roots":[{"uri":ROOT_URI,"name":"reel-demo"}]}})
            }
            "ping" => json!({"jsonrpc":"2.0","id":id,"result":{}}),
            _ => json!({"jsonrpc":"2.0","id":id,
                        "error":{"code":-32601,"message":format!("Method not found: {method}")}}),
        };
        self.send(step, &reply)
    }
}
