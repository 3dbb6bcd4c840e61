//! `--ignore POINTER` and `--ignore-file FILE`, defined once for the commands that
//! compare messages (`reel play`, `reel verify`, `reel diff`): both repeatable, the same
//! help, and one way to read a file of pointers with one set of exit codes.

use std::path::{Path, PathBuf};

use reel_mcp::normalize::Pointer;

use crate::exit::{NO_INPUT, USAGE, coded};

/// The ignore flags, flattened into each command's arguments.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct IgnoreArgs {
    /// Ignore this JSON pointer into every message when matching and comparing
    /// (repeatable), e.g. /result/content/0/text; a `*` segment matches every member
    /// or element.
    #[arg(long = "ignore", value_name = "POINTER", value_parser = parse_pointer)]
    ignore: Vec<Pointer>,

    /// Read more --ignore pointers from FILE (repeatable): one per line; blank lines
    /// and lines starting with # are skipped.
    #[arg(long = "ignore-file", value_name = "FILE")]
    ignore_file: Vec<PathBuf>,
}

fn parse_pointer(s: &str) -> Result<Pointer, String> {
    Pointer::parse(s).map_err(|e| e.to_string())
}

impl IgnoreArgs {
    /// Every pointer, the flags' first, then each file's in order. A file that cannot be
    /// read is an input that cannot be read (66); a bad pointer in it a usage error (64)
    /// naming file:line.
    pub fn pointers(&self) -> anyhow::Result<Vec<Pointer>> {
        let mut out = self.ignore.clone();
        for file in &self.ignore_file {
            out.extend(read_file(file)?);
        }
        Ok(out)
    }
}

fn read_file(path: &Path) -> anyhow::Result<Vec<Pointer>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        coded(
            NO_INPUT,
            format!("--ignore-file {}: cannot read it: {e}", path.display()),
        )
    })?;
    let mut pointers = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let p = Pointer::parse(line).map_err(|e| {
            coded(
                USAGE,
                format!("--ignore-file {}:{}: {e}", path.display(), i + 1),
            )
        })?;
        pointers.push(p);
    }
    Ok(pointers)
}
