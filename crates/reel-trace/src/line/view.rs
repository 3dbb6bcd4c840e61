//! The borrowed view of a message, extension or unknown line (the hot path: `raw` is
//! kept as the original bytes, never re-serialised), and how such a line ended on its
//! pipe ([`Eol`]).

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;

use super::class::Dir;

/// A message, extension or unknown line, borrowed from the input.
///
/// Only the members reel reads are named; all others stay in the line's bytes, which a
/// rewrite copies verbatim.
#[derive(Debug, Default, Deserialize)]
pub struct MessageView<'a> {
    /// `type`, present on meta/turn/end lines and on line types this crate does not know.
    #[serde(rename = "type", borrow, default, deserialize_with = "lenient_str")]
    pub ty: Option<Cow<'a, str>>,
    /// `t`.
    #[serde(borrow, default, deserialize_with = "lenient_str")]
    pub t: Option<Cow<'a, str>>,
    /// `dir`, as written.
    #[serde(borrow, default, deserialize_with = "lenient_str")]
    pub dir: Option<Cow<'a, str>>,
    /// `raw`: the payload, exactly as in the file. `Some` even when it is `null`.
    #[serde(borrow, default, deserialize_with = "present_raw")]
    pub raw: Option<&'a RawValue>,
    /// `kind` (format-extensions §2; `reel.*` kinds are reel's).
    #[serde(borrow, default, deserialize_with = "lenient_str")]
    pub kind: Option<Cow<'a, str>>,
    /// `source` (format-extensions §1).
    #[serde(borrow, default, deserialize_with = "lenient_str")]
    pub source: Option<Cow<'a, str>>,
    /// reel: the MCP session this message belongs to.
    #[serde(borrow, default, deserialize_with = "lenient_str")]
    pub session: Option<Cow<'a, str>>,
    /// reel: HTTP facts (`{req, status, headers, sse}`).
    #[serde(borrow, default, deserialize_with = "present_raw")]
    pub http: Option<&'a RawValue>,
    /// reel: `"crlf"` when the stdio line ended in CRLF, `"none"` when it had no line
    /// break (see [`Eol`]).
    #[serde(borrow, default, deserialize_with = "lenient_str")]
    pub eol: Option<Cow<'a, str>>,
    /// reel: `"tape"` or `"live"` on lines written by `play --record` and `verify`.
    #[serde(borrow, default, deserialize_with = "lenient_str")]
    pub origin: Option<Cow<'a, str>>,
    /// reel: `raw` had line breaks outside strings that were removed.
    #[serde(default, deserialize_with = "lenient_bool")]
    pub reformatted: Option<bool>,
    /// reel: `reel.nonjson` / `reel.stderr` text (UTF-8 payloads).
    #[serde(borrow, default, deserialize_with = "lenient_str")]
    pub text: Option<Cow<'a, str>>,
    /// reel: `reel.nonjson` / `reel.stderr` bytes, base64 (non-UTF-8 payloads).
    #[serde(borrow, default, deserialize_with = "lenient_str")]
    pub bytes: Option<Cow<'a, str>>,
    /// reel: which pipe a `reel.nonjson` line came from (`"in"` or `"out"`).
    #[serde(borrow, default, deserialize_with = "lenient_str")]
    pub side: Option<Cow<'a, str>>,
    /// `corr_id` (format-extensions §5).
    #[serde(borrow, default, deserialize_with = "lenient_str")]
    pub corr_id: Option<Cow<'a, str>>,
}

impl MessageView<'_> {
    /// The members the view reads, as named in a line. A line that repeats one of them
    /// is refused (a repeated member whose value would depend on which copy a reader
    /// takes); any other member may repeat. A fast reader that takes lines the view
    /// would refuse must refuse a repeat of these too.
    pub const MEMBERS: [&'static str; 15] = [
        "type",
        "t",
        "dir",
        "raw",
        "kind",
        "source",
        "session",
        "http",
        "eol",
        "origin",
        "reformatted",
        "text",
        "bytes",
        "side",
        "corr_id",
    ];

    /// Where `name` stands in [`MessageView::MEMBERS`]: a bit a fast reader sets to see
    /// a repeat, found by one `match` rather than a search of the list on every member
    /// of every line.
    pub fn member_index(name: &str) -> Option<usize> {
        Some(match name {
            "type" => 0,
            "t" => 1,
            "dir" => 2,
            "raw" => 3,
            "kind" => 4,
            "source" => 5,
            "session" => 6,
            "http" => 7,
            "eol" => 8,
            "origin" => 9,
            "reformatted" => 10,
            "text" => 11,
            "bytes" => 12,
            "side" => 13,
            "corr_id" => 14,
            _ => return None,
        })
    }
}

