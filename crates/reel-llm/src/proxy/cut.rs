//! A body cut into pieces for the record: SSE events (with their type and data, read
//! into the turn), NDJSON lines, or a whole body; a body or an event too large to
//! read is cut into raw pieces between words, so a key is never split across two
//! pieces redacted apart.

use super::exchange::Framing;
use super::limits::WHOLE_KEPT_MAX;

/// A piece of a body for the record: its bytes, and for an SSE event its type and data.
pub(super) struct Piece {
    pub(super) bytes: Vec<u8>,
    pub(super) event: Option<(String, String)>,
}

/// The size of the pieces a whole body past [`WHOLE_KEPT_MAX`] is recorded in.
const OVERFLOW_PIECE: usize = 1 << 20;

/// The pieces of a body being cut for the record.
pub(super) struct Cutter {
    framing: Framing,
    sse: reel_net::sse::Parser,
    pending: Vec<u8>,
    /// A whole body grew past [`WHOLE_KEPT_MAX`]: it is recorded in pieces of at most
    /// [`OVERFLOW_PIECE`] bytes after the first, cut between words, and assembles no
    /// turn.
    overflow: bool,
    /// An SSE event grew past [`EVENT_MAX`]: it is recorded raw, not read, until its end.
    oversized: Option<EventEnd>,
    /// Bytes of events too large to read (what the turn leaves out).
    pub(super) oversized_bytes: u64,
}

/// The largest SSE event read into the turn; a larger one is recorded in raw pieces
/// and counted in the turn's `omitted_bytes` (memory stays bounded whatever one event
/// weighs).
const EVENT_MAX: usize = 16 << 20;

/// Looks for the blank line that ends an SSE event, across chunks: a line break right
/// after a line break (LF, CR or CRLF).
#[derive(Debug, Clone, Copy)]
struct EventEnd {
    /// The last byte seen ended a line.
    at_line_start: bool,
    /// The last byte seen was a CR (a LF right after it is the same line break).
    after_cr: bool,
}

impl EventEnd {
    /// The state after `seen`, the start of an event.
    fn after(seen: &[u8]) -> EventEnd {
        let mut end = EventEnd {
            at_line_start: false,
            after_cr: false,
        };
        let tail = &seen[seen.len().saturating_sub(2)..];
        let _ = end.find(tail);
        end
    }

    /// Where in `bytes` the event ends (just past its blank line), if it does.
    fn find(&mut self, bytes: &[u8]) -> Option<usize> {
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'\n' && self.after_cr {
                self.after_cr = false;
                continue;
            }
            if b == b'\n' || b == b'\r' {
                if self.at_line_start {
                    let crlf = b == b'\r' && bytes.get(i + 1) == Some(&b'\n');
                    return Some(i + 1 + usize::from(crlf));
                }
                self.at_line_start = true;
                self.after_cr = b == b'\r';
            } else {
                self.at_line_start = false;
                self.after_cr = false;
            }
        }
        None
    }
}

impl Cutter {
    /// A cutter for a body framed as `framing`.
    pub(super) fn new(framing: Framing) -> Cutter {
        Cutter {
            framing,
            sse: reel_net::sse::Parser::new(),
            pending: Vec::new(),
            overflow: false,
            oversized: None,
            oversized_bytes: 0,
        }
    }

    /// Feeds decoded bytes; returns the pieces they complete.
    pub(super) fn feed(&mut self, bytes: &[u8]) -> Vec<Piece> {
        let mut out = Vec::new();
        match self.framing {
            Framing::Sse if self.oversized.is_some() => self.feed_oversized(bytes, &mut out),
            Framing::Sse => {
                let mut last = 0;
                let pending = &mut self.pending;
                self.sse.feed_with_ends(bytes, |event, end| {
                    pending.extend_from_slice(&bytes[last..end]);
                    last = end;
                    out.push(Piece {
                        bytes: std::mem::take(pending),
                        event: Some((
                            event.event_type().to_owned(),
                            event.data.unwrap_or_default(),
                        )),
                    });
                });
                self.pending.extend_from_slice(&bytes[last..]);
                if self.pending.len() > EVENT_MAX {
                    // An event too large to read: recorded raw, the parser's copy of it
                    // dropped, and its end looked for in the bytes alone.
                    let held = std::mem::take(&mut self.pending);
                    self.sse = reel_net::sse::Parser::new();
                    self.oversized = Some(EventEnd::after(&held));
                    self.oversized_bytes += held.len() as u64;
                    self.pending = held;
                    self.cut_raw(EVENT_MAX, &mut out);
                }
            }
            Framing::Ndjson => {
                let mut rest = bytes;
                while let Some(i) = memchr(b'\n', rest) {
                    self.pending.extend_from_slice(&rest[..=i]);
                    out.push(Piece {
                        bytes: std::mem::take(&mut self.pending),
                        event: None,
                    });
                    rest = &rest[i + 1..];
                }
                self.pending.extend_from_slice(rest);
            }
            Framing::Whole
                if self.overflow || self.pending.len() + bytes.len() > WHOLE_KEPT_MAX =>
            {
                // Too large to be one piece: from here on, pieces of about
                // OVERFLOW_PIECE bytes, each cut between words where it can be, so a
                // key is not split between two pieces redacted apart.
                let limit = if self.overflow {
                    OVERFLOW_PIECE
                } else {
                    WHOLE_KEPT_MAX
                };
                self.overflow = true;
                self.pending.extend_from_slice(bytes);
                self.cut_raw(limit, &mut out);
            }
            Framing::Whole => self.pending.extend_from_slice(bytes),
        }
        out
    }

