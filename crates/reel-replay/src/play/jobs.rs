//! Jobs: a live request answered from its recorded exchange, step by step. A job emits
//! the exchange's recorded server messages in order and the response last; it pauses
//! while a recorded client answer has not arrived live, for `--pace`, or while the index
//! has not reached the response, and it ends on `notifications/cancelled`.

use std::cmp::Reverse;
use std::io::Write;
use std::time::{Duration, Instant};

use reel_mcp::jsonrpc::{RpcId, methods};
use serde_json::Value;

use super::input::Incoming;
use super::job::{Job, JobState, Next, ServerRequest};
use super::out::{ClientOut, Dest, Route};
use super::report;
use super::server::Server;
use crate::splice;
use crate::tape::matcher::{Lookup, Recorded};
use crate::tape::{IdSplice, Item, ItemKind, LineLoc};

impl<C: ClientOut, D: Write> Server<C, D> {
    // ---- requests ----------------------------------------------------------------

    pub(super) fn served_by_tape(&self, inc: &Incoming) -> bool {
        match &self.opts.subset {
            None => true,
            Some(s) => {
                inc.method == methods::TOOLS_CALL
                    && inc.tool.as_ref().is_some_and(|t| s.tools.contains(t))
            }
        }
    }

    pub(super) fn request(&mut self, inc: Incoming) {
        if !self.served_by_tape(&inc) {
            self.summary.forwarded += 1;
            if self.live.done {
                return self.live_gone_error(&inc.id_raw, inc.route);
            }
            self.live
                .forwarded
                .insert(inc.id.clone(), (inc.id_raw.clone(), inc.route));
            self.forward(inc.line.as_bytes());
            return;
        }
        if self.src.tape.meta().is_none() && !self.src.tape.complete() {
            self.calls.parked.push_back(inc);
            return;
        }
        if let Some(inc) = self.try_answer(inc) {
            self.calls.parked.push_back(inc);
        }
    }

    /// Answers or starts answering; gives the request back when it must wait.
    pub(super) fn try_answer(&mut self, inc: Incoming) -> Option<Incoming> {
        let key = inc.key;
        let strict = self.opts.strict;
        match self.src.tape.find(key, inc.alt_key, strict) {
            Lookup::Found(ex) => {
                self.say_if_ambiguous(&inc, ex);
                self.start_job(inc, ex)
            }
            Lookup::FoundWithDrift(ex) => {
                self.retry_drift(&inc, ex);
                self.start_job(inc, ex);
            }
            Lookup::Again(ex) => self.answer_again(inc, ex),
            Lookup::NotYet => {
                if !strict && self.generic(&inc) {
                    return None;
                }
                return Some(inc);
            }
            Lookup::None => {
                if !strict && self.generic(&inc) {
                    return None;
                }
                let reason = self.miss_reason(&inc);
                self.miss(inc, reason);
            }
        }
        None
    }

    /// Recorded calls that differ only where redaction hid a value (a different secret in
    /// each, say) share a key: replay cannot tell which one the live request is, and says
    /// so with the one it took (the earliest unused, as for equal calls).
    fn say_if_ambiguous(&mut self, inc: &Incoming, ex: u32) {
        if !inc.redacted {
            return;
        }
        let same = self.src.tape.unconsumed_with_key(inc.key);
        if same < 2 {
            return;
        }
        self.summary.ambiguous += 1;
        let at = self
            .src
            .files
            .location(self.src.tape.exchange(ex).request.at);
        let what = match &inc.tool {
            Some(t) => format!("{} {t}", inc.method),
            None => inc.method.clone(),
        };
        self.say(&format!(
            "reel play: ambiguous: {what} (id {}) is equal, once redacted, to {same} unused \
             recorded calls that may have differed in what redaction hid; answered from the \
             earliest, at {at} (a recording made with --no-redact would tell them apart)",
            inc.id_raw
        ));
    }

