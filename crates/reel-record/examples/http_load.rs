//! The load driver of the `reel rec --url` bench: C concurrent clients, each on its own
//! keep-alive connection, each sending `tools/call echo` POSTs one after the other and
//! timing every round trip.
//!
//!     http_load --url http://127.0.0.1:PORT/mcp [--clients 16] [--requests N] [--size BYTES]
//!
//! Prints one JSON line: `{"requests","errors","seconds","rps","p50_us","p99_us"}`.
//! Plain threads and hand-written HTTP/1.1, so the driver's own cost stays small and the
//! same whatever it talks to. Loopback only (the URL must be `http://127.0.0.1…`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

struct Args {
    host: String,
    path: String,
    clients: usize,
    requests: usize,
    size: usize,
}

fn args() -> Args {
    let mut a = Args {
        host: String::new(),
        path: "/mcp".into(),
        clients: 16,
        requests: 10_000,
        size: 256,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let v = it.next().unwrap_or_default();
        match k.as_str() {
            "--url" => {
                let rest = v
                    .strip_prefix("http://")
                    .unwrap_or_else(|| usage("--url must be http://"));
                let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
                a.host = host.to_owned();
                a.path = format!("/{path}");
            }
            "--clients" => a.clients = v.parse().unwrap_or_else(|_| usage("--clients N")),
            "--requests" => a.requests = v.parse().unwrap_or_else(|_| usage("--requests N")),
            "--size" => a.size = v.parse().unwrap_or_else(|_| usage("--size BYTES")),
            _ => usage(&format!("unknown argument {k}")),
        }
    }
    if a.host.is_empty() {
        usage("--url is required");
    }
    a
}

fn usage(why: &str) -> ! {
    eprintln!(
        "http_load: {why}; usage: http_load --url http://127.0.0.1:PORT/mcp [--clients 16] [--requests N] [--size BYTES]"
    );
    std::process::exit(64)
}

/// One client: its round trips, in microseconds, and its failures.
fn client(host: &str, path: &str, n: usize, size: usize, first_id: usize) -> (Vec<u32>, usize) {
    let mut times = Vec::with_capacity(n);
    let mut errors = 0;
    let Ok(stream) = TcpStream::connect(host) else {
        return (times, n);
    };
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut w = match stream.try_clone() {
        Ok(w) => w,
        Err(_) => return (times, n),
    };
    let mut r = BufReader::with_capacity(64 * 1024, stream);
    let text = "x".repeat(size);
    let mut head = String::new();
    let mut body = Vec::new();
    for i in 0..n {
        let payload = format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"{text}"}}}}}}"#,
            first_id + i
        );
        let req = format!(
            "POST {path} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-11-25\r\ncontent-length: {}\r\n\r\n{payload}",
            payload.len()
        );
        let t = Instant::now();
        if w.write_all(req.as_bytes()).is_err()
            || read_response(&mut r, &mut head, &mut body).is_none()
        {
            errors += n - i;
            break;
        }
        times.push(t.elapsed().as_micros().min(u128::from(u32::MAX)) as u32);
        if !body.starts_with(b"{\"jsonrpc\"") {
            errors += 1;
        }
    }
    (times, errors)
}

/// Reads one response; the body into `body`. `None` on a broken connection or status.
fn read_response(
    r: &mut BufReader<TcpStream>,
    line: &mut String,
    body: &mut Vec<u8>,
) -> Option<()> {
    line.clear();
    r.read_line(line).ok()?;
    if !line.starts_with("HTTP/1.1 200") {
        return None;
    }
    let mut length = None;
    let mut chunked = false;
    loop {
        line.clear();
        if r.read_line(line).ok()? == 0 {
            return None;
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let (k, v) = l.split_once(':')?;
        if k.eq_ignore_ascii_case("content-length") {
            length = v.trim().parse::<usize>().ok();
        } else if k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked") {
            chunked = true;
        }
    }
    body.clear();
    if let Some(n) = length {
        body.resize(n, 0);
        r.read_exact(body).ok()?;
        return Some(());
    }
    if !chunked {
        return None;
    }
    loop {
        line.clear();
        r.read_line(line).ok()?;
        let n = usize::from_str_radix(line.trim().split(';').next()?, 16).ok()?;
        let start = body.len();
        body.resize(start + n + 2, 0);
        r.read_exact(&mut body[start..]).ok()?;
        body.truncate(start + n);
        if n == 0 {
            return Some(());
        }
    }
}

fn main() {
    let a = args();
    let per = a.requests.div_ceil(a.clients);
    let start = Instant::now();
    let handles: Vec<_> = (0..a.clients)
        .map(|c| {
            let (host, path) = (a.host.clone(), a.path.clone());
            let size = a.size;
            std::thread::spawn(move || client(&host, &path, per, size, c * per + 1))
        })
        .collect();
    let mut times = Vec::with_capacity(per * a.clients);
    let mut errors = 0;
    for h in handles {
        let (t, e) = h.join().unwrap_or((Vec::new(), per));
        times.extend(t);
        errors += e;
    }
    let seconds = start.elapsed().as_secs_f64();
    times.sort_unstable();
    let pct = |p: f64| -> f64 {
        if times.is_empty() {
            return 0.0;
        }
        f64::from(times[((times.len() - 1) as f64 * p).round() as usize])
    };
    println!(
        r#"{{"requests":{},"errors":{errors},"seconds":{seconds:.6},"rps":{:.1},"p50_us":{},"p99_us":{}}}"#,
        times.len(),
        times.len() as f64 / seconds,
        pct(0.5),
        pct(0.99)
    );
}
