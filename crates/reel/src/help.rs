//! `reel --help` lists the commands by the job they do, not in one long list.
//!
//! clap lists subcommands under a single heading, so the top-level help's template is
//! written here from the same definitions: each group's commands with the first line of
//! their `about`. Every command is in exactly one group (a test holds [`GROUPS`] to the
//! commands), so a new command cannot go missing from `--help`.

use std::fmt::Write as _;

use clap::builder::StyledStr;

/// The jobs, in the order `--help` shows them, and their commands. A name the build
/// lacks (`llm` and `view` without the `http` feature) is left out when shown.
pub const GROUPS: &[(&str, &[&str])] = &[
    ("Start", &["demo", "example"]),
    ("Record", &["rec", "llm"]),
    ("Replay", &["play"]),
    ("Compare", &["diff", "verify"]),
    ("Inspect", &["check", "stats", "ls", "view"]),
    ("Convert", &["import", "export", "redact", "seal"]),
    ("Integrate", &["install", "uninstall", "completions", "man"]),
];

/// Where a command's summary is cut into lines (the column after the indent and name).
const WIDTH: usize = 100;

/// `cmd` with a help template that lists its subcommands by [`GROUPS`].
pub fn grouped(cmd: clap::Command) -> clap::Command {
    let template = template(&cmd);
    cmd.help_template(template)
}

fn template(cmd: &clap::Command) -> StyledStr {
    let header = *cmd.get_styles().get_header();
    let literal = *cmd.get_styles().get_literal();
    let names: Vec<&str> = GROUPS
        .iter()
        .flat_map(|(_, names)| names.iter().copied())
        .collect();
    let name_width = names.iter().map(|n| n.len()).max().unwrap_or(0);

    let mut out = StyledStr::new();
    let _ = write!(out, "{{about-with-newline}}\n{{usage-heading}} {{usage}}\n");
    for (group, names) in GROUPS {
        let present: Vec<&clap::Command> = names
            .iter()
            .filter_map(|n| cmd.find_subcommand(n))
            .collect();
        if present.is_empty() {
            continue;
        }
        let _ = write!(out, "\n{header}{group}:{header:#}\n");
        for sub in present {
            let name = sub.get_name();
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            let mut lines = wrap(&about, WIDTH.saturating_sub(name_width + 4)).into_iter();
            let first = lines.next().unwrap_or_default();
            let _ = writeln!(
                out,
                "  {literal}{name}{literal:#}{}  {first}",
                " ".repeat(name_width - name.len())
            );
            for line in lines {
                let _ = writeln!(out, "  {}  {line}", " ".repeat(name_width));
            }
        }
    }
    let _ = write!(
        out,
        "\n{header}Options:{header:#}\n{{options}}{{after-help}}"
    );
    out
}

/// `text` cut between words into lines of at most `width` characters (a longer word
/// is a line of its own).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every command reel has is in exactly one group, and every name in a group is a
    /// command (this build has every feature the default build has).
    #[test]
    fn the_groups_hold_every_command_once() {
        let cmd = crate::Cli::command();
        let grouped: Vec<&str> = GROUPS.iter().flat_map(|(_, n)| n.iter().copied()).collect();
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let count = grouped.iter().filter(|n| **n == sub.get_name()).count();
            assert_eq!(count, 1, "`{}` is in {count} groups", sub.get_name());
        }
        #[cfg(feature = "http")]
        for name in grouped {
            assert!(cmd.find_subcommand(name).is_some(), "no command `{name}`");
        }
    }

    #[test]
    fn help_shows_each_group_with_its_commands_in_order() {
        let mut cmd = grouped(crate::Cli::command());
        let text = cmd.render_long_help().to_string();
        let mut at = 0;
        for (group, names) in GROUPS {
            at += text[at..]
                .find(&format!("\n{group}:\n"))
                .unwrap_or_else(|| panic!("no {group} heading after byte {at}:\n{text}"));
            for name in *names {
                if cmd.find_subcommand(name).is_none() {
                    continue;
                }
                at += text[at..]
                    .find(&format!("\n  {name} "))
                    .unwrap_or_else(|| panic!("`{name}` not under {group}:\n{text}"));
            }
        }
        assert!(text[at..].contains("\nOptions:\n"), "{text}");
        assert!(text.contains("Exit codes:"), "{text}");
    }

    #[test]
    fn a_long_summary_is_cut_between_words() {
        assert_eq!(wrap("a bb ccc dddd", 6), ["a bb", "ccc", "dddd"]);
        assert_eq!(wrap("unbreakable", 4), ["unbreakable"]);
        assert!(wrap("  ", 10).is_empty());
    }
}
