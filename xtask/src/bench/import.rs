//! The import bench: `reel import` of a large mcporter recording, which must convert in
//! streaming, at ≥ 200 MB/s and in flat memory.
//!
//! A deterministic mcporter NDJSON file (1 GB; 32 MB with `--quick`) of `tools/call`
//! requests and their results, about 600 bytes a line, is generated once in the bench
//! directory; each round (median of 3) imports it into a fresh trace with the default
//! redaction, timed and with its peak RSS from the kernel (`wait4`).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

use super::{Ctx, Figure, Target, measure, median};

const FULL_SIZE: u64 = 1_000_000_000;
const QUICK_SIZE: u64 = 32_000_000;
const ROUNDS: usize = 3;

/// Targets from the issue.
const IMPORT_MBPS: f64 = 200.0;
const RSS_MIB: f64 = 64.0;

/// A recording of about `size` bytes (made once; its size names it).
fn recording(work: &Path, size: u64) -> anyhow::Result<PathBuf> {
    let path = work.join(format!("import-mcporter-{size}.ndjson"));
    if path.exists() {
        return Ok(path);
    }
    std::fs::create_dir_all(work)?;
    let tmp = path.with_extension("partial");
    let mut out = BufWriter::new(std::fs::File::create(&tmp)?);
    let mut written = 0u64;
    let mut id = 0u64;
    while written < size {
        id += 1;
        let ms = id % 1000;
        let s = (id / 1000) % 60;
        let ts = format!("2026-12-01T10:{:02}:{s:02}.{ms:03}Z", (id / 60_000) % 60);
        let req = format!(
            "{{\"method\":\"tools/call\",\"params\":{{\"name\":\"search\",\"arguments\":{{\"query\":\"item {id} of the catalogue, with some words to search for\",\"limit\":10}}}},\"jsonrpc\":\"2.0\",\"id\":{id},\"_meta\":{{\"dir\":\"send\",\"server\":\"bench\",\"ts\":\"{ts}\"}}}}\n"
        );
        let res = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"Found 3 results for item {id}: the first one, the second one, and a third that is a little longer than the others so that the line is of a realistic size for a tool result.\"}}],\"isError\":false}},\"_meta\":{{\"dir\":\"recv\",\"server\":\"bench\",\"ts\":\"{ts}\"}}}}\n"
        );
        out.write_all(req.as_bytes())?;
        out.write_all(res.as_bytes())?;
        written += (req.len() + res.len()) as u64;
    }
    out.flush()?;
    drop(out);
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}

/// Runs the import bench.
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Figure>> {
    let size = if ctx.quick { QUICK_SIZE } else { FULL_SIZE };
    let src = recording(&ctx.work, size)?;
    let bytes = std::fs::metadata(&src)?.len();
    let mb = bytes as f64 / 1e6;
    let out_dir = ctx.work.join("import-out");
    let mut secs = Vec::new();
    let mut cpu = Vec::new();
    let mut rss = Vec::new();
    for round in 1..=ROUNDS {
        let _ = std::fs::remove_dir_all(&out_dir);
        std::fs::create_dir_all(&out_dir)?;
        let out = out_dir.join("imported.jsonl");
        let mut cmd = Command::new(&ctx.reel);
        cmd.args(["import", "-o"])
            .arg(&out)
            .arg(&src)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let m = measure(&mut cmd).context("reel import")?;
        if m.code != Some(0) {
            bail!("reel import exited {:?}", m.code);
        }
        // Counted streaming: a child's peak RSS starts from this process's at the fork.
        let lines = count_lines(&out)?;
        if lines < 3 {
            bail!("the import wrote {lines} lines");
        }
        let s = m.wall.as_secs_f64();
        let c = m.cpu.as_secs_f64();
        println!(
            "round {round}: {:.0} MB/s ({:.0} MB per CPU second), peak RSS {:.1} MiB, {lines} trace lines",
            mb / s,
            mb / c,
            m.max_rss as f64 / (1 << 20) as f64
        );
        secs.push(s);
        cpu.push(c);
        rss.push(m.max_rss as f64 / (1 << 20) as f64);
    }
    let _ = std::fs::remove_dir_all(&out_dir);
    let note = format!(
        "median of {ROUNDS} rounds, warm cache, a {mb:.0} MB mcporter recording, default redaction"
    );
    Ok(vec![
        match median(&secs) {
            Some(s) => Figure::new("reel import (mcporter)", mb / s, "MB/s").note(&note),
            None => Figure::missing("reel import (mcporter)", "MB/s", "no round ran"),
        }
        .target(Target::AtLeast(IMPORT_MBPS)),
        // What a busy machine does not change much: the work per byte.
        match median(&cpu) {
            Some(c) => Figure::new("reel import per CPU second", mb / c, "MB/s").note(&note),
            None => Figure::missing("reel import per CPU second", "MB/s", "no round ran"),
        },
        match median(&rss) {
            Some(r) => Figure::new("reel import peak RSS", r, "MiB").note(&note),
            None => Figure::missing("reel import peak RSS", "MiB", "no round ran"),
        }
        .target(Target::AtMost(RSS_MIB)),
    ])
}

fn count_lines(path: &Path) -> anyhow::Result<usize> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0;
    loop {
        let got = f.read(&mut buf)?;
        if got == 0 {
            return Ok(n);
        }
        n += buf[..got].iter().filter(|&&c| c == b'\n').count();
    }
}
