//! Where a producer's trace goes: a new file in the trace directory (or any writer),
//! with its seal beside it when asked for, and the trace writer over it with the meta
//! line already written. Every producer that records live traffic (`reel rec` over
//! stdio and HTTP, `reel llm`) starts its trace here, so every trace file is named,
//! created, sealed and cleaned up the same way.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::seal::{LiveSeal, SealKey, Sealer, create_sidecar};
use crate::writer::{WholeLinesFile, create_trace_file};
use crate::{Meta, Timestamp, TraceWriter, names};

/// Why a trace could not be started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TargetError {
    /// The trace directory cannot be created.
    #[error("cannot create the trace directory {}: {source} (choose another with --dir or REEL_DIR)", dir.display())]
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The trace file cannot be created.
    #[error("cannot create a trace file in {}: {source} (choose another directory with --dir or REEL_DIR)", dir.display())]
    CreateTrace {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The file a caller named (`-o FILE`) cannot be created; an existing one is never
    /// overwritten.
    #[error("cannot create {}: {source} (an existing file is not overwritten)", path.display())]
    CreateNamed {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The seal beside the trace cannot be created.
    #[error("cannot create the seal {}: {source}", path.display())]
    CreateSeal {
        /// The sidecar.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The trace's first line cannot be written.
    #[error("cannot write the trace {trace}: {source}")]
    WriteTrace {
        /// The trace (its path, or `trace` for a caller's writer).
        trace: String,
        /// Why.
        source: io::Error,
    },
}

/// Where the trace goes: a new file, or any writer.
pub struct TraceTarget {
    sink: Box<dyn Write + Send>,
    path: Option<PathBuf>,
    started: Timestamp,
    seal: Option<SealTarget>,
}

/// Where the trace's seal goes (`--seal`).
struct SealTarget {
    sink: Box<dyn Write + Send>,
    path: Option<PathBuf>,
    key: Option<SealKey>,
    /// The head's `files`: the trace's file name.
    files: Vec<String>,
}

/// The trace writer over a target's sink.
pub type TargetWriter = TraceWriter<BatchSink<Box<dyn Write + Send>>>;

impl TraceTarget {
    /// Creates `<dir>/<stamp>-<label>.jsonl` (mode 0600), creating `dir` and its parents
    /// (mode 0700) when missing.
    pub fn create(dir: &Path, label: &str) -> Result<TraceTarget, TargetError> {
        Self::create_started(dir, label, Timestamp::now())
    }

    /// [`create`](Self::create) for a session that started at `started` (an imported
    /// one: its file is named, and its `durationMs` counted, from the source's time).
    pub fn create_started(
        dir: &Path,
        label: &str,
        started: Timestamp,
    ) -> Result<TraceTarget, TargetError> {
        names::ensure_dir(dir).map_err(|source| TargetError::CreateDir {
            dir: dir.to_owned(),
            source,
        })?;
        let (file, path) =
            create_trace_file(dir, started, label).map_err(|source| TargetError::CreateTrace {
                dir: dir.to_owned(),
                source,
            })?;
        let file = WholeLinesFile::new(file).map_err(|source| TargetError::CreateTrace {
            dir: dir.to_owned(),
            source,
        })?;
        Ok(TraceTarget {
            sink: Box::new(file),
            path: Some(path),
            started,
            seal: None,
        })
    }

    /// A new file at `path` (mode 0600; an existing file is not overwritten) for a
    /// session that started at `started`.
    pub fn create_file(path: &Path, started: Timestamp) -> Result<TraceTarget, TargetError> {
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let file = opts
            .open(path)
            .and_then(WholeLinesFile::new)
            .map_err(|source| TargetError::CreateNamed {
                path: path.to_owned(),
                source,
            })?;
        Ok(TraceTarget {
            sink: Box::new(file),
            path: Some(path.to_owned()),
            started,
            seal: None,
        })
    }

    /// Seals the trace as it is written into `<trace>.seal` (mode 0600), keyed when
    /// `key` is given (see [`crate::seal`]). Only for a trace file; a trace given as a
    /// writer is sealed with [`TraceTarget::seal_to`]. When the seal cannot be created,
    /// the trace file, still empty, is removed again.
    pub fn seal(self, key: Option<SealKey>) -> Result<TraceTarget, TargetError> {
        let Some(trace) = self.path.clone() else {
            return Err(TargetError::CreateSeal {
                path: PathBuf::from("trace.seal"),
                source: io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "a trace written to a writer has no place for a seal; use seal_to",
                ),
            });
        };
        match create_sidecar(&trace).and_then(|(file, path)| Ok((WholeLinesFile::new(file)?, path)))
        {
            Ok((file, path)) => Ok(TraceTarget {
                seal: Some(SealTarget {
                    sink: Box::new(file),
                    path: Some(path),
                    key,
                    files: vec![trace.file_name().map_or_else(
                        || trace.display().to_string(),
                        |n| n.to_string_lossy().into_owned(),
                    )],
                }),
                ..self
            }),
            Err(source) => {
                let _ = std::fs::remove_file(&trace);
                Err(TargetError::CreateSeal {
                    path: crate::seal::sidecar_path(&trace),
                    source,
                })
            }
        }
    }

    /// Seals the trace as it is written into `sink` (tests, other front ends).
    pub fn seal_to(self, sink: impl Write + Send + 'static, key: Option<SealKey>) -> TraceTarget {
        TraceTarget {
            seal: Some(SealTarget {
                sink: Box::new(sink),
                path: None,
                key,
                files: vec!["trace".to_owned()],
            }),
            ..self
        }
    }

    /// The seal file, when the trace is sealed into one.
    pub fn seal_path(&self) -> Option<&Path> {
        self.seal.as_ref().and_then(|s| s.path.as_deref())
    }

    /// A trace written to `sink` (tests, other front ends). Give it an unbuffered sink:
    /// the writer batches whole lines itself.
    pub fn from_writer(sink: impl Write + Send + 'static, started: Timestamp) -> TraceTarget {
        TraceTarget {
            sink: Box::new(sink),
            path: None,
            started,
            seal: None,
        }
    }

    /// The trace file, when it is one.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// When the trace started (its `meta.startedAt`).
    pub fn started(&self) -> Timestamp {
        self.started
    }

    /// The trace's name in messages: its path, or `trace` for a caller's writer.
    pub fn name(&self) -> String {
        self.path
            .as_ref()
            .map_or_else(|| "trace".to_owned(), |p| p.display().to_string())
    }

    /// The trace writer (its `end.durationMs` counting from the target's start, sealing
    /// when asked to) and the path, with `meta` written and flushed first, so a
    /// recording that goes no further still names its session.
    pub fn open(self, meta: &Meta) -> Result<(TargetWriter, Option<PathBuf>), TargetError> {
        let name = self.name();
        let mut writer = TraceWriter::new(BatchSink::new(self.sink), self.started);
        let mut seal_path = None;
        if let Some(seal) = self.seal {
            seal_path = seal.path;
            let sealer = Sealer::new(seal.sink, &seal.files, self.started, seal.key.as_ref());
            writer.seal_with(LiveSeal::new(sealer));
        }
        match writer.write_meta(meta).and_then(|()| writer.flush()) {
            Ok(()) => Ok((writer, self.path)),
            Err(source) => {
                // Not even the meta line went in (a full disk, `ulimit -f`): leave no
                // empty or torn file for `reel ls` to show as a run, and no seal of
                // nothing beside it.
                drop(writer);
                for p in self.path.iter().chain(seal_path.iter()) {
                    let _ = std::fs::remove_file(p);
                }
                Err(TargetError::WriteTrace {
                    trace: name,
                    source,
                })
            }
        }
    }
}

/// Batches whole trace lines into one `write` until the next flush; a line larger than
/// the batch goes out on its own, without a copy.
pub struct BatchSink<W: Write> {
    inner: W,
    buf: Vec<u8>,
}

/// Flush a batch once it holds this much.
const BATCH_BYTES: usize = 256 * 1024;

impl<W: Write> BatchSink<W> {
    /// Batches writes to `inner`.
    pub fn new(inner: W) -> Self {
        BatchSink {
            inner,
            buf: Vec::with_capacity(BATCH_BYTES),
        }
    }

    fn write_buf(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            let r = self.inner.write_all(&self.buf);
            self.buf.clear();
            r?;
        }
        Ok(())
    }
}

impl<W: Write> Write for BatchSink<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.buf.len() + data.len() > BATCH_BYTES {
            self.write_buf()?;
        }
        if data.len() >= BATCH_BYTES {
            self.inner.write_all(data)?;
        } else {
            self.buf.extend_from_slice(data);
        }
        Ok(data.len())
    }

    /// The buffers of one line in parts: batched like one write of their total, and
    /// past the batch size handed on together, not copied.
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        if self.buf.len() + total > BATCH_BYTES {
            self.write_buf()?;
        }
        if total >= BATCH_BYTES {
            let parts: Vec<&[u8]> = bufs.iter().map(|b| &**b).collect();
            crate::writer::write_all_parts(&mut self.inner, &parts)?;
        } else {
            for b in bufs {
                self.buf.extend_from_slice(b);
            }
        }
        Ok(total)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_buf()?;
        self.inner.flush()
    }
}
