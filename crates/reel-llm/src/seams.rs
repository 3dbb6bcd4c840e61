//! Redaction across the seams between the recorded pieces of one response body.
//!
//! A streamed answer reaches the trace as many `reel.llm.body` pieces (an SSE event or
//! an NDJSON line each), and a model streams its text a few characters per event: a key
//! it repeats arrives as `sk-a`, `nt-a`, `pi03`, … in successive deltas. Each piece
//! redacted alone keeps every fragment, and joining the pieces — which is what replay
//! and any reader of the trace does — rebuilds the key. So the pieces of a response are
//! redacted together, here, once the response has ended (the tape holds them until
//! then, see [`crate::tape::HeldBody`]):
//!
//! 1. the delta strings of each stream of deltas (one content block, choice, tool call
//!    or output item: see `delta_stream`) are decoded and joined, the joined text is
//!    redacted as the assembled turn is (as text, or as JSON for tool-call arguments),
//!    and the result is dealt back to the deltas: text no redaction touched stays in
//!    its delta, each `[REDACTED]` goes to the first delta that held part of what it
//!    replaced, and the later deltas lose the covered characters (a delta may become
//!    `""`). Only the changed string tokens are rewritten; every other byte of an
//!    event stays as received, so the stream stays valid and its assembled text is the
//!    redacted turn's;
//! 2. the whole text then gets the per-line rules of a single piece (each `data:` line
//!    and NDJSON line as JSON when it is JSON, every other line as text), so text cut
//!    at an arbitrary point (a large body recorded in the chunks it came in) is
//!    redacted across the cut too;
//! 3. the result is cut back into as many pieces as came in: a cut that fell inside
//!    rewritten text moves to the end of that rewrite, so no marker and no string
//!    token is split.
//!
//! Text that is not UTF-8 as a whole is redacted piece by piece, as before.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;

use serde_json::Value;

use reel_redact::redact::{MARKER, Redactor};
use reel_trace::json_str::string_end;

/// The pieces of one response body, redacted together: as many pieces as `pieces`, in
/// order (a piece may come back empty when what it held was folded into a marker).
pub fn redact_pieces(redactor: &Redactor, pieces: &[&[u8]]) -> Vec<Vec<u8>> {
    if !redactor.is_active() {
        return pieces.iter().map(|p| p.to_vec()).collect();
    }
    let joined = pieces.concat();
    let Ok(text) = std::str::from_utf8(&joined) else {
        return pieces
            .iter()
            .map(|p| match std::str::from_utf8(p) {
                Ok(t) => redact_lines(redactor, t).into_bytes(),
                Err(_) => p.to_vec(),
            })
            .collect();
    };
    let mut cuts: Vec<usize> = pieces
        .iter()
        .scan(0, |end, p| {
            *end += p.len();
            Some(*end)
        })
        .collect();
    cuts.pop(); // the end of the text is no cut

    let edits = delta_edits(redactor, text);
    let (text, moved) = apply_edits(text, &edits, &cuts);
    let (text, moved) = redact_lines_mapped(redactor, &text, &moved);

    let bytes = text.into_bytes();
    let mut out = Vec::with_capacity(pieces.len());
    let mut from = 0;
    for &to in moved.iter().chain(std::iter::once(&bytes.len())) {
        let to = to.max(from);
        out.push(bytes[from..to].to_vec());
        from = to;
    }
    out
}

/// Redacts the lines of `text` as one body piece: each SSE `data:` line and each
/// NDJSON line as JSON when it is JSON (replay-safe), every other line as text; SSE
/// field names and line endings stay.
pub(crate) fn redact_lines(redactor: &Redactor, text: &str) -> String {
    redact_lines_mapped(redactor, text, &[]).0
}

/// [`redact_lines`], and where each of `cuts` (ascending byte offsets into `text`)
/// lands in the result.
fn redact_lines_mapped(redactor: &Redactor, text: &str, cuts: &[usize]) -> (String, Vec<usize>) {
    if !redactor.is_active() {
        return (text.to_owned(), cuts.to_vec());
    }
    let mut out = String::with_capacity(text.len());
    let mut moved = Vec::with_capacity(cuts.len());
    let mut cuts = cuts.iter().copied().peekable();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let redacted = redact_line_body(redactor, body);
        let base = out.len();
        let align = Alignment::new(body, &redacted);
        while let Some(&c) = cuts.peek() {
            if c >= at + line.len() {
                break;
            }
            let within = c - at;
            moved.push(if within <= body.len() {
                base + align.map(within)
            } else {
                // Inside the line ending: it is kept as it was.
                base + redacted.len() + (within - body.len())
            });
            cuts.next();
        }
        out.push_str(&redacted);
        out.push_str(&line[body.len()..]);
        at += line.len();
    }
    moved.extend(cuts.map(|_| out.len()));
    (out, moved)
}

