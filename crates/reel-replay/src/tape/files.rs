//! The trace's files open for positioned reads: an answer is re-read from the tape when
//! it is sent, never kept in memory.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use reel_trace::OpenError;

use super::types::LineLoc;

/// The trace's files, open for positioned reads.
pub struct TapeFiles {
    paths: Vec<PathBuf>,
    files: Vec<File>,
}

impl TapeFiles {
    /// Opens the trace at `path` with its rotated companions (the same files, in the same
    /// order, as the reader [`super::index`] uses).
    pub fn open(path: &Path) -> Result<TapeFiles, OpenError> {
        let paths = reel_trace::reader::trace_files(path);
        let mut files = Vec::with_capacity(paths.len());
        for p in &paths {
            // Before opening: opening a FIFO waits for a writer. A pipe would be read
            // by each of the several readers of the tape, each getting a part of it.
            match std::fs::metadata(p) {
                Ok(m) if m.is_dir() => return Err(OpenError::IsDirectory { path: p.clone() }),
                Ok(m) if !m.is_file() => return Err(OpenError::NotAFile { path: p.clone() }),
                _ => {}
            }
            let f = File::open(p).map_err(|e| match e.kind() {
                io::ErrorKind::NotFound => OpenError::NotFound { path: p.clone() },
                _ => OpenError::Io {
                    path: p.clone(),
                    source: e,
                },
            })?;
            if f.metadata().is_ok_and(|m| m.is_dir()) {
                return Err(OpenError::IsDirectory { path: p.clone() });
            }
            files.push(f);
        }
        if let (Some(f), Some(p)) = (files.first(), paths.first()) {
            looks_like_a_trace(f, p)?;
        }
        Ok(TapeFiles { paths, files })
    }

    /// Reads `len` bytes at `start` of the line at `loc` into `buf`.
    pub fn read_span(
        &self,
        loc: LineLoc,
        start: u32,
        len: u32,
        buf: &mut Vec<u8>,
    ) -> io::Result<()> {
        if u64::from(start) + u64::from(len) > u64::from(loc.len) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "span outside the line",
            ));
        }
        let f = self
            .files
            .get(loc.file as usize)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no such tape file"))?;
        buf.clear();
        buf.resize(len as usize, 0);
        read_exact_at(f, buf, loc.offset + u64::from(start))
    }

    /// Reads the line at `loc` into `buf` (replacing its content).
    pub fn read(&self, loc: LineLoc, buf: &mut Vec<u8>) -> io::Result<()> {
        let f = self
            .files
            .get(loc.file as usize)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no such tape file"))?;
        buf.clear();
        buf.resize(loc.len as usize, 0);
        read_exact_at(f, buf, loc.offset)
    }

    /// `path:line` of a location, for messages.
    pub fn location(&self, loc: LineLoc) -> String {
        match self.paths.get(loc.file as usize) {
            Some(p) => format!("{}:{}", p.display(), loc.line),
            None => format!("?:{}", loc.line),
        }
    }
}

#[cfg(unix)]
fn read_exact_at(f: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(f, buf, offset)
}

/// Refuses a file that cannot be a trace before anything is served from it: an empty
/// one, or one whose first line does not start a JSON object (a README, a binary, the
/// wrong argument), which would otherwise be served as an empty tape.
fn looks_like_a_trace(f: &File, path: &Path) -> Result<(), OpenError> {
    let mut head = [0u8; 4096];
    let mut len = 0;
    while len < head.len() {
        match read_at(f, &mut head[len..], len as u64) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(source) => {
                return Err(OpenError::Io {
                    path: path.to_owned(),
                    source,
                });
            }
        }
    }
    let head = &head[..len];
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let problem = match head.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => return Ok(()),
        // Whitespace only, so far: a meta line comes after a long run of blank lines?
        // Leave that to the reader's warnings.
        None if len == 4096 => return Ok(()),
        None => "the file is empty",
        Some(_) => "the first line is not a JSON object",
    };
    Err(OpenError::NotATrace {
        path: path.to_owned(),
        problem,
    })
}

#[cfg(unix)]
fn read_at(f: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(f, buf, offset)
}

#[cfg(windows)]
fn read_at(f: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(f, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(f: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match f.seek_read(buf, offset)? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}
