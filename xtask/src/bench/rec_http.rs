//! The `reel rec --url` bench (issue 6): the HTTP recording proxy against no proxy.
//!
//! The project's own minimal Streamable HTTP MCP server (`crates/reel-record/examples/
//! http_echo_server.rs`, hyper, answers `tools/call echo` with `application/json` at once)
//! and load driver (`http_load.rs`: 16 clients, one keep-alive connection each, one
//! request in flight per client) run the same load directly and through one running
//! `reel rec --url` (default settings: redaction on, the trace on the same disk),
//! interleaved round by round so machine noise hits both alike; per-round ratios, then
//! the median of 5 rounds.
//!
//! What is measured, and how:
//! - reel's CPU per proxied request: user + system time of the reel process
//!   (`/proc/<pid>/stat`, every thread: the proxy's and the trace writer's) over a
//!   round through reel, divided by the requests of that round;
//! - throughput ratio: requests/s through reel ÷ requests/s direct, same round;
//! - median added latency: the driver's median round trip through reel − direct with
//!   one client (no queueing: what reel adds to a call); with 16 clients for reference;
//! - zero drops and zero errors: every request of every run answered 200 with JSON, and
//!   the trace's `end.counts` holding one `in` and one `out` line per proxied request.
//!
//! - the ceiling: the same load through a bare TCP relay (`examples/tcp_relay.rs`: bytes
//!   copied both ways, nothing parsed or recorded) in the same rounds, its throughput ÷
//!   direct, its CPU per request and its added latency; reel ÷ relay is then what
//!   parsing HTTP and recording cost.
//!
//! The three processes (driver, reel, server) share the machine's cores; the server
//! costs about 10 µs of CPU per request, so a proxy, which does twice the server's
//! socket work plus the trace, cannot come close to its throughput when the cores are
//! saturated. The figures say what reel costs; a real MCP server (milliseconds per call)
//! hides most of it.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use serde_json::Value;

use super::http_load::{load, process_cpu, thread_cpu};
use super::{Ctx, Figure, Target, fmt_value, median};
use super::{Running, start_listener};

const ROUNDS: usize = 5;
const CLIENTS: usize = 16;

/// Targets from the issues (6; 17 for the figures against the relay).
const THROUGHPUT_RATIO: f64 = 0.8;
const OVER_RELAY: f64 = 0.85;
const CPU_OVER_RELAY_US: f64 = 8.0;
const ADDED_LATENCY_US: f64 = 100.0;

struct Tools {
    server: PathBuf,
    load: PathBuf,
    relay: PathBuf,
}

/// Runs the rec-http bench.
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Figure>> {
    let tools = build_examples(ctx)?;
    let requests = if ctx.quick { 800 } else { 32_000 };
    let rounds = if ctx.quick { 1 } else { ROUNDS };
    let traces = ctx.work.join("rec-http-traces");
    if traces.exists() {
        std::fs::remove_dir_all(&traces)
            .with_context(|| format!("cannot clear {}", traces.display()))?;
    }

    let (server, server_addr) = start_listener(&tools.server, &[])?;
    let direct_url = format!("http://{server_addr}/mcp");
    let (relay, relay_addr) = start_listener(&tools.relay, &["--to", &server_addr])?;
    let relay_url = format!("http://{relay_addr}/mcp");
    let relay_pid = relay.0.id();
    let (mut reel, reel_url) = start_reel(ctx, &direct_url, &traces)?;
    let pid = reel.0.id();

    // Warm both paths (connections, caches, the trace file) before measuring.
    let warm = load(&tools.load, &direct_url, requests / 8, CLIENTS)?;
    let warm_reel = load(&tools.load, &reel_url, requests / 8, CLIENTS)?;
    let warm_relay = load(&tools.load, &relay_url, requests / 8, CLIENTS)?;
    let mut proxied = warm_reel.requests;
    let _ = (warm, warm_relay);

    let urls = Urls {
        direct: direct_url,
        relay: relay_url,
        reel: reel_url,
        relay_pid,
        reel_pid: pid,
    };
    let mut series = Series::default();
    for round in 1..=rounds {
        proxied += one_round(&tools, &urls, requests, round, &mut series)?;
    }

    stop(&mut reel)?;
    drop(relay);
    drop(server);
    check_trace(&traces, proxied)?;
    Ok(figures(&series, requests, rounds))
}

