//! Everything that touches processes, file descriptors and signals, for unix (Linux and
//! macOS): the one platform module for the servers reel starts (`rec`, `verify`, `play
//! --subset`) and the standard streams it relays. A Windows port replaces this file and
//! leaves the rest alone.
//!
//! Invariants:
//! - the wrapped server inherits reel's environment and working directory; only its
//!   three standard streams change;
//! - a signal is forwarded only to a child that has not been reaped, so a recycled pid
//!   can never receive it (the exit is observed with `WNOWAIT` first, and the reap happens
//!   under the same lock the forwarder takes);
//! - reel's own standard streams are used through duplicated descriptors, and a
//!   descriptor a parent left non-blocking is waited on with `poll` instead of failing
//!   with `EAGAIN`.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use signal_hook::consts::signal::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::{Handle, Signals};

/// The signals reel forwards to the server instead of dying of them.
pub const FORWARDED: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

/// Makes a write past the file-size limit (`ulimit -f`) fail with `EFBIG` instead of
/// killing reel with SIGXFSZ: a recorder whose trace cannot grow must go on forwarding
/// and say the trace is incomplete, like on a full disk. Call once, at start.
pub fn file_size_limit_is_an_error() {
    // SAFETY: setting a signal's disposition to ignored has no memory effects.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// Starts `command` with piped stdin and stdout, and stderr piped or inherited.
///
/// `own_group`: the child leads a process group of its own. reel asks for it when it
/// forwards signals: a Ctrl-C at a terminal signals the terminal's foreground process
/// group, which is then reel alone, and reel passes the signal on once. In reel's group,
/// the server got it twice, from the terminal and from reel, and many servers take a
/// second SIGINT as "exit now, skip the clean-up". Outside reel's group, a signal sent
/// to the group (a client's `killpg` escalating to SIGKILL) no longer reaches the server,
/// so on Linux the server is also killed when reel dies: a server that ignores both
/// SIGTERM and the end of its stdin is not left behind.
///
/// `path_first`: directories put before the inherited `PATH` (clients start servers
/// with a reduced one: a `#!/usr/bin/env node` script needs node's directory there).
pub fn spawn(
    command: &[OsString],
    pipe_stderr: bool,
    own_group: bool,
    path_first: &[std::path::PathBuf],
) -> io::Result<Child> {
    let mut cmd = prepare(command, own_group)?;
    if !path_first.is_empty() {
        let inherited = std::env::var_os("PATH").unwrap_or_default();
        let all = path_first
            .iter()
            .cloned()
            .chain(std::env::split_paths(&inherited));
        let path = std::env::join_paths(all)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        cmd.env("PATH", path);
    }
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(if pipe_stderr {
            Stdio::piped()
        } else {
            Stdio::inherit()
        })
        .spawn()
        .inspect(|child| {
            if let Some(p) = &child.stdin {
                widen_pipe(p.as_raw_fd());
            }
            if let Some(p) = &child.stdout {
                widen_pipe(p.as_raw_fd());
            }
        })
}

/// Starts `command` as [`spawn`] does with a process group of its own, but with reel's
/// standard streams (an agent `reel llm` wraps talks to the user, not to reel) and
/// `env` added to its environment.
pub fn spawn_inheriting(command: &[OsString], env: &[(&str, String)]) -> io::Result<Child> {
    let mut cmd = prepare(command, true)?;
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn()
}

/// The command, set up to run as [`spawn`] describes.
fn prepare(command: &[OsString], own_group: bool) -> io::Result<Command> {
    use std::os::unix::process::CommandExt;
    let (program, args) = command
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no command given"))?;
    let mut cmd = Command::new(program);
    // SAFETY: the closure runs in the forked child before exec and makes one
    // async-signal-safe call. An ignored signal stays ignored across exec: the server
    // gets the default SIGXFSZ back (see `file_size_limit_is_an_error`).
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_DFL);
            Ok(())
        });
    }
    if own_group {
        cmd.process_group(0);
        #[cfg(target_os = "linux")]
        {
            // SAFETY: getpid has no memory effects.
            let reel = unsafe { libc::getpid() };
            // SAFETY: the closure runs in the forked child before exec and makes only
            // async-signal-safe system calls (prctl, getppid, kill), touching no memory.
            unsafe {
                cmd.pre_exec(move || {
                    // The death signal follows the thread that forks, which waits for
                    // the server before it returns (`Recording::run`).
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                    // reel died between the fork and the prctl: no signal will come.
                    if libc::getppid() != reel {
                        libc::kill(libc::getpid(), libc::SIGKILL);
                    }
                    Ok(())
                });
            }
        }
    }
    cmd.args(args);
    Ok(cmd)
}

