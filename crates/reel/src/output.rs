//! Output for people and for programs: colour only on a terminal (`--color`, `NO_COLOR`,
//! `TERM=dumb`), JSON documents written whole.

use std::io::{self, IsTerminal, Write};

use reel_report::display::{TerminalSafe, Tone};

/// `eprintln!` that cannot panic. std's panics when stderr is a pipe whose reader went
/// away (EPIPE); an MCP client that closes its end of reel's stderr must not kill a
/// recording midway (the trace would lose the server's output and its `end`), and a
/// message no one can read is not worth failing for.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = format!($($arg)*);
        let _ = writeln!(
            std::io::stderr(),
            "{}",
            reel_report::display::escape(&text, $crate::output::SAY_KEEP)
        );
    }};
}

/// A path as one line of a message: every character that could break the line or act on
/// a terminal (a newline in a file name) escaped, whatever [`say!`] lets through around it.
pub fn path_shown(path: &std::path::Path) -> String {
    let text = path.display().to_string();
    reel_report::display::escape(
        &text,
        reel_report::display::Keep {
            line_breaks: false,
            sgr: false,
        },
    )
    .into_owned()
}

/// What [`say!`] lets through unescaped: its messages quote file names, URLs and trace
/// content, so only line breaks pass (reel's stderr messages are not painted).
pub const SAY_KEEP: reel_report::display::Keep = reel_report::display::Keep {
    line_breaks: true,
    sgr: false,
};

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
#[derive(Clone, Copy)]
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
    /// green), or not at all when colour is off: the [`reel_report::display::Paint`]
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
        TerminalSafe::new(io::stdout().lock(), self.color_stdout)
    }

    /// Stderr for diagnostics a library writes (`reel play`'s misses quote the live
    /// request): escaped like [`Output::human_stdout`].
    pub fn human_stderr(&self) -> TerminalSafe<io::Stderr> {
        TerminalSafe::new(io::stderr(), self.color_stderr)
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
