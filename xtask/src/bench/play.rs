//! The `reel play` bench (issue 4): replay speed, start-up on a large tape, and memory.
//!
//! The load driver is the project's own minimal client (`reel-record`'s
//! `examples/echo_client`: initialize, tools/list, then N `tools/call echo` with an S-byte
//! text, W in flight; it checks every echoed text and reports calls/s and its child's
//! peak RSS). In the same run, interleaved round by round, median of [`ROUNDS`]:
//! - (a) the client against a minimal live Python server (`play_echo_server.py`,
//!   standard library only: the kind of server the neighbours were measured with);
//! - (b) the client against the project's minimal Rust echo server (`echo_server`): the
//!   fastest server the client can drive, so its figure is the client-bound limit;
//! - `reel play` of a recording of (b)'s session: replay calls/s. Targets: ≥ 3 × (a) and
//!   ≥ 0.9 × (b) (issue 17; issue 4 set 0.8), as the median of the per-round ratios. (b) ÷ (a) is reported as well:
//!   nothing outruns the client-bound limit, so it is the most any server, replay or
//!   live, can reach against (a) with this client. A fourth subject replays with its
//!   tape indexed before the first call (the client pauses after `tools/list`): the
//!   cost of serving alone, without the lazy index sharing the cores with the client.
//!   Each subject's CPU time per call (its own `wait4` account) is reported too: unlike
//!   calls/s it does not move with the load of a shared machine.
//!
//! Start-up and memory, on a 50 000-call recording (about 120 MB: 1 KiB texts, both
//! directions): launch → answer to `initialize`, and launch → answer to the first
//! `tools/call` (target ≤ 100 ms, median of [`ROUNDS`] cold starts, warm page cache);
//! then the full 50 000 calls replayed through the client, whose report gives reel
//! play's peak RSS (`VmHWM` after the last call; target ≤ 0.25 × the trace + 32 MB).
//! MB is 10^6 bytes.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::Value;

use super::{Ctx, Figure, Target, median};
use crate::process::{self, cargo, display};

const ROUNDS: usize = 3;
const WINDOW: u64 = 16;
const SIZE: u64 = 1024;
const CALLS: u64 = 20_000;
const QUICK_CALLS: u64 = 400;
const BIG_CALLS: u64 = 50_000;
const QUICK_BIG_CALLS: u64 = 2_000;

/// How long the "indexed first" run lets `reel play` index its tape before the first
/// call: the 46 MB tape takes about 0.15 s of CPU.
const INDEX_PAUSE_MS: u64 = 1500;

const VS_PYTHON: f64 = 3.0;
/// Issue 17 (issue 4 set 0.8).
const VS_RUST: f64 = 0.9;
const FIRST_ANSWER_MS: f64 = 100.0;
const RSS_FRACTION: f64 = 0.25;
const RSS_BASE_MB: f64 = 32.0;

/// Runs the play bench.
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Figure>> {
    let root = process::workspace_root();
    let (client, server) = build_echo(&root, ctx.quick)?;
    let dir = ctx.work.join("play");
    std::fs::create_dir_all(&dir)?;
    let calls = if ctx.quick { QUICK_CALLS } else { CALLS };
    let big_calls = if ctx.quick {
        QUICK_BIG_CALLS
    } else {
        BIG_CALLS
    };

    // The tape: the Rust echo session, recorded by reel itself.
    let tape = record(ctx, &client, &server, &dir, "w16", calls)?;
    println!("tape: {} ({:.1} MB)", tape.display(), mb(&tape));
    let rounds = replay_rounds(ctx, &root, &client, &server, &tape, calls)?;
    let mut figs = rate_figures(&rounds, calls);

    // Start-up and memory on a large tape.
    let big = record(ctx, &client, &server, &dir, "big", big_calls)?;
    let big_mb = mb(&big);
    println!(
        "large tape: {} ({big_mb:.1} MB, {big_calls} calls)",
        big.display()
    );
    figs.extend(startup_figures(ctx, &big, big_mb, big_calls)?);
    figs.extend(large_replay_figures(ctx, &client, &big, big_mb, big_calls)?);
    Ok(figs)
}

/// What the interleaved rounds measured, per subject: (a) Python, (b) Rust, reel play,
/// reel play indexed first.
struct ReplayRounds {
    rates: [Vec<f64>; 4],
    cpu: [Vec<f64>; 4],
    vs_py: Vec<f64>,
    vs_rust: Vec<f64>,
    ceiling: Vec<f64>,
    indexed_vs_rust: Vec<f64>,
}

