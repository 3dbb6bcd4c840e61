//! `reel llm`: the LLM API recording proxy (`reel_llm::proxy`) and, with `--play`, the
//! tape server for recorded model calls (`reel_llm::replay`), wired to the command line:
//! flags to a configuration, the `reel:` lines on stderr (among them the one scripts
//! parse, `reel: listening on http://ADDR`), the wrapped agent with its base URLs set,
//! and the exit status.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use reel_llm::mmsp::MmspTarget;
use reel_llm::replay::{LlmPlayer, LlmTape, Pace, PlayConfig, VOLATILE};
use reel_llm::{LlmConfig, LlmRecorder, RunEnd};
use reel_net::process::{ChildHandle, SignalForwarder, exit_code, spawn_inheriting};
use reel_net::serve::{Limits, Stop};
use reel_redact::redact::Redactor;
use reel_trace::target::TraceTarget;

use crate::cmd::ignore::IgnoreArgs;
use crate::cmd::net_flags::{ListenAddr, ListenLimits, UpstreamCa, warn_if_exposed};
use crate::cmd::rec::{redactor_of, say_trace_losses, trace_dir_of};
use crate::cmd::redaction::RuleArgs;
use crate::cmd::seal::SealFlags;
use crate::cmd::trace_arg::RunDir;
use crate::exit::{self, coded};
use crate::output::Output;

fn after_help() -> String {
    format!(
        "{AFTER_HELP}\n\nVolatile request members replay never compares: {}\n\n{}",
        VOLATILE.join(", "),
        Redactor::rules_help().trim_end()
    )
}

const AFTER_HELP: &str = "\
Recording: reel listens on loopback (`reel: listening on http://127.0.0.1:PORT`, one line
on stderr) and forwards each request by its path: /v1/messages and
/v1/messages/count_tokens to Anthropic (https://api.anthropic.com; any request with an
anthropic-version header goes there too), /v1/chat/completions, /v1/responses,
/v1/completions, /v1/embeddings, /v1/models and other /v1 paths to OpenAI
(https://api.openai.com). --upstream URL sends everything to one server (vLLM, Ollama,
OpenRouter, a mock): request paths go under URL's path, without doubling a /v1 it ends
in. --map /PREFIX=URL sends the paths under /PREFIX to URL, the prefix stripped.

With -- CMD…, reel starts CMD (the agent) with ANTHROPIC_BASE_URL=http://ADDR,
OPENAI_BASE_URL=http://ADDR/v1, OPENAI_API_BASE (the same) and GOOGLE_GEMINI_BASE_URL
(Gemini CLI's) pointing at itself (Codex CLI reads OPENAI_BASE_URL for its built-in
provider; a provider of its config.toml needs `-c model_providers.NAME.base_url=
http://ADDR/v1`), ends
the trace with CMD's exitCode and exits with CMD's status (SIGINT/SIGTERM/SIGHUP are
forwarded to it). Without CMD it prints the export lines on stdout and runs until
SIGINT/SIGTERM (end reason \"producer_shutdown\", exit 0).

Forwarding is transparent: bodies byte for byte, streamed responses (SSE, NDJSON) event by
event as they arrive, compressed bodies passed on compressed (gzip and deflate are decoded
for the record), status codes untouched, no retries. An unreachable upstream gets the
client a 502 in the provider's error shape. Request bodies up to 256 MiB; an upstream
silent for --idle-timeout mid-response is cut off.

The trace (kind \"llm\"): turn records for each request's new messages (resent assistant
turns echoed: true; history already on the tape elided behind a history_elided block)
and for each answer (model, usage normalised, timing.ttft_ms and duration_ms, endpoint,
stream; truncated: true and stop_reason \"truncated\" for a severed stream); llm.request /
llm.exchange / llm.error / llm.truncated events (source \"llm\"); and, for replay,
reel.llm.body events holding the response bodies as they arrived (one per SSE event or
NDJSON line) and a request member on llm.request with the request's members (redacted,
elided history and tool definitions replaced by digests). Keys, authorization, cookies
and organisation headers never reach it; headers are allowlisted; bodies are redacted
with the rules of `reel rec`.

Replay (--play TRACE): reel serves the trace as the provider. A request gets the earliest
unused recorded exchange of its method and path whose request is the same: byte for byte,
else after normalisation (the trace's redaction applied, volatile members and --ignore
pointers removed). The answer is the recorded status, headers and body, with the recorded
event boundaries (--pace recorded: and gaps; --pace 10x: ten times faster). A miss gets an
error in the provider's shape naming the nearest recorded request and where it differs.
With -- CMD…, the agent runs against the tape with the base URLs set.

Exit status: CMD's status (recording, and replay without misses); 0 after SIGINT/SIGTERM;
3 replay answered a request with a miss; 64 bad flags; 66 an unreadable --play trace or
--upstream-ca; 73 the trace cannot be created; 74 the trace is incomplete; 127 CMD could not
be started.";

/// Arguments of `reel llm`.
#[derive(clap::Args)]
#[command(
    after_long_help = after_help(),
    mut_arg("upstream_ca", |a| a.conflicts_with("play")),
    mut_arg("seal", |a| a.conflicts_with("play")),
)]
pub struct Args {
    /// Serve this llm trace (a path or a run name) as the provider instead of recording.
    #[arg(long, value_name = "TRACE")]
    play: Option<String>,

