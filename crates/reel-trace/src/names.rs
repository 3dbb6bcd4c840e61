//! Where traces go and what they are called.
//!
//! File names follow the format's producers: `<stamp>-<name>.jsonl`, where `<stamp>` is
//! the start time `YYYY-MM-DDTHH-MM-SS-mmmZ` and `<name>` the label with every character
//! outside `[A-Za-z0-9_-]` turned into `-` (first 64 characters; `mcp` when empty).
//! Traces go to a per-user data directory unless told otherwise, because MCP clients
//! start servers from arbitrary working directories.

use std::io;
use std::path::{Path, PathBuf};

use crate::time::Timestamp;

/// A command as one would type it in a POSIX shell, for messages: words made only of
/// characters no shell treats specially stay bare, every other word is single-quoted.
pub fn shell_words(command: &[String]) -> String {
    command
        .iter()
        .map(|s| {
            if !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./=:@,+".contains(&b))
            {
                s.clone()
            } else {
                format!("'{}'", s.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Environment variable that overrides the trace directory.
pub const DIR_ENV: &str = "REEL_DIR";

/// `<stamp>-<name>` for a trace started at `started` with `label`.
pub fn file_stem(started: Timestamp, label: &str) -> String {
    format!("{}-{}", started.to_file_stamp(), file_name_part(label))
}

/// The label as it appears in a file name.
pub fn file_name_part(label: &str) -> String {
    let s: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    if s.is_empty() { "mcp".to_owned() } else { s }
}

/// Derives a label from a (redacted) server command: the last argument that names
/// something, reduced to its file name, lowercased, `[a-z0-9-]` only, 32 characters at
/// most. Arguments that follow a flag (`--port 3000`, `--auth K`: a setting, perhaps a
/// secret, not the server) are taken only when nothing else names anything. Launcher
/// words (`npx`, `node`, `uvx`, `python`, …), flags, redacted values and arguments with
/// spaces are skipped; `mcp` when nothing is left.
pub fn derive_label(command: &[String]) -> String {
    let after_flag =
        |i: usize| i > 0 && command[i - 1].starts_with('-') && !command[i - 1].contains('=');
    for positional_only in [true, false] {
        for (i, arg) in command.iter().enumerate().rev() {
            if positional_only && after_flag(i) {
                continue;
            }
            if let Some(label) = label_of(arg) {
                return label;
            }
        }
    }
    "mcp".to_owned()
}

/// The label one argument gives, if it names something.
fn label_of(arg: &str) -> Option<String> {
    const LAUNCHERS: &[&str] = &[
        "npx", "node", "bun", "bunx", "deno", "run", "uv", "uvx", "python", "python3", "pnpm",
        "dlx", "exec", "yarn", "docker", "env", "tsx", "ts-node",
    ];
    if arg.starts_with('-')
        || arg.contains(char::is_whitespace)
        || arg.contains(crate::redact::MARKER)
    {
        return None;
    }
    let base = arg.rsplit(['/', '\\']).next().unwrap_or(arg);
    if LAUNCHERS.contains(&base) || base.is_empty() {
        return None;
    }
    let label: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .take(32)
        .collect();
    (!label.is_empty()).then_some(label)
}

/// The default trace directory: `$REEL_DIR`, else the per-user data directory
/// (`$XDG_DATA_HOME/reel/traces`, `~/.local/share/reel/traces`; on macOS
/// `~/Library/Application Support/reel/traces`).
pub fn default_trace_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os(DIR_ENV).filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    if cfg!(target_os = "macos") {
        let home = std::env::var_os("HOME")?;
        return Some(Path::new(&home).join("Library/Application Support/reel/traces"));
    }
    if let Some(x) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return Some(Path::new(&x).join("reel/traces"));
    }
    let home = std::env::var_os("HOME")?;
    Some(Path::new(&home).join(".local/share/reel/traces"))
}

/// Creates `dir` and its missing parents with mode 0700. An existing directory is left
/// as it is; an existing file is an error.
pub fn ensure_dir(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    // `create` would say only "File exists".
    if dir.exists() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "it exists and is not a directory",
        ));
    }
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(args: &[&str]) -> String {
        derive_label(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn shell_words_quote_only_what_a_shell_would_read_otherwise() {
        let words = |a: &[&str]| shell_words(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            words(&["node", "/opt/s.js", "--port=3000"]),
            "node /opt/s.js --port=3000"
        );
        assert_eq!(
            words(&["echo", "it's", "", "a b"]),
            r"echo 'it'\''s' '' 'a b'"
        );
    }

    #[test]
    fn labels_name_the_server() {
        assert_eq!(label(&["node", "/opt/server.js"]), "server-js");
        assert_eq!(
            label(&["npx", "-y", "@modelcontextprotocol/server-everything"]),
            "server-everything"
        );
        // A flag's value is a setting, not a name, and may be a secret.
        assert_eq!(label(&["node", "srv.js", "--port", "3000"]), "srv-js");
        assert_eq!(label(&["server", "--auth", "xyz"]), "server");
        assert_eq!(label(&["server", "--api-key", "[REDACTED]"]), "server");
        assert_eq!(label(&["python", "--flag", "srv.py"]), "srv-py");
        assert_eq!(label(&["npx", "-y", "--"]), "mcp");
        assert_eq!(label(&["uvx", "mcp-server-git"]), "mcp-server-git");
        assert_eq!(label(&[]), "mcp");
    }

    #[test]
    fn file_names_are_portable() {
        assert_eq!(file_name_part("a b/c:d"), "a-b-c-d");
        assert_eq!(file_name_part(""), "mcp");
        assert_eq!(file_name_part(&"x".repeat(100)).len(), 64);
        assert_eq!(file_stem(Timestamp(0), "fs"), "1970-01-01T00-00-00-000Z-fs");
    }

    #[test]
    fn ensure_dir_creates_private_parents() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("a/b");
        ensure_dir(&d).unwrap();
        assert!(d.is_dir());
        let f = tmp.path().join("file");
        std::fs::write(&f, "").unwrap();
        assert!(ensure_dir(&f.join("x")).is_err());
    }
}
