//! The marker that stands where a secret was, and the [`Splicer`] every rule builds
//! its output with, so that marker stays atomic whichever rule wrote it.

use memchr::memmem;

/// What replaces a secret; mcp-tape's marker, so both tools' traces read alike.
pub const MARKER: &str = reel_trace::REDACTED;

/// Builds the output of a rule: pieces of the input with marked ranges replaced.
/// Keeps the marker atomic: ranges are widened over any marker they touch, ranges
/// wholly inside one marker are dropped, touching ranges merge.
pub(crate) struct Splicer<'t> {
    text: &'t str,
    markers: Vec<(usize, usize)>,
    out: String,
    /// Input consumed up to here.
    done: usize,
    /// The output currently ends with a marker standing for input up to `done`.
    open: bool,
    /// First marker that may still overlap a coming range.
    cursor: usize,
    changed: bool,
}

impl<'t> Splicer<'t> {
    pub(crate) fn new(text: &'t str) -> Splicer<'t> {
        let markers = memmem::find_iter(text.as_bytes(), MARKER.as_bytes())
            .map(|at| (at, at + MARKER.len()))
            .collect();
        Splicer {
            text,
            markers,
            out: String::new(),
            done: 0,
            open: false,
            cursor: 0,
            changed: false,
        }
    }

    /// Marks `start..end` for replacement; returns where the caller should resume
    /// (never before `end`). Ranges must come in increasing order, so one cursor
    /// walks the marker list once per rule: linear overall.
    pub(crate) fn mark(&mut self, start: usize, end: usize) -> usize {
        let (mut start, mut end) = (start.max(self.done), end);
        if start >= end {
            return end.max(self.done);
        }
        while self
            .markers
            .get(self.cursor)
            .is_some_and(|&(_, me)| me < start)
        {
            self.cursor += 1;
        }
        if let Some(&(ms, me)) = self.markers.get(self.cursor) {
            if ms <= start && end <= me {
                return end; // inside an existing marker: nothing to do
            }
        }
        // Widen over every marker the range overlaps or touches.
        let mut i = self.cursor;
        while let Some(&(ms, me)) = self.markers.get(i) {
            if ms > end {
                break;
            }
            start = start.min(ms);
            end = end.max(me);
            i += 1;
        }
        let start = start.max(self.done);
        if start > self.done {
            self.out.push_str(&self.text[self.done..start]);
            self.open = false;
        }
        if !self.open {
            self.out.push_str(MARKER);
            self.open = true;
        }
        self.done = end;
        self.changed = true;
        end
    }

    pub(crate) fn finish(mut self) -> Option<String> {
        if !self.changed {
            return None;
        }
        self.out.push_str(&self.text[self.done..]);
        (self.out != self.text).then_some(self.out)
    }
}
