//! Which names label a secret: JSON member names (the `secret-keys` rule), labels in
//! free text (`password: …`, `export AWS_SECRET_ACCESS_KEY=…`), URL query parameters
//! and command-line flags. One classification for all of them, so a secret named
//! `passphrase` is caught whether it arrives as a member, a YAML line or a flag.
//!
//! A name is *strong* when whatever it holds is a secret (`password`), *weak* when it
//! holds a secret only if the value looks random (`key`, `sig`, `session`: a
//! `{"key": "user:42"}` is a lookup key, a `key=Xq3…` next to 30 random characters is
//! not). `reel/1` knows only mcp-tape's key rule; `reel/2` adds the words below.
//!
//! Names are split into words at `_`, `-`, `.`, spaces and camelCase humps
//! (`dbPass` → `db`, `pass`; `APIKey` → `API`, `Key`), compared without case.

use super::builtin::Revision;

/// How sure a name makes reel that its value is a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strength {
    /// Only a value that looks random is a secret.
    Weak,
    /// Every value is a secret.
    Strong,
}

/// mcp-tape's key-rule substrings, as listed in `meta.redaction.keys` and `--help`.
pub(crate) const MCP_TAPE_WORDS: [&str; 10] = [
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "api_key",
    "authorization",
    "bearer",
    "private_key",
    "access_key",
];

/// `reel/2`: substrings that make a name strong wherever they appear.
const STRONG_PARTS: [&str; 2] = ["passphrase", "credential"];

/// `reel/2`: words that make a name strong when they are its last word (`db_pass`,
/// `basicAuth`, `user_session`; not `passThrough`, `authType`, `sessionId`).
const STRONG_LAST: [&str; 8] = [
    "pass", "pwd", "pw", "cookie", "cookies", "session", "auth", "dsn",
];

/// `reel/2`: last words that make a member name weak (`accountKey`). Not `session`
/// before another word: `sessionId`, `Mcp-Session-Id` name the MCP session a trace
/// keys on, which stays readable.
const WEAK_MEMBER_LAST: [&str; 2] = ["key", "keys"];
/// `reel/2`: words that make a text label or query name weak (`sig=`, `X-Amz-Signature=`).
const WEAK_LABEL: [&str; 4] = ["key", "keys", "sig", "signature"];

/// Every word the `reel/2` name rules look for, for `meta.redaction.keys` and `--help`.
pub(crate) const REEL2_WORDS: [&str; 18] = [
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "api_key",
    "authorization",
    "bearer",
    "private_key",
    "access_key",
    "passphrase",
    "credential",
    "connection_string",
    "pass",
    "cookie",
    "session",
    "auth",
    "dsn",
];

/// `reel/3`: the words above, and the session cookies of web stacks (`jsessionid`,
/// `phpsessid`, `sessid`, `sid` — the last weak, and only as a label or query name),
/// `authkey`, and a webhook's URL (`webhook_url`, `--webhook-url`): its path is its
/// credential.
pub(crate) const REEL3_WORDS: [&str; 23] = [
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "api_key",
    "authorization",
    "bearer",
    "private_key",
    "access_key",
    "passphrase",
    "credential",
    "connection_string",
    "pass",
    "cookie",
    "session",
    "auth",
    "dsn",
    "jsessionid",
    "phpsessid",
    "sid",
    "authkey",
    "webhook_url",
];

/// The words of `meta.redaction.keys` for a revision.
pub(crate) fn listed_words(revision: Revision) -> &'static [&'static str] {
    match revision {
        Revision::Reel1 => &MCP_TAPE_WORDS,
        Revision::Reel2 => &REEL2_WORDS,
        Revision::Reel3 => &REEL3_WORDS,
    }
}

