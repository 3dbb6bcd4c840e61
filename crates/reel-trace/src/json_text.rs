//! JSON text re-spaced as it is: token by token, so member order, number spelling and
//! string escapes stay exactly as written (a parse and re-serialisation would sort keys
//! and round numbers). [`compact`] drops insignificant whitespace (importers keep a
//! payload on one line), [`pretty`] indents it (the viewer shows payloads so).

/// A token of JSON text: a whole string (quotes included), or one other character;
/// whitespace outside strings is not a token.
enum Tok<'a> {
    Str(&'a str),
    Char(char),
}

/// The tokens of `raw`. Text that is not JSON comes out token by token as far as it
/// goes, never lost: an unterminated string runs to the end.
fn tokens(raw: &str) -> impl Iterator<Item = Tok<'_>> {
    let mut chars = raw.char_indices().peekable();
    std::iter::from_fn(move || {
        loop {
            let (i, c) = chars.next()?;
            if c == '"' {
                let mut escaped = false;
                let mut end = raw.len();
                for (j, c) in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == '"' {
                        end = j + 1;
                        break;
                    }
                }
                return Some(Tok::Str(&raw[i..end]));
            }
            if !c.is_ascii_whitespace() {
                return Some(Tok::Char(c));
            }
        }
    })
}

/// `raw` without insignificant whitespace, its members in their order.
pub fn compact(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for t in tokens(raw) {
        match t {
            Tok::Str(s) => out.push_str(s),
            Tok::Char(c) => out.push(c),
        }
    }
    out
}

/// `raw` with two-space indentation; an empty object or array stays on one line.
pub fn pretty(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len() + raw.len() / 4);
    let mut depth = 0usize;
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    };
    let mut toks = tokens(raw).peekable();
    while let Some(t) = toks.next() {
        match t {
            Tok::Str(s) => out.push_str(s),
            Tok::Char(c @ ('{' | '[')) => {
                out.push(c);
                let close = if c == '{' { '}' } else { ']' };
                if matches!(toks.peek(), Some(Tok::Char(n)) if *n == close) {
                    toks.next();
                    out.push(close);
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            Tok::Char(c @ ('}' | ']')) => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            Tok::Char(',') => {
                out.push(',');
                newline(&mut out, depth);
            }
            Tok::Char(':') => out.push_str(": "),
            Tok::Char(c) => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{compact, pretty};

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
        assert_eq!(
            compact(&p),
            r#"{"z":1.50,"a":[1,{"q":"a\"b,{c}"}],"e":{},"l":[]}"#
        );
    }

    #[test]
    fn compact_keeps_the_whitespace_inside_strings() {
        assert_eq!(
            compact("{ \"b\" : \"a \\\" b\\\\\" ,\n \"a\": [1, 2] }"),
            r#"{"b":"a \" b\\","a":[1,2]}"#
        );
        assert_eq!(compact("\"unterminated  x"), "\"unterminated  x");
    }
}
