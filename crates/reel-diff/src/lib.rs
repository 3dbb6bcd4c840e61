//! # reel-diff
//!
//! Where two runs drifted apart: content alignment, drift classes, renderers.

#![deny(missing_docs)]
