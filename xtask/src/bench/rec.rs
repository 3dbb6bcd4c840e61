//! The `reel rec` bench (issue 3): the stdio recording proxy against no proxy at all.
//!
//! The project's own minimal stdio MCP client and server (`crates/reel-record/examples/
//! echo_client.rs`, `echo_server.rs`; no SDK) run `tools/call echo`:
//! - `seq-1k`: N sequential calls, 1 KiB text;
//! - `pipe-1k`: the same with W = 16 calls in flight;
//! - `seq-1m`: sequential calls with 1 MiB text;
//!
//! each directly, through a bare relay (`examples/relay.rs`: one extra process copying
//! both pipes, recording nothing) and through `reel rec` (default settings: redaction
//! on, the trace on the same disk), interleaved round by round so machine noise hits all
//! alike; ratios are taken per round, then the median of 3 rounds. A last `1 GiB`
//! session (512 calls × 1 MiB each way) runs only through reel, for its peak RSS.
//!
//! The relay is the ceiling of any stdio proxy on the machine at hand: its throughput
//! ratio and its CPU per message are what the process in the middle costs before it
//! records anything (on a 2-core VM a wake-up costs microseconds), so reel ÷ relay is
//! the cost of the recording itself. The same relay with `--tee FILE` (every chunk
//! appended to a file before it is forwarded, nothing else) is the floor of a
//! recorder that keeps what it forwarded on disk before the peer sees it: what the
//! kill -9 guarantee costs in system calls alone, before any per-line work. With
//! `--tee-mapped` the chunks are copied into a shared mapping of the file instead (no
//! system call per chunk): the floor of a recorder that kept the guarantee that way.
//!
//! What is measured, and how:
//! - reel's own CPU per forwarded message: the client reaps reel with `wait4`, whose
//!   account includes the echo server reel reaped; the server reports its own CPU time
//!   at exit (`--rusage-out`) and is subtracted. Divided by every line reel forwarded
//!   (N calls × 2 plus the 5 lines of the handshake). The relay's the same way;
//! - throughput ratios: calls/s through reel ÷ calls/s direct, same round;
//! - added latency: median round trip through reel − median direct, sequential 1 KiB;
//! - context switches per forwarded message (issue 17: on two cores a wake-up costs as
//!   much as the message): the same `wait4` account's voluntary and involuntary
//!   switches, less the server's own;
//! - reel's peak RSS: `VmHWM` of the reel process, read by the client after the last
//!   call (reel's own, not its child's);
//! - zero drops: every trace's `end.counts` must hold every message (N+3 in, N+2 out,
//!   no event), its line count must agree, and every run's answers must match the direct
//!   run's byte for byte (checksum). Any miss fails the bench.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};
use serde_json::Value;

use super::{Ctx, Figure, Target, fmt_value, median};
use crate::process::display;

const ROUNDS: usize = 3;

/// Targets from the issue.
const CPU_PER_MESSAGE_US: f64 = 5.0;
const THROUGHPUT_RATIO: f64 = 0.9;
const ADDED_LATENCY_US: f64 = 25.0;
const RSS_BASE_MIB: f64 = 32.0;
/// Issue 17: what recording may cost on top of the bare relay.
const OVER_RELAY_PIPELINED: f64 = 0.9;
const OVER_RELAY_LARGE: f64 = 0.95;
const CPU_OVER_RELAY_US: f64 = 0.7;

/// One workload.
#[derive(Clone, Copy)]
struct Workload {
    name: &'static str,
    calls: u64,
    size: usize,
    window: usize,
}

fn workloads(quick: bool) -> [Workload; 3] {
    let q = |full: u64, small: u64| if quick { small } else { full };
    [
        Workload {
            name: "seq-1k",
            calls: q(20_000, 300),
            size: 1024,
            window: 1,
        },
        Workload {
            name: "pipe-1k",
            calls: q(50_000, 1_000),
            size: 1024,
            window: 16,
        },
        Workload {
            name: "seq-1m",
            calls: q(100, 5),
            size: 1 << 20,
            window: 1,
        },
    ]
}

