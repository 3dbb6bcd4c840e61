//! The built-in value rules as data: for each rule its name, its pattern (from the
//! provider's documented token format), the literal every match contains (for the
//! prefilter), and mcp-tape's spelling of it, per revision of the rule set.
//!
//! Why revisions: `play`, `verify` and `diff` rebuild the rules a trace was recorded
//! with from `meta.redaction` and apply them to live messages. A live argument must be
//! redacted exactly as the recorded one was, so a name in `builtin` keeps the meaning
//! of the revision named by `meta.redaction.rules`: `reel/1` traces are matched with
//! the `reel/1` rules even by a reel that records with `reel/2`.

/// The version of the rule set reel records with, written as `meta.redaction.rules`.
pub const RULES_VERSION: &str = "reel/3";

/// Every rule-set version [`Redactor::from_description`](super::Redactor::from_description) rebuilds, oldest first.
pub const KNOWN_RULES_VERSIONS: [&str; 3] = ["reel/1", "reel/2", "reel/3"];

/// A revision of the built-in rule set (`meta.redaction.rules`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Revision {
    /// mcp-tape's rules, made linear (reel 0.1).
    Reel1,
    /// Provider token formats, PEM blocks, query strings, labelled values, JSON held
    /// as text, secret names beyond mcp-tape's.
    Reel2,
    /// The documented token formats of the public secret-scanning rule sets
    /// ([`super::providers`]), webhook URLs, Basic credentials, credential files,
    /// schemeless DSNs, quoted secrets in prose, name/value pairs and secret columns.
    Reel3,
}

impl Revision {
    /// The revision new rule sets are built with.
    pub(crate) const CURRENT: Revision = Revision::Reel3;

    /// Every revision, oldest first.
    pub(crate) const ALL: [Revision; 3] = [Revision::Reel1, Revision::Reel2, Revision::Reel3];

    /// Its name in `meta.redaction.rules`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Revision::Reel1 => "reel/1",
            Revision::Reel2 => "reel/2",
            Revision::Reel3 => "reel/3",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<Revision> {
        Revision::ALL.into_iter().find(|r| r.name() == name)
    }

    /// The built-in value rules of this revision, in application order.
    pub(crate) fn rules(self) -> &'static [ValueRule] {
        match self {
            Revision::Reel1 => &REEL1,
            Revision::Reel2 => &REEL2,
            Revision::Reel3 => &ValueRule::ALL,
        }
    }
}

/// The ASCII word boundary (ECMAScript's `\b`); Rust's default `\b` is Unicode-aware.
const B: &str = r"(?-u:\b)";

/// The ECMAScript `\s` set, as the inside of a character class.
pub(crate) const JS_SPACE: &str = r"\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

/// One built-in value rule. Listed in application order: a PEM block goes first, whole,
/// before a token rule could cut into its body; token formats before the shapes
/// (URLs, labels) that would otherwise take a token's neighbours with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ValueRule {
    PemPrivateKey,
    AwsAccessKey,
    SkKey,
    GithubToken,
    GithubPat,
    GitlabToken,
    NpmToken,
    HuggingfaceToken,
    SendgridKey,
    Jwt,
    AuthorizationHeader,
    Bearer,
    SlackToken,
    SlackWebhook,
    StripeKey,
    StripeWebhookSecret,
    UrlPassword,
    UrlQuerySecret,
    SecretAssignment,
    DotenvPath,
    SshKeyPath,
    GoogleApiKey,
    ProviderToken,
    WebhookUrl,
    BasicCredential,
    SchemelessDsn,
    UserPasswordFlag,
    CredentialFile,
    QuotedSecret,
}

/// The `reel/2` rules, in their order (a prefix of [`ValueRule::ALL`]).
const REEL2: [ValueRule; 22] = [
    ValueRule::PemPrivateKey,
    ValueRule::AwsAccessKey,
    ValueRule::SkKey,
    ValueRule::GithubToken,
    ValueRule::GithubPat,
    ValueRule::GitlabToken,
    ValueRule::NpmToken,
    ValueRule::HuggingfaceToken,
    ValueRule::SendgridKey,
    ValueRule::Jwt,
    ValueRule::AuthorizationHeader,
    ValueRule::Bearer,
    ValueRule::SlackToken,
    ValueRule::SlackWebhook,
    ValueRule::StripeKey,
    ValueRule::StripeWebhookSecret,
    ValueRule::UrlPassword,
    ValueRule::UrlQuerySecret,
    ValueRule::SecretAssignment,
    ValueRule::DotenvPath,
    ValueRule::SshKeyPath,
    ValueRule::GoogleApiKey,
];

