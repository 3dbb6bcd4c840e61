//! The streaming walker: redaction applied to JSON *text*, in one left-to-right pass.
//!
//! Why text and not `serde_json::Value`: a trace keeps `raw` as the exact bytes
//! received. Parsing into a tree and printing it again would reorder nothing but still
//! change spacing, escapes and number spelling (`1.0`, `1e2`), and would allocate for
//! every message. The walker instead validates the JSON as it goes, tracks where it is
//! (member names, array indices, the protocol role of each container, the rule-file
//! path automaton) and only ever rewrites whole string tokens.
//!
//! Invariants:
//! - Every byte outside a rewritten string token is copied unchanged; when nothing is
//!   rewritten the caller gets the input back borrowed (no allocation).
//! - A rewritten string is re-encoded as a valid JSON string, so the output is valid
//!   JSON whenever the input is; input that is not valid JSON is returned unchanged.
//! - Numbers, `true`, `false` and `null` are never rewritten.
//! - No recursion: nesting depth costs heap, not stack, and every byte is looked at a
//!   bounded number of times (the rules themselves are linear, see `text`).
//!
//! `reel/2` also walks JSON *held as text* — a tool result's text copy of its
//! `structuredContent`, a service-account file in a string, a JSON log line on stderr,
//! a torn line recorded as `reel.nonjson` — with the key rules only
//! ([`redact_embedded`]): what a member named `password` holds goes whether the JSON
//! arrives as a message or as a string, and a document cut short is walked as far as
//! it goes. At most [`MAX_NESTING`] levels of text inside text are walked, so the work
//! stays a small multiple of the input.

use std::borrow::Cow;

use super::builtin::Revision;
use super::compiled::Compiled;
use super::context::looks_random;
use super::names::Strength;
use super::pairs::{self, Pairs, Slot};
use super::path::{Action, Member};
use super::protocol::{self, Role};
use super::splice::MARKER;
use super::text::{Gate, LiteralCursor};
use reel_trace::jsonrpc::{EnvelopeShape, IdShape, RpcKind};

/// How many levels of JSON held as text inside JSON held as text are walked.
pub(crate) const MAX_NESTING: u8 = 2;

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
struct Invalid;

/// A message line, read once: redacted by the pass that also validates it and tells
/// its JSON-RPC kind (the recorder's hot path: no second parse). `None` when `src`
/// is not one JSON value (surrounding white space allowed). With rules that change
/// nothing the walk only validates.
pub(crate) fn redact_message<'a>(
    rules: &Compiled,
    src: &'a str,
) -> Option<(Cow<'a, str>, RpcKind)> {
    let mut walker = Walker::new(rules, src, Embedding::Message);
    walker.run().ok()?;
    let kind = walker.kind();
    let text = walker.finish().map_or(Cow::Borrowed(src), Cow::Owned);
    Some((text, kind))
}

/// Redacts `src`, one JSON value with optional surrounding white space.
pub(crate) fn redact<'a>(rules: &Compiled, src: &'a str) -> Cow<'a, str> {
    redact_if_json(rules, src).unwrap_or(Cow::Borrowed(src))
}

/// [`redact`], or `None` when `src` is not one complete JSON value (the caller then
/// redacts it as text).
pub(crate) fn redact_if_json<'a>(rules: &Compiled, src: &'a str) -> Option<Cow<'a, str>> {
    if rules.skips_whole(src, || rules.values.builtin_candidate(src)) {
        return Some(Cow::Borrowed(src));
    }
    redact_message(rules, src).map(|(text, _)| text)
}

/// Applies the key rules to JSON held as text at nesting level `depth` (1 for a
/// string of a message or a line of free text). The document may be cut short (a torn
/// line): it is walked up to where it stops. `message` says whether its root may be a
/// JSON-RPC message (free text) rather than a document inside one, so the envelope
/// keeps its exemptions. `None` when the text is not (the start of) a JSON object or
/// array, or nothing changed.
pub(crate) fn redact_embedded(
    rules: &Compiled,
    text: &str,
    depth: u8,
    message: bool,
) -> Option<String> {
    // `reel/3`: a Python `repr` (`{'password': 'x'}`, `[['API_KEY', 'x']]`), as logs
    // and error messages print dicts and lists, is walked as the JSON it would be with
    // its quotes swapped (a byte-for-byte exchange, undone on the result).
    if rules.revision >= Revision::Reel3 && python_start(text) {
        let swapped = swap_quotes(text);
        return walk_embedded(rules, &swapped, depth, message).map(|out| swap_quotes(&out));
    }
    walk_embedded(rules, text, depth, message)
}

/// Whether `text` holds what may be a Python `repr` of a dict or list: its first
/// opening of a container (`{` or `[`, after any further `[`/`{`) is followed by `'`.
fn python_start(text: &str) -> bool {
    let b = text.as_bytes();
    let Some(i) = memchr::memchr2(b'{', b'[', b) else {
        return false;
    };
    let next = b[i..].iter().find(|&&c| !matches!(c, b'{' | b'[' | b' '));
    next == Some(&b'\'')
}