impl MessageView<'_> {
    /// The parsed `dir`, `None` when absent or unknown.
    pub fn dir(&self) -> Option<Dir> {
        self.dir.as_deref().and_then(Dir::parse)
    }

    /// The `raw` text, when present.
    pub fn raw_str(&self) -> Option<&str> {
        self.raw.map(RawValue::get)
    }

    /// `http.req`: which HTTP request of the recording carried the message (the
    /// pairing guide of [`crate::jsonrpc::HttpCarried`]); 0 when none is recorded or it
    /// is not a number.
    pub fn http_req(&self) -> u64 {
        #[derive(Deserialize)]
        struct Http {
            #[serde(default)]
            req: Option<u64>,
        }
        self.http
            .and_then(|h| serde_json::from_str::<Http>(h.get()).ok())
            .and_then(|h| h.req)
            .unwrap_or(0)
    }
}

/// Deserialises a member that must be present to be `Some`, `null` included.
fn present_raw<'de, D>(d: D) -> Result<Option<&'de RawValue>, D::Error>
where
    D: Deserializer<'de>,
{
    <&RawValue>::deserialize(d).map(Some)
}

/// A string member; any other JSON type reads as absent rather than failing the line
/// (a reader is tolerant; `reel check` reports the wrong type itself).
fn lenient_str<'de, D>(d: D) -> Result<Option<Cow<'de, str>>, D::Error>
where
    D: Deserializer<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum MaybeStr<'a> {
        Str(#[serde(borrow)] Cow<'a, str>),
        Other(serde::de::IgnoredAny),
    }
    Ok(match MaybeStr::deserialize(d)? {
        MaybeStr::Str(s) => Some(s),
        MaybeStr::Other(_) => None,
    })
}

/// A boolean member; any other JSON type reads as absent.
fn lenient_bool<'de, D>(d: D) -> Result<Option<bool>, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(match serde_json::Value::deserialize(d)? {
        Value::Bool(b) => Some(b),
        _ => None,
    })
}

/// How a recorded line ended on its pipe, so the byte stream can be rebuilt exactly:
/// the line's bytes, then LF (the default, not written), CR LF (`"eol": "crlf"`) or
/// nothing (`"eol": "none"`: the stream ended without one, or the line was longer than
/// a stderr event holds and the next event continues it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Eol {
    /// LF.
    #[default]
    Lf,
    /// CR LF.
    Crlf,
    /// No line break.
    None,
}

impl Eol {
    /// The end of a line a framer reports as `crlf` and `terminated`.
    pub fn of(crlf: bool, terminated: bool) -> Eol {
        match (terminated, crlf) {
            (false, _) => Eol::None,
            (true, true) => Eol::Crlf,
            (true, false) => Eol::Lf,
        }
    }

    /// The value of the `eol` member, when one is written.
    pub fn member(self) -> Option<&'static str> {
        match self {
            Eol::Lf => None,
            Eol::Crlf => Some("crlf"),
            Eol::None => Some("none"),
        }
    }

    /// The `eol` member's value read back; `None` for a value reel does not write.
    pub fn from_member(value: Option<&str>) -> Option<Eol> {
        match value {
            None => Some(Eol::Lf),
            Some("crlf") => Some(Eol::Crlf),
            Some("none") => Some(Eol::None),
            Some(_) => None,
        }
    }

    /// The line break itself.
    pub fn bytes(self) -> &'static [u8] {
        match self {
            Eol::Lf => b"\n",
            Eol::Crlf => b"\r\n",
            Eol::None => b"",
        }
    }
}