    /// A list read past its recorded answers: the last equal one's answer again (only
    /// the answer: what the server sent while answering it was news once).
    fn answer_again(&mut self, inc: Incoming, ex: u32) {
        match self.src.tape.exchange(ex).response {
            Some(r) => {
                self.respond(inc.route, &inc.id_raw, None, r);
                self.summary.answered_again += 1;
            }
            // The matcher only answers again with an answer; never leave one unanswered.
            None => {
                let reason = self.miss_reason(&inc);
                self.miss(inc, reason);
            }
        }
    }

    /// A generic answer for what any server answers alike; false when there is none.
    pub(super) fn generic(&mut self, inc: &Incoming) -> bool {
        if methods::request_class(&inc.method) == methods::RequestClass::AnsweredAlike {
            let text = splice::response(&inc.id_raw, "result", "{}");
            self.send(Dest::answer(inc.route), &text, "tape");
            self.summary.generic += 1;
            return true;
        }
        // A handshake of the other era, answered from the one the tape holds.
        self.bridge_handshake(inc)
    }

    pub(super) fn start_job(&mut self, inc: Incoming, ex: u32) {
        self.src.tape.consume(ex);
        self.remember_subscription(ex, &inc.id_raw);
        self.reach(self.src.tape.exchange(ex).request.seq);
        let id = self.calls.next;
        self.calls.next += 1;
        let negotiate = if inc.method == methods::INITIALIZE {
            inc.protocol_version.clone()
        } else {
            None
        };
        // The common exchange (nothing recorded before its response, the response
        // indexed, no pacing) is answered at once, without the job bookkeeping.
        let e = self.src.tape.exchange(ex);
        if let (true, Some(r), None) = (e.attached.is_empty(), e.response, self.opts.pace) {
            return self.respond(inc.route, &inc.id_raw, negotiate, r);
        }
        self.calls.by_live_id.insert(inc.id.clone(), id);
        self.calls.jobs.insert(
            id,
            Job {
                ex,
                live_id: inc.id,
                id_raw: inc.id_raw,
                token_raw: inc.token_raw,
                step: 0,
                awaiting: Vec::new(),
                started: Instant::now(),
                negotiate,
                state: JobState::Running,
                route: inc.route,
                sent_before_answer: false,
            },
        );
        self.advance(id);
    }

    /// The client has come as far as recorded position `seq`.
    pub(super) fn reach(&mut self, seq: u64) {
        self.calls.hw = Some(self.calls.hw.map_or(seq, |h| h.max(seq)));
    }

    pub(super) fn next_step(&self, job: &Job) -> Next {
        let e = self.src.tape.exchange(job.ex);
        if let Some(item) = e.attached.get(job.step) {
            Next::Item(*item)
        } else if let Some(r) = e.response {
            Next::Response(r)
        } else if e.cancelled {
            Next::Held
        } else if !self.src.tape.complete() {
            Next::WaitIndex
        } else {
            Next::Unanswerable
        }
    }

