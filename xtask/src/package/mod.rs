//! `cargo xtask package`: reel as the packages people install it from, the way ruff and
//! uv ship to PyPI and esbuild and biome to npm. One build of the binary goes into
//!
//! - the wheel `reel-cli` (maturin, `bindings = "bin"`: `pip install reel-cli` and `uv
//!   tool install reel-cli` put `reel` on PATH), from `packaging/pypi/`;
//! - the npm platform package of the target (`reel-cli-linux-x64-gnu`, …: the binary
//!   and its `os`, `cpu`, `libc`) and the npm main package `reel-cli` (a launcher that
//!   runs the platform package's binary, which npm installs as an optional dependency),
//!   from `packaging/npm/`.
//!
//! The version is the `reel` crate's, read from Cargo's metadata: the packages never
//! state it themselves. `--check` then installs what was built the way a user would,
//! with nothing of the build on PATH ([`check`]); `cargo xtask test` runs that check on
//! a dev build. The release workflow (`.github/workflows/release.yml`) runs this command
//! once per `--target`.

pub mod check;
mod docs;
mod made;
mod meta;
mod npm;
mod options;
mod platform;
mod suites;
mod tools;
mod wheel;

use std::fs;
use std::path::Path;

use anyhow::{Context, bail};

use crate::process;
pub use made::Made;
pub use options::{Options, Profile};

/// The hooks `cargo xtask package --check` and `cargo xtask test` run where the packages
/// were installed: the suites of the packages that depend on `reel-cli`.
pub const HOOKS: check::Hooks = check::Hooks {
    python: &[("pytest-reel", suites::pytest)],
    npm: &[("reel-test", suites::vitest)],
};

/// `cargo xtask package [--profile P] [--target T] [--zig] [--out DIR] [--check]`.
pub fn cmd(args: &[String]) -> anyhow::Result<()> {
    let opts = Options::parse(args)?;
    let root = process::workspace_root();
    let made = make(&root, &opts)?;
    if opts.check {
        let summary = check::run(&root, &made, &HOOKS)?;
        println!("package: check passed: {summary}");
    }
    Ok(())
}

/// Builds the wheel and the two npm packages for `opts`, and prints what it made.
pub fn make(root: &Path, opts: &Options) -> anyhow::Result<Made> {
    let host = platform::host_triple()?;
    let triple = opts.target.clone().unwrap_or_else(|| host.clone());
    let platform = platform::for_triple(&triple)?;
    if opts.check && triple != host {
        bail!("--check runs what it built: it cannot with --target {triple} on a {host} machine");
    }
    let meta = meta::read(root)?;
    let target_dir = process::target_dir(root);
    let out = match &opts.out {
        Some(dir) => std::env::current_dir()?.join(dir),
        None => target_dir.join("packages"),
    };
    fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;

    let tools = tools::ensure(root, opts.zig)?;
    let docs = root.join(wheel::PREFIX_DATA);
    let pages = docs::write(root, opts, &target_dir, &docs)?;
    let wheel = wheel::build(root, &tools, opts, &target_dir, &out)?;
    let binary = wheel::binary(&target_dir, opts);
    if !binary.is_file() {
        bail!(
            "maturin built the wheel, but the binary is not where cargo leaves it: {}",
            binary.display()
        );
    }
    let staging = out.join("npm");
    let npm_platform = npm::platform_package(root, &meta, platform, &binary, &staging, &out)?;
    let npm_main = npm::main_package(root, &meta, (&docs, &pages), &staging, &out)?;
    let made = Made {
        version: meta.version,
        platform,
        profile: opts.profile,
        binary,
        wheel,
        npm_main,
        npm_platform,
    };
    made.print(root, &out);
    Ok(made)
}
