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

use aho_corasick::{AhoCorasick, Input, MatchKind, Span, packed};
use memchr::memmem;
use regex::Regex;

use super::builtin::{Revision, Shape, ValueRule};
use super::splice::Splicer;
use super::{context, prose};

/// At most this many passes of all value rules over one string. One pass does the work;
/// the next confirms nothing changed. A rule set whose replacements keep exposing new
/// matches (only contrived `\b`-at-the-edge user patterns do) stops here.
pub(crate) const MAX_ROUNDS: usize = 4;

/// Strings at least this long made only of base64 characters skip the value rules
/// (mcp-tape 0.7 does the same): rewriting inside a base64 payload corrupts the media
/// it carries, and key-shaped runs appear in random base64 by chance.
pub const BASE64_SKIP_MIN: usize = 8 * 1024;

/// How one rule finds what to replace.
#[derive(Debug, Clone)]
enum Finder {
    /// Replace every match.
    Regex(Regex),
    /// Replace capture group 1 of every match.
    Group(Regex),
    /// `reel/2` `url-password`: group 1, or group 2 when it looks random.
    Userinfo(Regex),
    /// `url-query-secret`, with the revision's names.
    Query(Revision),
    /// `secret-assignment`, with the revision's names.
    Assignment(Revision),
    /// `basic-credential`.
    Basic,
    /// `credential-file`.
    CredentialFile,
    /// `quoted-secret`.
    Quoted,
    /// mcp-tape's pattern 10, word-based.
    Dotenv,
    /// mcp-tape's pattern 11, word-based.
    SshKey,
}

/// Whether the built-ins with a literal core may match a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gate {
    /// Run the prefilter over the text to find out.
    Scan,
    /// The caller knows (it ran the prefilter over a text this one is part of, or
    /// derived from by replacing matches with the marker).
    Known(bool),
}

/// One enabled built-in: how it finds, and whether the prefilter gates it (a rule
/// with a literal core) or its own cheap trigger does (the context scanners).
#[derive(Debug, Clone)]
struct Builtin {
    finder: Finder,
    trigger: Trigger,
}

/// What decides whether a built-in runs on a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trigger {
    /// The prefilter (a rule with a literal core).
    Prefilter,
    /// A separator a context rule starts at (`context::may_match`).
    Separator,
    /// Nothing: the rule's own first step is its cheap check (`credential-file`,
    /// `quoted-secret`).
    Always,
}

/// A compiled, ordered list of value rules: the enabled built-ins, then the user's.
#[derive(Debug, Clone, Default)]
pub(crate) struct ValueRules {
    builtins: Vec<Builtin>,
    /// Matches wherever any enabled built-in with a literal core could match (a
    /// superset).
    prefilter: Prefilter,
    /// A context scanner is enabled.
    scanners: bool,
    /// A rule that runs on every text is enabled.
    always: bool,
    /// `pem-private-key` is enabled.
    pem: bool,
    user: Vec<Regex>,
}

