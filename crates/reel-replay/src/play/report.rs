//! What `reel play` tells the person running it (stderr) and what a miss tells the
//! client (a JSON-RPC error). Formatting only: the facts come from the server.
//!
//! Limits, named here so `--help` and tests can rely on them: at most
//! [`NEAREST_SHOWN`] candidates per miss, each with at most [`DIFFERENCES_SHOWN`]
//! differing pointers, at most [`UNUSED_SHOWN`] unused exchanges in the summary, request
//! texts cut to [`REQUEST_CHARS`] characters.

use std::fmt::Write as _;
use std::path::PathBuf;

use reel_mcp::normalize::{Difference, shorten};
use serde::Serialize;

/// Candidates shown per miss.
pub const NEAREST_SHOWN: usize = 3;
/// Differences shown per candidate.
pub const DIFFERENCES_SHOWN: usize = 8;
/// Unused exchanges listed in the summary.
pub const UNUSED_SHOWN: usize = 20;
/// Characters of a request shown.
pub const REQUEST_CHARS: usize = 240;

/// `error.code` of a miss whose method the tape knows (an implementation-defined code of
/// the JSON-RPC server-error range, -32000…-32019, that no MCP revision uses).
pub const MISS_CODE: i64 = -32010;
/// What a replay found; the CLI maps it to an exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlayVerdict {
    /// Every request answered, every server request answered as recorded.
    Clean,
    /// Requests the tape could not answer.
    Misses,
    /// The client answered a server→client request differently than recorded.
    ClientDrift,
    /// `--session` named a session the trace lacks.
    NoSuchSession,
}

/// `error.code` for a line that is not JSON.
pub const PARSE_ERROR_CODE: i64 = -32700;
/// `error.code` for JSON that is not a request (batches included).
pub const INVALID_REQUEST_CODE: i64 = -32600;

/// A recorded request close to one the tape could not answer.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// `file:line` of the recorded request.
    pub location: String,
    /// Its line number.
    pub line: u64,
    /// A live request already took it.
    pub consumed: bool,
    /// Where it differs from the live request (left: recorded, right: live).
    pub differences: Vec<Difference>,
}

/// A request the tape could not answer.
#[derive(Clone, Debug)]
pub struct Miss {
    /// The method.
    pub method: String,
    /// The live id, as JSON text.
    pub id: String,
    /// The request (normalised params), cut for display.
    pub request: String,
    /// Why: no such method, nothing equal, all equal ones used, out of order (strict).
    pub reason: String,
    /// The nearest recorded requests of the same method, best first.
    pub nearest: Vec<Candidate>,
}

impl Miss {
    /// The text printed on stderr.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "reel play: miss: {} (id {}): {}\n  request: {}\n",
            self.method, self.id, self.reason, self.request
        );
        for (i, c) in self.nearest.iter().enumerate() {
            let used = if c.consumed { " (already used)" } else { "" };
            let label = if i == 0 { "nearest" } else { "also" };
            let _ = writeln!(
                s,
                "  {label}: {}{used}, {} difference{}",
                c.location,
                c.differences.len(),
                if c.differences.len() == 1 { "" } else { "s" }
            );
            if i == 0 {
                for d in c.differences.iter().take(DIFFERENCES_SHOWN) {
                    let _ = writeln!(s, "    {d}");
                }
                if c.differences.len() > DIFFERENCES_SHOWN {
                    let _ = writeln!(s, "    … {} more", c.differences.len() - DIFFERENCES_SHOWN);
                }
            }
        }
        s
    }

    /// The JSON-RPC error object sent to the client. It names the method and the
    /// differing pointers, never values (they may hold what redaction would remove).
    pub fn error_object(&self, code: i64) -> serde_json::Value {
        let mut message = format!(
            "reel play: no recorded answer for {}: {}",
            self.method, self.reason
        );
        let nearest = self.nearest.first().map(|c| {
            let pointers: Vec<&str> = c
                .differences
                .iter()
                .take(DIFFERENCES_SHOWN)
                .map(|d| d.pointer.as_str())
                .collect();
            let _ = write!(
                message,
                " (nearest recorded: line {}, differs at {})",
                c.line,
                if pointers.is_empty() {
                    "nothing after normalisation".to_owned()
                } else {
                    pointers.join(", ")
                }
            );
            serde_json::json!({"line": c.line, "differences": pointers})
        });
        serde_json::json!({
            "code": code,
            "message": message,
            "data": {"reel": "miss", "method": self.method, "nearest": nearest},
        })
    }
}

/// A recorded client exchange no live request took.
#[derive(Clone, Debug, Serialize)]
pub struct Unused {
    /// The method.
    pub method: String,
    /// `file:line`.
    pub location: String,
    /// The params, cut for display.
    pub params: String,
}