    #[command(flatten)]
    listen: ListenAddr,

    /// Send every request to this server instead of the providers' APIs.
    #[arg(long, value_name = "URL", conflicts_with = "play")]
    upstream: Option<String>,

    /// Route the paths under PREFIX to URL, the prefix stripped (repeatable), e.g.
    /// `/openrouter=https://openrouter.ai/api`.
    #[arg(long = "map", value_name = "PREFIX=URL")]
    maps: Vec<String>,

    #[command(flatten)]
    upstream_ca: UpstreamCa,

    /// Seconds an upstream may stay silent mid-response before reel cuts it off.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 600.0,
        conflicts_with = "play"
    )]
    idle_timeout: f64,

    /// Name of the run: the trace's label and file-name suffix [default: llm].
    #[arg(
        long,
        visible_alias = "label",
        value_name = "NAME",
        conflicts_with = "play"
    )]
    name: Option<String>,

    /// Save each conversation as MMSP tracer files in DIR too (RFC-0010: `<id>.json` and
    /// `<id>.txt`, rewritten after each completed response): the trace id is the
    /// request's `x-mmsp-trace-id` header, else `<run>/conversation_NNN` (`<run>` is the
    /// trace's file name without `.jsonl`).
    #[arg(long, value_name = "DIR", conflicts_with = "play")]
    mmsp: Option<PathBuf>,

    /// Directory for the trace, and where --play looks up run names [default:
    /// $REEL_DIR, else the per-user data directory].
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,

    #[command(flatten)]
    rules: RuleArgs,

    /// Record everything unredacted: secrets in prompts and answers end up in the trace.
    #[arg(long, conflicts_with_all = ["redact", "redact_file", "no_redact_defaults", "play"])]
    no_redact: bool,

    #[command(flatten)]
    seal: SealFlags,

    /// Replay: `recorded` keeps the recorded gaps between events; `Nx` divides them by
    /// N (e.g. 10x) [default: as fast as the client reads].
    #[arg(long, value_name = "PACE", value_parser = parse_pace, requires = "play")]
    pace: Option<Pace>,

    #[command(flatten)]
    ignore: IgnoreArgs,

    #[command(flatten)]
    limits: ListenLimits,

    /// Threads of the listener (testing knob; 0: as many as cores, at most 4).
    #[arg(long, hide = true, value_name = "N", default_value_t = 0)]
    http_threads: usize,

    #[command(flatten)]
    view: crate::cmd::view::ViewFlag,

    #[command(flatten)]
    otlp: crate::cmd::otlp::OtlpFlag,

    /// The agent command and its arguments (after `--`).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    command: Vec<OsString>,
}

fn parse_pace(s: &str) -> Result<Pace, String> {
    if s == "recorded" {
        return Ok(Pace::Scaled(1.0));
    }
    match s.strip_suffix('x').and_then(|n| n.parse::<f64>().ok()) {
        Some(f) if f.is_finite() && f > 0.0 => Ok(Pace::Scaled(f)),
        _ => Err(format!("`{s}` is not `recorded` or a speed-up such as 10x")),
    }
}

/// The base URLs an agent gets.
fn agent_env(addr: std::net::SocketAddr) -> Vec<(&'static str, String)> {
    let base = format!("http://{addr}");
    vec![
        ("ANTHROPIC_BASE_URL", base.clone()),
        ("OPENAI_BASE_URL", format!("{base}/v1")),
        ("OPENAI_API_BASE", format!("{base}/v1")),
        // Gemini CLI's own variable (it does not read the others).
        ("GOOGLE_GEMINI_BASE_URL", base),
    ]
}

/// A started agent: the thread that waits for it sets `stop` when it exits.
struct Agent {
    waiter: std::thread::JoinHandle<std::io::Result<i32>>,
}

