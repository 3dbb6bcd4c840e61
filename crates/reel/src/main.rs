//! `reel`: record, replay, verify and diff agent traffic.
//!
//! This crate is argument parsing and wiring only; every command's work is done by a
//! library crate that tests call directly. Each command lives in `cmd/<name>.rs` with its
//! own clap `Args`.

// First, so that its `say!` is in scope in every module after it.
#[macro_use]
mod output;
mod cmd;
mod exit;
mod help;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::output::ColorChoice;

/// `reel --version`: the release and the commit it was built from (see `build.rs`).
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("REEL_COMMIT"), ")");

/// Record, replay, verify and diff MCP agent traffic (mcp-replay trace format v1).
#[derive(Parser)]
#[command(
    name = "reel",
    version = VERSION,
    about,
    propagate_version = true,
    after_long_help = exit::EXIT_CODES_HELP
)]
struct Cli {
    /// When to use colour: auto (a terminal, unless NO_COLOR or TERM=dumb), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Record an MCP server (stdio, or HTTP with --url): forward every byte, write a trace.
    Rec(cmd::rec::Args),
    /// Validate traces against the mcp-replay trace format v1 (--verify: and their seals).
    Check(cmd::check::Args),
    /// Seal finished traces: a hash chain over their lines in TRACE.seal, so `check
    /// --verify` shows any line changed, removed, inserted or reordered since.
    Seal(cmd::seal::Args),
    /// Per-tool and per-model aggregates (JSON compatible with mcp-tape.stats/1).
    Stats(cmd::stats::Args),
    /// List recorded runs, newest first.
    Ls(cmd::ls::Args),
    /// Write a trace in another tool's format (mcporter, mcptape, cassette, vcr, mmsp),
    /// or as OpenTelemetry spans (otlp).
    Export(cmd::export::Args),
    /// Convert other tools' recordings (mcporter, mcp-vcr, cassettes, MMSP, Claude Code, …) into traces.
    Import(cmd::import::Args),
    /// Redact traces after the fact, with the rules `rec` records with.
    Redact(cmd::redact::Args),
    /// Record an agent's LLM API calls (Anthropic, OpenAI), or serve them back (--play).
    #[cfg(feature = "http")]
    Llm(cmd::llm::Args),
    /// Serve a trace as the MCP server, over stdio or HTTP (--listen); offline, deterministic.
    Play(cmd::play::Args),
    /// Play the recorded client against a live server and report drift.
    Verify(cmd::verify::Args),
    /// Where two runs drifted apart: content-aligned, value-aware.
    Diff(cmd::diff::Args),
    /// Show runs in the browser: timeline, calls, tools, turns, events, raw, diffs,
    /// merges, live tails, MMSP cache directories (a local web viewer on loopback).
    #[cfg(feature = "http")]
    View(cmd::view::Args),
    /// Record the MCP servers your clients already run (Claude Code, Claude Desktop,
    /// Cursor, VS Code, Windsurf, Gemini CLI): their entries wrapped in `reel rec`.
    Install(cmd::install::InstallArgs),
    /// Put back the entries `reel install` wrapped, byte for byte.
    Uninstall(cmd::install::Args),
    /// The whole loop on a built-in example server: record, replay, drift, diff, stats.
    Demo(cmd::demo::Args),
    /// reel's example MCP server and client, to try the other commands on (`reel demo`
    /// runs them).
    Example(cmd::demo::ExampleArgs),
    /// The completion script for a shell (bash, zsh, fish, powershell, elvish).
    Completions(cmd::completions::Args),
    /// Manual pages in roff: reel's own, one command's, or all of them into a directory.
    Man(cmd::man::Args),
}

/// reel's whole command line, with `--help` listing the commands by job.
fn command() -> clap::Command {
    help::grouped(Cli::command())
}

fn main() -> ExitCode {
    let cli = match command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        Err(e) => return exit::from_clap(e),
    };
    let out = output::Output::new(cli.color);
    #[cfg(unix)]
    reel_net::process::file_size_limit_is_an_error();
    let result = match cli.command {
        Command::Rec(args) => cmd::rec::run(args, &out),
        Command::Check(args) => cmd::check::run(args, &out),
        Command::Seal(args) => cmd::seal::run(args, &out),
        Command::Stats(args) => cmd::stats::run(args, &out),
        Command::Ls(args) => cmd::ls::run(args, &out),
        Command::Export(args) => cmd::export::run(args, &out),
        Command::Import(args) => cmd::import::run(args, &out),
        Command::Redact(args) => cmd::redact::run(args, &out),
        #[cfg(feature = "http")]
        Command::Llm(args) => cmd::llm::run(args, &out),
        Command::Play(args) => cmd::play::run(args, &out),
        Command::Verify(args) => cmd::verify::run(args, &out),
        Command::Diff(args) => cmd::diff::run(args, &out),
        #[cfg(feature = "http")]
        Command::View(args) => cmd::view::run(args, &out),
        Command::Install(args) => cmd::install::install(args, &out),
        Command::Uninstall(args) => cmd::install::uninstall(args, &out),
        Command::Demo(args) => cmd::demo::run(args, &out),
        Command::Example(args) => cmd::demo::run_example(args, &out),
        Command::Completions(args) => cmd::completions::run(&args, command()),
        Command::Man(args) => cmd::man::run(&args, command()),
    };
    cmd::trace_arg::cleanup();
    exit::finish(result)
}
