//! The platforms reel ships binaries for, in each packaging system's words: the Rust
//! target triple cargo and maturin build for, and npm's `os`, `cpu` and `libc` that pick
//! the platform package. The npm package names follow one scheme,
//! `reel-cli-<os>-<cpu>[-gnu|-musl]`, which the launcher (`packaging/npm/reel-cli/bin/
//! reel.js`) rebuilds from `process.platform`, `process.arch` and the C library it finds;
//! a test in `npm.rs` holds the two together.

use std::process::Command;

use anyhow::{Context, bail};

use crate::process::output_of;

/// The npm main package; each platform package's name starts with it.
pub const NPM_MAIN: &str = "reel-cli";

/// One platform reel is packaged for.
#[derive(Debug, PartialEq, Eq)]
pub struct Platform {
    /// The Rust target triple.
    pub triple: &'static str,
    /// npm's `os` (Node's `process.platform`).
    pub os: &'static str,
    /// npm's `cpu` (Node's `process.arch`).
    pub cpu: &'static str,
    /// npm's `libc` (`glibc` or `musl`), Linux only.
    pub libc: Option<&'static str>,
}

/// Every platform the release builds, in the order the packages list them.
pub const PLATFORMS: &[Platform] = &[
    Platform {
        triple: "x86_64-unknown-linux-gnu",
        os: "linux",
        cpu: "x64",
        libc: Some("glibc"),
    },
    Platform {
        triple: "x86_64-unknown-linux-musl",
        os: "linux",
        cpu: "x64",
        libc: Some("musl"),
    },
    Platform {
        triple: "aarch64-unknown-linux-gnu",
        os: "linux",
        cpu: "arm64",
        libc: Some("glibc"),
    },
    Platform {
        triple: "aarch64-unknown-linux-musl",
        os: "linux",
        cpu: "arm64",
        libc: Some("musl"),
    },
    Platform {
        triple: "x86_64-apple-darwin",
        os: "darwin",
        cpu: "x64",
        libc: None,
    },
    Platform {
        triple: "aarch64-apple-darwin",
        os: "darwin",
        cpu: "arm64",
        libc: None,
    },
];

impl Platform {
    /// The npm package that carries this platform's binary.
    pub fn npm_name(&self) -> String {
        let libc = match self.libc {
            Some("glibc") => "-gnu",
            Some(_) => "-musl",
            None => "",
        };
        format!("{NPM_MAIN}-{}-{}{libc}", self.os, self.cpu)
    }

    /// The platform as a person names it: `Linux x64 (glibc)`, `macOS arm64`.
    pub fn human(&self) -> String {
        let os = match self.os {
            "darwin" => "macOS",
            "linux" => "Linux",
            other => other,
        };
        match self.libc {
            Some(libc) => format!("{os} {} ({libc})", self.cpu),
            None => format!("{os} {}", self.cpu),
        }
    }
}

/// The platform of `triple`, or an error listing the ones there are.
pub fn for_triple(triple: &str) -> anyhow::Result<&'static Platform> {
    PLATFORMS
        .iter()
        .find(|p| p.triple == triple)
        .with_context(|| {
            let known: Vec<&str> = PLATFORMS.iter().map(|p| p.triple).collect();
            format!(
                "reel is not packaged for `{triple}`; --target takes one of: {}",
                known.join(", ")
            )
        })
}

/// The triple rustc builds for when no `--target` is given (`rustc -vV`'s `host:`).
pub fn host_triple() -> anyhow::Result<String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let info = output_of(Command::new(&rustc).arg("-vV"))
        .context("`rustc -vV` failed: is the Rust toolchain on PATH?")?;
    match info.lines().find_map(|l| l.strip_prefix("host: ")) {
        Some(host) => Ok(host.trim().to_owned()),
        None => bail!("`rustc -vV` printed no `host:` line:\n{info}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_published_ones() {
        let names: Vec<String> = PLATFORMS.iter().map(Platform::npm_name).collect();
        assert_eq!(
            names,
            [
                "reel-cli-linux-x64-gnu",
                "reel-cli-linux-x64-musl",
                "reel-cli-linux-arm64-gnu",
                "reel-cli-linux-arm64-musl",
                "reel-cli-darwin-x64",
                "reel-cli-darwin-arm64",
            ]
        );
    }

    #[test]
    fn an_unknown_triple_is_refused_with_the_list() {
        let e = for_triple("riscv64gc-unknown-linux-gnu").unwrap_err();
        assert!(e.to_string().contains("aarch64-apple-darwin"), "{e}");
        assert_eq!(for_triple("aarch64-apple-darwin").unwrap().cpu, "arm64");
    }
}
