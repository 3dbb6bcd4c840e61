//! The line kinds of the mcp-replay trace format v1 and reel's additive vocabulary.
//!
//! Two representations live here, for two kinds of work:
//! - borrowed *views* ([`MessageView`]) for the hot path: message and extension lines are
//!   parsed with `raw` kept as the original bytes ([`RawValue`](serde_json::value::RawValue)), never re-serialised;
//! - owned, typed records ([`Meta`], [`Turn`], [`End`]) for the rarer lines, each with an
//!   `extra` map so that a rewrite keeps every member this crate does not know.
//!
//! Classification follows the reference consumer: `type` decides meta/turn/end, then `dir`
//! decides message (`in`/`out`) or extension line (`event`/`command`/`telemetry`); anything
//! else is [`Line::Other`], kept and counted, never fatal (spec §"Tolerance rules").
//!
//! This file parses a line into its kind; the kinds live below it: `class` (`dir` and
//! the class of a line), `view` (the borrowed view and `eol`), `records` (meta, turn,
//! end), `block` (a turn's content blocks) and [`kinds`] (reel's event kinds).

mod block;
mod class;
pub mod kinds;
mod records;
mod view;

pub use block::Block;
pub use class::{Dir, LineClass, classify};
pub use records::{Counts, End, Meta, Producer, Timing, Turn, Usage};
pub use view::{Eol, MessageView};

/// What redaction leaves where a secret was, in any string of a trace.
pub const REDACTED: &str = "[REDACTED]";

/// reel's version, as written to `meta.source` (`reel@<version>`).
pub const REEL_VERSION: &str = env!("CARGO_PKG_VERSION");
/// The format version this crate reads and writes (`meta.v`).
pub const FORMAT_VERSION: u64 = 1;
/// The version of reel's extension vocabulary, written as `meta.reel`.
pub const REEL_VOCABULARY_VERSION: u64 = 1;

/// A parsed line.
#[derive(Debug)]
pub enum Line<'a> {
    /// The first line of a session.
    Meta(Box<Meta>),
    /// A JSON-RPC message line (`dir` in/out).
    Message(MessageView<'a>),
    /// An extension line (`dir` event/command/telemetry).
    Event(MessageView<'a>),
    /// An LLM turn record.
    Turn(Box<Turn>),
    /// The last line.
    End(Box<End>),
    /// A line of a `type` or `dir` this crate does not know; kept as a view.
    Other(MessageView<'a>),
}

impl Line<'_> {
    /// The line's class.
    pub fn class(&self) -> LineClass {
        match self {
            Line::Meta(_) => LineClass::Meta,
            Line::Message(_) => LineClass::Message,
            Line::Event(_) => LineClass::Event,
            Line::Turn(_) => LineClass::Turn,
            Line::End(_) => LineClass::End,
            Line::Other(_) => LineClass::Other,
        }
    }

    /// The line's `t`, when it has one (`meta` has `startedAt` instead).
    pub fn t(&self) -> Option<&str> {
        match self {
            Line::Meta(m) => m.started_at.as_deref(),
            Line::Message(v) | Line::Event(v) | Line::Other(v) => v.t.as_deref(),
            Line::Turn(t) => t.t.as_deref(),
            Line::End(e) => e.t.as_deref(),
        }
    }
}

/// Why a line could not be parsed at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// The bytes are not UTF-8.
    #[error("not valid UTF-8 (first bad byte at column {column})")]
    InvalidUtf8 {
        /// 1-based byte column of the first invalid byte.
        column: usize,
    },
    /// The text is not JSON.
    #[error("not JSON: {message}")]
    NotJson {
        /// serde_json's description, with its column.
        message: String,
    },
    /// Valid JSON, but not an object.
    #[error("a JSON {found}, not an object")]
    NotObject {
        /// What was found: "array", "string", …
        found: &'static str,
    },
    /// An object whose known members have the wrong type (e.g. `role: 3`).
    #[error("{message}")]
    BadMember {
        /// serde_json's description.
        message: String,
    },
}

/// Parses one line (without its line break) into a [`Line`].
///
/// `raw` members of message and extension lines borrow the input bytes.
pub fn parse_line(bytes: &[u8]) -> Result<Line<'_>, LineError> {
    let text = crate::utf8::validate(bytes).map_err(|e| LineError::InvalidUtf8 {
        column: e.valid_up_to() + 1,
    })?;
    parse_line_str(text)
}

/// [`parse_line`] for text already known to be UTF-8.
pub fn parse_line_str(text: &str) -> Result<Line<'_>, LineError> {
    if !text.trim_start().starts_with('{') {
        return Err(not_an_object(text));
    }
    // One pass for the common lines (messages, events): the view carries `type` too, and
    // only the rarer typed lines (meta, turn, end) are parsed a second time.
    let view: MessageView<'_> = serde_json::from_str(text).map_err(|e| {
        use serde_json::error::Category;
        match e.classify() {
            Category::Data => LineError::BadMember {
                message: e.to_string(),
            },
            _ => LineError::NotJson {
                message: e.to_string(),
            },
        }
    })?;
    let bad = |e: serde_json::Error| LineError::BadMember {
        message: e.to_string(),
    };
    match view.ty.as_deref() {
        Some("meta") => Ok(Line::Meta(Box::new(
            serde_json::from_str(text).map_err(bad)?,
        ))),
        Some("turn") => Ok(Line::Turn(Box::new(
            serde_json::from_str(text).map_err(bad)?,
        ))),
        Some("end") => Ok(Line::End(Box::new(
            serde_json::from_str(text).map_err(bad)?,
        ))),
        Some(_) => Ok(Line::Other(view)),
        None => Ok(match view.dir() {
            Some(d) if d.is_message() => Line::Message(view),
            Some(_) => Line::Event(view),
            None => Line::Other(view),
        }),
    }
}

