//! The llm bench's figures, from the rounds along every path, the peak RSS runs and the
//! replay rounds: the targets next to the figures they apply to, and the notes
//! that say how each was measured.

use std::path::PathBuf;

use super::super::{Figure, Target, fmt_value, median};
use super::procs::ctx_quick_skip;
use super::shape::{
    CLIENTS, EVENT_ADDED_US, GAP_US, MIB, RSS_MIB, Round, Rss, SMALL_EVENT, Sizes,
    THROUGHPUT_RATIO, TTFB_ADDED_MS, Way,
};

/// What the replay rounds measured.
pub(super) struct Replay {
    pub(super) play_rps: Vec<f64>,
    pub(super) live_rps: Vec<f64>,
    pub(super) exchanges: usize,
}

/// Every figure of the llm bench, in the order of the table.
pub(super) fn figures(
    sizes: &Sizes,
    ways: &[Way],
    rounds: &[Vec<Round>],
    rss: Rss,
    mitm: &Result<PathBuf, String>,
    replay: Replay,
) -> Vec<Figure> {
    let paths = Paths::new(ways, rounds, mitm);
    let mut out = ttfb_figures(&paths, sizes);
    out.extend(delay_figures(&paths, sizes));
    out.extend(throughput_figures(&paths, sizes));
    out.extend(rss_figures(&paths, &rss));
    out.push(replay_figure(sizes, &replay));
    out
}

fn med(xs: &[f64]) -> f64 {
    median(xs).unwrap_or(f64::NAN)
}

/// The rounds of every path, read as the figures need them.
struct Paths<'a> {
    rounds: &'a [Vec<Round>],
    direct: usize,
    relay: usize,
    reel: usize,
    mitm: Option<usize>,
    why_no_mitm: &'a Result<PathBuf, String>,
}

impl<'a> Paths<'a> {
    fn new(ways: &[Way], rounds: &'a [Vec<Round>], mitm: &'a Result<PathBuf, String>) -> Self {
        let of = |name: &str| ways.iter().position(|w| w.name == name);
        Paths {
            rounds,
            direct: of("direct").unwrap_or(0),
            relay: of("relay").unwrap_or(0),
            reel: of("reel").unwrap_or(0),
            mitm: of("mitmdump"),
            why_no_mitm: mitm,
        }
    }

    /// One value of path `k`, per round.
    fn col(&self, k: usize, f: fn(&Round) -> f64) -> Vec<f64> {
        self.rounds[k].iter().map(f).collect()
    }

    /// The median over the rounds of one value of path `k`.
    fn med(&self, k: usize, f: fn(&Round) -> f64) -> f64 {
        med(&self.col(k, f))
    }

    /// That median, written for a note.
    fn abs(&self, k: usize, f: fn(&Round) -> f64) -> String {
        fmt_value(self.med(k, f))
    }

    /// Per round `f(path) − f(base)`; the median.
    fn diff(&self, k: usize, base: usize, f: fn(&Round) -> f64) -> f64 {
        med(&self.rounds[k]
            .iter()
            .zip(&self.rounds[base])
            .map(|(a, b)| f(a) - f(b))
            .collect::<Vec<_>>())
    }

    /// Per round `f(path) ÷ f(base)`; the median.
    fn ratio(&self, k: usize, base: usize, f: fn(&Round) -> f64) -> f64 {
        med(&self.rounds[k]
            .iter()
            .zip(&self.rounds[base])
            .map(|(a, b)| f(a) / f(b))
            .collect::<Vec<_>>())
    }

    /// A mitmdump figure not measured, and why.
    fn no_mitm(&self, name: &str, unit: &str) -> Figure {
        Figure::missing(
            name,
            unit,
            format!(
                "mitmdump: {}",
                self.why_no_mitm
                    .as_ref()
                    .err()
                    .map_or("not run", String::as_str)
            ),
        )
    }

