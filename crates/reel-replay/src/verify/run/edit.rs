//! Reading and editing recorded messages without re-serialising them
//! ([`crate::splice`]): the tool a call names, the `requestState` a retry echoes, a
//! nested member replaced in place.

use reel_mcp::jsonrpc::{Envelope, call_subject, methods};
use serde_json::Value;

use crate::splice::Members;

/// `params.name` of a `tools/call` (its [`call_subject`]).
pub(super) fn tool_of(raw: &str) -> Option<String> {
    let env = Envelope::parse(raw)?;
    if env.method.as_deref() != Some(methods::TOOLS_CALL) {
        return None;
    }
    let params: Value = serde_json::from_str(env.params?.get()).ok()?;
    call_subject(methods::TOOLS_CALL, &params).map(str::to_owned)
}

/// `params.requestState` of a 2026-07-28 retry, as canonical JSON text.
pub(super) fn request_state_of(raw: &str) -> Option<String> {
    let v: Value = serde_json::from_str(raw).ok()?;
    v.pointer("/params/requestState").map(Value::to_string)
}

/// `result.requestState` of an `input_required` answer, as canonical JSON text.
pub(super) fn handed_out_state(raw: &str) -> Option<String> {
    let v: Value = serde_json::from_str(raw).ok()?;
    v.pointer("/result/requestState").map(Value::to_string)
}

/// `raw` with the member at `path` (which must exist) replaced by the JSON text
/// `value`; every other byte as it was, save whitespace between the members rebuilt.
pub(super) fn replace_at(raw: &str, path: &[&str], value: &str) -> Option<String> {
    let (first, rest) = path.split_first()?;
    let members = Members::parse(raw)?;
    let current = members.get(first)?;
    let replaced = if rest.is_empty() {
        value.to_owned()
    } else {
        replace_at(current, rest, value)?
    };
    Some(members.join_replacing(&[(first, &replaced)]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_members_are_replaced_in_place() {
        let raw = r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":6,"k":[1, 2]}}}"#;
        assert_eq!(
            replace_at(raw, &["params", "_meta", "progressToken"], "\"reel-3\"").unwrap(),
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"reel-3","k":[1, 2]}}}"#
        );
        assert!(replace_at(raw, &["params", "missing"], "1").is_none());
        assert_eq!(tool_of(raw).as_deref(), Some("x"));
        let retry = r#"{"id":3,"method":"tools/call","params":{"name":"x","requestState":"s1"}}"#;
        assert_eq!(request_state_of(retry).as_deref(), Some("\"s1\""));
        let asked = r#"{"id":3,"result":{"resultType":"input_required","requestState":"s1"}}"#;
        assert_eq!(handed_out_state(asked).as_deref(), Some("\"s1\""));
        assert_eq!(
            tool_of(r#"{"id":1,"method":"prompts/get","params":{"name":"p"}}"#),
            None
        );
    }
}
