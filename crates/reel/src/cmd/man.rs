//! `reel man [COMMAND]` and `reel man --dir DIR`: manual pages in roff, generated from
//! the same definitions `--help` prints (clap_mangen), so the two cannot disagree.
//!
//! The pages are `reel(1)` and one `reel-COMMAND(1)` per command, in the style git and
//! cargo name theirs; the packages ship them.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::exit::{self, coded};

/// Arguments of `reel man`.
#[derive(clap::Args)]
#[command(after_long_help = "\
Read one, e.g.:  reel man rec | man -l -
Install them:    reel man --dir ~/.local/share/man/man1")]
pub struct Args {
    /// The command whose page to write to stdout (default: reel's own page).
    #[arg(value_name = "COMMAND", conflicts_with = "dir")]
    command: Option<String>,

    /// Write every page into DIR instead (reel.1 and reel-COMMAND.1 for each command),
    /// creating DIR if needed.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// Writes the page `args` asks for, or all of them, for `cmd` (reel's whole command line).
pub fn run(args: &Args, mut cmd: clap::Command) -> anyhow::Result<u8> {
    cmd.build();
    let all = pages(&cmd);
    if let Some(dir) = &args.dir {
        write_all(&all, dir)?;
        say!("reel man: {} pages in {}", all.len(), dir.display());
        return Ok(exit::OK);
    }
    // `reel man rec` and `reel man reel-rec` both name rec's page.
    let wanted = match &args.command {
        None => cmd.get_name().to_owned(),
        Some(name) if name.starts_with("reel-") || name == "reel" => name.clone(),
        Some(name) => format!("{}-{name}", cmd.get_name()),
    };
    let page = all
        .into_iter()
        .find(|p| p.get_name() == wanted)
        .ok_or_else(|| {
            let names: Vec<&str> = cmd
                .get_subcommands()
                .filter(|c| shown(c))
                .map(|c| c.get_name())
                .collect();
            coded(
                exit::USAGE,
                format!("no page `{wanted}`; the commands are: {}", names.join(", ")),
            )
        })?;
    let mut out = std::io::stdout().lock();
    clap_mangen::Man::new(page).render(&mut out)?;
    out.flush()?;
    Ok(exit::OK)
}

/// A command with a page of its own: every visible one but `help`.
fn shown(cmd: &clap::Command) -> bool {
    !cmd.is_hide_set() && cmd.get_name() != "help"
}

/// `cmd`'s page and one per command under it, at any depth, each named as man finds it
/// (`reel-example-server`).
fn pages(cmd: &clap::Command) -> Vec<clap::Command> {
    let mut all = vec![aliases_shown(cmd.clone())];
    for sub in cmd.get_subcommands().filter(|c| shown(c)) {
        let full = format!("{}-{}", cmd.get_name(), sub.get_name());
        all.extend(pages(&sub.clone().name(full)));
    }
    all
}

/// `cmd` with each flag's visible aliases written into its help, as `--help` shows them
/// (clap_mangen leaves them out).
fn aliases_shown(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|arg| {
        let aliases: Vec<String> = arg
            .get_visible_aliases()
            .unwrap_or_default()
            .iter()
            .map(|a| format!("--{a}"))
            .collect();
        if aliases.is_empty() {
            return arg;
        }
        let help = arg
            .get_long_help()
            .or(arg.get_help())
            .map(ToString::to_string)
            .unwrap_or_default();
        arg.long_help(format!("{help}\n\n[alias: {}]", aliases.join(", ")))
    })
}

/// Writes each page into `dir` as `NAME.1`.
fn write_all(pages: &[clap::Command], dir: &Path) -> anyhow::Result<()> {
    fs::create_dir_all(dir)
        .map_err(|e| coded(exit::CANT_CREATE, format!("{}: {e}", dir.display())))?;
    for page in pages {
        let path = dir.join(format!("{}.1", page.get_name()));
        let mut text = Vec::new();
        clap_mangen::Man::new(page.clone()).render(&mut text)?;
        fs::write(&path, text)
            .map_err(|e| coded(exit::CANT_CREATE, format!("{}: {e}", path.display())))?;
    }
    Ok(())
}
