//! The one sandbox every area runs reel in: a private temp dir (removed on drop), files
//! and tapes written into it, and `reel` run with it as the working directory and
//! `NO_COLOR` set, either to its end or as a `reel play` driven line by line.

use std::path::{Path, PathBuf};
use std::process::Output;

use super::player::Player;
use super::reel;
use super::trace::TraceBuilder;

/// A private temp dir and the ways a test runs reel in it.
pub struct Sandbox {
    pub tmp: tempfile::TempDir,
}

impl Default for Sandbox {
    fn default() -> Sandbox {
        Sandbox::new()
    }
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox {
            tmp: tempfile::tempdir().expect("temp dir"),
        }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        self.tmp.path()
    }

    /// `name` in the sandbox.
    pub fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    /// Writes `bytes` to `name` in the sandbox; its path.
    pub fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, bytes).expect("write fixture");
        p
    }

    /// A `reel play` tape at `name`, labelled `taped`.
    pub fn tape(&self, name: &str) -> TraceBuilder {
        TraceBuilder::tape(&self.path(name), "taped", None)
    }

    /// `reel <args>` run to its end in the sandbox.
    pub fn reel(&self, args: &[&str]) -> Output {
        reel()
            .args(args)
            .current_dir(self.tmp.path())
            .env("NO_COLOR", "1")
            .output()
            .expect("run reel")
    }

    /// `reel play <args>` started in the sandbox.
    pub fn play(&self, args: &[&str]) -> Player {
        let mut c = reel();
        c.arg("play")
            .args(args)
            .current_dir(self.tmp.path())
            .env("NO_COLOR", "1");
        Player::stdio(c)
    }
}
