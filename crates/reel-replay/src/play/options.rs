//! What `reel play` is asked to do ([`PlayOptions`], `--pace`, `--subset`), what stops
//! it ([`PlayError`]), and the bounds it keeps on what it reports.

use std::io;
use std::path::PathBuf;
use std::str::FromStr;

use reel_mcp::normalize::Pointer;
use reel_trace::OpenError;

/// Recorded requests of one method compared with a missed request to find the nearest.
pub const CANDIDATES_SCANNED: usize = 1000;
/// Index warnings printed (the rest are counted).
pub const WARNINGS_SHOWN: usize = 5;

/// `--pace`: replay the recorded timing, `speed` times faster (1 = as recorded).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pace {
    /// How much faster than recorded (2 = twice as fast, 0.5 = half as fast).
    pub speed: f64,
}

impl FromStr for Pace {
    type Err = String;
    fn from_str(s: &str) -> Result<Pace, String> {
        if s == "recorded" {
            return Ok(Pace { speed: 1.0 });
        }
        let n = s
            .strip_suffix('x')
            .or_else(|| s.strip_suffix('×'))
            .unwrap_or(s);
        match n.parse::<f64>() {
            Ok(speed) if speed.is_finite() && speed > 0.0 => Ok(Pace { speed }),
            _ => Err(format!(
                "`{s}` is not a pace: use `recorded` or a speed factor like `2x` (twice as fast) or `0.5x`"
            )),
        }
    }
}

/// `--subset`: these tools' calls come from the tape, everything else from a live server.
#[derive(Clone, Debug)]
pub struct Subset {
    /// Tool names served from the tape.
    pub tools: Vec<String>,
    /// The live server's command.
    pub command: Vec<String>,
}

/// What `reel play` was asked to do.
#[derive(Clone, Debug)]
pub struct PlayOptions {
    /// The trace file.
    pub trace: PathBuf,
    /// Which recorded session answers (1-based).
    pub session: usize,
    /// Requests must come in recorded order; no generic answers.
    pub strict: bool,
    /// Client drift does not change the exit code.
    pub lenient: bool,
    /// The user's volatile fields.
    pub ignore: Vec<Pointer>,
    /// Write the replay session as a trace into this directory.
    pub record: Option<PathBuf>,
    /// Serve only some tools from the tape.
    pub subset: Option<Subset>,
    /// Replay the recorded timing.
    pub pace: Option<Pace>,
    /// The command line, for `meta.command` of the recorded replay.
    pub argv: Vec<String>,
}

impl PlayOptions {
    /// Defaults for `trace`: session 1, content matching, nothing recorded.
    pub fn new(trace: impl Into<PathBuf>) -> PlayOptions {
        PlayOptions {
            trace: trace.into(),
            session: 1,
            strict: false,
            lenient: false,
            ignore: Vec::new(),
            record: None,
            subset: None,
            pace: None,
            argv: Vec::new(),
        }
    }
}

/// Why a replay could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlayError {
    /// The trace cannot be read.
    #[error(transparent)]
    Trace(#[from] OpenError),
    /// The recording of the replay cannot be created.
    #[error("{dir}: cannot create the replay's trace: {source}")]
    Record {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The live server of `--subset` cannot be started.
    #[error("cannot start the live server `{command}`: {source}")]
    Live {
        /// The command.
        command: String,
        /// Why.
        source: io::Error,
    },
    /// Writing to the client failed for another reason than it going away (or, over
    /// HTTP, a thread or the runtime could not be started).
    #[error("writing to the client: {0}")]
    Output(io::Error),
    /// `--listen` is not an address, or cannot be bound.
    #[error(
        "cannot listen on {addr}: {error}; choose another --listen (e.g. 127.0.0.1:0 for a free port)"
    )]
    Listen {
        /// The address as given.
        addr: String,
        /// Why.
        error: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pace_values() {
        assert_eq!("recorded".parse::<Pace>().unwrap().speed, 1.0);
        assert_eq!("2x".parse::<Pace>().unwrap().speed, 2.0);
        assert_eq!("0.5×".parse::<Pace>().unwrap().speed, 0.5);
        assert!("0x".parse::<Pace>().is_err());
        assert!("fast".parse::<Pace>().is_err());
    }
}
