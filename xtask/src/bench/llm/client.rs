//! The llm bench's clients: keep-alive streaming load, time to first byte, and a
//! process's peak RSS.

use std::sync::{Arc, Barrier};
use std::time::Instant;

use anyhow::Context;

use super::super::sse::{self, Client};

/// A load run's outcome.
pub(super) struct Rate {
    pub(super) secs: f64,
    pub(super) bytes: u64,
}

/// `clients` keep-alive clients, each `per_client` streaming requests for `model` in a
/// row; the wall time from their common start to the last answer's end.
pub(super) fn load(
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
pub(super) fn ttfb(addr: &str, n: usize) -> anyhow::Result<Vec<f64>> {
    let mut c = Client::connect(addr)?;
    let model = sse::model(4, 64, 0);
    (0..n)
        .map(|_| Ok(c.stream(&model, "ttfb", false)?.ttfb.as_secs_f64() * 1e6))
        .collect()
}

/// Peak RSS of a process, bytes (`VmHWM`).
pub(super) fn vm_hwm(pid: u32) -> anyhow::Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("cannot read /proc/{pid}/status (Linux only)"))?;
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmHWM")?;
    Ok(kib * 1024.0)
}