/// What `echo_client` reported for one run.
#[derive(Debug, Clone)]
struct Report {
    calls_per_s: f64,
    p50_us: f64,
    checksum: String,
    /// The proxy's own CPU (µs), through the relay or reel; the server's, direct.
    cpu_us: f64,
    /// Peak RSS of the client's child (reel, or the server), KiB.
    vmhwm_kb: f64,
    /// The proxy's own context switches, through the relay or reel; the server's,
    /// direct.
    switches: f64,
}

struct Tools {
    client: PathBuf,
    server: PathBuf,
    relay: PathBuf,
}

/// What sits between the client and the server.
#[derive(Clone, Copy)]
enum Via<'a> {
    Direct,
    /// The bare relay: the ceiling of any stdio proxy.
    Relay,
    /// The relay writing every chunk to this file before forwarding it (with
    /// `write`, or into a shared mapping when `mapped`).
    Tee {
        file: &'a Path,
        mapped: bool,
    },
    /// `reel rec --dir TRACES`.
    Reel(&'a Path),
}

/// One round of one workload.
#[derive(Clone)]
struct Round {
    direct: Report,
    relay: Report,
    tee: Report,
    mapped: Report,
    rec: Report,
}

/// Runs the rec bench.
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Figure>> {
    let tools = build_examples(ctx)?;
    let traces = ctx.work.join("rec-traces");
    let tee_file = ctx.work.join("rec-tee.bin");
    let rounds = if ctx.quick { 1 } else { ROUNDS };
    let loads = workloads(ctx.quick);

    // Per workload: one entry per round.
    let mut results: Vec<Vec<Round>> = vec![Vec::new(); loads.len()];
    for round in 1..=rounds {
        for (i, w) in loads.iter().enumerate() {
            results[i].push(one_round(ctx, &tools, w, &traces, &tee_file, round)?);
        }
    }
    let big = big_session(ctx, &tools, &traces)?;
    let r = Results {
        rounds: &results,
        loads: &loads,
    };
    let notes = Notes::new(rounds);
    let mut figs = cpu_figures(&r, &notes);
    figs.extend(switch_figures(&r, &notes));
    figs.extend(throughput_figures(
        &r,
        &notes,
        1,
        "1 KiB, W=16",
        OVER_RELAY_PIPELINED,
    ));
    figs.extend(throughput_figures(
        &r,
        &notes,
        2,
        "1 MiB sequential",
        OVER_RELAY_LARGE,
    ));
    figs.push(sequential_small_figure(&r, &notes));
    figs.extend(latency_and_memory_figures(&r, &notes, &big));
    Ok(figs)
}

/// One workload along every path, the answers checked against direct's, and the
/// round's line printed.
fn one_round(
    ctx: &Ctx,
    tools: &Tools,
    w: &Workload,
    traces: &Path,
    tee_file: &Path,
    round: usize,
) -> anyhow::Result<Round> {
    let direct = session(ctx, tools, w, Via::Direct)?;
    let relay = session(ctx, tools, w, Via::Relay)?;
    let tee = session(
        ctx,
        tools,
        w,
        Via::Tee {
            file: tee_file,
            mapped: false,
        },
    )?;
    let mapped = session(
        ctx,
        tools,
        w,
        Via::Tee {
            file: tee_file,
            mapped: true,
        },
    )?;
    let rec = session(ctx, tools, w, Via::Reel(traces))?;
    for (name, r) in [
        ("the relay", &relay),
        ("the tee relay", &tee),
        ("the mapped tee relay", &mapped),
        ("reel", &rec),
    ] {
        if r.checksum != direct.checksum {
            bail!(
                "{}: answers through {name} differ from direct ({} vs {})",
                w.name,
                r.checksum,
                direct.checksum
            );
        }
    }
    let per_msg = |r: &Report| r.cpu_us / messages(w);
    println!(
        "round {round} {:8} direct {:>9} calls/s p50 {:>7} µs | relay {:>9} calls/s p50 {:>7} µs, CPU {:.2} µs/msg | tee {:>9} calls/s, CPU {:.2} µs/msg | mapped {:>9} calls/s, CPU {:.2} µs/msg | reel {:>9} calls/s p50 {:>7} µs, CPU {:.2} µs/msg",
        w.name,
        fmt_value(direct.calls_per_s),
        fmt_value(direct.p50_us),
        fmt_value(relay.calls_per_s),
        fmt_value(relay.p50_us),
        per_msg(&relay),
        fmt_value(tee.calls_per_s),
        per_msg(&tee),
        fmt_value(mapped.calls_per_s),
        per_msg(&mapped),
        fmt_value(rec.calls_per_s),
        fmt_value(rec.p50_us),
        per_msg(&rec),
    );
    Ok(Round {
        direct,
        relay,
        tee,
        mapped,
        rec,
    })
}

