//! Sending the recorded client's messages: each with a fresh id, a fresh progress
//! token, the live id in a cancellation and the live `requestState` in a retry, every
//! other byte as recorded.

use std::time::Instant;

use reel_mcp::jsonrpc::RpcId;

use super::edit::{replace_at, request_state_of};
use super::{ExState, Run};
use crate::splice;
use crate::verify::compare::{Class, Kind};
use crate::verify::script::StepKind;

impl Run<'_> {
    pub(super) fn send_step(&mut self, k: usize) {
        let script = self.script;
        let step = &script.steps[k];
        let raw = &script.message(step.message).raw;
        match step.kind {
            StepKind::Request { exchange } => self.send_request(exchange, raw),
            StepKind::Notification { cancels } => {
                let line = match cancels.map(|e| &self.state[e]) {
                    Some(ExState::Pending { live_id, .. }) => {
                        replace_at(raw, &["params", "requestId"], live_id)
                            .unwrap_or_else(|| raw.clone())
                    }
                    _ => raw.clone(),
                };
                self.send_line(&line);
            }
        }
    }

    fn send_request(&mut self, e: usize, raw: &str) {
        let script = self.script;
        let ex = &script.exchanges[e];
        let id = self.next_id;
        self.next_id += 1;
        let live_id = id.to_string();
        let Some(mut line) = splice::with_id(raw, &live_id) else {
            self.report.notes.push(format!(
                "line {}: request is not a JSON object; not sent",
                script.request(e).line
            ));
            self.state[e] = ExState::Settled;
            return;
        };
        if let Some(token) = &ex.progress_token {
            // A fresh token of the recorded kind: the live id, or "reel-<id>".
            let (fresh, live_token) = match token {
                RpcId::String(_) => {
                    let t = format!("reel-{id}");
                    (format!("\"{t}\""), RpcId::String(t))
                }
                _ => (live_id.clone(), RpcId::Number(live_id.clone())),
            };
            if let Some(l) = replace_at(&line, &["params", "_meta", "progressToken"], &fresh) {
                line = l;
                self.live_tokens.insert(live_token, e);
            }
        }
        if let Some(state) = request_state_of(raw) {
            if let Some(live_state) = self.request_states.get(&state) {
                if let Some(l) = replace_at(&line, &["params", "requestState"], live_state) {
                    line = l;
                }
            }
        }
        let awaited = script.response(e).is_some() && !ex.cancelled && !script.answered_at_end(e);
        // The first request is the handshake: it also waits for the server to start.
        let wait = if self.handshake.is_none() {
            self.opts.timeout.max(self.opts.start_timeout)
        } else {
            self.opts.timeout
        };
        let deadline = awaited.then(|| Instant::now() + wait);
        self.state[e] = ExState::Pending {
            live_id: live_id.clone(),
            deadline,
        };
        self.by_live_id.insert(RpcId::Number(live_id), e);
        if self.handshake.is_none() {
            self.handshake = Some(e);
        }
        if !awaited {
            self.report.summary.not_compared += 1;
            self.context(e, "not compared");
        }
        self.send_line(&line);
    }

    pub(super) fn send_line(&mut self, line: &str) {
        if let Some(r) = self.record.as_mut() {
            r.sent(line);
        }
        if let Some(live) = self.live.as_mut() {
            if live.send(line.as_bytes()).is_err() {
                // The server closed its stdin: it is exiting; its stdout will end soon
                // and the pending answers will be settled then.
                live.close_input();
            }
        }
    }

    /// The steps from `from` on are not played: the handshake failed or the server
    /// exited. The latter is drift (its requests go unanswered), the former a note
    /// (the failed handshake is the drift).
    pub(super) fn not_sent(&mut self, from: usize) {
        let script = self.script;
        let unsent: Vec<usize> = script.steps[from..]
            .iter()
            .filter_map(|s| match s.kind {
                StepKind::Request { exchange } => Some(exchange),
                StepKind::Notification { .. } => None,
            })
            .collect();
        let Some(&first) = unsent.first() else { return };
        self.report.summary.not_sent += unsent.len() as u64;
        let why = match &self.stopped {
            Some(why) => why.clone(),
            None => "the server exited".to_owned(),
        };
        let message = format!(
            "not sent: {why}; {} recorded request{} from here on were not played",
            unsent.len(),
            if unsent.len() == 1 { "" } else { "s" }
        );
        if self.stopped.is_some() {
            self.report.notes.push(message);
        } else {
            // One drift for the lot; the requests are counted as not sent, not as drift.
            let d = self.drift_at(
                first,
                None,
                Class::Structural,
                Kind::Unanswered,
                message,
                Vec::new(),
            );
            self.push_drift(d);
        }
    }
}