/// The echo client against each subject in turn, [`ROUNDS`] times; ratios per round,
/// so machine noise that hits a round hits both sides.
fn replay_rounds(
    ctx: &Ctx,
    root: &Path,
    client: &Path,
    server: &Path,
    tape: &Path,
    calls: u64,
) -> anyhow::Result<ReplayRounds> {
    let python = python(root);
    let py_server = root.join("crates/reel/tests/peers/play_echo_server.py");
    let reel = ctx.reel.display().to_string();
    let play_cmd = vec![reel, "play".into(), tape.display().to_string()];
    // (name, command, pause after the handshake)
    let subjects: [(&str, Vec<String>, u64); 4] = [
        (
            "python echo server",
            vec![python, py_server.display().to_string()],
            0,
        ),
        ("rust echo server", vec![server.display().to_string()], 0),
        ("reel play", play_cmd.clone(), 0),
        ("reel play indexed first", play_cmd, INDEX_PAUSE_MS),
    ];
    let mut out = ReplayRounds {
        rates: Default::default(),
        cpu: Default::default(),
        vs_py: Vec::new(),
        vs_rust: Vec::new(),
        ceiling: Vec::new(),
        indexed_vs_rust: Vec::new(),
    };
    for round in 1..=ROUNDS {
        let mut line = format!("round {round}:");
        let mut this = [0.0; 4];
        for (i, (name, cmd, pause)) in subjects.iter().enumerate() {
            let r = drive(client, calls, cmd, *pause)?;
            line.push_str(&format!(
                " {name} {:.0}/s ({:.1} µs CPU/call)",
                r.calls_per_s, r.cpu_us_per_call
            ));
            out.rates[i].push(r.calls_per_s);
            out.cpu[i].push(r.cpu_us_per_call);
            this[i] = r.calls_per_s;
        }
        out.vs_py.push(this[2] / this[0]);
        out.vs_rust.push(this[2] / this[1]);
        out.ceiling.push(this[1] / this[0]);
        out.indexed_vs_rust.push(this[3] / this[1]);
        println!("{line}");
    }
    Ok(out)
}

/// Calls per second, their ratios and CPU per call, from the interleaved rounds.
fn rate_figures(rounds: &ReplayRounds, calls: u64) -> Vec<Figure> {
    let [py, rust, play, _] = rounds.rates.each_ref().map(|r| median(r));
    let [py_cpu, rust_cpu, play_cpu, _] = rounds.cpu.each_ref().map(|c| median(c));
    let note = format!(
        "echo_client, {calls} calls, W={WINDOW}, {SIZE} B texts, median of {ROUNDS} interleaved rounds"
    );
    let mut figs = Vec::new();
    let rate_fig = |name: &str, v: Option<f64>| match v {
        Some(v) => Figure::new(name, v, "calls/s").note(&note),
        None => Figure::missing(name, "calls/s", "no round ran"),
    };
    figs.push(rate_fig("reel play replay", play));
    figs.push(rate_fig("(a) live Python echo server", py));
    figs.push(rate_fig("(b) Rust echo server (client-bound limit)", rust));
    let ratio = |r: &[f64], name: &str, t: f64| {
        match median(r) {
            Some(v) => Figure::new(name, v, "ratio").note("median of the per-round ratios"),
            None => Figure::missing(name, "ratio", "no round ran"),
        }
        .target(Target::AtLeast(t))
    };
    figs.push(ratio(&rounds.vs_py, "reel play / (a) Python", VS_PYTHON));
    figs.push(ratio(&rounds.vs_rust, "reel play / (b) Rust", VS_RUST));
    // No server can outrun the client-bound limit, so (b) ÷ (a) bounds what any replay
    // can reach against (a) with this client: the (a) target is reachable only when it
    // is at least the target.
    figs.push(match median(&rounds.ceiling) {
        Some(v) => Figure::new(
            "(b) Rust / (a) Python: the most any server reaches vs (a)",
            v,
            "ratio",
        )
        .note("median of the per-round ratios; no server outruns the client-bound limit (b)"),
        None => Figure::missing("(b) Rust / (a) Python", "ratio", "no round ran"),
    });
    // The same replay with its tape indexed before the first call: what serving costs
    // without the lazy index competing with the client for the cores.
    figs.push(match median(&rounds.indexed_vs_rust) {
        Some(v) => Figure::new("reel play, tape indexed before the calls / (b) Rust", v, "ratio")
            .note(format!(
                "the client waits {INDEX_PAUSE_MS} ms after tools/list, outside the measured time; median of the per-round ratios"
            )),
        None => Figure::missing("reel play, indexed first / (b) Rust", "ratio", "no round ran"),
    });
    for (name, v) in [
        ("reel play CPU per call", play_cpu),
        ("(a) Python server CPU per call", py_cpu),
        ("(b) Rust server CPU per call", rust_cpu),
    ] {
        figs.push(match v {
            Some(v) => Figure::new(name, v, "µs").note(
                "the server process's user+system time (wait4) over the calls; reel play's includes indexing its tape",
            ),
            None => Figure::missing(name, "µs", "no round ran"),
        });
    }
    figs
}

