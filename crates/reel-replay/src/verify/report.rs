//! What `verify` found, for people (text) and programs (`--json`, schema
//! `reel.verify/2`). Formatting only: the facts come from the run.
//!
//! Text: the first drift with its context (the request and the exchanges just before
//! it), then every drift on one line, then a summary. Limits: [`CONTEXT_SHOWN`]
//! exchanges of context, [`DIFFERENCES_SHOWN`] differing pointers per drift in the
//! detailed view, requests cut to [`REQUEST_CHARS`] characters.
//!
//! JSON (`reel.verify/2`), one document:
//! ```text
//! { "schema": "reel.verify/2",
//!   "trace": path, "session": n, "command": [argv…], "timeoutMs": n,
//!   "result": "same" | "output-drift" | "structural-drift", "exitCode": 0 | 1 | 2,
//!   "summary": { "requests", "same", "outputDrift", "structuralDrift",
//!                "notCompared", "notSent" },
//!   "serverRequests": { "asked", "answeredFromTape", "unknown", "notAsked" },
//!   "notifications": [ { "method", "recorded", "live" } … ],   // every method seen
//!   "drift": [ { "class": "output" | "structural", "kind", "method", "tool"?,
//!                "line"?, "liveId"?, "message", "request"?,
//!                "differences": [ { "pointer", "recorded"?, "live"? } … ],
//!                "context": [ { "line", "method", "tool"?, "verdict" } … ] } … ],
//!   "notes": [ text … ], "record": path | null, "serverExit": n | null }
//! ```
//! `kind` is a name of the one drift vocabulary (`reel_mcp::drift::Kind`, the same as
//! `reel diff --json`): `result-changed`, `error-changed`, `method-unknown`,
//! `tool-unknown`, `schema-changed`, `became-error`, `error-became-result`,
//! `unanswered`, `added` (a server request the recording never saw), `removed` (one it
//! saw that did not come), `request-changed`, `notification-count`. Version 2 took
//! these names from `reel.verify/1`'s own (`result`, `tool-gone`, `no-answer`, …). A
//! `recorded`/`live` value that is absent means the member is absent on that side. New
//! members may be added; none will change meaning within `reel.verify/2`.

use std::fmt::Write as _;
use std::path::PathBuf;

use reel_mcp::normalize::{Difference, numbers, shorten};
use serde::Serialize;
use serde_json::Value;

use super::compare::{Class, Kind};
use reel_mcp::drift::Verdict;

/// The JSON schema name and version.
pub const SCHEMA: &str = "reel.verify/2";
/// Exchanges shown before the first drift.
pub const CONTEXT_SHOWN: usize = 3;
/// Differing pointers shown per drift in the detailed view.
pub const DIFFERENCES_SHOWN: usize = 12;
/// Characters of a request shown.
pub const REQUEST_CHARS: usize = 240;

/// One place where the live answer differs.
#[derive(Clone, Debug, Serialize)]
pub struct Place {
    /// JSON pointer into the JSON-RPC message (`""`: the whole message).
    pub pointer: String,
    /// The recorded value (absent: the member is absent in the recording).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded: Option<Value>,
    /// The live value (absent: the member is absent live).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live: Option<Value>,
}

impl From<Difference> for Place {
    fn from(d: Difference) -> Place {
        Place {
            pointer: d.pointer,
            recorded: d.left,
            live: d.right,
        }
    }
}

/// An exchange shown as context.
#[derive(Clone, Debug, Serialize)]
pub struct ContextEntry {
    /// Recorded line of the request.
    pub line: u64,
    /// Its method.
    pub method: String,
    /// Its tool, for `tools/call`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// `same`, `output`, `structural` or `not compared`.
    pub verdict: String,
}

/// One drift.
#[derive(Clone, Debug, Serialize)]
pub struct Drift {
    /// How bad.
    pub class: Class,
    /// What kind.
    pub kind: Kind,
    /// The method of the request (or of the server request / notification).
    pub method: String,
    /// The tool, for `tools/call`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Recorded line of the request, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// The id reel (or the server) used live, as JSON text.
    #[serde(rename = "liveId", skip_serializing_if = "Option::is_none")]
    pub live_id: Option<String>,
    /// What changed, one line.
    pub message: String,
    /// The request's params (or the server request), cut for display.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    /// Where the answers differ.
    pub differences: Vec<Place>,
    /// The exchanges compared just before this one.
    pub context: Vec<ContextEntry>,
}

