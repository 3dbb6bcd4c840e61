//! The context rules: a secret recognised by what stands next to it rather than by its
//! own format. `secret-assignment` finds a value after a secret-like label
//! (`password: …`, `export AWS_SECRET_ACCESS_KEY=…`, `"apiKey": "…"`, `Password=…;`,
//! `--passphrase …`); `url-query-secret` finds the value of a secret-like query
//! parameter (`?access_token=…`, `&sig=…`). Which labels count is [`names`]: a strong
//! label takes any value, a weak one (`key`, `sig`, `session`) only a value that
//! [`looks_random`].
//!
//! Why scanners and not regexes: a label can be spelled a hundred ways and the
//! decision needs the word rules of `names`. Both scanners are driven by `memchr` over
//! the few bytes that can start a match (`=`, `:`, `-`; `?`, `&`), look back at most
//! [`LABEL_MAX`] bytes for the label, and resume after what they replaced: every byte
//! is looked at a bounded number of times.

use memchr::{memchr3_iter, memmem};

use super::builtin::Revision;
use super::names::{self, Strength};
use super::splice::{MARKER, Splicer};

/// The longest label or query-parameter name looked at.
const LABEL_MAX: usize = 64;

/// Whether `text` has a byte a context rule could start at (a cheap gate).
pub(crate) fn may_match(text: &str) -> bool {
    memchr::memchr3(b'=', b':', b'-', text.as_bytes()).is_some()
}

