//! The secret kinds of reel's seeded corpus, shared by the redaction tests of
//! `reel-trace` (every kind in every place a redactor is applied, and the look-alikes
//! that must stay) and the CLI's (every kind through the real recorders). One list, so
//! the two suites cannot disagree on what a kind is.
//!
//! Each placement gets a fresh secret from a seeded RNG (`REEL_SECRETS_SEED` to
//! replay one; the seed is in every failure message). A secret's *random part* is
//! what must not survive: an 8-character run of it anywhere is a leak.

#![allow(dead_code)]

use std::fmt::Write as _;

use serde_json::{Value, json};

/// The length of the runs looked for.
const RUN: usize = 8;

/// splitmix64: small, seedable, good enough for test data.
pub struct Rng(u64);

impl Rng {
    /// From `REEL_SECRETS_SEED`, else the clock.
    pub fn seeded() -> (Rng, u64) {
        let seed = std::env::var("REEL_SECRETS_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(7)
            });
        (Rng(seed), seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// `n` characters drawn from `alphabet`.
    pub fn chars(&mut self, alphabet: &str, n: usize) -> String {
        let a = alphabet.as_bytes();
        (0..n)
            .map(|_| a[(self.next() % a.len() as u64) as usize] as char)
            .collect()
    }
}

const UPPER_DIGIT: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const LETTERS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const BASE64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
const HEX: &str = "0123456789abcdef";
const LOWER_DIGIT: &str = "abcdefghijklmnopqrstuvwxyz0123456789";
const DIGITS: &str = "0123456789";
/// Bech32's alphabet, upper case (age keys).
const BECH32: &str = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L";
/// Azure AD client secrets.
const AZURE_SECRET: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_~.-";
/// What a generated password holds: no white space, quotes, `@ / : ; & # % =`.
const PASSWORD: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!*+-_~.";

/// How a secret is laid out, which decides the places it fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Free text that may span lines.
    Text,
    /// Free text on one line.
    Line,
    /// One token that can stand in a URL query value.
    Token,
    /// A URL whose query or path holds the secret.
    Url,
    /// A JSON member: placed as structure where JSON goes, as its JSON text elsewhere.
    Member,
}

/// One generated secret and where it went.
#[derive(Debug, Clone)]
pub struct Secret {
    pub class: &'static str,
    pub form: Form,
    /// The text placed (a snippet, a URL, a token, or for a member its value).
    pub text: String,
    /// For [`Form::Member`], the member name.
    pub key: Option<&'static str>,
    /// The random parts that must not survive.
    pub random: Vec<String>,
    /// Where it was placed (filled in by [`Corpus::place`]).
    pub place: String,
}

impl Secret {
    /// The member as JSON text (`{"passphrase":"…"}`), or the text itself.
    pub fn as_text(&self) -> String {
        match self.key {
            Some(k) => json!({ k: self.text }).to_string(),
            None => self.text.clone(),
        }
    }

    /// As one line: a multi-line snippet with its line breaks escaped (`\n`), as in
    /// JSON held as text.
    pub fn as_line(&self) -> String {
        self.as_text().replace('\n', "\\n")
    }

    /// The member as a JSON object, or `{"note": text}`.
    pub fn as_object(&self) -> Value {
        match self.key {
            Some(k) => json!({ k: self.text }),
            None => json!({ "note": self.text }),
        }
    }
}

type Generator = fn(&mut Rng) -> (String, Vec<String>);

/// A class: its name, layout and generator (snippet, random parts).
pub struct Class {
    pub name: &'static str,
    pub form: Form,
    pub key: Option<&'static str>,
    generate: Generator,
}

fn pem(rng: &mut Rng, label: &str, lines: usize) -> (String, Vec<String>) {
    let body: Vec<String> = (0..lines).map(|_| rng.chars(BASE64, 64)).collect();
    let text = format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----",
        body.join("\n")
    );
    (text, body)
}

