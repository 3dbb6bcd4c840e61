//! The text streams of a stdio recording whose lines are redacted line by line, each
//! with its own [`LineBlock`]: the server's stderr and each side's non-JSON lines.

use std::borrow::Cow;

use reel_trace::line::{Dir, kinds};

use super::lines::LineBlock;
use super::redactor::Redactor;

/// The text streams of a stdio recording whose lines are redacted as streams: the
/// server's stderr (`reel.stderr`) and each side's non-JSON lines (`reel.nonjson`).
/// The recorder and `reel redact` keep one each, so both redact a line alike.
#[derive(Debug, Clone, Default)]
pub struct LineStreams {
    stderr: LineBlock,
    inbound: LineBlock,
    outbound: LineBlock,
}

impl LineStreams {
    /// The stream an event of `kind` on `side` belongs to; `None` for any other line
    /// and for HTTP (`http` facts: a body is redacted whole, and sessions interleave).
    pub fn of(&mut self, kind: &str, side: Option<Dir>, http: bool) -> Option<&mut LineBlock> {
        if http {
            return None;
        }
        match (kind, side) {
            (kinds::STDERR, None) => Some(&mut self.stderr),
            (kinds::NONJSON, Some(Dir::In)) => Some(&mut self.inbound),
            (kinds::NONJSON, Some(Dir::Out)) => Some(&mut self.outbound),
            _ => None,
        }
    }

    /// A JSON message on `dir` ends whatever block that side's text lines had open.
    pub fn message(&mut self, dir: Dir, http: bool) {
        if let Some(block) = self.of(kinds::NONJSON, Some(dir), http) {
            *block = LineBlock::default();
        }
    }

    /// Free text of an event of `kind` on `side`: a line of its stream when it belongs
    /// to one ([`Redactor::redact_line`]), else [`Redactor::redact_text`].
    pub fn redact<'a>(
        &mut self,
        redactor: &Redactor,
        kind: &str,
        side: Option<Dir>,
        http: bool,
        text: &'a str,
    ) -> Cow<'a, str> {
        match self.of(kind, side, http) {
            Some(block) => redactor.redact_line(text, block),
            None => redactor.redact_text(text),
        }
    }
}
