//! `reel install` / `reel uninstall`: the servers of the MCP clients' configuration
//! files wrapped in `reel rec`, and put back.
//!
//! Wiring only: which files (`reel_install::targets`), the edit and the write
//! (`reel_install::files`), what to say.

use std::path::PathBuf;

use reel_install::files::{self, Backup, Change};
use reel_install::{ConfigFile, Target, Wrapper};

use crate::exit::{self, coded};
use crate::output::Output;

const AFTER_HELP: &str = "\
Clients and files (user files in the home directory; project files in --project DIR):
  claude-code     ~/.claude.json (mcpServers, and each projects.<dir>.mcpServers), .mcp.json
  claude-desktop  ~/.config/Claude/claude_desktop_config.json (macOS: ~/Library/Application
                  Support/Claude/claude_desktop_config.json)
  cursor          ~/.cursor/mcp.json, .cursor/mcp.json
  vscode          ~/.config/Code/User/mcp.json (macOS: ~/Library/Application
                  Support/Code/User/mcp.json), .vscode/mcp.json (its `servers`)
  windsurf        ~/.codeium/windsurf/mcp_config.json
  gemini-cli      ~/.gemini/settings.json, .gemini/settings.json
Without --target, every client whose files exist.

Each stdio server entry becomes `reel rec --dir DIR --name NAME [--path-first DIR…] --
/absolute/command ARGS…`: reel and the command as absolute paths, and the directories
the command needs first on PATH (its own, and the interpreter's of a `#!/usr/bin/env`
script), since clients start servers from any directory with a reduced PATH. Every
other key of the entry (env, type, cwd, …) and of the file (order, spacing, comments)
stays as it is. The entry gets a `_reel` member keeping the original entry verbatim.

Remote entries (url, serverUrl, httpUrl, or type http/sse) are left as they are and
counted: the client connects to the URL itself and starts no process, so nothing of
reel's would run; record one with `reel rec --url URL --listen 127.0.0.1:PORT` and point
the client at that while you record. Entries whose command is not found on PATH are
left as they are too, and said.

Before a file's first change it is copied to FILE.reel-backup; it is then rewritten
whole (a temporary file renamed over it, permissions kept; a symbolic link is followed).
Running install again changes nothing (an entry wrapped with another reel or --dir is
brought up to date; an entry that already runs `reel rec` is left alone). `reel
uninstall` puts back every wrapped entry's original bytes: a file nothing else changed
is byte for byte what it was, and its backup is removed. An entry whose other keys were
changed since install (a rotated key in env) keeps them: its command and args are put
back and the _reel member taken out, and the backup stays. A read-only file is not
touched; a file's owner and permissions are kept.
--dry-run prints the diff it would make and writes nothing. Restart the client (or
reload its MCP servers) for a change to take effect.

Exit status: 0 done; 64 bad flags; 66 no client configuration found, a file that is not
JSON, or a --server name no file holds; 73 a file cannot be written (another program changed it meanwhile, or
permissions).";

/// Arguments of `reel install` and `reel uninstall`.
#[derive(clap::Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// The clients, comma-separated: claude-code, claude-desktop, cursor, vscode,
    /// windsurf, gemini-cli [default: every one whose files exist].
    #[arg(long, value_name = "CLIENT,...", value_delimiter = ',', value_parser = target)]
    target: Vec<Target>,

    /// Only these servers (by their name in the configuration; repeatable).
    #[arg(long = "server", value_name = "NAME")]
    servers: Vec<String>,

    /// The project whose files are edited too (`.mcp.json`, `.cursor/mcp.json`,
    /// `.vscode/mcp.json`, `.gemini/settings.json`) [default: the current directory].
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,

    /// Print the diff of each file and change nothing.
    #[arg(long)]
    dry_run: bool,
}

/// `--dir` of `reel install`: where the wrapped servers' traces go.
#[derive(clap::Args)]
pub struct InstallArgs {
    #[command(flatten)]
    common: Args,

