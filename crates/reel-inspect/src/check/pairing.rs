//! JSON-RPC in message lines: whether `raw` is a JSON-RPC 2.0 message (or a batch of
//! them), and which request each response answers. Requests pair with responses by
//! direction, MCP session and id through the crate's
//! [`Pairer`](reel_trace::jsonrpc::Pairer), and only within one trace session, so a
//! session's requests still pending when it ends are unanswered. A
//! `notifications/cancelled` closes the request it names, and up to
//! [`MAX_CANCELLED`] cancelled ids are remembered so that a late answer is not called
//! an orphan. The pending requests are the only state of a check that grows with the
//! file. Over HTTP, an error without an id (a 400 refusing a `server/discover` probe)
//! answers the request its HTTP request carried ([`reel_trace::jsonrpc::HttpCarried`], the
//! rule play and verify pair by).

use serde::Deserialize;
use serde_json::value::RawValue;

use super::checker::Checker;
use super::members::{describe_text, snippet};
use super::options::MAX_CANCELLED;
use super::rules::Rule;
use super::state::{Loc, PendingRequest};
use reel_trace::jsonrpc::{Envelope, PairKey, Paired, RpcId, RpcKind};
use reel_trace::line::Dir;

impl Checker {
    /// Ends pairing with the session: its requests still pending are unanswered, and
    /// its cancellations are forgotten.
    pub(super) fn close_pairing(&mut self) {
        let mut pending = self.pairer.drain_pending();
        pending.sort_by_key(|(_, p)| p.loc);
        for (key, req) in pending {
            let side = match key.request_dir {
                Dir::Out => "server request",
                _ => "request",
            };
            let session = key
                .session
                .as_deref()
                .map(|s| format!(" of MCP session {}", snippet(s)))
                .unwrap_or_default();
            self.report(
                Some(req.loc),
                Rule::UnansweredRequest,
                format!(
                    "{side} {} (id {}){session} got no response before the session ended",
                    snippet(&req.method),
                    key.id
                ),
            );
        }
        self.cancelled.clear();
    }

    pub(super) fn batch(&mut self, loc: Loc, session: Option<&str>, dir: Dir, text: &str) {
        let elements: Vec<&RawValue> = match serde_json::from_str(text) {
            Ok(e) => e,
            Err(e) => {
                self.report(
                    Some(loc),
                    Rule::NotJsonrpc,
                    format!("raw batch unreadable: {e}"),
                );
                return;
            }
        };
        if elements.is_empty() {
            self.report(
                Some(loc),
                Rule::NotJsonrpc,
                "raw is an empty batch `[]`, which JSON-RPC 2.0 does not allow".into(),
            );
        }
        for (i, element) in elements.iter().enumerate() {
            let element = element.get();
            if element.trim_start().starts_with('{') {
                // A batch travels on one HTTP request: its id-less answer names no
                // element, so HTTP pairing does not apply.
                self.envelope(loc, session, dir, element, Some(i), 0);
            } else {
                self.report(
                    Some(loc),
                    Rule::NotJsonrpc,
                    format!(
                        "batch element {i} is {}, not a JSON-RPC 2.0 message",
                        describe_text(element)
                    ),
                );
            }
        }
    }

