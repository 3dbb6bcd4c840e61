//! Trace content shown to people. A trace is outside input: a label, tool name or
//! message may hold control characters, and a line break in one would start a report
//! line of its own. [`escape`] is the one escape every human output goes through
//! ([`one_line`] for a quoted value, [`TerminalSafe`] for a whole stream), and
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

/// What [`escape`] lets through of what [`is_unsafe`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Keep {
    /// `\n` and `\t`: a report of several lines, not one quoted value.
    pub line_breaks: bool,
    /// SGR sequences (`ESC [ digits ; m`): reel's own colour, when colour is on. They can
    /// only colour text.
    pub sgr: bool,
}

/// The one escape for human output: `text` with every unsafe character ([`is_unsafe`])
/// but what `keep` lets through written as Rust escapes it (`\n`, `\r`, `\u{1b}`,
/// `\u{202e}`); everything else, backslashes and quotes included, is left as it is.
/// Borrows when there is nothing to escape.
pub fn escape(text: &str, keep: Keep) -> Cow<'_, str> {
    let kept = |c: char| keep.line_breaks && (c == '\n' || c == '\t');
    if !text.chars().any(|c| is_unsafe(c) && !kept(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '\x1b' && keep.sgr {
            if let Some(n) = sgr_len(rest) {
                out.push_str(&rest[..n]);
                rest = &rest[n..];
                continue;
            }
        }
        if kept(c) || !is_unsafe(c) {
            out.push(c);
        } else if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// The length of the SGR sequence `s` starts with, if it starts with one.
fn sgr_len(s: &str) -> Option<usize> {
    let body = s.strip_prefix("\x1b[")?;
    let params = body
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    (body.as_bytes().get(params) == Some(&b'm')).then_some(2 + params + 1)
}

/// `text` as one line with no unsafe characters: [`escape`] keeping nothing.
pub fn one_line(text: &str) -> Cow<'_, str> {
    escape(text, Keep::default())
}

/// A writer for human output (a report, a diagnostic) that escapes what trace content
/// or live input could drive a terminal with.
///
/// Human output quotes outside input: tool names, labels, error messages, file names,
/// the method of a live request. An ESC or C1 sequence in it could set the window
/// title, clear the screen, move the cursor to overwrite a verdict, or write the
/// clipboard (OSC 52), and a bidi override could make a line read as something else.
/// So everything goes through [`escape`], keeping line breaks and, when `sgr`, reel's
/// colour. Every piece written should be a whole `str` (format arguments are written
/// whole), so a painted string's SGR sequence is never split across calls.
pub struct TerminalSafe<W> {
    inner: W,
    keep: Keep,
}

impl<W: std::io::Write> TerminalSafe<W> {
    /// Escapes what goes to `inner`; SGR passes when `sgr`.
    pub fn new(inner: W, sgr: bool) -> TerminalSafe<W> {
        TerminalSafe {
            inner,
            keep: Keep {
                line_breaks: true,
                sgr,
            },
        }
    }
}

impl<W: std::io::Write> std::io::Write for TerminalSafe<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.inner.write_all(escape(&text, self.keep).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// What a piece of human output means, for a renderer that colours it: the library
/// says what a word is, the CLI says how it looks (SGR codes on a terminal, nothing
/// elsewhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Tone {
    /// A failure: an error, a FAIL verdict.
    Bad,
    /// Something to look at: a warning.
    Warn,
    /// For information.
    Note,
    /// A success: ok.
    Good,
    /// A title: a table's header row, a section's name.
    Heading,
}

/// How a renderer colours a [`Tone`]d piece of text.
pub type Paint<'a> = &'a dyn Fn(Tone, &str) -> String;

/// A [`Paint`] that adds nothing: plain text.
pub fn plain(_: Tone, text: &str) -> String {
    text.to_owned()
}

/// `n word`, `n words`: `1 error`, `2 errors`; `info` does not take an `s`.
pub fn plural(n: u64, word: &str) -> String {
    if n == 1 || word == "info" {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// A cell of a [`Table`]: its text (made one line) and a tone applied after padding.
pub struct Cell {
    text: String,
    right: bool,
    tone: Option<Tone>,
}

impl Cell {
    /// A left-aligned cell; its text may come from the trace, so it is made one line
    /// (see [`one_line`]) before it is measured.
    pub fn left(text: impl Into<String>) -> Cell {
        let text = text.into();
        Cell {
            text: one_line(&text).into_owned(),
            right: false,
            tone: None,
        }
    }

    /// A right-aligned cell (numbers).
    pub fn right(text: impl Into<String>) -> Cell {
        Cell {
            right: true,
            ..Cell::left(text)
        }
    }
    /// The cell in `tone` when `cond` holds.
    pub fn paint_if(mut self, cond: bool, tone: Tone) -> Cell {
        if cond {
            self.tone = Some(tone);
        }
        self
    }
}

/// A table whose columns are as wide as their widest cell, two spaces apart; the last
/// column is not padded. Tones are applied after padding, so escape codes never count
/// towards a width.
pub struct Table {
    header: Vec<Cell>,
    /// The tone of the header row.
    pub header_tone: Tone,
    rows: Vec<Vec<Cell>>,
}

impl Table {
    /// A table with these column titles; `true` right-aligns a column.
    pub fn new(header: &[(&str, bool)]) -> Table {
        let header = header
            .iter()
            .map(|(h, right)| {
                if *right {
                    Cell::right(*h)
                } else {
                    Cell::left(*h)
                }
            })
            .collect();
        Table {
            header,
            header_tone: Tone::Heading,
            rows: Vec::new(),
        }
    }

    /// Adds a row.
    pub fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push(cells);
    }

    /// Appends the table, a line each row, to `s`.
    pub fn write(&self, s: &mut String, paint: Paint<'_>) {
        let columns = self.header.len();
        let mut widths = vec![0; columns];
        for row in std::iter::once(&self.header).chain(&self.rows) {
            for (w, c) in widths.iter_mut().zip(row) {
                *w = (*w).max(c.text.chars().count());
            }
        }
        let line = |row: &[Cell], header: bool| {
            let mut l = String::new();
            for (i, (c, w)) in row.iter().zip(&widths).enumerate() {
                let pad = w - c.text.chars().count();
                let last = i + 1 == columns;
                let padded = match (c.right, last) {
                    (true, _) => format!("{}{}", " ".repeat(pad), c.text),
                    (false, true) => c.text.clone(),
                    (false, false) => format!("{}{}", c.text, " ".repeat(pad)),
                };
                let tone = if header {
                    Some(self.header_tone)
                } else {
                    c.tone
                };
                l.push_str(&match tone {
                    Some(tone) => paint(tone, &padded),
                    None => padded,
                });
                if !last {
                    l.push_str("  ");
                }
            }
            l
        };
        s.push_str(&line(&self.header, true));
        s.push('\n');
        for row in &self.rows {
            s.push_str(&line(row, false));
            s.push('\n');
        }
    }
}

/// The width `--help` rule tables wrap at: within clap's own wrapping width, so clap
/// leaves the lines as they are.
pub const HELP_WIDTH: usize = 88;

/// A `--help` table of named rules: `  name  description`, the descriptions aligned
/// and wrapped at [`HELP_WIDTH`] under themselves (the one layout of every rule list
/// `--help` shows: matching, normalisation, honest differences).
pub fn rule_table<'a>(rows: impl IntoIterator<Item = (&'a str, String)>) -> String {
    let rows: Vec<(&str, String)> = rows.into_iter().collect();
    let name_width = rows
        .iter()
        .map(|(n, _)| n.chars().count())
        .max()
        .unwrap_or(0);
    let indent = 2 + name_width + 2;
    let text_width = HELP_WIDTH.saturating_sub(indent).max(20);
    let mut out = String::new();
    for (name, text) in rows {
        let mut line = String::new();
        let mut first = true;
        let flush = |out: &mut String, line: &mut String, first: &mut bool| {
            if *first {
                out.push_str(&format!("  {name:<name_width$}  {line}\n"));
                *first = false;
            } else {
                out.push_str(&format!("{:indent$}{line}\n", ""));
            }
            line.clear();
        };
        for word in text.split_whitespace() {
            if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > text_width {
                flush(&mut out, &mut line, &mut first);
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        if !line.is_empty() || first {
            flush(&mut out, &mut line, &mut first);
        }
    }
    out
}

/// A duration for people: `850ms`, `12.3s`, `4m05s`, `2h03m`. Each unit is cut, not
/// rounded up, as a clock shows it (59.96 s is `59.9s`, not `60.0s`); negative and
/// unknown (NaN) durations show as `0ms`.
pub fn duration(ms: f64) -> String {
    let ms = if ms.is_nan() { 0.0 } else { ms.max(0.0) };
    if ms < 1000.0 {
        return format!("{}ms", ms.floor());
    }
    let tenths = (ms / 100.0).floor() as u64;
    if tenths < 600 {
        return format!("{}.{}s", tenths / 10, tenths % 10);
    }
    let s = (ms / 1000.0).floor() as u64;
    if s < 3600 {
        return format!("{}m{:02}s", s / 60, s % 60);
    }
    format!("{}h{:02}m", s / 3600, s / 60 % 60)
}

/// A size for people: `512 B`, `12.4 KiB`, `3.0 GiB`.
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// Trace content as HTML or XML text (`attribute`: also a quoted attribute value):
/// `& < >` escaped, and `" '` too in an attribute; the C0 controls XML 1.0 cannot hold
/// (all but tab, LF and CR) shown as `\u{…}`. The one markup escape of the viewer's
/// pages and the JUnit report.
pub fn markup(text: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            '\'' if attribute => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod markup_tests {
    use super::markup;

    #[test]
    fn markup_escapes_text_and_attributes_and_shows_what_xml_cannot_hold() {
        let s = "a<b>&\"c\" 'd'\n\u{1b}[31m";
        assert_eq!(markup(s, false), "a&lt;b&gt;&amp;\"c\" 'd'\n\\u{1b}[31m");
        assert_eq!(
            markup(s, true),
            "a&lt;b&gt;&amp;&quot;c&quot; &#39;d&#39;\n\\u{1b}[31m"
        );
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::{Keep, TerminalSafe, duration, escape, one_line, size};

    #[test]
    fn rule_tables_align_and_wrap_under_their_text() {
        let t = super::rule_table([("a", "short".to_owned()), ("longer", "word ".repeat(40))]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "  a       short");
        assert!(lines[1].starts_with("  longer  word word"));
        assert!(lines.len() > 3, "{t}");
        for l in &lines[2..] {
            assert!(l.starts_with("          word"), "{l:?}");
        }
        assert!(
            lines.iter().all(|l| l.chars().count() <= super::HELP_WIDTH),
            "{t}"
        );
    }

    #[test]
    fn durations_and_sizes_read_well() {
        assert_eq!(duration(850.4), "850ms");
        assert_eq!(duration(1234.0), "1.2s");
        assert_eq!(duration(12_340.0), "12.3s");
        assert_eq!(duration(59_960.0), "59.9s");
        assert_eq!(duration(60_000.0), "1m00s");
        assert_eq!(duration(245_000.0), "4m05s");
        assert_eq!(duration(295_226.0), "4m55s");
        assert_eq!(duration(7_380_000.0), "2h03m");
        assert_eq!(duration(-5.0), "0ms");
        assert_eq!(duration(f64::NAN), "0ms");
        assert_eq!(size(512), "512 B");
        assert_eq!(size(12_700), "12.4 KiB");
        assert_eq!(size(3 << 30), "3.0 GiB");
    }

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

    #[test]
    fn a_stream_keeps_its_line_breaks_and_with_colour_only_sgr() {
        let evil = "a\x1b]0;title\x07b\x1b[2Jc\rd\u{9b}31me\x1b[1;31mf\x1b[0m\tg\n";
        let keep = |sgr| Keep {
            line_breaks: true,
            sgr,
        };
        assert_eq!(
            escape(evil, keep(false)),
            "a\\u{1b}]0;title\\u{7}b\\u{1b}[2Jc\\rd\\u{9b}31me\\u{1b}[1;31mf\\u{1b}[0m\tg\n"
        );
        assert_eq!(
            escape(evil, keep(true)),
            "a\\u{1b}]0;title\\u{7}b\\u{1b}[2Jc\\rd\\u{9b}31me\x1b[1;31mf\x1b[0m\tg\n"
        );
        assert!(matches!(
            escape("plain — text\n", keep(false)),
            Cow::Borrowed(_)
        ));
        let mut out = TerminalSafe::new(Vec::new(), false);
        std::io::Write::write_all(&mut out, "tool\u{202e}txt.exe\u{2066}\n".as_bytes()).unwrap();
        assert_eq!(out.inner, b"tool\\u{202e}txt.exe\\u{2066}\n");
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
