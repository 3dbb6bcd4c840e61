//! `reel rec -- CMD…` and `reel rec --url URL`: wiring of the stdio recording proxy
//! (`reel_record::stdio`) and of the HTTP reverse proxy (`reel_record::http`) to the
//! command line: flags to a configuration, the trace directory, `reel:` lines on stderr
//! saying where the trace goes (and, for HTTP, the one address line scripts parse:
//! `reel: listening on http://ADDR/PATH`), notices while it runs, and the exit status.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use reel_record::{ChildEnd, ClientIo, StdioConfig, StdioRecorder, WhenBehind};
#[cfg(feature = "http")]
use reel_record::{HttpConfig, HttpRecorder};
use reel_redact::redact::Redactor;
use reel_trace::names;

use crate::cmd::net_flags::{Listen, ListenLimits, UpstreamCa};
use crate::cmd::redaction::RuleArgs;
use crate::cmd::seal::SealFlags;
use crate::exit::{self, coded};
use crate::output::Output;

/// `reel rec --help`, after the flags: the recorded line kinds, places, limits, exit
/// status, and the redaction rules.
fn after_help() -> String {
    format!("{AFTER_HELP}\n\n{}", Redactor::rules_help().trim_end())
}

const AFTER_HELP: &str = "\
Two ways to record: `reel rec [FLAGS] -- CMD…` wraps a stdio server; `reel rec --url URL`
is a reverse proxy for a Streamable HTTP (or legacy HTTP+SSE) server: point the client at
the address reel prints (`reel: listening on http://127.0.0.1:PORT/PATH`, one line on
stderr, also in meta.listen) instead of URL. It forwards the whole upstream origin (OAuth
discovery included), streams bodies and events as they arrive, rewrites URLs that point
at the upstream (Location, WWW-Authenticate, a legacy endpoint event, OAuth metadata), and
refuses with 403 requests whose Host or Origin is not loopback (DNS rebinding). One run
records every session; SIGINT/SIGTERM end it (end reason \"producer_shutdown\", exit 0).

What the trace holds (one JSON line each, mcp-replay trace format v1):
  meta            first line: label, command (redacted), transport \"stdio\", redaction rules
  dir \"in\"/\"out\"  a line that is one JSON value (a JSON-RPC message or batch; any JSON
                  value counts), client->server (in) or server->client (out); raw = the
                  exact bytes after redaction
  reel.nonjson    a line that is not JSON (blank, text, broken JSON, not UTF-8), with
                  side \"in\"/\"out\" and text, or base64 bytes when it is not UTF-8
  reel.stderr     a line the server wrote to stderr (unless --no-stderr); lines over 1 MiB
                  become several events
  eol             on any of these: \"crlf\" when the line ended in CR LF, \"none\" when
                  it had no line break (the stream's end, or a stderr piece the next
                  event continues); LF otherwise. The bytes of each pipe are the lines'
                  bytes, each followed by its line end
  reel.gap        lines dropped with --drop-when-behind: how many lines and bytes
  end             exitCode, durationMs, counts {in, out, events, turns, errors}
Over HTTP, message lines also carry session (Mcp-Session-Id, the legacy sessionId, or
reel:conn-N for the client connection when there is none) and http {req, method, path |
status, headers (allowlisted, redacted), sse {id, event, retry}}; exchanges without a
JSON-RPC body (GET streams, DELETE, OAuth discovery, 202s, 502s, 403s) are reel.http
events; SSE events without JSON data (priming, endpoint) are reel.sse events.

The forwarded bytes are never changed: redaction applies to the trace only, and to what
reel itself prints: the listening line and the refusal of a --url show it as meta.upstream
does (a secret query value or password is [REDACTED]; the client keeps its own copy of
the URL). The lines of stderr and of each side's non-JSON output are redacted as streams,
so a private key printed over many lines loses all of them. Lines of any
length are forwarded and recorded; reel's memory is about 8 MiB of queue plus four times
the largest message. After the server exits, reel waits for its output to close, giving up
after 5 s without a byte (a process the server started may hold it open).

--seal writes TRACE.seal beside the trace as it records: a hash chain over its lines
(see `reel seal --help`; keyed with --key-file), each record written only after the
line it seals was flushed to the trace. `reel check --verify TRACE` then names any line
changed, removed, inserted or reordered since; a recording that was killed leaves a seal
whose lines verify and a rest that is reported unsealed, not tampered.

