//! The `history_elided` hashes of the LLM addendum, exactly as format.md
//! ("Rolling-hash construction") defines them, so that reel verifies markers written by
//! mcp-tape and writes markers mcp-tape verifies.
//!
//! - `request_sha256` is the plain lowercase-hex SHA-256 of the request body bytes.
//! - `sha256` is a *chained* hash over per-message digests:
//!   `rolling[0] = H("")`, `h_i = H(JSON.stringify(m_i))`,
//!   `rolling[i] = H(rolling[i-1] + h_i)` (concatenated hex), `sha256 = rolling[count]`.
//!
//! `JSON.stringify` here means JavaScript's, applied to the value `JSON.parse` built from
//! the request body. [`js_stringify`] reproduces it from the JSON *text* without going
//! through `serde_json::Value` (whose map sorts keys):
//! - no whitespace; numbers as JavaScript's `Number#toString` (`1.0` → `1`,
//!   `1e21` → `1e+21`, `-0` → `0`; a literal that overflows to ±Infinity → `null`);
//! - strings escape only `"`, `\`, `\b \f \n \r \t`, other control characters as
//!   `\u00xx` and lone surrogates as `\udxxx` (lowercase hex); `/` and non-ASCII are
//!   written as they are;
//! - members keep the order they were parsed in, except that *array-index* keys
//!   (`"0"`…`"4294967294"` in canonical form) come first in ascending numeric order, as
//!   JavaScript's property order puts them; a repeated key keeps its first position and
//!   takes its last value (what `JSON.parse` does).
//!
//! Invariant: the hashed text is a pure function of the parsed value; whitespace and
//! number spelling in the input never change a digest. Nesting deeper than
//! [`MAX_NESTING`] is refused rather than risking the stack on hostile input.

use std::collections::HashMap;
use std::fmt::Write as _;

use sha2::{Digest, Sha256};

/// The deepest array/object nesting [`js_stringify`] accepts (hostile input must not
/// exhaust the stack; real request bodies nest a few dozen levels at most).
pub const MAX_NESTING: usize = 512;

/// The largest array index JavaScript orders before other keys (2^32 - 2).
const MAX_ARRAY_INDEX: u64 = 4_294_967_294;

/// Why a text could not be hashed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HashError {
    /// The body bytes are not UTF-8.
    #[error("not valid UTF-8 (first bad byte at offset {offset})")]
    NotUtf8 {
        /// 0-based byte offset of the first invalid byte.
        offset: usize,
    },
    /// The text is not one JSON value.
    #[error("not JSON at byte {offset}: {expected}")]
    Json {
        /// 0-based byte offset where parsing failed.
        offset: usize,
        /// What was expected there.
        expected: &'static str,
    },
    /// Arrays and objects nested deeper than [`MAX_NESTING`].
    #[error("nested deeper than {limit} levels at byte {offset}")]
    TooDeep {
        /// The limit.
        limit: usize,
        /// 0-based byte offset of the opening bracket that went too deep.
        offset: usize,
    },
    /// The request body has no `messages` array (so there is no prefix to hash).
    #[error("the request body is not an object with a \"messages\" array")]
    NoMessages,
}

/// Lowercase-hex SHA-256 of `bytes` (format.md's `H`).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// `request_sha256`: the plain SHA-256 of the request body bytes, exactly as sent.
pub fn request_sha256(body: &[u8]) -> String {
    sha256_hex(body)
}

/// `JSON.stringify(JSON.parse(json_text))` with JavaScript semantics (see the module
/// documentation for the exact rules).
pub fn js_stringify(json_text: &str) -> Result<String, HashError> {
    let mut p = Parser::new(json_text);
    let mut out = String::with_capacity(json_text.len());
    p.skip_ws();
    p.value(&mut out)?;
    p.skip_ws();
    p.expect_end()?;
    Ok(out)
}

/// The chained rolling hash, fed one message at a time.
#[derive(Clone, Debug)]
pub struct RollingHash {
    state: [u8; 32],
    count: u64,
}

