//! Where things are in a JSON file, byte for byte, so an edit touches only the bytes it
//! means to: the configuration files of MCP clients are edited in place, every other
//! byte (order, spacing, comments, the user's own keys) left as it was.
//!
//! The grammar is JSON with comments (`//`, `/* */`) and trailing commas, what VS Code's
//! `mcp.json` allows; plain JSON is a subset. Values are located, not interpreted:
//! [`members`] lists an object's members with the spans of their keys and values,
//! [`elements`] an array's elements; strings are decoded with serde_json.

use std::ops::Range;

/// A syntax error: what and where (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {what}")]
pub struct SyntaxError {
    /// What was expected or found.
    pub what: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
}

fn error(text: &str, at: usize, what: impl Into<String>) -> SyntaxError {
    let at = at.min(text.len());
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    SyntaxError {
        what: what.into(),
        line,
        column,
    }
}

/// One member of an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The key, decoded.
    pub key: String,
    /// The key's bytes, quotes included.
    pub key_span: Range<usize>,
    /// The value's bytes.
    pub value: Range<usize>,
}

/// The index after whitespace and comments from `at`.
pub fn skip_blank(text: &str, mut at: usize) -> Result<usize, SyntaxError> {
    let b = text.as_bytes();
    loop {
        match b.get(at) {
            Some(b' ' | b'\t' | b'\n' | b'\r') => at += 1,
            Some(b'/') if b.get(at + 1) == Some(&b'/') => {
                at = text[at..].find('\n').map_or(text.len(), |n| at + n + 1);
            }
            Some(b'/') if b.get(at + 1) == Some(&b'*') => match text[at + 2..].find("*/") {
                Some(n) => at = at + 2 + n + 2,
                None => return Err(error(text, at, "a /* comment that never ends")),
            },
            _ => return Ok(at),
        }
    }
}

/// The end of the string that starts at `at` (its opening quote).
fn string_end(text: &str, at: usize) -> Result<usize, SyntaxError> {
    let b = text.as_bytes();
    let mut i = at + 1;
    while let Some(&c) = b.get(i) {
        match c {
            b'\\' => i += 2,
            b'"' => return Ok(i + 1),
            b'\n' => return Err(error(text, i, "a line break inside a string")),
            _ => i += 1,
        }
    }
    Err(error(text, at, "a string that never ends"))
}

/// The end of the value that starts at `at` (after blanks).
pub fn value_end(text: &str, at: usize) -> Result<usize, SyntaxError> {
    let b = text.as_bytes();
    match b.get(at) {
        Some(b'"') => string_end(text, at),
        Some(b'{') => Ok(members_from(text, at)?.1),
        Some(b'[') => Ok(elements_from(text, at)?.1),
        Some(c) if c.is_ascii_alphanumeric() || *c == b'-' => {
            let end = text[at..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '.')))
                .map_or(text.len(), |n| at + n);
            let word = &text[at..end];
            let ok = matches!(word, "true" | "false" | "null")
                || serde_json::from_str::<serde_json::Number>(word).is_ok();
            if ok {
                Ok(end)
            } else {
                Err(error(text, at, format!("{word:?} is not a JSON value")))
            }
        }
        Some(_) => Err(error(text, at, "a JSON value was expected")),
        None => Err(error(text, at, "the file ends where a value was expected")),
    }
}

fn members_from(text: &str, open: usize) -> Result<(Vec<Member>, usize), SyntaxError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut at = skip_blank(text, open + 1)?;
    loop {
        match b.get(at) {
            Some(b'}') => return Ok((out, at + 1)),
            Some(b'"') => {
                let key_end = string_end(text, at)?;
                // A key serde cannot decode (a lone surrogate `\ud800`, which JavaScript
                // accepts) is kept as written: it matches no name reel looks for.
                let raw = &text[at..key_end];
                let key: String =
                    serde_json::from_str(raw).unwrap_or_else(|_| raw[1..raw.len() - 1].to_owned());
                let colon = skip_blank(text, key_end)?;
                if b.get(colon) != Some(&b':') {
                    return Err(error(text, colon, "a ':' was expected after the key"));
                }
                let start = skip_blank(text, colon + 1)?;
                let end = value_end(text, start)?;
                out.push(Member {
                    key,
                    key_span: at..key_end,
                    value: start..end,
                });
                at = skip_blank(text, end)?;
                match b.get(at) {
                    Some(b',') => at = skip_blank(text, at + 1)?,
                    Some(b'}') => {}
                    _ => return Err(error(text, at, "a ',' or '}' was expected")),
                }
            }
            _ => return Err(error(text, at, "a key or '}' was expected")),
        }
    }
}

