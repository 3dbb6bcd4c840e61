//! One drift vocabulary: the classes and kinds of difference `diff`, `verify` and `play`
//! report (and the viewer shows), and the rules that judge how an answer changed.
//!
//! Two classes, as the exit codes have them: **output** drift is the same call answered
//! differently (content, error, the notifications around it); **structural** drift is a
//! change of shape (a call added or removed, a method or tool unknown, a schema changed,
//! a result became an error). Kind names (kebab-case) are stable: they are in every
//! command's JSON output, the same name for the same change whichever command saw it.
//! Turning a class into an exit code is the CLI's business.

pub mod github;
pub mod lists;

use serde::Serialize;

use crate::jsonrpc::methods;

/// JSON-RPC "method not found".
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC "invalid params" (what most SDKs answer for a tool they do not have).
pub const INVALID_PARAMS: i64 = -32602;

/// The two classes of drift, in increasing severity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// Same call, different answer.
    Output,
    /// A change of shape.
    Structural,
}

impl Class {
    /// `output` / `structural`.
    pub fn name(self) -> &'static str {
        match self {
            Class::Output => "output",
            Class::Structural => "structural",
        }
    }
}

/// What a comparison of two runs found, all drifts together: the worst class, or none.
/// The CLI maps it to an exit code (0, 1, 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// No drift.
    Identical,
    /// Output drift only.
    Output,
    /// Structural drift.
    Structural,
}

impl Verdict {
    /// The verdict of drifts whose worst class is `worst`.
    pub fn of(worst: Option<Class>) -> Verdict {
        match worst {
            None => Verdict::Identical,
            Some(Class::Output) => Verdict::Output,
            Some(Class::Structural) => Verdict::Structural,
        }
    }

    /// `same`, `output-drift`, `structural-drift`: the verdict as a report says it.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Identical => "same",
            Verdict::Output => "output-drift",
            Verdict::Structural => "structural-drift",
        }
    }
}

/// What kind of drift it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Kind {
    /// An exchange only in the second run (structural): a call, or a server→client
    /// request the first run never made.
    Added,
    /// An exchange only in the first run (structural).
    Removed,
    /// A result became an error (a JSON-RPC error, or a tool result with
    /// `isError: true`) (structural).
    BecameError,
    /// "method not found" (-32601) where there was none (structural).
    MethodUnknown,
    /// The tool does not exist any more: gone from `tools/list`, or a call says it is
    /// unknown (structural).
    ToolUnknown,
    /// A `tools/list` or `prompts/list` changed: tools or prompts added or removed, or
    /// an input/output schema or prompt arguments changed (structural).
    SchemaChanged,
    /// Answered in the first run, unanswered (or not before the timeout) in the second
    /// (structural).
    Unanswered,
    /// A turn only in the second run (structural).
    TurnAdded,
    /// A turn only in the first run (structural).
    TurnRemoved,
    /// A turn used other tools, or a tool result became an error (structural).
    ToolUseChanged,
    /// A generation came from another model (structural).
    ModelChanged,
    /// A generation stopped for another reason: `tool_use` became `end_turn`, a stream
    /// was truncated (structural).
    StopReasonChanged,
    /// Same call, a different result (output).
    ResultChanged,
    /// Same call, a different error (output).
    ErrorChanged,
    /// An error became a result (output).
    ErrorBecameResult,
    /// The same request, sent with other params: a server→client request `verify`
    /// answered from the recording all the same (output).
    RequestChanged,
    /// Unanswered in the first run, answered in the second (output).
    NowAnswered,
    /// A list changed in content only: descriptions, titles, resources (output).
    ListChanged,
    /// The progress (or, strictly, other) notifications around the call differ (output).
    NotificationsChanged,
    /// Notifications of one method and direction differ in number (output).
    NotificationCount,
    /// The call was cancelled in one run only (output).
    CancellationChanged,
    /// A turn's content differs (text, tool input, tool result) (output).
    TurnChanged,
    /// Strictly: a turn's usage or timing differs (output).
    UsageChanged,
    /// An answer outside JSON-RPC and turns differs: the body of an llm exchange that
    /// gave no turns, a line that is not JSON (output).
    BodyChanged,
}

