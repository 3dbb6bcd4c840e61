//! Watching a long step so that it cannot hang CI without saying why.
//!
//! A test that leaves a process running which holds the harness's stdout keeps the pipe
//! open after `cargo test` has exited, and a reader waiting for its end would wait for
//! ever; a test that never returns keeps `cargo test` itself running. Both are test
//! bugs, and on a CI machine both look the same: a log that stops. This module finds the
//! processes involved through `/proc` (Linux; elsewhere the lists are empty) so the step
//! can name them, stop them and fail.

use std::fs;
use std::os::fd::AsRawFd;

/// A process: its id and its command line.
pub struct Proc {
    pub pid: u32,
    pub cmdline: String,
}

impl std::fmt::Display for Proc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.pid, self.cmdline)
    }
}

/// What `/proc/self/fd/N` points at for `fd` (`pipe:[1234]` for a pipe).
pub fn fd_target(fd: &impl AsRawFd) -> Option<String> {
    let link = fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()?;
    Some(link.to_string_lossy().into_owned())
}

/// Every other process with a descriptor on `target` (as [`fd_target`] names it).
pub fn holders(target: &str) -> Vec<Proc> {
    let me = std::process::id();
    all_pids()
        .filter(|&pid| pid != me)
        .filter(|pid| {
            fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|fds| {
                fds.flatten()
                    .any(|fd| fs::read_link(fd.path()).is_ok_and(|l| l.to_string_lossy() == target))
            })
        })
        .map(proc_of)
        .collect()
}

/// The processes below `root` (children, their children, …), parents first.
pub fn descendants(root: u32) -> Vec<Proc> {
    let parents: Vec<(u32, u32)> = all_pids()
        .filter_map(|pid| Some((pid, parent_of(pid)?)))
        .collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parents
                .iter()
                .filter(|(_, p)| *p == parent)
                .map(|(pid, _)| *pid),
        );
        i += 1;
    }
    found.into_iter().skip(1).map(proc_of).collect()
}

/// Sends SIGKILL to each of `procs`; a process already gone is no error.
pub fn kill(procs: &[Proc]) {
    for p in procs {
        if let Ok(pid) = libc::pid_t::try_from(p.pid) {
            // SAFETY: kill has no memory preconditions; a stale pid fails with ESRCH.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

fn all_pids() -> impl Iterator<Item = u32> {
    fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so read after
    // the last `)`.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

fn proc_of(pid: u32) -> Proc {
    let raw = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let mut cmdline: String = raw
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(String::from_utf8_lossy)
        .collect::<Vec<_>>()
        .join(" ");
    if cmdline.len() > 300 {
        let cut = cmdline.floor_char_boundary(300);
        cmdline.truncate(cut);
        cmdline.push('…');
    }
    Proc { pid, cmdline }
}

/// True once no process's command line is exactly `cmdline` (polled for up to 5 s): a
/// process killed with SIGKILL leaves the table when it is reaped, not at once.
#[cfg(test)]
pub fn leaves_the_table(cmdline: &str) -> bool {
    (0..100).any(|_| {
        let left = all_pids().any(|pid| proc_of(pid).cmdline == cmdline);
        if left {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        !left
    })
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    /// A child that holds a pipe's write end is found as its holder and among this
    /// process's descendants, and is gone once killed.
    #[test]
    fn a_process_holding_a_pipe_is_found_and_stopped() {
        let mut child = Command::new("sleep")
            .arg("30")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let target = fd_target(&out).unwrap();
        assert!(target.starts_with("pipe:["), "{target}");
        let held: Vec<u32> = holders(&target).iter().map(|p| p.pid).collect();
        assert_eq!(held, [child.id()]);
        let below = descendants(std::process::id());
        let sleeper = below.iter().find(|p| p.pid == child.id()).unwrap();
        assert_eq!(sleeper.cmdline, "sleep 30");
        kill(&[Proc {
            pid: child.id(),
            cmdline: String::new(),
        }]);
        let status = child.wait().unwrap();
        assert!(!status.success());
    }
}
