//! # reel-fuzz
//!
//! The bodies of reel's fuzz targets, one module per parser of outside input: each
//! takes arbitrary bytes, feeds them to the parser and asserts the invariants the parser
//! promises (a panic here is a bug in the crate that owns the parser). They live in a
//! library, not in the fuzz targets themselves, so two drivers share them:
//!
//! - `fuzz/fuzz_targets/<name>.rs` (cargo-fuzz, libFuzzer, nightly): one line each,
//!   calling [`run`]'s target; `cargo xtask fuzz` runs them;
//! - `tests/corpus.rs` (stable, part of `cargo test --workspace`): replays every file of
//!   `fuzz/corpus/<name>/` and `fuzz/regressions/<name>/` through the same function, so
//!   the normal suite never needs nightly or cargo-fuzz, and every crash fuzzing found
//!   stays fixed.
//!
//! [`TARGETS`] is the one list of targets; the corpus test fails, naming what is
//! missing, when a target lacks its entry point, its `[[bin]]` in `fuzz/Cargo.toml` or
//! its corpus directory (or when one of those names no target).
//!
//! Adding a target (an importer, say): write `src/<name>.rs` with `pub fn run(data:
//! &[u8])` asserting what the importer promises, add the module and its [`TARGETS`] row
//! below, and the corpus test prints the entry point and `[[bin]]` to add. Inputs that
//! carry a choice (a chunk pattern, a rule set) take it from their first byte, so
//! libFuzzer explores the choice and the content together.

#![deny(missing_docs)]

pub mod check;
pub mod http_guard;
pub mod import;
mod input;
pub mod js_stringify;
pub mod line_framer;
pub mod llm_seams;
pub mod normalize;
pub mod redact;
pub mod redact_trace;
pub mod sse;
pub mod trace_line;
pub mod trace_reader;
pub mod yaml_limits;

pub use input::{ChunkedReader, choice, chunks};

/// A fuzz target: its name (the cargo-fuzz target, the corpus directory) and its body.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// The name.
    pub name: &'static str,
    /// The body: panics when an invariant breaks.
    pub run: fn(&[u8]),
}

/// Every target.
pub const TARGETS: &[Target] = &[
    Target {
        name: "trace_line",
        run: trace_line::run,
    },
    Target {
        name: "trace_reader",
        run: trace_reader::run,
    },
    Target {
        name: "check",
        run: check::run,
    },
    Target {
        name: "redact_trace",
        run: redact_trace::run,
    },
    Target {
        name: "sse",
        run: sse::run,
    },
    Target {
        name: "import_mcporter",
        run: import::mcporter,
    },
    Target {
        name: "import_mcptape",
        run: import::mcptape,
    },
    Target {
        name: "import_mcp_vcr",
        run: import::mcp_vcr,
    },
    Target {
        name: "import_cassette",
        run: import::cassette,
    },
    Target {
        name: "import_recorder",
        run: import::recorder,
    },
    Target {
        name: "import_mcp_rec",
        run: import::mcp_rec,
    },
    Target {
        name: "import_agent_vcr",
        run: import::agent_vcr,
    },
    Target {
        name: "import_mmsp",
        run: import::mmsp,
    },
    Target {
        name: "import_claude",
        run: import::claude,
    },
    Target {
        name: "line_framer",
        run: line_framer::run,
    },
    Target {
        name: "http_guard",
        run: http_guard::run,
    },
    Target {
        name: "normalize",
        run: normalize::run,
    },
    Target {
        name: "redact",
        run: redact::run,
    },
    Target {
        name: "js_stringify",
        run: js_stringify::run,
    },
    Target {
        name: "yaml_limits",
        run: yaml_limits::run,
    },
    Target {
        name: "llm_seams",
        run: llm_seams::run,
    },
];

/// Runs the target `name` on `data`; `false` when there is no such target.
pub fn run(name: &str, data: &[u8]) -> bool {
    match TARGETS.iter().find(|t| t.name == name) {
        Some(t) => {
            (t.run)(data);
            true
        }
        None => false,
    }
}