/// Label characters: `[A-Za-z0-9_.-]`.
fn is_label(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

/// `secret-assignment`: the value after every secret-like label.
pub(crate) fn replace_assignments(text: &str, revision: Revision) -> Option<String> {
    let b = text.as_bytes();
    let mut splice: Option<Splicer<'_>> = None;
    let mut resume = 0;
    for p in memchr3_iter(b'=', b':', b'-', b) {
        if p < resume {
            continue;
        }
        let found = match b[p] {
            b'-' => flag_value(b, p, revision),
            _ => separated_value(b, p, revision),
        };
        // A value that is not a secret is not searched again for labels: every byte
        // is scanned as a value at most once.
        if let Some(Value { start, end, secret }) = found {
            resume = end;
            if secret {
                let s = splice.get_or_insert_with(|| Splicer::new(text));
                resume = s.mark(start, end);
            }
        }
    }
    splice.and_then(Splicer::finish)
}

/// A value found after a label, and whether the label makes it a secret.
struct Value {
    start: usize,
    end: usize,
    secret: bool,
}

impl Value {
    fn judged(strength: Strength, b: &[u8], start: usize, end: usize) -> Value {
        Value {
            start,
            end,
            secret: accepts(strength, &b[start..end]),
        }
    }
}

/// A label, then `=`, `:`, `:=` or `=>` at `p`, then its value.
fn separated_value(b: &[u8], p: usize, revision: Revision) -> Option<Value> {
    let next = b.get(p + 1).copied();
    let prev = p.checked_sub(1).map(|i| b[i]);
    let sep_len = match (b[p], next) {
        (b'=', Some(b'=')) | (b':', Some(b':')) => return None,
        (b':', Some(b'/')) if b.get(p + 2) == Some(&b'/') => return None, // scheme://
        (b'=', Some(b'>')) | (b':', Some(b'=')) => 2,
        _ => 1,
    };
    if b[p] == b'=' && matches!(prev, Some(b'!' | b'<' | b'>' | b'=' | b':')) {
        return None; // a comparison, or the `=` of a `:=` already seen
    }
    // Back over white space and the closing quote of a quoted label.
    let mut e = p;
    let mut spaces = 0;
    while e > 0 && matches!(b[e - 1], b' ' | b'\t') && spaces < 8 {
        e -= 1;
        spaces += 1;
    }
    let mut quote = None;
    if e > 0 && matches!(b[e - 1], b'"' | b'\'') {
        quote = Some(b[e - 1]);
        e -= 1;
        if e > 0 && b[e - 1] == b'\\' {
            e -= 1; // `\"label\":` in JSON held as text inside JSON held as text
        }
    }
    let (ls, le) = label_before(b, e)?;
    if let Some(q) = quote {
        // A quoted label opens with the same quote (possibly escaped).
        let open = ls.checked_sub(1).map(|i| b[i]);
        if open != Some(q) {
            return None;
        }
    }
    let label = label_text(b, ls, le)?;
    // `reel/3`: a file's name is no label (`src/auth/token.rs:42:5: error`).
    if revision >= Revision::Reel3 && b[p] == b':' && is_file_name(b, ls, label) {
        return None;
    }
    let strength = names::label(label, revision)?;
    let mut q = p + sep_len;
    while matches!(b.get(q), Some(b' ' | b'\t')) {
        q += 1;
    }
    let (vs, ve, quoted) = value_at(b, q, b[p] == b'=')?;
    let mut value = Value::judged(strength, b, vs, ve);
    // `"pin": 1234` is JSON: numbers, booleans and null are never secrets.
    value.secret &= quoted || quote != Some(b'"');
    Some(value)
}

/// `--label value` at `p` (the first `-`): a secret-like flag and the word after it.
fn flag_value(b: &[u8], p: usize, revision: Revision) -> Option<Value> {
    if b.get(p + 1) != Some(&b'-') || p.checked_sub(1).is_some_and(|i| is_label(b[i])) {
        return None;
    }
    let start = p + 2;
    let mut le = start;
    while le < b.len() && is_label(b[le]) && le - start <= LABEL_MAX {
        le += 1;
    }
    if le == start || le - start > LABEL_MAX {
        return None;
    }
    let mut q = le;
    while matches!(b.get(q), Some(b' ' | b'\t')) {
        q += 1;
    }
    if q == le {
        return None; // `--label=value` is the separator case
    }
    let strength = names::label(label_text(b, start, le)?, revision)?;
    let (vs, ve, _) = value_at(b, q, false)?;
    if std::str::from_utf8(&b[vs..ve]).is_ok_and(is_flag) {
        return None; // `--a --b`: the next flag, not a value
    }
    Some(Value::judged(strength, b, vs, ve))
}

/// Whether the label at `ls` is a file's name: it stands in a path (`/` before it), or
/// ends in a source or config file's extension.
fn is_file_name(b: &[u8], ls: usize, label: &str) -> bool {
    const EXTENSIONS: [&str; 24] = [
        "rs", "go", "py", "js", "ts", "tsx", "jsx", "mjs", "cjs", "rb", "java", "kt", "c", "h",
        "cc", "cpp", "cs", "php", "swift", "yml", "yaml", "toml", "json", "sh",
    ];
    let in_path = ls > 0 && matches!(b[ls - 1], b'/' | b'\\');
    let extension = label
        .rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && EXTENSIONS.contains(&ext));
    in_path || extension
}

/// Whether a word after a flag is the next flag rather than its value: `-x` or
/// `--name`, unless what follows the dashes looks random (a passphrase may start with
/// a dash).
pub(crate) fn is_flag(word: &str) -> bool {
    word.starts_with('-') && !looks_random(word.trim_start_matches('-'))
}

/// The label that ends at `e`: a run of label characters of at most [`LABEL_MAX`]
/// bytes (a longer run is data, not a label).
fn label_before(b: &[u8], e: usize) -> Option<(usize, usize)> {
    let mut s = e;
    while s > 0 && is_label(b[s - 1]) {
        s -= 1;
        if e - s > LABEL_MAX {
            return None;
        }
    }
    (s < e).then_some((s, e))
}

fn label_text(b: &[u8], s: usize, e: usize) -> Option<&str> {
    let label = std::str::from_utf8(&b[s..e]).ok()?;
    let label = label.trim_start_matches('-');
    (!label.is_empty()).then_some(label)
}

