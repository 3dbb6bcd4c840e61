//! What the llm bench measures: its targets and sizes, the paths to the upstream, and
//! what one path did in one round.

use super::super::fmt_value;

pub(super) const ROUNDS: usize = 5;
pub(super) const CLIENTS: usize = 16;

/// Targets from the issue.
pub(super) const TTFB_ADDED_MS: f64 = 1.0;
pub(super) const EVENT_ADDED_US: f64 = 100.0;
pub(super) const THROUGHPUT_RATIO: f64 = 0.8;
pub(super) const RSS_MIB: f64 = 64.0;

/// Big events: 16 KiB of text each.
pub(super) const BIG_EVENT: usize = 16 * 1024;
/// Small events: what a model's text deltas weigh.
pub(super) const SMALL_EVENT: usize = 100;
/// Gap between the timed events.
pub(super) const GAP_US: u64 = 2000;

pub(super) struct Sizes {
    pub(super) rounds: usize,
    pub(super) ttfb_requests: usize,
    pub(super) timed_events: usize,
    pub(super) big_events: usize,
    pub(super) big_per_client: usize,
    pub(super) small_events: usize,
    pub(super) small_per_client: usize,
    pub(super) rss_events: usize,
    pub(super) replay_per_client: usize,
}

impl Sizes {
    pub(super) fn of(quick: bool) -> Sizes {
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
pub(super) struct Way {
    pub(super) name: &'static str,
    pub(super) addr: String,
    pub(super) pid: Option<u32>,
}

/// What one path did in one round.
#[derive(Default, Clone)]
pub(super) struct Round {
    pub(super) ttfb_us: f64,
    pub(super) trip_us: f64,
    pub(super) big_mbps: f64,
    pub(super) big_cpu_ms_per_mib: f64,
    pub(super) small_eps: f64,
    pub(super) small_cpu_us_per_event: f64,
}

pub(super) const MIB: f64 = 1024.0 * 1024.0;

pub(super) struct Rss {
    pub(super) bytes: u64,
    pub(super) relay: RssRun,
    pub(super) reel: RssRun,
    pub(super) mitm: Option<RssRun>,
}

/// `VmHWM` of one proxy process, bytes: after a small request, when the client had the
/// whole 100 MB answer, and once the proxy was done with it.
#[derive(Clone, Copy)]
pub(super) struct RssRun {
    pub(super) base: f64,
    pub(super) streaming: f64,
    pub(super) peak: f64,
}

impl RssRun {
    pub(super) fn note(&self) -> String {
        format!(
            "{} MiB after one small request, {} MiB when the client had the last byte",
            fmt_value(self.base / MIB),
            fmt_value(self.streaming / MIB)
        )
    }
}