/// Pipe capacity asked for on the server's stdin and stdout (Linux; the default is
/// 64 KiB). A large message then crosses reel in a few reads and writes instead of one
/// per 64 KiB, each of which costs a wake-up on both ends. Best effort: an unprivileged
/// process gets at most `/proc/sys/fs/pipe-max-size` (1 MiB by default).
pub const PIPE_CAPACITY: i32 = 1024 * 1024;

fn widen_pipe(fd: RawFd) {
    #[cfg(target_os = "linux")]
    // SAFETY: fcntl on a descriptor we own; failure leaves the pipe as it was.
    unsafe {
        libc::fcntl(fd, libc::F_SETPIPE_SZ, PIPE_CAPACITY);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
}

/// Kills a server's whole process group when reel goes, however it goes.
///
/// The server leads a group of its own ([`spawn`]'s `own_group`), and on Linux it is
/// killed when reel dies; but what it started is not: a wrapper (`sh -c`, `npx`, `uvx`)
/// dies and the real server, if it ignores the end of its input, lives on. So a small
/// guardian process, forked here into a group of its own (a signal to reel's group, as
/// a client sends, does not reach it), holds the read end of a pipe whose write end
/// only reel has. When reel exits or is killed (`kill -9` included), the pipe closes,
/// and the guardian sends SIGKILL to the server's group and exits. Dropping the guard
/// (the session is over, the server reaped) does the same for anything the server left
/// behind.
pub struct GroupGuard {
    write_end: RawFd,
    guardian: libc::pid_t,
}

/// Starts the guardian of process group `pgid`.
pub fn guard_group(pgid: u32) -> io::Result<GroupGuard> {
    let pgid = libc::pid_t::try_from(pgid)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "no such process group"))?;
    let mut fds = [0; 2];
    // SAFETY: pipe writes two descriptors into the array it is given.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let (read_end, write_end) = (fds[0], fds[1]);
    // The server and whatever else reel starts must not hold the write end open.
    // SAFETY: fcntl on descriptors just created.
    unsafe {
        libc::fcntl(write_end, libc::F_SETFD, libc::FD_CLOEXEC);
        libc::fcntl(read_end, libc::F_SETFD, libc::FD_CLOEXEC);
    }
    let highest = descriptors_to_close();
    // SAFETY: in the child, only async-signal-safe calls (setpgid, close, read, kill,
    // _exit) are made, and no memory is allocated or locked: the rest of reel's threads
    // do not exist there.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => {
            // SAFETY: closing the descriptors created above.
            unsafe {
                libc::close(read_end);
                libc::close(write_end);
            }
            Err(io::Error::last_os_error())
        }
        0 => unsafe {
            libc::setpgid(0, 0);
            for fd in 0..highest {
                if fd != read_end {
                    libc::close(fd);
                }
            }
            let mut byte = 0u8;
            loop {
                let n = libc::read(read_end, (&mut byte as *mut u8).cast(), 1);
                if n == 0 || (n < 0 && *errno() != libc::EINTR) {
                    break;
                }
            }
            libc::kill(-pgid, libc::SIGKILL);
            libc::_exit(0);
        },
        guardian => {
            // SAFETY: the read end is the guardian's now.
            unsafe { libc::close(read_end) };
            Ok(GroupGuard {
                write_end,
                guardian,
            })
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        // SAFETY: closing our descriptor wakes the guardian, which kills the group and
        // exits; waiting reaps it.
        unsafe {
            libc::close(self.write_end);
            let mut status = 0;
            libc::waitpid(self.guardian, &mut status, 0);
        }
    }
}

/// The soft limit on open descriptors (`ulimit -n`), when there is one.
pub fn descriptor_limit() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given and nothing else.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0;
    #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every platform
    (ok && lim.rlim_cur != libc::RLIM_INFINITY).then_some(lim.rlim_cur as u64)
}

/// How many descriptors a forked guardian closes: all it may have inherited.
fn descriptors_to_close() -> i32 {
    descriptor_limit().map_or(65_536, |n| i32::try_from(n).unwrap_or(65_536).min(65_536))
}

#[cfg(target_os = "linux")]
unsafe fn errno() -> *mut i32 {
    // SAFETY: the thread's errno, valid for the thread's life.
    unsafe { libc::__errno_location() }
}

