//! `reel install` / `reel uninstall` on every client's configuration files, in a home
//! directory of the test's own: what is rewritten and what is not (byte for byte), the
//! backup, the dry run, idempotence, the exact round trip; and the wrapped servers
//! started by real clients reading those files — mcporter, which imports Claude Code's,
//! Cursor's, VS Code's and Windsurf's configurations, and the Python MCP SDK started as
//! a client starts an entry (Claude Desktop, Gemini CLI), with a client's reduced PATH —
//! each call recorded in the trace directory under the server's name.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::harness::play_support::Peers;
use crate::harness::reel;

/// server-everything's entry point, run with node.
fn everything() -> String {
    Peers::get()
        .node_modules
        .join("@modelcontextprotocol/server-everything/dist/index.js")
        .to_string_lossy()
        .into_owned()
}

/// A home directory and a project, with every client's files.
struct Home {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    traces: PathBuf,
}

/// (file under home or project, its text)
fn fixtures(e: &str) -> Vec<(String, String)> {
    let claude_code = format!(
        r#"{{
  "numStartups": 12,
  "theme": "dark",
  "mcpServers": {{
    "claudecode": {{
      "type": "stdio",
      "command": "node",
      "args": ["{e}", "stdio"],
      "env": {{"EVERYTHING_TEST": "1"}}
    }},
    "linear": {{
      "type": "http",
      "url": "https://mcp.linear.invalid/mcp",
      "headers": {{"Authorization": "Bearer k"}}
    }}
  }},
  "projects": {{
    "/somewhere/else": {{
      "allowedTools": [],
      "mcpServers": {{
        "local": {{"type": "stdio", "command": "node", "args": ["{e}", "stdio"], "env": {{}}}}
      }}
    }}
  }}
}}
"#
    );
    let desktop = format!(
        "{{\n    \"mcpServers\": {{\n        \"desktop\": {{\n            \"command\": \"node\",\n            \"args\": [\"{e}\", \"stdio\"]\n        }},\n        \"nocmd\": {{\"disabled\": true}}\n    }},\n    \"globalShortcut\": \"Ctrl+Space\"\n}}\n"
    );
    let cursor = format!(
        r#"{{"mcpServers":{{"cursor":{{"command":"node","args":["{e}","stdio"],"env":{{"A":"b"}}}},"remote":{{"url":"https://x.invalid/sse"}}}}}}"#
    );
    let vscode = format!(
        "// VS Code's MCP servers\n{{\n\t\"inputs\": [{{\"type\": \"promptString\", \"id\": \"key\"}}],\n\t\"servers\": {{\n\t\t\"vscode\": {{\n\t\t\t\"type\": \"stdio\",\n\t\t\t\"command\": \"node\",\n\t\t\t\"args\": [\"{e}\", \"stdio\"], // the server\n\t\t}},\n\t\t\"web\": {{\"type\": \"http\", \"url\": \"https://w.invalid/mcp\"}},\n\t}},\n}}\n"
    );
    let windsurf = format!(
        r#"{{
  "mcpServers": {{
    "windsurf": {{ "command": "node", "args": ["{e}", "stdio"] }},
    "deep": {{ "serverUrl": "https://d.invalid/mcp" }}
  }}
}}
"#
    );
    let gemini = format!(
        r#"{{
  "theme": "GitHub",
  "mcpServers": {{
    "gemini": {{
      "command": "node",
      "args": ["{e}", "stdio"],
      "timeout": 30000,
      "trust": false
    }},
    "stream": {{ "httpUrl": "https://s.invalid/mcp" }}
  }}
}}
"#
    );
    let project_mcp = r#"{
  "mcpServers": {
    "project": {
      "command": "node",
      "args": null
    }
  }
}
"#
    .to_owned();
    vec![
        ("home/.claude.json".into(), claude_code),
        (
            "home/.config/Claude/claude_desktop_config.json".into(),
            desktop,
        ),
        ("home/.cursor/mcp.json".into(), cursor),
        ("home/.config/Code/User/mcp.json".into(), vscode),
        ("home/.codeium/windsurf/mcp_config.json".into(), windsurf),
        ("home/.gemini/settings.json".into(), gemini),
        ("project/.mcp.json".into(), project_mcp),
    ]
}

