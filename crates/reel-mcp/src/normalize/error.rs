//! Why a message cannot be normalised.

/// A message that cannot be normalised.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NormalizeError {
    /// The text is not JSON.
    #[error("not JSON: {message}")]
    NotJson {
        /// serde_json's description (with its column).
        message: String,
    },
    /// JSON, but not an object (a JSON-RPC message is one).
    #[error("JSON, but not an object{}", if *batch { " (a batch array)" } else { "" })]
    NotObject {
        /// It is an array (a JSON-RPC batch).
        batch: bool,
    },
}
