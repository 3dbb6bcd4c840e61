//! `cargo xtask bench [--quick] [NAME…]`: builds reel, runs the named benches (all by
//! default), prints one table and writes `target/bench/results.json`.
//!
//! Each bench is a module with `pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Figure>>`,
//! listed once in [`BENCHES`]. A bench measures reel as a user runs it (the built binary,
//! a child process) and puts the target next to each figure it has one for.
//! A figure that could not be measured has no value and says why; any such figure, or a
//! bench that fails, makes the exit status non-zero after the table and JSON are written.
//! Missing a target is reported, not an error: the figures are the result.
//!
//! `--quick` is a smoke run (small inputs, debug build) that proves the benches work; its
//! figures mean nothing and go to `target/bench/quick/`.

mod child;
mod ctx;
pub mod diff;
mod figure;
mod http_load;
pub mod import;
pub mod llm;
mod measure;
pub mod play;
pub mod play_http;
pub mod reader;
pub mod rec;
pub mod rec_http;
mod sse;
mod synth;
pub mod view;

pub use child::{ReelListening, Running, sigterm, start_listener, start_reel};
pub use ctx::{Ctx, build_examples};
pub use figure::{Figure, Target, fmt_value};
pub use measure::{Measured, measure, median, self_cpu, self_max_rss};

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};
use serde::Serialize;

use crate::process::{self, display};

type BenchFn = fn(&Ctx) -> anyhow::Result<Vec<Figure>>;

/// Every bench, by name, in the order `cargo xtask bench` runs them.
const BENCHES: &[(&str, BenchFn)] = &[
    ("reader", reader::run),
    ("import", import::run),
    ("rec", rec::run),
    ("rec-http", rec_http::run),
    ("play", play::run),
    ("play-http", play_http::run),
    ("diff", diff::run),
    ("llm", llm::run),
    ("view", view::run),
];

/// What `cargo xtask bench` was asked for.
struct Args {
    quick: bool,
    profile: Option<String>,
    /// The benches to run (all when none is named).
    names: Vec<(&'static str, BenchFn)>,
}

/// `[--quick] [--profile P] [NAME…]`.
fn parse_args(args: &[String]) -> anyhow::Result<Args> {
    let mut quick = false;
    let mut profile = None;
    let mut names = Vec::new();
    let mut args_left = args.iter();
    while let Some(a) = args_left.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--profile" => match args_left.next() {
                Some(p) => profile = Some(p.clone()),
                None => bail!("--profile takes a cargo profile (release, dist, …)"),
            },
            s if s.starts_with('-') => {
                bail!("unknown flag `{s}` (cargo xtask bench [--quick] [--profile P] [NAME…])")
            }
            s => match BENCHES.iter().find(|(n, _)| *n == s) {
                Some(b) => names.push(*b),
                None => bail!(
                    "no bench named `{s}`; benches: {}",
                    BENCHES
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            },
        }
    }
    if names.is_empty() {
        names = BENCHES.to_vec();
    }

    Ok(Args {
        quick,
        profile,
        names,
    })
}

/// `cargo xtask bench`.
pub fn cmd(args: &[String]) -> anyhow::Result<()> {
    let Args {
        quick,
        profile,
        names,
    } = parse_args(args)?;
    let root = process::workspace_root();
    if !quick && cfg!(debug_assertions) && std::env::var_os(REEXEC_ENV).is_none() {
        return reexec_optimised(&root, args);
    }
    let mut work = process::target_dir(&root).join("bench");
    if quick {
        work.push("quick");
    }
    std::fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;
    let profile = profile.unwrap_or_else(|| if quick { "dev" } else { "release" }.to_owned());
    let reel = ctx::build_bin(&root, "reel", "reel", &profile)?;
    let ctx = Ctx {
        reel,
        work,
        quick,
        profile,
    };
    if quick {
        println!(
            "bench: --quick: small inputs on a debug build; the figures prove the benches run, nothing more"
        );
    }

    let load = load_average();
    if let Some(l) = load {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        println!("bench: load average {l:.2} on {cpus} cores before the run");
        if l > 0.5 * cpus as f64 {
            println!(
                "bench: warning: the machine is busy; wall-clock figures will be low and noisy (CPU-time figures less so)"
            );
        }
    }

    let mut results = Vec::new();
    for (name, run) in &names {
        println!("\n==> bench {name}");
        let outcome = run(&ctx);
        if let Err(e) = &outcome {
            eprintln!("bench {name}: error: {e:#}");
        }
        results.push((*name, outcome));
    }

    print_table(&results);
    let json_path = ctx.work.join("results.json");
    write_results(&json_path, &ctx, load, &results)?;
    println!("results: {}", json_path.display());

    let failed: Vec<String> = results
        .iter()
        .flat_map(|(name, r)| match r {
            Err(_) => vec![format!("{name} (failed)")],
            Ok(figs) => figs
                .iter()
                .filter(|f| f.value.is_none())
                .map(|f| format!("{name}: {}", f.name))
                .collect(),
        })
        .collect();
    if !failed.is_empty() {
        bail!("not measured: {}", failed.join(", "));
    }
    Ok(())
}

