//! The `reel rec` bench (issue 3): direct vs through `reel rec`, with the project's own
//! minimal client and server. Not built yet; this module keeps its place and signature.

use super::{Ctx, Figure};

/// Runs the rec bench.
pub fn run(_ctx: &Ctx) -> anyhow::Result<Vec<Figure>> {
    println!("rec bench: see issue 3 (not built yet; no figures)");
    Ok(Vec::new())
}
