//! `reel play TRACE`: serve a trace as the MCP server over stdio.
//!
//! Wiring only: arguments → [`reel_replay::PlayOptions`], stdin/stdout/stderr →
//! [`reel_replay::play`], the summary → the exit code.

use std::path::PathBuf;

use reel_mcp::normalize::{Pointer, rules_help};
use reel_replay::{Pace, PlayError, PlayOptions, Subset};

use crate::exit::{CANT_CREATE, INTERNAL, NO_INPUT, UNAVAILABLE, USAGE, coded};
use crate::output::Output;

/// Arguments of `reel play`.
#[derive(clap::Args)]
#[command(
    after_help = "`reel play --help` lists the normalisation rules, the matching rules and the exit codes.",
    after_long_help = long_help()
)]
pub struct Args {
    /// The trace to serve: a path, or a run name (the newest run recorded with that
    /// --name in the trace directory).
    #[arg(value_name = "TRACE")]
    trace: String,

    /// Where run names are looked up (default: $REEL_DIR, else the per-user trace
    /// directory, e.g. ~/.local/share/reel/traces).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,

    /// Requests must come in recorded order (mcporter's semantics); no generic answers
    /// for ping or logging/setLevel.
    #[arg(long)]
    strict: bool,

    /// Report client drift but do not let it change the exit code (4).
    #[arg(long)]
    lenient: bool,

    /// Ignore this JSON pointer into every message when matching and comparing
    /// (repeatable), e.g. /params/arguments/now; a `*` segment matches every member.
    #[arg(long = "ignore", value_name = "POINTER", value_parser = parse_pointer)]
    ignore: Vec<Pointer>,

    /// Answer from the N-th recorded session of the trace (1-based).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..))]
    session: u64,

    /// Write the replay session itself as a trace into DIR (created if missing), every
    /// line marked origin "tape" or "live", so `reel diff` can compare it with the
    /// original.
    #[arg(long, value_name = "DIR")]
    record: Option<PathBuf>,

    /// Serve only these tools' `tools/call` from the tape; forward everything else to
    /// the live server given after `--` (that run is recorded too: into --record DIR,
    /// else the trace directory).
    #[arg(long, value_name = "TOOL,...", value_delimiter = ',')]
    subset: Vec<String>,

    /// Replay the recorded timing: `recorded`, or a speed factor such as `2x` (twice as
    /// fast) or `0.5x`. Default: answer at once.
    #[arg(long, value_name = "recorded|Nx")]
    pace: Option<Pace>,

    /// The live server for --subset.
    #[arg(last = true, value_name = "CMD")]
    live: Vec<String>,
}

fn parse_pointer(s: &str) -> Result<Pointer, String> {
    Pointer::parse(s).map_err(|e| e.to_string())
}

fn long_help() -> String {
    format!(
        "\
Matching: a request takes the earliest unused recorded exchange with the same method and
equal params after normalisation; identical repeated calls take their recorded answers in
order; reordered and concurrent calls match freely (--strict: recorded order). Answers
carry the live id; recorded notifications are re-sent before the result they preceded
(progress with the live token); recorded server->client requests (sampling, elicitation,
roots) are sent with fresh ids and the client's answers compared with the recorded ones
(client drift); notifications/cancelled stops an exchange. initialize and server/discover
are answered from the tape, the protocol version negotiated (the client's when the
recorded server is known to support it); a tape recorded with a legacy-only client
refuses server/discover with -32601 as a legacy server does. ping and logging/setLevel get
an empty result when the tape holds none (not with --strict).

Normalisation rules (what may differ between honest runs), in order:
{rules}

A miss is answered with a JSON-RPC error: -32601 when the tape holds no request with that
method, else -32010 (reel: no recorded answer); stderr names the request, the nearest
recorded candidates (at most 3, of the first 1000 with the method) and a JSON-pointer
diff. A line that is not JSON gets -32700 (id null), a batch or non-request -32600. When
the client closes stdin, a summary goes to stderr: answered, missed, client drift,
unused recorded exchanges (the first 20 listed).

Limits: input lines up to 64 MiB; live requests are redacted with the rules of the
trace's first meta line; with --subset the tape's unsolicited messages are not sent (the
live server sends its own) and the live server gets 3 s to exit after stdin closes.

Exit codes:
  0    every request answered, no client drift
  3    requests the tape could not answer (misses); wins over 4
  4    the client answered a server->client request (or an input_required round)
       differently than recorded (not with --lenient)
  64   usage error
  66   the trace cannot be read, or no run has that name
  69   the live server of --subset cannot be started
  70   internal error (a bug: please report it)
  73   the --record trace cannot be created",
        rules = rules_help().trim_end()
    )
}

/// Runs `reel play`.
pub fn run(args: Args, _out: &Output) -> anyhow::Result<u8> {
    if args.subset.is_empty() != args.live.is_empty() {
        let msg = if args.subset.is_empty() {
            "a live server after `--` is only used with --subset TOOL,… (which tools come from the tape)"
        } else {
            "--subset needs the live server to forward the other requests to, after `--` (e.g. `reel play RUN --subset search -- node server.js`)"
        };
        return Err(coded(USAGE, msg));
    }
    let trace = reel_replay::runs::resolve(&args.trace, args.dir.as_deref())
        .map_err(|e| coded(NO_INPUT, e.to_string()))?;
    let opts = PlayOptions {
        trace,
        session: usize::try_from(args.session).unwrap_or(usize::MAX),
        strict: args.strict,
        lenient: args.lenient,
        ignore: args.ignore,
        record: args.record,
        subset: (!args.subset.is_empty()).then_some(Subset {
            tools: args.subset,
            command: args.live,
        }),
        pace: args.pace,
        argv: std::env::args().collect(),
    };
    let mut stderr = std::io::stderr();
    match reel_replay::play_stdio(opts, std::io::stdout(), &mut stderr) {
        Ok(summary) => Ok(summary.exit_code(args.lenient)),
        Err(e @ PlayError::Trace(_)) => Err(coded(
            NO_INPUT,
            format!("{e} (give a trace file or a run name; `reel ls` lists the runs)"),
        )),
        Err(e @ PlayError::Record { .. }) => Err(coded(CANT_CREATE, e.to_string())),
        Err(e @ PlayError::Live { .. }) => Err(coded(UNAVAILABLE, e.to_string())),
        Err(e) => Err(coded(INTERNAL, e.to_string())),
    }
}
