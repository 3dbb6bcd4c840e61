//! A JSON string as serde reads it, borrowed from the input whenever its text holds
//! no escape.
//!
//! serde's own `Cow<str>` always allocates (it deserialises a `String` and wraps it);
//! the hot readers (replay's index of every tape line, its scan of every live
//! message) read each member name and a few short strings of every line, and an
//! allocation each was a good part of their work. Use this where a reader would write
//! `Cow<'de, str>`, in a visitor or as a member name.
//!
//! [`string_end`] is the one scan for where a string token ends in JSON text, for the
//! code that walks the text itself (the skeleton of a huge import line, exact numbers
//! in normalisation, the string values of a streamed body).

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;

use serde::de::{self, Deserialize, Deserializer, Visitor};

/// Where the string token whose opening quote is at `open` in JSON text `b` ends: the
/// index just past its closing quote, or `None` when the text ends inside it. Escapes
/// are skipped, not checked (a reader that must refuse a bad escape validates apart).
pub fn string_end(b: &[u8], open: usize) -> Option<usize> {
    let mut i = open + 1;
    loop {
        let k = i + memchr::memchr2(b'"', b'\\', b.get(i..)?)?;
        if b[k] == b'"' {
            return Some(k + 1);
        }
        i = k + 2;
    }
}

/// A JSON string, borrowed when it can be. Anything else is an error, as for `String`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonStr<'a>(pub Cow<'a, str>);

impl Deref for JsonStr<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for JsonStr<'_> {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl<'a> From<JsonStr<'a>> for Cow<'a, str> {
    fn from(s: JsonStr<'a>) -> Cow<'a, str> {
        s.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for JsonStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = JsonStr<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(JsonStr(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(JsonStr(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(JsonStr(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_ends_past_its_closing_quote_whatever_it_escapes() {
        let text = br#"{"a":"x\"y\\","b":"\u0022"} "#;
        assert_eq!(string_end(text, 1), Some(4));
        assert_eq!(string_end(text, 5), Some(13));
        assert_eq!(&text[5..13], br#""x\"y\\""#);
        assert_eq!(string_end(text, 18), Some(26));
        assert_eq!(string_end(br#""open"#, 0), None);
        assert_eq!(string_end(br#""ends in \"#, 0), None);
        assert_eq!(string_end(br#""\"#, 0), None);
    }

    #[test]
    fn borrows_unless_an_escape_must_be_decoded() {
        let plain: JsonStr<'_> = serde_json::from_str(r#""tools/call""#).unwrap();
        assert!(matches!(plain.0, Cow::Borrowed("tools/call")));
        let escaped: JsonStr<'_> = serde_json::from_str(r#""a\nb""#).unwrap();
        assert_eq!(escaped.0, Cow::<str>::Owned("a\nb".to_owned()));
        assert!(serde_json::from_str::<JsonStr<'_>>("1").is_err());
    }
}
