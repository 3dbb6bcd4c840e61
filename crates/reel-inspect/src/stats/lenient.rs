//! Lenient readers for JSON members: a member of the wrong JSON type reads as absent
//! instead of failing the line, because a stats consumer must tolerate whatever a
//! producer wrote (spec §"Tolerance rules"; mcp-tape's `str()`/`num()`/`obj()` helpers).
//!
//! Every type here borrows from the input where serde_json lets it (strings without
//! escapes), drains what it does not want with [`IgnoredAny`], and never builds a
//! `serde_json::Value`: these types sit on the hot path of `reel stats`.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// Generates the `visit_*` methods of a visitor that turn every JSON type not handled
/// explicitly into `Default::default()`, draining maps and sequences.
macro_rules! absent_otherwise {
    ($($kind:ident)*) => { $( absent_otherwise!(@ $kind); )* };
    (@ bool) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> { Ok(Default::default()) }
    };
    (@ num) => {
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> { Ok(Default::default()) }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> { Ok(Default::default()) }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> { Ok(Default::default()) }
    };
    (@ str) => {
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> { Ok(Default::default()) }
    };
    (@ null) => {
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> { Ok(Default::default()) }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> { Ok(Default::default()) }
    };
    (@ map) => {
        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
            while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Default::default())
        }
    };
    (@ seq) => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
            while s.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Default::default())
        }
    };
}

/// A string member, `None` for any other JSON type. Borrowed unless it had escapes.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct LStr<'a>(pub Option<Cow<'a, str>>);

impl<'a> LStr<'a> {
    /// The text, when the member was a string.
    pub fn get(&self) -> Option<&str> {
        self.0.as_deref()
    }

    /// The text when it is a non-empty string (mcp-tape's `str()`: `""` counts as absent).
    pub fn non_empty(&self) -> Option<&str> {
        self.get().filter(|s| !s.is_empty())
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for LStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = LStr<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(LStr(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(LStr(Some(Cow::Owned(v.to_owned()))))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(LStr(Some(Cow::Owned(v))))
            }
            absent_otherwise!(bool num null map seq);
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// A finite number member, `None` for any other JSON type (mcp-tape's `num()`).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(crate) struct LNum(pub Option<f64>);

impl<'de> Deserialize<'de> for LNum {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LNum;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(LNum(Some(v as f64)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(LNum(Some(v as f64)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(LNum(Some(v).filter(|v| v.is_finite())))
            }
            absent_otherwise!(bool str null map seq);
        }
        d.deserialize_any(V)
    }
}

/// `true` only for the JSON literal `true` (`x === true`).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(crate) struct LTrue(pub bool);

impl<'de> Deserialize<'de> for LTrue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LTrue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(LTrue(v))
            }
            absent_otherwise!(num str null map seq);
        }
        d.deserialize_any(V)
    }
}

/// Whether a member holds something other than `null` (`x != null` for a present
/// member); the value itself is skipped.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(crate) struct NotNull(pub bool);

impl<'de> Deserialize<'de> for NotNull {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = NotNull;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(NotNull(true))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(NotNull(true))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(NotNull(true))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(NotNull(true))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(NotNull(true))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(NotNull(true))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(NotNull(true))
            }
            absent_otherwise!(null);
        }
        d.deserialize_any(V)
    }
}

/// An object member read as `T`, `None` for any other JSON type (mcp-tape's `obj()`).
///
/// `T` is read straight from the map (no intermediate value), so its own members keep
/// borrowing from the input.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Obj<T>(pub Option<T>);

impl<T> Default for Obj<T> {
    fn default() -> Self {
        Obj(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Obj<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<Self::Value, A::Error> {
                T::deserialize(MapAccessDeserializer::new(m)).map(|t| Obj(Some(t)))
            }
            absent_otherwise!(bool num str null seq);
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// An array member read element by element as `T`, `None` for any other JSON type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Seq<T>(pub Option<Vec<T>>);

impl<T> Default for Seq<T> {
    fn default() -> Self {
        Seq(None)
    }
}

impl<T> Seq<T> {
    /// The elements, empty when the member was absent or not an array.
    pub fn items(&self) -> &[T] {
        self.0.as_deref().unwrap_or_default()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Seq<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Seq<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(t) = s.next_element::<T>()? {
                    out.push(t);
                }
                Ok(Seq(Some(out)))
            }
            absent_otherwise!(bool num str null map);
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// For `deserialize_with`: a member that is `Some` whenever it is present, `null`
/// included, kept as its original text.
pub(crate) fn present_raw<'de, D>(d: D) -> Result<Option<&'de RawValue>, D::Error>
where
    D: Deserializer<'de>,
{
    <&RawValue>::deserialize(d).map(Some)
}

/// True when a raw member is the literal `null`.
pub(crate) fn is_null(v: &RawValue) -> bool {
    v.get().trim() == "null"
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Probe<'a> {
        #[serde(borrow)]
        s: LStr<'a>,
        n: LNum,
        b: LTrue,
        nn: NotNull,
        #[serde(borrow)]
        o: Obj<Inner<'a>>,
        #[serde(borrow)]
        q: Seq<LStr<'a>>,
    }

    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Inner<'a> {
        #[serde(borrow)]
        name: LStr<'a>,
    }

    #[test]
    fn right_types_are_read_and_borrowed() {
        let p: Probe<'_> = serde_json::from_str(
            r#"{"s":"x","n":1.5,"b":true,"nn":{"a":[1]},"o":{"name":"n","z":[{}]},"q":["a",1,"b"]}"#,
        )
        .unwrap();
        assert!(matches!(p.s.0, Some(Cow::Borrowed("x"))));
        assert_eq!(p.n.0, Some(1.5));
        assert!(p.b.0);
        assert!(p.nn.0);
        assert_eq!(p.o.0.unwrap().name.get(), Some("n"));
        let q: Vec<_> = p.q.items().iter().map(|s| s.get()).collect();
        assert_eq!(q, [Some("a"), None, Some("b")]);
    }

    #[test]
    fn wrong_types_read_as_absent() {
        let p: Probe<'_> = serde_json::from_str(
            r#"{"s":{"x":[1,{"y":2}]},"n":"1","b":1,"nn":null,"o":[1,2],"q":{"a":1}}"#,
        )
        .unwrap();
        assert_eq!(p.s.get(), None);
        assert_eq!(p.n.0, None);
        assert!(!p.b.0);
        assert!(!p.nn.0);
        assert!(p.o.0.is_none());
        assert!(p.q.0.is_none());
    }

    #[test]
    fn escaped_strings_are_decoded() {
        let p: Probe<'_> = serde_json::from_str(r#"{"s":"a\"b\u00e9"}"#).unwrap();
        assert_eq!(p.s.get(), Some("a\"bé"));
        assert_eq!(LStr(Some("".into())).non_empty(), None);
    }
}
