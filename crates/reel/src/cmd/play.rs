//! `reel play TRACE [--listen ADDR]`: serve a trace as the MCP server over stdio, or
//! over Streamable HTTP.
//!
//! Wiring only: arguments → [`reel_replay::PlayOptions`], stdin/stdout/stderr →
//! [`reel_replay::play_stdio`] or a listener → [`reel_replay::play::http::HttpPlay`], the
//! summary → the exit code.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use reel_mcp::normalize::rules_help;
#[cfg(feature = "http")]
use reel_replay::play::http::{HttpPlay, ListenOptions};
use reel_replay::{Pace, PlayError, PlayOptions, Subset, match_rules_help};

use crate::cmd::ignore::IgnoreArgs;
use crate::cmd::net_flags::{Listen, ListenLimits};
use crate::cmd::trace_arg::RunDir;
use crate::exit::{self, CANT_CREATE, INTERNAL, NO_INPUT, UNAVAILABLE, USAGE, coded};
use crate::output::Output;
use reel_report::display::TerminalSafe;

/// Arguments of `reel play`.
#[derive(clap::Args)]
#[command(
    after_help = "`reel play --help` lists the normalisation rules, the matching rules and the exit codes.",
    after_long_help = long_help(),
    mut_arg("listen", |a| a.conflicts_with("session").help(
        "Serve over Streamable HTTP on IP:PORT (port 0: a free one) instead of stdio; \
         prints `reel: listening on http://IP:PORT/PATH` on stderr (PATH: the recorded \
         one, else /mcp) and serves every recorded session, the n-th live session from the \
         n-th recorded one, until SIGINT or SIGTERM. Loopback unless given otherwise"
    )),
    mut_arg("allow_host", |a| a.requires("listen")),
)]
pub struct Args {
    /// The trace to serve: a trace file, or a run name (the newest run recorded with
    /// that --name in --dir; NAME~1 is the one before it).
    #[arg(value_name = "TRACE")]
    trace: String,

    #[command(flatten)]
    runs: RunDir,

    /// Requests must come in recorded order (mcporter's semantics), each recorded answer
    /// used once: no generic answers, no list read answered again.
    #[arg(long)]
    strict: bool,

    /// Report client drift but do not let it change the exit code (4).
    #[arg(long)]
    lenient: bool,

    #[command(flatten)]
    ignore: IgnoreArgs,

    /// Answer from the N-th recorded session of the trace (1-based; over stdio). The
    /// session-less lines of an HTTP recording (a discover probe) are served with it.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..))]
    session: u64,

    #[command(flatten)]
    listen: Listen,

    #[command(flatten)]
    limits: ListenLimits,

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

    /// When reel play ends, write FILE: a JSON document with the exit code, the verdict,
    /// the summary and everything reel printed on stderr (the misses with their nearest
    /// recorded requests), for a test runner that started reel only as a client's server
    /// command. Written whole (a temporary file renamed), also when play fails.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,

    /// The live server for --subset.
    #[arg(last = true, value_name = "CMD")]
    live: Vec<String>,
}

fn long_help() -> String {
    format!(
        "\
Matching rules, in the order they are tried (--strict: requests must come in recorded
order and each recorded answer is used once):
{match_rules}

Answers carry the live id; recorded notifications are re-sent before the result they
preceded (progress with the live token); recorded server->client requests (sampling,
elicitation, roots) are sent with fresh ids and the client's answers compared with the
recorded ones (client drift); notifications/cancelled stops an exchange. initialize and
server/discover are answered from the tape, the protocol version negotiated (the client's
when the recorded server is known to support it). Across eras: a legacy tape refuses a
server/discover probe as a legacy server does, and a 2026-07-28 tape answers a legacy
initialize from its recorded server/discover result (the miss names both handshakes when
no bridge fits).

Delivery: answers are written as soon as they are ready, what is ready together in one
write, except where a client can tell the difference: a result that recorded messages of
its exchange preceded (progress, logging) is written apart from them, after them, and
over stdio on Linux only once the client has read them (the unread bytes of the stdout
pipe or socket; waiting at most {wait} ms, then written anyway). Over HTTP it leaves in
a write of its own on the request's event stream. A live server sent them apart, and
clients may drop a call's progress handler on its result before handling what came in
the same read (the TypeScript SDK does). --pace replays the recorded gaps as well.

Normalisation rules (what may differ between honest runs), in order:
{rules}

Over HTTP (--listen): each recorded session answers one live session, in order (an
initialize without a session opens the next one, with a fresh Mcp-Session-Id); requests
without a session are matched against the recording's session-less traffic (2026-07-28,
a discover probe). Answers are JSON or event streams as recorded, with the recorded
status (a 400 refusal stays a 400) and the recorded priming events; a stream the server
closed mid-call closes, its answer going to the GET that resumes it (Last-Event-ID);
recorded server messages that belong to no request go on the session's GET stream (405
when the recording shows one); DELETE ends a session; an unknown session gets 404; a
Host or Origin that is not loopback gets 403. A legacy HTTP+SSE recording is served as
such (GET PATH, then POST to the announced endpoint). A stdio recording can be served
over HTTP and an HTTP recording over stdio.