/// The kinds known only by the words around them (a label, a file's layout, a
/// structure), not by a documented shape of their own. The corpus allows them to
/// leak in at most 1% of their placements (places that mangle their context, such as
/// a JSON list with its quotes swapped into a header); every other kind, none.
pub fn is_context(class: &str) -> bool {
    matches!(
        class,
        "netrc-entry"
            | "pgpass-line"
            | "schemeless-dsn-tcp"
            | "schemeless-dsn-host"
            | "curl-user"
            | "twilio-curl"
            | "prose-password"
            | "jsessionid"
            | "phpsessid"
            | "sid-query"
            | "authkey-flag"
            | "webhook-url-flag"
            | "env-pair-object"
            | "env-pair-array"
            | "sql-secret-column"
            | "jwt-parts"
            | "yaml-env-list"
    )
}

/// A documented prefix and a random body: (token, [body]).
fn token(r: &mut Rng, prefix: &str, alphabet: &str, n: usize) -> (String, Vec<String>) {
    let body = r.chars(alphabet, n);
    (format!("{prefix}{body}"), vec![body])
}

/// A text around one random part: `before` + part + `after`.
fn around(
    r: &mut Rng,
    before: &str,
    alphabet: &str,
    n: usize,
    after: &str,
) -> (String, Vec<String>) {
    let part = r.chars(alphabet, n);
    (format!("{before}{part}{after}"), vec![part])
}

/// Standard base64 with padding (test data only).
pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n =
            chunk.iter().fold(0u32, |acc, &b| (acc << 8) | u32::from(b)) << (8 * (3 - chunk.len()));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Every class the corpus places: the first round's classes, then the documented
