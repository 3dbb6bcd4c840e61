//! Where the tape server's messages go. Over stdio everything goes to one place
//! ([`LineOut`]: a line each); over HTTP (`http`) each message has a [`Dest`]
//! that says which response or stream takes it, and how the recording framed it.
//!
//! Delivery: what is ready is written in as few writes as possible, except where the
//! live server's messages reached the client apart and a client can tell. Before an
//! answer that recorded server messages of its exchange preceded (progress, logging),
//! the tape server calls [`ClientOut::deliver_apart`]: those messages go out first and,
//! over stdio on Linux, the answer waits (at most [`DELIVERY_WAIT`]) until the client
//! has read them. Clients handle a read's messages in one go and may drop a call's
//! progress handler on its answer before running the notifications that came with it
//! (the TypeScript SDK does): in one read with the answer, progress would be lost.

use std::io::{self, BufWriter, Write};
use std::time::{Duration, Instant};

use crate::tape::Via;

/// Where a message to the client goes. Over stdio everything goes to stdout; over HTTP
/// a message belongs to the response of the request it answers or came within, or, when
/// it belongs to no request, to the session's server stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    /// The response to the live input of this route number.
    Reply(u64),
    /// The session's standalone server stream (HTTP GET).
    Stream,
    /// The stream a client opens to resume one the server closed (HTTP GET with
    /// `Last-Event-ID`): where a recorded answer that came after such a close goes.
    Resume,
}

/// How one message reaches the client.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dest {
    pub(crate) route: Route,
    /// The request's answer: nothing more goes to this route after it.
    pub(crate) last: bool,
    /// How the recorded message travelled: its HTTP status, JSON or event stream.
    pub(crate) via: Via,
}

impl Dest {
    /// The answer to the input of route `route`, made by reel (no recorded facts).
    pub(crate) fn answer(route: u64) -> Dest {
        Dest {
            route: Route::Reply(route),
            last: true,
            via: Via::default(),
        }
    }

    /// An answer refusing input that is no request (HTTP 400).
    pub(crate) fn refusal(route: u64) -> Dest {
        Dest {
            via: Via {
                status: 400,
                ..Via::default()
            },
            ..Dest::answer(route)
        }
    }
}

/// The client's side of the server: where messages are written.
pub(crate) trait ClientOut {
    /// Writes one message: `parts`, joined, are its JSON text.
    fn message(&mut self, dest: Dest, parts: &[&[u8]]) -> io::Result<()>;
    /// Makes what was written go out.
    fn flush(&mut self) -> io::Result<()>;
    /// Nothing more goes to `route` (its request was cancelled or is left unanswered).
    fn close(&mut self, route: Route) {
        let _ = route;
    }

    /// The answer to `route` will not come (the recorded client left first): the
    /// response starts as recorded (an event stream) and stays open; nothing over stdio.
    fn hold(&mut self, route: Route, via: Via) {
        let _ = (route, via);
    }

    /// Makes what was written to `route` so far reach the client on its own, before
    /// anything more is written there: flushed and, where the platform tells, read by
    /// the client (waiting at most [`DELIVERY_WAIT`]).
    fn deliver_apart(&mut self, route: Route) -> io::Result<()> {
        let _ = route;
        self.flush()
    }

    /// An event of an event stream that carries no message (a recorded priming event);
    /// nothing over stdio.
    fn raw_event(&mut self, dest: Dest, event: &reel_net::sse::Event) -> io::Result<()> {
        let _ = (dest, event);
        Ok(())
    }
}

/// The longest a message waits for the client to read what was delivered apart before
/// it: a client that reads nothing for that long (busy, or reading only at the end)
/// gets the rest in the same read, as it would from a live server.
pub const DELIVERY_WAIT: Duration = Duration::from_millis(50);

/// Stdout (or any writer): one message per line.
pub(crate) struct LineOut<W: Write> {
    w: BufWriter<W>,
    /// How many written bytes the client has not read yet, when the platform tells.
    unread: Option<platform::Unread>,
}

impl<W: Write> LineOut<W> {
    /// Lines to `w`; `watch_stdout`: `w` is this process's stdout, whose unread bytes
    /// [`ClientOut::deliver_apart`] waits for.
    pub(crate) fn new(w: W, watch_stdout: bool) -> LineOut<W> {
        LineOut {
            w: BufWriter::with_capacity(1 << 16, w),
            unread: watch_stdout.then(platform::Unread::stdout).flatten(),
        }
    }
}

impl<W: Write> ClientOut for LineOut<W> {
    fn message(&mut self, _dest: Dest, parts: &[&[u8]]) -> io::Result<()> {
        for p in parts {
            self.w.write_all(p)?;
        }
        self.w.write_all(b"\n")
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    fn deliver_apart(&mut self, _route: Route) -> io::Result<()> {
        self.w.flush()?;
        if let Some(u) = &self.unread {
            wait_until_read(u, DELIVERY_WAIT);
        }
        Ok(())
    }
}

/// Waits until the client has read everything written, or `limit` passed: a few
/// yields first (a waiting client reads within microseconds), then short sleeps.
fn wait_until_read(u: &platform::Unread, limit: Duration) {
    let start = Instant::now();
    let mut pause = Duration::from_micros(20);
    for round in 0u32.. {
        match u.bytes() {
            Some(0) | None => return,
            Some(_) => {}
        }
        let spent = start.elapsed();
        if spent >= limit {
            return;
        }
        if round < 16 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(pause.min(limit - spent));
            pause = (pause * 2).min(Duration::from_millis(1));
        }
    }
}

