//! The `.txt` transcript of a save (RFC-0010 §6: "for a reader", its layout not
//! specified): MMSP 0.5.6's layout, line for line, so what people grep for in it
//! (`USER:`, `Text: `, `Prompt Tokens: 10`, `Finish Reason: stop`…) is where they look.
//! Two departures: the header's time is the save's, in UTC and said so (0.5.6 prints
//! local time with no zone), and a null finish reason prints nothing (0.5.6 prints
//! `Finish Reason: None`).

use serde_json::Value;

use super::conversation::{ContentItem, Conversation};
use reel_trace::Timestamp;

const RULE: usize = 80;

/// The transcript of `conversation` saved at `now`.
pub fn transcript(conversation: &Conversation, now: Timestamp) -> String {
    let mut lines: Vec<String> = Vec::new();
    let iso = now.to_iso();
    let when = iso.as_str();
    lines.push("=".repeat(RULE));
    lines.push(format!(
        "Conversation History - {} {} UTC",
        &when[..10],
        &when[11..19]
    ));
    lines.push("=".repeat(RULE));
    lines.push(String::new());
    lines.push("Configuration:".into());
    for (key, value) in conversation.config_with_model() {
        if key == "trace_id" {
            continue;
        }
        match &value {
            Value::Array(_) if key == "tools" => {
                lines.push(format!("  {key}:"));
                lines.push(format!("    {}", pretty(&value)));
            }
            _ => lines.push(format!("  {key}: {}", py_str(&value))),
        }
    }
    lines.push(String::new());
    for (i, message) in conversation.history.iter().enumerate() {
        lines.push(format!("[{}] {}:", i + 1, message.role.to_uppercase()));
        lines.push("-".repeat(RULE));
        for item in &message.content_items {
            item_lines(item, &mut lines);
        }
        if let Some(u) = &message.usage_metadata {
            lines.push("\nUsage Metadata:".into());
            for (label, n) in [
                ("Cached", u.cached_tokens),
                ("Prompt", u.prompt_tokens),
                ("Thoughts", u.thoughts_tokens),
                ("Response", u.response_tokens),
            ] {
                if let Some(n) = n {
                    lines.push(format!("  {label} Tokens: {n}"));
                }
            }
            lines.push(format!("  Total Tokens: {}", u.total()));
        }
        if let Some(f) = &message.finish_reason {
            lines.push(format!("\nFinish Reason: {f}"));
        }
        lines.push(String::new());
    }
    lines.join("\n")
}

fn item_lines(item: &ContentItem, lines: &mut Vec<String>) {
    match item {
        ContentItem::Text { text, .. } => lines.push(format!("Text: {text}")),
        ContentItem::Thinking { thinking, .. } => lines.push(format!("Thinking: {thinking}")),
        ContentItem::InlineThinking {
            data, mime_type, ..
        } => lines.push(inline_summary(data.len(), mime_type, true)),
        ContentItem::ImageUrl { image_url } => lines.push(format!("Image URL: {image_url}")),
        ContentItem::InlineData {
            data, mime_type, ..
        } => lines.push(inline_summary(data.len(), mime_type, false)),
        ContentItem::Embedding { embedding } => {
            let preview: Vec<String> = embedding.iter().take(5).map(py_str).collect();
            lines.push(format!("Embedding: [{}]", preview.join(", ")));
        }
        ContentItem::ToolCall {
            name,
            arguments,
            tool_call_id,
            ..
        } => {
            lines.push(format!("Tool Call: {name}"));
            lines.push(format!("  Arguments: {}", pretty(arguments)));
            lines.push(format!("  Tool Call ID: {tool_call_id}"));
        }
        ContentItem::ToolResult {
            text,
            images,
            tool_call_id,
        } => {
            lines.push(format!("Tool Result (ID: {tool_call_id}): {text}"));
            for (k, url) in images.iter().enumerate() {
                lines.push(format!("  Image {}: {url}", k + 1));
            }
        }
        ContentItem::Other(_) => {}
    }
}

/// `Inline Image: image/png (0.07 KB)`, as 0.5.6 summarises inline bytes.
fn inline_summary(bytes: usize, mime: &str, thinking: bool) -> String {
    let kb = bytes as f64 / 1024.0;
    let mut label = String::from(if thinking { "Thinking " } else { "" });
    label.push_str(if mime.starts_with("image/") {
        "Inline Image"
    } else if mime.starts_with("audio/") {
        "Inline Audio"
    } else {
        "Inline Data"
    });
    if kb < 1000.0 {
        format!("{label}: {mime} ({kb:.2} KB)")
    } else {
        format!("{label}: {mime} ({:.2} MB)", kb / 1024.0)
    }
}

/// JSON with two-space indentation and non-ASCII unescaped (Python's
/// `json.dumps(v, indent=2, ensure_ascii=False)`).
fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// A value as Python's `str()` prints the parsed JSON: strings bare, `True`, `None`,
/// containers in `repr` form (`{'aspect_ratio': '1:1'}`).
fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

fn py_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => py_quote(s),
        Value::Array(a) => {
            let parts: Vec<String> = a.iter().map(py_repr).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Object(o) => {
            let parts: Vec<String> = o
                .iter()
                .map(|(k, v)| format!("{}: {}", py_quote(k), py_repr(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
    }
}

/// Python's `repr` of a string: single quotes unless it holds one and no double quote.
fn py_quote(s: &str) -> String {
    let q = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn config_values_print_as_python_does() {
        assert_eq!(py_str(&json!("auto")), "auto");
        assert_eq!(py_str(&json!(true)), "True");
        assert_eq!(py_str(&json!(null)), "None");
        assert_eq!(py_str(&json!(0.7)), "0.7");
        assert_eq!(
            py_str(&json!({"aspect_ratio": "1:1", "n": [1, false]})),
            "{'aspect_ratio': '1:1', 'n': [1, False]}"
        );
        assert_eq!(py_str(&json!(["it's"])), "[\"it's\"]");
    }

    #[test]
    fn inline_bytes_are_summarised_in_kb_then_mb() {
        assert_eq!(
            inline_summary(70, "image/png", false),
            "Inline Image: image/png (0.07 KB)"
        );
        assert_eq!(
            inline_summary(8, "audio/pcm", true),
            "Thinking Inline Audio: audio/pcm (0.01 KB)"
        );
        assert_eq!(
            inline_summary(2 << 20, "application/pdf", false),
            "Inline Data: application/pdf (2.00 MB)"
        );
    }
}