/// Where the load goes, and the processes whose CPU is counted.
struct Urls {
    direct: String,
    relay: String,
    reel: String,
    relay_pid: u32,
    reel_pid: u32,
}

/// Per round: what each figure is the median of.
#[derive(Default)]
struct Series {
    ratios: Vec<f64>,
    added: Vec<f64>,
    added_loaded: Vec<f64>,
    cpu: Vec<f64>,
    writer: Vec<f64>,
    direct_rps: Vec<f64>,
    reel_rps: Vec<f64>,
    relay_ratios: Vec<f64>,
    over_relay: Vec<f64>,
    relay_added: Vec<f64>,
    relay_cpu: Vec<f64>,
    cpu_over_relay: Vec<f64>,
}

/// One round: latency with one client, then throughput with [`CLIENTS`], along each
/// path; the requests reel proxied.
fn one_round(
    tools: &Tools,
    urls: &Urls,
    requests: usize,
    round: usize,
    s: &mut Series,
) -> anyhow::Result<f64> {
    // Latency first, one client at a time: no queueing, only what reel adds.
    let seq = requests / 16;
    let d1 = load(&tools.load, &urls.direct, seq, 1)?;
    let r1 = load(&tools.load, &urls.reel, seq, 1)?;
    let t1 = load(&tools.load, &urls.relay, seq, 1)?;
    let d = load(&tools.load, &urls.direct, requests, CLIENTS)?;
    let relay_before = process_cpu(urls.relay_pid)?;
    let t = load(&tools.load, &urls.relay, requests, CLIENTS)?;
    let relay_us = (process_cpu(urls.relay_pid)? - relay_before).as_secs_f64() * 1e6 / t.requests;
    s.relay_cpu.push(relay_us);
    let pid = urls.reel_pid;
    let before = process_cpu(pid)?;
    let writer_before = thread_cpu(pid, "reel-trace")?;
    let r = load(&tools.load, &urls.reel, requests, CLIENTS)?;
    let used = process_cpu(pid)? - before;
    let writer_used = thread_cpu(pid, "reel-trace")? - writer_before;
    s.writer.push(writer_used.as_secs_f64() * 1e6 / r.requests);
    let cpu_us = used.as_secs_f64() * 1e6 / r.requests;
    println!(
        "round {round} direct {:>9} req/s p50 {:>6} µs | relay {:>9} req/s p50 {:>6} µs | reel {:>9} req/s p50 {:>6} µs, reel CPU {:.1} µs/request",
        fmt_value(d.rps),
        fmt_value(d.p50_us),
        fmt_value(t.rps),
        fmt_value(t.p50_us),
        fmt_value(r.rps),
        fmt_value(r.p50_us),
        cpu_us
    );
    println!(
        "        one client: direct p50 {:>6} µs | relay p50 {:>6} µs | reel p50 {:>6} µs",
        fmt_value(d1.p50_us),
        fmt_value(t1.p50_us),
        fmt_value(r1.p50_us)
    );
    s.relay_ratios.push(t.rps / d.rps);
    s.over_relay.push(r.rps / t.rps);
    s.relay_added.push(t1.p50_us - d1.p50_us);
    s.ratios.push(r.rps / d.rps);
    s.added.push(r1.p50_us - d1.p50_us);
    s.added_loaded.push(r.p50_us - d.p50_us);
    s.cpu.push(cpu_us);
    s.cpu_over_relay.push(cpu_us - relay_us);
    s.direct_rps.push(d.rps);
    s.reel_rps.push(r.rps);
    Ok(r1.requests + r.requests)
}

