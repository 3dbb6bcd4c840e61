//! Reading one trace line for the index: the common message line in one strict pass
//! (its `raw` scanned for class, facts and keys while the line is parsed, a response's
//! id located for splicing), and the HTTP facts (`http`) a line carries, which the tape
//! server needs to answer over HTTP as the recording was answered.
//!
//! A response's `raw` is scanned once, like a request's: where it starts and ends in
//! the line is told by the member names around it, which the parser borrows from the
//! line (in a valid object only white space, `:` and `,` lie between a name and a
//! value, or a value and the next name or the closing brace).
//!
//! Everything here is tolerant: a line or an `http` member that does not fit the strict
//! shape gives `None`, and the caller falls back to the tolerant reader.

use std::borrow::Cow;
use std::fmt;

use reel_mcp::jsonrpc::RpcKind;
use reel_mcp::normalize::{NormalizeError, Normalizer, Scanned};
use reel_net::sse::Eol;
use reel_trace::json_str::JsonStr;
use reel_trace::line::MessageView;
use serde::Deserializer as _;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::types::{IdSplice, Via};

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
        // A response's `raw` whose end is told by what follows it: where it starts.
        let mut open_raw: Option<usize> = None;
        // The reference refuses a line that repeats a member it reads: so does this pass
        // (the tolerant reader then has the line, and refuses it too).
        let mut seen = 0u16;
        while let Some(k) = map.next_key::<JsonStr<'de>>()? {
            if let Some(i) = MessageView::member_index(k.as_ref()) {
                if seen & (1 << i) != 0 {
                    return Err(serde::de::Error::custom("a member is repeated"));
                }
                seen |= 1 << i;
            }
            if let Some(start) = open_raw.take() {
                // The next name's opening quote follows the value.
                let end = name_at(self.line, &k).and_then(|at| value_end_before(self.line, at - 1));
                line.splice = end.and_then(|end| splice(self.line, start, end, line.scanned()));
            }
            match k.as_ref() {
                "type" => line.ty = text(&mut map)?,
                "dir" => line.dir = text(&mut map)?,
                "t" => line.t = text(&mut map)?,
                "session" => line.session = text(&mut map)?,
                "http" => line.http = map.next_value()?,
                // A server line (dir written first, as reel and mcp-tape write it) is
                // kept as a span too, so its answer can be spliced without a parse.
                "raw" if line.dir.as_deref() == Some("out") => {
                    open_raw = name_at(self.line, &k)
                        .and_then(|at| value_start_after(self.line, at + k.len()));
                    line.raw = Some(map.next_value_seed(self.norm.scan_seed())?);
                }
                "raw" => line.raw = Some(map.next_value_seed(self.norm.scan_seed())?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if let Some(start) = open_raw {
            // The last member: the line's closing brace follows it.
            let close = self.line.iter().rposition(|&b| b == b'}');
            let end = close.and_then(|at| value_end_before(self.line, at));
            line.splice = end.and_then(|end| splice(self.line, start, end, line.scanned()));
        }
        Ok(line)
    }
}

impl<'a> ScannedLine<'a> {
    /// The scan of `raw`, when it was one message.
    fn scanned(&self) -> Option<&Scanned<'a>> {
        self.raw.as_ref()?.as_ref().ok()
    }
}

/// A string member's value (anything else is no value), borrowed from the line.
fn text<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<Cow<'de, str>>, A::Error> {
    Ok(map.next_value::<Option<JsonStr<'de>>>()?.map(Cow::from))
}

