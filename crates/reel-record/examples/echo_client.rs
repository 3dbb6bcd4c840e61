//! A minimal stdio MCP client for the `reel rec` bench. It starts the server command
//! (the echo server directly, or `reel rec -- echo_server`), runs `initialize`,
//! `notifications/initialized` and `tools/list`, then N `tools/call echo` with an S-byte
//! ASCII text, sequentially or with W in flight, and prints one JSON object:
//!
//! `{"calls","size","window","seconds","calls_per_s","p50_us","p99_us","mismatches",
//!   "checksum","child_cpu_us","child_switches","child_vmhwm_kb","server_cpu_us",
//!   "server_switches","exit"}`
//!
//! - `checksum`: FNV-1a over every response line, so a run through reel can be compared
//!   with a direct run byte for byte;
//! - `child_cpu_us`: the kernel's account of the child (`wait4`), which includes the
//!   children the child reaped — through reel, that is reel plus the server; the server's
//!   own share comes from `--server-rusage PATH` (written by `echo_server --rusage-out`);
//! - `child_switches`: the context switches (voluntary and involuntary) of the child and
//!   the children it reaped, from the same account; the server's own in
//!   `server_switches`;
//! - `child_vmhwm_kb`: the child's peak RSS (`VmHWM`, Linux), read after the last call
//!   and before stdin is closed, so it is the child's own, not its children's.
//!
//! - `--pause-ms MS`: waits that long between `tools/list` and the first call, outside
//!   the measured time (the play bench lets `reel play` finish indexing its tape first).
//!
//! Usage: `echo_client --calls N --size S [--window W] [--server-rusage PATH]
//! [--pause-ms MS] -- CMD…`

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Instant;

use serde_json::Value;

struct Opts {
    calls: u64,
    size: usize,
    window: usize,
    server_rusage: Option<String>,
    pause_ms: u64,
    command: Vec<String>,
}

fn parse_args() -> Result<Opts, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let split = args.iter().position(|a| a == "--").ok_or(
        "usage: echo_client --calls N --size S [--window W] [--server-rusage PATH] [--pause-ms MS] -- CMD…",
    )?;
    let (flags, command) = (&args[..split], &args[split + 1..]);
    let mut o = Opts {
        calls: 100,
        size: 1024,
        window: 1,
        server_rusage: None,
        pause_ms: 0,
        command: command.to_vec(),
    };
    let mut it = flags.iter();
    while let Some(f) = it.next() {
        let v = it.next().ok_or(format!("{f} needs a value"))?;
        let num = || v.parse::<u64>().map_err(|e| format!("{f} {v}: {e}"));
        match f.as_str() {
            "--calls" => o.calls = num()?,
            "--size" => o.size = num()? as usize,
            "--window" => o.window = num()?.max(1) as usize,
            "--server-rusage" => o.server_rusage = Some(v.clone()),
            "--pause-ms" => o.pause_ms = num()?,
            _ => return Err(format!("unknown flag {f}")),
        }
    }
    if o.command.is_empty() {
        return Err("no server command after --".into());
    }
    Ok(o)
}

/// The text of call `i`: `size` printable ASCII bytes, different for every call.
fn payload(i: u64, size: usize) -> String {
    let unit = format!("echo payload {i:08} lorem ipsum dolor sit amet; ");
    unit.repeat(size / unit.len() + 1)[..size].to_owned()
}

fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn request(id: u64, method: &str, params: Value) -> Vec<u8> {
    let mut v = serde_json::to_vec(&serde_json::json!({
        "jsonrpc": "2.0", "id": id, "method": method, "params": params
    }))
    .unwrap_or_default();
    v.push(b'\n');
    v
}

fn main() {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("echo_client: {e}");
            std::process::exit(64);
        }
    };
    if let Err(e) = run(&o) {
        eprintln!("echo_client: {e}");
        std::process::exit(1);
    }
}