fn redact_line_body<'a>(redactor: &Redactor, body: &'a str) -> Cow<'a, str> {
    match body.strip_prefix("data:") {
        Some(rest) => {
            let payload = rest.strip_prefix(' ').unwrap_or(rest);
            match redactor.redact_json_or_text(payload) {
                Cow::Borrowed(_) => Cow::Borrowed(body),
                Cow::Owned(p) => Cow::Owned(format!("{}{p}", &body[..body.len() - payload.len()])),
            }
        }
        None if body.starts_with(['{', '[']) => redactor.redact_json_or_text(body),
        None => redactor.redact_text(body),
    }
}

/// Where the offsets of a text land in its redacted form. Redaction replaces spans by
/// [`MARKER`] (or, for the size rules, rewrites a span): the text between markers is
/// unchanged, found in order; an offset inside a replaced span goes to the end of its
/// replacement. When the unchanged text cannot be found in order (a rule that rewrote
/// something other than into a marker), every offset between the first and the last
/// difference goes to the end of the last one — still a cut of the same result.
struct Alignment {
    /// `(original, redacted)` ranges of text kept as it was, ascending.
    kept: Vec<(Range<usize>, Range<usize>)>,
    /// The end of the redacted text.
    end: usize,
    /// The end of the original text.
    original_end: usize,
}

impl Alignment {
    fn new(original: &str, redacted: &str) -> Alignment {
        let (o, r) = (original.as_bytes(), redacted.as_bytes());
        let mut a = Alignment {
            kept: Vec::new(),
            end: r.len(),
            original_end: o.len(),
        };
        if o == r {
            a.kept.push((0..o.len(), 0..r.len()));
            return a;
        }
        let prefix = o.iter().zip(r).take_while(|(x, y)| x == y).count();
        let suffix = o[prefix..]
            .iter()
            .rev()
            .zip(r[prefix..].iter().rev())
            .take_while(|(x, y)| x == y)
            .count();
        a.kept.push((0..prefix, 0..prefix));
        // Between prefix and suffix: the text between markers, in order.
        let (om, rm) = (prefix..o.len() - suffix, prefix..r.len() - suffix);
        let mut kept_mid = Vec::new();
        let mut oi = om.start;
        let mut ri = rm.start;
        let mut found = true;
        for (n, seg) in redacted[rm.clone()].split(MARKER).enumerate() {
            if n > 0 {
                ri += MARKER.len();
            }
            if seg.is_empty() {
                continue;
            }
            // A segment after a marker starts past at least one replaced byte.
            let from = if n == 0 {
                oi
            } else {
                char_ceil(original, oi + 1)
            };
            match original
                .get(from..om.end)
                .and_then(|h| h.find(seg))
                .map(|i| from + i)
            {
                Some(i) if n > 0 || i == oi => {
                    kept_mid.push((i..i + seg.len(), ri..ri + seg.len()));
                    oi = i + seg.len();
                    ri += seg.len();
                }
                _ => {
                    found = false;
                    break;
                }
            }
        }
        if found {
            a.kept.extend(kept_mid);
        }
        a.kept
            .push((o.len() - suffix..o.len(), r.len() - suffix..r.len()));
        a
    }

    /// Where offset `at` of the original lands.
    fn map(&self, at: usize) -> usize {
        if at >= self.original_end {
            return self.end;
        }
        let mut landed = 0;
        for (o, r) in &self.kept {
            if at < o.start {
                // Inside what was replaced before this kept range: after its replacement.
                return r.start.max(landed);
            }
            if at <= o.end {
                return r.start + (at - o.start);
            }
            landed = r.end;
        }
        self.end
    }
}

/// One string token of an event that appends to a stream of deltas.
struct Delta {
    /// The token in the whole text, quotes included.
    token: Range<usize>,
    text: String,
}