/// Time to the first answers from `reel play` on the large tape, cold starts.
fn startup_figures(
    ctx: &Ctx,
    big: &Path,
    big_mb: f64,
    big_calls: u64,
) -> anyhow::Result<Vec<Figure>> {
    let mut init_ms = Vec::new();
    let mut call_ms = Vec::new();
    for round in 1..=ROUNDS {
        let (i, c) = first_answers(&ctx.reel, big)?;
        println!(
            "round {round}: initialize answered after {:.1} ms, first tools/call after {:.1} ms",
            i * 1e3,
            c * 1e3
        );
        init_ms.push(i * 1e3);
        call_ms.push(c * 1e3);
    }
    let startup_note = format!(
        "launch → answer, {big_calls}-call {big_mb:.0} MB trace, median of {ROUNDS} cold starts, warm page cache"
    );
    Ok([
        ("time to first answer (initialize)", median(&init_ms)),
        ("time to first tools/call answer", median(&call_ms)),
    ]
    .into_iter()
    .map(|(name, v)| {
        match v {
            Some(v) => Figure::new(name, v, "ms").note(&startup_note),
            None => Figure::missing(name, "ms", "no round ran"),
        }
        .target(Target::AtMost(FIRST_ANSWER_MS))
    })
    .collect())
}

/// The whole large tape replayed once: peak RSS and calls per second.
fn large_replay_figures(
    ctx: &Ctx,
    client: &Path,
    big: &Path,
    big_mb: f64,
    big_calls: u64,
) -> anyhow::Result<Vec<Figure>> {
    let full = drive(
        client,
        big_calls,
        &[
            ctx.reel.display().to_string(),
            "play".into(),
            big.display().to_string(),
        ],
        0,
    )?;
    println!(
        "full replay of the large tape: {:.0} calls/s, reel play peak RSS {:.1} MB",
        full.calls_per_s,
        full.vmhwm_kb as f64 * 1024.0 / 1e6
    );
    Ok(vec![
        Figure::new(
            "reel play peak RSS, whole large tape replayed",
            full.vmhwm_kb as f64 * 1024.0 / 1e6,
            "MB",
        )
        .note(format!(
            "VmHWM after the last of {big_calls} calls; target 0.25 × {big_mb:.0} MB + 32 MB"
        ))
        .target(Target::AtMost(RSS_FRACTION * big_mb + RSS_BASE_MB)),
        Figure::new("reel play replay, large tape", full.calls_per_s, "calls/s").note(format!(
            "echo_client, {big_calls} calls, W={WINDOW}, one run"
        )),
    ])
}

fn mb(p: &Path) -> f64 {
    std::fs::metadata(p).map_or(0.0, |m| m.len() as f64 / 1e6)
}

/// The Python of the peers (`$REEL_PEERS/venv`, else `.peers/venv`), else `python3`.
fn python(root: &Path) -> String {
    let peers = std::env::var_os("REEL_PEERS")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".peers"));
    let venv = peers.join("venv/bin/python");
    if venv.exists() {
        venv.display().to_string()
    } else {
        "python3".into()
    }
}

/// Builds `echo_client` and `echo_server` (release; debug with `--quick`).
fn build_echo(root: &Path, quick: bool) -> anyhow::Result<(PathBuf, PathBuf)> {
    let mut c = cargo();
    c.current_dir(root).args([
        "build",
        "-p",
        "reel-record",
        "--example",
        "echo_client",
        "--example",
        "echo_server",
        "--message-format=json-render-diagnostics",
    ]);
    if !quick {
        c.arg("--release");
    }
    let shown = display(&c);
    println!("$ {shown}");
    let out = c
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("cannot start `{shown}`"))?;
    if !out.status.success() {
        bail!("`{shown}` failed ({})", out.status);
    }
    let (mut client, mut server) = (None, None);
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" {
            continue;
        }
        let exe = msg["executable"].as_str().map(PathBuf::from);
        match msg["target"]["name"].as_str() {
            Some("echo_client") => client = exe,
            Some("echo_server") => server = exe,
            _ => {}
        }
    }
    match (client, server) {
        (Some(c), Some(s)) => Ok((c, s)),
        _ => bail!("`{shown}` reported no echo_client/echo_server executables"),
    }
}

/// What `echo_client` reported.
struct Driven {
    calls_per_s: f64,
    cpu_us_per_call: f64,
    vmhwm_kb: u64,
}

