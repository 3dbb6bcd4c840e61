//! Redaction as the recorder, `play`, `verify` and `diff` see it: every built-in rule
//! with positive and negative examples, every replay exemption, path rules, user
//! patterns, rule files and their errors, `meta.redaction` round trips, and the
//! properties (valid JSON out, idempotent, shape kept, linear on big strings).

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use proptest::prelude::*;
use reel_redact::redact::{MARKER, PatternSource, RedactError, RedactionConfig, Redactor};
use serde_json::{Value, json};

/// Compiling a rule set takes milliseconds (tens in a debug build): share one.
static BUILTIN: LazyLock<Redactor> = LazyLock::new(Redactor::builtin);

fn builtin() -> Redactor {
    BUILTIN.clone()
}

/// The rules of a trace recorded by reel 0.1 (`meta.redaction.rules: "reel/1"`).
fn reel1() -> Redactor {
    static REEL1: LazyLock<Redactor> = LazyLock::new(|| {
        Redactor::from_description(&json!({"rules":"reel/1","marker":"[REDACTED]","defaults":true}))
            .unwrap_or_else(|e| panic!("{e}"))
    });
    REEL1.clone()
}

fn with_patterns(patterns: &[&str]) -> Redactor {
    let config = RedactionConfig {
        patterns: patterns.iter().map(|p| p.to_string()).collect(),
        ..RedactionConfig::default()
    };
    Redactor::new(&config).unwrap_or_else(|e| panic!("{e}"))
}

fn with_rule_file(defaults: bool, contents: &str) -> Result<Redactor, RedactError> {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("redact.json");
    std::fs::write(&path, contents).unwrap_or_else(|e| panic!("{e}"));
    Redactor::new(&RedactionConfig {
        defaults,
        patterns: Vec::new(),
        rule_file: Some(path),
    })
}

fn red(r: &Redactor, raw: &str) -> String {
    r.redact_json(raw).into_owned()
}

/// Asserts `raw` comes back as the very same bytes (borrowed, pointer-equal).
fn assert_untouched(r: &Redactor, raw: &str) {
    match r.redact_json(raw) {
        Cow::Borrowed(out) => assert!(std::ptr::eq(out, raw), "not the input's bytes: {raw}"),
        Cow::Owned(out) => panic!("rewrote {raw}\n   into {out}"),
    }
}

