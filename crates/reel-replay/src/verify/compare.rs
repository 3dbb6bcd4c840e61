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

use reel_mcp::drift;
use reel_mcp::drift::lists::Change;
use reel_mcp::jsonrpc::methods;
use reel_mcp::normalize::{Difference, diff};
use serde_json::Value;

/// JSON pointers verify always ignores, with why (listed in `reel verify --help`).
pub const VERIFY_IGNORED: [(&str, &str); 1] = [(
    "/result/requestState",
    "2026-07-28 `input_required` state: opaque, the server's to choose; reel sends the live one back on the retry",
)];

/// How bad a drift is, and what kind: the one vocabulary of `reel_mcp::drift`, so
/// `verify --json` names a change as `diff --json` does.
pub use reel_mcp::drift::{Class, Kind};

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

impl Verdict {
    /// Drift of this kind, its class the kind's.
    fn drift(kind: Kind, message: String, differences: Vec<Difference>) -> Verdict {
        Verdict::Drift {
            class: kind.class(),
            kind,
            message,
            differences,
        }
    }
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
/// messages: a change of the answer's class by `reel_mcp::drift`'s rule (its sides named
/// "the recording" and "the live server"), else their content.
pub fn compare(call: Call<'_>, recorded: &Value, live: &Value) -> Verdict {
    let (rec_error, live_error) = (recorded.get("error"), live.get("error"));
    if call.method == methods::SERVER_DISCOVER && rec_error.is_some() && live_error.is_some() {
        return Verdict::Same;
    }
    let differences = aligned_diff(recorded, live);
    let tool_listed = call
        .live_tools
        .zip(call.tool)
        .map(|(tools, tool)| tools.contains(tool));
    let shared = drift::Call {
        method: call.method,
        tool: call.tool,
        tool_listed,
    };
    let both_results = rec_error.is_none() && live_error.is_none();
    let sides = drift::Sides {
        a: "the recording",
        b: "the live server",
    };
    let change = (both_results && !differences.is_empty())
        .then(|| list_change(call.method, recorded, live))
        .flatten()
        .or_else(|| unknown_tool(call, shared, recorded, live))
        .or_else(|| drift::answer_change(shared, answer(recorded), answer(live), sides));
    if let Some((kind, message)) = change {
        return Verdict::drift(kind, message, differences);
    }
    if differences.is_empty() {
        return Verdict::Same;
    }
    if live_error.is_some() {
        let message = format!("the error differs ({})", error_summary(live));
        return Verdict::drift(Kind::ErrorChanged, message, differences);
    }
    let message = format!(
        "the result differs at {} place{}",
        differences.len(),
        if differences.len() == 1 { "" } else { "s" }
    );
    Verdict::drift(Kind::ResultChanged, message, differences)
}

/// A list answer (tools, prompts, resources) that changed: which changes are
/// structural is the one rule of `reel_mcp::drift::lists`, as in `reel diff`.
fn list_change(method: &str, recorded: &Value, live: &Value) -> Option<(Kind, String)> {
    let (log, structural) = drift::lists::changelog(method, recorded, live)?;
    let count = |c: Change| log.entries.iter().filter(|e| e.change == c).count();
    let (added, removed, changed) = (
        count(Change::Added),
        count(Change::Removed),
        count(Change::Changed),
    );
    let message = if removed > 0 {
        let gone: Vec<&str> = log
            .entries
            .iter()
            .filter(|e| e.change == Change::Removed)
            .map(|e| e.name.as_str())
            .collect();
        format!("{} gone from {method}: {}", log.list, gone.join(", "))
    } else {
        format!("{method}: {added} added, {removed} removed, {changed} changed")
    };
    let kind = if structural {
        Kind::SchemaChanged
    } else {
        Kind::ListChanged
    };
    Some((kind, message))
}

/// A tool error whose text says the tool is unknown (`isError: true`, "Unknown tool")
/// where the recording has none.
fn unknown_tool(
    call: Call<'_>,
    shared: drift::Call<'_>,
    recorded: &Value,
    live: &Value,
) -> Option<(Kind, String)> {
    if !is_tool_error(live) || is_tool_error(recorded) || recorded.get("error").is_some() {
        return None;
    }
    let mut text = String::new();
    collect_text(live.get("result"), &mut text);
    drift::says_unknown_tool(shared, None, &text).then(|| {
        let message = format!(
            "the live server does not know the tool `{}`",
            call.tool.unwrap_or_default()
        );
        (Kind::ToolUnknown, message)
    })
}

/// How a whole JSON-RPC answer was answered, for [`drift::answer_change`].
fn answer(v: &Value) -> drift::Answer<'_> {
    match v.get("error") {
        Some(e) => drift::Answer::Error {
            code: e.get("code").and_then(Value::as_i64),
            message: e.get("message").and_then(Value::as_str),
        },
        None => drift::Answer::Result {
            is_error: is_tool_error(v),
        },
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
        assert_eq!(kind(&v), Some((Class::Output, Kind::ResultChanged)));
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
    fn a_result_becoming_an_error_is_structural_and_the_reverse_output() {
        let ok = json!({"result":{}});
        let unknown = json!({"error":{"code":-32601,"message":"Method not found"}});
        let other = json!({"error":{"code":-32603,"message":"boom"}});
        assert_eq!(
            kind(&compare(call("prompts/list"), &ok, &unknown)),
            Some((Class::Structural, Kind::MethodUnknown))
        );
        assert_eq!(
            kind(&compare(call("prompts/list"), &ok, &other)),
            Some((Class::Structural, Kind::BecameError))
        );
        assert_eq!(
            kind(&compare(call("prompts/list"), &other, &ok)),
            Some((Class::Output, Kind::ErrorBecameResult))
        );
        // An error that became "method not found" is a method gone, as in `reel diff`.
        assert_eq!(
            kind(&compare(call("prompts/list"), &other, &unknown)),
            Some((Class::Structural, Kind::MethodUnknown))
        );
        let worse = json!({"error":{"code":-32603,"message":"worse"}});
        assert_eq!(
            kind(&compare(call("prompts/list"), &other, &worse)),
            Some((Class::Output, Kind::ErrorChanged))
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
        assert_eq!(kind(&v), Some((Class::Structural, Kind::SchemaChanged)));
        let Verdict::Drift { differences, .. } = v else {
            panic!()
        };
        let pointers: Vec<&str> = differences.iter().map(|d| d.pointer.as_str()).collect();
        assert_eq!(pointers, ["/result/tools/1"]);
        // A tool added changes the schema too, as `reel diff` rules; a description
        // alone is content.
        assert_eq!(
            kind(&compare(call("tools/list"), &one, &two)),
            Some((Class::Structural, Kind::SchemaChanged))
        );
        let described = json!({"result":{"tools":[{"name":"add","description":"new"}]}});
        assert_eq!(
            kind(&compare(call("tools/list"), &one, &described)),
            Some((Class::Output, Kind::ListChanged))
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
            Some((Class::Structural, Kind::ToolUnknown))
        );
        // A result that became a tool error is structural, as in `reel diff`.
        let failed = json!({"result":{"content":[{"type":"text","text":"division by zero"}],"isError":true}});
        assert_eq!(
            kind(&compare(c, &ok, &failed)),
            Some((Class::Structural, Kind::BecameError))
        );
        let listed: BTreeSet<String> = ["add".to_owned()].into();
        let c = Call {
            live_tools: Some(&listed),
            ..c
        };
        assert_eq!(
            kind(&compare(c, &ok, &failed)),
            Some((Class::Structural, Kind::ToolUnknown))
        );
        let invalid = json!({"error":{"code":-32602,"message":"Tool shout not found"}});
        assert_eq!(
            kind(&compare(c, &ok, &invalid)),
            Some((Class::Structural, Kind::ToolUnknown))
        );
    }
}
