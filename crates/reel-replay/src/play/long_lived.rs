//! Long-lived requests on replay (2026-07-28 `subscriptions/listen`): the request stays
//! open, and what the recorded server sent on it goes out in its recorded place.
//!
//! - A message on the stream (the acknowledgement, a `list_changed` stamped with the
//!   subscription id) goes out once the client has sent the last request recorded
//!   before it: a notification a tool call caused comes after that call, not when the
//!   stream opens.
//! - Its answer (a subscription ended, or the server's "connection closed" at shutdown)
//!   goes out once the client has sent the first request recorded after it; an answer
//!   recorded after the client's last request is never sent early: the request stays
//!   open until the client ends, as it did live.
//! - An answer never recorded (the recording ended with the stream open) is no miss:
//!   the request stays open, and the summary counts it as kept open.
//!
//! - What the tape sends on a stream is stamped with the live request's id
//!   (`_meta["io.modelcontextprotocol/subscriptionId"]`, and a server's
//!   `notifications/cancelled` ending it), not the recorded one: a client numbers its
//!   requests its own way.
//!
//! The job machinery (`play/jobs.rs`) asks [`Server::not_yet_placed`] before each step
//! of a job, and [`Server::advance_long_lived`] moves the waiting ones on after each
//! batch of events.

use std::io::Write;

use reel_mcp::jsonrpc::methods;

use super::job::{Job, JobState, Next};
use super::out::ClientOut;
use super::server::Server;
use crate::splice;

impl<C: ClientOut, D: Write> Server<C, D> {
    /// Whether `next`, the next step of the long-lived `job`, must wait for the client
    /// to reach its recorded place (false for every other job).
    pub(super) fn not_yet_placed(&self, job: &Job, next: &Next) -> bool {
        let e = self.src.tape.exchange(job.ex);
        if !methods::is_long_lived(self.src.tape.method_name(e.method)) {
            return false;
        }
        let reached = |seq: u64| self.calls.hw.is_some_and(|h| h >= seq);
        match next {
            Next::Item(item) => self
                .last_request_before(item.seq)
                .is_some_and(|anchor| !reached(anchor)),
            Next::Response(r) => match self.first_request_after(r.seq) {
                Some(anchor) => !reached(anchor),
                None => true,
            },
            // Never answered on the tape: open to the end, as recorded.
            Next::Unanswerable => true,
            _ => false,
        }
    }

    /// A long-lived request of exchange `ex` was taken by the live request `live_id`:
    /// what the tape stamped with the recorded id goes out with the live one.
    pub(super) fn remember_subscription(&mut self, ex: u32, live_id: &str) {
        let e = self.src.tape.exchange(ex);
        if !methods::is_long_lived(self.src.tape.method_name(e.method)) {
            return;
        }
        let recorded = self
            .with_raw(e.request.at, |raw| {
                Some(splice::Members::parse(raw)?.get("id")?.trim().to_owned())
            })
            .flatten();
        if let Some(recorded) = recorded {
            self.calls
                .subscriptions
                .insert(recorded, live_id.to_owned());
        }
    }

    /// `text` (a recorded notification) with a recorded subscription's id restamped.
    pub(super) fn restamp_subscription(&self, text: String) -> String {
        let subs = &self.calls.subscriptions;
        if subs.is_empty() {
            return text;
        }
        splice::with_subscription_id(&text, subs)
            .or_else(|| splice::with_fresh_request_id(&text, subs))
            .unwrap_or(text)
    }

    /// Moves on the long-lived jobs waiting for a place the client may now have reached.
    pub(super) fn advance_long_lived(&mut self) {
        let waiting: Vec<u64> = self
            .calls
            .jobs
            .iter()
            .filter(|(_, j)| j.state == JobState::WaitPosition)
            .map(|(&id, _)| id)
            .collect();
        for id in waiting {
            self.advance(id);
        }
    }

    /// The recorded position of the last client request before `seq` (exchanges are
    /// indexed in recorded order, so their request positions are sorted).
    fn last_request_before(&self, seq: u64) -> Option<u64> {
        let all = self.src.tape.exchanges();
        let i = all.partition_point(|e| e.request.seq < seq);
        i.checked_sub(1).map(|i| all[i].request.seq)
    }

    /// The recorded position of the first client request after `seq`.
    fn first_request_after(&self, seq: u64) -> Option<u64> {
        let all = self.src.tape.exchanges();
        let i = all.partition_point(|e| e.request.seq <= seq);
        all.get(i).map(|e| e.request.seq)
    }
}
