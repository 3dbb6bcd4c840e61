//! Where a one-file output goes (`reel export`, `export otlp -o`): stdout, or a private
//! temporary file beside `-o` that becomes it only on success.

use std::io::Write;
use std::path::PathBuf;

use crate::exit::{self, coded};

/// Where a one-file export goes: stdout, or a private temporary file beside `-o` that
/// becomes it only when the export succeeded ([`Sink::commit`]), so a failed export
/// leaves nothing behind and an existing file is never overwritten.
pub(crate) struct Sink {
    pub out: Box<dyn Write>,
    /// `(temporary, final)` for `-o`.
    file: Option<(PathBuf, PathBuf)>,
}

impl Sink {
    pub fn open(output: Option<&std::path::Path>) -> anyhow::Result<Sink> {
        let Some(p) = output else {
            return Ok(Sink {
                out: Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
                file: None,
            });
        };
        let cant = |e: std::io::Error| coded(exit::CANT_CREATE, format!("{}: {e}", p.display()));
        if p.symlink_metadata().is_ok() {
            return Err(cant(std::io::ErrorKind::AlreadyExists.into()));
        }
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = p.with_file_name(format!(".{name}.{}.partial", std::process::id()));
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let f = opts.open(&tmp).map_err(cant)?;
        Ok(Sink {
            out: Box::new(std::io::BufWriter::new(f)),
            file: Some((tmp, p.to_owned())),
        })
    }

    /// Flushes, and puts the file in place (refused if `-o` appeared meanwhile).
    pub fn commit(mut self) -> anyhow::Result<()> {
        self.out.flush().map_err(|e| {
            // A reader that went away (`| head`) is not an error: keep the I/O error.
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                anyhow::Error::from(e)
            } else {
                coded(exit::CANT_CREATE, format!("cannot write the export: {e}"))
            }
        })?;
        if let Some((tmp, dest)) = self.file.take() {
            let linked = std::fs::hard_link(&tmp, &dest);
            let _ = std::fs::remove_file(&tmp);
            linked.map_err(|e| coded(exit::CANT_CREATE, format!("{}: {e}", dest.display())))?;
        }
        Ok(())
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        if let Some((tmp, _)) = &self.file {
            let _ = std::fs::remove_file(tmp);
        }
    }
}