The trace goes to --dir, else $REEL_DIR, else the per-user data directory (created with
mode 0700; files are mode 0600). MCP clients start servers from arbitrary directories with
a reduced environment, so give an absolute --dir in their configuration, e.g.
  \"command\": \"reel\", \"args\": [\"rec\", \"--dir\", \"/home/me/traces\", \"--\", \"npx\", \"-y\", \"server\"]

Exit status (HTTP): 0 after SIGINT/SIGTERM; 64 a bad --url or --listen (or the port is
taken); 69 the upstream host does not resolve (an upstream that is down is not an error:
clients get 502 and the trace records it until it is up); 66 an unreadable --upstream-ca
or --key-file; 73 the trace (or its --seal) cannot be created.

Exit status (stdio):
  N       the server's exit status
  128+N   the server was killed by signal N (SIGINT, SIGTERM and SIGHUP sent to reel are
          forwarded to the server's process group, which is its own: a Ctrl-C at a
          terminal reaches the server and what it started once, through reel)
  127     the server could not be started (the trace is complete, with exitCode 127)
  73      the trace directory or file (or its --seal) cannot be created (the server is
          not started)
  64      usage error (bad flags, a --redact pattern that does not compile, a bad rule
          file, a --key-file under 16 bytes)
  66      the --redact-file or --key-file cannot be read
  70      internal error (a bug: please report it)";

/// Arguments of `reel rec`.
#[derive(clap::Args)]
#[command(after_long_help = after_help())]
pub struct Args {
    /// Name of the run: the trace's label and file-name suffix [default: derived from the
    /// command, e.g. `server-everything`].
    #[arg(long, visible_alias = "label", value_name = "NAME")]
    name: Option<String>,

    /// Directory for the trace (created if missing) [default: $REEL_DIR, else the per-user
    /// data directory, e.g. ~/.local/share/reel/traces].
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,

    #[command(flatten)]
    rules: RuleArgs,

    /// Record everything unredacted: secrets the peers exchange end up in the trace.
    #[arg(long, conflicts_with_all = ["redact", "redact_file", "no_redact_defaults"])]
    no_redact: bool,

    /// Do not record the server's stderr; it goes straight to reel's stderr.
    #[arg(long, conflicts_with = "url")]
    no_stderr: bool,

    /// Record a Streamable HTTP (or legacy HTTP+SSE) server: reel becomes a reverse
    /// proxy for URL's origin (instead of wrapping a command).
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    url: Option<String>,

    #[command(flatten)]
    listen: Listen,

    #[command(flatten)]
    upstream_ca: UpstreamCa,

    #[command(flatten)]
    limits: ListenLimits,

    /// When the trace cannot keep up, drop lines (counted in reel.gap events) instead of
    /// slowing the traffic down.
    #[arg(long)]
    drop_when_behind: bool,

    #[command(flatten)]
    seal: SealFlags,

    #[cfg(feature = "http")]
    #[command(flatten)]
    view: crate::cmd::view::ViewFlag,

    #[cfg(feature = "http")]
    #[command(flatten)]
    otlp: crate::cmd::otlp::OtlpFlag,

    /// A directory put before the inherited PATH of the server (repeatable): clients
    /// start servers with a reduced PATH, and a `#!/usr/bin/env node` server needs
    /// node's directory on it (`reel install` bakes the ones it needs in).
    #[arg(long = "path-first", value_name = "DIR")]
    path_first: Vec<PathBuf>,

    /// Bytes the trace queue holds before backpressure (testing knob).
    #[arg(long, hide = true, value_name = "BYTES")]
    queue_bytes: Option<usize>,

    /// Threads of the HTTP proxy (testing knob; 0: as many as cores, at most 4).
    #[arg(long, hide = true, value_name = "N")]
    http_threads: Option<usize>,

    /// The server command and its arguments (after `--`, or after reel's own flags).
    #[arg(
        required_unless_present = "url",
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    command: Vec<OsString>,
}