/// `reel/3`'s names beyond `reel/2`'s, for a name `reel/2` finds nothing in. `label`
/// says whether it is a text label or query name (where `sid` is weak).
fn reel3(name: &str, label: bool) -> Option<Strength> {
    let mut prev: Option<&str> = None;
    let mut last = None;
    for w in words(name) {
        if is_one_of(w, &["jsessionid", "phpsessid", "sessid", "authkey"])
            || (is_one_of(w, &["url", "uri"]) && prev.is_some_and(|p| is_one_of(p, &["webhook"])))
            || is_one_of(w, &["webhookurl"])
        {
            return Some(Strength::Strong);
        }
        prev = Some(w);
        last = Some(w);
    }
    (label && last.is_some_and(|w| w.eq_ignore_ascii_case("sid"))).then_some(Strength::Weak)
}

/// A JSON member name, an environment variable or a flag name.
pub(crate) fn member(name: &str, revision: Revision) -> Option<Strength> {
    let found = member_reel2(name, revision);
    if found.is_none() && revision >= Revision::Reel3 {
        return reel3(name, false);
    }
    found
}

fn member_reel2(name: &str, revision: Revision) -> Option<Strength> {
    let scan = Scan::of(name.as_bytes());
    if scan.mcp_tape {
        return Some(Strength::Strong);
    }
    if revision == Revision::Reel1 || scan.slash || !scan.reel2 {
        // `reel/1` is mcp-tape's rule. A name with `/` is an extension identifier
        // (`io.modelcontextprotocol/oauth-client-credentials`) or a path, not a label.
        return None;
    }
    let shape = Shape::of(name);
    if shape.strong {
        Some(Strength::Strong)
    } else if shape.last.is_some_and(|w| is_one_of(w, &WEAK_MEMBER_LAST)) {
        Some(Strength::Weak)
    } else {
        None
    }
}

/// One pass over a name, which most names (`jsonrpc`, `arguments`, `limit`) end with:
/// mcp-tape's rule, whether a `reel/2` word may start somewhere, whether it holds `/`.
struct Scan {
    /// mcp-tape's key rule, one list (its exact-key step is a subset of the substring
    /// step once numbers are never redacted): case-insensitive substrings `password`,
    /// `passwd`, `secret`, `token`, `api[_-]?key`, `authorization`, `private[_-]?key`,
    /// `access[_-]?key`; `pwd` between ASCII word boundaries; `bearer` as the whole key.
    mcp_tape: bool,
    reel2: bool,
    slash: bool,
}

impl Scan {
    fn of(b: &[u8]) -> Scan {
        let mut scan = Scan {
            mcp_tape: b.eq_ignore_ascii_case(b"bearer"),
            reel2: false,
            slash: false,
        };
        for i in 0..b.len() {
            if scan.mcp_tape {
                break;
            }
            let rest = &b[i..];
            let at = |w: &str| starts_with_ci(rest, w.as_bytes());
            match b[i].to_ascii_lowercase() {
                b'/' => scan.slash = true,
                b'p' => {
                    scan.mcp_tape = at("password")
                        || at("passwd")
                        || (at("pwd") && word_edge(b, i) && word_edge(b, i + 3))
                        || joined(b, i, "private", "key");
                    scan.reel2 |= at("pass") || at("pw");
                }
                b's' => {
                    scan.mcp_tape = at("secret");
                    scan.reel2 |= at("sess") || at("sig");
                }
                b't' => scan.mcp_tape = at("token"),
                b'a' => {
                    scan.mcp_tape = at("authorization")
                        || joined(b, i, "api", "key")
                        || joined(b, i, "access", "key");
                    scan.reel2 |= at("auth");
                }
                b'c' => scan.reel2 |= at("cred") || at("conn") || at("cook"),
                b'd' => scan.reel2 |= at("dsn"),
                b'k' => scan.reel2 |= at("key"),
                _ => {}
            }
        }
        scan
    }
}

/// A label in free text (`password:`, `key=`) or a URL query parameter name. As a
/// member name, except that `session` alone is weak (`session: started` is a state).
pub(crate) fn label(name: &str, revision: Revision) -> Option<Strength> {
    let found = label_reel2(name, revision);
    if found.is_none() && revision >= Revision::Reel3 {
        return reel3(name, true);
    }
    found
}