#[cfg(target_os = "linux")]
mod platform {
    //! Linux tells how much of what a process wrote to a pipe (`FIONREAD`, on either
    //! end) or a socket (`SIOCOUTQ`: bytes the peer has not taken yet; Node and libuv
    //! give their child processes socket pairs as stdio) is still unread.

    use std::os::fd::RawFd;

    pub(crate) struct Unread {
        fd: RawFd,
        request: libc::Ioctl,
    }

    const STDOUT: RawFd = 1;

    impl Unread {
        /// Stdout when it is a pipe or a socket; `None` for a file or terminal (nothing
        /// to wait for) or when it cannot be told.
        pub(crate) fn stdout() -> Option<Unread> {
            Unread::of(STDOUT)
        }

        /// The written end `fd` of a pipe or socket (kept open by its owner).
        pub(crate) fn of(fd: RawFd) -> Option<Unread> {
            // SAFETY: all-zero bytes are a valid `stat`, which fstat fills for an fd
            // number; a closed one makes it fail.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            if unsafe { libc::fstat(fd, &mut st) } != 0 {
                return None;
            }
            let request = match st.st_mode & libc::S_IFMT {
                libc::S_IFIFO => libc::FIONREAD,
                // SIOCOUTQ has TIOCOUTQ's number.
                libc::S_IFSOCK => libc::TIOCOUTQ,
                _ => return None,
            };
            let u = Unread { fd, request };
            u.bytes().map(|_| u)
        }

        /// Bytes written and not yet read by the client; `None` when the kernel does
        /// not say.
        pub(crate) fn bytes(&self) -> Option<usize> {
            let mut n: libc::c_int = 0;
            // SAFETY: both requests write one int through the pointer given.
            let r = unsafe { libc::ioctl(self.fd, self.request, &mut n) };
            (r == 0).then(|| usize::try_from(n).unwrap_or(0))
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod platform {
    //! Elsewhere the unread bytes of a pipe's write end are not known: messages
    //! delivered apart are written apart, without waiting for the client to read them.

    pub(crate) struct Unread;

    impl Unread {
        pub(crate) fn stdout() -> Option<Unread> {
            None
        }

        pub(crate) fn bytes(&self) -> Option<usize> {
            None
        }
    }
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    use super::*;

    fn write(fd: &OwnedFd, b: &[u8]) {
        // SAFETY: writing from a live buffer to a descriptor the test owns.
        let n = unsafe { libc::write(fd.as_raw_fd(), b.as_ptr().cast(), b.len()) };
        assert_eq!(n, b.len() as isize);
    }

    fn read(fd: &OwnedFd, n: usize) {
        let mut buf = vec![0u8; n];
        // SAFETY: reading into a live buffer of that size from a descriptor we own.
        let got = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), n) };
        assert_eq!(got, n as isize);
    }

    fn pair(socket: bool) -> (OwnedFd, OwnedFd) {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` has room for the two descriptors either call writes.
        let r = unsafe {
            if socket {
                libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr())
            } else {
                libc::pipe(fds.as_mut_ptr())
            }
        };
        assert_eq!(r, 0);
        // SAFETY: just created, each owned once. A pipe reads on fds[0]; a socket
        // pair either way.
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
    }

    /// What was written and not read is seen from the writing end, of a pipe (Python's
    /// subprocess) and of a socket pair (Node's child_process): the wait ends when the
    /// reader took it.
    #[test]
    fn unread_bytes_of_pipes_and_socket_pairs() {
        for socket in [false, true] {
            let (rd, wr) = pair(socket);
            let u = platform::Unread::of(wr.as_raw_fd()).expect("a pipe or socket");
            assert_eq!(u.bytes(), Some(0), "socket: {socket}");
            write(&wr, b"{\"jsonrpc\":\"2.0\"}\n");
            assert!(u.bytes().is_some_and(|n| n > 0), "socket: {socket}");
            read(&rd, 18);
            assert_eq!(u.bytes(), Some(0), "socket: {socket}");
            wait_until_read(&u, DELIVERY_WAIT);
        }
    }

    /// A reader that does not read: the wait gives up (the limit is what ends it).
    #[test]
    fn the_wait_for_a_reader_that_does_not_read_ends() {
        let (_rd, wr) = pair(false);
        let u = platform::Unread::of(wr.as_raw_fd()).expect("a pipe");
        write(&wr, b"x\n");
        wait_until_read(&u, Duration::from_millis(5));
        assert_eq!(u.bytes(), Some(2));
    }

    /// A file is nothing to wait for.
    #[test]
    fn files_have_no_reader_to_wait_for() {
        let f = tempfile::tempfile().unwrap();
        assert!(platform::Unread::of(f.as_raw_fd()).is_none());
    }
}
