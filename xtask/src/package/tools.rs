//! The Python build tools packaging runs, pinned to exact versions like the peers and
//! installed the same way ([`peers::ensure_venv`]), into a venv of their own:
//! `.peers/package-venv`. They are not peers (no test drives them) and `cargo xtask
//! package` must not need the peers' browsers and SDKs, so they are not in the peers'
//! stamp; the venv is made the first time a package is built.
//!
//! - maturin builds the wheel, and through it the binary.
//! - uv is the second installer the check puts the wheel through (`uvx`, `uv tool
//!   install`), pinned here rather than taken from the machine so the check's result does
//!   not depend on which uv a machine has.
//! - ziglang only for `--zig`: maturin links Linux targets with zig then, for glibc
//!   2.17 and for musl from any Linux host.

use std::path::{Path, PathBuf};

use crate::peers::{self, Pkg, Python};

/// The venv's directory under `.peers/`.
const VENV: &str = "package-venv";
const MATURIN: Pkg = ("maturin", "1.16.0", "");
const UV: Pkg = ("uv", "0.13.9", "");
const ZIG: Pkg = ("ziglang", "0.17.1", "");

/// The tools, installed.
pub struct Tools {
    /// The venv's `bin/`: maturin, uv, and the python that runs `python -m ziglang`.
    pub bin: PathBuf,
}

impl Tools {
    pub fn maturin(&self) -> PathBuf {
        self.bin.join("maturin")
    }

    pub fn uv(&self) -> PathBuf {
        self.bin.join("uv")
    }
}

/// Installs what is missing (ziglang only when `zig`).
pub fn ensure(root: &Path, zig: bool) -> anyhow::Result<Tools> {
    let mut packages = vec![MATURIN, UV];
    if zig {
        packages.push(ZIG);
    }
    let venv = peers::dir(root).join(VENV);
    let bin = peers::ensure_venv(&venv, Python::System, &packages, false)?;
    Ok(Tools { bin })
}
