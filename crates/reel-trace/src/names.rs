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

/// Derives a label from a (redacted) server command: what names the server, not what
/// it is told. The server is, in order of preference:
/// 1. the first script or package the command runs: a file with a script extension
///    (`server.py` → `server`), a scoped or versioned npm package
///    (`@modelcontextprotocol/server-everything@1.0` → `server-everything`), or
///    `python -m MODULE`. A script with a generic name (`index.js`, `main.py`,
///    `cli.js`, `__main__.py`) is named by the directory above it, build directories
///    (`dist`, `build`, `lib`, `src`, `bin`, `out`) skipped, so
///    `…/server-everything/dist/index.js` is `server-everything`;
/// 2. else the first word that is not a launcher (`npx`, `node`, `uvx`, `python`, …),
///    a flag, a flag's value (`--port 3000`, `--auth K`: a setting, perhaps a secret),
///    a transport word (`stdio`, `sse`, `http`, …), a path given as an argument
///    (`/tmp`: what the server serves, not the server), a redacted value or a word with
///    spaces.
///
/// The label is lowercased, `[a-z0-9-]` only, 32 characters at most; `mcp` when
/// nothing names anything.
pub fn derive_label(command: &[String]) -> String {
    let after_flag =
        |i: usize| i > 0 && command[i - 1].starts_with('-') && !command[i - 1].contains('=');
    let usable = |arg: &str| {
        !arg.starts_with('-')
            && !arg.contains(char::is_whitespace)
            && !arg.contains(crate::line::REDACTED)
    };
    if let Some(label) = container_image(command) {
        return label;
    }
    for (i, arg) in command.iter().enumerate() {
        if i > 0 && command[i - 1] == "-m" && usable(arg) {
            let module = arg.split('.').next().unwrap_or(arg);
            if let Some(label) = clean_label(module) {
                return label;
            }
        }
        if usable(arg) {
            if let Some(label) = script_or_package(arg) {
                return label;
            }
        }
    }
    for positional_only in [true, false] {
        for (i, arg) in command.iter().enumerate() {
            if (positional_only && after_flag(i)) || !usable(arg) {
                continue;
            }
            // The program itself may be given by path (`/usr/local/bin/mcp-git`); an
            // argument given by path is data.
            let is_path = arg.contains(['/', '\\']) || arg == "." || arg == "..";
            if i > 0 && is_path {
                continue;
            }
            let base = arg.rsplit(['/', '\\']).next().unwrap_or(arg);
            if LAUNCHERS.contains(&base) || TRANSPORTS.contains(&base) {
                continue;
            }
            if let Some(label) = clean_label(base) {
                return label;
            }
        }
    }
    "mcp".to_owned()
}

/// Words that start a server rather than name it.
const LAUNCHERS: &[&str] = &[
    "npx", "node", "bun", "bunx", "deno", "run", "uv", "uvx", "python", "python3", "pnpm", "dlx",
    "exec", "yarn", "docker", "env", "tsx", "ts-node", "pipx", "sh", "bash",
];

/// Arguments that pick a transport: the same for every server, so never its name.
const TRANSPORTS: &[&str] = &[
    "stdio",
    "sse",
    "http",
    "https",
    "streamable-http",
    "streamableHttp",
    "streamable",
    "serve",
    "start",
    "mcp",
];

/// Script names that say nothing about the server: its directory names it.
const GENERIC_SCRIPTS: &[&str] = &["index", "main", "cli", "__main__", "server", "app", "mod"];

/// Directories a build or layout puts scripts in: the one above names the server.
const BUILD_DIRS: &[&str] = &["dist", "build", "lib", "src", "bin", "out", "esm", "cjs"];

/// `docker run … IMAGE …` (or podman): the image's name, without registry, owner or
/// tag (`ghcr.io/org/mcp-fetch:1.0` → `mcp-fetch`).
fn container_image(command: &[String]) -> Option<String> {
    const VALUE_FLAGS: &[&str] = &[
        "-e",
        "--env",
        "--env-file",
        "-v",
        "--volume",
        "--mount",
        "--name",
        "--network",
        "-p",
        "--publish",
        "-w",
        "--workdir",
        "--entrypoint",
        "-u",
        "--user",
        "--platform",
        "-l",
        "--label",
    ];
    let engine = command.first()?.rsplit('/').next()?;
    if !matches!(engine, "docker" | "podman") || command.get(1)? != "run" {
        return None;
    }
    let mut args = command[2..].iter();
    while let Some(arg) = args.next() {
        if VALUE_FLAGS.contains(&arg.as_str()) {
            args.next();
        } else if !arg.starts_with('-') {
            let name = arg.rsplit('/').next()?;
            let name = name.split(['@', ':']).next()?;
            return clean_label(name);
        }
    }
    None
}

/// Directories of the file system's layout, which name no server (`/opt/server.js`).
const SYSTEM_DIRS: &[&str] = &[
    "opt", "srv", "usr", "local", "home", "tmp", "var", "root", "app", "apps", "work", "code",
];