/// Where a member name's text starts in the line: known when the parser borrowed it
/// (no escape to decode).
fn name_at(line: &[u8], name: &JsonStr<'_>) -> Option<usize> {
    match &name.0 {
        Cow::Borrowed(text) => offset_in(line, text).map(|at| at as usize),
        Cow::Owned(_) => None,
    }
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Where the value of a member starts, given where its name's text ends (at the
/// closing quote): past the quote, white space, `:` and white space.
fn value_start_after(line: &[u8], name_end: usize) -> Option<usize> {
    let mut at = name_end + 1;
    while line.get(at).copied().is_some_and(is_ws) {
        at += 1;
    }
    (line.get(at) == Some(&b':')).then_some(())?;
    at += 1;
    while line.get(at).copied().is_some_and(is_ws) {
        at += 1;
    }
    Some(at)
}

/// Where the value before `next` ends: `next` is the opening quote of the following
/// member's name (then `,` lies between) or the closing brace.
fn value_end_before(line: &[u8], next: usize) -> Option<usize> {
    let mut at = next;
    let skip_ws = |mut at: usize| {
        while at > 0 && is_ws(line[at - 1]) {
            at -= 1;
        }
        at
    };
    at = skip_ws(at);
    if line.get(next) == Some(&b'"') {
        (at > 0 && line[at - 1] == b',').then_some(())?;
        at = skip_ws(at - 1);
    }
    Some(at)
}

/// The splice of a response whose `raw` is `line[start..end]` and was scanned as `s`.
fn splice(line: &[u8], start: usize, end: usize, s: Option<&Scanned<'_>>) -> Option<IdSplice> {
    let s = s?;
    let id = s.id?.get();
    let id_at = offset_in(line, id)? as usize;
    (start <= id_at && id_at + id.len() <= end).then_some(())?;
    Some(IdSplice {
        raw_start: u32::try_from(start).ok()?,
        raw_len: u32::try_from(end - start).ok()?,
        id_start: u32::try_from(id_at - start).ok()?,
        id_len: u32::try_from(id.len()).ok()?,
        error: s.kind == RpcKind::Error,
    })
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
                while let Some(k) = map.next_key::<JsonStr<'de>>()? {
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

    /// A response is answered by splicing the live id into its recorded bytes: the
    /// span found for `raw` and its `id` must be exactly theirs, whatever surrounds
    /// `raw` in the line.
    #[test]
    fn a_response_splice_is_exactly_its_raw_whatever_surrounds_it() {
        let norm = Normalizer::new();
        for line in [
            r#"{"t":"x","dir":"out","raw":{"jsonrpc":"2.0","id":7,"result":{}}}"#,
            r#"{"t":"x","dir":"out","raw":{"jsonrpc":"2.0","id":7,"result":{}},"session":"s"}"#,
            r#"{ "dir" : "out" , "raw" :	{"id":"a\"b","error":{"code":1}} ,
 "http" : {"req":1} }"#,
            r#"{"dir":"out","raw":{"result":[1,"}"],"id":[1]}  }"#,
            r#"{"dir":"out","raw":{"id":1,"result":2},"x\u0041":1}"#,
        ] {
            let scanned = ScannedLine::parse(line.as_bytes(), &norm);
            let splice = scanned.and_then(|s| s.splice);
            if line.contains("x\\u0041") {
                // A member name after `raw` that must be decoded: no span, the slower
                // way answers.
                assert_eq!(splice, None, "{line}");
                continue;
            }
            let sp = splice.unwrap_or_else(|| panic!("no splice for {line}"));
            let raw = &line[sp.raw_start as usize..][..sp.raw_len as usize];
            let whole: serde_json::Value = serde_json::from_str(line).unwrap();
            let raw_value: serde_json::Value = serde_json::from_str(raw).unwrap();
            assert_eq!(raw_value, whole["raw"], "{line}");
            assert!(raw.starts_with('{') && raw.ends_with('}'), "{raw:?}");
            let id = &raw[sp.id_start as usize..][..sp.id_len as usize];
            assert_eq!(
                serde_json::from_str::<serde_json::Value>(id).unwrap(),
                whole["raw"]["id"]
            );
            assert_eq!(sp.error, whole["raw"].get("error").is_some());
        }
    }

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

    /// One decoder family (issue 29): the index's one-pass reader agrees with the
    /// reference parser (`reel_trace::line::parse_line`) on every line both read, on
    /// the shared grammar of `reel_trace::testing`: a line the indexer takes from the
    /// one pass (a message line with its `raw`) is one the reference reads as a message
    /// with the same `dir`, `t` and `session`. Every other line goes to the reference.
    mod against_the_reference {
        use super::*;
        use proptest::prelude::*;
        use reel_trace::line::{Dir, Line, parse_line};
        use reel_trace::testing::trace_line;

        /// The grammar gives the one pass lines to take: the property is not vacuous.
        #[test]
        fn the_grammar_reaches_the_one_pass() {
            use proptest::strategy::ValueTree;
            let mut runner = proptest::test_runner::TestRunner::deterministic();
            let norm = Normalizer::new();
            let taken = (0..2000)
                .map(|_| trace_line().new_tree(&mut runner).unwrap().current())
                .filter(|l| {
                    ScannedLine::parse(l.as_bytes(), &norm).is_some_and(|s| {
                        s.ty.is_none()
                            && s.raw.is_some()
                            && s.dir
                                .as_deref()
                                .and_then(Dir::parse)
                                .is_some_and(|d| d.is_message())
                    })
                })
                .count();
            assert!(taken >= 50, "only {taken} of 2000 lines taken");
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]
            #[test]
            fn the_one_pass_reads_what_the_reference_reads(line in trace_line()) {
                let norm = Normalizer::new();
                let Some(scanned) = ScannedLine::parse(line.as_bytes(), &norm) else {
                    return Ok(());
                };
                // What the indexer takes from this pass: a message line with its `raw`
                // (everything else it reads with the reference).
                let dir = scanned.dir.as_deref().and_then(Dir::parse);
                let taken = scanned.ty.is_none()
                    && dir.is_some_and(|d| d.is_message())
                    && scanned.raw.is_some();
                if !taken {
                    return Ok(());
                }
                let reference = parse_line(line.as_bytes());
                prop_assert!(reference.is_ok(), "the index took a line the reference refuses: {}", line);
                let Ok(Line::Message(v)) = reference else {
                    return Err(TestCaseError::fail(format!("the reference reads no message in {line}")));
                };
                prop_assert_eq!(scanned.dir.as_deref(), v.dir.as_deref(), "dir of {}", line);
                prop_assert_eq!(scanned.t.as_deref(), v.t.as_deref(), "t of {}", line);
                prop_assert_eq!(scanned.session.as_deref(), v.session.as_deref(), "session of {}", line);
                prop_assert!(v.raw.is_some(), "raw of {}", line);
            }
        }
    }
}