fn run(o: &Opts) -> io::Result<()> {
    let mut child = Command::new(&o.command[0])
        .args(&o.command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let pid = child.id() as libc::pid_t;
    let mut to_server = child.stdin.take().ok_or(io::ErrorKind::BrokenPipe)?;
    let mut from_server = BufReader::with_capacity(
        1 << 16,
        child.stdout.take().ok_or(io::ErrorKind::BrokenPipe)?,
    );
    let mut line = Vec::new();
    let read_line = |r: &mut BufReader<_>, line: &mut Vec<u8>| -> io::Result<()> {
        line.clear();
        if r.read_until(b'\n', line)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed its stdout",
            ));
        }
        Ok(())
    };

    let init = serde_json::json!({"protocolVersion":"2025-11-25","capabilities":{},
        "clientInfo":{"name":"reel-echo-client","version":"1"}});
    to_server.write_all(&request(0, "initialize", init))?;
    read_line(&mut from_server, &mut line)?;
    to_server.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")?;
    to_server.write_all(&request(1, "tools/list", serde_json::json!({})))?;
    read_line(&mut from_server, &mut line)?;
    std::thread::sleep(std::time::Duration::from_millis(o.pause_ms));

    // A writer thread keeps up to `window` calls in flight; this thread reads answers.
    // Separate threads, because a window of large calls can fill both pipes at once.
    let (tokens_tx, tokens_rx) = mpsc::sync_channel::<()>(o.window);
    for _ in 0..o.window {
        let _ = tokens_tx.send(());
    }
    let (sent_tx, sent_rx) = mpsc::channel::<(u64, Instant)>();
    let (calls, size) = (o.calls, o.size);
    let start = Instant::now();
    let writer = std::thread::spawn(move || -> io::Result<std::process::ChildStdin> {
        for i in 0..calls {
            if tokens_rx.recv().is_err() {
                break;
            }
            let params = serde_json::json!({"name":"echo","arguments":{"text": payload(i, size)}});
            let req = request(i + 2, "tools/call", params);
            let _ = sent_tx.send((i + 2, Instant::now()));
            to_server.write_all(&req)?;
        }
        Ok(to_server)
    });
    let mut sent_at: HashMap<u64, Instant> = HashMap::new();
    let mut latencies = Vec::with_capacity(calls as usize);
    let mut mismatches = 0u64;
    let mut checksum = 0xcbf2_9ce4_8422_2325u64;
    for _ in 0..calls {
        read_line(&mut from_server, &mut line)?;
        let now = Instant::now();
        checksum = fnv1a(checksum, &line);
        let msg: Value = serde_json::from_slice(&line).unwrap_or(Value::Null);
        let id = msg.get("id").and_then(Value::as_u64).unwrap_or(u64::MAX);
        while !sent_at.contains_key(&id) {
            match sent_rx.recv() {
                Ok((i, t)) => {
                    sent_at.insert(i, t);
                }
                Err(_) => break,
            }
        }
        if let Some(t) = sent_at.remove(&id) {
            latencies.push(now.duration_since(t));
        }
        let text = msg
            .pointer("/result/content/0/text")
            .and_then(Value::as_str);
        if id < 2 || text != Some(payload(id - 2, size).as_str()) {
            mismatches += 1;
        }
        let _ = tokens_tx.send(());
    }
    let seconds = start.elapsed().as_secs_f64();
    let vmhwm_kb = vmhwm_kb(pid);
    let to_server = writer
        .join()
        .map_err(|_| io::Error::other("writer thread panicked"))??;
    drop(to_server);
    drop(from_server);
    let (status, cpu_us, switches) = wait4(pid)?;
    drop(child);
    let server_usage: Option<Value> = o
        .server_rusage
        .as_ref()
        .and_then(|p| serde_json::from_slice(&std::fs::read(p).ok()?).ok());
    let server_cpu_us = server_usage
        .as_ref()
        .and_then(|v| v.get("cpu_us")?.as_u64());
    let server_switches = server_usage
        .as_ref()
        .and_then(|v| v.get("switches")?.as_u64());

    latencies.sort();
    let pct = |p: f64| -> f64 {
        if latencies.is_empty() {
            return 0.0;
        }
        let i = ((latencies.len() as f64 - 1.0) * p).round() as usize;
        latencies[i].as_secs_f64() * 1e6
    };
    let report = serde_json::json!({
        "calls": calls, "size": size, "window": o.window,
        "seconds": seconds,
        "calls_per_s": calls as f64 / seconds,
        "p50_us": pct(0.5), "p99_us": pct(0.99),
        "mismatches": mismatches,
        "checksum": format!("{checksum:016x}"),
        "child_cpu_us": cpu_us,
        "child_switches": switches,
        "child_vmhwm_kb": vmhwm_kb,
        "server_cpu_us": server_cpu_us,
        "server_switches": server_switches,
        "exit": status,
    });
    println!("{report}");
    Ok(())
}

/// Peak RSS of `pid` in KiB (`VmHWM` in /proc; 0 where there is no /proc).
fn vmhwm_kb(pid: libc::pid_t) -> u64 {
    let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return 0;
    };
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Reaps `pid`: its exit code (128+N for signal N), CPU time in µs and context switches.
fn wait4(pid: libc::pid_t) -> io::Result<(i32, u64, u64)> {
    let mut status = 0;
    // SAFETY: rusage is plain data.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: our own unreaped child; valid out-pointers.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            break;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    let switches = (ru.ru_nvcsw + ru.ru_nivcsw) as u64;
    Ok((code, us(ru.ru_utime) + us(ru.ru_stime), switches))
}
