//! The `reel llm` bench: the LLM API recording proxy and its replay, against the model
//! API it stands in front of.
//!
//! The upstream and the client are this process's own (`sse.rs`: `std::net` threads, an
//! Anthropic-style Messages endpoint streaming SSE, a keep-alive client that reads the
//! chunked body and times it). Each figure is measured in the same rounds along every
//! path: direct to the upstream, through a bare TCP relay that records nothing
//! (`reel-record/examples/tcp_relay.rs`, the ceiling of any proxy process here), through
//! one running `reel llm --upstream` (default settings: redaction on, the trace on the
//! same disk), and, when PyPI's mitmproxy installs, through `mitmdump --mode reverse:…
//! --set stream_large_bodies=1` (the field's anchor; its flows not printed). Figures are
//! medians over rounds of each round's value.
//!
//! What is measured, and how:
//! - added time to first byte, one client: the median over sequential streaming requests
//!   of the time from writing the request to the first body byte, through the proxy −
//!   direct;
//! - added delay per forwarded SSE event: the upstream sends deltas 2 ms apart, each
//!   stamped with the time it was written; the client's arrival time − the stamp, median
//!   over the events, through the proxy − direct;
//! - throughput at 16 concurrent streaming clients: SSE payload bytes received ÷ wall
//!   time, 4 MiB answers of 16 KiB events (and events/s for 100-byte events, the shape
//!   of a real model's deltas); reel ÷ relay is what parsing HTTP and recording cost;
//!   reel's CPU from `/proc`;
//! - peak RSS for one 100 MB streamed response: `VmHWM` of a fresh proxy process once
//!   it is done with the response it forwarded to a client reading as fast as it can
//!   (alongside: the value after one small request, and when the client had the last
//!   byte, which tells the streaming from what the proxy does after the body's end);
//! - replay: a trace of small streamed exchanges recorded through `reel llm`, served by
//!   `reel llm --play` to 16 clients asking for every one of them (a fresh `--play` each
//!   round, the tape's loading not timed); requests/s, and the live upstream's with the
//!   same load.
//!
//! Every stream must arrive whole (ending with `message_stop`) on every path; reel's
//! trace must hold one `llm.request` per request it proxied, no `llm.truncated`, and end
//! with its end line; the replay must answer every request from the tape, without a miss.
//!
//! Driver, upstream and proxy share the machine's cores, so the throughput figures are
//! what the proxy costs next to a server that does almost nothing.

mod client;
mod figures;
mod procs;
mod shape;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::http_load::process_cpu;
use super::sse::{self, Client, start_upstream};
use super::{Ctx, Figure, fmt_value, median, start_listener};
use client::{load, ttfb, vm_hwm};
use figures::{Replay, figures};
use procs::{Mitm, Reel, build_relay, check_trace, mitmdump};
use shape::{BIG_EVENT, CLIENTS, GAP_US, MIB, Round, Rss, RssRun, SMALL_EVENT, Sizes, Way};

/// Runs the llm bench.
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Figure>> {
    let sizes = Sizes::of(ctx.quick);
    let relay = build_relay(ctx)?;
    let mitm = mitmdump(ctx);
    if let Err(why) = &mitm {
        println!("bench llm: no mitmdump: {why}");
    }
    let root = ctx.work.join("llm");
    if root.exists() {
        std::fs::remove_dir_all(&root)
            .with_context(|| format!("cannot clear {}", root.display()))?;
    }
    std::fs::create_dir_all(&root)?;

    let upstream = start_upstream()?;
    let up = upstream.addr.to_string();
    let rounds = proxy_rounds(ctx, &sizes, &relay, mitm.as_ref().ok(), &up, &root)?;
    let rss = peak_rss(ctx, &sizes, &relay, mitm.as_ref().ok(), &up, &root)?;
    let replay = replay(ctx, &sizes, &up, &root)?;
    Ok(figures(&sizes, &rounds.0, &rounds.1, rss, &mitm, replay))
}

