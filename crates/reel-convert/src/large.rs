//! Lines too large to copy. A line format's line of [`LARGE_LINE`] bytes or more is
//! taken out of the reader whole (no copy), its long strings (each [`HOLE_MIN`] bytes or
//! more, quotes included) are left where they are and replaced by short marks in a
//! skeleton of the line, and the converter reads the skeleton. Where a mark comes out
//! in the item's `raw` as the JSON string it was, the string goes back in its place when
//! the item is written ([`Large::parts`]), so an import holds one copy of such a line
//! and no more: the converters' JSON trees and the written line never hold the long
//! strings themselves.
//!
//! A converter that changes a string's text (decodes it, or nests it in another string)
//! would not give its mark back as it was; the line converters that go this way pass
//! every string through as JSON text ([`crate::line_items`]'s callers), and a mark that
//! does not come back means the converter left that string out.

use std::ops::Range;

use memchr::memmem;
use reel_trace::json_str::string_end;

use crate::Item;
use crate::model::{Hole, Large};

/// Lines of this size or more take the large path.
pub const LARGE_LINE: usize = 16 << 20;
/// Strings of this size or more (quotes included) are left in the line as holes.
pub const HOLE_MIN: usize = 1 << 20;

/// A piece of a large item's `raw`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part<'a> {
    /// Text of the skeleton's `raw`, as the converter wrote it.
    Text(&'a str),
    /// A long string of the source line, as JSON text (quotes included).
    String(&'a str),
}

impl Large {
    /// The item's `raw` with each mark found in it, in order: `(where in raw, the
    /// string's JSON text)`. A mark found nowhere is a string the converter left out.
    pub fn holes_in(&self, raw: &str) -> Vec<(Range<usize>, &str)> {
        let mut found = Vec::new();
        for h in &self.holes {
            let Ok(token) = std::str::from_utf8(&self.line[h.token.clone()]) else {
                continue;
            };
            for at in memmem::find_iter(raw.as_bytes(), h.mark.as_bytes()) {
                found.push((at..at + h.mark.len(), token));
            }
        }
        found.sort_by_key(|(r, _)| r.start);
        found
    }

    /// `raw` (the item's, or a redacted copy of it in which marks may be gone) cut at
    /// each mark into its text and the strings that go back in.
    pub fn parts<'a>(&'a self, raw: &'a str) -> Vec<Part<'a>> {
        let mut out = Vec::new();
        let mut at = 0;
        for (r, token) in self.holes_in(raw) {
            if r.start > at {
                out.push(Part::Text(&raw[at..r.start]));
            }
            out.push(Part::String(token));
            at = r.end;
        }
        if at < raw.len() || out.is_empty() {
            out.push(Part::Text(&raw[at..]));
        }
        out
    }

    /// The item with its strings back in place: a copy of each, for a reader that
    /// wants the item whole.
    pub fn into_item(self) -> Item {
        let whole = |raw: &str| -> String {
            self.parts(raw)
                .iter()
                .map(|p| match p {
                    Part::Text(s) | Part::String(s) => *s,
                })
                .collect()
        };
        match &*self.item {
            Item::Message {
                t,
                dir,
                raw,
                session,
            } => Item::Message {
                t: *t,
                dir: *dir,
                raw: whole(raw),
                session: session.clone(),
            },
            Item::Event {
                t,
                kind,
                raw,
                session,
            } => Item::Event {
                t: *t,
                kind: kind.clone(),
                raw: whole(raw),
                session: session.clone(),
            },
            other => other.clone(),
        }
    }
}

/// Converts `line` (a large one, taken from the reader) with `convert`: through a
/// skeleton when it has long strings and the converter makes a message or an event of
/// it; otherwise as it is. A line the converter cannot read is handed on whole.
pub fn convert<F>(number: u64, line: Vec<u8>, convert: &mut F) -> Result<Option<Item>, crate::Fault>
where
    F: FnMut(u64, &[u8]) -> Result<Option<Item>, crate::Fault>,
{
    let Some((skeleton, holes)) = cut(&line) else {
        return convert(number, &line);
    };
    match convert(number, &skeleton) {
        Ok(Some(item @ (Item::Message { .. } | Item::Event { .. }))) => {
            Ok(Some(Item::Large(Large {
                item: Box::new(item),
                line,
                holes,
            })))
        }
        // A turn holds strings as text, not JSON: it gets them back decoded, copied.
        Ok(Some(item)) => Ok(Some(
            Large {
                item: Box::new(item),
                line,
                holes,
            }
            .into_item(),
        )),
        Ok(None) => Ok(None),
        Err(crate::Fault::Bad(p, _)) => Err(crate::Fault::Bad(p, line)),
        Err(e) => Err(e),
    }
}

/// What a first pass over a line format reads of a line (its times, directions and
/// methods): a large line's skeleton, so that pass does not hold the line's long
/// strings either; any other line as it is.
pub fn skeleton(line: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if line.len() < LARGE_LINE {
        return std::borrow::Cow::Borrowed(line);
    }
    match cut(line) {
        Some((skeleton, _)) => std::borrow::Cow::Owned(skeleton),
        None => std::borrow::Cow::Borrowed(line),
    }
}

/// The skeleton of `line`: each string of [`HOLE_MIN`] bytes or more replaced by a mark
/// no other part of the line holds. `None` when the line has no such string (or is not
/// JSON enough to find its strings).
fn cut(line: &[u8]) -> Option<(Vec<u8>, Vec<Hole>)> {
    let tokens = long_strings(line);
    if tokens.is_empty() {
        return None;
    }
    let nonce = nonce_absent_from(line);
    let mut skeleton = Vec::new();
    let mut holes = Vec::with_capacity(tokens.len());
    let mut at = 0;
    for (i, token) in tokens.into_iter().enumerate() {
        let mark = format!("\"reelhole{nonce}x{i}\"");
        skeleton.extend_from_slice(&line[at..token.start]);
        skeleton.extend_from_slice(mark.as_bytes());
        at = token.end;
        holes.push(Hole { mark, token });
    }
    skeleton.extend_from_slice(&line[at..]);
    Some((skeleton, holes))
}

/// The string tokens of at least [`HOLE_MIN`] bytes in a line of JSON, quotes
/// included; nothing when the line ends inside a string.
fn long_strings(line: &[u8]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(q) = memchr::memchr(b'"', &line[i..]) {
        let start = i + q;
        let Some(end) = string_end(line, start) else {
            return Vec::new();
        };
        if end - start >= HOLE_MIN {
            out.push(start..end);
        }
        i = end;
    }
    out
}

/// Sixteen letters that appear nowhere in `line`, for marks no source can forge.
fn nonce_absent_from(line: &[u8]) -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut seed = std::collections::hash_map::RandomState::new().build_hasher();
    loop {
        seed.write_usize(line.len());
        let mut n = seed.finish();
        let nonce: String = (0..16)
            .map(|_| {
                let c = b'a' + (n % 26) as u8;
                n /= 26;
                char::from(c)
            })
            .collect();
        if memmem::find(line, nonce.as_bytes()).is_none() {
            return nonce;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reel_trace::Timestamp;
    use reel_trace::line::Dir;

    fn big(c: char) -> String {
        std::iter::repeat_n(c, HOLE_MIN).collect()
    }

    /// A converter that rebuilds the line as a message through a JSON tree, and drops a
    /// member named `drop`.
    fn through_a_tree(_: u64, bytes: &[u8]) -> Result<Option<Item>, crate::Fault> {
        let mut v: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
            crate::Fault::Bad(
                crate::Problem {
                    line: 1,
                    reason: e.to_string(),
                },
                bytes.to_vec(),
            )
        })?;
        v.as_object_mut().map(|m| m.remove("drop"));
        Ok(Some(Item::Message {
            t: Timestamp(0),
            dir: Dir::Out,
            raw: v.to_string(),
            session: None,
        }))
    }

    #[test]
    fn long_strings_come_back_in_place_and_left_out_ones_stay_out() {
        let (a, b, c) = (big('a'), format!("{}\\\"q", big('b')), big('c'));
        let line = format!(r#"{{"x":"{a}","short":"s\"","y":["{b}"],"drop":"{c}"}}"#);
        let item = convert(1, line.clone().into_bytes(), &mut through_a_tree)
            .unwrap()
            .unwrap();
        let Item::Large(large) = item else {
            panic!("not taken as large: {item:?}")
        };
        let Item::Message { raw, .. } = &*large.item else {
            panic!()
        };
        assert!(raw.len() < 200, "the skeleton holds no long string");
        let parts = large.parts(raw);
        assert_eq!(
            parts
                .iter()
                .filter(|p| matches!(p, Part::String(_)))
                .count(),
            2
        );
        let Item::Message { raw: whole, .. } = large.into_item() else {
            panic!()
        };
        // The tree orders members its own way: compared as JSON, and never printed.
        let want = format!(r#"{{"x":"{a}","short":"s\"","y":["{b}"]}}"#);
        let as_json = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap();
        assert!(
            as_json(&whole) == as_json(&want),
            "the strings are back in place"
        );
    }

    #[test]
    fn a_line_that_is_not_json_is_handed_on_whole() {
        let line = format!("not json \"{}\" at all", big('z')).into_bytes();
        match convert(7, line.clone(), &mut through_a_tree) {
            Err(crate::Fault::Bad(_, bytes)) => assert!(bytes == line),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_line_cut_inside_a_string_has_no_holes() {
        assert!(long_strings(format!("{{\"a\":\"{}", big('a')).as_bytes()).is_empty());
        assert!(cut(br#"{"a":"short"}"#).is_none());
    }
}
