//! `reel/3` rules for secrets in the places people and tools write them by hand: a
//! Basic credential (`Basic dXNlcjpwYXNz`), a credential file pasted into a result
//! (`.netrc`, `.pgpass`), and a quoted value after a secret's name in a sentence
//! (`password 'X' rejected for user admin`).
//!
//! Why scanners: each needs a check a regex cannot make (the base64 must decode to
//! `user:pass`; a `.netrc` value is a secret only in a file that reads like one; a
//! label must be named as a secret by `names`). Each is driven by `memchr`/`memmem`
//! over the few bytes that can start a match and resumes after what it replaced, so
//! every byte is looked at a bounded number of times.

use std::sync::OnceLock;

use base64::Engine as _;
use memchr::{memchr2_iter, memmem};
use regex::Regex;

use super::builtin::Revision;
use super::names::{self, Strength};
use super::splice::Splicer;

/// The longest Basic credential decoded (a user and a password of 4 KiB between them).
const BASIC_MAX: usize = 4096;
/// The longest quoted secret looked for.
const QUOTED_MAX: usize = 4096;
/// The longest label before a quoted value.
const LABEL_MAX: usize = 64;

/// `basic-credential`: `Basic <base64>` whose base64 decodes to printable `user:pass`.
pub(crate) fn replace_basic(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut splice: Option<Splicer<'_>> = None;
    let mut resume = 0;
    for word in memchr2_iter(b'B', b'b', b) {
        if word < resume
            || (word > 0 && (b[word - 1].is_ascii_alphanumeric() || b[word - 1] == b'_'))
        {
            continue;
        }
        let Some(name) = b.get(word..word + 5) else {
            break;
        };
        if !matches!(name, b"Basic" | b"basic" | b"BASIC") {
            continue;
        }
        let at = word + 1;
        let mut s = at + 4;
        let gap = s;
        while matches!(b.get(s), Some(b' ' | b'\t')) {
            s += 1;
        }
        if s == gap {
            continue;
        }
        let mut e = s;
        while e < b.len()
            && e - s <= BASIC_MAX
            && (b[e].is_ascii_alphanumeric() || matches!(b[e], b'+' | b'/' | b'='))
        {
            e += 1;
        }
        if e - s < 8 || e - s > BASIC_MAX || !is_user_pass(&b[s..e]) {
            continue;
        }
        let sp = splice.get_or_insert_with(|| Splicer::new(text));
        resume = sp.mark(s, e);
    }
    splice.and_then(Splicer::finish)
}

/// Whether base64 `token` decodes to printable text holding a `:` (`user:pass`).
fn is_user_pass(token: &[u8]) -> bool {
    let engine = base64::engine::general_purpose::STANDARD;
    let trimmed: Vec<u8> = token.iter().copied().filter(|&c| c != b'=').collect();
    let decoded = base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(&trimmed)
        .or_else(|_| engine.decode(token));
    decoded.is_ok_and(|d| {
        d.contains(&b':') && d.iter().all(|&c| (0x20..0x7f).contains(&c) || c >= 0x80)
    })
}

/// `credential-file`: the password of a `.netrc` entry (`machine h login u password
/// P`, on one line or several) and of a `.pgpass` line (`host:port:db:user:P`).
pub(crate) fn replace_credential_files(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    if memmem::find(b, b"password").is_some() || memmem::find(b, b"passwd").is_some() {
        netrc(text, &mut spans);
    }
    if memchr::memchr(b':', b).is_some() {
        pgpass(text, &mut spans);
    }
    if memmem::find(b, b"value").is_some() {
        yaml_env(text, &mut spans);
    }
    if spans.is_empty() {
        return None;
    }
    spans.sort_unstable();
    let mut splice = Splicer::new(text);
    for (s, e) in spans {
        splice.mark(s, e);
    }
    splice.finish()
}

/// A YAML `env` list (Kubernetes, Compose, MCP client configs): `- name: API_TOKEN`
/// then `value: …` on the next line, or `{name: API_TOKEN, value: …}` on one; the value
/// of a name that says secret goes (after a weak name, only a random-looking one).
fn yaml_env(text: &str, spans: &mut Vec<(usize, usize)>) {
    let mut named: Option<Strength> = None;
    for (at, line) in lines(text) {
        named = env_line(line, named, at, spans);
    }
}

