//! The user's `--ignore` JSON pointers, and how one is applied to a message.

use std::fmt;

use serde_json::Value;

/// A JSON pointer (RFC 6901) into a JSON-RPC message, e.g. `/params/arguments/now`.
///
/// One extension: a segment that is exactly `*` stands for every member of an object or
/// every element of an array (`/result/content/*/text`). Applied to a message, the member
/// it names is removed from its object; an array element is replaced by `null` instead,
/// so the positions after it (and the pointers that name them) stay the same.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pointer {
    text: String,
    pub(super) segments: Vec<String>,
}

/// A `--ignore` value that is not a JSON pointer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PointerError {
    /// Not empty and not starting with `/`.
    #[error("`{text}` is not a JSON pointer: it must start with `/` (e.g. /params/arguments/now)")]
    NoLeadingSlash {
        /// What was given.
        text: String,
    },
    /// `~` not followed by `0` or `1`.
    #[error("`{text}` is not a JSON pointer: `~` must be followed by 0 (for ~) or 1 (for /)")]
    BadEscape {
        /// What was given.
        text: String,
    },
    /// The empty pointer names the whole message: ignoring it would match anything.
    #[error(
        "the empty pointer names the whole message; ignoring it would make every message equal"
    )]
    WholeMessage,
}

impl Pointer {
    /// Parses a pointer.
    pub fn parse(text: &str) -> Result<Pointer, PointerError> {
        if text.is_empty() {
            return Err(PointerError::WholeMessage);
        }
        let Some(rest) = text.strip_prefix('/') else {
            return Err(PointerError::NoLeadingSlash {
                text: text.to_owned(),
            });
        };
        let mut segments = Vec::new();
        for raw in rest.split('/') {
            let mut seg = String::with_capacity(raw.len());
            let mut chars = raw.chars();
            while let Some(c) = chars.next() {
                if c != '~' {
                    seg.push(c);
                    continue;
                }
                match chars.next() {
                    Some('0') => seg.push('~'),
                    Some('1') => seg.push('/'),
                    _ => {
                        return Err(PointerError::BadEscape {
                            text: text.to_owned(),
                        });
                    }
                }
            }
            segments.push(seg);
        }
        Ok(Pointer {
            text: text.to_owned(),
            segments,
        })
    }

    /// The pointer as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Removes what the pointer names from `v`; true when something was there.
    pub fn remove_from(&self, v: &mut Value) -> bool {
        remove_at(v, &self.segments)
    }
}

impl std::str::FromStr for Pointer {
    type Err = PointerError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Pointer::parse(s)
    }
}

impl fmt::Display for Pointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn remove_at(v: &mut Value, segs: &[String]) -> bool {
    let Some((first, rest)) = segs.split_first() else {
        return false;
    };
    let wild = first == "*";
    match v {
        Value::Object(o) if rest.is_empty() => {
            if wild {
                let had = !o.is_empty();
                o.clear();
                had
            } else {
                o.remove(first.as_str()).is_some()
            }
        }
        Value::Object(o) => {
            if wild {
                let mut any = false;
                for child in o.values_mut() {
                    any |= remove_at(child, rest);
                }
                any
            } else {
                o.get_mut(first.as_str())
                    .is_some_and(|c| remove_at(c, rest))
            }
        }
        Value::Array(a) => {
            let blank = |e: &mut Value| {
                let had = !e.is_null();
                *e = Value::Null;
                had
            };
            if wild {
                let mut any = false;
                for e in a.iter_mut() {
                    any |= if rest.is_empty() {
                        blank(e)
                    } else {
                        remove_at(e, rest)
                    };
                }
                return any;
            }
            let Some(e) = array_index(first).and_then(|i| a.get_mut(i)) else {
                return false;
            };
            if rest.is_empty() {
                blank(e)
            } else {
                remove_at(e, rest)
            }
        }
        _ => false,
    }
}

pub(super) fn array_index(seg: &str) -> Option<usize> {
    // RFC 6901: no leading zeros (except "0" itself), digits only.
    if seg.is_empty() || (seg.len() > 1 && seg.starts_with('0')) {
        return None;
    }
    if !seg.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    seg.parse().ok()
}
