//! Handling what the server says: an answer is compared with the recorded one at
//! once, a request of the server is answered with the recorded client's answer, a
//! notification is counted, the end of its output settles what is still pending.

use reel_mcp::jsonrpc::{Envelope, RpcKind, methods, notification_progress_token};
use reel_mcp::normalize::{MatchKey, diff};

use super::edit::{handed_out_state, tool_of};
use super::{ExState, Run, STDERR_TAIL};
use crate::live::LiveOutput;
use crate::splice;
use crate::verify::compare::{self, Call, Class, Kind, Verdict};
use crate::verify::error::VerifyError;
use crate::verify::report::{self, Drift, Place};
use crate::verify::script::PING;

impl Run<'_> {
    pub(super) fn on_output(&mut self, o: LiveOutput) -> Result<(), VerifyError> {
        match o {
            LiveOutput::Line(bytes) => self.on_line(&bytes),
            LiveOutput::Stderr(bytes) => {
                if let Some(r) = self.record.as_mut() {
                    r.stderr(&bytes);
                }
                self.stderr_tail.extend_from_slice(&bytes);
                if self.stderr_tail.len() > STDERR_TAIL {
                    let cut = self.stderr_tail.len() - STDERR_TAIL;
                    self.stderr_tail.drain(..cut);
                }
            }
            LiveOutput::End => self.on_end()?,
        }
        Ok(())
    }

    fn on_line(&mut self, bytes: &[u8]) {
        let text = match std::str::from_utf8(bytes) {
            Ok(t) if serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok() => t,
            _ => {
                if !bytes.iter().all(u8::is_ascii_whitespace) {
                    self.nonjson += 1;
                    if let Some(r) = self.record.as_mut() {
                        r.nonjson(bytes);
                    }
                }
                return;
            }
        };
        let env = Envelope::parse(text);
        let kind = env
            .as_ref()
            .map_or_else(|| Envelope::kind_of(text), Envelope::kind);
        if let Some(r) = self.record.as_mut() {
            r.received(text);
        }
        let Some(env) = env else { return };
        match kind {
            RpcKind::Response | RpcKind::Error => self.on_answer(&env, text),
            RpcKind::Request => self.on_server_request(&env, text),
            RpcKind::Notification => {
                let method = env.method.as_deref().unwrap_or_default().to_owned();
                if method == methods::PROGRESS
                    && notification_progress_token(&env)
                        .is_none_or(|t| !self.live_tokens.contains_key(&t))
                {
                    self.foreign_tokens += 1;
                }
                *self.live_notifications.entry(method).or_default() += 1;
            }
            _ => {}
        }
    }

    fn on_answer(&mut self, env: &Envelope<'_>, text: &str) {
        let Some(e) = env
            .rpc_id()
            .and_then(|id| self.by_live_id.get(&id).copied())
        else {
            self.report.notes.push(format!(
                "the server answered an id reel never sent: {}",
                self.shown_live(text)
            ));
            return;
        };
        self.heard = true;
        let live_id = match &self.state[e] {
            ExState::Pending {
                live_id,
                deadline: Some(_),
            } => live_id.clone(),
            ExState::Pending { deadline: None, .. } => {
                // An answer nobody waits for (the recording has none): not compared.
                self.state[e] = ExState::Settled;
                return;
            }
            _ => {
                let note = format!(
                    "{} (line {}) was answered after the timeout",
                    self.call_name(e),
                    self.script.request(e).line
                );
                self.report.notes.push(note);
                return;
            }
        };
        self.state[e] = ExState::Settled;
        self.compare_answer(e, live_id, text);
    }

    fn compare_answer(&mut self, e: usize, live_id: String, text: &str) {
        let script = self.script;
        let Some(recorded) = script.response(e) else {
            return;
        };
        let (rec, live) = match (
            self.norm.normalize_recorded(&recorded.raw),
            self.norm.normalize_live(text),
        ) {
            (Ok(r), Ok(l)) => (r, l),
            (Err(err), _) | (_, Err(err)) => {
                self.report.summary.not_compared += 1;
                let note = format!(
                    "{} (line {}): not compared: {err}",
                    self.call_name(e),
                    script.request(e).line
                );
                self.report.notes.push(note);
                self.context(e, "not compared");
                return;
            }
        };
        // A 2026-07-28 retry must carry the state this server handed out.
        if let (Some(r), Some(l)) = (handed_out_state(&recorded.raw), handed_out_state(text)) {
            self.request_states.insert(r, l);
        }
        let ex = &script.exchanges[e];
        let tool = tool_of(&script.request(e).raw);
        if ex.method == "tools/list" && live.get("result").is_some() {
            self.live_tools = Some(compare::tool_names(&live));
        }
        let call = Call {
            method: &ex.method,
            tool: tool.as_deref(),
            live_tools: self.live_tools.as_ref(),
        };
        match compare::compare(call, &rec, &live) {
            Verdict::Same => {
                self.report.summary.same += 1;
                self.context(e, "same");
            }
            Verdict::Drift {
                class,
                kind,
                mut message,
                differences,
            } => {
                if ex.method == methods::SERVER_DISCOVER && kind == Kind::ErrorBecameResult {
                    // The server now speaks 2026-07-28 and, once discovered, may refuse
                    // `initialize` on this connection: the recorded legacy session is
                    // played on a fresh process that is not probed.
                    message = "the live server accepts the server/discover probe (2026-07-28) that the recording saw refused: a dual-era client would not fall back to initialize; reel restarted the server and played the recorded legacy session without the probe".to_owned();
                    self.restart_without_probe = true;
                }
                let places = differences.into_iter().map(Place::from).collect();
                self.drift_for(e, Some(live_id), class, kind, message, places);
                self.stop_if_handshake_failed(e, class, kind);
            }
        }
    }

    /// A failed handshake leaves nothing comparable: the recorded requests assume a
    /// session the live server did not open.
    fn stop_if_handshake_failed(&mut self, e: usize, class: Class, kind: Kind) {
        if class != Class::Structural {
            return;
        }
        let method = self.script.exchanges[e].method.as_str();
        let failed = matches!(kind, Kind::BecameError | Kind::MethodUnknown);
        if failed && (method == methods::INITIALIZE || method == methods::SERVER_DISCOVER) {
            self.stopped = Some(format!("the live server refused `{method}`"));
        }
    }

    /// The server asked the client something: the earliest unused recorded request
    /// that is equal after normalisation answers it; else the earliest unused one of
    /// the same method (output drift); else a JSON-RPC error (structural drift).
    /// `ping` is answered with `{}` when the tape has none.
    fn on_server_request(&mut self, env: &Envelope<'_>, text: &str) {
        let method = env.method.as_deref().unwrap_or_default().to_owned();
        let live_id = env
            .id
            .map_or_else(|| "null".to_owned(), |i| i.get().to_owned());
        if method != PING {
            self.server_asked += 1;
        }
        self.report.server_requests.asked += 1;
        let live = self.norm.normalize_live(text).ok();
        let key = live.as_ref().map(MatchKey::of);
        let unused = |r: &&super::RecordedServerRequest| !r.used && r.method == method;
        let exact = self
            .server_requests
            .iter()
            .position(|r| unused(&r) && r.key.is_some() && r.key == key);
        let Some(i) = exact.or_else(|| self.server_requests.iter().position(|r| unused(&r))) else {
            self.unknown_server_request(&method, &live_id, text);
            return;
        };
        self.server_requests[i].used = true;
        let exchange = self.server_requests[i].exchange;
        if exact.is_none() {
            let differences = match (&self.server_requests[i].normalized, &live) {
                (Some(r), Some(l)) => diff(r, l).into_iter().map(Place::from).collect(),
                _ => Vec::new(),
            };
            let drift = Drift {
                class: Class::Output,
                kind: Kind::RequestChanged,
                method: method.clone(),
                tool: None,
                line: Some(self.script.request(exchange).line),
                live_id: Some(live_id.clone()),
                message: format!(
                    "the server asked `{method}` with other params than recorded; reel answered with the recorded answer"
                ),
                request: Some(self.shown_live(text)),
                differences,
                context: self.recent_context(),
            };
            self.push_drift(drift);
        }
        let Some(answer) = self.script.response(exchange) else {
            let note = format!(
                "the recorded client never answered {method} (line {}); neither does reel",
                self.script.request(exchange).line
            );
            self.report.notes.push(note);
            return;
        };
        match splice::with_id(&answer.raw, &live_id) {
            Some(line) => {
                self.report.server_requests.answered_from_tape += 1;
                self.send_line(&line);
            }
            None => self.report.notes.push(format!(
                "line {}: the recorded answer to {method} is not a JSON object; not sent",
                answer.line
            )),
        }
    }

    fn unknown_server_request(&mut self, method: &str, live_id: &str, text: &str) {
        if method == PING {
            let answer = format!("{{\"jsonrpc\":\"2.0\",\"id\":{live_id},\"result\":{{}}}}");
            self.send_line(&answer);
            return;
        }
        self.report.server_requests.unknown += 1;
        let error = serde_json::json!({
            "code": reel_mcp::drift::METHOD_NOT_FOUND,
            "message": format!("reel verify: the recording has no {method} request to answer this from"),
        });
        let answer = splice::response(live_id, "error", &error.to_string());
        self.send_line(&answer);
        let drift = Drift {
            class: Class::Structural,
            kind: Kind::Added,
            method: method.to_owned(),
            tool: None,
            line: None,
            live_id: Some(live_id.to_owned()),
            message: format!(
                "the server asked `{method}`, which the recording never saw; reel answered with an error"
            ),
            request: Some(self.shown_live(text)),
            differences: Vec::new(),
            context: self.recent_context(),
        };
        self.push_drift(drift);
    }

    /// A live message for the report: redacted with the trace's rules (the report may
    /// end up in CI logs), cut for display.
    fn shown_live(&self, text: &str) -> String {
        match self.norm.normalize_live(text) {
            Ok(v) => report::short(&v.to_string()),
            Err(_) => report::short(text),
        }
    }

    /// The server's stdout ended. Before any answer that means it could not start;
    /// later, every answer still awaited is a request it never answered.
    pub(super) fn on_end(&mut self) -> Result<(), VerifyError> {
        if self.server_ended {
            return Ok(());
        }
        self.server_ended = true;
        if !self.heard && self.stopped.is_none() {
            let status = self.exit_status_now();
            let why = if self.opts.url.is_some() {
                "could not be reached, or closed the connection before answering the handshake"
                    .to_owned()
            } else {
                format!("exited before answering the handshake{status}")
            };
            return Err(self.no_handshake(why));
        }
        let pending: Vec<usize> = self
            .state
            .iter()
            .enumerate()
            .filter(|(_, s)| matches!(s, ExState::Pending { .. }))
            .map(|(e, _)| e)
            .collect();
        for e in pending {
            if matches!(
                self.state[e],
                ExState::Pending {
                    deadline: Some(_),
                    ..
                }
            ) {
                self.died_early = true;
                self.settle_without_answer(e, "the server exited before answering".to_owned());
            } else {
                self.state[e] = ExState::Settled;
            }
        }
        Ok(())
    }
}
