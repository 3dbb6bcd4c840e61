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

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::http_load::process_cpu;
use super::sse::{self, Client, start_upstream};
use super::{Ctx, Figure, Running, Target, fmt_value, median, start_listener};
use crate::process::{self, display};

const ROUNDS: usize = 5;
const CLIENTS: usize = 16;

/// Targets from the issue.
const TTFB_ADDED_MS: f64 = 1.0;
const EVENT_ADDED_US: f64 = 100.0;
const THROUGHPUT_RATIO: f64 = 0.8;
const RSS_MIB: f64 = 64.0;

/// Big events: 16 KiB of text each.
const BIG_EVENT: usize = 16 * 1024;
/// Small events: what a model's text deltas weigh.
const SMALL_EVENT: usize = 100;
/// Gap between the timed events.
const GAP_US: u64 = 2000;

struct Sizes {
    rounds: usize,
    ttfb_requests: usize,
    timed_events: usize,
    big_events: usize,
    big_per_client: usize,
    small_events: usize,
    small_per_client: usize,
    rss_events: usize,
    replay_per_client: usize,
}

impl Sizes {
    fn of(quick: bool) -> Sizes {
        if quick {
            Sizes {
                rounds: 1,
                ttfb_requests: 30,
                timed_events: 40,
                big_events: 32,
                big_per_client: 1,
                small_events: 200,
                small_per_client: 1,
                rss_events: 640,
                replay_per_client: 10,
            }
        } else {
            Sizes {
                rounds: ROUNDS,
                ttfb_requests: 300,
                timed_events: 250,
                big_events: 256,
                big_per_client: 2,
                small_events: 1000,
                small_per_client: 4,
                rss_events: 6400,
                replay_per_client: 250,
            }
        }
    }
}

/// One way to the upstream.
struct Way {
    name: &'static str,
    addr: String,
    pid: Option<u32>,
}