/// The `reel/1` rules, in their order (a subsequence of [`ValueRule::ALL`]).
const REEL1: [ValueRule; 13] = [
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

/// How a rule finds what to replace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Every match of the regex.
    Whole,
    /// Capture group 1 of every match.
    Group,
    /// `reel/2` `url-password`: group 1 (a password), or group 2 (a user name standing
    /// alone) when it looks random.
    Userinfo,
    /// The query scanner (`context`).
    Query,
    /// The labelled-value scanner (`context`).
    Assignment,
    /// mcp-tape's pattern 10, word-based.
    Dotenv,
    /// mcp-tape's pattern 11, word-based.
    SshKey,
    /// `reel/3` `basic-credential`: a Basic credential whose base64 holds `user:pass`.
    Basic,
    /// `reel/3` `credential-file`: `.netrc` and `.pgpass` lines.
    CredentialFile,
    /// `reel/3` `quoted-secret`: a quoted value after a strong label in prose.
    Quoted,
}

impl ValueRule {
    /// Every rule of the current revision, in application order.
    pub(crate) const ALL: [ValueRule; 29] = [
        ValueRule::PemPrivateKey,
        ValueRule::AwsAccessKey,
        ValueRule::SkKey,
        ValueRule::GithubToken,
        ValueRule::GithubPat,
        ValueRule::GitlabToken,
        ValueRule::NpmToken,
        ValueRule::HuggingfaceToken,
        ValueRule::SendgridKey,
        ValueRule::Jwt,
        ValueRule::AuthorizationHeader,
        ValueRule::Bearer,
        ValueRule::SlackToken,
        ValueRule::SlackWebhook,
        ValueRule::StripeKey,
        ValueRule::StripeWebhookSecret,
        ValueRule::UrlPassword,
        ValueRule::UrlQuerySecret,
        ValueRule::SecretAssignment,
        ValueRule::DotenvPath,
        ValueRule::SshKeyPath,
        ValueRule::GoogleApiKey,
        ValueRule::ProviderToken,
        ValueRule::WebhookUrl,
        ValueRule::BasicCredential,
        ValueRule::SchemelessDsn,
        ValueRule::UserPasswordFlag,
        ValueRule::CredentialFile,
        ValueRule::QuotedSecret,
    ];

