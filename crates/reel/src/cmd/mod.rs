//! One module per command: its clap `Args` and a `run` that wires a library call to
//! stdout/stderr and an exit code.

pub mod check;
pub mod demo;
pub mod diff;
pub mod export;
pub mod ignore;
pub mod import;
pub mod install;
pub mod listen_limits;
#[cfg(feature = "http")]
pub mod llm;
pub mod ls;
pub mod notifications;
#[cfg(feature = "http")]
pub mod otlp;
pub mod play;
pub mod rec;
pub mod redact;
pub mod redaction;
pub mod seal;
pub mod stats;
pub mod trace_arg;
pub mod verify;
#[cfg(feature = "http")]
pub mod view;