impl Agent {
    /// Starts `command` (see [`Agent::start`]), or, when there is none, prints the
    /// `export` lines that point an agent started by hand at `addr`.
    fn start_or_say_exports(
        command: &[OsString],
        addr: std::net::SocketAddr,
        stop: &Stop,
    ) -> Option<anyhow::Result<Agent>> {
        if command.is_empty() {
            for (k, v) in agent_env(addr).iter().take(2) {
                println!("export {k}={v}");
            }
            return None;
        }
        Some(Agent::start(command, addr, stop.clone()))
    }

    /// Starts `command` with the base URLs for `addr`; when it exits, or when it could
    /// not be started, `stop` is set.
    fn start(
        command: &[OsString],
        addr: std::net::SocketAddr,
        stop: Stop,
    ) -> anyhow::Result<Agent> {
        let started = Agent::spawn(command, addr, stop.clone());
        if started.is_err() {
            stop.stop();
        }
        started
    }

    fn spawn(
        command: &[OsString],
        addr: std::net::SocketAddr,
        stop: Stop,
    ) -> anyhow::Result<Agent> {
        let forwarder = SignalForwarder::install()
            .map_err(|e| coded(exit::INTERNAL, format!("cannot forward signals: {e}")))?;
        let shown = reel_trace::names::shell_words(
            &command
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>(),
        );
        let mut child = spawn_inheriting(command, &agent_env(addr))
            .map_err(|e| coded(exit::CANT_START, format!("cannot start `{shown}`: {e}")))?;
        let handle = Arc::new(ChildHandle::new(&child, true));
        let forwarding = match forwarder.start(Arc::clone(&handle)) {
            Ok(f) => f,
            Err(e) => {
                // Not left running unwatched: the agent goes with the recording.
                handle.terminate();
                let _ = handle.wait(&mut child);
                return Err(coded(
                    exit::INTERNAL,
                    format!("cannot forward signals: {e}"),
                ));
            }
        };
        let waiter = std::thread::spawn(move || {
            let status = handle.wait(&mut child);
            forwarding.stop();
            stop.stop();
            status.map(|s| exit_code(s).0)
        });
        Ok(Agent { waiter })
    }

    fn status(self) -> anyhow::Result<i32> {
        match self.waiter.join() {
            Ok(Ok(code)) => Ok(code),
            Ok(Err(e)) => Err(coded(
                exit::INTERNAL,
                format!("cannot wait for the agent: {e}"),
            )),
            Err(_) => Err(coded(
                exit::INTERNAL,
                "internal error: the agent's waiter panicked",
            )),
        }
    }
}

/// Runs `reel llm`.
pub fn run(args: Args, _out: &Output) -> anyhow::Result<u8> {
    if args.play.is_some() {
        refuse_live_flags_with_play(&args)?;
        return play(args);
    }
    let collector = args.otlp.check()?;
    let seal = args.seal.load()?;
    let redactor = redactor_of(args.no_redact, &args.rules)?;
    let dir = trace_dir_of(args.dir.clone())?;
    let mut recorder =
        LlmRecorder::bind(recorder_config(&args)).map_err(|e| not_bound(&e, &redactor))?;
    let addr = recorder.local_addr();
    warn_if_exposed(addr, "can use your API keys' upstreams through reel");
    let label = args.name.clone().unwrap_or_else(|| "llm".to_owned());
    let command: Vec<String> = args
        .command
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let meta = recorder.meta(&label, &command, &redactor);
    let trace =
        TraceTarget::create(&dir, &label).map_err(|e| coded(exit::CANT_CREATE, e.to_string()))?;
    let trace = seal.apply(trace)?;
    let (mut live, mut _viewer) = (None, None);
    if let Some(p) = trace.path() {
        say!("reel: recording LLM calls to {}", p.display());
        _viewer = args.view.start_beside(p)?;
        live = crate::cmd::otlp::OtlpFlag::start_beside(collector, p)?;
    }
    if let Some(cache) = &args.mmsp {
        let target = MmspTarget::for_run(cache.clone(), trace.path(), &label);
        say!(
            "reel: saving conversations as MMSP traces in {} (under {}/ unless a request names its x-mmsp-trace-id)",
            cache.display(),
            target.run
        );
        recorder.save_mmsp(target);
    }
    seal.say(&trace);
    say!("reel: listening on http://{addr}");
    let stop = Stop::new();
    let agent = match Agent::start_or_say_exports(&args.command, addr, &stop).transpose() {
        Ok(agent) => agent,
        Err(e) => {
            // The agent never ran: the trace says so, as `rec` does.
            recorder.record_unstarted(trace, &meta, redactor, stop);
            return Err(e);
        }
    };
    let notices = redactor.clone();
    let finished = recorder
        .run(
            trace,
            &meta,
            redactor,
            stop,
            agent.is_none(),
            Arc::new(move |n| say!("reel: {}", notices.redact_text(&n.to_string()))),
        )
        .map_err(|e| coded(exit::CANT_CREATE, e.to_string()))?;
    let (how, status) = how_it_ended(agent)?;
    let written = finished.end(how);
    if let Some(live) = live {
        live.finish();
    }
    say_trace_losses(finished.path.as_deref(), written.as_ref().err(), (0, 0));
    Ok(if written.is_err() {
        exit::TRACE_INCOMPLETE
    } else {
        status
    })
}

