//! What the proxy tells the user while it runs, and how it reaches them.

use std::sync::Arc;

/// Something the user should hear while the proxy runs.
#[derive(Debug)]
#[non_exhaustive]
pub enum Notice {
    /// The upstream could not be reached; the client got a 502.
    UpstreamFailed {
        /// What went wrong.
        error: String,
    },
    /// The trace cannot be written any more; traffic goes on unrecorded.
    TraceFailed {
        /// The I/O error.
        error: String,
    },
    /// The trace disk is behind: the traffic is slowed down to its pace.
    Behind,
    /// An MMSP save failed (a refused trace id, a write error); the recording goes on.
    MmspFailed {
        /// The trace id.
        id: String,
        /// Why.
        error: String,
    },
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Notice::UpstreamFailed { error } => {
                write!(f, "{error}; the client got 502 Bad Gateway")
            }
            Notice::TraceFailed { error } => write!(
                f,
                "cannot write the trace any more ({error}); traffic goes on unrecorded"
            ),
            Notice::Behind => f.write_str("the trace disk is behind; slowing traffic"),
            Notice::MmspFailed { id, error } => {
                write!(f, "the MMSP trace {id:?} was not saved: {error}")
            }
        }
    }
}

/// How notices reach the user.
pub type NoticeFn = Arc<dyn Fn(Notice) + Send + Sync>;
