//! Where the server's events come from, and one of the two platform-specific pieces of
//! `play` (the other: how much of stdout the client has not read, in `out`).
//!
//! The index and the live server of `--subset` run on threads and send their events over
//! a channel. The client's input is read one of two ways:
//! - [`Feed::threaded`]: a reader thread splits and scans lines and sends them over the
//!   same channel (any `Read`; used by the library API and off Unix);
//! - [`Feed::stdin`] (Unix): the server thread itself reads fd 0 when `poll(2)` says it
//!   is readable, and a self-pipe wakes that `poll` when a thread has sent something.
//!   This saves a thread hand-off (two context switches) per request, which is most of
//!   what a replayed call costs beyond its parsing.
//!
//! Either way, lines are split by [`LineSplitter`] and scanned ([`parse_live`]) before the
//! server sees them.

use std::io::{self, Read};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::thread;
use std::time::Duration;

use reel_mcp::normalize::Normalizer;
use reel_net::framing::{Limit, Line, LineFramer};

use super::input::{Content, Event, InputLine, MAX_LINE, parse_live};

/// Splits a byte stream into client lines (LF or CRLF, by [`LineFramer`]), drops blank
/// ones, marks those over [`MAX_LINE`] as oversized, and scans each.
pub(super) struct LineSplitter {
    framer: LineFramer,
    norm: Normalizer,
}

impl LineSplitter {
    pub(super) fn new(norm: Normalizer) -> LineSplitter {
        LineSplitter {
            framer: LineFramer::new(Limit::Skip(MAX_LINE)),
            norm,
        }
    }

    /// Takes a chunk; complete lines go to `out`.
    pub(super) fn feed(&mut self, chunk: &[u8], out: &mut Vec<InputLine>) {
        let norm = &self.norm;
        self.framer.feed(chunk, |l| out.extend(input_line(l, norm)));
    }

    /// The last line, when the input ended without a line break.
    pub(super) fn finish(&mut self) -> Option<InputLine> {
        let mut last = None;
        let norm = &self.norm;
        self.framer.finish(|l| last = input_line(l, norm));
        last
    }
}

/// A framed line as the server takes it; `None` for a blank one.
fn input_line(line: Line, norm: &Normalizer) -> Option<InputLine> {
    let content = if line.oversized {
        Content::Oversized
    } else if line.bytes.iter().all(u8::is_ascii_whitespace) {
        return None;
    } else {
        match String::from_utf8(line.bytes) {
            Ok(text) => {
                let parsed = parse_live(&text, norm);
                Content::Text(text, parsed)
            }
            Err(e) => Content::NotUtf8(e.into_bytes()),
        }
    };
    Some(InputLine {
        content,
        crlf: line.crlf,
        route: 0,
    })
}

/// Sends events to the server and wakes it.
#[derive(Clone)]
pub(super) struct Notifier {
    tx: Sender<Event>,
    waker: Option<Arc<platform::Waker>>,
}

impl Notifier {
    /// Sends; false when the server is gone.
    pub(super) fn send(&self, ev: Event) -> bool {
        if self.tx.send(ev).is_err() {
            return false;
        }
        if let Some(w) = &self.waker {
            w.wake();
        }
        true
    }
}

/// The server's side.
pub(super) struct Feed {
    rx: Receiver<Event>,
    #[cfg(unix)]
    direct: Option<platform::Direct>,
}

/// Events taken from the channel in one go before the server flushes its output.
const BATCH: usize = 1024;

impl Feed {
    /// Input read by a thread from any reader.
    pub(super) fn threaded(
        input: impl Read + Send + 'static,
        norm: Normalizer,
        tx: Sender<Event>,
        rx: Receiver<Event>,
    ) -> (Feed, Notifier) {
        let notifier = Notifier {
            tx: tx.clone(),
            waker: None,
        };
        spawn_reader(input, tx, norm);
        (
            Feed {
                rx,
                #[cfg(unix)]
                direct: None,
            },
            notifier,
        )
    }