    /// Bytes of an event past [`EVENT_MAX`]: recorded raw up to the blank line that ends
    /// it; what follows is parsed again.
    fn feed_oversized(&mut self, bytes: &[u8], out: &mut Vec<Piece>) {
        let Some(end) = self.oversized.as_mut() else {
            return;
        };
        match end.find(bytes) {
            Some(at) => {
                self.oversized = None;
                self.oversized_bytes += at as u64;
                self.pending.extend_from_slice(&bytes[..at]);
                out.push(Piece {
                    bytes: std::mem::take(&mut self.pending),
                    event: None,
                });
                out.extend(self.feed(&bytes[at..]));
            }
            None => {
                self.oversized_bytes += bytes.len() as u64;
                self.pending.extend_from_slice(bytes);
                self.cut_raw(OVERFLOW_PIECE, out);
            }
        }
    }

    /// Emits `pending` as raw pieces of at most `first` bytes, then [`OVERFLOW_PIECE`],
    /// each cut between words where it can be; keeps what is left.
    fn cut_raw(&mut self, first: usize, out: &mut Vec<Piece>) {
        let mut limit = first;
        let mut start = 0;
        while self.pending.len() - start > limit {
            let at = start + reel_net::framing::soft_cut(&self.pending[start..start + limit]);
            out.push(Piece {
                bytes: self.pending[start..at].to_vec(),
                event: None,
            });
            start = at;
            limit = OVERFLOW_PIECE;
        }
        self.pending.drain(..start);
    }

    /// The rest, at the end of the body.
    pub(super) fn finish(&mut self) -> Option<Piece> {
        if self.pending.is_empty() {
            return None;
        }
        if self.oversized.take().is_some() {
            return Some(Piece {
                bytes: std::mem::take(&mut self.pending),
                event: None,
            });
        }
        let bytes = std::mem::take(&mut self.pending);
        let event = match self.framing {
            Framing::Sse => {
                let mut event = None;
                self.sse.finish(|e| event = Some(e));
                let (ty, data) = event.map_or(("message".to_owned(), String::new()), |e| {
                    (e.event_type().to_owned(), e.data.unwrap_or_default())
                });
                Some((ty, data))
            }
            _ => None,
        };
        Some(Piece { bytes, event })
    }
}

fn memchr(b: u8, s: &[u8]) -> Option<usize> {
    s.iter().position(|&c| c == b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_body_past_its_limit_is_cut_between_words_so_a_key_stays_in_one_piece() {
        // Regression (issue 28): a non-streamed body over 16 MiB was recorded in the
        // chunks it came in, each redacted alone, so a key across the 16 MiB mark
        // survived as two halves.
        let key = b"sk-ant-api03-Zq8rT2mX0pVb7KdT4wNsXq7LmN2pR9sT4vW6yZ1bC3dF5gH8jK0aEoIuAA";
        let mut body = b"{\"text\":\"".to_vec();
        // Across the end of the chunk that first passes the limit.
        while body.len() < WHOLE_KEPT_MAX + 64 * 1024 - 20 {
            body.extend_from_slice(b"lorem ipsum ");
        }
        body.extend_from_slice(key);
        for _ in 0..300_000 {
            body.extend_from_slice(b" dolor sit");
        }
        body.extend_from_slice(b"\"}");
        let mut cutter = Cutter::new(Framing::Whole);
        let mut pieces = Vec::new();
        for chunk in body.chunks(64 * 1024) {
            pieces.extend(cutter.feed(chunk).into_iter().map(|p| p.bytes));
        }
        pieces.extend(cutter.finish().map(|p| p.bytes));
        assert!(pieces.len() >= 3, "{} pieces", pieces.len());
        assert!(pieces.iter().all(|p| p.len() <= WHOLE_KEPT_MAX));
        assert!(pieces[1..].iter().all(|p| p.len() <= OVERFLOW_PIECE));
        assert_eq!(pieces.concat(), body);
        let whole = pieces
            .iter()
            .filter(|p| p.windows(key.len()).any(|w| w == key))
            .count();
        assert_eq!(whole, 1, "the key is in one piece");
    }

    #[test]
    fn an_sse_event_past_its_limit_is_recorded_raw_and_the_stream_read_on_after_it() {
        // Regression (issue 28): one 1.2 GB event cost 5 times its size (the parser's
        // line, its data, the pending bytes, the piece) and aborted the recorder.
        let small = |text: &str| {
            format!(
                "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"{text}\"}}}}\n\n"
            )
        };
        let mut stream = small("before").into_bytes();
        stream.extend_from_slice(b"event: content_block_delta\ndata: {\"delta\":{\"text\":\"");
        while stream.len() < 40 << 20 {
            stream.extend_from_slice(b"lorem ipsum ");
        }
        stream.extend_from_slice(b"\"}}\r\n\r\n");
        stream.extend_from_slice(small("after").as_bytes());
        let mut cutter = Cutter::new(Framing::Sse);
        let mut pieces = Vec::new();
        for chunk in stream.chunks(100_000) {
            pieces.extend(cutter.feed(chunk));
        }
        pieces.extend(cutter.finish());
        let joined: Vec<u8> = pieces.iter().flat_map(|p| p.bytes.clone()).collect();
        assert_eq!(joined, stream);
        assert!(pieces.iter().all(|p| p.bytes.len() <= EVENT_MAX + 100_000));
        let read: Vec<&str> = pieces
            .iter()
            .filter_map(|p| p.event.as_ref().map(|(_, d)| d.as_str()))
            .collect();
        assert_eq!(read.len(), 2, "the events around the large one are read");
        assert!(
            read[0].contains("before") && read[1].contains("after"),
            "{read:?}"
        );
        assert!(cutter.oversized_bytes > 39 << 20);
    }
}