impl ValueRules {
    /// Compiles the enabled built-ins (in the revision's order, with the revision's
    /// meaning) and user regexes (already validated).
    pub(crate) fn new(revision: Revision, enabled: &[ValueRule], user: Vec<Regex>) -> ValueRules {
        let mut builtins = Vec::new();
        let mut literals: Vec<&str> = Vec::new();
        for &rule in revision.rules() {
            if !enabled.contains(&rule) {
                continue;
            }
            let own = rule.literals(revision);
            literals.extend(own);
            let regex = || builtin_regex(rule, revision);
            let finder = match rule.shape(revision) {
                Shape::Whole => Finder::Regex(regex()),
                Shape::Group => Finder::Group(regex()),
                Shape::Userinfo => Finder::Userinfo(regex()),
                Shape::Query => Finder::Query(revision),
                Shape::Assignment => Finder::Assignment(revision),
                Shape::Basic => Finder::Basic,
                Shape::CredentialFile => Finder::CredentialFile,
                Shape::Quoted => Finder::Quoted,
                Shape::Dotenv => Finder::Dotenv,
                Shape::SshKey => Finder::SshKey,
            };
            builtins.push(Builtin {
                finder,
                trigger: if !own.is_empty() {
                    Trigger::Prefilter
                } else if matches!(rule, ValueRule::CredentialFile | ValueRule::QuotedSecret) {
                    Trigger::Always
                } else {
                    Trigger::Separator
                },
            });
        }
        ValueRules {
            scanners: builtins.iter().any(|b| b.trigger != Trigger::Prefilter),
            always: builtins.iter().any(|b| b.trigger == Trigger::Always),
            pem: enabled.contains(&ValueRule::PemPrivateKey),
            builtins,
            prefilter: Prefilter::new(&literals),
            user,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.builtins.is_empty() && self.user.is_empty()
    }

    /// Whether `pem-private-key` is enabled (for blocks that span lines).
    pub(crate) fn has_pem(&self) -> bool {
        self.pem
    }

    /// Whether some rule runs whatever the prefilter says (a context scanner, a user
    /// pattern): a message cannot be skipped on the prefilter's word alone.
    pub(crate) fn has_ungated(&self) -> bool {
        self.scanners || !self.user.is_empty()
    }

    /// Whether `hay` might hold a match of a built-in with a literal core.
    pub(crate) fn builtin_candidate(&self, hay: &str) -> bool {
        self.prefilter.any(hay)
    }

    /// A cursor over where the prefilter matches in one text, for a caller that
    /// asks about many pieces of it in order (see [`LiteralCursor`]).
    pub(crate) fn literal_cursor(&self) -> LiteralCursor {
        LiteralCursor {
            next: vec![None; self.prefilter.groups.len()],
        }
    }

    /// Whether the prefilter matches inside `start..end` of `hay`, asked in
    /// increasing order of `start` with one `cursor`.
    pub(crate) fn literal_within(
        &self,
        cursor: &mut LiteralCursor,
        hay: &str,
        start: usize,
        end: usize,
    ) -> bool {
        let mut hit = false;
        for (g, next) in self.prefilter.groups.iter().zip(&mut cursor.next) {
            // The first match at or after an earlier `start` is still the first at or
            // after this one unless it lies before it: search again only then.
            if next.is_none_or(|n| n.is_some_and(|at| at < start)) {
                *next = Some(g.find_from(hay, start));
            }
            hit |= next.is_some_and(|n| n.is_some_and(|at| at < end));
        }
        hit
    }

    /// Applies every rule, round after round until stable. `gate` says whether the
    /// built-ins with a literal core need to run at all. `None` when nothing changed.
    pub(crate) fn apply(&self, text: &str, gate: Gate) -> Option<String> {
        if self.is_empty() || is_base64_blob(text) {
            return None;
        }
        let run_gated = match gate {
            Gate::Scan => self.builtin_candidate(text),
            Gate::Known(candidate) => candidate,
        };
        let run_scanners = self.scanners && context::may_match(text);
        if !run_gated && !run_scanners && !self.always && self.user.is_empty() {
            return None;
        }
        let mut current: Cow<'_, str> = Cow::Borrowed(text);
        for _ in 0..MAX_ROUNDS {
            let mut changed = false;
            for rule in &self.builtins {
                let runs = match rule.trigger {
                    Trigger::Prefilter => run_gated,
                    Trigger::Separator => run_scanners,
                    Trigger::Always => true,
                };
                if !runs {
                    continue;
                }
                if let Some(next) = rule.finder.apply(&current) {
                    current = Cow::Owned(next);
                    changed = true;
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

/// The literals of the enabled built-ins, in two groups searched with SIMD (Teddy):
/// the three-byte literals (`sk-`, `eyJ`, `://`, …) and the longer ones. Teddy
/// fingerprints as many bytes of every literal as the shortest one has, so keeping
/// the three-byte ones apart lets the long ones be told by four bytes, and ordinary
/// text rarely looks like a candidate to either group. A candidate is confirmed
/// against its literals directly (no regex engine behind it).
#[derive(Debug, Clone, Default)]
struct Prefilter {
    groups: Vec<LiteralGroup>,
}

/// One group: the packed SIMD searcher, or the automaton where the CPU has no SIMD
/// it can use.
#[derive(Debug, Clone)]
enum LiteralGroup {
    Packed(packed::Searcher),
    Automaton(AhoCorasick),
}

impl LiteralGroup {
    fn new(literals: &[&str]) -> LiteralGroup {
        let packed = packed::Config::new()
            .match_kind(packed::MatchKind::LeftmostFirst)
            .builder()
            .extend(literals)
            .build();
        match packed {
            Some(searcher) => LiteralGroup::Packed(searcher),
            None => LiteralGroup::Automaton(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostFirst)
                    .build(literals)
                    // A few dozen short literals are far inside the automaton's limits.
                    .expect("built-in prefilter builds"),
            ),
        }
    }

    /// Where the first match starting at or after `start` starts.
    fn find_from(&self, hay: &str, start: usize) -> Option<usize> {
        match self {
            LiteralGroup::Packed(s) => s.find_in(hay, Span::from(start..hay.len())),
            LiteralGroup::Automaton(a) => a.find(Input::new(hay).span(start..hay.len())),
        }
        .map(|m| m.start())
    }
}

impl Prefilter {
    fn new(literals: &[&str]) -> Prefilter {
        let (short, long): (Vec<&str>, Vec<&str>) = literals.iter().partition(|l| l.len() < 4);
        let groups = [short, long]
            .iter()
            .filter(|g| !g.is_empty())
            .map(|g| LiteralGroup::new(g))
            .collect();
        Prefilter { groups }
    }

    fn any(&self, hay: &str) -> bool {
        self.groups.iter().any(|g| g.find_from(hay, 0).is_some())
    }
}

/// Where each prefilter group next matches in a text: unknown (`None`), nowhere
/// further (`Some(None)`), or at an offset. Every search starts where no earlier one
/// looked, so a text is scanned once however many pieces are asked about, and a long
/// piece is scanned only up to its first match.
#[derive(Debug)]
pub(crate) struct LiteralCursor {
    next: Vec<Option<Option<usize>>>,
}

fn builtin_regex(rule: ValueRule, revision: Revision) -> Regex {
    let source = rule.regex(revision).unwrap_or_default();
    // Constants of `builtin`; covered by `every_builtin_compiles`.
    Regex::new(&source).expect("built-in regex compiles")
}

impl Finder {
    fn apply(&self, text: &str) -> Option<String> {
        match self {
            Finder::Regex(re) => replace_regex(re, text, false),
            Finder::Group(re) => replace_regex(re, text, true),
            Finder::Userinfo(re) => replace_userinfo(re, text),
            Finder::Query(revision) => context::replace_query_values(text, *revision),
            Finder::Assignment(revision) => context::replace_assignments(text, *revision),
            Finder::Basic => prose::replace_basic(text),
            Finder::CredentialFile => prose::replace_credential_files(text),
            Finder::Quoted => prose::replace_quoted(text),
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
                // The first group that took part (a rule may offer alternatives).
                caps.iter()
                    .skip(1)
                    .flatten()
                    .next()
                    .map_or(whole, |m| m.range()),
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

/// `reel/2` `url-password`: the password (group 1) of every `://user:password@`, and
/// a user name standing alone (group 2, `://TOKEN@`) when it looks random.
fn replace_userinfo(re: &Regex, text: &str) -> Option<String> {
    re.find(text)?;
    let mut splice = Splicer::new(text);
    let mut at = 0;
    while let Some(caps) = re.captures_at(text, at) {
        let Some(whole) = caps.get(0) else { break };
        let target = caps.get(1).or_else(|| {
            caps.get(2)
                .filter(|user| context::looks_random(user.as_str()))
        });
        let mut resume = whole.end();
        if let Some(t) = target {
            resume = resume.max(splice.mark(t.start(), t.end()));
        }
        if resume >= text.len() {
            break;
        }
        at = resume;
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
        ValueRules::new(Revision::CURRENT, &ValueRule::ALL, Vec::new())
    }

    fn red(text: &str) -> String {
        rules()
            .apply(text, Gate::Scan)
            .unwrap_or_else(|| text.to_owned())
    }

    #[test]
    fn every_builtin_compiles() {
        for revision in Revision::ALL {
            for &rule in revision.rules() {
                if let Some(source) = rule.regex(revision) {
                    assert!(Regex::new(&source).is_ok(), "{}: {source}", rule.name());
                }
            }
        }
        assert_eq!(rules().prefilter.groups.len(), 2);
    }

    /// Where the CPU has no SIMD for the packed searcher, the automaton stands in: both
    /// must find the same first match from any start.
    #[test]
    fn the_automaton_finds_what_the_packed_searcher_finds() {
        let literals = ["sk-", "eyJ", "AKIA", "PRIVATE KEY", "glpat-", "earer"];
        // The packed searcher on any CPU with SSSE3 or NEON.
        let packed = LiteralGroup::new(&literals);
        let automaton = LiteralGroup::Automaton(
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostFirst)
                .build(literals)
                .unwrap_or_else(|e| panic!("{e}")),
        );
        let hay = "no secret; then sk-1 and AKIAsk- a Bearer eyJhb, glpat-x PRIVATE KEY";
        let mut found = 0;
        for start in 0..=hay.len() {
            let want = packed.find_from(hay, start);
            assert_eq!(automaton.find_from(hay, start), want, "from {start}");
            found += usize::from(want.is_some());
        }
        assert!(found > 0);
        assert_eq!(packed.find_from(hay, 0), hay.find("sk-"));
        assert_eq!(packed.find_from(hay, hay.len()), None);
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
        let r = ValueRules::new(Revision::CURRENT, &[], user);
        assert_eq!(
            r.apply("[REDACTED] RED", Gate::Scan).as_deref(),
            Some("[REDACTED] [REDACTED]")
        );
        assert_eq!(r.apply("[REDACTED]", Gate::Scan), None);
        let every = ValueRules::new(
            Revision::CURRENT,
            &[],
            vec![Regex::new(".").unwrap_or_else(|e| panic!("{e}"))],
        );
        assert_eq!(
            every.apply("abc", Gate::Scan).as_deref(),
            Some("[REDACTED]")
        );
        let edge = ValueRules::new(
            Revision::CURRENT,
            &[],
            vec![Regex::new(r"D\] x").unwrap_or_else(|e| panic!("{e}"))],
        );
        assert_eq!(
            edge.apply("[REDACTED] x", Gate::Scan).as_deref(),
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
