//! The `reel play --listen` bench (issue 6): the tape server over HTTP against the live
//! server it stands in for.
//!
//! The project's own minimal Streamable HTTP MCP server (`crates/reel-record/examples/
//! http_echo_server.rs`: hyper, answers `tools/call echo` with `application/json` at once)
//! and its load driver (`http_load.rs`: 16 clients, one keep-alive connection each, one
//! request in flight per client) run the same load against the server and against
//! `reel play --listen` of a tape of that server's answers, interleaved round by round
//! (median of the per-round ratios over [`ROUNDS`] rounds), each round on a fresh
//! `reel play` so every round replays a tape of its own size.
//!
//! The tape is written here, in the shape `reel rec --url` gives this server's traffic:
//! a 2026-07-28-style session-less exchange per request (`session: "reel:conn-N"`, the
//! `http` facts of a JSON answer), the driver's exact request bodies and the server's
//! exact answers. Every replayed request must be answered from the tape: the summary
//! `reel play` prints at SIGTERM must show no miss.
//!
//! Figures: requests/s through `reel play --listen` ÷ requests/s of the live server
//! (same round), both rates, reel's CPU time per request (user + system, every thread,
//! `/proc`), and the median round trip with one client (no queueing). The driver, the
//! server or reel, share the machine's cores.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use super::http_load::{load, process_cpu};
use super::{Ctx, Figure, Target, fmt_value, median};
use super::{ReelListening, start_listener};

const ROUNDS: usize = 5;
const CLIENTS: usize = 16;
/// Issue 17: the tape server within 15% of the live server it stands in for.
const VS_DIRECT: f64 = 0.85;
/// The driver's default argument size (its `--size`), in bytes.
const SIZE: usize = 256;

struct Tools {
    server: PathBuf,
    load: PathBuf,
}

/// Runs the play-http bench.
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Figure>> {
    let tools = build_examples(ctx)?;
    let requests = if ctx.quick { 800 } else { 32_000 };
    let seq = requests / 16;
    let rounds = if ctx.quick { 1 } else { ROUNDS };
    let dir = ctx.work.join("play-http");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    // One tape per reel play run: the 16-client run and the one-client run.
    let tape = dir.join("echo-tape.jsonl");
    write_tape(&tape, requests + seq, CLIENTS)?;
    println!("tape: {} ({} exchanges)", tape.display(), requests + seq);

    let (_server, server_addr) = start_listener(&tools.server, &[])?;
    let direct_url = format!("http://{server_addr}/mcp");
    load(&tools.load, &direct_url, requests / 8, CLIENTS)?;

    let (mut ratios, mut cpu, mut direct_rps, mut play_rps) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut direct_p50, mut play_p50) = (Vec::new(), Vec::new());
    for round in 1..=rounds {
        let d1 = load(&tools.load, &direct_url, seq, 1)?;
        let d = load(&tools.load, &direct_url, requests, CLIENTS)?;
        let (play, url) = start_play(ctx, &tape)?;
        let pid = play.0.child.0.id();
        let p1 = load(&tools.load, &url, seq, 1)?;
        let before = process_cpu(pid)?;
        let p = load(&tools.load, &url, requests, CLIENTS)?;
        let used = process_cpu(pid)? - before;
        let summary = play.stop()?;
        let answered = (p.requests + p1.requests) as u64;
        if !summary.contains(&format!("reel play: {answered} answered from the tape"))
            || !summary.contains(" 0 missed")
        {
            bail!("reel play did not answer every request from the tape: {summary}");
        }
        let cpu_us = used.as_secs_f64() * 1e6 / p.requests;
        println!(
            "round {round} direct {:>9} req/s p50 {:>6} µs | play {:>9} req/s p50 {:>6} µs, reel CPU {:.1} µs/request",
            fmt_value(d.rps),
            fmt_value(d.p50_us),
            fmt_value(p.rps),
            fmt_value(p.p50_us),
            cpu_us
        );
        println!(
            "        one client: direct p50 {:>6} µs | play p50 {:>6} µs",
            fmt_value(d1.p50_us),
            fmt_value(p1.p50_us)
        );
        ratios.push(p.rps / d.rps);
        cpu.push(cpu_us);
        direct_rps.push(d.rps);
        play_rps.push(p.rps);
        direct_p50.push(d1.p50_us);
        play_p50.push(p1.p50_us);
    }
    let med = |xs: &[f64]| median(xs).unwrap_or(f64::NAN);
    let how = format!(
        "{CLIENTS} clients, {requests} tools/call echo POSTs per run ({SIZE} B argument, JSON answers), median of {rounds} interleaved rounds"
    );
    Ok(vec![
        Figure::new("play --listen requests/s ÷ direct", med(&ratios), "ratio")
            .target(Target::AtLeast(VS_DIRECT))
            .note(format!(
            "requests/s of reel play --listen ÷ the live echo server's, same round ({} vs {} req/s); {how}; 2 shared cores for driver and server",
            fmt_value(med(&play_rps)),
            fmt_value(med(&direct_rps))
        )),
        Figure::new("play --listen requests/s", med(&play_rps), "req/s")
            .note(format!("direct: {} req/s", fmt_value(med(&direct_rps)))),
        Figure::new("play --listen CPU per request", med(&cpu), "µs")
            .note("reel's user+system time (all threads, /proc) ÷ requests, 16 clients"),
        Figure::new("play --listen median round trip, one client", med(&play_p50), "µs").note(
            format!(
                "direct: {} µs; {} sequential requests per run",
                fmt_value(med(&direct_p50)),
                seq
            ),
        ),
    ])
}