Calls that differ only where redaction hid a value (a secret argument) are equal on the
tape: the earliest unused one answers, and stderr says the match was ambiguous and which
recorded call answered (the summary counts them); a recording made with --no-redact
tells them apart.

A miss is answered with a JSON-RPC error: -32601 when the tape holds no request with that
method, else -32010 (reel: no recorded answer); stderr names the request, the nearest
recorded candidates (at most 3, of the first 1000 with the method) and a JSON-pointer
diff. A line that is not JSON gets -32700 (id null), a batch or non-request -32600. When
the client closes stdin, or ends reel with SIGTERM, SIGINT or SIGHUP (clients such as
Claude Code stop their servers so; over HTTP: SIGINT or SIGTERM), a summary goes to
stderr: answered, missed, client drift, unused recorded exchanges (the first 20 listed);
--report is written and the exit code is the verdict's. A second signal ends reel at once
with 128+N.

Limits: input lines up to 64 MiB; live requests are redacted with the rules of the
trace's first meta line; with --subset the tape's unsolicited messages are not sent (the
live server sends its own) and the live server gets 3 s to exit after stdin closes;
--subset is stdio only. Over HTTP: HTTP/1.1, bodies up to 64 MiB, a Last-Event-ID is not
looked up (a stream the client broke is not resumed), at most 1024 events wait for a
server stream to open, connections get 2 s to finish after a stop.

Exit codes:
  0    every request answered, no client drift
  3    requests the tape could not answer (misses); wins over 4
  4    the client answered a server->client request (or an input_required round)
       differently than recorded, or never answered one the recorded client
       answered (not with --lenient)
  64   usage error (also: --listen cannot be bound, or --session N names a session
       the trace does not hold)
  66   the trace cannot be read, or no run has that name
  69   the live server of --subset cannot be started
  70   internal error (a bug: please report it)
  73   the --record trace cannot be created",
        rules = rules_help().trim_end(),
        match_rules = match_rules_help().trim_end(),
        wait = reel_replay::DELIVERY_WAIT.as_millis(),
    )
}

/// Runs `reel play`, and writes `--report` when it ends.
pub fn run(args: Args, out: &Output) -> anyhow::Result<u8> {
    let Some(path) = args.report.clone() else {
        return serve(args, Captured::none(out)).map(|(code, _)| code);
    };
    let diag = Captured::new(out);
    let result = serve(args, diag.clone());
    let report = match &result {
        Ok((code, summary)) => ReportFile::new(*code, summary.as_ref(), None, diag.text()),
        Err(e) => ReportFile::new(exit::code_of(e), None, Some(format!("{e:#}")), diag.text()),
    };
    report
        .write(&path)
        .map_err(|e| coded(CANT_CREATE, format!("--report {}: {e}", path.display())))?;
    result.map(|(code, _)| code)
}

/// What `--report` writes: `reel-play-report/1`.
#[derive(serde::Serialize)]
struct ReportFile<'a> {
    /// The format and its version.
    format: &'static str,
    /// The exit code reel play ends with.
    exit: u8,
    /// `clean`, `misses`, `client-drift`, `usage` or `error` (what the exit code says).
    verdict: &'static str,
    /// The replay's counts, when it ran.
    summary: Option<&'a reel_replay::Summary>,
    /// Why play could not run, as printed after `reel: `.
    error: Option<String>,
    /// Everything play printed on stderr: the misses, client drift and the summary.
    stderr: String,
}

impl<'a> ReportFile<'a> {
    fn new(
        exit: u8,
        summary: Option<&'a reel_replay::Summary>,
        error: Option<String>,
        stderr: String,
    ) -> Self {
        let verdict = match exit {
            exit::OK => "clean",
            exit::MISSES => "misses",
            exit::CLIENT_DRIFT => "client-drift",
            USAGE => "usage",
            _ => "error",
        };
        ReportFile {
            format: "reel-play-report/1",
            exit,
            verdict,
            summary,
            error,
            stderr,
        }
    }

    fn write(&self, path: &std::path::Path) -> std::io::Result<()> {
        let mut text = serde_json::to_vec_pretty(self)?;
        text.push(b'\n');
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        // Private, as traces are: the report quotes the client's requests.
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        opts.open(&tmp)?.write_all(&text)?;
        std::fs::rename(&tmp, path)
    }
}

