//! Where the tape server's messages go. Over stdio everything goes to one place
//! ([`LineOut`]: a line each); over HTTP ([`crate::http`]) each message has a [`Dest`]
//! that says which response or stream takes it, and how the recording framed it.

use std::io::{self, BufWriter, Write};

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

    /// An event of an event stream that carries no message (a recorded priming event);
    /// nothing over stdio.
    fn raw_event(&mut self, dest: Dest, event: &reel_mcp::sse::Event) -> io::Result<()> {
        let _ = (dest, event);
        Ok(())
    }
}

/// Stdout (or any writer): one message per line.
pub(crate) struct LineOut<W: Write>(pub(crate) BufWriter<W>);

impl<W: Write> ClientOut for LineOut<W> {
    fn message(&mut self, _dest: Dest, parts: &[&[u8]]) -> io::Result<()> {
        for p in parts {
            self.0.write_all(p)?;
        }
        self.0.write_all(b"\n")
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}
