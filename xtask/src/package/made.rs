//! What one `cargo xtask package` run made, and the listing it prints.

use std::fs;
use std::path::{Path, PathBuf};

use super::options::Profile;
use super::platform::Platform;
use crate::process::short;

/// The packages one run made.
pub struct Made {
    pub version: String,
    pub platform: &'static Platform,
    pub profile: Profile,
    /// The binary in both packages.
    pub binary: PathBuf,
    pub wheel: PathBuf,
    pub npm_main: PathBuf,
    pub npm_platform: PathBuf,
}

impl Made {
    /// Prints each file and its size.
    pub fn print(&self, root: &Path, out: &Path) {
        println!(
            "\npackage: reel {} for {} ({}, profile {}), in {}:",
            self.version,
            self.platform.triple,
            self.platform.human(),
            self.profile.name(),
            short(out, root)
        );
        let files = [&self.wheel, &self.npm_platform, &self.npm_main];
        let names: Vec<_> = files
            .iter()
            .map(|f| f.file_name().unwrap_or_default().to_string_lossy())
            .collect();
        let width = names.iter().map(|n| n.len()).max().unwrap_or(0);
        for (file, name) in files.iter().zip(&names) {
            println!("  {name:<width$}  {:>10}", human_size(size(file)));
        }
        println!(
            "  (the binary in both: {}, {})",
            short(&self.binary, root),
            human_size(size(&self.binary))
        );
    }
}

fn size(file: &Path) -> u64 {
    fs::metadata(file).map(|m| m.len()).unwrap_or(0)
}

/// `1.2 MiB`, `340.0 KiB`, `512 B`.
fn human_size(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if b >= KIB * KIB {
        format!("{:.1} MiB", b / (KIB * KIB))
    } else if b >= KIB {
        format!("{:.1} KiB", b / KIB)
    } else {
        format!("{bytes} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_say_them() {
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(3 * 1024 * 1024 / 2), "1.5 MiB");
    }
}
