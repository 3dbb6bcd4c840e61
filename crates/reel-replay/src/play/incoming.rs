//! Lines from the client: requests (parsed once into an [`Incoming`]), notifications
//! (cancellation first), answers to the tape's server→client requests (compared with the
//! recorded ones: client drift), what is not JSON-RPC at all, and, with `--subset`, the
//! traffic to and from the live server.

use std::collections::VecDeque;
use std::io::Write;

use reel_mcp::jsonrpc::{Envelope, RpcId, RpcKind, methods};
use reel_mcp::normalize::{MatchKey, diff};

use super::input::{Content, Incoming, InputLine, MAX_LINE, Parsed};
use super::job::JobState;
use super::out::{ClientOut, Dest, Route};
use super::report;
use super::server::Server;

impl<C: ClientOut, D: Write> Server<C, D> {
    // ---- input -------------------------------------------------------------------

    pub(super) fn input_line(&mut self, l: InputLine) {
        let route = l.route;
        let (text, parsed) = match l.content {
            Content::Oversized => {
                self.summary.invalid += 1;
                self.say(&format!(
                    "reel play: input line longer than {MAX_LINE} bytes dropped"
                ));
                let e = serde_json::json!({"code": report::INVALID_REQUEST_CODE, "message": "reel play: line too long"});
                return self.send_error(Dest::refusal(route), "null", &e);
            }
            Content::NotUtf8(bytes) => {
                if let Some(r) = self.recorder.as_mut() {
                    r.nonjson(&bytes);
                }
                return self.not_json(route, None, "not UTF-8");
            }
            Content::Text(text, parsed) => (text, parsed),
        };
        match parsed {
            Parsed::NotJson(why) => return self.not_json(route, Some(&text), &why),
            Parsed::NotObject { batch } => return self.not_an_envelope(route, &text, batch),
            _ => {}
        }
        if let Some(r) = self.recorder.as_mut() {
            r.in_line(&text, l.crlf);
        }
        match parsed {
            Parsed::Request(mut inc) => {
                inc.line = text;
                inc.route = route;
                self.request(*inc);
            }
            Parsed::Notification {
                method,
                cancelled,
                key,
            } => self.notification(&text, &method, cancelled, key),
            Parsed::Answer { id } => self.client_answer(&text, id),
            Parsed::Invalid { id_raw } => {
                self.summary.invalid += 1;
                self.say(&format!(
                    "reel play: not a JSON-RPC request, notification or response: {}",
                    report::short(&text)
                ));
                let e = serde_json::json!({"code": report::INVALID_REQUEST_CODE, "message": "Invalid Request"});
                self.send_error(Dest::refusal(route), &id_raw, &e);
            }
            Parsed::NotJson(_) | Parsed::NotObject { .. } => {}
        }
    }

    pub(super) fn not_an_envelope(&mut self, route: u64, text: &str, batch: bool) {
        if let Some(r) = self.recorder.as_mut() {
            r.in_line(text, false);
        }
        self.summary.invalid += 1;
        let what = if batch {
            "a JSON-RPC batch (not supported by MCP over stdio since 2025-06-18; real servers ignore them)"
        } else {
            "JSON that is not a JSON-RPC object"
        };
        self.say(&format!(
            "reel play: invalid request, {what}: {}",
            report::short(text)
        ));
        let e =
            serde_json::json!({"code": report::INVALID_REQUEST_CODE, "message": "Invalid Request"});
        self.send_error(Dest::refusal(route), "null", &e);
    }

    pub(super) fn not_json(&mut self, route: u64, text: Option<&str>, why: &str) {
        self.summary.invalid += 1;
        if let (Some(r), Some(t)) = (self.recorder.as_mut(), text) {
            r.nonjson(t.as_bytes());
        }
        self.say(&format!(
            "reel play: input line is not JSON ({why}); answered with a parse error: {}",
            report::short(text.unwrap_or("(not UTF-8)"))
        ));
        let e = serde_json::json!({"code": report::PARSE_ERROR_CODE, "message": "Parse error"});
        self.send_error(Dest::refusal(route), "null", &e);
    }

