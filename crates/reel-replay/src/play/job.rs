//! A job's state: a live request being answered from its recorded exchange
//! ([`Job`]), what it waits for ([`JobState`]) and what it does next ([`Next`]); and a
//! server→client request the tape sent ([`ServerRequest`]). `jobs` drives them.

use std::time::Instant;

use reel_mcp::jsonrpc::RpcId;

use crate::tape::Item;
use crate::tape::matcher::Recorded;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum JobState {
    Running,
    Timer,
    WaitAnswer,
    WaitIndex,
    Held,
    /// A long-lived request waiting for the client to reach the recorded place of its
    /// next message (see `play/long_lived.rs`).
    WaitPosition,
}

/// A live request being answered from its recorded exchange.
pub(super) struct Job {
    pub(super) ex: u32,
    pub(super) live_id: RpcId,
    pub(super) id_raw: String,
    pub(super) token_raw: Option<String>,
    pub(super) step: usize,
    /// Fresh ids of server requests sent, with the position of the recorded answer.
    pub(super) awaiting: Vec<(RpcId, u64)>,
    pub(super) started: Instant,
    pub(super) negotiate: Option<String>,
    pub(super) state: JobState,
    /// Where its messages go ([`Route::Reply`]).
    pub(super) route: u64,
    /// Recorded messages of its exchange went to the client: the answer is delivered
    /// apart from them ([`ClientOut::deliver_apart`]).
    pub(super) sent_before_answer: bool,
}

pub(super) struct ServerRequest {
    pub(super) ex: u32,
    pub(super) job: Option<u64>,
    /// The client cancelled the call it was sent within: no answer is expected.
    pub(super) excused: bool,
}

pub(super) enum Next {
    Item(Item),
    Response(Recorded),
    Held,
    WaitIndex,
    Unanswerable,
}
