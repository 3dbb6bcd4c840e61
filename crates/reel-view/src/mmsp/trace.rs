//! A `.json` file as an MMSP trace, round by round: the config card, one card per
//! message (its items, finish reason and usage), and the rail of rounds.

use std::fmt::Write as _;

use reel_convert::mmsp::current_item_type;
use reel_convert::parse_time;
use serde_json::{Map, Value};

use super::media::{image_url_html, inline_html};
use super::page::{
    Page, chrome, delta_text, escape, escape_text, grouped, percent_encode, plural, utc,
};

/// How many values of an embedding a trace page shows.
const EMBEDDING_PREVIEW: usize = 5;

/// A `.json` file as a trace, round by round; a JSON document that is not a trace renders
/// as an empty one (its `history` and `config` are read when they have the right shape).
pub(super) fn trace_page(segments: &[String], doc: &Value) -> Page {
    let name = segments.last().map(String::as_str).unwrap_or("cache");
    let empty = Map::new();
    let history: &[Value] = match doc.get("history") {
        Some(Value::Array(h)) => h,
        _ => &[],
    };
    let config = match doc.get("config") {
        Some(Value::Object(c)) => c,
        _ => &empty,
    };
    let n = history.len();
    let rounds = n.div_ceil(2);
    let mut main = String::new();
    main.push_str("<div class=\"trace-layout\">\n<main class=\"trace\">\n");
    let _ = write!(main, "<h1>{}</h1>\n<p class=\"meta\">", escape(name));
    if let Some(model) = config.get("model").and_then(Value::as_str) {
        let _ = write!(main, "<span class=\"model\">{}</span>", escape(model));
    }
    let _ = write!(
        main,
        "<span>{}</span><span>{}</span>",
        plural(n, "message", "messages"),
        plural(rounds, "round", "rounds")
    );
    if let Some(Value::String(ts)) = doc.get("timestamp") {
        let shown = parse_time(ts).map_or_else(|| ts.clone(), |(t, _)| utc(t.millis()));
        let _ = write!(main, "<span>Saved {}</span>", escape(&shown));
    }
    let _ = writeln!(
        main,
        "<a class=\"button\" href=\"/_reel/#trace={}\">Open in reel</a></p>",
        escape(&percent_encode(&segments.join("/")))
    );
    config_card(&mut main, config);
    let mut previous: Option<i64> = None;
    for (i, message) in history.iter().enumerate() {
        let created = message.get("created_at").and_then(Value::as_i64);
        message_card(&mut main, i, rounds, message, created, previous);
        if created.is_some() {
            previous = created;
        }
    }
    main.push_str("</main>\n");
    rail(&mut main, history, rounds);
    main.push_str("</div>");
    Page::html(chrome(&format!("{name} - MMSP Tracer"), segments, &main))
}

/// Every config key but `trace_id`: `system_prompt` and `tools` folded, strings as they
/// are, other values as JSON.
fn config_card(out: &mut String, config: &Map<String, Value>) {
    out.push_str("<section class=\"card config-card\">\n<h2>Config</h2>\n<dl>\n");
    for (key, value) in config {
        if key == "trace_id" {
            continue;
        }
        let _ = write!(out, "<dt>{}</dt><dd>", escape(key));
        match (key.as_str(), value) {
            ("system_prompt", Value::String(s)) => {
                let _ = write!(
                    out,
                    "<details><summary>Show</summary><pre>{}</pre></details>",
                    escape(s)
                );
            }
            ("tools", Value::Array(tools)) => {
                let _ = write!(
                    out,
                    "<details><summary>{}</summary><pre>{}</pre></details>",
                    plural(tools.len(), "tool", "tools"),
                    escape(&pretty(value))
                );
            }
            (_, Value::String(s)) => out.push_str(&escape(s)),
            (_, v) => {
                let _ = write!(out, "<code>{}</code>", escape(&v.to_string()));
            }
        }
        out.push_str("</dd>\n");
    }
    out.push_str("</dl>\n</section>\n");
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// One message as a card: role, item count, round, times, items, finish reason, usage.
fn message_card(
    out: &mut String,
    i: usize,
    rounds: usize,
    message: &Value,
    created: Option<i64>,
    previous: Option<i64>,
) {
    let role = message.get("role").and_then(Value::as_str).unwrap_or("?");
    let role_class = match role {
        "user" | "assistant" => role,
        _ => "other",
    };
    let items: Vec<(String, &Value)> = match message.get("content_items") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| {
                let ty = item
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown");
                current_item_type(ty).map(|t| (t.into_owned(), item))
            })
            .collect(),
        _ => Vec::new(),
    };
    let _ = write!(
        out,
        "<details class=\"card msg-card\" id=\"msg-{i}\" open>\n<summary>\
         <span class=\"badge role-{role_class}\">{}</span><span>{}</span>\
         <span class=\"round\">Round {} / {rounds}</span>",
        escape(role),
        plural(items.len(), "item", "items"),
        i / 2 + 1,
    );
    if let (Some(now), Some(before)) = (created, previous) {
        let _ = write!(
            out,
            "<span class=\"delta\">{}</span>",
            delta_text(now - before)
        );
    }
    if let Some(t) = created {
        let _ = write!(out, "<span class=\"time\">{}</span>", utc(t));
    }
    out.push_str("</summary>\n<div class=\"items\">\n");
    for (ty, item) in &items {
        item_html(out, ty, item);
    }
    out.push_str("</div>\n");
    footer(out, message);
    out.push_str("</details>\n");
}

