//! YAML as mcp-vcr's PyYAML reads it back: block style like its own files, and every
//! string double-quoted. PyYAML resolves plain scalars by YAML 1.1, where `2025-11-25`
//! is a date, `yes` a boolean and `1e5` a string; a YAML 1.2 emitter leaves those
//! plain, and mcp-vcr then refuses the transcript (`protocol_version: Input should be a
//! valid string`). Quoting every string, and writing floats the way 1.1 wants them,
//! keeps each value the type it was.

use serde_json::{Map, Value};

/// A mapping's entries at `indent`.
pub fn map(m: &Map<String, Value>, indent: usize, out: &mut String) {
    for (k, v) in m {
        pad(indent, out);
        key(k, out);
        out.push(':');
        match v {
            Value::Object(o) if !o.is_empty() => {
                out.push('\n');
                map(o, indent + 2, out);
            }
            Value::Array(a) if !a.is_empty() => {
                out.push('\n');
                seq(a, indent, out);
            }
            _ => {
                out.push(' ');
                scalar(v, out);
                out.push('\n');
            }
        }
    }
}

/// A sequence's items at `indent`.
pub fn seq(a: &[Value], indent: usize, out: &mut String) {
    for v in a {
        pad(indent, out);
        out.push('-');
        match v {
            Value::Object(o) if !o.is_empty() => {
                // The first entry on the dash's line, the rest below it.
                let mut inner = String::new();
                map(o, indent + 2, &mut inner);
                out.push(' ');
                out.push_str(&inner[indent + 2..]);
            }
            Value::Array(a) if !a.is_empty() => {
                out.push('\n');
                seq(a, indent + 2, out);
            }
            _ => {
                out.push(' ');
                scalar(v, out);
                out.push('\n');
            }
        }
    }
}

fn pad(indent: usize, out: &mut String) {
    out.extend(std::iter::repeat_n(' ', indent));
}

/// A key: plain when it is a word YAML 1.1 reads as a string, else quoted.
fn key(k: &str, out: &mut String) {
    let word = k
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let special = matches!(
        k.to_ascii_lowercase().as_str(),
        "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false" | "null"
    );
    if word && !special {
        out.push_str(k);
    } else {
        quoted(k, out);
    }
}

fn scalar(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => number(&n.to_string(), out),
        Value::String(s) => quoted(s, out),
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
}

/// A number; YAML 1.1 floats need a `.` and a signed exponent (`1e5` is a string
/// there, `1.0e+5` a float).
fn number(n: &str, out: &mut String) {
    match n.split_once(['e', 'E']) {
        Some((mantissa, exp)) => {
            out.push_str(mantissa);
            if !mantissa.contains('.') {
                out.push_str(".0");
            }
            out.push('e');
            if !exp.starts_with(['+', '-']) {
                out.push('+');
            }
            out.push_str(exp);
        }
        None => out.push_str(n),
    }
}

/// A double-quoted scalar; what YAML would fold or refuse (line breaks, control
/// and non-printable characters) escaped.
/// (Not the redaction walker's JSON `quote`: YAML escapes what JSON keeps as is, the
/// non-printable and the line separators among them.)
fn quoted(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20
                || (0x7f..=0x9f).contains(&(c as u32))
                || matches!(
                    c,
                    '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
                ) =>
            {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}
