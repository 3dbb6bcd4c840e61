//! A minimal stdio MCP server for the `reel rec` bench: it answers `initialize`, `ping`,
//! `tools/list` and `tools/call echo` (the result's text is the `text` argument), one
//! JSON-RPC message per line, each answer written and flushed at once, as real servers
//! do. No SDK: the bench measures reel, not a framework.
//!
//! `--rusage-out PATH`: at stdin EOF, write this process's own CPU time and peak RSS
//! (`{"cpu_us":…,"maxrss_kb":…,"switches":…}`) to PATH, so the bench can take the server's share out
//! of what the kernel accounts to reel (which reaps it).

use std::io::{self, BufRead, BufReader, Write};

use serde_json::{Value, json};

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rusage_out = args
        .iter()
        .position(|a| a == "--rusage-out")
        .and_then(|i| args.get(i + 1).cloned());

    let stdin = io::stdin();
    let mut input = BufReader::with_capacity(1 << 16, stdin.lock());
    let mut out = io::stdout().lock();
    let mut line = Vec::new();
    let mut reply = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let Ok(msg) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        let Some(id) = msg.get("id").cloned() else {
            continue; // a notification
        };
        let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
        let answer = match method {
            "initialize" => json!({"jsonrpc":"2.0","id":id,"result":{
                "protocolVersion":"2025-11-25",
                "capabilities":{"tools":{}},
                "serverInfo":{"name":"reel-echo","version":"1"}}}),
            "ping" => json!({"jsonrpc":"2.0","id":id,"result":{}}),
            "tools/list" => json!({"jsonrpc":"2.0","id":id,"result":{"tools":[{
                "name":"echo","description":"Returns its text argument.",
                "inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}}),
            "tools/call" => {
                let text = msg
                    .pointer("/params/arguments/text")
                    .and_then(Value::as_str);
                match text {
                    Some(t) => {
                        json!({"jsonrpc":"2.0","id":id,"result":{"content":[{"type":"text","text":t}]}})
                    }
                    None => {
                        json!({"jsonrpc":"2.0","id":id,"error":{"code":-32602,"message":"echo needs a text argument"}})
                    }
                }
            }
            _ => {
                json!({"jsonrpc":"2.0","id":id,"error":{"code":-32601,"message":"Method not found"}})
            }
        };
        reply.clear();
        serde_json::to_writer(&mut reply, &answer)?;
        reply.push(b'\n');
        out.write_all(&reply)?;
        out.flush()?;
    }
    if let Some(path) = rusage_out {
        let (cpu_us, maxrss_kb, switches) = own_usage();
        std::fs::write(
            path,
            format!("{{\"cpu_us\":{cpu_us},\"maxrss_kb\":{maxrss_kb},\"switches\":{switches}}}\n"),
        )?;
    }
    Ok(())
}

/// This process's user + system CPU time (µs), peak RSS (KiB on Linux) and context
/// switches (voluntary and involuntary).
fn own_usage() -> (u64, i64, i64) {
    // SAFETY: rusage is plain data; getrusage fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF with a valid out-pointer.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return (0, 0, 0);
    }
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    (
        us(ru.ru_utime) + us(ru.ru_stime),
        ru.ru_maxrss as i64,
        (ru.ru_nvcsw + ru.ru_nivcsw) as i64,
    )
}