    /// Runs a job as far as it can go now.
    pub(super) fn advance(&mut self, id: u64) {
        loop {
            let Some(job) = self.calls.jobs.get(&id) else {
                return;
            };
            let next = self.next_step(job);
            if self.not_yet_placed(job, &next) {
                return self.set_state(id, JobState::WaitPosition);
            }
            let (seq, t) = match next {
                Next::Item(i) => (i.seq, i.t),
                Next::Response(r) => (r.seq, r.t),
                Next::Held => {
                    if job.state != JobState::Held {
                        let (route, via) = (job.route, self.src.tape.exchange(job.ex).request.via);
                        self.client.out.hold(Route::Reply(route), via);
                    }
                    return self.set_state(id, JobState::Held);
                }
                Next::WaitIndex => return self.set_state(id, JobState::WaitIndex),
                Next::Unanswerable => return self.unanswerable(id),
            };
            let apart = job.sent_before_answer.then_some(job.route);
            let waiting_for_client =
                !self.client.input_closed && job.awaiting.iter().any(|(_, s)| *s < seq);
            if waiting_for_client {
                return self.set_state(id, JobState::WaitAnswer);
            }
            if let (Some(p), false) = (self.opts.pace, self.client.input_closed) {
                let t0 = self.src.tape.exchange(job.ex).request.t;
                let after = Duration::from_secs_f64(((t - t0).max(0) as f64) / 1000.0 / p.speed);
                let due = job.started + after;
                if due > Instant::now() && job.state != JobState::Timer {
                    self.calls.timers.push(Reverse((due, id)));
                    return self.set_state(id, JobState::Timer);
                }
                if due > Instant::now() {
                    return;
                }
            }
            self.set_state(id, JobState::Running);
            match next {
                Next::Item(item) => {
                    let sent = self.emit_item(Some(id), item);
                    if let Some(j) = self.calls.jobs.get_mut(&id) {
                        j.step += 1;
                        j.sent_before_answer |= sent;
                    }
                }
                Next::Response(r) => {
                    if let Some(route) = apart {
                        self.deliver_apart(route);
                    }
                    return self.emit_response(id, r);
                }
                _ => return,
            }
        }
    }

    /// Job `id` was cancelled: the server requests sent within it may go unanswered.
    pub(super) fn excuse_server_requests(&mut self, id: u64) {
        for sr in self.asks.open.values_mut() {
            if sr.job == Some(id) {
                sr.excused = true;
            }
        }
    }

    /// At the end: a server request the recorded client answered and the live one
    /// never did is client drift (as a different answer is).
    pub(super) fn unanswered_server_requests(&mut self) {
        let mut left: Vec<(RpcId, u32)> = self
            .asks
            .open
            .drain()
            .filter(|(_, sr)| !sr.excused)
            .map(|(id, sr)| (id, sr.ex))
            .collect();
        left.sort();
        for (id, ex) in left {
            let e = self.src.tape.exchange(ex);
            if e.response.is_none() {
                continue;
            }
            let method = self.src.tape.method_name(e.method).to_owned();
            let place = self.src.files.location(e.request.at);
            self.summary.client_drift += 1;
            self.say(&format!(
                "reel play: client drift: the client never answered {method} (id {}, recorded at {place}), which the recorded client answered; replay goes on",
                id.to_json()
            ));
        }
    }

    pub(super) fn set_state(&mut self, id: u64, state: JobState) {
        if let Some(j) = self.calls.jobs.get_mut(&id) {
            j.state = state;
        }
    }

    pub(super) fn fire_timers(&mut self) {
        let now = Instant::now();
        while let Some(Reverse((due, id))) = self.calls.timers.peek().copied() {
            if due > now && !self.client.input_closed {
                break;
            }
            self.calls.timers.pop();
            if self
                .calls
                .jobs
                .get(&id)
                .is_some_and(|j| j.state == JobState::Timer)
            {
                self.set_state(id, JobState::Running);
                self.advance(id);
            }
        }
    }

    pub(super) fn finish_job(&mut self, id: u64) {
        if let Some(job) = self.calls.jobs.remove(&id) {
            if self.calls.by_live_id.get(&job.live_id) == Some(&id) {
                self.calls.by_live_id.remove(&job.live_id);
            }
        }
    }

    /// What went to `route` so far reaches the client before anything more: a live
    /// server sent the answer after the messages that preceded it, and a client may
    /// only handle those while the call is still open.
    fn deliver_apart(&mut self, route: u64) {
        if self.client.gone {
            return;
        }
        if let Err(e) = self.client.out.deliver_apart(Route::Reply(route)) {
            if self.client_error(e).is_err() {
                self.client.gone = true;
            }
        }
    }

