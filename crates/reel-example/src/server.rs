//! The example MCP server: a real stdio server speaking the legacy (initialize) era,
//! small enough to read, rich enough to show every part of a recording.
//!
//! Tools: `add` (a sum), `echo`, `countdown` (sends `notifications/progress` for each
//! step when the call carries a progress token), `weather` (a fixed forecast; with
//! `changed` one number differs: the drift `reel demo` finds), and `roots` (asks the
//! client `roots/list` — a server→client request — and answers with what it got).
//!
//! Invariants: one JSON-RPC message per line in and out, each output line flushed
//! whole; deterministic answers (no clock, no randomness), so two honest runs record
//! identical content and `reel diff` reports nothing but the `changed` flag.

use std::io::{self, BufRead, Write};

use serde_json::{Value, json};

/// The protocol versions this server speaks (initialize era).
pub const VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// What the server is asked to do differently.
#[derive(Clone, Copy, Debug, Default)]
pub struct ServerOptions {
    /// Change one answer (the weather) so that a diff has something to find.
    pub changed: bool,
}

/// Serves MCP on `input`/`output` until `input` ends.
pub fn serve(input: impl BufRead, output: impl Write, opts: ServerOptions) -> io::Result<()> {
    let mut s = Server {
        lines: input.lines(),
        out: output,
        opts,
        next_id: 1,
    };
    while let Some(line) = s.lines.next() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        s.handle(&line)?;
    }
    Ok(())
}

struct Server<R, W> {
    lines: io::Lines<R>,
    out: W,
    opts: ServerOptions,
    next_id: u64,
}

impl<R: BufRead, W: Write> Server<R, W> {
    fn send(&mut self, v: &Value) -> io::Result<()> {
        let mut line = v.to_string();
        line.push('\n');
        self.out.write_all(line.as_bytes())?;
        self.out.flush()
    }

    fn handle(&mut self, line: &str) -> io::Result<()> {
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            return self.send(&json!({"jsonrpc":"2.0","id":null,
                "error":{"code":-32700,"message":"Parse error"}}));
        };
        let Some(method) = msg.get("method").and_then(Value::as_str) else {
            // A response to nothing this server asked for right now: ignore it.
            return Ok(());
        };
        let Some(id) = msg.get("id").cloned() else {
            return Ok(()); // notifications need no answer
        };
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        let answer = match method {
            "initialize" => Ok(initialize(&params)),
            "ping" => Ok(json!({})),
            "tools/list" => Ok(json!({ "tools": tools() })),
            "tools/call" => self.call(&params)?,
            _ => Err((-32601, format!("Method not found: {method}"))),
        };
        let reply = match answer {
            Ok(result) => json!({"jsonrpc":"2.0","id":id,"result":result}),
            Err((code, message)) => {
                json!({"jsonrpc":"2.0","id":id,"error":{"code":code,"message":message}})
            }
        };
        self.send(&reply)
    }

    fn call(&mut self, params: &Value) -> io::Result<Result<Value, (i64, String)>> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let args = params.get("arguments").cloned().unwrap_or(json!({}));
        let token = params.pointer("/_meta/progressToken").cloned();
        let text = match name {
            "add" => {
                let n = |k: &str| args.get(k).and_then(Value::as_f64).unwrap_or(0.0);
                format!("{} + {} = {}", n("a"), n("b"), n("a") + n("b"))
            }
            "echo" => args
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            "countdown" => {
                let from = args
                    .get("from")
                    .and_then(Value::as_u64)
                    .unwrap_or(3)
                    .min(100);
                if let Some(token) = token {
                    for step in 1..=from {
                        self.send(&json!({"jsonrpc":"2.0","method":"notifications/progress",
                            "params":{"progressToken":token,"progress":step,"total":from,
                                      "message":format!("T-minus {}", from - step)}}))?;
                    }
                }
                format!("liftoff after {from} steps")
            }
            "weather" => {
                let city = args.get("city").and_then(Value::as_str).unwrap_or("Lyon");
                let degrees = if self.opts.changed { 24 } else { 21 };
                format!("{city}: {degrees}°C, light wind")
            }
            "roots" => self.ask_roots()?,
            _ => return Ok(Err((-32602, format!("Unknown tool: {name}")))),
        };
        Ok(Ok(
            json!({"content":[{"type":"text","text":text}],"isError":false}),
        ))
    }

    /// Sends `roots/list` to the client and reads until its answer arrives (requests
    /// that come meanwhile are answered as usual).
    fn ask_roots(&mut self) -> io::Result<String> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc":"2.0","id":id,"method":"roots/list"}))?;
        while let Some(line) = self.lines.next() {
            let line = line?;
            let Ok(msg) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            let is_answer = msg.get("method").is_none() && msg.get("id") == Some(&json!(id));
            if !is_answer {
                self.handle(&line)?;
                continue;
            }
            let roots: Vec<String> = msg
                .pointer("/result/roots")
                .and_then(Value::as_array)
                .map(|rs| {
                    rs.iter()
                        .filter_map(|r| r.get("uri").and_then(Value::as_str))
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            return Ok(match roots.as_slice() {
                [] => "the client shares no roots".to_owned(),
                rs => format!("the client shares {} root(s): {}", rs.len(), rs.join(", ")),
            });
        }
        Ok("the client left before answering roots/list".to_owned())
    }
}

