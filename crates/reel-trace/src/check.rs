//! TODO: filled in by its owner.