#[cfg(target_os = "macos")]
unsafe fn errno() -> *mut i32 {
    // SAFETY: the thread's errno, valid for the thread's life.
    unsafe { libc::__error() }
}

/// A running child that signals may be sent to until it is reaped.
pub struct ChildHandle {
    pid: libc::pid_t,
    /// The child leads its own process group ([`spawn`]'s `own_group`).
    leads_group: bool,
    reaped: Mutex<bool>,
}

impl ChildHandle {
    /// A handle on `child`; `leads_group` when it was spawned with a group of its own.
    pub fn new(child: &Child, leads_group: bool) -> Self {
        ChildHandle {
            pid: child.id() as libc::pid_t,
            leads_group,
            reaped: Mutex::new(false),
        }
    }

    /// Sends `signal` unless the child was already reaped: to its whole process group
    /// when it leads one, as a terminal or a client's `killpg` would have (a launcher
    /// such as `npx` and the server it started both get it).
    pub fn signal(&self, signal: i32) {
        let reaped = self.reaped.lock().unwrap_or_else(|p| p.into_inner());
        if !*reaped {
            let target = if self.leads_group {
                -self.pid
            } else {
                self.pid
            };
            // SAFETY: kill has no memory effects; the pid is our unreaped child (see the
            // module invariant), so neither it nor the group it leads can name another
            // process or group: a pid is not reused while it is a group's id.
            unsafe {
                libc::kill(target, signal);
            }
        }
    }

    /// Asks the child (and the group it leads) to end: SIGTERM.
    pub fn terminate(&self) {
        self.signal(SIGTERM);
    }

    /// Waits for the child to exit and reaps it.
    pub fn wait(&self, child: &mut Child) -> io::Result<ExitStatus> {
        loop {
            // SAFETY: siginfo_t is plain data, zero is a valid value.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: valid out-pointer; WNOWAIT leaves the child a zombie, so its pid
            // stays reserved until the reap below.
            let r = unsafe {
                libc::waitid(
                    libc::P_PID,
                    self.pid as libc::id_t,
                    &mut info,
                    libc::WEXITED | libc::WNOWAIT,
                )
            };
            if r == 0 {
                break;
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        let mut reaped = self.reaped.lock().unwrap_or_else(|p| p.into_inner());
        *reaped = true;
        child.wait()
    }
}

/// The exit code reel reports for a child's status: its code, or 128+N for signal N.
pub fn exit_code(status: ExitStatus) -> (i32, Option<i32>) {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => (c, None),
        (None, Some(s)) => (128 + s, Some(s)),
        // Stopped or continued: not an exit; report a generic failure.
        (None, None) => (1, None),
    }
}

/// Signal handlers installed before the child starts, so that a Ctrl-C during start-up
/// is not lost: it is forwarded as soon as the child exists.
pub struct SignalForwarder {
    signals: Signals,
}

/// The thread that forwards signals; stop it when the child is gone.
pub struct Forwarding {
    handle: Handle,
    thread: Option<JoinHandle<()>>,
}

impl SignalForwarder {
    /// Installs the handlers for [`FORWARDED`].
    pub fn install() -> io::Result<Self> {
        Ok(SignalForwarder {
            signals: Signals::new(FORWARDED)?,
        })
    }