    /// A recorded server message, to the client: notifications verbatim (progress with
    /// the live token), server requests with a fresh id. True when something was sent.
    pub(super) fn emit_item(&mut self, job: Option<u64>, item: Item) -> bool {
        let token = job
            .and_then(|j| self.calls.jobs.get(&j))
            .map(|j| j.token_raw.clone());
        let route = match job.and_then(|j| self.calls.jobs.get(&j)) {
            Some(j) => Route::Reply(j.route),
            None => Route::Stream,
        };
        let dest = Dest {
            route,
            last: false,
            via: item.via,
        };
        match item.kind {
            // A client that asked for no progress gets none (strict clients reject
            // tokens they did not hand out).
            ItemKind::Notification { progress: true } => match token {
                Some(Some(token)) => self.emit_progress(dest, item.at, &token),
                _ => false,
            },
            ItemKind::Notification { progress: false } => self.emit_notification(dest, item.at),
            ItemKind::Event => self.emit_event(dest, item.at),
            ItemKind::Request { exchange } => self.emit_request(job, dest, item.at, exchange),
        }
    }

    /// A recorded `notifications/progress`, with the live call's token.
    fn emit_progress(&mut self, dest: Dest, at: LineLoc, token: &str) -> bool {
        if let Some(Some(text)) = self.with_raw(at, |raw| splice::with_progress_token(raw, token)) {
            self.send(dest, &text, "tape");
            return true;
        }
        false
    }

    /// Any other recorded notification, verbatim but for the ids the client knows by
    /// another name.
    fn emit_notification(&mut self, dest: Dest, at: LineLoc) -> bool {
        let Some(mut text) = self.with_raw(at, str::to_owned) else {
            return false;
        };
        // The server cancelling its own request names it by the id the client saw, not
        // the recorded one.
        if !self.asks.ids.is_empty() {
            if let Some(t) = splice::with_fresh_request_id(&text, &self.asks.ids) {
                text = t;
            }
        }
        text = self.restamp_subscription(text);
        self.send(dest, &text, "tape");
        true
    }

    /// A recorded event that carried no message (a priming event), re-sent as such.
    /// Nothing for the client to handle: never counts as sent.
    fn emit_event(&mut self, dest: Dest, at: LineLoc) -> bool {
        let mut buf = std::mem::take(&mut self.src.scratch);
        let event = match self.src.files.read(at, &mut buf) {
            Ok(()) => crate::tape::recorded_sse_event(&buf),
            Err(_) => None,
        };
        self.src.scratch = buf;
        if let Some(ev) = event {
            if !self.client.gone && self.client.out.raw_event(dest, &ev).is_err() {
                self.client.gone = true;
            }
        }
        false
    }

    /// A recorded server→client request, with a fresh id; its recorded answer is
    /// awaited by the job it came within.
    fn emit_request(&mut self, job: Option<u64>, dest: Dest, at: LineLoc, exchange: u32) -> bool {
        let n = self.asks.next_id;
        self.asks.next_id += 1;
        let (fresh, fresh_raw) = if self.opts.subset.is_some() {
            // Keep clear of the live server's own (numeric) ids.
            let s = format!("reel-{n}");
            (RpcId::String(s.clone()), format!("\"{s}\""))
        } else {
            (RpcId::Number(n.to_string()), n.to_string())
        };
        let Some(Some((text, recorded_id))) = self.with_raw(at, |raw| {
            let recorded_id = splice::Members::parse(raw)?.get("id")?.trim().to_owned();
            Some((splice::with_id(raw, &fresh_raw)?, recorded_id))
        }) else {
            return false;
        };
        self.asks.ids.insert(recorded_id, fresh_raw);
        if let (Some(j), Some(r)) = (job, self.src.tape.exchange(exchange).response) {
            if let Some(job) = self.calls.jobs.get_mut(&j) {
                job.awaiting.push((fresh.clone(), r.seq));
            }
        }
        self.asks.open.insert(
            fresh,
            ServerRequest {
                ex: exchange,
                job,
                excused: false,
            },
        );
        self.send(dest, &text, "tape");
        true
    }

