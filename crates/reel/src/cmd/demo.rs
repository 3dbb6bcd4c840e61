//! `reel demo` (the whole loop on the built-in example server) and the hidden
//! `reel example server|client` it runs.
//!
//! Wiring only: the example server, client and the demo steps live in `reel-example`.
//! The demo runs this very binary (`current_exe`) for every step, so it needs nothing
//! installed but reel.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use reel_example::client;
use reel_example::demo::{DemoOptions, run_demo};
use reel_example::server::{ServerOptions, serve};

use crate::exit::{self, coded};
use crate::output::Output;

/// Arguments of `reel demo`.
#[derive(clap::Args)]
#[command(after_long_help = "\
Steps (each prints the command that does it, so you can run it yourself):
  1. record: reel's example client drives reel's example MCP server through `reel rec`
  2. replay: the same client against `reel play` on that trace; the answers must match
  3. record again with the server's --changed flag (the weather answer differs)
  4. `reel diff` of the two runs: exit 1, output drift in tools/call weather
  5. `reel stats` of the first run
The example server and client are hidden subcommands: `reel example server [--changed]`
and `reel example client -- SERVER_CMD…`.

Exit codes:
  0    every step behaved as expected
  70   a step did not (the output says which and why)
  73   the directory cannot be created")]
pub struct Args {
    /// Put the traces here (created if missing) instead of a new temporary directory.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// Runs `reel demo`.
pub fn run(args: Args, out: &Output) -> anyhow::Result<u8> {
    let reel = std::env::current_exe().map_err(|e| {
        coded(
            exit::INTERNAL,
            format!("cannot find the reel binary itself: {e}"),
        )
    })?;
    let dir = match args.dir {
        Some(d) => d,
        None => fresh_temp_dir()?,
    };
    reel_trace::names::ensure_dir(&dir)
        .map_err(|e| coded(exit::CANT_CREATE, format!("{}: {e}", dir.display())))?;
    let opts = DemoOptions {
        shown_reel: shown(&reel),
        reel,
        dir,
        viewer: cfg!(feature = "http"),
    };
    let mut stdout = out.human_stdout();
    let outcome = run_demo(&opts, &mut stdout)?;
    if outcome.ok() {
        Ok(exit::OK)
    } else {
        Err(coded(
            exit::INTERNAL,
            format!(
                "demo: {} step(s) did not behave as expected: {}",
                outcome.failed.len(),
                outcome.failed.join("; ")
            ),
        ))
    }
}

/// A new private directory under the system's temporary directory; kept afterwards so
/// the printed commands can be run again on it.
fn fresh_temp_dir() -> anyhow::Result<PathBuf> {
    reel_trace::names::private_temp_dir("reel-demo-").map_err(|e| {
        coded(
            exit::CANT_CREATE,
            format!("{}: {e}", std::env::temp_dir().display()),
        )
    })
}

/// `reel` when that is what PATH finds for this binary, else its full path.
fn shown(exe: &Path) -> String {
    if crate::cmd::reel_on_path(exe).is_some() {
        "reel".to_owned()
    } else {
        exe.display().to_string()
    }
}

/// Arguments of the hidden `reel example`.
#[derive(clap::Args)]
#[command(after_help = "\
Try the other commands on it, with nothing else installed:
  reel example client -- reel rec --name try -- reel example server
  reel example client -- reel play try
  reel verify try -- reel example server --changed")]
pub struct ExampleArgs {
    #[command(subcommand)]
    role: Role,
}

#[derive(clap::Subcommand)]
enum Role {
    /// The example MCP server on stdio.
    Server {
        /// Change one answer (the weather), so that a diff has something to find.
        #[arg(long)]
        changed: bool,
    },
    /// The example client: starts SERVER_CMD, runs a fixed script, prints the answers.
    Client {
        /// The server command.
        #[arg(last = true, required = true, value_name = "SERVER_CMD")]
        command: Vec<OsString>,
    },
}

/// Runs `reel example server|client`.
pub fn run_example(args: ExampleArgs, out: &Output) -> anyhow::Result<u8> {
    match args.role {
        Role::Server { changed } => {
            let stdin = std::io::stdin().lock();
            let stdout = std::io::stdout().lock();
            serve(stdin, stdout, ServerOptions { changed })?;
            Ok(exit::OK)
        }
        Role::Client { command } => {
            // The answers are a live server's words: escaped like trace content.
            let mut stdout = out.human_stdout();
            match client::drive(&command, &mut stdout) {
                Ok(t) if t.errors == 0 => Ok(exit::OK),
                Ok(t) => Err(coded(
                    exit::DIFFERENT,
                    format!("{} request(s) were answered with an error", t.errors),
                )),
                Err(e @ client::ClientError::Start { .. }) => {
                    Err(coded(exit::UNAVAILABLE, e.to_string()))
                }
                Err(e) => Err(coded(exit::UNAVAILABLE, e.to_string())),
            }
        }
    }
}