fn elements_from(text: &str, open: usize) -> Result<(Vec<Range<usize>>, usize), SyntaxError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut at = skip_blank(text, open + 1)?;
    loop {
        if b.get(at) == Some(&b']') {
            return Ok((out, at + 1));
        }
        let end = value_end(text, at)?;
        out.push(at..end);
        at = skip_blank(text, end)?;
        match b.get(at) {
            Some(b',') => at = skip_blank(text, at + 1)?,
            Some(b']') => {}
            _ => return Err(error(text, at, "a ',' or ']' was expected")),
        }
    }
}

/// The members of the object whose bytes are `span`.
pub fn members(text: &str, span: Range<usize>) -> Result<Vec<Member>, SyntaxError> {
    if text.as_bytes().get(span.start) != Some(&b'{') {
        return Err(error(text, span.start, "an object was expected"));
    }
    Ok(members_from(text, span.start)?.0)
}

/// The elements of the array whose bytes are `span`.
pub fn elements(text: &str, span: Range<usize>) -> Result<Vec<Range<usize>>, SyntaxError> {
    if text.as_bytes().get(span.start) != Some(&b'[') {
        return Err(error(text, span.start, "an array was expected"));
    }
    Ok(elements_from(text, span.start)?.0)
}

/// The span of the whole document's value, checking nothing but blanks follows.
pub fn document(text: &str) -> Result<Range<usize>, SyntaxError> {
    // A byte-order mark (some Windows editors write one) is no part of the value.
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let start = skip_blank(text, bom)?;
    let end = value_end(text, start)?;
    let rest = skip_blank(text, end)?;
    if rest != text.len() {
        return Err(error(text, rest, "text after the end of the JSON value"));
    }
    Ok(start..end)
}

/// The string at `span`, decoded; `None` when it is not a string.
pub fn string(text: &str, span: Range<usize>) -> Option<String> {
    serde_json::from_str(text.get(span)?).ok()
}

/// The member named `key` of the object at `span`.
pub fn member(text: &str, span: Range<usize>, key: &str) -> Result<Option<Member>, SyntaxError> {
    Ok(members(text, span)?.into_iter().find(|m| m.key == key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_and_elements_are_located_with_comments_and_trailing_commas() {
        let text =
            "// settings\n{\n  \"a\": [1, \"x\", {\"b\": null},], /* c */\n  \"é\\n\": true,\n}\n";
        let doc = document(text).unwrap();
        let ms = members(text, doc).unwrap();
        assert_eq!(ms.len(), 2);
        assert_eq!(ms[0].key, "a");
        assert_eq!(&text[ms[0].value.clone()], "[1, \"x\", {\"b\": null},]");
        assert_eq!(ms[1].key, "é\n");
        assert_eq!(&text[ms[1].value.clone()], "true");
        let els = elements(text, ms[0].value.clone()).unwrap();
        assert_eq!(
            els.iter().map(|r| &text[r.clone()]).collect::<Vec<_>>(),
            ["1", "\"x\"", "{\"b\": null}"]
        );
        assert_eq!(string(text, els[1].clone()).as_deref(), Some("x"));
    }

    #[test]
    fn errors_say_where() {
        for (text, line, what) in [
            ("{\n  \"a\": tru\n}", 2, "not a JSON value"),
            ("{\"a\" 1}", 1, "':' was expected"),
            ("{\"a\": 1", 1, "',' or '}'"),
            ("{} x", 1, "text after"),
            ("{\"a\": \"b\n\"}", 1, "line break inside a string"),
            ("/* x", 1, "never ends"),
        ] {
            let e = document(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.what.contains(what), "{text:?}: {e}");
        }
    }
}