    /// The recorded response with the live id: its own bytes (member order, spacing
    /// inside values) with only `id` replaced, and for `initialize` the negotiated
    /// `protocolVersion`; a client whose ids match the recording gets identical bytes.
    pub(super) fn emit_response(&mut self, id: u64, r: Recorded) {
        let Some(job) = self.calls.jobs.get(&id) else {
            return;
        };
        let id_raw = job.id_raw.clone();
        let negotiate = job.negotiate.clone();
        let route = job.route;
        self.finish_job(id);
        self.respond(route, &id_raw, negotiate, r);
    }

    /// Sends the recorded response `r` with the live id (and, for `initialize`, the
    /// negotiated version) to `route`, as the recording answered it over HTTP.
    pub(super) fn respond(
        &mut self,
        route: u64,
        id_raw: &str,
        negotiate: Option<String>,
        r: Recorded,
    ) {
        let mut dest = Dest {
            route: Route::Reply(route),
            last: true,
            via: r.via,
        };
        if r.via.other_stream {
            // As recorded: the request's stream ends without its answer, which goes to
            // the stream the client opens to resume.
            self.client.out.close(Route::Reply(route));
            dest = Dest {
                route: Route::Resume,
                last: false,
                via: r.via,
            };
        }
        if r.via.status_only {
            return self.respond_status_only(dest, r);
        }
        if let (Some(sp), None) = (r.splice, &negotiate) {
            if self.send_spliced(dest, r.at, sp, id_raw) {
                self.summary.answered += 1;
                return;
            }
        }
        let raw = self.with_raw(r.at, str::to_owned);
        let parsed = raw.as_deref().and_then(|raw| {
            let m = splice::Members::parse(raw)?;
            (m.get("result").is_some() || m.get("error").is_some()).then_some(m)
        });
        let Some(members) = parsed else {
            self.summary.missed += 1;
            self.say(&format!(
                "reel play: the recorded response at {} cannot be read",
                self.src.files.location(r.at)
            ));
            let e = serde_json::json!({"code": report::MISS_CODE, "message": "reel play: the recorded response cannot be read"});
            return self.send_error(Dest::answer(route), id_raw, &e);
        };
        let negotiated = match (negotiate, members.get("result")) {
            (Some(requested), Some(result)) => self.negotiate(&requested, result),
            _ => None,
        };
        let keep_null = self.src.session.is_some() && members.get("id") == Some("null");
        let mut replace = vec![("id", if keep_null { "null" } else { id_raw })];
        if let Some(n) = &negotiated {
            replace.push(("result", n.as_str()));
        }
        let text = members.join_replacing(&replace);
        self.send(dest, &text, "tape");
        self.summary.answered += 1;
    }

    /// A recorded HTTP refusal whose body was no JSON-RPC message (a `reel.http` record):
    /// its status and body, as they were.
    fn respond_status_only(&mut self, dest: Dest, r: Recorded) {
        let body = self.with_raw_event(r.at).unwrap_or_default();
        self.send_parts(dest, &[body.as_bytes()]);
        self.summary.answered += 1;
    }

