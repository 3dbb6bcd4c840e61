//! Limits on YAML input, checked in one linear pass before the parser sees the text.
//!
//! The YAML parser (serde_norway over libyaml) is slow and hungry on hostile input it
//! accepts: flow collections nested tens of thousands deep take time that grows faster
//! than the square of the depth (40k levels: seconds, a 2 MB file: minutes), and its
//! recursion limit applies only after the whole document has been tokenised; aliases
//! (`&a [*b, *b, …]`, "billion laughs") expand a megabyte into gigabytes, and a node
//! that holds an alias to itself is expanded until the parser gives up. So before a
//! YAML document is parsed, [`check`] walks it once, tokenising it as libyaml does
//! (flow levels, the block indentation stack, simple keys, plain, quoted and block
//! scalars, comments, anchors, tags and aliases) without building anything, and refuses:
//! - collections nested deeper than [`MAX_DEPTH`] (the parser's own limit, which it
//!   applies too late to save the time);
//! - aliases that would expand the document past [`YamlLimits::for_input`]: at most
//!   [`EXPANSION_FACTOR`] times its size (at least [`EXPANSION_FLOOR`], never more than
//!   [`super::MAX_DOCUMENT`]), counted as the bytes of the named node, its own aliases
//!   expanded;
//! - an alias to a node that is not known to have ended (a recursive document).
//!
//! The walk must agree with libyaml wherever libyaml goes on: a disagreement about where
//! a quoted or block scalar starts or ends could hide a nesting the walk then never
//! counts. Where libyaml stops with an error the walk goes on instead, one character at
//! a time, so what it cannot tell is still counted (at worst a broken document is refused
//! for a limit rather than for its syntax). It errs the same way for node ends it cannot
//! be sure of: an anchored block node ends, for the walk, only at a later line that starts
//! to the left of the node's first token.

use std::collections::HashMap;

mod anchors;
mod node;

use node::{Content, Node};

/// How deeply collections may nest in a YAML document reel reads: the YAML parser's
/// own limit. The transcripts reel reads nest about as deep as their JSON payloads (a
/// message, its params, a schema), far less than this.
pub const MAX_DEPTH: usize = 128;
/// How many times its own size a document may grow by expanding its aliases.
pub const EXPANSION_FACTOR: u64 = 4;
/// The expansion a small document may always reach.
pub const EXPANSION_FLOOR: u64 = 1 << 20;

/// How far a YAML document may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct YamlLimits {
    /// The deepest nesting of collections (flow and block).
    pub depth: usize,
    /// The most bytes the document may stand for once its aliases are expanded.
    pub expanded: u64,
}

impl YamlLimits {
    /// The limits for a document of `len` bytes read under a ceiling of `max_document`
    /// bytes (the reader's, [`crate::MAX_DOCUMENT`]): [`MAX_DEPTH`], and an expansion to
    /// [`EXPANSION_FACTOR`] times `len`, at least [`EXPANSION_FLOOR`], at most
    /// `max_document`.
    pub fn for_input(len: usize, max_document: u64) -> YamlLimits {
        let expanded = (len as u64)
            .saturating_mul(EXPANSION_FACTOR)
            .max(EXPANSION_FLOOR)
            .min(max_document.max(len as u64));
        YamlLimits {
            depth: MAX_DEPTH,
            expanded,
        }
    }
}

/// Why a YAML document is refused before parsing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum YamlLimitError {
    /// Collections nested past [`YamlLimits::depth`].
    #[error(
        "line {line}: collections nested more than {limit} deep (reel reads YAML nested \
         at most {limit} levels)"
    )]
    TooDeep {
        /// The 1-based line where the limit was passed.
        line: u64,
        /// The limit.
        limit: usize,
    },
    /// Aliases that expand the document past [`YamlLimits::expanded`].
    #[error(
        "line {line}: its aliases expand the document past {limit} bytes (reel expands \
         aliases to at most {EXPANSION_FACTOR} times a document's size)"
    )]
    TooExpanded {
        /// The 1-based line of the alias that passed the limit.
        line: u64,
        /// The limit, in bytes.
        limit: u64,
    },
    /// An alias inside the node it names, or one whose node reel cannot tell has ended.
    #[error(
        "line {line}: alias `*{name}` stands inside the node it names (a recursive \
         document), or after one reel cannot tell has ended"
    )]
    Recursive {
        /// The 1-based line of the alias.
        line: u64,
        /// The anchor's name.
        name: String,
    },
}