impl Home {
    fn new() -> Home {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_owned();
        for (rel, text) in fixtures(&everything()) {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let p = root.join("home/.claude.json");
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        Home {
            home: root.join("home"),
            project: root.join("project"),
            traces: root.join("traces"),
            _tmp: tmp,
        }
    }

    fn files(&self) -> Vec<PathBuf> {
        let root = self.home.parent().unwrap();
        fixtures("")
            .into_iter()
            .map(|(rel, _)| root.join(rel))
            .collect()
    }

    fn snapshot(&self) -> Vec<Vec<u8>> {
        self.files()
            .iter()
            .map(|f| std::fs::read(f).unwrap())
            .collect()
    }

    fn reel(&self, args: &[&str]) -> (Option<i32>, String, String) {
        let mut c = reel();
        c.args(args)
            .arg("--project")
            .arg(&self.project)
            .env("HOME", &self.home)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("REEL_DIR")
            .current_dir(&self.project);
        let out = c.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn install(&self, extra: &[&str]) -> (Option<i32>, String, String) {
        let dir = self.traces.to_str().unwrap().to_owned();
        let mut args = vec!["install", "--dir", &dir];
        args.extend_from_slice(extra);
        self.reel(&args)
    }

    /// A JSON file (with comments and trailing commas taken out, for VS Code's).
    fn json(&self, rel: &str) -> Value {
        let text = std::fs::read_to_string(self.home.parent().unwrap().join(rel)).unwrap();
        serde_json::from_str(&plain_json(&text)).unwrap_or_else(|e| panic!("{rel}: {e}\n{text}"))
    }
}

/// JSON with comments as plain JSON: `//` comments, then trailing commas, dropped
/// (outside strings).
fn plain_json(text: &str) -> String {
    fn pass(text: &str, comments: bool) -> String {
        let b: Vec<char> = text.chars().collect();
        let mut out = String::new();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                '"' => {
                    let start = i;
                    i += 1;
                    while i < b.len() && b[i] != '"' {
                        i += if b[i] == '\\' { 2 } else { 1 };
                    }
                    i += 1;
                    out.extend(&b[start..i.min(b.len())]);
                }
                '/' if comments && b.get(i + 1) == Some(&'/') => {
                    while i < b.len() && b[i] != '\n' {
                        i += 1;
                    }
                }
                ',' if !comments => {
                    let next = b[i + 1..].iter().find(|c| !c.is_whitespace());
                    if !matches!(next, Some('}' | ']')) {
                        out.push(',');
                    }
                    i += 1;
                }
                c => {
                    out.push(c);
                    i += 1;
                }
            }
        }
        out
    }
    pass(&pass(text, true), false)
}

/// The names and tables of the wrapped entries: (file, pointer to the entry, name).
const WRAPPED: [(&str, &str, &str); 8] = [
    ("home/.claude.json", "/mcpServers/claudecode", "claudecode"),
    (
        "home/.claude.json",
        "/projects/~1somewhere~1else/mcpServers/local",
        "local",
    ),
    (
        "home/.config/Claude/claude_desktop_config.json",
        "/mcpServers/desktop",
        "desktop",
    ),
    ("home/.cursor/mcp.json", "/mcpServers/cursor", "cursor"),
    (
        "home/.config/Code/User/mcp.json",
        "/servers/vscode",
        "vscode",
    ),
    (
        "home/.codeium/windsurf/mcp_config.json",
        "/mcpServers/windsurf",
        "windsurf",
    ),
    ("home/.gemini/settings.json", "/mcpServers/gemini", "gemini"),
    ("project/.mcp.json", "/mcpServers/project", "project"),
];

