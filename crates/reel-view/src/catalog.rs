//! What the viewer shows, and the traces it has opened.
//!
//! A trace is named in the API by a *key*: a trace given on the command line by its file
//! name, a trace of the directory shown by its path relative to it (resolved by
//! components with [`crate::paths::resolve`], so no key reaches outside). Each trace is
//! opened once: another tool's recording is read through a redacted conversion
//! ([`reel_convert::readable`]), and a thread indexes it and follows it while it
//! grows.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, Weak};
use std::time::Duration;

use tokio::sync::watch;

use crate::index::TraceIndex;
use crate::paths::{self, Resolved};

/// How often a trace without an `end` line is looked at for new lines.
pub const FOLLOW_EVERY: Duration = Duration::from_millis(200);

/// Bytes indexed between two looks at the lock (readers wait at most for one).
const INDEX_STEP: usize = 1 << 20;

/// How long the indexer waits, at most, for the requests waiting to read.
const HANDOFF: Duration = Duration::from_millis(50);

/// Bytes indexed before a trace's first page is answered.
const FIRST_STEP: usize = 1 << 20;

/// What the first page shows.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "mode", rename_all = "lowercase")]
pub enum Home {
    /// The runs of a directory.
    Runs,
    /// One trace.
    Trace {
        /// Its key.
        key: String,
    },
    /// The diff of two traces.
    Diff {
        /// A's key.
        a: String,
        /// B's key.
        b: String,
    },
    /// Several traces merged by time.
    Merge {
        /// Their keys.
        keys: Vec<String>,
    },
    /// An MMSP cache directory (its pages are at the root).
    Mmsp,
}

/// How far a trace is indexed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Progress {
    /// Lines indexed.
    pub lines: u64,
    /// Bytes read.
    pub bytes: u64,
    /// The run's size when last looked at.
    pub size: u64,
    /// True once its `end` line was read.
    pub ended: bool,
}

/// One opened trace.
#[derive(Debug)]
pub struct Entry {
    /// Its key.
    pub key: String,
    /// The file the user named.
    pub source: PathBuf,
    /// The trace read (the conversion, for another tool's recording).
    pub trace: PathBuf,
    /// The source's format, when it was converted.
    pub format: Option<&'static str>,
    /// What the conversion could not carry over.
    pub warnings: Vec<String>,
    /// The index, growing.
    pub index: RwLock<TraceIndex>,
    /// Its progress, for followers.
    pub progress: watch::Sender<Progress>,
    /// Why indexing stopped early.
    pub failure: Mutex<Option<String>>,
    /// Requests waiting to read the index: the indexer lets them in between its steps.
    waiting: AtomicUsize,
    /// `reel stats` of the trace, and the bytes indexed and the size it had then.
    pub stats: Mutex<Option<((u64, u64), serde_json::Value)>>,
}

impl Entry {
    /// Indexes the trace and follows it while it has no `end`, until the last
    /// reference to the entry is gone.
    /// The index to read, as far as it goes: a request waits at most for the step in
    /// progress, never for the whole trace.
    pub fn read(&self) -> RwLockReadGuard<'_, TraceIndex> {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let guard = self.index.read().unwrap_or_else(|p| p.into_inner());
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        guard
    }

    /// Lets waiting requests take the index before the next step (a lock released and
    /// taken again at once may never let a reader in).
    fn let_readers_in(&self) {
        let deadline = std::time::Instant::now() + HANDOFF;
        while self.waiting.load(Ordering::SeqCst) > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_micros(50));
        }
    }

    fn follow(entry: Weak<Entry>) {
        loop {
            let Some(e) = entry.upgrade() else { return };
            match e.step(INDEX_STEP) {
                Some((0, true)) | None => return,
                Some((0, false)) => {
                    drop(e);
                    std::thread::sleep(FOLLOW_EVERY);
                }
                Some(_) => e.let_readers_in(),
            }
        }
    }

    /// Indexes up to `budget` more bytes and says how far it is: the bytes read and
    /// whether the trace has ended; `None` once reading failed (said in `failure`).
    fn step(&self, budget: usize) -> Option<(u64, bool)> {
        let mut ix = self.index.write().unwrap_or_else(|p| p.into_inner());
        let read = ix.read_more(budget);
        let size = ix
            .files()
            .iter()
            .filter_map(|f| f.metadata().ok())
            .map(|m| m.len())
            .sum();
        self.progress.send_replace(Progress {
            lines: ix.lines.len() as u64,
            bytes: ix.bytes_read(),
            size,
            ended: ix.ended,
        });
        match read {
            Ok(n) => Some((n, ix.ended)),
            Err(err) => {
                *self.failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(err.to_string());
                None
            }
        }
    }
}

/// Why a key names no trace.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// Outside what is shown.
    #[error("{0}: not inside the directory shown")]
    Outside(String),
    /// Names nothing.
    #[error("{0}: no such trace")]
    Missing(String),
    /// Cannot be read as a trace.
    #[error("{0}")]
    Unreadable(String),
}

/// Diffs kept: by the keys of A and B, the sizes they had then and `reel diff --json`.
pub type Diffs = HashMap<(String, String), ((u64, u64), serde_json::Value)>;

/// The traces the viewer may show.
#[derive(Debug)]
pub struct Catalog {
    /// The directory shown (canonical), whose traces are named by relative path.
    pub dir: Option<PathBuf>,
    /// Traces named on the command line: key and path.
    named: Vec<(String, PathBuf)>,
    /// What the first page shows.
    pub home: Home,
    opened: Mutex<HashMap<PathBuf, Arc<Entry>>>,
    /// Diffs computed, by the two keys, with the two sizes they were computed at. Held
    /// while one is computed: diffs run one at a time, and a page asked again (a
    /// reload, a second tab) is answered from here rather than diffed again.
    pub diffs: Mutex<Diffs>,
}