/// The figures, medians of the rounds' series.
fn figures(s: &Series, requests: usize, rounds: usize) -> Vec<Figure> {
    let Series {
        ratios,
        added,
        added_loaded,
        cpu,
        writer,
        direct_rps,
        reel_rps,
        relay_ratios,
        over_relay,
        relay_added,
        relay_cpu,
        cpu_over_relay,
    } = s;
    let how = format!(
        "{CLIENTS} clients, {requests} tools/call echo POSTs per run (256 B argument, JSON answers), median of {rounds} interleaved rounds"
    );
    let med = |xs: &[f64]| median(xs).unwrap_or(f64::NAN);
    vec![
        Figure::new("rec --url CPU per proxied request", med(cpu), "µs")
            .note(format!("reel's user+system time (all threads, /proc) ÷ requests; {how}")),
        Figure::new("bare TCP relay CPU per proxied request", med(relay_cpu), "µs")
            .note("the relay's user+system time (/proc) ÷ requests, same load"),
        Figure::new("rec --url CPU per request − the relay's", med(cpu_over_relay), "µs")
            .target(Target::AtMost(CPU_OVER_RELAY_US))
            .note("what parsing HTTP and recording cost per request: the per-round difference of the two above"),
        Figure::new("rec --url trace writer CPU per request", med(writer), "µs").note(
            "the reel-trace thread's share of the above: the lines no proxy thread wrote itself before forwarding (answers are written by the thread that forwards them)",
        ),
        Figure::new("rec --url throughput ÷ direct", med(ratios), "ratio")
            .target(Target::AtLeast(THROUGHPUT_RATIO))
            .note(format!(
                "requests/s through reel ÷ direct, same round ({} vs {} req/s); 2 shared cores for driver, reel and server",
                fmt_value(med(reel_rps)),
                fmt_value(med(direct_rps))
            )),
        Figure::new("bare TCP relay throughput ÷ direct", med(relay_ratios), "ratio").note(
            "requests/s through a relay that copies bytes and parses nothing (examples/tcp_relay.rs) ÷ direct, same round: the ceiling of any proxy process here",
        ),
        Figure::new("rec --url throughput ÷ bare TCP relay", med(over_relay), "ratio")
            .target(Target::AtLeast(OVER_RELAY))
            .note("what parsing HTTP and recording cost, same round"),
        Figure::new("rec --url median added latency", med(added), "µs")
            .target(Target::AtMost(ADDED_LATENCY_US))
            .note(format!(
                "median round trip through reel − direct, one client, {} sequential requests per run, median of {rounds} rounds",
                requests / 16
            )),
        Figure::new("bare TCP relay added latency", med(relay_added), "µs")
            .note("as above, through the TCP relay"),
        Figure::new("rec --url added latency, 16 clients", med(added_loaded), "µs").note(
            "median round trip through reel − direct with 16 clients: mostly queueing for the shared cores",
        ),
        Figure::new("rec --url requests/s", med(reel_rps), "req/s")
            .note(format!("direct: {} req/s", fmt_value(med(direct_rps)))),
    ]
}

fn build_examples(ctx: &Ctx) -> anyhow::Result<Tools> {
    let [server, load, relay]: [PathBuf; 3] = super::build_examples(
        ctx,
        "reel-record",
        &["http_echo_server", "http_load", "tcp_relay"],
    )?
    .try_into()
    .map_err(|_| anyhow::anyhow!("cargo reported another number of executables"))?;
    Ok(Tools {
        server,
        load,
        relay,
    })
}

/// Starts `reel rec --url`; the URL from its `reel: listening on URL` line.
fn start_reel(ctx: &Ctx, upstream: &str, traces: &Path) -> anyhow::Result<(Running, String)> {
    let mut c = Command::new(&ctx.reel);
    c.args(["rec", "--name", "bench-http", "--url", upstream, "--dir"])
        .arg(traces);
    let l = super::start_reel(c)?;
    Ok((l.child, l.url))
}

/// Stops reel with SIGTERM; it must exit 0.
fn stop(reel: &mut Running) -> anyhow::Result<()> {
    let status = super::sigterm(reel)?;
    if !status.success() {
        bail!("reel rec --url exited with {status} after SIGTERM");
    }
    Ok(())
}

/// Every proxied request is in the trace: one `in` and one `out` line each.
fn check_trace(dir: &Path, proxied: f64) -> anyhow::Result<()> {
    let entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    let [trace] = entries.as_slice() else {
        bail!("expected one trace in {}: {entries:?}", dir.display());
    };
    // Only the tail: the end line is last, and the trace is large.
    let mut f = std::fs::File::open(trace)?;
    let len = f.metadata()?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(64 * 1024)))?;
    let mut tail = String::new();
    f.read_to_string(&mut tail)?;
    let end: Value = tail
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .context("the trace has no last line")?;
    let counts = &end["counts"];
    let want = proxied as u64;
    if end["type"] != "end"
        || counts["in"].as_u64() != Some(want)
        || counts["out"].as_u64() != Some(want)
    {
        bail!(
            "the trace lost lines: {} requests proxied, end line {end}",
            want
        );
    }
    Ok(())
}
