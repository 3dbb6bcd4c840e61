//! Exchanges: a request, its response, and what the other side said in between.
//!
//! An exchange is keyed like its pairing (session, request direction, id). Messages that
//! travel the other way while it is open belong to it:
//! - `notifications/progress` whose token is the one the request handed out;
//! - `notifications/cancelled` naming the request (it may come from either side);
//! - server→client requests (sampling, elicitation, roots) and other notifications sent
//!   while exactly this exchange, or it as the most recently opened one, is pending in
//!   that session — the order replay needs to re-send them "before the result they
//!   preceded".
//!
//! Anything that belongs to no open exchange is *unsolicited* (list_changed, logging
//! between calls) and is kept in arrival order.

use std::collections::HashMap;

use reel_trace::Dir;

use crate::jsonrpc::{
    Envelope, PairKey, Paired, Pairer, RpcId, RpcKind, cancelled_request_id,
    notification_progress_token, request_progress_token,
};

/// Where a message is in the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MessageRef {
    /// 0-based index of the message among the messages offered to the builder.
    pub index: usize,
    /// 1-based line number in its file (or any caller position).
    pub line: u64,
}

/// How an exchange ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// No response (yet).
    Pending,
    /// A `result`.
    Result,
    /// An `error`, with its code when it is a number.
    Error(Option<i64>),
}

/// A message attached to an exchange.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attached {
    /// Where it is.
    pub at: MessageRef,
    /// Its direction.
    pub dir: Dir,
    /// Its method, when it has one (notifications and nested requests).
    pub method: Option<String>,
    /// True when it is a request (it has its own exchange too).
    pub is_request: bool,
}

/// One request with everything that belongs to it.
#[derive(Clone, Debug)]
pub struct Exchange {
    /// The session, `None` on single-session traces.
    pub session: Option<String>,
    /// Direction of the request.
    pub request_dir: Dir,
    /// The request id.
    pub id: RpcId,
    /// The request method.
    pub method: String,
    /// The request.
    pub request: MessageRef,
    /// The response, if any.
    pub response: Option<MessageRef>,
    /// How it ended.
    pub outcome: Outcome,
    /// Progress token handed out by the request.
    pub progress_token: Option<RpcId>,
    /// Messages of the other side that came while it was open, in order.
    pub attached: Vec<Attached>,
    /// True when a `notifications/cancelled` named it.
    pub cancelled: bool,
}

/// A message that belongs to no exchange.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsolicited {
    /// Where it is.
    pub at: MessageRef,
    /// Session.
    pub session: Option<String>,
    /// Direction.
    pub dir: Dir,
    /// Method, when it has one.
    pub method: Option<String>,
    /// Its JSON-RPC class (notification, orphan response, invalid, batch).
    pub kind: RpcKind,
}

/// What the builder needs to know of one message: its envelope (`params` is not read)
/// and the three tokens that tie messages to exchanges.
#[derive(Debug)]
pub struct Facts<'a> {
    /// The envelope: class, id, method, and `error` for its code.
    pub env: Envelope<'a>,
    /// `params._meta.progressToken` of a request.
    pub request_progress_token: Option<RpcId>,
    /// `params.progressToken` of a `notifications/progress`.
    pub notification_progress_token: Option<RpcId>,
    /// `params.requestId` of a `notifications/cancelled`.
    pub cancelled_request: Option<RpcId>,
}

impl<'a> Facts<'a> {
    /// The facts of a parsed envelope.
    pub fn of(env: Envelope<'a>) -> Facts<'a> {
        Facts {
            request_progress_token: request_progress_token(&env),
            notification_progress_token: notification_progress_token(&env),
            cancelled_request: cancelled_request_id(&env),
            env,
        }
    }
}

/// What offering one message to [`ExchangeBuilder::push`] did, so that a caller can
/// follow the exchanges as they form (replay indexes a tape while it is still reading it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pushed {
    /// The exchange this message opened (it is a request).
    pub opened: Option<usize>,
    /// The exchange this message closed (it is that exchange's response).
    pub closed: Option<usize>,
    /// The exchange this message was attached to (it came while that one was open).
    pub attached_to: Option<usize>,
    /// True when it belongs to no exchange (it was added to the unsolicited list).
    pub unsolicited: bool,
}

/// Exchanges a builder holds before a reader that keeps its own record of each may
/// start a fresh one ([`ExchangeBuilder::settled`]): small, so the storage is reused
/// from the heap rather than mapped afresh.
pub const SETTLE_AFTER: usize = 256;

