//! Why a recorded llm trace cannot be served.

use reel_trace::OpenError;

/// Why a tape cannot be served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlayError {
    /// The trace cannot be read.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// The trace is not an llm trace.
    #[error("{path}: {reason}")]
    NotLlm {
        /// The trace.
        path: String,
        /// Why.
        reason: String,
    },
    /// A bad `--map`.
    #[error(transparent)]
    Route(#[from] crate::route::RouteError),
    /// The listen address cannot be bound.
    #[error("cannot listen on {listen}: {reason}")]
    Listen {
        /// The address.
        listen: String,
        /// Why.
        reason: String,
    },
    /// The runtime cannot be started.
    #[error("cannot start the tape server: {0}")]
    Setup(std::io::Error),
}
