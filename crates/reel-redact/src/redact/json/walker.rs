//! The walker itself: one left-to-right pass over JSON text that validates it, tracks
//! where it is (member names, array indices, the protocol role of each container, the
//! path automaton, the sibling rules) and rewrites whole string tokens only.

use super::envelope::RootMembers;
use super::token::{contents, decode_into, quote};
use crate::redact::builtin::Revision;
use crate::redact::compiled::Compiled;
use crate::redact::context::looks_random;
use crate::redact::names::Strength;
use crate::redact::pairs::{self, Pairs, Slot};
use crate::redact::path::{Action, Member};
use crate::redact::protocol::{self, Role};
use crate::redact::splice::MARKER;
use crate::redact::text::{Gate, LiteralCursor};
use reel_trace::jsonrpc::RpcKind;

/// What happens to the strings of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Value rules apply to strings; members are looked at one by one.
    Normal,
    /// Under a secret key or a path rule: every string becomes the marker.
    Secret,
    /// Under a weak secret key (`sessionId`, `accountKey`): a string that looks random
    /// becomes the marker, others get the value rules.
    Weak,
    /// A replay exemption: nothing below is touched.
    Verbatim,
}

/// An open object or array.
#[derive(Debug)]
struct Frame {
    object: bool,
    mode: Mode,
    role: Role,
    /// No member read yet.
    first: bool,
    next_index: usize,
    /// Start of this container's path states on the walker's state stack.
    states: usize,
    /// `reel/3`: what its members say of each other (`pairs`).
    pairs: Pairs,
}

/// The input is not JSON; the walker gives up and the input is returned as is.
#[derive(Debug)]
pub(super) struct Invalid;

/// What the walker is walking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Embedding {
    /// A message: every rule applies; the input must be complete, valid JSON.
    Message,
    /// JSON held as text: key rules only (value rules run on the whole text after),
    /// no path rules, and the input may end anywhere.
    Text {
        /// Nesting level of this text (1 = a string of a message, or free text).
        depth: u8,
        /// Its root may be a JSON-RPC message.
        message: bool,
    },
}

pub(super) struct Walker<'s, 'r> {
    src: &'s str,
    b: &'s [u8],
    pub(super) pos: usize,
    /// The output so far; allocated at the first rewrite.
    out: Option<String>,
    /// `src[..copied]` is accounted for in `out`.
    copied: usize,
    rules: &'r Compiled,
    frames: Vec<Frame>,
    /// Path-automaton states of every open container, stacked.
    states: Vec<u32>,
    step_buf: Vec<u32>,
    key_buf: String,
    /// Where the prefilter matches in `src`, found as string tokens are read.
    literals: LiteralCursor,
    how: Embedding,
    /// The input ended where more was expected (a torn document).
    pub(super) eof: bool,
    /// What the root is: a batch, an object whose members are noted, or neither.
    root: Root,
    /// `reel/3` sibling rules apply (the key rule is on).
    pairs: bool,
    /// Where the value being read sits, for the sibling rules.
    slot: Slot,
}

/// The root value, as far as its JSON-RPC kind goes.
#[derive(Debug)]
enum Root {
    Array,
    Object(RootMembers),
    Scalar,
}

impl<'s, 'r> Walker<'s, 'r> {
    pub(super) fn new(rules: &'r Compiled, src: &'s str, how: Embedding) -> Self {
        Walker {
            src,
            b: src.as_bytes(),
            pos: 0,
            out: None,
            copied: 0,
            rules,
            frames: Vec::new(),
            states: Vec::new(),
            step_buf: Vec::new(),
            key_buf: String::new(),
            literals: rules.values.literal_cursor(),
            how,
            eof: false,
            root: Root::Scalar,
            pairs: rules.secret_keys && rules.revision >= Revision::Reel3,
            slot: Slot::Member,
        }
    }

    /// The JSON-RPC kind of a message the walk read whole.
    pub(super) fn kind(&self) -> RpcKind {
        match &self.root {
            Root::Array => RpcKind::Batch,
            Root::Object(members) => members.kind(),
            Root::Scalar => RpcKind::Invalid,
        }
    }

    /// The output for `src[..end]`, when anything was rewritten there.
    pub(super) fn finish_at(self, end: usize) -> Option<String> {
        let mut out = self.out?;
        out.push_str(&self.src[self.copied.min(end)..end]);
        Some(out)
    }

