//! Redaction: secrets out of the trace, replay intact.
//!
//! Every producer (recorder, importers, `reel redact`) passes what it writes through
//! one [`Redactor`]; `play`, `verify` and `diff` rebuild the same one from
//! `meta.redaction` ([`Redactor::from_description`]) and apply it to live messages
//! before comparing, so a redacted argument still matches. It applies to the trace
//! only, never to forwarded bytes.
//!
//! The rules start from mcp-tape's (research/mcp-tape.md §2.3) and depart where those
//! would break replay. What is matched is replaced by `[REDACTED]`, mcp-tape's marker.
//!
//! # Built-in rules (`reel/2`)
//!
//! Token rules follow the providers' documented formats; the context rules
//! (`url-query-secret`, `secret-assignment`) catch a secret by the name next to it.
//! `reel rec --help` prints the same list from [`RULE_DOCS`].
//!
//! | rule | what it redacts | example |
//! | --- | --- | --- |
//! | `secret-keys` | every string under a member whose name says secret (see *Secret names*); under a weak name only a random-looking string; names, numbers, booleans, `null` and structure stay. Also inside JSON held as text (see *JSON held as text*). In a command: the value of such a flag (`--api-key X`, `--passphrase=X`, `--connection-string X`), of a credential flag (`--auth X`, `--key X`, `--pat X`, `--openai-key=X`), or of such a variable (`API_KEY=X`, `DB_PASS=X`) | `{"db_pass":"x","n":2}` → `{"db_pass":"[REDACTED]","n":2}` |
//! | `pem-private-key` | a PEM private key (RFC 7468 `PRIVATE KEY`, `ENCRYPTED PRIVATE KEY`; `RSA`, `EC`, `DSA`, `OPENSSH PRIVATE KEY`; `PGP PRIVATE KEY BLOCK`), from its `BEGIN` line to its `END` line, with line breaks or `\n` escapes (a service-account JSON held as text); a block cut short to the end of its body. On stderr and non-JSON lines, also the lines of a block opened on an earlier line ([`Redactor::redact_line`]) | `-----BEGIN EC PRIVATE KEY-----\nMHc…\n-----END EC PRIVATE KEY-----` → `[REDACTED]` |
//! | `aws-access-key` | an AWS access key id: `AKIA` (long-term), `ASIA` (STS temporary), `ABIA`, `ACCA` + 16 upper-case letters or digits | `try ASIAIOSFODNN7EXAMPLE` → `try [REDACTED]` |
//! | `sk-key` | `sk-` + 20 or more of `[A-Za-z0-9_-]` (OpenAI, Anthropic, …) | `sk-proj-…` → `[REDACTED]` |
//! | `github-token` | `ghp_` `gho_` `ghu_` `ghs_` `ghr_` + 36 or more letters or digits | |
//! | `github-pat` | `github_pat_` + 20 or more of `[A-Za-z0-9_]` | |
//! | `gitlab-token` | GitLab's token prefixes `glpat-` `gloas-` `gldt-` `glrt-` `glrtr-` `glcbt-` `glptt-` `glft-` `glimt-` `glagent-` `glsoat-` `glffct-` + 20 or more of `[A-Za-z0-9_.-]` | `glpat-Abcd1234Efgh5678Ijkl` → `[REDACTED]` |
//! | `npm-token` | `npm_` + 36 or more letters or digits | |
//! | `huggingface-token` | `hf_` + 30 or more letters or digits | |
//! | `sendgrid-key` | `SG.` + 16–32 of `[A-Za-z0-9_-]` + `.` + 32–64 more | |
//! | `jwt` | three dot-separated base64url parts, the first starting `eyJ` | |
//! | `authorization-header` | `Authorization:` (or `authorization:`, `AUTHORIZATION:`) and the rest of its line | `Authorization: Bearer abc.def` → `[REDACTED]` |
//! | `bearer` | `Bearer`, `bearer` or `BEARER` and the token after it | `use BEARER abc` → `use [REDACTED]` |
//! | `slack-token` | `xoxb-` `xoxa-` `xoxp-` `xoxr-` `xoxs-` `xoxe-` `xoxe.xoxp-` `xapp-` + 10 or more of `[A-Za-z0-9-]` | |
//! | `slack-webhook` | the path of a Slack incoming-webhook, workflow or trigger URL | `https://hooks.slack.com/services/T0/B0/x` → `https://hooks.slack.com/services/[REDACTED]` |
//! | `stripe-key` | `sk_live_` `sk_test_` `rk_live_` `rk_test_` + 8 or more letters or digits | |
//! | `stripe-webhook-secret` | `whsec_` + 20 or more of `[A-Za-z0-9+/=]` | |
//! | `url-password` | the password in `scheme://user:password@host` (only the password; the user may be empty; the password may hold `/` unless what precedes its first `/` is all digits, a port), and a random-looking user name standing alone (`https://TOKEN@host`) | `redis://:hunter2@cache` → `redis://:[REDACTED]@cache` |
//! | `url-query-secret` | the value of a query parameter (after `?` or `&`) named as a secret, or weakly (`key`, `sig`, `signature`, `session…`) with a random-looking value | `/f?sig=Zm9v…&sv=1` → `/f?sig=[REDACTED]&sv=1` |
//! | `secret-assignment` | a value after a label named as a secret: `label: value`, `label = value`, `:=`, `=>`, `"label": "value"`, `'label': 'value'`, `export LABEL=value`, `Label=value;` (ADO.NET, JDBC; ODBC `{…}`), `--label value`; a quoted value to its closing quote or the end of the line, a bare one to white space or `, ; & < > ) ] } | \ " '`. After a weak label only a random-looking value; numbers under 8 digits stay (`max_tokens=100`), and an unquoted value after a `"`-quoted label is JSON (`"pin": 1234`), never a secret | `aws_secret_access_key = wJal…` → `aws_secret_access_key = [REDACTED]` |
//! | `dotenv-path` | in a word (a run of characters that are neither white space nor `"`), from its start to the end of `.env` or `.env.<suffix>` | `load /srv/app/.env.local now` → `load [REDACTED] now` |
//! | `ssh-key-path` | a whole word containing `id_rsa`, `id_ed25519`, `id_ecdsa` or `id_dsa` | `key ~/.ssh/id_ed25519.pub` → `key [REDACTED]` |
//! | `google-api-key` | `AIza` + 35 of `[0-9A-Za-z_-]` | |
//!
//! Value rules apply to string values (not keys, never numbers), to command arguments
//! and to stderr lines; `\b` in them is the ASCII word boundary, as in mcp-tape's
//! JavaScript (`éAKIA…` is still a key). Strings of at least 8 KiB
//! ([`BASE64_SKIP_MIN`]) made only of base64 characters skip the value rules, built-in
//! and `--redact` alike (mcp-tape 0.7 does the same): rewriting inside base64 corrupts
//! the media it carries. The password of `url-password` is found after a user part of
//! at most 128 characters, as in mcp-tape.
//!
//! # Secret names
//!
//! One classification (`names`) serves JSON members, text labels, query parameters,
//! flags and variables. A name is *strong* (anything it holds is a secret) when it
//! contains `password`, `passwd`, `secret`, `token`, `api_key`/`apiKey`/`api-key`,
//! `authorization`, `private_key`, `access_key` (mcp-tape's rule), `passphrase` or
//! `credential`; is `pwd` or `bearer`; ends in the word `pass`, `pwd`, `pw`, `cookie`,
//! `cookies`, `session`, `auth` or `dsn`; or names a connection string. It is *weak*
//! (only a random-looking value is a secret) when it ends in `key`/`keys` — and, for
//! labels and query names, contains `key`, `sig` or `signature` (a text label ending
//! in `session` is weak too: `session: started`). `sessionId` and `Mcp-Session-Id`
//! are neither: they name the MCP session the trace keys on.
//! Words split at `_ - .`, spaces and camelCase humps, without case: `dbPass`,
//! `DB_PASS`, `db-pass` alike; `passThrough`, `sessions`, `author` are not secrets. A
//! name holding `/` is an extension identifier (`io.modelcontextprotocol/…`), never a
//! label beyond mcp-tape's rule. *Random-looking*: 16 to 4096 characters, no white
//! space or `://`, letters with digits (or three of lower case, upper case, digits,
//! symbols, or a fifth or more capitals, as many small letters and two capitals side
//! by side), and at least 3 bits of entropy per character.
//!
//! # JSON held as text
//!
//! MCP servers return JSON inside strings: a tool result's text copy of its
//! `structuredContent` (the spec recommends sending both), a service-account file, a
//! JSON log line on stderr, a line torn in half and recorded as `reel.nonjson`. A
//! string (or free text) that is a JSON object or array, or the start of one, gets the
//! key rules as if it were a message — with the envelope exemptions when it is free
//! text (a torn message keeps its `id` and `method`) — and then the value rules over
//! the whole text. Up to two levels of text inside text are walked.
//!
//! # Revisions
//!
//! `meta.redaction.rules` names the revision a trace was redacted with, and a
//! built-in's name means what that revision says: [`Redactor::from_description`]
//! rebuilds `reel/1` (mcp-tape's rules, the 13 rules of reel 0.1, none of the above
//! additions) and `reel/2` alike, so a live message is redacted exactly as the
//! recorded one was. New traces are recorded with [`RULES_VERSION`].
//!
//! # Never redacted (replay exemptions)
//!
//! | where | why |
//! | --- | --- |
//! | `jsonrpc`, `id`, `method` of a message (and of each message in a batch) | pairing and matching |
//! | `params.name` (tools/call, prompts/get), `params.requestId` (cancellation) | the matching key, the exchange to stop |
//! | `name` of each entry of `result.tools` / `result.prompts` | tools/list must name the tools that calls use |
//! | `method` of each request in `result.inputRequests` (2026-07-28) | |
//! | `progressToken` anywhere (incl. `_meta.progressToken`) | progress is re-sent with the live token |
//! | `requestState`, `cursor`, `nextCursor` anywhere | opaque handles the peer must get back verbatim (they often look like JWTs) |
//! | everything under `inputSchema`, `outputSchema`, `requestedSchema` | a schema property named `password` or `maxTokens` is not a secret |
//! | numbers, booleans, `null` | a count is not a secret, and a string in their place changes the message's shape |
//! | member names (incl. every key of `_meta`) | only values are ever replaced |
//!
//! Exemptions win over every rule, the user's included: a `--redact` pattern or a
//! rule-file path cannot reach them. Roles are recognised by position, not by
//! `method` (which may come after `params`), so `params.name` is kept for every method.
//!
//! Departure from mcp-tape on containers: mcp-tape replaces the whole value of a
//! secret key (`{"tokens":[1,2]}` → `{"tokens":"[REDACTED]"}`, and
//! `usage.output_tokens_details` objects vanish). Here a secret key redacts every
//! *string* below it and keeps the rest: `{"tokens":[1,2]}` and token-count objects
//! survive, `{"tokens":{"access":"x"}}` → `{"tokens":{"access":"[REDACTED]"}}`, and no
//! string under a secret key survives. The same holds for rule-file paths.
//!
//! # User rules
//!
//! `--redact REGEX` (repeatable) adds a pattern, applied after the built-ins, in order.
//! Patterns use Rust `regex` syntax (<https://docs.rs/regex>): linear time, so no
//! look-around and no backreferences; case-sensitive unless `(?i)`; `^`/`$` anchor to
//! the whole string. A pattern that can match the empty string is refused. Patterns
//! are written verbatim into `meta.redaction`: describe the *shape* of a secret
//! (`MYCO-[A-Z0-9]{20}`), never the secret itself.
//!
//! `--redact-file PATH` reads an mcp-tape rule file:
//! `{"extends": "default" | null, "rules": [...]}` where each rule is
//! `{"type":"path","path":"$.params.arguments.api_key"}`,
//! `{"type":"regex","pattern":"…"}`, `{"type":"truncate","path":"…","maxBytes":N}` or
//! `{"type":"drop-media","minBytes":N}`. `extends` absent or `"default"` keeps the
//! built-ins, `null` drops them; `--no-redact-defaults` drops them whatever the file
//! says. Paths use mcp-tape's subset: `$`, `.name`, `['name']`, `[3]`, `[*]`, `.*`,
//! `..name`. mcp-tape's own default rules (with JavaScript look-behind) load and map to
//! the built-ins above. `truncate` (a string at the path longer than `maxBytes` keeps its
//! first bytes, cut after redaction and never inside a marker, plus
//! ` [truncated from N bytes]`) and `drop-media` (a string of at least `minBytes` that
//! looks like encoded media becomes `[media dropped: N bytes]`) change content replay
//! answers with, so they are never defaults. An unknown rule type is an error, never
//! skipped.
//!
//! # `meta.redaction`
//!
//! [`Redactor::describe`] writes, and [`Redactor::from_description`] reads:
//! `{"rules":"reel/2","marker":"[REDACTED]","defaults":true,"builtin":["secret-keys",
//! "pem-private-key",…],"keys":["password",…],"patterns":[…],"paths":[…]}`, plus
//! `"truncate":[{"path","maxBytes"}]` and `"dropMedia":{"minBytes"}` when used.
//! `rules` versions what each built-in name means (see *Revisions*); `keys` is
//! informational.
//!
//! # Guarantees
//!
//! - JSON is redacted as text in one pass (see `json`): bytes not rewritten are copied
//!   as received, the result is valid JSON, and when nothing matched the input comes
//!   back borrowed. Input that is not JSON comes back unchanged.
//! - Linear time: every pattern runs on finite automata (the `regex` crate) or a
//!   scanner that looks at each byte a bounded number of times. One prefilter pass
//!   decides whether the token rules run on a string at all; the context scanners
//!   start only at `=`, `:`, `-`, `?` and `&`.
//! - Idempotent: redacting twice gives the same text as redacting once (the marker is
//!   atomic and value rules run until stable, at most four rounds: only contrived
//!   user patterns whose `\b` flips next to a new marker need more).