    /// The mitmdump figure `f` makes from its path; missing without mitmdump, left out
    /// when `--quick` did not install it.
    fn mitm_fig(&self, name: &str, unit: &str, f: &dyn Fn(usize) -> Figure) -> Option<Figure> {
        match self.mitm {
            Some(k) => Some(f(k)),
            None if ctx_quick_skip(self.why_no_mitm) => None,
            None => Some(self.no_mitm(name, unit)),
        }
    }
}

fn ttfb(r: &Round) -> f64 {
    r.ttfb_us
}

fn trip(r: &Round) -> f64 {
    r.trip_us
}

fn big(r: &Round) -> f64 {
    r.big_mbps
}

fn small(r: &Round) -> f64 {
    r.small_eps
}

/// 1. Time to first byte.
fn ttfb_figures(p: &Paths, sizes: &Sizes) -> Vec<Figure> {
    let (direct, relay, reel) = (p.direct, p.relay, p.reel);
    let rounds_n = sizes.rounds;
    let mut out = vec![
        Figure::new("llm added TTFB p50, one client", p.diff(reel, direct, ttfb) / 1e3, "ms")
            .target(Target::AtMost(TTFB_ADDED_MS))
            .note(format!(
                "median time from writing a streaming POST /v1/messages to the first body byte, through reel − direct, {} sequential keep-alive requests per round, median of {rounds_n} rounds; p50 direct {} µs, relay {} µs, reel {} µs",
                sizes.ttfb_requests,
                p.abs(direct, ttfb),
                p.abs(relay, ttfb),
                p.abs(reel, ttfb)
            )),
        Figure::new(
            "bare TCP relay added TTFB p50",
            p.diff(relay, direct, ttfb) / 1e3,
            "ms",
        )
        .note("as above, through the TCP relay"),
    ];
    out.extend(p.mitm_fig("mitmdump added TTFB p50", "ms", &|k| {
        Figure::new(
            "mitmdump added TTFB p50",
            p.diff(k, direct, ttfb) / 1e3,
            "ms",
        )
        .note(format!(
            "as above, through mitmdump; p50 {} µs",
            p.abs(k, ttfb)
        ))
    }));
    out
}

/// 2. Delay per event.
fn delay_figures(p: &Paths, sizes: &Sizes) -> Vec<Figure> {
    let (direct, relay, reel) = (p.direct, p.relay, p.reel);
    let rounds_n = sizes.rounds;
    let mut out = vec![
        Figure::new("llm added delay per SSE event p50", p.diff(reel, direct, trip), "µs")
            .target(Target::AtMost(EVENT_ADDED_US))
            .note(format!(
                "{} content_block_delta events {GAP_US} µs apart, each stamped with its write time; arrival − stamp, median over the events, through reel − direct, median of {rounds_n} rounds; p50 trip direct {} µs, relay {} µs, reel {} µs",
                sizes.timed_events,
                p.abs(direct, trip),
                p.abs(relay, trip),
                p.abs(reel, trip)
            )),
        Figure::new(
            "bare TCP relay added delay per SSE event p50",
            p.diff(relay, direct, trip),
            "µs",
        )
        .note("as above, through the TCP relay"),
    ];
    out.extend(
        p.mitm_fig("mitmdump added delay per SSE event p50", "µs", &|k| {
            Figure::new(
                "mitmdump added delay per SSE event p50",
                p.diff(k, direct, trip),
                "µs",
            )
            .note(format!(
                "as above, through mitmdump; p50 trip {} µs",
                p.abs(k, trip)
            ))
        }),
    );
    out
}

