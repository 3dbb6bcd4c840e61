//! The secrets corpus: every class of secret real MCP servers return, in every place a
//! recording holds one, through the real `reel rec` (stdio and `--url`), then replayed
//! with `reel play`.
//!
//! Each placement gets a fresh secret from a seeded RNG (`REEL_SECRETS_SEED` to replay
//! one; the seed is in every failure message). A secret's *random part* is what must
//! not survive: the test fails when any 8-character run of it appears anywhere in the
//! trace (its text, every decoded string, every base64 member decoded) or in reel's
//! own stderr, and says which class in which place leaked. The bytes the peers
//! exchange must stay exactly as sent, and the redacted trace must replay with no
//! miss.
//!
//! - `stdio`: arguments, results (text and its `structuredContent` twin), resources
//!   (URIs and contents), errors (message and data), stderr, non-JSON stdout (plain
//!   and torn JSON lines), the command line;
//! - `http`: the same bodies over Streamable HTTP, request and response headers, query
//!   strings (of requests, of `--url`, of `Location`), a non-JSON body, and reel's
//!   stderr (the listening line, the refusal of `--url` with user info).

mod http;
mod stdio;

use std::fmt::Write as _;
use std::path::Path;

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

/// Every class the corpus places, from the issue that asked for them.
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
        let runs: std::collections::HashSet<&[u8]> = haystack.as_bytes().windows(RUN).collect();
        let mut out = Vec::new();
        for s in &self.placed {
            let leaked = s
                .random
                .iter()
                .any(|part| part.as_bytes().windows(RUN).any(|w| runs.contains(w)));
            if leaked {
                // Test data, random each run: shown so a failure can be read.
                out.push(format!("{} @ {}: {:?}", s.class, s.place, s.as_text()));
            }
        }
        out
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

    /// Fails, naming every leak, when any random part shows up in `haystack`.
    pub fn assert_no_leaks(&self, haystack: &str, what: &str) {
        let leaks = self.leaks(haystack);
        if !leaks.is_empty() {
            let mut msg = format!(
                "{} of {} secrets reached {what}:\n",
                leaks.len(),
                self.placed.len()
            );
            for l in &leaks {
                let _ = writeln!(msg, "  {l}");
            }
            panic!("{msg}{}", self.summary());
        }
    }
}

/// Everything a trace file holds as text: the file itself, every string value
/// decoded, and every base64 member (`raw_b64`, `bytes`) decoded.
pub fn trace_haystack(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = text.clone();
    for line in text.lines() {
        if let Ok(v) = serde_json::from_str::<Value>(line) {
            strings_of(&v, &mut out);
        }
    }
    out
}

fn strings_of(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push('\n');
            out.push_str(s);
        }
        Value::Array(a) => a.iter().for_each(|x| strings_of(x, out)),
        Value::Object(o) => {
            for (k, x) in o {
                if let (Some(b64), true) = (x.as_str(), k == "raw_b64" || k == "bytes") {
                    if let Some(bytes) = crate::harness::rec_support::base64_decode(b64) {
                        out.push('\n');
                        out.push_str(&String::from_utf8_lossy(&bytes));
                    }
                }
                strings_of(x, out);
            }
        }
        _ => {}
    }
}