/// The value starting at `q`: quoted (`"…"` with escapes, `'…'`, `\"…\"`, and with
/// `=` ODBC's `{…}`) up to its closing quote or the end of the line, or a bare word.
/// Returns its range and whether it was quoted.
fn value_at(b: &[u8], q: usize, equals: bool) -> Option<(usize, usize, bool)> {
    let line_end = |from: usize, stop: &dyn Fn(usize) -> bool| {
        let mut i = from;
        while i < b.len() && !matches!(b[i], b'\n' | b'\r') && !stop(i) {
            i += 1;
        }
        i
    };
    let (vs, ve, quoted) = match b.get(q)? {
        b'"' => {
            let mut i = q + 1;
            while i < b.len() && !matches!(b[i], b'"' | b'\n' | b'\r') {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            (q + 1, i.min(b.len()), true)
        }
        b'\'' => (q + 1, line_end(q + 1, &|i| b[i] == b'\''), true),
        b'\\' if b.get(q + 1) == Some(&b'"') => {
            let end = line_end(q + 2, &|i| b[i] == b'\\' && b.get(i + 1) == Some(&b'"'));
            (q + 2, end, true)
        }
        b'{' if equals => (q + 1, line_end(q + 1, &|i| b[i] == b'}'), true),
        b'{' | b'[' | b'<' => return None,
        _ => (q, bare_end(b, q, ends_bare), false),
    };
    (vs < ve).then_some((vs, ve, quoted))
}

/// Where a value that is not quoted, starting at `from`, ends: at the first byte
/// `ends` says ends it, stepping over markers whole (a value partly redacted by an
/// earlier rule, `[REDACTED]%2F2030…`, is still one value).
fn bare_end(b: &[u8], from: usize, ends: impl Fn(u8) -> bool) -> usize {
    let mut i = from;
    while i < b.len() {
        if b[i..].starts_with(MARKER.as_bytes()) {
            i += MARKER.len();
        } else if ends(b[i]) {
            break;
        } else {
            i += 1;
        }
    }
    i
}

/// What ends a value that is not quoted.
fn ends_bare(c: u8) -> bool {
    c.is_ascii_whitespace()
        || matches!(
            c,
            b'"' | b'\''
                | b'`'
                | b','
                | b';'
                | b'&'
                | b'<'
                | b'>'
                | b')'
                | b']'
                | b'}'
                | b'|'
                | b'\\'
        )
}

/// Whether a label of `strength` makes `value` a secret: a strong one takes anything
/// but a short number (`max_tokens=100`) and the marker; a weak one a random value.
fn accepts(strength: Strength, value: &[u8]) -> bool {
    // Judged with earlier markers set aside: a marker is not a secret's text (nor
    // random), and with nothing left to hide (`[REDACTED]=[REDACTED]`) taking the value
    // would only merge markers, so a second pass would differ from the first.
    let mut own = Vec::with_capacity(value.len());
    let mut rest = value;
    while let Some(&c) = rest.first() {
        if rest.starts_with(MARKER.as_bytes()) {
            rest = &rest[MARKER.len()..];
        } else {
            own.push(c);
            rest = &rest[1..];
        }
    }
    if !own.iter().any(|&c| c.is_ascii_alphanumeric() || c >= 0x80) {
        return false;
    }
    match strength {
        Strength::Strong => !(own.len() < 8 && own.iter().all(u8::is_ascii_digit)),
        Strength::Weak => std::str::from_utf8(&own).is_ok_and(looks_random),
    }
}

/// `url-query-secret`: the value of every query parameter (after `?` or `&`; `reel/3`
/// also a path parameter after `;`, as in `;jsessionid=…`) whose name is secret-like.
pub(crate) fn replace_query_values(text: &str, revision: Revision) -> Option<String> {
    let b = text.as_bytes();
    let mut splice: Option<Splicer<'_>> = None;
    let mut resume = 0;
    let third = if revision >= Revision::Reel3 {
        b';'
    } else {
        b'?'
    };
    for p in memchr3_iter(b'?', b'&', third, b) {
        if p < resume {
            continue;
        }
        // After `;` only a session cookie's name (`;jsessionid=`): `;Password=` is a
        // connection string's, which `secret-assignment` reads whole (`{p;w}`).
        let path_parameter = b[p] == b';';
        let Some(Value { start, end, secret }) = query_value(b, p + 1, revision, path_parameter)
        else {
            continue;
        };
        resume = end;
        if secret {
            let s = splice.get_or_insert_with(|| Splicer::new(text));
            resume = s.mark(start, end);
        }
    }
    splice.and_then(Splicer::finish)
}

/// `name=value` at `at`, when `name` is secret-like.
fn query_value(b: &[u8], at: usize, revision: Revision, path_parameter: bool) -> Option<Value> {
    let is_name = |c: u8| is_label(c) || matches!(c, b'~' | b'%' | b'[' | b']');
    let mut ne = at;
    while ne < b.len() && is_name(b[ne]) && ne - at <= 2 * LABEL_MAX {
        ne += 1;
    }
    if ne == at || b.get(ne) != Some(&b'=') {
        return None;
    }
    let name = std::str::from_utf8(&b[at..ne]).ok()?;
    if path_parameter && names::label(name, Revision::Reel2).is_some() {
        return None;
    }
    let strength = names::label(name, revision)?;
    let vs = ne + 1;
    let ve = bare_end(b, vs, |c| {
        c.is_ascii_whitespace()
            || matches!(
                c,
                b'&' | b'#' | b'"' | b'\'' | b'<' | b'>' | b'\\' | b'`' | b')' | b']' | b';' | b'|'
            )
    });
    (ve > vs).then(|| Value::judged(strength, b, vs, ve))
}

/// Whether a value next to a weak label is a secret (markers set aside): 16 to 4096
/// characters without
/// white space or `://`, letters with digits (or three of lower case, upper case,
/// digits, symbols, or a fifth or more capitals, as many small letters, and two
/// capitals side by side), and at least 3 bits of entropy per character. Words, paths,
/// dates and counts fail; keys, tokens, hashes and signatures pass.
pub(crate) fn looks_random(v: &str) -> bool {
    // Judged on what earlier rules left: a marker is not random.
    let own;
    let b = if memmem::find(v.as_bytes(), MARKER.as_bytes()).is_some() {
        own = v.replace(MARKER, "");
        own.as_bytes()
    } else {
        v.as_bytes()
    };
    if !(16..=4096).contains(&b.len()) || memmem::find(b, b"://").is_some() {
        return false;
    }
    let (mut lower, mut upper, mut digit, mut other) = (0usize, 0usize, false, false);
    let mut capitals_together = false;
    let mut counts = [0u16; 256];
    for (i, &c) in b.iter().enumerate() {
        capitals_together |= c.is_ascii_uppercase() && i > 0 && b[i - 1].is_ascii_uppercase();
        if c.is_ascii_whitespace() {
            return false;
        }
        match c {
            b'a'..=b'z' => lower += 1,
            b'A'..=b'Z' => upper += 1,
            b'0'..=b'9' => digit = true,
            _ => other = true,
        }
        counts[usize::from(c)] += 1;
    }
    let classes = [lower > 0, upper > 0, digit, other]
        .iter()
        .filter(|&&c| c)
        .count();
    // Letters alone pass only in random-looking case: a fifth of them capitals or
    // more, as many small, and two capitals side by side somewhere
    // (`ThisIsCamelCaseName` has one capital a word).
    let mixed = 5 * lower.min(upper) >= b.len() && capitals_together;
    if lower + upper == 0 || (!digit && classes < 3 && !mixed) {
        return false;
    }
    let n = b.len() as f64;
    let entropy: f64 = counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum();
    entropy >= 3.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assign(text: &str) -> String {
        replace_assignments(text, Revision::Reel2).unwrap_or_else(|| text.to_owned())
    }

    fn query(text: &str) -> String {
        replace_query_values(text, Revision::Reel2).unwrap_or_else(|| text.to_owned())
    }

    const RANDOM: &str = "q8Zr2LmX0pVb7KdT4wNs";

    #[test]
    fn labels_and_their_values() {
        let cases = [
            ("password: hunter2", "password: [REDACTED]"),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG+bPxRfiCY",
                "aws_secret_access_key = [REDACTED]",
            ),
            (
                "export AWS_SECRET_ACCESS_KEY=abc/def+ghi",
                "export AWS_SECRET_ACCESS_KEY=[REDACTED]",
            ),
            (
                r#"{"apiKey": "k-1", "user": "bob"}"#,
                r#"{"apiKey": "[REDACTED]", "user": "bob"}"#,
            ),
            (
                r#"{'passphrase': 'open sesame'}"#,
                r#"{'passphrase': '[REDACTED]'}"#,
            ),
            (
                "Server=db;User ID=app;Password=S3cr/t!;Encrypt=true",
                "Server=db;User ID=app;Password=[REDACTED];Encrypt=true",
            ),
            ("DRIVER={x};PWD={p;w};", "DRIVER={x};PWD={[REDACTED]};"),
            (
                "run --passphrase hunter2 --verbose",
                "run --passphrase [REDACTED] --verbose",
            ),
            ("$env:DB_PASS = \"x y\"", "$env:DB_PASS = \"[REDACTED]\""),
            (
                "Cookie: sid=abc123; theme=dark",
                "Cookie: [REDACTED]; theme=dark",
            ),
            ("token := abc", "token := [REDACTED]"),
            ("'secret' => 'abc'", "'secret' => '[REDACTED]'"),
            (
                r#"{\"password\":\"pw\"}"#,
                r#"{\"password\":\"[REDACTED]\"}"#,
            ),
            (r#"{"password":"torn"#, r#"{"password":"[REDACTED]"#),
            (&format!("key: {RANDOM}"), "key: [REDACTED]"),
            (&format!("AccountKey={RANDOM}==;"), "AccountKey=[REDACTED];"),
        ];
        for (input, expected) in cases {
            assert_eq!(assign(input), expected, "{input}");
        }
        let kept = [
            "max_tokens=100",
            "key: user:42",
            "primary key: id",
            "the password is required",
            "a == b, a != c, x <= y",
            "https://example.com:8080/token",
            "Note: nothing here",
            r#"{"pin": 12345678, "password": null}"#,
            "--password --next",
            "--password -v",
            "std::token::Kind",
            "password: [REDACTED]",
            "passed: 3, session: started",
        ];
        for input in kept {
            assert_eq!(assign(input), input, "{input}");
        }
    }

    #[test]
    fn query_values() {
        let cases = [
            (
                "https://h/x?access_token=abc&b=1",
                "https://h/x?access_token=[REDACTED]&b=1",
            ),
            (
                &format!("blob?sv=2022&sig={RANDOM}%3D"),
                "blob?sv=2022&sig=[REDACTED]",
            ),
            (&format!("maps?key={RANDOM}&q=x"), "maps?key=[REDACTED]&q=x"),
            (
                "db?user=u&password=p#frag",
                "db?user=u&password=[REDACTED]#frag",
            ),
            (
                "s3?X-Amz-Signature=0a1b2c3d4e5f60718293a4b5c6d7e8f9",
                "s3?X-Amz-Signature=[REDACTED]",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(query(input), expected, "{input}");
        }
        for kept in [
            "a?key=value&sig=short",
            "/message?sessionId=abc",
            "?token=",
            "x&y",
        ] {
            assert_eq!(query(kept), kept);
        }
    }

    #[test]
    fn randomness() {
        for random in [
            RANDOM,
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "0a1b2c3d4e5f60718293a4b5c6d7e8f9",
        ] {
            assert!(looks_random(random), "{random}");
        }
        for plain in [
            "configuration_file",
            "2024-01-01T00:00:00Z",
            "12345678901234567890",
            "aaaaaaaaaaaaaaaaaaa1",
            "https://example.com/a1b2c3d4",
            "short1A",
            "two words 1234567890",
            "ThisIsCamelCaseName",
            "ApplicationConfigurationName",
        ] {
            assert!(!looks_random(plain), "{plain}");
        }
    }
}
