//! The live run: one thread drives the script while two reader threads (the child's
//! stdout and stderr, [`crate::live::Live`]) feed it through a channel.
//!
//! The driver sends a step once its waits are met ([`super::script::Step`]), handles
//! every server message as it arrives (an answer is compared at once; a server request
//! is answered from the tape; a notification is counted), and expires answers that
//! take longer than the timeout. Nothing blocks without a deadline except the wait for
//! the server's next line while an answer is pending, and that wait ends at the
//! earliest pending deadline.
//!
//! This file holds the run's state, its waits and its end; `send` puts the recorded
//! client's messages on the wire, `receive` handles what the server says, `edit` reads
//! and edits recorded messages in place.
//!
//! Invariants:
//! - Each client exchange is sent at most once and settled exactly once (compared,
//!   not compared, or expired); a late answer is a note, never a second verdict.
//! - The only edits to a recorded message are its id, its progress token, the request
//!   id a cancellation names and a retry's `requestState` ([`crate::splice`]); the rest
//!   of its bytes go out as recorded.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use reel_mcp::jsonrpc::{Envelope, RpcId};
use reel_mcp::normalize::{MatchKey, Normalizer, Pointer};
use reel_mcp::notifications::{CountVerdict, NotificationCheck, TIMING_NOTE};
use reel_redact::redact::Redactor;
use reel_trace::line::Meta;
use serde_json::Value;

use super::compare::{self, Class, Kind};
use super::error::VerifyError;
use super::options::VerifyOptions;
use super::peer::Peer;
use super::record::LiveRecord;
use super::report::{
    self, ContextEntry, Drift, NotificationCount, Place, RequestCounts, ServerRequestCounts,
    VerifyReport,
};
use super::script::{PING, Script};
use crate::live::LiveOutput;

mod edit;
mod receive;
mod send;

use edit::tool_of;

/// How long the output of a stopped server is still read (its pipes close when it
/// exits, unless a process it started keeps them open).
pub const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(1);

/// Bytes of the server's stderr kept to explain a failed start.
pub const STDERR_TAIL: usize = 4096;

#[derive(Clone, Debug)]
enum ExState {
    NotSent,
    /// Sent; `deadline` is `None` when no answer is awaited (the recording has none).
    Pending {
        live_id: String,
        deadline: Option<Instant>,
    },
    Settled,
}

/// A recorded server→client request, normalised once.
struct RecordedServerRequest {
    exchange: usize,
    method: String,
    key: Option<MatchKey>,
    normalized: Option<Value>,
    used: bool,
}

/// One verify run against one live server.
pub struct Run<'s> {
    script: &'s Script,
    opts: &'s VerifyOptions,
    norm: Normalizer,
    live: Option<Peer>,
    rx: Receiver<LiveOutput>,
    record: Option<LiveRecord>,
    shown_command: String,
    next_id: u64,
    state: Vec<ExState>,
    by_live_id: HashMap<RpcId, usize>,
    live_tokens: HashMap<RpcId, usize>,
    request_states: HashMap<String, String>,
    server_requests: Vec<RecordedServerRequest>,
    server_asked: usize,
    server_forgiven: usize,
    handshake: Option<usize>,
    heard: bool,
    server_ended: bool,
    stopped: Option<String>,
    live_tools: Option<BTreeSet<String>>,
    live_notifications: BTreeMap<String, u64>,
    history: Vec<ContextEntry>,
    stderr_tail: Vec<u8>,
    nonjson: u64,
    foreign_tokens: u64,
    server_exit: Option<i64>,
    restart_without_probe: bool,
    all_sent: bool,
    /// The server's output ended while answers were still awaited.
    died_early: bool,
    report: VerifyReport,
}

