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

/// A JUnit XML report read by a real JUnit consumer (PyPI `junitparser`, in the peers'
/// venv): `{"tests", "failures", "cases": [[name, [[type, message]…]]…]}`.
pub fn junit(xml: &[u8]) -> serde_json::Value {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("report.xml");
    std::fs::write(&file, xml).expect("write the report");
    let read = Command::new(play_support::Peers::get().python)
        .arg("-c")
        .arg(
            [
                "import json, sys, junitparser",
                "x = junitparser.JUnitXml.fromfile(sys.argv[1])",
                "cases = [(c.name, [(r.type, r.message) for r in c.result]) for s in x for c in s]",
                "print(json.dumps({'tests': x.tests, 'failures': x.failures, 'cases': cases}))",
            ]
            .join("\n"),
        )
        .arg(&file)
        .output()
        .expect("run junitparser");
    assert!(
        read.status.success(),
        "junitparser refused the report: {}",
        String::from_utf8_lossy(&read.stderr)
    );
    serde_json::from_slice(&read.stdout).expect("junitparser's summary")
}

pub mod net;
pub mod peer_runs;
pub mod play_http_support;
pub mod play_support;
pub mod player;
pub mod rec_support;
pub mod sandbox;
pub mod trace;
