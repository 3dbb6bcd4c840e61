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
use reel_trace::jsonrpc::RpcKind;

mod envelope;
mod token;
mod walker;

use self::walker::{Embedding, Invalid, Walker};

/// How many levels of JSON held as text inside JSON held as text are walked.
pub(crate) const MAX_NESTING: u8 = 2;

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