/// 3. Throughput, with big events and with small ones.
fn throughput_figures(p: &Paths, sizes: &Sizes) -> Vec<Figure> {
    let (direct, relay, reel) = (p.direct, p.relay, p.reel);
    let rounds_n = sizes.rounds;
    let big_how = format!(
        "{CLIENTS} clients × {} streamed answers of {} × 16 KiB events ({} MiB each)",
        sizes.big_per_client,
        sizes.big_events,
        fmt_value(sizes.big_events as f64 / 64.0)
    );
    let mut out = vec![
        Figure::new("llm throughput ÷ bare TCP relay, 16 clients", p.ratio(reel, relay, big), "ratio")
            .target(Target::AtLeast(THROUGHPUT_RATIO))
            .note(format!(
                "SSE payload MB/s through reel ÷ through the relay, same round; {big_how}; median of {rounds_n} rounds; direct {} MB/s, relay {} MB/s, reel {} MB/s",
                p.abs(direct, big),
                p.abs(relay, big),
                p.abs(reel, big)
            )),
        Figure::new("llm throughput, 16 clients", p.med(reel, big), "MB/s").note(format!(
            "reel ÷ direct {}; reel CPU {} ms per MiB forwarded and recorded (user+system, all threads, /proc), the relay's {} ms",
            fmt_value(p.ratio(reel, direct, big)),
            p.abs(reel, |r| r.big_cpu_ms_per_mib),
            p.abs(relay, |r| r.big_cpu_ms_per_mib)
        )),
        Figure::new(
            "bare TCP relay throughput, 16 clients",
            p.med(relay, big),
            "MB/s",
        )
        .note(format!(
            "relay ÷ direct {}",
            fmt_value(p.ratio(relay, direct, big))
        )),
    ];
    out.extend(p.mitm_fig("mitmdump throughput, 16 clients", "MB/s", &|k| {
        Figure::new("mitmdump throughput, 16 clients", p.med(k, big), "MB/s").note(format!(
            "mitmdump ÷ relay {}, reel ÷ mitmdump {}; mitmdump CPU {} ms per MiB",
            fmt_value(p.ratio(k, relay, big)),
            fmt_value(p.ratio(reel, k, big)),
            p.abs(k, |r| r.big_cpu_ms_per_mib)
        ))
    }));
    out.push(
        Figure::new(
            "llm throughput ÷ bare TCP relay, 100 B events",
            p.ratio(reel, relay, small),
            "ratio",
        )
        .note(format!(
            "events/s through reel ÷ through the relay, {CLIENTS} clients × {} answers of {} events of {SMALL_EVENT} B text; direct {} events/s, relay {}, reel {}{}; reel CPU {} µs per event, the relay's {} µs",
            sizes.small_per_client,
            sizes.small_events,
            p.abs(direct, small),
            p.abs(relay, small),
            p.abs(reel, small),
            p.mitm.map_or(String::new(), |k| format!(", mitmdump {}", p.abs(k, small))),
            p.abs(reel, |r| r.small_cpu_us_per_event),
            p.abs(relay, |r| r.small_cpu_us_per_event)
        )),
    );
    out
}

/// 4. Peak RSS.
fn rss_figures(p: &Paths, rss: &Rss) -> Vec<Figure> {
    let mib = |b: f64| b / MIB;
    let rss_how = format!(
        "VmHWM of a fresh process after one {:.0} MB streamed answer (16 KiB events) to a client reading at full speed",
        rss.bytes as f64 / 1e6
    );
    let mut out = vec![
        Figure::new("llm peak RSS, one 100 MB stream", mib(rss.reel.peak), "MiB")
            .target(Target::AtMost(RSS_MIB))
            .note(format!("{rss_how}; {}", rss.reel.note())),
        Figure::new(
            "bare TCP relay peak RSS, one 100 MB stream",
            mib(rss.relay.peak),
            "MiB",
        )
        .note(rss.relay.note()),
    ];
    match rss.mitm {
        Some(m) => out.push(
            Figure::new("mitmdump peak RSS, one 100 MB stream", mib(m.peak), "MiB").note(m.note()),
        ),
        None if ctx_quick_skip(p.why_no_mitm) => {}
        None => out.push(p.no_mitm("mitmdump peak RSS, one 100 MB stream", "MiB")),
    }
    out
}

/// 5. Replay.
fn replay_figure(sizes: &Sizes, replay: &Replay) -> Figure {
    let Replay {
        play_rps,
        live_rps,
        exchanges,
    } = replay;
    let rounds_n = sizes.rounds;
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
    ))
}
