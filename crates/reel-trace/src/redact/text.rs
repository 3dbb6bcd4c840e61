//! Value rules: the patterns that find secrets inside a piece of text (a JSON string
//! value, a command argument, a stderr line) and replace them with the marker.
//!
//! Why a module of its own: these rules are the part of redaction that must stay linear
//! on hostile input (a 10 MB base64 image, a megabyte of `.env.env.env…`). Every regex
//! here runs on the `regex` crate (finite automata, no backtracking), and the two rules
//! mcp-tape wrote with look-behind (`.env` paths, SSH key paths) are hand-written
//! word scanners that look at each byte a bounded number of times.
//!
//! Invariants:
//! - The marker is atomic. A match that lies inside an existing `[REDACTED]` is
//!   ignored, and a match that touches one swallows it whole, so no rule can nibble at
//!   a marker (`--redact RED` stays harmless) and adjacent replacements merge into one
//!   marker. Together with re-running the rules until nothing changes (at most
//!   [`MAX_ROUNDS`] rounds), this makes redaction idempotent.
//! - Patterns follow mcp-tape's ECMAScript semantics where they differ from Rust's
//!   defaults: `\b` is the ASCII word boundary, `\s` is the ECMAScript white-space set
//!   and `.` excludes LF, CR, U+2028 and U+2029.

use std::borrow::Cow;

use memchr::memmem;
use regex::Regex;

/// What replaces a secret; mcp-tape's marker, so both tools' traces read alike.
pub const MARKER: &str = "[REDACTED]";

/// At most this many passes of all value rules over one string. One pass does the work;
/// the next confirms nothing changed. A rule set whose replacements keep exposing new
/// matches (only contrived `\b`-at-the-edge user patterns do) stops here.
pub(crate) const MAX_ROUNDS: usize = 4;

/// Strings at least this long made only of base64 characters skip the value rules
/// (mcp-tape 0.7 does the same): rewriting inside a base64 payload corrupts the media
/// it carries, and key-shaped runs appear in random base64 by chance.
pub const BASE64_SKIP_MIN: usize = 8 * 1024;

/// The ECMAScript `\s` set, as the inside of a character class.
const JS_SPACE: &str = r"\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

/// The ASCII word boundary (ECMAScript's `\b`); Rust's default `\b` is Unicode-aware.
const B: &str = r"(?-u:\b)";

/// One built-in value rule of the `reel/1` rule set. Listed in application order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ValueRule {
    AwsAccessKey,
    SkKey,
    GithubToken,
    GithubPat,
    Jwt,
    AuthorizationHeader,
    Bearer,
    SlackToken,
    StripeKey,
    UrlPassword,
    DotenvPath,
    SshKeyPath,
    GoogleApiKey,
}

impl ValueRule {
    pub(crate) const ALL: [ValueRule; 13] = [
        ValueRule::AwsAccessKey,
        ValueRule::SkKey,
        ValueRule::GithubToken,
        ValueRule::GithubPat,
        ValueRule::Jwt,
        ValueRule::AuthorizationHeader,
        ValueRule::Bearer,
        ValueRule::SlackToken,
        ValueRule::StripeKey,
        ValueRule::UrlPassword,
        ValueRule::DotenvPath,
        ValueRule::SshKeyPath,
        ValueRule::GoogleApiKey,
    ];

    /// The rule's name in `meta.redaction` and `--help`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ValueRule::AwsAccessKey => "aws-access-key",
            ValueRule::SkKey => "sk-key",
            ValueRule::GithubToken => "github-token",
            ValueRule::GithubPat => "github-pat",
            ValueRule::Jwt => "jwt",
            ValueRule::AuthorizationHeader => "authorization-header",
            ValueRule::Bearer => "bearer",
            ValueRule::SlackToken => "slack-token",
            ValueRule::StripeKey => "stripe-key",
            ValueRule::UrlPassword => "url-password",
            ValueRule::DotenvPath => "dotenv-path",
            ValueRule::SshKeyPath => "ssh-key-path",
            ValueRule::GoogleApiKey => "google-api-key",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<ValueRule> {
        ValueRule::ALL.into_iter().find(|r| r.name() == name)
    }

