//! The viewer bench: `reel view` on a 1 GB trace (the reader bench's synthetic trace;
//! 32 MiB with `--quick`) and on a trace growing while it is watched.
//!
//! Figures, each the median of 3 fresh `reel view` processes:
//! - time to first screen: from the process's start to the last of the requests the
//!   first page makes (the page, its four assets, `home`, `trace`, and the first 200
//!   lines of the timeline) answered whole, over loopback HTTP as the browser makes them
//!   (target < 2 s);
//! - time to open the calls view: from the start to the first 200 calls answered;
//! - a page deep in the trace (lines from the middle, once indexing is done): what a
//!   scroll or a `&line=` jump costs;
//! - the time until the whole trace is indexed;
//! - the server's peak RSS (`VmHWM`) once indexed, and that less the index's size as
//!   the server reports it (`indexBytes`: lines, calls, strings): the target is 100 MiB
//!   beside the index.
//!
//! Live: a trace is appended one line at a time (20 lines, 300 ms apart) while the
//! viewer's feed (`/_reel/api/follow`) is read; the figure is the median and the worst
//! time from a line's write to the feed's event counting it (target < 1 s).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::{Ctx, Figure, Running, Target, median, synth};

const FULL_SIZE: u64 = 1 << 30;
const QUICK_SIZE: u64 = 32 << 20;
const ROUNDS: usize = 3;
const LIVE_LINES: u64 = 20;

/// Targets from the issue.
const FIRST_SCREEN_S: f64 = 2.0;
const RSS_BESIDE_INDEX_MIB: f64 = 100.0;
const LIVE_S: f64 = 1.0;

/// The requests the first page of a trace makes, in order.
fn first_screen(key: &str) -> Vec<String> {
    let t = encode(key);
    vec![
        "/_reel/".into(),
        "/_reel/assets/style.css".into(),
        "/_reel/assets/app.js".into(),
        "/_reel/assets/views.js".into(),
        "/_reel/assets/dom.js".into(),
        "/_reel/api/home".into(),
        format!("/_reel/api/trace?t={t}"),
        format!("/_reel/api/lines?t={t}&from=1&count=200"),
    ]
}

/// Runs the viewer bench.
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Figure>> {
    let size = if ctx.quick { QUICK_SIZE } else { FULL_SIZE };
    let (trace, facts) = synth::ensure(&ctx.work, size)?;
    let key = trace
        .file_name()
        .and_then(|n| n.to_str())
        .context("trace name")?
        .to_owned();
    let (mut first, mut calls, mut deep, mut indexed, mut rss, mut index) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    for round in 1..=ROUNDS {
        let started = Instant::now();
        let (viewer, addr) = start_view(ctx, &trace)?;
        for path in first_screen(&key) {
            get(&addr, &path)?;
        }
        first.push(started.elapsed().as_secs_f64());
        get(
            &addr,
            &format!("/_reel/api/calls?t={}&from=0&count=200", encode(&key)),
        )?;
        calls.push(started.elapsed().as_secs_f64());
        let (done, index_bytes) = wait_indexed(&addr, &key, Duration::from_secs(600))?;
        index.push(index_bytes as f64 / 1048576.0);
        indexed.push(started.elapsed().as_secs_f64());
        let mid = done / 2;
        let t = Instant::now();
        get(
            &addr,
            &format!("/_reel/api/lines?t={}&from={mid}&count=200", encode(&key)),
        )?;
        deep.push(t.elapsed().as_secs_f64() * 1e3);
        rss.push(peak_rss_mib(viewer.0.id())?);
        println!(
            "view round {round}: first screen {:.3} s, calls {:.3} s, indexed {:.2} s, RSS {:.1} MiB",
            first[round - 1],
            calls[round - 1],
            indexed[round - 1],
            rss[round - 1]
        );
        drop(viewer);
    }
    let index_mib = median(&index).unwrap_or(f64::NAN);
    let peak = median(&rss).unwrap_or(f64::NAN);
    let gb = facts.bytes as f64 / 1e9;
    let on = format!("{:.2} GB, {} lines; median of {ROUNDS}", gb, facts.lines);
    let mut figures = vec![
        Figure::new("reel view: time to first screen", median(&first).unwrap_or(f64::NAN), "s")
            .target(Target::AtMost(FIRST_SCREEN_S))
            .note(format!("page, assets, home, trace, 200 timeline lines over loopback; {on}")),
        Figure::new("reel view: time to open the calls view", median(&calls).unwrap_or(f64::NAN), "s")
            .note(format!("from the start to the first 200 calls; {on}")),
        Figure::new("reel view: a page from the middle", median(&deep).unwrap_or(f64::NAN), "ms")
            .note("200 lines from the middle of the indexed trace (a scroll or a &line= jump)"),
        Figure::new("reel view: whole trace indexed", median(&indexed).unwrap_or(f64::NAN), "s")
            .note(format!(
                "{:.0} MB/s; pages are served while it indexes",
                facts.bytes as f64 / 1e6 / median(&indexed).unwrap_or(f64::NAN)
            )),
        Figure::new("reel view: peak RSS", peak, "MiB").note(format!(
            "VmHWM once indexed; the index is {index_mib:.0} MiB ({:.1} B a line, calls and strings included)",
            index_mib * 1048576.0 / facts.lines as f64
        )),
        Figure::new("reel view: RSS beside the index", peak - index_mib, "MiB")
            .target(Target::AtMost(RSS_BESIDE_INDEX_MIB))
            .note("peak RSS less the index's size, as the server reports it"),
    ];
    figures.extend(live(ctx)?);
    Ok(figures)
}

