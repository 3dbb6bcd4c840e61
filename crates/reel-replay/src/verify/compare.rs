//! Is the live answer the recorded one? The classes of drift `verify` reports, and the
//! rules that put a difference in one of them.
//!
//! Both answers are normalised by the one normaliser (`reel_mcp::normalize`: ids,
//! progress tokens, client identity, trace context, the user's `--ignore` pointers, and
//! for the live side the trace's redaction rules) before they are compared, so only
//! what an honest rerun would keep the same is compared. On top of that, verify ignores
//! [`VERIFY_IGNORED`] (state the server hands the client to echo back), and it compares
//! two refusals of the `server/discover` probe by their outcome only: a client that is
//! refused falls back to `initialize` whatever the error says.
//!
//! Classes (exit codes per DESIGN.md): *output drift* (1) is the same call answered
//! with other content; *structural drift* (2) is a change in what exists or how a call
//! ends: a method unknown, a tool gone, an error where a result was (or the reverse), no
//! answer at all.

use std::collections::BTreeSet;

use reel_mcp::jsonrpc::methods;
use reel_mcp::normalize::{Difference, diff};
use serde::Serialize;
use serde_json::Value;

/// JSON pointers verify always ignores, with why (listed in `reel verify --help`).
pub const VERIFY_IGNORED: [(&str, &str); 1] = [(
    "/result/requestState",
    "2026-07-28 `input_required` state: opaque, the server's to choose; reel sends the live one back on the retry",
)];

/// JSON-RPC "method not found".
pub const METHOD_NOT_FOUND: i64 = -32601;

/// How bad a drift is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// Same call, other content (exit 1).
    Output,
    /// Something gone, or a call that ends differently (exit 2).
    Structural,
}

impl Class {
    /// `output` or `structural`.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Output => "output",
            Class::Structural => "structural",
        }
    }
}

/// What kind of drift.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// The result's content differs.
    Result,
    /// Both are errors, and the errors differ.
    Error,
    /// The live server does not know the method (-32601) the tape has a result for.
    MethodUnknown,
    /// A recorded tool is missing from `tools/list`, or a call says it is unknown.
    ToolGone,
    /// An error where the tape has a result.
    ErrorWhereResult,
    /// A result where the tape has an error.
    ResultWhereError,
    /// No answer before the timeout, or the server exited first.
    NoAnswer,
    /// The server asked the client something the tape has no such request for.
    ServerRequest,
    /// The server no longer asked something it asked in the recording.
    ServerRequestGone,
    /// A server notification came a different number of times.
    Notifications,
}

/// The verdict on one answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Equal after normalisation.
    Same,
    /// Different.
    Drift {
        /// How bad.
        class: Class,
        /// What kind.
        kind: Kind,
        /// One line saying what changed.
        message: String,
        /// Where (left: recorded, right: live).
        differences: Vec<Difference>,
    },
}

/// What is known about the call being compared.
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    /// The method.
    pub method: &'a str,
    /// `params.name` of a `tools/call`.
    pub tool: Option<&'a str>,
    /// The tools of the live server's latest `tools/list` answer, if any came.
    pub live_tools: Option<&'a BTreeSet<String>>,
}

/// Compares a recorded answer with the live one, both normalised whole JSON-RPC
/// messages.
pub fn compare(call: Call<'_>, recorded: &Value, live: &Value) -> Verdict {
    let (rec_error, live_error) = (recorded.get("error"), live.get("error"));
    if call.method == methods::SERVER_DISCOVER && rec_error.is_some() && live_error.is_some() {
        return Verdict::Same;
    }
    let differences = aligned_diff(recorded, live);
    match (rec_error, live_error) {
        (None, None) => result_verdict(call, recorded, live, differences),
        (Some(_), Some(_)) if differences.is_empty() => Verdict::Same,
        (Some(_), Some(_)) => Verdict::Drift {
            class: Class::Output,
            kind: Kind::Error,
            message: format!("the error differs ({})", error_summary(live)),
            differences,
        },
        (None, Some(_)) => error_where_result(call, live, differences),
        (Some(_), None) => Verdict::Drift {
            class: Class::Structural,
            kind: Kind::ResultWhereError,
            message: format!(
                "a result where the recording has an error ({})",
                error_summary(recorded)
            ),
            differences,
        },
    }
}

