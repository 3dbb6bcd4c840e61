//! Harness for the `reel rec --url` tests: the built binary as a running proxy (the one
//! player, started by [`proxy`]), a scripted upstream of our own whose every move the test controls, a raw HTTP/1.1
//! client, and servers that are killed when a test ends, however it ends.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::harness::player::Player;
use crate::harness::rec_support::{Session, reel};

/// How long a raw read waits for what it expects.
pub const READ_LIMIT: Duration = Duration::from_secs(20);

pub use crate::harness::net::{Server, free_port};

/// Starts `reel rec --dir <session dir> --url <upstream> <flags>` in the session and
/// waits for its listening line.
pub fn proxy(s: &Session, upstream: &str, flags: &[&str]) -> Player {
    let mut cmd = reel();
    cmd.arg("rec")
        .arg("--dir")
        .arg(s.dir())
        .arg("--url")
        .arg(upstream)
        .args(flags)
        .current_dir(s.sb.dir());
    Player::listening(cmd)
}

/// A request our scripted upstream received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    /// Lower-case names, in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the scripted upstream answers.
pub enum Answer {
    /// A complete response (`Content-Length`), the connection kept open.
    Full {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// A response written chunk by chunk as the test hands chunks over, ended (and the
    /// connection closed) when the sender is dropped.
    Stream {
        status: u16,
        headers: Vec<(String, String)>,
        chunks: Receiver<Vec<u8>>,
    },
}

impl Answer {
    pub fn json(status: u16, body: &str) -> Answer {
        Answer::Full {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.as_bytes().to_vec(),
        }
    }
}

type Handler = Arc<dyn Fn(&Seen) -> Answer + Send + Sync>;

/// An HTTP/1.1 server on loopback whose answers the test scripts.
pub struct Upstream {
    pub port: u16,
    pub seen: Arc<Mutex<Vec<Seen>>>,
}

impl Upstream {
    pub fn start(handler: impl Fn(&Seen) -> Answer + Send + Sync + 'static) -> Upstream {
        Upstream::start_on(0, handler)
    }

    /// The same, on a given port.
    pub fn start_on(
        port: u16,
        handler: impl Fn(&Seen) -> Answer + Send + Sync + 'static,
    ) -> Upstream {
        let listener = TcpListener::bind(("127.0.0.1", port)).expect("bind the upstream");
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let handler: Handler = Arc::new(handler);
        {
            let seen = Arc::clone(&seen);
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    let Ok(stream) = stream else { continue };
                    let seen = Arc::clone(&seen);
                    let handler = Arc::clone(&handler);
                    std::thread::spawn(move || serve_connection(stream, &seen, &handler));
                }
            });
        }
        Upstream { port, seen }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn serve_connection(stream: TcpStream, seen: &Mutex<Vec<Seen>>, handler: &Handler) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone the stream"));
    let mut out = stream;
    loop {
        let Some(req) = read_request(&mut reader) else {
            return;
        };
        seen.lock().unwrap().push(req.clone());
        match handler(&req) {
            Answer::Full {
                status,
                headers,
                body,
            } => {
                let mut head = format!("HTTP/1.1 {status} X\r\ncontent-length: {}\r\n", body.len());
                for (k, v) in headers {
                    head.push_str(&format!("{k}: {v}\r\n"));
                }
                head.push_str("\r\n");
                if out.write_all(head.as_bytes()).is_err() || out.write_all(&body).is_err() {
                    return;
                }
            }
            Answer::Stream {
                status,
                headers,
                chunks,
            } => {
                let mut head = format!("HTTP/1.1 {status} X\r\nconnection: close\r\n");
                for (k, v) in headers {
                    head.push_str(&format!("{k}: {v}\r\n"));
                }
                head.push_str("\r\n");
                if out.write_all(head.as_bytes()).is_err() {
                    return;
                }
                for chunk in chunks {
                    if out.write_all(&chunk).and_then(|()| out.flush()).is_err() {
                        return;
                    }
                }
                return;
            }
        }
    }
}

fn read_request(r: &mut BufReader<TcpStream>) -> Option<Seen> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let headers = crate::harness::net::read_headers(r)?;
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        crate::harness::net::read_chunked(r)?
    } else {
        let len: usize = headers
            .iter()
            .find(|(k, _)| k == "content-length")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; len];
        r.read_exact(&mut body).ok()?;
        body
    };
    Some(Seen {
        method,
        path,
        headers,
        body,
    })
}

/// A response read by the raw client.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    pub headers: HashMap<String, Vec<String>>,
    pub body: Vec<u8>,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(name)
            .and_then(|v| v.first())
            .map(String::as_str)
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends one request (the head written as given, `Content-Length` added for a body)
/// and returns the connection, positioned at the response.
pub fn send(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> BufReader<TcpStream> {
    let r = crate::harness::net::write_request(addr, method, path, headers, body);
    r.get_ref().set_read_timeout(Some(READ_LIMIT)).unwrap();
    r
}

/// Reads a response's status line and headers.
pub fn read_head(r: &mut BufReader<TcpStream>) -> (u16, HashMap<String, Vec<String>>) {
    let (status, lines) = crate::harness::net::read_status_and_headers(r);
    let mut headers: HashMap<String, Vec<String>> = HashMap::new();
    for (k, v) in lines {
        headers.entry(k).or_default().push(v);
    }
    (status, headers)
}

/// Reads a whole response (`Content-Length` or chunked).
pub fn read_response(mut r: BufReader<TcpStream>) -> RawResponse {
    let (status, headers) = read_head(&mut r);
    let chunked = headers
        .get("transfer-encoding")
        .is_some_and(|v| v.iter().any(|v| v.contains("chunked")));
    let body = if chunked {
        crate::harness::net::read_chunked(&mut r).expect("a chunked body")
    } else if let Some(len) = headers
        .get("content-length")
        .and_then(|v| v.first())
        .and_then(|v| v.parse::<usize>().ok())
    {
        let mut b = vec![0; len];
        r.read_exact(&mut b).expect("the body");
        b
    } else {
        let mut b = Vec::new();
        let _ = r.read_to_end(&mut b);
        b
    };
    RawResponse {
        status,
        headers,
        body,
    }
}

/// One request, its whole response.
pub fn request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> RawResponse {
    read_response(send(addr, method, path, headers, body))
}

/// Reads raw bytes until `needle` has arrived (or fails after [`READ_LIMIT`]).
pub fn read_until(r: &mut BufReader<TcpStream>, needle: &str, so_far: &mut Vec<u8>) {
    let deadline = Instant::now() + READ_LIMIT;
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(so_far).contains(needle) {
        assert!(
            Instant::now() < deadline,
            "{needle:?} did not arrive; got {:?}",
            String::from_utf8_lossy(so_far)
        );
        match r.read(&mut buf) {
            Ok(0) => panic!(
                "the connection closed before {needle:?}; got {:?}",
                String::from_utf8_lossy(so_far)
            ),
            Ok(n) => so_far.extend_from_slice(&buf[..n]),
            Err(e) => panic!("read failed before {needle:?}: {e}"),
        }
    }
}