/// Runs `reel rec`.
pub fn run(args: Args, _out: &Output) -> anyhow::Result<u8> {
    refuse_flags_of_the_other_proxy(&args)?;
    let seal = args.seal.load()?;
    let redactor = redactor(&args)?;
    let dir = trace_dir(&args)?;
    if args.url.is_some() {
        #[cfg(feature = "http")]
        return run_http(args, redactor, &dir, seal);
        #[cfg(not(feature = "http"))]
        return Err(coded(exit::USAGE, WITHOUT_HTTP));
    }
    #[cfg(feature = "http")]
    let collector = args.otlp.check()?;
    let recorder = StdioRecorder::new(stdio_config(&args, &redactor));
    // Messages show what they quote as the trace has it: redacted, since MCP clients
    // keep server stderr in their logs.
    let shown = reel_trace::names::shell_words(recorder.command());
    let trace = recorder
        .create_trace(&dir)
        .map_err(|e| coded(exit::CANT_CREATE, e.to_string()))?;
    let trace = seal.apply(trace)?;
    #[cfg(feature = "http")]
    let (mut live, mut _viewer) = (None, None);
    if let Some(p) = trace.path() {
        say!("reel: recording `{}` to {}", recorder.label(), p.display());
        #[cfg(feature = "http")]
        {
            _viewer = args.view.start_beside(p)?;
            live = crate::cmd::otlp::OtlpFlag::start_beside(collector, p)?;
        }
    }
    seal.say(&trace);
    let notices = redactor.clone();
    let outcome = recorder
        .run(trace, ClientIo::inherit(), move |n| {
            say!("reel: {}", notices.redact_text(&n.to_string()))
        })
        .map_err(|e| {
            let code = if e.is_output() {
                exit::CANT_CREATE
            } else {
                exit::INTERNAL
            };
            coded(code, e.to_string())
        })?;
    if let ChildEnd::NotStarted(e) = &outcome.child {
        say!("reel: cannot start `{shown}`: {e}");
    }
    #[cfg(feature = "http")]
    if let Some(live) = live {
        live.finish();
    }
    say_trace_losses(
        outcome.path.as_deref(),
        outcome.trace_error.as_ref(),
        outcome.dropped,
    );
    let status = exit::of_child(&outcome.child);
    if outcome.trace_error.is_some() {
        say!(
            "reel: the server's own status was {status}; exiting {} because the trace is incomplete",
            exit::TRACE_INCOMPLETE
        );
        return Ok(exit::TRACE_INCOMPLETE);
    }
    Ok(status)
}

/// The HTTP proxy's flags without `--url`, or `--path-first` with it: each is for the
/// other proxy.
fn refuse_flags_of_the_other_proxy(args: &Args) -> anyhow::Result<()> {
    if args.url.is_none()
        && (args.listen.given() || !args.upstream_ca.upstream_ca.is_empty() || args.limits.given())
    {
        return Err(coded(
            exit::USAGE,
            "--listen, --allow-host, --upstream-ca, --header-timeout and --max-connections are for the HTTP proxy: give --url URL (and no command)",
        ));
    }
    if args.url.is_some() && !args.path_first.is_empty() {
        return Err(coded(
            exit::USAGE,
            "--path-first sets the PATH of a server reel starts: it is for `reel rec -- CMD`, not --url",
        ));
    }
    Ok(())
}

/// The stdio proxy's configuration, from the flags: signals are forwarded to the server.
fn stdio_config(args: &Args, redactor: &Redactor) -> StdioConfig {
    let mut config = StdioConfig::new(args.command.clone());
    config.name.clone_from(&args.name);
    config.path_first.clone_from(&args.path_first);
    config.redactor = redactor.clone();
    config.record_stderr = !args.no_stderr;
    config.forward_signals = true;
    if args.drop_when_behind {
        config.when_behind = WhenBehind::Drop;
    }
    if let Some(q) = args.queue_bytes {
        config.queue_bytes = q;
    }
    config
}

/// What a recording ended without: the end of its trace (a write failed), or the lines
/// `--drop-when-behind` dropped.
pub(crate) fn say_trace_losses(
    path: Option<&Path>,
    error: Option<&std::io::Error>,
    dropped: (u64, u64),
) {
    if let (Some(e), Some(p)) = (error, path) {
        say!(
            "reel: the trace {} is incomplete: {e}; it is readable up to its last complete line",
            p.display()
        );
    }
    if dropped.0 > 0 {
        say!(
            "reel: {} lines ({} bytes) were not recorded (--drop-when-behind); see the reel.gap events",
            dropped.0,
            dropped.1
        );
    }
}

/// The trace directory: `--dir`, else `$REEL_DIR`, else the per-user data directory.
fn trace_dir(args: &Args) -> anyhow::Result<PathBuf> {
    trace_dir_of(args.dir.clone())
}