fn label_reel2(name: &str, revision: Revision) -> Option<Strength> {
    let scan = Scan::of(name.as_bytes());
    if scan.mcp_tape {
        return Some(Strength::Strong);
    }
    if revision == Revision::Reel1 || scan.slash || !scan.reel2 {
        return None;
    }
    let shape = Shape::of(name);
    let session_last = shape
        .last
        .is_some_and(|w| w.eq_ignore_ascii_case("session"));
    if shape.strong && !session_last {
        Some(Strength::Strong)
    } else if shape.strong || shape.weak_label {
        Some(Strength::Weak)
    } else {
        None
    }
}

/// What the `reel/2` rules need to know of a name, read in one pass over its words.
struct Shape<'n> {
    last: Option<&'n str>,
    /// Contains `passphrase` or `credential`, ends in a strong word, or names a
    /// connection string.
    strong: bool,
    /// Has a word of [`WEAK_LABEL`].
    weak_label: bool,
}

impl<'n> Shape<'n> {
    fn of(name: &'n str) -> Shape<'n> {
        let b = name.as_bytes();
        let mut strong = (0..b.len()).any(|i| {
            matches!(b[i] | 0x20, b'p' | b'c')
                && STRONG_PARTS
                    .iter()
                    .any(|p| starts_with_ci(&b[i..], p.as_bytes()))
        });
        let (mut last, mut prev, mut weak_label) = (None, None, false);
        for w in words(name) {
            weak_label |= is_one_of(w, &WEAK_LABEL);
            // `connectionString`, `connection_string`, `ConnStr`.
            strong |= is_one_of(w, &["connstr", "connectionstring"])
                || (is_one_of(w, &["string", "str"])
                    && prev.is_some_and(|p| is_one_of(p, &["connection", "conn"])));
            prev = Some(w);
            last = Some(w);
        }
        strong |= last.is_some_and(|w| is_one_of(w, &STRONG_LAST));
        Shape {
            last,
            strong,
            weak_label,
        }
    }
}

fn is_one_of(word: &str, list: &[&str]) -> bool {
    list.iter().any(|w| word.eq_ignore_ascii_case(w))
}

/// The words of a name: runs of ASCII letters and digits, split at every other
/// character and at camelCase humps (a lower-case letter or digit followed by an
/// upper-case one; an acronym ends before the capital that starts a lower-case run:
/// `APIKey` → `API`, `Key`).
pub(crate) fn words(name: &str) -> impl Iterator<Item = &str> {
    let b = name.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < b.len() && !b[at].is_ascii_alphanumeric() {
            at += 1;
        }
        if at >= b.len() {
            return None;
        }
        let start = at;
        at += 1;
        while at < b.len() && b[at].is_ascii_alphanumeric() {
            let (prev, cur) = (b[at - 1], b[at]);
            let hump =
                (prev.is_ascii_lowercase() || prev.is_ascii_digit()) && cur.is_ascii_uppercase();
            let acronym_end = prev.is_ascii_uppercase()
                && cur.is_ascii_uppercase()
                && b.get(at + 1).is_some_and(u8::is_ascii_lowercase);
            if hump || acronym_end {
                break;
            }
            at += 1;
        }
        Some(&name[start..at])
    })
}

/// mcp-tape's key rule alone (what `reel/1` applies).
#[cfg(test)]
fn mcp_tape_secret(key: &str) -> bool {
    Scan::of(key.as_bytes()).mcp_tape
}

/// `first`, then optionally `_` or `-`, then `second`, case-insensitive, at `i`.
fn joined(b: &[u8], i: usize, first: &str, second: &str) -> bool {
    let rest = &b[i..];
    if !starts_with_ci(rest, first.as_bytes()) {
        return false;
    }
    // If a separator follows, `second` cannot start on it, so skipping it is exact.
    let rest = match &rest[first.len()..] {
        [b'_' | b'-', tail @ ..] => tail,
        other => other,
    };
    starts_with_ci(rest, second.as_bytes())
}

fn starts_with_ci(hay: &[u8], word: &[u8]) -> bool {
    hay.len() >= word.len() && hay[..word.len()].eq_ignore_ascii_case(word)
}

