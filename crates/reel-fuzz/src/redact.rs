//! The redaction walk (`reel_redact::redact::Redactor`): every message, stderr line and
//! command a producer writes passes through it, and `play`, `verify` and `diff` run it
//! on live messages rebuilt from `meta.redaction`.
//!
//! The choice byte picks the rules (the built-in set, user patterns, an mcp-tape rule
//! file with paths and truncation) and the entry point (`redact_json`, `redact_text`,
//! `redact_command` on NUL-separated arguments).
//!
//! Asserts: JSON stays JSON (and what is not JSON is left as it was); redacting twice
//! is redacting once; and the rules rebuilt from their own description
//! (`Redactor::from_description`, as replay does) redact exactly alike.

use std::sync::LazyLock;

use reel_redact::redact::{RedactionConfig, Redactor};

use crate::input::choice;

/// Each rule set, with its twin rebuilt from its description.
static REDACTORS: LazyLock<Vec<(Redactor, Redactor)>> = LazyLock::new(|| {
    let patterns = Redactor::new(&RedactionConfig {
        patterns: ["RED", "[a-z]+@", "^x", "y$", "(?i)secret\\d*"]
            .map(str::to_owned)
            .to_vec(),
        ..RedactionConfig::default()
    })
    .expect("the patterns compile");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("rules.json");
    std::fs::write(
        &path,
        r#"{"rules":[{"type":"path","path":"$..customer_id"},{"type":"path","path":"$.params[*]"},{"type":"truncate","path":"$..name","maxBytes":6}]}"#,
    )
    .expect("writing the rule file");
    let file = Redactor::new(&RedactionConfig {
        rule_file: Some(path),
        ..RedactionConfig::default()
    })
    .expect("the rule file reads");
    [Redactor::builtin(), patterns, file]
        .into_iter()
        .map(|r| {
            let twin = Redactor::from_description(&r.describe()).expect("its own description");
            (r, twin)
        })
        .collect()
});

fn is_json(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

/// The target.
pub fn run(data: &[u8]) {
    let (c, data) = choice(data);
    let (r, twin) = &REDACTORS[usize::from(c % 3)];
    let text = String::from_utf8_lossy(data);
    match (c / 3) % 3 {
        0 => {
            let once = r.redact_json(&text);
            if is_json(&text) {
                assert!(is_json(&once), "invalid JSON out of {text:?}: {once:?}");
            } else {
                assert_eq!(once, text, "non-JSON was changed");
            }
            assert_eq!(r.redact_json(&once), once, "redacting twice");
            assert_eq!(twin.redact_json(&text), once, "rebuilt rules differ");
        }
        1 => {
            let once = r.redact_text(&text);
            assert_eq!(r.redact_text(&once), once, "redacting twice");
            assert_eq!(twin.redact_text(&text), once, "rebuilt rules differ");
        }
        _ => {
            let args: Vec<String> = text.split('\0').map(str::to_owned).collect();
            let once = r.redact_command(&args);
            assert_eq!(once.len(), args.len(), "arguments added or lost");
            assert_eq!(r.redact_command(&once), once, "redacting twice");
            assert_eq!(twin.redact_command(&args), once, "rebuilt rules differ");
        }
    }
}