/// One line of a YAML `env` list, after a line that named a secret of `named`
/// strength (or not); pushes the span of a secret value this line holds (offsets
/// from `at`), and returns what this line names for the next.
pub(super) fn env_line(
    line: &str,
    named: Option<Strength>,
    at: usize,
    spans: &mut Vec<(usize, usize)>,
) -> Option<Strength> {
    let body = line.trim_start();
    let body = body.strip_prefix("- ").map_or(body, str::trim_start);
    let body = body.strip_prefix('{').unwrap_or(body);
    let offset = at + (body.as_ptr() as usize - line.as_ptr() as usize);
    if let Some(rest) = body.strip_prefix("name:") {
        let (name, same_line) = match rest.split_once(", value:") {
            Some((n, v)) => (n, Some(v)),
            None => (rest, None),
        };
        let name = name.trim().trim_matches(['"', '\'']);
        let strength = names::member(name, Revision::Reel3);
        if let (Some(v), Some(strength)) = (same_line, strength) {
            let start = offset + (v.as_ptr() as usize - body.as_ptr() as usize);
            push_value(spans, start, v.trim_end_matches(['}', ' ']), strength);
            return None;
        }
        return strength;
    }
    if let (Some(rest), Some(strength)) = (body.strip_prefix("value:"), named) {
        push_value(spans, offset + "value:".len(), rest, strength);
    }
    None
}

/// The span of `raw` (a YAML scalar starting at `start`, quotes and spaces around it
/// left out), when it is a secret by a name of `strength`.
fn push_value(spans: &mut Vec<(usize, usize)>, start: usize, raw: &str, strength: Strength) {
    let lead = raw.len() - raw.trim_start().len();
    let value = raw.trim();
    let (value, quoted) = match value.as_bytes().first() {
        Some(b'"' | b'\'') if value.len() >= 2 => (&value[1..value.len() - 1], 1),
        _ => (value, 0),
    };
    let secret = !value.is_empty()
        && match strength {
            Strength::Strong => true,
            Strength::Weak => super::context::looks_random(value),
        };
    if secret {
        let s = start + lead + quoted;
        spans.push((s, s + value.len()));
    }
}

/// The white-space-separated words of `text`, line by line (see [`lines`]), with
/// where each starts.
fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    lines(text).flat_map(move |(at, line)| {
        line.split_ascii_whitespace()
            .map(move |w| (at + (w.as_ptr() as usize - line.as_ptr() as usize), w))
    })
}

/// The lines of `text`, split at line breaks and at `\n` escapes, with where each
/// starts.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let b = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        if at > b.len() {
            return None;
        }
        let start = at;
        let mut i = at;
        while i < b.len() {
            if b[i] == b'\n' {
                at = i + 1;
                return Some((start, &text[start..i]));
            }
            if b[i] == b'\\' && b.get(i + 1) == Some(&b'n') {
                at = i + 2;
                return Some((start, &text[start..i]));
            }
            i += 1;
        }
        at = b.len() + 1;
        Some((start, &text[start..]))
    })
}

/// `.netrc`: a `password`/`passwd` word followed by its value, in a text that also
/// has `machine`, `default` or `login` as words, or on a line of just those two words
/// (a file read line by line, as stderr is).
fn netrc(text: &str, spans: &mut Vec<(usize, usize)>) {
    let netrc_like = words(text).any(|(_, w)| matches!(w, "machine" | "default" | "login"));
    if !netrc_like {
        for (at, line) in lines(text) {
            let mut w = line.split_ascii_whitespace();
            // Without the file's other words, only a value that is not a plain word
            // (`password reset` is prose): it has a digit, a symbol or a capital.
            let word_like = |v: &str| v.bytes().all(|b| b.is_ascii_lowercase());
            if let (Some("password" | "passwd"), Some(value), None) = (w.next(), w.next(), w.next())
                && !word_like(value)
            {
                let start = at + (value.as_ptr() as usize - line.as_ptr() as usize);
                spans.push((start, start + value.len()));
            }
        }
        return;
    }
    let mut after_keyword = false;
    for (at, w) in words(text) {
        if after_keyword {
            after_keyword = false;
            spans.push((at, at + w.len()));
            continue;
        }
        after_keyword = matches!(w, "password" | "passwd");
    }
}

