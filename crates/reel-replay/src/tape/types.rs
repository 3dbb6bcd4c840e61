//! What the index says about a tape: where a line is ([`LineLoc`], [`IdSplice`]), how a
//! message travelled ([`Via`], [`HttpFact`]), and the [`Update`]s it hands the server,
//! in trace order. Plain data: the indexer makes them, the matcher and the server read
//! them.

use reel_mcp::normalize::{MatchKey, Pointer};
use reel_net::sse::Eol;
use reel_trace::Dir;
use reel_trace::line::Meta;

/// Where a line is in the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineLoc {
    /// Index of the file in [`super::TapeFiles`] (rotated companions first).
    pub file: u32,
    /// Length in bytes, without the line break.
    pub len: u32,
    /// Byte offset of the line's first byte.
    pub offset: u64,
    /// 1-based line number in its file.
    pub line: u64,
}

/// Where the `raw` of a response line and the `id` inside it are, so that an answer is
/// the recorded bytes around a new id: read the span, copy, no parsing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdSplice {
    /// Byte offset of `raw` in its line.
    pub raw_start: u32,
    /// Length of `raw`.
    pub raw_len: u32,
    /// Byte offset of the `id` value in `raw`.
    pub id_start: u32,
    /// Length of the `id` value.
    pub id_len: u32,
    /// The response is an `error`.
    pub error: bool,
}

/// The HTTP facts of a recorded message that serving it over HTTP needs: how the
/// exchange that carried it was answered. All zero for a line recorded over stdio.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Via {
    /// `http.req`: the recording's number of the HTTP exchange (0: none recorded).
    pub req: u32,
    /// The HTTP status of the response that carried it (0: not recorded).
    pub status: u16,
    /// It came as an event of an event stream (`text/event-stream`).
    pub sse: bool,
    /// The line ending of that stream's events.
    pub eol: Eol,
    /// That response issued an `Mcp-Session-Id`.
    pub session_id: bool,
    /// Not a JSON-RPC message: a `reel.http` record of an error status whose body was
    /// something else; its `raw` or `text` is the body to send.
    pub status_only: bool,
    /// A response that came on another stream than its request's (the server closed
    /// the request's event stream mid-call and the client resumed on GET).
    pub other_stream: bool,
}

/// What the recording shows of a session's HTTP exchanges that carried no message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HttpFact {
    /// A GET on the MCP endpoint was answered with this status (200: a server stream,
    /// 405: none).
    Get {
        /// The status.
        status: u16,
    },
    /// A DELETE (the client ended its session) was answered with this status.
    Delete {
        /// The status.
        status: u16,
    },
    /// The session is legacy HTTP+SSE: the server's first event named this endpoint
    /// path (without its query) for the client's POSTs.
    Endpoint {
        /// The path, e.g. `/message`.
        path: String,
    },
}

/// A recorded message that is not a response: a notification or a request of the other
/// side, re-sent at its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Item {
    /// Where it is.
    pub at: LineLoc,
    /// Its position among the session's messages.
    pub seq: u64,
    /// Recorded time, milliseconds since the epoch (0 when the line has none).
    pub t: i64,
    /// What it is.
    pub kind: ItemKind,
    /// How it travelled (HTTP recordings).
    pub via: Via,
}

/// What an [`Item`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemKind {
    /// A server notification; `progress` when it is `notifications/progress`.
    Notification {
        /// True for `notifications/progress` (its token is rewritten).
        progress: bool,
    },
    /// A server→client request, itself exchange `exchange`.
    Request {
        /// Its exchange number.
        exchange: u32,
    },
    /// An event of the request's event stream that carried no message (a priming
    /// event: an `id` and no data, a lone `retry`), a `reel.sse` record.
    Event,
}

