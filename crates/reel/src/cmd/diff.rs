//! `reel diff` (in progress).

use crate::output::Output;

/// Arguments of `reel diff`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `reel diff`.
pub fn run(_args: Args, _out: &Output) -> anyhow::Result<u8> {
    Err(crate::exit::coded(crate::exit::INTERNAL, "not built yet"))
}
