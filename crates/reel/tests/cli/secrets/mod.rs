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
mod llm;
mod stdio;

use std::path::Path;

use serde_json::Value;

#[path = "../../../../reel-redact/tests/corpus/kinds.rs"]
mod kinds;
pub use kinds::*;

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