/// How the run ended, and reel's status: the agent's exit code (waited for), or 0
/// when the proxy was stopped with no agent.
fn how_it_ended(agent: Option<Agent>) -> anyhow::Result<(RunEnd, u8)> {
    Ok(match agent {
        Some(a) => {
            let code = a.status()?;
            (RunEnd::Agent(code), u8::try_from(code).unwrap_or(1))
        }
        None => (RunEnd::Stopped, exit::OK),
    })
}

/// Why the proxy did not start, with its exit code: an unusable `--upstream-ca` is missing
/// input, anything else a usage error.
fn not_bound(e: &reel_llm::LlmError, redactor: &Redactor) -> anyhow::Error {
    let code = match e {
        reel_llm::LlmError::Ca(_) => exit::NO_INPUT,
        _ => exit::USAGE,
    };
    coded(code, redactor.redact_text(&e.to_string()).into_owned())
}

/// `--view` and `--otlp` follow a recording as it is written: with `--play` there is
/// none.
fn refuse_live_flags_with_play(args: &Args) -> anyhow::Result<()> {
    if args.view.view.is_some() {
        return Err(coded(
            exit::USAGE,
            "--view shows a recording as it is written; to look at the trace --play serves, run `reel view TRACE`",
        ));
    }
    if args.otlp.otlp.is_some() {
        return Err(coded(
            exit::USAGE,
            "--otlp sends a recording's spans as it is written; to send the trace --play serves, run `reel export otlp TRACE --endpoint URL`",
        ));
    }
    Ok(())
}

/// The recording proxy's configuration, from the flags.
fn recorder_config(args: &Args) -> LlmConfig {
    LlmConfig {
        listen: args.listen.addr().to_owned(),
        upstream: args.upstream.clone(),
        maps: args.maps.clone(),
        ca: args.upstream_ca.upstream_ca.clone(),
        idle_timeout: Duration::from_secs_f64(args.idle_timeout.max(0.001)),
        limits: args.limits.apply(Limits::for_descriptors(2)),
        threads: args.http_threads,
        mmsp: None,
    }
}

/// `reel llm --play TRACE`.
fn play(args: Args) -> anyhow::Result<u8> {
    let runs = RunDir {
        dir: args.dir.clone(),
    };
    let path = runs.resolve(args.play.as_deref().unwrap_or_default())?;
    let tape = LlmTape::open(&path).map_err(|e| coded(exit::NO_INPUT, e.to_string()))?;
    let config = PlayConfig {
        listen: args.listen.addr().to_owned(),
        maps: args.maps.clone(),
        ignore: args.ignore.pointers()?,
        pace: args.pace.unwrap_or(Pace::Fast),
        limits: args.limits.apply(Limits::for_descriptors(1)),
    };
    let exchanges = tape.len();
    let player = LlmPlayer::bind(tape, config).map_err(|e| coded(exit::USAGE, e.to_string()))?;
    let addr = player.local_addr();
    say!(
        "reel: serving {exchanges} recorded model calls from {}",
        path.display()
    );
    say!("reel: listening on http://{addr}");
    let stop = Stop::new();
    let agent = Agent::start_or_say_exports(&args.command, addr, &stop).transpose()?;
    let report = player
        .run(stop, agent.is_none(), args.http_threads)
        .map_err(|e| coded(exit::INTERNAL, e.to_string()))?;
    let status = match agent {
        Some(a) => u8::try_from(a.status()?).unwrap_or(1),
        None => exit::OK,
    };
    for m in &report.misses {
        say!("{m}");
    }
    if !report.unused.is_empty() {
        let shown: Vec<String> = report
            .unused
            .iter()
            .take(10)
            .map(|(n, e)| format!("#{n} {e}"))
            .collect();
        say!(
            "reel: {} recorded calls were not asked for: {}",
            report.unused.len(),
            shown.join(", ")
        );
    }
    say!(
        "reel: answered {} requests from the tape; {} misses",
        report.answered,
        report.misses.len()
    );
    if !report.misses.is_empty() {
        return Ok(exit::MISSES);
    }
    Ok(status)
}
