//! Every fuzz target replayed on its checked-in corpus (`fuzz/corpus/<target>/`) and
//! regressions (`fuzz/regressions/<target>/`, the inputs of crashes fuzzing found), on
//! stable, without cargo-fuzz: `cargo test --workspace` keeps them passing. Also checks
//! that the cargo-fuzz project and [`reel_fuzz::TARGETS`] name the same targets.

use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of `dir`, sorted; none when it does not exist.
fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .map(|e| e.expect("listing a corpus").path())
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

#[test]
fn every_target_passes_its_corpus_and_regressions() {
    let mut failures = Vec::new();
    let mut inputs = 0;
    for target in reel_fuzz::TARGETS {
        let corpus = files(&fuzz_dir().join("corpus").join(target.name));
        assert!(
            !corpus.is_empty(),
            "fuzz/corpus/{}/ has no seed inputs",
            target.name
        );
        let regressions = files(&fuzz_dir().join("regressions").join(target.name));
        for path in corpus.iter().chain(&regressions) {
            inputs += 1;
            let data = std::fs::read(path).expect("reading a corpus file");
            let outcome = std::panic::catch_unwind(|| (target.run)(&data));
            if let Err(e) = outcome {
                let why = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                failures.push(format!("{}: {why}", path.display()));
            }
        }
    }
    assert!(inputs > 0);
    assert!(
        failures.is_empty(),
        "{} inputs failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_fuzz_project_names_every_target() {
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("fuzz/Cargo.toml");
    let mut missing = Vec::new();
    for target in reel_fuzz::TARGETS {
        let name = target.name;
        let entry = fuzz_dir().join(format!("fuzz_targets/{name}.rs"));
        let expected = format!("reel_fuzz::run(\"{name}\", data)");
        match std::fs::read_to_string(&entry) {
            Ok(text) if text.contains(&expected) => {}
            _ => missing.push(format!(
                "fuzz/fuzz_targets/{name}.rs:\n#![no_main]\nlibfuzzer_sys::fuzz_target!(|data: &[u8]| {{\n    {expected};\n}});"
            )),
        }
        let bin = format!("[[bin]]\nname = \"{name}\"\npath = \"fuzz_targets/{name}.rs\"");
        if !manifest.contains(&bin) {
            missing.push(format!(
                "in fuzz/Cargo.toml:\n{bin}\ntest = false\ndoc = false\nbench = false"
            ));
        }
    }
    for entry in files(&fuzz_dir().join("fuzz_targets")) {
        let stem = entry
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        if !reel_fuzz::TARGETS.iter().any(|t| t.name == stem) {
            missing.push(format!(
                "{} has no row in reel_fuzz::TARGETS",
                entry.display()
            ));
        }
    }
    assert!(missing.is_empty(), "add:\n\n{}", missing.join("\n\n"));
}