/// The deltas of one stream, and whether their joined text is JSON (tool arguments).
#[derive(Default)]
struct Stream {
    json: bool,
    deltas: Vec<Delta>,
}

/// Whether the pieces held so far (`text`, whole events) can be written without
/// waiting for more: every stream of deltas that is still being written (the last
/// stream a delta went to, and every stream whose text does not end a line) ends in a
/// line break, and no PEM block is open. What follows starts a new line of every
/// stream, so no secret and no label with its value spans the seam.
pub(crate) fn at_line_seam(text: &str) -> bool {
    let streams = streams_of(text);
    let Some(last) = streams
        .iter()
        .max_by_key(|s| s.deltas.last().map(|d| d.token.start))
    else {
        return false;
    };
    let ends_line = |s: &Stream| s.deltas.last().is_some_and(|d| d.text.ends_with('\n'));
    let joined: String = streams
        .iter()
        .flat_map(|s| s.deltas.iter().map(|d| d.text.as_str()))
        .collect();
    let open_pem = joined.matches("-----BEGIN").count() > joined.matches("-----END").count();
    ends_line(last) && streams.iter().all(|s| ends_line(s) || !s.json) && !open_pem
}

/// The rewrites of delta tokens that redacting each stream's joined text calls for.
fn delta_edits(redactor: &Redactor, text: &str) -> Vec<(Range<usize>, String)> {
    let mut edits = Vec::new();
    for s in &streams_of(text) {
        redistribute(redactor, s, &mut edits);
    }
    edits.sort_by_key(|(r, _)| r.start);
    edits
}

/// The streams of deltas in `text`, in the order each first appears.
fn streams_of(text: &str) -> Vec<Stream> {
    let mut streams: Vec<Stream> = Vec::new();
    let mut by_key: HashMap<String, usize> = HashMap::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let payload = match body.strip_prefix("data:") {
            Some(rest) => rest.strip_prefix(' ').unwrap_or(rest),
            None if body.starts_with('{') => body,
            None => "",
        };
        let offset = at + (body.len() - payload.len());
        at += line.len();
        if !payload.starts_with('{') {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(payload) else {
            continue;
        };
        for (path, token) in string_values(payload) {
            let Some((key, json)) = delta_stream(&v, &path) else {
                continue;
            };
            let Ok(decoded) = serde_json::from_str::<String>(&payload[token.clone()]) else {
                continue;
            };
            let i = *by_key.entry(key).or_insert_with(|| {
                streams.push(Stream::default());
                streams.len() - 1
            });
            streams[i].json = json;
            streams[i].deltas.push(Delta {
                token: offset + token.start..offset + token.end,
                text: decoded,
            });
        }
    }
    streams
}

/// Redacts a stream's joined text and deals the result back to its deltas.
fn redistribute(redactor: &Redactor, s: &Stream, edits: &mut Vec<(Range<usize>, String)>) {
    let joined: String = s.deltas.iter().map(|d| d.text.as_str()).collect();
    let redacted = if s.json {
        redactor.redact_json_or_text(&joined)
    } else {
        redactor.redact_text(&joined)
    };
    if redacted == joined {
        return;
    }
    let align = Alignment::new(&joined, &redacted);
    let mut from_o = 0;
    let mut from_r = 0;
    for (n, d) in s.deltas.iter().enumerate() {
        let to_o = from_o + d.text.len();
        let to_r = if n + 1 == s.deltas.len() {
            redacted.len()
        } else {
            char_ceil(&redacted, align.map(to_o).max(from_r))
        };
        let new = &redacted[from_r..to_r];
        if new != d.text {
            let token = serde_json::to_string(new).unwrap_or_else(|_| "\"\"".to_owned());
            edits.push((d.token.clone(), token));
        }
        from_o = to_o;
        from_r = to_r;
    }
}

fn char_ceil(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i.min(s.len())
}

