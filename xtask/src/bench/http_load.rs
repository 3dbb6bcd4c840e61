//! The HTTP benches' shared measuring: one run of the load driver
//! (`reel-record/examples/http_load.rs`) and a process's or thread's CPU time from
//! `/proc` (Linux).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::Value;

use crate::process::display;

/// One load run, as the driver reported it.
#[derive(Debug, Clone, Copy)]
pub struct Load {
    pub requests: f64,
    pub rps: f64,
    pub p50_us: f64,
}

/// One run of the load driver.
pub fn load(exe: &Path, url: &str, requests: usize, clients: usize) -> anyhow::Result<Load> {
    let mut c = Command::new(exe);
    c.args(["--url", url, "--clients", &clients.to_string()])
        .args(["--requests", &requests.to_string()]);
    let shown = display(&c);
    let out = c
        .output()
        .with_context(|| format!("cannot start `{shown}`"))?;
    if !out.status.success() {
        bail!(
            "`{shown}` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v: Value = serde_json::from_slice(&out.stdout)
        .with_context(|| format!("`{shown}` printed no report"))?;
    if v["errors"].as_u64() != Some(0) {
        bail!("`{shown}`: requests failed: {v}");
    }
    let num = |k: &str| {
        v[k].as_f64()
            .with_context(|| format!("report lacks {k}: {v}"))
    };
    Ok(Load {
        requests: num("requests")?,
        rps: num("rps")?,
        p50_us: num("p50_us")?,
    })
}

/// User + system CPU time of a process, all threads (Linux `/proc/<pid>/stat`).
pub fn process_cpu(pid: u32) -> anyhow::Result<Duration> {
    stat_cpu(&format!("/proc/{pid}/stat"))
}

/// User + system CPU time of the process's threads named `name`.
pub fn thread_cpu(pid: u32, name: &str) -> anyhow::Result<Duration> {
    let mut total = Duration::ZERO;
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let dir = task?.path();
        if std::fs::read_to_string(dir.join("comm")).is_ok_and(|c| c.trim() == name) {
            total += stat_cpu(&dir.join("stat").display().to_string())?;
        }
    }
    Ok(total)
}

/// utime + stime of a `stat` file.
fn stat_cpu(path: &str) -> anyhow::Result<Duration> {
    let stat = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read {path} (Linux only)"))?;
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| -> anyhow::Result<u64> {
        fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .with_context(|| format!("unreadable {path}"))
    };
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after ')'.
    let total = ticks(11)? + ticks(12)?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = u64::try_from(hz).ok().filter(|h| *h > 0).unwrap_or(100);
    Ok(Duration::from_nanos(total * 1_000_000_000 / hz))
}