impl Drift {
    /// `tools/call add`, `initialize`…
    pub fn call_name(&self) -> String {
        match &self.tool {
            Some(t) => format!("{} {t}", self.method),
            None => self.method.clone(),
        }
    }
}

/// Counts of the client's requests.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestCounts {
    /// Client requests in the recording.
    pub requests: u64,
    /// Answered the same.
    pub same: u64,
    /// With output drift.
    pub output_drift: u64,
    /// With structural drift.
    pub structural_drift: u64,
    /// Sent but not compared (no recorded answer: cancelled or cut off).
    pub not_compared: u64,
    /// Never sent (the run stopped: the handshake failed or the server exited).
    pub not_sent: u64,
}

/// What the server asked the client.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerRequestCounts {
    /// Requests the live server sent.
    pub asked: u64,
    /// Answered with a recorded answer.
    pub answered_from_tape: u64,
    /// Answered with an error: the tape has no such request.
    pub unknown: u64,
    /// Recorded server requests the live server never sent.
    pub not_asked: u64,
}

/// How often the server sent one notification method.
#[derive(Clone, Debug, Serialize)]
pub struct NotificationCount {
    /// The method.
    pub method: String,
    /// In the recording.
    pub recorded: u64,
    /// Live.
    pub live: u64,
}

/// Everything `verify` found.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifyReport {
    /// `SCHEMA`.
    pub schema: &'static str,
    /// The recording.
    pub trace: PathBuf,
    /// The session played (1-based).
    pub session: usize,
    /// The live server's command.
    pub command: Vec<String>,
    /// The answer timeout, milliseconds.
    pub timeout_ms: u64,
    /// `same`, `output-drift` or `structural-drift`.
    pub result: &'static str,
    /// 0, 1 or 2, as the CLI maps [`VerifyReport::verdict`] (0 until it does).
    pub exit_code: u8,
    /// The client's requests.
    pub summary: RequestCounts,
    /// The server's requests.
    pub server_requests: ServerRequestCounts,
    /// Server notifications per method.
    pub notifications: Vec<NotificationCount>,
    /// Every drift, in the order found.
    pub drift: Vec<Drift>,
    /// Things worth knowing that are not drift (skipped lines, late answers…).
    pub notes: Vec<String>,
    /// The live run's trace.
    pub record: Option<PathBuf>,
    /// The live server's exit status (128+N for signal N), when known.
    pub server_exit: Option<i64>,
    /// Every client exchange compared, in order, with its verdict (`--format junit`;
    /// not in the JSON document, whose drift entries carry their context).
    #[serde(skip)]
    pub exchanges: Vec<ContextEntry>,
}

impl VerifyReport {
    /// What the drift found amounts to: the worst class, or none.
    pub fn verdict(&self) -> Verdict {
        Verdict::of(self.drift.iter().map(|d| d.class).max())
    }

    /// Fills `result` from the drift found. `exit_code` is the caller's to fill: the
    /// CLI owns the exit-code table.
    pub fn settle(&mut self) {
        self.result = self.verdict().name();
    }

    /// The text report. `paint(class, text)` may colour a class word.
    pub fn to_text(&self, paint: &dyn Fn(Class, &str) -> String) -> String {
        let mut s = String::new();
        if let Some(first) = self.drift.first() {
            first_drift(&mut s, first, paint);
            let _ = writeln!(s, "\nall drift ({}):", self.drift.len());
            for d in &self.drift {
                let class = paint(d.class, &format!("{:<10}", d.class.name()));
                let line = d
                    .line
                    .map_or_else(|| "-".to_owned(), |l| format!("line {l}"));
                let pointers: Vec<&str> = d
                    .differences
                    .iter()
                    .take(4)
                    .map(|p| p.pointer.as_str())
                    .collect();
                let mut what = d.message.clone();
                if !pointers.is_empty() && d.kind == Kind::ResultChanged {
                    what = pointers.join(", ");
                    if d.differences.len() > pointers.len() {
                        let _ = write!(what, ", … {} more", d.differences.len() - pointers.len());
                    }
                }
                let _ = writeln!(s, "  {class} {:<32} {:<10} {what}", d.call_name(), line);
            }
            s.push('\n');
        }
        for n in &self.notes {
            let _ = writeln!(s, "note: {n}");
        }
        s.push_str(&self.summary_text());
        s
    }

