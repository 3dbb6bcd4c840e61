//! A small synchronous W3C WebDriver client, so the viewer's tests can drive a real
//! headless Chromium: load a page, wait for what the app renders, click, run a script,
//! read the console, keep a screenshot.
//!
//! It speaks HTTP/1.1 to chromedriver over a plain `TcpStream`, one connection per
//! command (`Connection: close`; chromedriver answers with a `Content-Length` body), with
//! JSON through serde_json: no WebDriver crate, no async runtime. Chromium and
//! chromedriver are Debian's (`/usr/bin/chromium`, `/usr/bin/chromedriver`), installed by
//! `cargo xtask peers`. Every [`Browser`] has a chromedriver of its own on a free port and
//! a fresh profile directory; dropping it ends the session, kills chromedriver and removes
//! the profile, however the test ends. A WebDriver error panics with the command, the
//! error and its message: a test that drives a browser has nothing better to do with one.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// The key under which WebDriver hands out an element reference.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";
/// How long chromedriver may take to come up, and one command to answer.
const COMMAND_LIMIT: Duration = Duration::from_secs(60);
/// How often the `wait*` functions look again.
const POLL: Duration = Duration::from_millis(50);

/// Where screenshots are kept: `$REEL_ARTEFACTS`, else `<workspace>/target/artefacts/view`.
pub fn artefact_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("REEL_ARTEFACTS").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = manifest.parent().and_then(Path::parent).unwrap_or(manifest);
    workspace.join("target/artefacts/view")
}

/// A headless Chromium session behind a chromedriver of its own.
pub struct Browser {
    driver: Child,
    port: u16,
    session: String,
    /// The Chromium profile and chromedriver's log; removed on drop, after the kill.
    profile: tempfile::TempDir,
}