/// `text` with `'` and `"` exchanged.
fn swap_quotes(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\'' => '"',
            '"' => '\'',
            c => c,
        })
        .collect()
}

fn walk_embedded(rules: &Compiled, text: &str, depth: u8, message: bool) -> Option<String> {
    if rules.revision >= Revision::Reel3 {
        return walk_values_in_text(rules, text, depth, message);
    }
    let first = text
        .bytes()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))?;
    if first != b'{' && first != b'[' {
        return None;
    }
    let how = Embedding::Text { depth, message };
    let mut walker = Walker::new(rules, text, how);
    match walker.run() {
        Ok(()) => walker.finish(),
        Err(Invalid) if walker.eof => walker.finish(),
        Err(Invalid) => None,
    }
}

/// At most this many JSON values are looked for in one text (`reel/3`).
const VALUES_IN_TEXT_MAX: usize = 256;

/// `reel/3`: every JSON value held in `text` — the whole text, a line that ends in JSON
/// (`connect failed: {"password": …}`), several documents among lines of prose — each
/// walked from where it starts (see [`json_start`]) to where it ends; the text between
/// is left to the value rules. Only a text that starts with its JSON may be a JSON-RPC
/// message (`message`).
fn walk_values_in_text(rules: &Compiled, text: &str, depth: u8, message: bool) -> Option<String> {
    let leading = text
        .bytes()
        .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))?;
    // Filled only once something is rewritten: a text with nothing to redact is not
    // copied (it may be a string of hundreds of megabytes).
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut from = 0;
    for tries in 0..VALUES_IN_TEXT_MAX {
        let rest = &text[from..];
        let at = if tries == 0 && matches!(text.as_bytes()[leading], b'{' | b'[') {
            leading
        } else {
            match json_start(rest) {
                Some(at) => at,
                None => break,
            }
        };
        let whole_message = message && from == 0 && at == leading;
        let how = Embedding::Text {
            depth,
            message: whole_message,
        };
        let mut walker = Walker::new(rules, &rest[at..], how);
        let walked = matches!(walker.run(), Ok(())) || walker.eof;
        if !walked {
            // Not JSON after all: step past the bracket and look again.
            from += at + 1;
            continue;
        }
        let end = walker.pos.max(1);
        if let Some(rewritten) = walker.finish_at(end) {
            let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
            o.push_str(&text[copied..from + at]);
            o.push_str(&rewritten);
            copied = from + at + end;
        }
        from += at + end;
        if from >= text.len() {
            break;
        }
    }
    let mut out = out?;
    out.push_str(&text[copied..]);
    Some(out)
}

/// Where JSON held inside a line of text starts: the first `{"`, `[{`, `["` or `[[`.
fn json_start(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    memchr::memchr2_iter(b'{', b'[', b).find(|&i| {
        matches!(
            (b[i], b.get(i + 1)),
            (b'{', Some(b'"')) | (b'[', Some(b'"' | b'[' | b'{'))
        )
    })
}

/// The members of a root object that decide its JSON-RPC kind, noted as the walker
/// passes them. A repeated one makes the object no envelope, as it does for the
/// parser of [`reel_trace::jsonrpc::Envelope`], which refuses a duplicate field.
#[derive(Debug, Default)]
struct RootMembers {
    /// Which of [`ENVELOPE_MEMBERS`] were seen, a bit each.
    seen: u8,
    repeated: bool,
    id_null: bool,
    method_string: bool,
}

/// The members of an envelope, in the order of their bits in [`RootMembers::seen`].
const ENVELOPE_MEMBERS: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];

impl RootMembers {
    fn has(&self, member: &str) -> bool {
        let bit = ENVELOPE_MEMBERS.iter().position(|m| *m == member);
        bit.is_some_and(|b| self.seen & (1 << b) != 0)
    }

    /// Member `key` of the root object, whose value starts with `first`.
    fn note(&mut self, key: &str, first: u8) {
        let Some(bit) = ENVELOPE_MEMBERS.iter().position(|m| *m == key) else {
            return;
        };
        self.repeated |= self.seen & (1 << bit) != 0;
        self.seen |= 1 << bit;
        match key {
            "id" => self.id_null = first == b'n',
            "method" => self.method_string = first == b'"',
            _ => {}
        }
    }

    fn kind(&self) -> RpcKind {
        if self.repeated {
            return RpcKind::Invalid;
        }
        let id = if self.id_null {
            IdShape::Null
        } else {
            IdShape::Given
        };
        EnvelopeShape {
            method: self.has("method") && self.method_string,
            id: self.has("id").then_some(id),
            result: self.has("result"),
            error: self.has("error"),
        }
        .kind()
    }
}

/// What the walker is walking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Embedding {
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