    /// Forwards every signal received from now on (and any that arrived since
    /// [`SignalForwarder::install`]) to `child`.
    pub fn start(self, child: Arc<ChildHandle>) -> io::Result<Forwarding> {
        let mut signals = self.signals;
        let handle = signals.handle();
        let thread = std::thread::Builder::new()
            .name("reel-signals".into())
            .spawn(move || {
                for sig in signals.forever() {
                    child.signal(sig);
                }
            })?;
        Ok(Forwarding {
            handle,
            thread: Some(thread),
        })
    }
}

impl Forwarding {
    /// Stops forwarding.
    pub fn stop(mut self) {
        self.handle.close();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Calls `on_stop` on a thread of its own for each of [`FORWARDED`] that reaches reel,
/// for a command that serves until its input ends (`reel play` over stdio): a client
/// that ends its servers with SIGTERM (Claude Code does) gets the same ending as one that
/// closes stdin, summary and report included. The closure gets the signal's number and
/// its count so far (1 for the first). Stop it with [`Forwarding::stop`].
pub fn on_stop_signals(on_stop: impl Fn(i32, u32) + Send + 'static) -> io::Result<Forwarding> {
    let mut signals = Signals::new(FORWARDED)?;
    let handle = signals.handle();
    let thread = std::thread::Builder::new()
        .name("reel-signals".into())
        .spawn(move || {
            let mut count = 0u32;
            for sig in signals.forever() {
                count = count.saturating_add(1);
                on_stop(sig, count);
            }
        })?;
    Ok(Forwarding {
        handle,
        thread: Some(thread),
    })
}

/// Wakes one thread out of a blocking system call (a `read` of stdin that nothing else
/// can end), so that it sees what a signal thread sent it.
///
/// It sends the thread SIGUSR2, whose handler does nothing and is installed without
/// `SA_RESTART`: the call returns `EINTR`. A signal that lands just before the call
/// starts wakes nothing, so a caller repeats [`ThreadWaker::wake`] until the thread
/// shows it has woken.
pub struct ThreadWaker {
    thread: libc::pthread_t,
}

extern "C" fn ignore_wake(_: libc::c_int) {}

impl ThreadWaker {
    /// A waker for the calling thread, which must outlive every use of it.
    pub fn current() -> io::Result<ThreadWaker> {
        // SAFETY: a zeroed sigaction is a valid starting value; the handler is an
        // `extern "C"` function that touches nothing, and `sa_flags` leaves out
        // SA_RESTART on purpose.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = ignore_wake as *const () as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            action.sa_flags = 0;
            if libc::sigaction(libc::SIGUSR2, &action, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(ThreadWaker {
                thread: libc::pthread_self(),
            })
        }
    }

    /// Interrupts the thread's blocking call, if it is in one.
    pub fn wake(&self) {
        // SAFETY: the thread is alive (the contract of `current`); SIGUSR2's handler
        // does nothing.
        unsafe {
            libc::pthread_kill(self.thread, libc::SIGUSR2);
        }
    }
}

/// The name of one of [`FORWARDED`] (`SIGTERM`), for messages.
pub fn signal_name(sig: i32) -> String {
    match sig {
        SIGINT => "SIGINT".into(),
        SIGTERM => "SIGTERM".into(),
        SIGHUP => "SIGHUP".into(),
        n => format!("signal {n}"),
    }
}

/// One of reel's own standard streams, through a duplicated descriptor.
pub struct StdFd {
    file: File,
}

impl StdFd {
    /// Duplicates `fd` (0, 1 or 2); `None` when it is not open.
    pub fn dup(fd: RawFd) -> Option<StdFd> {
        // SAFETY: dup has no memory effects; a negative result is checked.
        let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
        if new < 0 {
            return None;
        }
        // SAFETY: `new` is a fresh descriptor that nothing else owns.
        Some(StdFd {
            file: unsafe { File::from_raw_fd(new) },
        })
    }

    fn wait_for(&self, events: libc::c_short) {
        let mut p = libc::pollfd {
            fd: self.file.as_raw_fd(),
            events,
            revents: 0,
        };
        // SAFETY: one valid pollfd. The result does not matter: the retried read or
        // write reports any real error.
        unsafe {
            libc::poll(&mut p, 1, -1);
        }
    }
}

impl Read for StdFd {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.file.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.wait_for(libc::POLLIN),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                r => return r,
            }
        }
    }
}

impl Write for StdFd {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        loop {
            match self.file.write(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.wait_for(libc::POLLOUT),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                r => return r,
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The server's stdin, written without blocking: a write that finds the pipe full
/// returns `WouldBlock` instead of waiting (see `forward`). Only reel holds this end of
/// the pipe, so the flag changes nothing for anyone else.
pub struct NonBlockingPipe {
    file: File,
}

impl NonBlockingPipe {
    /// Takes over the write end of the server's stdin. Should the flag not take (it
    /// always does on a fresh pipe), writes simply block as before.
    pub fn new(stdin: std::process::ChildStdin) -> NonBlockingPipe {
        let fd = std::os::fd::OwnedFd::from(stdin);
        // SAFETY: fcntl on a descriptor we own.
        unsafe {
            let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
            if flags >= 0 {
                libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
            }
        }
        NonBlockingPipe {
            file: File::from(fd),
        }
    }

    /// Writes what fits now.
    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    /// Waits until the pipe has room (or its reader is gone, which the next write
    /// reports).
    pub fn wait_writable(&self) {
        let mut p = libc::pollfd {
            fd: self.file.as_raw_fd(),
            events: libc::POLLOUT,
            revents: 0,
        };
        // SAFETY: one valid pollfd; the result does not matter (see above).
        unsafe {
            libc::poll(&mut p, 1, -1);
        }
    }
}
