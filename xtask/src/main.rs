//! `cargo xtask test | bench | peers` (in progress).

fn main() -> anyhow::Result<()> {
    Ok(())
}
