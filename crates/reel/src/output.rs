//! Output for people and for programs: colour only on a terminal (`--color`, `NO_COLOR`,
//! `TERM=dumb`), JSON documents written whole.

use std::borrow::Cow;
use std::io::{self, IsTerminal, Write};

use reel_trace::display::Tone;

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

    /// Paints a [`Tone`] the way reel's terminal output does (red, yellow, cyan,
    /// green), or not at all when colour is off: the [`reel_trace::display::Paint`]
    /// the libraries' renderers take.
    pub fn tone(&self, tone: Tone, text: &str) -> String {
        let sgr = match tone {
            Tone::Bad => "31;1",
            Tone::Warn => "33",
            Tone::Note => "36",
            Tone::Good => "32",
            _ => return text.to_owned(),
        };
        self.paint(sgr, text)
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
/// verdict, or write the clipboard (OSC 52), and a bidi override could make a line read
/// as something else. So every character [`reel_trace::display::is_unsafe`] names but
/// `\n` and `\t` is written as `\u{..}`. When colour is on, SGR sequences
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
    let unsafe_char = |c: char| reel_trace::display::is_unsafe(c) && c != '\n' && c != '\t';
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

/// A progress bar on stderr for a long read (`check`, `stats`, `diff`, `verify` of big
/// traces),
/// drawn by indicatif only when stderr is a terminal and only once the work has taken
/// [`PROGRESS_AFTER_ENV`] milliseconds (default 500), so a quick command or a pipe
/// shows nothing. Cleared when dropped.
pub struct Bar {
    label: &'static str,
    on: bool,
    show_at: std::time::Instant,
    bar: Option<indicatif::ProgressBar>,
}

/// How long a command runs, in milliseconds, before it shows a progress bar.
pub const PROGRESS_AFTER_ENV: &str = "REEL_PROGRESS_AFTER_MS";

impl Bar {
    /// A bar that will say `label`.
    pub fn new(label: &'static str) -> Bar {
        let after = std::env::var(PROGRESS_AFTER_ENV)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(500);
        Bar {
            label,
            on: io::stderr().is_terminal(),
            show_at: std::time::Instant::now() + std::time::Duration::from_millis(after),
            bar: None,
        }
    }

    /// Shows `p`.
    pub fn show(&mut self, p: reel_trace::Progress) {
        if !self.on || std::time::Instant::now() < self.show_at {
            return;
        }
        let label = self.label;
        let bar = self.bar.get_or_insert_with(|| {
            let bar = indicatif::ProgressBar::new(p.total);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{msg} [{bar:30}] {percent:>3}%  {bytes} / {total_bytes}  {eta} left",
            ) {
                bar.set_style(style.progress_chars("#>-"));
            }
            bar.set_message(label);
            bar
        });
        bar.set_length(p.total);
        bar.set_position(p.done);
        // The read is over: what follows (verify's play, a report) writes to a clean
        // terminal.
        if p.done >= p.total {
            if let Some(bar) = self.bar.take() {
                bar.finish_and_clear();
            }
            self.on = false;
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

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
        assert_eq!(
            terminal_safe("tool\u{202e}txt.exe\u{2066}\n", false),
            "tool\\u{202e}txt.exe\\u{2066}\n"
        );
    }
}
