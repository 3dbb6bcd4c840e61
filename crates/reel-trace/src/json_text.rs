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

/// Levels of nesting [`pretty`] indents; deeper ones stay at this indentation.
pub const PRETTY_MAX_INDENT: usize = 16;

/// The most [`pretty`] writes beyond its input: its output is at most
/// `PRETTY_GROWTH × raw.len() + PRETTY_SLACK` bytes, else it gives `raw` back as it is.
pub const PRETTY_GROWTH: usize = 4;
/// See [`PRETTY_GROWTH`].
pub const PRETTY_SLACK: usize = 64 << 10;

/// `raw` with two-space indentation; an empty object or array stays on one line.
///
/// Linear in `raw`: indentation stops growing past [`PRETTY_MAX_INDENT`] levels, and an
/// output that would grow past its budget ([`PRETTY_GROWTH`]) is abandoned for `raw`
/// itself, so a line nested thousands deep (hostile or not) costs what its bytes do
/// rather than depth × size.
pub fn pretty(raw: &str) -> String {
    let budget = raw
        .len()
        .saturating_mul(PRETTY_GROWTH)
        .saturating_add(PRETTY_SLACK);
    let mut out = String::with_capacity(raw.len() + raw.len() / 4);
    let mut depth = 0usize;
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth.min(PRETTY_MAX_INDENT) {
            out.push_str("  ");
        }
    };
    let mut toks = tokens(raw).peekable();
    while let Some(t) = toks.next() {
        if out.len() > budget {
            return raw.to_owned();
        }
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
    use super::{PRETTY_GROWTH, PRETTY_MAX_INDENT, PRETTY_SLACK, compact, pretty};

    #[test]
    fn deep_nesting_costs_what_its_bytes_do() {
        // 40 KB of nesting: indented at every level it was ~800 MB.
        let depth = 20_000;
        let raw = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        let p = pretty(&raw);
        assert!(
            p.len() <= PRETTY_GROWTH * raw.len() + PRETTY_SLACK,
            "{}",
            p.len()
        );
        // Moderate nesting is still pretty, its indentation capped.
        let raw = format!("{}1{}", "[".repeat(40), "]".repeat(40));
        let p = pretty(&raw);
        let widest = p
            .lines()
            .map(|l| l.len() - l.trim_start().len())
            .max()
            .unwrap();
        assert_eq!(widest, 2 * PRETTY_MAX_INDENT);
        assert_eq!(compact(&p), raw);
    }

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
