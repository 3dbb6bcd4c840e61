//! What the format requires of a line's members, and how a value is quoted in a
//! message. The tables name every member whose JSON type `reel check` checks (`null`
//! counts as absent, as the typed line model reads it); quotes of input are cut to
//! [`SNIPPET`] characters so that one huge value cannot flood a report.

use serde_json::Value;

/// Longest excerpt of a value quoted in a message, in characters.
const SNIPPET: usize = 80;

/// What a known block type requires, for the message when it lacks it; `None` for types
/// this checker does not know.
pub(super) fn required_members(ty: &str) -> Option<&'static str> {
    Some(match ty {
        "thinking" => "a string `thinking`",
        "text" => "a string `text`",
        "tool_use" => "a string `id` and a string `name`",
        "tool_result" => "a string `tool_use_id` (and a boolean `is_error`, if any)",
        "history_elided" => {
            "a non-negative integer `count` and a string `sha256` (and a string `request_sha256`)"
        }
        _ => return None,
    })
}

/// The JSON type a member must have.
#[derive(Clone, Copy)]
enum Expect {
    Number,
    Integer,
    Count,
    Str,
    Bool,
    Array,
    Object,
}

impl Expect {
    fn accepts(self, v: &Value) -> bool {
        match self {
            Expect::Number => v.is_number(),
            Expect::Integer => v.is_i64(),
            Expect::Count => v.is_u64(),
            Expect::Str => v.is_string(),
            Expect::Bool => v.is_boolean(),
            Expect::Array => v.is_array(),
            Expect::Object => v.is_object(),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Expect::Number => "a number",
            Expect::Integer => "an integer",
            Expect::Count => "a non-negative integer",
            Expect::Str => "a string",
            Expect::Bool => "a boolean",
            Expect::Array => "an array",
            Expect::Object => "an object",
        }
    }
}

/// The members of a line whose JSON type is wrong, as sentences (`null` counts as
/// absent, as the typed line model reads it).
pub(super) fn ill_typed_members(ty: &str, value: &Value) -> Vec<String> {
    use Expect::*;
    let table: &[(&str, Expect)] = match ty {
        "meta" => &[
            ("startedAt", Str),
            ("label", Str),
            ("command", Array),
            ("mcpTapVersion", Str),
            ("kind", Str),
            ("source", Str),
            ("reel", Count),
            ("transport", Str),
            ("listen", Str),
            ("upstream", Str),
        ],
        "turn" => &[
            ("t", Str),
            ("role", Str),
            ("blocks", Array),
            ("model", Str),
            ("usage", Object),
            ("timing", Object),
            ("timing.ttft_ms", Number),
            ("timing.duration_ms", Number),
            ("source", Str),
            ("endpoint", Str),
            ("stream", Bool),
            ("echoed", Bool),
            ("truncated", Bool),
            ("stop_reason", Str),
            ("corr_id", Str),
        ],
        "end" => &[
            ("t", Str),
            ("exitCode", Integer),
            ("reason", Str),
            ("durationMs", Number),
            ("counts", Object),
            ("counts.in", Count),
            ("counts.out", Count),
            ("counts.events", Count),
            ("counts.turns", Count),
            ("counts.errors", Count),
            ("source", Str),
        ],
        _ => &[("reformatted", Bool)],
    };
    let prefix = if ty.is_empty() { "line" } else { ty };
    let mut found = Vec::new();
    for (path, expect) in table {
        let mut v = Some(value);
        for part in path.split('.') {
            v = v.and_then(|v| v.get(part));
        }
        match v {
            Some(v) if !v.is_null() && !expect.accepts(v) => found.push(format!(
                "{prefix}.{path} is {}, expected {}",
                describe(v),
                expect.name()
            )),
            _ => {}
        }
    }
    found
}

/// A JSON value for a message: its type and an excerpt.
pub(super) fn describe(v: &Value) -> String {
    let ty = match v {
        Value::Null => return "null".into(),
        Value::Bool(b) => return format!("{b} (a boolean)"),
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    format!("{} ({ty})", snippet(&v.to_string()))
}

/// [`describe`] for JSON text, without building the value.
pub(super) fn describe_text(text: &str) -> String {
    let t = text.trim();
    let ty = match t.as_bytes().first() {
        Some(b'"') => "a string",
        Some(b'[') => "an array",
        Some(b'{') => "an object",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => return "null".into(),
        _ => "a number",
    };
    format!("{} ({ty})", snippet(t))
}

/// At most [`SNIPPET`] characters of `s`, with `…` when cut.
/// Control characters are escaped (`\n`, `\u{1b}`): a quoted value is trace content,
/// and a newline in it would forge report lines, an ESC would drive the terminal.
pub(super) fn snippet(s: &str) -> String {
    let mut cut: String = s.chars().take(SNIPPET).collect();
    if s.chars().nth(SNIPPET).is_some() {
        cut.push('…');
    }
    reel_report::display::one_line(&cut).into_owned()
}
