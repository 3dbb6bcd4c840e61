//! The live server of `--subset`: a child process the tape server forwards to.
//!
//! This is the one place `reel play` starts and stops a process. Its stdout is read line
//! by line (framed by `reel_net::framing`) and its stderr in chunks on two threads, each handed to a callback (the
//! server's event channel). Closing its stdin is the stdio way to ask it to stop; a
//! child still running [`STOP_GRACE`] later is killed. A `Live` dropped without
//! [`Live::finish`] kills its child, so no test or error path leaves one behind.

use std::io::{self, Read, Write};
use std::process::{Child, ChildStdin};
use std::thread;
use std::time::{Duration, Instant};

use reel_net::framing::LineFramer;

/// How long a live server has to exit after its stdin is closed.
pub const STOP_GRACE: Duration = Duration::from_secs(3);

/// How long the end of a live server's stdout waits for the end of its stderr.
const STDERR_LINGER: Duration = Duration::from_secs(1);

/// Starts `command` with its three streams piped: by the platform module on unix (as
/// `rec` starts its server, its pipes widened), by std elsewhere.
#[cfg(unix)]
fn spawn(command: &[String]) -> io::Result<Child> {
    let command: Vec<std::ffi::OsString> = command.iter().map(Into::into).collect();
    reel_net::process::spawn(&command, true, false, &[])
}

#[cfg(not(unix))]
fn spawn(command: &[String]) -> io::Result<Child> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no command given"))?;
    std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
}

/// What the live server said.
#[derive(Debug)]
pub enum LiveOutput {
    /// One stdout line, without its line break.
    Line(Vec<u8>),
    /// A chunk of stderr.
    Stderr(Vec<u8>),
    /// Its stdout closed.
    End,
}

/// A running live server.
pub struct Live {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    /// When its grace ends: [`STOP_GRACE`] after its stdin was first closed.
    stop_by: Option<Instant>,
}

impl Live {
    /// Starts `command` and hands everything it prints to `sink`.
    pub fn spawn(
        command: &[String],
        sink: impl Fn(LiveOutput) -> bool + Send + Clone + 'static,
    ) -> io::Result<Live> {
        let mut child = spawn(command)?;
        let stdin = child.stdin.take();
        // The stderr reader says when it is done (by dropping this), so that `End` comes
        // after the server's last words on stderr, not before them: a server that dies
        // prints why on stderr and closes both at once.
        let (stderr_done, stderr_ended) = std::sync::mpsc::channel::<()>();
        if let Some(mut err) = child.stderr.take() {
            let sink = sink.clone();
            thread::spawn(move || {
                let _done = stderr_done;
                let mut buf = vec![0u8; 8192];
                loop {
                    match err.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            if !sink(LiveOutput::Stderr(buf[..n].to_vec())) {
                                break;
                            }
                        }
                    }
                }
            });
        }
        if let Some(out) = child.stdout.take() {
            thread::spawn(move || {
                let mut out = out;
                let mut framer = LineFramer::default();
                let mut buf = vec![0u8; 1 << 16];
                let mut open = true;
                loop {
                    let n = match out.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(_) => break,
                    };
                    framer.feed(&buf[..n], |l| {
                        open = open && sink(LiveOutput::Line(l.bytes));
                    });
                    if !open {
                        return;
                    }
                }
                framer.finish(|l| open = open && sink(LiveOutput::Line(l.bytes)));
                // A process the server started may hold its stderr open: wait a little,
                // not for ever.
                let _ = stderr_ended.recv_timeout(STDERR_LINGER);
                if open {
                    sink(LiveOutput::End);
                }
            });
        }
        Ok(Live {
            child: Some(child),
            stdin,
            stop_by: None,
        })
    }

    /// Sends one line (a line break is added).
    pub fn send(&mut self, line: &[u8]) -> io::Result<()> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(io::ErrorKind::BrokenPipe.into());
        };
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line);
        buf.push(b'\n');
        stdin.write_all(&buf)?;
        stdin.flush()
    }

    /// Closes its stdin (the stdio way to say "we are done"); its grace starts.
    pub fn close_input(&mut self) {
        self.stdin = None;
        self.stop_by
            .get_or_insert_with(|| Instant::now() + STOP_GRACE);
    }

    /// When it is stopped if it has not exited: [`STOP_GRACE`] after its input was
    /// closed (`None` while it is open). A caller waiting for its output ends should
    /// wait no longer: a server that ignores the end of its input, or a child of it
    /// that keeps its stdout open, would keep it waiting for ever.
    pub fn stop_deadline(&self) -> Option<Instant> {
        self.stop_by
    }

    /// Waits for it to exit (killing it after [`STOP_GRACE`]); its exit status as the
    /// trace's `exitCode` convention: the code, 128+N for signal N.
    pub fn finish(mut self) -> Option<i64> {
        self.close_input();
        let mut child = self.child.take()?;
        let deadline = self.stop_by.unwrap_or_else(|| Instant::now() + STOP_GRACE);
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break s,
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(10)),
                _ => {
                    let _ = child.kill();
                    match child.wait() {
                        Ok(s) => break s,
                        Err(_) => return None,
                    }
                }
            }
        };
        if let Some(c) = status.code() {
            return Some(i64::from(c));
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            status.signal().map(|s| 128 + i64::from(s))
        }
        #[cfg(not(unix))]
        None
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