/// A request as indexed.
#[derive(Clone, Debug, PartialEq)]
pub struct Opened {
    /// Exchange number (0, 1, 2… in trace order).
    pub exchange: u32,
    /// Direction of the request: `In` for the client's, `Out` for the server's.
    pub dir: Dir,
    /// The method.
    pub method: String,
    /// Match key of the normalised request (client requests only).
    pub key: Option<MatchKey>,
    /// Match key without `params.inputResponses` (2026-07-28 retries only), so that a
    /// retry whose answers differ is found as client drift instead of a miss.
    pub alt_key: Option<MatchKey>,
    /// Where the request is.
    pub at: LineLoc,
    /// Its position among the session's messages.
    pub seq: u64,
    /// Recorded time (ms).
    pub t: i64,
    /// The client exchange this server request came within.
    pub parent: Option<u32>,
}

/// How the index ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexEnd {
    /// Lines read in all files.
    pub lines: u64,
    /// Message lines of the selected session.
    pub messages: u64,
    /// Sessions found.
    pub sessions: usize,
    /// True when the selected session was found.
    pub found: bool,
    /// True when an `end` line closed the selected session's segment.
    pub ended: bool,
    /// True when the last line was torn (cut mid-write).
    pub torn: bool,
    /// A read error that stopped the index early.
    pub error: Option<String>,
}

/// What the index learnt, in trace order.
#[derive(Clone, Debug, PartialEq)]
pub enum Update {
    /// The meta line of the selected session's segment (sent before its first message;
    /// a default one when the segment has none).
    Meta(Box<Meta>),
    /// A request.
    Opened(Opened),
    /// The response of an exchange.
    Closed {
        /// Exchange number.
        exchange: u32,
        /// Where the response is.
        at: LineLoc,
        /// Its position among the session's messages.
        seq: u64,
        /// Recorded time (ms).
        t: i64,
        /// Where its raw and id are, when the line was read the common way.
        splice: Option<IdSplice>,
        /// How it travelled (HTTP recordings).
        via: Via,
    },
    /// A server message that came while a client exchange was open.
    Attached {
        /// The client exchange.
        exchange: u32,
        /// The message.
        item: Item,
    },
    /// A `notifications/cancelled` from the client named this exchange.
    Cancelled {
        /// Exchange number.
        exchange: u32,
    },
    /// A client notification (e.g. `notifications/initialized`), for its position.
    ClientNotification {
        /// Its position among the session's messages.
        seq: u64,
        /// Match key of the normalised notification.
        key: MatchKey,
    },
    /// A server message outside any client exchange (list_changed, logging, a server
    /// request on a timer), re-sent once the client has come as far as `anchor`.
    Unsolicited {
        /// Position of the last client message before it (`None`: before any).
        anchor: Option<u64>,
        /// The message.
        item: Item,
    },
    /// A fact of the session's HTTP exchanges.
    Http(HttpFact),
    /// A line that could not be used.
    Warning(String),
    /// The whole tape is indexed.
    Done(IndexEnd),
}

/// Which sessions make which tapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    /// One tape (tape 0): the N-th session (1-based) together with every session-less
    /// line (`reel:conn-N`), so that a client which probes `server/discover` before it
    /// opens its session finds both answers, as it did live. A trace without sessions
    /// (stdio) has one session.
    One(usize),
    /// Every session its own tape: tape 0 pools the session-less lines, tapes 1, 2, …
    /// are the sessions in order of first appearance (`reel play --listen`).
    All,
}

/// What to index.
#[derive(Clone, Debug)]
pub struct IndexSpec {
    /// Which sessions.
    pub selection: Selection,
    /// The user's `--ignore` pointers (the recorded side is normalised like the live one).
    pub ignore: Vec<Pointer>,
}

impl IndexSpec {
    /// The N-th session (1-based) for one tape, see [`Selection::One`].
    pub fn session(n: usize, ignore: Vec<Pointer>) -> IndexSpec {
        IndexSpec {
            selection: Selection::One(n),
            ignore,
        }
    }
}

/// The tag of updates about the whole trace rather than one tape ([`super::index_tapes`]: the
/// warnings and the last [`Update::Done`]).
pub const WHOLE: u32 = u32::MAX;