/// The first four figures' rounds: every path (direct, relay, reel, mitmdump when there
/// is one) warmed, then measured once per round; reel's trace checked at the end.
fn proxy_rounds(
    ctx: &Ctx,
    sizes: &Sizes,
    relay: &Path,
    mitm: Option<&PathBuf>,
    up: &str,
    root: &Path,
) -> anyhow::Result<(Vec<Way>, Vec<Vec<Round>>)> {
    let (relay_proc, relay_addr) = start_listener(relay, &["--to", up])?;
    let mut reel = Reel::record(ctx, up, &root.join("traces"))?;
    let mitm_proc = match mitm {
        Some(exe) => Some(Mitm::start(exe, up, root)?),
        None => None,
    };
    let mut ways = vec![
        Way {
            name: "direct",
            addr: up.to_owned(),
            pid: None,
        },
        Way {
            name: "relay",
            addr: relay_addr,
            pid: Some(relay_proc.0.id()),
        },
        Way {
            name: "reel",
            addr: reel.addr.clone(),
            pid: Some(reel.child.0.id()),
        },
    ];
    if let Some(m) = &mitm_proc {
        ways.push(Way {
            name: "mitmdump",
            addr: m.addr.clone(),
            pid: Some(m.child.0.id()),
        });
    }

    // Requests through reel, for the trace check.
    let mut through_reel = 0usize;
    let count = |w: &Way, n: usize, total: &mut usize| {
        if w.name == "reel" {
            *total += n;
        }
    };

    // Warm every path: connections, caches, the trace file.
    for w in &ways {
        ttfb(&w.addr, 20)?;
        load(&w.addr, CLIENTS, 1, &sse::model(8, BIG_EVENT, 0), "warm")?;
        count(w, 20 + CLIENTS, &mut through_reel);
    }

    let mut rounds: Vec<Vec<Round>> = vec![Vec::new(); ways.len()];
    let models = Models {
        big: sse::model(sizes.big_events, BIG_EVENT, 0),
        small: sse::model(sizes.small_events, SMALL_EVENT, 0),
        timed: sse::model(sizes.timed_events, 64, GAP_US),
    };
    for round in 1..=sizes.rounds {
        for (k, w) in ways.iter().enumerate() {
            rounds[k].push(one_round(w, sizes, &models)?);
            count(
                w,
                sizes.ttfb_requests + 1 + CLIENTS * (sizes.big_per_client + sizes.small_per_client),
                &mut through_reel,
            );
        }
        print_round(round, &ways, &rounds);
    }

    drop(mitm_proc);
    let trace = reel.stop()?;
    check_trace(&trace, through_reel)?;
    drop(relay_proc);
    Ok((ways, rounds))
}

/// The answers a round asks for: big and small events for throughput, timed events for
/// the delay per event.
struct Models {
    big: String,
    small: String,
    timed: String,
}

/// One round along one path: time to first byte, delay per event, then throughput with
/// big and with small events, and the path's CPU for each.
fn one_round(w: &Way, sizes: &Sizes, models: &Models) -> anyhow::Result<Round> {
    let mut r = Round {
        ttfb_us: median(&ttfb(&w.addr, sizes.ttfb_requests)?).unwrap_or(f64::NAN),
        ..Round::default()
    };
    let mut c = Client::connect(&w.addr)?;
    let a = c.stream(&models.timed, "timed", true)?;
    if a.trips_ns.len() != sizes.timed_events {
        bail!(
            "{}: {} timed events of {}",
            w.name,
            a.trips_ns.len(),
            sizes.timed_events
        );
    }
    let trips: Vec<f64> = a.trips_ns.iter().map(|&t| t as f64 / 1e3).collect();
    r.trip_us = median(&trips).unwrap_or(f64::NAN);
    drop(c);

    let before = w.pid.map(process_cpu).transpose()?;
    let b = load(&w.addr, CLIENTS, sizes.big_per_client, &models.big, "big")?;
    if let (Some(pid), Some(before)) = (w.pid, before) {
        let used = process_cpu(pid)? - before;
        r.big_cpu_ms_per_mib = used.as_secs_f64() * 1e3 / (b.bytes as f64 / MIB);
    }
    r.big_mbps = b.bytes as f64 / 1e6 / b.secs;

    let before = w.pid.map(process_cpu).transpose()?;
    let s = load(
        &w.addr,
        CLIENTS,
        sizes.small_per_client,
        &models.small,
        "small",
    )?;
    let events = (CLIENTS * sizes.small_per_client * sizes.small_events) as f64;
    if let (Some(pid), Some(before)) = (w.pid, before) {
        let used = process_cpu(pid)? - before;
        r.small_cpu_us_per_event = used.as_secs_f64() * 1e6 / events;
    }
    r.small_eps = events / s.secs;
    Ok(r)
}

/// The round's line per path, as it finishes.
fn print_round(round: usize, ways: &[Way], rounds: &[Vec<Round>]) {
    println!("round {round}:");
    for (w, rs) in ways.iter().zip(rounds) {
        let r = rs.last().cloned().unwrap_or_default();
        println!(
            "  {:<8} ttfb p50 {:>7} µs | event trip p50 {:>7} µs | {:>7} MB/s (16 KiB events) | {:>9} events/s (100 B events)",
            w.name,
            fmt_value(r.ttfb_us),
            fmt_value(r.trip_us),
            fmt_value(r.big_mbps),
            fmt_value(r.small_eps)
        );
    }
}