/// The CSS class part of an item type: what comes before the first `.`, kept to
/// `[a-z0-9_-]`.
pub(super) fn kind_of(ty: &str) -> &str {
    let kind = ty.split('.').next().unwrap_or_default();
    if !kind.is_empty()
        && kind
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
    {
        kind
    } else {
        "other"
    }
}

pub(super) fn str_field<'a>(item: &'a Value, key: &str) -> Option<&'a str> {
    item.get(key).and_then(Value::as_str)
}

/// One item: its type, then what it holds.
fn item_html(out: &mut String, ty: &str, item: &Value) {
    let _ = write!(
        out,
        "<div class=\"item kind-{}\"><div class=\"item-head\"><div class=\"item-type\">{}</div>",
        kind_of(ty),
        escape(ty)
    );
    if matches!(ty, "tool_call.done" | "tool_result.done") {
        if let Some(id) = str_field(item, "tool_call_id") {
            let _ = write!(out, "<span class=\"item-id\">{}</span>", escape(id));
        }
    }
    out.push_str("</div>");
    let has_fidelity = item.get("fidelity").is_some_and(|f| !f.is_null());
    match ty {
        "text.done" => text_body(out, str_field(item, "text"), has_fidelity),
        "thinking.done" => match str_field(item, "thinking") {
            Some("_REDACTED_THINKING") => {
                out.push_str("<div class=\"item-note\">Redacted thinking</div>");
            }
            t => text_body(out, t, has_fidelity),
        },
        "tool_call.done" => {
            let name = str_field(item, "name").unwrap_or("?");
            let _ = write!(
                out,
                "<div class=\"item-call\">{}</div>",
                escape_text(&call_text(name, item.get("arguments")))
            );
        }
        "tool_result.done" => {
            text_body(out, str_field(item, "text"), false);
            if let Some(Value::Array(images)) = item.get("images") {
                for url in images.iter().filter_map(Value::as_str) {
                    image_url_html(out, url);
                }
            }
        }
        "image_url.done" => image_url_html(out, str_field(item, "image_url").unwrap_or("")),
        "inline_data.done" => inline_html(
            out,
            "Inline",
            str_field(item, "mime_type").unwrap_or(""),
            str_field(item, "data").unwrap_or(""),
        ),
        "inline_thinking.done" => inline_html(
            out,
            "Thinking inline",
            str_field(item, "mime_type").unwrap_or(""),
            str_field(item, "data").unwrap_or(""),
        ),
        "embedding.done" => embedding_html(out, item.get("embedding")),
        _ => {
            let _ = write!(
                out,
                "<pre class=\"item-json\">{}</pre>",
                escape(&pretty(item))
            );
        }
    }
    out.push_str("</div>\n");
}

/// Text or thinking, trimmed; `No text` when empty (`, only fidelity` when that is all).
fn text_body(out: &mut String, text: Option<&str>, has_fidelity: bool) {
    let text = text.unwrap_or_default().trim();
    if text.is_empty() {
        let _ = write!(
            out,
            "<div class=\"item-note\">No text{}</div>",
            if has_fidelity { ", only fidelity" } else { "" }
        );
    } else {
        let _ = write!(out, "<div class=\"item-text\">{}</div>", escape(text));
    }
}

