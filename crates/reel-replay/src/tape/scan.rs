//! Reading one trace line for the index: the common message line in one strict pass
//! (its `raw` scanned for class, facts and keys while the line is parsed, a response's
//! id located for splicing), and the HTTP facts (`http`) a line carries, which the tape
//! server needs to answer over HTTP as the recording was answered.
//!
//! Everything here is tolerant: a line or an `http` member that does not fit the strict
//! shape gives `None`, and the caller falls back to the tolerant reader.

use std::borrow::Cow;
use std::fmt;

use reel_mcp::jsonrpc::RpcKind;
use reel_mcp::normalize::{NormalizeError, Normalizer, Scanned};
use reel_mcp::sse::Eol;
use serde::Deserializer as _;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::{IdSplice, Via};

/// A message line read in one pass: its `raw` scanned (class, facts, keys) while the
/// line is parsed. Members are typed strictly; a line that does not fit goes through
/// the tolerant reader.
pub(super) struct ScannedLine<'a> {
    pub(super) ty: Option<Cow<'a, str>>,
    pub(super) dir: Option<Cow<'a, str>>,
    pub(super) t: Option<Cow<'a, str>>,
    pub(super) session: Option<Cow<'a, str>>,
    pub(super) raw: Option<Result<Scanned<'a>, NormalizeError>>,
    pub(super) splice: Option<IdSplice>,
    pub(super) http: Option<HttpMember<'a>>,
}

impl<'a> ScannedLine<'a> {
    pub(super) fn parse(bytes: &'a [u8], norm: &Normalizer) -> Option<ScannedLine<'a>> {
        // One SIMD pass over the whole line, so that the parser need not check the UTF-8
        // of every string again (a third of a 1 KiB line's parse).
        let text = reel_trace::validate_utf8(bytes).ok()?;
        let mut de = serde_json::Deserializer::from_str(text);
        let line = (&mut de)
            .deserialize_map(LineVisitor { norm, line: bytes })
            .ok()?;
        de.end().ok()?;
        Some(line)
    }
}

/// Where `inner` (a slice of `outer`) starts in `outer`.
fn offset_in(outer: &[u8], inner: &str) -> Option<u32> {
    let start = (inner.as_ptr() as usize).checked_sub(outer.as_ptr() as usize)?;
    (start + inner.len() <= outer.len()).then_some(start as u32)
}

struct LineVisitor<'n, 'a> {
    norm: &'n Normalizer,
    line: &'a [u8],
}

impl<'de> Visitor<'de> for LineVisitor<'_, 'de> {
    type Value = ScannedLine<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a trace line")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut line = ScannedLine {
            ty: None,
            dir: None,
            t: None,
            session: None,
            raw: None,
            splice: None,
            http: None,
        };
        while let Some(k) = map.next_key::<Cow<'de, str>>()? {
            match k.as_ref() {
                "type" => line.ty = map.next_value()?,
                "dir" => line.dir = map.next_value()?,
                "t" => line.t = map.next_value()?,
                "session" => line.session = map.next_value()?,
                "http" => line.http = map.next_value()?,
                // A server line (dir written first, as reel and mcp-tape write it) is
                // kept as a span too, so its answer can be spliced without a parse.
                "raw" if line.dir.as_deref() == Some("out") => {
                    let raw: &'de RawValue = map.next_value()?;
                    let scanned = self.norm.scan(raw.get());
                    line.splice = scanned.as_ref().ok().and_then(|s| {
                        let id = s.id?.get();
                        let raw_start = offset_in(self.line, raw.get())?;
                        let id_start = offset_in(raw.get().as_bytes(), id)?;
                        Some(IdSplice {
                            raw_start,
                            raw_len: raw.get().len() as u32,
                            id_start,
                            id_len: id.len() as u32,
                            error: s.kind == RpcKind::Error,
                        })
                    });
                    line.raw = Some(scanned);
                }
                "raw" => line.raw = Some(map.next_value_seed(self.norm.scan_seed())?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(line)
    }
}

/// The `http` member of a line (reel's extension vocabulary): what the HTTP exchange
/// that carried the line looked like. Unknown members are ignored.
#[derive(serde::Deserialize, Default, Debug)]
pub(super) struct HttpMember<'a> {
    /// `req`: the run's HTTP request number.
    #[serde(default)]
    pub(super) req: Option<u64>,
    /// `status` of the response.
    #[serde(default)]
    pub(super) status: Option<u64>,
    /// `method` (events: the HTTP method of the exchange).
    #[serde(default, borrow)]
    pub(super) method: Option<Cow<'a, str>>,
    /// `headers` (response headers on `out` lines and events).
    #[serde(default)]
    pub(super) headers: Option<HeadersSeen>,
    /// `sse`: the line came as an event of an event stream.
    #[serde(default, borrow)]
    pub(super) sse: Option<SseMember<'a>>,
    /// `end`: who cut a stream before it ended (`"client"`, `"shutdown"`).
    #[serde(default, borrow)]
    pub(super) end: Option<Cow<'a, str>>,
}