    /// The output, when anything was rewritten.
    pub(super) fn finish(self) -> Option<String> {
        let mut out = self.out?;
        out.push_str(&self.src[self.copied..]);
        Some(out)
    }

    /// Path rules apply to messages only: a path names a place in a message.
    fn uses_paths(&self) -> bool {
        self.how == Embedding::Message && !self.rules.paths.is_empty()
    }

    pub(super) fn run(&mut self) -> Result<(), Invalid> {
        self.ws();
        let mut mode = Mode::Normal;
        let mut truncate = None;
        if self.uses_paths() {
            self.rules.paths.root(&mut self.states);
            match self.rules.paths.accepted(&self.states) {
                Some(Action::Redact) => mode = Mode::Secret,
                Some(Action::Truncate(n)) => truncate = Some(n),
                None => {}
            }
        }
        let first = self.peek()?;
        let object = first == b'{';
        if self.how == Embedding::Message {
            self.root = match first {
                b'{' => Root::Object(RootMembers::default()),
                b'[' => Root::Array,
                _ => Root::Scalar,
            };
        }
        let role = match self.how {
            Embedding::Message | Embedding::Text { message: true, .. } => {
                protocol::root_role(object)
            }
            Embedding::Text { message: false, .. } => Role::Other,
        };
        self.value(mode, role, truncate, 0)?;
        while let Some(top) = self.frames.last_mut() {
            let (object, first) = (top.object, top.first);
            top.first = false;
            self.ws();
            let c = self.peek()?;
            if c == if object { b'}' } else { b']' } {
                self.pos += 1;
                if let Some(done) = self.frames.pop() {
                    self.states.truncate(done.states);
                }
                continue;
            }
            if !first {
                if c != b',' {
                    return Err(Invalid);
                }
                self.pos += 1;
                self.ws();
            }
            if object {
                self.member()?;
            } else {
                self.element()?;
            }
        }
        self.ws();
        // `reel/3`: JSON held in text may have text after it (`… error="{…}" more`);
        // the walk ends with the value, and the rest is left to the value rules.
        let text_after =
            matches!(self.how, Embedding::Text { .. }) && self.rules.revision >= Revision::Reel3;
        if self.pos == self.b.len() || text_after {
            Ok(())
        } else {
            Err(Invalid)
        }
    }

    /// `"key": value` inside an object.
    fn member(&mut self) -> Result<(), Invalid> {
        if self.peek()? != b'"' {
            return Err(Invalid);
        }
        let (start, end, escaped) = self.string()?;
        self.ws();
        if self.peek()? != b':' {
            return Err(Invalid);
        }
        self.pos += 1;
        self.ws();
        let first = self.peek()?;
        let src = self.src;
        let mut key_buf = std::mem::take(&mut self.key_buf);
        let key = if escaped {
            key_buf.clear();
            decode_into(&src[start..end], &mut key_buf);
            key_buf.as_str()
        } else {
            &src[start..end]
        };
        if self.frames.len() == 1 {
            if let Root::Object(members) = &mut self.root {
                members.note(key, first);
            }
        }
        self.slot = if self.pairs {
            Slot::of_key(key)
        } else {
            Slot::Member
        };
        let (mode, role, truncate, states) = self.child(Member::Key(key), first);
        self.key_buf = key_buf;
        self.value(mode, role, truncate, states)
    }

    /// One element of an array.
    fn element(&mut self) -> Result<(), Invalid> {
        let index = match self.frames.last_mut() {
            Some(top) => {
                top.next_index += 1;
                top.next_index - 1
            }
            None => return Err(Invalid),
        };
        let first = self.peek()?;
        self.slot = Slot::Index(index);
        let (mode, role, truncate, states) = self.child(Member::Index(index), first);
        self.value(mode, role, truncate, states)
    }