    pub(super) fn envelope(
        &mut self,
        loc: Loc,
        session: Option<&str>,
        dir: Dir,
        text: &str,
        element: Option<usize>,
        http_req: u64,
    ) {
        let at = element.map_or(String::from("raw"), |i| format!("batch element {i}"));
        let env: Envelope<'_> = match serde_json::from_str(text) {
            Ok(env) => env,
            Err(e) => {
                self.report(
                    Some(loc),
                    Rule::NotJsonrpc,
                    format!("{at} cannot be read as a JSON-RPC message: {e}"),
                );
                return;
            }
        };
        if !self.judge_shape(loc, &at, &env) {
            return;
        }
        if env.kind() == RpcKind::Notification
            && env.method.as_deref() == Some("notifications/cancelled")
        {
            self.cancel(session, dir, &env);
            return;
        }
        self.pair(loc, session, dir, &at, &env, http_req);
    }

    /// Reports what keeps `env` from being a JSON-RPC 2.0 message; false when it is
    /// neither a request, a notification nor a response (nothing to pair).
    fn judge_shape(&mut self, loc: Loc, at: &str, env: &Envelope<'_>) -> bool {
        if !env.is_v2() {
            let got = env
                .jsonrpc
                .map_or(String::from("no `jsonrpc` member"), |v| {
                    format!("\"jsonrpc\": {}", snippet(v.get()))
                });
            self.report(
                Some(loc),
                Rule::NotJsonrpc,
                format!("{at} has {got}; a JSON-RPC 2.0 message has \"jsonrpc\": \"2.0\""),
            );
        }
        let kind = env.kind();
        if kind == RpcKind::Invalid {
            let present: Vec<&str> = [
                ("method", env.method.is_some()),
                ("id", env.id.is_some()),
                ("result", env.result.is_some()),
                ("error", env.error.is_some()),
            ]
            .iter()
            .filter(|(_, p)| *p)
            .map(|(n, _)| *n)
            .collect();
            self.report(
                Some(loc),
                Rule::NotJsonrpc,
                format!(
                    "{at} is neither a request (method + non-null id), a notification \
                     (method, no id) nor a response (id + result or error); it has: {}",
                    if present.is_empty() {
                        "none of these".to_owned()
                    } else {
                        present.join(", ")
                    }
                ),
            );
            return false;
        }
        true
    }

    /// Offers `env` to the pairer: a request reusing a pending id, and a response to
    /// no pending request (not cancelled, not an error answering an unreadable request),
    /// are reported.
    fn pair(
        &mut self,
        loc: Loc,
        session: Option<&str>,
        dir: Dir,
        at: &str,
        env: &Envelope<'_>,
        http_req: u64,
    ) {
        let kind = env.kind();
        let method = env.method.as_deref().unwrap_or_default().to_owned();
        match self
            .pairer
            .offer_via(session, dir, env, http_req, || PendingRequest {
                loc,
                method,
            }) {
            Paired::DuplicatePending(old) => {
                let id = env.rpc_id().map(|i| i.to_string()).unwrap_or_default();
                self.report(
                    Some(loc),
                    Rule::DuplicateRequestId,
                    format!(
                        "request id {id} reuses the id of {} ({}) which is still unanswered: \
                         ids must be unique among pending requests, so that one can no \
                         longer be paired",
                        self.place(old.loc),
                        snippet(&old.method)
                    ),
                );
            }
            Paired::Orphan => {
                let id = env.rpc_id();
                let cancelled = id.as_ref().is_some_and(|id| {
                    self.cancelled
                        .contains(&PairKey::for_response(session, dir, id.clone()))
                });
                // An error answering an unreadable request carries id null by design.
                if cancelled || (kind == RpcKind::Error && id == Some(RpcId::Null)) {
                    return;
                }
                let id = id.map_or_else(|| "(not a valid id)".to_owned(), |i| i.to_string());
                let from = if dir == Dir::Out { "client" } else { "server" };
                self.report(
                    Some(loc),
                    Rule::OrphanResponse,
                    format!(
                        "{at}: response to id {id} has no pending {from} request in this \
                         session (never sent, or already answered)"
                    ),
                );
            }
            Paired::Opened | Paired::Closed(_) | Paired::Ignored => {}
        }
    }

    /// `notifications/cancelled`: the request it names needs no response any more.
    fn cancel(&mut self, session: Option<&str>, dir: Dir, env: &Envelope<'_>) {
        #[derive(Deserialize)]
        struct Params<'a> {
            #[serde(borrow, rename = "requestId", default)]
            request_id: Option<&'a RawValue>,
        }
        let Some(params) = env.params else { return };
        let Ok(Params {
            request_id: Some(id),
        }) = serde_json::from_str::<Params<'_>>(params.get())
        else {
            return;
        };
        let Ok(null) = serde_json::from_str::<&RawValue>("null") else {
            return;
        };
        // Offer a stand-in answer from the other side: it closes the pending request.
        let answer = Envelope {
            id: Some(id),
            result: Some(null),
            ..Envelope::default()
        };
        let other = if dir == Dir::In { Dir::Out } else { Dir::In };
        self.pairer
            .offer(session, other, &answer, || PendingRequest {
                loc: Loc { file: 0, line: 0 },
                method: String::new(),
            });
        if let Some(id) = RpcId::from_raw(id) {
            if self.cancelled.len() < MAX_CANCELLED {
                self.cancelled
                    .insert(PairKey::for_response(session, other, id));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::check::Rule;
    use crate::check::testing::{END, META, T, check, msg, rules, trace};

    #[test]
    fn ids_pair_per_direction_session_and_type() {
        let r = check(&trace(&[
            &msg(T, "in", r#"{"jsonrpc":"2.0","id":1,"method":"a"}"#),
            &msg(T, "out", r#"{"jsonrpc":"2.0","id":"1","result":{}}"#),
            &msg(T, "in", r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
        ]));
        assert_eq!(
            rules(&r),
            vec![
                (Rule::UnansweredRequest, Some(2)),
                (Rule::OrphanResponse, Some(3)),
                (Rule::OrphanResponse, Some(4)),
            ]
        );
    }

    #[test]
    fn cancelled_requests_need_no_answer() {
        let r = check(&trace(&[
            &msg(T, "in", r#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#),
            &msg(
                T,
                "in",
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#,
            ),
            &msg(T, "out", r#"{"jsonrpc":"2.0","id":7,"result":{}}"#),
        ]));
        assert_eq!(rules(&r), vec![]);
    }

    #[test]
    fn an_http_refusal_without_an_id_answers_the_probe_its_request_carried() {
        let line = |dir: &str, session: &str, req: u64, raw: &str| {
            format!(
                r#"{{"t":"{T}","dir":"{dir}","session":"{session}","raw":{raw},"http":{{"req":{req},"status":400}}}}"#
            )
        };
        let probe = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover"}"#;
        let refusal = r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}"#;
        let r = check(&trace(&[
            &line("in", "reel:conn-1", 1, probe),
            &line("out", "reel:conn-1", 1, refusal),
        ]));
        assert_eq!(rules(&r), vec![]);
        // On another HTTP request it answers nothing, and the probe stays unanswered.
        let r = check(&trace(&[
            &line("in", "reel:conn-1", 1, probe),
            &line("out", "reel:conn-1", 2, refusal),
        ]));
        assert_eq!(rules(&r), vec![(Rule::UnansweredRequest, Some(2))]);
    }

    #[test]
    fn pairing_restarts_with_each_session() {
        let text = format!(
            "{META}\n{}\n{END}\n{META}\n{}\n{END}\n",
            msg(T, "in", r#"{"jsonrpc":"2.0","id":1,"method":"a"}"#),
            msg(T, "out", r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
        );
        let r = check(&text);
        assert_eq!(
            rules(&r),
            vec![
                (Rule::UnansweredRequest, Some(2)),
                (Rule::SeveralSessions, Some(4)),
                (Rule::OrphanResponse, Some(5)),
            ]
        );
        assert_eq!(r.sessions, 2);
    }
}