impl Browser {
    /// Starts chromedriver on a free port and a headless Chromium session in a fresh
    /// profile, with every browser console entry logged. Panics, naming `cargo xtask
    /// peers`, when chromedriver or Chromium is not installed.
    pub fn start() -> Browser {
        for file in [CHROMIUM, CHROMEDRIVER] {
            assert!(
                Path::new(file).exists(),
                "{file} is missing: the viewer's browser tests need Debian's chromium and \
                 chromium-driver (`cargo xtask peers` installs them)"
            );
        }
        let profile = tempfile::tempdir().expect("a temporary Chromium profile directory");
        let log = profile.path().join("chromedriver.log");
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .arg(format!("--log-path={}", log.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {CHROMEDRIVER}: {e}"));
        let mut browser = Browser {
            driver,
            port,
            session: String::new(),
            profile,
        };
        browser.wait_ready(&log);
        let user_data = browser.profile.path().join("chromium");
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": [
                    "--headless=new",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-dev-shm-usage",
                    "--window-size=1280,900",
                    format!("--user-data-dir={}", user_data.display()),
                ],
            },
            "goog:loggingPrefs": {"browser": "ALL"},
        }}});
        let created = browser.command("POST", "/session", Some(capabilities));
        browser.session = created["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("POST /session answered without a sessionId: {created}"))
            .to_owned();
        browser
    }

    /// Waits until chromedriver says it is ready; panics with its log when it does not.
    fn wait_ready(&mut self, log: &Path) {
        let deadline = Instant::now() + COMMAND_LIMIT;
        loop {
            if let Ok(answer) = self.request("GET", "/status", None)
                && answer["value"]["ready"] == true
            {
                return;
            }
            let exited = self.driver.try_wait().ok().flatten();
            if exited.is_some() || Instant::now() > deadline {
                let log = std::fs::read_to_string(log).unwrap_or_default();
                panic!(
                    "chromedriver on port {} did not become ready (exit: {exited:?}); its log:\n{log}",
                    self.port
                );
            }
            std::thread::sleep(POLL);
        }
    }

    /// Opens `url` and waits for its load event.
    pub fn goto(&self, url: &str) {
        self.session_command("POST", "/url", Some(json!({ "url": url })));
    }

    /// The current page's URL.
    pub fn url(&self) -> String {
        string(self.session_command("GET", "/url", None))
    }

    /// Waits up to `timeout` for an element matching `css`; panics naming the selector and
    /// showing the page's text when none appears.
    pub fn wait(&self, css: &str, timeout: Duration) -> Element<'_> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(found) = self.find_all(css).into_iter().next() {
                return found;
            }
            if Instant::now() > deadline {
                panic!(
                    "no element matches `{css}` after {timeout:?} on {}; the page's text:\n{}",
                    self.url(),
                    self.page_text()
                );
            }
            std::thread::sleep(POLL);
        }
    }

    /// Every element matching `css`, in document order.
    pub fn find_all(&self, css: &str) -> Vec<Element<'_>> {
        let found = self.session_command("POST", "/elements", Some(by_css(css)));
        self.elements(found)
    }

    /// Runs `script` (a function body: `return …`) until it returns a truthy value, for
    /// up to `timeout`, and returns that value; panics with the last value on timeout.
    pub fn wait_until(&self, script: &str, timeout: Duration) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            let value = self.exec(script, &[]);
            if truthy(&value) {
                return value;
            }
            if Instant::now() > deadline {
                panic!(
                    "`{script}` is still {value} after {timeout:?}; the page's text:\n{}",
                    self.page_text()
                );
            }
            std::thread::sleep(POLL);
        }
    }

    /// Runs `script` (a function body; `arguments[i]` are `args`) and returns its value.
    pub fn exec(&self, script: &str, args: &[Value]) -> Value {
        let body = json!({ "script": script, "args": args });
        self.session_command("POST", "/execute/sync", Some(body))
    }

    /// Writes a PNG screenshot of the viewport to `path`, creating its parent directories.
    pub fn screenshot(&self, path: &Path) {
        let encoded = string(self.session_command("GET", "/screenshot", None));
        let png = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .expect("the screenshot is base64");
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", parent.display()));
        }
        std::fs::write(path, png)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    }

    /// The messages of the browser console's `SEVERE` entries (`console.error`, uncaught
    /// exceptions, failed loads, CSP violations) logged since the last call.
    pub fn console_errors(&self) -> Vec<String> {
        let body = json!({ "type": "browser" });
        let entries = self.session_command("POST", "/se/log", Some(body));
        let entries = entries.as_array().cloned().unwrap_or_default();
        entries
            .iter()
            .filter(|entry| entry["level"] == "SEVERE")
            .filter_map(|entry| entry["message"].as_str().map(str::to_owned))
            .collect()
    }

    /// The page's visible text, for failure messages.
    fn page_text(&self) -> String {
        let script =
            "return document.body ? document.body.innerText : document.documentElement.outerHTML";
        string(self.exec(script, &[]))
    }

    fn elements(&self, found: Value) -> Vec<Element<'_>> {
        let found = found.as_array().cloned().unwrap_or_default();
        found
            .iter()
            .map(|reference| Element {
                browser: self,
                id: string(reference[ELEMENT_KEY].clone()),
            })
            .collect()
    }

    /// A command on this session: `path` is relative to `/session/{id}`.
    fn session_command(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let path = format!("/session/{}{path}", self.session);
        self.command(method, &path, body)
    }

    /// Sends one command and returns its `value`; panics on a WebDriver error.
    fn command(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let answer = self
            .request(method, path, body)
            .unwrap_or_else(|e| panic!("{method} {path}: chromedriver did not answer: {e}"));
        let value = &answer["value"];
        if let Some(error) = value.get("error").and_then(Value::as_str) {
            let message = value["message"].as_str().unwrap_or("");
            panic!("{method} {path} failed: {error}: {message}");
        }
        value.clone()
    }

    /// One HTTP/1.1 exchange with chromedriver: the answer's JSON body, whatever the status
    /// (WebDriver errors come as JSON with a 4xx or 5xx status).
    fn request(&self, method: &str, path: &str, body: Option<Value>) -> std::io::Result<Value> {
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let mut stream = TcpStream::connect(("127.0.0.1", self.port))?;
        stream.set_read_timeout(Some(COMMAND_LIMIT))?;
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n",
            self.port,
            body.len()
        );
        stream.write_all(head.as_bytes())?;
        stream.write_all(body.as_bytes())?;
        let mut reader = BufReader::new(stream);
        let mut length = None;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            // chromedriver writes `Content-Length:46`, without the space.
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse::<usize>().ok();
            }
        }
        let mut bytes = Vec::new();
        match length {
            Some(n) => {
                bytes.resize(n, 0);
                reader.read_exact(&mut bytes)?;
            }
            None => {
                reader.read_to_end(&mut bytes)?;
            }
        }
        serde_json::from_slice(&bytes).map_err(std::io::Error::other)
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let path = format!("/session/{}", self.session);
            let _ = self.request("DELETE", &path, None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        // `profile` is removed when the fields drop, after chromedriver and Chromium ended.
    }
}

/// An element of the page a [`Browser`] shows.
pub struct Element<'b> {
    browser: &'b Browser,
    id: String,
}

