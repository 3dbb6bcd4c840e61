//! Network pieces shared by the HTTP test harnesses (`rec_http/harness.rs` and
//! `play_http_support.rs`): free
//! loopback ports, servers killed on drop, and the raw HTTP/1.1 client's wire work —
//! a request written exactly as given, a response head and a chunked body read back.
//! Each harness builds its own response type on these.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a server may take to come up, and a raw read to get what it waits for.
pub const NET_LIMIT: Duration = Duration::from_secs(30);

/// A free loopback port (bound, then released: the server that uses it binds it next).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Waits until something accepts connections on `port`.
pub fn wait_port(port: u16) {
    let deadline = Instant::now() + NET_LIMIT;
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on port {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A child process (a peer server) killed on drop, however the test ends.
pub struct Server(pub Child);

impl Server {
    /// Starts `cmd` (its output discarded) and waits for `port` to accept connections.
    pub fn start(mut cmd: Command, port: u16) -> Server {
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the server");
        let s = Server(child);
        wait_port(port);
        s
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A started `reel play --listen` or `reel rec --url`: the URL of its one
/// `reel: listening on URL` line, and its stderr as collected so far.
pub struct Listening {
    pub child: Child,
    pub url: String,
    pub stderr: Arc<Mutex<String>>,
    /// Collects stderr until reel closes it.
    pub reader: JoinHandle<()>,
}

/// Starts `cmd` with stderr piped and waits for its listening line, failing with what
/// it said after [`NET_LIMIT`].
pub fn spawn_listening(mut cmd: Command) -> Listening {
    cmd.stdin(Stdio::null());
    spawn_announcing(cmd, "reel: listening on ")
}

/// Starts `cmd` (its stdin as the caller set it; stdout discarded, stderr piped) and
/// waits for the stderr line that starts with `prefix`: the rest of it is the URL.
pub fn spawn_announcing(mut cmd: Command, prefix: &'static str) -> Listening {
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start reel");
    let stderr = child.stderr.take().expect("piped stderr");
    let text = Arc::new(Mutex::new(String::new()));
    let (tx, rx) = mpsc::channel();
    let reader = {
        let text = Arc::clone(&text);
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.strip_prefix(prefix) {
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(url.to_owned());
                    }
                }
                let mut t = text.lock().unwrap();
                t.push_str(&line);
                t.push('\n');
            }
        })
    };
    let url = rx.recv_timeout(NET_LIMIT).unwrap_or_else(|_| {
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "reel printed no `{prefix}` line; stderr: {}",
            text.lock().unwrap()
        )
    });
    Listening {
        child,
        url,
        stderr: text,
        reader,
    }
}

/// Sends one request: the head exactly as given, plus `Content-Length` for a body (and
/// for any POST); returns the connection, positioned at the response.
pub fn write_request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> BufReader<TcpStream> {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(NET_LIMIT)).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        head.push_str(&format!("content-length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    BufReader::new(s)
}

/// Reads a response's status line and header lines (names lowercased, in order).
pub fn read_status_and_headers(r: &mut impl BufRead) -> (u16, Vec<(String, String)>) {
    let mut line = String::new();
    r.read_line(&mut line).expect("status line");
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {line:?}"));
    (status, read_headers(r).expect("headers"))
}

/// Reads header lines up to the blank line; `None` at EOF or on a malformed line.
pub fn read_headers(r: &mut impl BufRead) -> Option<Vec<(String, String)>> {
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            return Some(headers);
        }
        let (k, v) = line.split_once(':')?;
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
    }
}

/// Reads one chunk of a chunked body; `None` at its end (or when the connection
/// breaks off).
pub fn read_chunk(r: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut size = String::new();
    if r.read_line(&mut size).ok()? == 0 {
        return None;
    }
    let n = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
    let mut chunk = vec![0; n + 2];
    r.read_exact(&mut chunk).ok()?;
    (n > 0).then(|| {
        chunk.truncate(n);
        chunk
    })
}

/// Reads a whole chunked body; `None` when the connection breaks off before its end.
pub fn read_chunked(r: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        r.read_line(&mut size).ok()?;
        let n = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
        let mut chunk = vec![0; n + 2];
        r.read_exact(&mut chunk).ok()?;
        if n == 0 {
            return Some(body);
        }
        body.extend_from_slice(&chunk[..n]);
    }
}
