//! Output for people and for programs: colour only on a terminal (`--color`, `NO_COLOR`,
//! `TERM=dumb`), JSON documents written whole.

use std::io::{IsTerminal, Write};

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

    /// Writes a JSON document to stdout, pretty-printed, with a final newline.
    pub fn json<T: serde::Serialize>(&self, value: &T) -> anyhow::Result<()> {
        let mut stdout = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut stdout, value)?;
        stdout.write_all(b"\n")?;
        stdout.flush()?;
        Ok(())
    }
}
