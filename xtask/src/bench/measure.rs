//! Measuring a child process as the kernel accounted for it (`wait4`), this process's
//! own CPU time and peak memory, and the median the benches report.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::process::display;

/// A finished child process as the kernel accounted for it.
#[derive(Debug, Clone, Copy)]
pub struct Measured {
    /// Exit code, `None` when killed by a signal.
    pub code: Option<i32>,
    /// The signal that killed it.
    pub signal: Option<i32>,
    /// Wall time from just before spawn to reaping.
    pub wall: Duration,
    /// Peak resident set size, bytes (`ru_maxrss`).
    pub max_rss: u64,
    /// User + system CPU time.
    pub cpu: Duration,
}

impl Measured {
    /// "exit 1" or "signal 9".
    pub fn status_text(&self) -> String {
        match (self.code, self.signal) {
            (Some(c), _) => format!("exit {c}"),
            (None, Some(s)) => format!("signal {s}"),
            (None, None) => "unknown status".into(),
        }
    }
}

/// Runs `cmd` to completion and returns its wall time, status and the kernel's resource
/// accounting for exactly that child (`wait4`), which `std::process::Child` does not give.
///
/// Limit: on Linux a child's `ru_maxrss` also counts the memory image it had before
/// `exec`, which is this process's (spawned children share it until they exec);
/// [`self_max_rss`] says how large that can have been.
pub fn measure(cmd: &mut Command) -> anyhow::Result<Measured> {
    let shown = display(cmd);
    let start = Instant::now();
    let child = cmd
        .stdin(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot start `{shown}`"))?;
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data; zero is a valid value for every field.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: pid is our own unreaped child; both out-pointers are valid for writes.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            break;
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err).with_context(|| format!("wait4 for `{shown}`"));
        }
    }
    let wall = start.elapsed();
    // Reaped above; `Child` does not wait on drop, so dropping it only closes our ends.
    drop(child);
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    let (code, signal) = if libc::WIFEXITED(status) {
        (Some(libc::WEXITSTATUS(status)), None)
    } else if libc::WIFSIGNALED(status) {
        (None, Some(libc::WTERMSIG(status)))
    } else {
        (None, None)
    };
    Ok(Measured {
        code,
        signal,
        wall,
        max_rss: maxrss_bytes(ru.ru_maxrss),
        cpu: tv(ru.ru_utime) + tv(ru.ru_stime),
    })
}

/// CPU time this process has used so far (user + system, all threads).
pub fn self_cpu() -> Duration {
    // SAFETY: timespec is plain data; the out-pointer is valid.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid clock id and out-pointer.
    if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The peak RSS of this process's current memory image, bytes: what Linux adds to the
/// `ru_maxrss` of a child spawned now. `/proc/self/status` `VmHWM` on Linux; elsewhere
/// `getrusage`, which may also count images this process had before its own `exec`.
pub fn self_max_rss() -> u64 {
    if let Ok(status) = std::fs::read_to_string("/proc/self/status")
        && let Some(kib) = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    {
        return kib * 1024;
    }
    // SAFETY: as in `measure`.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF with a valid out-pointer.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return 0;
    }
    maxrss_bytes(ru.ru_maxrss)
}

fn maxrss_bytes(v: libc::c_long) -> u64 {
    let v = v.max(0) as u64;
    // Linux reports KiB, macOS bytes.
    if cfg!(target_os = "macos") {
        v
    } else {
        v * 1024
    }
}

/// The median of `xs` (the mean of the middle two for an even count); `None` when empty.
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn measure_reports_status_and_memory() {
        let m = measure(Command::new("sh").args(["-c", "exit 3"])).unwrap();
        assert_eq!(m.code, Some(3));
        assert_eq!(m.status_text(), "exit 3");
        assert!(m.max_rss > 0);
        assert!(self_max_rss() > 0);
        let m = measure(Command::new("sh").args(["-c", "kill -9 $$"])).unwrap();
        assert_eq!(m.signal, Some(9));
        assert_eq!(m.status_text(), "signal 9");
    }
}
