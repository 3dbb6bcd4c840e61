//! One module per command: its clap `Args` and a `run` that wires a library call to
//! stdout/stderr and an exit code.

pub mod check;
pub mod completions;
pub mod demo;
pub mod diff;
pub mod export;
pub mod ignore;
pub mod import;
pub mod install;
#[cfg(feature = "http")]
pub mod llm;
pub mod ls;
pub mod man;
pub mod net_flags;
pub mod notifications;
#[cfg(feature = "http")]
pub mod otlp;
pub mod play;
pub mod rec;
pub mod redact;
pub mod redaction;
pub mod seal;
pub mod sink;
pub mod stats;
pub mod trace_arg;
pub mod verify;
#[cfg(feature = "http")]
pub mod view;

/// The `reel` PATH finds, when it is this very binary (perhaps through a link, as a
/// package manager installs it): how to name reel to a user or a client config.
pub fn reel_on_path(exe: &std::path::Path) -> Option<std::path::PathBuf> {
    let me = exe.canonicalize().ok()?;
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .filter(|d| d.is_absolute())
        .map(|d| d.join("reel"))
        .find(|c| c.canonicalize().is_ok_and(|r| r == me))
}
