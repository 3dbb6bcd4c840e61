//! The rules as people read them: `--help` lists the built-in rules and the replay
//! exemptions from here, so the list printed and the list applied cannot drift apart
//! (a unit test checks every built-in has an entry, in order).

use super::{MARKER, RULES_VERSION};

/// One built-in rule, for `--help`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleDoc {
    /// The rule's name (as in `meta.redaction.builtin`).
    pub name: &'static str,
    /// What it redacts.
    pub what: &'static str,
    /// An example, `input → output`.
    pub example: &'static str,
}

/// The built-in rules, in the order they apply.
pub const RULE_DOCS: &[RuleDoc] = &[
    RuleDoc {
        name: "secret-keys",
        what: "every string under a member whose key contains password, passwd, secret, token, api_key/apiKey, authorization, private_key or access_key (any case), or is pwd or bearer; numbers, booleans, null and keys stay. In a command: the value of such a flag or VAR=, or of a credential flag (--auth, --key, --pat, --pass, --credentials, --cookie, --*-key)",
        example: r#"{"db_password":"x"} → {"db_password":"[REDACTED]"}; --api-key K → --api-key [REDACTED]"#,
    },
    RuleDoc {
        name: "aws-access-key",
        what: "AKIA + 16 upper-case letters or digits",
        example: "try AKIAIOSFODNN7EXAMPLE today → try [REDACTED] today",
    },
    RuleDoc {
        name: "sk-key",
        what: "sk- + 20 or more of [A-Za-z0-9_-] (OpenAI, Anthropic, …)",
        example: "sk-ant-api03-abcdefghijklmnopqrst → [REDACTED]",
    },
    RuleDoc {
        name: "github-token",
        what: "ghp_ gho_ ghu_ ghs_ ghr_ + 36 or more letters or digits",
        example: "ghp_ + 36 characters → [REDACTED]",
    },
    RuleDoc {
        name: "github-pat",
        what: "github_pat_ + 20 or more of [A-Za-z0-9_]",
        example: "github_pat_11ABCDEFG0123456789_xyz → [REDACTED]",
    },
    RuleDoc {
        name: "jwt",
        what: "three dot-separated base64url parts, the first starting eyJ",
        example: "eyJhbGciOi.eyJzdWIi.sig → [REDACTED]",
    },
    RuleDoc {
        name: "authorization-header",
        what: "Authorization: and the rest of its line",
        example: "Authorization: Bearer abc.def → [REDACTED]",
    },
    RuleDoc {
        name: "bearer",
        what: "Bearer and the token after it",
        example: "use Bearer abc123 → use [REDACTED]",
    },
    RuleDoc {
        name: "slack-token",
        what: "xoxb- xoxa- xoxp- xoxr- xoxs- + 10 or more of [A-Za-z0-9-]",
        example: "xoxb-1234567890-abc → [REDACTED]",
    },
    RuleDoc {
        name: "stripe-key",
        what: "sk_live_ or rk_live_ + 8 or more letters or digits",
        example: "sk_live_4eC39HqLyjWDarjtT1zdp7dc → [REDACTED]",
    },
    RuleDoc {
        name: "url-password",
        what: "the password in scheme://user:password@host (only the password)",
        example: "postgres://admin:hunter2@db → postgres://admin:[REDACTED]@db",
    },
    RuleDoc {
        name: "dotenv-path",
        what: "a word (no white space, no \") naming a .env file, up to the end of .env[.suffix]",
        example: "load /srv/app/.env.local now → load [REDACTED] now",
    },
    RuleDoc {
        name: "ssh-key-path",
        what: "a whole word containing id_rsa, id_ed25519, id_ecdsa or id_dsa",
        example: "key is ~/.ssh/id_ed25519.pub → key is [REDACTED]",
    },
    RuleDoc {
        name: "google-api-key",
        what: "AIza + 35 of [0-9A-Za-z_-]",
        example: "AIza + 35 characters → [REDACTED]",
    },
];

/// The replay exemptions, one line each, for `--help`.
pub const EXEMPTIONS: &[&str] = &[
    "jsonrpc, id and method of every message",
    "params.name (tool and prompt names), params.requestId",
    "name of every entry of result.tools and result.prompts",
    "progressToken, requestState, cursor, nextCursor, anywhere (incl. _meta)",
    "everything under inputSchema, outputSchema, requestedSchema",
    "numbers, booleans, null, and every member name (incl. _meta keys)",
];

/// The text of [`Redactor::rules_help`](super::Redactor::rules_help).
pub(super) fn rules_help() -> String {
    let width = RULE_DOCS.iter().map(|r| r.name.len()).max().unwrap_or(0);
    let mut out = format!("Built-in redaction rules ({RULES_VERSION}); matches become {MARKER}:\n");
    for rule in RULE_DOCS {
        out.push_str(&format!(
            "  {:width$}  {}\n  {:width$}  e.g. {}\n",
            rule.name, rule.what, "", rule.example
        ));
    }
    out.push_str("Never redacted (replay needs them):\n");
    for line in EXEMPTIONS {
        out.push_str(&format!("  {line}\n"));
    }
    out
}