/// Set on the optimised xtask that a debug one re-runs, so it runs the benches itself.
const REEXEC_ENV: &str = "REEL_XTASK_BENCH_OPTIMISED";

/// Builds xtask in release and runs the same bench command with it: the in-process work
/// (generating the trace, the validation pass) must be measured optimised, and the
/// optimised xtask stays small, which keeps its share of a child's `ru_maxrss` small.
fn reexec_optimised(root: &Path, args: &[String]) -> anyhow::Result<()> {
    use std::os::unix::process::CommandExt;
    println!("bench: building an optimised xtask to run the benches");
    let xtask = ctx::build_bin(root, "xtask", "xtask", "release")?;
    let mut cmd = Command::new(&xtask);
    cmd.arg("bench").args(args).env(REEXEC_ENV, "1");
    println!("$ {}", display(&cmd));
    let err = cmd.exec();
    Err(err).with_context(|| format!("cannot run {}", xtask.display()))
}

/// The one-minute load average (Linux), to tell a reader how busy the machine was.
fn load_average() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

fn print_table(results: &[(&str, anyhow::Result<Vec<Figure>>)]) {
    let mut rows: Vec<[String; 6]> = vec![[
        "bench".into(),
        "figure".into(),
        "value".into(),
        "unit".into(),
        "target".into(),
        "met".into(),
    ]];
    let mut notes = Vec::new();
    for (name, r) in results {
        match r {
            Err(e) => rows.push([
                name.to_string(),
                format!("FAILED: {e:#}"),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ]),
            Ok(figs) => {
                for f in figs {
                    let value = f.value.map_or("—".to_owned(), fmt_value);
                    let met = match f.met() {
                        Some(true) => "yes",
                        Some(false) => "NO",
                        None => "",
                    };
                    let mut fig_name = f.name.clone();
                    if !f.note.is_empty() {
                        notes.push(f.note.clone());
                        let _ = write!(fig_name, " [{}]", notes.len());
                    }
                    rows.push([
                        name.to_string(),
                        fig_name,
                        value,
                        f.unit.clone(),
                        f.target.map(Target::text).unwrap_or_default(),
                        met.into(),
                    ]);
                }
            }
        }
    }
    let mut widths = [0usize; 6];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    println!();
    for row in &rows {
        let mut line = String::new();
        for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
            let pad = w.saturating_sub(cell.chars().count());
            if i == 2 {
                let _ = write!(line, "{}{cell}  ", " ".repeat(pad));
            } else {
                let _ = write!(line, "{cell}{}  ", " ".repeat(pad));
            }
        }
        println!("{}", line.trim_end());
    }
    for (i, n) in notes.iter().enumerate() {
        println!("[{}] {n}", i + 1);
    }
}

fn write_results(
    path: &Path,
    ctx: &Ctx,
    load: Option<f64>,
    results: &[(&str, anyhow::Result<Vec<Figure>>)],
) -> anyhow::Result<()> {
    // Structs rather than `json!`, so the document keeps this field order.
    #[derive(Serialize)]
    struct Bench<'a> {
        name: &'a str,
        ok: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        figures: &'a [Figure],
    }
    #[derive(Serialize)]
    struct Doc<'a> {
        schema: &'static str,
        quick: bool,
        profile: &'a str,
        reel: &'a Path,
        cpus: usize,
        load_average_before: Option<f64>,
        page_cache: &'static str,
        benches: Vec<Bench<'a>>,
    }
    let doc = Doc {
        schema: "reel.bench/1",
        quick: ctx.quick,
        profile: &ctx.profile,
        reel: &ctx.reel,
        cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
        load_average_before: load,
        page_cache: "warm",
        benches: results
            .iter()
            .map(|(name, r)| match r {
                Ok(figs) => Bench {
                    name,
                    ok: true,
                    error: None,
                    figures: figs,
                },
                Err(e) => Bench {
                    name,
                    ok: false,
                    error: Some(format!("{e:#}")),
                    figures: &[],
                },
            })
            .collect(),
    };
    let text = serde_json::to_string_pretty(&doc)?;
    std::fs::write(path, text + "\n").with_context(|| format!("cannot write {}", path.display()))
}