/// What one path did in one round.
#[derive(Default, Clone)]
struct Round {
    ttfb_us: f64,
    trip_us: f64,
    big_mbps: f64,
    big_cpu_ms_per_mib: f64,
    small_eps: f64,
    small_cpu_us_per_event: f64,
}

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
    let (relay_proc, relay_addr) = start_listener(&relay, &["--to", &up])?;
    let mut reel = Reel::record(ctx, &up, &root.join("traces"))?;
    let mitm_proc = match &mitm {
        Ok(exe) => Some(Mitm::start(exe, &up, &root)?),
        Err(_) => None,
    };
    let mut ways = vec![
        Way {
            name: "direct",
            addr: up.clone(),
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
    let big = sse::model(sizes.big_events, BIG_EVENT, 0);
    let small = sse::model(sizes.small_events, SMALL_EVENT, 0);
    let timed = sse::model(sizes.timed_events, 64, GAP_US);
    for round in 1..=sizes.rounds {
        for (k, w) in ways.iter().enumerate() {
            let mut r = Round {
                ttfb_us: median(&ttfb(&w.addr, sizes.ttfb_requests)?).unwrap_or(f64::NAN),
                ..Round::default()
            };
            let mut c = Client::connect(&w.addr)?;
            let a = c.stream(&timed, "timed", true)?;
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
            let b = load(&w.addr, CLIENTS, sizes.big_per_client, &big, "big")?;
            if let (Some(pid), Some(before)) = (w.pid, before) {
                let used = process_cpu(pid)? - before;
                r.big_cpu_ms_per_mib = used.as_secs_f64() * 1e3 / (b.bytes as f64 / MIB);
            }
            r.big_mbps = b.bytes as f64 / 1e6 / b.secs;

            let before = w.pid.map(process_cpu).transpose()?;
            let s = load(&w.addr, CLIENTS, sizes.small_per_client, &small, "small")?;
            let events = (CLIENTS * sizes.small_per_client * sizes.small_events) as f64;
            if let (Some(pid), Some(before)) = (w.pid, before) {
                let used = process_cpu(pid)? - before;
                r.small_cpu_us_per_event = used.as_secs_f64() * 1e6 / events;
            }
            r.small_eps = events / s.secs;
            count(
                w,
                sizes.ttfb_requests + 1 + CLIENTS * (sizes.big_per_client + sizes.small_per_client),
                &mut through_reel,
            );
            rounds[k].push(r);
        }
        println!("round {round}:");
        for (w, rs) in ways.iter().zip(&rounds) {
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

    drop(mitm_proc);
    let trace = reel.stop()?;
    check_trace(&trace, through_reel)?;
    drop(relay_proc);

    // Peak RSS for one 100 MB response, each proxy fresh.
    let rss_model = sse::model(sizes.rss_events, BIG_EVENT, 0);
    let rss_bytes = sse::body_len(sizes.rss_events, BIG_EVENT);
    let rss_of = |addr: &str, pid: u32| -> anyhow::Result<RssRun> {
        let mut c = Client::connect(addr)?;
        c.stream(&sse::model(4, 64, 0), "rss-warm", false)?;
        let base = vm_hwm(pid)?;
        let a = c.stream(&rss_model, "rss", false)?;
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
    };
    let (relay_proc, relay_addr) = start_listener(&relay, &["--to", &up])?;
    let relay_rss = rss_of(&relay_addr, relay_proc.0.id())?;
    drop(relay_proc);
    let mut rss_reel = Reel::record(ctx, &up, &root.join("rss-traces"))?;
    let reel_rss = rss_of(&rss_reel.addr, rss_reel.child.0.id())?;
    let rss_trace = rss_reel.stop()?;
    check_trace(&rss_trace, 2)?;
    let mitm_rss = match &mitm {
        Ok(exe) => {
            let m = Mitm::start(exe, &up, &root)?;
            Some(rss_of(&m.addr, m.child.0.id())?)
        }
        Err(_) => None,
    };

    // Replay: record small exchanges, then serve them back.
    let exchanges = CLIENTS * sizes.replay_per_client;
    let replay_model = sse::model(8, SMALL_EVENT, 0);
    let mut rec = Reel::record(ctx, &up, &root.join("replay-traces"))?;
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
            &up,
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

    Ok(figures(
        &sizes,
        &ways,
        &rounds,
        Rss {
            bytes: rss_bytes,
            relay: relay_rss,
            reel: reel_rss,
            mitm: mitm_rss,
        },
        &mitm,
        (&play_rps, &live_rps, exchanges),
    ))
}

const MIB: f64 = 1024.0 * 1024.0;

struct Rss {
    bytes: u64,
    relay: RssRun,
    reel: RssRun,
    mitm: Option<RssRun>,
}

/// `VmHWM` of one proxy process, bytes: after a small request, when the client had the
/// whole 100 MB answer, and once the proxy was done with it.
#[derive(Clone, Copy)]
struct RssRun {
    base: f64,
    streaming: f64,
    peak: f64,
}

impl RssRun {
    fn note(&self) -> String {
        format!(
            "{} MiB after one small request, {} MiB when the client had the last byte",
            fmt_value(self.base / MIB),
            fmt_value(self.streaming / MIB)
        )
    }
}

fn figures(
    sizes: &Sizes,
    ways: &[Way],
    rounds: &[Vec<Round>],
    rss: Rss,
    mitm: &Result<PathBuf, String>,
    (play_rps, live_rps, exchanges): (&[f64], &[f64], usize),
) -> Vec<Figure> {
    let med = |xs: &[f64]| median(xs).unwrap_or(f64::NAN);
    let of = |name: &str| ways.iter().position(|w| w.name == name);
    let col = |k: usize, f: fn(&Round) -> f64| rounds[k].iter().map(f).collect::<Vec<f64>>();
    // Per round: `f(path) − f(direct)` or `f(path) ÷ f(base)`.
    let diff = |k: usize, base: usize, f: fn(&Round) -> f64| {
        med(&rounds[k]
            .iter()
            .zip(&rounds[base])
            .map(|(a, b)| f(a) - f(b))
            .collect::<Vec<_>>())
    };
    let ratio = |k: usize, base: usize, f: fn(&Round) -> f64| {
        med(&rounds[k]
            .iter()
            .zip(&rounds[base])
            .map(|(a, b)| f(a) / f(b))
            .collect::<Vec<_>>())
    };
    let (direct, relay, reel) = (
        of("direct").unwrap_or(0),
        of("relay").unwrap_or(0),
        of("reel").unwrap_or(0),
    );
    let mitm_k = of("mitmdump");
    let no_mitm = |name: &str, unit: &str| {
        Figure::missing(
            name,
            unit,
            format!(
                "mitmdump: {}",
                mitm.as_ref().err().map_or("not run", String::as_str)
            ),
        )
    };
    let mitm_fig = |name: &str, unit: &str, f: &dyn Fn(usize) -> Figure| match mitm_k {
        Some(k) => Some(f(k)),
        None if ctx_quick_skip(mitm) => None,
        None => Some(no_mitm(name, unit)),
    };
    let rounds_n = sizes.rounds;
    let ttfb = |r: &Round| r.ttfb_us;
    let trip = |r: &Round| r.trip_us;
    let big = |r: &Round| r.big_mbps;
    let small = |r: &Round| r.small_eps;
    let mut out = Vec::new();

    // 1. Time to first byte.
    let abs = |k: usize| fmt_value(med(&col(k, ttfb)));
    out.push(
        Figure::new("llm added TTFB p50, one client", diff(reel, direct, ttfb) / 1e3, "ms")
            .target(Target::AtMost(TTFB_ADDED_MS))
            .note(format!(
                "median time from writing a streaming POST /v1/messages to the first body byte, through reel − direct, {} sequential keep-alive requests per round, median of {rounds_n} rounds; p50 direct {} µs, relay {} µs, reel {} µs",
                sizes.ttfb_requests,
                abs(direct),
                abs(relay),
                abs(reel)
            )),
    );
    out.push(
        Figure::new(
            "bare TCP relay added TTFB p50",
            diff(relay, direct, ttfb) / 1e3,
            "ms",
        )
        .note("as above, through the TCP relay"),
    );
    out.extend(mitm_fig("mitmdump added TTFB p50", "ms", &|k| {
        Figure::new("mitmdump added TTFB p50", diff(k, direct, ttfb) / 1e3, "ms")
            .note(format!("as above, through mitmdump; p50 {} µs", abs(k)))
    }));

    // 2. Delay per event.
    let abs = |k: usize| fmt_value(med(&col(k, trip)));
    out.push(
        Figure::new("llm added delay per SSE event p50", diff(reel, direct, trip), "µs")
            .target(Target::AtMost(EVENT_ADDED_US))
            .note(format!(
                "{} content_block_delta events {GAP_US} µs apart, each stamped with its write time; arrival − stamp, median over the events, through reel − direct, median of {rounds_n} rounds; p50 trip direct {} µs, relay {} µs, reel {} µs",
                sizes.timed_events,
                abs(direct),
                abs(relay),
                abs(reel)
            )),
    );
    out.push(
        Figure::new(
            "bare TCP relay added delay per SSE event p50",
            diff(relay, direct, trip),
            "µs",
        )
        .note("as above, through the TCP relay"),
    );
    out.extend(mitm_fig(
        "mitmdump added delay per SSE event p50",
        "µs",
        &|k| {
            Figure::new(
                "mitmdump added delay per SSE event p50",
                diff(k, direct, trip),
                "µs",
            )
            .note(format!(
                "as above, through mitmdump; p50 trip {} µs",
                abs(k)
            ))
        },
    ));

    // 3. Throughput.
    let abs = |k: usize| fmt_value(med(&col(k, big)));
    let big_how = format!(
        "{CLIENTS} clients × {} streamed answers of {} × 16 KiB events ({} MiB each)",
        sizes.big_per_client,
        sizes.big_events,
        fmt_value(sizes.big_events as f64 / 64.0)
    );
    out.push(
        Figure::new("llm throughput ÷ bare TCP relay, 16 clients", ratio(reel, relay, big), "ratio")
            .target(Target::AtLeast(THROUGHPUT_RATIO))
            .note(format!(
                "SSE payload MB/s through reel ÷ through the relay, same round; {big_how}; median of {rounds_n} rounds; direct {} MB/s, relay {} MB/s, reel {} MB/s",
                abs(direct),
                abs(relay),
                abs(reel)
            )),
    );
    out.push(
        Figure::new("llm throughput, 16 clients", med(&col(reel, big)), "MB/s").note(format!(
            "reel ÷ direct {}; reel CPU {} ms per MiB forwarded and recorded (user+system, all threads, /proc), the relay's {} ms",
            fmt_value(ratio(reel, direct, big)),
            fmt_value(med(&col(reel, |r| r.big_cpu_ms_per_mib))),
            fmt_value(med(&col(relay, |r| r.big_cpu_ms_per_mib)))
        )),
    );
    out.push(
        Figure::new(
            "bare TCP relay throughput, 16 clients",
            med(&col(relay, big)),
            "MB/s",
        )
        .note(format!(
            "relay ÷ direct {}",
            fmt_value(ratio(relay, direct, big))
        )),
    );
    out.extend(mitm_fig("mitmdump throughput, 16 clients", "MB/s", &|k| {
        Figure::new("mitmdump throughput, 16 clients", med(&col(k, big)), "MB/s").note(format!(
            "mitmdump ÷ relay {}, reel ÷ mitmdump {}; mitmdump CPU {} ms per MiB",
            fmt_value(ratio(k, relay, big)),
            fmt_value(ratio(reel, k, big)),
            fmt_value(med(&col(k, |r| r.big_cpu_ms_per_mib)))
        ))
    }));
    let abs = |k: usize| fmt_value(med(&col(k, small)));
    out.push(
        Figure::new(
            "llm throughput ÷ bare TCP relay, 100 B events",
            ratio(reel, relay, small),
            "ratio",
        )
        .note(format!(
            "events/s through reel ÷ through the relay, {CLIENTS} clients × {} answers of {} events of {SMALL_EVENT} B text; direct {} events/s, relay {}, reel {}{}; reel CPU {} µs per event, the relay's {} µs",
            sizes.small_per_client,
            sizes.small_events,
            abs(direct),
            abs(relay),
            abs(reel),
            mitm_k.map_or(String::new(), |k| format!(", mitmdump {}", abs(k))),
            fmt_value(med(&col(reel, |r| r.small_cpu_us_per_event))),
            fmt_value(med(&col(relay, |r| r.small_cpu_us_per_event)))
        )),
    );

    // 4. Peak RSS.
    let mib = |b: f64| b / MIB;
    let rss_how = format!(
        "VmHWM of a fresh process after one {:.0} MB streamed answer (16 KiB events) to a client reading at full speed",
        rss.bytes as f64 / 1e6
    );
    out.push(
        Figure::new("llm peak RSS, one 100 MB stream", mib(rss.reel.peak), "MiB")
            .target(Target::AtMost(RSS_MIB))
            .note(format!("{rss_how}; {}", rss.reel.note())),
    );
    out.push(
        Figure::new(
            "bare TCP relay peak RSS, one 100 MB stream",
            mib(rss.relay.peak),
            "MiB",
        )
        .note(rss.relay.note()),
    );
    match rss.mitm {
        Some(m) => out.push(
            Figure::new("mitmdump peak RSS, one 100 MB stream", mib(m.peak), "MiB").note(m.note()),
        ),
        None if ctx_quick_skip(mitm) => {}
        None => out.push(no_mitm("mitmdump peak RSS, one 100 MB stream", "MiB")),
    }

    // 5. Replay.
    out.push(
        Figure::new("llm --play requests/s, 16 clients", med(play_rps), "req/s").note(format!(
            "a recorded trace of {exchanges} streamed exchanges (8 × {SMALL_EVENT} B deltas each), every one asked for by {CLIENTS} keep-alive clients, a fresh reel llm --play per round, median of {rounds_n} rounds; the live upstream with the same load: {} req/s (play ÷ live {})",
            fmt_value(med(live_rps)),
            fmt_value(med(
                &play_rps
                    .iter()
                    .zip(live_rps)
                    .map(|(p, l)| p / l)
                    .collect::<Vec<_>>()
            ))
        )),
    );
    out
}

/// `--quick` leaves out the mitmdump figures when mitmdump is not installed.
fn ctx_quick_skip(mitm: &Result<PathBuf, String>) -> bool {
    mitm.as_ref().is_err_and(|e| e.starts_with(QUICK_SKIP))
}

const QUICK_SKIP: &str = "not installed, and --quick does not install it";

/// A load run's outcome.
struct Rate {
    secs: f64,
    bytes: u64,
}

/// `clients` keep-alive clients, each `per_client` streaming requests for `model` in a
/// row; the wall time from their common start to the last answer's end.
fn load(
    addr: &str,
    clients: usize,
    per_client: usize,
    model: &str,
    tag: &str,
) -> anyhow::Result<Rate> {
    let barrier = Arc::new(Barrier::new(clients + 1));
    let mut threads = Vec::new();
    for c in 0..clients {
        let mut client = Client::connect(addr)?;
        let barrier = Arc::clone(&barrier);
        let model = model.to_owned();
        let tag = tag.to_owned();
        threads.push(std::thread::spawn(move || -> anyhow::Result<u64> {
            barrier.wait();
            let mut bytes = 0;
            for i in 0..per_client {
                bytes += client
                    .stream(&model, &format!("{tag} {c}-{i}"), false)?
                    .bytes;
            }
            Ok(bytes)
        }));
    }
    barrier.wait();
    let start = Instant::now();
    let mut bytes = 0;
    let mut err = None;
    for t in threads {
        match t.join() {
            Ok(Ok(b)) => bytes += b,
            Ok(Err(e)) => err = Some(e),
            Err(_) => err = Some(anyhow::anyhow!("a client thread panicked")),
        }
    }
    let secs = start.elapsed().as_secs_f64();
    if let Some(e) = err {
        return Err(e.context(format!("load through {addr}")));
    }
    Ok(Rate { secs, bytes })
}

/// TTFB of `n` sequential streaming requests on one connection, µs each.
fn ttfb(addr: &str, n: usize) -> anyhow::Result<Vec<f64>> {
    let mut c = Client::connect(addr)?;
    let model = sse::model(4, 64, 0);
    (0..n)
        .map(|_| Ok(c.stream(&model, "ttfb", false)?.ttfb.as_secs_f64() * 1e6))
        .collect()
}

/// Peak RSS of a process, bytes (`VmHWM`).
fn vm_hwm(pid: u32) -> anyhow::Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("cannot read /proc/{pid}/status (Linux only)"))?;
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmHWM")?;
    Ok(kib * 1024.0)
}

fn build_relay(ctx: &Ctx) -> anyhow::Result<PathBuf> {
    let mut exes = super::build_examples(ctx, "reel-record", &["tcp_relay"])?;
    Ok(exes.remove(0))
}

/// A running `reel llm`, its stderr collected on a thread.
struct Reel {
    child: Running,
    addr: String,
    stderr: Option<std::thread::JoinHandle<String>>,
    dir: Option<PathBuf>,
}

impl Reel {
    /// `reel llm --upstream http://UP --dir DIR`.
    fn record(ctx: &Ctx, up: &str, dir: &Path) -> anyhow::Result<Reel> {
        let mut c = Command::new(&ctx.reel);
        c.args(["llm", "--name", "bench-llm", "--listen", "127.0.0.1:0"])
            .arg("--upstream")
            .arg(format!("http://{up}"))
            .arg("--dir")
            .arg(dir);
        let mut r = Reel::start(c)?;
        r.dir = Some(dir.to_owned());
        Ok(r)
    }

    /// `reel llm --play TRACE`.
    fn play(ctx: &Ctx, trace: &Path) -> anyhow::Result<Reel> {
        let mut c = Command::new(&ctx.reel);
        c.args(["llm", "--listen", "127.0.0.1:0", "--play"])
            .arg(trace);
        Reel::start(c)
    }

    fn start(c: Command) -> anyhow::Result<Reel> {
        let l = super::start_reel(c)?;
        let addr = l
            .url
            .strip_prefix("http://")
            .with_context(|| format!("reel llm listens on {}, not http://", l.url))?
            .to_owned();
        Ok(Reel {
            child: l.child,
            addr,
            stderr: Some(l.stderr),
            dir: None,
        })
    }

    /// SIGTERM; what it said after listening. It must exit 0.
    fn stop_text(&mut self) -> anyhow::Result<String> {
        let status = super::sigterm(&mut self.child)?;
        let text = self
            .stderr
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        if !status.success() {
            bail!("reel llm exited with {status} after SIGTERM: {text}");
        }
        Ok(text)
    }

    /// Stops a recording reel; its trace.
    fn stop(&mut self) -> anyhow::Result<PathBuf> {
        self.stop_text()?;
        let dir = self.dir.as_ref().context("not a recording")?;
        let entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .with_context(|| format!("cannot read {}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        match entries.as_slice() {
            [trace] => Ok(trace.clone()),
            _ => bail!("expected one trace in {}: {entries:?}", dir.display()),
        }
    }
}

/// The trace holds one `llm.request` per proxied request, no `llm.truncated`, and ends
/// with its end line.
fn check_trace(trace: &Path, requests: usize) -> anyhow::Result<()> {
    let mut f =
        std::fs::File::open(trace).with_context(|| format!("cannot open {}", trace.display()))?;
    let (req, trunc) = (
        memchr::memmem::Finder::new(br#""kind":"llm.request""#),
        memchr::memmem::Finder::new(br#""kind":"llm.truncated""#),
    );
    let (mut n_req, mut n_trunc) = (0usize, 0usize);
    let mut buf = vec![0u8; 1 << 20];
    let mut carry: Vec<u8> = Vec::new();
    let mut last_line = Vec::new();
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        carry.extend_from_slice(&buf[..n]);
        let cut = memchr::memrchr(b'\n', &carry).map_or(0, |i| i + 1);
        n_req += req.find_iter(&carry[..cut]).count();
        n_trunc += trunc.find_iter(&carry[..cut]).count();
        if cut > 0 {
            let body = &carry[..cut - 1];
            let start = memchr::memrchr(b'\n', body).map_or(0, |i| i + 1);
            last_line = body[start..].to_vec();
        }
        carry.drain(..cut);
    }
    let end: serde_json::Value = serde_json::from_slice(&last_line).unwrap_or_default();
    if end["type"] != "end" {
        bail!("{}: no end line", trace.display());
    }
    if n_req != requests || n_trunc != 0 {
        bail!(
            "{}: {n_req} llm.request lines for {requests} requests, {n_trunc} llm.truncated",
            trace.display()
        );
    }
    Ok(())
}

/// A running `mitmdump` in reverse-proxy mode.
struct Mitm {
    child: Running,
    addr: String,
}

impl Mitm {
    fn start(exe: &Path, up: &str, work: &Path) -> anyhow::Result<Mitm> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let conf = work.join("mitmproxy-conf");
        std::fs::create_dir_all(&conf)?;
        let mut c = Command::new(exe);
        c.arg("--mode")
            .arg(format!("reverse:http://{up}"))
            .args([
                "--listen-host",
                "127.0.0.1",
                "--listen-port",
                &port.to_string(),
            ])
            .args(["--set", "stream_large_bodies=1", "--set", "flow_detail=0"])
            .arg("--set")
            .arg(format!("confdir={}", conf.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        println!("$ {}", display(&c));
        let mut child = Running(c.spawn().context("cannot start mitmdump")?);
        let addr = format!("127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(&addr).is_err() {
            if let Some(status) = child.0.try_wait()? {
                bail!("mitmdump exited with {status} before it listened");
            }
            if Instant::now() > deadline {
                bail!("mitmdump did not listen within 30 s");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(Mitm { child, addr })
    }
}

/// The venv's `mitmdump`, installed from PyPI into `target/bench/mitmproxy-venv` with a
/// Python ≥ 3.12 when missing (not by `--quick`); or why there is none.
fn mitmdump(ctx: &Ctx) -> Result<PathBuf, String> {
    let venv = process::target_dir(&process::workspace_root()).join("bench/mitmproxy-venv");
    let exe = venv.join("bin/mitmdump");
    if exe.exists() {
        return Ok(exe);
    }
    if ctx.quick {
        return Err(format!("{QUICK_SKIP} (the full run does)"));
    }
    let python = find_python().ok_or_else(|| {
        "no Python ≥ 3.12 found (python3.12/3.13 on PATH or under ~/.pyenv/versions); mitmproxy 11+ needs one".to_owned()
    })?;
    let log = venv.with_extension("install.log");
    let run = |c: &mut Command| -> Result<(), String> {
        let shown = display(c);
        println!("$ {shown}");
        let out = c
            .output()
            .map_err(|e| format!("cannot run `{shown}`: {e}"))?;
        let mut text = out.stdout.clone();
        text.extend_from_slice(&out.stderr);
        let _ = std::fs::write(&log, &text);
        if out.status.success() {
            return Ok(());
        }
        let text = String::from_utf8_lossy(&text);
        let tail: Vec<&str> = text.lines().rev().take(3).collect();
        Err(format!(
            "`{shown}` failed ({}): {}",
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        ))
    };
    run(Command::new(&python).args(["-m", "venv"]).arg(&venv))?;
    run(Command::new(venv.join("bin/pip"))
        .args(["install", "--disable-pip-version-check", "-q"])
        .arg("mitmproxy>=11,<13"))?;
    if exe.exists() {
        Ok(exe)
    } else {
        Err(format!(
            "pip installed mitmproxy but {} is missing",
            exe.display()
        ))
    }
}

/// A Python ≥ 3.12: on PATH, else the newest under pyenv's versions.
fn find_python() -> Option<PathBuf> {
    for name in ["python3.13", "python3.12"] {
        if Command::new(name)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
        {
            return Some(PathBuf::from(name));
        }
    }
    let root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".pyenv")))?;
    let mut found: Vec<((u32, u32), PathBuf)> = std::fs::read_dir(root.join("versions"))
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().to_string_lossy().into_owned();
            let mut it = name.split('.');
            let major: u32 = it.next()?.parse().ok()?;
            let minor: u32 = it.next()?.parse().ok()?;
            let exe = e.path().join("bin/python3");
            (major == 3 && minor >= 12 && exe.exists()).then_some(((major, minor), exe))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, p)| p)
}