    /// Decides how the value at `member` of the innermost container is treated;
    /// `first` is the value's first byte. Pushes the value's path states.
    fn child(&mut self, member: Member<'_>, first: u8) -> (Mode, Role, Option<usize>, usize) {
        let start = self.states.len();
        let Some(top) = self.frames.last() else {
            return (Mode::Normal, Role::Other, None, start);
        };
        let key = match member {
            Member::Key(k) => Some(k),
            Member::Index(_) => None,
        };
        let container = first == b'{' || first == b'[';
        let role = if container {
            protocol::child_role(top.role, key, first == b'{')
        } else {
            Role::Other
        };
        let mut mode = match top.mode {
            Mode::Verbatim => Mode::Verbatim,
            _ if key.is_some_and(|k| protocol::is_verbatim(top.role, k)) => Mode::Verbatim,
            Mode::Secret => Mode::Secret,
            inherited @ (Mode::Normal | Mode::Weak) => {
                let named = key.and_then(|k| self.rules.key_strength(k));
                let sibling = if self.pairs {
                    pairs::strength(&top.pairs, self.slot)
                } else {
                    None
                };
                match named.or(sibling) {
                    Some(Strength::Strong) => Mode::Secret,
                    Some(Strength::Weak) => Mode::Weak,
                    None => inherited,
                }
            }
        };
        let mut truncate = None;
        if matches!(mode, Mode::Normal | Mode::Weak) && self.uses_paths() {
            self.step_buf.clear();
            let from = &self.states[top.states..start];
            self.rules.paths.step(from, member, &mut self.step_buf);
            self.states.extend_from_slice(&self.step_buf);
            match self.rules.paths.accepted(&self.states[start..]) {
                Some(Action::Redact) => mode = Mode::Secret,
                Some(Action::Truncate(n)) => truncate = Some(n),
                None => {}
            }
        }
        (mode, role, truncate, start)
    }

    /// Reads one value; a container is opened (its members are read by `run`).
    fn value(
        &mut self,
        mode: Mode,
        role: Role,
        truncate: Option<usize>,
        states: usize,
    ) -> Result<(), Invalid> {
        match self.peek()? {
            c @ (b'{' | b'[') => {
                let pairs = if self.pairs {
                    pairs::open(self.frames.last().map(|f| &f.pairs), self.slot, c == b'[')
                } else {
                    Pairs::default()
                };
                self.frames.push(Frame {
                    object: c == b'{',
                    mode,
                    role,
                    first: true,
                    next_index: 0,
                    states,
                    pairs,
                });
                self.pos += 1;
                return Ok(());
            }
            b'"' => {
                let (start, end, escaped) = self.string()?;
                let mut mode = mode;
                if self.pairs
                    && matches!(mode, Mode::Normal | Mode::Weak)
                    && self.sibling_secret(start, end, escaped)
                {
                    mode = Mode::Secret;
                }
                // Rules that change nothing: the walk only validates (and classifies).
                if !self.rules.is_identity() {
                    self.string_value(mode, truncate, start, end, escaped);
                }
            }
            b't' => self.literal(b"true")?,
            b'f' => self.literal(b"false")?,
            b'n' => self.literal(b"null")?,
            b'-' | b'0'..=b'9' => self.number()?,
            _ => return Err(Invalid),
        }
        self.states.truncate(states);
        Ok(())
    }

    /// Tells the sibling rules of the string token `start..end` just read; whether it
    /// is a secret by itself (a JWT part standing alone).
    fn sibling_secret(&mut self, start: usize, end: usize, escaped: bool) -> bool {
        if !matches!(self.slot, Slot::Name | Slot::Index(_)) {
            return false;
        }
        let text = contents(&self.src[start..end], escaped);
        let (parent, top) = match self.frames.as_mut_slice() {
            [.., parent, top] => (Some(&mut parent.pairs), &mut top.pairs),
            [top] => (None, &mut top.pairs),
            [] => return false,
        };
        pairs::saw_string(top, parent, self.slot, &text)
    }

    /// Applies the rules to the string token whose contents are `start..end`.
    fn string_value(
        &mut self,
        mode: Mode,
        truncate: Option<usize>,
        start: usize,
        end: usize,
        escaped: bool,
    ) {
        let text = contents(&self.src[start..end], escaped);
        let replacement = match mode {
            Mode::Verbatim => None,
            Mode::Secret => (text != MARKER).then(|| MARKER.to_owned()),
            Mode::Normal | Mode::Weak => {
                let redacted = match self.how {
                    Embedding::Message => {
                        // An escape can spell a literal the raw text does not show.
                        let gate = if escaped {
                            Gate::Scan
                        } else {
                            Gate::Known(self.hit_within(start, end))
                        };
                        self.rules.string(&text, truncate, gate, 0)
                    }
                    Embedding::Text { depth, .. } => self.rules.embedded(&text, depth),
                };
                // Under a weak key, judged on what the value rules leave, so a second
                // pass judges the same text.
                let left = redacted.as_deref().unwrap_or(&text);
                if mode == Mode::Weak && looks_random(left) {
                    (text != MARKER).then(|| MARKER.to_owned())
                } else {
                    redacted
                }
            }
        };
        if let Some(new) = replacement {
            let mut quoted = quote(&new);
            let mut end = end + 1;
            if end > self.b.len() {
                // A string the input cut short stays open.
                quoted.pop();
                end = self.b.len();
            }
            self.replace(start - 1, end, &quoted);
        }
    }