    /// Input read from this process's stdin on the server thread (Unix); elsewhere the
    /// same as [`Feed::threaded`] on stdin.
    pub(super) fn stdin(
        norm: Normalizer,
        tx: Sender<Event>,
        rx: Receiver<Event>,
    ) -> (Feed, Notifier) {
        #[cfg(unix)]
        {
            if let Ok((mut direct, waker)) = platform::Direct::new(LineSplitter::new(norm.clone()))
            {
                let waker = Arc::new(waker);
                // The feed keeps the pipe's write end open itself: when the senders are
                // gone, the read end must not report end-of-file on every poll.
                direct.keep(waker.clone());
                let notifier = Notifier {
                    tx,
                    waker: Some(waker),
                };
                return (
                    Feed {
                        rx,
                        direct: Some(direct),
                    },
                    notifier,
                );
            }
        }
        Feed::threaded(io::stdin(), norm, tx, rx)
    }

    /// Waits at most `timeout` (for ever with `None`) for events and appends what is
    /// ready to `out`. False when no event can ever come again. `input_only`: the
    /// server expects nothing but client input (the index is complete, no live server,
    /// no timer), so stdin can be read without polling first.
    pub(super) fn wait(
        &mut self,
        timeout: Option<Duration>,
        input_only: bool,
        out: &mut Vec<Event>,
    ) -> bool {
        #[cfg(unix)]
        if let Some(d) = self.direct.as_mut() {
            return d.wait(&self.rx, timeout, input_only, out);
        }
        let _ = input_only;
        let first = match timeout {
            Some(t) => match self.rx.recv_timeout(t) {
                Ok(ev) => Some(ev),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return false,
            },
            None => match self.rx.recv() {
                Ok(ev) => Some(ev),
                Err(_) => return false,
            },
        };
        out.extend(first);
        drain(&self.rx, out);
        true
    }
}

fn drain(rx: &Receiver<Event>, out: &mut Vec<Event>) -> bool {
    for _ in 0..BATCH {
        match rx.try_recv() {
            Ok(ev) => out.push(ev),
            Err(TryRecvError::Empty) => return true,
            Err(TryRecvError::Disconnected) => return false,
        }
    }
    true
}

fn spawn_reader(mut input: impl Read + Send + 'static, tx: Sender<Event>, norm: Normalizer) {
    thread::Builder::new()
        .name("reel-play-stdin".into())
        .spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            let mut split = LineSplitter::new(norm);
            loop {
                let n = match input.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                let mut lines = Vec::new();
                split.feed(&buf[..n], &mut lines);
                if !lines.is_empty() && tx.send(Event::Input(lines)).is_err() {
                    return;
                }
            }
            if let Some(last) = split.finish() {
                let _ = tx.send(Event::Input(vec![last]));
            }
            let _ = tx.send(Event::InputEnd);
        })
        .ok();
}

#[cfg(not(unix))]
mod platform {
    /// No self-pipe off Unix: the reader thread sends over the channel, which wakes.
    pub(crate) struct Waker;

    impl Waker {
        pub(crate) fn wake(&self) {}
    }
}

#[cfg(unix)]
mod platform {
    //! `poll(2)` on stdin and a self-pipe.

    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
    use std::sync::mpsc::Receiver;
    use std::time::Duration;

    use crate::play::feed::{LineSplitter, drain};
    use crate::play::input::Event;

    /// The write end of the self-pipe.
    pub(crate) struct Waker(OwnedFd);

