//! `cargo xtask layout`: the tree's shape in four counts, each against its target —
//! crates over 12k lines of production code, file-level import cycles, files over 700
//! code lines, functions over 80 code lines. Production code is what `src/` holds
//! outside `#[cfg(test)]` items; a code line is a line with something on it besides
//! comments. The counts are read from the source text (see [`lex`] and [`modules`]),
//! not from the compiler: a macro-generated import is not seen.
//!
//! `--check` holds the counts to `xtask/layout.json`: a count above it fails (the layout
//! may only get better); one below it is said, so the file can be lowered with it.

mod lex;
mod modules;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The targets: the most a crate, a file and a function may hold.
const CRATE_MAX: usize = 12_000;
const FILE_MAX: usize = 700;
const FN_MAX: usize = 80;

/// What the layout measures, for one crate.
struct CrateShape {
    name: String,
    code: usize,
    /// Files over [`FILE_MAX`]: path and code lines.
    long_files: Vec<(PathBuf, usize)>,
    /// Functions over [`FN_MAX`]: file, line, name and code lines.
    long_fns: Vec<(PathBuf, usize, String, usize)>,
    /// Import cycles, each the files in it.
    cycles: Vec<Vec<PathBuf>>,
}

/// The four counts, as `xtask/layout.json` keeps them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Counts {
    crates_over: usize,
    cycles: usize,
    files_over: usize,
    functions_over: usize,
}

pub fn cmd(args: &[String]) -> Result<()> {
    let check = match args {
        [] => false,
        [a] if a == "--check" => true,
        _ => anyhow::bail!("usage: cargo xtask layout [--check]"),
    };
    let root = crate::process::workspace_root();
    let shapes = measure(&root)?;
    print_lists(&shapes);
    let counts = Counts::of(&shapes);
    println!("layout: {counts}");
    if check {
        println!("layout: {}", held_to_baseline(&root, counts)?);
    }
    Ok(())
}

/// `cargo xtask test`'s step: the counts held to `xtask/layout.json`.
pub fn check(root: &Path) -> Result<String> {
    let counts = Counts::of(&measure(root)?);
    let held = held_to_baseline(root, counts)?;
    Ok(format!("{counts}; {held}"))
}

fn held_to_baseline(root: &Path, counts: Counts) -> Result<String> {
    let path = root.join("xtask/layout.json");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let kept: Counts =
        serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
    let pairs = [
        ("crates over 12k", counts.crates_over, kept.crates_over),
        ("cycles", counts.cycles, kept.cycles),
        ("files over 700", counts.files_over, kept.files_over),
        (
            "functions over 80",
            counts.functions_over,
            kept.functions_over,
        ),
    ];
    let worse: Vec<String> = pairs
        .iter()
        .filter(|(_, now, was)| now > was)
        .map(|(what, now, was)| format!("{what}: {now}, was {was}"))
        .collect();
    anyhow::ensure!(
        worse.is_empty(),
        "the layout got worse ({}); `cargo xtask layout` lists them",
        worse.join("; ")
    );
    let better: Vec<String> = pairs
        .iter()
        .filter(|(_, now, was)| now < was)
        .map(|(what, now, was)| format!("{what} down to {now} from {was}"))
        .collect();
    Ok(if better.is_empty() {
        "no count above xtask/layout.json".to_owned()
    } else {
        format!("{}: lower xtask/layout.json to match", better.join(", "))
    })
}

impl Counts {
    fn of(shapes: &[CrateShape]) -> Counts {
        Counts {
            crates_over: shapes.iter().filter(|s| s.code > CRATE_MAX).count(),
            cycles: shapes.iter().map(|s| s.cycles.len()).sum(),
            files_over: shapes.iter().map(|s| s.long_files.len()).sum(),
            functions_over: shapes.iter().map(|s| s.long_fns.len()).sum(),
        }
    }
}

impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} crates over {CRATE_MAX} code lines, {} import cycles, {} files over \
             {FILE_MAX}, {} functions over {FN_MAX} (targets: 0, 0, 0, 0)",
            self.crates_over, self.cycles, self.files_over, self.functions_over
        )
    }
}

/// Every crate under `crates/` and `xtask`, measured.
fn measure(root: &Path) -> Result<Vec<CrateShape>> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    dirs.push(root.join("xtask"));
    dirs.sort();
    Ok(dirs.iter().map(|d| shape(root, d)).collect())
}

fn shape(root: &Path, dir: &Path) -> CrateShape {
    let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).to_owned();
    let mut s = CrateShape {
        name: dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned(),
        code: 0,
        long_files: Vec::new(),
        long_fns: Vec::new(),
        cycles: Vec::new(),
    };
    // A library and a binary root are two module trees.
    for root_file in ["src/lib.rs", "src/main.rs"].map(|f| dir.join(f)) {
        if !root_file.is_file() {
            continue;
        }
        let tree = modules::tree(&root_file);
        for m in &tree {
            let lines = lex::code_lines(&m.code);
            s.code += lines;
            if lines > FILE_MAX {
                s.long_files.push((rel(&m.file), lines));
            }
            for (line, name, len) in functions(&m.code) {
                if len > FN_MAX {
                    s.long_fns.push((rel(&m.file), line, name, len));
                }
            }
        }
        let edges = modules::imports(&tree);
        for cycle in modules::cycles(&edges) {
            s.cycles
                .push(cycle.into_iter().map(|i| rel(&tree[i].file)).collect());
        }
    }
    s
}

/// The functions with a body in stripped code: the line each starts on, its name and
/// its code lines (signature to closing brace).
fn functions(code: &str) -> Vec<(usize, String, usize)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("fn ").map(|p| from + p) {
        from = at + 3;
        if at > 0 && lex::ident_byte(b[at - 1]) {
            continue;
        }
        let name: String = code[at + 3..]
            .trim_start()
            .bytes()
            .take_while(|&c| lex::ident_byte(c))
            .map(char::from)
            .collect();
        if name.is_empty() {
            continue;
        }
        let open = b[at..].iter().position(|&c| c == b'{' || c == b';');
        let Some(open) = open.map(|p| at + p).filter(|&o| b[o] == b'{') else {
            continue; // a declaration without a body
        };
        let Some(close) = lex::matching_brace(b, open) else {
            continue;
        };
        let line = code[..at].matches('\n').count() + 1;
        out.push((line, name, lex::code_lines(&code[at..=close])));
    }
    out
}

/// Prints the crates and the lists behind the four counts.
fn print_lists(shapes: &[CrateShape]) {
    println!("crate                 code lines   files>{FILE_MAX}  fns>{FN_MAX}  cycles");
    for s in shapes {
        let flag = if s.code > CRATE_MAX { "  over" } else { "" };
        println!(
            "{:<20} {:>11}   {:>9}  {:>6}  {:>6}{flag}",
            s.name,
            s.code,
            s.long_files.len(),
            s.long_fns.len(),
            s.cycles.len()
        );
    }
    for s in shapes {
        for (file, lines) in &s.long_files {
            println!(
                "file over {FILE_MAX}: {} ({lines} code lines)",
                file.display()
            );
        }
    }
    for s in shapes {
        for (file, line, name, len) in &s.long_fns {
            println!(
                "function over {FN_MAX}: {}:{line} {name} ({len})",
                file.display()
            );
        }
    }
    for s in shapes {
        for cycle in &s.cycles {
            let files: Vec<String> = cycle.iter().map(|f| f.display().to_string()).collect();
            println!("cycle: {}", files.join(" ↔ "));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_are_measured_from_signature_to_closing_brace() {
        let code = lex::strip(
            "fn a() {\n    let x = \"}\";\n\n    x;\n}\ntrait T { fn d(&self); }\nfn b() {}\n",
        );
        let got = functions(&code);
        assert_eq!(got, [(1, "a".to_owned(), 4), (7, "b".to_owned(), 1)]);
    }
}