fn result_verdict(
    call: Call<'_>,
    recorded: &Value,
    live: &Value,
    differences: Vec<Difference>,
) -> Verdict {
    if call.method == "tools/list" {
        let gone: Vec<String> = tool_names(recorded)
            .difference(&tool_names(live))
            .cloned()
            .collect();
        if !gone.is_empty() {
            return Verdict::Drift {
                class: Class::Structural,
                kind: Kind::ToolGone,
                message: format!("tool(s) gone from tools/list: {}", gone.join(", ")),
                differences,
            };
        }
    }
    if call.method == methods::TOOLS_CALL && is_tool_error(live) && !is_tool_error(recorded) {
        if let Some(tool) = call.tool.filter(|t| says_unknown_tool(call, t, live)) {
            return Verdict::Drift {
                class: Class::Structural,
                kind: Kind::ToolGone,
                message: format!("the live server does not know the tool `{tool}`"),
                differences,
            };
        }
    }
    if differences.is_empty() {
        return Verdict::Same;
    }
    Verdict::Drift {
        class: Class::Output,
        kind: Kind::Result,
        message: format!(
            "the result differs at {} place{}",
            differences.len(),
            if differences.len() == 1 { "" } else { "s" }
        ),
        differences,
    }
}

fn error_where_result(call: Call<'_>, live: &Value, differences: Vec<Difference>) -> Verdict {
    let code = live
        .pointer("/error/code")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let (kind, message) = if code == METHOD_NOT_FOUND {
        (
            Kind::MethodUnknown,
            format!(
                "the live server does not know the method `{}` (-32601)",
                call.method
            ),
        )
    } else if let Some(tool) = call.tool.filter(|t| says_unknown_tool(call, t, live)) {
        (
            Kind::ToolGone,
            format!(
                "the live server does not know the tool `{tool}` ({})",
                error_summary(live)
            ),
        )
    } else {
        (
            Kind::ErrorWhereResult,
            format!(
                "an error where the recording has a result ({})",
                error_summary(live)
            ),
        )
    };
    Verdict::Drift {
        class: Class::Structural,
        kind,
        message,
        differences,
    }
}

/// Lists whose elements are compared by a key member, not by position: a tool gone
/// from the middle of `tools/list` is that one tool gone, not every later tool changed.
pub const KEYED_LISTS: [(&str, &str); 4] = [
    ("/result/tools", "name"),
    ("/result/prompts", "name"),
    ("/result/resources", "uri"),
    ("/result/resourceTemplates", "uriTemplate"),
];

/// Where two answers differ, with the [`KEYED_LISTS`] aligned by key: an element only
/// in the recording is named by its recorded index, one only live by its live index, a
/// changed one by its recorded index. Their order is not compared.
pub fn aligned_diff(recorded: &Value, live: &Value) -> Vec<Difference> {
    let (mut rec, mut liv) = (recorded.clone(), live.clone());
    let mut lists = Vec::new();
    for (pointer, key) in KEYED_LISTS {
        let (Some(a), Some(b)) = (keyed(&rec, pointer, key), keyed(&liv, pointer, key)) else {
            continue;
        };
        for (i, (k, item)) in a.iter().enumerate() {
            let at = format!("{pointer}/{i}");
            match b.iter().find(|(other, _)| other == k) {
                Some((_, other)) => {
                    lists.extend(diff(item, other).into_iter().map(|d| Difference {
                        pointer: format!("{at}{}", d.pointer),
                        ..d
                    }))
                }
                None => lists.push(Difference {
                    pointer: at,
                    left: Some((*item).clone()),
                    right: None,
                }),
            }
        }
        for (j, (k, item)) in b.iter().enumerate() {
            if !a.iter().any(|(other, _)| other == k) {
                lists.push(Difference {
                    pointer: format!("{pointer}/{j}"),
                    left: None,
                    right: Some((*item).clone()),
                });
            }
        }
        for v in [&mut rec, &mut liv] {
            if let Some(slot) = v.pointer_mut(pointer) {
                *slot = Value::Null;
            }
        }
    }
    let mut out = diff(&rec, &liv);
    out.extend(lists);
    out
}

