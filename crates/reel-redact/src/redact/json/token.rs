//! JSON string tokens: the contents of one decoded, and a string encoded as one.

/// Decodes the contents of a validated JSON string token. A lone surrogate escape
/// (valid JSON, not a Unicode scalar) decodes to U+FFFD; it only matters if the string
/// is then rewritten.
pub(super) fn decode_into(raw: &str, out: &mut String) {
    let b = raw.as_bytes();
    let hex = |at: usize| -> u32 {
        raw.get(at..at + 4)
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .unwrap_or(0xFFFD)
    };
    out.reserve(raw.len());
    // Runs without a backslash are copied whole; only escapes are looked at one by one.
    let mut at = 0;
    while let Some(i) = memchr::memchr(b'\\', &b[at..]) {
        let i = at + i;
        out.push_str(&raw[at..i]);
        let Some(&e) = b.get(i + 1) else {
            return;
        };
        at = i + 2;
        match e {
            b'b' => out.push('\u{08}'),
            b'f' => out.push('\u{0C}'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'u' => {
                let hi = hex(i + 2);
                at = (i + 6).min(b.len());
                let pair = (0xD800..0xDC00).contains(&hi)
                    && b.get(i + 6) == Some(&b'\\')
                    && b.get(i + 7) == Some(&b'u');
                let lo = if pair { hex(i + 8) } else { 0 };
                let code = if pair && (0xDC00..0xE000).contains(&lo) {
                    at = (i + 12).min(b.len());
                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                } else {
                    hi
                };
                out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
            }
            e if e.is_ascii() => out.push(char::from(e)),
            _ => {
                // Not JSON (a validated token never has this); keep the character.
                let c = raw[i + 1..].chars().next().unwrap_or('\u{FFFD}');
                out.push(c);
                at = i + 1 + c.len_utf8();
            }
        }
        // A `\u` cut short at the end of the token leaves `at` where it stopped.
        if !raw.is_char_boundary(at) {
            return;
        }
    }
    out.push_str(&raw[at..]);
}

/// A string token's contents as text: borrowed when it holds no escape (`escaped`
/// false), decoded otherwise.
pub(super) fn contents(raw: &str, escaped: bool) -> std::borrow::Cow<'_, str> {
    if !escaped {
        return std::borrow::Cow::Borrowed(raw);
    }
    let mut s = String::with_capacity(raw.len());
    decode_into(raw, &mut s);
    std::borrow::Cow::Owned(s)
}

/// `s` as a JSON string token: quotes, backslashes and control characters escaped,
/// everything else as is.
pub(super) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn string_tokens_decode_as_serde_json_decodes_them() {
        for token in [
            r#"plain text, no escapes"#,
            r#"a\"b\\c\/d\b\f\n\r\t"#,
            r#"\u00e9t\u00E9 \ud83d\ude00 done"#,
            r#"lone \ud83d surrogate"#,
            r#"üñí\ncødé \u0041"#,
            r#"\\"#,
            r#"ends with escape\n"#,
        ] {
            let mut out = String::new();
            decode_into(token, &mut out);
            let want: String = serde_json::from_str(&format!("\"{token}\""))
                .unwrap_or_else(|_| "\u{FFFD}".to_owned());
            if token.contains("lone") {
                assert_eq!(out, "lone \u{FFFD} surrogate");
            } else {
                assert_eq!(out, want, "{token}");
            }
        }
    }

    use super::*;

    fn decoded(raw: &str) -> String {
        let mut s = String::new();
        decode_into(raw, &mut s);
        s
    }

    #[test]
    fn decodes_like_serde_json() {
        for raw in [
            r#"plain"#,
            r#"a\"b\\c\/d\b\f\n\r\t"#,
            r#"\u00e9\u0041"#,
            r#"\ud83d\ude00 smile"#,
            r#"é ü 😀"#,
        ] {
            let via_serde: String = serde_json::from_str(&format!("\"{raw}\""))
                .unwrap_or_else(|e| panic!("{raw}: {e}"));
            assert_eq!(decoded(raw), via_serde, "{raw}");
        }
        assert_eq!(decoded(r#"\ud800x"#), "\u{FFFD}x");
        assert_eq!(decoded(r#"\udc00"#), "\u{FFFD}");
    }

    #[test]
    fn quote_round_trips() {
        for s in ["", "a\"b", "\\", "\u{1}\u{1f}\n", "é😀", "[REDACTED]"] {
            let back: String = serde_json::from_str(&quote(s)).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(back, s);
        }
    }
}