/// The 1 GiB session through reel, for its peak RSS.
struct BigSession {
    load: Workload,
    report: Report,
    gib: f64,
}

fn big_session(ctx: &Ctx, tools: &Tools, traces: &Path) -> anyhow::Result<BigSession> {
    let big = Workload {
        name: "1 GiB session",
        calls: if ctx.quick { 16 } else { 512 },
        size: 1 << 20,
        window: 1,
    };
    let big_run = session(ctx, tools, &big, Via::Reel(traces))?;
    let gib = (big.calls as f64) * 2.0 * (big.size as f64) / f64::from(1u32 << 30);
    println!(
        "{}: {:.2} GiB forwarded, reel peak RSS {:.1} MiB",
        big.name,
        gib,
        big_run.vmhwm_kb / 1024.0
    );
    Ok(BigSession {
        load: big,
        report: big_run,
        gib,
    })
}

/// Every workload's rounds, read as the figures need them: medians over the rounds.
struct Results<'a> {
    rounds: &'a [Vec<Round>],
    loads: &'a [Workload; 3],
}

fn via_rec(r: &Round) -> &Report {
    &r.rec
}

fn via_tee(r: &Round) -> &Report {
    &r.tee
}

fn via_mapped(r: &Round) -> &Report {
    &r.mapped
}

impl Results<'_> {
    fn med(&self, i: usize, f: &dyn Fn(&Round) -> f64) -> f64 {
        median(&self.rounds[i].iter().map(f).collect::<Vec<_>>()).unwrap_or(f64::NAN)
    }

    fn ratio(&self, i: usize) -> f64 {
        self.med(i, &|r| r.rec.calls_per_s / r.direct.calls_per_s)
    }

    fn relay_ratio(&self, i: usize) -> f64 {
        self.med(i, &|r| r.relay.calls_per_s / r.direct.calls_per_s)
    }

    fn cpu(&self, i: usize) -> f64 {
        self.med(i, &|r| r.rec.cpu_us / messages(&self.loads[i]))
    }

    fn switches(&self, i: usize) -> f64 {
        self.med(i, &|r| r.rec.switches / messages(&self.loads[i]))
    }

    fn relay_switches(&self, i: usize) -> f64 {
        self.med(i, &|r| r.relay.switches / messages(&self.loads[i]))
    }

    fn relay_cpu(&self, i: usize) -> f64 {
        self.med(i, &|r| r.relay.cpu_us / messages(&self.loads[i]))
    }

    /// What a subject in the middle (reel, or a floor) costs beyond the bare relay.
    fn over_relay(&self, i: usize, via: fn(&Round) -> &Report) -> f64 {
        self.med(i, &|r| via(r).calls_per_s / r.relay.calls_per_s)
    }

    fn cpu_over_relay(&self, i: usize, via: fn(&Round) -> &Report) -> f64 {
        self.med(i, &|r| {
            (via(r).cpu_us - r.relay.cpu_us) / messages(&self.loads[i])
        })
    }

    fn direct_rate(&self, i: usize) -> String {
        fmt_value(self.med(i, &|r| r.direct.calls_per_s))
    }
}

/// The notes the figures share: how the rounds ran, and what each relay is.
struct Notes {
    rounds_note: String,
    relay_note: String,
    tee_note: String,
    mapped_note: String,
}

impl Notes {
    fn new(rounds: usize) -> Notes {
        let rounds_note = format!("median of {rounds} interleaved rounds");
        Notes {
            relay_note: format!(
                "the bare relay, the ceiling of any stdio proxy here; {rounds_note}"
            ),
            mapped_note: format!(
                "the relay with --tee-mapped: every chunk copied into a shared mapping of a file before it is forwarded, no system call; {rounds_note}"
            ),
            tee_note: format!(
                "the relay with --tee: every chunk written to a file before it is forwarded, nothing else; the floor of a recorder that keeps the kill -9 guarantee; {rounds_note}"
            ),
            rounds_note,
        }
    }
}

