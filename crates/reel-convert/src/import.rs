//! `reel import`'s work: the recordings found in the sources given, each converted into
//! a trace ([`import`], in `import/recording.rs`).
//!
//! [`import_all`] makes every decision the command makes and leaves the words to its
//! caller: which sources are searched, when a source or a recording that cannot be read
//! is said and the rest imported (several of them) and when it stops the run (the only
//! one), when `-o` or `--name` cannot name one trace, and which format's limits are
//! new. What happens is handed to the caller as it happens ([`ImportEvent`]), so a long
//! import is told as it goes; how it ended is an [`ImportOutcome`] or an
//! [`ImportStop`].

use std::io;
use std::path::{Path, PathBuf};

use reel_redact::redact::Redactor;
use reel_report::display::one_line;

use crate::{Format, Found, discover};

mod recording;

pub use recording::{ImportError, Imported, LostLine, Output, format_names, import};

/// What to import, and where to.
#[derive(Debug, Clone, Copy)]
pub struct ImportOptions<'a> {
    /// The files and directories to import.
    pub sources: &'a [PathBuf],
    /// The format of the sources, when sniffing cannot tell.
    pub from: Option<Format>,
    /// Where the traces go: [`Output::File`] names the one trace (one recording only).
    pub output: Output<'a>,
    /// The run's name, for one recording only (default: each recording's label).
    pub name: Option<&'a str>,
}

impl ImportOptions<'_> {
    /// True when the options name one trace (`-o` or `--name`).
    fn names_one_trace(&self) -> bool {
        matches!(self.output, Output::File(_)) || self.name.is_some()
    }
}

/// Why a source gives no recording to import.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// The source itself cannot be read.
    #[error("{}: {source}", shown(path))]
    Unreadable {
        /// The source.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A directory that holds no recording of a format reel reads.
    #[error(
        "{}: no recording of a format reel reads in it (formats: {})",
        shown(path),
        format_names()
    )]
    NoRecording {
        /// The directory.
        path: PathBuf,
    },
    /// Neither a file nor a directory, or not a file when `--from` names the format.
    #[error("{}: not a regular file", shown(path))]
    NotAFile {
        /// The source.
        path: PathBuf,
    },
    /// A file of no format reel reads ([`ImportError::Unknown`]).
    #[error(transparent)]
    Unknown(ImportError),
}

/// `path` as a message quotes it: on one line, nothing in it a terminal would act on.
fn shown(path: &Path) -> String {
    one_line(&path.display().to_string()).into_owned()
}

/// What [`import_all`] did, told as it happens.
#[derive(Debug)]
#[non_exhaustive]
pub enum ImportEvent<'a> {
    /// A source of several gives nothing; the others are imported all the same.
    SourceFailed(&'a SourceError),
    /// An entry below a directory searched cannot be read; the rest are imported.
    Unreadable {
        /// The file or directory.
        path: &'a Path,
        /// Why.
        error: &'a io::Error,
    },
    /// A recording of several cannot be imported; the others are imported all the same.
    RecordingFailed(&'a ImportError),
    /// A recording was imported.
    Imported {
        /// The recording.
        found: &'a Found,
        /// What its import did.
        imported: &'a Imported,
        /// The first recording of its format in this run (its limits not yet said).
        first_of_format: bool,
    },
}

/// What a whole import came to.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ImportOutcome {
    /// Traces written.
    pub imported: usize,
    /// Sources, entries and recordings that could not be imported (each told).
    pub failed: usize,
    /// Recordings imported without lines too long to read.
    pub lossy: usize,
}

/// Why [`import_all`] stopped before its end.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportStop {
    /// The only source gives nothing to import.
    #[error(transparent)]
    Source(SourceError),
    /// A source holds several recordings, and `-o` or `--name` name one trace.
    #[error(
        "{} holds {recordings} recordings: -o and --name name one trace; use --dir",
        shown(path)
    )]
    OneTrace {
        /// The source.
        path: PathBuf,
        /// How many recordings it holds.
        recordings: usize,
    },
    /// A trace cannot be created or written ([`ImportError::Target`],
    /// [`ImportError::Write`]).
    #[error(transparent)]
    Create(ImportError),
    /// The only recording cannot be imported.
    #[error(transparent)]
    Recording(ImportError),
}

/// Imports every recording of `options.sources`, redacted by `redactor`, telling `on`
/// what happens as it happens (see the module's documentation).
pub fn import_all(
    options: &ImportOptions<'_>,
    redactor: &Redactor,
    on: &mut dyn FnMut(ImportEvent<'_>),
) -> Result<ImportOutcome, ImportStop> {
    let several = options.sources.len() > 1;
    let mut outcome = ImportOutcome::default();
    let mut told: Vec<Format> = Vec::new();
    for src in options.sources {
        let found = match recordings_in(src, options.from, on, &mut outcome) {
            Ok(found) => found,
            // With several sources, one that cannot be read is said and the rest imported.
            Err(e) if several => {
                on(ImportEvent::SourceFailed(&e));
                outcome.failed += 1;
                continue;
            }
            Err(e) => return Err(ImportStop::Source(e)),
        };
        if found.len() > 1 && options.names_one_trace() {
            return Err(ImportStop::OneTrace {
                path: src.clone(),
                recordings: found.len(),
            });
        }
        let many = found.len() > 1 || several;
        for f in &found {
            let label = options.name.unwrap_or(&f.label);
            let done = match import(f, label, options.output, redactor) {
                Ok(done) => done,
                Err(e @ (ImportError::Target(_) | ImportError::Write { .. })) => {
                    return Err(ImportStop::Create(e));
                }
                // One recording of several that cannot be read: said, and the others
                // imported all the same.
                Err(e) if many => {
                    on(ImportEvent::RecordingFailed(&e));
                    outcome.failed += 1;
                    continue;
                }
                Err(e) => return Err(ImportStop::Recording(e)),
            };
            let first_of_format = !told.contains(&done.format);
            if first_of_format {
                told.push(done.format);
            }
            on(ImportEvent::Imported {
                found: f,
                imported: &done,
                first_of_format,
            });
            if !done.too_long.is_empty() {
                outcome.lossy += 1;
            }
            outcome.imported += 1;
        }
    }
    Ok(outcome)
}

/// The recordings `src` holds; its entries that cannot be read are told and counted as
/// failed. A source with none is an error, unless an unreadable entry explains it.
fn recordings_in(
    src: &Path,
    from: Option<Format>,
    on: &mut dyn FnMut(ImportEvent<'_>),
    outcome: &mut ImportOutcome,
) -> Result<Vec<Found>, SourceError> {
    let discovery = discover(src, from).map_err(|source| SourceError::Unreadable {
        path: src.to_owned(),
        source,
    })?;
    for (path, error) in &discovery.unreadable {
        on(ImportEvent::Unreadable { path, error });
        outcome.failed += 1;
    }
    if !discovery.found.is_empty() || !discovery.unreadable.is_empty() {
        return Ok(discovery.found);
    }
    let path = src.to_owned();
    Err(if src.is_dir() {
        SourceError::NoRecording { path }
    } else if from.is_some() || !src.is_file() {
        SourceError::NotAFile { path }
    } else {
        SourceError::Unknown(ImportError::Unknown { path })
    })
}