fn initialize(params: &Value) -> Value {
    let asked = params
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let version = if VERSIONS.contains(&asked) {
        asked
    } else {
        "2025-06-18"
    };
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "reel-example-server", "version": env!("CARGO_PKG_VERSION")},
        "instructions": "reel's built-in example server: try add, countdown, weather, roots, echo."
    })
}

fn tools() -> Value {
    let object = |props: Value, required: &[&str]| json!({"type":"object","properties":props,"required":required});
    json!([
        {"name":"add","description":"Adds two numbers.",
         "inputSchema":object(json!({"a":{"type":"number"},"b":{"type":"number"}}), &["a","b"])},
        {"name":"countdown","description":"Counts down, one progress notification per step.",
         "inputSchema":object(json!({"from":{"type":"integer","minimum":1,"maximum":100}}), &["from"])},
        {"name":"echo","description":"Says back what it is given.",
         "inputSchema":object(json!({"text":{"type":"string"}}), &["text"])},
        {"name":"roots","description":"Asks the client for its roots (a server-to-client request).",
         "inputSchema":object(json!({}), &[])},
        {"name":"weather","description":"Today's weather in a city (always the same forecast).",
         "inputSchema":object(json!({"city":{"type":"string"}}), &["city"])}
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(input: &str, changed: bool) -> Vec<Value> {
        let mut out = Vec::new();
        serve(input.as_bytes(), &mut out, ServerOptions { changed }).unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn answers_calls_progress_and_asks_for_roots() {
        let input = [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"countdown","arguments":{"from":2},"_meta":{"progressToken":"t"}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"roots"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"roots":[{"uri":"file:///x"}]}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"nope"}"#,
        ]
        .join("\n");
        let out = run(&input, false);
        assert_eq!(out[0]["result"]["protocolVersion"], "2025-03-26");
        assert_eq!(out[1]["method"], "notifications/progress");
        assert_eq!(out[1]["params"]["progressToken"], "t");
        assert_eq!(out[2]["params"]["progress"], 2);
        assert_eq!(
            out[3]["result"]["content"][0]["text"],
            "liftoff after 2 steps"
        );
        assert_eq!(out[4]["method"], "roots/list");
        assert_eq!(
            out[5]["result"]["content"][0]["text"],
            "the client shares 1 root(s): file:///x"
        );
        assert_eq!(out[6]["error"]["code"], -32601);
    }

    #[test]
    fn changed_alters_only_the_weather() {
        let call = |name: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}","arguments":{{"a":1,"b":2,"city":"Oslo","text":"x"}}}}}}"#
            )
        };
        for (name, differs) in [("weather", true), ("add", false), ("echo", false)] {
            let same = run(&call(name), false) == run(&call(name), true);
            assert_eq!(same, !differs, "{name}");
        }
    }
}