    /// GitHub Actions annotations, one per drift on the recorded line of its request,
    /// then the summary of [`VerifyReport::to_text`] (`reel verify --format github`).
    pub fn to_github(&self) -> String {
        use reel_mcp::drift::github::level;
        use reel_report::github::annotation;
        let mut s = String::new();
        let trace = self.trace.display().to_string();
        for d in &self.drift {
            let title = format!("reel verify: {} drift ({})", d.class.name(), d.kind.name());
            let place = d.line.map(|l| (trace.as_str(), l));
            let line = annotation(
                level(d.class),
                place,
                &title,
                &format!("{}: {}", d.call_name(), d.message),
            );
            let _ = writeln!(s, "{line}");
        }
        s.push_str(&self.summary_text());
        s
    }

    /// JUnit XML (`reel verify --format junit`): one test case per client exchange
    /// compared, named by its recorded line, method and tool; a drift is its failure.
    /// Drift on no client exchange (a server request, a notification count) is a case
    /// of its own.
    pub fn to_junit(&self) -> String {
        use reel_report::junit::{Case, Failure, document};
        let stem = self
            .trace
            .file_stem()
            .map_or_else(|| "trace".into(), |s| s.to_string_lossy().into_owned());
        let classname = format!("reel.verify.{stem}");
        let failure = |d: &Drift| Failure {
            kind: format!("{} drift ({})", d.class.name(), d.kind.name()),
            message: d.message.clone(),
            text: d
                .differences
                .iter()
                .map(|p| p.pointer.clone())
                .collect::<Vec<_>>()
                .join("\n"),
        };
        let mut used = vec![false; self.drift.len()];
        let mut cases = Vec::with_capacity(self.exchanges.len());
        for e in &self.exchanges {
            let name = match &e.tool {
                Some(t) => format!("line {}: {} {t}", e.line, e.method),
                None => format!("line {}: {}", e.line, e.method),
            };
            let drift = self
                .drift
                .iter()
                .enumerate()
                .find(|(i, d)| !used[*i] && d.line == Some(e.line) && d.method == e.method);
            let failure = drift.map(|(i, d)| {
                used[i] = true;
                failure(d)
            });
            cases.push(Case {
                name,
                classname: classname.clone(),
                failure,
            });
        }
        for (d, _) in self.drift.iter().zip(&used).filter(|(_, u)| !**u) {
            cases.push(Case {
                name: match d.line {
                    Some(l) => format!("line {l}: {}", d.call_name()),
                    None => d.call_name(),
                },
                classname: classname.clone(),
                failure: Some(failure(d)),
            });
        }
        document(&format!("reel verify {}", self.trace.display()), &cases)
    }

    /// The closing lines: the verdict and the counts.
    fn summary_text(&self) -> String {
        let mut s = String::new();
        let c = &self.summary;
        let _ = write!(
            s,
            "reel verify: {}: {} request{}: {} same, {} output drift, {} structural drift",
            self.result,
            c.requests,
            if c.requests == 1 { "" } else { "s" },
            c.same,
            c.output_drift,
            c.structural_drift
        );
        if c.not_compared > 0 {
            let _ = write!(s, ", {} not compared", c.not_compared);
        }
        if c.not_sent > 0 {
            let _ = write!(s, ", {} not sent", c.not_sent);
        }
        s.push('\n');
        let r = &self.server_requests;
        if r.asked > 0 || r.not_asked > 0 {
            let _ = writeln!(
                s,
                "  server requests: {} asked, {} answered from the tape, {} unknown, {} recorded but not asked",
                r.asked, r.answered_from_tape, r.unknown, r.not_asked
            );
        }
        if !self.notifications.is_empty() {
            let list: Vec<String> = self
                .notifications
                .iter()
                .map(|n| {
                    if n.recorded == n.live {
                        format!("{} {}", n.method, n.live)
                    } else {
                        format!("{} {} (recorded {})", n.method, n.live, n.recorded)
                    }
                })
                .collect();
            let _ = writeln!(s, "  notifications: {}", list.join(", "));
        }
        if let Some(p) = &self.record {
            let _ = writeln!(s, "  live run recorded to {}", p.display());
        }
        s
    }
}

