//! `reel demo` (in progress).

use crate::output::Output;

/// Arguments of `reel demo`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `reel demo`.
pub fn run(_args: Args, _out: &Output) -> anyhow::Result<u8> {
    Err(crate::exit::coded(crate::exit::INTERNAL, "not built yet"))
}