impl<'s> Run<'s> {
    /// Prepares the normaliser and the record, and starts the server.
    pub fn start(script: &'s Script, opts: &'s VerifyOptions) -> Result<Run<'s>, VerifyError> {
        let mut notes = script.warnings.clone();
        let redactor = redactor_for(&script.meta, &mut notes);
        let norm = normalizer(opts, &redactor);
        let shown_command = match &opts.url {
            Some(url) => url.clone(),
            None => reel_trace::names::shell_words(&opts.command),
        };
        // The server first: a command that cannot start leaves no trace behind.
        let (tx, rx) = mpsc::channel();
        let live = Peer::start(opts, &shown_command, move |o| tx.send(o).is_ok())?;
        let record = create_record(script, opts, &redactor)?;
        let server_requests = recorded_server_requests(script, &norm);
        let report = first_report(script, opts, notes, record.as_ref());
        Ok(Run {
            script,
            opts,
            norm,
            live: Some(live),
            rx,
            record,
            shown_command,
            next_id: 1,
            state: vec![ExState::NotSent; script.exchanges.len()],
            by_live_id: HashMap::new(),
            live_tokens: HashMap::new(),
            request_states: HashMap::new(),
            server_requests,
            server_asked: 0,
            server_forgiven: 0,
            handshake: None,
            heard: false,
            server_ended: false,
            stopped: None,
            live_tools: None,
            live_notifications: BTreeMap::new(),
            history: Vec::new(),
            stderr_tail: Vec::new(),
            nonjson: 0,
            foreign_tokens: 0,
            server_exit: None,
            restart_without_probe: false,
            all_sent: false,
            died_early: false,
            report,
        })
    }

    /// Plays every step, waits for the last answers, stops the server and reports.
    pub fn play(mut self) -> Result<VerifyReport, VerifyError> {
        match self.play_steps() {
            Ok(()) => {
                self.stop_server();
                Ok(self.finish())
            }
            Err(e) => {
                // The live run's trace still ends properly: it holds the server's stderr.
                let exit = self.stop_and_reap();
                if let Some(r) = self.record.take() {
                    let _ = r.finish(exit);
                }
                Err(e)
            }
        }
    }

    fn play_steps(&mut self) -> Result<(), VerifyError> {
        let script = self.script;
        self.all_sent = true;
        for (k, step) in script.steps.iter().enumerate() {
            self.wait_for_answers(&step.after_responses)?;
            if self.restart_without_probe {
                self.restart()?;
            }
            self.wait_for_server_requests(step.after_server_requests)?;
            if self.stopped.is_some() || self.server_ended {
                self.not_sent(k);
                self.all_sent = false;
                break;
            }
            self.send_step(k);
        }
        if self.all_sent {
            self.wait_for_all_answers()?;
            let recorded = self
                .server_requests
                .iter()
                .filter(|r| r.method != PING)
                .count();
            self.wait_for_server_requests(recorded)?;
        }
        Ok(())
    }

    // --- waiting -------------------------------------------------------------------

    fn wait_for_answers(&mut self, exchanges: &[usize]) -> Result<(), VerifyError> {
        let list = exchanges.to_vec();
        self.pump(
            |r| {
                list.iter().all(|&e| {
                    !matches!(
                        r.state[e],
                        ExState::Pending {
                            deadline: Some(_),
                            ..
                        }
                    )
                })
            },
            None,
        )?;
        Ok(())
    }

    fn wait_for_all_answers(&mut self) -> Result<(), VerifyError> {
        self.pump(
            |r| {
                !r.state.iter().any(|s| {
                    matches!(
                        s,
                        ExState::Pending {
                            deadline: Some(_),
                            ..
                        }
                    )
                })
            },
            None,
        )?;
        Ok(())
    }

    fn wait_for_server_requests(&mut self, recorded_before: usize) -> Result<(), VerifyError> {
        let wanted = recorded_before.saturating_sub(self.server_forgiven);
        if self.server_asked >= wanted || self.stopped.is_some() {
            return Ok(());
        }
        let deadline = Instant::now() + self.opts.timeout;
        if !self.pump(|r| r.server_asked >= wanted, Some(deadline))? {
            // Forgive the shortfall once, so later steps do not wait for it again;
            // the requests never asked are reported at the end.
            self.server_forgiven += wanted - self.server_asked;
        }
        Ok(())
    }

    /// Handles the server's output until `done` holds (true) or `until` passes or the
    /// server is gone (false). Pending answers expire on the way.
    fn pump(
        &mut self,
        done: impl Fn(&Run<'s>) -> bool,
        until: Option<Instant>,
    ) -> Result<bool, VerifyError> {
        loop {
            let now = Instant::now();
            self.expire(now)?;
            if done(self) {
                return Ok(true);
            }
            if self.server_ended || until.is_some_and(|d| now >= d) {
                return Ok(false);
            }
            let next = self
                .state
                .iter()
                .filter_map(|s| match s {
                    ExState::Pending { deadline, .. } => *deadline,
                    _ => None,
                })
                .chain(until)
                .min();
            let event = match next {
                Some(d) => self.rx.recv_timeout(d.saturating_duration_since(now)),
                None => self.rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            match event {
                Ok(o) => self.on_output(o)?,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => self.on_end()?,
            }
        }
    }

    fn expire(&mut self, now: Instant) -> Result<(), VerifyError> {
        let expired: Vec<usize> = self
            .state
            .iter()
            .enumerate()
            .filter(|(_, s)| matches!(s, ExState::Pending { deadline: Some(d), .. } if *d <= now))
            .map(|(e, _)| e)
            .collect();
        for e in expired {
            if Some(e) == self.handshake && !self.heard {
                return Err(self.no_handshake(format!(
                    "did not answer the handshake within {} (--start-timeout)",
                    seconds(self.opts.timeout.max(self.opts.start_timeout))
                )));
            }
            let message = format!(
                "no answer within {} (--timeout)",
                seconds(self.opts.timeout)
            );
            self.settle_without_answer(e, message);
        }
        Ok(())
    }

    fn settle_without_answer(&mut self, e: usize, message: String) {
        let live_id = match &self.state[e] {
            ExState::Pending { live_id, .. } => Some(live_id.clone()),
            _ => None,
        };
        self.state[e] = ExState::Settled;
        self.drift_for(
            e,
            live_id,
            Class::Structural,
            Kind::Unanswered,
            message,
            Vec::new(),
        );
    }

    /// Stops the server and starts it again; the next request is its handshake.
    fn restart(&mut self) -> Result<(), VerifyError> {
        self.restart_without_probe = false;
        self.stop_server();
        self.stop_and_reap();
        self.server_exit = None;
        let (tx, rx) = mpsc::channel();
        let live = Peer::start(self.opts, &self.shown_command, move |o| tx.send(o).is_ok())?;
        self.live = Some(live);
        self.rx = rx;
        self.server_ended = false;
        self.handshake = None;
        self.report.notes.push(
            "the server was restarted after the server/discover probe; the live run's trace holds both processes"
                .to_owned(),
        );
        Ok(())
    }

    // --- sending -------------------------------------------------------------------

    fn exit_status_now(&mut self) -> String {
        // Its stdout closed: it is exiting; `finish` reaps it (or kills it after the
        // grace period) and says how it ended.
        match self.stop_and_reap() {
            Some(code) => format!(" (exit status {code})"),
            None => String::new(),
        }
    }

    /// Stops the server (stdin closed, killed after the grace period) once; its exit
    /// status, remembered for the trace's end line.
    fn stop_and_reap(&mut self) -> Option<i64> {
        if let Some(live) = self.live.take() {
            self.server_exit = live.finish();
        }
        self.server_exit
    }

    fn no_handshake(&self, why: String) -> VerifyError {
        VerifyError::NoHandshake {
            command: self.shown_command.clone(),
            why,
            stderr: String::from_utf8_lossy(&self.stderr_tail).into_owned(),
        }
    }

    // --- the end -------------------------------------------------------------------

    /// Stops the server (stdin closed; killed if still running after
    /// [`crate::live::STOP_GRACE`]), then takes in what it said before it went.
    fn stop_server(&mut self) {
        self.stop_and_reap();
        let deadline = Instant::now() + DRAIN_AFTER_EXIT;
        while !self.server_ended {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match self.rx.recv_timeout(left) {
                Ok(o) => {
                    // Ending now is no failure to start: the run is over.
                    let _ = self.on_output(o);
                }
                Err(_) => break,
            }
        }
    }

    fn finish(mut self) -> VerifyReport {
        let exit = self.stop_and_reap();
        self.report.server_exit = exit;
        for r in &self.server_requests {
            if r.used || r.method == PING {
                continue;
            }
            self.report.server_requests.not_asked += 1;
        }
        let gone: Vec<(usize, String)> = self
            .server_requests
            .iter()
            .filter(|r| !r.used && r.method != PING)
            .map(|r| (r.exchange, r.method.clone()))
            .collect();
        // A server that stopped early had no chance to ask what came later.
        if self.all_sent && !self.died_early {
            for (exchange, method) in gone {
                let line = self.script.request(exchange).line;
                self.push_drift(Drift {
                    class: Class::Structural,
                    kind: Kind::Removed,
                    method: method.clone(),
                    tool: None,
                    line: Some(line),
                    live_id: None,
                    message: format!(
                        "the server no longer asked `{method}` (recorded at line {line})"
                    ),
                    request: Some(report::short(&self.script.request(exchange).raw)),
                    differences: Vec::new(),
                    context: Vec::new(),
                });
            }
        }
        self.compare_notifications();
        if self.nonjson > 0 {
            self.report.notes.push(format!(
                "the server wrote {} stdout line(s) that are not JSON",
                self.nonjson
            ));
        }
        if self.foreign_tokens > 0 {
            self.report.notes.push(format!(
                "{} progress notification(s) carried a token reel never handed out",
                self.foreign_tokens
            ));
        }
        if let Some(r) = self.record.take() {
            match r.finish(exit) {
                Ok(p) => self.report.record = Some(p),
                Err((p, e)) => self.report.notes.push(format!(
                    "{}: the live run's trace is incomplete: {e}; it is readable up to its last complete line",
                    p.display()
                )),
            }
        }
        self.report.settle();
        self.report.exchanges = std::mem::take(&mut self.history);
        self.report
    }

    fn compare_notifications(&mut self) {
        let mut methods: BTreeSet<&String> = self.script.notifications.keys().collect();
        methods.extend(self.live_notifications.keys());
        let counts: Vec<NotificationCount> = methods
            .into_iter()
            .map(|m| NotificationCount {
                method: m.clone(),
                recorded: self.script.notifications.get(m).copied().unwrap_or(0),
                live: self.live_notifications.get(m).copied().unwrap_or(0),
            })
            .collect();
        let complete = self.stopped.is_none() && self.all_sent && !self.died_early;
        let check = self.opts.notifications;
        if check != NotificationCheck::Ignore && !complete {
            self.report.notes.push(
                "notifications were not compared: the session was not played to its end".to_owned(),
            );
        }
        if check != NotificationCheck::Ignore && complete {
            for n in &counts {
                let verdict = check.judge(&n.method, n.recorded, n.live);
                match verdict {
                    CountVerdict::Same => {}
                    CountVerdict::Timing => self.report.notes.push(format!(
                        "{}: sent {} time(s), recorded {} time(s); {TIMING_NOTE}",
                        n.method, n.live, n.recorded
                    )),
                    CountVerdict::Drift => self.push_drift(Drift {
                        class: Class::Output,
                        kind: Kind::NotificationCount,
                        method: n.method.clone(),
                        tool: None,
                        line: None,
                        live_id: None,
                        message: format!(
                            "sent {} time(s), recorded {} time(s) (notifications are compared as counts per method; --notifications ignore skips this)",
                            n.live, n.recorded
                        ),
                        request: None,
                        differences: Vec::new(),
                        context: Vec::new(),
                    }),
                }
            }
        }
        self.report.notifications = counts;
    }

    // --- bookkeeping ---------------------------------------------------------------

    fn call_name(&self, e: usize) -> String {
        let ex = &self.script.exchanges[e];
        match tool_of(&self.script.request(e).raw) {
            Some(t) => format!("{} {t}", ex.method),
            None => ex.method.clone(),
        }
    }

    fn context(&mut self, e: usize, verdict: &str) {
        self.history.push(ContextEntry {
            line: self.script.request(e).line,
            method: self.script.exchanges[e].method.clone(),
            tool: tool_of(&self.script.request(e).raw),
            verdict: verdict.to_owned(),
        });
    }

    fn recent_context(&self) -> Vec<ContextEntry> {
        let from = self.history.len().saturating_sub(report::CONTEXT_SHOWN);
        self.history[from..].to_vec()
    }

    /// Drift on the answer to client exchange `e`: counted against it, and shown with
    /// the exchanges compared before it.
    fn drift_for(
        &mut self,
        e: usize,
        live_id: Option<String>,
        class: Class,
        kind: Kind,
        message: String,
        differences: Vec<Place>,
    ) {
        match class {
            Class::Output => self.report.summary.output_drift += 1,
            Class::Structural => self.report.summary.structural_drift += 1,
        }
        let drift = self.drift_at(e, live_id, class, kind, message, differences);
        self.context(e, class.name());
        self.report.drift.push(drift);
    }

    fn drift_at(
        &self,
        e: usize,
        live_id: Option<String>,
        class: Class,
        kind: Kind,
        message: String,
        differences: Vec<Place>,
    ) -> Drift {
        let request = self.script.request(e);
        // The params as compared: without the client's identity and the ignored fields.
        let params = match self.norm.normalize_recorded(&request.raw) {
            Ok(v) => v.get("params").map(|p| report::short(&p.to_string())),
            Err(_) => Envelope::parse(&request.raw)
                .and_then(|env| env.params.map(|p| report::short(p.get()))),
        };
        Drift {
            class,
            kind,
            method: self.script.exchanges[e].method.clone(),
            tool: tool_of(&request.raw),
            line: Some(request.line),
            live_id,
            message,
            request: params,
            differences,
            context: self.recent_context(),
        }
    }

    fn push_drift(&mut self, d: Drift) {
        self.report.drift.push(d);
    }
}

/// The shared normalisation with the user's `--ignore` and verify's own rules
/// ([`compare::VERIFY_IGNORED`]), redacting as the recording did.
fn normalizer(opts: &VerifyOptions, redactor: &Redactor) -> Normalizer {
    let mut ignore = opts.ignore.clone();
    for (p, _) in compare::VERIFY_IGNORED {
        if let Ok(p) = Pointer::parse(p) {
            ignore.push(p);
        }
    }
    Normalizer::new()
        .with_ignore(ignore)
        .with_redactor(redactor.clone())
}

/// The live run's own trace, unless it is not to be recorded.
fn create_record(
    script: &Script,
    opts: &VerifyOptions,
    redactor: &Redactor,
) -> Result<Option<LiveRecord>, VerifyError> {
    let Some(dir) = &opts.record_dir else {
        return Ok(None);
    };
    let transport = if opts.url.is_some() { "http" } else { "stdio" };
    let label = opts
        .label
        .clone()
        .unwrap_or_else(|| format!("{}-verify", base_label(script)));
    LiveRecord::create(dir, &label, &target_words(opts), redactor, transport)
        .map(Some)
        .map_err(|source| VerifyError::Record {
            dir: dir.clone(),
            source,
        })
}

/// The recorded server→client requests, normalised and keyed, so a live one can be
/// matched with its recorded answer.
fn recorded_server_requests(script: &Script, norm: &Normalizer) -> Vec<RecordedServerRequest> {
    script
        .server_requests
        .iter()
        .map(|&e| {
            let ex = &script.exchanges[e];
            let normalized = norm.normalize_recorded(&script.request(e).raw).ok();
            RecordedServerRequest {
                exchange: e,
                method: ex.method.clone(),
                key: normalized.as_ref().map(MatchKey::of),
                normalized,
                used: false,
            }
        })
        .collect()
}

/// The report before anything was played: what is verified, against what.
fn first_report(
    script: &Script,
    opts: &VerifyOptions,
    notes: Vec<String>,
    record: Option<&LiveRecord>,
) -> VerifyReport {
    VerifyReport {
        schema: report::SCHEMA,
        trace: script.path.clone(),
        session: opts.session.max(1),
        command: target_words(opts),
        timeout_ms: u64::try_from(opts.timeout.as_millis()).unwrap_or(u64::MAX),
        result: "same",
        exit_code: 0,
        summary: RequestCounts {
            requests: script.request_count() as u64,
            ..RequestCounts::default()
        },
        server_requests: ServerRequestCounts::default(),
        notifications: Vec::new(),
        drift: Vec::new(),
        notes,
        record: record.map(|r| r.path().to_owned()),
        server_exit: None,
        exchanges: Vec::new(),
    }
}

/// The recording's redaction rules, so a live answer is redacted exactly as the
/// recorded one was. A trace without `meta.redaction` was not redacted: nothing is.
fn redactor_for(meta: &Meta, notes: &mut Vec<String>) -> Redactor {
    let Some(desc) = meta.redaction.as_ref() else {
        return Redactor::disabled();
    };
    match Redactor::from_description(desc) {
        Ok(r) => r,
        Err(e) => {
            notes.push(format!(
                "the trace's redaction rules cannot be rebuilt ({e}); the built-in rules are used, so a redacted value may show as drift"
            ));
            Redactor::builtin()
        }
    }
}

fn base_label(script: &Script) -> String {
    script.meta.label.clone().unwrap_or_else(|| {
        script
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "mcp".into())
    })
}

fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s} s")
    }
}

/// What verify talks to, as the trace's `meta.command` and the report's `command`
/// show it: the server's command, or its URL.
fn target_words(opts: &VerifyOptions) -> Vec<String> {
    match &opts.url {
        Some(url) => vec![url.clone()],
        None => opts.command.clone(),
    }
}