mod builtin;
mod command;
mod compiled;
mod context;
mod error;
mod help;
mod json;
mod lines;
mod names;
mod pairs;
mod path;
mod prose;
mod protocol;
mod providers;
mod redactor;
mod rules;
mod size;
mod splice;
mod streams;
mod strings;
mod text;

pub use self::builtin::{KNOWN_RULES_VERSIONS, RULES_VERSION};
pub use self::error::{PatternSource, RedactError};
pub use self::help::{EXEMPTIONS, RULE_DOCS, RuleDoc};
pub use self::lines::LineBlock;
pub use self::redactor::{RedactedMessage, Redactor};
pub use self::rules::RedactionConfig;
pub use self::splice::MARKER;
pub use self::streams::LineStreams;
pub use self::text::BASE64_SKIP_MIN;

#[cfg(test)]
mod tests {
    use super::builtin::ValueRule;
    use super::*;

    #[test]
    fn rule_docs_name_every_builtin_in_order() {
        let names: Vec<&str> = RULE_DOCS.iter().map(|r| r.name).collect();
        let mut expected = vec![rules::SECRET_KEYS];
        expected.extend(ValueRule::ALL.iter().map(|r| r.name()));
        assert_eq!(names, expected);
        let help = Redactor::rules_help();
        for name in names {
            assert!(help.contains(name), "{name} missing from help");
        }
    }