/// A string value inside a tools/call argument, redacted by the built-ins.
fn value_redacted(text: &str) -> String {
    let raw = json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"t","arguments":{"q": text}}})
    .to_string();
    let out: Value = serde_json::from_str(&red(&builtin(), &raw)).unwrap_or_else(|e| panic!("{e}"));
    out["params"]["arguments"]["q"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

mod builtin_value_rules {
    use super::*;

    /// (input, expected) per rule; negatives expect the input back.
    fn check(cases: &[(&str, &str)]) {
        for (input, expected) in cases {
            assert_eq!(builtin().redact_text(input), *expected, "text: {input}");
            assert_eq!(value_redacted(input), *expected, "JSON value: {input}");
        }
    }

    #[test]
    fn aws_access_key() {
        check(&[
            ("try AKIAIOSFODNN7EXAMPLE today", "try [REDACTED] today"),
            ("AKIAIOSFODNN7EXAMPLE", "[REDACTED]"),
            ("éAKIAIOSFODNN7EXAMPLE", "é[REDACTED]"),
            ("key=AKIAIOSFODNN7EXAMPLE;", "key=[REDACTED];"),
            ("AKIAIOSFODNN7EXAMPL", "AKIAIOSFODNN7EXAMPL"),
            ("AKIAIOSFODNN7EXAMPLEX", "AKIAIOSFODNN7EXAMPLEX"),
            ("xAKIAIOSFODNN7EXAMPLE", "xAKIAIOSFODNN7EXAMPLE"),
            ("akiaiosfodnn7example", "akiaiosfodnn7example"),
        ]);
    }

    #[test]
    fn sk_key() {
        check(&[
            ("key sk-abcdefghijklmnopqrst end", "key [REDACTED] end"),
            ("sk-proj-AbC_dEf-123456789012345", "[REDACTED]"),
            ("sk-abcdefghijklmnopqrs", "sk-abcdefghijklmnopqrs"),
            ("ask-abcdefghijklmnopqrst", "ask-abcdefghijklmnopqrst"),
            ("task-runner", "task-runner"),
        ]);
    }

    #[test]
    fn github_tokens() {
        let tail36 = "a".repeat(36);
        let tail35 = "a".repeat(35);
        let ok = [
            format!("ghp_{tail36}"),
            format!("gho_{tail36}"),
            format!("ghu_{tail36}"),
            format!("ghs_{tail36}"),
            format!("ghr_{tail36}1234"),
        ];
        for token in &ok {
            check(&[(&format!("t {token} t"), "t [REDACTED] t")]);
        }
        let no = [
            format!("ghp_{tail35}"),
            format!("gha_{tail36}"),
            format!("xghp_{tail36}"),
        ];
        for token in &no {
            check(&[(token, token)]);
        }
        check(&[
            ("github_pat_11ABCDEFGHIJKLMNOPQRST", "[REDACTED]"),
            (
                "pat=github_pat_11ABCDEFG_0123456789abc rest",
                "pat=[REDACTED] rest",
            ),
            (
                "github_pat_ABCDEFGHIJKLMNOPQRS",
                "github_pat_ABCDEFGHIJKLMNOPQRS",
            ),
            (
                "xgithub_pat_11ABCDEFGHIJKLMNOPQRST",
                "xgithub_pat_11ABCDEFGHIJKLMNOPQRST",
            ),
        ]);
    }

    #[test]
    fn jwt() {
        check(&[
            (
                "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc_DEF-123 ok",
                "jwt [REDACTED] ok",
            ),
            (
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0",
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0",
            ),
            ("xeyJa.b.c", "xeyJa.b.c"),
            ("eyJa..c", "eyJa..c"),
        ]);
    }

    #[test]
    fn authorization_and_bearer() {
        check(&[
            ("Authorization: Bearer abc.def", "[REDACTED]"),
            ("authorization : Basic dXNlcjpwYXNz", "[REDACTED]"),
            ("a\nAuthorization: x\nb", "a\n[REDACTED]\nb"),
            (
                "Authorization header missing",
                "Authorization header missing",
            ),
            ("Authorization:", "Authorization:"),
            ("send Bearer abc.def-ghi/+= now", "send [REDACTED] now"),
            ("bearer  xyz", "[REDACTED]"),
            ("Bearer", "Bearer"),
            ("Bearer [x]", "Bearer [x]"),
        ]);
    }

    #[test]
    fn slack_and_stripe() {
        check(&[
            ("xoxb-1234567890", "[REDACTED]"),
            ("t xoxp-12345-67890-abc t", "t [REDACTED] t"),
            ("xoxb-123456789", "xoxb-123456789"),
            ("xoxz-1234567890", "xoxz-1234567890"),
            ("sk_live_12345678", "[REDACTED]"),
            ("rk_live_abcdEFGH99", "[REDACTED]"),
            ("sk_live_1234567", "sk_live_1234567"),
            ("sk_test_12345678", "[REDACTED]"),
        ]);
        // reel/1 (mcp-tape's rule) knew live keys only.
        assert_eq!(reel1().redact_text("sk_test_12345678"), "sk_test_12345678");
    }

    #[test]
    fn url_password() {
        check(&[
            (
                "postgres://admin:hunter2@db:5432/x",
                "postgres://admin:[REDACTED]@db:5432/x",
            ),
            (
                "a https://u:p@h b https://v:q@i",
                "a https://u:[REDACTED]@h b https://v:[REDACTED]@i",
            ),
            ("https://user@host/x", "https://user@host/x"),
            ("https://host:8080/path@x", "https://host:8080/path@x"),
            ("redis://:pass@host", "redis://:[REDACTED]@host"),
        ]);
        assert_eq!(
            reel1().redact_text("redis://:pass@host"),
            "redis://:pass@host"
        );
    }

    #[test]
    fn dotenv_path() {
        check(&[
            ("load /srv/app/.env.local now", "load [REDACTED] now"),
            ("cat .env", "cat [REDACTED]"),
            ("a/.env.x+b/.env", "[REDACTED]"),
            ("cfg/.env.", "[REDACTED]."),
            (".env.env-id_", "[REDACTED]-id_"),
            ("my.envy", "my.envy"),
            ("environment", "environment"),
        ]);
    }

    #[test]
    fn ssh_key_path() {
        check(&[
            ("key is ~/.ssh/id_ed25519.pub", "key is [REDACTED]"),
            ("-i /home/u/.ssh/id_rsa -p 22", "-i [REDACTED] -p 22"),
            ("id_ecdsa", "[REDACTED]"),
            ("id_dsa,x", "[REDACTED]"),
            ("id_rsa_backup", "id_rsa_backup"),
            ("grid_rsa", "grid_rsa"),
            ("id_rsa2", "id_rsa2"),
        ]);
    }

    #[test]
    fn google_api_key() {
        let key = format!("AIza{}", "B".repeat(35));
        let short = format!("AIza{}", "B".repeat(34));
        check(&[(&format!("k={key}"), "k=[REDACTED]"), (&short, &short)]);
    }

    #[test]
    fn defaults_off_means_no_builtins() {
        let r = Redactor::new(&RedactionConfig {
            defaults: false,
            ..RedactionConfig::default()
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(!r.is_active());
        assert_untouched(&r, r#"{"password":"x","k":"AKIAIOSFODNN7EXAMPLE"}"#);
        assert_eq!(
            r.redact_text("AKIAIOSFODNN7EXAMPLE"),
            "AKIAIOSFODNN7EXAMPLE"
        );
        assert_untouched(&Redactor::disabled(), r#"{"password":"x"}"#);
    }
}

/// The `reel/2` additions, rule by rule, each class of secret a real MCP server
/// returns; every case is also checked to be a fixed point (redacting again changes
/// nothing).
mod reel2_rules {
    use super::*;

    /// 24 characters that pass `looks_random`.
    const R: &str = "q8Zr2LmX0pVb7KdT4wNs9JcY";

    fn check(cases: &[(&str, &str)]) {
        for (input, expected) in cases {
            let text = builtin().redact_text(input).into_owned();
            assert_eq!(text, *expected, "text: {input}");
            assert_eq!(builtin().redact_text(&text), text, "idempotent: {input}");
            assert_eq!(value_redacted(input), *expected, "JSON value: {input}");
        }
    }

    fn pem(label: &str, body: &str, nl: &str) -> String {
        format!("-----BEGIN {label}-----{nl}{body}{nl}-----END {label}-----")
    }

    #[test]
    fn pem_private_keys_go_whole() {
        let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nVJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT";
        for label in [
            "RSA PRIVATE KEY",
            "OPENSSH PRIVATE KEY",
            "EC PRIVATE KEY",
            "PRIVATE KEY",
            "ENCRYPTED PRIVATE KEY",
            "DSA PRIVATE KEY",
            "PGP PRIVATE KEY BLOCK",
        ] {
            for nl in ["\n", "\r\n", "\\n"] {
                let block = pem(label, &body.replace('\n', nl), nl);
                check(&[(
                    &format!("key:\n{block}\nthanks"),
                    "key:\n[REDACTED]\nthanks",
                )]);
            }
        }
        let encrypted = pem(
            "RSA PRIVATE KEY",
            "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17F5316E2BAC89\n\nMIIEowIBAAKCAQEAu1SU",
            "\n",
        );
        check(&[(&encrypted, "[REDACTED]")]);
        // Cut short: the body goes to its end.
        check(&[(
            "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQ",
            "[REDACTED]",
        )]);
        // Public keys and certificates are not secrets.
        let cert = pem("CERTIFICATE", "MIIDdzCCAl+gAwIBAgIE", "\n");
        let public = pem("PUBLIC KEY", "MFkwEwYHKoZIzj0CAQYI", "\n");
        check(&[(&cert, &cert), (&public, &public)]);
    }

    #[test]
    fn a_service_account_held_as_text() {
        let key = pem("PRIVATE KEY", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "\n");
        let account = json!({"type":"service_account","project_id":"p","private_key_id":"0a1b","private_key": key,"client_email":"a@p.iam.gserviceaccount.com"});
        // Valid JSON held as text: the key rule sees `private_key`.
        let text = account.to_string();
        let out = builtin().redact_text(&text).into_owned();
        let back: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        assert_eq!(back["private_key"], MARKER);
        assert_eq!(back["private_key_id"], MARKER);
        assert_eq!(back["client_email"], "a@p.iam.gserviceaccount.com");
        // Cut short, or not JSON at all: the PEM rule takes the block, escapes and all.
        let torn = &text[..text.len() - 20];
        assert!(!builtin().redact_text(torn).contains("MIIEvQ"));
        let yaml = format!("credentials: |\n  {}", text.replace('"', ""));
        assert!(!builtin().redact_text(&yaml).contains("MIIEvQ"));
    }

    #[test]
    fn aws_keys_in_free_text() {
        let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
        check(&[
            ("ASIAIOSFODNN7EXAMPLE", "[REDACTED]"),
            (
                "ABIAIOSFODNN7EXAMPLE ACCAIOSFODNN7EXAMPLE",
                "[REDACTED] [REDACTED]",
            ),
            ("AIDAIOSFODNN7EXAMPLE", "AIDAIOSFODNN7EXAMPLE"),
            (
                &format!(
                    "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = {secret}\naws_session_token = IQoJb3JpZ2luX2VjE/x+y=\n"
                ),
                "[default]\naws_access_key_id = [REDACTED]\naws_secret_access_key = [REDACTED]\naws_session_token = [REDACTED]\n",
            ),
            (
                &format!("export AWS_SECRET_ACCESS_KEY={secret}"),
                "export AWS_SECRET_ACCESS_KEY=[REDACTED]",
            ),
            (
                &format!("$env:AWS_SECRET_ACCESS_KEY = \"{secret}\""),
                "$env:AWS_SECRET_ACCESS_KEY = \"[REDACTED]\"",
            ),
        ]);
    }

    #[test]
    fn provider_tokens() {
        let a36 = "Ab1".repeat(12);
        let sg = format!(
            "SG.{}.{}",
            "aB3_".repeat(5) + "xy",
            "Cd4-".repeat(10) + "efg"
        );
        check(&[
            (
                &format!("post to https://hooks.slack.com/services/T0AB12CD3/B0EF45GH6/{R} now"),
                "post to https://hooks.slack.com/services/[REDACTED] now",
            ),
            (
                &format!("https://hooks.slack.com/workflows/T0AB12CD3/A0B/1/{R}"),
                "https://hooks.slack.com/workflows/[REDACTED]",
            ),
            ("https://hooks.slack.com/", "https://hooks.slack.com/"),
            (&format!("whsec_{R}"), "[REDACTED]"),
            ("whsec_short", "whsec_short"),
            (
                &format!("NPM_TOKEN is npm_{a36}"),
                "NPM_TOKEN is [REDACTED]",
            ),
            (
                &format!("npm_{}", &a36[..30]),
                &format!("npm_{}", &a36[..30]),
            ),
            (&format!("hf_{}", &a36[..34]), "[REDACTED]"),
            ("hf_token", "hf_token"),
            (&format!("glpat-{}", &R[..20]), "[REDACTED]"),
            (&format!("gldt-{R} glrt-{R}"), "[REDACTED] [REDACTED]"),
            ("glpat-short", "glpat-short"),
            (&sg, "[REDACTED]"),
            ("SG.x.y", "SG.x.y"),
            (&format!("BEARER {R}"), "[REDACTED]"),
            (&format!("xapp-1-A0B1C2D3E4-{R}"), "[REDACTED]"),
            (&format!("xoxe.xoxp-1-{R}"), "[REDACTED]"),
            (&format!("sk_test_{R} rk_test_{R}"), "[REDACTED] [REDACTED]"),
        ]);
    }

    #[test]
    fn connection_strings() {
        check(&[
            (
                "redis://:S3cret-pw@cache:6379/0",
                "redis://:[REDACTED]@cache:6379/0",
            ),
            (
                "postgres://app:pa/ss+w0rd@db/x",
                "postgres://app:[REDACTED]@db/x",
            ),
            (
                "https://host:8080/users/bob@example.com",
                "https://host:8080/users/bob@example.com",
            ),
            (
                &format!("https://{R}@github.com/o/r.git"),
                "https://[REDACTED]@github.com/o/r.git",
            ),
            ("ssh://git@github.com/o/r", "ssh://git@github.com/o/r"),
            (
                "jdbc:postgresql://db/x?user=app&password=hunter2&ssl=true",
                "jdbc:postgresql://db/x?user=app&password=[REDACTED]&ssl=true",
            ),
            (
                "Server=tcp:x.database.windows.net,1433;Initial Catalog=db;User ID=app;Password=Pa55/w0rd!;Encrypt=True;",
                "Server=tcp:x.database.windows.net,1433;Initial Catalog=db;User ID=app;Password=[REDACTED];Encrypt=True;",
            ),
            (
                &format!(
                    "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={R}+/Q==;EndpointSuffix=core.windows.net"
                ),
                "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=[REDACTED];EndpointSuffix=core.windows.net",
            ),
            (
                "Driver={ODBC};Pwd={p;w};",
                "Driver={ODBC};Pwd={[REDACTED]};",
            ),
        ]);
    }

    #[test]
    fn secrets_in_urls() {
        check(&[
            (
                &format!("GET https://api.example.com/v1/me?access_token={R}&fields=id"),
                "GET https://api.example.com/v1/me?access_token=[REDACTED]&fields=id",
            ),
            (
                &format!(
                    "https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&se=2030-01-01&sig={R}%2B%3D"
                ),
                "https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&se=2030-01-01&sig=[REDACTED]",
            ),
            (
                &format!("https://maps.example.com/api?key={R}&q=paris"),
                "https://maps.example.com/api?key=[REDACTED]&q=paris",
            ),
            (
                &format!(
                    "s3://b/o?X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20300101%2Fus-east-1&X-Amz-Signature={R}"
                ),
                "s3://b/o?X-Amz-Credential=[REDACTED]&X-Amz-Signature=[REDACTED]",
            ),
            (
                "https://x/search?key=value&sig=abc",
                "https://x/search?key=value&sig=abc",
            ),
            ("/message?sessionId=5f2c", "/message?sessionId=5f2c"),
            (
                &format!("/message?sessionId={R}"),
                &format!("/message?sessionId={R}"),
            ),
        ]);
    }

    #[test]
    fn labelled_values() {
        check(&[
            ("password: hunter2", "password: [REDACTED]"),
            ("db_pass=hunter2 user=app", "db_pass=[REDACTED] user=app"),
            (
                "run --passphrase 'open sesame' now",
                "run --passphrase '[REDACTED]' now",
            ),
            (
                "--connection-string=Server=x;Password=y",
                "--connection-string=[REDACTED];Password=[REDACTED]",
            ),
            (
                "Cookie: session=abc123; theme=dark",
                "Cookie: [REDACTED]; theme=dark",
            ),
            (&format!("api key: {R}"), "api key: [REDACTED]"),
            (&format!("session: {R}"), "session: [REDACTED]"),
            ("session: started", "session: started"),
            (
                "max_tokens=100, tokens: 4096",
                "max_tokens=100, tokens: 4096",
            ),
            ("the password is wrong", "the password is wrong"),
            ("primary key: id", "primary key: id"),
        ]);
    }

    #[test]
    fn reel2_secret_names_in_json() {
        let raw = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"connect","arguments":{
            "passphrase":"p1","pass":"p2","db_pass":"p3","cookie":"p4","session":"p5",
            "clientSecret":"p6","credentials":{"user":"bob","value":"p7"},
            "sessionId": R, "accountKey": R, "key": "user:42", "sessions": 3,
            "passThrough": "keep", "author": "keep"}}})
        .to_string();
        let out: Value =
            serde_json::from_str(&red(&builtin(), &raw)).unwrap_or_else(|e| panic!("{e}"));
        let args = &out["params"]["arguments"];
        for k in [
            "passphrase",
            "pass",
            "db_pass",
            "cookie",
            "session",
            "clientSecret",
            "accountKey",
        ] {
            assert_eq!(args[k], MARKER, "{k}");
        }
        assert_eq!(
            args["credentials"],
            json!({"user":"[REDACTED]","value":"[REDACTED]"})
        );
        assert_eq!(args["key"], "user:42");
        assert_eq!(args["sessions"], 3);
        // The MCP session a trace keys on stays readable.
        assert_eq!(args["sessionId"], R);
        assert_eq!(args["passThrough"], "keep");
        assert_eq!(args["author"], "keep");
        assert_eq!(out["params"]["name"], "connect");
    }

    #[test]
    fn errors_and_text_twins() {
        let error = json!({"jsonrpc":"2.0","id":3,"error":{"code":-32000,
            "message":"FATAL: password authentication failed (password: hunter2x)",
            "data":{"dsn":"postgres://app:hunter2x@db/app"}}})
        .to_string();
        let out = red(&builtin(), &error);
        assert!(!out.contains("hunter2x"), "{out}");
        assert!(out.contains(r#""code":-32000"#));
        // A result's text copy of its structuredContent: the same members go.
        let structured = json!({"user":"bob","apiKey":R,"nested":{"token":{"v":"tk-9"}},"count":2});
        let result = json!({"jsonrpc":"2.0","id":4,"result":{
            "content":[{"type":"text","text": serde_json::to_string_pretty(&structured).unwrap_or_default()}],
            "structuredContent": structured}})
        .to_string();
        let out: Value =
            serde_json::from_str(&red(&builtin(), &result)).unwrap_or_else(|e| panic!("{e}"));
        let twin: Value = serde_json::from_str(
            out["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(twin, out["result"]["structuredContent"]);
        assert_eq!(twin["apiKey"], MARKER);
        assert_eq!(twin["nested"]["token"]["v"], MARKER);
        assert_eq!(twin["count"], 2);
        // Text inside text inside text.
        let inner = json!({"password": "deep"}).to_string();
        let middle = json!({"log": inner}).to_string();
        let outer = json!({"jsonrpc":"2.0","id":5,"result":{"text": middle}}).to_string();
        assert!(!red(&builtin(), &outer).contains("deep"));
    }

    #[test]
    fn a_torn_line_gets_the_key_rules() {
        let torn = r#"{"jsonrpc":"2.0","id":7,"result":{"structuredContent":{"passphrase":"abc def","cookie":"sid=1","nested":{"secret":["x","y"]},"note":"fine"},"content":[{"type":"text","text":"{\"pass\":\"zz"#;
        let out = builtin().redact_text(torn).into_owned();
        for gone in ["abc def", "sid=1", r#""x""#, "zz"] {
            assert!(!out.contains(gone), "{gone} in {out}");
        }
        assert!(
            out.starts_with(r#"{"jsonrpc":"2.0","id":7,"result":"#),
            "{out}"
        );
        assert!(out.contains(r#""note":"fine""#));
        assert_eq!(builtin().redact_text(&out), out);
        // Cut inside an escape or a literal.
        for cut in [
            r#"{"password":"ab\"#,
            r#"{"password":"ab\u00"#,
            r#"{"a":tr"#,
            r#"{"a":1."#,
        ] {
            let out = builtin().redact_text(cut);
            assert!(!out.contains("ab"), "{cut} → {out}");
        }
    }

    #[test]
    fn the_exemptions_still_win() {
        let raw = json!({"jsonrpc":"2.0","id":"sess-key-1","method":"tools/call","params":{
            "name":"session","_meta":{"progressToken": R, "io.modelcontextprotocol/oauth-client-credentials": {"mode":"x"}},
            "cursor": R, "arguments":{"q":"ok"}}})
        .to_string();
        assert_untouched(&builtin(), &raw);
        let listing = json!({"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"get_session",
            "inputSchema":{"type":"object","properties":{"passphrase":{"type":"string","default":"x"}}}}]}})
        .to_string();
        assert_untouched(&builtin(), &listing);
        // Recorded HTTP headers: the session id a trace keys on stays.
        assert_untouched(
            &builtin(),
            r#"{"mcp-session-id":"ecc80b32-0157-4ce8-bff3-279e79063831","content-type":"application/json"}"#,
        );
        let endpoint = "/message?sessionId=ecc80b32-0157-4ce8-bff3-279e79063831";
        assert_eq!(builtin().redact_text(endpoint), endpoint);
    }
}

mod key_rules {
    use super::*;

    #[test]
    fn mcp_tape_vectors_and_departures() {
        let r = builtin();
        assert_eq!(
            red(&r, r#"{"db_password":"x"}"#),
            r#"{"db_password":"[REDACTED]"}"#
        );
        assert_untouched(&r, r#"{"max_tokens":100}"#);
        // Departures: progressToken is a replay exemption; a secret key keeps
        // numbers, so token id lists survive.
        assert_untouched(&r, r#"{"progressToken":"abc"}"#);
        assert_untouched(&r, r#"{"tokens":[1,2]}"#);
    }

    #[test]
    fn strings_under_a_secret_key_go_structure_stays() {
        let r = builtin();
        assert_eq!(
            red(
                &r,
                r#"{"tokens":{"access":"a","refresh":"b","ttl":3600,"ok":true,"x":null}}"#
            ),
            r#"{"tokens":{"access":"[REDACTED]","refresh":"[REDACTED]","ttl":3600,"ok":true,"x":null}}"#
        );
        assert_eq!(
            red(&r, r#"{"secrets":["a",["b",{"c":"d"}],7]}"#),
            r#"{"secrets":["[REDACTED]",["[REDACTED]",{"c":"[REDACTED]"}],7]}"#
        );
        assert_untouched(
            &r,
            r#"{"usage":{"input_tokens":5,"output_tokens":7,"output_tokens_details":{"reasoning_tokens":2}}}"#,
        );
        assert_eq!(
            red(
                &r,
                r#"{"Authorization":"Basic x","apiKey":"","bearer":"b"}"#
            ),
            r#"{"Authorization":"[REDACTED]","apiKey":"[REDACTED]","bearer":"[REDACTED]"}"#
        );
        assert_untouched(&r, r#"{"password":"[REDACTED]"}"#);
    }

    #[test]
    fn escaped_keys_and_values_are_decoded() {
        let r = builtin();
        assert_eq!(
            red(&r, r#"{"pass\u0077ord":"x"}"#),
            r#"{"pass\u0077ord":"[REDACTED]"}"#
        );
        assert_eq!(
            red(&r, r#"{"k":"AKIA\u0049OSFODNN7EXAMPLE"}"#),
            r#"{"k":"[REDACTED]"}"#
        );
        assert_eq!(
            red(&r, r#"{"k":"https:\/\/u:pw@h"}"#),
            r#"{"k":"https://u:[REDACTED]@h"}"#
        );
        assert_eq!(
            red(&r, r#"{"k":"say \"AKIAIOSFODNN7EXAMPLE\"\tnow\u0001"}"#),
            r#"{"k":"say \"[REDACTED]\"\tnow\u0001"}"#
        );
    }
}

mod replay_exemptions {
    use super::*;

    #[test]
    fn id_method_and_tool_name() {
        let r = with_patterns(&["get_\\w+", "tools/\\w+"]);
        let raw = r#"{"jsonrpc":"2.0","id":"sk-abcdefghijklmnopqrstuvwx","method":"tools/call","params":{"name":"get_token","arguments":{"token":"abc","q":"get_this"}}}"#;
        assert_eq!(
            red(&r, raw),
            r#"{"jsonrpc":"2.0","id":"sk-abcdefghijklmnopqrstuvwx","method":"tools/call","params":{"name":"get_token","arguments":{"token":"[REDACTED]","q":"[REDACTED]"}}}"#
        );
        // Member order does not matter: `method` after `params`.
        let late = r#"{"params":{"name":"get_x"},"id":"AKIAIOSFODNN7EXAMPLE","method":"tools/call","jsonrpc":"2.0"}"#;
        assert_untouched(&r, late);
        // Batches: each element is a message.
        let batch = r#"[{"jsonrpc":"2.0","id":"AKIAIOSFODNN7EXAMPLE","method":"x"},{"jsonrpc":"2.0","id":2,"result":{"k":"AKIAIOSFODNN7EXAMPLE"}}]"#;
        assert_eq!(
            red(&r, batch),
            r#"[{"jsonrpc":"2.0","id":"AKIAIOSFODNN7EXAMPLE","method":"x"},{"jsonrpc":"2.0","id":2,"result":{"k":"[REDACTED]"}}]"#
        );
        let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"get_1","reason":"get_out"}}"#;
        assert_eq!(
            red(&r, cancel),
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"get_1","reason":"[REDACTED]"}}"#
        );
    }

    #[test]
    fn tools_list_names_and_schemas() {
        let r = with_patterns(&["secret_\\w+", "hunter\\d"]);
        let raw = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"secret_lookup","title":"secret_lookup","inputSchema":{"type":"object","properties":{"password":{"type":"string","default":"hunter2","description":"Bearer abc"},"maxTokens":{"type":"integer"},"api_key":{"type":"string"}}},"outputSchema":{"properties":{"token":{"type":"string"}}}}],"nextCursor":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig"}}"#;
        assert_eq!(
            red(&r, raw),
            raw.replacen(r#""title":"secret_lookup""#, r#""title":"[REDACTED]""#, 1)
        );
        // Same text outside the schema and listing is redacted.
        let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"secret_lookup","arguments":{"about":"secret_lookup","password":{"type":"string"}}}}"#;
        assert_eq!(
            red(&r, call),
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"secret_lookup","arguments":{"about":"[REDACTED]","password":{"type":"[REDACTED]"}}}}"#
        );
    }

    #[test]
    fn progress_token_and_meta_keys() {
        let r = builtin();
        let raw = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{},"_meta":{"progressToken":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc","io.example/authToken":"s3cr3t","io.example/count":3}}}"#;
        assert_eq!(
            red(&r, raw),
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{},"_meta":{"progressToken":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc","io.example/authToken":"[REDACTED]","io.example/count":3}}}"#
        );
        assert_untouched(
            &r,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"sk-abcdefghijklmnopqrstu","progress":1,"total":10}}"#,
        );
        // A secret-key container keeps every key of a _meta inside it.
        let out: Value = serde_json::from_str(&red(&r, r#"{"token":{"_meta":{"a":"b","c":1}}}"#))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out, json!({"token":{"_meta":{"a":"[REDACTED]","c":1}}}));
    }

    #[test]
    fn request_state_and_embedded_requests() {
        let r = builtin();
        let raw = r#"{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","requestState":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig","inputRequests":{"github_login":{"method":"elicitation/create","params":{"message":"Bearer abc","requestedSchema":{"type":"object","properties":{"token":{"type":"string","default":"Bearer x"}}}}}}}}"#;
        assert_eq!(
            red(&r, raw),
            raw.replacen(r#""message":"Bearer abc""#, r#""message":"[REDACTED]""#, 1)
        );
        let retry = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x","requestState":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig","cursor":"AKIAIOSFODNN7EXAMPLE"}}"#;
        assert_untouched(&r, retry);
    }

    #[test]
    fn numbers_booleans_null_never_change() {
        let r = with_patterns(&["\\d+", "true", "null"]);
        let raw = r#"{"token":123,"password":true,"secret":null,"n":-1.5e3,"list":[0,false,null],"s":"42"}"#;
        assert_eq!(
            red(&r, raw),
            raw.replacen(r#""s":"42""#, r#""s":"[REDACTED]""#, 1)
        );
    }

    #[test]
    fn exemptions_beat_paths() {
        let r = with_rule_file(true, r#"{"rules":[{"type":"path","path":"$.id"},{"type":"path","path":"$..name"},{"type":"path","path":"$..progressToken"}]}"#)
            .unwrap_or_else(|e| panic!("{e}"));
        let raw = r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"t","_meta":{"progressToken":"p"},"arguments":{"name":"Ann"}}}"#;
        assert_eq!(
            red(&r, raw),
            raw.replacen(r#""name":"Ann""#, r#""name":"[REDACTED]""#, 1)
        );
    }
}

mod text_shape {
    use super::*;

    #[test]
    fn spacing_order_and_number_spelling_survive() {
        let r = builtin();
        let raw = "{ \"b\" : 1.0e2 , \"a\":[ -0 , 1E+2 ,0.10],\"password\" : \"hunter2\" ,\"z\":\"\\u00e9\"}\n";
        assert_eq!(
            red(&r, raw),
            "{ \"b\" : 1.0e2 , \"a\":[ -0 , 1E+2 ,0.10],\"password\" : \"[REDACTED]\" ,\"z\":\"\\u00e9\"}\n"
        );
    }

    #[test]
    fn nothing_to_do_borrows_the_input() {
        let r = with_patterns(&["MYCO-[A-Z0-9]{20}"]);
        for raw in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello \"world\" \u00e9","n":[1,2.5,-3e4]}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}],"isError":false}}"#,
            "  [1, \"two\", {\"three\": null}]  ",
            r#""just a string""#,
            "42",
        ] {
            assert_untouched(&builtin(), raw);
            assert_untouched(&r, raw);
        }
    }

    #[test]
    fn not_json_comes_back_unchanged() {
        let r = builtin();
        for raw in [
            r#"{"password":"x""#,
            r#"{"password":"x",}"#,
            r#"{"password":"x"} trailing"#,
            r#"{"password":01}"#,
            "{\"password\":\"a\u{1}b\"}",
            r#"{"password":"\x"}"#,
            r#"{"password":"\u12G4"}"#,
            r#"[1,]"#,
            r#"{"a" "b"}"#,
            r#"{"a":tru}"#,
            r#"{"a":-}"#,
            r#"{"a":1.}"#,
            r#"{"a":1e}"#,
            "",
            "   ",
            "Authorization: Bearer abc",
        ] {
            assert_untouched(&r, raw);
        }
    }
}

mod paths_and_patterns {
    use super::*;

    #[test]
    fn path_rules() {
        let r = with_rule_file(
            false,
            r#"{"extends": null, "rules": [
                {"type": "path", "path": "$.params.arguments.api"},
                {"type": "path", "path": "$..customer_id"},
                {"type": "path", "path": "$.params.arguments.items[*].note"},
                {"type": "path", "path": "$.params.arguments.list[1]"},
                {"type": "path", "path": "$.params.arguments['odd.key']"}
            ]}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let raw = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"api":{"k":"v","n":1},"customer_id":"c-1","deep":[{"customer_id":42},{"customer_id":"c-2"}],"items":[{"note":"a","keep":"b"},{"note":"c"}],"list":["x","y","z"],"odd.key":"o","password":"kept: defaults are off"}}}"#;
        let expected = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"api":{"k":"[REDACTED]","n":1},"customer_id":"[REDACTED]","deep":[{"customer_id":42},{"customer_id":"[REDACTED]"}],"items":[{"note":"[REDACTED]","keep":"b"},{"note":"[REDACTED]"}],"list":["x","[REDACTED]","z"],"odd.key":"[REDACTED]","password":"kept: defaults are off"}}}"#;
        assert_eq!(red(&r, raw), expected);
        assert_eq!(red(&r, expected), expected);
    }

    #[test]
    fn user_patterns_follow_mcp_tape_vectors() {
        let start = with_patterns(&["^id"]);
        assert_eq!(start.redact_text("id 7"), "[REDACTED] 7");
        assert_eq!(start.redact_text("my id"), "my id");
        let end = with_patterns(&["end$"]);
        assert_eq!(end.redact_text("the end"), "the [REDACTED]");
        assert_eq!(end.redact_text("the end\n"), "the end\n");
        let myco = with_patterns(&["MYCO-[A-Z0-9]{20}"]);
        assert_eq!(
            red(&myco, r#"{"k":"id MYCO-ABCDEFGHIJ0123456789 ok"}"#),
            r#"{"k":"id [REDACTED] ok"}"#
        );
        // A pattern that matches the marker's letters cannot eat it.
        let greedy = with_patterns(&["RED", "\\w+"]);
        let once = greedy.redact_text("password: RED ok");
        assert_eq!(once, "[REDACTED]: [REDACTED] [REDACTED]");
        assert_eq!(greedy.redact_text(&once), once);
    }

    #[test]
    fn truncate_and_drop_media_are_opt_in_rules() {
        let r = with_rule_file(
            true,
            r#"{"rules":[{"type":"truncate","path":"$..text","maxBytes":8},{"type":"drop-media","minBytes":64}]}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let png = format!("data:image/png;base64,{}", "iVBORw0KGgo".repeat(10));
        // The key is redacted before the cut, and the cut never splits the marker.
        let raw = json!({"result":{"content":[{"type":"text","text":"0123 AKIAIOSFODNN7EXAMPLE"},
            {"type":"image","data": png}]}})
        .to_string();
        let out: Value = serde_json::from_str(&red(&r, &raw)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            out["result"]["content"][0]["text"],
            "0123  [truncated from 15 bytes]"
        );
        assert_eq!(
            out["result"]["content"][1]["data"],
            format!("[media dropped: {} bytes]", png.len())
        );
        let again = red(&r, &out.to_string());
        assert_eq!(again, out.to_string());
        assert_untouched(&builtin(), &raw.replace("AKIAIOSFODNN7EXAMPLE", "plain"));
    }
}

mod rule_files {
    use super::*;

    #[test]
    fn extends_and_the_defaults_flag() {
        let merged = with_rule_file(
            true,
            r#"{"rules":[{"type":"regex","pattern":"MYCO-[A-Z0-9]{4}"}]}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            merged.redact_text("MYCO-AB12 AKIAIOSFODNN7EXAMPLE"),
            "[REDACTED] [REDACTED]"
        );
        let replaced = with_rule_file(
            true,
            r#"{"extends":null,"rules":[{"type":"regex","pattern":"MYCO-[A-Z0-9]{4}"}]}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            replaced.redact_text("MYCO-AB12 AKIAIOSFODNN7EXAMPLE"),
            "[REDACTED] AKIAIOSFODNN7EXAMPLE"
        );
        let flag_off = with_rule_file(false, r#"{"extends":"default","rules":[]}"#)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!flag_off.is_active());
    }

    fn error_text(contents: &str) -> String {
        match with_rule_file(true, contents) {
            Ok(r) => panic!("accepted {contents}: {:?}", r.describe()),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn errors_name_the_file_the_rule_and_the_problem() {
        let cases: &[(&str, &[&str])] = &[
            (
                "{\"rules\": [\n  {\"type\": \"path\",}\n]}",
                &["redact.json:2:", "not valid JSON"],
            ),
            ("[]", &["redact.json: expected an object"]),
            (
                r#"{"extends":"strict"}"#,
                &["`extends` must be \"default\"", "\"strict\""],
            ),
            (r#"{"rules":{}}"#, &["`rules` must be an array"]),
            (
                r#"{"rules":[{"type":"regexp","pattern":"x"}]}"#,
                &["rule 1: unknown rule type \"regexp\""],
            ),
            (
                r#"{"rules":[{"pattern":"x"}]}"#,
                &["rule 1: `type` is missing"],
            ),
            (r#"{"rules":[7]}"#, &["rule 1: expected an object"]),
            (
                r#"{"rules":[{"type":"path"}]}"#,
                &["rule 1: `path` is missing"],
            ),
            (
                r#"{"rules":[{"type":"path","path":"$.a"},{"type":"path","path":"params.x"}]}"#,
                &["rule 2: path \"params.x\": column 1"],
            ),
            (
                r#"{"rules":[{"type":"truncate","path":"$.a","maxBytes":0}]}"#,
                &["rule 1: `maxBytes` must be a positive"],
            ),
            (
                r#"{"rules":[{"type":"drop-media"}]}"#,
                &["rule 1: `minBytes` must be a positive"],
            ),
            (
                r#"{"rules":[{"type":"regex","pattern":"(?<=a)b"}]}"#,
                &[
                    "redact.json: rule 1: invalid pattern `(?<=a)b`",
                    "no look-around",
                ],
            ),
            (
                r#"{"rules":[{"type":"regex","pattern":"a*"}]}"#,
                &["rule 1: the pattern `a*` matches the empty string"],
            ),
            (
                r#"{"rules":[{"type":"regex","pattern":"("}]}"#,
                &["invalid pattern `(`"],
            ),
        ];
        for (contents, needles) in cases {
            let text = error_text(contents);
            for needle in *needles {
                assert!(
                    text.contains(needle),
                    "{contents}\n  gave: {text}\n  lacks: {needle}"
                );
            }
        }
    }

    #[test]
    fn missing_file_and_bad_flag_patterns() {
        let missing = PathBuf::from("/nonexistent/reel/redact.json");
        let err = Redactor::new(&RedactionConfig {
            rule_file: Some(missing.clone()),
            ..RedactionConfig::default()
        });
        match err {
            Err(RedactError::RuleFileRead { path, .. }) => assert_eq!(path, missing),
            other => panic!("{other:?}"),
        }
        let err = Redactor::new(&RedactionConfig {
            patterns: vec!["ok".into(), "[unclosed".into()],
            ..RedactionConfig::default()
        });
        match err {
            Err(RedactError::BadPattern { at, pattern, .. }) => {
                assert_eq!(at, PatternSource::Flag { index: 2 });
                assert_eq!(pattern, "[unclosed");
            }
            other => panic!("{other:?}"),
        }
    }
}

mod description {
    use super::*;

    fn sample_messages() -> Vec<String> {
        vec![
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"password":"p","q":"AKIAIOSFODNN7EXAMPLE MYCO-ABCD","customer_id":"c","text":"0123456789abcdef"}}}"#.into(),
            r#"{"a":"postgres://u:p@h","b":"plain","c":"ghp_0123456789012345678901234567890123456"}"#.into(),
        ]
    }

    fn round_trip(r: &Redactor) {
        let d = r.describe();
        assert!(
            d["rules"]
                .as_str()
                .is_some_and(|v| reel_redact::redact::KNOWN_RULES_VERSIONS.contains(&v)),
            "{d}"
        );
        assert_eq!(d["marker"], MARKER);
        let back = Redactor::from_description(&d).unwrap_or_else(|e| panic!("{e}: {d}"));
        assert_eq!(back.describe(), d);
        for m in sample_messages() {
            assert_eq!(back.redact_json(&m), r.redact_json(&m), "{m}");
            assert_eq!(back.redact_text(&m), r.redact_text(&m), "{m}");
        }
    }

    #[test]
    fn round_trips() {
        round_trip(&builtin());
        round_trip(&Redactor::disabled());
        round_trip(&with_patterns(&["MYCO-[A-Z]{4}"]));
        let file = with_rule_file(
            true,
            r#"{"rules":[{"type":"path","path":"$..customer_id"},{"type":"truncate","path":"$..text","maxBytes":8},{"type":"drop-media","minBytes":1024},{"type":"regex","pattern":"MYCO-[A-Z]{4}"}]}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        round_trip(&file);
        let d = file.describe();
        assert_eq!(d["paths"], json!(["$..customer_id"]));
        assert_eq!(d["truncate"], json!([{"path":"$..text","maxBytes":8}]));
        assert_eq!(d["dropMedia"], json!({"minBytes":1024}));
        assert_eq!(d["patterns"], json!(["MYCO-[A-Z]{4}"]));
    }

    /// A trace recorded by reel 0.1 says `reel/1`: its rules load with their old
    /// meaning, so a live message is redacted as the recorded one was.
    #[test]
    fn reel1_descriptions_keep_their_meaning() {
        let written_by_reel_0_1 = json!({
            "rules": "reel/1", "marker": "[REDACTED]", "defaults": true,
            "builtin": ["secret-keys", "aws-access-key", "sk-key", "github-token",
                "github-pat", "jwt", "authorization-header", "bearer", "slack-token",
                "stripe-key", "url-password", "dotenv-path", "ssh-key-path", "google-api-key"],
            "keys": ["password", "passwd", "pwd", "secret", "token", "api_key",
                "authorization", "bearer", "private_key", "access_key"],
            "patterns": [], "paths": []
        });
        let old =
            Redactor::from_description(&written_by_reel_0_1).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(old.describe(), written_by_reel_0_1);
        assert_eq!(reel1().describe(), written_by_reel_0_1);
        round_trip(&old);
        let new_only = [
            "try ASIAIOSFODNN7EXAMPLE",
            "password: hunter2",
            "https://x/f?sig=Zm9vYmFyYmF6cXV4MTIz",
            "use BEARER abc123",
            "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----",
        ];
        for text in new_only {
            assert_eq!(old.redact_text(text), text, "reel/1 left it");
            assert_ne!(builtin().redact_text(text), text, "reel/2 takes it");
        }
        for raw in [
            r#"{"passphrase":"x","session":"y"}"#,
            r#"{"text":"{\"apiKey\":\"k\"}"}"#,
        ] {
            assert_untouched(&old, raw);
            assert_ne!(red(&builtin(), raw), raw);
        }
    }

    #[test]
    fn builtin_description_lists_every_rule() {
        let d = builtin().describe();
        assert_eq!(d["defaults"], true);
        let names: Vec<&str> = d["builtin"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let documented: Vec<&str> = reel_redact::redact::RULE_DOCS
            .iter()
            .map(|r| r.name)
            .collect();
        assert_eq!(names, documented);
        assert!(
            d["keys"]
                .as_array()
                .is_some_and(|k| k.contains(&json!("password")))
        );
    }

    #[test]
    fn bad_descriptions_are_refused() {
        for (d, needle) in [
            (json!("x"), "expected an object"),
            (json!({}), "`rules`"),
            (json!({"rules":"reel/4"}), "newer reel"),
            (json!({"rules":2}), "rule-set version"),
            (
                json!({"rules":"reel/1","builtin":["nope"]}),
                "unknown built-in rule \"nope\"",
            ),
            (
                json!({"rules":"reel/1","builtin":["pem-private-key"]}),
                "unknown built-in rule \"pem-private-key\" (in reel/1)",
            ),
            (
                json!({"rules":"reel/1","patterns":["("]}),
                "meta.redaction.patterns[0]",
            ),
            (json!({"rules":"reel/1","paths":["x"]}), "path \"x\""),
            (json!({"rules":"reel/1","marker":"***"}), "marker"),
        ] {
            match Redactor::from_description(&d) {
                Ok(_) => panic!("accepted {d}"),
                Err(e) => assert!(e.to_string().contains(needle), "{d}: {e}"),
            }
        }
    }
}

mod big_inputs {
    use super::*;

    /// Deterministic pseudo-random base64 of `len` characters.
    fn base64_noise(len: usize) -> String {
        use base64::Engine;
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let bytes: Vec<u8> = (0..len * 3 / 4 + 3)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8
            })
            .collect();
        let mut s = base64::engine::general_purpose::STANDARD.encode(bytes);
        s.truncate(len);
        s
    }

    #[test]
    fn ten_megabytes_of_base64_pass_untouched() {
        let data = base64_noise(10 * 1024 * 1024);
        let raw = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{{"type":"image","data":"{data}","mimeType":"image/png"}}]}}}}"#
        );
        assert_untouched(&builtin(), &raw);
        // With a secret next to it, the blob is copied through intact.
        let with_secret = raw.replacen(r#""mimeType""#, r#""password":"p","mimeType""#, 1);
        let out = red(&builtin(), &with_secret);
        assert_eq!(
            out,
            with_secret.replacen(r#""password":"p""#, r#""password":"[REDACTED]""#, 1)
        );
        // A data URL is not all-base64: every value rule scans it (2 MB here, to keep
        // debug-build tests quick; `examples/redact_bench.rs` times 10 MB).
        let url = format!("data:image/png;base64,{}", &data[..2 * 1024 * 1024]);
        let out = builtin().redact_text(&url);
        assert!(out.len() <= url.len() && out.starts_with("data:image/png;base64,"));
    }

    /// Inputs built to make a backtracking engine or a naive word rule quadratic.
    #[test]
    fn adversarial_megabytes_stay_linear() {
        // Quadratic behaviour on 256 KiB is ~10^10 steps: it would not finish.
        let mib = 256 * 1024;
        let cases = [
            format!("sk-{}", "a".repeat(mib)),
            ".env".repeat(mib / 4),
            format!("x{}", ".env.".repeat(mib / 5)),
            "id_".repeat(mib / 3),
            "eyJa.".repeat(mib / 5),
            format!("://a:{}", "b".repeat(mib)),
            "://a:b".repeat(mib / 6),
            "Bearer ".repeat(mib / 7),
            "AKIA".repeat(mib / 4),
            format!("{}-", "xoxb-".repeat(mib / 5)),
            format!("Authorization: {}", "a".repeat(mib)),
            "[REDACTED]".repeat(mib / 10),
            // reel/2's scanners and the walk of JSON held as text.
            "password=".repeat(mib / 9),
            "key:".repeat(mib / 4),
            format!("password: \"{}", "a".repeat(mib)),
            "?key=&sig=".repeat(mib / 10),
            format!("?access_token={}", "[REDACTED]".repeat(mib / 10)),
            "--pass ".repeat(mib / 7),
            format!("-----BEGIN PRIVATE KEY-----{}", "A-".repeat(mib / 2)),
            "-----BEGIN PRIVATE KEY-----".repeat(mib / 27),
            "://:".repeat(mib / 4),
            format!("://{}@", "a".repeat(mib)),
            "[".repeat(mib),
            format!("{}\"password\":\"x", "{\"a\":".repeat(mib / 5)),
            "{\"secret\":[".repeat(mib / 12),
        ];
        let r = with_patterns(&["RED", "a+b"]);
        for text in &cases {
            let once = r.redact_text(text).into_owned();
            assert_eq!(r.redact_text(&once), once, "idempotent on {}…", &text[..20]);
            let raw = serde_json::to_string(&json!({ "q": text })).unwrap_or_default();
            let out = red(&r, &raw);
            let back: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(back["q"], once.as_str());
        }
    }
}