    /// The regex (Rust syntax) for the rules that are regexes.
    fn regex(self) -> Option<String> {
        let s = JS_SPACE;
        Some(match self {
            ValueRule::AwsAccessKey => format!("{B}AKIA[0-9A-Z]{{16}}{B}"),
            ValueRule::SkKey => format!("{B}sk-[A-Za-z0-9_-]{{20,}}{B}"),
            ValueRule::GithubToken => format!("{B}gh[pousr]_[A-Za-z0-9]{{36,}}{B}"),
            ValueRule::GithubPat => format!("{B}github_pat_[A-Za-z0-9_]{{20,}}"),
            ValueRule::Jwt => {
                format!("{B}eyJ[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+{B}")
            }
            ValueRule::AuthorizationHeader => {
                format!("[Aa]uthorization[{s}]*:[{s}]*[^\\n\\r\\x{{2028}}\\x{{2029}}]+")
            }
            ValueRule::Bearer => format!("[Bb]earer[{s}]+[A-Za-z0-9._\\-+/=]+"),
            ValueRule::SlackToken => format!("{B}(?:xoxb|xoxa|xoxp|xoxr|xoxs)-[A-Za-z0-9-]{{10,}}"),
            ValueRule::StripeKey => format!("{B}(?:rk_live|sk_live)_[A-Za-z0-9]{{8,}}{B}"),
            // mcp-tape: `(?<=://U:)P(?=@)`; without look-around we match the whole
            // `://U:P@` and replace only the password group.
            ValueRule::UrlPassword => format!("://[^/:@{s}]{{1,128}}:([^/@{s}]+)@"),
            ValueRule::GoogleApiKey => format!("{B}AIza[0-9A-Za-z_-]{{35}}{B}"),
            ValueRule::DotenvPath | ValueRule::SshKeyPath => return None,
        })
    }

    /// mcp-tape's spelling of this rule in a rule file (0.4 and 0.7 variants). A rule
    /// file copied from mcp-tape loads, and these map to the linear built-ins.
    pub(crate) fn mcp_tape_spellings(self) -> &'static [&'static str] {
        match self {
            ValueRule::AwsAccessKey => &[r"\bAKIA[0-9A-Z]{16}\b"],
            ValueRule::SkKey => &[r"\bsk-[A-Za-z0-9_-]{20,}\b"],
            ValueRule::GithubToken => &[r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"],
            ValueRule::GithubPat => &[r"\bgithub_pat_[A-Za-z0-9_]{20,}"],
            ValueRule::Jwt => &[r"\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\b"],
            ValueRule::AuthorizationHeader => &[r"[Aa]uthorization\s*:\s*.+"],
            ValueRule::Bearer => &[r"[Bb]earer\s+[A-Za-z0-9._\-+/=]+"],
            ValueRule::SlackToken => &[r"\b(?:xoxb|xoxa|xoxp|xoxr|xoxs)-[A-Za-z0-9-]{10,}"],
            ValueRule::StripeKey => &[r"\b(?:rk_live|sk_live)_[A-Za-z0-9]{8,}\b"],
            ValueRule::UrlPassword => &[r"(?<=://[^/\s:@]{1,128}:)[^/\s@]+(?=@)"],
            ValueRule::DotenvPath => &[
                r#"(?<![^\s"])[^\s"]*\.env(?:\.[A-Za-z0-9._\-]+)?\b"#,
                r#"[^\s"]{0,256}\.env(?:\.[A-Za-z0-9._\-]+)?\b"#,
            ],
            ValueRule::SshKeyPath => &[
                r#"(?<![^\s"])[^\s"]*\bid_(?:rsa|ed25519|ecdsa|dsa)\b[^\s"]*"#,
                r#"[^\s"]{0,256}\bid_(?:rsa|ed25519|ecdsa|dsa)\b[^\s"]{0,256}"#,
            ],
            ValueRule::GoogleApiKey => &[r"\bAIza[0-9A-Za-z_-]{35}\b"],
        }
    }

    /// The literal every match of this rule contains (the prefilter is built from these).
    fn literal_core(self) -> &'static str {
        match self {
            ValueRule::AwsAccessKey => "AKIA",
            ValueRule::SkKey => "sk-",
            ValueRule::GithubToken => "gh[pousr]_",
            ValueRule::GithubPat => "github_pat_",
            ValueRule::Jwt => "eyJ",
            ValueRule::AuthorizationHeader => "uthorization",
            ValueRule::Bearer => "earer",
            ValueRule::SlackToken => "xox[abprs]-",
            ValueRule::StripeKey => "_live_",
            ValueRule::UrlPassword => "://",
            ValueRule::DotenvPath => r"\.env",
            ValueRule::SshKeyPath => "id_(?:rsa|ed25519|ecdsa|dsa)",
            ValueRule::GoogleApiKey => "AIza",
        }
    }
}

