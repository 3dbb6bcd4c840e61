//! `cargo xtask`: the project's own build, test and benchmark tooling.
//!
//! - `peers` installs the independent MCP peers the interop tests drive (npm packages and
//!   a Python venv, each pinned to one exact version) into `<workspace>/.peers/`, once.
//! - `test` is the one command that proves the project works: lint, peers,
//!   `cargo test --workspace`, then the `shared-fixtures` suite when `../shared` exists. CI
//!   runs it.
//! - `bench` release-builds reel and measures it against the targets the issues set.
//! - `package` builds the wheel and the npm packages people install reel from, and with
//!   `--check` installs them with pip, uv and npm and runs them; `test` runs that check.
//! - `fuzz` runs the libFuzzer targets in `fuzz/` (nightly, cargo-fuzz) for a while
//!   each and reports executions and crashes; `test` replays their corpora on stable.
//!
//! xtask depends on no crate of the project, so it builds and reports even while one of
//! them does not compile. Arguments are parsed by hand: there are few, and a clap build
//! here would only slow down every `cargo xtask` on a two-core machine.

mod bench;
mod fuzz;
mod layout;
mod package;
mod peers;
mod process;
mod test;
mod watch;

use std::process::ExitCode;

const USAGE: &str = "\
cargo xtask: reel's build, test and benchmark tooling

USAGE:
  cargo xtask peers                       install the MCP peers the tests need into .peers/
  cargo xtask test [--no-lint] [ARGS…]    fmt + clippy, peers, cargo test --workspace ARGS,
                                          the packages (package --profile dev --check), then
                                          the shared-fixtures suite (when ../shared exists)
  cargo xtask bench [--quick] [NAME…]     release-build reel, run benches (all by default),
                                          print a table, write target/bench/results.json
  cargo xtask fuzz [--seconds N] [--merge] [TARGET…]
                                          run the fuzz targets (all by default), N s each
  cargo xtask layout [--check]            crate sizes, import cycles, long files and functions
  cargo xtask package [--profile dev|release|dist] [--target TRIPLE] [--zig] [--out DIR] [--check]
                                          build the wheel reel-cli and the npm packages
                                          reel-cli and reel-cli-<platform> into target/packages/

`test`:  --no-lint skips `cargo fmt --check` and clippy. ARGS go to `cargo test`; the ones
         after `--` also go to the shared-fixtures run. Tests get REEL_PEERS=<abs .peers>.
`bench`: --quick runs small inputs on a debug build, to prove the benches run (figures are
         not meaningful; results go to target/bench/quick/). Benches: reader, import, rec,
         rec-http, play, play-http, diff, llm, view.
`layout`: prints each crate's production code lines and the files over 700 code lines,
         functions over 80 and file-level import cycles; --check fails when a count is
         above xtask/layout.json (the counts may only go down).
`package`: one build (maturin, profile dist by default) goes into the wheel and the npm
         platform package of TRIPLE (the host's by default; --zig links Linux targets
         with zig, from maturin's venv); prints each file and its size. --check installs
         them in a scratch directory with pip, uvx, uv tool and npm and runs reel from
         there (host target only). maturin and uv are pinned in .peers/package-venv.
`fuzz`:  needs the nightly toolchain; installs cargo-fuzz when missing. Each target runs
         N seconds (default 60) on one core, from fuzz/corpus and fuzz/regressions,
         growing fuzz/work/TARGET; prints executions per target and in total, and the
         file of every crash (fuzz/artifacts/TARGET/). --merge adds the inputs that reach
         new code to fuzz/corpus/TARGET. `cargo test` replays every corpus on stable.
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rest = args.get(1..).unwrap_or_default();
    let result = match args.first().map(String::as_str) {
        Some("peers") => peers::cmd(rest),
        Some("test") => test::cmd(rest),
        Some("bench") => bench::cmd(rest),
        Some("fuzz") => fuzz::cmd(rest),
        Some("layout") => layout::cmd(rest),
        Some("package") => package::cmd(rest),
        Some("-h" | "--help" | "help") => {
            print!("{USAGE}");
            Ok(())
        }
        None => {
            eprint!("{USAGE}");
            return ExitCode::from(2);
        }
        Some(other) => Err(anyhow::anyhow!(
            "unknown subcommand `{other}` (expected peers, test, bench, fuzz, layout or package; see `cargo xtask --help`)"
        )),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