/// formats and contexts of the second round (issue 28).
pub const CLASSES: &[Class] = &[
    Class {
        name: "pem-rsa",
        form: Form::Text,
        key: None,
        generate: |r| pem(r, "RSA PRIVATE KEY", 4),
    },
    Class {
        name: "pem-openssh",
        form: Form::Text,
        key: None,
        generate: |r| pem(r, "OPENSSH PRIVATE KEY", 4),
    },
    Class {
        name: "pem-ec",
        form: Form::Text,
        key: None,
        generate: |r| pem(r, "EC PRIVATE KEY", 2),
    },
    Class {
        name: "pem-pkcs8",
        form: Form::Text,
        key: None,
        generate: |r| pem(r, "PRIVATE KEY", 4),
    },
    Class {
        name: "service-account-json",
        form: Form::Line,
        key: None,
        generate: |r| {
            let (key, mut random) = pem(r, "PRIVATE KEY", 3);
            let key_id = r.chars(ALNUM, 40);
            random.push(key_id.clone());
            let account = json!({"type":"service_account","project_id":"demo-project",
                "private_key_id": key_id,"private_key": format!("{key}\n"),
                "client_email":"runner@demo-project.iam.gserviceaccount.com",
                "token_uri":"https://oauth2.googleapis.com/token"});
            (account.to_string(), random)
        },
    },
    Class {
        name: "aws-credentials-file",
        form: Form::Text,
        key: None,
        generate: |r| {
            let id = r.chars(UPPER_DIGIT, 16);
            let secret = r.chars(BASE64, 40);
            let text = format!(
                "[default]\naws_access_key_id = AKIA{id}\naws_secret_access_key = {secret}\nregion = eu-west-1"
            );
            (text, vec![id, secret])
        },
    },
    Class {
        name: "aws-export",
        form: Form::Line,
        key: None,
        generate: |r| {
            let secret = r.chars(BASE64, 40);
            (
                format!("export AWS_SECRET_ACCESS_KEY={secret}"),
                vec![secret],
            )
        },
    },
    Class {
        name: "aws-temporary-key",
        form: Form::Token,
        key: None,
        generate: |r| {
            let id = r.chars(UPPER_DIGIT, 16);
            (format!("ASIA{id}"), vec![id])
        },
    },
    Class {
        name: "slack-webhook",
        form: Form::Url,
        key: None,
        generate: |r| {
            let (t, b, s) = (
                r.chars(UPPER_DIGIT, 10),
                r.chars(UPPER_DIGIT, 10),
                r.chars(ALNUM, 24),
            );
            let url = format!("https://hooks.slack.com/services/T{t}/B{b}/{s}");
            (url, vec![t, b, s])
        },
    },
    Class {
        name: "stripe-webhook-secret",
        form: Form::Token,
        key: None,
        generate: |r| {
            let s = r.chars(ALNUM, 32);
            (format!("whsec_{s}"), vec![s])
        },
    },
    Class {
        name: "npm-token",
        form: Form::Token,
        key: None,
        generate: |r| {
            let s = r.chars(ALNUM, 36);
            (format!("npm_{s}"), vec![s])
        },
    },
    Class {
        name: "huggingface-token",
        form: Form::Token,
        key: None,
        generate: |r| {
            let s = r.chars(LETTERS, 34);
            (format!("hf_{s}"), vec![s])
        },
    },
    Class {
        name: "gitlab-pat",
        form: Form::Token,
        key: None,
        generate: |r| {
            let s = r.chars(URL_SAFE, 20);
            (format!("glpat-{s}"), vec![s])
        },
    },
    Class {
        name: "sendgrid-key",
        form: Form::Token,
        key: None,
        generate: |r| {
            let (a, b) = (r.chars(URL_SAFE, 22), r.chars(URL_SAFE, 43));
            (format!("SG.{a}.{b}"), vec![a, b])
        },
    },
    Class {
        name: "bearer-upper-case",
        form: Form::Line,
        key: None,
        generate: |r| {
            let s = r.chars(ALNUM, 32);
            (format!("BEARER {s}"), vec![s])
        },
    },
    Class {
        name: "redis-empty-user",
        form: Form::Url,
        key: None,
        generate: |r| {
            let pw = r.chars(PASSWORD, 20);
            (format!("redis://:{pw}@cache.internal:6379/0"), vec![pw])
        },
    },
    Class {
        name: "password-with-slash",
        form: Form::Url,
        key: None,
        generate: |r| {
            let (a, b) = (r.chars(LETTERS, 1) + &r.chars(ALNUM, 9), r.chars(ALNUM, 10));
            let url = format!("postgres://app:{a}/{b}@db.internal:5432/app");
            (url, vec![a, b])
        },
    },
    Class {
        name: "query-password",
        form: Form::Url,
        key: None,
        generate: |r| {
            let pw = r.chars(PASSWORD, 20);
            let url = format!("mysql://db.internal:3306/app?user=app&password={pw}&ssl=true");
            (url, vec![pw])
        },
    },
    Class {
        name: "ado-net-password",
        form: Form::Line,
        key: None,
        generate: |r| {
            let pw = r.chars(PASSWORD, 20);
            let text = format!(
                "Server=tcp:sql.internal,1433;Initial Catalog=app;User ID=app;Password={pw};Encrypt=True;"
            );
            (text, vec![pw])
        },
    },
    Class {
        name: "connection-string-flag",
        form: Form::Line,
        key: None,
        generate: |r| {
            let pw = r.chars(PASSWORD, 20);
            let text = format!("--connection-string \"Server=db;User Id=app;Password={pw}\"");
            (text, vec![pw])
        },
    },
    Class {
        name: "passphrase-flag",
        form: Form::Line,
        key: None,
        generate: |r| {
            let s = r.chars(PASSWORD, 24);
            (format!("--passphrase {s}"), vec![s])
        },
    },
    Class {
        name: "url-access-token",
        form: Form::Url,
        key: None,
        generate: |r| {
            let s = r.chars(URL_SAFE, 32);
            let url = format!("https://api.example.com/v1/files?access_token={s}&page=2");
            (url, vec![s])
        },
    },
    Class {
        name: "url-sig",
        form: Form::Url,
        key: None,
        generate: |r| {
            let s = r.chars(ALNUM, 40);
            let url = format!(
                "https://acct.blob.core.windows.net/reports/q3.pdf?sv=2022-11-02&sr=b&sig={s}%3D"
            );
            (url, vec![s])
        },
    },
    Class {
        name: "url-key",
        form: Form::Url,
        key: None,
        generate: |r| {
            let s = r.chars(URL_SAFE, 39);
            let url = format!("https://maps.example.com/api/geocode?address=paris&key={s}");
            (url, vec![s])
        },
    },
    Class {
        name: "url-userinfo-password",
        form: Form::Url,
        key: None,
        generate: |r| {
            let pw = r.chars(PASSWORD, 20);
            (
                format!("https://deploy:{pw}@git.example.com/team/app.git"),
                vec![pw],
            )
        },
    },
    Class {
        name: "url-userinfo-token",
        form: Form::Url,
        key: None,
        generate: |r| {
            let token = r.chars(ALNUM, 32);
            (
                format!("https://{token}@git.example.com/team/app.git"),
                vec![token],
            )
        },
    },
    Class {
        name: "json-passphrase",
        form: Form::Member,
        key: Some("passphrase"),
        generate: |r| {
            let s = r.chars(PASSWORD, 20);
            (s.clone(), vec![s])
        },
    },
    Class {
        name: "json-pass",
        form: Form::Member,
        key: Some("pass"),
        generate: |r| {
            let s = r.chars(PASSWORD, 20);
            (s.clone(), vec![s])
        },
    },
    Class {
        name: "json-cookie",
        form: Form::Member,
        key: Some("cookie"),
        generate: |r| {
            let s = r.chars(URL_SAFE, 32);
            (format!("sid={s}"), vec![s])
        },
    },
    Class {
        name: "json-session",
        form: Form::Member,
        key: Some("session"),
        generate: |r| {
            let s = r.chars(URL_SAFE, 32);
            (s.clone(), vec![s])
        },
    },
    Class {
        name: "json-secret",
        form: Form::Member,
        key: Some("secret"),
        generate: |r| {
            let s = r.chars(PASSWORD, 24);
            (s.clone(), vec![s])
        },
    },
    Class {
        name: "json-credentials",
        form: Form::Member,
        key: Some("credentials"),
        generate: |r| {
            let s = r.chars(PASSWORD, 24);
            (s.clone(), vec![s])
        },
    },
    // Second round: documented provider formats.
    Class {
        name: "openai-project-key",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "sk-proj-", URL_SAFE, 48),
    },
    Class {
        name: "anthropic-key",
        form: Form::Token,
        key: None,
        generate: |r| around(r, "sk-ant-api03-", URL_SAFE, 93, "AA"),
    },
    Class {
        name: "github-classic-token",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "ghp_", ALNUM, 36),
    },
    Class {
        name: "github-fine-grained",
        form: Form::Token,
        key: None,
        generate: |r| {
            let (a, b) = (r.chars(ALNUM, 22), r.chars(ALNUM, 59));
            (format!("github_pat_{a}_{b}"), vec![a, b])
        },
    },
    Class {
        name: "slack-bot-token",
        form: Form::Token,
        key: None,
        generate: |r| {
            let (a, b, c) = (r.chars(DIGITS, 12), r.chars(DIGITS, 13), r.chars(ALNUM, 24));
            (format!("xoxb-{a}-{b}-{c}"), vec![a, b, c])
        },
    },
    Class {
        name: "stripe-live-key",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "sk_live_", ALNUM, 24),
    },
    Class {
        name: "stripe-restricted-key",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "rk_live_", ALNUM, 24),
    },
    Class {
        name: "google-api-key",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "AIza", URL_SAFE, 35),
    },
    Class {
        name: "jwt",
        form: Form::Token,
        key: None,
        generate: |r| {
            let (p, sig) = (r.chars(URL_SAFE, 40), r.chars(URL_SAFE, 43));
            (format!("eyJhbGciOiJIUzI1NiJ9.eyJ{p}.{sig}"), vec![p, sig])
        },
    },
    Class {
        name: "aws-access-key",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "AKIA", UPPER_DIGIT, 16),
    },
    Class {
        name: "databricks-token",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "dapi", HEX, 32),
    },
    Class {
        name: "pypi-token",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "pypi-AgEIcHlwaS5vcmc", URL_SAFE, 60),
    },
    Class {
        name: "vault-token",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "hvs.", URL_SAFE, 90),
    },
    Class {
        name: "google-oauth-access-token",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "ya29.", URL_SAFE, 100),
    },
    Class {
        name: "google-client-secret",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "GOCSPX-", URL_SAFE, 28),
    },
    Class {
        name: "age-secret-key",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "AGE-SECRET-KEY-1", BECH32, 58),
    },
    Class {
        name: "digitalocean-token",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "dop_v1_", HEX, 64),
    },
    Class {
        name: "groq-key",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "gsk_", ALNUM, 52),
    },
    Class {
        name: "xai-key",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "xai-", ALNUM, 80),
    },
    Class {
        name: "perplexity-key",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "pplx-", ALNUM, 48),
    },
    Class {
        name: "grafana-service-account",
        form: Form::Token,
        key: None,
        generate: |r| {
            let (a, b) = (r.chars(ALNUM, 32), r.chars(HEX, 8));
            (format!("glsa_{a}_{b}"), vec![a])
        },
    },
    Class {
        name: "square-secret",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "sq0csp-", URL_SAFE, 43),
    },
    Class {
        name: "docker-pat",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "dckr_pat_", URL_SAFE, 27),
    },
    Class {
        name: "tailscale-auth-key",
        form: Form::Token,
        key: None,
        generate: |r| {
            let (a, b) = (r.chars(ALNUM, 12), r.chars(ALNUM, 32));
            (format!("tskey-auth-{a}-{b}"), vec![a, b])
        },
    },
    Class {
        name: "discord-bot-token",
        form: Form::Token,
        key: None,
        generate: |r| {
            let id = format!("{}{}", r.chars("123456789", 1), r.chars(DIGITS, 17));
            let id64 = base64(id.as_bytes()).trim_end_matches('=').to_owned();
            let (t, h) = (r.chars(URL_SAFE, 6), r.chars(URL_SAFE, 38));
            (format!("{id64}.{t}.{h}"), vec![id64, h])
        },
    },
    Class {
        name: "telegram-bot-token",
        form: Form::Token,
        key: None,
        generate: |r| {
            let (id, t) = (r.chars(DIGITS, 10), r.chars(URL_SAFE, 33));
            (format!("{id}:AA{t}"), vec![t])
        },
    },
    Class {
        name: "discord-webhook",
        form: Form::Url,
        key: None,
        generate: |r| {
            let (id, t) = (r.chars(DIGITS, 18), r.chars(URL_SAFE, 68));
            (
                format!("https://discord.com/api/webhooks/{id}/{t}"),
                vec![id, t],
            )
        },
    },
    Class {
        name: "teams-webhook",
        form: Form::Url,
        key: None,
        generate: |r| {
            let (a, b) = (r.chars(HEX, 32), r.chars(HEX, 32));
            (
                format!(
                    "https://contoso.webhook.office.com/webhookb2/{a}@72f988bf/IncomingWebhook/{b}/e9f4"
                ),
                vec![a, b],
            )
        },
    },
    Class {
        name: "azure-storage-connection-string",
        form: Form::Line,
        key: None,
        generate: |r| {
            around(
                r,
                "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=",
                BASE64,
                86,
                "==;EndpointSuffix=core.windows.net",
            )
        },
    },
    Class {
        name: "azure-sas-url",
        form: Form::Url,
        key: None,
        generate: |r| {
            let (a, b) = (r.chars(ALNUM, 20), r.chars(ALNUM, 20));
            (
                format!(
                    "https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-31T00:00:00Z&sig={a}%2B{b}%3D"
                ),
                vec![a, b],
            )
        },
    },
    Class {
        name: "shopify-token",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "shpat_", HEX, 32),
    },
    Class {
        name: "mailgun-key",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "key-", HEX, 32),
    },
    Class {
        name: "mailchimp-key",
        form: Form::Token,
        key: None,
        generate: |r| around(r, "", HEX, 32, "-us14"),
    },
    Class {
        name: "linear-key",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "lin_api_", ALNUM, 40),
    },
    Class {
        name: "notion-token",
        form: Form::Token,
        key: None,
        generate: |r| around(r, "ntn_", ALNUM, 46, ""),
    },
    Class {
        name: "postman-key",
        form: Form::Token,
        key: None,
        generate: |r| {
            let (a, b) = (r.chars(HEX, 24), r.chars(HEX, 34));
            (format!("PMAK-{a}-{b}"), vec![a, b])
        },
    },
    Class {
        name: "doppler-token",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "dp.pt.", ALNUM, 43),
    },
    Class {
        name: "replicate-token",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "r8_", ALNUM, 37),
    },
    Class {
        name: "sentry-user-token",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "sntryu_", HEX, 64),
    },
    Class {
        name: "supabase-token",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "sbp_", HEX, 40),
    },
    Class {
        name: "netlify-token",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "nfp_", ALNUM, 36),
    },
    Class {
        name: "figma-token",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "figd_", URL_SAFE, 40),
    },
    Class {
        name: "planetscale-token",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "pscale_tkn_", URL_SAFE, 43),
    },
    Class {
        name: "newrelic-key",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "NRAK-", UPPER_DIGIT, 27),
    },
    Class {
        name: "heroku-key",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "HRKU-", URL_SAFE, 60),
    },
    Class {
        name: "rubygems-key",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "rubygems_", HEX, 48),
    },
    Class {
        name: "atlassian-token",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "ATATT3xFfGF0", URL_SAFE, 180),
    },
    Class {
        name: "cerebras-key",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "csk-", LOWER_DIGIT, 48),
    },
    Class {
        name: "pinecone-key",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "pcsk_", ALNUM, 66),
    },
    Class {
        name: "langsmith-key",
        form: Form::Token,
        key: None,
        generate: |r| {
            let (a, b) = (r.chars(HEX, 32), r.chars(HEX, 10));
            (format!("lsv2_pt_{a}_{b}"), vec![a])
        },
    },
    Class {
        name: "tavily-key",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "tvly-dev-", ALNUM, 32),
    },
    Class {
        name: "firecrawl-key",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "fc-", HEX, 32),
    },
    Class {
        name: "elevenlabs-key",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "sk_", HEX, 48),
    },
    Class {
        name: "azure-ad-client-secret",
        form: Form::Token,
        key: None,
        generate: |r| {
            let (a, d, b) = (
                r.chars(ALNUM, 3),
                r.chars(DIGITS, 1),
                r.chars(AZURE_SECRET, 34),
            );
            (format!("{a}{d}Q~{b}"), vec![b])
        },
    },
    Class {
        name: "1password-service-account",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "ops_eyJ", URL_SAFE, 200),
    },
    Class {
        name: "mapbox-secret-token",
        form: Form::Token,
        key: None,
        generate: |r| {
            let (a, b) = (r.chars(URL_SAFE, 40), r.chars(URL_SAFE, 22));
            (format!("sk.eyJ1Ijoi{a}.{b}"), vec![a, b])
        },
    },
    Class {
        name: "okta-api-token",
        form: Form::Line,
        key: None,
        generate: |r| token(r, "SSWS ", URL_SAFE, 42),
    },
    Class {
        name: "alibaba-access-key",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "LTAI", ALNUM, 20),
    },
    Class {
        name: "aws-session-token",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "IQoJb3JpZ2luX2VjE", BASE64, 300),
    },
    Class {
        name: "dynatrace-token",
        form: Form::Token,
        key: None,
        generate: |r| {
            let (a, b) = (r.chars(UPPER_DIGIT, 24), r.chars(UPPER_DIGIT, 64));
            (format!("dt0c01.{a}.{b}"), vec![a, b])
        },
    },
    Class {
        name: "buildkite-token",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "bkua_", HEX, 40),
    },
    Class {
        name: "fly-token",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "fm2_", URL_SAFE, 100),
    },
    Class {
        name: "resend-key",
        form: Form::Token,
        key: None,
        generate: |r| {
            let (a, b) = (r.chars(ALNUM, 8), r.chars(ALNUM, 24));
            (format!("re_{a}_{b}"), vec![b])
        },
    },
    Class {
        name: "e2b-key",
        form: Form::Token,
        key: None,
        generate: |r| token(r, "e2b_", HEX, 40),
    },
    // Second round: contexts.
    Class {
        name: "basic-credential",
        form: Form::Line,
        key: None,
        generate: |r| {
            let pw = r.chars(ALNUM, 24);
            let b = base64(format!("deploy:{pw}").as_bytes());
            (format!("Basic {b}"), vec![b])
        },
    },
    Class {
        name: "netrc-entry",
        form: Form::Text,
        key: None,
        generate: |r| {
            around(
                r,
                "machine api.example.com\nlogin deploy\npassword ",
                PASSWORD,
                20,
                "",
            )
        },
    },
    Class {
        name: "pgpass-line",
        form: Form::Text,
        key: None,
        generate: |r| around(r, "db.internal:5432:app:deploy:", PASSWORD, 20, ""),
    },
    Class {
        name: "schemeless-dsn-tcp",
        form: Form::Line,
        key: None,
        generate: |r| around(r, "dsn deploy:", PASSWORD, 20, "@tcp(db.internal:3306)/app"),
    },
    Class {
        name: "schemeless-dsn-host",
        form: Form::Line,
        key: None,
        generate: |r| around(r, "connect app:", PASSWORD, 20, "@db.internal:5432/app"),
    },
    Class {
        name: "curl-user",
        form: Form::Line,
        key: None,
        generate: |r| {
            around(
                r,
                "curl -u admin:",
                PASSWORD,
                20,
                " https://api.example.com/v1",
            )
        },
    },
    Class {
        name: "twilio-curl",
        form: Form::Line,
        key: None,
        generate: |r| {
            let (sid, t) = (r.chars(HEX, 32), r.chars(HEX, 32));
            (
                format!("curl -u AC{sid}:{t} https://api.twilio.com/2010-04-01"),
                vec![t],
            )
        },
    },
    Class {
        name: "prose-password",
        form: Form::Line,
        key: None,
        generate: |r| around(r, "password '", PASSWORD, 20, "' rejected for user admin"),
    },
    Class {
        name: "jsessionid",
        form: Form::Url,
        key: None,
        generate: |r| {
            around(
                r,
                "https://shop.example.com/cart;jsessionid=",
                UPPER_DIGIT,
                32,
                "?item=4",
            )
        },
    },
    Class {
        name: "phpsessid",
        form: Form::Url,
        key: None,
        generate: |r| {
            around(
                r,
                "https://forum.example.com/index.php?PHPSESSID=",
                LOWER_DIGIT,
                26,
                "&t=5",
            )
        },
    },
    Class {
        name: "sid-query",
        form: Form::Url,
        key: None,
        generate: |r| around(r, "https://app.example.com/poll?sid=", ALNUM, 32, "&n=1"),
    },
    Class {
        name: "authkey-flag",
        form: Form::Line,
        key: None,
        generate: |r| token(r, "--authkey ", ALNUM, 32),
    },
    Class {
        name: "webhook-url-flag",
        form: Form::Line,
        key: None,
        generate: |r| {
            around(
                r,
                "--webhook-url https://hooks.example.com/T/",
                ALNUM,
                32,
                "",
            )
        },
    },
    Class {
        name: "env-pair-object",
        form: Form::Line,
        key: None,
        generate: |r| {
            let v = r.chars(PASSWORD, 24);
            (json!([{"name": "ACME_API_KEY", "value": v}, {"name": "REGION", "value": "eu-west-1"}]).to_string(), vec![v])
        },
    },
    Class {
        name: "env-pair-array",
        form: Form::Line,
        key: None,
        generate: |r| {
            let v = r.chars(PASSWORD, 24);
            (
                json!([["ACME_API_KEY", v], ["REGION", "eu-west-1"]]).to_string(),
                vec![v],
            )
        },
    },
    Class {
        name: "sql-secret-column",
        form: Form::Line,
        key: None,
        generate: |r| {
            let v = r.chars(PASSWORD, 24);
            (
                json!({"columns": ["id", "user", "api_token"], "rows": [[1, "alice", v]]})
                    .to_string(),
                vec![v],
            )
        },
    },
    Class {
        name: "yaml-env-list",
        form: Form::Text,
        key: None,
        generate: |r| {
            around(
                r,
                "env:\n  - name: ACME_API_TOKEN\n    value: ",
                PASSWORD,
                24,
                "\n  - name: REGION\n    value: eu-west-1",
            )
        },
    },
    Class {
        name: "jwt-parts",
        form: Form::Line,
        key: None,
        generate: |r| {
            let (p, sig) = (r.chars(URL_SAFE, 40), r.chars(URL_SAFE, 43));
            (
                json!(["eyJhbGciOiJSUzI1NiJ9", format!("eyJ{p}"), sig]).to_string(),
                vec![p, sig],
            )
        },
    },
];

