//! What `cargo xtask package` is asked to build: the profile, the target, the linker,
//! where the packages go and whether they are checked. Read from the command line here,
//! once; the steps below take [`Options`].

use std::path::PathBuf;

use anyhow::{Context, bail};

/// The cargo profiles a package may be built with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// The tests' build: quick to make, large and slow (the check in `xtask test`).
    Dev,
    Release,
    /// What ships: fat LTO, one codegen unit (`[profile.dist]` in Cargo.toml).
    Dist,
}

impl Profile {
    pub fn name(self) -> &'static str {
        match self {
            Profile::Dev => "dev",
            Profile::Release => "release",
            Profile::Dist => "dist",
        }
    }

    /// The directory under the target directory cargo builds this profile into.
    pub fn dir(self) -> &'static str {
        match self {
            // cargo's one exception: the dev profile builds into `debug/`.
            Profile::Dev => "debug",
            other => other.name(),
        }
    }

    fn parse(s: &str) -> anyhow::Result<Profile> {
        match s {
            "dev" => Ok(Profile::Dev),
            "release" => Ok(Profile::Release),
            "dist" => Ok(Profile::Dist),
            other => bail!("--profile takes dev, release or dist (got `{other}`)"),
        }
    }
}

/// What to build, and where to.
#[derive(Debug)]
pub struct Options {
    pub profile: Profile,
    /// A Rust target triple (one of the platforms reel is packaged for); the host's when
    /// `None`.
    pub target: Option<String>,
    /// Link with zig (maturin `--zig`): Linux targets from any Linux host.
    pub zig: bool,
    /// Where the packages go; `<target dir>/packages` when `None`.
    pub out: Option<PathBuf>,
    /// Install what was built and try it.
    pub check: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            profile: Profile::Dist,
            target: None,
            zig: false,
            out: None,
            check: false,
        }
    }
}

impl Options {
    /// `--profile P`, `--target T`, `--out DIR`, `--zig`, `--check`.
    pub fn parse(args: &[String]) -> anyhow::Result<Options> {
        let mut opts = Options::default();
        let mut args = args.iter();
        while let Some(a) = args.next() {
            let mut value = |flag: &str| {
                args.next()
                    .cloned()
                    .with_context(|| format!("{flag} needs a value (see `cargo xtask --help`)"))
            };
            match a.as_str() {
                "--profile" => opts.profile = Profile::parse(&value("--profile")?)?,
                "--target" => opts.target = Some(value("--target")?),
                "--out" => opts.out = Some(PathBuf::from(value("--out")?)),
                "--zig" => opts.zig = true,
                "--check" => opts.check = true,
                other => bail!(
                    "`cargo xtask package` does not take `{other}` (it takes --profile, \
                     --target, --zig, --out and --check; see `cargo xtask --help`)"
                ),
            }
        }
        Ok(opts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn flags_are_read_and_unknown_ones_refused() {
        let o = Options::parse(&args(&["--profile", "dev", "--check", "--out", "p"])).unwrap();
        assert_eq!(o.profile, Profile::Dev);
        assert!(o.check && !o.zig);
        assert_eq!(o.out, Some(PathBuf::from("p")));
        assert_eq!(Options::parse(&[]).unwrap().profile, Profile::Dist);
        assert!(Options::parse(&args(&["--profile", "fast"])).is_err());
        assert!(Options::parse(&args(&["--target"])).is_err());
        assert!(Options::parse(&args(&["--release"])).is_err());
    }

    #[test]
    fn the_dev_profile_builds_into_debug() {
        assert_eq!(Profile::Dev.dir(), "debug");
        assert_eq!(Profile::Dist.dir(), "dist");
    }
}
