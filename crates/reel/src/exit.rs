//! The exit-code contract, one table for every command (documented in `--help`).

use std::process::ExitCode;

/// Success: clean, identical, every request answered.
pub const OK: u8 = 0;
/// Differences of content: output drift, check violations.
pub const DIFFERENT: u8 = 1;
/// Structural drift: a call added/removed, a tool gone, a result became an error.
pub const STRUCTURAL: u8 = 2;
/// `play`: requests the tape could not answer.
pub const MISSES: u8 = 3;
/// `play`: the client answered a server→client request differently than recorded.
pub const CLIENT_DRIFT: u8 = 4;
/// Usage error: bad flags or arguments.
pub const USAGE: u8 = 64;
/// An input cannot be read (missing, not a trace, unreadable).
pub const NO_INPUT: u8 = 66;
/// A live server or upstream cannot be started or reached.
pub const UNAVAILABLE: u8 = 69;
/// Internal error: a bug.
pub const INTERNAL: u8 = 70;
/// An output (trace, directory) cannot be created.
pub const CANT_CREATE: u8 = 73;
/// `rec`: the trace is incomplete (a write failed midway: a full disk, `ulimit -f`);
/// the traffic went on, and the server's own status is printed.
pub const TRACE_INCOMPLETE: u8 = 74;
/// A wrapped command could not be started.
pub const CANT_START: u8 = 127;

/// The code of a drift verdict (`diff`, `verify`): 0 identical, 1 output drift only,
/// 2 structural drift.
pub fn of_drift(v: reel_mcp::drift::Verdict) -> u8 {
    use reel_mcp::drift::Verdict;
    match v {
        Verdict::Identical => OK,
        Verdict::Output => DIFFERENT,
        Verdict::Structural => STRUCTURAL,
    }
}

/// The code of a replay's verdict: 0 clean, 3 misses, 4 client drift, 64 a
/// `--session` the trace lacks.
pub fn of_play(v: reel_replay::PlayVerdict) -> u8 {
    use reel_replay::PlayVerdict;
    match v {
        PlayVerdict::Clean => OK,
        PlayVerdict::Misses => MISSES,
        PlayVerdict::ClientDrift => CLIENT_DRIFT,
        PlayVerdict::NoSuchSession => USAGE,
    }
}

#[cfg(feature = "http")]
/// The code of a `rec --url` failure: 64 a bad `--url` or `--listen`, 66 an unreadable
/// CA file, 69 an upstream that does not resolve, 73 the trace, 70 the rest.
pub fn of_http_record(e: &reel_record::HttpError) -> u8 {
    use reel_record::HttpError;
    use reel_record::http::UrlError;
    match e {
        HttpError::Url(UrlError::Ca { .. }) => NO_INPUT,
        HttpError::Url(_) | HttpError::Listen { .. } => USAGE,
        HttpError::Resolve { .. } => UNAVAILABLE,
        HttpError::Trace(e) if e.is_output() => CANT_CREATE,
        _ => INTERNAL,
    }
}

/// The status `rec` exits with: the wrapped server's code, 128+N if it died of signal
/// N, 127 if it could not start.
pub fn of_child(end: &reel_record::ChildEnd) -> u8 {
    use reel_record::ChildEnd;
    match end {
        ChildEnd::Exited(code) => u8::try_from(*code).unwrap_or(1),
        ChildEnd::Signaled(n) => u8::try_from(128 + n).unwrap_or(1),
        ChildEnd::NotStarted(_) => CANT_START,
    }
}

/// The table, appended to `reel --help`.
pub const EXIT_CODES_HELP: &str = "\
Exit codes:
  0    success: clean, identical, every request answered
  1    differences of content (diff, verify) or violations (check)
  2    structural drift (diff, verify)
  3    play: requests the tape could not answer
  4    play: the client answered a server->client request differently
  64   usage error
  66   an input cannot be read
  69   a live server or upstream cannot be started or reached
  70   internal error (a bug: please report it)
  73   an output (trace, directory) cannot be created
  74   rec: the trace is incomplete (a write failed midway; the server's status is printed)
  N    rec: the wrapped server's status (128+N for signal N, 127 if it could not start)";

/// An error that carries its exit code. Commands return it (inside `anyhow::Error`)
/// for failures a user can act on; anything else is reported as internal (70).
#[derive(Debug)]
pub struct Coded {
    /// The exit code.
    pub code: u8,
    /// What went wrong and what to do.
    pub message: String,
}

impl std::fmt::Display for Coded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// An error with an exit code.
pub fn coded(code: u8, message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Coded {
        code,
        message: message.into(),
    })
}

/// Turns a command's result into the process exit code, printing the error once.
pub fn finish(result: anyhow::Result<u8>) -> ExitCode {
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::from(OK);
            }
            let code = code_of(&e);
            // One line: what an error quotes (a file name with a line break in it) cannot
            // forge a line of reel's own.
            let text = format!("{e:#}");
            let one_line = reel_report::display::escape(
                &text,
                reel_report::display::Keep {
                    line_breaks: false,
                    sgr: false,
                },
            );
            say!("reel: {one_line}");
            ExitCode::from(code)
        }
    }
}

/// The exit code an error ends a command with: its [`Coded`] code, else 70.
pub fn code_of(e: &anyhow::Error) -> u8 {
    e.chain()
        .find_map(|c| c.downcast_ref::<Coded>())
        .map_or(INTERNAL, |c| c.code)
}

/// A report written to a reader that went away (`reel diff A B | head -1`) is not an
/// error, and it does not change the verdict: a command with one writes its report
/// through this and still exits with what it found, so a closed pipe cannot turn drift
/// into success.
pub fn keep_verdict(written: anyhow::Result<()>) -> anyhow::Result<()> {
    match written {
        Err(e) if is_broken_pipe(&e) => Ok(()),
        other => other,
    }
}

/// A reader that went away (`reel ls --json | head`) is not an error. serde_json wraps
/// the I/O error of a failed write, so both shapes are looked for.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    use std::io::ErrorKind::BrokenPipe;
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == BrokenPipe)
            || c.downcast_ref::<serde_json::Error>()
                .is_some_and(|j| j.io_error_kind() == Some(BrokenPipe))
    })
}

/// Prints a clap error and maps it: asked-for help and version are success; the rest,
/// including help shown because no subcommand was given (`reel` alone), is usage (64).
pub fn from_clap(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let _ = e.print();
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => ExitCode::from(OK),
        _ => ExitCode::from(USAGE),
    }
}

impl std::error::Error for Coded {}
