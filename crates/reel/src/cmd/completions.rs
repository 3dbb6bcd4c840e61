//! `reel completions SHELL`: the shell's completion script for every command and flag,
//! generated from the same definitions `--help` prints (clap_complete).

use clap_complete::Shell;

/// Arguments of `reel completions`.
#[derive(clap::Args)]
#[command(after_long_help = "\
Install, e.g.:
  bash: reel completions bash > ~/.local/share/bash-completion/completions/reel
  zsh:  reel completions zsh > \"${fpath[1]}/_reel\"
  fish: reel completions fish > ~/.config/fish/completions/reel.fish
  powershell: reel completions powershell >> $PROFILE")]
pub struct Args {
    /// The shell to write the script for.
    #[arg(value_enum, value_name = "SHELL")]
    shell: Shell,
}

/// Writes the completion script of `command` (reel's whole command line) to stdout.
pub fn run(args: &Args, mut command: clap::Command) -> anyhow::Result<u8> {
    let name = command.get_name().to_owned();
    clap_complete::generate(args.shell, &mut command, name, &mut std::io::stdout());
    Ok(crate::exit::OK)
}