impl Default for RollingHash {
    fn default() -> Self {
        RollingHash::new()
    }
}

impl RollingHash {
    /// `rolling[0] = H("")`.
    pub fn new() -> Self {
        RollingHash {
            state: Sha256::digest(b"").into(),
            count: 0,
        }
    }

    /// Adds one message given as JSON text (any spelling; it is stringified first).
    pub fn push_json(&mut self, message_json: &str) -> Result<(), HashError> {
        let js = js_stringify(message_json)?;
        self.push_stringified(&js);
        Ok(())
    }

    /// Adds one message already in `JSON.stringify` form: `rolling[i] = H(rolling[i-1] + H(js))`.
    pub fn push_stringified(&mut self, js: &str) {
        let h_i = sha256_hex(js.as_bytes());
        let mut chain = Sha256::new();
        chain.update(hex::encode(self.state).as_bytes());
        chain.update(h_i.as_bytes());
        self.state = chain.finalize().into();
        self.count += 1;
    }

    /// How many messages were pushed.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// `rolling[count]`, lowercase hex.
    pub fn digest(&self) -> String {
        hex::encode(self.state)
    }

    fn raw_digest(&self) -> [u8; 32] {
        self.state
    }
}

/// `rolling[n]` over the given messages (JSON texts).
pub fn rolling_hash<'a>(messages: impl IntoIterator<Item = &'a str>) -> Result<String, HashError> {
    let mut h = RollingHash::new();
    for m in messages {
        h.push_json(m)?;
    }
    Ok(h.digest())
}

/// What a request body lets a checker verify: every prefix digest `rolling[0..=n]` of its
/// `messages` array, and the SHA-256 of the bytes.
#[derive(Clone, Debug)]
pub struct RequestDigests {
    rolling: Vec<[u8; 32]>,
    body_sha256: String,
}

impl RequestDigests {
    /// Hashes a request body: its bytes, and the rolling prefix of its `messages` array.
    pub fn from_body(body: &[u8]) -> Result<RequestDigests, HashError> {
        let text = std::str::from_utf8(body).map_err(|e| HashError::NotUtf8 {
            offset: e.valid_up_to(),
        })?;
        let messages = request_messages(text)?;
        let mut h = RollingHash::new();
        let mut rolling = Vec::with_capacity(messages.len() + 1);
        rolling.push(h.raw_digest());
        for m in &messages {
            h.push_stringified(m);
            rolling.push(h.raw_digest());
        }
        Ok(RequestDigests {
            rolling,
            body_sha256: sha256_hex(body),
        })
    }

    /// How many messages the request carried.
    pub fn message_count(&self) -> usize {
        self.rolling.len() - 1
    }

    /// `rolling[count]`, when the request has that many messages.
    pub fn prefix(&self, count: u64) -> Option<String> {
        let i = usize::try_from(count).ok()?;
        self.rolling.get(i).map(hex::encode)
    }

    /// SHA-256 of the body bytes.
    pub fn body_sha256(&self) -> &str {
        &self.body_sha256
    }

    /// Checks a `history_elided` marker against this request. `request_sha256` is
    /// compared with the body bytes only when given (pass `None` when the body at hand
    /// is a re-encoding, not the bytes sent).
    pub fn verify(&self, count: u64, sha256: &str, request_sha256: Option<&str>) -> Verdict {
        let Some(computed) = self.prefix(count) else {
            return Verdict::TooFewMessages {
                count,
                available: self.message_count(),
            };
        };
        if !computed.eq_ignore_ascii_case(sha256) {
            return Verdict::Mismatch {
                recorded: sha256.to_owned(),
                computed,
            };
        }
        match request_sha256 {
            Some(r) if !r.eq_ignore_ascii_case(&self.body_sha256) => Verdict::RequestMismatch {
                recorded: r.to_owned(),
                computed: self.body_sha256.clone(),
            },
            _ => Verdict::Verified,
        }
    }
}

