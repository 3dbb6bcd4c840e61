//! How a recording ends: the trace handed back by the proxy, ended with how its
//! traffic ended (the wrapped agent's exit, an agent that never started, a stop).

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use reel_trace::Ending;

use crate::tape::Tape;

/// A finished run: the trace, to be ended by the caller ([`Finished::end`], or
/// [`Tape::finish`] with an ending of its own).
pub struct Finished {
    /// The trace.
    pub tape: Arc<Tape>,
    /// The trace file.
    pub path: Option<PathBuf>,
}

/// How the traffic of a recording ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RunEnd {
    /// The agent reel started exited with this code.
    Agent(i32),
    /// The agent could not be started.
    AgentNotStarted,
    /// The proxy was stopped, with no agent of its own (a signal).
    Stopped,
}

impl RunEnd {
    /// The trace's `end`: the agent's exit code (127 for one that never started, as a
    /// shell says), or `producer_shutdown`.
    pub fn ending(self) -> Ending {
        match self {
            RunEnd::Agent(code) => Ending::ExitCode(i64::from(code)),
            RunEnd::AgentNotStarted => Ending::ExitCode(127),
            RunEnd::Stopped => Ending::Reason("producer_shutdown".into()),
        }
    }
}

impl Finished {
    /// Ends the trace with how the run ended. An error says the trace is incomplete
    /// (a write failed now or earlier): it is readable up to its last complete line.
    pub fn end(&self, how: RunEnd) -> io::Result<()> {
        self.tape.finish(how.ending())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_ends_with_the_agents_code_127_when_it_never_started_or_a_shutdown() {
        assert!(matches!(RunEnd::Agent(3).ending(), Ending::ExitCode(3)));
        assert!(matches!(
            RunEnd::AgentNotStarted.ending(),
            Ending::ExitCode(127)
        ));
        match RunEnd::Stopped.ending() {
            Ending::Reason(r) => assert_eq!(r, "producer_shutdown"),
            other => panic!("a stop ends with a reason, not {other:?}"),
        }
    }
}
