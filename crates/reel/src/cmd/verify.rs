//! `reel verify TRACE -- CMD…` / `reel verify TRACE --url URL`: wiring of
//! `reel_replay::verify` to the command line:
//! flags to options, the run name to a trace, the report to stdout (text or JSON), and
//! the exit code.

use std::ffi::OsString;
use std::time::Duration;

use reel_mcp::normalize;
use reel_replay::verify::{self, Class, ScriptError, VerifyError, VerifyOptions};
use reel_trace::names;

use crate::cmd::diff::Format;
use crate::cmd::ignore::IgnoreArgs;
use crate::cmd::net_flags::UpstreamCa;
use crate::cmd::notifications::NotificationsFlag;
use crate::cmd::trace_arg::RunDir;
use crate::exit::{self, coded};
use crate::output::{Bar, Output};

fn after_help() -> String {
    format!(
        "{HOW}\nWhat is ignored when answers are compared:\n{}{}\n{AFTER}",
        normalize::rules_help(),
        verify::rules_help()
    )
}

const HOW: &str = "\
reel starts CMD (stdio) -- or talks to the server at --url over Streamable HTTP -- sends
the recorded client's requests and notifications in recorded order and compares every
answer with the recorded one:
  - ids and progress tokens are fresh; `notifications/cancelled` names the live id; a
    2026-07-28 retry carries the requestState the live server handed out;
  - the handshake is the recorded one: a recorded server/discover probe is sent, and when
    the live server refuses it (as recorded) the recorded initialize follows; a failed
    initialize stops the run;
  - a message waits for the answers and server requests that came before it in the
    recording (each wait at most --timeout), so concurrent requests stay concurrent;
  - the server's own requests (sampling/createMessage, elicitation/create, roots/list)
    are answered with the recorded answers (the earliest unused equal request, else the
    earliest unused one of the same method, reported as drift); one the recording never
    saw gets a JSON-RPC error (-32601) and is reported; ping is answered with {};
  - server notifications (progress, logging…) are compared as COUNTS PER METHOD, not by
    position; a notifications/*/list_changed count is reported but is not drift, since
    it depends on timing (--notifications strict compares it too, ignore skips all).
Arguments a trace holds redacted are sent as recorded ([REDACTED]).
Over HTTP (--url http://HOST:PORT/PATH, or https:// with --upstream-ca for a private CA;
--header NAME=VALUE for credentials): each message is a POST (answers as JSON or event
streams), the Mcp-Session-Id the server issues and the negotiated MCP-Protocol-Version go
on later requests, 2026-07-28 requests carry MCP-Protocol-Version, Mcp-Method and Mcp-Name;
after notifications/initialized the GET server stream is opened (server requests come
there, answers are POSTed); a path ending in /sse is legacy HTTP+SSE; the session ends
with DELETE. An id-less HTTP refusal (400 to a discover probe) is compared as the answer to
its request. The session-less lines of an HTTP recording are played with the chosen
--session. Limits: http:// only, one connection per request, no stream resumption.
";

const AFTER: &str = "\
Drift:
  output drift      the same call answered with other content: result, error text,
                    a result where the recording has an error, params of a server
                    request, a notification count (exit 1)
  structural drift  a method unknown (-32601 where a result was), a tool gone from
                    tools/list or unknown to tools/call, an error where the recording has
                    a result, no answer within --timeout, the server exited, a server
                    request no longer asked or never recorded (exit 2)
  Kinds are named as `reel diff` names them (result-changed, became-error, …).
The report (stdout) shows the first drift with the exchanges before it, then every drift
on one line, then a summary. --format github prints one GitHub Actions annotation per
drift (::error for structural, ::warning for output drift, on the recorded line of its
request) and the summary. --format junit prints JUnit XML: one test case per client
exchange compared (named by its recorded line, method and tool), a drift as its
failure. --json prints one document instead (schema reel.verify/2):
  {schema, trace, session, command, timeoutMs, result: same|output-drift|structural-drift,
   exitCode, summary: {requests, same, outputDrift, structuralDrift, notCompared, notSent},
   serverRequests: {asked, answeredFromTape, unknown, notAsked},
   notifications: [{method, recorded, live}],
   drift: [{class: output|structural, kind, method, tool?, line?, liveId?, message,
            request?, differences: [{pointer, recorded?, live?}],
            context: [{line, method, tool?, verdict}]}],
   notes: [text], record: path|null, serverExit: n|null}

The live run is written as a trace (tape direction: what reel sent is \"in\" with
origin \"tape\", the server's messages are \"out\" with origin \"live\"), labelled
<label>-verify, to --dir, else $REEL_DIR, else the per-user data directory; it is
redacted with the recording's rules. `reel diff` and `reel check` read it.

Exit status:
  0    every answer the same
  1    output drift
  2    structural drift (wins over 1)
  64   usage error
  66   the trace cannot be read or has no client request in that session
  69   the server cannot be started (--url: reached), or exits (or stays silent for
       --start-timeout) before answering the handshake
  70   internal error (a bug: please report it)
  73   the live run's trace cannot be created (--no-record skips it)";

/// Arguments of `reel verify`.
#[derive(clap::Args)]
#[command(
    after_long_help = after_help(),
    mut_arg("upstream_ca", |a| a.requires("url")),
)]
pub struct Args {
    /// The recording: a trace file, or a run name (the newest run recorded with that
    /// --name in --dir; NAME~1 is the one before it).
    #[arg(value_name = "TRACE")]
    trace: String,

    /// Seconds to wait for each answer, and for each server request the recording saw
    /// before the next client message.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    timeout: f64,

    /// Seconds the server has to start and answer the first request (the handshake).
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    start_timeout: f64,

    #[command(flatten)]
    ignore: IgnoreArgs,

    /// Which recorded session to play (1-based; HTTP traces hold several).
    #[arg(long, value_name = "N", default_value_t = 1)]
    session: usize,

    #[command(flatten)]
    notifications: NotificationsFlag,

    // Also where the live run's trace goes (see the long help).
    #[command(flatten)]
    runs: RunDir,

    /// Do not write the live run as a trace.
    #[arg(long)]
    no_record: bool,

    /// Label of the live run's trace [default: the recording's label + `-verify`].
    #[arg(long, visible_alias = "label", value_name = "NAME")]
    name: Option<String>,

    /// Output format (json: schema reel.verify/2, see --help).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,

    /// Same as --format json.
    #[arg(long, conflicts_with = "format")]
    json: bool,

    /// Play against the server at this URL over HTTP (http://HOST:PORT/PATH) instead
    /// of starting one.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    url: Option<String>,

    /// With --url: a header sent with every request (repeatable), e.g.
    /// `--header 'Authorization=Bearer $MCP_TOKEN'`: `$NAME` and `${NAME}` are read from
    /// the environment (`$$` is a `$`). The value is never printed nor written to the
    /// live run's trace.
    #[arg(long = "header", value_name = "NAME=VALUE", requires = "url")]
    headers: Vec<String>,

    #[command(flatten)]
    upstream_ca: UpstreamCa,

    /// The live server's command and its arguments (after `--`).
    #[arg(
        required_unless_present = "url",
        last = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    command: Vec<OsString>,
}

/// `--header NAME=VALUE` values, the environment's variables filled in.
fn header_args(given: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    given
        .iter()
        .map(|h| {
            let (name, value) = h.split_once('=').ok_or_else(|| {
                coded(
                    exit::USAGE,
                    format!(
                        "--header {h:?}: give NAME=VALUE, e.g. 'Authorization=Bearer $MCP_TOKEN'"
                    ),
                )
            })?;
            let value = reel_net::http::expand_env(value, |n| std::env::var(n).ok())
                .map_err(|e| coded(exit::USAGE, e))?;
            Ok((name.trim().to_owned(), value))
        })
        .collect()
}

/// Runs `reel verify`.
pub fn run(args: Args, out: &Output) -> anyhow::Result<u8> {
    let timeout = seconds("--timeout", args.timeout)?;
    let start_timeout = seconds("--start-timeout", args.start_timeout)?;
    let ignore = args.ignore.pointers()?;
    let trace = args.runs.resolve_readable(&args.trace)?;
    let dir = args.runs.dir.clone().or_else(names::default_trace_dir);
    let command: Vec<String> = args
        .command
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let record_dir = match (&dir, args.no_record) {
        (_, true) => None,
        (Some(d), false) => Some(std::path::absolute(d).unwrap_or_else(|_| d.clone())),
        (None, false) => {
            return Err(coded(
                exit::CANT_CREATE,
                "no place for the live run's trace: HOME is not set; give --dir DIR, set REEL_DIR, or --no-record",
            ));
        }
    };
    let mut opts = VerifyOptions::new(trace, command);
    opts.url = args.url.clone();
    opts.headers = header_args(&args.headers)?;
    opts.ca = args.upstream_ca.upstream_ca.clone();
    opts.session = args.session;
    opts.timeout = timeout;
    opts.start_timeout = start_timeout;
    opts.ignore = ignore;
    opts.notifications = args.notifications.check();
    opts.record_dir = record_dir;
    opts.label = args.name;
    let mut bar = Bar::new("reel verify");
    let verified = verify::verify_reporting(&opts, &mut |p| bar.show(p));
    drop(bar);
    let mut report = verified.map_err(|e| {
        let code = match &e {
            VerifyError::Script(ScriptError::Open(_)) => exit::NO_INPUT,
            VerifyError::Script(_) => exit::NO_INPUT,
            VerifyError::Spawn { .. } | VerifyError::NoHandshake { .. } => exit::UNAVAILABLE,
            VerifyError::Url { .. } => exit::USAGE,
            VerifyError::Record { .. } => exit::CANT_CREATE,
            _ => exit::INTERNAL,
        };
        coded(code, e.to_string())
    })?;
    report.exit_code = exit::of_drift(report.verdict());
    let format = if args.json { Format::Json } else { args.format };
    exit::keep_verdict(if format == Format::Json {
        out.json_compared(&report)
    } else {
        let text = match format {
            Format::Github => report.to_github(),
            Format::Junit => report.to_junit(),
            _ => report.to_text(&|class, s| match class {
                Class::Output => out.paint("33", s),
                Class::Structural => out.paint("31;1", s),
            }),
        };
        use std::io::Write as _;
        let mut stdout = out.human_stdout();
        stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
            .map_err(Into::into)
    })?;
    Ok(report.exit_code)
}

/// A number of seconds from a flag: above 0, at most a day.
fn seconds(flag: &str, secs: f64) -> anyhow::Result<Duration> {
    if secs.is_finite() && secs > 0.0 && secs <= 86_400.0 {
        return Ok(Duration::from_secs_f64(secs));
    }
    Err(coded(
        exit::USAGE,
        format!("{flag} {secs}: give a number of seconds above 0 and at most 86400"),
    ))
}
