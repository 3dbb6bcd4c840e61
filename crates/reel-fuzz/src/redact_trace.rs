//! Post-hoc redaction of a whole trace (`reel_redact::redact_trace::redact_trace`, behind
//! `reel redact`), line by line with the built-in rules.
//!
//! Asserts: it never panics; it writes as many lines as it read, each with the line
//! break it had; a line that was JSON stays JSON; and redacting its own output again
//! changes nothing (idempotence: the second pass finds no secret and no meta line to
//! mark).

use std::io::Write;
use std::path::Path;
use std::sync::LazyLock;

use reel_redact::redact::Redactor;
use reel_redact::redact_trace::{RewriteError, redact_trace};

/// The built-in rules, compiled once.
static BUILTIN: LazyLock<Redactor> = LazyLock::new(Redactor::builtin);

thread_local! {
    static DIR: tempfile::TempDir = tempfile::tempdir().expect("a temporary directory");
}

fn redact(path: &Path, data: &[u8], redactor: &Redactor) -> Result<Vec<u8>, RewriteError> {
    let mut f = std::fs::File::create(path).expect("writing the input");
    f.write_all(data).expect("writing the input");
    drop(f);
    let mut out = Vec::new();
    redact_trace(path, redactor, &mut out)?;
    Ok(out)
}

/// The target.
pub fn run(data: &[u8]) {
    let redactor = &*BUILTIN;
    DIR.with(|dir| {
        let path = dir.path().join("t.jsonl");
        let Ok(once) = redact(&path, data, redactor) else {
            // A meta line naming other rules is refused, not rewritten.
            return;
        };
        let body = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
        let lines_in: Vec<&[u8]> = body.split(|&b| b == b'\n').collect();
        let lines_out: Vec<&[u8]> = once.split(|&b| b == b'\n').collect();
        assert_eq!(lines_in.len(), lines_out.len(), "line count changed");
        for (a, b) in lines_in.iter().zip(&lines_out) {
            assert_eq!(a.ends_with(b"\r"), b.ends_with(b"\r"), "line break changed");
            if serde_json::from_slice::<serde::de::IgnoredAny>(a).is_ok() {
                assert!(
                    serde_json::from_slice::<serde::de::IgnoredAny>(b).is_ok(),
                    "a JSON line became invalid:\n{}\n{}",
                    String::from_utf8_lossy(a),
                    String::from_utf8_lossy(b)
                );
            }
        }
        let twice = redact(&path, &once, redactor).expect("the output's own rules");
        assert!(
            twice == once,
            "not idempotent:\n{}\n{}",
            String::from_utf8_lossy(&once),
            String::from_utf8_lossy(&twice)
        );
    });
}