impl Kind {
    /// The stable kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Added => "added",
            Kind::Removed => "removed",
            Kind::BecameError => "became-error",
            Kind::MethodUnknown => "method-unknown",
            Kind::ToolUnknown => "tool-unknown",
            Kind::SchemaChanged => "schema-changed",
            Kind::Unanswered => "unanswered",
            Kind::TurnAdded => "turn-added",
            Kind::TurnRemoved => "turn-removed",
            Kind::ToolUseChanged => "tool-use-changed",
            Kind::ModelChanged => "model-changed",
            Kind::StopReasonChanged => "stop-reason-changed",
            Kind::ResultChanged => "result-changed",
            Kind::ErrorChanged => "error-changed",
            Kind::ErrorBecameResult => "error-became-result",
            Kind::RequestChanged => "request-changed",
            Kind::NowAnswered => "now-answered",
            Kind::ListChanged => "list-changed",
            Kind::NotificationsChanged => "notifications-changed",
            Kind::NotificationCount => "notification-count",
            Kind::CancellationChanged => "cancellation-changed",
            Kind::TurnChanged => "turn-changed",
            Kind::UsageChanged => "usage-changed",
            Kind::BodyChanged => "body-changed",
        }
    }

    /// The class a drift of this kind has.
    pub fn class(self) -> Class {
        match self {
            Kind::Added
            | Kind::Removed
            | Kind::BecameError
            | Kind::MethodUnknown
            | Kind::ToolUnknown
            | Kind::SchemaChanged
            | Kind::Unanswered
            | Kind::TurnAdded
            | Kind::TurnRemoved
            | Kind::ToolUseChanged
            | Kind::ModelChanged
            | Kind::StopReasonChanged => Class::Structural,
            Kind::ResultChanged
            | Kind::ErrorChanged
            | Kind::ErrorBecameResult
            | Kind::RequestChanged
            | Kind::NowAnswered
            | Kind::ListChanged
            | Kind::NotificationsChanged
            | Kind::NotificationCount
            | Kind::CancellationChanged
            | Kind::TurnChanged
            | Kind::UsageChanged
            | Kind::BodyChanged => Class::Output,
        }
    }
}

/// How a call was answered, as far as drift classes care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer<'a> {
    /// No answer.
    Pending,
    /// A `result`; `is_error` is `result.isError == true` (a tool error).
    Result {
        /// A tool error.
        is_error: bool,
    },
    /// A JSON-RPC `error`.
    Error {
        /// `error.code`.
        code: Option<i64>,
        /// `error.message`.
        message: Option<&'a str>,
    },
}

/// How the two runs are named in messages: `A`/`B` for `diff`, the recording and the
/// live server for `verify`.
#[derive(Clone, Copy, Debug)]
pub struct Sides {
    /// The first run.
    pub a: &'static str,
    /// The second run.
    pub b: &'static str,
}

/// The call whose answers are compared.
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    /// The method.
    pub method: &'a str,
    /// `params.name` of a `tools/call`.
    pub tool: Option<&'a str>,
    /// Whether the second run's latest `tools/list` names the tool, when it listed any.
    pub tool_listed: Option<bool>,
}

/// The drift in how a call was answered (result, error, none), if its answer changed
/// class; `None` when both answers are of one class (their content is compared then).
pub fn answer_change(
    call: Call<'_>,
    a: Answer<'_>,
    b: Answer<'_>,
    sides: Sides,
) -> Option<(Kind, String)> {
    use Answer::*;
    let (sa, sb) = (sides.a, sides.b);
    Some(match (a, b) {
        (Pending, Pending) => return None,
        (Pending, _) => (
            Kind::NowAnswered,
            format!("unanswered in {sa}, answered in {sb}"),
        ),
        (_, Pending) => (
            Kind::Unanswered,
            format!("answered in {sa}, unanswered in {sb}"),
        ),
        (_, Error { code, message }) => return became_error(call, a, code, message, sb),
        (Error { code, message }, Result { is_error: false }) => (
            Kind::ErrorBecameResult,
            format!(
                "an error in {sa} ({}) became a result",
                error_text(code, message)
            ),
        ),
        (Result { is_error: false }, Result { is_error: true }) => (
            Kind::BecameError,
            "the result became an error (isError: true)".to_owned(),
        ),
        (Error { .. }, Result { is_error: true }) => (
            Kind::ErrorChanged,
            "a JSON-RPC error became a tool error (isError: true)".to_owned(),
        ),
        (Result { is_error: true }, Result { is_error: false }) => (
            Kind::ErrorBecameResult,
            "a tool error (isError: true) became a result".to_owned(),
        ),
        (Result { .. }, Result { .. }) => return None,
    })
}