/// `.pgpass`: `hostname:port:database:username:password` ending a line (a port may
/// be `*`; the host has a letter, a `.` or is `*`, so a time `12:30:00:00:01` is not
/// one).
fn pgpass(text: &str, spans: &mut Vec<(usize, usize)>) {
    static LINE: OnceLock<Regex> = OnceLock::new();
    let re = LINE.get_or_init(|| {
        Regex::new(r#"(?:^|[ \t'"=])(?:\*|[A-Za-z0-9_-]*[A-Za-z.][A-Za-z0-9._-]*):(?:[0-9]{1,5}|\*):[^:\s\\'"]+:[^:\s\\'"]+:([^\s\\'"]+)['"]*[ \t]*(?:\r|\\r)?$"#)
            .expect("pgpass pattern compiles")
    });
    for (at, line) in lines(text) {
        if let Some(m) = re.captures(line).and_then(|c| c.get(1)) {
            spans.push((at + m.start(), at + m.end()));
        }
    }
}

/// `quoted-secret`: a quoted value after a strong secret name and white space:
/// `password 'X' rejected`, `token "X" expired`, `api_key `X``.
pub(crate) fn replace_quoted(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut splice: Option<Splicer<'_>> = None;
    let mut resume = 0;
    for q in memchr2_iter(b'\'', b'"', b) {
        if q < resume {
            continue;
        }
        let Some(end) = quoted_secret(b, q) else {
            continue;
        };
        let sp = splice.get_or_insert_with(|| Splicer::new(text));
        resume = sp.mark(q + 1, end).max(end + 1);
    }
    splice.and_then(Splicer::finish)
}

/// Where the value opened by the quote at `q` ends, when a strong name and white
/// space stand before the quote.
fn quoted_secret(b: &[u8], q: usize) -> Option<usize> {
    let mut e = q;
    while e > 0 && matches!(b[e - 1], b' ' | b'\t') && q - e < 4 {
        e -= 1;
    }
    if e == q || e == 0 {
        return None;
    }
    let mut s = e;
    while s > 0
        && (b[s - 1].is_ascii_alphanumeric() || matches!(b[s - 1], b'_' | b'-'))
        && e - s <= LABEL_MAX
    {
        s -= 1;
    }
    if s == e
        || e - s > LABEL_MAX
        || (s > 0
            && !matches!(
                b[s - 1],
                b' ' | b'\t' | b'\n' | b'(' | b',' | b'.' | b':' | b'\'' | b'"' | b'='
            ))
    {
        return None;
    }
    let label = std::str::from_utf8(&b[s..e]).ok()?;
    if names::label(label, Revision::Reel3) != Some(Strength::Strong) {
        return None;
    }
    let close = memchr::memchr(b[q], &b[q + 1..b.len().min(q + 1 + QUOTED_MAX)])? + q + 1;
    let value = &b[q + 1..close];
    (!value.is_empty() && !value.contains(&b'\n')).then_some(close)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(f: fn(&str) -> Option<String>, text: &str) -> String {
        f(text).unwrap_or_else(|| text.to_owned())
    }

    #[test]
    fn basic_credentials_decode_to_user_and_password() {
        assert_eq!(
            apply(replace_basic, "use Basic dXNlcjpodW50ZXIy now"),
            "use Basic [REDACTED] now"
        );
        assert_eq!(
            apply(replace_basic, "BASIC YWRtaW46czNjcjN0"),
            "BASIC [REDACTED]"
        );
        // Not a credential: no `:` once decoded, or not base64 at all.
        for plain in [
            "Basic information here",
            "Basic aGVsbG8gd29ybGQ=",
            "Basic auth is off",
        ] {
            assert_eq!(apply(replace_basic, plain), plain);
        }
    }

    #[test]
    fn credential_files() {
        let netrc = "machine api.example.com\n  login alice\n  password s3cr3t-Pw\n";
        assert_eq!(
            apply(replace_credential_files, netrc),
            "machine api.example.com\n  login alice\n  password [REDACTED]\n"
        );
        let pgpass = "db.internal:5432:app:alice:Zq9-pw.x\n*:*:*:bob:other\n";
        assert_eq!(
            apply(replace_credential_files, pgpass),
            "db.internal:5432:app:alice:[REDACTED]\n*:*:*:bob:[REDACTED]\n"
        );
        // Held as text: the line breaks are `\n` escapes.
        assert_eq!(
            apply(
                replace_credential_files,
                r"machine h\nlogin u\npassword p4ss-x"
            ),
            r"machine h\nlogin u\npassword [REDACTED]"
        );
        assert_eq!(
            apply(replace_credential_files, r"x\ndb:5432:app:u:Zq9-pw"),
            r"x\ndb:5432:app:u:[REDACTED]"
        );
        // A sentence about passwords is not a netrc file; a time is not a pgpass line; a
        // line of `password` and a plain word is prose.
        for plain in [
            "reset the password please",
            "at 12:30:00:00:01 we met",
            "password reset",
        ] {
            assert_eq!(apply(replace_credential_files, plain), plain);
        }
    }

    #[test]
    fn yaml_env_lists() {
        let block = "env:\n  - name: DB_PASSWORD\n    value: pLIix6MEOLeMa6\n  - name: REGION\n    value: eu-west-1\n";
        assert_eq!(
            apply(replace_credential_files, block),
            "env:\n  - name: DB_PASSWORD\n    value: [REDACTED]\n  - name: REGION\n    value: eu-west-1\n"
        );
        assert_eq!(
            apply(
                replace_credential_files,
                "- {name: API_TOKEN, value: \"abc-123\"}"
            ),
            "- {name: API_TOKEN, value: \"[REDACTED]\"}"
        );
        let plain = "- name: LOG_LEVEL\n  value: debug";
        assert_eq!(apply(replace_credential_files, plain), plain);
    }

    #[test]
    fn quoted_values_after_strong_names() {
        assert_eq!(
            apply(replace_quoted, "password 'hunter2' rejected for user admin"),
            "password '[REDACTED]' rejected for user admin"
        );
        assert_eq!(
            apply(replace_quoted, "error: token \"abc.def\" expired"),
            "error: token \"[REDACTED]\" expired"
        );
        for plain in ["the 'password' field", "name 'alice' ok", "user: \"bob\""] {
            assert_eq!(apply(replace_quoted, plain), plain);
        }
    }
}