/// Writes a tape of `n` exchanges as `reel rec --url` records this server's traffic:
/// the driver's requests (ids from 1, one per client connection in turn) and the echo
/// server's answers, session-less on `clients` connections.
fn write_tape(path: &Path, n: usize, clients: usize) -> anyhow::Result<()> {
    let f =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut w = std::io::BufWriter::new(f);
    writeln!(
        w,
        r#"{{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z","label":"bench-echo","kind":"mcp","source":"reel@bench","reel":1,"transport":"http","listen":"127.0.0.1:1","upstream":"http://127.0.0.1:2/mcp"}}"#
    )?;
    let text = "x".repeat(SIZE);
    for i in 1..=n {
        let conn = (i - 1) % clients + 1;
        let params = format!(r#"{{"name":"echo","arguments":{{"message":"{text}"}}}}"#);
        writeln!(
            w,
            r#"{{"t":"2026-01-01T00:00:00.001Z","dir":"in","session":"reel:conn-{conn}","raw":{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{params}}},"http":{{"req":{i},"method":"POST","path":"/mcp","headers":{{"content-type":"application/json","mcp-protocol-version":"2025-11-25"}}}}}}"#
        )?;
        writeln!(
            w,
            r#"{{"t":"2026-01-01T00:00:00.002Z","dir":"out","session":"reel:conn-{conn}","raw":{{"jsonrpc":"2.0","id":{i},"result":{{"content":[{{"type":"text","text":"echo"}}],"echo":{params}}}}},"http":{{"req":{i},"status":200,"headers":{{"content-type":"application/json"}}}}}}"#
        )?;
    }
    writeln!(
        w,
        r#"{{"t":"2026-01-01T00:00:01.000Z","type":"end","reason":"producer_shutdown"}}"#
    )?;
    w.flush()?;
    Ok(())
}

fn build_examples(ctx: &Ctx) -> anyhow::Result<Tools> {
    let [server, load]: [PathBuf; 2] =
        super::build_examples(ctx, "reel-record", &["http_echo_server", "http_load"])?
            .try_into()
            .map_err(|_| anyhow::anyhow!("cargo reported another number of executables"))?;
    Ok(Tools { server, load })
}

/// A running `reel play --listen`, its stderr collected on a thread.
struct Play(ReelListening);

impl Play {
    /// SIGTERM; the summary it printed. It must exit 0 (no miss, no drift).
    fn stop(mut self) -> anyhow::Result<String> {
        let status = super::sigterm(&mut self.0.child)?;
        let text = self.0.stderr.join().unwrap_or_default();
        if !status.success() {
            bail!("reel play --listen exited with {status} after SIGTERM: {text}");
        }
        Ok(text)
    }
}

/// Starts `reel play --listen`; the URL from its `reel: listening on URL` line.
fn start_play(ctx: &Ctx, tape: &Path) -> anyhow::Result<(Play, String)> {
    let mut c = Command::new(&ctx.reel);
    c.arg("play").arg(tape).args(["--listen", "127.0.0.1:0"]);
    let l = super::start_reel(c)?;
    let url = l.url.clone();
    Ok((Play(l), url))
}
