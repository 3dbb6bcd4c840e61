//! The diagnostics of the tape servers of one `reel play --listen`: one writer shared by
//! every session, handed whole lines so that concurrent reports never interleave.

use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use super::out;

/// Where the diagnostics of every tape server go, a whole line at a time.
pub(crate) type Diag = Arc<Mutex<Box<dyn Write + Send>>>;

/// A writer for one thread that hands [`Diag`] whole lines, so that the reports of
/// concurrent sessions never interleave mid-line.
pub(crate) struct LineDiag {
    shared: Diag,
    buf: Vec<u8>,
}

impl LineDiag {
    pub(crate) fn new(shared: Diag) -> LineDiag {
        LineDiag {
            shared,
            buf: Vec::new(),
        }
    }
}

impl Write for LineDiag {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(b);
        if let Some(end) = self.buf.iter().rposition(|&c| c == b'\n') {
            let rest = self.buf.split_off(end + 1);
            let lines = std::mem::replace(&mut self.buf, rest);
            let mut d = out::lock(&self.shared);
            d.write_all(&lines)?;
            d.flush()?;
        }
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            let lines = std::mem::take(&mut self.buf);
            let mut d = out::lock(&self.shared);
            d.write_all(&lines)?;
            d.flush()?;
        }
        Ok(())
    }
}

impl Drop for LineDiag {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}
