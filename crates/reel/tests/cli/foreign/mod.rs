//! `reel import` and `reel export` against the other tools themselves: each module
//! records fresh sessions with a real recorder (installed by `cargo xtask peers`) against
//! the test servers, imports them, and plays them back to the client that made them;
//! exports are served by the tools that read them.

use std::path::PathBuf;

use crate::harness::play_support::Peers;

mod agent_vcr;
mod cassette;
mod claude;
mod mcp_rec;
mod mcp_vcr;
mod mcptape;
mod mmsp;
mod recorder;

/// The executable `name` of the venv `venv` under the peers directory (its `bin/`).
pub fn venv_bin(venv: &str, name: &str) -> PathBuf {
    let bin = Peers::get().root.join(venv).join("bin").join(name);
    assert!(
        bin.exists(),
        "peers missing: run `cargo xtask peers` (looked for {})",
        bin.display()
    );
    bin
}
