//! `meta.command`: a server's argv, redacted like free text plus one rule free text
//! cannot see: the value that follows a secret-named flag (`--api-key K`), the most
//! common way an MCP server gets its credentials on the command line. A flag is
//! secret-named by the key rules, or when it is one of the short credential flags
//! command lines use (`--auth`, `--key`, `--pat`, `--credentials`, …; see
//! [`is_secret_flag`]). `reel/2` adds the names of `names` (`--passphrase`,
//! `--connection-string`, `DB_PASS=`).

use super::builtin::Revision;
use super::compiled::Compiled;
use super::context;
use super::names::{self, Strength};
use super::splice::MARKER;
use super::text::MAX_ROUNDS;

/// See [`Redactor::redact_command`](super::Redactor::redact_command). Passes run until one changes nothing (at most
/// [`MAX_ROUNDS`]): what a flag's value is depends on what its neighbours look like,
/// and redacting an argument can change that (a rule takes a flag's `=`, or the `/`
/// that made a name an extension id), so the result is a fixed point: redacting it
/// again changes nothing.
pub(super) fn redact_command(rules: &Compiled, secret_keys: bool, args: &[String]) -> Vec<String> {
    let mut out = one_pass(rules, secret_keys, args);
    for _ in 1..MAX_ROUNDS {
        let next = one_pass(rules, secret_keys, &out);
        if next == out {
            break;
        }
        out = next;
    }
    out
}

fn one_pass(rules: &Compiled, secret_keys: bool, args: &[String]) -> Vec<String> {
    let revision = rules.revision;
    let reel3 = secret_keys && revision >= Revision::Reel3;
    let mysql = reel3 && args.first().is_some_and(|a| is_mysql_client(a));
    let password_flags = if reel3 { password_flags(args) } else { &[] };
    let mut out = Vec::with_capacity(args.len());
    let mut value_follows = false;
    let mut prev: Option<&str> = None;
    for arg in args {
        let before = prev.replace(arg.as_str());
        if reel3 {
            if before.is_some_and(|f| password_flags.contains(&f)) && is_secret_value(arg) {
                out.push(MARKER.to_owned());
                value_follows = false;
                continue;
            }
            if let Some(redacted) = reel3_argument(rules, before, arg, mysql) {
                out.push(redacted);
                value_follows = false;
                continue;
            }
        }
        if std::mem::take(&mut value_follows) {
            // Decide on the redacted text, so a second pass decides the same.
            let text = rules.redact_text(arg);
            let value = match revision {
                Revision::Reel1 => !text.starts_with('-'),
                Revision::Reel2 | Revision::Reel3 => !context::is_flag(&text),
            };
            if value {
                out.push(if is_secret_value(&text) {
                    MARKER.to_owned()
                } else {
                    text.into_owned()
                });
                continue;
            }
        }
        if secret_keys {
            if let Some(redacted) = secret_flag(rules, arg, revision, &mut value_follows) {
                out.push(redacted);
                continue;
            }
        }
        out.push(rules.redact_text(arg).into_owned());
    }
    if revision >= Revision::Reel3 {
        split_secrets(rules, args, &mut out);
    }
    out
}

/// `reel/3`: a secret a shell split into two arguments (`Bearer` `TOKEN`, `SSWS`
/// `TOKEN`, `password` `'X'`): an argument the rules leave alone but take when read
/// after its neighbour, as one line, goes whole.
fn split_secrets(rules: &Compiled, args: &[String], out: &mut [String]) {
    for i in 1..args.len().min(out.len()) {
        if out[i] == MARKER || out[i] != args[i] {
            continue;
        }
        let joined = format!("{} {}", args[i - 1], args[i]);
        let read = rules.redact_text(&joined);
        if !read.ends_with(args[i].as_str()) {
            out[i] = MARKER.to_owned();
        }
    }
}

/// Whether argv[0] is a MySQL client, whose `-pPASSWORD` glues the password on.
fn is_mysql_client(program: &str) -> bool {
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    let name = name.strip_suffix(".exe").unwrap_or(name);
    matches!(
        name,
        "mysql"
            | "mysqldump"
            | "mysqladmin"
            | "mysqlimport"
            | "mysqlshow"
            | "mysqlsh"
            | "mariadb"
            | "mariadb-dump"
            | "mariadb-admin"
    )
}

/// The flags whose value is a password, for the programs that have them (the word a
/// program needs on its command line first, such as `login`: `docker run -p` publishes
/// a port).
const PASSWORD_FLAGS: [(&str, Option<&str>, &[&str]); 9] = [
    ("sshpass", None, &["-p"]),
    ("docker", Some("login"), &["-p", "--password"]),
    ("podman", Some("login"), &["-p", "--password"]),
    ("helm", Some("login"), &["-p", "--password"]),
    ("az", Some("login"), &["-p", "--password"]),
    ("redis-cli", None, &["-a", "--pass"]),
    ("mongosh", None, &["-p", "--password"]),
    ("mongodump", None, &["-p", "--password"]),
    ("openssl", None, &["-k", "-pass", "-passin", "-passout"]),
];