/// `text` with `edits` (ascending, disjoint) applied, and where `cuts` land: a cut
/// inside an edited range goes to the end of its replacement.
fn apply_edits(
    text: &str,
    edits: &[(Range<usize>, String)],
    cuts: &[usize],
) -> (String, Vec<usize>) {
    if edits.is_empty() {
        return (text.to_owned(), cuts.to_vec());
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    // (original end, new end) of each edit, to move the cuts.
    let mut ends = Vec::with_capacity(edits.len());
    for (range, new) in edits {
        out.push_str(&text[from..range.start]);
        let start = out.len();
        out.push_str(new);
        ends.push((range.clone(), start..out.len()));
        from = range.end;
    }
    out.push_str(&text[from..]);
    let moved = cuts
        .iter()
        .map(|&c| {
            let mut shift: isize = 0;
            for (o, n) in &ends {
                if c <= o.start {
                    break;
                }
                if c < o.end {
                    return n.end;
                }
                shift = n.end as isize - o.end as isize;
            }
            c.saturating_add_signed(shift)
        })
        .collect();
    (out, moved)
}

/// Which stream of deltas the string at `path` of event `v` appends to, keyed by its
/// block, and whether that stream's text is JSON. The protocols reel assembles turns
/// from: Anthropic Messages (`content_block_delta`), OpenAI chat completions
/// (`choices[i].delta`), OpenAI Responses (`response.*.delta`), Ollama's chat and
/// generate lines.
fn delta_stream(v: &Value, path: &[String]) -> Option<(String, bool)> {
    let p: Vec<&str> = path.iter().map(String::as_str).collect();
    let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
    let num = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64);
    match p.as_slice() {
        ["delta", f @ ("text" | "partial_json" | "thinking")] if ty == "content_block_delta" => {
            let index = num(v, "index").unwrap_or(0);
            Some((format!("anthropic/{index}/{f}"), *f == "partial_json"))
        }
        [
            "choices",
            i,
            "delta",
            f @ ("content" | "reasoning_content" | "reasoning" | "refusal"),
        ] => {
            let choice = v.get("choices")?.get(i.parse::<usize>().ok()?)?;
            let c = num(choice, "index").unwrap_or(0);
            Some((format!("chat/{c}/{f}"), false))
        }
        [
            "choices",
            i,
            "delta",
            "tool_calls",
            j,
            "function",
            "arguments",
        ] => {
            let choice = v.get("choices")?.get(i.parse::<usize>().ok()?)?;
            let call = choice
                .pointer("/delta/tool_calls")?
                .get(j.parse::<usize>().ok()?)?;
            let c = num(choice, "index").unwrap_or(0);
            let t = num(call, "index").unwrap_or(0);
            Some((format!("chat/{c}/tool/{t}"), true))
        }
        ["delta"] if ty.starts_with("response.") && ty.ends_with(".delta") => {
            let [o, c, s] = ["output_index", "content_index", "summary_index"]
                .map(|k| num(v, k).map_or(String::new(), |n| n.to_string()));
            Some((
                format!("responses/{ty}/{o}/{c}/{s}"),
                ty.contains("arguments"),
            ))
        }
        ["message", f @ ("content" | "thinking")] | [f @ "response"] if ty.is_empty() => {
            Some((format!("ollama/{f}"), false))
        }
        _ => None,
    }
}

/// Every string value of JSON text `raw` (member names are not values), with its path
/// (member names, array positions as decimal numbers) and its token's byte range,
/// quotes included. Text that is not JSON yields what it yields; nothing panics.
fn string_values(raw: &str) -> Vec<(Vec<String>, Range<usize>)> {
    enum Frame {
        Object {
            key: Option<String>,
            expect_key: bool,
        },
        Array {
            index: usize,
        },
    }
    let b = raw.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let start = i;
                let end = string_end(b, start).unwrap_or(b.len());
                let token = &raw[start..end];
                match stack.last_mut() {
                    Some(Frame::Object { key, expect_key }) if *expect_key => {
                        *key = serde_json::from_str::<String>(token).ok();
                        *expect_key = false;
                    }
                    _ => {
                        let path = stack
                            .iter()
                            .map(|f| match f {
                                Frame::Object { key, .. } => key.clone().unwrap_or_default(),
                                Frame::Array { index } => index.to_string(),
                            })
                            .collect();
                        out.push((path, start..end));
                    }
                }
                i = end;
                continue;
            }
            b'{' => stack.push(Frame::Object {
                key: None,
                expect_key: true,
            }),
            b'[' => stack.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object { expect_key, .. }) => *expect_key = true,
                Some(Frame::Array { index }) => *index += 1,
                None => {}
            },
            _ => {}
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests;