struct Walker<'s, 'r> {
    src: &'s str,
    b: &'s [u8],
    pos: usize,
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
    eof: bool,
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
    fn new(rules: &'r Compiled, src: &'s str, how: Embedding) -> Self {
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
    fn kind(&self) -> RpcKind {
        match &self.root {
            Root::Array => RpcKind::Batch,
            Root::Object(members) => members.kind(),
            Root::Scalar => RpcKind::Invalid,
        }
    }

    /// The output for `src[..end]`, when anything was rewritten there.
    fn finish_at(self, end: usize) -> Option<String> {
        let mut out = self.out?;
        out.push_str(&self.src[self.copied.min(end)..end]);
        Some(out)
    }

    /// The output, when anything was rewritten.
    fn finish(self) -> Option<String> {
        let mut out = self.out?;
        out.push_str(&self.src[self.copied..]);
        Some(out)
    }

    /// Path rules apply to messages only: a path names a place in a message.
    fn uses_paths(&self) -> bool {
        self.how == Embedding::Message && !self.rules.paths.is_empty()
    }

    fn run(&mut self) -> Result<(), Invalid> {
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
        let raw = &self.src[start..end];
        let text: Cow<'_, str> = if escaped {
            let mut s = String::with_capacity(raw.len());
            decode_into(raw, &mut s);
            Cow::Owned(s)
        } else {
            Cow::Borrowed(raw)
        };
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
        let raw = &self.src[start..end];
        let text: Cow<'_, str> = if escaped {
            let mut s = String::with_capacity(raw.len());
            decode_into(raw, &mut s);
            Cow::Owned(s)
        } else {
            Cow::Borrowed(raw)
        };
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

/// Decodes the contents of a validated JSON string token. A lone surrogate escape
/// (valid JSON, not a Unicode scalar) decodes to U+FFFD; it only matters if the string
/// is then rewritten.
fn decode_into(raw: &str, out: &mut String) {
    let b = raw.as_bytes();
    let hex = |at: usize| -> u32 {
        raw.get(at..at + 4)
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .unwrap_or(0xFFFD)
    };
    out.reserve(raw.len());
    // Runs without a backslash are copied whole; only escapes are looked at one by one.
    let mut at = 0;
    while let Some(i) = memchr::memchr(b'\\', &b[at..]) {
        let i = at + i;
        out.push_str(&raw[at..i]);
        let Some(&e) = b.get(i + 1) else {
            return;
        };
        at = i + 2;
        match e {
            b'b' => out.push('\u{08}'),
            b'f' => out.push('\u{0C}'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'u' => {
                let hi = hex(i + 2);
                at = (i + 6).min(b.len());
                let pair = (0xD800..0xDC00).contains(&hi)
                    && b.get(i + 6) == Some(&b'\\')
                    && b.get(i + 7) == Some(&b'u');
                let lo = if pair { hex(i + 8) } else { 0 };
                let code = if pair && (0xDC00..0xE000).contains(&lo) {
                    at = (i + 12).min(b.len());
                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                } else {
                    hi
                };
                out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
            }
            e if e.is_ascii() => out.push(char::from(e)),
            _ => {
                // Not JSON (a validated token never has this); keep the character.
                let c = raw[i + 1..].chars().next().unwrap_or('\u{FFFD}');
                out.push(c);
                at = i + 1 + c.len_utf8();
            }
        }
        // A `\u` cut short at the end of the token leaves `at` where it stopped.
        if !raw.is_char_boundary(at) {
            return;
        }
    }
    out.push_str(&raw[at..]);
}

/// `s` as a JSON string token: quotes, backslashes and control characters escaped,
/// everything else as is.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn string_tokens_decode_as_serde_json_decodes_them() {
        for token in [
            r#"plain text, no escapes"#,
            r#"a\"b\\c\/d\b\f\n\r\t"#,
            r#"\u00e9t\u00E9 \ud83d\ude00 done"#,
            r#"lone \ud83d surrogate"#,
            r#"üñí\ncødé \u0041"#,
            r#"\\"#,
            r#"ends with escape\n"#,
        ] {
            let mut out = String::new();
            decode_into(token, &mut out);
            let want: String = serde_json::from_str(&format!("\"{token}\""))
                .unwrap_or_else(|_| "\u{FFFD}".to_owned());
            if token.contains("lone") {
                assert_eq!(out, "lone \u{FFFD} surrogate");
            } else {
                assert_eq!(out, want, "{token}");
            }
        }
    }

    use super::*;

    fn decoded(raw: &str) -> String {
        let mut s = String::new();
        decode_into(raw, &mut s);
        s
    }

    #[test]
    fn decodes_like_serde_json() {
        for raw in [
            r#"plain"#,
            r#"a\"b\\c\/d\b\f\n\r\t"#,
            r#"\u00e9\u0041"#,
            r#"\ud83d\ude00 smile"#,
            r#"é ü 😀"#,
        ] {
            let via_serde: String = serde_json::from_str(&format!("\"{raw}\""))
                .unwrap_or_else(|e| panic!("{raw}: {e}"));
            assert_eq!(decoded(raw), via_serde, "{raw}");
        }
        assert_eq!(decoded(r#"\ud800x"#), "\u{FFFD}x");
        assert_eq!(decoded(r#"\udc00"#), "\u{FFFD}");
    }

    #[test]
    fn quote_round_trips() {
        for s in ["", "a\"b", "\\", "\u{1}\u{1f}\n", "é😀", "[REDACTED]"] {
            let back: String = serde_json::from_str(&quote(s)).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(back, s);
        }
    }
}