/// The password flags of the program `args` runs.
fn password_flags(args: &[String]) -> &'static [&'static str] {
    let Some(program) = args.first() else {
        return &[];
    };
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    PASSWORD_FLAGS
        .iter()
        .find(|(p, needs, _)| *p == name && needs.is_none_or(|w| args.iter().any(|a| a == w)))
        .map_or(&[], |(_, _, flags)| *flags)
}

/// Flags named after a provider whose value is its key (`--openai sk-…`,
/// `--anthropic KEY`): the value goes when it looks random.
const PROVIDER_FLAGS: [&str; 24] = [
    "openai",
    "anthropic",
    "claude",
    "gemini",
    "google",
    "groq",
    "mistral",
    "cohere",
    "perplexity",
    "xai",
    "deepseek",
    "openrouter",
    "together",
    "fireworks",
    "replicate",
    "huggingface",
    "hf",
    "tavily",
    "exa",
    "firecrawl",
    "brave",
    "serpapi",
    "pinecone",
    "github",
];

/// `reel/3` arguments: the password of `-u user:password` (curl, wget), a MySQL
/// client's `-pPASSWORD`, and the random-looking value after a provider flag.
fn reel3_argument(
    rules: &Compiled,
    before: Option<&str>,
    arg: &str,
    mysql: bool,
) -> Option<String> {
    if mysql {
        if let Some(password) = arg.strip_prefix("-p") {
            if !password.is_empty() && password != MARKER && !password.starts_with('-') {
                return Some(format!("-p{MARKER}"));
            }
        }
    }
    if let Some(flag) = before {
        if matches!(flag, "-u" | "--user" | "--proxy-user" | "-U") {
            let (user, password) = arg.split_once(':')?;
            return (is_secret_value(password) && !arg.starts_with('-'))
                .then(|| format!("{}:{MARKER}", rules.redact_text(user)));
        }
        let name = flag.strip_prefix("--")?;
        if PROVIDER_FLAGS.iter().any(|p| name.eq_ignore_ascii_case(p)) && context::looks_random(arg)
        {
            return Some(MARKER.to_owned());
        }
        return None;
    }
    None
}

/// A flag value worth redacting: not empty, not a plain number, not already the marker.
fn is_secret_value(value: &str) -> bool {
    !value.is_empty() && value != MARKER && !value.bytes().all(|b| b.is_ascii_digit())
}

/// A flag name whose value is a credential: a secret key name, or a flag that is a
/// credential word by itself or ends in one (`--auth`, `--key`, `--openai-key`).
fn is_secret_flag(name: &str, revision: Revision) -> bool {
    const WORDS: [&str; 7] = [
        "auth",
        "key",
        "pat",
        "pass",
        "credential",
        "credentials",
        "cookie",
    ];
    if names::member(name, revision) == Some(Strength::Strong) {
        return true;
    }
    let last = name.rsplit(['-', '_']).next().unwrap_or(name);
    WORDS.iter().any(|w| last.eq_ignore_ascii_case(w))
}

/// `--name=value`, `-name=value` or `NAME=value` with a secret name → redacted; a
/// secret `--name` alone sets `value_follows`. The name keeps the value rules (a
/// `--redact` pattern may match it), applied to it alone: text rules over the whole
/// argument could swallow the `=`, and a second pass would then read another flag.
fn secret_flag(
    rules: &Compiled,
    arg: &str,
    revision: Revision,
    value_follows: &mut bool,
) -> Option<String> {
    if let Some(flag) = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) {
        return match flag.split_once('=') {
            Some((name, value)) if is_secret_flag(name, revision) && is_secret_value(value) => {
                let head = &arg[..arg.len() - value.len() - 1];
                Some(format!("{}={MARKER}", rules.redact_text(head)))
            }
            Some(_) => None,
            None => {
                *value_follows = is_secret_flag(flag, revision);
                None
            }
        };
    }
    let (name, value) = arg.split_once('=')?;
    let env_name = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let secret = names::member(name, revision) == Some(Strength::Strong);
    (env_name && secret && is_secret_value(value))
        .then(|| format!("{}={MARKER}", rules.redact_text(name)))
}

#[cfg(test)]
mod tests {
    use crate::redact::{RedactionConfig, Redactor};