/// CPU per forwarded message: reel, the bare relay, and what recording adds.
fn cpu_figures(r: &Results, notes: &Notes) -> Vec<Figure> {
    let Notes {
        rounds_note,
        relay_note,
        tee_note,
        mapped_note,
    } = notes;
    vec![
        Figure::new("reel CPU per forwarded message, 1 KiB sequential", r.cpu(0), "µs")
            .target(Target::AtMost(CPU_PER_MESSAGE_US))
            .note(format!(
                "wait4(reel) − the echo server's own CPU, ÷ {} lines; {rounds_note}",
                messages(&r.loads[0])
            )),
        Figure::new("bare relay CPU per forwarded message, 1 KiB sequential", r.relay_cpu(0), "µs")
            .note(format!("a read, a write and a wake-up per line, nothing recorded; {relay_note}")),
        Figure::new("reel CPU per forwarded message − the relay's, 1 KiB sequential", r.cpu_over_relay(0, via_rec), "µs")
            .target(Target::AtMost(CPU_OVER_RELAY_US))
            .note(format!("what recording costs per message: the per-round difference of the two above; {rounds_note}")),
        Figure::new("tee relay CPU per forwarded message − the relay's, 1 KiB sequential", r.cpu_over_relay(0, via_tee), "µs")
            .note(tee_note),
        Figure::new("mapped tee relay CPU per forwarded message − the relay's, 1 KiB sequential", r.cpu_over_relay(0, via_mapped), "µs")
            .note(mapped_note),
        Figure::new("reel CPU per forwarded message, 1 KiB, W=16", r.cpu(1), "µs")
            .target(Target::AtMost(CPU_PER_MESSAGE_US))
            .note(rounds_note),
        Figure::new("bare relay CPU per forwarded message, 1 KiB, W=16", r.relay_cpu(1), "µs")
            .note(relay_note),
    ]
}

/// Context switches per forwarded message.
fn switch_figures(r: &Results, notes: &Notes) -> Vec<Figure> {
    let Notes {
        rounds_note,
        relay_note,
        ..
    } = notes;
    vec![
        Figure::new(
            "reel context switches per forwarded message, 1 KiB sequential",
            r.switches(0),
            "switches",
        )
        .note(format!(
            "wait4(reel) − the echo server's own (voluntary + involuntary); {rounds_note}"
        )),
        Figure::new(
            "bare relay context switches per forwarded message, 1 KiB sequential",
            r.relay_switches(0),
            "switches",
        )
        .note(relay_note),
        Figure::new(
            "reel context switches per forwarded message, 1 KiB, W=16",
            r.switches(1),
            "switches",
        )
        .note(rounds_note),
        Figure::new(
            "bare relay context switches per forwarded message, 1 KiB, W=16",
            r.relay_switches(1),
            "switches",
        )
        .note(relay_note),
    ]
}

/// Throughput of one shape (`label`: "1 KiB, W=16", "1 MiB sequential"): through reel
/// and the relays, against direct and against the bare relay.
fn throughput_figures(
    r: &Results,
    notes: &Notes,
    shape: usize,
    label: &str,
    over_relay_target: f64,
) -> Vec<Figure> {
    let Notes {
        rounds_note,
        relay_note,
        tee_note,
        mapped_note,
    } = notes;
    vec![
        Figure::new(
            format!("throughput through reel ÷ direct, {label}"),
            r.ratio(shape),
            "ratio",
        )
        .target(Target::AtLeast(THROUGHPUT_RATIO))
        .note(format!(
            "direct {} calls/s; {rounds_note}",
            r.direct_rate(shape)
        )),
        Figure::new(
            format!("throughput through the bare relay ÷ direct, {label}"),
            r.relay_ratio(shape),
            "ratio",
        )
        .note(relay_note),
        Figure::new(
            format!("throughput through reel ÷ bare relay, {label}"),
            r.over_relay(shape, via_rec),
            "ratio",
        )
        .target(Target::AtLeast(over_relay_target))
        .note(format!("what recording costs; {rounds_note}")),
        Figure::new(
            format!("throughput through the tee relay ÷ bare relay, {label}"),
            r.over_relay(shape, via_tee),
            "ratio",
        )
        .note(tee_note),
        Figure::new(
            format!("throughput through the mapped tee relay ÷ bare relay, {label}"),
            r.over_relay(shape, via_mapped),
            "ratio",
        )
        .note(mapped_note),
    ]
}