/// Checks `text` against `limits` (see the module's documentation).
pub fn check(text: &str, limits: YamlLimits) -> Result<(), YamlLimitError> {
    Walk::new(text.as_bytes(), limits).run()
}

/// Where a possible simple key (a mapping key not yet followed by `:`) starts.
#[derive(Debug, Clone, Copy)]
struct Mark {
    line: u64,
    index: u64,
    column: u64,
}

/// One pass over the text, with the scanner state libyaml keeps that decides where
/// tokens start: flow level, indentation stack, whether a simple key may start here and
/// the one possible at block level.
struct Walk<'a> {
    b: &'a [u8],
    limits: YamlLimits,
    pos: usize,
    line: u64,
    column: u64,
    /// Characters since the start (libyaml's mark index: a simple key goes stale 1024
    /// characters on).
    index: u64,
    flow: usize,
    indent: i64,
    indents: Vec<i64>,
    key_allowed: bool,
    key: Option<Mark>,
    /// Bytes that aliases added.
    extra: u64,
    nodes: Vec<Node>,
    names: HashMap<&'a [u8], usize>,
    /// Anchored nodes not yet ended, innermost last.
    open: Vec<usize>,
}

impl<'a> Walk<'a> {
    fn new(b: &'a [u8], limits: YamlLimits) -> Walk<'a> {
        Walk {
            b,
            limits,
            pos: 0,
            line: 1,
            column: 0,
            index: 0,
            flow: 0,
            indent: -1,
            indents: Vec::new(),
            key_allowed: true,
            key: None,
            extra: 0,
            nodes: Vec::new(),
            names: HashMap::new(),
            open: Vec::new(),
        }
    }

    fn run(mut self) -> Result<(), YamlLimitError> {
        loop {
            self.skip_to_token();
            if self.pos >= self.b.len() {
                return Ok(());
            }
            if self
                .key
                .is_some_and(|k| k.line < self.line || k.index + 1024 < self.index)
            {
                self.key = None;
            }
            if self.flow == 0 {
                self.unroll(self.column as i64);
                if self.starts_line() {
                    self.end_block_nodes();
                }
            }
            self.token()?;
        }
    }

    // --- characters -------------------------------------------------------------

    fn at(&self, k: usize) -> u8 {
        self.b.get(self.pos + k).copied().unwrap_or(0)
    }

    fn is_break(&self, k: usize) -> bool {
        match self.at(k) {
            b'\r' | b'\n' => true,
            0xC2 => self.at(k + 1) == 0x85,
            0xE2 => self.at(k + 1) == 0x80 && matches!(self.at(k + 2), 0xA8 | 0xA9),
            _ => false,
        }
    }

    fn is_blank(&self, k: usize) -> bool {
        matches!(self.at(k), b' ' | b'\t')
    }

    /// A blank, a line break or the end (libyaml's end is a NUL).
    fn is_blankz(&self, k: usize) -> bool {
        self.is_blank(k) || self.is_break(k) || self.at(k) == 0
    }

    fn is_breakz(&self, k: usize) -> bool {
        self.is_break(k) || self.at(k) == 0
    }

    fn at_end(&self) -> bool {
        self.pos >= self.b.len()
    }

    /// Moves past one character (columns count characters, as libyaml's do).
    fn skip(&mut self) {
        let width = match self.at(0) {
            0xF0.. => 4,
            0xE0.. => 3,
            0xC0.. => 2,
            _ => 1,
        };
        self.pos = (self.pos + width).min(self.b.len());
        self.column += 1;
        self.index += 1;
    }

    /// Moves past one line break (CR LF is one).
    fn skip_break(&mut self) {
        let (bytes, chars) = match self.at(0) {
            b'\r' if self.at(1) == b'\n' => (2, 2),
            b'\r' | b'\n' => (1, 1),
            0xC2 => (2, 1),
            _ => (3, 1),
        };
        self.pos = (self.pos + bytes).min(self.b.len());
        self.index += chars;
        self.column = 0;
        self.line += 1;
    }

    /// `---` or `...` at the start of a line, then a blank or the end.
    fn document_marker(&self) -> bool {
        self.column == 0
            && ((self.at(0) == b'-' && self.at(1) == b'-' && self.at(2) == b'-')
                || (self.at(0) == b'.' && self.at(1) == b'.' && self.at(2) == b'.'))
            && self.is_blankz(3)
    }

    /// Only blanks before the current position on its line.
    fn starts_line(&self) -> bool {
        let mut i = self.pos;
        while i > 0 && matches!(self.b[i - 1], b' ' | b'\t') {
            i -= 1;
        }
        let before = &self.b[..i];
        before.is_empty()
            || matches!(before.last(), Some(b'\n' | b'\r'))
            || ["\u{85}", "\u{2028}", "\u{2029}"]
                .iter()
                .any(|br| before.ends_with(br.as_bytes()))
    }

    // --- tokens -----------------------------------------------------------------

    /// Blanks, comments and line breaks between tokens (libyaml's
    /// `scan_skip_to_token`); a line break in block context allows a simple key.
    fn skip_to_token(&mut self) {
        loop {
            if self.column == 0 && self.b[self.pos..].starts_with(b"\xEF\xBB\xBF") {
                self.skip();
            }
            while self.at(0) == b' '
                || ((self.flow > 0 || !self.key_allowed) && self.at(0) == b'\t')
            {
                self.skip();
            }
            if self.at(0) == b'#' {
                while !self.is_breakz(0) {
                    self.skip();
                }
            }
            if !self.is_break(0) {
                return;
            }
            self.skip_break();
            if self.flow == 0 {
                self.key_allowed = true;
            }
        }
    }

    fn token(&mut self) -> Result<(), YamlLimitError> {
        let c = self.at(0);
        let next_blankz = self.is_blankz(1);
        if self.column == 0 && c == b'%' {
            self.document_bound();
            while !self.is_breakz(0) {
                self.skip();
            }
        } else if self.document_marker() {
            self.document_bound();
            for _ in 0..3 {
                self.skip();
            }
        } else if c == b'[' || c == b'{' {
            self.save_key();
            self.content(Content::FlowStart);
            self.flow += 1;
            self.key_allowed = true;
            self.skip();
            self.check_depth()?;
        } else if matches!(c, b']' | b'}' | b',') {
            self.flow_end_or_entry(c);
        } else if (c == b'-' && next_blankz)
            || (matches!(c, b'?' | b':') && (self.flow > 0 || next_blankz))
        {
            self.indicator(c)?;
        } else if c == b'*' || c == b'&' {
            self.alias_or_anchor(c)?;
        } else if c == b'!' {
            self.save_key();
            self.key_allowed = false;
            self.tag();
        } else if (c == b'|' || c == b'>') && self.flow == 0 {
            self.content(Content::Scalar);
            self.key = None;
            self.key_allowed = true;
            self.block_scalar();
        } else if c == b'\'' || c == b'"' {
            self.save_key();
            self.content(Content::Scalar);
            self.key_allowed = false;
            self.quoted(c == b'\'');
        } else if self.plain_starts() {
            self.save_key();
            self.content(Content::Scalar);
            self.key_allowed = false;
            self.plain();
        } else {
            // libyaml stops here ("cannot start any token"); the walk goes on.
            self.skip();
        }
        self.end_token_nodes();
        Ok(())
    }

    /// `]` or `}`, which close a flow collection, or `,` between its entries.
    fn flow_end_or_entry(&mut self, c: u8) {
        self.content(Content::Other);
        if self.flow == 0 {
            self.key = None;
        }
        if c == b',' {
            self.key_allowed = true;
            self.skip();
        } else {
            self.flow = self.flow.saturating_sub(1);
            self.key_allowed = false;
            self.skip();
            self.end_flow_nodes();
        }
    }

    /// `-` (a block sequence entry), `?` (a complex key) or `:` (a value) as an
    /// indicator; in block context each may open a collection at its column (a value,
    /// at its simple key's).
    fn indicator(&mut self, c: u8) -> Result<(), YamlLimitError> {
        self.content(Content::Other);
        match c {
            b':' if self.flow == 0 => match self.key.take() {
                Some(k) => {
                    self.roll(k.column as i64)?;
                    self.key_allowed = false;
                }
                None => {
                    self.roll(self.column as i64)?;
                    self.key_allowed = true;
                }
            },
            b':' => self.key_allowed = false,
            _ => {
                if self.flow == 0 {
                    self.roll(self.column as i64)?;
                    self.key = None;
                }
                self.key_allowed = c == b'-' || self.flow == 0;
            }
        }
        self.skip();
        Ok(())
    }

    /// `*name` (an alias, counted as its node's size) or `&name` (an anchor).
    fn alias_or_anchor(&mut self, c: u8) -> Result<(), YamlLimitError> {
        self.save_key();
        if c == b'*' {
            self.content(Content::Scalar);
        }
        self.key_allowed = false;
        let line = self.line;
        self.skip();
        let start = self.pos;
        while self.at(0).is_ascii_alphanumeric() || matches!(self.at(0), b'_' | b'-') {
            self.skip();
        }
        let name = &self.b[start..self.pos];
        if c == b'*' {
            self.alias(name, line)
        } else {
            self.anchor(name, line);
            Ok(())
        }
    }

    fn plain_starts(&self) -> bool {
        let c = self.at(0);
        let indicator = self.is_blankz(0) || b"-?:,[]{}#&*!|>'\"%@`".contains(&c);
        !indicator
            || (c == b'-' && !self.is_blank(1))
            || (self.flow == 0 && (c == b'?' || c == b':') && !self.is_blankz(1))
    }

    /// A directive or document marker: every block collection and anchored node ends.
    fn document_bound(&mut self) {
        self.unroll(-1);
        self.key = None;
        self.key_allowed = false;
        let end = self.expanded();
        for id in self.open.drain(..) {
            let node = &mut self.nodes[id];
            node.size = Some(end - node.start);
        }
    }

    fn save_key(&mut self) {
        if self.key_allowed && self.flow == 0 {
            self.key = Some(Mark {
                line: self.line,
                index: self.index,
                column: self.column,
            });
        }
    }

    fn roll(&mut self, column: i64) -> Result<(), YamlLimitError> {
        if self.flow == 0 && self.indent < column {
            self.indents.push(self.indent);
            self.indent = column;
            self.check_depth()?;
        }
        Ok(())
    }

    fn unroll(&mut self, column: i64) {
        if self.flow > 0 {
            return;
        }
        while self.indent > column {
            self.indent = self.indents.pop().unwrap_or(-1);
        }
    }

    fn check_depth(&self) -> Result<(), YamlLimitError> {
        if self.indents.len() + self.flow > self.limits.depth {
            return Err(YamlLimitError::TooDeep {
                line: self.line,
                limit: self.limits.depth,
            });
        }
        Ok(())
    }

    /// A tag: `!<verbatim>` or a handle and suffix of URI characters.
    fn tag(&mut self) {
        self.skip();
        if self.at(0) == b'<' {
            while !self.at_end() && self.at(0) != b'>' && !self.is_blankz(0) {
                self.skip();
            }
            if self.at(0) == b'>' {
                self.skip();
            }
            return;
        }
        while self.at(0).is_ascii_alphanumeric() || b"-_;/?:@&=+$.%!~*'()".contains(&self.at(0)) {
            self.skip();
        }
    }

    /// A single- or double-quoted scalar, to its closing quote.
    fn quoted(&mut self, single: bool) {
        let quote = if single { b'\'' } else { b'"' };
        self.skip();
        while !self.at_end() && !self.document_marker() {
            let c = self.at(0);
            if single && c == b'\'' && self.at(1) == b'\'' {
                self.skip();
                self.skip();
            } else if c == quote {
                self.skip();
                return;
            } else if !single && c == b'\\' {
                self.skip();
                if self.is_break(0) {
                    self.skip_break();
                } else if !self.at_end() {
                    self.skip();
                }
            } else if self.is_break(0) {
                self.skip_break();
            } else {
                self.skip();
            }
        }
    }

    /// A plain scalar, over its continuation lines (those indented past the current
    /// block), as libyaml's `scan_plain_scalar`.
    fn plain(&mut self) {
        let indent = self.indent + 1;
        let mut leading_blanks = false;
        loop {
            if self.document_marker() || self.at(0) == b'#' {
                break;
            }
            while !self.is_blankz(0) {
                let c = self.at(0);
                if self.flow > 0 && c == b':' && b",?[]{}".contains(&self.at(1)) {
                    // libyaml stops here ("found unexpected ':'").
                    return;
                }
                if (c == b':' && self.is_blankz(1)) || (self.flow > 0 && b",[]{}".contains(&c)) {
                    break;
                }
                leading_blanks = false;
                self.skip();
            }
            if !(self.is_blank(0) || self.is_break(0)) {
                break;
            }
            while self.is_blank(0) || self.is_break(0) {
                if self.is_blank(0) {
                    if leading_blanks && (self.column as i64) < indent && self.at(0) == b'\t' {
                        // libyaml stops here (a tab that violates indentation).
                        return;
                    }
                    self.skip();
                } else {
                    self.skip_break();
                    leading_blanks = true;
                }
            }
            if self.flow == 0 && (self.column as i64) < indent {
                break;
            }
        }
        if leading_blanks {
            self.key_allowed = true;
        }
    }

    /// A literal or folded block scalar: its header, then every line indented at least
    /// as far as its content (libyaml's `scan_block_scalar`).
    fn block_scalar(&mut self) {
        self.skip();
        let mut increment = 0i64;
        let digit = |c: u8| (b'1'..=b'9').contains(&c).then(|| i64::from(c - b'0'));
        if matches!(self.at(0), b'+' | b'-') {
            self.skip();
            if let Some(d) = digit(self.at(0)) {
                increment = d;
                self.skip();
            }
        } else if let Some(d) = digit(self.at(0)) {
            increment = d;
            self.skip();
            if matches!(self.at(0), b'+' | b'-') {
                self.skip();
            }
        }
        while self.is_blank(0) {
            self.skip();
        }
        if self.at(0) == b'#' {
            while !self.is_breakz(0) {
                self.skip();
            }
        }
        if !self.is_breakz(0) {
            // libyaml stops here; the walk reads on as tokens.
            return;
        }
        if self.is_break(0) {
            self.skip_break();
        }
        let mut indent = match increment {
            0 => 0,
            d if self.indent >= 0 => self.indent + d,
            d => d,
        };
        if !self.block_breaks(&mut indent) {
            return;
        }
        while self.column as i64 == indent && !self.at_end() {
            while !self.is_breakz(0) {
                self.skip();
            }
            if self.at_end() {
                return;
            }
            self.skip_break();
            if !self.block_breaks(&mut indent) {
                return;
            }
        }
    }

    /// The indentation and empty lines before a block scalar's next line; settles the
    /// content's indentation when not yet known. False where libyaml stops (a tab).
    fn block_breaks(&mut self, indent: &mut i64) -> bool {
        let mut max_indent = 0i64;
        loop {
            while (*indent == 0 || (self.column as i64) < *indent) && self.at(0) == b' ' {
                self.skip();
            }
            max_indent = max_indent.max(self.column as i64);
            if (*indent == 0 || (self.column as i64) < *indent) && self.at(0) == b'\t' {
                return false;
            }
            if !self.is_break(0) {
                break;
            }
            self.skip_break();
        }
        if *indent == 0 {
            *indent = max_indent.max(self.indent + 1).max(1);
        }
        true
    }
}

#[cfg(test)]
mod tests;
