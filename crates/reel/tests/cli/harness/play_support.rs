//! Harness for the `reel play` tests (`play`, `play_peers`): the recorded handshake tapes
//! start with, whole runs of `reel play` over stdio (the one `player` drives it line by
//! line), and the peers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub use super::player::{Outcome, Player};
pub use super::reel;
pub use super::sandbox::Sandbox;
pub use super::trace::TraceBuilder;
pub use super::workspace;

/// The usual legacy handshake, recorded: initialize (2025-11-25), its result, and
/// notifications/initialized.
pub fn handshake(t: &mut TraceBuilder) {
    t.c(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"recorded-client","version":"1.0"}}}"#)
        .s(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"taped","version":"1"}}}"#)
        .c(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
}

/// The live client's handshake, as another client (name, version, capabilities)
/// sends it.
pub const LIVE_INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"another-client","version":"9.9"}}}"#;
/// `notifications/initialized`.
pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// Runs `reel play` with all of `input` at once (stdin closed after it) and collects
/// every line it wrote.
pub fn play_all(sandbox: &Sandbox, args: &[&str], input: &[&str]) -> Outcome {
    let mut p = sandbox.play(args);
    for l in input {
        p.send(l);
    }
    p.finish()
}

/// The peers the interop tests drive, or a failure saying how to install them.
pub struct Peers {
    pub root: PathBuf,
    pub python: PathBuf,
    pub node_modules: PathBuf,
}

impl Peers {
    pub fn get() -> Peers {
        let root = std::env::var_os("REEL_PEERS")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace().join(".peers"));
        let p = Peers {
            python: root.join("venv/bin/python"),
            node_modules: root.join("node_modules"),
            root,
        };
        assert!(
            p.python.exists(),
            "peers missing: run `cargo xtask peers` (looked for {})",
            p.python.display()
        );
        p
    }

    /// A file under `node_modules`, which must exist.
    pub fn node_module(&self, rel: &str) -> PathBuf {
        let f = self.node_modules.join(rel);
        assert!(
            f.exists(),
            "peer missing: run `cargo xtask peers` (looked for {})",
            f.display()
        );
        f
    }

    /// A script in `crates/reel/tests/peers/`.
    pub fn script(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/peers")
            .join(name)
    }
}
