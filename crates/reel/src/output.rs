//! Output for people and for programs: colour only on a terminal (`--color`, `NO_COLOR`,
//! `TERM=dumb`), JSON documents written whole.

use std::borrow::Cow;
use std::io::{self, IsTerminal, Write};

/// `eprintln!` that cannot panic. std's panics when stderr is a pipe whose reader went
/// away (EPIPE); an MCP client that closes its end of reel's stderr must not kill a
/// recording midway (the trace would lose the server's output and its `end`), and a
/// message no one can read is not worth failing for.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when the stream is a terminal and neither NO_COLOR nor TERM=dumb is set.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Where and how a command writes.
pub struct Output {
    color_stdout: bool,
    color_stderr: bool,
}

impl Output {
    /// Decides colour for stdout and stderr once.
    pub fn new(choice: ColorChoice) -> Self {
        let env_allows = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            && std::env::var_os("TERM").is_none_or(|t| t != "dumb");
        let decide = |tty: bool| match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => tty && env_allows,
        };
        Output {
            color_stdout: decide(std::io::stdout().is_terminal()),
            color_stderr: decide(std::io::stderr().is_terminal()),
        }
    }

    /// True when stdout gets colour.
    pub fn color(&self) -> bool {
        self.color_stdout
    }

    /// True when stderr gets colour.
    #[allow(dead_code)]
    pub fn color_stderr(&self) -> bool {
        self.color_stderr
    }

    /// Paints `text` with an SGR code when colour is on for stdout.
    pub fn paint(&self, sgr: &str, text: &str) -> String {
        if self.color_stdout {
            format!("\x1b[{sgr}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    /// Stdout for human output: trace content in it cannot drive the terminal (see
    /// [`TerminalSafe`]); reel's own colour codes pass when colour is on.
    pub fn human_stdout(&self) -> TerminalSafe<io::StdoutLock<'static>> {
        TerminalSafe {
            inner: io::stdout().lock(),
            keep_sgr: self.color_stdout,
        }
    }

    /// Writes a JSON document to stdout, pretty-printed, with a final newline.
    pub fn json<T: serde::Serialize>(&self, value: &T) -> anyhow::Result<()> {
        let mut stdout = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut stdout, value)?;
        stdout.write_all(b"\n")?;
        stdout.flush()?;
        Ok(())
    }

    /// As [`Output::json`], for a report quoting compared values (`diff`, `verify`):
    /// those carry numbers beyond an f64 as marker strings
    /// (`reel_mcp::normalize::numbers`), printed here as the numbers they are.
    pub fn json_compared<T: serde::Serialize>(&self, value: &T) -> anyhow::Result<()> {
        let mut stdout = std::io::stdout().lock();
        let text = serde_json::to_string_pretty(value)?;
        stdout.write_all(reel_mcp::normalize::numbers::show(&text).as_bytes())?;
        stdout.write_all(b"\n")?;
        stdout.flush()?;
        Ok(())
    }
}

/// A writer for human output that escapes control characters.
///
/// Human output quotes trace content (tool names, labels, error messages, unknown
/// `type`/`dir`/`kind` values), and a trace is outside input: an ESC or C1 sequence in
/// it could set the window title, clear the screen, move the cursor to overwrite a
/// verdict, or write the clipboard (OSC 52). So every C0 control but `\n` and `\t`,
/// DEL and every C1 control is written as `\u{..}`. When colour is on, SGR sequences
/// (`ESC [ digits ; m`) pass: reel paints with them, and they can only colour text.
pub struct TerminalSafe<W> {
    inner: W,
    keep_sgr: bool,
}

impl<W: Write> Write for TerminalSafe<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // Every piece reel writes is a whole `str` (format arguments are written
        // whole), so a painted string's SGR sequence is never split across calls.
        let text = String::from_utf8_lossy(buf);
        self.inner
            .write_all(terminal_safe(&text, self.keep_sgr).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// `text` with its control characters escaped (see [`TerminalSafe`]); SGR sequences
/// kept when `keep_sgr`.
pub fn terminal_safe(text: &str, keep_sgr: bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '\x1b' && keep_sgr {
            if let Some(n) = sgr_len(rest) {
                out.push_str(&rest[..n]);
                rest = &rest[n..];
                continue;
            }
        }
        if unsafe_char(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// `text` for one cell or one line of a report (see [`reel_trace::display`]).
pub use reel_trace::display::one_line;

/// The length of the SGR sequence (`ESC [` digits and `;`, then `m`) `s` starts with.
fn sgr_len(s: &str) -> Option<usize> {
    let body = s.strip_prefix("\x1b[")?;
    let params = body
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    (body.as_bytes().get(params) == Some(&b'm')).then_some(2 + params + 1)
}

#[cfg(test)]
mod tests {
    use super::terminal_safe;

    #[test]
    fn controls_are_escaped_and_only_sgr_passes_with_colour() {
        let evil = "a\x1b]0;title\x07b\x1b[2Jc\rd\u{9b}31me\x1b[1;31mf\x1b[0m\tg\n";
        assert_eq!(
            terminal_safe(evil, false),
            "a\\u{1b}]0;title\\u{7}b\\u{1b}[2Jc\\u{d}d\\u{9b}31me\\u{1b}[1;31mf\\u{1b}[0m\tg\n"
        );
        assert_eq!(
            terminal_safe(evil, true),
            "a\\u{1b}]0;title\\u{7}b\\u{1b}[2Jc\\u{d}d\\u{9b}31me\x1b[1;31mf\x1b[0m\tg\n"
        );
        assert!(matches!(
            terminal_safe("plain — text\n", false),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