/// The label of a script path or an npm package spec, if `arg` is one.
fn script_or_package(arg: &str) -> Option<String> {
    const SCRIPT_EXTENSIONS: &[&str] = &[
        ".js", ".mjs", ".cjs", ".ts", ".mts", ".py", ".rb", ".sh", ".jar", ".php", ".pl",
    ];
    if let Some(ext) = SCRIPT_EXTENSIONS.iter().find(|e| arg.ends_with(**e)) {
        let parts: Vec<&str> = arg[..arg.len() - ext.len()]
            .split(['/', '\\'])
            .filter(|p| !p.is_empty() && *p != ".")
            .collect();
        let (stem, dirs) = parts.split_last()?;
        // `server.py` alone is the server; `…/server/dist/index.js` is named above.
        if GENERIC_SCRIPTS.contains(stem) && !dirs.is_empty() {
            if let Some(dir) = dirs.iter().rev().find(|d| {
                !BUILD_DIRS.contains(d)
                    && !SYSTEM_DIRS.contains(d)
                    && !d.starts_with(['@', '.'])
                    && **d != "node_modules"
            }) {
                return clean_label(dir);
            }
        }
        return clean_label(stem);
    }
    // `@scope/name`, `@scope/name@1.2`, `name@1.2`: the package's own name.
    let spec = arg
        .strip_prefix('@')
        .map_or(arg, |rest| match rest.split_once('/') {
            Some((_, name)) => name,
            None => rest,
        });
    let scoped = arg.starts_with('@') && arg.contains('/');
    match spec.split_once('@') {
        Some((name, _version)) if !name.is_empty() && !name.contains('/') => clean_label(name),
        _ if scoped => clean_label(spec),
        _ => None,
    }
}

/// `word` lowercased to `[a-z0-9-]`, 32 characters at most; `None` when empty.
fn clean_label(word: &str) -> Option<String> {
    let label: String = word
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
    let label = label.trim_matches('-').to_owned();
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

/// A new directory only this user can enter, `<temp dir>/<prefix><pid>-<unique>`:
/// always created afresh (an existing one, say a killed process's whose pid came back,
/// is passed by), never one another process chose.
pub fn private_temp_dir(prefix: &str) -> io::Result<PathBuf> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut b = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut last = None;
    for _ in 0..64 {
        let unique = nanos ^ NEXT.fetch_add(1, Ordering::Relaxed).rotate_left(40);
        let dir =
            std::env::temp_dir().join(format!("{prefix}{}-{unique:016x}", std::process::id()));
        match b.create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::ErrorKind::AlreadyExists.into()))
}

/// Options that create a file only its owner can read (mode 0600), as traces are: every
/// file reel writes that holds what the tools saw (a trace, a seal, a sidecar, an
/// export) is opened through these. `create_new` or `truncate` is the caller's choice.
pub fn private_file_options() -> std::fs::OpenOptions {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    opts
}

/// Creates a new private directory `dir` (mode 0700; its missing parents too); an
/// existing one is an error, as `std::fs::create_dir`'s is.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        ensure_dir(parent)?;
    }
    let mut b = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir)
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
    #[test]
    fn private_temp_dirs_are_new_and_private_each_time() {
        let a = super::private_temp_dir("reel-names-test-").unwrap();
        let b = super::private_temp_dir("reel-names-test-").unwrap();
        assert_ne!(a, b);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&a).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700);
        }
        std::fs::remove_dir(a).unwrap();
        std::fs::remove_dir(b).unwrap();
    }

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
        assert_eq!(label(&["node", "/opt/srv.js"]), "srv");
        assert_eq!(
            label(&["npx", "-y", "@modelcontextprotocol/server-everything"]),
            "server-everything"
        );
        // A flag's value is a setting, not a name, and may be a secret.
        assert_eq!(label(&["node", "srv.js", "--port", "3000"]), "srv");
        assert_eq!(label(&["server", "--auth", "xyz"]), "server");
        assert_eq!(label(&["server", "--api-key", "[REDACTED]"]), "server");
        assert_eq!(label(&["python", "--flag", "srv.py"]), "srv");
        assert_eq!(label(&["npx", "-y", "--"]), "mcp");
        assert_eq!(label(&["uvx", "mcp-server-git"]), "mcp-server-git");
        assert_eq!(label(&[]), "mcp");
    }

    /// Different servers started the usual ways get different labels, and a transport
    /// word or a served path never is one.
    #[test]
    fn labels_skip_transport_words_and_paths() {
        let everything =
            "/w/.peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
        assert_eq!(label(&["node", everything, "stdio"]), "server-everything");
        assert_eq!(label(&["python", "server.py", "stdio"]), "server");
        assert_eq!(label(&["node", "/opt/server.js"]), "server");
        assert_eq!(label(&["python", "/home/me/weather/server.py"]), "weather");
        assert_eq!(
            label(&["python3", "/srv/app/weather.py", "stdio"]),
            "weather"
        );
        assert_eq!(
            label(&[
                "npx",
                "-y",
                "@modelcontextprotocol/server-filesystem",
                "/tmp"
            ]),
            "server-filesystem"
        );
        assert_eq!(
            label(&[
                "npx",
                "-y",
                "@modelcontextprotocol/server-filesystem@2026.8.31",
                "/tmp"
            ]),
            "server-filesystem"
        );
        assert_eq!(
            label(&["npx", "-y", "mcp-remote@0.1.0", "https://x"]),
            "mcp-remote"
        );
        assert_eq!(
            label(&["uvx", "mcp-server-fetch", "stdio"]),
            "mcp-server-fetch"
        );
        assert_eq!(
            label(&["python", "-m", "mcp_server_git.cli", "--repository", "/r"]),
            "mcp-server-git"
        );
        assert_eq!(
            label(&["uv", "run", "--with", "mcp", "tools/main.py"]),
            "tools"
        );
        assert_eq!(label(&["/usr/local/bin/mcp-git", "/repo"]), "mcp-git");
        assert_eq!(
            label(&["deno", "run", "-A", "./src/main.ts", "sse"]),
            "main"
        );
        assert_eq!(
            label(&["docker", "run", "-i", "--rm", "mcp/fetch"]),
            "fetch"
        );
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