    /// Whether the prefilter matches inside `start..end` (tokens are read in order).
    /// Sound on raw JSON text: no literal holds `"`, so a match lies inside one string
    /// token, and one inside an escape-free string is a substring of the raw text.
    fn hit_within(&mut self, start: usize, end: usize) -> bool {
        self.rules
            .values
            .literal_within(&mut self.literals, self.src, start, end)
    }

    fn replace(&mut self, start: usize, end: usize, with: &str) {
        let out = self
            .out
            .get_or_insert_with(|| String::with_capacity(self.src.len() + 16));
        out.push_str(&self.src[self.copied..start]);
        out.push_str(with);
        self.copied = end;
    }

    fn peek(&mut self) -> Result<u8, Invalid> {
        match self.b.get(self.pos) {
            Some(&c) => Ok(c),
            None => {
                self.eof = true;
                Err(Invalid)
            }
        }
    }

    /// Whether a cut-short document may end here.
    fn tolerant(&self) -> bool {
        self.how != Embedding::Message
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.pos) {
            self.pos += 1;
        }
    }

    /// Reads a string token at `pos` (an opening quote); returns the contents' range
    /// and whether it holds escapes. Validates escapes and rejects raw control bytes.
    /// (Not `reel_trace::json_str::string_end`: redaction must refuse text that is not
    /// JSON, so this scan validates what that one skips.)
    fn string(&mut self) -> Result<(usize, usize, bool), Invalid> {
        let b = self.b;
        let start = self.pos + 1;
        let mut i = start;
        let mut escaped = false;
        loop {
            // The hot loop of the whole module: find the next quote or backslash with
            // SIMD, then check the skipped span for raw control bytes in a form the
            // compiler vectorises (no early exit).
            let next = memchr::memchr2(b'"', b'\\', &b[i..]).map_or(b.len(), |p| i + p);
            if b[i..next].iter().fold(false, |bad, &c| bad | (c < 0x20)) {
                return Err(Invalid);
            }
            i = next;
            match b.get(i) {
                Some(b'"') => break,
                Some(b'\\') => {
                    escaped = true;
                    match b.get(i + 1) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                        Some(b'u') => match b.get(i + 2..i + 6) {
                            Some(hex) if hex.iter().all(u8::is_ascii_hexdigit) => i += 6,
                            None if self.tolerant() => return self.cut_string(start, escaped),
                            _ => return Err(Invalid),
                        },
                        None if self.tolerant() => return self.cut_string(start, escaped),
                        _ => return Err(Invalid),
                    }
                }
                None if self.tolerant() => return self.cut_string(start, escaped),
                _ => return Err(Invalid),
            }
        }
        self.pos = i + 1;
        Ok((start, i, escaped))
    }

    /// A string the input ends inside of: its contents run to the end (the walker
    /// then stops at end of input).
    fn cut_string(&mut self, start: usize, escaped: bool) -> Result<(usize, usize, bool), Invalid> {
        self.pos = self.b.len();
        Ok((start, self.b.len(), escaped))
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), Invalid> {
        let rest = &self.b[self.pos..];
        if rest.starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            self.eof = word.starts_with(rest);
            Err(Invalid)
        }
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    fn number(&mut self) -> Result<(), Invalid> {
        let b = self.b;
        let mut i = self.pos;
        let digits = |mut i: usize| {
            let from = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            (i, i > from)
        };
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => i = digits(i).0,
            None => {
                self.eof = true;
                return Err(Invalid);
            }
            _ => return Err(Invalid),
        }
        if b.get(i) == Some(&b'.') {
            let (next, any) = digits(i + 1);
            if !any {
                self.eof = next == b.len();
                return Err(Invalid);
            }
            i = next;
        }
        if let Some(b'e' | b'E') = b.get(i) {
            i += 1;
            if let Some(b'+' | b'-') = b.get(i) {
                i += 1;
            }
            let (next, any) = digits(i);
            if !any {
                self.eof = next == b.len();
                return Err(Invalid);
            }
            i = next;
        }
        self.pos = i;
        Ok(())
    }
}
