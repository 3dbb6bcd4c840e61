//! What the walker must know of JSON-RPC and MCP to keep replay working: which member
//! names hold secrets, and which positions are never touched because replay, pairing
//! or matching depends on them.
//!
//! Why this lives apart from the walker: these are the project's replay exemptions,
//! a list a reviewer must be able to read in one screen and compare with DESIGN.md.
//! Positions are recognised structurally (a *role* per container: envelope, params,
//! result, …) so the decision for a member never depends on a sibling that may come
//! later in the text (`method` may follow `params`).

/// Member names never touched wherever they appear: a progress token is echoed in
/// notifications, a request state and a cursor are handed back to the server verbatim,
/// and JSON Schemas describe data (a property named `password` is not a password).
pub(crate) const VERBATIM_ANYWHERE: [&str; 7] = [
    "progressToken",
    "requestState",
    "cursor",
    "nextCursor",
    "inputSchema",
    "outputSchema",
    "requestedSchema",
];

/// What a container is, as far as the exemptions care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// A root array (a JSON-RPC batch).
    Batch,
    /// A JSON-RPC message: the root object or an object in a batch.
    Envelope,
    /// `params` of an envelope or of an embedded request.
    Params,
    /// `result` of an envelope.
    Result,
    /// `result.tools` or `result.prompts`: a listing of named things.
    Listing,
    /// One element of a listing.
    Listed,
    /// `result.inputRequests` (2026-07-28): requests embedded in a result.
    InputRequests,
    /// One embedded request: has its own `method` and `params`.
    EmbeddedRequest,
    /// Anything else.
    Other,
}

/// The role of the root value.
pub(crate) fn root_role(is_object: bool) -> Role {
    if is_object {
        Role::Envelope
    } else {
        Role::Batch
    }
}

/// The role of a container found under `key` (or at an index when `None`) in a
/// container of role `parent`.
pub(crate) fn child_role(parent: Role, key: Option<&str>, is_object: bool) -> Role {
    match (parent, key, is_object) {
        (Role::Batch, None, true) => Role::Envelope,
        (Role::Envelope | Role::EmbeddedRequest, Some("params"), true) => Role::Params,
        (Role::Envelope, Some("result"), true) => Role::Result,
        (Role::Result, Some("tools" | "prompts"), false) => Role::Listing,
        (Role::Listing, None, true) => Role::Listed,
        (Role::Result, Some("inputRequests"), true) => Role::InputRequests,
        (Role::InputRequests, Some(_), true) => Role::EmbeddedRequest,
        _ => Role::Other,
    }
}

/// Whether the member `key` of a container of role `parent` is left exactly as
/// received, with everything under it.
pub(crate) fn is_verbatim(parent: Role, key: &str) -> bool {
    VERBATIM_ANYWHERE.contains(&key)
        || match parent {
            Role::Envelope => matches!(key, "jsonrpc" | "id" | "method"),
            Role::EmbeddedRequest => key == "method",
            // Tool and prompt names (tools/call, prompts/get) and the id a
            // notifications/cancelled refers to.
            Role::Params => matches!(key, "name" | "requestId"),
            Role::Listed => key == "name",
            _ => false,
        }
}

/// mcp-tape's key rules, one list (its exact-key step is a subset of the substring
/// step once numbers are never redacted): case-insensitive substrings `password`,
/// `passwd`, `secret`, `token`, `api[_-]?key`, `authorization`, `private[_-]?key`,
/// `access[_-]?key`; `pwd` between ASCII word boundaries; `bearer` as the whole key.
pub(crate) fn is_secret_key(key: &str) -> bool {
    let b = key.as_bytes();
    if b.eq_ignore_ascii_case(b"bearer") {
        return true;
    }
    (0..b.len()).any(|i| secret_at(b, i))
}

/// The key-rule substrings, as listed in `meta.redaction` and `--help`.
pub(crate) const SECRET_KEY_WORDS: [&str; 10] = [
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

fn secret_at(b: &[u8], i: usize) -> bool {
    let at = |word: &str| starts_with_ci(&b[i..], word.as_bytes());
    match b[i].to_ascii_lowercase() {
        b'p' => {
            at("password")
                || at("passwd")
                || (at("pwd") && word_edge(b, i) && word_edge(b, i + 3))
                || joined(b, i, "private", "key")
        }
        b's' => at("secret"),
        b't' => at("token"),
        b'a' => at("authorization") || joined(b, i, "api", "key") || joined(b, i, "access", "key"),
        _ => false,
    }
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
            assert!(is_secret_key(key), "{key} should be secret");
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
            assert_eq!(is_secret_key(key), expect, "{key}");
        }
    }

    #[test]
    fn roles_follow_the_envelope() {
        let env = root_role(true);
        assert_eq!(env, Role::Envelope);
        assert_eq!(child_role(root_role(false), None, true), Role::Envelope);
        assert_eq!(child_role(env, Some("params"), true), Role::Params);
        let result = child_role(env, Some("result"), true);
        let listing = child_role(result, Some("tools"), false);
        assert_eq!(child_role(listing, None, true), Role::Listed);
        assert_eq!(child_role(Role::Params, Some("params"), true), Role::Other);
        assert!(is_verbatim(Role::Listed, "name"));
        assert!(!is_verbatim(Role::Other, "name"));
        assert!(is_verbatim(Role::Other, "progressToken"));
        assert!(is_verbatim(Role::Envelope, "id"));
        assert!(!is_verbatim(Role::Params, "id"));
    }
}