fn first_drift(s: &mut String, d: &Drift, paint: &dyn Fn(Class, &str) -> String) {
    let at = match (d.line, &d.live_id) {
        (Some(l), Some(id)) => format!(" (recorded line {l}, live id {id})"),
        (Some(l), None) => format!(" (recorded line {l})"),
        (None, Some(id)) => format!(" (live id {id})"),
        (None, None) => String::new(),
    };
    let _ = writeln!(
        s,
        "first drift: {} drift in {}{at}: {}",
        paint(d.class, d.class.name()),
        d.call_name(),
        d.message
    );
    if !d.context.is_empty() {
        let _ = writeln!(s, "  before it:");
        for c in &d.context {
            let name = match &c.tool {
                Some(t) => format!("{} {t}", c.method),
                None => c.method.clone(),
            };
            let _ = writeln!(s, "    line {:<6} {:<32} {}", c.line, name, c.verdict);
        }
    }
    if let Some(r) = &d.request {
        let _ = writeln!(s, "  request: {r}");
    }
    if !d.differences.is_empty() {
        let _ = writeln!(s, "  differences (recorded -> live):");
        for p in d.differences.iter().take(DIFFERENCES_SHOWN) {
            let show = |v: &Option<Value>| match v {
                None => "(absent)".to_owned(),
                Some(v) => shorten(&numbers::show_value(v), 120),
            };
            let at = if p.pointer.is_empty() {
                "(whole message)"
            } else {
                &p.pointer
            };
            let _ = writeln!(s, "    {at}: {} -> {}", show(&p.recorded), show(&p.live));
        }
        if d.differences.len() > DIFFERENCES_SHOWN {
            let _ = writeln!(s, "    … {} more", d.differences.len() - DIFFERENCES_SHOWN);
        }
    }
}

/// A request cut for display.
pub fn short(text: &str) -> String {
    shorten(text, REQUEST_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(drift: Vec<Drift>) -> VerifyReport {
        let mut r = VerifyReport {
            schema: SCHEMA,
            trace: "t.jsonl".into(),
            session: 1,
            command: vec!["srv".into()],
            timeout_ms: 30_000,
            result: "",
            exit_code: 0,
            summary: RequestCounts::default(),
            server_requests: ServerRequestCounts::default(),
            notifications: vec![],
            drift,
            notes: vec![],
            record: None,
            server_exit: None,
            exchanges: Vec::new(),
        };
        r.settle();
        r
    }

    fn drift(class: Class, kind: Kind) -> Drift {
        Drift {
            class,
            kind,
            method: "tools/call".into(),
            tool: Some("add".into()),
            line: Some(9),
            live_id: Some("4".into()),
            message: "the result differs at 1 place".into(),
            request: Some(r#"{"name":"add"}"#.into()),
            differences: vec![Place {
                pointer: "/result/content/0/text".into(),
                recorded: Some(Value::from("42")),
                live: Some(Value::from("43")),
            }],
            context: vec![ContextEntry {
                line: 7,
                method: "tools/list".into(),
                tool: None,
                verdict: "same".into(),
            }],
        }
    }

    #[test]
    fn the_worst_class_is_the_verdict() {
        assert_eq!(report(vec![]).verdict(), Verdict::Identical);
        assert_eq!(
            report(vec![drift(Class::Output, Kind::ResultChanged)]).verdict(),
            Verdict::Output
        );
        let r = report(vec![
            drift(Class::Output, Kind::ResultChanged),
            drift(Class::Structural, Kind::ToolUnknown),
        ]);
        assert_eq!(
            (r.verdict(), r.result),
            (Verdict::Structural, "structural-drift")
        );
    }

    #[test]
    fn text_shows_the_first_drift_with_context_then_all() {
        let r = report(vec![drift(Class::Output, Kind::ResultChanged)]);
        let t = r.to_text(&|_, s| s.to_owned());
        assert!(
            t.starts_with(
                "first drift: output drift in tools/call add (recorded line 9, live id 4)"
            ),
            "{t}"
        );
        assert!(t.contains("line 7      tools/list"), "{t}");
        assert!(t.contains(r#"/result/content/0/text: "42" -> "43""#), "{t}");
        assert!(t.contains("all drift (1):"), "{t}");
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(j["schema"], "reel.verify/2");
        assert_eq!(j["drift"][0]["differences"][0]["live"], "43");
        assert_eq!(j["drift"][0]["kind"], "result-changed");
        assert_eq!(j["result"], "output-drift");
    }
}