/// Peak RSS for one 100 MB response, each proxy fresh.
fn peak_rss(
    ctx: &Ctx,
    sizes: &Sizes,
    relay: &Path,
    mitm: Option<&PathBuf>,
    up: &str,
    root: &Path,
) -> anyhow::Result<Rss> {
    let rss_model = sse::model(sizes.rss_events, BIG_EVENT, 0);
    let rss_bytes = sse::body_len(sizes.rss_events, BIG_EVENT);
    let rss_of = |addr: &str, pid: u32| rss_of(addr, pid, &rss_model, rss_bytes);
    let (relay_proc, relay_addr) = start_listener(relay, &["--to", up])?;
    let relay_rss = rss_of(&relay_addr, relay_proc.0.id())?;
    drop(relay_proc);
    let mut rss_reel = Reel::record(ctx, up, &root.join("rss-traces"))?;
    let reel_rss = rss_of(&rss_reel.addr, rss_reel.child.0.id())?;
    let rss_trace = rss_reel.stop()?;
    check_trace(&rss_trace, 2)?;
    let mitm_rss = match mitm {
        Some(exe) => {
            let m = Mitm::start(exe, up, root)?;
            Some(rss_of(&m.addr, m.child.0.id())?)
        }
        None => None,
    };
    Ok(Rss {
        bytes: rss_bytes,
        relay: relay_rss,
        reel: reel_rss,
        mitm: mitm_rss,
    })
}

/// One big streamed answer through the proxy at `addr` (process `pid`), and its peaks.
fn rss_of(addr: &str, pid: u32, rss_model: &str, rss_bytes: u64) -> anyhow::Result<RssRun> {
    let mut c = Client::connect(addr)?;
    c.stream(&sse::model(4, 64, 0), "rss-warm", false)?;
    let base = vm_hwm(pid)?;
    let a = c.stream(rss_model, "rss", false)?;
    if a.bytes != rss_bytes {
        bail!("{addr}: {} of {rss_bytes} bytes", a.bytes);
    }
    // The peak until the client had the last byte, then the peak once the proxy
    // is done with the exchange (what it does after the body's end: the record).
    let streaming = vm_hwm(pid)?;
    let mut peak = streaming;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        std::thread::sleep(Duration::from_millis(250));
        let now = vm_hwm(pid)?;
        if now == peak || Instant::now() > deadline {
            break;
        }
        peak = now;
    }
    Ok(RssRun {
        base,
        streaming,
        peak,
    })
}

/// Replay: record small exchanges, then serve them back, a fresh `--play` per round,
/// next to the live upstream under the same load.
fn replay(ctx: &Ctx, sizes: &Sizes, up: &str, root: &Path) -> anyhow::Result<Replay> {
    let exchanges = CLIENTS * sizes.replay_per_client;
    let replay_model = sse::model(8, SMALL_EVENT, 0);
    let mut rec = Reel::record(ctx, up, &root.join("replay-traces"))?;
    load(
        &rec.addr,
        CLIENTS,
        sizes.replay_per_client,
        &replay_model,
        "replay",
    )?;
    let tape = rec.stop()?;
    check_trace(&tape, exchanges)?;
    let (mut play_rps, mut live_rps) = (Vec::new(), Vec::new());
    for round in 1..=sizes.rounds {
        let live = load(
            up,
            CLIENTS,
            sizes.replay_per_client,
            &replay_model,
            "replay",
        )?;
        let mut play = Reel::play(ctx, &tape)?;
        let p = load(
            &play.addr,
            CLIENTS,
            sizes.replay_per_client,
            &replay_model,
            "replay",
        )?;
        let summary = play.stop_text()?;
        let want = format!("answered {exchanges} requests from the tape; 0 misses");
        if !summary.contains(&want) {
            bail!("reel llm --play did not answer every request from the tape: {summary}");
        }
        let (l, r) = (exchanges as f64 / live.secs, exchanges as f64 / p.secs);
        println!(
            "replay round {round}: live upstream {:>7} req/s | reel llm --play {:>7} req/s",
            fmt_value(l),
            fmt_value(r)
        );
        live_rps.push(l);
        play_rps.push(r);
    }
    Ok(Replay {
        play_rps,
        live_rps,
        exchanges,
    })
}