    pub(super) fn input_end(&mut self) {
        self.drain_backlog();
        self.client.input_closed = true;
        if let Some(l) = self.live.server.as_mut() {
            l.close_input();
        }
        self.drain_after_input();
    }

    /// After the client closed its input: answer what can still be answered without it.
    pub(super) fn drain_after_input(&mut self) {
        if !self.src.tape.complete() {
            return;
        }
        self.retry_parked();
        let ids: Vec<u64> = self.calls.jobs.keys().copied().collect();
        for id in ids {
            self.advance(id);
        }
    }

    // ---- notifications and answers from the client ---------------------------------

    pub(super) fn notification(
        &mut self,
        text: &str,
        method: &str,
        cancelled: Option<RpcId>,
        key: MatchKey,
    ) {
        if method == methods::CANCELLED {
            if let Some(rid) = &cancelled {
                if let Some(id) = self.calls.by_live_id.remove(rid) {
                    if let Some(job) = self.calls.jobs.remove(&id) {
                        self.client.out.close(Route::Reply(job.route));
                    }
                    self.excuse_server_requests(id);
                    self.summary.cancelled += 1;
                    return;
                }
                if self.cancel_parked(|p| &p.id == rid) {
                    return;
                }
            }
        }
        if self.opts.subset.is_some() {
            // A cancelled live call gets no answer, not even the error for a live server
            // that ended.
            if let Some(rid) = &cancelled {
                self.live.forwarded.remove(rid);
            }
            return self.forward(text.as_bytes());
        }
        if let Some(seq) = self.src.tape.match_notification(key) {
            self.reach(seq);
        }
    }

    /// Drops the parked requests `which` selects (their client cancelled them); true
    /// when there was one.
    fn cancel_parked(&mut self, which: impl Fn(&Incoming) -> bool) -> bool {
        let (gone, kept): (VecDeque<Incoming>, VecDeque<Incoming>) =
            std::mem::take(&mut self.calls.parked)
                .into_iter()
                .partition(|p| which(p));
        self.calls.parked = kept;
        for p in &gone {
            self.client.out.close(Route::Reply(p.route));
        }
        self.summary.cancelled += gone.len() as u64;
        !gone.is_empty()
    }

    /// The client stopped waiting for the answer on `route` (it closed the HTTP
    /// response): like `notifications/cancelled`, nothing more of that exchange is sent.
    pub(super) fn route_gone(&mut self, route: u64) {
        let jobs: Vec<u64> = self
            .calls
            .jobs
            .iter()
            .filter(|(_, j)| j.route == route)
            .map(|(&id, _)| id)
            .collect();
        for id in jobs {
            if let Some(job) = self.calls.jobs.remove(&id) {
                if self.calls.by_live_id.get(&job.live_id) == Some(&id) {
                    self.calls.by_live_id.remove(&job.live_id);
                }
                self.summary.cancelled += 1;
            }
            self.excuse_server_requests(id);
        }
        self.cancel_parked(|p| p.route == route);
    }