/// The outcome of checking a `history_elided` marker against a request body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// `sha256` (and `request_sha256`, when checked) match.
    Verified,
    /// The rolling hash of the first `count` messages is not `sha256`.
    Mismatch {
        /// The marker's `sha256`.
        recorded: String,
        /// `rolling[count]` of the body.
        computed: String,
    },
    /// The request has fewer messages than the marker says were elided.
    TooFewMessages {
        /// The marker's `count`.
        count: u64,
        /// Messages in the request.
        available: usize,
    },
    /// The prefix matches but the body bytes do not hash to `request_sha256`.
    RequestMismatch {
        /// The marker's `request_sha256`.
        recorded: String,
        /// SHA-256 of the body bytes.
        computed: String,
    },
    /// The body could not be read as a request.
    Unverifiable {
        /// Why.
        reason: HashError,
    },
}

impl Verdict {
    /// True when the marker is wrong about the elided prefix (a violation, not a
    /// limitation of what the trace holds).
    pub fn is_false(&self) -> bool {
        matches!(
            self,
            Verdict::Mismatch { .. } | Verdict::TooFewMessages { .. }
        )
    }
}

/// Verifies a `history_elided` marker (`count`, `sha256`, `request_sha256`) against the
/// request body it describes.
pub fn verify_history_elided(
    request_body: &[u8],
    count: u64,
    sha256: &str,
    request_sha256: Option<&str>,
) -> Verdict {
    match RequestDigests::from_body(request_body) {
        Ok(d) => d.verify(count, sha256, request_sha256),
        Err(reason) => Verdict::Unverifiable { reason },
    }
}

/// The request's `messages` array, each element in `JSON.stringify` form. A repeated
/// top-level `messages` member counts with its last value, as `JSON.parse` keeps it.
pub fn request_messages(body: &str) -> Result<Vec<String>, HashError> {
    let mut p = Parser::new(body);
    p.skip_ws();
    if p.peek() != Some(b'{') {
        // Still reject non-JSON as such rather than as "no messages".
        js_stringify(body)?;
        return Err(HashError::NoMessages);
    }
    p.pos += 1;
    let mut messages: Option<Vec<String>> = None;
    let mut scratch = String::new();
    p.skip_ws();
    if p.peek() == Some(b'}') {
        p.pos += 1;
    } else {
        loop {
            p.skip_ws();
            let mut key = String::new();
            p.string(&mut key)?;
            p.skip_ws();
            p.expect(b':', "':' after a member name")?;
            p.skip_ws();
            if key == "\"messages\"" {
                messages = if p.peek() == Some(b'[') {
                    Some(p.array_elements()?)
                } else {
                    scratch.clear();
                    p.value(&mut scratch)?;
                    None
                };
            } else {
                scratch.clear();
                p.value(&mut scratch)?;
            }
            p.skip_ws();
            match p.next_byte() {
                Some(b',') => continue,
                Some(b'}') => break,
                _ => return Err(p.error_before("',' or '}' in an object")),
            }
        }
    }
    p.skip_ws();
    p.expect_end()?;
    messages.ok_or(HashError::NoMessages)
}

