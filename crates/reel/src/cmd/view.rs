//! `reel view [PATH|RUN…] [--listen IP:PORT] [--open]`: the local web viewer.
//!
//! Wiring only: the paths (run names resolved as for every command) → [`reel_view::View`],
//! the URL on stderr, optionally the system browser, then serving until Ctrl-C.

use std::path::PathBuf;

use reel_mcp::serve::Stop;
use reel_view::{Config, View, ViewError};

use crate::cmd::trace_arg::RunDir;
use crate::exit::{self, coded};
use crate::output::Output;

const LONG_HELP: &str = "\
What is shown: no PATH, the runs of the trace directory (as `reel ls` lists them); a
directory, its runs (a directory holding MMSP *.json traces is shown as an MMSP cache,
at MMSP-RFC-0010's viewer routes; --mmsp forces it); one trace, that trace; two, their
diff (as `reel diff` computes it); more, merged by time. Every format reel reads is
shown: other tools' recordings through a redacted conversion. A trace still being
written is followed: new lines show within a second.

Views of a trace, each a URL to share on this machine: #trace=KEY&view=timeline, calls,
tools, turns, events or raw, plus &line=N. Search takes a method or tool name and a
pattern (case-insensitive text, or /regex/).

Safety: the viewer listens on loopback unless --listen says otherwise (then it warns:
whoever reaches the address can read what is shown), answers only requests whose Host
and Origin are loopback names, the --listen address or an --allow-host name (DNS
rebinding), refuses cross-site fetches, sends no CORS headers, checks every path by
components (nothing outside the directory is served), inserts trace content as text
only, and serves a Content-Security-Policy that allows nothing but its own scripts and
styles.

Limits: a page holds at most 1000 lines; a line's detail shows its first 4 MiB; search
stops at 500 hits per page; the index keeps about 45 bytes a line in memory, calls
included (a trace never free of open calls keeps about 250 bytes more per call).

Exit codes: 0 stopped with Ctrl-C; 64 bad flags; 66 a PATH cannot be read; 73 the
address cannot be bound (or the trace directory created).";

/// Arguments of `reel view`.
#[derive(clap::Args)]
#[command(after_long_help = LONG_HELP)]
pub struct Args {
    /// What to show: a directory of runs, or trace files / run names (two: their diff,
    /// more: merged by time) [default: the trace directory]
    #[arg(value_name = "PATH|RUN")]
    pub paths: Vec<String>,

    #[command(flatten)]
    pub runs: RunDir,

    /// Where to listen (port 0: a free one).
    #[arg(long, value_name = "IP:PORT", default_value = "127.0.0.1:0")]
    pub listen: String,

    /// Also accept requests whose Host or Origin names HOST (repeatable), for a
    /// --listen address other machines reach; loopback names are always accepted,
    /// every other name gets 403.
    #[arg(long, value_name = "HOST")]
    pub allow_host: Vec<String>,

    /// Open the page in the system browser.
    #[arg(long)]
    pub open: bool,

    /// Show the directory as an MMSP cache directory (RFC-0010's listing and pages).
    #[arg(long)]
    pub mmsp: bool,
}

/// Runs `reel view`.
pub fn run(args: Args, _out: &Output) -> anyhow::Result<u8> {
    let default_dir = match &args.runs.dir {
        Some(d) => d.clone(),
        None => reel_trace::names::default_trace_dir().ok_or_else(|| {
            coded(
                exit::NO_INPUT,
                "cannot tell where traces are: HOME is not set; give PATH or set REEL_DIR",
            )
        })?,
    };
    let mut paths = Vec::new();
    for p in &args.paths {
        let as_path = PathBuf::from(p);
        if as_path.is_dir() {
            paths.push(as_path);
        } else {
            paths.push(args.runs.resolve(p)?);
        }
    }
    if paths.is_empty() && !default_dir.exists() {
        // Nothing recorded yet: the directory `reel rec` would create, shown empty and
        // listing runs as they come.
        reel_trace::names::ensure_dir(&default_dir).map_err(|e| {
            coded(
                exit::CANT_CREATE,
                format!("cannot create {}: {e}", default_dir.display()),
            )
        })?;
    }
    let config = Config {
        paths,
        default_dir,
        listen: args.listen,
        mmsp: args.mmsp,
        allow_hosts: args.allow_host,
    };
    let view = start(&config)?;
    if args.open {
        open_browser(&view.url());
    }
    view.run(Stop::new(), true)
        .map_err(|e| coded(exit::INTERNAL, e.to_string()))?;
    Ok(exit::OK)
}

/// Binds the viewer and says where it is; the error's exit code says whose fault.
pub fn start(config: &Config) -> anyhow::Result<View> {
    let view = View::bind(config).map_err(|e| {
        let code = match e {
            ViewError::Input(_) => exit::NO_INPUT,
            ViewError::Listen { .. } => exit::CANT_CREATE,
            ViewError::Setup(_) => exit::INTERNAL,
        };
        coded(code, e.to_string())
    })?;
    let addr = view.local_addr();
    if !addr.ip().is_loopback() {
        say!(
            "reel: WARNING: listening on {addr}, which is not a loopback address: anyone who can reach it can read the traces shown (the Host check keeps browsers from being turned against the viewer; it is no password)"
        );
    }
    say!("reel: viewing at {}", view.url());
    Ok(view)
}

/// Starts the system browser on `url` (xdg-open, or open on macOS); a failure is said,
/// not fatal: the URL is printed already.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let started = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = started {
        say!("reel: cannot start a browser ({opener}: {e}); open {url} yourself");
    }
}

/// `--view[=IP:PORT]` of the recording commands (`rec`, `llm`): a viewer on the trace
/// being written, beside the recording.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct ViewFlag {
    /// Show the trace in the web viewer while it is recorded (the URL is printed on
    /// stderr; new lines show within a second). Listens on loopback, a free port unless
    /// IP:PORT is given; it stops with the recording.
    #[arg(
        long,
        value_name = "IP:PORT",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "127.0.0.1:0"
    )]
    pub view: Option<String>,
}

impl ViewFlag {
    /// Starts the viewer on `trace` in a thread of its own when the flag was given.
    pub fn start_beside(&self, trace: &std::path::Path) -> anyhow::Result<()> {
        let Some(listen) = &self.view else {
            return Ok(());
        };
        let config = Config {
            paths: vec![trace.to_owned()],
            default_dir: PathBuf::new(),
            listen: listen.clone(),
            mmsp: false,
            allow_hosts: Vec::new(),
        };
        let view = start(&config)?;
        std::thread::Builder::new()
            .name("reel-view".into())
            .spawn(move || {
                if let Err(e) = view.run(Stop::new(), false) {
                    say!("reel: the viewer stopped: {e}");
                }
            })
            .map_err(|e| coded(exit::INTERNAL, format!("cannot start the viewer: {e}")))?;
        Ok(())
    }
}