    impl Waker {
        pub(crate) fn wake(&self) {
            // A full pipe already holds a wake-up; nothing else can fail usefully here.
            // SAFETY: a valid, open, non-blocking descriptor and a one-byte buffer.
            let _ = unsafe { libc::write(self.0.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
        }
    }

    /// Stdin read on the server thread.
    pub(crate) struct Direct {
        wake: OwnedFd,
        _keep: Option<std::sync::Arc<Waker>>,
        split: LineSplitter,
        eof: bool,
        buf: Vec<u8>,
    }

    const STDIN: RawFd = 0;

    impl Direct {
        pub(crate) fn new(split: LineSplitter) -> std::io::Result<(Direct, Waker)> {
            let mut fds = [0 as libc::c_int; 2];
            // SAFETY: `fds` has room for the two descriptors pipe writes.
            if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: pipe just returned these two open descriptors; each is owned once.
            let (rd, wr) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
            for fd in [rd.as_raw_fd(), wr.as_raw_fd()] {
                // SAFETY: fcntl on descriptors we own; non-blocking so a full pipe never
                // blocks a sender, close-on-exec so the live server does not inherit them.
                unsafe {
                    let fl = libc::fcntl(fd, libc::F_GETFL);
                    libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
                    libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
                }
            }
            Ok((
                Direct {
                    wake: rd,
                    _keep: None,
                    split,
                    eof: false,
                    buf: vec![0u8; 1 << 16],
                },
                Waker(wr),
            ))
        }

        pub(crate) fn keep(&mut self, waker: std::sync::Arc<Waker>) {
            self._keep = Some(waker);
        }

        pub(crate) fn wait(
            &mut self,
            rx: &Receiver<Event>,
            timeout: Option<Duration>,
            input_only: bool,
            out: &mut Vec<Event>,
        ) -> bool {
            let deadline = timeout.map(|t| std::time::Instant::now() + t);
            loop {
                drain(rx, out);
                if !out.is_empty() {
                    return true;
                }
                if input_only && timeout.is_none() && !self.eof {
                    // Nothing but the client can wake us: one blocking read instead of
                    // poll + read (half the system calls per request).
                    self.read_stdin(out);
                    if out.is_empty() {
                        continue;
                    }
                    return true;
                }
                let mut fds = [
                    libc::pollfd {
                        fd: self.wake.as_raw_fd(),
                        events: libc::POLLIN,
                        revents: 0,
                    },
                    libc::pollfd {
                        fd: if self.eof { -1 } else { STDIN },
                        events: libc::POLLIN,
                        revents: 0,
                    },
                ];
                let ms = match deadline {
                    None => -1,
                    Some(d) => {
                        let left = d.saturating_duration_since(std::time::Instant::now());
                        // Round up, so a wait shorter than a millisecond still sleeps.
                        left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32
                    }
                };
                // SAFETY: two valid pollfd entries (a negative fd is ignored by poll).
                let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, ms) };
                if n < 0 {
                    if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                        continue;
                    }
                    return false;
                }
                let expired = deadline.is_some_and(|d| std::time::Instant::now() >= d);
                if n == 0 || (expired && fds[1].revents == 0) {
                    drain(rx, out);
                    return true;
                }
                if fds[0].revents != 0 {
                    let mut sink = [0u8; 64];
                    // SAFETY: reading into a local buffer from our own non-blocking pipe.
                    while unsafe {
                        libc::read(self.wake.as_raw_fd(), sink.as_mut_ptr().cast(), sink.len())
                    } > 0
                    {}
                }
                if fds[1].revents != 0 {
                    self.read_stdin(out);
                }
            }
        }

        fn read_stdin(&mut self, out: &mut Vec<Event>) {
            // SAFETY: reading into our own buffer from fd 0, which poll said is ready.
            let n = unsafe { libc::read(STDIN, self.buf.as_mut_ptr().cast(), self.buf.len()) };
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                return;
            }
            if n <= 0 {
                self.eof = true;
                if let Some(last) = self.split.finish() {
                    out.push(Event::Input(vec![last]));
                }
                out.push(Event::InputEnd);
                return;
            }
            let mut lines = Vec::new();
            self.split.feed(&self.buf[..n as usize], &mut lines);
            if !lines.is_empty() {
                out.push(Event::Input(lines));
            }
        }
    }
}
