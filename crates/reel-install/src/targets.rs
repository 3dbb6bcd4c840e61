//! The MCP clients reel installs into: where each keeps its configuration files, and
//! where in them the servers are.
//!
//! | target | files | servers under |
//! |---|---|---|
//! | `claude-code` | `~/.claude.json`; a project's `.mcp.json` | `mcpServers`, and each `projects.<dir>.mcpServers` of `~/.claude.json` |
//! | `claude-desktop` | Linux `~/.config/Claude/claude_desktop_config.json`; macOS `~/Library/Application Support/Claude/claude_desktop_config.json` | `mcpServers` |
//! | `cursor` | `~/.cursor/mcp.json`; a project's `.cursor/mcp.json` | `mcpServers` |
//! | `vscode` | Linux `~/.config/Code/User/mcp.json`; macOS `~/Library/Application Support/Code/User/mcp.json`; a project's `.vscode/mcp.json` | `servers` |
//! | `windsurf` | `~/.codeium/windsurf/mcp_config.json` | `mcpServers` |
//! | `gemini-cli` | `~/.gemini/settings.json`; a project's `.gemini/settings.json` | `mcpServers` |

use std::path::{Path, PathBuf};

/// A client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// Claude Code.
    ClaudeCode,
    /// Claude Desktop.
    ClaudeDesktop,
    /// Cursor.
    Cursor,
    /// VS Code.
    VsCode,
    /// Windsurf.
    Windsurf,
    /// Gemini CLI.
    GeminiCli,
}

impl Target {
    /// Every target, in the order they are listed.
    pub const ALL: [Target; 6] = [
        Target::ClaudeCode,
        Target::ClaudeDesktop,
        Target::Cursor,
        Target::VsCode,
        Target::Windsurf,
        Target::GeminiCli,
    ];

    /// The name `--target` takes.
    pub fn name(self) -> &'static str {
        match self {
            Target::ClaudeCode => "claude-code",
            Target::ClaudeDesktop => "claude-desktop",
            Target::Cursor => "cursor",
            Target::VsCode => "vscode",
            Target::Windsurf => "windsurf",
            Target::GeminiCli => "gemini-cli",
        }
    }

    /// The target named `name`.
    pub fn parse(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The key its files hold servers under.
    pub fn servers_key(self) -> &'static str {
        match self {
            Target::VsCode => "servers",
            _ => "mcpServers",
        }
    }

    /// Its configuration files for the user `home` and the project directory `project`,
    /// existing or not.
    pub fn files(self, home: &Path, project: &Path) -> Vec<ConfigFile> {
        let app_support = |rest: &str| {
            if cfg!(target_os = "macos") {
                home.join("Library/Application Support").join(rest)
            } else {
                let config = std::env::var_os("XDG_CONFIG_HOME")
                    .filter(|d| !d.is_empty())
                    .map_or_else(|| home.join(".config"), PathBuf::from);
                config.join(rest)
            }
        };
        let file = |path: PathBuf, scope: Scope| ConfigFile {
            target: self,
            path,
            scope,
        };
        match self {
            Target::ClaudeCode => vec![
                file(home.join(".claude.json"), Scope::User),
                file(project.join(".mcp.json"), Scope::Project),
            ],
            Target::ClaudeDesktop => vec![file(
                app_support("Claude/claude_desktop_config.json"),
                Scope::User,
            )],
            Target::Cursor => vec![
                file(home.join(".cursor/mcp.json"), Scope::User),
                file(project.join(".cursor/mcp.json"), Scope::Project),
            ],
            Target::VsCode => vec![
                file(app_support("Code/User/mcp.json"), Scope::User),
                file(project.join(".vscode/mcp.json"), Scope::Project),
            ],
            Target::Windsurf => vec![file(
                home.join(".codeium/windsurf/mcp_config.json"),
                Scope::User,
            )],
            Target::GeminiCli => vec![
                file(home.join(".gemini/settings.json"), Scope::User),
                file(project.join(".gemini/settings.json"), Scope::Project),
            ],
        }
    }
}

/// Whose file it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The user's, in the home directory.
    User,
    /// A project's: relative commands in it are relative to the project.
    Project,
}

/// One configuration file of a client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigFile {
    /// The client.
    pub target: Target,
    /// The file.
    pub path: PathBuf,
    /// The user's or a project's.
    pub scope: Scope,
}

impl ConfigFile {
    /// The paths of the server tables in the document: `[servers_key]`, and for Claude
    /// Code's user file each project's too (`["projects", "*", "mcpServers"]`).
    pub fn tables(&self) -> Vec<Vec<&'static str>> {
        let key = self.target.servers_key();
        let mut v = vec![vec![key]];
        if self.target == Target::ClaudeCode && self.scope == Scope::User {
            v.push(vec!["projects", "*", key]);
        }
        v
    }
}