    /// Sends the recorded response with `id_raw` in place of its id, from the spans
    /// the index kept: one positioned read, and the bytes around the id copied straight
    /// into the output. False (nothing sent) when the bytes there no longer look like
    /// the response (the trace changed): the caller parses instead.
    fn send_spliced(&mut self, dest: Dest, at: LineLoc, sp: IdSplice, id_raw: &str) -> bool {
        let mut buf = std::mem::take(&mut self.src.scratch);
        let ok = self
            .src
            .files
            .read_span(at, sp.raw_start, sp.raw_len, &mut buf)
            .is_ok();
        let (a, b) = (sp.id_start as usize, (sp.id_start + sp.id_len) as usize);
        let fits = ok && buf.first() == Some(&b'{') && buf.last() == Some(&b'}') && b <= buf.len();
        // Over HTTP an id-less refusal (a 400 to a discover probe) is sent as recorded:
        // the HTTP exchange pairs it with the request.
        let id_raw = if fits && self.src.session.is_some() && &buf[a..b] == b"null" {
            "null"
        } else {
            id_raw
        };
        if fits {
            if self.recorder.is_some() {
                // The replay's trace needs the text: build it once, checked.
                let text = std::str::from_utf8(&buf[..a])
                    .ok()
                    .zip(std::str::from_utf8(&buf[b..]).ok());
                match text {
                    Some((head, tail)) => {
                        let line = format!("{head}{id_raw}{tail}");
                        self.send(dest, &line, "tape");
                    }
                    None => {
                        self.src.scratch = buf;
                        return false;
                    }
                }
            } else {
                self.send_parts(dest, &[&buf[..a], id_raw.as_bytes(), &buf[b..]]);
            }
        }
        self.src.scratch = buf;
        fits
    }

    /// `initialize`: answer with the client's requested version when the recorded
    /// server is known to support it (it answered it, listed it in a recorded
    /// `server/discover` result or in an unsupported-version error), else the recorded one.
    pub(super) fn negotiate(&mut self, requested: &str, result: &str) -> Option<String> {
        let members = splice::Members::parse(result)?;
        let recorded: String = serde_json::from_str(members.get("protocolVersion")?).ok()?;
        if recorded == requested {
            return None;
        }
        let supported = self.supported_versions();
        if !supported.iter().any(|v| v == requested) {
            return None;
        }
        let lit = serde_json::to_string(requested).ok()?;
        Some(members.join_replacing(&[("protocolVersion", &lit)]))
    }

    pub(super) fn supported_versions(&mut self) -> Vec<String> {
        if let Some(v) = &self.supported_versions {
            return v.clone();
        }
        let mut out: Vec<String> = Vec::new();
        let mut locs = Vec::new();
        for m in [methods::SERVER_DISCOVER, methods::INITIALIZE] {
            for &i in self.src.tape.candidates(m) {
                if let Some(r) = self.src.tape.exchange(i).response {
                    locs.push(r.at);
                }
            }
        }
        for at in locs {
            let found = self.with_raw(at, |raw| {
                let v: Value = serde_json::from_str(raw).ok()?;
                let mut vs = Vec::new();
                for p in [
                    "/result/supportedVersions",
                    "/error/data/supported",
                    "/result/protocolVersion",
                ] {
                    match v.pointer(p) {
                        Some(Value::Array(a)) => {
                            vs.extend(a.iter().filter_map(|x| x.as_str().map(str::to_owned)))
                        }
                        Some(Value::String(s)) => vs.push(s.clone()),
                        _ => {}
                    }
                }
                Some(vs)
            });
            out.extend(found.flatten().unwrap_or_default());
        }
        out.sort();
        out.dedup();
        if self.src.tape.complete() {
            self.supported_versions = Some(out.clone());
        }
        out
    }

    pub(super) fn unanswerable(&mut self, id: u64) {
        let Some(job) = self.calls.jobs.get(&id) else {
            return;
        };
        let e = self.src.tape.exchange(job.ex);
        let method = self.src.tape.method_name(e.method).to_owned();
        let place = self.src.files.location(e.request.at);
        let id_raw = job.id_raw.clone();
        let route = job.route;
        self.finish_job(id);
        self.summary.missed += 1;
        self.say(&format!(
            "reel play: miss: {method} (id {id_raw}): the recording ends before the server answered the matching request at {place}"
        ));
        let err = serde_json::json!({
            "code": report::MISS_CODE,
            "message": format!("reel play: the recording ends before the server answered {method}"),
            "data": {"reel": "miss", "method": method},
        });
        self.send_error(Dest::answer(route), &id_raw, &err);
    }
}