/// A tool call as `name(k="v", n=1)`: string values quoted, others as JSON.
pub(super) fn call_text(name: &str, arguments: Option<&Value>) -> String {
    let parsed;
    let arguments = match arguments {
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Object(_)) => {
                parsed = v;
                Some(&parsed)
            }
            _ => return format!("{name}({s})"),
        },
        a => a,
    };
    let args = match arguments {
        Some(Value::Object(o)) => o
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", "),
        None | Some(Value::Null) => String::new(),
        Some(v) => v.to_string(),
    };
    format!("{name}({args})")
}

/// The first five values of an embedding and how many there are; never the sixth.
fn embedding_html(out: &mut String, embedding: Option<&Value>) {
    let Some(Value::Array(values)) = embedding else {
        out.push_str("<div class=\"item-note\">No embedding</div>");
        return;
    };
    let shown: Vec<String> = values
        .iter()
        .take(EMBEDDING_PREVIEW)
        .map(Value::to_string)
        .collect();
    let more = if values.len() > EMBEDDING_PREVIEW {
        ", …"
    } else {
        ""
    };
    let _ = write!(
        out,
        "<div class=\"item-text\">Embedding: [{}{more}] <span class=\"item-id\">{}</span></div>",
        escape(&shown.join(", ")),
        plural(values.len(), "dimension", "dimensions")
    );
}

/// Finish reason and usage: the non-zero counts, then their total (MMSP's `prompt_tokens`
/// leaves out the cached input, so the total adds `cached_tokens` back).
pub(super) fn footer(out: &mut String, message: &Value) {
    let finish = message.get("finish_reason").and_then(Value::as_str);
    let usage = message.get("usage_metadata").and_then(Value::as_object);
    if finish.is_none() && usage.is_none() {
        return;
    }
    out.push_str("<div class=\"msg-footer\">");
    if let Some(f) = finish {
        let _ = write!(out, "<span class=\"badge finish\">{}</span>", escape(f));
    }
    if let Some(u) = usage {
        let mut total = 0u64;
        for (key, label) in [
            ("cached_tokens", "Cached"),
            ("prompt_tokens", "Prompt"),
            ("thoughts_tokens", "Thoughts"),
            ("response_tokens", "Response"),
        ] {
            let n = u.get(key).and_then(Value::as_u64).unwrap_or(0);
            if n > 0 {
                total = total.saturating_add(n);
                let _ = write!(out, "<span class=\"usage\">{label} {}</span>", grouped(n));
            }
        }
        let _ = write!(
            out,
            "<span class=\"usage total\">Total {}</span>",
            grouped(total)
        );
    }
    out.push_str("</div>\n");
}

/// The right rail: one link per round, with the time between assistant answers.
fn rail(out: &mut String, history: &[Value], rounds: usize) {
    let _ = write!(
        out,
        "<nav class=\"rail\"><h2>Rounds ({rounds})</h2>\n<ol>\n"
    );
    let mut last_answer: Option<i64> = None;
    for r in 0..rounds {
        let _ = write!(out, "<li><a href=\"#msg-{}\">Round {}</a>", 2 * r, r + 1);
        let answer = history
            .get(2 * r + 1)
            .and_then(|m| m.get("created_at"))
            .and_then(Value::as_i64);
        if let (Some(now), Some(before)) = (answer, last_answer) {
            let _ = write!(
                out,
                " <span class=\"delta\">{}</span>",
                delta_text(now - before)
            );
        }
        if answer.is_some() {
            last_answer = answer;
        }
        out.push_str("</li>\n");
    }
    out.push_str("</ol>\n</nav>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn usage_counts_the_cached_input_into_the_total() {
        let mut out = String::new();
        footer(
            &mut out,
            &json!({"usage_metadata": {"cached_tokens": 100, "prompt_tokens": 20,
                                       "thoughts_tokens": 0, "response_tokens": null}}),
        );
        assert!(
            out.contains("Cached 100") && out.contains("Prompt 20"),
            "{out}"
        );
        assert!(
            !out.contains("Thoughts") && !out.contains("Response"),
            "{out}"
        );
        assert!(out.contains("Total 120"), "{out}");
    }

    #[test]
    fn tool_calls_and_item_kinds_are_written_as_mmsp_shows_them() {
        assert_eq!(
            call_text("f", Some(&json!({"a": "x", "l": [true], "n": 1}))),
            "f(a=\"x\", l=[true], n=1)"
        );
        assert_eq!(
            call_text("f", Some(&json!("{\"city\": \"Paris\"}"))),
            "f(city=\"Paris\")"
        );
        assert_eq!(kind_of("tool_call.done"), "tool_call");
        assert_eq!(kind_of("Bad Kind\""), "other");
    }
}