/// Play's stderr, and with `--report` a copy of it for the report.
#[derive(Clone)]
struct Captured {
    out: Output,
    copy: Option<Arc<Mutex<Vec<u8>>>>,
}

impl Captured {
    fn none(out: &Output) -> Self {
        Captured {
            out: *out,
            copy: None,
        }
    }

    fn new(out: &Output) -> Self {
        Captured {
            out: *out,
            copy: Some(Arc::default()),
        }
    }

    /// A writer for play's diagnostics: the terminal, and the copy.
    fn writer(&self) -> Tee {
        Tee {
            terminal: self.out.human_stderr(),
            copy: self.copy.clone(),
        }
    }

    fn text(&self) -> String {
        let copy = self.copy.as_ref().map(|c| match c.lock() {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(poisoned) => String::from_utf8_lossy(&poisoned.into_inner()).into_owned(),
        });
        copy.unwrap_or_default()
    }
}

/// Writes to stderr and to the report's copy.
struct Tee {
    terminal: TerminalSafe<std::io::Stderr>,
    copy: Option<Arc<Mutex<Vec<u8>>>>,
}

impl Write for Tee {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.terminal.write(buf)?;
        if let Some(copy) = &self.copy {
            copy.lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend_from_slice(&buf[..n]);
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.terminal.flush()
    }
}

/// `reel play` itself: the exit code and, when it served, the summary.
fn serve(args: Args, diag: Captured) -> anyhow::Result<(u8, Option<reel_replay::Summary>)> {
    if args.listen.at.listen.is_none() && args.limits.given() {
        return Err(coded(
            USAGE,
            "--header-timeout and --max-connections are for the HTTP listener: give --listen IP:PORT",
        ));
    }
    if args.subset.is_empty() != args.live.is_empty() {
        let msg = if args.subset.is_empty() {
            "a live server after `--` is only used with --subset TOOL,… (which tools come from the tape)"
        } else {
            "--subset needs the live server to forward the other requests to, after `--` (e.g. `reel play RUN --subset search -- node server.js`)"
        };
        return Err(coded(USAGE, msg));
    }
    if args.listen.at.listen.is_some() && !args.subset.is_empty() {
        return Err(coded(
            USAGE,
            "--subset is served over stdio only; drop --listen, or serve the whole trace over HTTP without --subset",
        ));
    }
    let trace = args.runs.resolve_readable(&args.trace)?;
    let opts = PlayOptions {
        trace,
        session: usize::try_from(args.session).unwrap_or(usize::MAX),
        strict: args.strict,
        lenient: args.lenient,
        ignore: args.ignore.pointers()?,
        record: args.record,
        subset: (!args.subset.is_empty()).then_some(Subset {
            tools: args.subset,
            command: args.live,
        }),
        pace: args.pace,
        argv: std::env::args().collect(),
    };
    let result = match &args.listen.at.listen {
        #[cfg(feature = "http")]
        Some(_) => serve_http(opts, args.listen, &args.limits, &diag),
        #[cfg(not(feature = "http"))]
        Some(_) => {
            return Err(coded(
                USAGE,
                "--listen: this reel was built without HTTP (the `http` feature); rebuild it with default features",
            ));
        }
        None => reel_replay::play_stdio(opts, &mut diag.writer()),
    };
    match result {
        Ok(summary) => Ok((exit::of_play(summary.verdict(args.lenient)), Some(summary))),
        Err(e @ PlayError::Listen { .. }) => Err(coded(USAGE, e.to_string())),
        Err(e @ PlayError::Trace(_)) => Err(coded(NO_INPUT, e.to_string())),
        Err(e @ PlayError::Record { .. }) => Err(coded(CANT_CREATE, e.to_string())),
        Err(e @ PlayError::Live { .. }) => Err(coded(UNAVAILABLE, e.to_string())),
        Err(e) => Err(coded(INTERNAL, e.to_string())),
    }
}

/// `--listen`: binds, says where, serves until SIGINT or SIGTERM.
#[cfg(feature = "http")]
fn serve_http(
    opts: PlayOptions,
    listen: Listen,
    limits: &ListenLimits,
    diag: &Captured,
) -> Result<reel_replay::Summary, PlayError> {
    let mut l = ListenOptions::new(listen.addr());
    l.allow_hosts = listen.allow_host;
    l.limits = limits.apply(l.limits);
    l.handle_signals = true;
    let play = HttpPlay::bind(opts, l, Box::new(diag.writer()))?;
    let addr = play.local_addr();
    crate::cmd::net_flags::warn_if_exposed(addr, "can read the recording's answers");
    say!("reel: listening on {}", play.url());
    play.run()
}
