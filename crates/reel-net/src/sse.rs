//! Server-sent events framing (the `text/event-stream` of the WHATWG HTML standard), as
//! MCP's HTTP transports use it: the recorder parses what it forwards, the tape server and
//! `verify` encode and parse what they exchange. One implementation, shared.
//!
//! The parser is incremental: feed it chunks as they arrive, split anywhere (inside a
//! line, between a CR and its LF, inside a UTF-8 sequence), and it hands out each event
//! as soon as the blank line that ends it arrives. Whatever the split, the events are the
//! same (a property test pins this).
//!
//! What it accepts, per the standard, and where it departs from it:
//! - lines end in LF, CRLF or a lone CR, mixed freely; one UTF-8 BOM at the very start of
//!   the stream is skipped;
//! - `field: value` with one optional space after the colon; a line without a colon is a
//!   field with an empty value; a line starting with `:` is a comment;
//! - `data` lines accumulate, joined with LF; `event` sets the type; `id` sets the event's
//!   id unless the value contains NUL; `retry` is kept only when it is all ASCII digits
//!   (and fits a `u64`); other fields are ignored;
//! - **departure**: the standard drops an event that has no `data` and forgets the one
//!   still open at end of stream. A recorder must see everything, so an event is handed
//!   out when it has any field or comment at all (a priming event `id: x` + empty data,
//!   a lone `retry:`), and [`Parser::finish`] hands out a last event that the stream
//!   ended without a blank line. [`Event::is_dispatched`] says whether a browser would
//!   have dispatched it.
//! - bytes that are not UTF-8 are decoded lossily (U+FFFD); an event stream is UTF-8 by
//!   definition, so a recorder that needs the exact bytes keeps them itself.
//!
//! Limits: none on line or event length — memory grows with the largest event, as a
//! recorder that must keep every message whole has to.
//!
//! [`Event::encode`] writes an event back in a fixed field order (comments, `event`,
//! `id`, `retry`, `data`), with the line ending asked for; parsing what it wrote gives
//! the event back.

use std::fmt;

/// How the lines of an event ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Eol {
    /// `\n` (most servers, the TypeScript SDK).
    #[default]
    Lf,
    /// `\r\n` (the Python SDK's sse-starlette).
    Crlf,
    /// A lone `\r`.
    Cr,
}

impl Eol {
    /// The bytes of this line ending.
    pub fn as_bytes(self) -> &'static [u8] {
        match self {
            Eol::Lf => b"\n",
            Eol::Crlf => b"\r\n",
            Eol::Cr => b"\r",
        }
    }

    /// `"lf"`, `"crlf"` or `"cr"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Eol::Lf => "lf",
            Eol::Crlf => "crlf",
            Eol::Cr => "cr",
        }
    }
}

impl fmt::Display for Eol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One event of a stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    /// The `event` field (the type; `message` when absent).
    pub event: Option<String>,
    /// The `id` field of this event (`Some("")` for an `id` line with an empty value).
    pub id: Option<String>,
    /// The `retry` field, in milliseconds.
    pub retry: Option<u64>,
    /// The `data` lines joined with LF; `None` when the event had no `data` line.
    pub data: Option<String>,
    /// Comment lines, without the leading `:`.
    pub comments: Vec<String>,
    /// How the event's first line ended.
    pub eol: Eol,
}

impl Event {
    /// The event type: the `event` field, or `message`.
    pub fn event_type(&self) -> &str {
        self.event.as_deref().unwrap_or("message")
    }

    /// Whether a browser's `EventSource` would dispatch it (it has data).
    pub fn is_dispatched(&self) -> bool {
        self.data.is_some()
    }

    /// Only comments (a keep-alive), no field.
    pub fn is_comment_only(&self) -> bool {
        self.event.is_none() && self.id.is_none() && self.retry.is_none() && self.data.is_none()
    }

    /// Appends the event's wire form to `out`: comments, `event`, `id`, `retry`, each
    /// `data` line, then the blank line that ends it, every line ended with `eol`.
    /// `event` and `id` values must not contain line breaks (a parsed event's never do).
    pub fn encode(&self, eol: Eol, out: &mut Vec<u8>) {
        let end = eol.as_bytes();
        for c in &self.comments {
            out.push(b':');
            out.extend_from_slice(c.as_bytes());
            out.extend_from_slice(end);
        }
        let mut field = |name: &str, value: &str| {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(end);
        };
        if let Some(e) = &self.event {
            field("event", e);
        }
        if let Some(id) = &self.id {
            field("id", id);
        }
        if let Some(r) = self.retry {
            field("retry", &r.to_string());
        }
        if let Some(data) = &self.data {
            for line in data.split('\n') {
                field("data", line);
            }
        }
        out.extend_from_slice(end);
    }