    /// The examples `--help` prints are true: each `input → output` that spells its
    /// input out (not `ghp_ + 36 characters`) is what the built-ins do.
    #[test]
    fn every_rule_example_holds() {
        let r = Redactor::builtin();
        for doc in RULE_DOCS {
            let (input, expected) = doc
                .example
                .split_once(" → ")
                .unwrap_or_else(|| panic!("{}: example without →", doc.name));
            if input.contains(" + ") {
                continue;
            }
            let out = if doc.name == rules::SECRET_KEYS {
                r.redact_json(input)
            } else {
                r.redact_text(input)
            };
            assert_eq!(out, expected, "{}", doc.name);
        }
    }

    #[test]
    fn command_flags() {
        let r = Redactor::builtin();
        let args: Vec<String> = [
            "npx",
            "-y",
            "srv",
            "--api-key",
            "ctx7sk-abc",
            "--token=xyz",
            "--max-tokens",
            "100",
            "API_KEY=abc",
            "PATH=/bin",
            "--verbose",
            "--password",
            "--next",
            "--auth",
            "s3cr3t",
            "--openai-key=sk-1",
            "--key-file",
            "/etc/k.pem",
            "--passphrase",
            "-q8Zr2LmX0pVb7KdT4w",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let out = r.redact_command(&args);
        assert_eq!(
            out,
            [
                "npx",
                "-y",
                "srv",
                "--api-key",
                MARKER,
                "--token=[REDACTED]",
                "--max-tokens",
                "100",
                "API_KEY=[REDACTED]",
                "PATH=/bin",
                "--verbose",
                "--password",
                "--next",
                "--auth",
                MARKER,
                "--openai-key=[REDACTED]",
                "--key-file",
                "/etc/k.pem",
                "--passphrase",
                MARKER,
            ]
        );
        assert_eq!(r.redact_command(&out), out, "idempotent");
        assert_eq!(Redactor::disabled().redact_command(&args), args);
    }
}