/// Runs every JSON line of every trace under `dir` through the built-in rules: still
/// valid, same shape, idempotent, envelope members intact; lines that already hold the
/// marker (another recorder's redaction) stay exactly as they are. Returns (lines read,
/// lines already redacted).
fn traces_keep_their_shape(dir: &Path) -> (usize, usize) {
    let r = builtin();
    let mut lines = 0;
    let mut already_redacted = 0;
    for file in jsonl_files(dir.to_owned()) {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for line in text.lines() {
            let Ok(before) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            lines += 1;
            let out = red(&r, line);
            let after: Value = serde_json::from_str(&out)
                .unwrap_or_else(|e| panic!("{}: {e}\n{out}", file.display()));
            assert_same_shape(&before, &after, &file.display().to_string());
            assert_eq!(red(&r, &out), out, "idempotent: {}", file.display());
            if let Some(raw) = before.get("raw") {
                for member in ["id", "method", "jsonrpc"] {
                    assert_eq!(raw.get(member), after["raw"].get(member));
                }
            }
            if line.contains(MARKER) {
                already_redacted += 1;
                assert_eq!(
                    out, line,
                    "another recorder's redaction is a fixed point of ours"
                );
            }
        }
    }
    (lines, already_redacted)
}

/// The repository's own example traces keep their shape.
#[test]
fn the_example_traces_keep_their_shape() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let (lines, _) = traces_keep_their_shape(&examples);
    assert!(lines >= 18, "examples found: {lines} lines");
}