/// A line that does not start with `{`: say what it is, if it is JSON at all.
fn not_an_object(text: &str) -> LineError {
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
        return LineError::NotJson {
            message: e.to_string(),
        };
    }
    let found = match text.trim_start().as_bytes().first() {
        Some(b'[') => "array",
        Some(b'"') => "string",
        Some(b't' | b'f') => "boolean",
        Some(b'n') => "null",
        _ => "number",
    };
    LineError::NotObject { found }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[test]
    fn message_raw_borrows_the_original_bytes() {
        let line =
            br#"{"t":"2026-01-01T00:00:00.000Z","dir":"in","raw":{"b": 1.0 ,"a":[ ]},"zz":1}"#;
        let Line::Message(m) = parse_line(line).unwrap() else {
            panic!("not a message")
        };
        assert_eq!(m.raw_str(), Some(r#"{"b": 1.0 ,"a":[ ]}"#));
        assert_eq!(m.dir(), Some(Dir::In));
    }

    #[test]
    fn defaults_carry_their_type_tag() {
        assert_eq!(Meta::default().ty, "meta");
        assert_eq!(Turn::default().ty, "turn");
        assert_eq!(End::default().ty, "end");
        let text = serde_json::to_string(&Meta::default()).unwrap();
        assert!(matches!(
            parse_line(text.as_bytes()).unwrap(),
            Line::Meta(_)
        ));
    }

    #[test]
    fn null_raw_is_present() {
        let Line::Message(m) = parse_line(br#"{"t":"x","dir":"out","raw":null}"#).unwrap() else {
            panic!()
        };
        assert_eq!(m.raw_str(), Some("null"));
        let Line::Message(m) = parse_line(br#"{"t":"x","dir":"out"}"#).unwrap() else {
            panic!()
        };
        assert!(m.raw.is_none());
    }

    #[test]
    fn classes() {
        let class = |s: &str| parse_line(s.as_bytes()).unwrap().class();
        assert_eq!(class(r#"{"type":"meta","v":1}"#), LineClass::Meta);
        assert_eq!(
            class(r#"{"type":"turn","role":"user","blocks":[]}"#),
            LineClass::Turn
        );
        assert_eq!(class(r#"{"type":"end","exitCode":0}"#), LineClass::End);
        assert_eq!(class(r#"{"type":"weird"}"#), LineClass::Other);
        assert_eq!(class(r#"{"dir":"sideways","raw":1}"#), LineClass::Other);
        assert_eq!(class(r#"{"dir":"event","kind":"x.y"}"#), LineClass::Event);
        assert_eq!(class(r#"{"dir":3}"#), LineClass::Other);
    }

    #[test]
    fn errors_are_specific() {
        assert_eq!(
            parse_line(b"[1,2]").unwrap_err(),
            LineError::NotObject { found: "array" }
        );
        assert!(matches!(
            parse_line(b"{\"t\":"),
            Err(LineError::NotJson { .. })
        ));
        assert_eq!(
            parse_line(b"{\"t\":\"\xff\"}").unwrap_err(),
            LineError::InvalidUtf8 { column: 7 }
        );
    }

    #[test]
    fn blocks_keep_unknown_members_and_types() {
        let text = r#"{"type":"turn","role":"assistant","blocks":[{"type":"thinking","thinking":"","signature":"s"},{"type":"tool_use","id":"a","name":"n","input":{},"caller":{"type":"direct"}},{"type":"redacted_thinking","data":"x"},{"type":"text"}],"future":true}"#;
        let Line::Turn(turn) = parse_line(text.as_bytes()).unwrap() else {
            panic!()
        };
        assert!(matches!(turn.blocks()[0], Block::Thinking { .. }));
        assert!(matches!(turn.blocks()[1], Block::ToolUse { .. }));
        assert_eq!(turn.blocks()[2].type_name(), Some("redacted_thinking"));
        assert!(matches!(turn.blocks()[3], Block::Other(_)));
        let again: Value = serde_json::to_value(&*turn).unwrap();
        let orig: Value = serde_json::from_str(text).unwrap();
        assert_eq!(again, orig);
    }

    /// `MessageView::MEMBERS` is the parser's own list: a repeat of each is refused,
    /// a repeat of any other name is not.
    #[test]
    fn the_view_members_are_the_ones_a_repeat_of_is_refused() {
        for m in MessageView::MEMBERS {
            let line = format!(r#"{{"dir":"event","{m}":"a","{m}":"b"}}"#);
            let line = line.replacen(
                r#""dir":"event","dir":"a","dir":"b""#,
                r#""dir":"in","dir":"out""#,
                1,
            );
            assert!(
                parse_line(line.as_bytes()).is_err(),
                "{m} repeated is refused: {line}"
            );
        }
        for (i, m) in MessageView::MEMBERS.iter().enumerate() {
            assert_eq!(MessageView::member_index(m), Some(i), "{m}");
        }
        for other in ["note", "types", "raw_b64", "Dir"] {
            assert_eq!(MessageView::member_index(other), None, "{other}");
            let line = format!(r#"{{"dir":"event","{other}":1,"{other}":2}}"#);
            assert!(parse_line(line.as_bytes()).is_ok(), "{other} may repeat");
        }
    }
}