/// The elements of the array at `pointer` with their `key` member, when every element
/// has a distinct string key (else the list is compared by position).
fn keyed<'v>(v: &'v Value, pointer: &str, key: &str) -> Option<Vec<(&'v str, &'v Value)>> {
    let items = v.pointer(pointer)?.as_array()?;
    let mut out: Vec<(&str, &Value)> = Vec::with_capacity(items.len());
    for item in items {
        let k = item.get(key)?.as_str()?;
        if out.iter().any(|(seen, _)| *seen == k) {
            return None;
        }
        out.push((k, item));
    }
    Some(out)
}

/// The names of the tools in a `tools/list` answer.
pub fn tool_names(answer: &Value) -> BTreeSet<String> {
    answer
        .pointer("/result/tools")
        .and_then(Value::as_array)
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn is_tool_error(answer: &Value) -> bool {
    answer.pointer("/result/isError") == Some(&Value::Bool(true))
}

/// True when a failed call says its tool does not exist: the tool is missing from the
/// live `tools/list`, or the error text says so ("Unknown tool: x", "Tool x not found").
fn says_unknown_tool(call: Call<'_>, tool: &str, live: &Value) -> bool {
    if call.live_tools.is_some_and(|tools| !tools.contains(tool)) {
        return true;
    }
    let mut text = String::new();
    collect_text(live.get("error").or_else(|| live.get("result")), &mut text);
    let text = text.to_lowercase();
    text.contains("unknown tool")
        || (text.contains(&tool.to_lowercase())
            && (text.contains("not found") || text.contains("unknown") || text.contains("no such")))
}

fn collect_text(v: Option<&Value>, out: &mut String) {
    match v {
        Some(Value::String(s)) => {
            out.push_str(s);
            out.push('\n');
        }
        Some(Value::Array(a)) => a.iter().for_each(|x| collect_text(Some(x), out)),
        Some(Value::Object(o)) => o.values().for_each(|x| collect_text(Some(x), out)),
        _ => {}
    }
}

/// `code message` of an error answer, for one-line messages.
pub fn error_summary(answer: &Value) -> String {
    let code = answer.pointer("/error/code").map(Value::to_string);
    let message = answer.pointer("/error/message").and_then(Value::as_str);
    match (code, message) {
        (Some(c), Some(m)) => format!("{c} {}", reel_mcp::normalize::shorten(m, 80)),
        (Some(c), None) => c,
        (None, Some(m)) => m.to_owned(),
        (None, None) => "error".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(method: &str) -> Call<'_> {
        Call {
            method,
            tool: None,
            live_tools: None,
        }
    }

    fn kind(v: &Verdict) -> Option<(Class, Kind)> {
        match v {
            Verdict::Same => None,
            Verdict::Drift { class, kind, .. } => Some((*class, *kind)),
        }
    }

    #[test]
    fn equal_results_are_the_same_and_content_changes_are_output_drift() {
        let a = json!({"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"42"}]}});
        let b = json!({"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"43"}]}});
        assert_eq!(compare(call("tools/call"), &a, &a), Verdict::Same);
        let v = compare(call("tools/call"), &a, &b);
        assert_eq!(kind(&v), Some((Class::Output, Kind::Result)));
        let Verdict::Drift { differences, .. } = v else {
            panic!()
        };
        assert_eq!(differences[0].pointer, "/result/content/0/text");
    }

    #[test]
    fn keyed_lists_align_by_name_not_position() {
        let rec = json!({"result":{"tools":[
            {"name":"a","description":"A"},{"name":"b","description":"B"},{"name":"c","description":"C"}]}});
        let live = json!({"result":{"tools":[
            {"name":"c","description":"C2"},{"name":"a","description":"A"},{"name":"d"}]}});
        let d = aligned_diff(&rec, &live);
        let shown: Vec<String> = d.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                r#"/result/tools/1: {"description":"B","name":"b"} -> (absent)"#,
                r#"/result/tools/2/description: "C" -> "C2""#,
                r#"/result/tools/2: (absent) -> {"name":"d"}"#,
            ]
        );
        // Same tools in another order: equal.
        let swapped = json!({"result":{"tools":[
            {"name":"b","description":"B"},{"name":"c","description":"C"},{"name":"a","description":"A"}]}});
        assert!(aligned_diff(&rec, &swapped).is_empty());
        // Duplicate names: compared by position.
        let dup = json!({"result":{"tools":[{"name":"a"},{"name":"a","x":1}]}});
        let one = json!({"result":{"tools":[{"name":"a"},{"name":"a","x":2}]}});
        assert_eq!(aligned_diff(&dup, &one)[0].pointer, "/result/tools/1/x");
    }

    #[test]
    fn errors_and_results_trading_places_are_structural() {
        let ok = json!({"result":{}});
        let unknown = json!({"error":{"code":-32601,"message":"Method not found"}});
        let other = json!({"error":{"code":-32603,"message":"boom"}});
        assert_eq!(
            kind(&compare(call("prompts/list"), &ok, &unknown)),
            Some((Class::Structural, Kind::MethodUnknown))
        );
        assert_eq!(
            kind(&compare(call("prompts/list"), &ok, &other)),
            Some((Class::Structural, Kind::ErrorWhereResult))
        );
        assert_eq!(
            kind(&compare(call("prompts/list"), &other, &ok)),
            Some((Class::Structural, Kind::ResultWhereError))
        );
        assert_eq!(
            kind(&compare(call("prompts/list"), &other, &unknown)),
            Some((Class::Output, Kind::Error))
        );
        // Two refusals of the discover probe are the same refusal.
        let refused = json!({"error":{"code":-32602,"message":"Invalid request parameters"}});
        assert_eq!(
            compare(call("server/discover"), &unknown, &refused),
            Verdict::Same
        );
    }

    #[test]
    fn tools_gone_from_the_list_or_unknown_to_a_call_are_structural() {
        let two = json!({"result":{"tools":[{"name":"add"},{"name":"shout"}]}});
        let one = json!({"result":{"tools":[{"name":"add"}]}});
        let v = compare(call("tools/list"), &two, &one);
        assert_eq!(kind(&v), Some((Class::Structural, Kind::ToolGone)));
        let Verdict::Drift { differences, .. } = v else {
            panic!()
        };
        let pointers: Vec<&str> = differences.iter().map(|d| d.pointer.as_str()).collect();
        assert_eq!(pointers, ["/result/tools/1"]);
        // A tool added is new content, not something gone.
        assert_eq!(
            kind(&compare(call("tools/list"), &one, &two)),
            Some((Class::Output, Kind::Result))
        );
        let ok = json!({"result":{"content":[{"type":"text","text":"X!"}]}});
        let unknown = json!({"result":{"content":[{"type":"text","text":"Unknown tool: shout"}],"isError":true}});
        let c = Call {
            method: "tools/call",
            tool: Some("shout"),
            live_tools: None,
        };
        assert_eq!(
            kind(&compare(c, &ok, &unknown)),
            Some((Class::Structural, Kind::ToolGone))
        );
        let failed = json!({"result":{"content":[{"type":"text","text":"division by zero"}],"isError":true}});
        assert_eq!(
            kind(&compare(c, &ok, &failed)),
            Some((Class::Output, Kind::Result))
        );
        let listed: BTreeSet<String> = ["add".to_owned()].into();
        let c = Call {
            live_tools: Some(&listed),
            ..c
        };
        assert_eq!(
            kind(&compare(c, &ok, &failed)),
            Some((Class::Structural, Kind::ToolGone))
        );
        let invalid = json!({"error":{"code":-32602,"message":"Tool shout not found"}});
        assert_eq!(
            kind(&compare(c, &ok, &invalid)),
            Some((Class::Structural, Kind::ToolGone))
        );
    }
}