/// A recursive-descent JSON reader that writes the `JSON.stringify` form as it goes.
struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Parser {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            depth: 0,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn next_byte(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.pos += 1;
        Some(b)
    }

    fn error(&self, expected: &'static str) -> HashError {
        HashError::Json {
            offset: self.pos,
            expected,
        }
    }

    /// An error about the byte just consumed.
    fn error_before(&self, expected: &'static str) -> HashError {
        HashError::Json {
            offset: self.pos.saturating_sub(1),
            expected,
        }
    }

    fn expect(&mut self, b: u8, expected: &'static str) -> Result<(), HashError> {
        if self.peek() == Some(b) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(expected))
        }
    }

    fn expect_end(&self) -> Result<(), HashError> {
        if self.pos == self.bytes.len() {
            Ok(())
        } else {
            Err(self.error("the end of the text"))
        }
    }

    /// JSON whitespace only (JSON.parse accepts no other).
    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn value(&mut self, out: &mut String) -> Result<(), HashError> {
        match self.peek() {
            Some(b'{') => self.nested(out, Self::object),
            Some(b'[') => self.nested(out, Self::array),
            Some(b'"') => self.string(out),
            Some(b't') => self.literal("true", out),
            Some(b'f') => self.literal("false", out),
            Some(b'n') => self.literal("null", out),
            Some(b'-' | b'0'..=b'9') => self.number(out),
            _ => Err(self.error("a JSON value")),
        }
    }

    fn nested(
        &mut self,
        out: &mut String,
        f: fn(&mut Self, &mut String) -> Result<(), HashError>,
    ) -> Result<(), HashError> {
        if self.depth >= MAX_NESTING {
            return Err(HashError::TooDeep {
                limit: MAX_NESTING,
                offset: self.pos,
            });
        }
        self.depth += 1;
        let r = f(self, out);
        self.depth -= 1;
        r
    }

    fn literal(&mut self, lit: &'static str, out: &mut String) -> Result<(), HashError> {
        if self.bytes[self.pos..].starts_with(lit.as_bytes()) {
            self.pos += lit.len();
            out.push_str(lit);
            Ok(())
        } else {
            Err(self.error("true, false or null"))
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self, out: &mut String) -> Result<(), HashError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.error("a digit")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.error("a digit after '.'"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.error("a digit in the exponent"));
            }
        }
        // The grammar above is a subset of what Rust's float parser accepts, and both
        // round to nearest like ECMAScript's StringToNumber.
        let value: f64 = self.text[start..self.pos]
            .parse()
            .map_err(|_| HashError::Json {
                offset: start,
                expected: "a number",
            })?;
        if value.is_finite() {
            // ECMAScript Number::toString, which writes -0 as "0".
            let mut buf = ryu_js::Buffer::new();
            out.push_str(buf.format_finite(if value == 0.0 { 0.0 } else { value }));
        } else {
            out.push_str("null");
        }
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, HashError> {
        let Some(h) = self.bytes.get(self.pos..self.pos + 4) else {
            return Err(self.error("four hex digits after \\u"));
        };
        let mut v = 0u32;
        for &c in h {
            let d = (c as char)
                .to_digit(16)
                .ok_or_else(|| self.error("four hex digits after \\u"))?;
            v = v * 16 + d;
        }
        self.pos += 4;
        Ok(v)
    }

    /// A string, written quoted and escaped as `JSON.stringify` writes it.
    /// (Not [`crate::json_str::string_end`]: the hash needs each character decoded and
    /// written again, not the token's extent.)
    fn string(&mut self, out: &mut String) -> Result<(), HashError> {
        self.expect(b'"', "a string")?;
        out.push('"');
        loop {
            // Copy the run of characters that need no attention in one go; it ends on an
            // ASCII byte, so the slice boundaries are character boundaries.
            let run = self.bytes[self.pos..]
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .ok_or(HashError::Json {
                    offset: self.bytes.len(),
                    expected: "'\"' to close the string",
                })?;
            out.push_str(&self.text[self.pos..self.pos + run]);
            self.pos += run;
            match self.next_byte() {
                Some(b'"') => break,
                Some(b'\\') => self.escape(out)?,
                _ => return Err(self.error_before("no raw control character in a string")),
            }
        }
        out.push('"');
        Ok(())
    }

    fn escape(&mut self, out: &mut String) -> Result<(), HashError> {
        let c = match self.next_byte() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                let unit = self.hex4()?;
                return self.code_unit(unit, out);
            }
            _ => {
                return Err(
                    self.error_before("a valid escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)")
                );
            }
        };
        push_js_char(out, c);
        Ok(())
    }

    /// A `\uXXXX` code unit: joined with a following low surrogate escape into one
    /// character, or kept as a lone surrogate (which `JSON.stringify` escapes).
    fn code_unit(&mut self, unit: u32, out: &mut String) -> Result<(), HashError> {
        if (0xD800..0xDC00).contains(&unit) && self.bytes[self.pos..].starts_with(b"\\u") {
            let save = self.pos;
            self.pos += 2;
            let low = self.hex4()?;
            if (0xDC00..0xE000).contains(&low) {
                let c = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                if let Some(c) = char::from_u32(c) {
                    out.push(c);
                }
                return Ok(());
            }
            // Not a pair: the high surrogate stands alone; read the next escape afresh.
            self.pos = save;
        }
        match char::from_u32(unit) {
            Some(c) => push_js_char(out, c),
            None => {
                let _ = write!(out, "\\u{unit:04x}");
            }
        }
        Ok(())
    }

    fn array(&mut self, out: &mut String) -> Result<(), HashError> {
        self.expect(b'[', "'['")?;
        out.push('[');
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            out.push(']');
            return Ok(());
        }
        loop {
            self.skip_ws();
            self.value(out)?;
            self.skip_ws();
            match self.next_byte() {
                Some(b',') => out.push(','),
                Some(b']') => break,
                _ => return Err(self.error_before("',' or ']' in an array")),
            }
        }
        out.push(']');
        Ok(())
    }

    /// The elements of an array, each in `JSON.stringify` form.
    fn array_elements(&mut self) -> Result<Vec<String>, HashError> {
        self.expect(b'[', "'['")?;
        self.depth += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
        } else {
            loop {
                self.skip_ws();
                let mut item = String::new();
                self.value(&mut item)?;
                items.push(item);
                self.skip_ws();
                match self.next_byte() {
                    Some(b',') => {}
                    Some(b']') => break,
                    _ => return Err(self.error_before("',' or ']' in an array")),
                }
            }
        }
        self.depth -= 1;
        Ok(items)
    }

    fn object(&mut self, out: &mut String) -> Result<(), HashError> {
        self.expect(b'{', "'{'")?;
        self.skip_ws();
        // (key as written by JSON.stringify, value as written); a repeated key keeps its
        // first slot and takes the last value.
        let mut members: Vec<(String, String)> = Vec::new();
        let mut slot: HashMap<String, usize> = HashMap::new();
        if self.peek() == Some(b'}') {
            self.pos += 1;
        } else {
            loop {
                self.skip_ws();
                let mut key = String::new();
                self.string(&mut key)?;
                self.skip_ws();
                self.expect(b':', "':' after a member name")?;
                self.skip_ws();
                let mut value = String::new();
                self.value(&mut value)?;
                match slot.get(&key) {
                    Some(&i) => members[i].1 = value,
                    None => {
                        slot.insert(key.clone(), members.len());
                        members.push((key, value));
                    }
                }
                self.skip_ws();
                match self.next_byte() {
                    Some(b',') => {}
                    Some(b'}') => break,
                    _ => return Err(self.error_before("',' or '}' in an object")),
                }
            }
        }
        // JavaScript orders integer-index keys first, ascending; the sort is stable, so
        // the other keys keep their parsed order.
        members.sort_by_key(|(k, _)| array_index(k).map_or((1, 0), |i| (0, i)));
        out.push('{');
        for (i, (k, v)) in members.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(k);
            out.push(':');
            out.push_str(v);
        }
        out.push('}');
        Ok(())
    }
}