impl Catalog {
    /// A catalog of `paths` as `reel view` was given them: none (then `default_dir`),
    /// a directory, one trace, two (a diff) or more (a merge). `mmsp` forces a
    /// directory to be shown as an MMSP cache.
    pub fn new(paths: &[PathBuf], default_dir: &Path, mmsp: bool) -> Result<Catalog, String> {
        let dir_of = |p: &Path| {
            p.canonicalize()
                .map_err(|e| format!("{}: {e}", p.display()))
        };
        match paths {
            [] => Ok(Catalog::of_dir(dir_of(default_dir)?, mmsp)),
            [one] if one.is_dir() && !is_mcptape_run(one) => {
                Ok(Catalog::of_dir(dir_of(one)?, mmsp))
            }
            _ => {
                let mut named: Vec<(String, PathBuf)> = Vec::new();
                for p in paths {
                    if !p.exists() {
                        return Err(format!("{}: no such file", p.display()));
                    }
                    let base = p.file_name().map_or_else(
                        || p.display().to_string(),
                        |n| n.to_string_lossy().into_owned(),
                    );
                    let mut key = base.clone();
                    let mut n = 1;
                    while named.iter().any(|(k, _)| *k == key) {
                        n += 1;
                        key = format!("{base}~{n}");
                    }
                    named.push((key, p.clone()));
                }
                let keys: Vec<String> = named.iter().map(|(k, _)| k.clone()).collect();
                let home = match keys.as_slice() {
                    [k] => Home::Trace { key: k.clone() },
                    [a, b] => Home::Diff {
                        a: a.clone(),
                        b: b.clone(),
                    },
                    _ => Home::Merge { keys },
                };
                Ok(Catalog {
                    dir: None,
                    named,
                    home,
                    opened: Mutex::new(HashMap::new()),
                    diffs: Mutex::new(HashMap::new()),
                })
            }
        }
    }

    fn of_dir(dir: PathBuf, mmsp: bool) -> Catalog {
        let home = if mmsp || crate::mmsp::is_cache_dir(&dir) {
            Home::Mmsp
        } else {
            Home::Runs
        };
        Catalog {
            dir: Some(dir),
            named: Vec::new(),
            home,
            opened: Mutex::new(HashMap::new()),
            diffs: Mutex::new(HashMap::new()),
        }
    }

    /// The keys of the traces named on the command line.
    pub fn named_keys(&self) -> impl Iterator<Item = &str> {
        self.named.iter().map(|(k, _)| k.as_str())
    }

    /// The file `key` names.
    pub fn path_of(&self, key: &str) -> Result<PathBuf, KeyError> {
        if let Some((_, p)) = self.named.iter().find(|(k, _)| k == key) {
            return Ok(p.clone());
        }
        let Some(dir) = &self.dir else {
            return Err(KeyError::Missing(key.to_owned()));
        };
        match paths::resolve(dir, key) {
            Resolved::Inside(p) if p != *dir => Ok(p),
            Resolved::Inside(_) | Resolved::Missing => Err(KeyError::Missing(key.to_owned())),
            Resolved::Outside => Err(KeyError::Outside(key.to_owned())),
        }
    }

    /// The entry of `key`, opened (and its indexing started) on first use.
    pub fn open(&self, key: &str) -> Result<Arc<Entry>, KeyError> {
        let source = self.path_of(key)?;
        let mut opened = self.opened.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = opened.get(&source) {
            return Ok(e.clone());
        }
        let conversion = reel_convert::readable::convert_if_foreign(&source)
            .map_err(|e| KeyError::Unreadable(e.to_string()))?;
        let (trace, format, warnings) = match conversion {
            Some(c) => (c.trace, Some(c.format.name()), c.warnings),
            None if source.is_dir() => {
                return Err(KeyError::Unreadable(format!(
                    "{key}: a directory, not a trace"
                )));
            }
            None => (source.clone(), None, Vec::new()),
        };
        let files = reel_trace::reader::trace_files(&trace);
        let entry = Arc::new(Entry {
            key: key.to_owned(),
            source: source.clone(),
            trace,
            format,
            warnings,
            index: RwLock::new(TraceIndex::new(files)),
            progress: watch::channel(Progress::default()).0,
            failure: Mutex::new(None),
            waiting: AtomicUsize::new(0),
            stats: Mutex::new(None),
        });
        // The first screen's worth now, so the first page has lines to show.
        entry.step(FIRST_STEP);
        let weak = Arc::downgrade(&entry);
        std::thread::Builder::new()
            .name("reel-view-index".into())
            .spawn(move || Entry::follow(weak))
            .map_err(|e| KeyError::Unreadable(format!("cannot start indexing: {e}")))?;
        opened.insert(source, entry.clone());
        Ok(entry)
    }

    /// The key of `path` inside the directory shown.
    pub fn key_in_dir(&self, path: &Path) -> Option<String> {
        let rel = path.strip_prefix(self.dir.as_ref()?).ok()?;
        let parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        Some(parts.join("/"))
    }
}

/// An mcptape run directory is one recording, not a directory of runs.
fn is_mcptape_run(dir: &Path) -> bool {
    reel_convert::discover(dir, None).is_ok_and(|d| {
        d.found
            .iter()
            .any(|f| f.format == reel_convert::Format::Mcptape)
    }) && reel_inspect::runs::list_runs(dir).is_ok_and(|l| l.runs.is_empty())
}