/// The other tools' real files in `../shared/fixtures` (run by `cargo xtask test` when
/// that directory exists; see its summary line).
mod shared_fixtures {
    use super::*;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");

    fn fixture(rel: &str) -> PathBuf {
        PathBuf::from(FIXTURES).join(rel)
    }

    /// Every real trace: shape kept; lines mcp-tape already redacted stay as they are.
    #[test]
    #[ignore = "reads ../shared/fixtures: `cargo xtask test` runs it when that directory exists"]
    fn real_traces_keep_their_shape() {
        let (lines, already_redacted) = traces_keep_their_shape(Path::new(FIXTURES));
        assert!(lines > 100, "fixtures found: {lines} lines");
        assert!(
            already_redacted > 0,
            "the fixtures hold mcp-tape-redacted lines"
        );
    }

    #[test]
    #[ignore = "reads ../shared/fixtures: `cargo xtask test` runs it when that directory exists"]
    fn mcp_tape_rule_files_load() {
        for (file, expect_github_pat, expect_drop) in [
            ("mcp-tape/mcp-tape/default-redact.json", false, None),
            (
                "mcp-tape/fitness-report/default-redact.vendored-0.7.json",
                true,
                Some(1_048_576),
            ),
        ] {
            let r = Redactor::new(&RedactionConfig {
                defaults: false,
                patterns: Vec::new(),
                rule_file: Some(fixture(file)),
            })
            .unwrap_or_else(|e| panic!("{file}: {e}"));
            let d = r.describe();
            let builtin: Vec<&str> = d["builtin"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            for name in [
                "url-password",
                "dotenv-path",
                "ssh-key-path",
                "aws-access-key",
            ] {
                assert!(builtin.contains(&name), "{file}: {name} in {builtin:?}");
            }
            assert_eq!(builtin.contains(&"github-pat"), expect_github_pat, "{file}");
            assert!(
                !builtin.contains(&"secret-keys"),
                "{file}: defaults are off"
            );
            assert_eq!(d["paths"].as_array().map(Vec::len), Some(14), "{file}");
            assert_eq!(
                d["patterns"],
                json!([]),
                "{file}: every regex maps to a built-in"
            );
            assert_eq!(d["dropMedia"]["minBytes"].as_u64(), expect_drop, "{file}");
            assert_eq!(
                r.redact_text("postgres://admin:hunter2@db cat /app/.env"),
                "postgres://admin:[REDACTED]@db cat [REDACTED]"
            );
            // `$..pwd` is a path rule here: exact key, strings only.
            assert_eq!(
                red(&r, r#"{"a":{"pwd":"x","pwds":"y","pwd2":3}}"#),
                r#"{"a":{"pwd":"[REDACTED]","pwds":"y","pwd2":3}}"#
            );
        }
    }
}

fn jsonl_files(dir: PathBuf) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                out.push(path);
            }
        }
    }
    out
}