/// Runs `echo_client --calls N --size S --window W -- CMD…` and checks its report.
fn drive(client: &Path, calls: u64, cmd: &[String], pause_ms: u64) -> anyhow::Result<Driven> {
    let mut c = Command::new(client);
    c.args(["--calls", &calls.to_string(), "--size", &SIZE.to_string()])
        .args(["--window", &WINDOW.to_string()])
        .args(["--pause-ms", &pause_ms.to_string(), "--"])
        .args(cmd)
        .stderr(Stdio::null());
    let shown = display(&c);
    let out = c
        .output()
        .with_context(|| format!("cannot start `{shown}`"))?;
    if !out.status.success() {
        bail!("`{shown}` failed ({})", out.status);
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(text.trim())
        .with_context(|| format!("`{shown}` printed no report: {text}"))?;
    if report["mismatches"].as_u64() != Some(0) {
        bail!("`{shown}`: answers differ from the texts sent: {report}");
    }
    let cpu_us = report["child_cpu_us"].as_f64().unwrap_or(f64::NAN);
    Ok(Driven {
        calls_per_s: report["calls_per_s"].as_f64().unwrap_or(f64::NAN),
        cpu_us_per_call: cpu_us / calls.max(1) as f64,
        vmhwm_kb: report["child_vmhwm_kb"].as_u64().unwrap_or(0),
    })
}

/// Records the echo session of `calls` calls through `reel rec` once and keeps it as
/// `<dir>/<name>-<calls>.jsonl`.
fn record(
    ctx: &Ctx,
    client: &Path,
    server: &Path,
    dir: &Path,
    name: &str,
    calls: u64,
) -> anyhow::Result<PathBuf> {
    let kept = dir.join(format!("{name}-{calls}.jsonl"));
    if kept.exists() {
        return Ok(kept);
    }
    let scratch = dir.join(format!("rec-{name}"));
    let _ = std::fs::remove_dir_all(&scratch);
    let cmd = [
        ctx.reel.display().to_string(),
        "rec".into(),
        "--dir".into(),
        scratch.display().to_string(),
        "--".into(),
        server.display().to_string(),
    ];
    println!("recording {calls} calls through reel rec");
    drive(client, calls, &cmd, 0)?;
    let written = std::fs::read_dir(&scratch)
        .with_context(|| format!("reel rec wrote nothing in {}", scratch.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .with_context(|| format!("no trace in {}", scratch.display()))?;
    std::fs::rename(&written, &kept)?;
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(kept)
}

/// Launch → answer to `initialize`, and launch → answer to the first `tools/call`, in
/// seconds. The requests are the recorded ones, read from the head of the tape.
fn first_answers(reel: &Path, tape: &Path) -> anyhow::Result<(f64, f64)> {
    let (init, initialized, call) = head_requests(tape)?;
    let call_id = serde_json::from_str::<Value>(&call)?["id"].clone();
    let start = Instant::now();
    let mut child = Command::new(reel)
        .arg("play")
        .arg(tape)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start reel play")?;
    let mut stdin = child.stdin.take().context("stdin")?;
    let mut out = BufReader::new(child.stdout.take().context("stdout")?);
    stdin.write_all(format!("{init}\n").as_bytes())?;
    let mut line = String::new();
    out.read_line(&mut line)?;
    let t_init = start.elapsed();
    if !line.contains("\"result\"") {
        bail!("initialize was not answered with a result: {line}");
    }
    stdin.write_all(format!("{initialized}\n{call}\n").as_bytes())?;
    let t_call = loop {
        line.clear();
        if out.read_line(&mut line)? == 0 {
            bail!("reel play closed before answering the first tools/call");
        }
        let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if v.get("id") == Some(&call_id) && v.get("result").is_some() {
            break start.elapsed();
        }
    };
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait()?.is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            bail!("reel play did not exit after its input closed");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok((t_init.as_secs_f64(), t_call.as_secs_f64()))
}

/// The recorded `initialize`, `notifications/initialized` and first `tools/call`.
fn head_requests(tape: &Path) -> anyhow::Result<(String, String, String)> {
    let f = std::fs::File::open(tape)?;
    let (mut init, mut initialized, mut call) = (None, None, None);
    for line in BufReader::new(f).lines() {
        let v: Value = match serde_json::from_str(&line?) {
            Ok(v) => v,
            Err(_) => continue,
        };
        if v["dir"] != "in" {
            continue;
        }
        let raw = v["raw"].to_string();
        match v["raw"]["method"].as_str() {
            Some("initialize") if init.is_none() => init = Some(raw),
            Some("notifications/initialized") if initialized.is_none() => initialized = Some(raw),
            Some("tools/call") => {
                call = Some(raw);
                break;
            }
            _ => {}
        }
    }
    match (init, initialized, call) {
        (Some(a), Some(b), Some(c)) => Ok((a, b, c)),
        _ => bail!(
            "{}: no initialize / initialized / tools/call at its head",
            tape.display()
        ),
    }
}