/// ECMAScript `\b` next to a `pwd` that starts or ends at `at`.
fn word_edge(b: &[u8], at: usize) -> bool {
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let before = at > 0 && word(b[at - 1]);
    let after = b.get(at).is_some_and(|&c| word(c));
    before != after
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_keys_follow_mcp_tape() {
        let secret = [
            "password",
            "db_password",
            "PASSWORD",
            "passwd",
            "pwd",
            "db-pwd",
            "Pwd",
            "secret",
            "clientSecret",
            "token",
            "access_token",
            "progressToken",
            "max_tokens",
            "apiKey",
            "api_key",
            "api-key",
            "X-Api-Key",
            "authorization",
            "Authorization",
            "bearer",
            "BEARER",
            "privateKey",
            "private_key",
            "private-key",
            "accessKey",
            "access_key",
            "aws-access-key-id",
        ];
        for key in secret {
            assert!(mcp_tape_secret(key), "{key} should be secret");
        }
        let plain = [
            "db_pwd",
            "pwds",
            "cwd",
            "name",
            "bearerToken2x",
            "bearers",
            "apikeys2",
            "api__key",
            "key",
            "pass",
            "auth",
            "id",
            "",
            "tok",
            "privatekeyring",
        ];
        // `bearerToken2x` contains `token`; `apikeys2` contains `apikey`;
        // `privatekeyring` contains `privatekey`: the substring rule takes them.
        for key in plain {
            let expect = matches!(key, "bearerToken2x" | "apikeys2" | "privatekeyring");
            assert_eq!(mcp_tape_secret(key), expect, "{key}");
            assert_eq!(
                member(key, Revision::Reel1).is_some(),
                expect,
                "reel/1 is mcp-tape's rule: {key}"
            );
        }
    }

    #[test]
    fn words_split_at_separators_and_humps() {
        fn split(n: &str) -> Vec<&str> {
            words(n).collect()
        }
        assert_eq!(split("dbPass"), ["db", "Pass"]);
        assert_eq!(split("APIKey"), ["API", "Key"]);
        assert_eq!(
            split("AWS_SECRET_ACCESS_KEY"),
            ["AWS", "SECRET", "ACCESS", "KEY"]
        );
        assert_eq!(split("x-amz-signature"), ["x", "amz", "signature"]);
        assert_eq!(split("--pass.phrase"), ["pass", "phrase"]);
        assert_eq!(split("s3Key2"), ["s3", "Key2"]);
        assert_eq!(split(""), Vec::<&str>::new());
    }

    #[test]
    fn reel2_names() {
        let r = Revision::Reel2;
        for strong in [
            "passphrase",
            "keyPassphrase",
            "pass",
            "db_pass",
            "smtpPass",
            "PASS",
            "db_pwd",
            "cookie",
            "Set-Cookie",
            "session",
            "user_session",
            "basic_auth",
            "auth",
            "credentials",
            "aws_credential_id",
            "connectionString",
            "connection-string",
            "ConnStr",
            "SENTRY_DSN",
        ] {
            assert_eq!(member(strong, r), Some(Strength::Strong), "{strong}");
        }
        for weak in ["key", "accountKey", "AccountKey", "signing_keys"] {
            assert_eq!(member(weak, r), Some(Strength::Weak), "{weak}");
        }
        for plain in [
            "passThrough",
            "passage",
            "compass",
            "bypass",
            "authType",
            "author",
            "oauth",
            "sessions",
            "sessionId",
            "mcp-session-id",
            "session_key_id",
            "keyName",
            "keyboard",
            "sig",
            "signature",
            "io.modelcontextprotocol/oauth-client-credentials",
            "name",
        ] {
            assert_eq!(member(plain, r), None, "{plain}");
        }
        assert_eq!(label("sig", r), Some(Strength::Weak));
        assert_eq!(label("X-Amz-Signature", r), Some(Strength::Weak));
        assert_eq!(label("key_id", r), Some(Strength::Weak));
        assert_eq!(label("session", r), Some(Strength::Weak));
        assert_eq!(label("sessionId", r), None);
        assert_eq!(label("Mcp-Session-Id", r), None);
        assert_eq!(label("sig", Revision::Reel1), None);
        assert_eq!(label("pass", Revision::Reel1), None);
    }
}