impl HttpMember<'_> {
    /// Parses the `http` member of a line read by the tolerant reader.
    pub(super) fn from_raw(raw: Option<&RawValue>) -> Option<HttpMember<'_>> {
        serde_json::from_str(raw?.get()).ok()
    }

    /// The facts replay keeps.
    pub(super) fn via(&self) -> Via {
        let eol = match self.sse.as_ref().and_then(|s| s.eol.as_deref()) {
            Some("crlf") => Eol::Crlf,
            Some("cr") => Eol::Cr,
            _ => Eol::Lf,
        };
        Via {
            req: self.req.map_or(0, |r| u32::try_from(r).unwrap_or(u32::MAX)),
            status: self
                .status
                .map_or(0, |s| u16::try_from(s).unwrap_or(u16::MAX)),
            sse: self.sse.is_some(),
            eol,
            session_id: self.headers.as_ref().is_some_and(|h| h.session_id),
            status_only: false,
            other_stream: false,
        }
    }

    /// The `event` field of an SSE event.
    pub(super) fn sse_event(&self) -> Option<&str> {
        self.sse.as_ref().and_then(|s| s.event.as_deref())
    }
}

/// `http.sse`.
#[derive(serde::Deserialize, Default, Debug)]
pub(super) struct SseMember<'a> {
    #[serde(default, borrow)]
    pub(super) event: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(super) id: Option<Cow<'a, str>>,
    #[serde(default)]
    pub(super) retry: Option<u64>,
    #[serde(default, borrow)]
    pub(super) eol: Option<Cow<'a, str>>,
}

/// What replay needs of recorded response headers: whether a session id was issued.
#[derive(Default, Debug)]
pub(super) struct HeadersSeen {
    pub(super) session_id: bool,
}

impl<'de> serde::Deserialize<'de> for HeadersSeen {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = HeadersSeen;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of headers")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<HeadersSeen, A::Error> {
                let mut seen = HeadersSeen::default();
                while let Some(k) = map.next_key::<Cow<'de, str>>()? {
                    map.next_value::<IgnoredAny>()?;
                    if k.eq_ignore_ascii_case("mcp-session-id") {
                        seen.session_id = true;
                    }
                }
                Ok(seen)
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_facts_are_read_leniently() {
        let raw: Box<RawValue> = serde_json::from_str(
            r#"{"req":7,"status":200,"headers":{"content-type":"text/event-stream","Mcp-Session-Id":"s"},"sse":{"event":"message","id":"x","eol":"crlf"},"extra":[1]}"#,
        )
        .unwrap();
        let h = HttpMember::from_raw(Some(&raw)).unwrap();
        let via = h.via();
        assert_eq!((via.req, via.status, via.sse), (7, 200, true));
        assert_eq!(via.eol, Eol::Crlf);
        assert!(via.session_id);
        assert_eq!(h.sse_event(), Some("message"));
        let bad: Box<RawValue> = serde_json::from_str(r#"{"req":"x"}"#).unwrap();
        assert!(HttpMember::from_raw(Some(&bad)).is_none());
    }
}