/// Same keys, same arrays, same numbers/booleans/nulls; strings may differ.
fn assert_same_shape(a: &Value, b: &Value, at: &str) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            assert_eq!(
                x.keys().collect::<Vec<_>>(),
                y.keys().collect::<Vec<_>>(),
                "{at}"
            );
            for (k, v) in x {
                assert_same_shape(v, &y[k], &format!("{at}.{k}"));
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{at}");
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                assert_same_shape(v, w, &format!("{at}[{i}]"));
            }
        }
        (Value::String(_), Value::String(_)) => {}
        _ => assert_eq!(a, b, "{at}"),
    }
}

fn arb_string() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("AKIAIOSFODNN7EXAMPLE".to_owned()),
        Just("Authorization: Bearer abc.def".to_owned()),
        Just("postgres://admin:hunter2@db/x".to_owned()),
        Just("cat ~/.ssh/id_rsa and /app/.env.local".to_owned()),
        Just("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc".to_owned()),
        Just("[REDACTED]".to_owned()),
        Just("[REDACTED".to_owned()),
        Just("say \"sk-abcdefghijklmnopqrstuvwx\"\n".to_owned()),
        "[a-zA-Z0-9 _.:/@\\-\"\\\\\n\t\u{1}éü😀\u{2028}]{0,40}",
        "(AKIA|sk-|ghp_|eyJ|Bearer |://|\\.env|id_rsa|xoxb-|sk_live_|AIza|[A-Z0-9]|[a-z]|[ .:@/_-]){0,30}",
        // reel/2: labels, separators, query strings, PEM edges and JSON held as text.
        "(password|pass|key|sig|session|passphrase|cookie|--|=|:|\\?|&|;|\"|'|\\{|\\}|\\[|\\]|,|\\\\|-----BEGIN PRIVATE KEY-----|-----END PRIVATE KEY-----|MIIEvQ|q8Zr2LmX0pVb7KdT4wNs|ASIA|whsec_|glpat-|\\[REDACTED\\]|[a-z0-9]| ){0,30}",
        Just(r#"{"passphrase":"open sesame","n":1}"#.to_owned()),
        Just(r#"{"password":"torn"#.to_owned()),
        Just("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".to_owned()),
    ]
}