/// Every secret placed in a run, for the leak check.
pub struct Corpus {
    pub seed: u64,
    rng: Rng,
    pub placed: Vec<Secret>,
}

impl Corpus {
    pub fn new() -> Corpus {
        let (rng, seed) = Rng::seeded();
        Corpus {
            seed,
            rng,
            placed: Vec::new(),
        }
    }

    /// A fresh secret of `class`, recorded as placed at `place`.
    pub fn place(&mut self, class: &Class, place: &str) -> Secret {
        let (text, random) = (class.generate)(&mut self.rng);
        let s = Secret {
            class: class.name,
            form: class.form,
            text,
            key: class.key,
            random,
            place: place.to_owned(),
        };
        self.placed.push(s.clone());
        s
    }

    /// The placements whose random parts show up in `haystack` (an 8-character run
    /// of any of them), as `class @ place: text`.
    pub fn leaks(&self, haystack: &str) -> Vec<String> {
        self.leaked(haystack)
            .into_iter()
            .map(|s| format!("{} @ {}: {:?}", s.class, s.place, s.as_text()))
            .collect()
    }

    /// The placements whose random parts show up in `haystack`.
    pub fn leaked(&self, haystack: &str) -> Vec<&Secret> {
        let runs: std::collections::HashSet<&[u8]> = haystack.as_bytes().windows(RUN).collect();
        self.placed
            .iter()
            .filter(|s| {
                s.random
                    .iter()
                    .any(|part| part.as_bytes().windows(RUN).any(|w| runs.contains(w)))
            })
            .collect()
    }