    /// The rule's name in `meta.redaction` and `--help`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ValueRule::PemPrivateKey => "pem-private-key",
            ValueRule::AwsAccessKey => "aws-access-key",
            ValueRule::SkKey => "sk-key",
            ValueRule::GithubToken => "github-token",
            ValueRule::GithubPat => "github-pat",
            ValueRule::GitlabToken => "gitlab-token",
            ValueRule::NpmToken => "npm-token",
            ValueRule::HuggingfaceToken => "huggingface-token",
            ValueRule::SendgridKey => "sendgrid-key",
            ValueRule::Jwt => "jwt",
            ValueRule::AuthorizationHeader => "authorization-header",
            ValueRule::Bearer => "bearer",
            ValueRule::SlackToken => "slack-token",
            ValueRule::SlackWebhook => "slack-webhook",
            ValueRule::StripeKey => "stripe-key",
            ValueRule::StripeWebhookSecret => "stripe-webhook-secret",
            ValueRule::UrlPassword => "url-password",
            ValueRule::UrlQuerySecret => "url-query-secret",
            ValueRule::SecretAssignment => "secret-assignment",
            ValueRule::DotenvPath => "dotenv-path",
            ValueRule::SshKeyPath => "ssh-key-path",
            ValueRule::GoogleApiKey => "google-api-key",
            ValueRule::ProviderToken => "provider-token",
            ValueRule::WebhookUrl => "webhook-url",
            ValueRule::BasicCredential => "basic-credential",
            ValueRule::SchemelessDsn => "schemeless-dsn",
            ValueRule::UserPasswordFlag => "user-password-flag",
            ValueRule::CredentialFile => "credential-file",
            ValueRule::QuotedSecret => "quoted-secret",
        }
    }

    /// The rule named `name` in `revision`, if that revision has it.
    pub(crate) fn from_name(name: &str, revision: Revision) -> Option<ValueRule> {
        revision.rules().iter().copied().find(|r| r.name() == name)
    }

    pub(crate) fn shape(self, revision: Revision) -> Shape {
        match self {
            ValueRule::SlackWebhook
            | ValueRule::WebhookUrl
            | ValueRule::SchemelessDsn
            | ValueRule::UserPasswordFlag => Shape::Group,
            ValueRule::BasicCredential => Shape::Basic,
            ValueRule::CredentialFile => Shape::CredentialFile,
            ValueRule::QuotedSecret => Shape::Quoted,
            ValueRule::UrlPassword if revision == Revision::Reel1 => Shape::Group,
            ValueRule::UrlPassword => Shape::Userinfo,
            ValueRule::UrlQuerySecret => Shape::Query,
            ValueRule::SecretAssignment => Shape::Assignment,
            ValueRule::DotenvPath => Shape::Dotenv,
            ValueRule::SshKeyPath => Shape::SshKey,
            _ => Shape::Whole,
        }
    }

    /// The regex (Rust syntax) of a rule whose shape is a regex, in `revision`: a token
    /// known by its own format, or a credential known by what surrounds it.
    pub(crate) fn regex(self, revision: Revision) -> Option<String> {
        self.token_regex(revision)
            .or_else(|| self.surrounded_regex(revision))
    }

    /// A token known by its own format: a provider's prefix, alphabet and length.
    fn token_regex(self, revision: Revision) -> Option<String> {
        let v2 = revision >= Revision::Reel2;
        Some(match self {
            // AWS IAM unique ID prefixes of access keys: AKIA (long-term), ASIA (STS
            // temporary), ABIA (STS service bearer), ACCA (context-specific).
            ValueRule::AwsAccessKey if v2 => format!("{B}A(?:KIA|SIA|BIA|CCA)[0-9A-Z]{{16}}{B}"),
            ValueRule::AwsAccessKey => format!("{B}AKIA[0-9A-Z]{{16}}{B}"),
            ValueRule::SkKey => format!("{B}sk-[A-Za-z0-9_-]{{20,}}{B}"),
            ValueRule::GithubToken => format!("{B}gh[pousr]_[A-Za-z0-9]{{36,}}{B}"),
            ValueRule::GithubPat => format!("{B}github_pat_[A-Za-z0-9_]{{20,}}"),
            // GitLab's token prefixes (docs: "Token prefixes"): personal, OAuth
            // application secret, deploy, runner, CI/CD job, trigger, feed, incoming
            // mail, agent, SCIM, feature-flag client tokens.
            ValueRule::GitlabToken => format!(
                "{B}gl(?:pat|oas|dt|rt|rtr|cbt|ptt|ft|imt|agent|soat|ffct)-[A-Za-z0-9_.-]{{20,}}"
            ),
            // npm access tokens: `npm_` + 36 base62 characters.
            ValueRule::NpmToken => format!("{B}npm_[A-Za-z0-9]{{36,}}"),
            // Hugging Face user access tokens: `hf_` + 34 letters.
            ValueRule::HuggingfaceToken => format!("{B}hf_[A-Za-z0-9]{{30,}}"),
            // SendGrid API keys: `SG.` + 22-character id + `.` + 43-character secret.
            ValueRule::SendgridKey => {
                format!("{B}SG\\.[A-Za-z0-9_-]{{16,32}}\\.[A-Za-z0-9_-]{{32,64}}")
            }
            ValueRule::Jwt => {
                format!("{B}eyJ[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+{B}")
            }
            // Slack: bot, user, app-level, configuration and refresh tokens, legacy
            // workspace tokens.
            ValueRule::SlackToken if v2 => {
                format!("{B}(?:xox[abprs]|xoxe(?:\\.xox[bp])?|xapp)-[A-Za-z0-9-]{{10,}}")
            }
            ValueRule::SlackToken => format!("{B}(?:xoxb|xoxa|xoxp|xoxr|xoxs)-[A-Za-z0-9-]{{10,}}"),
            ValueRule::StripeKey if v2 => {
                format!("{B}(?:rk|sk)_(?:live|test)_[A-Za-z0-9]{{8,}}{B}")
            }
            ValueRule::StripeKey => format!("{B}(?:rk_live|sk_live)_[A-Za-z0-9]{{8,}}{B}"),
            // Webhook signing secrets (`whsec_` + base64 or hex).
            ValueRule::StripeWebhookSecret => format!("{B}whsec_[A-Za-z0-9+/=]{{20,}}"),
            // `reel/3`: a key may end in `-`, where `\b` would need a word character.
            ValueRule::GoogleApiKey if revision >= Revision::Reel3 => {
                format!("{B}AIza[0-9A-Za-z_-]{{35}}")
            }
            ValueRule::GoogleApiKey => format!("{B}AIza[0-9A-Za-z_-]{{35}}{B}"),
            ValueRule::ProviderToken => super::providers::regex(),
            _ => return None,
        })
    }

    /// A credential known by what surrounds it: a PEM block, a header, a URL, a DSN, a
    /// flag. `None` for rules that are not a regex.
    fn surrounded_regex(self, revision: Revision) -> Option<String> {
        let s = JS_SPACE;
        let v2 = revision >= Revision::Reel2;
        Some(match self {
            // RFC 7468 §10 and OpenSSH's PROTOCOL.key: `-----BEGIN <label>-----`, the
            // base64 body (with RFC 1421 headers such as `Proc-Type: 4,ENCRYPTED`, and
            // as `\n` escapes when the key sits in JSON held as text), the END line. The
            // body cannot hold `--`, so it stops at the END line; a block cut short is
            // taken to the end of its body.
            ValueRule::PemPrivateKey => {
                let label = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?";
                format!(
                    r"-----BEGIN {label}-----(?:[A-Za-z0-9+/=\s\\:,.]|-[A-Za-z0-9])*(?:-----END {label}-----)?"
                )
            }
            ValueRule::AuthorizationHeader => {
                let name = if v2 {
                    "(?:[Aa]uthorization|AUTHORIZATION)"
                } else {
                    "[Aa]uthorization"
                };
                format!("{name}[{s}]*:[{s}]*[^\\n\\r\\x{{2028}}\\x{{2029}}]+")
            }
            ValueRule::Bearer => {
                let name = if v2 {
                    "(?:[Bb]earer|BEARER)"
                } else {
                    "[Bb]earer"
                };
                format!("{name}[{s}]+[A-Za-z0-9._\\-+/=]+")
            }
            // Incoming webhooks, workflow and trigger URLs: the path is the secret.
            ValueRule::SlackWebhook => {
                "hooks\\.slack(?:-gov)?\\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/-]+)"
                    .to_owned()
            }
            // mcp-tape: `(?<=://U:)P(?=@)`; without look-around we match the whole
            // `://U:P@` and replace only the password group. `reel/2`: the user may be
            // empty (`redis://:pw@`), the password may hold `/` unless what comes
            // before its first `/` is a port (`host:8080/x@y` is not a password), and a
            // random-looking user name standing alone (`https://TOKEN@host`) goes too.
            ValueRule::UrlPassword if v2 => format!(
                "://(?:[^/:@{s}]{{0,128}}:([^/@{s}\"]*[^0-9/@{s}\"][^@{s}\"]*|[^/@{s}\"]+)|([^/:@{s}\"]{{16,128}}))@"
            ),
            ValueRule::UrlPassword => format!("://[^/:@{s}]{{1,128}}:([^/@{s}]+)@"),
            // The path of a webhook URL is its credential: Discord, Microsoft Teams
            // (incoming webhooks and workflows), Zapier, Mattermost, Google Chat's
            // `key=…&token=…` is the query rule's.
            // Mattermost's incoming hooks are 26 lower-case letters and digits: a path
            // like `src/hooks/useLocalStorage.ts` is not one.
            ValueRule::WebhookUrl => "(?:discord(?:app)?\\.com/api/webhooks|webhook\\.office\\.com/webhookb2|\\.logic\\.azure\\.com(?::443)?/workflows|hooks\\.zapier\\.com/hooks/catch)/([A-Za-z0-9_@./-]{16,})|/hooks/([a-z0-9]{26})(?:$|[^A-Za-z0-9._-])"
                .to_owned(),
            // `user:password@host:port/db` or Go's `user:password@tcp(host)/db`: a DSN
            // with no scheme (a scheme's is `url-password`'s). The host part must be
            // followed by a port, a path or `tcp(`, so `a:b@example.com` in prose and
            // `mailto:x@y` stay.
            ValueRule::SchemelessDsn => format!(
                "(?:^|[{s}\"'=(,;])[A-Za-z0-9._-]{{1,64}}:([^@/:{s}\"']{{1,128}})@(?:(?:tcp|unix|udp)\\(|[A-Za-z0-9.-]+(?::[0-9]{{2,5}})?/|[A-Za-z0-9.-]+:[0-9]{{2,5}}(?:$|[^0-9]))"
            ),
            // `curl -u user:secret`, `--user user:secret`, `-uuser:secret`.
            ValueRule::UserPasswordFlag => format!(
                "(?:^|[{s}])(?:-u|--user|--proxy-user)(?:[{s}]+|=)?(?:[^:{s}\"'-][^:{s}\"']{{0,127}})?:([^{s}\"']*[^0-9{s}\"'][^{s}\"']*)"
            ),
            _ => return None,
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
            _ => &[],
        }
    }

    /// Literals one of which every match of this rule contains (a superset is fine):
    /// the prefilter is built from these. Empty for the scanners, which have their
    /// own cheap trigger (a separator in the text) and so run whatever the prefilter
    /// says.
    pub(crate) fn literals(self, revision: Revision) -> &'static [&'static str] {
        let v2 = revision >= Revision::Reel2;
        match self {
            ValueRule::PemPrivateKey => &["PRIVATE KEY"],
            ValueRule::AwsAccessKey if v2 => &["AKIA", "ASIA", "ABIA", "ACCA"],
            ValueRule::AwsAccessKey => &["AKIA"],
            ValueRule::SkKey => &["sk-"],
            ValueRule::GithubToken => &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
            ValueRule::GithubPat => &["github_pat_"],
            ValueRule::GitlabToken => &[
                "glpat-", "gloas-", "gldt-", "glrt", "glcbt-", "glptt-", "glft-", "glimt-",
                "glagent-", "glsoat-", "glffct-",
            ],
            ValueRule::NpmToken => &["npm_"],
            ValueRule::HuggingfaceToken => &["hf_"],
            ValueRule::SendgridKey => &["SG."],
            ValueRule::Jwt => &["eyJ"],
            ValueRule::AuthorizationHeader if v2 => &["uthorization", "UTHORIZATION"],
            ValueRule::AuthorizationHeader => &["uthorization"],
            ValueRule::Bearer if v2 => &["earer", "EARER"],
            ValueRule::Bearer => &["earer"],
            ValueRule::SlackToken if v2 => &["xox", "xapp-"],
            ValueRule::SlackToken => &["xox"],
            ValueRule::SlackWebhook => &["hooks.slack"],
            ValueRule::StripeKey if v2 => &["_live_", "_test_"],
            ValueRule::StripeKey => &["_live_"],
            ValueRule::StripeWebhookSecret => &["whsec_"],
            ValueRule::UrlPassword => &["://"],
            ValueRule::DotenvPath => &[".env"],
            ValueRule::SshKeyPath => &["id_"],
            ValueRule::GoogleApiKey => &["AIza"],
            ValueRule::ProviderToken => super::providers::literals(),
            ValueRule::WebhookUrl => &["/api/webhooks", "webhookb2", "/workflows", "/hooks/"],
            ValueRule::BasicCredential => &["Basic ", "basic ", "BASIC "],
            // Their own trigger: `:` (see `context::may_match`).
            ValueRule::SchemelessDsn | ValueRule::UserPasswordFlag => &[],
            ValueRule::UrlQuerySecret
            | ValueRule::SecretAssignment
            | ValueRule::CredentialFile
            | ValueRule::QuotedSecret => &[],
        }
    }
}
