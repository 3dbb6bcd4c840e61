//! What every tape server of one replay shares: the trace's head meta line and the
//! redaction rules it names, turned into the normaliser live messages go through.

use std::io::Write;
use std::path::Path;

use reel_mcp::normalize::Normalizer;
use reel_redact::redact::Redactor;
use reel_trace::line::{Line, Meta};

use super::options::PlayOptions;

/// What every tape server of one replay shares: the trace's head meta line and its
/// redaction rules, turned into the normaliser live messages go through.
#[derive(Clone)]
pub(crate) struct Shared {
    pub(crate) head: Option<Meta>,
    pub(crate) redactor: Redactor,
    pub(crate) norm: Normalizer,
}

impl Shared {
    pub(crate) fn new(opts: &PlayOptions, diag: &mut dyn Write) -> Shared {
        let head = read_head_meta(&opts.trace);
        let redactor = redactor_for(head.as_ref(), diag);
        let norm = Normalizer::new()
            .with_ignore(opts.ignore.clone())
            .with_redactor(redactor.clone());
        Shared {
            head,
            redactor,
            norm,
        }
    }

    /// The rules of the replay's own trace: the tape's, or the built-in ones when the
    /// tape says nothing (redaction is on by default when recording).
    pub(crate) fn record_redactor(&self) -> Redactor {
        match self.head.as_ref().and_then(|m| m.redaction.as_ref()) {
            Some(_) => self.redactor.clone(),
            None => Redactor::builtin(),
        }
    }
}

/// The first meta line of the trace, for its redaction rules and label.
fn read_head_meta(path: &Path) -> Option<Meta> {
    let mut r = reel_trace::TraceReader::open(path).ok()?;
    let line = r.next_line()?.ok()?;
    match line.parse().ok()? {
        Line::Meta(m) => Some(*m),
        _ => None,
    }
}

/// The trace's own redaction rules, so a live argument is redacted exactly as the
/// recorded one was. A trace without `meta.redaction` was not redacted: nothing is.
fn redactor_for(meta: Option<&Meta>, diag: &mut dyn Write) -> Redactor {
    let Some(desc) = meta.and_then(|m| m.redaction.as_ref()) else {
        return Redactor::disabled();
    };
    match Redactor::from_description(desc) {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(
                diag,
                "reel play: warning: the trace's redaction rules cannot be rebuilt ({e}); using the built-in rules, so a redacted argument may not match"
            );
            Redactor::builtin()
        }
    }
}