/// The trace directory: `dir`, else `$REEL_DIR`, else the per-user data directory.
pub(crate) fn trace_dir_of(dir: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    match dir.or_else(names::default_trace_dir) {
        Some(d) => Ok(std::path::absolute(&d).unwrap_or(d)),
        None => Err(coded(
            exit::CANT_CREATE,
            "no place for the trace: HOME is not set; give --dir DIR or set REEL_DIR",
        )),
    }
}

/// What `--url` says in a build without the `http` feature.
#[cfg(not(feature = "http"))]
const WITHOUT_HTTP: &str = "--url: this reel was built without HTTP (the `http` feature); rebuild it with default features";

/// `reel rec --url URL`: the HTTP reverse proxy, until SIGINT/SIGTERM.
#[cfg(feature = "http")]
fn run_http(
    args: Args,
    redactor: Redactor,
    dir: &Path,
    seal: crate::cmd::seal::Seal,
) -> anyhow::Result<u8> {
    let mut config = HttpConfig::new(args.url.unwrap_or_default());
    if let Some(l) = args.listen.at.listen {
        config.listen = l;
    }
    config.name = args.name;
    config.redactor = redactor.clone();
    config.allow_hosts = args.listen.allow_host;
    config.limits = args.limits.apply(config.limits);
    config.upstream_ca = args.upstream_ca.upstream_ca;
    config.handle_signals = true;
    if args.drop_when_behind {
        config.when_behind = WhenBehind::Drop;
    }
    if let Some(q) = args.queue_bytes {
        config.queue_bytes = q;
    }
    if let Some(t) = args.http_threads {
        config.threads = t;
    }
    // A refused --url quotes the URL, credentials and all: redacted as the trace is.
    let collector = args.otlp.check()?;
    let recorder = HttpRecorder::new(config).map_err(|e| {
        let message = redactor.redact_text(&e.to_string()).into_owned();
        coded(exit::of_http_record(&e), message)
    })?;
    let addr = recorder.local_addr();
    crate::cmd::net_flags::warn_if_exposed(addr, "can use the upstream through reel");
    let trace = recorder
        .create_trace(dir)
        .map_err(|e| coded(exit::CANT_CREATE, e.to_string()))?;
    let trace = seal.apply(trace)?;
    let (mut live, mut _viewer) = (None, None);
    if let Some(p) = trace.path() {
        say!("reel: recording {} to {}", recorder.upstream(), p.display());
        _viewer = args.view.start_beside(p)?;
        live = crate::cmd::otlp::OtlpFlag::start_beside(collector, p)?;
    }
    seal.say(&trace);
    // The line a script waits for: nothing follows the URL. Its path and query are
    // the upstream's, shown as meta.upstream shows them (a secret query value is the
    // marker: the client keeps its own copy of the URL's secrets).
    say!("reel: listening on {}", recorder.shown_listen_url());
    let notices = redactor.clone();
    let outcome = recorder
        .run(trace, move |n| {
            say!("reel: {}", notices.redact_text(&n.to_string()))
        })
        .map_err(|e| {
            let message = redactor.redact_text(&e.to_string()).into_owned();
            coded(exit::of_http_record(&e), message)
        })?;
    if let Some(live) = live {
        live.finish();
    }
    say_trace_losses(
        outcome.path.as_deref(),
        outcome.trace_error.as_ref(),
        outcome.dropped,
    );
    say!(
        "reel: stopped after {} requests; {} messages recorded",
        outcome.requests,
        outcome.counts.inbound + outcome.counts.outbound
    );
    if outcome.trace_error.is_some() {
        return Ok(exit::TRACE_INCOMPLETE);
    }
    Ok(exit::OK)
}

/// The redaction rules the flags ask for.
fn redactor(args: &Args) -> anyhow::Result<Redactor> {
    redactor_of(args.no_redact, &args.rules)
}

/// The redaction rules of `--no-redact` and the rule flags.
pub(crate) fn redactor_of(no_redact: bool, rules: &RuleArgs) -> anyhow::Result<Redactor> {
    if no_redact {
        say!(
            "reel: WARNING: --no-redact: nothing is redacted; the trace will hold every secret the peers exchange"
        );
        return Ok(Redactor::disabled());
    }
    rules.redactor()
}