/// Throughput with 1 KiB messages one at a time (no target).
fn sequential_small_figure(r: &Results, notes: &Notes) -> Figure {
    Figure::new(
        "throughput through reel ÷ direct, 1 KiB sequential",
        r.ratio(0),
        "ratio",
    )
    .note(format!(
        "direct {} calls/s; no target; {}",
        r.direct_rate(0),
        notes.rounds_note
    ))
}

/// Added latency per round trip, reel's peak RSS on the large session, and the
/// dropped-lines check.
fn latency_and_memory_figures(r: &Results, notes: &Notes, big: &BigSession) -> Vec<Figure> {
    let Notes {
        rounds_note,
        relay_note,
        ..
    } = notes;
    let added = r.med(0, &|r| r.rec.p50_us - r.direct.p50_us);
    let relay_added = r.med(0, &|r| r.relay.p50_us - r.direct.p50_us);
    let BigSession {
        load: big,
        report: big_run,
        gib,
    } = big;
    // The largest message is the echo answer: the text plus its JSON envelope.
    let largest_mib = (big.size as f64 + 100.0) / f64::from(1u32 << 20);
    let rss_target = RSS_BASE_MIB + 4.0 * largest_mib;
    vec![
        Figure::new("median added latency per round trip, 1 KiB", added, "µs")
            .target(Target::AtMost(ADDED_LATENCY_US))
            .note(format!("p50 through reel − p50 direct (aim, not a hard target); {rounds_note}")),
        Figure::new("median added latency per round trip, bare relay, 1 KiB", relay_added, "µs")
            .note(format!("p50 through the relay − p50 direct; {relay_note}")),
        Figure::new("reel peak RSS, 1 GiB session of 1 MiB messages", big_run.vmhwm_kb / 1024.0, "MiB")
            .target(Target::AtMost(rss_target))
            .note(format!(
                "VmHWM; {} calls, {:.2} GiB forwarded; target 32 MiB + 4 × {:.2} MiB",
                big.calls, gib, largest_mib
            )),
        Figure::new("lines dropped from traces", 0.0, "lines")
            .target(Target::AtMost(0.0))
            .note("every trace's end.counts checked against the calls made (the bench fails otherwise)"),
    ]
}

/// Lines reel forwards in a session: initialize, initialized and tools/list (3 in,
/// 2 out), then one request and one answer per call.
fn messages(w: &Workload) -> f64 {
    (w.calls * 2 + 5) as f64
}

/// Builds the echo client and server in the profile of the reel under test.
fn build_examples(ctx: &Ctx) -> anyhow::Result<Tools> {
    let [client, server, relay]: [PathBuf; 3] =
        super::build_examples(ctx, "reel-record", &["echo_client", "echo_server", "relay"])?
            .try_into()
            .map_err(|_| anyhow::anyhow!("cargo reported another number of executables"))?;
    Ok(Tools {
        client,
        server,
        relay,
    })
}