    pub(super) fn client_answer(&mut self, text: &str, id: Option<RpcId>) {
        let Some(sr) = id.as_ref().and_then(|i| self.asks.open.remove(i)) else {
            if self.opts.subset.is_some() {
                return self.forward(text.as_bytes());
            }
            self.say(&format!(
                "reel play: the client answered a request the tape never sent (id {}); ignored",
                id.map_or_else(|| "null".into(), |i| i.to_json())
            ));
            return;
        };
        let e = self.src.tape.exchange(sr.ex);
        let method = self.src.tape.method_name(e.method).to_owned();
        let request_place = self.src.files.location(e.request.at);
        match e.response {
            Some(r) => {
                self.reach(r.seq);
                let norm = self.norm.clone();
                let rec = self.with_raw(r.at, |raw| norm.normalize_recorded(raw));
                if let (Some(Ok(rec)), Ok(live)) = (rec, self.norm.normalize_live(text)) {
                    let d = diff(&rec, &live);
                    if !d.is_empty() {
                        let place = self.src.files.location(r.at);
                        self.drift(&format!("the client's answer to {method}"), &place, &d);
                    }
                }
            }
            None => {
                self.summary.client_drift += 1;
                self.say(&format!(
                    "reel play: client drift: the client answered {method} ({request_place}), which the recorded client never answered; replay goes on"
                ));
            }
        }
        if let Some(jid) = sr.job {
            let id = id.unwrap_or(RpcId::Null);
            if let Some(job) = self.calls.jobs.get_mut(&jid) {
                job.awaiting.retain(|(f, _)| *f != id);
                if job.state == JobState::WaitAnswer {
                    self.advance(jid);
                }
            }
        }
    }

    /// Unsolicited recorded server messages whose place the client has reached.
    pub(super) fn pump_unsolicited(&mut self) {
        if self.opts.subset.is_some() || self.client.input_closed || self.client.gone {
            return;
        }
        while let Some(&(anchor, item)) = self.src.tape.peek_unsolicited() {
            if anchor.is_some_and(|a| self.calls.hw.is_none_or(|h| h < a)) {
                return;
            }
            // Answers recorded before it go first.
            let earlier_answer_pending = self.calls.jobs.values().any(|j| {
                self.src
                    .tape
                    .exchange(j.ex)
                    .response
                    .is_some_and(|r| r.seq < item.seq)
            });
            if earlier_answer_pending {
                return;
            }
            self.src.tape.pop_unsolicited();
            let _ = self.emit_item(None, item);
        }
    }

    // ---- the live server (--subset) ------------------------------------------------

    pub(super) fn forward(&mut self, line: &[u8]) {
        let Some(live) = self.live.server.as_mut() else {
            return;
        };
        if live.send(line).is_err() && !self.live.done {
            self.say("reel play: the live server stopped reading its input");
            self.live.done = true;
        }
    }

    /// The live server ended: every forwarded request it left unanswered gets an
    /// error, so no client waits forever for it.
    pub(super) fn fail_forwarded(&mut self) {
        let mut left: Vec<(String, u64)> = self.live.forwarded.drain().map(|(_, v)| v).collect();
        left.sort();
        for (id_raw, route) in left {
            self.live_gone_error(&id_raw, route);
        }
    }

    /// Answers a request meant for the live server after it ended (counted as a miss:
    /// the replay could not answer it).
    pub(super) fn live_gone_error(&mut self, id_raw: &str, route: u64) {
        self.summary.missed += 1;
        self.say(&format!(
            "reel play: miss: request (id {id_raw}) for the live server of --subset, which has ended; answered with an error"
        ));
        let e = serde_json::json!({
            "code": report::MISS_CODE,
            "message": "reel play: the live server of --subset ended before answering",
            "data": {"reel": "live-ended"},
        });
        self.send_error(Dest::answer(route), id_raw, &e);
    }

    pub(super) fn live_line(&mut self, line: &[u8]) {
        let text = std::str::from_utf8(line).ok();
        match text.and_then(|t| Envelope::parse(t).map(|env| (t, env))) {
            Some((text, env)) => {
                let kind = env.kind();
                let last = matches!(kind, RpcKind::Error | RpcKind::Response);
                if let (true, Some(id)) = (last, env.rpc_id()) {
                    self.live.forwarded.remove(&id);
                }
                let dest = Dest {
                    last,
                    ..Dest::answer(0)
                };
                self.send(dest, text, "live");
            }
            _ => {
                // Not JSON-RPC: a real client would see it too; keep it in the trace.
                if let Some(r) = self.recorder.as_mut() {
                    r.nonjson_out(line);
                }
                self.send_parts(Dest::answer(0), &[line]);
            }
        }
    }
}