/// What a replay did, for the summary and the exit code.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    /// Requests answered from the tape (results and recorded errors).
    pub answered: u64,
    /// Of those, list reads answered again from an answer another request had used
    /// (the client listed more often than the recorded one).
    pub answered_again: u64,
    /// Requests answered generically (`ping`, `logging/setLevel`, a legacy tape's
    /// refusal of `server/discover`).
    pub generic: u64,
    /// Handshakes of the other era answered from the one the tape holds (`initialize`
    /// from a recorded `server/discover`).
    pub bridged: u64,
    /// Long-lived requests (`subscriptions/listen`) still open when the client ended,
    /// as they were when the recording ended: not misses.
    pub kept_open: u64,
    /// Requests answered from one of several recorded calls that are equal only once
    /// redacted (the choice is said on stderr).
    pub ambiguous: u64,
    /// Requests forwarded to the live server (`--subset`).
    pub forwarded: u64,
    /// Requests the tape could not answer.
    pub missed: u64,
    /// Client answers (to server→client requests, or in 2026-07-28 retries) that
    /// differ from the recorded ones.
    pub client_drift: u64,
    /// Requests the client cancelled before their answer.
    pub cancelled: u64,
    /// Requests recorded as cancelled that the client never cancelled (left unanswered,
    /// as live).
    pub held: u64,
    /// Input lines that were not JSON-RPC requests, notifications or responses.
    pub invalid: u64,
    /// Recorded client exchanges no live request took (count).
    pub unused_total: u64,
    /// The first of them.
    pub unused: Vec<Unused>,
    /// Unsolicited server messages (list_changed, logging, timer requests) never reached.
    pub unsent_unsolicited: u64,
    /// The trace written with `--record` / `--subset`.
    pub recorded: Option<PathBuf>,
    /// Exit status of the live server (`--subset`).
    pub live_exit: Option<i64>,
    /// Over HTTP: live sessions served, each from its recorded session.
    pub sessions: u64,
    /// Over HTTP: recorded sessions no live session was answered from (their
    /// exchanges count as unused).
    pub sessions_unreplayed: u64,
    /// Over HTTP: the recorded requests of those sessions (part of `unused_total`, not
    /// listed one by one).
    pub unused_unreplayed: u64,
    /// `--session N` named a session the trace does not hold: a usage error, whatever
    /// was served.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_such_session: bool,
}

impl Summary {
    /// Adds the summary of another tape of the same replay (HTTP: one per session).
    pub fn absorb(&mut self, o: Summary) {
        self.answered += o.answered;
        self.bridged += o.bridged;
        self.ambiguous += o.ambiguous;
        self.kept_open += o.kept_open;
        self.answered_again += o.answered_again;
        self.generic += o.generic;
        self.forwarded += o.forwarded;
        self.missed += o.missed;
        self.client_drift += o.client_drift;
        self.cancelled += o.cancelled;
        self.held += o.held;
        self.invalid += o.invalid;
        self.unused_total += o.unused_total;
        let room = UNUSED_SHOWN.saturating_sub(self.unused.len());
        self.unused.extend(o.unused.into_iter().take(room));
        self.unsent_unsolicited += o.unsent_unsolicited;
        self.recorded = self.recorded.take().or(o.recorded);
        self.live_exit = self.live_exit.or(o.live_exit);
        self.sessions += o.sessions;
        self.sessions_unreplayed += o.sessions_unreplayed;
        self.unused_unreplayed += o.unused_unreplayed;
        self.no_such_session |= o.no_such_session;
    }

    /// What the replay amounts to: a `--session` the trace lacks first, then misses
    /// (they win over client drift), then client drift unless `lenient`.
    pub fn verdict(&self, lenient: bool) -> PlayVerdict {
        if self.no_such_session {
            PlayVerdict::NoSuchSession
        } else if self.missed > 0 {
            PlayVerdict::Misses
        } else if self.client_drift > 0 && !lenient {
            PlayVerdict::ClientDrift
        } else {
            PlayVerdict::Clean
        }
    }

