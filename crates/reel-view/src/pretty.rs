//! Payloads pretty-printed as they are: the JSON text re-indented token by token, so
//! member order, number spelling and string escapes stay exactly as recorded (a parse
//! and re-serialisation would sort keys and round numbers).

/// `json` with two-space indentation; text that is not JSON comes back re-spaced as far
/// as it went, never lost.
pub fn pretty(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 4);
    let mut depth = 0usize;
    let mut chars = json.char_indices().peekable();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    };
    while let Some((_, c)) = chars.next() {
        match c {
            '"' => {
                out.push('"');
                let mut escaped = false;
                for (_, c) in chars.by_ref() {
                    out.push(c);
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == '"' {
                        break;
                    }
                }
            }
            '{' | '[' => {
                out.push(c);
                let close = if c == '{' { '}' } else { ']' };
                // An empty object or array stays on one line.
                while chars.peek().is_some_and(|(_, c)| c.is_ascii_whitespace()) {
                    chars.next();
                }
                if chars.peek().is_some_and(|&(_, n)| n == close) {
                    chars.next();
                    out.push(close);
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(',');
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if c.is_ascii_whitespace() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::pretty;

    #[test]
    fn order_numbers_and_escapes_stay_as_written() {
        let raw = r#"{"z":1.50,"a":[1,{"q":"a\"b,{c}"}],"e":{},"l":[ ]}"#;
        let p = pretty(raw);
        assert_eq!(
            p,
            "{\n  \"z\": 1.50,\n  \"a\": [\n    1,\n    {\n      \"q\": \"a\\\"b,{c}\"\n    }\n  ],\n  \"e\": {},\n  \"l\": []\n}"
        );
        let back: serde_json::Value = serde_json::from_str(&p).unwrap();
        assert_eq!(
            back,
            serde_json::from_str::<serde_json::Value>(raw).unwrap()
        );
    }
}