fn arb_key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("password".to_owned()),
        Just("token".to_owned()),
        Just("progressToken".to_owned()),
        Just("_meta".to_owned()),
        Just("inputSchema".to_owned()),
        Just("name".to_owned()),
        Just("id".to_owned()),
        Just("method".to_owned()),
        Just("params".to_owned()),
        Just("result".to_owned()),
        Just("tools".to_owned()),
        Just("arguments".to_owned()),
        Just("max_tokens".to_owned()),
        Just("customer_id".to_owned()),
        Just("passphrase".to_owned()),
        Just("sessionId".to_owned()),
        Just("accountKey".to_owned()),
        Just("cookie".to_owned()),
        "[a-zA-Z_]{1,10}",
    ]
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        arb_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((arb_key(), inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

static REDACTORS: LazyLock<Vec<Redactor>> = LazyLock::new(redactors);

fn redactors() -> Vec<Redactor> {
    let paths = with_rule_file(
        true,
        r#"{"rules":[{"type":"path","path":"$..customer_id"},{"type":"path","path":"$.params[*]"},{"type":"truncate","path":"$..name","maxBytes":6}]}"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    vec![
        builtin(),
        with_patterns(&["RED", "[a-z]+@", "^x", "y$", "(?i)secret\\d*"]),
        paths,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn output_is_valid_json_of_the_same_shape_and_idempotent(value in arb_json(), pretty in any::<bool>()) {
        let raw = if pretty {
            serde_json::to_string_pretty(&value)
        } else {
            serde_json::to_string(&value)
        }
        .unwrap_or_default();
        for r in REDACTORS.iter() {
            let once = r.redact_json(&raw).into_owned();
            let parsed: Value = serde_json::from_str(&once)
                .map_err(|e| TestCaseError::fail(format!("{e}: {once}")))?;
            // Compare with the input as parsed from the same text (float parsing is
            // not bit-exact against the generated value).
            let before: Value = serde_json::from_str(&raw).unwrap_or(Value::Null);
            assert_same_shape(&before, &parsed, "$");
            prop_assert_eq!(r.redact_json(&once).into_owned(), once.clone());
        }
    }

    #[test]
    fn text_redaction_is_idempotent(text in arb_string()) {
        for r in REDACTORS.iter() {
            let once = r.redact_text(&text).into_owned();
            prop_assert_eq!(r.redact_text(&once).into_owned(), once.clone());
            let command = r.redact_command(&[text.clone(), "--token".into(), text.clone()]);
            prop_assert_eq!(r.redact_command(&command), command.clone());
        }
    }

    #[test]
    fn arbitrary_text_never_becomes_invalid(bytes in "[\\[\\]{}\":,0-9a-z \\\\]{0,40}") {
        let r = builtin();
        let out = r.redact_json(&bytes);
        if serde_json::from_str::<Value>(&bytes).is_ok() {
            prop_assert!(serde_json::from_str::<Value>(&out).is_ok(), "{}", out);
        } else {
            prop_assert_eq!(out.as_ref(), bytes.as_str());
        }
    }
}