    /// The text printed on stderr at the end.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        self.write_counts(&mut s);
        self.write_unused(&mut s);
        self.write_sessions(&mut s);
        if self.unsent_unsolicited > 0 {
            let _ = writeln!(
                s,
                "  {} unsolicited server messages were not reached",
                self.unsent_unsolicited
            );
        }
        if let Some(p) = &self.recorded {
            let _ = writeln!(s, "  replay recorded to {}", p.display());
        }
        s
    }

    /// The headline: how each request was answered, then how many recorded exchanges
    /// went unused.
    fn write_counts(&self, s: &mut String) {
        let again = match self.answered_again {
            0 => String::new(),
            n => format!(" ({n} answered again)"),
        };
        let _ = write!(
            s,
            "reel play: {} answered from the tape{again}, {} generic, {} missed, {} client drift",
            self.answered, self.generic, self.missed, self.client_drift
        );
        if self.bridged > 0 {
            let _ = write!(
                s,
                ", {} handshake answered from the other era's (initialize from server/discover)",
                self.bridged
            );
        }
        if self.kept_open > 0 {
            let _ = write!(
                s,
                ", {} long-lived request(s) kept open to the end, as recorded",
                self.kept_open
            );
        }
        if self.ambiguous > 0 {
            let _ = write!(
                s,
                ", {} answered from calls equal only once redacted (ambiguous)",
                self.ambiguous
            );
        }
        if self.forwarded > 0 {
            let _ = write!(s, ", {} forwarded live", self.forwarded);
        }
        if self.cancelled > 0 {
            let _ = write!(s, ", {} cancelled", self.cancelled);
        }
        if self.held > 0 {
            let _ = write!(s, ", {} left unanswered (recorded as cancelled)", self.held);
        }
        if self.invalid > 0 {
            let _ = write!(s, ", {} invalid input lines", self.invalid);
        }
        let _ = writeln!(s, "; {} recorded exchanges unused", self.unused_total);
    }

    /// The unused recorded exchanges, as many as were kept, and how many more.
    fn write_unused(&self, s: &mut String) {
        for u in &self.unused {
            let _ = writeln!(s, "  unused: {} {} {}", u.location, u.method, u.params);
        }
        let listed = self.unused.len() as u64 + self.unused_unreplayed;
        if self.unused_total > listed {
            let _ = writeln!(s, "  … {} more unused", self.unused_total - listed);
        }
    }

    /// Over HTTP: the live sessions served and the recorded ones never replayed.
    fn write_sessions(&self, s: &mut String) {
        if self.sessions > 0 || self.sessions_unreplayed > 0 {
            let plural = |n: u64| if n == 1 { "" } else { "s" };
            let _ = write!(
                s,
                "  {} live session{} served",
                self.sessions,
                plural(self.sessions)
            );
            if self.sessions_unreplayed > 0 {
                let _ = write!(
                    s,
                    "; {} recorded session{} never replayed ({} request{} in them)",
                    self.sessions_unreplayed,
                    plural(self.sessions_unreplayed),
                    self.unused_unreplayed,
                    plural(self.unused_unreplayed),
                );
            }
            s.push('\n');
        }
    }
}

/// The text of a client-drift report.
pub fn drift_text(what: &str, location: &str, differences: &[Difference]) -> String {
    let mut s = format!(
        "reel play: client drift: {what} differs from the recorded one ({location}); replay goes on\n"
    );
    for d in differences.iter().take(DIFFERENCES_SHOWN) {
        let _ = writeln!(s, "    {d}");
    }
    if differences.len() > DIFFERENCES_SHOWN {
        let _ = writeln!(s, "    … {} more", differences.len() - DIFFERENCES_SHOWN);
    }
    s
}

/// A request cut for display.
pub fn short(text: &str) -> String {
    shorten(text, REQUEST_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn misses_win_over_client_drift() {
        let mut s = Summary::default();
        assert_eq!(s.verdict(false), PlayVerdict::Clean);
        s.client_drift = 1;
        assert_eq!(s.verdict(false), PlayVerdict::ClientDrift);
        assert_eq!(s.verdict(true), PlayVerdict::Clean);
        s.missed = 1;
        assert_eq!(s.verdict(false), PlayVerdict::Misses);
        assert_eq!(s.verdict(true), PlayVerdict::Misses);
    }

    #[test]
    fn miss_errors_name_pointers_not_values() {
        let m = Miss {
            method: "tools/call".into(),
            id: "3".into(),
            request: "{}".into(),
            reason: "no recorded request is equal".into(),
            nearest: vec![Candidate {
                location: "t.jsonl:5".into(),
                line: 5,
                consumed: false,
                differences: vec![Difference {
                    pointer: "/params/arguments/key".into(),
                    left: Some(json!("old-secret")),
                    right: Some(json!("new-secret")),
                }],
            }],
        };
        let e = m.error_object(MISS_CODE).to_string();
        assert!(e.contains("/params/arguments/key"));
        assert!(!e.contains("secret\""), "{e}");
        let t = m.to_text();
        assert!(
            t.contains("t.jsonl:5") && t.contains("\"old-secret\" -> \"new-secret\""),
            "{t}"
        );
    }
}
