//! Names the commit reel is built from, for `reel --version`: `REEL_BUILD_COMMIT` when
//! a packager sets it (a build from a source archive has no git), else `git rev-parse`
//! of the checkout's HEAD, else `unknown`. (No `-dirty` mark: cargo reruns this script
//! when HEAD moves, not when a file changes, so the mark could not be kept true.)

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=REEL_BUILD_COMMIT");
    let commit = std::env::var("REEL_BUILD_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .or_else(from_git)
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=REEL_COMMIT={}", commit.trim());
}

/// The checkout's commit, 12 hex digits.
fn from_git() -> Option<String> {
    let git = |args: &[&str]| {
        let out = Command::new("git").args(args).output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    let git_dir = git(&["rev-parse", "--absolute-git-dir"])?;
    // Rebuilt when HEAD moves: the HEAD file, the branch it names, or packed refs.
    for name in ["HEAD", "packed-refs"] {
        let p = Path::new(&git_dir).join(name);
        if p.exists() {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        let common = git(&["rev-parse", "--git-common-dir"]).unwrap_or(git_dir);
        println!(
            "cargo:rerun-if-changed={}",
            Path::new(&common).join(branch).display()
        );
    }
    git(&["rev-parse", "--short=12", "HEAD"])
}
