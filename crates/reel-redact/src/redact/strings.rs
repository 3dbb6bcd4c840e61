//! The compiled rules applied to one string: a string value of a message (JSON held
//! as text walked first, then `drop-media`, the value rules and `truncate`) and free
//! text (a command argument, a stderr line, a line that is not JSON).
//!
//! This and the JSON walk call each other (a string may hold JSON, whose strings get
//! these rules), up to [`json::MAX_NESTING`] levels deep: the walk reaches these
//! methods through the [`Compiled`] it is given, and this file calls the walk.

use std::borrow::Cow;

use super::builtin::Revision;
use super::compiled::Compiled;
use super::json;
use super::size;
use super::text::{self, Gate};

impl Compiled {
    /// [`Compiled::text`] as the [`Redactor`](super::Redactor) returns it: borrowed
    /// when nothing changed.
    pub(crate) fn redact_text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match self.text(text) {
            Some(redacted) => Cow::Owned(redacted),
            None => Cow::Borrowed(text),
        }
    }

    /// `reel/2`: the key rules applied to `text` when it is JSON held as text, `depth`
    /// the nesting level of the string it sits in (0 for a message's own strings and
    /// for free text).
    pub(crate) fn embedded(&self, text: &str, depth: u8) -> Option<String> {
        if !self.secret_keys || self.revision < Revision::Reel2 || depth >= json::MAX_NESTING {
            return None;
        }
        json::redact_embedded(self, text, depth + 1, false)
    }

    /// Free text (a command argument, a stderr line, a line that is not JSON): the key
    /// rules if it is JSON (complete or cut short, a JSON-RPC message's exemptions
    /// kept), then the value rules.
    pub(crate) fn text(&self, text: &str) -> Option<String> {
        let walks = self.secret_keys && self.revision >= Revision::Reel2;
        let mut current: Option<String> = None;
        // The value rules can turn text the walk gave up on into (the start of) JSON
        // it reads, so the two alternate until neither changes anything.
        for _ in 0..text::MAX_ROUNDS {
            let base = current.as_deref().unwrap_or(text);
            let embedded = walks
                .then(|| json::redact_embedded(self, base, 1, true))
                .flatten();
            let walked = embedded.as_deref().unwrap_or(base);
            let next = self.values.apply(walked, Gate::Scan).or(embedded);
            match next {
                Some(next) if next != base => current = Some(next),
                _ => break,
            }
        }
        current.filter(|out| out != text)
    }

    /// The rules for one string value outside secret and verbatim positions: the key
    /// rules inside JSON held as text, `drop-media`, the value rules, then `truncate`.
    /// A truncated string is recognised by its notice and only its head is redacted
    /// again, so the result is a fixed point: redacting it again changes nothing.
    pub(crate) fn string(
        &self,
        text: &str,
        truncate: Option<usize>,
        gate: Gate,
        depth: u8,
    ) -> Option<String> {
        let once = self.string_once(text, truncate, gate, depth)?;
        if self.revision < Revision::Reel2 || !looks_like_json(&once) {
            return (once != text).then_some(once);
        }
        // As in `text`: the value rules can make JSON the walk reads.
        let mut current = once;
        for _ in 1..text::MAX_ROUNDS {
            match self.string_once(&current, truncate, Gate::Scan, depth) {
                Some(next) if next != current => current = next,
                _ => break,
            }
        }
        (current != text).then_some(current)
    }

    fn string_once(
        &self,
        text: &str,
        truncate: Option<usize>,
        gate: Gate,
        depth: u8,
    ) -> Option<String> {
        let embedded = self.embedded(text, depth);
        let base = embedded.as_deref().unwrap_or(text);
        let dropped = self.drop_media.and_then(|min| size::drop_media(base, min));
        let input = dropped.as_deref().unwrap_or(base);
        let out = match truncate {
            None => self.values.apply(input, gate),
            Some(max) => self.truncated(input, max, gate),
        };
        out.or(dropped).or(embedded).filter(|out| out != text)
    }

    fn truncated(&self, input: &str, max: usize, gate: Gate) -> Option<String> {
        if let Some((head, notice)) = size::split_truncated(input) {
            return self.values.apply(head, gate).map(|head| head + notice);
        }
        let redacted = self.values.apply(input, gate);
        let full = redacted.as_deref().unwrap_or(input);
        match size::truncate(full, max) {
            Some((head, notice)) => {
                let head = self
                    .values
                    .apply(head, gate)
                    .unwrap_or_else(|| head.to_owned());
                Some(head + &notice)
            }
            None => redacted,
        }
    }
}

/// Whether `text` starts (after white space) like a JSON object or array: the only
/// text the walk of JSON held as text reads.
fn looks_like_json(text: &str) -> bool {
    matches!(
        text.bytes()
            .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r')),
        Some(b'{' | b'[')
    )
}