#[test]
fn install_wraps_every_clients_stdio_servers_and_uninstall_puts_back_every_byte() {
    let h = Home::new();
    let before = h.snapshot();
    let originals: Vec<Value> = WRAPPED
        .iter()
        .map(|(f, p, _)| h.json(f).pointer(p).unwrap().clone())
        .collect();

    // The dry run shows each file's diff and writes nothing.
    let (code, out, err) = h.install(&["--dry-run"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(h.snapshot(), before, "a dry run writes nothing");
    for f in h.files() {
        assert!(
            out.contains(&format!("--- {}", f.display())),
            "{}\n{out}",
            f.display()
        );
    }
    assert!(
        out.lines()
            .any(|l| l.starts_with('+') && l.contains("\"_reel\"")),
        "the marker is among the added lines: {out}"
    );
    assert!(err.contains("would be wrapped"), "{err}");

    let (code, _, err) = h.install(&[]);
    assert_eq!(code, Some(0), "{err}");
    let reel_bin = std::fs::canonicalize(env!("CARGO_BIN_EXE_reel")).unwrap();
    for ((file, pointer, name), original) in WRAPPED.iter().zip(&originals) {
        let doc = h.json(file);
        let entry = doc.pointer(pointer).unwrap();
        let command = PathBuf::from(entry["command"].as_str().unwrap());
        assert_eq!(
            std::fs::canonicalize(&command).unwrap(),
            reel_bin,
            "{file}{pointer}"
        );
        let args: Vec<&str> = entry["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(
            args[..4],
            [
                "rec",
                "--dir",
                h.traces.to_str().unwrap(),
                &format!("--name={name}")
            ]
        );
        let dashes = args.iter().position(|a| *a == "--").unwrap();
        assert!(Path::new(args[dashes + 1]).is_absolute(), "{args:?}");
        assert!(args[dashes + 1].ends_with("/node"), "{args:?}");
        let orig_args = original["args"].as_array().cloned().unwrap_or_default();
        let expect: Vec<&str> = orig_args.iter().map(|a| a.as_str().unwrap()).collect();
        assert_eq!(args[dashes + 2..], expect[..], "{file}{pointer}");
        assert_eq!(&entry["_reel"]["original"], original, "{file}{pointer}");
        for (k, v) in original.as_object().unwrap() {
            if k != "command" && k != "args" {
                assert_eq!(&entry[k], v, "{file}{pointer}: {k} kept");
            }
        }
    }
    // What is not a stdio entry is untouched, and said.
    let cc = h.json("home/.claude.json");
    assert_eq!(cc["numStartups"], 12);
    assert_eq!(
        cc["mcpServers"]["linear"]["url"],
        "https://mcp.linear.invalid/mcp"
    );
    assert!(cc["mcpServers"]["linear"].get("_reel").is_none());
    assert_eq!(
        h.json("home/.config/Claude/claude_desktop_config.json")["mcpServers"]["nocmd"],
        json!({"disabled": true})
    );
    assert!(
        err.contains("claude-code") && err.contains("1 remote left as is"),
        "{err}"
    );
    assert!(err.contains("left as is: deep: a remote server"), "{err}");
    assert!(
        err.contains("left as is: nocmd: it has no command"),
        "{err}"
    );
    let vscode = std::fs::read_to_string(h.home.join(".config/Code/User/mcp.json")).unwrap();
    assert!(vscode.starts_with("// VS Code's MCP servers\n"), "{vscode}");
    assert!(vscode.contains("// the server"), "comments kept: {vscode}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(h.home.join(".claude.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "permissions kept");
    }
    // A backup of each file as it was.
    for (f, b) in h.files().iter().zip(&before) {
        let mut backup = f.as_os_str().to_owned();
        backup.push(".reel-backup");
        assert_eq!(&std::fs::read(&backup).unwrap(), b, "{}", f.display());
    }

    // Again: nothing changes.
    let installed = h.snapshot();
    let (code, _, err) = h.install(&[]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(h.snapshot(), installed, "installing twice changes nothing");
    assert!(err.contains("0 wrapped, 2 already wrapped"), "{err}");

    // Another trace directory: command and args brought up to date, originals kept.
    let elsewhere = h.traces.with_file_name("elsewhere");
    let (code, _, err) = h.reel(&["install", "--dir", elsewhere.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("brought up to date"), "{err}");
    let entry = h.json("home/.cursor/mcp.json")["mcpServers"]["cursor"].clone();
    assert_eq!(entry["args"][2], elsewhere.to_str().unwrap());
    assert_eq!(entry["_reel"]["original"], originals[3]);

    // Uninstall: every byte back, backups gone.
    let (code, _, err) = h.reel(&["uninstall", "--dry-run"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("would be put back"), "{err}");
    let (code, _, err) = h.reel(&["uninstall"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        h.snapshot(),
        before,
        "uninstall gives back the files byte for byte"
    );
    for f in h.files() {
        let mut backup = f.as_os_str().to_owned();
        backup.push(".reel-backup");
        assert!(!Path::new(&backup).exists(), "{}", f.display());
    }
    assert!(err.contains("is as it was; removed"), "{err}");
}

#[test]
fn targets_servers_and_bad_files_are_honoured_and_said() {
    let h = Home::new();
    let before = h.snapshot();
    // One client, one server.
    let (code, _, err) = h.install(&["--target", "cursor", "--server", "cursor"]);
    assert_eq!(code, Some(0), "{err}");
    let after = h.snapshot();
    let changed: Vec<bool> = before.iter().zip(&after).map(|(a, b)| a != b).collect();
    assert_eq!(
        changed,
        [false, false, true, false, false, false, false],
        "{err}"
    );

    // A server no file holds: said, and exit 66.
    let (code, _, err) = h.install(&["--server", "nope"]);
    assert_eq!(code, Some(66), "{err}");
    assert!(err.contains("no server named nope in these files"), "{err}");

    // A file that is not JSON: said with its place, the others still done, exit 66.
    std::fs::write(
        h.home.join(".codeium/windsurf/mcp_config.json"),
        "{\"mcpServers\": {,}}",
    )
    .unwrap();
    let (code, _, err) = h.install(&["--target", "windsurf,gemini-cli"]);
    assert_eq!(code, Some(66), "{err}");
    assert!(
        err.contains("mcp_config.json: not JSON: line 1, column 17"),
        "{err}"
    );
    assert!(
        err.contains("gemini-cli") && err.contains("1 wrapped"),
        "{err}"
    );

    // A symbolic link is followed: its target is edited, the link stays.
    let real = h.home.join("dotfiles/mcp.json");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    let link = h.home.join(".cursor/mcp.json");
    std::fs::rename(&link, &real).unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let (code, _, err) = h.reel(&["uninstall", "--target", "cursor"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(&real).unwrap(), before[2]);

    // Unknown clients and no configuration at all.
    let (code, _, err) = h.reel(&["install", "--target", "emacs"]);
    assert_eq!(code, Some(64), "{err}");
    assert!(
        err.contains("the clients are claude-code, claude-desktop"),
        "{err}"
    );
    let empty = tempfile::tempdir().unwrap();
    let out = reel()
        .args(["install", "--project"])
        .arg(empty.path())
        .env("HOME", empty.path())
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(66), "{err}");
    assert!(
        err.contains("no client configuration found; looked for:"),
        "{err}"
    );
    assert!(
        err.contains(".claude.json") && err.contains("settings.json"),
        "{err}"
    );
}

/// `mcporter list` in the project, with the test's home: (exit, output).
fn mcporter(h: &Home, args: &[&str]) -> (Option<i32>, String) {
    let peers = Peers::get();
    let out = Command::new("node")
        .arg(peers.node_modules.join("mcporter/dist/cli.js"))
        .args(args)
        .current_dir(&h.project)
        .env("HOME", &h.home)
        .env("PATH", "/usr/bin:/bin")
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    (
        out.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

fn traces_named(dir: &Path, name: &str) -> Vec<PathBuf> {
    let suffix = format!("-{name}.jsonl");
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().ends_with(&suffix))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn real_clients_start_the_wrapped_servers_from_their_files_and_every_call_is_recorded() {
    let h = Home::new();
    let (code, _, err) = h.install(&[]);
    assert_eq!(code, Some(0), "{err}");

    // mcporter imports Claude Code's (user and project scopes), Cursor's, VS Code's and
    // Windsurf's configurations and starts each server as they would.
    let (code, out) = mcporter(&h, &["list"]);
    assert_eq!(code, Some(0), "{out}");
    for name in ["claudecode", "cursor", "vscode", "windsurf"] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(&format!("- {name} (13 tools"))),
            "{name}: {out}\nits traces (how reel and the server ended):\n{}",
            traces_named(&h.traces, name)
                .iter()
                .map(|t| std::fs::read_to_string(t).unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n")
        );
        assert!(!traces_named(&h.traces, name).is_empty(), "{name} recorded");
    }
    let (code, out) = mcporter(
        &h,
        &["call", "cursor.echo", "message=recorded-through-cursor"],
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("Echo: recorded-through-cursor"), "{out}");
    let recorded = traces_named(&h.traces, "cursor").iter().any(|t| {
        std::fs::read_to_string(t)
            .unwrap()
            .contains("recorded-through-cursor")
    });
    assert!(recorded, "the call is in a trace");

    // Claude Desktop's and Gemini CLI's entries, started as a client starts them: with
    // a client's reduced PATH and from the root directory.
    for (file, name) in [
        (".config/Claude/claude_desktop_config.json", "desktop"),
        (".gemini/settings.json", "gemini"),
    ] {
        let out = Command::new(Peers::get().python)
            .arg(Peers::script("config_client.py"))
            .arg(h.home.join(file))
            .args(["mcpServers", name])
            .current_dir("/")
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &h.home)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{name}: {said}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_str(said.trim()).unwrap();
        assert_eq!(v["tools"], 13);
        assert_eq!(v["echo"], "Echo: through the client's config");
        let traces = traces_named(&h.traces, name);
        assert_eq!(traces.len(), 1, "{name}");
        let check = reel().arg("check").arg(&traces[0]).output().unwrap();
        assert!(
            check.status.success(),
            "{}",
            String::from_utf8_lossy(&check.stdout)
        );
    }
}

#[test]
fn a_script_whose_interpreter_is_not_on_the_clients_path_runs_with_path_first() {
    // A server installed where a client's reduced PATH does not look (nvm, a user's
    // bin): `#!/usr/bin/env my-node` finds its interpreter through --path-first.
    let h = Home::new();
    let bin = h.home.join(".local/node/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let node = Command::new("sh")
        .args(["-c", "command -v node"])
        .output()
        .unwrap();
    let node = String::from_utf8_lossy(&node.stdout).trim().to_owned();
    std::os::unix::fs::symlink(&node, bin.join("my-node")).unwrap();
    let server = bin.join("everything-server");
    std::fs::write(
        &server,
        format!(
            "#!/usr/bin/env my-node\nprocess.argv.splice(2, 0, 'stdio');\nimport({:?});\n",
            format!("file://{}", everything())
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = h.home.join(".gemini/settings.json");
    std::fs::write(
        &config,
        r#"{"mcpServers": {"scripted": {"command": "everything-server"}}}"#,
    )
    .unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let mut c = reel();
    c.args(["install", "--target", "gemini-cli", "--dir"])
        .arg(&h.traces)
        .arg("--project")
        .arg(&h.project)
        .env("HOME", &h.home)
        .env("PATH", &path);
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let entry: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    let args = entry["mcpServers"]["scripted"]["args"].to_string();
    assert!(
        args.contains(&format!("\"--path-first\",\"{}\"", bin.display())),
        "{args}"
    );

    let out = Command::new(Peers::get().python)
        .arg(Peers::script("config_client.py"))
        .arg(&config)
        .args(["mcpServers", "scripted"])
        .current_dir("/")
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(traces_named(&h.traces, "scripted").len(), 1);
}