    #[test]
    fn a_pattern_in_the_name_of_a_secret_flag_is_redacted_on_the_first_pass() {
        // Found by fuzzing (fuzz/regressions/redact): `NAME=value` with a secret name
        // redacted the value and left the name as it was; a second pass saw the marker,
        // applied the patterns to the whole argument and redacted the name too.
        let r = Redactor::new(&RedactionConfig {
            patterns: vec!["[a-z]+@".into(), "(?i)secret\\d*".into()],
            ..RedactionConfig::default()
        })
        .unwrap();
        let args: Vec<String> = ["srv", "-user@host_KEY=abc", "MY_SECRET=x"]
            .map(str::to_owned)
            .to_vec();
        let once = r.redact_command(&args);
        assert_eq!(
            once,
            [
                "srv",
                "-[REDACTED]host_KEY=[REDACTED]",
                "MY_[REDACTED]=[REDACTED]"
            ]
        );
        assert_eq!(r.redact_command(&once), once);
    }

    #[test]
    fn secret_flag_value_follows_changes_between_passes() {
        // Found by fuzzing (fuzz/regressions/redact): whether an argument is a secret
        // flag's value depends on the flag as it reads, and redacting it can change
        // that: a rule takes its `=` (`--{"passphrase":"x:=`), the `/` that made its
        // name an extension id, or the dashes that made it a flag. The passes now run
        // until one changes nothing.
        let r = Redactor::builtin();
        for args in [
            vec![r#"--{"passphrase":"a1:="#, "next"],
            vec![
                r#"-----END PRIVATE KEY----->":""}{"passphrase":"\a1:="#,
                "yu.env MIIEvQ",
            ],
            vec![r#"--{"passphrase":"yAuthorization: x=}"#],
            vec![r#"--Bearer ://sk-{"passphrase":""#, "MIIEvQ)", "x"],
            vec![
                "-u\u{2028}{\"passphrase\":\"MIIEvQuhooks.slack.com/services/,",
                "next",
            ],
            vec![
                "-----BEGIN PRIVATE KEY-----Authorization: ;.envBearer =>",
                "x",
            ],
            vec![
                "--api-k@/thoriz\u{FFFD}tionarer abc",
                "--tboken=abc_KYAj/id_ed25519+ secret42 sk",
            ],
        ] {
            let args: Vec<String> = args.into_iter().map(str::to_owned).collect();
            let once = r.redact_command(&args);
            assert_eq!(r.redact_command(&once), once, "{args:?}");
        }
    }

    #[test]
    fn a_secret_flag_whose_name_a_rule_redacts_keeps_its_equals_sign() {
        // Found by fuzzing (fuzz/regressions/redact): the `bearer` rule took the name's
        // `Bearer a` together with `=[REDACTED]`, so a second pass read `--token…` as a
        // flag whose value is the next argument and redacted that argument too.
        let r = Redactor::builtin();
        let args: Vec<String> = ["--token: Bearer a=YKEY", "plain"]
            .map(str::to_owned)
            .to_vec();
        let once = r.redact_command(&args);
        assert_eq!(once, ["--token: [REDACTED]=[REDACTED]", "plain"]);
        assert_eq!(r.redact_command(&once), once);
    }

    #[test]
    fn reel3_command_lines() {
        let r = Redactor::builtin();
        let run = |args: &[&str]| {
            let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
            let once = r.redact_command(&args);
            assert_eq!(r.redact_command(&once), once, "{args:?}");
            once.join(" ")
        };
        assert_eq!(
            run(&["mysql", "-uroot", "-pS3cr3t!", "app"]),
            "mysql -uroot -p[REDACTED] app"
        );
        // Not a MySQL client: `-p8080` is a port.
        assert_eq!(run(&["server", "-p8080"]), "server -p8080");
        assert_eq!(
            run(&["curl", "-u", "admin:hunter2", "https://x"]),
            "curl -u admin:[REDACTED] https://x"
        );
        assert_eq!(
            run(&["docker", "run", "-u", "1000:1000", "app"]),
            "docker run -u 1000:1000 app"
        );
        assert_eq!(
            run(&["agent", "--groq", "Zq8rT2mX9pLk4VbN7wHs3dYc"]),
            "agent --groq [REDACTED]"
        );
        assert_eq!(
            run(&["agent", "--openai", "gpt-4o"]),
            "agent --openai gpt-4o"
        );
        assert_eq!(
            run(&["tailscale", "up", "--authkey", "abc123"]),
            "tailscale up --authkey [REDACTED]"
        );
        assert_eq!(
            run(&["notify", "--webhook-url", "https://hooks.example.com/x"]),
            "notify --webhook-url [REDACTED]"
        );
        assert_eq!(
            run(&["call", "-H", "BEARER", "q8Zr2LmX0pVb7KdT4wNs"]),
            "call -H BEARER [REDACTED]"
        );
        assert_eq!(
            run(&[
                "twine",
                "upload",
                "-p",
                "pypi-AgEIcHlwaS5vcmcCJDk0ZTg4YzZhLTI0MzMtNDY2Yy1hNDFkLTE3ZmRmNmVkMjQ5NQ"
            ]),
            "twine upload -p [REDACTED]"
        );
    }
}
