//! Trace content shown to people. A trace is outside input: a label, tool name or
//! message may hold control characters, and a line break in one would start a report
//! line of its own. [`one_line`] is the one escape every human renderer uses for it.

use std::borrow::Cow;

/// `text` as one line with no control characters: each is written as Rust escapes it
/// (`\n`, `\r`, `\t`, `\u{1b}`); everything else, backslashes and quotes included, is
/// left as it is. Borrows when there is nothing to escape.
pub fn one_line(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn controls_are_escaped_and_nothing_else() {
        assert!(matches!(
            one_line("plain \"q\" \\"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(
            one_line("a\nb\tc\r\x1b]0;t\x07\u{9b}\"\\"),
            r#"a\nb\tc\r\u{1b}]0;t\u{7}\u{9b}"\"#
        );
    }
}