    /// Where the wrapped servers write their traces [default: $REEL_DIR, else the
    /// per-user trace directory, e.g. ~/.local/share/reel/traces].
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

fn target(s: &str) -> Result<Target, String> {
    Target::parse(s).ok_or_else(|| {
        let names: Vec<&str> = Target::ALL.iter().map(|t| t.name()).collect();
        format!("unknown client {s:?}; the clients are {}", names.join(", "))
    })
}

/// The configuration files to edit and the project directory, or exit 66 saying where
/// reel looked.
fn files_of(args: &Args) -> anyhow::Result<(Vec<ConfigFile>, PathBuf)> {
    let home = std::env::var_os("HOME").map(PathBuf::from).ok_or_else(|| {
        coded(
            exit::USAGE,
            "HOME is not set: reel cannot find the clients' files",
        )
    })?;
    let project = match &args.project {
        Some(p) => std::path::absolute(p)
            .map_err(|e| coded(exit::USAGE, format!("--project {}: {e}", p.display())))?,
        None => std::env::current_dir()
            .map_err(|e| coded(exit::USAGE, format!("the current directory: {e}")))?,
    };
    let mut targets = if args.target.is_empty() {
        Target::ALL.to_vec()
    } else {
        args.target.clone()
    };
    let mut seen = Vec::new();
    targets.retain(|t| {
        let new = !seen.contains(t);
        seen.push(*t);
        new
    });
    let candidates: Vec<ConfigFile> = targets
        .iter()
        .flat_map(|t| t.files(&home, &project))
        .collect();
    let found = files::existing(candidates.clone());
    if found.is_empty() {
        let looked: Vec<String> = candidates
            .iter()
            .map(|f| format!("  {} {}", f.target.name(), f.path.display()))
            .collect();
        return Err(coded(
            exit::NO_INPUT,
            format!(
                "no client configuration found; looked for:\n{}",
                looked.join("\n")
            ),
        ));
    }
    Ok((found, project))
}

/// Runs `reel install`.
pub fn install(args: InstallArgs, out: &Output) -> anyhow::Result<u8> {
    let (files, project) = files_of(&args.common)?;
    let dir = match args.dir {
        Some(d) => d,
        None => crate::cmd::rec::trace_dir_of(None)?,
    };
    let dir = std::path::absolute(&dir)
        .map_err(|e| coded(exit::USAGE, format!("--dir {}: {e}", dir.display())))?;
    let reel = own_path()?;
    let w = Wrapper {
        reel,
        dir: dir.clone(),
        path: std::env::var_os("PATH").unwrap_or_default(),
        project,
    };
    let code = each(&files, &args.common, out, true, |f| {
        files::plan_install(f, &w, &args.common.servers)
    });
    if code == exit::OK && !args.common.dry_run && args.common.servers.is_empty() {
        say!(
            "reel: the wrapped servers record into {}; restart the clients to start them; `reel uninstall` puts the originals back",
            dir.display()
        );
    }
    Ok(code)
}

/// The reel the entries run: the `reel` on PATH when it is this one (a package
/// manager's link, say `/opt/homebrew/bin/reel`, outlives upgrades that move the file it
/// points to), else this executable's own path.
fn own_path() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()
        .map_err(|e| coded(exit::INTERNAL, format!("cannot tell where reel is: {e}")))?;
    Ok(crate::cmd::reel_on_path(&exe).unwrap_or(exe))
}

/// Runs `reel uninstall`.
pub fn uninstall(args: Args, out: &Output) -> anyhow::Result<u8> {
    let (files, _) = files_of(&args)?;
    Ok(each(&files, &args, out, false, |f| {
        files::plan_uninstall(f, &args.servers)
    }))
}

/// Plans, shows or writes each file; the exit code of the worst failure.
fn each(
    files: &[ConfigFile],
    args: &Args,
    out: &Output,
    install: bool,
    plan: impl Fn(&ConfigFile) -> Result<Change, files::FileError>,
) -> u8 {
    let mut code = exit::OK;
    let mut named: Vec<String> = Vec::new();
    for f in files {
        let change = match plan(f) {
            Ok(c) => c,
            Err(e) => {
                say!("reel: {}: {e}", f.target.name());
                code = code.max(exit::NO_INPUT);
                continue;
            }
        };
        if args.dry_run {
            if change.changes() {
                use std::io::Write as _;
                let mut stdout = out.human_stdout();
                let _ = stdout.write_all(change.diff().as_bytes());
                let _ = stdout.flush();
            }
        } else {
            match files::write(&change, install) {
                Ok(Some(Backup::Made(b))) => {
                    say!("reel: backed up {} to {}", f.path.display(), b.display())
                }
                Ok(Some(Backup::Removed(b))) => say!(
                    "reel: {} is as it was; removed {}",
                    f.path.display(),
                    b.display()
                ),
                Ok(_) => {}
                Err(e) => {
                    say!("reel: {}: {e}", f.target.name());
                    code = code.max(exit::CANT_CREATE);
                    continue;
                }
            }
        }
        say!("reel: {}", summary(&change, install, args.dry_run));
        let left = if install { "left as is: " } else { "" };
        for s in &change.skipped {
            say!("reel:   {left}{}: {}", s.name, s.why);
        }
        named.extend(change.named);
    }
    let unknown: Vec<&String> = args.servers.iter().filter(|s| !named.contains(s)).collect();
    if !unknown.is_empty() {
        let list: Vec<&str> = unknown.iter().map(|s| s.as_str()).collect();
        say!("reel: no server named {} in these files", list.join(", "));
        code = code.max(exit::NO_INPUT);
    }
    code
}

/// `claude-code /home/u/.claude.json: 2 wrapped, 1 already wrapped, 1 remote left as is`.
fn summary(c: &Change, install: bool, dry_run: bool) -> String {
    let n = &c.counts;
    let would = if dry_run { "would be " } else { "" };
    let mut parts = Vec::new();
    if install {
        parts.push(format!("{} {would}wrapped", n.wrapped));
        if n.refreshed > 0 {
            parts.push(format!("{} {would}brought up to date", n.refreshed));
        }
        if n.already > 0 {
            parts.push(format!("{} already wrapped", n.already));
        }
        if n.remote > 0 {
            parts.push(format!("{} remote left as is", n.remote));
        }
        if n.unresolved > 0 {
            parts.push(format!("{} not found on PATH", n.unresolved));
        }
    } else {
        parts.push(format!("{} {would}put back", n.restored));
        if n.kept_changes > 0 {
            parts.push(format!(
                "{} of them with later changes kept",
                n.kept_changes
            ));
        }
    }
    format!(
        "{} {}: {}",
        c.file.target.name(),
        c.file.path.display(),
        parts.join(", ")
    )
}