impl Element<'_> {
    /// Its rendered text, as a reader sees it.
    pub fn text(&self) -> String {
        string(self.command("GET", "/text", None))
    }

    /// Clicks it (scrolled to the middle of the viewport first, as a user would, so
    /// a sticky header does not take the click).
    pub fn click(&self) {
        let reference = json!({ ELEMENT_KEY: self.id });
        self.browser.exec(
            "arguments[0].scrollIntoView({block: 'center', inline: 'nearest'})",
            &[reference],
        );
        self.command("POST", "/click", Some(json!({})));
    }

    /// The value of its attribute `name`, `None` when it has none.
    pub fn attr(&self, name: &str) -> Option<String> {
        assert!(
            name.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_:".contains(&b)),
            "attribute name `{name}` would need escaping in a URL"
        );
        let value = self.command("GET", &format!("/attribute/{name}"), None);
        value.as_str().map(str::to_owned)
    }

    /// Every element inside it matching `css`, in document order.
    pub fn find_all(&self, css: &str) -> Vec<Element<'_>> {
        let found = self.command("POST", "/elements", Some(by_css(css)));
        self.browser.elements(found)
    }

    fn command(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let path = format!("/element/{}{path}", self.id);
        self.browser.session_command(method, &path, body)
    }
}

fn by_css(css: &str) -> Value {
    json!({ "using": "css selector", "value": css })
}

/// A string the protocol promised; panics when it sent something else.
fn string(value: Value) -> String {
    match value {
        Value::String(s) => s,
        other => panic!("WebDriver sent {other} where a string was expected"),
    }
}

/// JavaScript's truthiness, for values that came back as JSON.
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// Serves `/` (a page loading `/app.js` as a module) and `/app.js` from a loopback
/// listener on a thread of its own; returns the page's URL. Test-only.
fn serve_probe_page() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback listener");
    let port = listener.local_addr().expect("its address").port();
    std::thread::spawn(move || {
        // A thread per connection: Chromium may open one it sends nothing on.
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || answer_probe_request(stream));
        }
    });
    format!("http://127.0.0.1:{port}/")
}

fn answer_probe_request(stream: TcpStream) {
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut header = String::new();
    while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
        header.clear();
    }
    let (kind, body) = if request_line.starts_with("GET /app.js ") {
        (
            "text/javascript",
            concat!(
                "document.body.dataset.ok = \"1\";\n",
                "console.error(\"boom\");\n",
                "document.querySelector(\"p\").onclick = () => { document.body.dataset.clicked = \"yes\"; };\n",
            ),
        )
    } else {
        (
            "text/html; charset=utf-8",
            "<!doctype html><title>probe</title><p>probe page</p>\
             <script type=\"module\" src=\"/app.js\"></script>",
        )
    };
    let answer = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = reader.get_mut().write_all(answer.as_bytes());
}

#[test]
fn the_browser_runs_a_module_and_reports_console_errors() {
    let url = serve_probe_page();
    let browser = Browser::start();
    browser.goto(&url);
    assert_eq!(browser.url(), url);
    let body = browser.wait("[data-ok=\"1\"]", Duration::from_secs(20));
    assert_eq!(body.attr("data-ok").as_deref(), Some("1"));
    assert_eq!(body.find_all("p").len(), 1);
    assert_eq!(body.find_all("p")[0].text(), "probe page");
    body.find_all("p")[0].click();
    let clicked = browser.wait_until(
        "return document.body.dataset.clicked",
        Duration::from_secs(5),
    );
    assert_eq!(clicked, "yes");
    let sum = browser.exec("return arguments[0] + arguments[1]", &[json!(2), json!(3)]);
    assert_eq!(sum, 5);
    let errors = browser.console_errors();
    assert!(
        errors.iter().any(|m| m.contains("boom")),
        "console.error(\"boom\") is not among the console errors: {errors:?}"
    );
    assert_eq!(browser.console_errors(), Vec::<String>::new(), "read twice");
    let shot = artefact_dir().join("webdriver-probe.png");
    let _ = std::fs::remove_file(&shot);
    browser.screenshot(&shot);
    let png = std::fs::read(&shot).expect("the screenshot was written");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG: {shot:?}");
}

#[test]
#[should_panic(expected = "no element matches `#absent` after 200ms")]
fn a_wait_that_times_out_names_the_selector() {
    let url = serve_probe_page();
    let browser = Browser::start();
    browser.goto(&url);
    browser.wait("#absent", Duration::from_millis(200));
}

#[test]
#[should_panic(expected = "/elements failed: invalid selector: ")]
fn a_webdriver_error_names_the_command_and_the_error() {
    let browser = Browser::start();
    browser.goto("about:blank");
    browser.find_all("[[");
}
