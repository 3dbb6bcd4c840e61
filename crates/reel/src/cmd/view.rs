//! `reel view [PATH|RUN…] [--listen IP:PORT] [--open]`: the local web viewer.
//!
//! Wiring only: the paths (run names resolved as for every command) → [`reel_view::View`],
//! the URL on stderr, optionally the system browser, then serving until Ctrl-C.

use std::path::PathBuf;

use reel_net::serve::Stop;
use reel_view::{Config, View, ViewError};

use crate::cmd::net_flags::{Listen, warn_if_exposed};
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

    #[command(flatten)]
    pub listen: Listen,

    /// Open the page in the system browser.
    #[arg(long)]
    pub open: bool,

    /// Show the directory as an MMSP cache directory (RFC-0010's listing and pages).
    #[arg(long)]
    pub mmsp: bool,

    /// Run as the viewer of a recording (`--view`): stop when stdin closes, which the
    /// recorder holds open for as long as it runs.
    #[arg(long, hide = true)]
    pub beside_recording: bool,
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
        listen: args.listen.addr().to_owned(),
        mmsp: args.mmsp,
        allow_hosts: args.listen.allow_host,
    };
    let view = start(&config)?;
    if args.open {
        open_browser(&view.url());
    }
    let stop = Stop::new();
    if args.beside_recording {
        let on_close = stop.clone();
        let _ = std::thread::Builder::new()
            .name("reel-view-recorder".into())
            .spawn(move || {
                let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
                on_close.stop();
            });
    }
    view.run(stop, true)
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
    warn_if_exposed(
        addr,
        "can read the traces shown (the Host check keeps browsers from being turned against the viewer; it is no password)",
    );
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
    /// IP:PORT is given; it runs as a process of its own (a viewer that fails leaves
    /// the recording running) and stops with the recording.
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
    /// Starts the viewer on `trace` when the flag was given, in a process of its own
    /// (`reel view --beside-recording`): whatever the viewer meets — a hostile trace,
    /// memory running out, a crash — ends that process and leaves the recording
    /// running and its trace whole. It prints its URL (or why it could not listen,
    /// which fails the recording with its exit code) before this returns, and stops
    /// when the returned guard is dropped or the recorder dies (its stdin closes).
    pub fn start_beside(&self, trace: &std::path::Path) -> anyhow::Result<Option<BesideView>> {
        let Some(listen) = &self.view else {
            return Ok(None);
        };
        let exe = std::env::current_exe()
            .map_err(|e| coded(exit::INTERNAL, format!("cannot start the viewer: {e}")))?;
        let mut child = std::process::Command::new(exe)
            .arg("view")
            .arg("--beside-recording")
            .arg(format!("--listen={listen}"))
            .arg("--")
            .arg(trace)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| coded(exit::INTERNAL, format!("cannot start the viewer: {e}")))?;
        let stderr = child.stderr.take().map(std::io::BufReader::new);
        let mut lines = stderr.map(std::io::BufRead::lines);
        // Its lines up to and including `viewing at` (a warning may come first); the
        // rest is passed on as it comes.
        let mut said = Vec::new();
        let listening = loop {
            match lines.as_mut().and_then(Iterator::next) {
                Some(Ok(line)) => {
                    let done = line.starts_with("reel: viewing at ");
                    said.push(line);
                    if done {
                        break true;
                    }
                }
                _ => break false,
            }
        };
        if !listening {
            let status = child.wait().ok().and_then(|s| s.code());
            let code = status
                .and_then(|c| u8::try_from(c).ok())
                .unwrap_or(exit::INTERNAL);
            let why = said.join("\n");
            let why = why.strip_prefix("reel: ").unwrap_or(&why).to_owned();
            return Err(coded(
                code,
                if why.is_empty() {
                    "the viewer did not start".to_owned()
                } else {
                    why
                },
            ));
        }
        for line in &said {
            say!("{line}");
        }
        if let Some(rest) = lines {
            let _ = std::thread::Builder::new()
                .name("reel-view-stderr".into())
                .spawn(move || {
                    for line in rest.map_while(Result::ok) {
                        say!("{line}");
                    }
                });
        }
        Ok(Some(BesideView { child }))
    }
}

/// The viewer process beside a recording; dropping it stops the viewer.
#[derive(Debug)]
pub struct BesideView {
    child: std::process::Child,
}

impl Drop for BesideView {
    fn drop(&mut self) {
        // Closing its stdin is its signal to stop; a viewer that does not within its
        // grace period is killed.
        drop(self.child.stdin.take());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
