//! The YAML limit check (`reel_convert::yaml_limits`), run before the YAML parser
//! on every YAML document reel reads.
//!
//! Asserts: the check never panics; what it lets through under small limits (chosen by
//! the first byte), the parser reads into a value no deeper than twice the depth limit
//! (an indentless sequence, `k:\n- x`, is a collection the check does not count) and of
//! no more nodes than the expansion limit allows bytes (every node costs a byte of
//! text, or of an alias's expansion).

use reel_convert::yaml_limits::{YamlLimits, check};
use serde_json::Value;

/// The body of `yaml_limits`.
pub fn run(data: &[u8]) {
    let (choice, rest) = crate::input::choice(data);
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let limits = YamlLimits {
        depth: 1 + usize::from(choice % 16),
        expanded: 64 + 64 * u64::from(choice / 16),
    };
    if check(text, limits).is_err() {
        return;
    }
    let Ok(value) = serde_norway::from_str::<Value>(text) else {
        return;
    };
    let (depth, nodes) = measure(&value);
    assert!(
        depth <= 2 * limits.depth + 1,
        "nested {depth} deep past the limit {}: {text:?}",
        limits.depth
    );
    assert!(
        nodes <= limits.expanded,
        "{nodes} nodes past the expansion limit {}: {text:?}",
        limits.expanded
    );
}

/// The nesting depth of collections in `v`, and its nodes (keys included).
fn measure(v: &Value) -> (usize, u64) {
    match v {
        Value::Array(items) => items.iter().fold((1, 1), |(d, n), item| {
            let (di, ni) = measure(item);
            (d.max(di + 1), n + ni)
        }),
        Value::Object(members) => members.values().fold((1, 1), |(d, n), item| {
            let (di, ni) = measure(item);
            (d.max(di + 1), n + ni + 1)
        }),
        _ => (0, 1),
    }
}