    /// How many placements, classes and places the run made.
    pub fn summary(&self) -> String {
        let mut classes: Vec<&str> = self.placed.iter().map(|s| s.class).collect();
        classes.sort_unstable();
        classes.dedup();
        let mut places: Vec<&str> = self.placed.iter().map(|s| s.place.as_str()).collect();
        places.sort_unstable();
        places.dedup();
        format!(
            "{} secrets, {} classes, {} places (seed {}; rerun with REEL_SECRETS_SEED={})",
            self.placed.len(),
            classes.len(),
            places.len(),
            self.seed,
            self.seed
        )
    }

    /// Fails, naming every leak, when a random part of a kind with a documented
    /// shape shows up in `haystack`, or those of more than 1% of the placements of
    /// context kinds ([`is_context`]: a secret known only by the words around it).
    pub fn assert_no_leaks(&self, haystack: &str, what: &str) {
        let leaked = self.leaked(haystack);
        let context_placed = self.placed.iter().filter(|s| is_context(s.class)).count();
        let context_leaked = leaked.iter().filter(|s| is_context(s.class)).count();
        let shaped_leaked = leaked.len() - context_leaked;
        if shaped_leaked > 0 || context_leaked * 100 > context_placed {
            let mut msg = format!(
                "{} of {} secrets reached {what} ({shaped_leaked} of a documented shape; {context_leaked} of {context_placed} context placements, at most 1% allowed):\n",
                leaked.len(),
                self.placed.len()
            );
            for s in &leaked {
                let _ = writeln!(msg, "  {} @ {}: {:?}", s.class, s.place, s.as_text());
            }
            panic!("{msg}{}", self.summary());
        }
    }
}