/// How one rule finds what to replace.
#[derive(Debug, Clone)]
enum Finder {
    /// Replace every match.
    Regex(Regex),
    /// Replace capture group 1 of every match.
    Group(Regex),
    /// mcp-tape's pattern 10, word-based.
    Dotenv,
    /// mcp-tape's pattern 11, word-based.
    SshKey,
}

/// A compiled, ordered list of value rules: the enabled built-ins, then the user's.
#[derive(Debug, Clone, Default)]
pub(crate) struct ValueRules {
    builtins: Vec<Finder>,
    /// Matches wherever any enabled built-in could match (a superset); `None` when no
    /// built-in is enabled.
    prefilter: Option<Regex>,
    user: Vec<Regex>,
}

impl ValueRules {
    /// Compiles the enabled built-ins (in [`ValueRule::ALL`] order) and user regexes
    /// (already validated).
    pub(crate) fn new(enabled: &[ValueRule], user: Vec<Regex>) -> ValueRules {
        let mut builtins = Vec::new();
        let mut cores = Vec::new();
        for rule in ValueRule::ALL {
            if !enabled.contains(&rule) {
                continue;
            }
            cores.push(rule.literal_core());
            builtins.push(match rule {
                ValueRule::DotenvPath => Finder::Dotenv,
                ValueRule::SshKeyPath => Finder::SshKey,
                ValueRule::UrlPassword => Finder::Group(builtin_regex(rule)),
                _ => Finder::Regex(builtin_regex(rule)),
            });
        }
        let prefilter = (!cores.is_empty()).then(|| {
            // Every literal is a constant of this file; a failure is a bug caught by
            // the unit tests, not something input can cause.
            Regex::new(&cores.join("|")).expect("built-in prefilter compiles")
        });
        ValueRules {
            builtins,
            prefilter,
            user,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.builtins.is_empty() && self.user.is_empty()
    }

    /// Whether `hay` might hold a built-in match. Sound on raw JSON text too: a match
    /// inside an escape-free string value is a substring of the raw text.
    pub(crate) fn builtin_candidate(&self, hay: &str) -> bool {
        self.prefilter.as_ref().is_some_and(|p| p.is_match(hay))
    }

    /// Applies every rule, round after round until stable. `gate` says whether the
    /// built-ins need to run at all (the caller's prefilter verdict for the text).
    /// `None` when nothing changed.
    pub(crate) fn apply(&self, text: &str, gate: bool) -> Option<String> {
        if self.is_empty() || is_base64_blob(text) {
            return None;
        }
        let run_builtins = gate && self.builtin_candidate(text);
        if !run_builtins && self.user.is_empty() {
            return None;
        }
        let mut current: Cow<'_, str> = Cow::Borrowed(text);
        for _ in 0..MAX_ROUNDS {
            let mut changed = false;
            if run_builtins {
                for finder in &self.builtins {
                    if let Some(next) = finder.apply(&current) {
                        current = Cow::Owned(next);
                        changed = true;
                    }
                }
            }
            for re in &self.user {
                if let Some(next) = replace_regex(re, &current, false) {
                    current = Cow::Owned(next);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        match current {
            Cow::Owned(s) if s != text => Some(s),
            _ => None,
        }
    }
}

fn builtin_regex(rule: ValueRule) -> Regex {
    let source = rule.regex().unwrap_or_default();
    // Constants of this file; covered by `every_builtin_compiles`.
    Regex::new(&source).expect("built-in regex compiles")
}

impl Finder {
    fn apply(&self, text: &str) -> Option<String> {
        match self {
            Finder::Regex(re) => replace_regex(re, text, false),
            Finder::Group(re) => replace_regex(re, text, true),
            Finder::Dotenv => replace_words(text, b".env", dotenv_match_end),
            Finder::SshKey => replace_words(text, b"id_", ssh_key_word),
        }
    }
}

/// True for strings of at least [`BASE64_SKIP_MIN`] bytes made only of base64
/// characters (and line breaks).
pub(crate) fn is_base64_blob(text: &str) -> bool {
    let base64 = |b: u8| {
        let letter = (b | 0x20).wrapping_sub(b'a') < 26;
        letter | b.is_ascii_digit() | matches!(b, b'+' | b'/' | b'=' | b'\r' | b'\n')
    };
    // Chunks checked without early exit vectorise; the chunk loop still stops at the
    // first chunk that fails, so mixed text is rejected quickly.
    text.len() >= BASE64_SKIP_MIN
        && text
            .as_bytes()
            .chunks(4096)
            .all(|chunk| chunk.iter().fold(true, |ok, &b| ok & base64(b)))
}

/// Builds the output of a rule: pieces of the input with marked ranges replaced.
/// Keeps the marker atomic: ranges are widened over any marker they touch, ranges
/// wholly inside one marker are dropped, touching ranges merge.
struct Splicer<'t> {
    text: &'t str,
    markers: Vec<(usize, usize)>,
    out: String,
    /// Input consumed up to here.
    done: usize,
    /// The output currently ends with a marker standing for input up to `done`.
    open: bool,
    /// First marker that may still overlap a coming range.
    cursor: usize,
    changed: bool,
}

impl<'t> Splicer<'t> {
    fn new(text: &'t str) -> Splicer<'t> {
        let markers = memmem::find_iter(text.as_bytes(), MARKER.as_bytes())
            .map(|at| (at, at + MARKER.len()))
            .collect();
        Splicer {
            text,
            markers,
            out: String::new(),
            done: 0,
            open: false,
            cursor: 0,
            changed: false,
        }
    }

    /// Marks `start..end` for replacement; returns where the caller should resume
    /// (never before `end`). Ranges must come in increasing order, so one cursor
    /// walks the marker list once per rule: linear overall.
    fn mark(&mut self, start: usize, end: usize) -> usize {
        let (mut start, mut end) = (start.max(self.done), end);
        if start >= end {
            return end.max(self.done);
        }
        while self
            .markers
            .get(self.cursor)
            .is_some_and(|&(_, me)| me < start)
        {
            self.cursor += 1;
        }
        if let Some(&(ms, me)) = self.markers.get(self.cursor) {
            if ms <= start && end <= me {
                return end; // inside an existing marker: nothing to do
            }
        }
        // Widen over every marker the range overlaps or touches.
        let mut i = self.cursor;
        while let Some(&(ms, me)) = self.markers.get(i) {
            if ms > end {
                break;
            }
            start = start.min(ms);
            end = end.max(me);
            i += 1;
        }
        let start = start.max(self.done);
        if start > self.done {
            self.out.push_str(&self.text[self.done..start]);
            self.open = false;
        }
        if !self.open {
            self.out.push_str(MARKER);
            self.open = true;
        }
        self.done = end;
        self.changed = true;
        end
    }

    fn finish(mut self) -> Option<String> {
        if !self.changed {
            return None;
        }
        self.out.push_str(&self.text[self.done..]);
        (self.out != self.text).then_some(self.out)
    }
}

/// Replaces every non-empty match of `re` (or of its group 1 when `group`), leftmost
/// first, without overlaps.
fn replace_regex(re: &Regex, text: &str, group: bool) -> Option<String> {
    // Most strings hold no match: answer that with one scan and no allocation.
    let first = re.find(text)?;
    let mut splice = Splicer::new(text);
    let mut at = first.start();
    while at <= text.len() {
        let (whole, target) = if group {
            let Some(caps) = re.captures_at(text, at) else {
                break;
            };
            let whole = caps.get(0).map(|m| m.range()).unwrap_or(at..at);
            (
                whole.clone(),
                caps.get(1).map(|m| m.range()).unwrap_or(whole),
            )
        } else {
            let Some(m) = re.find_at(text, at) else {
                break;
            };
            (m.range(), m.range())
        };
        if whole.is_empty() {
            at = next_char(text, whole.end);
            continue;
        }
        let resume = splice.mark(target.start, target.end);
        at = resume.max(whole.end);
    }
    splice.finish()
}

fn next_char(text: &str, at: usize) -> usize {
    text[at..]
        .chars()
        .next()
        .map_or(text.len() + 1, |c| at + c.len_utf8())
}

/// ASCII word character (ECMAScript `\w`).
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// ECMAScript `\b` at byte offset `at` of `bytes`.
fn boundary(bytes: &[u8], at: usize) -> bool {
    let before = at > 0 && is_word(bytes[at - 1]);
    let after = bytes.get(at).is_some_and(|&b| is_word(b));
    before != after
}

/// The words of `text`: maximal runs of characters that are neither ECMAScript white
/// space nor `"`, as byte ranges.
fn words(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut start: Option<usize> = None;
    let mut chars = text.char_indices();
    std::iter::from_fn(move || {
        for (at, c) in chars.by_ref() {
            let splits = c == '"' || is_js_space(c);
            match (splits, start) {
                (true, Some(s)) => {
                    start = None;
                    return Some((s, at));
                }
                (false, None) => start = Some(at),
                _ => {}
            }
        }
        start.take().map(|s| (s, text.len()))
    })
}

fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// Runs a word rule: for every word containing `needle`, `rule` says how much of the
/// word (from its start) to replace.
fn replace_words(
    text: &str,
    needle: &[u8],
    rule: fn(&[u8], usize, usize) -> Option<usize>,
) -> Option<String> {
    memmem::find(text.as_bytes(), needle)?;
    let bytes = text.as_bytes();
    let mut splice = Splicer::new(text);
    for (start, end) in words(text) {
        if let Some(upto) = rule(bytes, start, end) {
            splice.mark(start, upto);
        }
    }
    splice.finish()
}

/// mcp-tape pattern 10: in the word `start..end`, the LAST position where
/// `\.env(?:\.[A-Za-z0-9._\-]+)?\b` matches, taking the longest such match; the word
/// is replaced from its start to the end of that match. Linear: occurrences are tried
/// from the right, a failing one costs O(1) (it fails only when a word character
/// follows `.env`) and the first success scans its suffix once.
fn dotenv_match_end(bytes: &[u8], start: usize, end: usize) -> Option<usize> {
    let suffix_char = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
    for at in memmem::rfind_iter(&bytes[start..end], b".env") {
        let after = start + at + 4;
        if bytes.get(after) == Some(&b'.') {
            let mut run = after + 1;
            while run < end && suffix_char(bytes[run]) {
                run += 1;
            }
            let mut e = run;
            while e >= after + 2 {
                if boundary(bytes, e) {
                    return Some(e);
                }
                e -= 1;
            }
        }
        if boundary(bytes, after) {
            return Some(after);
        }
    }
    None
}

/// mcp-tape pattern 11: the whole word, when it contains
/// `\bid_(?:rsa|ed25519|ecdsa|dsa)\b`.
fn ssh_key_word(bytes: &[u8], start: usize, end: usize) -> Option<usize> {
    const KINDS: [&[u8]; 4] = [b"rsa", b"ed25519", b"ecdsa", b"dsa"];
    for at in memmem::find_iter(&bytes[start..end], b"id_") {
        let at = start + at;
        if !boundary(bytes, at) {
            continue;
        }
        let rest = &bytes[at + 3..];
        let hit = KINDS
            .iter()
            .any(|k| rest.starts_with(k) && boundary(bytes, at + 3 + k.len()));
        if hit {
            return Some(end);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> ValueRules {
        ValueRules::new(&ValueRule::ALL, Vec::new())
    }

    fn red(text: &str) -> String {
        rules().apply(text, true).unwrap_or_else(|| text.to_owned())
    }

    #[test]
    fn every_builtin_compiles() {
        for rule in ValueRule::ALL {
            if let Some(source) = rule.regex() {
                assert!(Regex::new(&source).is_ok(), "{}: {source}", rule.name());
            }
        }
        assert!(rules().prefilter.is_some());
    }

    #[test]
    fn regen_spec_vectors() {
        // The test vectors of the regen mcp-tape spec (research/mcp-tape.md §6.13).
        assert_eq!(
            red("try AKIAIOSFODNN7EXAMPLE today"),
            "try [REDACTED] today"
        );
        assert_eq!(red("Authorization: Bearer abc.def"), "[REDACTED]");
        assert_eq!(
            red("postgres://admin:hunter2@db:5432/x"),
            "postgres://admin:[REDACTED]@db:5432/x"
        );
        assert_eq!(red("load /srv/app/.env.local now"), "load [REDACTED] now");
        assert_eq!(red("key is ~/.ssh/id_ed25519.pub"), "key is [REDACTED]");
        assert_eq!(red("éAKIAIOSFODNN7EXAMPLE"), "é[REDACTED]");
    }

    #[test]
    fn dotenv_word_rule_quirks() {
        assert_eq!(red("a/.env.x+b/.env"), "[REDACTED]");
        assert_eq!(red("my.envy"), "my.envy");
        assert_eq!(red("cfg/.env."), "[REDACTED].");
        assert_eq!(red(".env.env-id_"), "[REDACTED]-id_");
        assert_eq!(red("say \"x/.env\" now"), "say \"[REDACTED]\" now");
    }

    #[test]
    fn marker_is_atomic() {
        let user = vec![Regex::new("RED").unwrap_or_else(|e| panic!("{e}"))];
        let r = ValueRules::new(&[], user);
        assert_eq!(
            r.apply("[REDACTED] RED", true).as_deref(),
            Some("[REDACTED] [REDACTED]")
        );
        assert_eq!(r.apply("[REDACTED]", true), None);
        let every = ValueRules::new(&[], vec![Regex::new(".").unwrap_or_else(|e| panic!("{e}"))]);
        assert_eq!(every.apply("abc", true).as_deref(), Some("[REDACTED]"));
        let edge = ValueRules::new(
            &[],
            vec![Regex::new(r"D\] x").unwrap_or_else(|e| panic!("{e}"))],
        );
        assert_eq!(
            edge.apply("[REDACTED] x", true).as_deref(),
            Some("[REDACTED]")
        );
    }

    #[test]
    fn authorization_swallows_inner_markers() {
        assert_eq!(
            red("Authorization: AKIAIOSFODNN7EXAMPLE more"),
            "[REDACTED]"
        );
        assert_eq!(red("x\nAuthorization: t\ny"), "x\n[REDACTED]\ny");
    }

    #[test]
    fn base64_blobs_are_skipped() {
        let blob = "QUtJQU".repeat(BASE64_SKIP_MIN / 6 + 1);
        assert!(is_base64_blob(&blob));
        let with_key = format!("{blob} AKIAIOSFODNN7EXAMPLE");
        assert!(!is_base64_blob(&with_key));
        assert!(red(&with_key).ends_with(" [REDACTED]"));
    }
}
