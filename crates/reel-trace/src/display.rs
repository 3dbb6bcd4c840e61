//! Trace content shown to people. A trace is outside input: a label, tool name or
//! message may hold control characters, and a line break in one would start a report
//! line of its own. [`one_line`] is the one escape every human renderer uses for it, and
//! [`is_unsafe`] the one rule for which characters a terminal must never get raw.

use std::borrow::Cow;

/// True for a character trace content must not put on a terminal as it is: every
/// control character (C0, DEL, C1: ESC and CSI sequences drive the terminal) and the
/// Unicode bidirectional formatting characters (U+202A–U+202E embeddings and overrides,
/// U+2066–U+2069 isolates, U+200E/U+200F/U+061C marks), which reorder what is shown so
/// that a report line can read as something else than what it holds.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}'
        )
}

/// `text` as one line with no unsafe characters ([`is_unsafe`]): each is written as
/// Rust escapes it (`\n`, `\r`, `\t`, `\u{1b}`, `\u{202e}`); everything else,
/// backslashes and quotes included, is left as it is. Borrows when there is nothing to
/// escape.
pub fn one_line(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else if is_unsafe(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
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

    /// Trojan Source: an override or isolate reorders the rest of the line on screen.
    #[test]
    fn bidi_controls_are_escaped() {
        assert_eq!(
            one_line("ok\u{202e}lave\u{2066}x\u{2069}\u{200f}"),
            r"ok\u{202e}lave\u{2066}x\u{2069}\u{200f}"
        );
        assert!(matches!(
            one_line("שלום עולם"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