/// Builds exchanges from messages offered in trace order.
///
/// It keeps every exchange it formed. A reader of a long trace that keeps what it needs
/// of each exchange itself starts a fresh builder whenever [`ExchangeBuilder::settled`]
/// says no pairing can be lost by it; a trace that never has a moment without an open
/// exchange keeps its builder for the whole read.
#[derive(Default)]
pub struct ExchangeBuilder {
    pairer: Pairer<usize>,
    exchanges: Vec<Exchange>,
    /// Open exchanges per (session, request dir), most recent last.
    open: HashMap<(Option<String>, Dir), Vec<usize>>,
    progress: HashMap<(Option<String>, RpcId), usize>,
    unsolicited: Vec<Unsolicited>,
    offered: usize,
}

impl ExchangeBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Offers one message line (`dir` in/out) with its `raw` text, and says what it did.
    pub fn push(&mut self, session: Option<&str>, dir: Dir, raw: &str, line: u64) -> Pushed {
        match Envelope::parse(raw) {
            None => self.push_facts(session, dir, Err(Envelope::kind_of(raw)), line),
            Some(env) => self.push_facts(session, dir, Ok(&Facts::of(env)), line),
        }
    }

    /// [`ExchangeBuilder::push`] for a caller that has read the message already (replay
    /// scans each line once for its keys and hands the same facts over); `Err` carries
    /// the class of a payload that is no JSON-RPC object.
    pub fn push_facts(
        &mut self,
        session: Option<&str>,
        dir: Dir,
        facts: Result<&Facts<'_>, RpcKind>,
        line: u64,
    ) -> Pushed {
        self.push_facts_via(session, dir, facts, line, 0)
    }

    /// [`ExchangeBuilder::push_facts`] for a message that came on HTTP request `req`
    /// (`http.req` of reel's HTTP traces; 0 when none is recorded): an id-less refusal
    /// then closes the client request that HTTP request carried, by the rule of
    /// [`reel_trace::jsonrpc::HttpCarried`].
    pub fn push_facts_via(
        &mut self,
        session: Option<&str>,
        dir: Dir,
        facts: Result<&Facts<'_>, RpcKind>,
        line: u64,
        req: u64,
    ) -> Pushed {
        let at = MessageRef {
            index: self.offered,
            line,
        };
        self.offered += 1;
        let (exchanges, unsolicited) = (self.exchanges.len(), self.unsolicited.len());
        let mut pushed = Pushed::default();
        match facts {
            Err(kind) => self.unsolicited(at, session, dir, None, kind),
            Ok(f) => {
                let kind = f.env.kind();
                match kind {
                    RpcKind::Request => {
                        pushed.attached_to = self.open_exchange(at, session, dir, f, req);
                    }
                    RpcKind::Response | RpcKind::Error => {
                        pushed.closed = self.close_exchange(at, session, dir, &f.env, req);
                    }
                    RpcKind::Notification => {
                        pushed.attached_to = self.notification(at, session, dir, f);
                    }
                    _ => self.unsolicited(at, session, dir, None, kind),
                }
            }
        }
        if self.exchanges.len() > exchanges {
            pushed.opened = Some(exchanges);
        }
        pushed.unsolicited = self.unsolicited.len() > unsolicited;
        pushed
    }

    /// True when no exchange is open: every request has had its response.
    pub fn is_idle(&self) -> bool {
        self.open.values().all(Vec::is_empty)
    }

    /// True when none is open and [`SETTLE_AFTER`] exchanges have formed: a fresh
    /// builder loses no pairing now, and the old one's storage is let go.
    pub fn settled(&self) -> bool {
        self.exchanges.len() >= SETTLE_AFTER && self.is_idle()
    }

    /// The exchanges formed so far, in order of their requests.
    pub fn exchanges(&self) -> &[Exchange] {
        &self.exchanges
    }

    /// The unsolicited messages so far, in arrival order.
    pub fn unsolicited_messages(&self) -> &[Unsolicited] {
        &self.unsolicited
    }

    fn open_exchange(
        &mut self,
        at: MessageRef,
        session: Option<&str>,
        dir: Dir,
        facts: &Facts<'_>,
        req: u64,
    ) -> Option<usize> {
        let env = &facts.env;
        let idx = self.exchanges.len();
        let method = env.method.as_deref().unwrap_or_default().to_owned();
        // A server request while a client request is open is part of that exchange.
        let parent = self.attach_to_open(session, dir, at, Some(&method), true);
        match self.pairer.offer_via(session, dir, env, req, || idx) {
            Paired::Opened | Paired::DuplicatePending(_) => {}
            _ => return parent,
        }
        let id = env.rpc_id().unwrap_or(RpcId::Null);
        let progress_token = facts.request_progress_token.clone();
        if let Some(tok) = &progress_token {
            self.progress
                .insert((session.map(str::to_owned), tok.clone()), idx);
        }
        self.open
            .entry((session.map(str::to_owned), dir))
            .or_default()
            .push(idx);
        self.exchanges.push(Exchange {
            session: session.map(str::to_owned),
            request_dir: dir,
            id,
            method,
            request: at,
            response: None,
            outcome: Outcome::Pending,
            progress_token,
            attached: Vec::new(),
            cancelled: false,
        });
        parent
    }

    fn close_exchange(
        &mut self,
        at: MessageRef,
        session: Option<&str>,
        dir: Dir,
        env: &Envelope<'_>,
        req: u64,
    ) -> Option<usize> {
        match self.pairer.offer_via(session, dir, env, req, || 0) {
            Paired::Closed(idx) => {
                let ex = &mut self.exchanges[idx];
                ex.response = Some(at);
                ex.outcome = match env.kind() {
                    RpcKind::Error => Outcome::Error(env.error_parts().and_then(|(c, _)| c)),
                    _ => Outcome::Result,
                };
                let key = (ex.session.clone(), ex.request_dir);
                if let Some(open) = self.open.get_mut(&key) {
                    open.retain(|&i| i != idx);
                }
                if let Some(tok) = ex.progress_token.clone() {
                    self.progress.remove(&(ex.session.clone(), tok));
                }
                Some(idx)
            }
            _ => {
                self.unsolicited(at, session, dir, None, env.kind());
                None
            }
        }
    }

    fn notification(
        &mut self,
        at: MessageRef,
        session: Option<&str>,
        dir: Dir,
        facts: &Facts<'_>,
    ) -> Option<usize> {
        let method = facts.env.method.as_deref().unwrap_or_default();
        let target = match method {
            crate::jsonrpc::methods::PROGRESS => {
                facts.notification_progress_token.clone().and_then(|tok| {
                    self.progress
                        .get(&(session.map(str::to_owned), tok))
                        .copied()
                })
            }
            crate::jsonrpc::methods::CANCELLED => facts.cancelled_request.clone().and_then(|id| {
                // The canceller is the requester, so the request travelled the same way.
                let key = PairKey {
                    session: session.map(str::to_owned),
                    request_dir: dir,
                    id,
                };
                self.pairer
                    .pending()
                    .find(|(k, _)| **k == key)
                    .map(|(_, &i)| i)
            }),
            _ => None,
        };
        if let Some(idx) = target {
            let ex = &mut self.exchanges[idx];
            if method == crate::jsonrpc::methods::CANCELLED {
                ex.cancelled = true;
            }
            ex.attached.push(Attached {
                at,
                dir,
                method: Some(method.to_owned()),
                is_request: false,
            });
            return Some(idx);
        }
        let parent = self.attach_to_open(session, dir, at, Some(method), false);
        if parent.is_none() {
            self.unsolicited(at, session, dir, Some(method), RpcKind::Notification);
        }
        parent
    }

    /// Attaches a message travelling `dir` to the most recent exchange opened the other
    /// way in the same session and returns it; `None` when none is open.
    fn attach_to_open(
        &mut self,
        session: Option<&str>,
        dir: Dir,
        at: MessageRef,
        method: Option<&str>,
        is_request: bool,
    ) -> Option<usize> {
        let other = match dir {
            Dir::In => Dir::Out,
            _ => Dir::In,
        };
        let &idx = self
            .open
            .get(&(session.map(str::to_owned), other))
            .and_then(|v| v.last())?;
        self.exchanges[idx].attached.push(Attached {
            at,
            dir,
            method: method.map(str::to_owned),
            is_request,
        });
        Some(idx)
    }

    fn unsolicited(
        &mut self,
        at: MessageRef,
        session: Option<&str>,
        dir: Dir,
        method: Option<&str>,
        kind: RpcKind,
    ) {
        self.unsolicited.push(Unsolicited {
            at,
            session: session.map(str::to_owned),
            dir,
            method: method.map(str::to_owned),
            kind,
        });
    }

    /// The exchanges (in order of their requests) and the unsolicited messages.
    pub fn finish(self) -> (Vec<Exchange>, Vec<Unsolicited>) {
        (self.exchanges, self.unsolicited)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(lines: &[(Dir, &str)]) -> (Vec<Exchange>, Vec<Unsolicited>) {
        let mut b = ExchangeBuilder::new();
        for (i, (dir, raw)) in lines.iter().enumerate() {
            b.push(None, *dir, raw, i as u64 + 1);
        }
        b.finish()
    }

    #[test]
    fn progress_and_server_requests_attach_to_their_call() {
        let (ex, un) = build(&[
            (
                Dir::In,
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p"}}}"#,
            ),
            (
                Dir::In,
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fast"}}"#,
            ),
            (
                Dir::Out,
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}"#,
            ),
            (
                Dir::Out,
                r#"{"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{}}"#,
            ),
            (
                Dir::In,
                r#"{"jsonrpc":"2.0","id":0,"result":{"role":"assistant"}}"#,
            ),
            (Dir::Out, r#"{"jsonrpc":"2.0","id":2,"result":{}}"#),
            (
                Dir::Out,
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"x"}}"#,
            ),
            (
                Dir::Out,
                r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#,
            ),
        ]);
        assert_eq!(ex.len(), 3);
        // The progress belongs to the call that handed out the token, not the latest one.
        assert_eq!(ex[0].attached.len(), 1);
        assert_eq!(
            ex[0].attached[0].method.as_deref(),
            Some("notifications/progress")
        );
        assert_eq!(ex[0].outcome, Outcome::Error(Some(-32000)));
        // The sampling request came while call 2 was the latest open one.
        assert!(ex[1].attached.iter().any(|a| a.is_request));
        assert_eq!(ex[2].method, "sampling/createMessage");
        assert_eq!(ex[2].request_dir, Dir::Out);
        assert_eq!(ex[2].response.map(|r| r.line), Some(5));
        assert_eq!(un.len(), 1);
        assert_eq!(
            un[0].method.as_deref(),
            Some("notifications/tools/list_changed")
        );
    }

    #[test]
    fn a_builder_is_settled_once_enough_formed_and_none_is_open() {
        let mut b = ExchangeBuilder::new();
        let mut line = 0;
        let mut push = |b: &mut ExchangeBuilder, dir: Dir, raw: String| {
            line += 1;
            b.push(None, dir, &raw, line);
        };
        for id in 0..SETTLE_AFTER {
            push(
                &mut b,
                Dir::In,
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#),
            );
            assert!(!b.settled(), "{id}: too few, or one open");
            push(
                &mut b,
                Dir::Out,
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
            );
        }
        assert!(b.is_idle() && b.settled());
        push(
            &mut b,
            Dir::In,
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/call"}"#.into(),
        );
        assert!(!b.is_idle() && !b.settled(), "one is open");
    }

    #[test]
    fn an_id_less_http_refusal_closes_the_request_its_http_request_carried() {
        let mut b = ExchangeBuilder::new();
        let probe = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover"}"#;
        let refusal =
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request"}}"#;
        let facts = |raw: &'static str| {
            let env = Envelope::parse(raw).unwrap();
            Facts {
                request_progress_token: None,
                notification_progress_token: None,
                cancelled_request: None,
                env,
            }
        };
        let s = Some("reel:conn-1");
        let opened = b.push_facts_via(s, Dir::In, Ok(&facts(probe)), 2, 1);
        assert_eq!(opened.opened, Some(0));
        let closed = b.push_facts_via(s, Dir::Out, Ok(&facts(refusal)), 3, 1);
        assert_eq!(closed.closed, Some(0));
        assert_eq!(b.exchanges()[0].outcome, Outcome::Error(Some(-32000)));
        assert!(b.is_idle());
    }

    #[test]
    fn cancellation_marks_the_exchange() {
        let (ex, _) = build(&[
            (
                Dir::In,
                r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{}}"#,
            ),
            (
                Dir::In,
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}"#,
            ),
        ]);
        assert!(ex[0].cancelled);
        assert_eq!(ex[0].outcome, Outcome::Pending);
    }

    #[test]
    fn sessions_do_not_mix() {
        let mut b = ExchangeBuilder::new();
        b.push(
            Some("A"),
            Dir::In,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            1,
        );
        b.push(
            Some("B"),
            Dir::Out,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            2,
        );
        b.push(
            Some("A"),
            Dir::Out,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            3,
        );
        let (ex, un) = b.finish();
        assert_eq!(ex[0].response.map(|r| r.line), Some(3));
        assert_eq!(un.len(), 1);
        assert_eq!(un[0].kind, RpcKind::Response);
    }

    #[test]
    fn push_says_what_each_message_did() {
        let mut b = ExchangeBuilder::new();
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1}}}"#;
        let opened = b.push(None, Dir::In, call, 1);
        assert_eq!(opened.opened, Some(0));
        assert_eq!(opened.attached_to, None);
        let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#;
        assert_eq!(b.push(None, Dir::Out, progress, 2).attached_to, Some(0));
        let sampling = r#"{"jsonrpc":"2.0","id":0,"method":"sampling/createMessage"}"#;
        let nested = b.push(None, Dir::Out, sampling, 3);
        assert_eq!((nested.opened, nested.attached_to), (Some(1), Some(0)));
        assert_eq!(
            b.push(None, Dir::In, r#"{"jsonrpc":"2.0","id":0,"result":{}}"#, 4)
                .closed,
            Some(1)
        );
        assert_eq!(
            b.push(None, Dir::Out, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, 5)
                .closed,
            Some(0)
        );
        let later = b.push(
            None,
            Dir::Out,
            r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#,
            6,
        );
        assert!(later.unsolicited);
        assert_eq!(later.attached_to, None);
        assert_eq!(b.exchanges().len(), 2);
        assert_eq!(b.unsolicited_messages().len(), 1);
    }
}
