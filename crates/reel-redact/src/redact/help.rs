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

/// The built-in rules of the current revision, in the order they apply.
pub const RULE_DOCS: &[RuleDoc] = &[
    RuleDoc {
        name: "secret-keys",
        what: "every string under a member whose name says secret: it contains password, passwd, secret, token, api_key/apiKey, authorization, private_key, access_key, passphrase or credential, is pwd or bearer, ends in pass, pwd, pw, cookie, session, auth or dsn, or names a connection string (any case; names with / are extension ids, not labels). Under a weak name (ending in key or keys) only a random-looking string; sessionId and Mcp-Session-Id stay. Numbers, booleans, null and names stay. Also inside JSON held as text: a result's text copy of its structuredContent, a JSON log line, a torn line. In a command: the value of such a flag or VAR=, or of a credential flag (--auth, --key, --pat, --pass, --credentials, --cookie, --*-key)",
        example: r#"{"db_pass":"x","n":2} → {"db_pass":"[REDACTED]","n":2}"#,
    },
    RuleDoc {
        name: "pem-private-key",
        what: "a PEM private key (RFC 7468 PRIVATE KEY and ENCRYPTED PRIVATE KEY, RSA, EC, DSA, OPENSSH, PGP PRIVATE KEY BLOCK), BEGIN line to END line, with line breaks or \\n escapes; on stderr and non-JSON lines also the body lines of a block opened on an earlier line",
        example: r"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIOd2\n-----END EC PRIVATE KEY----- → [REDACTED]",
    },
    RuleDoc {
        name: "aws-access-key",
        what: "an AWS access key id: AKIA (long-term), ASIA (temporary), ABIA or ACCA + 16 upper-case letters or digits",
        example: "try ASIAIOSFODNN7EXAMPLE today → try [REDACTED] today",
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
        name: "gitlab-token",
        what: "a GitLab token: glpat- gloas- gldt- glrt- glrtr- glcbt- glptt- glft- glimt- glagent- glsoat- glffct- + 20 or more of [A-Za-z0-9_.-]",
        example: "glpat-Abcd1234Efgh5678Ijkl → [REDACTED]",
    },
    RuleDoc {
        name: "npm-token",
        what: "an npm access token: npm_ + 36 or more letters or digits",
        example: "npm_ + 36 characters → [REDACTED]",
    },
    RuleDoc {
        name: "huggingface-token",
        what: "a Hugging Face access token: hf_ + 30 or more letters or digits",
        example: "hf_ + 34 letters → [REDACTED]",
    },
    RuleDoc {
        name: "sendgrid-key",
        what: "a SendGrid API key: SG. + 16 to 32 of [A-Za-z0-9_-] + . + 32 to 64 more",
        example: "SG. + 22 characters + . + 43 characters → [REDACTED]",
    },
    RuleDoc {
        name: "jwt",
        what: "three dot-separated base64url parts, the first starting eyJ",
        example: "eyJhbGciOi.eyJzdWIi.sig → [REDACTED]",
    },
    RuleDoc {
        name: "authorization-header",
        what: "Authorization:, authorization: or AUTHORIZATION: and the rest of its line",
        example: "Authorization: Bearer abc.def → [REDACTED]",
    },
    RuleDoc {
        name: "bearer",
        what: "Bearer, bearer or BEARER and the token after it",
        example: "use BEARER abc123 → use [REDACTED]",
    },
    RuleDoc {
        name: "slack-token",
        what: "xoxb- xoxp- xoxa- xoxr- xoxs- xoxe- xoxe.xoxp- xapp- + 10 or more of [A-Za-z0-9-]",
        example: "xoxb-1234567890-abc → [REDACTED]",
    },
    RuleDoc {
        name: "slack-webhook",
        what: "the secret path of a Slack incoming-webhook, workflow or trigger URL (hooks.slack.com/services/…)",
        example: "https://hooks.slack.com/services/T0AAAA/B0BBBB/cccc → https://hooks.slack.com/services/[REDACTED]",
    },
    RuleDoc {
        name: "stripe-key",
        what: "sk_live_ sk_test_ rk_live_ rk_test_ + 8 or more letters or digits",
        example: "sk_test_4eC39HqLyjWDarjtT1zdp7dc → [REDACTED]",
    },
    RuleDoc {
        name: "stripe-webhook-secret",
        what: "a Stripe webhook signing secret: whsec_ + 20 or more of [A-Za-z0-9+/=]",
        example: "whsec_ + 32 characters → [REDACTED]",
    },
    RuleDoc {
        name: "url-password",
        what: "the password in scheme://user:password@host (only the password; the user may be empty, the password may hold / unless a port comes before it), and a random-looking user name standing alone (https://TOKEN@host)",
        example: "redis://:hunter2@cache:6379 → redis://:[REDACTED]@cache:6379",
    },
    RuleDoc {
        name: "url-query-secret",
        what: "the value of a URL query parameter named as a secret (access_token, password, client_secret, X-Amz-Credential, …), or weakly (key, sig, signature, X-Amz-Signature, session…) when the value looks random; in text, request paths and resources/read URIs",
        example: "https://x/f?sig=Zm9vYmFyYmF6cXV4MTIz&sv=1 → https://x/f?sig=[REDACTED]&sv=1",
    },
    RuleDoc {
        name: "secret-assignment",
        what: "a value after a label named as a secret in text: label: value, label = value, label := value, label => value, \"label\": \"value\", export LABEL=value, Label=value; (connection strings, ODBC {…}), --label value; after a weak label (key, sig, signature, session…) only a random-looking value (16 or more characters, no spaces, letters with digits or in mixed case, 3 or more bits of entropy a character); numbers under 8 digits stay",
        example: "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG → aws_secret_access_key = [REDACTED]",
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
    RuleDoc {
        name: "provider-token",
        what: "a token in a provider's documented format (a fixed prefix and a body of known alphabet and length): model APIs (Groq gsk_, xAI xai-, Perplexity pplx-, Replicate r8_, …), clouds (Google ya29. and GOCSPX-, Vault hvs., DigitalOcean dop_v1_, Azure AD secrets, Databricks dapi, …), registries and CI (PyPI pypi-, Docker dckr_pat_, …), payments, messaging (Discord and Telegram bot tokens, …) and more; the list follows the rules",
        example: "pplx-4f1Xk2Lr9Qz7Vb3Nw8Hs → [REDACTED]",
    },
    RuleDoc {
        name: "webhook-url",
        what: "the credential path of a webhook URL: Discord, Microsoft Teams (webhook.office.com, Logic Apps workflows), Zapier, Mattermost-style /hooks/ + 16 or more characters",
        example: "https://discord.com/api/webhooks/1234567890/AbCdEfGhIjKlMnOpQrSt → https://discord.com/api/webhooks/[REDACTED]",
    },
    RuleDoc {
        name: "basic-credential",
        what: "the base64 after Basic (Basic, basic, BASIC) when it decodes to user:password",
        example: "Basic dXNlcjpodW50ZXIy → Basic [REDACTED]",
    },
    RuleDoc {
        name: "schemeless-dsn",
        what: "the password of a DSN with no scheme: user:password@host:port, user:password@host/db, user:password@tcp(host)/db",
        example: "app:s3cret@db.internal:5432/app → app:[REDACTED]@db.internal:5432/app",
    },
    RuleDoc {
        name: "user-password-flag",
        what: "the password of -u, --user or --proxy-user user:password (curl, wget, httpie); a value of digits only stays (docker -u 1000:1000)",
        example: "curl -u admin:hunter2 https://x → curl -u admin:[REDACTED] https://x",
    },
    RuleDoc {
        name: "credential-file",
        what: "the password of a .netrc entry (machine … login … password P) and of a .pgpass line (host:port:db:user:P)",
        example: "machine h login u password p4ss → machine h login u password [REDACTED]",
    },
    RuleDoc {
        name: "quoted-secret",
        what: "a quoted value ('…' or \"…\") after a strong secret name and white space, as error messages write them",
        example: "password 'hunter2' rejected → password '[REDACTED]' rejected",
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
    let providers: Vec<&str> = super::providers::FORMATS
        .iter()
        .map(|f| f.provider)
        .collect();
    out.push_str(&format!(
        "provider-token formats: {}.\n",
        providers.join(", ")
    ));
    out.push_str(
        "A trace keeps the version of its rules (meta.redaction.rules); play, verify and diff\n\
         apply that version to live messages (reel/1 traces keep reel/1's rules).\n",
    );
    out.push_str("Never redacted (replay needs them):\n");
    for line in EXEMPTIONS {
        out.push_str(&format!("  {line}\n"));
    }
    out
}