    /// The wire form as a new buffer (see [`Event::encode`]).
    pub fn to_bytes(&self, eol: Eol) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(eol, &mut out);
        out
    }
}

/// The incremental parser. Feed chunks with [`Parser::feed`], end with
/// [`Parser::finish`].
#[derive(Debug, Default)]
pub struct Parser {
    /// The current line, not yet terminated.
    line: Vec<u8>,
    /// The previous chunk ended in CR: a LF at the start of the next one belongs to it.
    after_cr: bool,
    /// The first line of the stream is still to come (its BOM, if any, is skipped).
    at_start: bool,
    /// The event being assembled.
    current: Event,
    /// `current` has a field or comment.
    open: bool,
    /// The first line of `current` ended in a CR at the end of a chunk: if a LF
    /// follows, the event's lines end in CRLF.
    eol_pending: bool,
    /// Events handed out so far.
    events: u64,
}

impl Parser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Parser {
            at_start: true,
            ..Parser::default()
        }
    }

    /// Events handed out so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// True when nothing is pending: no partial line and no open event.
    pub fn is_idle(&self) -> bool {
        self.line.is_empty() && !self.open
    }

    /// Feeds a chunk; `emit` gets every event the chunk completes, in order.
    pub fn feed(&mut self, chunk: &[u8], mut emit: impl FnMut(Event)) {
        self.feed_with_ends(chunk, |e, _| emit(e));
    }

    /// Feeds a chunk as [`feed`](Self::feed) does, telling for each event the offset in
    /// `chunk` just past the blank line that ended it: a recorder that keeps the exact
    /// bytes of each event cuts the stream there. (After a CR that ends a chunk, the LF
    /// that may follow belongs to the next cut.)
    pub fn feed_with_ends(&mut self, chunk: &[u8], mut emit: impl FnMut(Event, usize)) {
        if chunk.is_empty() {
            return;
        }
        let mut rest = chunk;
        if std::mem::take(&mut self.after_cr) {
            if let Some(b'\n') = rest.first() {
                rest = &rest[1..];
                if std::mem::take(&mut self.eol_pending) {
                    self.current.eol = Eol::Crlf;
                }
            }
        }
        self.eol_pending = false;
        while let Some(i) = memchr::memchr2(b'\n', b'\r', rest) {
            let (eol, next) = match rest[i] {
                b'\n' => (Eol::Lf, i + 1),
                _ => match rest.get(i + 1) {
                    Some(b'\n') => (Eol::Crlf, i + 2),
                    Some(_) => (Eol::Cr, i + 1),
                    None => {
                        self.after_cr = true;
                        (Eol::Cr, i + 1)
                    }
                },
            };
            let end = chunk.len() - rest.len() + next;
            let mut emit = |e| emit(e, end);
            if self.line.is_empty() {
                self.line_done(&rest[..i], eol, &mut emit);
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(&rest[..i]);
                self.line_done(&line, eol, &mut emit);
                line.clear();
                self.line = line;
            }
            rest = &rest[next..];
        }
        self.line.extend_from_slice(rest);
    }

    /// Ends the stream: a last line without a line break is taken as a line, and an event
    /// left open (no blank line after it) is handed out.
    pub fn finish(&mut self, mut emit: impl FnMut(Event)) {
        self.after_cr = false;
        self.eol_pending = false;
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.line_done(&line, Eol::Lf, &mut emit);
        }
        self.dispatch(&mut emit);
    }

    fn line_done(&mut self, mut line: &[u8], eol: Eol, emit: &mut impl FnMut(Event)) {
        if std::mem::take(&mut self.at_start) {
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        if line.is_empty() {
            self.dispatch(emit);
            return;
        }
        if let Some(comment) = line.strip_prefix(b":") {
            self.open(eol);
            self.current.comments.push(text(comment));
            return;
        }
        let (name, value) = match memchr::memchr(b':', line) {
            Some(c) => {
                let v = &line[c + 1..];
                (&line[..c], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match name {
            b"data" => {
                self.open(eol);
                // The standard appends value + LF per line and strips the last LF:
                // the same as joining the lines with LF.
                match &mut self.current.data {
                    Some(data) => {
                        data.push('\n');
                        data.push_str(&text(value));
                    }
                    None => self.current.data = Some(text(value)),
                }
            }
            b"event" => {
                self.open(eol);
                self.current.event = Some(text(value));
            }
            b"id" if memchr::memchr(0, value).is_none() => {
                self.open(eol);
                self.current.id = Some(text(value));
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                if let Ok(ms) = std::str::from_utf8(value).unwrap_or("").parse() {
                    self.open(eol);
                    self.current.retry = Some(ms);
                }
            }
            // Unknown fields, and ids and retries the standard ignores.
            _ => {}
        }
    }

    /// The first field or comment of an event sets its line ending.
    fn open(&mut self, eol: Eol) {
        if !self.open {
            self.open = true;
            self.current.eol = eol;
            self.eol_pending = self.after_cr;
        }
    }

    fn dispatch(&mut self, emit: &mut impl FnMut(Event)) {
        if !std::mem::take(&mut self.open) {
            return;
        }
        self.eol_pending = false;
        self.events += 1;
        emit(std::mem::take(&mut self.current));
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse(chunks: &[&[u8]]) -> Vec<Event> {
        let mut p = Parser::new();
        let mut out = Vec::new();
        for c in chunks {
            p.feed(c, |e| out.push(e));
        }
        p.finish(|e| out.push(e));
        out
    }

    fn ev(event: Option<&str>, id: Option<&str>, data: Option<&str>, eol: Eol) -> Event {
        Event {
            event: event.map(str::to_owned),
            id: id.map(str::to_owned),
            data: data.map(str::to_owned),
            eol,
            ..Event::default()
        }
    }

    #[test]
    fn server_everything_priming_then_message_lf() {
        let wire = b"id: 7f\ndata: \n\nevent: message\nid: 80\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n";
        assert_eq!(
            parse(&[wire]),
            vec![
                ev(None, Some("7f"), Some(""), Eol::Lf),
                ev(
                    Some("message"),
                    Some("80"),
                    Some(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
                    Eol::Lf
                ),
            ]
        );
    }

    #[test]
    fn python_sdk_crlf_events() {
        let wire =
            b"event: message\r\ndata: {\"a\":1}\r\n\r\nevent: message\r\ndata: {\"b\":2}\r\n\r\n";
        let got = parse(&[wire]);
        assert_eq!(got.len(), 2);
        assert!(got.iter().all(|e| e.eol == Eol::Crlf));
        assert_eq!(got[1].data.as_deref(), Some(r#"{"b":2}"#));
    }

    #[test]
    fn lone_cr_multi_line_data_comments_retry_and_a_bom() {
        let wire =
            b"\xEF\xBB\xBF: keep-alive\rretry: 1500\rdata: line one\rdata:line two\rdata\r\r";
        let got = parse(&[wire]);
        assert_eq!(got.len(), 1);
        let e = &got[0];
        assert_eq!(e.comments, vec![" keep-alive".to_owned()]);
        assert_eq!(e.retry, Some(1500));
        assert_eq!(e.data.as_deref(), Some("line one\nline two\n"));
        assert_eq!(e.eol, Eol::Cr);
        assert_eq!(e.event_type(), "message");
    }

    #[test]
    fn bad_retry_and_nul_ids_are_ignored_unknown_fields_too() {
        let got = parse(&[b"retry: 12a\nid: a\0b\nfoo: bar\ndata: x\n\n"]);
        assert_eq!(got, vec![ev(None, None, Some("x"), Eol::Lf)]);
        assert!(parse(&[b"foo: bar\n\n"]).is_empty());
    }

    #[test]
    fn the_last_event_without_a_blank_line_is_handed_out_at_the_end() {
        assert_eq!(
            parse(&[b"event: endpoint\ndata: /message?sessionId=1"]),
            vec![ev(
                Some("endpoint"),
                None,
                Some("/message?sessionId=1"),
                Eol::Lf
            )]
        );
        let mut p = Parser::new();
        let mut n = 0;
        p.feed(b"data: x\n", |_| n += 1);
        assert_eq!(n, 0, "no event before its blank line");
        assert!(!p.is_idle());
    }

    #[test]
    fn a_crlf_split_between_chunks_is_one_line_break() {
        let got = parse(&[b"data: a\r", b"\n\r", b"\ndata: b\r\n\r\n"]);
        assert_eq!(
            got,
            vec![
                ev(None, None, Some("a"), Eol::Crlf),
                ev(None, None, Some("b"), Eol::Crlf)
            ]
        );
        // An empty chunk between the CR and its LF changes nothing.
        let got2 = parse(&[b"data: a\r", b"", b"\n\r\n", b"data: b\r\n\r\n"]);
        assert_eq!(got2, got);
    }

    #[test]
    fn encode_then_parse_gives_the_event_back() {
        let e = Event {
            event: Some("message".into()),
            id: Some("".into()),
            retry: Some(3000),
            data: Some("{\"a\":\n1}\n".into()),
            comments: vec!["ping".into(), " spaced".into()],
            eol: Eol::Crlf,
        };
        assert_eq!(parse(&[&e.to_bytes(Eol::Crlf)]), vec![e]);
    }

    fn eol() -> impl Strategy<Value = Eol> {
        prop_oneof![Just(Eol::Lf), Just(Eol::Crlf), Just(Eol::Cr)]
    }

    fn value() -> impl Strategy<Value = String> {
        "[ -~é]{0,12}"
    }

    fn event() -> impl Strategy<Value = Event> {
        (
            proptest::option::of(value()),
            proptest::option::of(value()),
            proptest::option::of(any::<u64>()),
            proptest::option::of(proptest::collection::vec(value(), 1..4)),
            proptest::collection::vec(value(), 0..2),
            eol(),
        )
            .prop_filter_map(
                "an event has a field",
                |(event, id, retry, data, comments, eol)| {
                    let e = Event {
                        event,
                        id,
                        retry,
                        data: data.map(|d| d.join("\n")),
                        comments,
                        eol,
                    };
                    (!(e.is_comment_only() && e.comments.is_empty())).then_some(e)
                },
            )
    }

    /// Splits `bytes` at the given cut points (taken modulo its length).
    fn split_at<'a>(bytes: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
        let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        points.sort_unstable();
        let mut out = Vec::new();
        let mut from = 0;
        for p in points {
            out.push(&bytes[from..p]);
            from = p;
        }
        out.push(&bytes[from..]);
        out
    }

    proptest! {
        #[test]
        fn encoded_events_come_back_whatever_the_split(
            events in proptest::collection::vec(event(), 0..6),
            cuts in proptest::collection::vec(any::<usize>(), 0..8),
        ) {
            let mut wire = Vec::new();
            for e in &events {
                e.encode(e.eol, &mut wire);
            }
            prop_assert_eq!(parse(&split_at(&wire, &cuts)), events);
        }

        #[test]
        fn any_bytes_give_the_same_events_whatever_the_split(
            bytes in proptest::collection::vec(
                prop_oneof![
                    Just(b'\n'), Just(b'\r'), Just(b':'), Just(b' '), Just(b'd'),
                    Just(b'a'), Just(b't'), Just(b'\0'), Just(0xEF), Just(0xBB), Just(0xBF),
                    any::<u8>()
                ],
                0..200,
            ),
            cuts in proptest::collection::vec(any::<usize>(), 0..12),
        ) {
            let whole = parse(&[&bytes]);
            prop_assert_eq!(parse(&split_at(&bytes, &cuts)), whole);
        }

        #[test]
        fn byte_at_a_time_is_the_same_as_whole(
            events in proptest::collection::vec(event(), 0..4),
        ) {
            let mut wire = Vec::new();
            for e in &events {
                e.encode(e.eol, &mut wire);
            }
            let bytes: Vec<&[u8]> = wire.chunks(1).collect();
            prop_assert_eq!(parse(&bytes), events);
        }
    }

    #[test]
    fn event_ends_cut_the_stream_into_the_exact_bytes_of_each_event() {
        let stream = b"event: a\ndata: 1\n\n: keep\r\n\r\ndata: 2\n\n";
        for split in 0..stream.len() {
            if split > 0 && stream[split - 1] == b'\r' {
                continue; // the documented exception: a LF after a chunk's last CR
            }
            let mut p = Parser::new();
            let (mut pieces, mut pending) = (Vec::new(), Vec::new());
            for chunk in [&stream[..split], &stream[split..]] {
                let mut last = 0;
                p.feed_with_ends(chunk, |_, end| {
                    pending.extend_from_slice(&chunk[last..end]);
                    pieces.push(std::mem::take(&mut pending));
                    last = end;
                });
                pending.extend_from_slice(&chunk[last..]);
            }
            assert_eq!(
                pieces,
                [
                    &b"event: a\ndata: 1\n\n"[..],
                    b": keep\r\n\r\n",
                    b"data: 2\n\n"
                ],
                "split at {split}"
            );
        }
    }
}
