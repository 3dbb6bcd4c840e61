//! A bare stdio relay: starts `CMD…` and copies the client's stdin to its stdin and its
//! stdout to the client's stdout, recording nothing.
//!
//! It is the `reel rec` bench's ceiling: the least any stdio proxy process has to do
//! (one read and one write per chunk on each pipe, one extra process in the path), done
//! the way reel does it (one thread per direction, 1 MiB reads, the server's pipes
//! widened to 1 MiB). What reel spends beyond it is the recording.
//!
//! With `--tee FILE` it also appends every chunk to FILE (one `write` per chunk, both
//! directions under one lock) before forwarding it: the floor of a recorder that
//! keeps every forwarded byte on disk before the peer sees it, as `reel rec` does,
//! with none of the per-line work (no framing, parsing, redaction or formatting).
//!
//! `--tee-mapped FILE` does the same through a shared mapping of FILE (a `memcpy` per
//! chunk, no system call; the kernel keeps the pages whatever becomes of the process):
//! what is left of that floor without a system call per line. Up to 4 GiB are kept;
//! the file is cut to what was written at the end.
//!
//! Usage: `relay [--tee FILE | --tee-mapped FILE] CMD…`. Exits with the command's exit
//! code.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

const CHUNK: usize = 1024 * 1024;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let tee = match args.first().map(String::as_str) {
        Some(flag @ ("--tee" | "--tee-mapped")) if args.len() > 2 => {
            let mapped = flag == "--tee-mapped";
            let path = args.drain(..2).nth(1).unwrap_or_default();
            let sink = Tee::open(&path, mapped).unwrap_or_else(|e| {
                eprintln!("relay: cannot open {path}: {e}");
                std::process::exit(2);
            });
            Some(Arc::new(Mutex::new(sink)))
        }
        _ => None,
    };
    let Some((cmd, rest)) = args.split_first() else {
        eprintln!("relay: usage: relay [--tee FILE] CMD…");
        std::process::exit(2);
    };
    let mut child = Command::new(cmd)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            eprintln!("relay: cannot start {cmd}: {e}");
            std::process::exit(2);
        });
    let to_child = child.stdin.take().expect("piped stdin");
    let from_child = child.stdout.take().expect("piped stdout");
    widen(to_child.as_raw_fd());
    widen(from_child.as_raw_fd());

    // Unbuffered, as reel reads and writes its own stdin and stdout.
    // SAFETY: descriptors 0 and 1 are open for the life of the process and each is used
    // by this one `File` only.
    let (stdin, stdout) = unsafe { (File::from_raw_fd(0), File::from_raw_fd(1)) };
    let tee_in = tee.clone();
    let tee_end = tee.clone();
    std::thread::spawn(move || copy(stdin, to_child, tee_in.as_deref()));
    let out = std::thread::spawn(move || copy(from_child, stdout, tee.as_deref()));
    let status = child.wait().expect("wait for the command");
    let _ = out.join();
    if let Some(tee) = tee_end {
        tee.lock().unwrap_or_else(|e| e.into_inner()).finish();
    }
    std::process::exit(status.code().unwrap_or(1));
}

/// Where `--tee` keeps what is forwarded.
enum Tee {
    /// A `write` per chunk.
    Write(File),
    /// A `memcpy` per chunk into a shared mapping of the file.
    Mapped { file: File, map: *mut u8, at: usize },
}

// SAFETY: the mapping is only touched under the `Mutex` that owns the `Tee`.
unsafe impl Send for Tee {}

/// How much of the file `--tee-mapped` maps (sparse until written).
const MAPPED: usize = 4 << 30;

impl Tee {
    fn open(path: &str, mapped: bool) -> std::io::Result<Tee> {
        let mut options = std::fs::OpenOptions::new();
        options.create(true);
        if !mapped {
            return Ok(Tee::Write(options.append(true).open(path)?));
        }
        let file = options.read(true).write(true).truncate(true).open(path)?;
        file.set_len(MAPPED as u64)?;
        // SAFETY: a fresh shared mapping of a file this process owns, of its length.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                MAPPED,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Tee::Mapped {
            file,
            map: map.cast(),
            at: 0,
        })
    }

    fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Tee::Write(file) => file.write_all(bytes),
            Tee::Mapped { map, at, .. } => {
                if *at + bytes.len() > MAPPED {
                    return Err(std::io::Error::other("the mapping is full"));
                }
                // SAFETY: `at + len` is within the mapping, which nothing else aliases.
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), map.add(*at), bytes.len()) };
                *at += bytes.len();
                Ok(())
            }
        }
    }

    /// Cuts a mapped file to what was written.
    fn finish(&mut self) {
        if let Tee::Mapped { file, at, .. } = self {
            let _ = file.set_len(*at as u64);
        }
    }
}

/// Copies chunk by chunk, each written out at once (to `tee` first), until EOF or an
/// error.
fn copy(mut src: impl Read, mut dst: impl Write, tee: Option<&Mutex<Tee>>) {
    let mut buf = vec![0u8; CHUNK];
    loop {
        match src.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if let Some(file) = tee {
                    let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
                    if file.write(&buf[..n]).is_err() {
                        return;
                    }
                }
                if dst.write_all(&buf[..n]).and_then(|()| dst.flush()).is_err() {
                    return;
                }
            }
        }
    }
}

/// Widens a pipe to 1 MiB, as reel does for the server's pipes.
fn widen(fd: std::os::fd::RawFd) {
    // SAFETY: fcntl on a descriptor this process owns; failure leaves the pipe as it was.
    unsafe {
        libc::fcntl(fd, libc::F_SETPIPE_SZ, 1024 * 1024);
    }
}