/// `reel view TRACE` on a free loopback port, and its address.
fn start_view(ctx: &Ctx, trace: &Path) -> anyhow::Result<(Running, String)> {
    let mut child = Command::new(&ctx.reel)
        .arg("view")
        .arg(trace)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start reel view")?;
    let err = child.stderr.take().context("no stderr")?;
    let running = Running(child);
    let mut lines = BufReader::new(err).lines();
    let url = loop {
        let Some(line) = lines.next() else {
            bail!("reel view exited before it listened");
        };
        if let Some(u) = line?.strip_prefix("reel: viewing at ") {
            break u.to_owned();
        }
    };
    // Keep draining stderr so reel never blocks on it.
    std::thread::spawn(move || for _ in lines.map_while(Result::ok) {});
    let addr = url
        .strip_prefix("http://")
        .and_then(|r| r.strip_suffix('/'))
        .with_context(|| format!("reel view said {url:?}"))?
        .to_owned();
    Ok((running, addr))
}

/// Waits until the trace is indexed to its end; its line count and the index's size.
fn wait_indexed(addr: &str, key: &str, limit: Duration) -> anyhow::Result<(u64, u64)> {
    let deadline = Instant::now() + limit;
    loop {
        let body = get(addr, &format!("/_reel/api/trace?t={}", encode(key)))?;
        let v: serde_json::Value = serde_json::from_slice(&body)?;
        let p = &v["progress"];
        if p["ended"].as_bool() == Some(true) && p["bytes"] == p["size"] {
            let lines = v["lines"].as_u64().context("no line count")?;
            return Ok((lines, v["indexBytes"].as_u64().context("no indexBytes")?));
        }
        if Instant::now() > deadline {
            bail!("not indexed within {limit:?}: {p}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A GET answered whole (the viewer answers with Content-Length and `close` here);
/// its body. Anything but 200 is an error.
fn get(addr: &str, path: &str) -> anyhow::Result<Vec<u8>> {
    let mut s = TcpStream::connect(addr).with_context(|| format!("connect {addr}"))?;
    s.set_read_timeout(Some(Duration::from_secs(120)))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    let mut all = Vec::new();
    s.read_to_end(&mut all)?;
    let head_end = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .with_context(|| format!("GET {path}: no response head"))?;
    let head = String::from_utf8_lossy(&all[..head_end]);
    if !head.starts_with("HTTP/1.1 200") {
        bail!("GET {path}: {}", head.lines().next().unwrap_or(""));
    }
    Ok(all[head_end + 4..].to_vec())
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The process's peak resident set (`VmHWM`), MiB.
fn peak_rss_mib(pid: u32) -> anyhow::Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmHWM")?;
    Ok(kb / 1024.0)
}

/// The live figures: a line's way from the file to the viewer's feed.
fn live(ctx: &Ctx) -> anyhow::Result<Vec<Figure>> {
    let dir = ctx.work.join("view-live");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("growing.jsonl");
    let mut file = std::fs::File::create(&path)?;
    writeln!(
        file,
        r#"{{"type":"meta","v":1,"startedAt":"2026-12-01T10:00:00.000Z","source":"bench"}}"#
    )?;
    file.flush()?;
    let (viewer, addr) = start_view(ctx, &path)?;
    let mut feed = TcpStream::connect(&addr)?;
    feed.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        feed,
        "GET /_reel/api/follow?t=growing.jsonl HTTP/1.1\r\nHost: {addr}\r\n\r\n"
    )?;
    let mut feed = BufReader::new(feed);
    let mut lags = Vec::new();
    let mut n = 1u64;
    wait_for_lines(&mut feed, n)?;
    for i in 0..LIVE_LINES {
        std::thread::sleep(Duration::from_millis(300));
        writeln!(
            file,
            r#"{{"t":"2026-12-01T10:00:01.{i:03}Z","dir":"in","raw":{{"jsonrpc":"2.0","id":{i},"method":"ping"}}}}"#
        )?;
        file.flush()?;
        let written = Instant::now();
        n += 1;
        wait_for_lines(&mut feed, n)?;
        lags.push(written.elapsed().as_secs_f64());
    }
    drop(viewer);
    let worst = lags.iter().copied().fold(0.0, f64::max);
    Ok(vec![
        Figure::new(
            "reel view: live line to feed (median)",
            median(&lags).unwrap_or(f64::NAN),
            "s",
        )
        .target(Target::AtMost(LIVE_S))
        .note(format!(
            "{LIVE_LINES} lines appended 300 ms apart; the feed is the page's server-sent events"
        )),
        Figure::new("reel view: live line to feed (worst)", worst, "s")
            .target(Target::AtMost(LIVE_S)),
    ])
}

/// Reads the feed until a progress event counts `lines` lines.
fn wait_for_lines(feed: &mut BufReader<TcpStream>, lines: u64) -> anyhow::Result<()> {
    let mut line = String::new();
    loop {
        line.clear();
        if feed.read_line(&mut line)? == 0 {
            bail!("the feed closed before it counted {lines} lines");
        }
        // Chunked framing lines and SSE fields alike: only `data:` lines carry JSON.
        let Some(data) = line.trim().strip_prefix("data: ") else {
            continue;
        };
        let v: serde_json::Value = serde_json::from_str(data)?;
        if v["lines"].as_u64().is_some_and(|n| n >= lines) {
            return Ok(());
        }
    }
}
