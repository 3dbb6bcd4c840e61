//! One module per command: its clap `Args` and a `run` that wires a library call to
//! stdout/stderr and an exit code.

pub mod check;
pub mod ls;
pub mod rec;
pub mod stats;