/// The second run (`sb`) answered the call with a JSON-RPC error (`code`, `message`):
/// what the first run's answer `a` became, if it changed class.
fn became_error(
    call: Call<'_>,
    a: Answer<'_>,
    code: Option<i64>,
    message: Option<&str>,
    sb: &str,
) -> Option<(Kind, String)> {
    use Answer::*;
    let method_unknown = code == Some(METHOD_NOT_FOUND)
        && !matches!(
            a,
            Error {
                code: Some(METHOD_NOT_FOUND),
                ..
            }
        );
    Some(match a {
        Result { is_error: false } | Error { .. } if method_unknown => (
            Kind::MethodUnknown,
            format!(
                "{sb} does not know the method `{}`: {}",
                call.method,
                error_text(Some(METHOD_NOT_FOUND), message)
            ),
        ),
        Result { is_error: false }
            if says_unknown_tool(call, code, message.unwrap_or_default()) =>
        {
            (
                Kind::ToolUnknown,
                match call.tool {
                    Some(t) => format!(
                        "{sb} does not know the tool `{t}`: {}",
                        error_text(code, message)
                    ),
                    None => format!("{sb} does not know the tool: {}", error_text(code, message)),
                },
            )
        }
        Result { is_error: false } => (
            Kind::BecameError,
            format!("the result became an error: {}", error_text(code, message)),
        ),
        Result { is_error: true } => (
            Kind::ErrorChanged,
            format!(
                "a tool error became a JSON-RPC error: {}",
                error_text(code, message)
            ),
        ),
        Error { .. } | Pending => return None,
    })
}

/// A JSON-RPC error as a change names it: its code and (shortened) message.
fn error_text(code: Option<i64>, message: Option<&str>) -> String {
    match (code, message) {
        (Some(c), Some(m)) => format!("{c} {}", crate::normalize::shorten(m, 80)),
        (Some(c), None) => c.to_string(),
        (None, Some(m)) => crate::normalize::shorten(m, 80),
        (None, None) => "an error".to_owned(),
    }
}

/// True when a failed `tools/call` says its tool does not exist: the second run's
/// `tools/list` no longer names it, or the error (a JSON-RPC error's message, or a tool
/// error's text) says so as the SDKs word it ("Unknown tool: x", "Tool x not found").
pub fn says_unknown_tool(call: Call<'_>, code: Option<i64>, text: &str) -> bool {
    if call.method != methods::TOOLS_CALL {
        return false;
    }
    if call.tool_listed == Some(false) {
        return true;
    }
    let text = text.to_lowercase();
    let names_it = text.contains("tool")
        || call
            .tool
            .is_some_and(|t| !t.is_empty() && text.contains(&t.to_lowercase()));
    let says_missing =
        text.contains("unknown") || text.contains("not found") || text.contains("no such");
    let plausible_code = matches!(code, None | Some(INVALID_PARAMS | METHOD_NOT_FOUND));
    plausible_code && names_it && says_missing
}

#[cfg(test)]
mod tests {
    use super::*;

    const AB: Sides = Sides { a: "A", b: "B" };

    fn call(method: &str) -> Call<'_> {
        Call {
            method,
            tool: Some("weather"),
            tool_listed: None,
        }
    }

    #[test]
    fn every_kind_has_one_name_and_one_class() {
        let json = serde_json::to_value(Kind::ErrorBecameResult).unwrap();
        assert_eq!(json, Kind::ErrorBecameResult.name());
        assert_eq!(Kind::BecameError.class(), Class::Structural);
        assert_eq!(Kind::ErrorBecameResult.class(), Class::Output);
    }

    #[test]
    fn answers_changing_class_are_judged_once() {
        let ok = Answer::Result { is_error: false };
        let unknown = Answer::Error {
            code: Some(METHOD_NOT_FOUND),
            message: Some("Method not found"),
        };
        let no_tool = Answer::Error {
            code: Some(INVALID_PARAMS),
            message: Some("Unknown tool: weather"),
        };
        let other = Answer::Error {
            code: Some(-32000),
            message: Some("boom"),
        };
        let kind = |c: Call<'_>, a, b| answer_change(c, a, b, AB).map(|(k, _)| k);
        assert_eq!(kind(call("tools/call"), ok, ok), None);
        assert_eq!(kind(call("x"), ok, unknown), Some(Kind::MethodUnknown));
        assert_eq!(
            kind(call("tools/call"), ok, no_tool),
            Some(Kind::ToolUnknown)
        );
        assert_eq!(
            kind(call("prompts/get"), ok, no_tool),
            Some(Kind::BecameError)
        );
        assert_eq!(kind(call("tools/call"), ok, other), Some(Kind::BecameError));
        assert_eq!(
            kind(call("tools/call"), other, ok),
            Some(Kind::ErrorBecameResult)
        );
        assert_eq!(kind(call("x"), ok, Answer::Pending), Some(Kind::Unanswered));
        assert_eq!(
            kind(call("x"), Answer::Pending, ok),
            Some(Kind::NowAnswered)
        );
        let listed = Call {
            tool_listed: Some(false),
            ..call("tools/call")
        };
        assert_eq!(kind(listed, ok, other), Some(Kind::ToolUnknown));
    }
}
