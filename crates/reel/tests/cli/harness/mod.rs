//! What the areas share: the HTTP client core and listener start-up (`net`), real peer
//! runs (`peer_runs`), the `reel play` sandboxes (`play_support`, `play_http_support`)
//! the `reel rec` session harness (`rec_support`) and traces written from JSON values
//! (`trace`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The built `reel`.
pub fn reel() -> Command {
    Command::new(env!("CARGO_BIN_EXE_reel"))
}

pub mod net;
pub mod peer_runs;
pub mod play_http_support;
pub mod play_support;
pub mod rec_support;
pub mod trace;