/// One client session, directly, through the relay or through `reel rec`.
fn session(ctx: &Ctx, tools: &Tools, w: &Workload, via: Via<'_>) -> anyhow::Result<Report> {
    let traces = match via {
        Via::Reel(dir) => Some(dir),
        _ => None,
    };
    let usage_file = ctx.work.join("rec-server-rusage.json");
    let _ = std::fs::remove_file(&usage_file);
    if let Some(dir) = traces
        && dir.exists()
    {
        std::fs::remove_dir_all(dir).with_context(|| format!("cannot clear {}", dir.display()))?;
    }
    if let Via::Tee { file, .. } = via {
        let _ = std::fs::remove_file(file);
    }
    let mut c = client_command(ctx, tools, w, via, &usage_file);
    let shown = display(&c);
    let out = c
        .stderr(Stdio::piped())
        .output()
        .with_context(|| format!("cannot start `{shown}`"))?;
    if !out.status.success() {
        bail!(
            "`{shown}` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v: Value = serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "`{shown}` printed no report: {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })?;
    let report = read_report(&v, w, via)?;
    if let Via::Tee { file, .. } = via {
        let _ = std::fs::remove_file(file);
    }
    if let Some(dir) = traces {
        verify_trace(dir, w)?;
        std::fs::remove_dir_all(dir).with_context(|| format!("cannot remove {}", dir.display()))?;
    }
    Ok(report)
}

/// `echo_client … -- [reel rec …] [relay …] echo_server`: the client, and the chain of
/// processes it starts.
fn client_command(
    ctx: &Ctx,
    tools: &Tools,
    w: &Workload,
    via: Via<'_>,
    usage_file: &Path,
) -> Command {
    let mut c = Command::new(&tools.client);
    c.args(["--calls", &w.calls.to_string()])
        .args(["--size", &w.size.to_string()])
        .args(["--window", &w.window.to_string()])
        .arg("--server-rusage")
        .arg(usage_file)
        .arg("--");
    match via {
        Via::Reel(dir) => {
            c.arg(&ctx.reel)
                .args(["rec", "--name", "bench", "--dir"])
                .arg(dir)
                .arg("--");
        }
        Via::Relay => {
            c.arg(&tools.relay);
        }
        Via::Tee { file, mapped } => {
            let flag = if mapped { "--tee-mapped" } else { "--tee" };
            c.arg(&tools.relay).arg(flag).arg(file);
        }
        Via::Direct => {}
    }
    c.arg(&tools.server).arg("--rusage-out").arg(usage_file);
    c
}

/// The client's JSON report: every answer right, and the middle's own cost (the
/// server's, direct).
fn read_report(v: &Value, w: &Workload, via: Via<'_>) -> anyhow::Result<Report> {
    let num = |k: &str| {
        v[k].as_f64()
            .with_context(|| format!("report lacks {k}: {v}"))
    };
    if v["mismatches"].as_u64() != Some(0) || v["exit"].as_i64() != Some(0) {
        bail!("{}: wrong answers or exit status: {v}", w.name);
    }
    let child_cpu = num("child_cpu_us")?;
    let server_cpu = num("server_cpu_us")?;
    let child_switches = num("child_switches")?;
    let server_switches = num("server_switches")?;
    Ok(Report {
        calls_per_s: num("calls_per_s")?,
        p50_us: num("p50_us")?,
        checksum: v["checksum"].as_str().unwrap_or_default().to_owned(),
        cpu_us: match via {
            Via::Direct => server_cpu,
            Via::Relay | Via::Tee { .. } | Via::Reel(_) => child_cpu - server_cpu,
        },
        vmhwm_kb: num("child_vmhwm_kb")?,
        switches: match via {
            Via::Direct => server_switches,
            Via::Relay | Via::Tee { .. } | Via::Reel(_) => child_switches - server_switches,
        },
    })
}

/// The trace holds every message: `end.counts` and the line count agree with the calls.
fn verify_trace(dir: &Path, w: &Workload) -> anyhow::Result<()> {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    let [path] = &files[..] else {
        bail!("expected one trace in {}, found {files:?}", dir.display());
    };
    let (lines, last) = count_lines(path)?;
    let end: Value = serde_json::from_slice(&last)
        .with_context(|| format!("{}: last line is not JSON", path.display()))?;
    let counts = &end["counts"];
    let (want_in, want_out) = (w.calls + 3, w.calls + 2);
    if end["type"] != "end"
        || counts["in"].as_u64() != Some(want_in)
        || counts["out"].as_u64() != Some(want_out)
        || counts["events"].as_u64() != Some(0)
        || lines != want_in + want_out + 2
    {
        bail!(
            "{}: the trace misses lines ({lines} lines, end {end}; want {want_in} in, {want_out} out, no events)",
            path.display()
        );
    }
    Ok(())
}

/// Counts the lines of a file and returns its last line (the end line is short: it
/// is found in the file's last 64 KiB).
fn count_lines(path: &Path) -> anyhow::Result<(u64, Vec<u8>)> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut buf = vec![0u8; 1 << 20];
    let mut lines = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
    }
    let len = f.metadata()?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(64 * 1024)))?;
    let mut tail = Vec::new();
    f.read_to_end(&mut tail)?;
    let tail = tail.strip_suffix(b"\n").unwrap_or(&tail);
    let last = match memchr::memrchr(b'\n', tail) {
        Some(i) => &tail[i + 1..],
        None => tail,
    };
    Ok((lines, last.to_vec()))
}