/// The array index a quoted key denotes, if it is one (`"0"`, `"17"`; not `"017"`).
fn array_index(quoted: &str) -> Option<u64> {
    let k = quoted.strip_prefix('"')?.strip_suffix('"')?;
    if k.is_empty() || k.len() > 10 || !k.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if k.len() > 1 && k.starts_with('0') {
        return None;
    }
    k.parse::<u64>().ok().filter(|&i| i <= MAX_ARRAY_INDEX)
}

/// One character as `JSON.stringify` writes it inside a string.
fn push_js_char(out: &mut String, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x20 => {
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
        c => out.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// research/mcp-tape.md §1.6, verified there with Node and Python.
    const BODY: &str = r#"{"model":"claude-example-1","max_tokens":64,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"hello"}]},{"role":"user","content":"again"}]}"#;

    fn js(s: &str) -> String {
        js_stringify(s).unwrap()
    }

    #[test]
    fn research_vector_every_intermediate() {
        assert_eq!(
            RollingHash::new().digest(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let m1 = r#"{"role":"user","content":"hi"}"#;
        let m2 = r#"{"role":"assistant","content":[{"type":"text","text":"hello"}]}"#;
        assert_eq!(
            sha256_hex(js(m1).as_bytes()),
            "ae760f5ba03c31ac30c2aa6768cfedf6c6c863b721e305305a7626a7c0e0d0d7"
        );
        assert_eq!(
            sha256_hex(js(m2).as_bytes()),
            "2536032cacca7ab10a617ff5a70232a306a45957fd002d9fff6384f6c0fae5de"
        );
        let mut h = RollingHash::new();
        h.push_json(m1).unwrap();
        assert_eq!(
            h.digest(),
            "a0dfb16b0b7220b0f8c403b1c22f1e06eb7e0538980651b61f4baaf7443395cc"
        );
        h.push_json(m2).unwrap();
        assert_eq!(
            h.digest(),
            "06b6136d214f5714bd5894f383a5fd9b13a0750810e13d8f177b5e8607472dae"
        );
        assert_eq!(h.count(), 2);
        assert_eq!(
            request_sha256(BODY.as_bytes()),
            "449e61b27ecea703a853ef3df1580c3998613a43bc9479d0d7c98a9611467620"
        );
    }

    #[test]
    fn research_vector_verifies_and_wrong_markers_do_not() {
        let sha = "06b6136d214f5714bd5894f383a5fd9b13a0750810e13d8f177b5e8607472dae";
        let req = "449e61b27ecea703a853ef3df1580c3998613a43bc9479d0d7c98a9611467620";
        let body = BODY.as_bytes();
        assert_eq!(
            verify_history_elided(body, 2, sha, Some(req)),
            Verdict::Verified
        );
        assert!(verify_history_elided(body, 1, sha, Some(req)).is_false());
        assert_eq!(
            verify_history_elided(body, 4, sha, Some(req)),
            Verdict::TooFewMessages {
                count: 4,
                available: 3
            }
        );
        assert!(matches!(
            verify_history_elided(body, 2, sha, Some(&"0".repeat(64))),
            Verdict::RequestMismatch { .. }
        ));
        // Whitespace and member spelling do not change the prefix hash.
        let spaced = BODY
            .replace(",\"", " ,\n \"")
            .replace("\"hi\"", "\"h\\u0069\"");
        assert_eq!(
            verify_history_elided(spaced.as_bytes(), 2, sha, None),
            Verdict::Verified
        );
        assert!(matches!(
            verify_history_elided(b"{\"model\":1}", 0, sha, None),
            Verdict::Unverifiable {
                reason: HashError::NoMessages
            }
        ));
    }

    #[test]
    fn numbers_follow_number_to_string() {
        assert_eq!(js("1.0"), "1");
        assert_eq!(js("1e21"), "1e+21");
        assert_eq!(js("1e20"), "100000000000000000000");
        assert_eq!(js("1e-7"), "1e-7");
        assert_eq!(js("0.000001"), "0.000001");
        assert_eq!(js("-0"), "0");
        assert_eq!(js("-0.0e5"), "0");
        assert_eq!(js("0.1"), "0.1");
        assert_eq!(js("-1.5E+3"), "-1500");
        assert_eq!(
            js("123456789012345678901234567890"),
            "1.2345678901234568e+29"
        );
        assert_eq!(js("9007199254740993"), "9007199254740992");
        assert_eq!(js("1e400"), "null");
        assert_eq!(js("[1e400,-1e400]"), "[null,null]");
    }

    #[test]
    fn strings_escape_like_json_stringify() {
        assert_eq!(js(r#""a/b""#), r#""a/b""#);
        assert_eq!(js(r#""a\/b""#), r#""a/b""#);
        assert_eq!(js(r#""é€😀""#), "\"é€😀\"");
        assert_eq!(js(r#""\u00e9\u20AC\ud83d\ude00""#), "\"é€😀\"");
        assert_eq!(js(r#""\b\f\n\r\t\"\\""#), r#""\b\f\n\r\t\"\\""#);
        assert_eq!(js(r#""\u0001\u001F\u007f""#), "\"\\u0001\\u001f\u{7f}\"");
        assert_eq!(js(r#""\u2028""#), "\"\u{2028}\"");
        assert_eq!(js(r#""\uD800x""#), r#""\ud800x""#);
        assert_eq!(js(r#""\uDC00\uD83D""#), r#""\udc00\ud83d""#);
        assert_eq!(js(r#""\uD83D\u0041""#), r#""\ud83dA""#);
        assert!(js_stringify("\"a\u{1}b\"").is_err());
        assert!(js_stringify(r#""\x""#).is_err());
    }

    #[test]
    fn objects_keep_parsed_order_as_javascript_does() {
        assert_eq!(
            js(r#" { "b" : 1 , "a" : [ 1 , { "z" : null , "y" : true } ] } "#),
            r#"{"b":1,"a":[1,{"z":null,"y":true}]}"#
        );
        // A repeated key keeps its first position and its last value.
        assert_eq!(js(r#"{"a":1,"b":2,"a":3}"#), r#"{"a":3,"b":2}"#);
        // Integer-index keys come first, ascending; others stay in order.
        assert_eq!(
            js(r#"{"b":1,"10":2,"2":3,"02":4,"a":5,"-1":6,"4294967295":7,"4294967294":8}"#),
            r#"{"2":3,"10":2,"4294967294":8,"b":1,"02":4,"a":5,"-1":6,"4294967295":7}"#
        );
        // Escaped and plain spellings of a key are the same key.
        assert_eq!(js(r#"{"a":1,"\u0061":2}"#), r#"{"a":2}"#);
        assert_eq!(js("{}"), "{}");
        assert_eq!(js("[ ]"), "[]");
    }

    #[test]
    fn malformed_and_hostile_input_is_refused() {
        for bad in [
            "",
            "{",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            "-",
            "+1",
            "tru",
            "{\"a\" 1}",
            "1 2",
            "NaN",
            "\u{feff}{}",
        ] {
            assert!(js_stringify(bad).is_err(), "{bad:?}");
        }
        let deep = "[".repeat(MAX_NESTING + 1) + &"]".repeat(MAX_NESTING + 1);
        assert!(matches!(
            js_stringify(&deep),
            Err(HashError::TooDeep { .. })
        ));
        let ok = "[".repeat(MAX_NESTING) + &"]".repeat(MAX_NESTING);
        assert_eq!(js(&ok), ok);
    }

    #[test]
    fn request_messages_takes_the_last_messages_member() {
        let body = r#"{"messages":[1],"x":{"messages":[]},"messages":[ {"b":1, "a":2} ,"s"]}"#;
        assert_eq!(
            request_messages(body).unwrap(),
            vec![r#"{"b":1,"a":2}"#.to_owned(), r#""s""#.to_owned()]
        );
        assert_eq!(request_messages("[1]"), Err(HashError::NoMessages));
        assert_eq!(
            request_messages(r#"{"messages":{}}"#),
            Err(HashError::NoMessages)
        );
        assert!(matches!(
            request_messages("{nope"),
            Err(HashError::Json { .. })
        ));
    }

    #[test]
    fn rolling_hash_of_nothing_is_the_seed() {
        assert_eq!(rolling_hash([]).unwrap(), RollingHash::new().digest());
        assert_eq!(
            rolling_hash([r#"{ "role":"user", "content":"hi" }"#]).unwrap(),
            "a0dfb16b0b7220b0f8c403b1c22f1e06eb7e0538980651b61f4baaf7443395cc"
        );
    }
}
